// The `tl.*`, `triton.*` and Python builtin functions a kernel can call, with Triton 3.6's
// argument rules and located errors.
#include "Binder.h"
#include "Sema.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace tle::sema {

using ir::DType;

namespace {

/// The dims listed by a block-pointer access's boundary_check (an int or a tuple of ints).
std::vector<int64_t> boundaryCheckDims(Specializer &S, const Arg *bc) {
  std::vector<int64_t> dims;
  if (!bc || bc->val.kind == SVal::Kind::None)
    return dims;
  std::vector<SVal> es = bc->val.kind == SVal::Kind::Tuple ? bc->val.elts : std::vector<SVal>{bc->val};
  for (auto &e : es) {
    if (e.kind != SVal::Kind::Int)
      S.fail(bc->loc, "boundary_check must list dims as integers");
    dims.push_back(e.i);
  }
  return dims;
}

/// Python floor division (constexpr semantics).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

} // namespace

std::vector<int64_t> shapeArg(Specializer &S, const Arg &a, const std::string &fname) {
  std::vector<int64_t> shape;
  if (a.val.kind == SVal::Kind::Int) {
    shape.push_back(a.val.i);
  } else if (a.val.kind == SVal::Kind::Tuple) {
    for (auto &e : a.val.elts) {
      if (e.kind != SVal::Kind::Int)
        S.fail(a.loc, fname + "() shape must hold compile-time integers, got " + e.describe());
      shape.push_back(e.i);
    }
  } else {
    S.fail(a.loc, fname + "() shape must be a list of compile-time integers, got " + a.val.describe());
  }
  for (int64_t d : shape)
    if (!isPow2(d))
      S.fail(a.loc, fname + "() shape dims must be powers of two, got " + std::to_string(d));
  if (std::string why = ir::tileLimitError(shape); !why.empty())
    S.fail(a.loc, fname + "() shape has " + why);
  return shape;
}

/// Reads tl.load / tl.store's cache_modifier, eviction_policy and (loads) volatile into `op`
/// (Triton's accepted spellings; "" and None mean none). Located errors for other values.
static void applyMemoryHints(Specializer &S, Binder &p, ir::Op *op, bool load) {
  auto text = [&](const char *name) -> std::string {
    if (!p.has(name) || p.get(name).val.kind == SVal::Kind::None)
      return "";
    if (p.get(name).val.kind != SVal::Kind::Str)
      S.fail(p.loc(name), std::string(name) + " must be a string, got " + p.get(name).val.describe());
    return p.get(name).val.s;
  };
  std::string c = text("cache_modifier");
  if (!c.empty()) {
    static const std::pair<const char *, ir::CacheHint> loads[] = {
        {".ca", ir::CacheHint::CA}, {".cg", ir::CacheHint::CG}, {".cv", ir::CacheHint::CV}};
    static const std::pair<const char *, ir::CacheHint> stores[] = {
        {".wb", ir::CacheHint::WB}, {".cg", ir::CacheHint::CG}, {".cs", ir::CacheHint::CS}, {".wt", ir::CacheHint::WT}};
    bool found = false;
    for (auto &[n, h] : load ? std::vector<std::pair<const char *, ir::CacheHint>>(std::begin(loads), std::end(loads))
                             : std::vector<std::pair<const char *, ir::CacheHint>>(std::begin(stores), std::end(stores)))
      if (c == n) {
        op->ival = static_cast<int64_t>(h);
        found = true;
      }
    if (!found)
      S.fail(p.loc("cache_modifier"), std::string(load ? "load" : "store") + "() cache_modifier \"" + c +
                                          "\" is not supported (" + (load ? "\".ca\", \".cg\" or \".cv\"" : "\".wb\", \".cg\", \".cs\" or \".wt\"") +
                                          ")");
  }
  std::string e = text("eviction_policy");
  if (!e.empty()) {
    if (e == "evict_first")
      op->ival2 = static_cast<int64_t>(ir::EvictionHint::EvictFirst);
    else if (e == "evict_last")
      op->ival2 = static_cast<int64_t>(ir::EvictionHint::EvictLast);
    else if (e != "evict_normal")
      S.fail(p.loc("eviction_policy"), std::string(load ? "load" : "store") + "() eviction_policy \"" + e +
                                           "\" is not supported (\"evict_first\", \"evict_last\" or \"evict_normal\")");
  }
  if (load && p.has("volatile") && S.truthy(p.get("volatile").val, p.loc("volatile"))) {
    if (op->ival)
      S.fail(p.loc("volatile"), "load() volatile=True takes no cache_modifier (PTX ld.volatile has no cache operator)");
    op->axis = 1;
  }
  ir::AddrSpace space = op->operands[0]->type.elem.space;
  if (space != ir::AddrSpace::Global && (op->ival || op->ival2))
    S.fail(p.loc(op->ival ? "cache_modifier" : "eviction_policy"),
           std::string(load ? "load" : "store") + "() cache_modifier and eviction_policy apply to global memory; "
           "this pointer addresses " + (space == ir::AddrSpace::Shared ? "the CTA's shared memory" : "a cluster CTA's shared memory"));
}

ir::Value *Specializer::castWithRounding(ir::Value *v, ir::ScalarType t, const Arg *rounding, SourceLoc loc) {
  ir::Value *r = castTo(v, t, loc);
  if (!rounding || rounding->val.kind == SVal::Kind::None)
    return r;
  if (rounding->val.kind != SVal::Kind::Str || (rounding->val.s != "rtne" && rounding->val.s != "rtz"))
    fail(rounding->loc, "fp_downcast_rounding must be \"rtne\" or \"rtz\"");
  bool narrowing = ir::isFloat(v->type.dtype()) && ir::isFloat(t.dtype) && ir::bitWidth(t.dtype) < ir::bitWidth(v->type.dtype());
  if (!narrowing)
    fail(rounding->loc, "fp_downcast_rounding applies only to float-to-narrower-float casts");
  if (rounding->val.s == "rtz" && r->def && r->def->kind == ir::OpKind::Cast)
    r->def->ival = 1; // round toward zero
  return r;
}

void Specializer::materializeBlockPtr(const SVal &bp, const std::vector<int64_t> &boundaryCheck, SourceLoc loc,
                                      ir::Value *&ptrs, ir::Value *&mask) {
  // coord_d = offset_d + arange(block_d) along dim d; ptrs = base + sum_d coord_d * stride_d;
  // boundary_check d adds 0 <= coord_d < shape_d (Triton 3.6 semantics, int64 arithmetic).
  const std::vector<int64_t> &block = bp.ints;
  size_t rank = block.size();
  ir::Value *offset = nullptr;
  mask = nullptr;
  for (size_t d = 0; d < rank; ++d) {
    ir::Op *ar = b->create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {block[d]})});
    ar->ival = 0;
    ar->ival2 = block[d];
    ir::Value *c = castTo(ar->result(), ir::ScalarType{DType::I64}, loc);
    c = b->binary(ir::OpKind::Add, loc, c, b->splat(loc, bp.elts[3].elts[d].v, {block[d]}));
    // Size-1 dims around d: c becomes [1, .., block_d, .., 1].
    for (size_t e = 0; e < rank; ++e)
      if (e != d)
        c = expandDims(c, static_cast<int>(e), loc);
    std::vector<int64_t> full(block.begin(), block.end());
    ir::Value *cf = broadcastTo(c, full, loc);
    ir::Value *term = b->binary(ir::OpKind::Mul, loc, cf, b->splat(loc, bp.elts[2].elts[d].v, full));
    offset = offset ? b->binary(ir::OpKind::Add, loc, offset, term) : term;
    if (std::find(boundaryCheck.begin(), boundaryCheck.end(), int64_t(d)) != boundaryCheck.end()) {
      ir::Value *zero = b->splat(loc, b->constInt(loc, DType::I64, 0), full);
      ir::Value *inside = b->binary(ir::OpKind::And, loc, b->cmp(loc, ir::CmpPred::Ge, cf, zero),
                                    b->cmp(loc, ir::CmpPred::Lt, cf, b->splat(loc, bp.elts[1].elts[d].v, full)));
      mask = mask ? b->binary(ir::OpKind::And, loc, mask, inside) : inside;
    }
  }
  for (int64_t d : boundaryCheck)
    if (d < 0 || d >= int64_t(rank))
      fail(loc, "boundary_check dim " + std::to_string(d) + " is out of range for a rank-" + std::to_string(rank) +
                    " block pointer");
  ir::Value *base = bp.elts[0].v;
  ptrs = b->create(ir::OpKind::AddPtr, loc, {b->splat(loc, base, block), offset}, {ir::Type(base->type.elem, block)})
             ->result();
}

SVal Specializer::callMethod(const SVal &m, CallArgs &args) {
  const SVal &self = m.elts[0];
  if (self.kind == SVal::Kind::Buffer)
    return bufferSlot(self, args);
  if (self.kind == SVal::Kind::DType) { // a dtype predicate (Expressions.cpp lists them)
    Binder p(*this, m.s, args, {}, 0);
    DType d = self.dtype.dtype;
    const std::string &n = m.s;
    bool r = false;
    if (n == "is_fp8") r = ir::isFP8(d);
    else if (n == "is_fp8e4nv") r = d == DType::F8E4M3;
    else if (n == "is_fp8e5") r = d == DType::F8E5M2;
    else if (n == "is_fp16") r = d == DType::F16;
    else if (n == "is_bf16") r = d == DType::BF16;
    else if (n == "is_fp32") r = d == DType::F32;
    else if (n == "is_fp64") r = d == DType::F64;
    else if (n == "is_floating") r = ir::isFloat(d);
    else if (n == "is_standard_floating") r = ir::isFloat(d) && !ir::isFP8(d);
    else if (n == "is_int") r = ir::isInteger(d);
    else if (n == "is_int_signed") r = ir::isSigned(d);
    else if (n == "is_int_unsigned") r = ir::isUnsigned(d); // int1 counts as unsigned, as in Triton
    else if (n == "is_bool" || n == "is_int1") r = d == DType::I1;
    else if (n == "is_ptr") r = self.dtype.isPointer();
    else if (n.rfind("is_uint", 0) == 0) r = ir::isUnsigned(d) && d != DType::I1 && "is_uint" + std::to_string(ir::bitWidth(d)) == n;
    else if (n.rfind("is_int", 0) == 0) r = ir::isSigned(d) && "is_int" + std::to_string(ir::bitWidth(d)) == n;
    return SVal::boolean(r);
  }
  if (m.s == "to") {
    Binder p(*this, "to", args, {"dtype", "fp_downcast_rounding", "bitcast"}, 1);
    ir::ScalarType t = p.dtype("dtype");
    // Triton's bitcast of or to a pointer is a cast (tl.semantic.bitcast).
    if (p.has("bitcast") && p.get("bitcast").val.i && !t.isPointer() && !self.v->type.elem.isPointer()) {
      if (ir::bitWidth(t.dtype) != ir::bitWidth(self.v->type.dtype()))
        fail(p.loc("dtype"), "bitcast between types of different widths: " + self.v->type.elem.str() + " and " + t.str());
      return SVal::tensor(b->create(ir::OpKind::Bitcast, args.loc, {self.v}, {self.v->type.withElem(t)})->result());
    }
    return SVal::tensor(castWithRounding(self.v, t, p.has("fp_downcast_rounding") ? &p.get("fp_downcast_rounding") : nullptr, args.loc));
  }
  // Other tensor methods are the tl functions with the tensor as first argument.
  CallArgs withSelf = args;
  withSelf.pos.insert(withSelf.pos.begin(), Arg{args.loc, self});
  return callBuiltin("tl." + m.s, withSelf);
}

const std::map<std::string, int> &libdeviceArities() {
  static const std::map<std::string, int> table = {
      {"sin", 1}, {"cos", 1}, {"tan", 1}, {"asin", 1}, {"acos", 1}, {"atan", 1}, {"sinh", 1}, {"cosh", 1},
      {"tanh", 1}, {"asinh", 1}, {"acosh", 1}, {"atanh", 1}, {"erf", 1}, {"erfc", 1}, {"floor", 1},
      {"ceil", 1}, {"trunc", 1}, {"round", 1}, {"rint", 1}, {"log1p", 1}, {"expm1", 1}, {"log10", 1},
      {"exp10", 1}, {"cbrt", 1}, {"lgamma", 1}, {"tgamma", 1}, {"pow", 2}, {"atan2", 2}, {"fmod", 2},
      {"hypot", 2}, {"copysign", 2}, {"exp", 1}, {"log", 1}, {"exp2", 1}, {"log2", 1}, {"rsqrt", 1},
      {"sqrt", 1}, {"isnan", 1}, {"isinf", 1}, {"signbit", 1}};
  return table;
}

SVal Specializer::legacyBuiltin(const std::string &name, CallArgs &args) {
  SourceLoc loc = args.loc;
  // --- Python builtins
  if (name == "float" || name == "int" || name == "bool") {
    Binder p(*this, name, args, {"x"}, 1);
    const SVal &x = p.get("x").val;
    if (name == "float") {
      if (x.kind == SVal::Kind::Str) {
        std::string s = x.s;
        for (auto &c : s)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (s == "inf" || s == "+inf" || s == "infinity")
          return SVal::real(std::numeric_limits<double>::infinity());
        if (s == "-inf" || s == "-infinity")
          return SVal::real(-std::numeric_limits<double>::infinity());
        if (s == "nan")
          return SVal::real(std::numeric_limits<double>::quiet_NaN());
        try {
          return SVal::real(std::stod(x.s));
        } catch (...) {
          fail(p.loc("x"), "could not convert string to float: '" + x.s + "'");
        }
      }
      if (x.isNumber())
        return SVal::real(x.kind == SVal::Kind::Float ? x.f : double(x.i));
    } else if (x.isNumber()) {
      if (name == "bool")
        return SVal::boolean(truthy(x, p.loc("x")));
      if (x.kind == SVal::Kind::Float) {
        // Python: int(inf) raises OverflowError, int(nan) ValueError; TLE's integers are int64.
        if (std::isnan(x.f))
          fail(p.loc("x"), "cannot convert float NaN to integer");
        if (std::isinf(x.f))
          fail(p.loc("x"), "cannot convert float infinity to integer");
        if (std::trunc(x.f) >= 0x1p63 || std::trunc(x.f) < -0x1p63)
          fail(p.loc("x"), "int() of " + x.describe() + " is outside the int64 range");
        return SVal::integer(static_cast<int64_t>(x.f));
      }
      return SVal::integer(x.i);
    }
    fail(p.loc("x"), name + "() of " + x.describe() + " is not supported in a kernel (only compile-time numbers)");
  }
  if (name == "min" || name == "max") {
    if (args.pos.empty())
      fail(loc, name + "() expects at least one argument");
    bool runtime = false;
    for (auto &a : args.pos) {
      if (!a.val.isNumber() && !a.val.isTensor())
        fail(a.loc, name + "() of " + a.val.describe() + " is not supported in a kernel");
      runtime |= a.val.isTensor();
    }
    if (runtime) {
      // On runtime values Python's min/max mean tl.minimum/tl.maximum, folded left to right.
      SVal best = args.pos[0].val;
      for (size_t i = 1; i < args.pos.size(); ++i) {
        CallArgs pair;
        pair.loc = loc;
        pair.pos = {{args.pos[0].loc, best}, args.pos[i]};
        best = callBuiltin(name == "min" ? "tl.minimum" : "tl.maximum", pair);
      }
      return best;
    }
    SVal best = args.pos[0].val;
    for (auto &a : args.pos) {
      double x = a.val.kind == SVal::Kind::Float ? a.val.f : double(a.val.i);
      double y = best.kind == SVal::Kind::Float ? best.f : double(best.i);
      if (name == "min" ? x < y : x > y)
        best = a.val;
    }
    return best;
  }
  if (name == "len") {
    Binder p(*this, name, args, {"x"}, 1);
    const SVal &x = p.get("x").val;
    if (x.kind == SVal::Kind::Tuple)
      return SVal::integer(int64_t(x.elts.size()));
    if (x.isTensor() && x.v->type.isTile())
      return SVal::integer(x.v->type.shape[0]);
    fail(p.loc("x"), "len() of " + x.describe());
  }
  if (name == "abs") {
    Binder p(*this, name, args, {"x"}, 1);
    const SVal &x = p.get("x").val;
    if (x.kind == SVal::Kind::Float)
      return SVal::real(std::fabs(x.f));
    if (x.isNumber())
      return SVal::integer(x.i < 0 ? -x.i : x.i);
    return SVal::tensor(b->unary(ir::OpKind::Abs, loc, p.tensor("x")));
  }
  if (name == "range")
    fail(loc, "range() can only be used as the iterable of a 'for' loop");
  if (name == "print" || name == "tl.device_print") {
    devicePrint(name == "print" ? "print" : "device_print", args);
    return SVal::none();
  }
  if (name == "tl.device_assert") {
    Binder p(*this, "device_assert", args, {"cond", "msg", "mask"}, 1);
    std::string msg;
    if (p.has("msg")) {
      if (p.get("msg").val.kind != SVal::Kind::Str)
        fail(p.loc("msg"), "device_assert() msg must be a string, got " + p.get("msg").val.describe());
      msg = p.get("msg").val.s;
    }
    deviceAssert(p.get("cond"), msg, p.has("mask") ? &p.get("mask") : nullptr, loc);
    return SVal::none();
  }
  if (name == "tl.static_print") {
    // Compile-time print (Triton prints while compiling): the constexpr values, on stderr.
    std::function<std::string(const SVal &)> text = [&](const SVal &v) -> std::string {
      switch (v.kind) {
      case SVal::Kind::Str: return v.s;
      case SVal::Kind::Int: return std::to_string(v.i);
      case SVal::Kind::Bool: return v.i ? "True" : "False";
      case SVal::Kind::None: return "None";
      case SVal::Kind::DType: return v.dtype.str();
      case SVal::Kind::Float: {
        char buf[64];
        for (int prec = 1; prec <= 17; ++prec) { // the shortest text that reads back exactly (Python's repr)
          std::snprintf(buf, sizeof buf, "%.*g", prec, v.f);
          if (std::strtod(buf, nullptr) == v.f)
            break;
        }
        std::string r = buf;
        if (r.find_first_of(".eni") == std::string::npos)
          r += ".0";
        return r;
      }
      case SVal::Kind::Tuple: {
        std::string r = "(";
        for (size_t i = 0; i < v.elts.size(); ++i)
          r += (i ? ", " : "") + text(v.elts[i]);
        return r + (v.elts.size() == 1 ? ",)" : ")");
      }
      default: return v.describe();
      }
    };
    std::string line;
    for (auto &a : args.pos)
      line += (line.empty() ? "" : " ") + text(a.val);
    std::fprintf(stderr, "%s\n", line.c_str());
    return SVal::none();
  }
  if (name == "isinstance") {
    // On compile-time knowledge: the classes int, float, bool, str, tuple/list, tl.constexpr (any
    // compile-time value), tl.tensor (a runtime value), tl.dtype, or a tuple of them.
    Binder p(*this, "isinstance", args, {"obj", "classinfo"}, 2);
    const SVal &x = p.get("obj").val;
    std::function<bool(const SVal &)> is = [&](const SVal &c) -> bool {
      if (c.kind == SVal::Kind::Tuple) {
        for (const SVal &e : c.elts)
          if (is(e))
            return true;
        return false;
      }
      std::string n = c.kind == SVal::Kind::Builtin ? c.s : "";
      if (n == "int") return x.kind == SVal::Kind::Int || x.kind == SVal::Kind::Bool; // bool is an int
      if (n == "float") return x.kind == SVal::Kind::Float;
      if (n == "bool") return x.kind == SVal::Kind::Bool;
      if (n == "str") return x.kind == SVal::Kind::Str;
      if (n == "tuple" || n == "list") return x.kind == SVal::Kind::Tuple;
      if (n == "tl.constexpr") return x.isConstexpr();
      if (n == "tl.tensor") return x.isTensor();
      if (n == "tl.dtype") return x.kind == SVal::Kind::DType;
      fail(p.loc("classinfo"), "isinstance() supports int, float, bool, str, tuple, list, tl.constexpr, tl.tensor "
                               "and tl.dtype, got " + c.describe());
    };
    return SVal::boolean(is(p.get("classinfo").val));
  }

  // --- triton.* helpers
  if (name == "triton.cdiv" || name == "tl.cdiv") {
    Binder p(*this, "cdiv", args, {"x", "div"}, 2);
    SVal x = p.get("x").val, d = p.get("div").val;
    if (x.isNumber() && d.isNumber()) {
      if (d.i == 0)
        fail(p.loc("div"), "cdiv() division by zero");
      return SVal::integer(floorDiv(x.i + d.i - 1, d.i));
    }
    SVal sum = binary(ast::BinaryOp::Add, x, d, loc, p.loc("x"), p.loc("div"));
    SVal m1 = binary(ast::BinaryOp::Sub, sum, SVal::integer(1), loc, loc, loc);
    return binary(ast::BinaryOp::FloorDiv, m1, d, loc, loc, p.loc("div"));
  }
  if (name == "triton.next_power_of_2") {
    Binder p(*this, "next_power_of_2", args, {"n"}, 1);
    int64_t n = p.constInt("n", 0);
    int64_t r = 1;
    while (r < n)
      r <<= 1;
    return SVal::integer(r);
  }
  if (name == "tl.constexpr") {
    Binder p(*this, "constexpr", args, {"value"}, 1);
    const SVal &v = p.get("value").val;
    if (!v.isConstexpr())
      fail(p.loc("value"), "tl.constexpr() of a runtime value");
    return v;
  }
  if (name == "tl.pointer_type") {
    Binder p(*this, "pointer_type", args, {"element_ty", "address_space", "const"}, 1);
    ir::ScalarType t = p.dtype("element_ty");
    if (t.isPointer())
      fail(p.loc("element_ty"), "pointers to pointers are not supported");
    return SVal::dtypeOf(ir::ScalarType::ptrTo(t.dtype));
  }
  if (name == "tl.static_assert") {
    Binder p(*this, "static_assert", args, {"cond", "msg"}, 1);
    if (!truthy(p.get("cond").val, p.loc("cond")))
      fail(loc, "static assertion failed" + (p.has("msg") ? ": " + p.get("msg").val.s : std::string()));
    return SVal::none();
  }
  if (name == "tl.multiple_of" || name == "tl.max_contiguous" || name == "tl.max_constancy") {
    Binder p(*this, name.substr(3), args, {"input", "values"}, 2);
    return p.get("input").val; // hints are not used by this version's axis analysis
  }

  // --- Program geometry
  if (name == "tl.program_id" || name == "tl.num_programs") {
    Binder p(*this, name.substr(3), args, {"axis"}, 0);
    int64_t axis = p.constInt("axis", 0);
    if (axis < 0 || axis > 2)
      fail(p.loc("axis"), name.substr(3) + "() axis must be 0, 1 or 2, got " + std::to_string(axis));
    ir::Op *op = b->create(name == "tl.program_id" ? ir::OpKind::ProgramId : ir::OpKind::NumPrograms, loc, {},
                           {ir::Type::scalar(DType::I32)});
    op->axis = static_cast<int>(axis);
    return SVal::tensor(op->result());
  }
  if (name == "tl.arange") {
    Binder p(*this, "arange", args, {"start", "end"}, 2);
    int64_t start = p.constInt("start", 0), end = p.constInt("end", 0);
    if (end <= start)
      fail(loc, "arange() needs end > start, got arange(" + std::to_string(start) + ", " + std::to_string(end) + ")");
    // end - start in unsigned arithmetic: it can exceed INT64_MAX.
    uint64_t len = uint64_t(end) - uint64_t(start);
    if (len & (len - 1))
      fail(loc, "arange() range length must be a power of two, got " + std::to_string(len) + " (end - start = " +
                    std::to_string(end) + " - " + std::to_string(start) + ")");
    if (len > uint64_t(ir::kMaxTileElements))
      fail(loc, "arange() of " + std::to_string(len) + " elements exceeds the tile limit of " +
                    std::to_string(ir::kMaxTileElements));
    int64_t n = int64_t(len);
    if (start < std::numeric_limits<int32_t>::min() || end > int64_t(std::numeric_limits<int32_t>::max()) + 1)
      fail(loc, "arange() bounds must fit in int32");
    ir::Op *op = b->create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {n})});
    op->ival = start;
    op->ival2 = end;
    return SVal::tensor(op->result());
  }
  if (name == "tl.zeros" || name == "tl.full") {
    bool full = name == "tl.full";
    Binder p(*this, name.substr(3), args, full ? std::vector<std::string>{"shape", "value", "dtype"}
                                               : std::vector<std::string>{"shape", "dtype"},
             full ? 3 : 2);
    auto shape = shapeArg(*this, p.get("shape"), name.substr(3));
    ir::ScalarType t = p.dtype("dtype");
    if (t.isPointer())
      fail(p.loc("dtype"), name.substr(3) + "() of a pointer dtype is not supported");
    SVal v = full ? p.get("value").val : SVal::integer(0);
    if (full && v.isTensor()) {
      if (!v.v->type.isScalar())
        fail(p.loc("value"), "full() value must be a scalar, got " + v.describe());
      return SVal::tensor(b->splat(loc, castTo(v.v, t, loc), shape));
    }
    if (full && !v.isNumber())
      fail(p.loc("value"), "full() value must be a number or a scalar, got " + v.describe());
    ir::Value *s = toTensorOfType(v, t.dtype, loc);
    return SVal::tensor(b->splat(loc, s, shape));
  }
  if (name == "tl.zeros_like") {
    Binder p(*this, "zeros_like", args, {"input"}, 1);
    ir::Value *in = p.tensor("input");
    ir::Value *z = toTensorOfType(SVal::integer(0), in->type.dtype(), loc);
    return SVal::tensor(in->type.isTile() ? b->splat(loc, z, in->type.shape) : z);
  }

  // --- Block pointers (desugared here, as Triton 3.6 does in Python: int64 coordinates)
  if (name == "tl.make_block_ptr") {
    Binder p(*this, "make_block_ptr", args, {"base", "shape", "strides", "offsets", "block_shape", "order"}, 6);
    const Arg &base = p.get("base");
    if (!base.val.isTensor() || !base.val.v->type.isScalar() || !base.val.v->type.elem.isPointer())
      fail(base.loc, "make_block_ptr() base must be a scalar pointer, got " + base.val.describe());
    auto list = [&](const char *k) {
      const Arg &a = p.get(k);
      if (a.val.kind != SVal::Kind::Tuple)
        fail(a.loc, std::string("make_block_ptr() ") + k + " must be a tuple or list");
      return a.val.elts;
    };
    std::vector<int64_t> block = shapeArg(*this, p.get("block_shape"), "make_block_ptr");
    size_t rank = block.size();
    SVal bp;
    bp.kind = SVal::Kind::BlockPtr;
    bp.ints = block;
    bp.elts.push_back(base.val);
    for (const char *k : {"shape", "strides", "offsets"}) {
      std::vector<SVal> es = list(k);
      if (es.size() != rank)
        fail(p.loc(k), std::string("make_block_ptr() ") + k + " has " + std::to_string(es.size()) +
                           " entries but block_shape has " + std::to_string(rank));
      std::vector<SVal> vals;
      for (auto &e : es) {
        if (!(e.isNumber() || (e.isTensor() && e.v->type.isScalar() && ir::isInteger(e.v->type.dtype()))))
          fail(p.loc(k), std::string("make_block_ptr() ") + k + " entries must be integer scalars, got " + e.describe());
        vals.push_back(SVal::tensor(toTensorOfType(e, DType::I64, p.loc(k))));
      }
      bp.elts.push_back(SVal::tuple(vals));
    }
    std::vector<SVal> order = list("order");
    std::vector<bool> seen(rank, false);
    for (auto &o : order)
      if (o.kind != SVal::Kind::Int || o.i < 0 || o.i >= int64_t(rank) || seen[o.i] || !(seen[o.i] = true))
        fail(p.loc("order"), "make_block_ptr() order must be a permutation of the dims");
    return bp;
  }
  if (name == "tl.advance") {
    Binder p(*this, "advance", args, {"base", "offsets"}, 2);
    SVal bp = p.get("base").val;
    if (bp.kind != SVal::Kind::BlockPtr)
      fail(p.loc("base"), "advance() expects a block pointer, got " + bp.describe());
    const Arg &o = p.get("offsets");
    if (o.val.kind != SVal::Kind::Tuple || o.val.elts.size() != bp.ints.size())
      fail(o.loc, "advance() offsets must be a tuple of " + std::to_string(bp.ints.size()) + " integers");
    for (size_t d = 0; d < bp.ints.size(); ++d) {
      ir::Value *delta = toTensorOfType(o.val.elts[d], DType::I64, o.loc);
      bp.elts[3].elts[d] = SVal::tensor(b->binary(ir::OpKind::Add, loc, bp.elts[3].elts[d].v, delta));
    }
    return bp;
  }

  // --- Tensor descriptors (desugared like block pointers: every dim bounds-checked, out-of-range
  // elements read as the padding and are not written)
  if (name == "tl.make_tensor_descriptor") {
    Binder p(*this, "make_tensor_descriptor", args, {"base", "shape", "strides", "block_shape", "padding_option"}, 4);
    const Arg &base = p.get("base");
    if (!base.val.isTensor() || !base.val.v->type.isScalar() || !base.val.v->type.elem.isPointer())
      fail(base.loc, "make_tensor_descriptor() base must be a scalar pointer, got " + base.val.describe());
    if (base.val.v->type.elem.space != ir::AddrSpace::Global)
      fail(base.loc, "make_tensor_descriptor() base must point to global memory (tensor descriptors and TMA "
                     "read and write global memory), got " + base.val.v->type.str());
    std::vector<int64_t> block = shapeArg(*this, p.get("block_shape"), "make_tensor_descriptor");
    size_t rank = block.size();
    if (rank < 1 || rank > 5)
      fail(p.loc("block_shape"), "make_tensor_descriptor() needs 1 to 5 dimensions, got " + std::to_string(rank));
    DType et = base.val.v->type.elem.pointee;
    int64_t lastBytes = block.back() * int64_t(ir::storageBytes(et));
    if (lastBytes < 16)
      fail(p.loc("block_shape"), "a tensor descriptor's block needs at least 16 bytes in the last dimension, got " +
                                     std::to_string(block.back()) + " * " + std::to_string(ir::storageBytes(et)) +
                                     " = " + std::to_string(lastBytes) + " bytes");
    SVal td;
    td.kind = SVal::Kind::TensorDesc;
    td.ints = block;
    td.elts.push_back(base.val);
    for (const char *k : {"shape", "strides"}) {
      const Arg &a = p.get(k);
      if (a.val.kind != SVal::Kind::Tuple)
        fail(a.loc, std::string("make_tensor_descriptor() ") + k + " must be a tuple or list");
      if (a.val.elts.size() != rank)
        fail(a.loc, std::string("make_tensor_descriptor() ") + k + " has " + std::to_string(a.val.elts.size()) +
                        " entries but block_shape has " + std::to_string(rank));
      std::vector<SVal> vals;
      for (auto &e : a.val.elts) {
        if (!(e.isNumber() || (e.isTensor() && e.v->type.isScalar() && ir::isInteger(e.v->type.dtype()))))
          fail(a.loc, std::string("make_tensor_descriptor() ") + k + " entries must be integer scalars, got " +
                          e.describe());
        vals.push_back(SVal::tensor(toTensorOfType(e, DType::I64, a.loc)));
      }
      td.elts.push_back(SVal::tuple(vals));
    }
    const SVal &last = p.get("strides").val.elts.back();
    if (!(last.kind == SVal::Kind::Int && last.i == 1))
      fail(p.loc("strides"), "a tensor descriptor's last stride must be the compile-time constant 1, got " +
                                 last.describe());
    td.s = "zero";
    if (p.has("padding_option")) {
      const SVal &pad = p.get("padding_option").val;
      if (pad.kind != SVal::Kind::Str || (pad.s != "zero" && pad.s != "nan"))
        fail(p.loc("padding_option"), "padding_option must be \"zero\" or \"nan\", got " + pad.describe());
      if (pad.s == "nan" && !ir::isFloat(et))
        fail(p.loc("padding_option"), "padding_option=\"nan\" needs a floating-point element type, got " +
                                          std::string(ir::name(et)));
      td.s = pad.s;
    }
    return td;
  }
  bool descLoad = name == "tl.load_tensor_descriptor" ||
                  (name == "tl.load" && !args.pos.empty() && args.pos[0].val.kind == SVal::Kind::TensorDesc);
  bool descStore = name == "tl.store_tensor_descriptor" ||
                   (name == "tl.store" && !args.pos.empty() && args.pos[0].val.kind == SVal::Kind::TensorDesc);
  if (descLoad || descStore) {
    std::string fname = name == "tl.load" ? "load" : name == "tl.store" ? "store" : name.substr(3);
    Binder p(*this, fname, args,
             descLoad ? std::vector<std::string>{"desc", "offsets", "cache_modifier", "eviction_policy"}
                      : std::vector<std::string>{"desc", "offsets", "value", "store_reduce"},
             descLoad ? 2 : 3);
    const SVal &td = p.get("desc").val;
    if (td.kind != SVal::Kind::TensorDesc)
      fail(p.loc("desc"), fname + "() expects a tensor descriptor (tl.make_tensor_descriptor), got " + td.describe());
    const Arg &o = p.get("offsets");
    if (o.val.kind != SVal::Kind::Tuple || o.val.elts.size() != td.ints.size())
      fail(o.loc, fname + "() offsets must be a list of " + std::to_string(td.ints.size()) +
                      " integers (one per dimension), got " + o.val.describe());
    // As a block pointer at the offsets, bounds-checked along every dim.
    SVal bp = td;
    bp.kind = SVal::Kind::BlockPtr;
    std::vector<SVal> offs;
    for (auto &e : o.val.elts) {
      if (!(e.isNumber() || (e.isTensor() && e.v->type.isScalar() && ir::isInteger(e.v->type.dtype()))))
        fail(o.loc, fname + "() offsets must be integer scalars, got " + e.describe());
      offs.push_back(SVal::tensor(toTensorOfType(e, DType::I64, o.loc)));
    }
    bp.elts.push_back(SVal::tuple(offs));
    std::vector<int64_t> all;
    for (size_t d = 0; d < td.ints.size(); ++d)
      all.push_back(int64_t(d));
    ir::Value *ptrs, *mask;
    materializeBlockPtr(bp, all, loc, ptrs, mask);
    DType et = ptrs->type.elem.pointee;
    if (descLoad) {
      ir::Value *pad = td.s == "nan" ? b->constFloat(loc, et, std::numeric_limits<double>::quiet_NaN())
                                     : ir::isFloat(et) ? b->constFloat(loc, et, 0.0) : b->constInt(loc, et, 0);
      std::vector<ir::Value *> ops = {ptrs, mask, b->splat(loc, pad, ptrs->type.shape)};
      // The descriptor itself rides along (ir::OpKind::Load), for backends that copy with TMA.
      ops.push_back(td.elts[0].v);
      for (size_t k = 1; k <= 2; ++k)
        for (auto &e : td.elts[k].elts)
          ops.push_back(e.v);
      for (auto &e : offs)
        ops.push_back(e.v);
      ir::Op *ld = b->create(ir::OpKind::Load, loc, ops, {ptrs->type.withElem(ir::ScalarType{et})});
      ld->ints = td.ints;
      applyMemoryHints(*this, p, ld, true);
      return SVal::tensor(ld->result());
    }
    if (p.has("store_reduce") && !(p.get("store_reduce").val.kind == SVal::Kind::Str && p.get("store_reduce").val.s.empty()))
      fail(p.loc("store_reduce"), fname + "() store_reduce is not supported yet");
    const Arg &va = p.get("value");
    if (!va.val.isTensor() || va.val.v->type.shape != ptrs->type.shape)
      fail(va.loc, fname + "() value must be a tile of the descriptor's block shape " + ptrs->type.withElem(ir::ScalarType{et}).str() +
                       ", got " + va.val.describe());
    if (va.val.v->type.dtype() != et)
      fail(va.loc, fname + "() value has dtype " + std::string(ir::name(va.val.v->type.dtype())) +
                       " but the descriptor's is " + ir::name(et) + "; convert it with .to(" + ir::name(et) + ")");
    // The descriptor rides along here too (ir::OpKind::Store), for backends that write with TMA.
    std::vector<ir::Value *> ops = {ptrs, va.val.v, mask, td.elts[0].v};
    for (size_t k = 1; k <= 2; ++k)
      for (auto &e : td.elts[k].elts)
        ops.push_back(e.v);
    for (auto &e : offs)
      ops.push_back(e.v);
    ir::Op *st = b->create(ir::OpKind::Store, loc, ops, {});
    st->ints = td.ints;
    return SVal::none();
  }

  // --- Memory
  if (name == "tl.load" && !args.pos.empty() && args.pos[0].val.kind == SVal::Kind::BlockPtr) {
    Binder p(*this, "load", args, {"pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
                                   "eviction_policy", "volatile"}, 1);
    if (p.has("mask") || p.has("other"))
      fail(p.loc("mask"), "load() through a block pointer takes boundary_check and padding_option, not mask/other");
    std::vector<int64_t> check = boundaryCheckDims(*this, p.has("boundary_check") ? &p.get("boundary_check") : nullptr);
    ir::Value *ptrs, *mask;
    materializeBlockPtr(p.get("pointer").val, check, p.loc("boundary_check"), ptrs, mask);
    DType et = ptrs->type.elem.pointee;
    std::vector<ir::Value *> ops = {ptrs};
    if (mask) {
      ops.push_back(mask);
      std::string pad = p.has("padding_option") && p.get("padding_option").val.kind == SVal::Kind::Str
                            ? p.get("padding_option").val.s : "";
      if (pad == "nan") {
        if (!ir::isFloat(et))
          fail(p.loc("padding_option"), "padding_option=\"nan\" needs a floating-point pointee, got " + std::string(ir::name(et)));
        ops.push_back(b->splat(loc, b->constFloat(loc, et, std::numeric_limits<double>::quiet_NaN()), ptrs->type.shape));
      } else if (!pad.empty() && pad != "zero") {
        fail(p.loc("padding_option"), "padding_option must be \"\", \"zero\" or \"nan\"");
      }
    }
    ir::Op *ld = b->create(ir::OpKind::Load, loc, ops, {ptrs->type.withElem(ir::ScalarType{et})});
    applyMemoryHints(*this, p, ld, true);
    return SVal::tensor(ld->result());
  }
  if (name == "tl.store" && !args.pos.empty() && args.pos[0].val.kind == SVal::Kind::BlockPtr) {
    Binder p(*this, "store", args, {"pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"}, 2);
    if (p.has("mask"))
      fail(p.loc("mask"), "store() through a block pointer takes boundary_check, not mask");
    std::vector<int64_t> check = boundaryCheckDims(*this, p.has("boundary_check") ? &p.get("boundary_check") : nullptr);
    ir::Value *ptrs, *mask;
    materializeBlockPtr(p.get("pointer").val, check, p.loc("boundary_check"), ptrs, mask);
    const Arg &va = p.get("value");
    ir::Value *val = castTo(toTensor(va.val, va.loc), ir::ScalarType{ptrs->type.elem.pointee}, va.loc);
    val = broadcastTo(val, ptrs->type.shape, va.loc);
    std::vector<ir::Value *> ops = {ptrs, val};
    if (mask)
      ops.push_back(mask);
    applyMemoryHints(*this, p, b->create(ir::OpKind::Store, loc, ops, {}), false);
    return SVal::none();
  }
  if (name == "tl.load") {
    Binder p(*this, "load", args,
             {"pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier", "eviction_policy",
              "volatile"},
             1);
    const Arg &pa = p.get("pointer");
    if (!pa.val.isTensor() || !pa.val.v->type.elem.isPointer())
      fail(pa.loc, "load() pointer must be a pointer or a tile of pointers, got " + pa.val.describe());
    if (p.has("boundary_check"))
      fail(p.loc("boundary_check"), "load() boundary_check needs a block pointer (tl.make_block_ptr), not supported yet");
    ir::Value *ptr = pa.val.v;
    std::vector<ir::Value *> ops = {ptr};
    if (p.has("mask")) {
      ir::Value *mask = p.tensor("mask");
      if (mask->type.dtype() != DType::I1)
        fail(p.loc("mask"), "load() mask must be a boolean (i1) tensor, got " + mask->type.str());
      broadcastPair(ptr, mask, p.loc("mask"));
      ops = {ptr, mask};
      if (p.has("other")) {
        const Arg &o = p.get("other");
        ir::Value *other = toTensorOfType(o.val, ptr->type.elem.pointee, o.loc);
        other = broadcastTo(other, ptr->type.shape, o.loc);
        ops.push_back(other);
      }
    } else if (p.has("other")) {
      fail(p.loc("other"), "load() 'other' needs a 'mask'");
    }
    ir::Op *op = b->create(ir::OpKind::Load, loc, ops, {ptr->type.withElem(ir::ScalarType{ptr->type.elem.pointee})});
    applyMemoryHints(*this, p, op, true);
    return SVal::tensor(op->result());
  }
  if (name == "tl.store") {
    Binder p(*this, "store", args, {"pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"}, 2);
    const Arg &pa = p.get("pointer");
    if (!pa.val.isTensor() || !pa.val.v->type.elem.isPointer())
      fail(pa.loc, "store() pointer must be a pointer or a tile of pointers, got " + pa.val.describe());
    ir::Value *ptr = pa.val.v;
    const Arg &va = p.get("value");
    if (!va.val.isTensor() && !va.val.isNumber())
      fail(va.loc, "store() value must be a tensor or a number, got " + va.val.describe());
    ir::Value *val = toTensor(va.val, va.loc);
    ir::ScalarType elem{ptr->type.elem.pointee};
    if (val->type.elem.isPointer())
      fail(va.loc, "cannot store a value of type " + val->type.str() + " through a pointer to " + elem.str());
    if (val->type.isTile() && ptr->type.isScalar())
      fail(va.loc, "cannot store a tile (" + val->type.str() + ") through a single pointer (" + ptr->type.str() + ")");
    if (val->type.isTile() && val->type.shape != ptr->type.shape) {
      // The value must broadcast to the pointer's shape.
      ir::Value *pp = ptr, *vv = val;
      broadcastPair(pp, vv, va.loc);
      if (pp->type.shape != ptr->type.shape)
        fail(va.loc, "store() value of shape " + val->type.str() + " does not fit the pointer tile " + ptr->type.str());
      val = vv;
    }
    val = castTo(val, elem, va.loc);
    val = broadcastTo(val, ptr->type.shape, va.loc);
    std::vector<ir::Value *> ops = {ptr, val};
    if (p.has("mask")) {
      ir::Value *mask = p.tensor("mask");
      if (mask->type.dtype() != DType::I1)
        fail(p.loc("mask"), "store() mask must be a boolean (i1) tensor, got " + mask->type.str());
      if (mask->type.shape != ptr->type.shape) {
        if (mask->type.isTile() && ptr->type.isScalar())
          fail(p.loc("mask"), "store() mask is a tile but the pointer is a scalar");
        mask = broadcastTo(mask, ptr->type.shape, p.loc("mask"));
      }
      ops.push_back(mask);
    }
    applyMemoryHints(*this, p, b->create(ir::OpKind::Store, loc, ops, {}), false);
    return SVal::none();
  }

  // --- Atomics
  static const std::map<std::string, ir::AtomicKind> atomics = {
      {"tl.atomic_add", ir::AtomicKind::Add}, {"tl.atomic_max", ir::AtomicKind::Max},
      {"tl.atomic_min", ir::AtomicKind::Min}, {"tl.atomic_and", ir::AtomicKind::And},
      {"tl.atomic_or", ir::AtomicKind::Or},   {"tl.atomic_xor", ir::AtomicKind::Xor},
      {"tl.atomic_xchg", ir::AtomicKind::Xchg}};
  if (atomics.count(name) || name == "tl.atomic_cas") {
    bool cas = name == "tl.atomic_cas";
    std::string fname = name.substr(3);
    Binder p(*this, fname, args,
             cas ? std::vector<std::string>{"pointer", "cmp", "val", "sem", "scope"}
                 : std::vector<std::string>{"pointer", "val", "mask", "sem", "scope"},
             cas ? 3 : 2);
    const Arg &pa = p.get("pointer");
    if (!pa.val.isTensor() || !pa.val.v->type.elem.isPointer())
      fail(pa.loc, fname + "() pointer must be a pointer or a tile of pointers, got " + pa.val.describe());
    ir::Value *ptr = pa.val.v;
    DType et = ptr->type.elem.pointee;
    ir::AtomicKind kind = cas ? ir::AtomicKind::Xchg : atomics.at(name);
    if (ir::isFP8(et))
      fail(pa.loc, fname + "() on " + ir::name(et) + " is not supported (no fp8 atomics; use fp16, bf16 or fp32)");
    bool half = et == DType::F16 || et == DType::BF16;
    if (half && (cas || kind != ir::AtomicKind::Add))
      fail(pa.loc, fname + "() on " + ir::name(et) + " is not supported (fp16/bf16 atomics: add only)");
    if (ir::bitWidth(et) < 16 || (!cas && ir::bitWidth(et) == 16 && !half))
      fail(pa.loc, fname + "() on " + ir::name(et) + " is not supported (8- and 16-bit integer atomics)");
    if (ir::isFloat(et) && !cas && kind != ir::AtomicKind::Add && kind != ir::AtomicKind::Max &&
        kind != ir::AtomicKind::Min && kind != ir::AtomicKind::Xchg)
      fail(pa.loc, fname + "() needs an integer pointee, got " + ir::name(et));
    auto sem = ir::MemSem::AcqRel;
    if (p.has("sem")) {
      const Arg &a = p.get("sem");
      static const std::map<std::string, ir::MemSem> sems = {{"relaxed", ir::MemSem::Relaxed},
                                                             {"acquire", ir::MemSem::Acquire},
                                                             {"release", ir::MemSem::Release},
                                                             {"acq_rel", ir::MemSem::AcqRel}};
      if (a.val.kind != SVal::Kind::Str || !sems.count(a.val.s))
        fail(a.loc, fname + "() sem must be \"relaxed\", \"acquire\", \"release\" or \"acq_rel\"");
      sem = sems.at(a.val.s);
    }
    auto scope = ir::MemScope::Gpu;
    if (p.has("scope")) {
      const Arg &a = p.get("scope");
      static const std::map<std::string, ir::MemScope> scopes = {
          {"gpu", ir::MemScope::Gpu}, {"cta", ir::MemScope::Cta}, {"sys", ir::MemScope::Sys}};
      if (a.val.kind != SVal::Kind::Str || !scopes.count(a.val.s))
        fail(a.loc, fname + "() scope must be \"gpu\", \"cta\" or \"sys\"");
      scope = scopes.at(a.val.s);
    }
    auto operand = [&](const char *k) {
      const Arg &a = p.get(k);
      if (!a.val.isTensor() && !a.val.isNumber())
        fail(a.loc, fname + "() " + k + " must be a tensor or a number, got " + a.val.describe());
      ir::Value *v = toTensorOfType(a.val, et, a.loc);
      if (v->type.isTile() && ptr->type.isScalar())
        fail(a.loc, fname + "() " + k + " is a tile but the pointer is a scalar");
      return broadcastTo(v, ptr->type.shape, a.loc);
    };
    std::vector<ir::Value *> ops = {ptr};
    if (cas) {
      ops.push_back(operand("cmp"));
      ops.push_back(operand("val"));
    } else {
      ops.push_back(operand("val"));
      if (p.has("mask")) {
        ir::Value *mask = p.tensor("mask");
        if (mask->type.dtype() != DType::I1)
          fail(p.loc("mask"), fname + "() mask must be a boolean (i1) tensor, got " + mask->type.str());
        ops.push_back(broadcastTo(mask, ptr->type.shape, p.loc("mask")));
      }
    }
    ir::Op *op = b->create(cas ? ir::OpKind::AtomicCAS : ir::OpKind::AtomicRMW, loc, ops,
                           {ptr->type.withElem(ir::ScalarType{et})});
    op->ival = static_cast<int64_t>(kind);
    op->ival2 = static_cast<int64_t>(sem);
    op->axis = static_cast<int>(scope);
    return SVal::tensor(op->result());
  }

  // --- Elementwise
  if (name == "tl.where") {
    Binder p(*this, "where", args, {"condition", "x", "y"}, 3);
    ir::Value *c = p.tensor("condition");
    if (c->type.dtype() != DType::I1) {
      ir::Value *zero = toTensorOfType(SVal::integer(0), c->type.dtype(), loc);
      ir::Value *cc = c;
      broadcastPair(cc, zero, loc);
      c = b->cmp(loc, ir::CmpPred::Ne, cc, zero);
    }
    // x and y are promoted like a binary operation (computation_type_impl), via a dummy add
    // type computation: reuse binary() rules by computing the type of x + y.
    const Arg &xa = p.get("x"), &ya = p.get("y");
    DType tx = xa.val.isTensor() ? xa.val.v->type.dtype() : literalType(xa.val, xa.loc);
    DType ty = ya.val.isTensor() ? ya.val.v->type.dtype() : literalType(ya.val, ya.loc);
    DType t;
    if (xa.val.isTensor() && xa.val.v->type.elem.isPointer()) {
      t = DType::Ptr;
    } else if (xa.val.isTensor() != ya.val.isTensor()) {
      DType tensorT = xa.val.isTensor() ? tx : ty, scalarT = xa.val.isTensor() ? ty : tx;
      auto rank = [](DType d) { return d == DType::I1 ? 0 : ir::isInteger(d) ? 1 : 2; }; // bool < integer < float
      t = rank(scalarT) <= rank(tensorT) ? tensorT : scalarT;
    } else if (ir::isFloat(tx) || ir::isFloat(ty)) {
      // fp64 > fp32 > fp16 (with bf16 or an integer too) > bf16 (with an integer: fp32).
      t = (tx == DType::F64 || ty == DType::F64)   ? DType::F64
          : (tx == DType::F32 || ty == DType::F32) ? DType::F32
          : (tx == DType::F16 || ty == DType::F16) ? DType::F16
          : tx == ty                               ? tx
          : (ir::isFP8(tx) && ir::isFP8(ty))       ? DType::F16 // two fp8 types
                                                   : DType::F32;
    } else {
      t = integerPromote(tx, ty);
    }
    ir::Value *x = t == DType::Ptr ? xa.val.v : toTensorOfType(xa.val, t, xa.loc);
    ir::Value *y = t == DType::Ptr ? ya.val.v : toTensorOfType(ya.val, t, ya.loc);
    if (t == DType::Ptr && (!ya.val.isTensor() || ya.val.v->type.elem != x->type.elem))
      fail(ya.loc, "where() operands must both be pointers of the same type");
    broadcastPair(x, y, loc);
    broadcastPair(c, x, loc);
    broadcastPair(c, y, loc);
    return SVal::tensor(b->select(loc, c, x, y));
  }
  // libdevice-backed math (`tl.sin`, `tl.math.tanh`, `libdevice.X` from triton.language.extra):
  // fp32 calls __nv_Xf, fp64 __nv_X. Functions Triton restricts to fp32/fp64 reject other types.
  const std::map<std::string, int> &libdeviceArity = libdeviceArities();
  auto libdeviceCall = [&](const std::string &fn, CallArgs &a) -> SVal {
    int arity = libdeviceArity.at(fn);
    if (int(a.pos.size()) != arity || !a.kw.empty())
      fail(loc, fn + "() takes " + std::to_string(arity) + " positional argument" + (arity > 1 ? "s" : ""));
    std::vector<ir::Value *> xs;
    for (auto &x : a.pos)
      xs.push_back(x.val.isNumber() ? toTensorOfType(x.val, DType::F32, x.loc) : toTensor(x.val, x.loc));
    DType t = xs[0]->type.dtype();
    for (auto *&x : xs) {
      if (x->type.dtype() != t)
        x = castTo(x, ir::ScalarType{t}, loc);
    }
    for (size_t i = 1; i < xs.size(); ++i)
      broadcastPair(xs[0], xs[i], loc);
    for (size_t i = 1; i < xs.size(); ++i)
      broadcastPair(xs[0], xs[i], loc);
    if (t != DType::F32 && t != DType::F64)
      fail(a.pos[0].loc, fn + "() expects fp32 or fp64, got " + ir::name(t) + " (cast with .to(tl.float32) first)");
    bool predicate = fn == "isnan" || fn == "isinf" || fn == "signbit";
    std::string sym = "__nv_" + fn + (t == DType::F32 ? "f" : "");
    if (predicate) // __nv_isnanf etc. return int
      sym = "__nv_" + fn + (t == DType::F32 ? "f" : "d");
    ir::Type rt = predicate ? xs[0]->type.withElem(ir::ScalarType{DType::I32}) : xs[0]->type;
    ir::Op *op = b->create(ir::OpKind::ExternCall, loc, xs, {rt});
    op->sym = sym;
    ir::Value *r = op->result();
    if (predicate) {
      ir::Value *zero = toTensorOfType(SVal::integer(0), DType::I32, loc);
      ir::Value *rr = r;
      broadcastPair(rr, zero, loc);
      r = b->cmp(loc, ir::CmpPred::Ne, rr, zero);
    }
    return SVal::tensor(r);
  };
  if (name.rfind("libdevice.", 0) == 0) {
    std::string fn = name.substr(10);
    if (!libdeviceArity.count(fn))
      fail(loc, "libdevice." + fn + " is not available in TLE yet");
    return libdeviceCall(fn, args);
  }
  if (name.rfind("tl.", 0) == 0 && libdeviceArity.count(name.substr(3)) &&
      (name == "tl.sin" || name == "tl.cos" || name == "tl.floor" || name == "tl.ceil" || name == "tl.erf" ||
       name == "tl.tanh" || name == "tl.log1p" || name == "tl.pow" || name == "tl.trunc" || name == "tl.atan2"))
    return libdeviceCall(name.substr(3), args);
  if (name == "tl.fma") {
    Binder p(*this, "fma", args, {"x", "y", "z"}, 3);
    ir::Value *x = p.tensor("x"), *y = p.tensor("y"), *z = p.tensor("z");
    DType t = x->type.dtype();
    if (!ir::isFloat(t))
      fail(p.loc("x"), "fma() expects floating-point operands, got " + x->type.str());
    y = castTo(y, ir::ScalarType{t}, loc);
    z = castTo(z, ir::ScalarType{t}, loc);
    broadcastPair(x, y, loc);
    broadcastPair(x, z, loc);
    broadcastPair(y, z, loc);
    if (ir::isFP8(t)) { // computed in fp32, rounded once to fp8
      ir::ScalarType f32{DType::F32};
      ir::Value *r = b->create(ir::OpKind::Fma, loc, {castTo(x, f32, loc), castTo(y, f32, loc), castTo(z, f32, loc)},
                               {x->type.withElem(f32)})->result();
      return SVal::tensor(castTo(r, ir::ScalarType{t}, loc));
    }
    return SVal::tensor(b->create(ir::OpKind::Fma, loc, {x, y, z}, {x->type})->result());
  }
  if (name == "tl.sigmoid") {
    Binder p(*this, "sigmoid", args, {"x"}, 1);
    ir::Value *x = p.tensor("x");
    if (x->type.dtype() != DType::F32 && x->type.dtype() != DType::F64)
      fail(p.loc("x"), "sigmoid() expects fp32 or fp64, got " + x->type.str());
    SVal e;
    if (x->type.dtype() == DType::F64) { // fp64 exp is libdevice's (as tl.exp on fp64)
      CallArgs negX{loc, {{loc, unary(ast::UnaryOp::Neg, SVal::tensor(x), loc)}}, {}};
      e = libdeviceCall("exp", negX);
    } else {
      e = SVal::tensor(b->unary(ir::OpKind::Exp, loc, unary(ast::UnaryOp::Neg, SVal::tensor(x), loc).v));
    }
    SVal den = binary(ast::BinaryOp::Add, SVal::real(1.0), e, loc, loc, loc);
    return binary(ast::BinaryOp::Div, SVal::real(1.0), den, loc, loc, loc);
  }
  static const std::map<std::string, ir::OpKind> math = {
      {"tl.exp", ir::OpKind::Exp},   {"tl.exp2", ir::OpKind::Exp2}, {"tl.log", ir::OpKind::Log},
      {"tl.log2", ir::OpKind::Log2}, {"tl.sqrt", ir::OpKind::Sqrt}, {"tl.sqrt_rn", ir::OpKind::Sqrt},
      {"tl.rsqrt", ir::OpKind::Rsqrt}};
  if (auto it = math.find(name); it != math.end()) {
    Binder p(*this, name.substr(3), args, {"x"}, 1);
    const Arg &xa = p.get("x");
    ir::Value *x = xa.val.isNumber() ? toTensorOfType(xa.val, DType::F32, xa.loc) : p.tensor("x");
    DType t = x->type.dtype();
    if (t != DType::F32 && t != DType::F64)
      fail(xa.loc, name + "() expects fp32 or fp64, got " + ir::name(t) + " (cast with .to(tl.float32) first)");
    if (t == DType::F64 && it->second != ir::OpKind::Sqrt) {
      CallArgs one{loc, {{xa.loc, SVal::tensor(x)}}, {}};
      return libdeviceCall(name.substr(3), one);
    }
    return SVal::tensor(b->unary(it->second, loc, x));
  }
  if (name == "tl.abs") {
    Binder p(*this, "abs", args, {"x"}, 1);
    return SVal::tensor(b->unary(ir::OpKind::Abs, loc, p.tensor("x")));
  }
  if (name == "tl.fdiv" || name == "tl.div_rn") {
    Binder p(*this, name.substr(3), args, {"x", "y", "ieee_rounding"}, 2);
    SVal q = binary(ast::BinaryOp::Div, p.get("x").val, p.get("y").val, loc, p.loc("x"), p.loc("y"));
    // div_rn, and fdiv with ieee_rounding=True, round correctly (div.rn) instead of div.full.
    bool ieee = name == "tl.div_rn" || (p.has("ieee_rounding") && truthy(p.get("ieee_rounding").val, p.loc("ieee_rounding")));
    if (ieee && q.isTensor() && q.v->def && q.v->def->kind == ir::OpKind::FDiv)
      q.v->def->ival = 1;
    return q;
  }
  if (name == "tl.maximum" || name == "tl.minimum") {
    Binder p(*this, name.substr(3), args, {"x", "y", "propagate_nan"}, 2);
    // Promote like addition, then take max/min. Two Python numbers become tensors first (as in
    // Triton; folding them would leave no op to turn into max/min).
    SVal xv = p.get("x").val;
    if (!xv.isTensor() && !p.get("y").val.isTensor())
      xv = SVal::tensor(p.tensor("x"));
    SVal sum = binary(ast::BinaryOp::Add, xv, p.get("y").val, loc, p.loc("x"), p.loc("y"));
    ir::Op *add = sum.v->def;
    ir::Value *x = add->operands[0], *y = add->operands[1];
    add->kind = name == "tl.maximum" ? ir::OpKind::Max : ir::OpKind::Min;
    // propagate_nan=tl.PropagateNan.ALL: NaN where either operand is NaN (Triton's
    // maximumf/minimumf); NONE (the default) ignores NaNs.
    if (p.has("propagate_nan") && p.constInt("propagate_nan", 0) != 0)
      return SVal::tensor(propagateNan(add->result(), {x, y}, loc));
    return sum;
  }
  if (name == "tl.cast") {
    Binder p(*this, "cast", args, {"input", "dtype", "fp_downcast_rounding", "bitcast"}, 2);
    ir::Value *x = p.tensor("input");
    ir::ScalarType t = p.dtype("dtype");
    // Triton's bitcast of or to a pointer is a cast (tl.semantic.bitcast).
    if (p.has("bitcast") && p.get("bitcast").val.i && !t.isPointer() && !x->type.elem.isPointer()) {
      if (ir::bitWidth(t.dtype) != ir::bitWidth(x->type.dtype()))
        fail(p.loc("dtype"), "bitcast between types of different widths");
      return SVal::tensor(b->create(ir::OpKind::Bitcast, loc, {x}, {x->type.withElem(t)})->result());
    }
    return SVal::tensor(castWithRounding(x, t, p.has("fp_downcast_rounding") ? &p.get("fp_downcast_rounding") : nullptr, loc));
  }

  // --- Shapes
  if (name == "tl.expand_dims") {
    // Triton 3.6: expand_dims(input, axis) with an int or a sequence of ints; each axis is a
    // position in the result (negative ones count from its end), inserted in increasing order.
    Binder p(*this, "expand_dims", args, {"input", "axis"}, 2);
    ir::Value *x = p.tensor("input");
    const SVal &av = p.get("axis").val;
    if (av.kind != SVal::Kind::Tuple)
      return SVal::tensor(expandDims(x, static_cast<int>(p.constInt("axis", 0)), p.loc("axis")));
    const int64_t rank = static_cast<int64_t>(x->type.rank() + av.elts.size());
    std::vector<int64_t> axes;
    for (const SVal &e : av.elts) {
      if (e.kind != SVal::Kind::Int)
        fail(p.loc("axis"), "expand_dims() axes must be compile-time integers, got " + e.describe());
      if (e.i < -rank || e.i >= rank)
        fail(p.loc("axis"), "expand_dims() axis " + std::to_string(e.i) + " is out of range for a result of rank " +
                                std::to_string(rank) + " (" + x->type.str() + " with " + std::to_string(av.elts.size()) +
                                " new dims)");
      int64_t a = e.i < 0 ? e.i + rank : e.i;
      if (std::find(axes.begin(), axes.end(), a) != axes.end())
        fail(p.loc("axis"), "expand_dims() got axis " + std::to_string(a) + " twice");
      axes.push_back(a);
    }
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes)
      x = expandDims(x, static_cast<int>(a), p.loc("axis"));
    return SVal::tensor(x);
  }
  if (name == "tl.broadcast") {
    // Triton 3.6: broadcast(input, other) -> both broadcast to their common shape.
    Binder p(*this, "broadcast", args, {"input", "other"}, 2);
    ir::Value *x = p.tensor("input"), *y = p.tensor("other");
    broadcastPair(x, y, loc);
    return SVal::tuple({SVal::tensor(x), SVal::tensor(y)});
  }
  if (name == "tl.broadcast_to") {
    Binder p(*this, "broadcast_to", args, {"input", "shape"}, 2);
    return SVal::tensor(broadcastTo(p.tensor("input"), shapeArg(*this, p.get("shape"), "broadcast_to"), loc));
  }

  // --- Shape manipulation
  if (name == "tl.trans" || name == "tl.permute") {
    if (args.pos.empty())
      fail(loc, name.substr(3) + "() expects a tile");
    ir::Value *x = toTensor(args.pos[0].val, args.pos[0].loc);
    if (!x->type.isTile())
      fail(args.pos[0].loc, name.substr(3) + "() expects a tile, got " + x->type.str());
    int rank = static_cast<int>(x->type.rank());
    std::vector<int64_t> order;
    std::vector<Arg> dims(args.pos.begin() + 1, args.pos.end());
    for (auto &[k, v] : args.kw) {
      if (k != "dims")
        fail(v.loc, name.substr(3) + "() got an unexpected keyword argument '" + k + "'");
      dims.push_back(v);
    }
    if (dims.size() == 1 && dims[0].val.kind == SVal::Kind::Tuple) {
      for (auto &e : dims[0].val.elts)
        order.push_back(e.kind == SVal::Kind::Int ? e.i : -1);
    } else {
      for (auto &d : dims)
        order.push_back(d.val.kind == SVal::Kind::Int ? d.val.i : -1);
    }
    if (order.empty()) {
      if (name == "tl.permute")
        fail(loc, "permute() needs the new order of the dims");
      if (rank != 2)
        fail(loc, "trans() without dims needs a 2-D tile, got " + x->type.str());
      order = {1, 0};
    }
    std::vector<int64_t> shape;
    std::vector<bool> seen(rank, false);
    for (int64_t d : order) {
      if (d < 0 || d >= rank || seen[d])
        fail(loc, name.substr(3) + "() order must be a permutation of 0.." + std::to_string(rank - 1));
      seen[d] = true;
      shape.push_back(x->type.shape[d]);
    }
    if (order.size() != size_t(rank))
      fail(loc, name.substr(3) + "() order must name all " + std::to_string(rank) + " dims");
    ir::Op *op = b->create(ir::OpKind::Permute, loc, {x}, {ir::Type(x->type.elem, shape)});
    op->ints = order;
    return SVal::tensor(op->result());
  }
  if (name == "tl.reshape" || name == "tl.view") {
    if (args.pos.empty())
      fail(loc, name.substr(3) + "() expects a tile and a shape");
    ir::Value *x = toTensor(args.pos[0].val, args.pos[0].loc);
    std::vector<Arg> dims(args.pos.begin() + 1, args.pos.end());
    for (auto &[k, v] : args.kw) {
      if (k == "shape")
        dims.push_back(v);
      else if (k != "can_reorder")
        fail(v.loc, name.substr(3) + "() got an unexpected keyword argument '" + k + "'");
    }
    std::vector<int64_t> shape;
    if (dims.size() == 1 && dims[0].val.kind == SVal::Kind::Tuple)
      shape = shapeArg(*this, dims[0], name.substr(3));
    else
      for (auto &d : dims)
        shape.push_back(shapeArg(*this, d, name.substr(3))[0]);
    ir::Type t(x->type.elem, shape);
    if (t.numElements() != x->type.numElements())
      fail(loc, name.substr(3) + "() cannot change the number of elements: " + x->type.str() + " to " + t.str());
    if (shape == x->type.shape)
      return SVal::tensor(x);
    return SVal::tensor(b->create(ir::OpKind::Reshape, loc, {x}, {t})->result());
  }
  if (name == "tl.cat" || name == "tl.join") {
    Binder p(*this, name.substr(3), args, name == "tl.cat" ? std::vector<std::string>{"input", "other", "can_reorder"}
                                                           : std::vector<std::string>{"a", "b"},
             2);
    ir::Value *x = toTensor(args.pos.size() > 0 ? args.pos[0].val : p.get(name == "tl.cat" ? "input" : "a").val, loc);
    ir::Value *y = toTensor(args.pos.size() > 1 ? args.pos[1].val : p.get(name == "tl.cat" ? "other" : "b").val, loc);
    if (x->type.elem != y->type.elem)
      fail(loc, name.substr(3) + "() operands must have the same dtype, got " + x->type.str() + " and " + y->type.str());
    if (name == "tl.cat") {
      if (!x->type.isTile() || x->type.shape != y->type.shape)
        fail(loc, "cat() needs two tiles of the same shape, got " + x->type.str() + " and " + y->type.str());
      auto shape = x->type.shape;
      shape[0] *= 2;
      if (std::string why = ir::tileLimitError(shape); !why.empty())
        fail(loc, "cat() result " + ir::Type(x->type.elem, shape).str() + " has " + why);
      return SVal::tensor(b->create(ir::OpKind::Cat, loc, {x, y}, {ir::Type(x->type.elem, shape)})->result());
    }
    broadcastPair(x, y, loc);
    if (x->type.isScalar()) {
      // Two scalars give a 2-element tile: joined as [1] tiles (the backends' Join takes tiles)
      // and reshaped.
      ir::Value *j = b->create(ir::OpKind::Join, loc, {b->splat(loc, x, {1}), b->splat(loc, y, {1})},
                               {ir::Type(x->type.elem, {1, 2})})->result();
      return SVal::tensor(b->create(ir::OpKind::Reshape, loc, {j}, {ir::Type(x->type.elem, {2})})->result());
    }
    auto shape = x->type.shape;
    shape.push_back(2);
    if (std::string why = ir::tileLimitError(shape); !why.empty())
      fail(loc, "join() result " + ir::Type(x->type.elem, shape).str() + " has " + why);
    return SVal::tensor(b->create(ir::OpKind::Join, loc, {x, y}, {ir::Type(x->type.elem, shape)})->result());
  }
  if (name == "tl.split") {
    Binder p(*this, "split", args, {"a"}, 1);
    ir::Value *x = p.tensor("a");
    if (!x->type.isTile() || x->type.shape.back() != 2)
      fail(p.loc("a"), "split() needs a tile whose last dim is 2, got " + x->type.str());
    auto shape = x->type.shape;
    shape.pop_back();
    ir::Type t(x->type.elem, shape);
    if (shape.empty())
      fail(p.loc("a"), "split() of a 2-element tile into scalars is not supported yet");
    ir::Op *op = b->create(ir::OpKind::Split, loc, {x}, {t, t});
    return SVal::tuple({SVal::tensor(op->result(0)), SVal::tensor(op->result(1))});
  }
  if (name == "tl.cumsum" || name == "tl.cumprod") {
    Binder p(*this, name.substr(3), args, {"input", "axis", "reverse", "dtype"}, 1);
    ir::Value *x = p.tensor("input");
    if (!x->type.isTile())
      fail(p.loc("input"), name.substr(3) + "() expects a tile, got " + x->type.str());
    int rank = static_cast<int>(x->type.rank());
    int64_t axis = p.constInt("axis", 0);
    if (axis < -rank || axis >= rank)
      fail(p.loc("axis"), name.substr(3) + "() axis " + std::to_string(axis) + " is out of range for " + x->type.str());
    if (p.has("dtype")) {
      x = castTo(x, p.dtype("dtype"), loc);
    } else {
      DType t = x->type.dtype();
      // Triton: bf16 scans run in fp32; cumsum (not cumprod) runs narrow integers in 32 bits.
      if (t == DType::BF16 || ir::isFP8(t))
        x = castTo(x, ir::ScalarType{DType::F32}, loc);
      else if (name == "tl.cumsum" && ir::isInteger(t) && ir::bitWidth(t) < 32)
        x = castTo(x, ir::ScalarType{ir::isSigned(t) ? DType::I32 : DType::U32}, loc);
    }
    ir::Op *op = b->create(ir::OpKind::Scan, loc, {x}, {x->type});
    op->axis = static_cast<int>(axis < 0 ? axis + rank : axis);
    op->reduceKind = name == "tl.cumsum" ? ir::ReduceKind::Sum : ir::ReduceKind::Prod;
    op->ival = p.has("reverse") && truthy(p.get("reverse").val, p.loc("reverse")) ? 1 : 0;
    return SVal::tensor(op->result());
  }

  // --- Matrix product
  if (name == "tl.dot") {
    Binder p(*this, "dot", args, {"input", "other", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc",
                                  "out_dtype"},
             2);
    ir::Value *a = p.tensor("input"), *bm = p.tensor("other");
    if (a->type.rank() != 2 || bm->type.rank() != 2)
      return batchedDot(a, bm, args);
    int64_t M = a->type.shape[0], K = a->type.shape[1], K2 = bm->type.shape[0], N = bm->type.shape[1];
    if (K != K2)
      fail(loc, "dot() inner dimensions differ: " + a->type.str() + " @ " + bm->type.str());
    if (M < 16 || N < 16 || K < 16)
      fail(loc, "dot() needs every dimension to be at least 16 (Triton's rule), got M=" + std::to_string(M) +
                    ", N=" + std::to_string(N) + ", K=" + std::to_string(K));
    if (std::string why = ir::tileLimitError({M, N}); !why.empty())
      fail(loc, "dot() result of shape [" + std::to_string(M) + ", " + std::to_string(N) + "] has " + why);
    DType ta = a->type.dtype(), tb = bm->type.dtype();
    // Triton 3.6 requires equal operand dtypes ("Both operands must be same dtype").
    // Any two fp8 types may be multiplied (Triton 3.6).
    if (ta != tb && !(ir::isFP8(ta) && ir::isFP8(tb)))
      fail(loc, std::string("dot() operands must have the same dtype, got ") + ir::name(ta) + " and " + ir::name(tb) +
                    " (cast one with .to())");
    DType in = a->type.dtype();
    DType out = ir::isInteger(in) ? DType::I32 : in == DType::F64 ? DType::F64 : DType::F32;
    if (p.has("out_dtype")) {
      DType req = p.dtype("out_dtype").dtype;
      if (!(req == out || (req == DType::F16 && (in == DType::F16 || ir::isFP8(in)))))
        fail(p.loc("out_dtype"), std::string("dot() out_dtype ") + ir::name(req) + " is not supported for " + ir::name(in) +
                                     " inputs (use " + ir::name(out) + ")");
    }
    int64_t precision = 0;
    std::string prec = "tf32";
    if (p.has("input_precision")) {
      const Arg &ip = p.get("input_precision");
      if (ip.val.kind != SVal::Kind::Str)
        fail(ip.loc, "dot() input_precision must be a string: \"tf32\", \"tf32x3\" or \"ieee\"");
      prec = ip.val.s;
    } else if (p.has("allow_tf32") && !truthy(p.get("allow_tf32").val, p.loc("allow_tf32"))) {
      prec = "ieee";
    }
    if (prec == "tf32")
      precision = 0;
    else if (prec == "tf32x3")
      precision = static_cast<int64_t>(ir::DotPrecision::TF32x3);
    else if (prec == "ieee")
      precision = 2;
    else
      fail(p.loc("input_precision"), "dot() input_precision must be \"tf32\", \"tf32x3\" or \"ieee\", got \"" + prec + "\"");
    // max_num_imprecise_acc (fp8 only, Triton's knob): how many elements of K Hopper's fp8 tensor
    // cores may add at their reduced precision before an fp32 addition; None (Triton's default on
    // sm_90) never promotes.
    int64_t maxImprecise = 0;
    if (p.has("max_num_imprecise_acc") && p.get("max_num_imprecise_acc").val.kind != SVal::Kind::None) {
      maxImprecise = p.constInt("max_num_imprecise_acc", 0);
      if (maxImprecise < 0)
        fail(p.loc("max_num_imprecise_acc"), "dot() max_num_imprecise_acc must be non-negative, got " +
                                                 std::to_string(maxImprecise));
    }
    ir::Value *acc;
    DType accOut = DType::Invalid; // fp16 when the fp16 accumulator was widened
    if (p.has("acc")) {
      acc = p.tensor("acc");
      if (acc->type.shape != std::vector<int64_t>{M, N})
        fail(p.loc("acc"), "dot() acc must be a [" + std::to_string(M) + ", " + std::to_string(N) + "] tile, got " +
                               acc->type.str());
      // Triton also takes an fp16 accumulator for fp16 and fp8 inputs (out_dtype fp16): TLE adds
      // the product to it in fp32 and rounds the sum to fp16 once.
      bool f16Acc = acc->type.dtype() == DType::F16 && (in == DType::F16 || ir::isFP8(in)) &&
                    (!p.has("out_dtype") || p.dtype("out_dtype").dtype == DType::F16);
      if (acc->type.dtype() != out && !f16Acc)
        fail(p.loc("acc"), std::string("dot() acc must be ") + ir::name(out) + " for " + ir::name(in) + " inputs, got " +
                               acc->type.str());
      if (f16Acc) {
        acc = castTo(acc, ir::ScalarType{out}, p.loc("acc"));
        accOut = DType::F16;
      }
    } else {
      acc = b->splat(loc, toTensorOfType(SVal::integer(0), out, loc), {M, N});
    }
    ir::Value *r;
    if (precision == static_cast<int64_t>(ir::DotPrecision::TF32x3) && in == DType::F32) {
      r = dotTF32x3(a, bm, acc, loc);
    } else {
      ir::Op *op = b->create(ir::OpKind::Dot, loc, {a, bm, acc}, {acc->type});
      op->ival = in == DType::F32 ? precision : 0;
      op->ival2 = ir::isFP8(in) ? maxImprecise : 0;
      r = op->result();
    }
    if (p.has("out_dtype") && p.dtype("out_dtype").dtype != out)
      r = castTo(r, p.dtype("out_dtype"), loc);
    else if (accOut == DType::F16)
      r = castTo(r, ir::ScalarType{DType::F16}, loc);
    return SVal::tensor(r);
  }

  // --- Reductions
  if (name == "tl.sum" || name == "tl.max" || name == "tl.min") {
    Binder p(*this, name.substr(3), args, {"input", "axis", "keep_dims", "dtype", "return_indices", "return_indices_tie_break_left", "propagate_nan"}, 1);
    ir::Value *x = p.tensor("input");
    if (!x->type.isTile())
      fail(p.loc("input"), name.substr(3) + "() expects a tile, got " + x->type.str());
    if (p.has("return_indices") && truthy(p.get("return_indices").val, p.loc("return_indices"))) {
      // Triton: an integer axis is required (axis=None is accepted for 1-D tiles); the value keeps
      // the input dtype; return_indices_tie_break_left=False may give any index of a tie (TLE:
      // the left-most, as with True).
      if (name == "tl.sum")
        fail(p.loc("return_indices"), "sum() got an unexpected keyword argument 'return_indices'");
      if (x->type.elem.isPointer())
        fail(p.loc("input"), name.substr(3) + "() expects numbers, got " + x->type.str());
      int rank = static_cast<int>(x->type.rank());
      int axis = 0;
      if (p.has("axis")) {
        int64_t a = p.constInt("axis", 0);
        if (a < -rank || a >= rank)
          fail(p.loc("axis"), name.substr(3) + "() axis " + std::to_string(a) + " is out of range for " + x->type.str());
        axis = static_cast<int>(a < 0 ? a + rank : a);
      } else if (rank != 1) {
        fail(loc, name.substr(3) + "(return_indices=True) needs an axis for a tile of rank " + std::to_string(rank));
      }
      auto [value, index] = reduceWithIndices(x, axis, name == "tl.max", loc);
      if (p.has("keep_dims") && truthy(p.get("keep_dims").val, p.loc("keep_dims"))) {
        value = expandDims(value, axis, loc);
        index = expandDims(index, axis, loc);
      }
      return SVal::tuple({SVal::tensor(value), SVal::tensor(index)});
    }
    ir::ReduceKind k = name == "tl.sum" ? ir::ReduceKind::Sum : name == "tl.max" ? ir::ReduceKind::Max : ir::ReduceKind::Min;
    if (k != ir::ReduceKind::Sum && ir::bitWidth(x->type.dtype()) < 32) {
      // Triton's max/min reduce sub-32-bit floats in fp32 and sub-32-bit integers in int32.
      x = castTo(x, ir::ScalarType{ir::isFloat(x->type.dtype()) ? DType::F32 : DType::I32}, loc);
    }
    if (k == ir::ReduceKind::Sum) {
      if (p.has("dtype")) {
        x = castTo(x, p.dtype("dtype"), loc);
      } else {
        DType t = x->type.dtype();
        // Triton: sums of narrow integers accumulate in 32 bits.
        if (ir::isInteger(t) && ir::bitWidth(t) < 32)
          x = castTo(x, ir::ScalarType{ir::isSigned(t) ? DType::I32 : DType::U32}, loc);
      }
    }
    bool keep = p.has("keep_dims") && truthy(p.get("keep_dims").val, p.loc("keep_dims"));
    std::vector<int> axes;
    int rank = static_cast<int>(x->type.rank());
    if (!p.has("axis")) {
      for (int a = rank - 1; a >= 0; --a)
        axes.push_back(a);
    } else {
      int64_t a = p.constInt("axis", 0);
      if (a < -rank || a >= rank)
        fail(p.loc("axis"), name.substr(3) + "() axis " + std::to_string(a) + " is out of range for " + x->type.str());
      axes.push_back(static_cast<int>(a < 0 ? a + rank : a));
    }
    for (int a : axes)
      x = reduce(x, a, k, loc);
    if (keep) {
      std::sort(axes.begin(), axes.end());
      for (int a : axes)
        x = expandDims(x, a, loc);
    }
    return SVal::tensor(x);
  }
  if (auto r = callStandard(name, args))
    return *r;
  if (auto r = callTle(name, args))
    return *r;
  if (name == "tl.range" || name == "tl.static_range")
    fail(loc, name + "() can only be used as the iterable of a 'for' loop");
  fail(loc, "'" + name + "' is not supported yet");
}

// ---------------------------------------------------------------------------------------------
// Debugging: tl.device_print / print, tl.device_assert / assert

void Specializer::devicePrint(const std::string &fname, CallArgs &args) {
  SourceLoc loc = args.loc;
  if (args.pos.empty() || args.pos[0].val.kind != SVal::Kind::Str)
    fail(args.pos.empty() ? loc : args.pos[0].loc,
         fname + "() takes a prefix string first, then the values to print (e.g. " + fname + "(\"x\", x))" +
             (args.pos.empty() ? std::string() : "; got " + args.pos[0].val.describe()));
  std::string prefix = args.pos[0].val.s;
  for (unsigned char c : prefix)
    if (!((c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'))
      fail(args.pos[0].loc, fname + "() prefix must be printable ASCII");
  bool hex = false;
  for (auto &[k, a] : args.kw) {
    if (k != "hex")
      fail(a.loc, fname + "() got an unexpected keyword argument '" + k + "' (only 'hex')");
    if (!a.val.isConstexpr())
      fail(a.loc, fname + "() hex must be a compile-time bool, got " + a.val.describe());
    hex = truthy(a.val, a.loc);
  }
  std::vector<ir::Value *> operands;
  for (size_t i = 1; i < args.pos.size(); ++i) {
    const Arg &a = args.pos[i];
    if (a.val.isTensor()) // fp8 prints its value (or, with hex, its bits) through fp32 / u8
      operands.push_back(!ir::isFP8(a.val.v->type.dtype()) ? a.val.v
                         : hex ? b->create(ir::OpKind::Bitcast, a.loc, {a.val.v}, {a.val.v->type.withElem(ir::ScalarType{DType::U8})})->result()
                               : castTo(a.val.v, ir::ScalarType{DType::F32}, a.loc));
    else if (a.val.isNumber())
      operands.push_back(toTensor(a.val, a.loc));
    else
      fail(a.loc, fname + "() can print tensors and numbers, not " + a.val.describe());
  }
  // Triton's semantic.device_print: a non-empty prefix starts with " " and ends with ": ".
  if (!operands.empty()) {
    if (prefix.empty() || prefix.back() != ' ')
      prefix += " ";
    if (prefix.size() < 2 || prefix.compare(prefix.size() - 2, 2, ": ") != 0)
      prefix = prefix.substr(0, prefix.size() - 1) + ": ";
  }
  if (prefix.size() > 2 && prefix[0] != ' ')
    prefix = " " + prefix;
  ir::Op *op = b->create(ir::OpKind::Print, loc, operands, {});
  op->sym = prefix;
  op->ival = hex ? 1 : 0;
}

void Specializer::deviceAssert(const Arg &cond, const std::string &msg, const Arg *mask, SourceLoc loc) {
  auto asCondition = [&](const Arg &a, const char *what) -> ir::Value * {
    ir::Value *v = a.val.isTensor() ? a.val.v : a.val.isNumber() ? toTensor(a.val, a.loc) : nullptr;
    if (!v || v->type.elem.isPointer() || ir::isFloat(v->type.dtype()))
      fail(a.loc, std::string("device_assert ") + what + " must be a boolean or integer tensor, got " +
                      (v ? v->type.str() : a.val.describe()));
    if (v->type.dtype() != DType::I1)
      v = b->cmp(a.loc, ir::CmpPred::Ne, v, broadcastTo(toTensorOfType(SVal::integer(0), v->type.dtype(), a.loc),
                                                         v->type.shape, a.loc));
    return v;
  };
  ir::Value *c = asCondition(cond, "condition");
  ir::Value *m = mask ? asCondition(*mask, "mask") : nullptr;
  if (!debug)
    return; // compiled out, as Triton does without debug=True
  if (m) {
    // Masked-off elements pass: cond | ~mask.
    broadcastPair(c, m, loc);
    c = b->binary(ir::OpKind::Or, loc, c, b->unary(ir::OpKind::Not, loc, m));
  }
  ir::Op *op = b->create(ir::OpKind::Assert, loc, {c}, {});
  op->sym = msg;
}

} // namespace tle::sema
