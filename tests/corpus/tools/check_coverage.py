#!/usr/bin/env python3
"""Checks that the corpus (tests/corpus/*.py and its packages' kernel modules) covers TLE's supported Triton surface.

Usage: check_coverage.py [--verbose]

Parses every corpus file with Python's ast module (nothing is imported or run) and looks only at
the bodies and signatures of the @triton.jit functions that CI compiles: the kernels of the
manifest (kernels.txt, not its rejected entries) and the jit functions they use. Fails, listing
what is missing, unless
  * every `tl` function of docs/language.md ("The tl functions"), every dtype and the Triton
    helpers usable in kernels appear in some jit function (TL_NAMES, LIBDEVICE_NAMES, DTYPES,
    TRITON_NAMES below),
  * every statement form of docs/language.md's statement table appears (STATEMENT_FORMS),
  * the manifest (kernels.txt) and the corpus agree: every kernel (a jit function no other jit
    function of its file uses) is compiled by the manifest or listed as rejected, and every
    manifest entry names a jit function of its file.
When docs/language.md gains a function, add it here and a kernel that uses it to the corpus.
"""
import argparse
import ast
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_manifest  # noqa: E402

# docs/language.md, "The tl functions", plus the iterators, debugging functions, block pointers
# and tensor descriptors described in the same document.
TL_NAMES = """
program_id num_programs arange zeros zeros_like full load store where
exp exp2 log log2 sqrt sqrt_rn rsqrt abs maximum minimum fdiv div_rn
sum max min cumsum cumprod cast expand_dims broadcast_to trans permute reshape view cat join split
flip ravel interleave dot argmax argmin reduce associative_scan xor_sum reduce_or sort topk
bitonic_merge histogram gather broadcast max_constancy
inline_asm_elementwise clamp umulhi swizzle2d debug_barrier assume
philox randint randint4x rand rand4x randn randn4x uint_to_uniform_float pair_uniform_to_normal
atomic_add atomic_max atomic_min atomic_and atomic_or atomic_xor atomic_xchg atomic_cas
sin cos erf floor ceil fma sigmoid
cdiv constexpr pointer_type static_assert static_print multiple_of max_contiguous
device_print device_assert range static_range PropagateNan
make_block_ptr advance make_tensor_descriptor load_tensor_descriptor store_tensor_descriptor
""".split()

# Listed among the tl functions by docs/language.md, but in Triton 3.6 they exist only as libdevice
# wrappers (`from triton.language.extra import libdevice`): tl.X, tl.math.X or libdevice.X counts.
LIBDEVICE_NAMES = "tanh trunc log1p pow atan2".split()

DTYPES = """
int1 int8 int16 int32 int64 uint8 uint16 uint32 uint64
float16 bfloat16 float32 float64 float8e4nv float8e5
""".split()

# tl.extra.cuda functions (docs/language.md, "Programmatic dependent launch"): tl.extra.cuda.X.
CUDA_NAMES = "gdc_wait gdc_launch_dependents".split()

# Host helpers that kernels may call on compile-time values (docs/language.md).
TRITON_NAMES = ["cdiv", "next_power_of_2"]

STATEMENT_FORMS = [
    "assignment", "augmented assignment", "tuple unpacking", "annotated assignment",
    "constexpr if", "runtime if/else", "ternary", "for over range", "for over tl.range",
    "for over tl.static_range", "while", "break", "continue", "early return", "assert",
    "print", "helper call relying on a parameter default", "helper returning a tuple",
    "libdevice call",
]


def dotted(node):
    """'tl.math.exp' for an Attribute chain of Names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def is_jit(fn):
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = dotted(target)
        if name and name.split(".")[-1] == "jit":
            return True
    return False


def is_constexpr_annotation(ann):
    return ann is not None and dotted(ann) in ("tl.constexpr", "triton.language.constexpr", "constexpr")


class FileInfo:

    def __init__(self, path):
        self.path = path
        self.name = os.path.relpath(path, corpus_manifest.CORPUS_DIR)  # as kernels.txt names it
        with open(path, encoding="utf-8") as f:
            self.tree = ast.parse(f.read(), filename=path)
        self.jit = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef) and is_jit(n)}
        # `kernel = triton.jit(fn, ...)`: the decorator applied as a call to a module function
        plain = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        for n in self.tree.body:
            if (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                    and isinstance(n.value, ast.Call) and (dotted(n.value.func) or "").split(".")[-1] == "jit"
                    and n.value.args and isinstance(n.value.args[0], ast.Name) and n.value.args[0].id in plain):
                self.jit[n.targets[0].id] = plain[n.value.args[0].id]
        self.globals = set()
        for n in self.tree.body:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    self.globals |= {x.id for x in ast.walk(t) if isinstance(x, ast.Name)}
            elif isinstance(n, (ast.AnnAssign, )) and isinstance(n.target, ast.Name):
                self.globals.add(n.target.id)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                self.globals |= {(a.asname or a.name).split(".")[0] for a in n.names}

    def used_names(self, fn):
        """Names of other jit functions of this file that fn calls or passes along."""
        return {
            x.id
            for x in walk_function(fn) if isinstance(x, ast.Name) and x.id in self.jit and x.id != fn.name
        }

    def kernels(self):
        used = set()
        for fn in self.jit.values():
            used |= self.used_names(fn)
        return [name for name in self.jit if name not in used]


class Coverage:

    def __init__(self):
        self.names = {}  # required item -> "file:function"
        self.forms = {}

    def name(self, item, where):
        self.names.setdefault(item, where)

    def form(self, item, where):
        self.forms.setdefault(item, where)


def walk_function(fn):
    """ast.walk over a function's parameters and body (not its decorators)."""
    for part in [fn.args] + fn.body:
        yield from ast.walk(part)


def scan_function(info, fn, cov):
    where = "%s:%s" % (info.name, fn.name)
    # compile-time names: parameters and locals annotated tl.constexpr, tl.static_range variables
    constexprs = {a.arg for a in fn.args.args + fn.args.kwonlyargs if is_constexpr_annotation(a.annotation)}
    for node in walk_function(fn):
        if isinstance(node, ast.AnnAssign) and is_constexpr_annotation(node.annotation) and isinstance(
                node.target, ast.Name):
            constexprs.add(node.target.id)
        elif (isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and
              dotted(node.iter.func) == "tl.static_range"):
            constexprs |= {x.id for x in ast.walk(node.target) if isinstance(x, ast.Name)}

    # tl / libdevice / triton names, anywhere in the function (annotations included)
    for node in walk_function(fn):
        if not isinstance(node, ast.Attribute):
            continue
        name = dotted(node)
        if not name:
            continue
        parts = name.split(".")
        if parts[0] == "tl" and len(parts) >= 2:
            if parts[1] == "extra" and len(parts) >= 4 and parts[2] == "cuda":
                cov.name("tl.extra.cuda." + parts[3], where)
            elif parts[1] == "math" and len(parts) >= 3:
                cov.name("tl." + parts[2], where)
                cov.name("libdevice." + parts[2], where)
            else:
                cov.name("tl." + parts[1], where)
                if parts[1] in LIBDEVICE_NAMES:
                    cov.name("libdevice." + parts[1], where)
        elif parts[0] == "libdevice" and len(parts) == 2:
            cov.name("libdevice." + parts[1], where)
            cov.form("libdevice call", where)
        elif parts[0] == "triton" and len(parts) == 2:
            cov.name("triton." + parts[1], where)

    def compile_time(test):
        # every name is a constexpr of this function or a module global, or reached through .dtype
        dtype_roots = set()
        for x in ast.walk(test):
            if isinstance(x, ast.Attribute) and x.attr == "dtype":
                dtype_roots |= {y.id for y in ast.walk(x) if isinstance(y, ast.Name)}
        names = {x.id for x in ast.walk(test) if isinstance(x, ast.Name)} - dtype_roots
        calls = [x for x in ast.walk(test) if isinstance(x, ast.Call) and (dotted(x.func) or "").startswith("tl.")]
        return not calls and all(n in constexprs or n in info.globals or n in ("True", "False", "None") for n in names)

    def runtime(test):
        names = {x.id for x in ast.walk(test) if isinstance(x, ast.Name)}
        calls = [x for x in ast.walk(test) if isinstance(x, ast.Call) and (dotted(x.func) or "").startswith("tl.")]
        return bool(calls) or any(n not in constexprs and n not in info.globals for n in names)

    def visit(stmts, in_control):
        for s in stmts:
            if isinstance(s, ast.Assign):
                cov.form("assignment", where)
                if any(isinstance(t, (ast.Tuple, ast.List)) for t in s.targets):
                    cov.form("tuple unpacking", where)
            elif isinstance(s, ast.AugAssign):
                cov.form("augmented assignment", where)
            elif isinstance(s, ast.AnnAssign):
                cov.form("annotated assignment", where)
            elif isinstance(s, ast.If):
                if compile_time(s.test):
                    cov.form("constexpr if", where)
                elif runtime(s.test) and s.orelse and fn.name in info.kernels_here:
                    cov.form("runtime if/else", where)
                visit(s.body, True)
                visit(s.orelse, True)
                continue
            elif isinstance(s, ast.For):
                it = s.iter
                callee = dotted(it.func) if isinstance(it, ast.Call) else None
                if callee == "range":
                    cov.form("for over range", where)
                elif callee == "tl.range":
                    cov.form("for over tl.range", where)
                elif callee == "tl.static_range":
                    cov.form("for over tl.static_range", where)
                visit(s.body, True)
                visit(s.orelse, True)
                continue
            elif isinstance(s, ast.While):
                cov.form("while", where)
                visit(s.body, True)
                visit(s.orelse, True)
                continue
            elif isinstance(s, ast.Break):
                cov.form("break", where)
            elif isinstance(s, ast.Continue):
                cov.form("continue", where)
            elif isinstance(s, ast.Return):
                if in_control:
                    cov.form("early return", where)
            elif isinstance(s, ast.Assert):
                cov.form("assert", where)
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and dotted(s.value.func) == "print":
                cov.form("print", where)
            elif isinstance(s, (ast.With, ast.Try)):
                visit(s.body, True)

    visit(fn.body, False)
    for node in walk_function(fn):
        if isinstance(node, ast.IfExp):
            cov.form("ternary", where)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in info.jit:
            callee = info.jit[node.func.id]
            n_params = len(callee.args.args)
            n_defaults = len(callee.args.defaults)
            given = len(node.args) + len(node.keywords)
            if n_defaults and given < n_params:
                cov.form("helper call relying on a parameter default", where)
            returns = [r for r in ast.walk(callee) if isinstance(r, ast.Return) and isinstance(r.value, ast.Tuple)]
            if returns:
                cov.form("helper returning a tuple", "%s:%s" % (info.name, callee.name))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verbose", action="store_true", help="print where each item is first covered")
    args = ap.parse_args()

    problems = []
    cov = Coverage()
    infos = []
    for path in corpus_manifest.corpus_files(packages=True):
        try:
            info = FileInfo(path)
        except SyntaxError as e:
            problems.append("%s: not valid Python: %s" % (os.path.basename(path), e))
            continue
        info.kernels_here = set(info.kernels())
        infos.append(info)

    # only what CI compiles counts: the manifest's kernels and the jit functions they reach
    entries, rejected = corpus_manifest.read()
    for info in infos:
        todo = [e.kernel for e in entries if e.file == info.name and e.kernel in info.jit]
        reached = set()
        while todo:
            name = todo.pop()
            if name not in reached:
                reached.add(name)
                todo += list(info.used_names(info.jit[name]))
        for name in sorted(reached):
            scan_function(info, info.jit[name], cov)

    required_names = (["tl." + n for n in TL_NAMES] + ["libdevice." + n for n in LIBDEVICE_NAMES] +
                      ["tl.extra.cuda." + n for n in CUDA_NAMES] +
                      ["tl." + d for d in DTYPES] + ["triton." + n for n in TRITON_NAMES])
    missing_names = [n for n in required_names if n not in cov.names]
    missing_forms = [f for f in STATEMENT_FORMS if f not in cov.forms]
    if missing_names:
        problems.append("names used by no jit function of the corpus: " + ", ".join(missing_names))
    if missing_forms:
        problems.append("statement forms used by no jit function of the corpus: " + ", ".join(missing_forms))

    # the manifest and the corpus agree
    by_file = {info.name: info for info in infos}
    listed = set()
    for e in entries + rejected:
        info = by_file.get(e.file)
        if info is None:
            problems.append("kernels.txt:%d: no corpus file %s" % (e.lineno, e.file))
        elif e.kernel not in info.jit:
            problems.append("kernels.txt:%d: %s has no @triton.jit function %s" % (e.lineno, e.file, e.kernel))
        listed.add((e.file, e.kernel))
    n_kernels = 0
    for info in infos:
        for k in info.kernels():
            n_kernels += 1
            if (info.name, k) not in listed:
                problems.append("%s: kernel %s is neither compiled by kernels.txt nor listed there as rejected" %
                                (info.name, k))
    compiled = {(e.file, e.kernel) for e in entries}

    if args.verbose:
        for n in required_names:
            print("%-40s %s" % (n, cov.names.get(n, "MISSING")))
        for f in STATEMENT_FORMS:
            print("%-40s %s" % (f, cov.forms.get(f, "MISSING")))
    print("corpus: %d files, %d kernels (%d compiled by kernels.txt, %d listed as rejected), %d compilations" %
          (len(infos), n_kernels, len(compiled), len({(e.file, e.kernel) for e in rejected} - compiled), len(entries)))
    print("covered: %d of %d names, %d of %d statement forms" %
          (len(required_names) - len(missing_names), len(required_names), len(STATEMENT_FORMS) - len(missing_forms),
           len(STATEMENT_FORMS)))
    for p in problems:
        print("error: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
