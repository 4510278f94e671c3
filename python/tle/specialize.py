"""Binding a call's arguments to a kernel's parameters and choosing its specialisation as Triton's
JIT does: each argument's type, divisibility by 16 of pointers and integers, integers equal to 1
made constants; giving tlec's -s signature and -D values."""
from .arrays import array_view, is_array
from .errors import ArgumentError
from .metadata import INT_RANGES

_DIVISIBILITY = 16


def bind(kdef, args, kwargs):
    """{parameter name: value} for a call with positional `args` and keyword `kwargs` (constexprs
    too). Raises ArgumentError for too many positional arguments, an unknown or repeated keyword,
    or a runtime parameter without a value."""
    names = [p.name for p in kdef.params]
    if len(args) > len(names):
        raise ArgumentError("%s takes %d parameters (%s) but was given %d positional arguments"
                            % (kdef.name, len(names), ", ".join(names), len(args)))
    bound = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise ArgumentError("%s has no parameter %r (parameters: %s)" % (kdef.name, name, ", ".join(names)))
        if name in bound:
            raise ArgumentError("%s got two values for parameter %r" % (kdef.name, name))
        bound[name] = value
    for p in kdef.params:  # a runtime parameter's default is an argument like any other
        if not p.constexpr and p.has_default and p.name not in bound:
            bound[p.name] = p.default
    missing = [p.name for p in kdef.params if not p.constexpr and not p.has_default and p.name not in bound]
    if missing:
        raise ArgumentError("%s is missing %s for parameter%s %s" % (
            kdef.name, "an argument" if len(missing) == 1 else "arguments", "" if len(missing) == 1 else "s",
            ", ".join(repr(m) for m in missing)))
    return bound


def constexpr_text(value):
    """A constexpr value as tlec's -D takes it (integers, floats, True/False, dtype names)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    return text[len("torch."):] if text.startswith("torch.") else text


def _int_type(value):
    if INT_RANGES["i32"][0] <= value <= INT_RANGES["i32"][1]:
        return "i32"
    if INT_RANGES["i64"][0] <= value <= INT_RANGES["i64"][1]:
        return "i64"
    if 0 <= value <= INT_RANGES["u64"][1]:
        return "u64"
    raise ArgumentError("%d does not fit a 64-bit integer" % value)


def _describe(value):
    return "a tensor" if is_array(value) else "a %s" % type(value).__name__


def entry(kdef, param, value, views=None):
    """The signature entry (e.g. "*fp32:16", "i32", "i32:1", "fp32", "None") of runtime parameter
    `param` given `value`; an array's ArrayView is stored in `views` (a dict, when given) under the
    parameter's name. Raises ArgumentError for a value no runtime parameter takes, or one that
    contradicts the parameter's annotated type."""
    value_spec = param.name not in kdef.no_specialize
    align_spec = value_spec and param.name not in kdef.no_align
    where = "%s: argument %r" % (kdef.name, param.name)
    if value is None:
        return "None"
    if is_array(value):
        try:
            view = array_view(value)
        except TypeError as e:
            raise ArgumentError("%s: %s" % (where, e))
        if views is not None:
            views[param.name] = view
        if param.type and param.type != "*" + view.dtype:
            raise ArgumentError("%s is a %s tensor but the parameter is %s" % (where, view.dtype, param.type))
        return "*%s%s" % (view.dtype, ":16" if align_spec and view.ptr % _DIVISIBILITY == 0 else "")
    if param.type and param.type.startswith("*"):
        raise ArgumentError("%s is %s but the parameter is a pointer (%s)" % (where, _describe(value), param.type))
    if isinstance(value, bool):
        return param.type or "i1"
    if isinstance(value, int):
        type_ = param.type or _int_type(value)
        if type_ in INT_RANGES and not INT_RANGES[type_][0] <= value <= INT_RANGES[type_][1]:
            raise ArgumentError("%s = %d does not fit the parameter's type %s" % (where, value, type_))
        if value_spec and value == 1 and type_ in INT_RANGES:
            return type_ + ":1"
        if value_spec and value % _DIVISIBILITY == 0 and type_ in INT_RANGES:
            return type_ + ":16"
        return type_
    if isinstance(value, float):
        return param.type or "fp32"
    raise ArgumentError("%s is %s; runtime parameters take tensors, ints, floats, bools or None"
                        % (where, _describe(value)))


def specialize(kdef, bound, views=None):
    """(signature, defines) for a bound call: `signature` has one entry per runtime parameter
    given a value, in order ("*fp32:16, *fp32:16, i32" ...; None when the kernel has none), and
    `defines` maps each constexpr given a value to its -D text. Parameters left out (constexprs
    with defaults or from @triton.heuristics) are left to tlec; a runtime parameter left out after
    one that was given is an error, since the signature is positional. `views`, when a dict,
    receives the arrays' ArrayViews by parameter name."""
    entries, defines, gap = [], {}, None
    for param in kdef.params:
        if param.name not in bound:
            if not param.constexpr:
                gap = gap or param.name
            continue
        value = bound[param.name]
        if param.constexpr:
            defines[param.name] = constexpr_text(value)
            continue
        if gap is not None:
            raise ArgumentError("%s: give runtime parameter %r a value: a later runtime parameter, %r, was given one"
                                % (kdef.name, gap, param.name))
        entries.append(entry(kdef, param, value, views))
    return (", ".join(entries) if entries else None), defines
