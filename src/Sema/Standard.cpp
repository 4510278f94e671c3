// The `tl` functions of Triton's standard library that TLE builds from other ops while
// specialising: argmax/argmin and max/min with indices, reduce, associative_scan and xor_sum
// with their combine regions, clamp, umulhi, flip, ravel, interleave, swizzle2d, debug_barrier,
// assume, and batched (3-D) tl.dot as 2-D dots.
#include "Binder.h"
#include "Sema.h"

namespace tle::sema {

using ir::DType;

namespace {

/// The axis argument of a reduction with indices, wrapped into [0, rank).
int indexAxis(Specializer &S, const Binder &p, const std::string &fname, const ir::Type &t) {
  int rank = static_cast<int>(t.rank());
  if (!p.has("axis")) {
    if (rank == 1)
      return 0;
    S.fail(p.loc("axis"), fname + "() needs an axis for a tile of rank " + std::to_string(rank) + " (got " +
                              t.str() + ")");
  }
  int64_t a = p.constInt("axis", 0);
  if (a < -rank || a >= rank)
    S.fail(p.loc("axis"), fname + "() axis " + std::to_string(a) + " is out of range for " + t.str());
  return static_cast<int>(a < 0 ? a + rank : a);
}

/// Whether a keyword that must be a compile-time bool is true (false when absent).
bool constBool(Specializer &S, const Binder &p, const std::string &fname, const std::string &k) {
  if (!p.has(k))
    return false;
  const Arg &a = p.get(k);
  if (!a.val.isConstexpr())
    S.fail(a.loc, fname + "() argument '" + k + "' must be a compile-time bool, got " + a.val.describe());
  return S.truthy(a.val, a.loc);
}

/// `x` reshaped to `shape` (same number of elements).
ir::Value *reshapeTo(ir::Builder &b, ir::Value *x, std::vector<int64_t> shape, SourceLoc loc) {
  return b.create(ir::OpKind::Reshape, loc, {x}, {ir::Type(x->type.elem, std::move(shape))})->result();
}

/// `x[..., 0]`, ..., `x[..., n - 1]` of a tile whose last dim n is a power of two >= 2: split
/// (n == 2), or reshaped to [..., n / 2, 2] and split into the even and the odd indices, each
/// sliced again and the two lists interleaved.
std::vector<ir::Value *> lastDimSlices(ir::Builder &b, ir::Value *x, SourceLoc loc) {
  std::vector<int64_t> shape = x->type.shape;
  int64_t n = shape.back();
  if (n > 2) {
    shape.back() = n / 2;
    shape.push_back(2);
    x = reshapeTo(b, x, shape, loc);
  }
  shape.pop_back();
  ir::Type half(x->type.elem, shape);
  ir::Op *split = b.create(ir::OpKind::Split, loc, {x}, {half, half});
  if (n == 2)
    return {split->result(0), split->result(1)};
  std::vector<ir::Value *> even = lastDimSlices(b, split->result(0), loc);
  std::vector<ir::Value *> odd = lastDimSlices(b, split->result(1), loc);
  std::vector<ir::Value *> all;
  for (size_t i = 0; i < even.size(); ++i) {
    all.push_back(even[i]);
    all.push_back(odd[i]);
  }
  return all;
}

/// The inverse of lastDimSlices: tiles `r` of one shape S (a power-of-two count >= 2) stacked
/// along a new last dim, S + [r.size()], by joins of the even and the odd halves.
ir::Value *stackLastDim(ir::Builder &b, const std::vector<ir::Value *> &r, SourceLoc loc) {
  auto join = [&](ir::Value *x, ir::Value *y) {
    std::vector<int64_t> shape = x->type.shape;
    shape.push_back(2);
    return b.create(ir::OpKind::Join, loc, {x, y}, {ir::Type(x->type.elem, shape)})->result();
  };
  if (r.size() == 2)
    return join(r[0], r[1]);
  std::vector<ir::Value *> even, odd;
  for (size_t i = 0; i < r.size(); ++i)
    (i % 2 ? odd : even).push_back(r[i]);
  ir::Value *evens = stackLastDim(b, even, loc);
  ir::Value *odds = stackLastDim(b, odd, loc);
  ir::Value *j = join(evens, odds); // S + [n / 2, 2]
  std::vector<int64_t> shape = r[0]->type.shape;
  shape.push_back(int64_t(r.size()));
  return reshapeTo(b, j, shape, loc);
}

/// The 2-D tiles x[0], ..., x[B - 1] of a 3-D tile x of shape [B, R, C]: a reshape when B is 1,
/// else x permuted to [R, C, B] and sliced along its last dim.
std::vector<ir::Value *> batchSlices(ir::Builder &b, ir::Value *x, SourceLoc loc) {
  const std::vector<int64_t> &s = x->type.shape;
  if (s[0] == 1)
    return {reshapeTo(b, x, {s[1], s[2]}, loc)};
  ir::Op *perm = b.create(ir::OpKind::Permute, loc, {x}, {ir::Type(x->type.elem, {s[1], s[2], s[0]})});
  perm->ints = {1, 2, 0};
  return lastDimSlices(b, perm->result(), loc);
}

/// The inverse of batchSlices: B 2-D tiles of shape [R, C] as one [B, R, C] tile.
ir::Value *stackBatches(ir::Builder &b, const std::vector<ir::Value *> &r, SourceLoc loc) {
  const std::vector<int64_t> &s = r[0]->type.shape;
  std::vector<int64_t> shape = {int64_t(r.size()), s[0], s[1]};
  if (r.size() == 1)
    return reshapeTo(b, r[0], shape, loc);
  ir::Op *perm = b.create(ir::OpKind::Permute, loc, {stackLastDim(b, r, loc)}, {ir::Type(r[0]->type.elem, shape)});
  perm->ints = {2, 0, 1};
  return perm->result();
}

} // namespace

ir::Value *Specializer::isNan(ir::Value *x, SourceLoc loc) { return b->cmp(loc, ir::CmpPred::Ne, x, x); }

ir::Value *Specializer::propagateNan(ir::Value *r, const std::vector<ir::Value *> &ins, SourceLoc loc) {
  if (!ir::isFloat(r->type.dtype()))
    return r;
  for (auto it = ins.rbegin(); it != ins.rend(); ++it)
    r = b->select(loc, isNan(*it, loc), *it, r);
  return r;
}

std::pair<ir::Value *, ir::Value *> Specializer::reduceWithIndices(ir::Value *x, int axis, bool isMax, SourceLoc loc) {
  DType orig = x->type.dtype();
  // Exact widening for the comparisons: narrow floats to fp32, narrow integers (and i1) to i32.
  ir::Value *w = x;
  if (orig == DType::I1) {
    w = b->select(loc, x, b->splat(loc, b->constInt(loc, DType::I32, 1), x->type.shape),
                  b->splat(loc, b->constInt(loc, DType::I32, 0), x->type.shape));
  } else if (ir::bitWidth(orig) < 32) {
    w = castTo(x, ir::ScalarType{ir::isFloat(orig) ? DType::F32 : DType::I32}, loc);
  }
  const auto &shape = x->type.shape;
  int64_t n = shape[static_cast<size_t>(axis)];
  ir::Value *m = reduce(w, axis, isMax ? ir::ReduceKind::Max : ir::ReduceKind::Min, loc);
  ir::Value *mb = broadcastTo(expandDims(m, axis, loc), shape, loc);
  // Candidates: the elements equal to the (NaN-ignoring) extremum; when it is NaN (every element
  // is NaN), every element.
  ir::Value *match = b->cmp(loc, ir::CmpPred::Eq, w, mb);
  if (ir::isFloat(orig))
    match = b->binary(ir::OpKind::Or, loc, match, isNan(mb, loc));
  ir::Op *ar = b->create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {n})});
  ar->ival = 0;
  ar->ival2 = n;
  ir::Value *idx = ar->result();
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    if (d != axis)
      idx = expandDims(idx, d, loc);
  idx = broadcastTo(idx, shape, loc);
  ir::Value *none = b->splat(loc, b->constInt(loc, DType::I32, n), shape);
  ir::Value *index = reduce(b->select(loc, match, idx, none), axis, ir::ReduceKind::Min, loc);
  ir::Value *value = m;
  if (orig == DType::I1)
    value = b->cmp(loc, ir::CmpPred::Ne, m, m->type.isTile() ? b->splat(loc, b->constInt(loc, DType::I32, 0), m->type.shape)
                                                             : b->constInt(loc, DType::I32, 0));
  else if (orig != w->type.dtype())
    value = castTo(m, ir::ScalarType{orig}, loc);
  return {value, index};
}

ir::Value *Specializer::xorReduce(ir::Value *x, int axis, SourceLoc loc) {
  return bitwiseReduce(x, axis, ir::OpKind::Xor, loc);
}

ir::Value *Specializer::bitwiseReduce(ir::Value *x, int axis, ir::OpKind combine, SourceLoc loc) {
  ir::Op *op = b->create(ir::OpKind::Reduce, loc, {x}, {});
  auto rshape = x->type.shape;
  rshape.erase(rshape.begin() + axis);
  op->addResult(ir::Type(x->type.elem, rshape));
  op->axis = axis;
  op->reduceKind = ir::ReduceKind::Combine;
  op->regions.push_back(std::make_unique<ir::Block>());
  ir::Block *region = op->regions[0].get();
  region->parent = op;
  ir::Value *a = region->addArg(ir::Type(x->type.elem), "a0");
  ir::Value *c = region->addArg(ir::Type(x->type.elem), "b0");
  ir::Builder rb(region);
  rb.create(ir::OpKind::Yield, loc, {rb.binary(combine, loc, a, c)}, {});
  return op->result();
}

namespace {

/// The i1 tile of `shape` holding bit `d` of each element's index along the last dim.
ir::Value *lastDimIndexBit(Specializer &S, const std::vector<int64_t> &shape, int d, SourceLoc loc) {
  ir::Builder &b = *S.b;
  const int64_t n = shape.back();
  ir::Op *ar = b.create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {n})});
  ar->ival = 0;
  ar->ival2 = n;
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

SVal Specializer::batchedDot(ir::Value *a, ir::Value *bm, CallArgs &args) {
  SourceLoc loc = args.loc;
  const std::string shapes = a->type.str() + " and " + bm->type.str();
  auto operandNotes = [&] { // where each operand comes from
    std::vector<Note> notes;
    noteDefinition(notes, a, "the " + a->type.str() + " operand", loc);
    noteDefinition(notes, bm, "the " + bm->type.str() + " operand", loc);
    return notes;
  };
  if ((a->type.rank() == 3 && bm->type.rank() == 2) || (a->type.rank() == 2 && bm->type.rank() == 3))
    fail(loc, "dot() operands must both be 2-D or both be 3-D (batched), got " + shapes, operandNotes());
  if (a->type.rank() != 3 || bm->type.rank() != 3)
    fail(loc, "dot() expects two 2-D tiles or two 3-D (batched) tiles, got " + shapes, operandNotes());
  int64_t B = a->type.shape[0], M = a->type.shape[1], K = a->type.shape[2];
  int64_t B2 = bm->type.shape[0], K2 = bm->type.shape[1], N = bm->type.shape[2];
  if (B != B2)
    fail(loc, "dot() batch sizes differ: " + a->type.str() + " @ " + bm->type.str() + " (dim 0 of both operands "
              "is the batch)", operandNotes());
  if (K != K2)
    fail(loc, "dot() inner dimensions differ: " + a->type.str() + " @ " + bm->type.str(), operandNotes());
  const std::vector<int64_t> outShape = {B, M, N};
  if (std::string why = ir::tileLimitError(outShape); !why.empty())
    fail(loc, "dot() result of shape [" + std::to_string(B) + ", " + std::to_string(M) + ", " + std::to_string(N) +
                  "] has " + why);
  // The argument slots of input, other and acc: positions 0-2 of dot(input, other, acc, ...) or
  // the keywords (the call's arguments are already bound, so each is given once at most).
  auto slot = [](CallArgs &c, size_t pos, const char *kw) -> Arg * {
    if (c.pos.size() > pos)
      return &c.pos[pos];
    for (auto &[k, v] : c.kw)
      if (k == kw)
        return &v;
    return nullptr;
  };
  Arg *accArg = slot(args, 2, "acc");
  std::vector<ir::Value *> accs;
  if (accArg && accArg->val.kind != SVal::Kind::None) {
    ir::Value *acc = toTensor(accArg->val, accArg->loc);
    if (acc->type.shape != outShape)
      fail(accArg->loc, "dot() acc must be a [" + std::to_string(B) + ", " + std::to_string(M) + ", " +
                            std::to_string(N) + "] tile for " + a->type.str() + " @ " + bm->type.str() + ", got " +
                            acc->type.str());
    accs = batchSlices(*b, acc, loc);
  }
  // One 2-D tl.dot per batch, with the call's other arguments (and their locations) unchanged.
  std::vector<ir::Value *> as = batchSlices(*b, a, loc), bs = batchSlices(*b, bm, loc), rs;
  for (size_t i = 0; i < as.size(); ++i) {
    CallArgs one = args;
    slot(one, 0, "input")->val = SVal::tensor(as[i]);
    slot(one, 1, "other")->val = SVal::tensor(bs[i]);
    if (!accs.empty())
      slot(one, 2, "acc")->val = SVal::tensor(accs[i]);
    rs.push_back(callBuiltin("tl.dot", one).v);
  }
  return SVal::tensor(stackBatches(*b, rs, loc));
}

ir::Value *Specializer::dotTF32x3(ir::Value *a, ir::Value *bm, ir::Value *acc, SourceLoc loc) {
  // Triton's 3xTF32 (its F32DotTC rewrite, after CUTLASS): x = big + small with big = x rounded
  // to TF32 (cvt.rna.tf32.f32: to nearest, ties away; inf and NaN unchanged) and small = x - big
  // (exact in fp32); a @ b ~ small_a @ big_b + big_a @ small_b + big_a @ big_b, each a TF32 dot.
  // Where a big part is inf or NaN the small terms are NaN: they are dropped (the big product
  // carries the inf or NaN).
  auto tf32 = [&](ir::Value *x) {
    const auto &shape = x->type.shape;
    auto i32 = [&](int64_t v) { return b->splat(loc, b->constInt(loc, DType::I32, v), shape); };
    ir::Value *bits = b->create(ir::OpKind::Bitcast, loc, {x}, {ir::Type(ir::ScalarType{DType::I32}, shape)})->result();
    ir::Value *special = b->cmp(loc, ir::CmpPred::Eq, b->binary(ir::OpKind::And, loc, bits, i32(0x7F800000)), i32(0x7F800000));
    ir::Value *rounded = b->binary(ir::OpKind::And, loc, b->binary(ir::OpKind::Add, loc, bits, i32(0x1000)), i32(int32_t(0xFFFFE000)));
    ir::Value *r = b->select(loc, special, bits, rounded);
    return b->create(ir::OpKind::Bitcast, loc, {r}, {x->type})->result();
  };
  auto dot = [&](ir::Value *x, ir::Value *y, ir::Value *c) {
    ir::Op *op = b->create(ir::OpKind::Dot, loc, {x, y, c}, {c->type});
    op->ival = static_cast<int64_t>(ir::DotPrecision::TF32);
    return op->result();
  };
  ir::Value *aBig = tf32(a), *bBig = tf32(bm);
  ir::Value *aSmall = b->binary(ir::OpKind::Sub, loc, a, aBig), *bSmall = b->binary(ir::OpKind::Sub, loc, bm, bBig);
  ir::Value *zero = b->splat(loc, b->constFloat(loc, DType::F32, 0.0), acc->type.shape);
  ir::Value *small = dot(aBig, bSmall, dot(aSmall, bBig, zero));
  small = b->select(loc, isNan(small, loc), zero, small);
  return dot(aBig, bBig, b->binary(ir::OpKind::Add, loc, acc, small));
}

std::vector<ir::Value *> Specializer::combineOp(ir::OpKind kind, const std::vector<ir::Value *> &inputs, int axis,
                                                const ast::FunctionDef *combineFn, bool reverse, SourceLoc loc) {
  const char *fname = kind == ir::OpKind::Reduce ? "reduce" : "associative_scan";
  size_t n = inputs.size();
  std::vector<ir::Type> resultTypes;
  for (ir::Value *x : inputs) {
    auto shape = x->type.shape;
    if (kind == ir::OpKind::Reduce)
      shape.erase(shape.begin() + axis);
    resultTypes.push_back(ir::Type(x->type.elem, shape));
  }
  ir::Op *op = b->create(kind, loc, inputs, resultTypes);
  op->axis = axis;
  op->reduceKind = ir::ReduceKind::Combine;
  op->ival = reverse ? 1 : 0;
  op->regions.push_back(std::make_unique<ir::Block>());
  ir::Block *region = op->regions[0].get();
  region->parent = op;
  // Triton calls the combine function with scalars (a_0..a_{n-1}, b_0..b_{n-1}).
  CallArgs call;
  call.loc = loc;
  for (size_t i = 0; i < 2 * n; ++i) {
    ir::Value *a = region->addArg(ir::Type(inputs[i % n]->type.elem), std::string(i < n ? "a" : "b") + std::to_string(i % n));
    call.pos.push_back({loc, SVal::tensor(a)});
  }
  BuilderScope scope(b);
  b = std::make_unique<ir::Builder>(region);
  SVal r = callJit(combineFn, call);
  std::vector<SVal> outs = r.kind == SVal::Kind::Tuple ? r.elts : std::vector<SVal>{r};
  std::string who = std::string(fname) + "() combine_fn '" + combineFn->name + "'";
  if (r.kind == SVal::Kind::None)
    fail(loc, who + " returns nothing; it must return " + std::to_string(n) + (n == 1 ? " value" : " values"));
  if (outs.size() != n)
    fail(loc, who + " returns " + std::to_string(outs.size()) + (outs.size() == 1 ? " value" : " values") + " for " +
                  std::to_string(n) + (n == 1 ? " input" : " inputs"));
  std::vector<ir::Value *> yields;
  for (size_t i = 0; i < n; ++i) {
    const SVal &o = outs[i];
    if (!o.isTensor())
      fail(loc, who + " must return scalar tensors; value " + std::to_string(i) + " is " + o.describe() +
                    " (Triton rejects compile-time values here too)");
    if (o.v->type != ir::Type(inputs[i]->type.elem))
      fail(loc, who + " returns " + o.v->type.str() + " for value " + std::to_string(i) + ", whose dtype is " +
                    inputs[i]->type.elem.str() + " (the combine must keep each input's dtype; cast inside it)");
    yields.push_back(o.v);
  }
  // The combine runs on one pair of elements at a time: it cannot touch memory or make tiles.
  ir::walk(*region, [&](ir::Op &o) {
    const char *what = nullptr;
    switch (o.kind) {
    case ir::OpKind::Load: what = "load from memory"; break;
    case ir::OpKind::Store: what = "store to memory"; break;
    case ir::OpKind::AtomicRMW: case ir::OpKind::AtomicCAS: what = "use atomics"; break;
    case ir::OpKind::Print: what = "print"; break;
    case ir::OpKind::Assert: what = "assert"; break;
    case ir::OpKind::Barrier: what = "wait at a barrier"; break;
    case ir::OpKind::GridDepControl: what = "control dependent grids"; break;
    default:
      for (auto &res : o.results)
        if (res->type.isTile())
          what = "build a tile";
      break;
    }
    if (what)
      fail(o.loc, who + " cannot " + std::string(what) + ": it is applied to one pair of scalars at a time");
  });
  b->create(ir::OpKind::Yield, loc, yields, {});
  scope.restore();
  std::vector<ir::Value *> results;
  for (auto &res : op->results)
    results.push_back(res.get());
  return results;
}

std::optional<SVal> Specializer::callStandard(const std::string &name, CallArgs &args) {
  SourceLoc loc = args.loc;
  if (name == "tl.softmax") {
    // Triton 3.6's standard.softmax, quirks included: dim defaults to 0, and max/sum keep
    // keep_dims, so z = x - max(x, dim) broadcasts the reduced tile against x as NumPy does.
    Binder p(*this, "softmax", args, {"x", "dim", "keep_dims", "ieee_rounding"}, 1);
    const Arg &x = p.get("x");
    SVal dim = p.has("dim") && p.get("dim").val.kind != SVal::Kind::None ? SVal::integer(p.constInt("dim", 0))
                                                                          : SVal::integer(0);
    SVal keep = SVal::boolean(p.has("keep_dims") && truthy(p.get("keep_dims").val, p.loc("keep_dims")));
    SVal ieee = SVal::boolean(p.has("ieee_rounding") && truthy(p.get("ieee_rounding").val, p.loc("ieee_rounding")));
    auto call = [&](const char *fn, std::vector<SVal> pos, bool withKeep) {
      CallArgs a{loc, {}, {}};
      for (SVal &v : pos)
        a.pos.push_back(Arg{x.loc, v});
      if (withKeep)
        a.kw.push_back({"keep_dims", Arg{loc, keep}});
      return callBuiltin(fn, a);
    };
    SVal z = binary(ast::BinaryOp::Sub, x.val, call("tl.max", {x.val, dim}, true), loc, x.loc, loc);
    SVal num = call("tl.exp", {z}, false);
    return call("tl.fdiv", {num, call("tl.sum", {num, dim}, true), ieee}, false);
  }
  if (name == "tl.inline_asm_elementwise") {
    // Triton 3.6: inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack): the PTX
    // `asm` per `pack` elements of the broadcast `args`; `dtype` a dtype or a tuple of dtypes (a
    // tuple of results).
    Binder p(*this, "inline_asm_elementwise", args, {"asm", "constraints", "args", "dtype", "is_pure", "pack"}, 6);
    for (const char *k : {"asm", "constraints"})
      if (p.get(k).val.kind != SVal::Kind::Str)
        fail(p.loc(k), std::string("inline_asm_elementwise() argument '") + k + "' must be a string, got " +
                           p.get(k).val.describe());
    const SVal &argv = p.get("args").val;
    std::vector<SVal> argVals = argv.kind == SVal::Kind::Tuple ? argv.elts : std::vector<SVal>{argv};
    std::vector<ir::Value *> xs;
    for (const SVal &a : argVals) {
      if (!a.isTensor() && !a.isNumber())
        fail(p.loc("args"), "inline_asm_elementwise() args must be tensors or numbers, got " + a.describe());
      ir::Value *v = toTensor(a, p.loc("args"));
      if (v->type.elem.isPointer())
        fail(p.loc("args"), "inline_asm_elementwise() args must be numbers, got " + v->type.str());
      xs.push_back(v);
    }
    for (int round = 0; round < 2; ++round)
      for (size_t i = 1; i < xs.size(); ++i)
        broadcastPair(xs[0], xs[i], loc);
    const SVal &dt = p.get("dtype").val;
    std::vector<SVal> dts = dt.kind == SVal::Kind::Tuple ? dt.elts : std::vector<SVal>{dt};
    std::vector<int64_t> shape = xs.empty() ? std::vector<int64_t>{} : xs[0]->type.shape;
    std::vector<ir::Type> outs, ins;
    for (const SVal &d : dts) {
      if (d.kind != SVal::Kind::DType || d.dtype.isPointer())
        fail(p.loc("dtype"), "inline_asm_elementwise() dtype must be a dtype or a tuple of dtypes, got " + d.describe());
      outs.push_back(ir::Type(d.dtype, shape));
    }
    if (outs.empty())
      fail(p.loc("dtype"), "inline_asm_elementwise() needs at least one result dtype");
    for (ir::Value *v : xs)
      ins.push_back(v->type);
    int64_t pack = p.constInt("pack", 1);
    if (std::string why = ir::inlineAsmConstraintError(p.get("constraints").val.s, outs, ins, pack); !why.empty())
      fail(p.loc("constraints"), "inline_asm_elementwise(): " + why);
    ir::Op *op = b->create(ir::OpKind::InlineAsm, loc, xs, outs);
    op->sym = p.get("asm").val.s;
    op->constraints = p.get("constraints").val.s;
    op->ival = pack;
    op->ival2 = truthy(p.get("is_pure").val, p.loc("is_pure")) ? 1 : 0;
    if (dt.kind != SVal::Kind::Tuple)
      return SVal::tensor(op->result());
    std::vector<SVal> rs;
    for (auto &r : op->results)
      rs.push_back(SVal::tensor(r.get()));
    return SVal::tuple(rs);
  }
  if (name == "tl.gather") {
    // Triton 3.6: gather(src, index, axis): result[.., i, ..] = src[.., index[.., i, ..], ..] along
    // `axis`; src and index have one rank and equal sizes except along `axis`; the result has
    // index's shape and src's dtype. TLE: an index outside [0, src.shape[axis]) gives 0 (Triton
    // leaves it undefined). Built as a one-hot selection: the source's bits where the index
    // matches, xor-reduced over the axis (exact for every dtype, -0 and NaN payloads included).
    Binder p(*this, "gather", args, {"src", "index", "axis"}, 3);
    ir::Value *src = p.tensor("src"), *index = p.tensor("index");
    if (!src->type.isTile() || src->type.elem.isPointer())
      fail(p.loc("src"), "gather() expects a tile of numbers, got " + src->type.str());
    if (!index->type.isTile() || !ir::isInteger(index->type.dtype()) || index->type.dtype() == DType::I1)
      fail(p.loc("index"), "gather() index must be an integer tile, got " + index->type.str());
    int rank = static_cast<int>(src->type.rank());
    if (static_cast<int>(index->type.rank()) != rank)
      fail(p.loc("index"), "gather() index must have the rank of src " + src->type.str() + ", got " + index->type.str());
    int64_t a = p.constInt("axis", 0);
    if (a < -rank || a >= rank)
      fail(p.loc("axis"), "gather() axis " + std::to_string(a) + " is out of range for " + src->type.str());
    int axis = static_cast<int>(a < 0 ? a + rank : a);
    for (int d = 0; d < rank; ++d)
      if (d != axis && src->type.shape[size_t(d)] != index->type.shape[size_t(d)])
        fail(p.loc("index"), "gather() index " + index->type.str() + " and src " + src->type.str() +
                                 " must have equal sizes outside axis " + std::to_string(axis));
    int64_t n = src->type.shape[size_t(axis)];
    // One-hot over a new dim after `axis`: [.., index size, n, ..].
    std::vector<int64_t> big = index->type.shape;
    big.insert(big.begin() + axis + 1, n);
    if (std::string why = ir::tileLimitError(big); !why.empty())
      fail(loc, "gather() compares every index with every source position along the axis ([" +
                    std::to_string(index->type.shape[size_t(axis)]) + " x " + std::to_string(n) + "] per slice), which has " + why);
    ir::Op *ar = b->create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {n})});
    ar->ival = 0;
    ar->ival2 = n;
    ir::Value *pos = ar->result();
    for (int d = 0; d < rank + 1; ++d)
      if (d != axis + 1)
        pos = expandDims(pos, d, loc);
    ir::ScalarType idxT = ir::bitWidth(index->type.dtype()) > 32 ? index->type.elem : ir::ScalarType{DType::I32};
    ir::Value *idx = castTo(index, idxT, loc);
    ir::Value *hit = b->cmp(loc, ir::CmpPred::Eq, broadcastTo(expandDims(idx, axis + 1, loc), big, loc),
                            broadcastTo(castTo(pos, idxT, loc), big, loc));
    DType t = src->type.dtype();
    DType it = ir::bitWidth(t) == 8 ? DType::I8 : ir::bitWidth(t) == 16 ? DType::I16 : ir::bitWidth(t) == 32 ? DType::I32 : DType::I64;
    ir::Value *bits = src;
    if (t == DType::I1)
      bits = castTo(src, ir::ScalarType{DType::I8}, loc), it = DType::I8;
    else if (t != it)
      bits = b->create(ir::OpKind::Bitcast, loc, {src}, {src->type.withElem(ir::ScalarType{it})})->result();
    // src moved to [.., 1, n, ..]: its `axis` dim becomes the one-hot dim.
    ir::Value *srcBig = broadcastTo(expandDims(bits, axis, loc), big, loc);
    ir::Value *zero = b->splat(loc, b->constInt(loc, it, 0), big);
    ir::Value *r = xorReduce(b->select(loc, hit, srcBig, zero), axis + 1, loc);
    if (t == DType::I1)
      r = castTo(r, ir::ScalarType{DType::I1}, loc);
    else if (t != it)
      r = b->create(ir::OpKind::Bitcast, loc, {r}, {r->type.withElem(src->type.elem)})->result();
    return SVal::tensor(r);
  }
  if (name == "tl.sort") {
    // Triton 3.6: sort(x, dim=None, descending=False), along the last dim only.
    Binder p(*this, "sort", args, {"x", "dim", "descending"}, 1);
    ir::Value *x = p.tensor("x");
    if (!x->type.isTile())
      fail(p.loc("x"), "sort() expects a tile, got " + x->type.str());
    if (x->type.elem.isPointer() || x->type.dtype() == DType::I1)
      fail(p.loc("x"), "sort() expects numbers, got " + x->type.str());
    int rank = static_cast<int>(x->type.rank());
    if (p.has("dim")) {
      int64_t d = p.constInt("dim", rank - 1);
      if (d < -rank || d >= rank)
        fail(p.loc("dim"), "sort() dim " + std::to_string(d) + " is out of range for " + x->type.str());
      if ((d < 0 ? d + rank : d) != rank - 1)
        fail(p.loc("dim"), "sort() only supports the last dim (as Triton: \"only minor dimension is currently "
                           "supported\"), got dim " + std::to_string(d) + " of " + x->type.str());
    }
    return SVal::tensor(bitonicSort(x, constBool(*this, p, "sort", "descending"), loc));
  }
  if (name == "cuda.gdc_wait" || name == "cuda.gdc_launch_dependents") {
    // tl.extra.cuda.gdc_wait() / gdc_launch_dependents(): programmatic dependent launch.
    if (!args.pos.empty() || !args.kw.empty())
      fail(args.pos.empty() ? args.kw.front().second.loc : args.pos[0].loc,
           name.substr(5) + "() takes no arguments");
    ir::Op *op = b->create(ir::OpKind::GridDepControl, loc, {}, {});
    op->ival = name == "cuda.gdc_launch_dependents" ? 1 : 0;
    return SVal::none();
  }
  if (name == "cuda.num_warps" || name == "cuda.num_threads") {
    // tl.extra.cuda.num_warps() / num_threads(): the launch's warps (threads) per program, a
    // compile-time integer.
    if (!args.pos.empty() || !args.kw.empty())
      fail(args.pos.empty() ? args.kw.front().second.loc : args.pos[0].loc,
           name.substr(5) + "() takes no arguments");
    return SVal::integer(name == "cuda.num_warps" ? opts.numWarps : 32 * opts.numWarps);
  }
  if (name == "tl.topk" || name == "tl.bitonic_merge") {
    // Triton 3.6: topk(x, k, dim=None) gives the k largest elements along the last dim, sorted
    // descending (TLE also takes descending=False: the k smallest, ascending);
    // bitonic_merge(x, dim=None, descending=False) sorts rows that are bitonic sequences (the
    // last stage of the sort; other rows are permuted as Triton's network does).
    bool topk = name == "tl.topk";
    std::string fname = name.substr(3);
    Binder p = topk ? Binder(*this, fname, args, {"x", "k", "dim", "descending"}, 2)
                    : Binder(*this, fname, args, {"x", "dim", "descending"}, 1);
    ir::Value *x = p.tensor("x");
    if (!x->type.isTile())
      fail(p.loc("x"), fname + "() expects a tile, got " + x->type.str());
    if (x->type.elem.isPointer() || x->type.dtype() == DType::I1)
      fail(p.loc("x"), fname + "() expects numbers, got " + x->type.str());
    int rank = static_cast<int>(x->type.rank());
    if (p.has("dim")) {
      int64_t d = p.constInt("dim", rank - 1);
      if (d < -rank || d >= rank)
        fail(p.loc("dim"), fname + "() dim " + std::to_string(d) + " is out of range for " + x->type.str());
      if ((d < 0 ? d + rank : d) != rank - 1)
        fail(p.loc("dim"), fname + "() only supports the last dim (as Triton: \"only minor dimension is currently "
                               "supported\"), got dim " + std::to_string(d) + " of " + x->type.str());
    }
    const int64_t n = x->type.shape.back();
    if (!topk) {
      bool desc = constBool(*this, p, fname, "descending");
      int stages = 0;
      while ((int64_t(1) << stages) < n)
        ++stages;
      return SVal::tensor(bitonicStage(x, stages, b->splat(loc, b->constInt(loc, DType::I1, desc ? 1 : 0), x->type.shape), loc));
    }
    if (!p.get("k").val.isConstexpr() || p.get("k").val.kind != SVal::Kind::Int)
      fail(p.loc("k"), "topk() k must be a compile-time integer, got " + p.get("k").val.describe());
    int64_t k = p.get("k").val.i;
    if (k < 1 || (k & (k - 1)) || k > n)
      fail(p.loc("k"), "topk() k must be a power of two between 1 and the size of the last dim (" + std::to_string(n) +
                           " in " + x->type.str() + "), got " + std::to_string(k));
    bool desc = !p.has("descending") || constBool(*this, p, fname, "descending");
    return SVal::tensor(bitonicTopK(x, k, desc, loc));
  }
  if (name == "tl.histogram") {
    // Triton 3.6: histogram(input, num_bins, mask=None): int32 counts of the values 0 ..
    // num_bins - 1 in a 1-D integer tile; TLE: values outside that range, and masked-off
    // elements, are not counted.
    Binder p(*this, "histogram", args, {"input", "num_bins", "mask"}, 2);
    ir::Value *x = p.tensor("input");
    if (!x->type.isTile() || x->type.rank() != 1 || !ir::isInteger(x->type.dtype()) || x->type.dtype() == DType::I1)
      fail(p.loc("input"), "histogram() expects a 1-D integer tile, got " + x->type.str());
    int64_t bins = p.constInt("num_bins", 0);
    if (bins < 1 || (bins & (bins - 1)))
      fail(p.loc("num_bins"), "histogram() num_bins must be a power of two, got " + std::to_string(bins));
    int64_t n = x->type.shape[0];
    if (std::string why = ir::tileLimitError({n, bins}); !why.empty())
      fail(loc, "histogram() of " + std::to_string(n) + " values into " + std::to_string(bins) +
                    " bins compares them all at once ([" + std::to_string(n) + ", " + std::to_string(bins) + "]), which has " + why);
    ir::Op *ar = b->create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {bins})});
    ar->ival = 0;
    ar->ival2 = bins;
    ir::Value *binIds = castTo(ar->result(), x->type.elem, loc);
    std::vector<int64_t> shape = {n, bins};
    ir::Value *hit = b->cmp(loc, ir::CmpPred::Eq, broadcastTo(expandDims(x, 1, loc), shape, loc),
                            broadcastTo(expandDims(binIds, 0, loc), shape, loc));
    if (p.has("mask")) {
      ir::Value *m = p.tensor("mask");
      if (m->type.dtype() != DType::I1)
        fail(p.loc("mask"), "histogram() mask must be boolean, got " + m->type.str());
      if (m->type.isTile() && m->type.shape != x->type.shape)
        fail(p.loc("mask"), "histogram() mask must have the input's shape " + x->type.str() + ", got " + m->type.str());
      ir::Value *mt = m->type.isTile() ? expandDims(m, 1, loc) : m;
      hit = b->binary(ir::OpKind::And, loc, hit, mt->type.isTile() ? broadcastTo(mt, shape, loc) : b->splat(loc, mt, shape));
    }
    return SVal::tensor(reduce(castTo(hit, ir::ScalarType{DType::I32}, loc), 0, ir::ReduceKind::Sum, loc));
  }
  if (name == "tl.reduce" || name == "tl.associative_scan" || name == "tl.xor_sum" || name == "tl.reduce_or") {
    // Triton 3.6: reduce(input, axis, combine_fn, keep_dims=False),
    // associative_scan(input, axis, combine_fn, reverse=False), xor_sum(input, axis=None,
    // keep_dims=False) (a reduce with `^`, integers only), reduce_or(input, axis,
    // keep_dims=False) (with `|`, integers and booleans). `input` is a tensor or a tuple of
    // tensors of one shape; a tuple gives a tuple.
    std::string fname = name.substr(3);
    bool scan = name == "tl.associative_scan", xorSum = name == "tl.xor_sum", orReduce = name == "tl.reduce_or";
    Binder p = orReduce ? Binder(*this, fname, args, {"input", "axis", "keep_dims"}, 2)
               : xorSum ? Binder(*this, fname, args, {"input", "axis", "keep_dims"}, 1)
               : scan ? Binder(*this, fname, args, {"input", "axis", "combine_fn", "reverse"}, 3)
                      : Binder(*this, fname, args, {"input", "axis", "combine_fn", "keep_dims"}, 3);
    const SVal &in = p.get("input").val;
    bool single = in.kind != SVal::Kind::Tuple;
    std::vector<SVal> elems = single ? std::vector<SVal>{in} : in.elts;
    if (elems.empty())
      fail(p.loc("input"), fname + "() needs at least one input tensor");
    std::vector<ir::Value *> xs;
    for (size_t i = 0; i < elems.size(); ++i) {
      const SVal &e = elems[i];
      if (!e.isTensor() || !e.v->type.isTile())
        fail(p.loc("input"), fname + "() expects a tile or a tuple of tiles, got " +
                                 (single ? e.describe() : "element " + std::to_string(i) + " " + e.describe()));
      if (e.v->type.elem.isPointer())
        fail(p.loc("input"), fname + "() expects numbers, got " + e.v->type.str());
      if (e.v->type.shape != elems[0].v->type.shape)
        fail(p.loc("input"), fname + "() inputs must have one shape, got " + elems[0].v->type.str() + " and " +
                                 e.v->type.str());
      xs.push_back(e.v);
    }
    const ast::FunctionDef *combineFn = nullptr;
    if (orReduce) {
      if (!single)
        fail(p.loc("input"), "reduce_or() expects a tile, got a tuple");
      if (!ir::isInteger(xs[0]->type.dtype()))
        fail(p.loc("input"), "reduce_or only supported for integers and booleans, got " + xs[0]->type.str());
    } else if (!xorSum) {
      const SVal &f = p.get("combine_fn").val;
      if (f.kind != SVal::Kind::JitFn)
        fail(p.loc("combine_fn"), fname + "() combine_fn must be a @triton.jit function, got " + f.describe());
      combineFn = f.fn;
    } else if (!ir::isInteger(xs[0]->type.dtype())) {
      fail(p.loc("input"), "xor_sum only supported for integers, got " + xs[0]->type.str());
    }
    int rank = static_cast<int>(xs[0]->type.rank());
    const std::vector<int64_t> shape = xs[0]->type.shape;
    bool axisNone = !p.has("axis");
    if (axisNone && scan)
      fail(p.loc("axis"), "associative_scan() needs an integer axis");
    int axis = 0;
    if (axisNone) {
      // Triton reshapes every input to 1-D and reduces along 0.
      if (rank > 1)
        for (auto *&x : xs)
          x = b->create(ir::OpKind::Reshape, loc, {x}, {ir::Type(x->type.elem, {x->type.numElements()})})->result();
    } else {
      int64_t a = p.constInt("axis", 0);
      if (a < -rank || a >= rank)
        fail(p.loc("axis"), fname + "() axis " + std::to_string(a) + " is out of range for " + xs[0]->type.str());
      axis = static_cast<int>(a < 0 ? a + rank : a);
    }
    std::vector<ir::Value *> rs;
    if (xorSum || orReduce) {
      // Booleans are combined as int8 (0 / 1) and turned back into booleans.
      bool boolean = xs[0]->type.dtype() == DType::I1;
      ir::Value *in = boolean ? castTo(xs[0], ir::ScalarType{DType::I8}, loc) : xs[0];
      ir::Value *r = bitwiseReduce(in, axis, orReduce ? ir::OpKind::Or : ir::OpKind::Xor, loc);
      rs = {boolean ? castTo(r, ir::ScalarType{DType::I1}, loc) : r};
    } else {
      rs = combineOp(scan ? ir::OpKind::Scan : ir::OpKind::Reduce, xs, axis, combineFn,
                     scan && p.has("reverse") && truthy(p.get("reverse").val, p.loc("reverse")), loc);
    }
    if (!scan && p.has("keep_dims") && truthy(p.get("keep_dims").val, p.loc("keep_dims"))) {
      for (auto *&r : rs) {
        if (!axisNone) {
          r = expandDims(r, axis, loc);
          continue;
        }
        for (int d = 0; d < rank; ++d)
          r = expandDims(r, d, loc);
      }
    }
    if (single)
      return SVal::tensor(rs[0]);
    std::vector<SVal> out;
    for (ir::Value *r : rs)
      out.push_back(SVal::tensor(r));
    return SVal::tuple(out);
  }
  if (name == "tl.argmax" || name == "tl.argmin") {
    std::string fname = name.substr(3);
    Binder p(*this, fname, args, {"input", "axis", "tie_break_left", "keep_dims"}, 2);
    ir::Value *x = p.tensor("input");
    if (!x->type.isTile())
      fail(p.loc("input"), fname + "() expects a tile, got " + x->type.str());
    if (x->type.elem.isPointer())
      fail(p.loc("input"), fname + "() expects numbers, got " + x->type.str());
    int axis = indexAxis(*this, p, fname, x->type);
    (void)constBool(*this, p, fname, "tie_break_left"); // both give the left-most index (docs)
    bool keep = constBool(*this, p, fname, "keep_dims");
    ir::Value *index = reduceWithIndices(x, axis, fname == "argmax", loc).second;
    if (keep)
      index = expandDims(index, axis, loc);
    return SVal::tensor(index);
  }
  if (name == "tl.clamp") {
    Binder p(*this, "clamp", args, {"x", "min", "max", "propagate_nan"}, 3);
    // Triton converts all three to tensors (Python numbers take their literal types), promotes
    // bf16 to fp32, and then promotes the three like tensors of equal standing.
    std::vector<ir::Value *> v;
    DType t = DType::Invalid;
    for (const char *k : {"x", "min", "max"}) {
      ir::Value *e = p.tensor(k);
      if (e->type.elem.isPointer())
        fail(p.loc(k), std::string("clamp() argument '") + k + "' must be a number, got " + e->type.str());
      if (e->type.dtype() == DType::BF16)
        e = castTo(e, ir::ScalarType{DType::F32}, loc);
      DType d = e->type.dtype();
      if (t == DType::Invalid)
        t = d;
      else if (ir::isFloat(t) || ir::isFloat(d))
        t = (t == DType::F64 || d == DType::F64)   ? DType::F64
            : (t == DType::F32 || d == DType::F32) ? DType::F32
                                                   : DType::F16;
      else
        t = integerPromote(t, d);
      v.push_back(e);
    }
    if (!ir::isFloat(t))
      fail(p.loc("x"), std::string("clamp() supports floating-point values only, got ") + ir::name(t) +
                           " (cast with .to(tl.float32) first)");
    int64_t nan = p.has("propagate_nan") ? p.constInt("propagate_nan", 0) : 0;
    for (auto *&e : v)
      e = castTo(e, ir::ScalarType{t}, loc);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        if (i != j)
          broadcastPair(v[static_cast<size_t>(i)], v[static_cast<size_t>(j)], loc);
    ir::Value *r = b->binary(ir::OpKind::Min, loc, b->binary(ir::OpKind::Max, loc, v[0], v[1]), v[2]);
    if (nan != 0)
      r = propagateNan(r, v, loc);
    return SVal::tensor(r);
  }
  if (name == "tl.umulhi") {
    Binder p(*this, "umulhi", args, {"x", "y"}, 2);
    const Arg &xa = p.get("x"), &ya = p.get("y");
    SVal xv = xa.val;
    if (!xv.isTensor() && !ya.val.isTensor()) // two Python numbers: Triton makes tensors of both
      xv = SVal::tensor(p.tensor("x"));
    if (!xv.isTensor() && !xv.isNumber())
      fail(xa.loc, "umulhi() argument 'x' must be a tensor or a number, got " + xv.describe());
    if (!ya.val.isTensor() && !ya.val.isNumber())
      fail(ya.loc, "umulhi() argument 'y' must be a tensor or a number, got " + ya.val.describe());
    // Promoted as for `x * y`.
    SVal prod = binary(ast::BinaryOp::Mul, xv, ya.val, loc, xa.loc, ya.loc);
    ir::Op *mul = prod.v->def;
    DType t = prod.v->type.dtype();
    if (!ir::isInteger(t) || t == DType::I1 || (ir::bitWidth(t) != 32 && ir::bitWidth(t) != 64))
      fail(loc, std::string("umulhi() expects int32, uint32, int64 or uint64 operands, got ") + ir::name(t));
    if (!mul || mul->kind != ir::OpKind::Mul)
      fail(loc, "umulhi() operands could not be combined"); // not reached: tensors give a Mul
    mul->kind = ir::OpKind::UMulHi;
    return prod;
  }
  if (name == "tl.flip") {
    Binder p(*this, "flip", args, {"x", "dim"}, 1);
    ir::Value *x = p.tensor("x");
    if (!x->type.isTile())
      fail(p.loc("x"), "flip() expects a tile, got " + x->type.str());
    int rank = static_cast<int>(x->type.rank());
    int64_t d = rank - 1; // Triton: dim=None flips the last dim
    if (p.has("dim")) {
      d = p.constInt("dim", 0);
      if (d < -rank || d >= rank)
        fail(p.loc("dim"), "flip() dim " + std::to_string(d) + " is out of range for " + x->type.str());
      if (d < 0)
        d += rank;
    }
    if (x->type.shape[static_cast<size_t>(d)] == 1)
      return SVal::tensor(x);
    ir::Op *op = b->create(ir::OpKind::Flip, loc, {x}, {x->type});
    op->axis = static_cast<int>(d);
    return SVal::tensor(op->result());
  }
  if (name == "tl.ravel") {
    Binder p(*this, "ravel", args, {"x", "can_reorder"}, 1);
    ir::Value *x = p.tensor("x");
    if (!x->type.isTile())
      fail(p.loc("x"), "ravel() expects a tile, got " + x->type.str());
    if (x->type.rank() == 1)
      return SVal::tensor(x);
    ir::Type t(x->type.elem, {x->type.numElements()});
    return SVal::tensor(b->create(ir::OpKind::Reshape, loc, {x}, {t})->result());
  }
  if (name == "tl.interleave") {
    Binder p(*this, "interleave", args, {"a", "b"}, 2);
    CallArgs j{loc, {p.get("a"), p.get("b")}, {}};
    ir::Value *c = callBuiltin("tl.join", j).v;
    if (c->type.rank() == 1)
      return SVal::tensor(c); // two scalars: [a, b]
    auto shape = c->type.shape;
    shape.pop_back();
    shape.back() *= 2;
    return SVal::tensor(b->create(ir::OpKind::Reshape, loc, {c}, {ir::Type(c->type.elem, shape)})->result());
  }
  if (name == "tl.swizzle2d") {
    Binder p(*this, "swizzle2d", args, {"i", "j", "size_i", "size_j", "size_g"}, 5);
    using ast::BinaryOp;
    auto bin = [&](BinaryOp o, const SVal &x, const SVal &y) { return binary(o, x, y, loc, loc, loc); };
    const SVal &i = p.get("i").val, &j = p.get("j").val, &sizeI = p.get("size_i").val,
               &sizeJ = p.get("size_j").val;
    SVal sizeG = p.get("size_g").val;
    // Row-major index of (i, j); the groups hold size_g rows of size_j columns each.
    SVal ij = bin(BinaryOp::Add, bin(BinaryOp::Mul, i, sizeJ), j);
    SVal sizeGJ = bin(BinaryOp::Mul, sizeG, sizeJ);
    SVal group = bin(BinaryOp::FloorDiv, ij, sizeGJ);
    SVal offI = bin(BinaryOp::Mul, group, sizeG);
    // The last group may have fewer rows.
    SVal rows = bin(BinaryOp::Sub, sizeI, offI);
    if (rows.isConstexpr() && sizeG.isConstexpr() && rows.isNumber() && sizeG.isNumber()) {
      CallArgs mn{loc, {{loc, rows}, {loc, sizeG}}, {}};
      sizeG = callBuiltin("min", mn);
    } else {
      CallArgs mn{loc, {{loc, rows}, {loc, sizeG}}, {}};
      sizeG = callBuiltin("tl.minimum", mn);
    }
    SVal inGroup = bin(BinaryOp::Mod, ij, sizeGJ);
    SVal newI = bin(BinaryOp::Add, offI, bin(BinaryOp::Mod, inGroup, sizeG));
    SVal newJ = bin(BinaryOp::FloorDiv, inGroup, sizeG);
    return SVal::tuple({newI, newJ});
  }
  if (name == "tl.debug_barrier") {
    Binder p(*this, "debug_barrier", args, {}, 0);
    b->create(ir::OpKind::Barrier, loc, {}, {});
    return SVal::none();
  }
  if (name == "tl.assume") {
    Binder p(*this, "assume", args, {"cond"}, 1);
    const Arg &c = p.get("cond");
    if (c.val.kind == SVal::Kind::Bool) {
      if (!c.val.i)
        fail(c.loc, "assume() condition is False at compile time");
      return SVal::none();
    }
    if (!c.val.isTensor() || c.val.v->type.dtype() != DType::I1)
      fail(c.loc, "assume() condition must be a boolean, got " +
                      (c.val.isTensor() ? c.val.v->type.str() : c.val.describe()));
    return SVal::none(); // a hint only: nothing is emitted
  }
  return std::nullopt;
}

} // namespace tle::sema
