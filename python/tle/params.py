"""A kernel's parameters read from its Python-syntax source (.tle or Triton .py) with Python's own
parser: names in order, which are constexprs, annotated types, defaults and do_not_specialize."""
import ast
import os

# triton.language dtype names -> tlec signature type names.
_TL_DTYPES = {
    "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5",
}
_MAX_IMPORT_DEPTH = 16


class Param:
    """One parameter of the kernel's def.

    name; constexpr (annotated tl.constexpr); type (the tlec type an annotation gives, e.g.
    "*fp32" or "i32", else None); has_default; default (its value when a literal, else None)."""

    __slots__ = ("name", "constexpr", "type", "has_default", "default")

    def __init__(self, name, constexpr=False, type=None, has_default=False, default=None):
        self.name, self.constexpr, self.type = name, constexpr, type
        self.has_default, self.default = has_default, default

    def __repr__(self):
        return "Param(%s%s)" % (self.name, ": constexpr" if self.constexpr else "")


class KernelDef:
    """The kernel `name` found in `path`: its params (list of Param) and the parameter names its
    decorator excludes from value specialisation (do_not_specialize) and from alignment
    specialisation (do_not_specialize_on_alignment)."""

    def __init__(self, name, path, params, no_specialize=(), no_align=()):
        self.name, self.path, self.params = name, path, params
        self.no_specialize, self.no_align = set(no_specialize), set(no_align)

    def param(self, name):
        """The Param called `name`, or None."""
        return next((p for p in self.params if p.name == name), None)


def _dotted(node):
    """'a.b.c' for a Name/Attribute chain, else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return base + "." + node.attr if base else ""
    return ""


def _is_jit(node):
    """True for triton.jit, tle.jit, jit, and calls of them (triton.jit(do_not_specialize=...))."""
    if isinstance(node, ast.Call):
        node = node.func
    return _dotted(node).split(".")[-1] == "jit"


def _annotation(node):
    """(constexpr, type) of an annotation expression."""
    if node is None:
        return False, None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip()
        if text.endswith("constexpr"):
            return True, None
        return False, text.split(":")[0].strip() or None
    name = _dotted(node).split(".")[-1]
    if name == "constexpr":
        return True, None
    if name in _TL_DTYPES:
        return False, _TL_DTYPES[name]
    if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == "pointer_type" and node.args:
        inner = _dotted(node.args[0]).split(".")[-1]
        return False, "*" + _TL_DTYPES[inner] if inner in _TL_DTYPES else None
    return False, None


def _literal(node):
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _params_of(fn):
    args = fn.args
    positional = list(args.posonlyargs) + list(args.args)
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = []
    for arg, default in zip(positional, defaults):
        constexpr, type_ = _annotation(arg.annotation)
        known, value = _literal(default) if default is not None else (False, None)
        params.append(Param(arg.arg, constexpr, type_, default is not None, value if known else None))
    return params


def _name_list(call, key, params):
    """Parameter names a decorator keyword (names or indices) lists."""
    for kw in call.keywords if isinstance(call, ast.Call) else ():
        if kw.arg != key:
            continue
        ok, value = _literal(kw.value)
        if not ok:
            return []
        return [params[v].name if isinstance(v, int) and 0 <= v < len(params) else v for v in value]
    return []


def _kernel_def(fn, jit_call, path):
    params = _params_of(fn)
    return KernelDef(fn.name, path, params, _name_list(jit_call, "do_not_specialize", params),
                     _name_list(jit_call, "do_not_specialize_on_alignment", params))


def _jit_decorator(fn):
    return next((d for d in fn.decorator_list if _is_jit(d)), None)


def _kernels_in(tree, path):
    """{name: KernelDef} of the module's @jit functions and `name = triton.jit(fn)` assignments."""
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    found = {}
    for name, fn in defs.items():
        jit = _jit_decorator(fn)
        if jit is not None:
            found[name] = _kernel_def(fn, jit, path)
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        call = node.value
        if not isinstance(call, ast.Call) or len(call.args) != 1 or not isinstance(call.args[0], ast.Name):
            continue
        fn = defs.get(call.args[0].id)
        if fn is not None and _is_jit(call.func):
            kdef = _kernel_def(fn, call.func, path)
            kdef.name = node.targets[0].id
            found[kdef.name] = kdef
    return found


def _module_file(module, level, path, include_dirs):
    """The file of an imported module: relative to `path`'s directory for `from .m import`, else
    searched in include_dirs and then `path`'s directory and its parents (the package root)."""
    parts = module.split(".") if module else []
    if level:
        base = os.path.dirname(path)
        for _ in range(level - 1):
            base = os.path.dirname(base)
        roots = [base]
    else:
        roots, d = list(include_dirs), os.path.dirname(os.path.abspath(path))
        while d and d not in roots:
            roots.append(d)
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    for root in roots:
        stem = os.path.join(root, *parts) if parts else root
        for candidate in (stem + ".tle", stem + ".py", os.path.join(stem, "__init__.py"),
                          os.path.join(stem, "__init__.tle")):
            if os.path.isfile(candidate):
                return candidate
    return None


def _parse(path):
    with open(path, "rb") as f:
        return ast.parse(f.read(), filename=path)


def find_kernel(path, name=None, include_dirs=(), _depth=0):
    """The KernelDef of kernel `name` in source file `path` (or of its only @jit kernel), following
    `from M import name` into the project's own modules. Raises ValueError when there is no such
    kernel or `name` is None and the file has several; SyntaxError as Python's parser reports it."""
    tree = _parse(path)
    kernels = _kernels_in(tree, path)
    if name is None:
        if len(kernels) != 1:
            listed = ", ".join(sorted(kernels)) or "none"
            raise ValueError("%s: pass the kernel's name: the file has %s @jit kernels (%s)"
                             % (path, "several" if kernels else "no", listed))
        return next(iter(kernels.values()))
    if name in kernels:
        return kernels[name]
    if _depth < _MAX_IMPORT_DEPTH:
        for node in tree.body:
            if not isinstance(node, ast.ImportFrom):
                continue
            for alias in node.names:
                if (alias.asname or alias.name) != name:
                    continue
                target = _module_file(node.module, node.level, path, include_dirs)
                if target is not None:
                    kdef = find_kernel(target, alias.name, include_dirs, _depth + 1)
                    kdef.name = name if kdef.name == alias.name else kdef.name
                    return kdef
    raise ValueError("%s: no @jit kernel named %r (kernels: %s)"
                     % (path, name, ", ".join(sorted(kernels)) or "none"))
