"""Reads tests/corpus/kernels.txt: the kernels of the corpus and how each one is compiled.

Shared by compile_corpus.py, check_coverage.py and robustness.py.

Each entry is `FILE | KERNEL | SIGNATURE | NUM_WARPS [| EXTRA TLEC OPTIONS]`; lines starting with
"# rejected:" are kernels tlec does not compile yet (the same fields, then " -- REASON").
"""
import os
import shlex

CORPUS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/corpus
MANIFEST = os.path.join(CORPUS_DIR, "kernels.txt")
REJECTED_PREFIX = "# rejected:"


class Entry:

    def __init__(self, path, lineno, fields, reason=None):
        if len(fields) not in (4, 5):
            raise ValueError("%s:%d: expected FILE | KERNEL | SIGNATURE | NUM_WARPS [| EXTRA], got %d fields" %
                             (path, lineno, len(fields)))
        self.lineno = lineno
        self.file, self.kernel, self.signature, warps = fields[:4]
        if not warps.isdigit():
            raise ValueError("%s:%d: NUM_WARPS must be an integer, got %r" % (path, lineno, warps))
        self.warps = int(warps)
        self.extra = shlex.split(fields[4]) if len(fields) == 5 else []
        self.reason = reason
        self.name = None  # unique test name, set by read()

    def tlec_args(self, corpus_dir=CORPUS_DIR):
        """Arguments after the tlec path (without --arch / -o)."""
        args = [os.path.join(corpus_dir, self.file), "-n", self.kernel]
        if self.signature:
            args += ["-s", self.signature]
        return args + ["-w", str(self.warps)] + self.extra


def corpus_files(packages=False):
    """The corpus's Triton files: tests/corpus/*.py, sorted; with `packages`, also the kernel
    modules of its packages (tests/corpus/PACKAGE/...) that the manifest names."""
    files = {os.path.join(CORPUS_DIR, f) for f in os.listdir(CORPUS_DIR) if f.endswith(".py")}
    if packages:
        entries, rejected = read()
        files |= {os.path.join(CORPUS_DIR, e.file) for e in entries + rejected if "/" in e.file}
    return sorted(files)


def _fields(text):
    return [f.strip() for f in text.split("|")]


def read(path=MANIFEST):
    """Returns (entries, rejected): the kernels to compile and the ones known to be rejected."""
    entries, rejected = [], []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith(REJECTED_PREFIX):
                body = line[len(REJECTED_PREFIX):]
                body, sep, reason = body.partition(" -- ")
                if not sep:
                    raise ValueError("%s:%d: a rejected entry needs ' -- REASON'" % (path, lineno))
                rejected.append(Entry(path, lineno, _fields(body), reason.strip()))
            elif line.strip() and not line.lstrip().startswith("#"):
                entries.append(Entry(path, lineno, _fields(line)))
    counts = {}
    for e in entries + rejected:
        base = "%s.%s" % (os.path.splitext(e.file)[0].replace("/", "."), e.kernel)
        counts[base] = counts.get(base, 0) + 1
        e.name = base if counts[base] == 1 else "%s.%d" % (base, counts[base])
    return entries, rejected
