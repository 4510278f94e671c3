#!/usr/bin/env python3
# Compiles example, lit and GPU-test kernels to PTX and cubin twice (normal and perturbed environment) and requires byte-identical output.
#
# Usage: check_determinism.py --tlec TLEC --source-dir REPO --work-dir DIR [--ptxas P] [--libdevice L]
#                             [--jobs N] [--no-cubin]
#
# Run A: the caller's environment, working directory DIR/a, source by absolute path.
# Run B: working directory DIR/b/cwd, the source copied under another name and passed by relative
# path, another output file name, LC_ALL=C, a fresh TMPDIR (ptxas temporaries), TLE_PTXAS and
# TLE_LIBDEVICE set explicitly (to the same files), glibc malloc tunables that change the heap
# layout (so pointer-ordered iteration shows up), MALLOC_PERTURB_, and `taskset -c 0` when available.
# Kernels: every examples/*.tle (signature, -w and -n from its `# Compile:` line) for sm_80 and sm_90a (or the
# --arch its line names);
# the first `%tlec %s -s ...` RUN line of each kernel under tests/lit/{ptx,control,tile,gpu} (not a
# --debug one: its messages name the source path as given); the
# every `# Build:` line of tests/gpu/kernels/*.tle (sm_90a). Cubins need ptxas (the CUDA
# toolkit); without it only PTX is compared. Exit status 0 when everything is identical, else 1.
import argparse
import concurrent.futures
import difflib
import os
import re
import shutil
import subprocess
import sys

SIG_RE = re.compile(r'-s\s+"([^"]+)"')
WARPS_RE = re.compile(r"\s-w\s+([0-9]+)")
KERNEL_RE = re.compile(r"\s-n\s+([A-Za-z0-9_]+)")
KERNEL_OF = {}  # source path -> the kernel its `# Compile:` line names with -n (files with helpers)


def find_cases(src):
    """Returns (case name, source path, signature, warps, arch) tuples."""
    cases = []
    ex_dir = os.path.join(src, "examples")
    for name in sorted(os.listdir(ex_dir)):
        if not name.endswith(".tle"):
            continue
        path = os.path.join(ex_dir, name)
        for line in open(path, encoding="utf-8"):
            if line.startswith("# Compile: tlec "):
                sig = SIG_RE.search(line)
                if not sig:
                    sys.exit("%s: `# Compile:` line without -s \"SIGNATURE\"" % path)
                warps = WARPS_RE.search(line)
                kernel = KERNEL_RE.search(line)
                if kernel:
                    KERNEL_OF[path] = kernel.group(1)
                only = re.search(r" --arch ([a-z0-9_]+)", line)  # an example for that architecture alone
                for arch in (only.group(1),) if only else ("sm_80", "sm_90a"):
                    cases.append(("examples.%s.%s" % (name[:-4], arch), path, sig.group(1),
                                  warps.group(1) if warps else "4", arch))
                break
    for sub in ("ptx", "control", "tile", "gpu"):
        d = os.path.join(src, "tests", "lit", sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".tle"):
                continue
            path = os.path.join(d, name)
            for line in open(path, encoding="utf-8"):
                if line.startswith("# RUN: %tlec %s -s "):
                    sig = SIG_RE.search(line)
                    warps = WARPS_RE.search(line)
                    # A debug build's messages name the source path as given (as __FILE__ does),
                    # which run B changes on purpose: such kernels (a protocol only --debug
                    # compiles) are left out.
                    if " --debug" not in line:
                        cases.append(("lit.%s.%s" % (sub, name[:-4]), path, sig.group(1),
                                      warps.group(1) if warps else "4", "sm_90a"))
                    break
    kdir = os.path.join(src, "tests", "gpu", "kernels")
    if os.path.isdir(kdir):
        for name in sorted(os.listdir(kdir)):
            if not name.endswith(".tle"):
                continue
            path = os.path.join(kdir, name)
            for line in open(path, encoding="utf-8"):
                m = re.match(r'# Build: (\w+) -s "([^"]+)" -w ([0-9]+)$', line.rstrip("\n"))
                if m:
                    cases.append(("gpu." + m.group(1), path, m.group(2), m.group(3), "sm_90a"))
    return cases


def perturbed_env(args, tmpdir):
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    env["TMPDIR"] = tmpdir
    if args.ptxas:
        env["TLE_PTXAS"] = args.ptxas
    if args.libdevice:
        env["TLE_LIBDEVICE"] = args.libdevice
    # No thread cache and small blocks from mmap: a different order of heap addresses.
    env["GLIBC_TUNABLES"] = "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=4096"
    env["MALLOC_PERTURB_"] = "165"
    return env


def have_taskset():
    if not shutil.which("taskset"):
        return False
    try:
        return subprocess.call(["taskset", "-c", "0", "true"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) == 0
    except OSError:
        return False


def run_tlec(cmd, cwd, env):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        return "`%s` (in %s) exited %d:\n%s" % (" ".join(cmd), cwd, p.returncode,
                                              p.stdout.decode(errors="replace"))
    return None


def compile_case(args, case, kinds, taskset):
    """Compiles one case in runs A and B; returns a list of problems (empty: identical)."""
    name, path, sig, warps, arch = case
    opts = ["-s", sig, "-w", warps, "--arch", arch] + (["-n", KERNEL_OF[path]] if path in KERNEL_OF else [])
    a_dir = os.path.join(args.work_dir, "a")
    b_root = os.path.join(args.work_dir, "b")
    b_cwd = os.path.join(b_root, "cwd")
    b_src = os.path.join(b_root, "src", "copy_of_" + name + ".tle")
    b_tmp = os.path.join(b_root, "tmp", name)
    os.makedirs(b_tmp, exist_ok=True)
    shutil.copyfile(path, b_src)
    env_b = perturbed_env(args, b_tmp)
    prefix_b = ["taskset", "-c", "0"] if taskset else []
    problems = []
    for kind in kinds:
        out_a = os.path.join(a_dir, "%s.%s" % (name, kind))
        out_b = os.path.join("..", "out", "other_name_%s.%s" % (name, kind))
        err = run_tlec([args.tlec, path] + opts + ["-o", out_a], a_dir, dict(os.environ))
        if err:
            problems.append("%s (%s), run A: %s" % (name, kind, err))
            continue
        err = run_tlec(prefix_b + [args.tlec, os.path.relpath(b_src, b_cwd)] + opts + ["-o", out_b], b_cwd,
                       env_b)
        if err:
            problems.append("%s (%s), run B: %s" % (name, kind, err))
            continue
        a = open(out_a, "rb").read()
        b = open(os.path.join(b_cwd, out_b), "rb").read()
        if a == b:
            continue
        msg = "%s: %s differs between run A and run B (%d vs %d bytes)" % (name, kind, len(a), len(b))
        if kind == "ptx":
            diff = difflib.unified_diff(a.decode(errors="replace").splitlines(),
                                        b.decode(errors="replace").splitlines(), "A", "B", lineterm="", n=1)
            msg += "\n" + "\n".join(list(diff)[:40])
        else:
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            msg += "; first difference at byte offset %d" % first
        problems.append(msg)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tlec", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--ptxas", default="")
    ap.add_argument("--libdevice", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-cubin", action="store_true", help="compare PTX only")
    args = ap.parse_args()
    args.tlec = os.path.abspath(args.tlec)
    args.work_dir = os.path.abspath(args.work_dir)
    src = os.path.abspath(args.source_dir)

    shutil.rmtree(args.work_dir, ignore_errors=True)
    for d in ("a", "b/cwd", "b/src", "b/out", "b/tmp"):
        os.makedirs(os.path.join(args.work_dir, d))

    kinds = ["ptx"]
    if args.no_cubin:
        print("determinism: --no-cubin: comparing PTX only")
    elif args.ptxas and os.access(args.ptxas, os.X_OK):
        kinds.append("cubin")
    else:
        print("determinism: no ptxas (CUDA toolkit) configured: comparing PTX only, not cubins")
    taskset = have_taskset()
    if not taskset:
        print("determinism: taskset is not available: run B uses every CPU")

    cases = find_cases(src)
    print("determinism: %d kernels, %s, runs A and B" % (len(cases), " and ".join(kinds)))
    problems = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for case, result in zip(cases, pool.map(lambda c: compile_case(args, c, kinds, taskset), cases)):
            status = "ok" if not result else "DIFFERS"
            print("  %-40s %s" % (case[0], status))
            problems += result
    if problems:
        print("\ndeterminism: %d problem(s):" % len(problems))
        for p in problems:
            print("\n" + p)
        return 1
    print("determinism: all %d kernels give byte-identical %s" % (len(cases), " and ".join(kinds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
