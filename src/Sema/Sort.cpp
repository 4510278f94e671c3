// Sorting builtins: tl.sort, tl.topk and tl.bitonic_merge, as bitonic networks of
// compare-and-swap steps along the last dim (Triton 3.6's algorithms).
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

using ir::DType;

namespace {

SVal sort(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  // Triton 3.6: sort(x, dim=None, descending=False), along the last dim only.
  ir::Value *x = p.tensor("x");
  if (!x->type.isTile())
    S.fail(p.loc("x"), "sort() expects a tile, got " + x->type.str());
  if (x->type.elem.isPointer() || x->type.dtype() == DType::I1)
    S.fail(p.loc("x"), "sort() expects numbers, got " + x->type.str());
  int rank = static_cast<int>(x->type.rank());
  if (p.has("dim")) {
    int64_t d = p.constInt("dim", rank - 1);
    if (d < -rank || d >= rank)
      S.fail(p.loc("dim"), "sort() dim " + std::to_string(d) + " is out of range for " + x->type.str());
    if ((d < 0 ? d + rank : d) != rank - 1)
      S.fail(p.loc("dim"), "sort() only supports the last dim (as Triton: \"only minor dimension is currently "
                         "supported\"), got dim " + std::to_string(d) + " of " + x->type.str());
  }
  return SVal::tensor(S.bitonicSort(x, constBool(S, p, "sort", "descending"), loc));
}

SVal topkOrMerge(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  // Triton 3.6: topk(x, k, dim=None) gives the k largest elements along the last dim, sorted
  // descending (TLE also takes descending=False: the k smallest, ascending);
  // bitonic_merge(x, dim=None, descending=False) sorts rows that are bitonic sequences (the
  // last stage of the sort; other rows are permuted as Triton's network does).
  bool topk = name == "tl.topk";
  const std::string &fname = c.fname;
  ir::Value *x = p.tensor("x");
  if (!x->type.isTile())
    S.fail(p.loc("x"), fname + "() expects a tile, got " + x->type.str());
  if (x->type.elem.isPointer() || x->type.dtype() == DType::I1)
    S.fail(p.loc("x"), fname + "() expects numbers, got " + x->type.str());
  int rank = static_cast<int>(x->type.rank());
  if (p.has("dim")) {
    int64_t d = p.constInt("dim", rank - 1);
    if (d < -rank || d >= rank)
      S.fail(p.loc("dim"), fname + "() dim " + std::to_string(d) + " is out of range for " + x->type.str());
    if ((d < 0 ? d + rank : d) != rank - 1)
      S.fail(p.loc("dim"), fname + "() only supports the last dim (as Triton: \"only minor dimension is currently "
                             "supported\"), got dim " + std::to_string(d) + " of " + x->type.str());
  }
  const int64_t n = x->type.shape.back();
  if (!topk) {
    bool desc = constBool(S, p, fname, "descending");
    int stages = 0;
    while ((int64_t(1) << stages) < n)
      ++stages;
    return SVal::tensor(S.bitonicStage(x, stages, S.b->splat(loc, S.b->constInt(loc, DType::I1, desc ? 1 : 0), x->type.shape), loc));
  }
  if (!p.get("k").val.isConstexpr() || p.get("k").val.kind != SVal::Kind::Int)
    S.fail(p.loc("k"), "topk() k must be a compile-time integer, got " + p.get("k").val.describe());
  int64_t k = p.get("k").val.i;
  if (k < 1 || (k & (k - 1)) || k > n)
    S.fail(p.loc("k"), "topk() k must be a power of two between 1 and the size of the last dim (" + std::to_string(n) +
                         " in " + x->type.str() + "), got " + std::to_string(k));
  bool desc = !p.has("descending") || constBool(S, p, fname, "descending");
  return SVal::tensor(S.bitonicTopK(x, k, desc, loc));
}

} // namespace

std::vector<BuiltinSpec> sortBuiltins() {
  return {
      {"tl.sort", "x, dim=None, descending=False", sort, kTensorMethod},
      {"tl.topk", "x, k, dim=None, descending=True", topkOrMerge, kTensorMethod},
      {"tl.bitonic_merge", "x, dim=None, descending=False", topkOrMerge},
  };
}

namespace {

/// The i1 tile of `shape` holding bit `d` of each element's index along the last dim.
ir::Value *lastDimIndexBit(Specializer &S, const std::vector<int64_t> &shape, int d, SourceLoc loc) {
  ir::Builder &b = *S.b;
  const int64_t n = shape.back();
  ir::Op *ar = b.create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {n})});
  ar->setArangeBounds(0, n);
  ir::Value *j = ar->result();
  for (size_t k = 0; k + 1 < shape.size(); ++k)
    j = S.expandDims(j, static_cast<int>(k), loc);
  j = S.broadcastTo(j, shape, loc);
  auto i32 = [&](int64_t v) { return b.splat(loc, b.constInt(loc, DType::I32, v), shape); };
  ir::Value *v = b.binary(ir::OpKind::And, loc, b.binary(ir::OpKind::Shr, loc, j, i32(d)), i32(1));
  return b.cmp(loc, ir::CmpPred::Ne, v, i32(0));
}

/// log2 of a power of two.
int log2Exact(int64_t n) {
  int k = 0;
  while ((int64_t(1) << k) < n)
    ++k;
  return k;
}

} // namespace

ir::Value *Specializer::bitonicStage(ir::Value *x, int stage, ir::Value *desc, SourceLoc loc) {
  // An element's partner at distance 2^d is found without a gather: with the last dim split as
  // [.., n / 2^(d+1), 2, 2^d], the xor over the axis of size 2 of the elements' bits, xor-ed
  // with the element's own bits, is the partner's bits.
  const std::vector<int64_t> shape = x->type.shape;
  const int rank = static_cast<int>(shape.size());
  const int64_t n = shape.back();
  DType t = x->type.dtype();
  DType it = ir::bitWidth(t) == 8 ? DType::I8 : ir::bitWidth(t) == 16 ? DType::I16 : ir::bitWidth(t) == 32 ? DType::I32 : DType::I64;
  for (int d = stage - 1; d >= 0; --d) {
    ir::Value *ix = t == it ? x : b->create(ir::OpKind::Bitcast, loc, {x}, {x->type.withElem(ir::ScalarType{it})})->result();
    std::vector<int64_t> split(shape.begin(), shape.end() - 1);
    split.push_back(n >> (d + 1));
    split.push_back(2);
    split.push_back(int64_t(1) << d);
    ir::Value *pairs = b->create(ir::OpKind::Reshape, loc, {ix}, {ir::Type(ix->type.elem, split)})->result();
    ir::Value *both = expandDims(xorReduce(pairs, rank, loc), rank, loc);
    both = b->create(ir::OpKind::Reshape, loc, {broadcastTo(both, split, loc)}, {ix->type})->result();
    ir::Value *iy = b->binary(ir::OpKind::Xor, loc, ix, both);
    ir::Value *y = t == it ? iy : b->create(ir::OpKind::Bitcast, loc, {iy}, {x->type})->result();
    // The left element of an ascending pair keeps the smaller value, the right one the larger.
    ir::Value *swap = b->cmp(loc, ir::CmpPred::Ne, b->cmp(loc, ir::CmpPred::Gt, x, y),
                             b->binary(ir::OpKind::Xor, loc, desc, lastDimIndexBit(*this, shape, d, loc)));
    x = b->select(loc, swap, y, x);
  }
  return x;
}

ir::Value *Specializer::bitonicSort(ir::Value *x, bool descending, SourceLoc loc) {
  // Stage s merges blocks of 2^s elements, alternately ascending and descending (bit s of the
  // index; the last stage in the requested order).
  const std::vector<int64_t> shape = x->type.shape;
  const int k = log2Exact(shape.back());
  ir::Value *descAll = b->splat(loc, b->constInt(loc, DType::I1, descending ? 1 : 0), shape);
  for (int s = 1; s <= k; ++s)
    x = bitonicStage(x, s, s < k ? lastDimIndexBit(*this, shape, s, loc) : descAll, loc);
  return x;
}

ir::Value *Specializer::bitonicTopK(ir::Value *x, int64_t k, bool descending, SourceLoc loc) {
  const int64_t n = x->type.shape.back();
  if (k == n)
    return bitonicSort(x, descending, loc);
  // Blocks of k sorted alternately ascending and descending (the first log2(k) stages of the
  // sort); then, while rows are longer than k, each ascending block and the descending block
  // after it become their elementwise max (min): a bitonic block holding the pair's k largest
  // (smallest) values, which the last stage of the merge sorts, again alternately until the
  // final block, which takes the requested order.
  const int logK = log2Exact(k);
  std::vector<int64_t> shape = x->type.shape;
  for (int s = 1; s <= logK; ++s)
    x = bitonicStage(x, s, lastDimIndexBit(*this, shape, s, loc), loc);
  const int rank = static_cast<int>(shape.size());
  while (shape.back() > k) {
    const int64_t len = shape.back();
    std::vector<int64_t> pairs(shape.begin(), shape.end() - 1);
    pairs.push_back(len / (2 * k));
    pairs.push_back(2);
    pairs.push_back(k);
    ir::Value *p = b->create(ir::OpKind::Reshape, loc, {x}, {ir::Type(x->type.elem, pairs)})->result();
    ir::Value *best = reduce(p, rank, descending ? ir::ReduceKind::Max : ir::ReduceKind::Min, loc);
    shape.back() = len / 2;
    x = b->create(ir::OpKind::Reshape, loc, {best}, {ir::Type(x->type.elem, shape)})->result();
    ir::Value *desc = shape.back() > k ? lastDimIndexBit(*this, shape, logK, loc)
                                       : b->splat(loc, b->constInt(loc, DType::I1, descending ? 1 : 0), shape);
    x = bitonicStage(x, logK, desc, loc);
  }
  return x;
}

} // namespace tle::sema
