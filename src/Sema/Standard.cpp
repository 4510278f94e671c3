// triton.language.standard as libraries import it by name: its public functions are the tl
// builtins, and its underscore helpers (_log2, _is_power_of_two, and the combine functions
// _sum_combine, _argmax_combine_tie_break_left, ...) are builtins usable as tl.reduce /
// tl.associative_scan combine functions. The sort internals (_indicator, _compare_and_swap,
// _bitonic_merge_hypercube, _bitonic_merge, sort_impl) follow Triton 3.6's signatures and
// networks, built from the same tl operations, so a library's own bitonic sort that calls them
// gives Triton's results element for element.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

namespace {

using ast::BinaryOp;
using ast::CompareOp;
using ir::DType;

/// floor(log2(n)) (0 for n <= 1): _log2's value.
int64_t floorLog2(int64_t n) {
  int64_t r = 0;
  while (n > 1) {
    n >>= 1;
    ++r;
  }
  return r;
}

/// _log2(n) of a compile-time integer.
SVal log2Of(Specializer &S, const BuiltinCall &c) { return SVal::integer(floorLog2(c.p.constInt("i", 0))); }

/// _is_power_of_two(n) of a compile-time integer.
SVal isPowerOfTwo(Specializer &S, const BuiltinCall &c) {
  int64_t n = c.p.constInt("i", 0);
  return SVal::boolean(n > 0 && (n & (n - 1)) == 0);
}

/// The two-operand combines: a + b, a * b, a ^ b, a | b, a & b, maximum, minimum.
SVal pairCombine(Specializer &S, const BuiltinCall &c) {
  const Arg &a = c.p.get("a"), &bv = c.p.get("b");
  const std::string &n = c.fname;
  if (n == "_elementwise_max" || n == "_elementwise_min") {
    CallArgs args{c.loc, {a, bv}, {}};
    return S.callBuiltin(n == "_elementwise_max" ? "tl.maximum" : "tl.minimum", args);
  }
  BinaryOp op = n == "_sum_combine"    ? BinaryOp::Add
                : n == "_prod_combine" ? BinaryOp::Mul
                : n == "_xor_combine"  ? BinaryOp::BitXor
                : n == "_or_combine"   ? BinaryOp::BitOr
                                       : BinaryOp::BitAnd;
  return S.binary(op, a.val, bv.val, c.loc, a.loc, bv.loc);
}

/// The (value, index) combines of argmax / argmin: the greater (smaller) value wins; with
/// tie_break_left an equal value keeps the lower index.
SVal argCombine(Specializer &S, const BuiltinCall &c) {
  const std::string &n = c.fname;
  bool isMax = n.rfind("_argmax", 0) == 0;
  bool left = n.find("tie_break_left") != std::string::npos;
  if (n == "_argmax_combine" || n == "_argmin_combine")
    left = S.truthy(c.p.get("tie_break_left").val, c.p.loc("tie_break_left"));
  SourceLoc loc = c.loc;
  const SVal &v1 = c.p.get("value1").val, &i1 = c.p.get("index1").val;
  const SVal &v2 = c.p.get("value2").val, &i2 = c.p.get("index2").val;
  SVal wins = S.compare(isMax ? CompareOp::Gt : CompareOp::Lt, v1, v2, loc);
  if (left) {
    SVal same = S.compare(CompareOp::Eq, v1, v2, loc);
    SVal lower = S.compare(CompareOp::Lt, i1, i2, loc);
    SVal tie = S.binary(BinaryOp::BitAnd, same, lower, loc, loc, loc);
    wins = S.binary(BinaryOp::BitOr, wins, tie, loc, loc, loc);
  }
  CallArgs pickV{loc, {{loc, wins}, {loc, v1}, {loc, v2}}, {}};
  CallArgs pickI{loc, {{loc, wins}, {loc, i1}, {loc, i2}}, {}};
  return SVal::tuple({S.callBuiltin("tl.where", pickV), S.callBuiltin("tl.where", pickI)});
}

/// _get_int_dtype(bitwidth, signed): Triton 3.6's constexpr-function form of core.get_int_dtype.
SVal getIntDType(Specializer &S, const BuiltinCall &c) {
  CallArgs a{c.loc, {c.p.get("bitwidth"), c.p.get("signed")}, {}};
  return S.callBuiltin("tl.get_int_dtype", a);
}

/// _pick_sum_dtype(in_dtype, dtype): `dtype` when given, else int32 / uint32 for integers
/// narrower than 32 bits (Triton 3.6's rule for tl.sum and tl.cumsum), else None (int1 included:
/// Triton counts it as neither signed nor unsigned).
SVal pickSumDType(Specializer &S, const BuiltinCall &c) {
  if (c.p.has("dtype"))
    return c.p.get("dtype").val;
  const SVal &in = c.p.get("in_dtype").val;
  if (in.kind != SVal::Kind::DType)
    S.fail(c.p.loc("in_dtype"), "_pick_sum_dtype() expects a dtype, got " + in.describe());
  DType t = in.dtype.dtype;
  if (!ir::isInteger(t) || t == DType::I1 || ir::bitWidth(t) >= 32)
    return SVal::none();
  return SVal::dtypeOf(ir::ScalarType{ir::isUnsigned(t) ? DType::U32 : DType::I32});
}

/// Calls tl.NAME with positional values (all located at the helper's call).
SVal tlCall(Specializer &S, SourceLoc loc, const std::string &name, std::vector<SVal> pos,
            std::vector<std::pair<std::string, SVal>> kw = {}) {
  CallArgs a{loc, {}, {}};
  for (SVal &v : pos)
    a.pos.push_back({loc, std::move(v)});
  for (auto &[k, v] : kw)
    a.kw.push_back({k, {loc, v}});
  return S.callBuiltin(name, a);
}

/// The element count of tile argument `k` (the hypercube helpers' x); a located error for a scalar.
int64_t numelOf(Specializer &S, const BuiltinCall &c, const char *k) {
  ir::Value *x = c.p.tensor(k);
  if (!x->type.isTile())
    S.fail(c.p.loc(k), c.fname + "() expects a tile, got " + x->type.str());
  return ir::numElements(x->type.shape);
}

/// _indicator(n_dims, j): arange(0, 2) reshaped to [1] * (n_dims - j - 1) + [2] + [1] * j, the
/// position along axis n_dims - 1 - j of a [2] * n_dims hypercube.
SVal indicatorTile(Specializer &S, SourceLoc loc, int64_t nDims, int64_t j) {
  std::vector<SVal> shape;
  for (int64_t k = 0; k < nDims - j - 1; ++k)
    shape.push_back(SVal::integer(1));
  shape.push_back(SVal::integer(2));
  for (int64_t k = 0; k < j; ++k)
    shape.push_back(SVal::integer(1));
  SVal ar = tlCall(S, loc, "tl.arange", {SVal::integer(0), SVal::integer(2)});
  return tlCall(S, loc, "tl.reshape", {ar, SVal::tuple(shape)});
}

SVal indicator(Specializer &S, const BuiltinCall &c) {
  return indicatorTile(S, c.loc, c.p.constInt("n_dims", 0), c.p.constInt("j", 0));
}

/// _compare_and_swap(x, flip, i): one compare-and-swap step along the i-th innermost axis of a
/// hypercube; the partner is found by an xor reduction of the integer bits over that axis.
SVal compareAndSwap(Specializer &S, SourceLoc loc, const SVal &x, const SVal &flip, int64_t i) {
  const int64_t nDims = floorLog2(ir::numElements(x.v->type.shape));
  ir::ScalarType elem = x.v->type.elem;
  SVal idtype = tlCall(S, loc, "tl.get_int_dtype", {SVal::integer(ir::bitWidth(elem.dtype)), SVal::boolean(true)});
  SVal ix = tlCall(S, loc, "tl.cast", {x, idtype}, {{"bitcast", SVal::boolean(true)}});
  SVal both = tlCall(S, loc, "tl.xor_sum", {ix, SVal::integer(nDims - 1 - i), SVal::boolean(true)});
  SVal iy = S.binary(BinaryOp::BitXor, ix, both, loc, loc, loc);
  SVal y = tlCall(S, loc, "tl.cast", {iy, SVal::dtypeOf(elem)}, {{"bitcast", SVal::boolean(true)}});
  SVal isRight = indicatorTile(S, loc, nDims, i);
  SVal swap = S.compare(CompareOp::Ne, S.compare(CompareOp::Gt, x, y, loc),
                        S.binary(BinaryOp::BitXor, flip, isRight, loc, loc, loc), loc);
  return tlCall(S, loc, "tl.where", {swap, y, x});
}

SVal compareAndSwapBuiltin(Specializer &S, const BuiltinCall &c) {
  numelOf(S, c, "x");
  return compareAndSwap(S, c.loc, c.p.get("x").val, c.p.get("flip").val, c.p.constInt("i", 0));
}

/// _bitonic_merge_hypercube(x, stage, order): `stage` compare-and-swap steps, ascending (order
/// 0), descending (1) or alternating by the index bit `stage` (2).
SVal mergeHypercube(Specializer &S, SourceLoc loc, SVal x, int64_t stage, int64_t order) {
  SVal flip = order == 2 ? indicatorTile(S, loc, floorLog2(ir::numElements(x.v->type.shape)), stage)
                         : SVal::integer(order);
  for (int64_t i = 0; i < stage; ++i)
    x = compareAndSwap(S, loc, x, flip, stage - 1 - i);
  return x;
}

SVal mergeHypercubeBuiltin(Specializer &S, const BuiltinCall &c) {
  numelOf(S, c, "x");
  return mergeHypercube(S, c.loc, c.p.get("x").val, c.p.constInt("stage", 0), c.p.constInt("order", 0));
}

/// _bitonic_merge(x, stage, order, n_dims): the hypercube merge on x reshaped to [2] * log2(numel)
/// and back (n_dims is unused, as in Triton 3.6).
SVal bitonicMerge(Specializer &S, const BuiltinCall &c) {
  const int64_t n = floorLog2(numelOf(S, c, "x"));
  const SVal &x = c.p.get("x").val;
  std::vector<SVal> cube(n ? n : 1, SVal::integer(n ? 2 : 1)), back;
  for (int64_t d : x.v->type.shape)
    back.push_back(SVal::integer(d));
  SVal h = tlCall(S, c.loc, "tl.reshape", {x, SVal::tuple(cube)});
  h = mergeHypercube(S, c.loc, h, c.p.constInt("stage", 0), c.p.constInt("order", 0));
  return tlCall(S, c.loc, "tl.reshape", {h, SVal::tuple(back)});
}

/// sort_impl(x, k=None, dim=None, descending=0): tl.sort, or with k the k largest (smallest)
/// elements of the last dim in descending (ascending) order, as tl.topk.
SVal sortImpl(Specializer &S, const BuiltinCall &c) {
  CallArgs a{c.loc, {c.p.get("x")}, {}};
  for (const char *k : {"k", "dim", "descending"})
    if (c.p.has(k))
      a.kw.push_back({k, c.p.get(k)});
  return S.callBuiltin(c.p.has("k") ? "tl.topk" : "tl.sort", a);
}

/// _unwrap_if_constexpr(o): the value itself (a constexpr is its value here).
SVal unwrapConstexpr(Specializer &S, const BuiltinCall &c) { return c.p.get("o").val; }

} // namespace

std::vector<BuiltinSpec> standardBuiltins() {
  const char *arg4 = "value1, index1, value2, index2";
  return {
      {"standard._log2", "i", log2Of},
      {"standard._is_power_of_two", "i", isPowerOfTwo},
      {"standard._sum_combine", "a, b", pairCombine},
      {"standard._prod_combine", "a, b", pairCombine},
      {"standard._xor_combine", "a, b", pairCombine},
      {"standard._or_combine", "a, b", pairCombine},
      {"standard._and_combine", "a, b", pairCombine},
      {"standard._elementwise_max", "a, b", pairCombine},
      {"standard._elementwise_min", "a, b", pairCombine},
      {"standard._argmax_combine", "value1, index1, value2, index2, tie_break_left", argCombine},
      {"standard._argmin_combine", "value1, index1, value2, index2, tie_break_left", argCombine},
      {"standard._argmax_combine_tie_break_left", arg4, argCombine},
      {"standard._argmax_combine_tie_break_fast", arg4, argCombine},
      {"standard._argmin_combine_tie_break_left", arg4, argCombine},
      {"standard._argmin_combine_tie_break_fast", arg4, argCombine},
      {"standard._get_int_dtype", "bitwidth, signed", getIntDType},
      {"standard._pick_sum_dtype", "in_dtype, dtype", pickSumDType},
      {"standard._indicator", "n_dims, j", indicator},
      {"standard._compare_and_swap", "x, flip, i", compareAndSwapBuiltin},
      {"standard._bitonic_merge_hypercube", "x, stage, order", mergeHypercubeBuiltin},
      {"standard._bitonic_merge", "x, stage, order, n_dims", bitonicMerge},
      {"standard.sort_impl", "x, k=None, dim=None, descending=0", sortImpl},
      {"standard._unwrap_if_constexpr", "o", unwrapConstexpr},
  };
}

} // namespace tle::sema
