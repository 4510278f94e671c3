// Names and attributes during specialisation: values' descriptions, name lookup, and the
// attributes of modules (the language's functions, from the builtin table), tensors, meshes,
// buffers, tensor descriptors and dtypes.
#include "Bundled.h"
#include "Imports.h"
#include "Registry.h"
#include "Sema.h"

#include <optional>
#include <sstream>

namespace tle::sema {

using ir::DType;

std::string SVal::describe() const {
  switch (kind) {
  case Kind::None: return "None";
  case Kind::Int: return "int " + std::to_string(i);
  case Kind::Float: {
    std::ostringstream s;
    s << "float " << f;
    return s.str();
  }
  case Kind::Bool: return i ? "True" : "False";
  case Kind::Str: { // one line: control characters escaped, long text cut
    std::string t;
    for (char ch : s.substr(0, 80))
      t += ch == '\n' ? "\\n" : ch == '\t' ? "\\t" : ch == '\r' ? "\\r" : std::string(1, ch);
    return "str '" + t + (s.size() > 80 ? "'..." : "'");
  }
  case Kind::DType: return "dtype " + dtype.str();
  case Kind::Tensor: return v->type.str();
  case Kind::Module: return "module '" + s + "'";
  case Kind::Builtin: return "function '" + s + "'";
  case Kind::JitFn: return "@jit function '" + fn->name + "'";
  case Kind::Tuple: {
    std::string r = "tuple(";
    for (size_t k = 0; k < elts.size(); ++k)
      r += (k ? ", " : "") + elts[k].describe();
    return r + ")";
  }
  case Kind::Method: return "method '" + s + "'";
  case Kind::Dict: {
    std::string r = "dict(";
    for (size_t k = 0; k + 1 < elts.size(); k += 2)
      r += (k ? ", " : "") + elts[k].describe() + ": " + elts[k + 1].describe();
    return r + ")";
  }
  case Kind::Mesh: return describeMesh(*this);
  case Kind::Buffer: {
    std::string r = elts[0].v->type.elem.space == ir::AddrSpace::Cluster ? "remote shared buffer [" : "shared buffer [";
    for (size_t k = 0; k < ints.size(); ++k)
      r += std::to_string(ints[k]) + "x";
    return r + ir::name(elts[0].v->type.elem.pointee) + "]";
  }
  case Kind::Slice: return "slice";
  case Kind::PyFn:
    return (i == kExternFn ? "extern function '" : i ? "constexpr function '" : "Python function '") + fn->name + "'";
  case Kind::Namespace:
    if (s == "barrier") { // a tle.gpu.alloc_barriers array or one of its slots
      const SVal &at = attr("_index");
      return at.kind == Kind::None ? "barrier array of " + std::to_string(attr("num_barriers").i)
             : at.kind == Kind::Int ? "barrier slot " + std::to_string(at.i)
                                    : std::string("barrier slot (a run-time index)");
    }
    return s + " object";
  case Kind::BlockPtr: {
    std::string r = "block pointer [";
    for (size_t k = 0; k < ints.size(); ++k)
      r += (k ? "x" : "") + std::to_string(ints[k]);
    return r + "]";
  }
  case Kind::TensorDesc: {
    std::string r = "tensor descriptor [";
    for (size_t k = 0; k < ints.size(); ++k)
      r += (k ? "x" : "") + std::to_string(ints[k]);
    return r + "x" + (elts.empty() ? std::string("?") : elts[0].v->type.elem.pointee == ir::DType::Invalid
                                                              ? std::string("?")
                                                              : std::string(ir::name(elts[0].v->type.elem.pointee))) +
           "]";
  }
  }
  return "?";
}

namespace {

/// A tuple of compile-time ints (a shape).
SVal intTuple(const std::vector<int64_t> &v) {
  std::vector<SVal> r;
  for (int64_t d : v)
    r.push_back(SVal::integer(d));
  return SVal::tuple(r);
}

std::optional<ir::ScalarType> tlDType(const std::string &n) {
  static const std::pair<const char *, DType> table[] = {
      {"int1", DType::I1},      {"int8", DType::I8},       {"int16", DType::I16},   {"int32", DType::I32},
      {"int64", DType::I64},    {"uint8", DType::U8},      {"uint16", DType::U16},  {"uint32", DType::U32},
      {"uint64", DType::U64},   {"float16", DType::F16},   {"bfloat16", DType::BF16}, {"float32", DType::F32},
      {"float64", DType::F64},  {"bool", DType::I1},       {"float8e4nv", DType::F8E4M3}, {"float8e5", DType::F8E5M2}};
  for (auto &[name, d] : table)
    if (n == name)
      return ir::ScalarType{d};
  return std::nullopt;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Names and attributes

SVal Specializer::lookup(const std::string &name, SourceLoc loc, Env &env) {
  if (auto it = env.find(name); it != env.end())
    return it->second;
  if (auto it = globals.find(name); it != globals.end()) {
    if (auto g = guessedGlobals_.find(name); g != guessedGlobals_.end()) {
      diags.warning(loc, "'" + name + "' " + g->second.why);
      for (const Note &n : g->second.notes)
        diags.note(n.loc, n.msg);
      guessedGlobals_.erase(g); // once
    }
    return it->second;
  }
  if (isModuleBuiltin("", name))
    return SVal::builtin(name);
  if (auto it = onlyOneBranch_.find(name); it != onlyOneBranch_.end())
    fail(loc, "'" + name + "' " + it->second);
  if (auto it = unresolvedGlobals_.find(name); it != unresolvedGlobals_.end())
    fail(loc, "'" + name + "' " + it->second.why, it->second.notes);
  fail(loc, "unknown name '" + name + "'");
}

SVal Specializer::attribute(const SVal &base, const std::string &attr, SourceLoc loc) {
  // `.value` of a compile-time value is the value itself (Triton unwraps a constexpr's `.value`
  // for compatibility: FlagGems' `dtype.value`, `BLOCK.value`).
  if (attr == "value" && (base.isNumber() || base.kind == SVal::Kind::Str || base.kind == SVal::Kind::DType ||
                          base.kind == SVal::Kind::None))
    return base;
  if (base.kind == SVal::Kind::Module) {
    const std::string &m = base.s;
    UserModule *um = userModule(m); // a module of the user's code (Imports.cpp), unless the language's
    if (um && (!languageImport(m) || bundledModule(m)))
      return moduleAttribute(*um, attr, loc);
    if (modules_ && bundledModule(m + "." + attr)) { // a built-in submodule (torch's Inductor helpers)
      std::string why;
      if (importModule(m + "." + attr, loc, why))
        return SVal::module(m + "." + attr);
    }
    if (m == "triton") {
      if (attr == "language")
        return SVal::module("triton.language");
      if (attr == "__version__") // the Triton whose language this compiler implements
        return SVal::str("3.6.0");
      if (attr == "constexpr")
        return SVal::builtin("tl.constexpr");
      if (isModuleBuiltin("triton", attr))
        return SVal::builtin("triton." + attr);
      return SVal::module(m + "." + attr);
    }
    if (m == "torch") { // torch's dtypes and limits, without torch (Torch.cpp)
      if (auto d = torchDType(attr))
        return SVal::dtypeOf(*d);
      if (isModuleBuiltin("torch", attr))
        return SVal::builtin("torch." + attr);
      return SVal::module(m + "." + attr);
    }
    // torch.version of a CUDA build: hip is None, cuda a CUDA 12 release string (host code
    // picks ROCm or CUDA configurations with it: FBGEMM's fp8 dtype, `torch.version.cuda < "12.4"`).
    if (m == "torch.version" && attr == "hip")
      return SVal::none();
    if (m == "torch.version" && attr == "cuda")
      return SVal::str("12.8");
    if (m == "triton.language.PropagateNan") { // Triton's enum values
      if (attr == "NONE")
        return SVal::integer(0);
      if (attr == "ALL")
        return SVal::integer(0xFFFF);
      fail(loc, "tl.PropagateNan has no member '" + attr + "' (NONE or ALL)");
    }
    // triton.language.standard: the tl functions it defines, and its underscore helpers (Standard.cpp).
    if (m == "triton.language.standard" && isModuleBuiltin("standard", attr))
      return SVal::builtin("standard." + attr);
    if (m == "triton.language" || m == "triton.language.math" || m == "triton.language.core" ||
        m == "triton.language.random" || m == "triton.language.standard") {
      if (auto d = tlDType(attr))
        return SVal::dtypeOf(*d);
      if (attr == "math" || attr == "core" || attr == "extra" || attr == "standard")
        return SVal::module("triton.language." + attr);
      if (attr == "PropagateNan" || attr == "random")
        return SVal::module("triton.language." + attr);
      if (isModuleBuiltin("tl", attr))
        return SVal::builtin("tl." + attr);
      // tl.dot_scaled: a function of a built-in module (Bundled/triton/language/_tle_dot_scaled.py).
      if (attr == "dot_scaled" && modules_) {
        std::string why;
        if (UserModule *um = importModule("triton.language._tle_dot_scaled", loc, why))
          return moduleAttribute(*um, attr, loc);
      }
      if (m == "triton.language.core" && (attr == "_unwrap_if_constexpr" || attr == "_constexpr_to_value"))
        return SVal::builtin("standard._unwrap_if_constexpr"); // a constexpr is its value here
      if (attr == "_experimental_descriptor_load" || attr == "_experimental_descriptor_store")
        fail(loc, "tl." + attr + " (a TMA descriptor in global memory, built on the host) is not in Triton 3.6, "
                  "whose language TLE implements: pass a triton.tools.tensor_descriptor.TensorDescriptor "
                  "(a tensor-descriptor parameter) or build one with tl.make_tensor_descriptor, and use its "
                  ".load / .store");
      if (attr == "float8e4b15" || attr == "float8e4b8" || attr == "float8e5b16")
        fail(loc, "tl." + attr + " is not supported: TLE targets NVIDIA GPUs, whose fp8 types are "
                  "tl.float8e4nv and tl.float8e5");
      fail(loc, "'" + attr + "' is not a function of triton.language that TLE supports");
    }
    // triton.language.extra[.cuda].libdevice: the libdevice wrappers.
    if (m == "triton.language.extra" || m == "triton.language.extra.cuda") {
      if (attr == "libdevice")
        return SVal::module("libdevice");
      // tl.extra.cuda's programmatic-dependent-launch controls and launch geometry.
      if (m == "triton.language.extra.cuda" && isModuleBuiltin("cuda", attr))
        return SVal::builtin("cuda." + attr);
      return SVal::module(m + "." + attr);
    }
    if (m == "libdevice" || m == "triton.language.extra.libdevice" || m == "triton.language.extra.cuda.libdevice")
      return SVal::builtin("libdevice." + attr);
    // TLE (FlagTree's spelling): triton.experimental.tle[.language] is TLE-Lite, its .gpu TLE-Struct.
    // Earlier FlagTree releases had TLE-Struct's functions on the top module too (tle.alloc,
    // tle.copy, tle.local_load), and at triton.language.extra.tle: both still resolve.
    if (m == "triton.experimental.tle" || m == "triton.experimental.tle.language" || m == "triton.language.extra.tle") {
      if (attr == "language")
        return SVal::module("triton.experimental.tle.language");
      if (attr == "gpu")
        return SVal::module("triton.experimental.tle.language.gpu");
      if (attr == "raw")
        return SVal::module("triton.experimental.tle.language.raw");
      if (isModuleBuiltin("tle", attr))
        return SVal::builtin("tle." + attr);
      if (isModuleBuiltin("tle.gpu", attr) || attr == "smem" || attr == "tmem")
        return attribute(SVal::module("triton.experimental.tle.language.gpu"), attr, loc);
      fail(loc, "tle." + attr + " is not supported by tlec yet (TLE-Lite has " + joinNames(builtinNames("tle")) + ")");
    }
    // TLE-Raw: FlagTree's `triton.experimental.tle.raw` (dialect) and `...tle.language.raw`
    // (call, call_smem); here each has all three.
    if (m == "triton.experimental.tle.raw" || m == "triton.experimental.tle.language.raw") {
      if (isModuleBuiltin("tle.raw", attr))
        return SVal::builtin("tle.raw." + attr);
      fail(loc, "tle.raw." + attr + " is not supported by tlec (TLE-Raw has " + joinNames(builtinNames("tle.raw")) + ")");
    }
    // triton.backends.backends: the installed backends by name, here NVIDIA's alone, whose
    // driver is the active one (vLLM's "is Triton usable?" check counts them).
    if (m == "triton.backends" && attr == "backends") {
      SVal nvidia = SVal::record("Backend", {{"name", SVal::str("nvidia")}, {"driver", SVal::record("DriverBase", {})}});
      SVal d;
      d.kind = SVal::Kind::Dict;
      d.elts = {SVal::str("nvidia"), nvidia};
      return d;
    }
    // typing.TYPE_CHECKING is False when a module runs: `if TYPE_CHECKING:` imports (often
    // cyclic ones, as vLLM's) are for type checkers only.
    if (m == "typing" && attr == "TYPE_CHECKING")
      return SVal::boolean(false);
    if (m == "importlib.util" && attr == "find_spec")
      return SVal::builtin("importlib.util.find_spec");
    // triton.runtime.driver.active: the NVIDIA driver of the target compiled for
    // (get_current_target() below; fla's device checks).
    if (m == "torch.cuda" && attr == "get_device_capability")
      return SVal::builtin("torch.cuda.get_device_capability");
    if (m == "triton.runtime.driver" && attr == "active")
      return SVal::record("DriverBase", {});
    // packaging.version's parse / Version: comparable release tuples (Strings.cpp), for host
    // code choosing by triton.__version__ (Liger's, TransformerEngine's).
    if (m == "packaging.version" && (attr == "parse" || attr == "Version"))
      return SVal::builtin("packaging.version.parse");
    if (m == "importlib" && attr == "import_module")
      return SVal::builtin("importlib.import_module");
    // Python's math module: its constants and functions on compile-time numbers (PyMath.cpp).
    if (m == "math") {
      if (auto c = pyMathConstant(attr))
        return *c;
      if (isModuleBuiltin("math", attr))
        return SVal::builtin("math." + attr);
      fail(loc, "math." + attr + " is not supported by tlec (Python's math module here has pi, e, tau, inf, nan, " +
                    joinNames(builtinNames("math")) + ")");
    }
    // pathlib.Path and os.path's helpers, which raw declarations use to find their source files.
    if (m == "os.environ" && attr == "get")
      return SVal::builtin("os.environ.get");
    if (m == "pathlib" || m == "os.path" || m == "os") {
      if (m == "os" && attr == "path")
        return SVal::module("os.path");
      if (m == "os" && attr == "getenv")
        return SVal::builtin("os.getenv");
      std::string fam = m == "pathlib" ? "pathlib" : "os.path";
      if (isModuleBuiltin(fam, attr))
        return SVal::builtin(fam + "." + attr);
      return SVal::module(m + "." + attr);
    }
    if (m == "triton.experimental.tle.language.gpu") {
      if (isModuleBuiltin("tle.gpu", attr))
        return SVal::builtin("tle.gpu." + attr);
      if (attr == "smem" || attr == "tmem")
        return SVal::str("tle.gpu." + attr);
      if (attr == "PENDING" || attr == "READY") // a barrier's initial state (alloc_barriers' init=)
        return SVal::str(attr == "READY" ? "ready" : "pending");
      if (attr == "swizzled_shared_layout" || attr == "nv_mma_shared_layout") // classes: make_default(...)
        return SVal::record(attr, {});
      std::vector<std::string> names = builtinNames("tle.gpu");
      names.insert(names.end(), {"smem", "PENDING", "READY", "swizzled_shared_layout", "nv_mma_shared_layout"});
      fail(loc, "tle.gpu." + attr + " is not supported by tlec yet (TLE-Struct has " + joinNames(names) + ")");
    }
    return SVal::module(m + "." + attr);
  }
  if (base.kind == SVal::Kind::BlockPtr) {
    // A block pointer's dtype is its pointer type: p.dtype.element_ty is the element dtype.
    if (attr == "dtype" || attr == "type")
      return SVal::dtypeOf(base.elts[0].v->type.elem);
    fail(loc, base.describe() + " has no attribute '" + attr + "' (block pointers have dtype)");
  }
  if (base.isTensor()) {
    // x.dtype is the element type; x.type, Triton's full type, is that too for a scalar (a
    // pointer's x_ptr.type.element_ty is the pointee) and the element type of a tile.
    if (attr == "dtype" || attr == "type")
      return SVal::dtypeOf(base.v->type.elem);
    if (attr == "numel") // the number of elements (1 for a scalar), a compile-time int
      return SVal::integer(base.v->type.numElements());
    if (attr == "shape") {
      return intTuple(base.v->type.shape);
    }
    if (attr == "T") { // x.T: the 2-D transpose (Triton's AST visitor turns it into tl.trans)
      CallArgs args{loc, {Arg{loc, base}}, {}};
      return callBuiltin("tl.trans", args);
    }
    // Triton's tensor member functions (core._tensor_member_fn): x.f(...) is tl.f(x, ...), and x.to.
    if (isBuiltinMethod("tensor", attr)) {
      return SVal::method(base, attr);
    }
    fail(loc, base.describe() + " has no attribute '" + attr + "'");
  }
  if (base.kind == SVal::Kind::Mesh) {
    if (isBuiltinMethod("mesh", attr))
      return SVal::method(base, attr);
    if (auto v = meshAttribute(base, attr))
      return *v;
    fail(loc, base.describe() + " has no attribute '" + attr + "' (device meshes have shape, dim_names, ndim, size, "
                                "physical_ids, launch_shape, launch_dim_names, reshape and flatten)");
  }
  if (base.kind == SVal::Kind::Buffer) {
    if (isBuiltinMethod("buffer", attr))
      return SVal::method(base, attr);
    if (attr == "shape") {
      return intTuple(base.ints);
    }
    if (attr == "dtype")
      return SVal::dtypeOf(ir::ScalarType{base.elts[0].v->type.elem.pointee});
    fail(loc, base.describe() + " has no attribute '" + attr + "' (buffers have slot, shape and dtype)");
  }
  if (base.kind == SVal::Kind::TensorDesc) {
    if (isBuiltinMethod("tensor_descriptor", attr)) {
      return SVal::method(base, attr);
    }
    if (attr == "block_shape") {
      return intTuple(base.ints);
    }
    if (attr == "dtype")
      return SVal::dtypeOf(ir::ScalarType{base.elts[0].v->type.elem.pointee});
    if (attr == "shape")
      return base.elts[1];
    if (attr == "strides")
      return base.elts[2];
    fail(loc, base.describe() + " has no attribute '" + attr + "' (tensor descriptors have load, store, block_shape, "
                                "dtype, shape and strides)");
  }
  if (isPath(base)) {
    if (auto v = pathAttribute(base, attr))
      return *v;
    fail(loc, "pathlib.Path has no attribute '" + attr + "' that tlec evaluates (parent, name, stem, suffix)");
  }
  if (base.kind == SVal::Kind::Namespace) { // torch.finfo(...), tle.pipe(...) and the like
    if (isBuiltinMethod(base.s, attr))
      return SVal::method(base, attr);
    for (size_t k = 0; k + 1 < base.elts.size(); k += 2)
      if (base.elts[k].s == attr)
        return base.elts[k + 1];
    std::string names;
    for (size_t k = 0; k + 1 < base.elts.size(); k += 2)
      names += (k ? ", " : "") + base.elts[k].s;
    fail(loc, base.describe() + " has no attribute '" + attr + "' (it has " + names + ")");
  }
  // A Python number assigned in a kernel is a scalar tensor in Triton (its code generator
  // converts assigned numbers), so its tensor methods apply: `zero = 0.0; zero.to(x.dtype)`
  // (flash-attention's activations).
  if (base.isNumber() && base.kind != SVal::Kind::Bool && (attr == "to" || attr == "dtype") && b)
    return attribute(SVal::tensor(toTensor(base, loc)), attr, loc);
  // Python's methods of compile-time ints and strings (constexpr functions use them).
  if ((base.kind == SVal::Kind::Int || base.kind == SVal::Kind::Bool) && isBuiltinMethod("int", attr))
    return SVal::method(base, attr);
  if (base.kind == SVal::Kind::Str && isBuiltinMethod("str", attr))
    return SVal::method(base, attr);
  if (base.kind == SVal::Kind::Dict && isBuiltinMethod("dict", attr))
    return SVal::method(base, attr);
  if (base.kind == SVal::Kind::DType) {
    if (attr == "element_ty") {
      // A tile's x.type is its element dtype here, where Triton's is a block type whose
      // element_ty is that dtype (`acc.type.element_ty`, vLLM's attention): a non-pointer dtype's
      // element_ty is itself.
      if (!base.dtype.isPointer())
        return base;
      return SVal::dtypeOf(ir::ScalarType{base.dtype.pointee});
    }
    DType d = base.dtype.dtype;
    if (attr == "primitive_bitwidth")
      return SVal::integer(ir::bitWidth(d));
    if (attr == "fp_mantissa_width") {
      if (!ir::isFloat(d))
        fail(loc, "fp_mantissa_width is defined for floating-point dtypes, not " + base.dtype.str());
      return SVal::integer(ir::mantissaBits(d));
    }
    if (attr == "int_bitwidth" || attr == "int_signedness") {
      if (!ir::isInteger(d))
        fail(loc, attr + " is defined for integer dtypes, not " + base.dtype.str());
      return attr == "int_bitwidth" ? SVal::integer(ir::bitWidth(d)) : SVal::boolean(ir::isSigned(d));
    }
    // Triton's dtype predicates (tl.dtype.is_fp8() etc.), called as methods.
    if (isBuiltinMethod("dtype", attr)) {
      return SVal::method(base, attr);
    }
    fail(loc, "dtype has no attribute '" + attr + "'");
  }
  fail(loc, base.describe() + " has no attribute '" + attr + "'");
}

} // namespace tle::sema
