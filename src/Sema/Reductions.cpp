// Reduction and scan builtins: tl.sum/max/min (with indices), argmax/argmin, cumsum/cumprod,
// tl.reduce and tl.associative_scan with @jit combine functions, xor_sum, reduce_or, histogram and
// softmax.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>

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

} // namespace

bool constBool(Specializer &S, const Binder &p, const std::string &fname, const std::string &k) {
  if (!p.has(k))
    return false;
  const Arg &a = p.get(k);
  if (!a.val.isConstexpr())
    S.fail(a.loc, fname + "() argument '" + k + "' must be a compile-time bool, got " + a.val.describe());
  return S.truthy(a.val, a.loc);
}

bool strictBool(Specializer &S, const Binder &p, const std::string &fname, const std::string &k) {
  if (!p.has(k))
    return false;
  const Arg &a = p.get(k);
  if (a.val.kind != SVal::Kind::Bool)
    S.fail(a.loc, fname + "() argument '" + k + "' must be a compile-time bool (True or False), got " + a.val.describe());
  return a.val.i != 0;
}

namespace {

SVal sumMaxMin(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("input");
  if (!x->type.isTile())
    S.fail(p.loc("input"), c.fname + "() expects a tile, got " + x->type.str());
  if (p.has("return_indices") && S.truthy(p.get("return_indices").val, p.loc("return_indices"))) {
    // Triton: an integer axis is required (axis=None is accepted for 1-D tiles); the value keeps
    // the input dtype; return_indices_tie_break_left=False may give any index of a tie (TLE:
    // the left-most, as with True).
    if (name == "tl.sum")
      S.fail(p.loc("return_indices"), "sum() got an unexpected keyword argument 'return_indices'");
    if (x->type.elem.isPointer())
      S.fail(p.loc("input"), c.fname + "() expects numbers, got " + x->type.str());
    int rank = static_cast<int>(x->type.rank());
    int axis = 0;
    if (p.has("axis")) {
      int64_t a = p.constInt("axis", 0);
      if (a < -rank || a >= rank)
        S.fail(p.loc("axis"), c.fname + "() axis " + std::to_string(a) + " is out of range for " + x->type.str());
      axis = static_cast<int>(a < 0 ? a + rank : a);
    } else if (rank != 1) {
      S.fail(loc, c.fname + "(return_indices=True) needs an axis for a tile of rank " + std::to_string(rank));
    }
    auto [value, index] = S.reduceWithIndices(x, axis, name == "tl.max", loc);
    if (p.has("keep_dims") && S.truthy(p.get("keep_dims").val, p.loc("keep_dims"))) {
      value = S.expandDims(value, axis, loc);
      index = S.expandDims(index, axis, loc);
    }
    return SVal::tuple({SVal::tensor(value), SVal::tensor(index)});
  }
  ir::ReduceKind k = name == "tl.sum" ? ir::ReduceKind::Sum : name == "tl.max" ? ir::ReduceKind::Max : ir::ReduceKind::Min;
  if (k != ir::ReduceKind::Sum && ir::bitWidth(x->type.dtype()) < 32) {
    // Triton's max/min reduce sub-32-bit floats in fp32 and sub-32-bit integers in int32.
    x = S.castTo(x, ir::ScalarType{ir::isFloat(x->type.dtype()) ? DType::F32 : DType::I32}, loc);
  }
  if (k == ir::ReduceKind::Sum) {
    if (p.has("dtype")) {
      x = S.castTo(x, p.dtype("dtype"), loc);
    } else {
      DType t = x->type.dtype();
      // Triton: sums of narrow integers accumulate in 32 bits.
      if (ir::isInteger(t) && ir::bitWidth(t) < 32)
        x = S.castTo(x, ir::ScalarType{ir::isSigned(t) ? DType::I32 : DType::U32}, loc);
    }
  }
  bool keep = p.has("keep_dims") && S.truthy(p.get("keep_dims").val, p.loc("keep_dims"));
  std::vector<int> axes;
  int rank = static_cast<int>(x->type.rank());
  if (!p.has("axis")) {
    for (int a = rank - 1; a >= 0; --a)
      axes.push_back(a);
  } else {
    int64_t a = p.constInt("axis", 0);
    if (a < -rank || a >= rank)
      S.fail(p.loc("axis"), c.fname + "() axis " + std::to_string(a) + " is out of range for " + x->type.str());
    axes.push_back(static_cast<int>(a < 0 ? a + rank : a));
  }
  for (int a : axes)
    x = S.reduce(x, a, k, loc);
  if (keep) {
    std::sort(axes.begin(), axes.end());
    for (int a : axes)
      x = S.expandDims(x, a, loc);
  }
  return SVal::tensor(x);
}

SVal cumulative(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("input");
  if (!x->type.isTile())
    S.fail(p.loc("input"), c.fname + "() expects a tile, got " + x->type.str());
  int rank = static_cast<int>(x->type.rank());
  int64_t axis = p.constInt("axis", 0);
  if (axis < -rank || axis >= rank)
    S.fail(p.loc("axis"), c.fname + "() axis " + std::to_string(axis) + " is out of range for " + x->type.str());
  if (p.has("dtype")) {
    x = S.castTo(x, p.dtype("dtype"), loc);
  } else {
    DType t = x->type.dtype();
    // Triton: bf16 scans run in fp32; cumsum (not cumprod) runs narrow integers in 32 bits.
    if (t == DType::BF16 || ir::isFP8(t))
      x = S.castTo(x, ir::ScalarType{DType::F32}, loc);
    else if (name == "tl.cumsum" && ir::isInteger(t) && ir::bitWidth(t) < 32)
      x = S.castTo(x, ir::ScalarType{ir::isSigned(t) ? DType::I32 : DType::U32}, loc);
  }
  ir::Op *op = S.b->create(ir::OpKind::Scan, loc, {x}, {x->type});
  op->setAxis(static_cast<int>(axis < 0 ? axis + rank : axis));
  op->setReduceKind(name == "tl.cumsum" ? ir::ReduceKind::Sum : ir::ReduceKind::Prod);
  op->setReverse(p.has("reverse") && S.truthy(p.get("reverse").val, p.loc("reverse")));
  return SVal::tensor(op->result());
}

SVal softmax(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  // Triton 3.6's standard.softmax, quirks included: dim defaults to 0, and max/sum keep
  // keep_dims, so z = x - max(x, dim) broadcasts the reduced tile against x as NumPy does.
  const Arg &x = p.get("x");
  SVal dim = p.has("dim") && p.get("dim").val.kind != SVal::Kind::None ? SVal::integer(p.constInt("dim", 0))
                                                                        : SVal::integer(0);
  SVal keep = SVal::boolean(p.has("keep_dims") && S.truthy(p.get("keep_dims").val, p.loc("keep_dims")));
  SVal ieee = SVal::boolean(p.has("ieee_rounding") && S.truthy(p.get("ieee_rounding").val, p.loc("ieee_rounding")));
  auto call = [&](const char *fn, std::vector<SVal> pos, bool withKeep) {
    CallArgs a{loc, {}, {}};
    for (SVal &v : pos)
      a.pos.push_back(Arg{x.loc, v});
    if (withKeep)
      a.kw.push_back({"keep_dims", Arg{loc, keep}});
    return S.callBuiltin(fn, a);
  };
  SVal z = S.binary(ast::BinaryOp::Sub, x.val, call("tl.max", {x.val, dim}, true), loc, x.loc, loc);
  SVal num = call("tl.exp", {z}, false);
  return call("tl.fdiv", {num, call("tl.sum", {num, dim}, true), ieee}, false);
}

SVal histogram(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  // Triton 3.6: histogram(input, num_bins, mask=None): int32 counts of the values 0 ..
  // num_bins - 1 in a 1-D integer tile; TLE: values outside that range, and masked-off
  // elements, are not counted.
  ir::Value *x = p.tensor("input");
  if (!x->type.isTile() || x->type.rank() != 1 || !ir::isInteger(x->type.dtype()) || x->type.dtype() == DType::I1)
    S.fail(p.loc("input"), "histogram() expects a 1-D integer tile, got " + x->type.str());
  int64_t bins = p.constInt("num_bins", 0);
  if (bins < 1 || (bins & (bins - 1)))
    S.fail(p.loc("num_bins"), "histogram() num_bins must be a power of two, got " + std::to_string(bins));
  int64_t n = x->type.shape[0];
  if (std::string why = ir::tileLimitError({bins}); !why.empty())
    S.fail(p.loc("num_bins"), "histogram() of " + std::to_string(bins) + " bins is a tile of " + why);
  ir::Value *m = nullptr;
  if (p.has("mask")) {
    m = p.tensor("mask");
    if (m->type.dtype() != DType::I1)
      S.fail(p.loc("mask"), "histogram() mask must be boolean, got " + m->type.str());
    if (m->type.isTile() && m->type.shape != x->type.shape)
      S.fail(p.loc("mask"), "histogram() mask must have the input's shape " + x->type.str() + ", got " + m->type.str());
  }
  // A histogram op, which lower-histograms rewrites (transforms::lowerHistograms): comparisons
  // of each value with each bin for small inputs; larger ones shared-memory atomics on the GPU
  // and a counting loop in the CPU backend.
  if (std::string why = ir::tileLimitError({n, 1}); !why.empty())
    S.fail(loc, "histogram() of " + std::to_string(n) + " values compares them with each bin at once ([" +
                    std::to_string(n) + ", 1]), which has " + why);
  std::vector<ir::Value *> ops = {x};
  if (m)
    ops.push_back(m);
  return SVal::tensor(S.b->create(ir::OpKind::Histogram, loc, ops, {ir::Type(ir::ScalarType{DType::I32}, {bins})})->result());
}

SVal reduceWithCombine(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  // Triton 3.6: reduce(input, axis, combine_fn, keep_dims=False),
  // associative_scan(input, axis, combine_fn, reverse=False), xor_sum(input, axis=None,
  // keep_dims=False) (a reduce with `^`, integers only), reduce_or(input, axis,
  // keep_dims=False) (with `|`, integers and booleans). `input` is a tensor or a tuple of
  // tensors of one shape; a tuple gives a tuple.
  const std::string &fname = c.fname;
  bool scan = name == "tl.associative_scan", xorSum = name == "tl.xor_sum", orReduce = name == "tl.reduce_or";
  const SVal &in = p.get("input").val;
  bool single = in.kind != SVal::Kind::Tuple;
  std::vector<SVal> elems = single ? std::vector<SVal>{in} : in.elts;
  if (elems.empty())
    S.fail(p.loc("input"), fname + "() needs at least one input tensor");
  std::vector<ir::Value *> xs;
  for (size_t i = 0; i < elems.size(); ++i) {
    const SVal &e = elems[i];
    if (!e.isTensor() || !e.v->type.isTile())
      S.fail(p.loc("input"), fname + "() expects a tile or a tuple of tiles, got " +
                               (single ? e.describe() : "element " + std::to_string(i) + " " + e.describe()));
    if (e.v->type.elem.isPointer())
      S.fail(p.loc("input"), fname + "() expects numbers, got " + e.v->type.str());
    if (e.v->type.shape != elems[0].v->type.shape)
      S.fail(p.loc("input"), fname + "() inputs must have one shape, got " + elems[0].v->type.str() + " and " +
                               e.v->type.str());
    xs.push_back(e.v);
  }
  SVal combineFn;
  if (orReduce) {
    if (!single)
      S.fail(p.loc("input"), "reduce_or() expects a tile, got a tuple");
    if (!ir::isInteger(xs[0]->type.dtype()))
      S.fail(p.loc("input"), "reduce_or only supported for integers and booleans, got " + xs[0]->type.str());
  } else if (!xorSum) {
    const SVal &f = p.get("combine_fn").val;
    // A @jit function, or a language function such as tl.maximum or standard._sum_combine.
    if (f.kind != SVal::Kind::JitFn && !(f.kind == SVal::Kind::Builtin && findBuiltin(f.s)))
      S.fail(p.loc("combine_fn"), fname + "() combine_fn must be a @triton.jit function, got " + f.describe());
    combineFn = f;
  } else if (!ir::isInteger(xs[0]->type.dtype())) {
    S.fail(p.loc("input"), "xor_sum only supported for integers, got " + xs[0]->type.str());
  }
  int rank = static_cast<int>(xs[0]->type.rank());
  const std::vector<int64_t> shape = xs[0]->type.shape;
  bool axisNone = !p.has("axis");
  if (axisNone && scan)
    S.fail(p.loc("axis"), "associative_scan() needs an integer axis");
  int axis = 0;
  if (axisNone) {
    // Triton reshapes every input to 1-D and reduces along 0.
    if (rank > 1)
      for (auto *&x : xs)
        x = S.b->create(ir::OpKind::Reshape, loc, {x}, {ir::Type(x->type.elem, {x->type.numElements()})})->result();
  } else {
    int64_t a = p.constInt("axis", 0);
    if (a < -rank || a >= rank)
      S.fail(p.loc("axis"), fname + "() axis " + std::to_string(a) + " is out of range for " + xs[0]->type.str());
    axis = static_cast<int>(a < 0 ? a + rank : a);
  }
  std::vector<ir::Value *> rs;
  if (xorSum || orReduce) {
    // Booleans are combined as int8 (0 / 1) and turned back into booleans.
    bool boolean = xs[0]->type.dtype() == DType::I1;
    ir::Value *in = boolean ? S.castTo(xs[0], ir::ScalarType{DType::I8}, loc) : xs[0];
    ir::Value *r = S.bitwiseReduce(in, axis, orReduce ? ir::OpKind::Or : ir::OpKind::Xor, loc);
    rs = {boolean ? S.castTo(r, ir::ScalarType{DType::I1}, loc) : r};
  } else {
    rs = S.combineOp(scan ? ir::OpKind::Scan : ir::OpKind::Reduce, xs, axis, combineFn,
                   scan && p.has("reverse") && S.truthy(p.get("reverse").val, p.loc("reverse")), loc);
  }
  if (!scan && p.has("keep_dims") && S.truthy(p.get("keep_dims").val, p.loc("keep_dims"))) {
    for (auto *&r : rs) {
      if (!axisNone) {
        r = S.expandDims(r, axis, loc);
        continue;
      }
      for (int d = 0; d < rank; ++d)
        r = S.expandDims(r, d, loc);
    }
  }
  if (single)
    return SVal::tensor(rs[0]);
  std::vector<SVal> out;
  for (ir::Value *r : rs)
    out.push_back(SVal::tensor(r));
  return SVal::tuple(out);
}

SVal argmax(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const std::string &fname = c.fname;
  ir::Value *x = p.tensor("input");
  if (!x->type.isTile())
    S.fail(p.loc("input"), fname + "() expects a tile, got " + x->type.str());
  if (x->type.elem.isPointer())
    S.fail(p.loc("input"), fname + "() expects numbers, got " + x->type.str());
  int axis = indexAxis(S, p, fname, x->type);
  (void)constBool(S, p, fname, "tie_break_left"); // both give the left-most index (docs)
  bool keep = constBool(S, p, fname, "keep_dims");
  ir::Value *index = S.reduceWithIndices(x, axis, fname == "argmax", loc).second;
  if (keep)
    index = S.expandDims(index, axis, loc);
  return SVal::tensor(index);
}

} // namespace

std::vector<BuiltinSpec> reduceBuiltins() {
  const char *reduceSig = "input, axis=None, keep_dims=False, dtype=None, return_indices=False, "
                          "return_indices_tie_break_left=True, propagate_nan=tl.PropagateNan.NONE";
  return {
      {"tl.sum", reduceSig, sumMaxMin, kTensorMethod},
      {"tl.max", reduceSig, sumMaxMin, kTensorMethod},
      {"tl.min", reduceSig, sumMaxMin, kTensorMethod},
      {"tl.argmax", "input, axis, tie_break_left=True, keep_dims=False", argmax, kTensorMethod},
      {"tl.argmin", "input, axis, tie_break_left=True, keep_dims=False", argmax, kTensorMethod},
      {"tl.cumsum", "input, axis=0, reverse=False, dtype=None", cumulative, kTensorMethod},
      {"tl.cumprod", "input, axis=0, reverse=False, dtype=None", cumulative, kTensorMethod},
      {"tl.reduce", "input, axis, combine_fn, keep_dims=False", reduceWithCombine, kTensorMethod},
      {"tl.associative_scan", "input, axis, combine_fn, reverse=False", reduceWithCombine, kTensorMethod},
      {"tl.xor_sum", "input, axis=None, keep_dims=False", reduceWithCombine, kTensorMethod},
      {"tl.reduce_or", "input, axis, keep_dims=False", reduceWithCombine, kTensorMethod},
      {"tl.histogram", "input, num_bins, mask=None", histogram, kTensorMethod},
      {"tl.softmax", "x, dim=None, keep_dims=False, ieee_rounding=False", softmax, kTensorMethod},
  };
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
  ar->setArangeBounds(0, n);
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
  op->setAxis(axis);
  op->setReduceKind(ir::ReduceKind::Combine);
  op->regions.push_back(std::make_unique<ir::Block>());
  ir::Block *region = op->regions[0].get();
  region->parent = op;
  ir::Value *a = region->addArg(ir::Type(x->type.elem), "a0");
  ir::Value *c = region->addArg(ir::Type(x->type.elem), "b0");
  ir::Builder rb(region);
  rb.create(ir::OpKind::Yield, loc, {rb.binary(combine, loc, a, c)}, {});
  return op->result();
}

std::vector<ir::Value *> Specializer::combineOp(ir::OpKind kind, const std::vector<ir::Value *> &inputs, int axis,
                                                const SVal &combineFn, bool reverse, SourceLoc loc) {
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
  op->setAxis(axis);
  op->setReduceKind(ir::ReduceKind::Combine);
  if (kind == ir::OpKind::Scan)
    op->setReverse(reverse);
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
  SVal r = combineFn.kind == SVal::Kind::JitFn ? callJit(combineFn.fn, call) : callBuiltin(combineFn.s, call);
  std::vector<SVal> outs = r.kind == SVal::Kind::Tuple ? r.elts : std::vector<SVal>{r};
  std::string who = std::string(fname) + "() combine_fn '" +
                    (combineFn.kind == SVal::Kind::JitFn ? combineFn.fn->name : combineFn.s) + "'";
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
  // Values the combine computes but does not use go first (Inductor's promote_to_tensor builds
  // `x + tl.zeros((1,), tl.int1)` only to read its dtype, as Triton's tracing allows).
  {
    std::map<const ir::Value *, unsigned> uses;
    for (ir::Value *y : yields)
      ++uses[y];
    ir::walk(*region, [&](ir::Op &o) {
      for (ir::Value *v : o.operands)
        ++uses[v];
    });
    for (auto it = region->ops.end(); it != region->ops.begin();) {
      --it;
      ir::Op &o = **it;
      bool dead = !o.results.empty() && o.regions.empty() &&
                  (ir::isElementwise(o.kind) || o.kind == ir::OpKind::Splat || o.kind == ir::OpKind::Broadcast ||
                   o.kind == ir::OpKind::Arange || o.kind == ir::OpKind::ExpandDims || o.kind == ir::OpKind::Reshape ||
                   o.kind == ir::OpKind::Constant);
      for (auto &r : o.results)
        dead = dead && uses[r.get()] == 0;
      if (!dead)
        continue;
      for (ir::Value *v : o.operands)
        --uses[v];
      it = region->ops.erase(it);
    }
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

} // namespace tle::sema
