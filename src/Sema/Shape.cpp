// Shape builtins: tile creation (tl.arange, zeros, full, zeros_like), broadcasting,
// expand_dims, trans/permute, reshape/view, cat/join/split/interleave, flip, ravel and gather.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>
#include <limits>

namespace tle::sema {

using ir::DType;

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


namespace {

SVal arange(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  int64_t start = p.constInt("start", 0), end = p.constInt("end", 0);
  if (end <= start)
    S.fail(loc, "arange() needs end > start, got arange(" + std::to_string(start) + ", " + std::to_string(end) + ")");
  // end - start in unsigned arithmetic: it can exceed INT64_MAX.
  uint64_t len = uint64_t(end) - uint64_t(start);
  if (len & (len - 1))
    S.fail(loc, "arange() range length must be a power of two, got " + std::to_string(len) + " (end - start = " +
                  std::to_string(end) + " - " + std::to_string(start) + ")");
  if (len > uint64_t(ir::kMaxTileElements))
    S.fail(loc, "arange() of " + std::to_string(len) + " elements exceeds the tile limit of " +
                  std::to_string(ir::kMaxTileElements));
  int64_t n = int64_t(len);
  if (start < std::numeric_limits<int32_t>::min() || end > int64_t(std::numeric_limits<int32_t>::max()) + 1)
    S.fail(loc, "arange() bounds must fit in int32");
  ir::Op *op = S.b->create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {n})});
  op->setArangeBounds(start, end);
  return SVal::tensor(op->result());
}

SVal zerosFull(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  bool full = name == "tl.full";
  auto shape = shapeArg(S, p.get("shape"), c.fname);
  ir::ScalarType t = p.dtype("dtype");
  if (t.isPointer())
    S.fail(p.loc("dtype"), c.fname + "() of a pointer dtype is not supported");
  SVal v = full ? p.get("value").val : SVal::integer(0);
  ir::Value *s;
  if (full && v.isTensor()) {
    if (!v.v->type.isScalar())
      S.fail(p.loc("value"), "full() value must be a scalar, got " + v.describe());
    s = S.castTo(v.v, t, loc);
  } else {
    if (full && !v.isNumber())
      S.fail(p.loc("value"), "full() value must be a number or a scalar, got " + v.describe());
    s = S.toTensorOfType(v, t.dtype, loc);
  }
  // An empty shape is a 0-d tensor, i.e. a scalar (Triton's semantic.full returns the constant).
  return SVal::tensor(shape.empty() ? s : S.b->splat(loc, s, shape));
}

SVal zerosLike(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *in = p.tensor("input");
  ir::Value *z = S.toTensorOfType(SVal::integer(0), in->type.dtype(), loc);
  return SVal::tensor(in->type.isTile() ? S.b->splat(loc, z, in->type.shape) : z);
}

SVal expandDimsBuiltin(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  // Triton 3.6: expand_dims(input, axis) with an int or a sequence of ints; each axis is a
  // position in the result (negative ones count from its end), inserted in increasing order.
  ir::Value *x = p.tensor("input");
  const SVal &av = p.get("axis").val;
  if (av.kind != SVal::Kind::Tuple)
    return SVal::tensor(S.expandDims(x, static_cast<int>(p.constInt("axis", 0)), p.loc("axis")));
  const int64_t rank = static_cast<int64_t>(x->type.rank() + av.elts.size());
  std::vector<int64_t> axes;
  for (const SVal &e : av.elts) {
    if (e.kind != SVal::Kind::Int)
      S.fail(p.loc("axis"), "expand_dims() axes must be compile-time integers, got " + e.describe());
    if (e.i < -rank || e.i >= rank)
      S.fail(p.loc("axis"), "expand_dims() axis " + std::to_string(e.i) + " is out of range for a result of rank " +
                              std::to_string(rank) + " (" + x->type.str() + " with " + std::to_string(av.elts.size()) +
                              " new dims)");
    int64_t a = e.i < 0 ? e.i + rank : e.i;
    if (std::find(axes.begin(), axes.end(), a) != axes.end())
      S.fail(p.loc("axis"), "expand_dims() got axis " + std::to_string(a) + " twice");
    axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  for (int64_t a : axes)
    x = S.expandDims(x, static_cast<int>(a), p.loc("axis"));
  return SVal::tensor(x);
}

SVal broadcast(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  // Triton 3.6: broadcast(input, other) -> both broadcast to their common shape.
  ir::Value *x = p.tensor("input"), *y = p.tensor("other");
  S.broadcastPair(x, y, loc);
  return SVal::tuple({SVal::tensor(x), SVal::tensor(y)});
}

SVal broadcastToBuiltin(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  return SVal::tensor(S.broadcastTo(p.tensor("input"), shapeArg(S, p.get("shape"), "broadcast_to"), loc));
}

SVal transPermute(Specializer &S, const BuiltinCall &c) {
  CallArgs &args = c.args;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  if (args.pos.empty())
    S.fail(loc, c.fname + "() expects a tile");
  ir::Value *x = S.toTensor(args.pos[0].val, args.pos[0].loc);
  if (!x->type.isTile())
    S.fail(args.pos[0].loc, c.fname + "() expects a tile, got " + x->type.str());
  int rank = static_cast<int>(x->type.rank());
  std::vector<int64_t> order;
  std::vector<Arg> dims(args.pos.begin() + 1, args.pos.end());
  for (auto &[k, v] : args.kw) {
    if (k != "dims")
      S.fail(v.loc, c.fname + "() got an unexpected keyword argument '" + k + "'");
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
      S.fail(loc, "permute() needs the new order of the dims");
    if (rank != 2)
      S.fail(loc, "trans() without dims needs a 2-D tile, got " + x->type.str());
    order = {1, 0};
  }
  std::vector<int64_t> shape;
  std::vector<bool> seen(rank, false);
  for (int64_t d : order) {
    if (d < 0 || d >= rank || seen[d])
      S.fail(loc, c.fname + "() order must be a permutation of 0.." + std::to_string(rank - 1));
    seen[d] = true;
    shape.push_back(x->type.shape[d]);
  }
  if (order.size() != size_t(rank))
    S.fail(loc, c.fname + "() order must name all " + std::to_string(rank) + " dims");
  ir::Op *op = S.b->create(ir::OpKind::Permute, loc, {x}, {ir::Type(x->type.elem, shape)});
  op->setPermutation(order);
  return SVal::tensor(op->result());
}

SVal reshape(Specializer &S, const BuiltinCall &c) {
  CallArgs &args = c.args;
  SourceLoc loc = c.loc;
  if (args.pos.empty())
    S.fail(loc, c.fname + "() expects a tile and a shape");
  ir::Value *x = S.toTensor(args.pos[0].val, args.pos[0].loc);
  std::vector<Arg> dims(args.pos.begin() + 1, args.pos.end());
  for (auto &[k, v] : args.kw) {
    if (k == "shape")
      dims.push_back(v);
    else if (k != "can_reorder")
      S.fail(v.loc, c.fname + "() got an unexpected keyword argument '" + k + "'");
  }
  std::vector<int64_t> shape;
  if (dims.size() == 1 && dims[0].val.kind == SVal::Kind::Tuple)
    shape = shapeArg(S, dims[0], c.fname);
  else
    for (auto &d : dims)
      shape.push_back(shapeArg(S, d, c.fname)[0]);
  if (shape.empty())
    S.fail(loc, c.fname + "() to an empty shape is not supported (Triton forbids 0-d tiles); keep the "
                          "one-element tile or reduce it (tl.max(x, 0))");
  ir::Type t(x->type.elem, shape);
  if (t.numElements() != x->type.numElements())
    S.fail(loc, c.fname + "() cannot change the number of elements: " + x->type.str() + " to " + t.str());
  if (shape == x->type.shape)
    return SVal::tensor(x);
  if (x->type.isScalar()) // a 0-d value (tl.full((), v, dtype)) as a one-element tile: a splat
    return SVal::tensor(S.b->splat(loc, x, shape));
  return SVal::tensor(S.b->create(ir::OpKind::Reshape, loc, {x}, {t})->result());
}

SVal catJoin(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  CallArgs &args = c.args;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  ir::Value *x = S.toTensor(args.pos.size() > 0 ? args.pos[0].val : p.get(name == "tl.cat" ? "input" : "a").val, loc);
  ir::Value *y = S.toTensor(args.pos.size() > 1 ? args.pos[1].val : p.get(name == "tl.cat" ? "other" : "b").val, loc);
  if (x->type.elem != y->type.elem)
    S.fail(loc, c.fname + "() operands must have the same dtype, got " + x->type.str() + " and " + y->type.str());
  if (name == "tl.cat") {
    if (!x->type.isTile() || x->type.shape != y->type.shape)
      S.fail(loc, "cat() needs two tiles of the same shape, got " + x->type.str() + " and " + y->type.str());
    auto shape = x->type.shape;
    shape[0] *= 2;
    if (std::string why = ir::tileLimitError(shape); !why.empty())
      S.fail(loc, "cat() result " + ir::Type(x->type.elem, shape).str() + " has " + why);
    return SVal::tensor(S.b->create(ir::OpKind::Cat, loc, {x, y}, {ir::Type(x->type.elem, shape)})->result());
  }
  S.broadcastPair(x, y, loc);
  if (x->type.isScalar()) {
    // Two scalars give a 2-element tile: joined as [1] tiles (the backends' Join takes tiles)
    // and reshaped.
    ir::Value *j = S.b->create(ir::OpKind::Join, loc, {S.b->splat(loc, x, {1}), S.b->splat(loc, y, {1})},
                             {ir::Type(x->type.elem, {1, 2})})->result();
    return SVal::tensor(S.b->create(ir::OpKind::Reshape, loc, {j}, {ir::Type(x->type.elem, {2})})->result());
  }
  auto shape = x->type.shape;
  shape.push_back(2);
  if (std::string why = ir::tileLimitError(shape); !why.empty())
    S.fail(loc, "join() result " + ir::Type(x->type.elem, shape).str() + " has " + why);
  return SVal::tensor(S.b->create(ir::OpKind::Join, loc, {x, y}, {ir::Type(x->type.elem, shape)})->result());
}

SVal split(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("a");
  if (!x->type.isTile() || x->type.shape.back() != 2)
    S.fail(p.loc("a"), "split() needs a tile whose last dim is 2, got " + x->type.str());
  auto shape = x->type.shape;
  shape.pop_back();
  ir::Type t(x->type.elem, shape);
  if (shape.empty())
    S.fail(p.loc("a"), "split() of a 2-element tile into scalars is not supported yet");
  ir::Op *op = S.b->create(ir::OpKind::Split, loc, {x}, {t, t});
  return SVal::tuple({SVal::tensor(op->result(0)), SVal::tensor(op->result(1))});
}

SVal flip(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("x");
  if (!x->type.isTile())
    S.fail(p.loc("x"), "flip() expects a tile, got " + x->type.str());
  int rank = static_cast<int>(x->type.rank());
  int64_t d = rank - 1; // Triton: dim=None flips the last dim
  if (p.has("dim")) {
    d = p.constInt("dim", 0);
    if (d < -rank || d >= rank)
      S.fail(p.loc("dim"), "flip() dim " + std::to_string(d) + " is out of range for " + x->type.str());
    if (d < 0)
      d += rank;
  }
  if (x->type.shape[static_cast<size_t>(d)] == 1)
    return SVal::tensor(x);
  ir::Op *op = S.b->create(ir::OpKind::Flip, loc, {x}, {x->type});
  op->setAxis(static_cast<int>(d));
  return SVal::tensor(op->result());
}

SVal ravel(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("x");
  if (!x->type.isTile())
    S.fail(p.loc("x"), "ravel() expects a tile, got " + x->type.str());
  if (x->type.rank() == 1)
    return SVal::tensor(x);
  ir::Type t(x->type.elem, {x->type.numElements()});
  return SVal::tensor(S.b->create(ir::OpKind::Reshape, loc, {x}, {t})->result());
}

SVal interleave(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  CallArgs j{loc, {p.get("a"), p.get("b")}, {}};
  ir::Value *joined = S.callBuiltin("tl.join", j).v;
  if (joined->type.rank() == 1)
    return SVal::tensor(joined); // two scalars: [a, b]
  auto shape = joined->type.shape;
  shape.pop_back();
  shape.back() *= 2;
  return SVal::tensor(S.b->create(ir::OpKind::Reshape, loc, {joined}, {ir::Type(joined->type.elem, shape)})->result());
}

SVal gather(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  // Triton 3.6: gather(src, index, axis): result[.., i, ..] = src[.., index[.., i, ..], ..] along
  // `axis`; src and index have one rank and equal sizes except along `axis`; the result has
  // index's shape and src's dtype. One tile IR `gather` op (OpKind::Gather), which also defines
  // an index outside [0, src.shape[axis]) to give 0 (Triton leaves it undefined).
  ir::Value *src = p.tensor("src"), *index = p.tensor("index");
  if (!src->type.isTile() || src->type.elem.isPointer())
    S.fail(p.loc("src"), "gather() expects a tile of numbers, got " + src->type.str());
  if (!index->type.isTile() || !ir::isInteger(index->type.dtype()) || index->type.dtype() == DType::I1)
    S.fail(p.loc("index"), "gather() index must be an integer tile, got " + index->type.str());
  int rank = static_cast<int>(src->type.rank());
  if (static_cast<int>(index->type.rank()) != rank)
    S.fail(p.loc("index"), "gather() index must have the rank of src " + src->type.str() + ", got " + index->type.str());
  int64_t a = p.constInt("axis", 0);
  if (a < -rank || a >= rank)
    S.fail(p.loc("axis"), "gather() axis " + std::to_string(a) + " is out of range for " + src->type.str());
  int axis = static_cast<int>(a < 0 ? a + rank : a);
  for (int d = 0; d < rank; ++d)
    if (d != axis && src->type.shape[size_t(d)] != index->type.shape[size_t(d)])
      S.fail(p.loc("index"), "gather() index " + index->type.str() + " and src " + src->type.str() +
                               " must have equal sizes outside axis " + std::to_string(axis));
  ir::Op *g = S.b->create(ir::OpKind::Gather, c.loc, {src, index}, {ir::Type(src->type.elem, index->type.shape)});
  g->setAxis(axis);
  return SVal::tensor(g->result());
}

} // namespace

std::vector<BuiltinSpec> shapeBuiltins() {
  return {
      {"tl.arange", "start, end", arange},
      {"tl.zeros", "shape, dtype", zerosFull},
      {"tl.full", "shape, value, dtype", zerosFull},
      {"tl.zeros_like", "input", zerosLike},
      {"tl.expand_dims", "input, axis", expandDimsBuiltin, kTensorMethod},
      {"tl.broadcast", "input, other", broadcast},
      {"tl.broadcast_to", "input, shape", broadcastToBuiltin, kTensorMethod},
      {"tl.trans", "input, *dims", transPermute, kTensorMethod},
      {"tl.permute", "input, *dims", transPermute, kTensorMethod},
      {"tl.reshape", "input, *shape, can_reorder=False", reshape, kTensorMethod},
      {"tl.view", "input, *shape, can_reorder=False", reshape, kTensorMethod},
      {"tl.cat", "input, other, can_reorder=False", catJoin},
      {"tl.join", "a, b", catJoin},
      {"tl.split", "a", split, kTensorMethod},
      {"tl.interleave", "a, b", interleave},
      {"tl.flip", "x, dim=None", flip, kTensorMethod},
      {"tl.ravel", "x, can_reorder=False", ravel, kTensorMethod},
      {"tl.gather", "src, index, axis", gather, kTensorMethod},
  };
}

} // namespace tle::sema
