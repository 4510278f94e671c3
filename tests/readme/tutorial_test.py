#!/usr/bin/env python3
"""The README's five-minute tutorial run word for word: its marked code blocks are extracted and
executed in order in a scratch directory, and each marked output must match what the commands
before it printed.

Markers (an HTML comment on the line before a fenced block of README.md's "Five-minute tutorial"
section; every fenced block there must carry one):
  <!-- tutorial: file NAME -->   the block's text is written to NAME
  <!-- tutorial: run -->         each command of the block (backslash continuations joined) is run
                                 with bash and must exit 0
  <!-- tutorial: output -->      the standard output of the preceding run block, exactly

Where the tutorial uses the GPU, the test runs without one:
  - `--target gpu` (tle-run) is run as `--target cpu`: the CPU target prints the same numbers;
  - programs that launch through libtle_rt (the C++ step) run on the driver test double
    (TLE_RT_CUDA_DRIVER), which emulates add_kernel on host memory;
  - without the CUDA toolkit's ptxas, `add.cubin` is written and read as `add.ptx` (tlec's own
    advice: PTX needs no toolkit).
With --gpu the commands run exactly as written, on the GPU (the check made on a GPU machine).
The scratch directory holds links `build` and `include` to the build and source trees, so the
commands run as they would from the repository root.

Usage: tutorial_test.py --readme README.md --source SRC --build BUILD (--mock-driver LIB | --gpu)"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SECTION = "## Five-minute tutorial"
MARKER = re.compile(r"^<!-- tutorial: (file (?P<name>\S+)|run|output) -->$")
PTXAS_MISSING = "ptxas from the CUDA toolkit was not found"


class Block:
    """A marked block: kind ("file", "run" or "output"), name (for files), text, README line."""

    def __init__(self, kind, name, text, line):
        self.kind, self.name, self.text, self.line = kind, name, text, line


def tutorial_blocks(readme):
    """The marked blocks of the tutorial section, in order. Raises ValueError for a fenced block
    without a marker, a marker without a block, or a missing section."""
    lines = readme.splitlines()
    try:
        start = lines.index(SECTION)
    except ValueError:
        raise ValueError("README.md has no '%s' section" % SECTION)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    blocks, i, pending = [], start + 1, None
    while i < end:
        line = lines[i]
        m = MARKER.match(line.strip())
        if m:
            pending = (m.group(1).split()[0], m.group("name"), i + 1)
        elif line.startswith("```"):
            close = next((j for j in range(i + 1, end) if lines[j].startswith("```")), None)
            if close is None:
                raise ValueError("README.md:%d: unclosed code block" % (i + 1))
            if pending is None:
                raise ValueError("README.md:%d: a tutorial code block without a <!-- tutorial: ... --> marker" % (i + 1))
            blocks.append(Block(pending[0], pending[1], "\n".join(lines[i + 1:close]) + "\n", i + 1))
            pending, i = None, close
        elif line.strip() and pending is not None:
            raise ValueError("README.md:%d: the marker is not followed by a code block" % pending[2])
        i += 1
    return blocks


def commands(text):
    """The commands of a shell block: lines joined at trailing backslashes, blank lines skipped."""
    out, cur = [], ""
    for line in text.splitlines():
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1].strip() + " "
            continue
        cur += line.strip()
        if cur.strip():
            out.append(cur.strip())
        cur = ""
    return out


class Transcript:
    def __init__(self, workdir, env, gpu):
        self.workdir, self.env, self.gpu, self.ptx_for_cubin = workdir, env, gpu, False

    def rewrite(self, command):
        if not self.gpu:
            command = command.replace("--target gpu", "--target cpu")
        if self.ptx_for_cubin:
            command = re.sub(r"\b(\w+)\.cubin\b", r"\1.ptx", command)
        return command

    def run(self, command):
        """Runs one command; returns its standard output. Exits 1 when it fails."""
        for _ in range(2):
            actual = self.rewrite(command)
            print("$ %s" % actual, flush=True)
            p = subprocess.run(["bash", "-c", actual], cwd=self.workdir, env=self.env, capture_output=True, text=True)
            if p.returncode != 0 and PTXAS_MISSING in p.stderr and not self.ptx_for_cubin:
                print("  (no ptxas: the module is written as PTX)")
                self.ptx_for_cubin = True
                continue
            break
        sys.stdout.write(p.stdout)
        if p.returncode != 0:
            sys.stdout.write(p.stderr)
            print("FAIL: the command exited with status %d" % p.returncode)
            sys.exit(1)
        return p.stdout


def self_test():
    """The extraction's own rules, on small documents (fails loudly if they stop holding)."""
    ok = SECTION + "\n<!-- tutorial: file a.py -->\n```python\nx = 1\n```\n<!-- tutorial: run -->\n```sh\n" \
        "echo a \\\n    b\necho c\n```\n## Next\n```sh\nnot part of it\n```\n"
    blocks = tutorial_blocks(ok)
    assert [(b.kind, b.name, b.text) for b in blocks] == [("file", "a.py", "x = 1\n"), ("run", None, "echo a \\\n    b\necho c\n")], blocks
    assert commands(blocks[1].text) == ["echo a b", "echo c"], commands(blocks[1].text)
    for bad, why in ((SECTION + "\n```sh\nls\n```\n", "without a"), (SECTION + "\n<!-- tutorial: run -->\ntext\n", "not followed"),
                     ("# no section\n", "no '")):
        try:
            tutorial_blocks(bad)
        except ValueError as e:
            assert why in str(e), e
        else:
            raise AssertionError("accepted: %r" % bad)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--mock-driver", help="the driver test double, for a run without a GPU")
    mode.add_argument("--gpu", action="store_true", help="run the commands as written, on the GPU")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()
    self_test()
    with open(a.readme) as f:
        blocks = tutorial_blocks(f.read())
    kinds = [b.kind for b in blocks]
    if "run" not in kinds or "output" not in kinds or "file" not in kinds:
        print("FAIL: the tutorial needs file, run and output blocks; found %s" % kinds)
        return 1
    workdir = tempfile.mkdtemp(prefix="tle-tutorial-")
    os.symlink(os.path.abspath(a.build), os.path.join(workdir, "build"))
    os.symlink(os.path.join(os.path.abspath(a.source), "include"), os.path.join(workdir, "include"))
    env = dict(os.environ)
    if not a.gpu:
        env["TLE_RT_CUDA_DRIVER"] = os.path.abspath(a.mock_driver)
    t = Transcript(workdir, env, a.gpu)
    last_output, ran, matched = None, 0, 0
    try:
        for b in blocks:
            if b.kind == "file":
                with open(os.path.join(workdir, b.name), "w") as f:
                    f.write(b.text)
                print("# wrote %s (README.md:%d)" % (b.name, b.line))
            elif b.kind == "run":
                last_output = "".join(t.run(c) for c in commands(b.text))
                ran += len(commands(b.text))
            else:
                if last_output is None:
                    print("FAIL: README.md:%d: an output block before any run block" % b.line)
                    return 1
                if last_output.rstrip("\n") != b.text.rstrip("\n"):
                    print("FAIL: README.md:%d: the output differs from the README's.\n--- README\n%s--- actual\n%s"
                          % (b.line, b.text, last_output))
                    return 1
                matched += 1
                last_output = None
    finally:
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print("tutorial transcript: %d files, %d commands, %d outputs matched" % (kinds.count("file"), ran, matched))
    return 0


if __name__ == "__main__":
    sys.exit(main())
