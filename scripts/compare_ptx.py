#!/usr/bin/env python3
"""Compares the PTX two tlec builds generate, to show that a change leaves code generation alone
(so that GPU results measured with one build hold for the other).

Usage: scripts/compare_ptx.py OLD_TLEC NEW_TLEC [--jobs N] [--stats]

Compiles, with both binaries, for sm_90a and sm_80: every kernel of tests/corpus/kernels.txt,
every `# Build:` variant of tests/gpu/kernels/*.tle, the `# Compile: tlec` line of each
examples/*.tle and bench/kernels/*.tle and each example's `# Variant:` lines. Compares the PTX text (the self-description metadata
line left out, since it names the build) and the exit status. Prints the count and one line per
difference; exit status 1 when any differs. With --stats, each difference also shows how the
counts of the instructions that say how data moves changed (barriers, shared-memory and global
accesses by vector width, shuffles), old -> new, and a summary of them over all differences.
With --sass, each difference is also assembled by both PTX texts with ptxas (from PATH) for its
architecture and the machine code compared: the kernels' code sections (.text.*) of the two
cubins, byte for byte. Identical machine code runs identically, so a PTX difference ptxas
assembles away (a barrier moved across register arithmetic) needs no measurement; the exit
status is then 1 only when some difference remains in the machine code.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "corpus", "tools"))
import corpus_manifest  # noqa: E402

BUILD_LINE = re.compile(r'^# Build: ([A-Za-z0-9_]+) -s "([^"]+)" -w ([0-9]+)$')
VARIANT_LINE = re.compile(r'^# Variant: ([A-Za-z0-9_]+) -s "([^"]+)" -w ([0-9]+)$')


def kernels():
    """(name, tlec arguments without --arch / --emit / -o) for every kernel compared."""
    out = [("corpus/" + e.name, e.tlec_args()) for e in corpus_manifest.read()[0]]
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "gpu", "kernels", "*.tle"))):
        for line in open(f, encoding="utf-8"):
            m = BUILD_LINE.match(line.strip())
            if m:
                out.append(("gpu/" + m.group(1), [f, "-s", m.group(2), "-w", m.group(3)]))
    for f in sorted(glob.glob(os.path.join(ROOT, "examples", "*.tle")) +
                    glob.glob(os.path.join(ROOT, "bench", "kernels", "*.tle"))):
        for line in open(f, encoding="utf-8"):
            if line.startswith("# Compile: tlec "):
                words, args, i = shlex.split(line[len("# Compile: tlec "):]), [], 0
                while i < len(words):
                    if words[i] == "-o":
                        i += 2
                        continue
                    w = words[i]
                    args.append(os.path.join(ROOT, w) if w.endswith(".tle") and not os.path.isabs(w) else w)
                    i += 1
                out.append((os.path.relpath(f, ROOT), args))
            m = VARIANT_LINE.match(line.strip())
            if m:  # an example's other module (examples/CMakeLists.txt)
                out.append((os.path.relpath(f, ROOT) + ":" + m.group(1), [f, "-s", m.group(2), "-w", m.group(3)]))
    return out


def compiles():
    """(name, tlec arguments, arch) for every compile: each of kernels() for sm_90a and sm_80 (or the
    one architecture its `--arch` names; the argument itself is dropped, ptx() adds the arch)."""
    out = []
    for name, args in kernels():
        archs = ("sm_90a", "sm_80")
        if "--arch" in args:
            i = args.index("--arch")
            archs, args = (args[i + 1],), args[:i] + args[i + 2:]
        out += [(name, args, arch) for arch in archs]
    return out


def ptx(tlec, args, arch):
    p = subprocess.run([tlec] + args + ["--arch", arch, "--emit=ptx", "-o", "-"], capture_output=True, text=True,
                       cwd=ROOT)
    return p.returncode, "\n".join(l for l in p.stdout.split("\n") if "tle_metadata" not in l), shared_bytes(p.stdout)


def shared_bytes(text):
    """The `shared_bytes` of the first kernel in the PTX's metadata (a byte array), or None."""
    m = re.search(r"__tle_metadata\[[0-9]+\]\s*=\s*\{([0-9, ]+)\}", text)
    if not m:
        return None
    doc = bytes(int(b) for b in m.group(1).split(",") if b.strip()).decode(errors="replace")
    n = re.search(r'"shared_bytes":([0-9]+)', doc)
    return int(n.group(1)) if n else None


STAT_PATTERNS = [
    ("bar", re.compile(r"\b(bar\.sync|barrier\.sync)\b")),
    ("st.shared", re.compile(r"\bst\.shared\b")),
    ("ld.shared", re.compile(r"\bld\.shared\b")),
    ("shfl", re.compile(r"\bshfl\.sync\b")),
    ("ld.global", re.compile(r"\bld\.global(?![.a-z0-9:_]*\.v[248]\b)")),
    ("ld.global.v", re.compile(r"\bld\.global[.a-z0-9:_]*\.v[248]\b")),
    ("st.global", re.compile(r"\bst\.global(?![.a-z0-9:_]*\.v[248]\b)")),
    ("st.global.v", re.compile(r"\bst\.global[.a-z0-9:_]*\.v[248]\b")),
]


def stats(text):
    """Counts of the data-movement instructions in one PTX text, by STAT_PATTERNS name."""
    return {name: len(rx.findall(text)) for name, rx in STAT_PATTERNS}


def write_shared_table(path, table):
    """Writes the shared-bytes table and prints how many compiles grew and shrank."""
    grew = [t for t in table if t[2] is not None and t[3] is not None and t[3] > t[2]]
    shrank = [t for t in table if t[2] is not None and t[3] is not None and t[3] < t[2]]
    with open(path, "w", encoding="utf-8") as f:
        f.write("| kernel | arch | shared bytes, old | new |\n| --- | --- | ---: | ---: |\n")
        for name, arch, o, n in table:
            f.write(f"| {name} | {arch} | {'-' if o is None else o} | {'-' if n is None else n} |\n")
        f.write(f"\n{len(table)} compiles: shared bytes grew in {len(grew)}, shrank in {len(shrank)}.\n")
    print(f"shared bytes: grew in {len(grew)}, shrank in {len(shrank)} (table in {path})")
    for name, arch, o, n in grew + shrank:
        print(f"    {name} ({arch}): {o} -> {n}")


def code_sections(cubin):
    """The bytes of an ELF64 cubin's .text.* sections (the kernels' machine code), by name."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    out = {}
    for h in headers:
        name = cubin[names + h[0]:cubin.index(b"\0", names + h[0])].decode()
        if name.startswith(".text"):
            out[name] = cubin[h[4]:h[4] + h[5]]
    return out


def machine_code(ptx_text, arch):
    """The kernels' machine code ptxas makes of a PTX text (see code_sections), or None when it fails."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx_text)
        if subprocess.run(["ptxas", "-arch=" + arch, src, "-o", out], capture_output=True).returncode:
            return None
        with open(out, "rb") as f:
            return code_sections(f.read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--stats", action="store_true", help="per difference, instruction counts old -> new")
    ap.add_argument("--sass", action="store_true",
                    help="per difference, whether ptxas makes the same machine code of both PTX texts")
    ap.add_argument("--shared-bytes", metavar="FILE",
                    help="write a Markdown table of every compile's shared bytes (metadata), old and new")
    a = ap.parse_args()
    work = compiles()

    def one(w):
        name, args, arch = w
        return name, arch, ptx(a.old, args, arch), ptx(a.new, args, arch)

    diffs = codeDiffs = 0
    changed = {name: [0, 0] for name, _ in STAT_PATTERNS}  # compiles with fewer / more of it
    table = []  # (name, arch, old shared bytes, new shared bytes)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for name, arch, old, new in ex.map(one, work):
            table.append((name, arch, old[2], new[2]))
            old, new = old[:2], new[:2]
            if old != new:
                diffs += 1
                print(f"differs: {name} ({arch}): exit status {old[0]} -> {new[0]}")
                if a.stats:
                    so, sn = stats(old[1]), stats(new[1])
                    moved = [f"{k} {so[k]}->{sn[k]}" for k in so if so[k] != sn[k]]
                    for k in so:
                        if so[k] != sn[k]:
                            changed[k][0 if sn[k] < so[k] else 1] += 1
                    print("    " + (", ".join(moved) if moved else "same instruction counts"))
                if a.sass:
                    same = old[0] == new[0] == 0 and machine_code(old[1], arch) == machine_code(new[1], arch) is not None
                    codeDiffs += not same
                    print("    machine code: " + ("identical" if same else "differs"))
    print(f"{len(work)} compiles, {len(work) - diffs} with identical PTX and exit status")
    if a.sass:
        print(f"{diffs - codeDiffs} of the {diffs} differences assemble to identical machine code")
        return 1 if codeDiffs else 0
    if a.shared_bytes:
        write_shared_table(a.shared_bytes, table)
    if a.stats and diffs:
        print("compiles with fewer / more: " +
              ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in changed.items() if v != [0, 0]))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
