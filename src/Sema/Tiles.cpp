// TLE-Lite's tile slicing and exclusive scan (FlagTree's names and rules): tle.extract_tile,
// tle.insert_tile and tle.cumsum. docs/language.md "Tile slicing" states the rules; this file
// checks them and builds the tile IR.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

using ir::DType;
using ir::OpKind;

namespace {

/// A list of compile-time ints (or one int for a rank-1 tile), for tile_shape and strides.
std::vector<int64_t> intList(Specializer &S, const Arg &a, const std::string &fname, const std::string &what) {
  std::vector<int64_t> out;
  if (a.val.kind == SVal::Kind::Int)
    return {a.val.i};
  if (a.val.kind != SVal::Kind::Tuple)
    S.fail(a.loc, fname + "() " + what + " must be a list of compile-time integers, got " + a.val.describe());
  for (const SVal &e : a.val.elts) {
    if (e.kind != SVal::Kind::Int)
      S.fail(a.loc, fname + "() " + what + " must hold compile-time integers, got " + e.describe());
    out.push_back(e.i);
  }
  return out;
}

/// The source tile argument `k` of extract_tile / insert_tile.
ir::Value *sourceTile(Specializer &S, const Binder &p, const std::string &fname, const std::string &k) {
  const Arg &a = p.get(k);
  if (!a.val.isTensor() || !a.val.v->type.isTile())
    S.fail(a.loc, fname + "() " + k + " must be a tile, got " + a.val.describe());
  return a.val.v;
}

/// Checks the windows (shape `tile`, strides) against the source and returns the explicit strides
/// (empty when not given).
std::vector<int64_t> windowStrides(Specializer &S, const Binder &p, const std::string &fname, const ir::Type &src,
                                   const std::vector<int64_t> &tile, SourceLoc tileLoc) {
  std::vector<int64_t> strides;
  if (p.has("strides"))
    strides = intList(S, p.get("strides"), fname, "strides");
  if (tile.size() != src.rank())
    S.fail(tileLoc, fname + "() needs a tile shape of the source's rank " + std::to_string(src.rank()) + " (" +
                        src.str() + "), got rank " + std::to_string(tile.size()));
  if (!strides.empty() && strides.size() != src.rank())
    S.fail(p.loc("strides"), fname + "() needs one stride per dim of " + src.str() + ", got " +
                                 std::to_string(strides.size()));
  for (size_t d = 0; d < tile.size(); ++d) {
    if (tile[d] < 1 || tile[d] > src.shape[d])
      S.fail(tileLoc, fname + "() tile extent " + std::to_string(tile[d]) + " along dim " + std::to_string(d) +
                          " does not fit the source's " + std::to_string(src.shape[d]) + " (" + src.str() + ")");
    int64_t s = strides.empty() ? tile[d] : strides[d];
    if (s < 1)
      S.fail(p.loc("strides"), fname + "() stride " + std::to_string(s) + " along dim " + std::to_string(d) +
                                   " must be positive");
    if ((src.shape[d] - tile[d]) % s != 0)
      S.fail(strides.empty() ? tileLoc : p.loc("strides"),
             fname + "() " + (strides.empty() ? "tile extent " + std::to_string(tile[d]) + " does not divide "
                                              : "stride " + std::to_string(s) + " does not divide ") +
                 (strides.empty() ? std::to_string(src.shape[d])
                                  : std::to_string(src.shape[d] - tile[d]) + " (source extent " +
                                        std::to_string(src.shape[d]) + " minus tile extent " + std::to_string(tile[d]) +
                                        ")") +
                 " along dim " + std::to_string(d));
  }
  return strides;
}

/// The window index as an i32 scalar, row-major over the grid `grid` of windows: a list with one
/// entry per dim (compile-time ints, i32 scalars, or a mix), one compile-time int (already
/// linear) or an integer scalar (linear, at run time). Compile-time entries out of range are
/// located errors.
ir::Value *windowIndex(Specializer &S, const Arg &a, const std::string &fname, const std::vector<int64_t> &grid,
                       SourceLoc loc) {
  int64_t count = 1;
  for (int64_t g : grid)
    count *= g;
  auto gridText = [&] {
    std::string t = "[";
    for (size_t d = 0; d < grid.size(); ++d)
      t += (d ? ", " : "") + std::to_string(grid[d]);
    return t + "]";
  };
  auto runtimeScalar = [&](const SVal &v, SourceLoc at) {
    if (!v.isTensor() || !v.v->type.isScalar() || !ir::isInteger(v.v->type.dtype()))
      S.fail(at, fname + "() index entries must be integers or integer scalars, got " + v.describe());
    return S.castTo(v.v, ir::ScalarType{DType::I32}, at);
  };
  if (a.val.kind == SVal::Kind::Int || a.val.kind == SVal::Kind::Bool) {
    if (a.val.i < 0 || a.val.i >= count)
      S.fail(a.loc, fname + "() index " + std::to_string(a.val.i) + " is out of range: the grid of tiles " +
                        gridText() + " has " + std::to_string(count) + " tiles");
    return S.b->constInt(loc, DType::I32, a.val.i);
  }
  if (a.val.isTensor())
    return runtimeScalar(a.val, a.loc);
  if (a.val.kind != SVal::Kind::Tuple)
    S.fail(a.loc, fname + "() index must be a list of per-dim indices, an int or an integer scalar, got " +
                      a.val.describe());
  if (a.val.elts.size() != grid.size())
    S.fail(a.loc, fname + "() index has " + std::to_string(a.val.elts.size()) + " entries for a grid of rank " +
                      std::to_string(grid.size()) + " " + gridText());
  int64_t constPart = 0;
  ir::Value *dyn = nullptr;
  for (size_t d = 0; d < grid.size(); ++d) {
    const SVal &e = a.val.elts[d];
    int64_t scale = 1;
    for (size_t k = d + 1; k < grid.size(); ++k)
      scale *= grid[k];
    if (e.kind == SVal::Kind::Int || e.kind == SVal::Kind::Bool) {
      if (e.i < 0 || e.i >= grid[d])
        S.fail(a.loc, fname + "() index " + std::to_string(e.i) + " along dim " + std::to_string(d) +
                          " is out of range: the grid of tiles " + gridText() + " has " + std::to_string(grid[d]) +
                          " along it");
      constPart += e.i * scale;
      continue;
    }
    ir::Value *v = runtimeScalar(e, a.loc);
    if (scale != 1)
      v = S.b->binary(OpKind::Mul, loc, v, S.b->constInt(loc, DType::I32, scale));
    dyn = dyn ? S.b->binary(OpKind::Add, loc, dyn, v) : v;
  }
  ir::Value *c = S.b->constInt(loc, DType::I32, constPart);
  if (!dyn)
    return c;
  return constPart ? S.b->binary(OpKind::Add, loc, dyn, c) : dyn;
}

std::vector<int64_t> gridOf(const ir::Type &src, const std::vector<int64_t> &tile, const std::vector<int64_t> &strides) {
  std::vector<int64_t> g;
  for (size_t d = 0; d < tile.size(); ++d)
    g.push_back((src.shape[d] - tile[d]) / (strides.empty() ? tile[d] : strides[d]) + 1);
  return g;
}

SVal extractTile(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  ir::Value *x = sourceTile(S, p, c.fname, "x");
  const Arg &ts = p.get("tile_shape");
  std::vector<int64_t> tile = shapeArg(S, ts, c.fname);
  std::vector<int64_t> strides = windowStrides(S, p, c.fname, x->type, tile, ts.loc);
  ir::Value *index = windowIndex(S, p.get("index"), c.fname, gridOf(x->type, tile, strides), c.loc);
  ir::Op *op = S.b->create(OpKind::ExtractTile, c.loc, {x, index}, {ir::Type(x->type.elem, tile)});
  op->setTileStrides(strides);
  return SVal::tensor(op->result());
}

SVal insertTile(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  ir::Value *x = sourceTile(S, p, c.fname, "x");
  ir::Value *t = sourceTile(S, p, c.fname, "tile");
  if (t->type.elem != x->type.elem)
    S.fail(p.loc("tile"), c.fname + "() tile must have the source's element type " + x->type.elem.str() + ", got " +
                              t->type.str());
  std::vector<int64_t> strides = windowStrides(S, p, c.fname, x->type, t->type.shape, p.loc("tile"));
  ir::Value *index = windowIndex(S, p.get("index"), c.fname, gridOf(x->type, t->type.shape, strides), c.loc);
  ir::Op *op = S.b->create(OpKind::InsertTile, c.loc, {x, t, index}, {x->type});
  op->setTileStrides(strides);
  return SVal::tensor(op->result());
}

/// FlagTree's accumulation type of tle.cumsum: bf16 (and fp8) in fp32, integers narrower than
/// 32 bits in i32 / u32 by their signedness; `dtype=` (when given) instead.
ir::ScalarType cumsumType(const Binder &p, ir::ScalarType t) {
  if (p.has("dtype"))
    return p.dtype("dtype");
  if (t.dtype == DType::BF16 || ir::isFP8(t.dtype))
    return ir::ScalarType{DType::F32};
  if (ir::isInteger(t.dtype) && t.dtype != DType::I1 && ir::bitWidth(t.dtype) < 32)
    return ir::ScalarType{ir::isSigned(t.dtype) ? DType::I32 : DType::U32};
  if (t.dtype == DType::I1)
    return ir::ScalarType{DType::I32};
  return t;
}

/// tle.cumsum: (exclusive prefix sums along `axis`, their total), FlagTree's promotion: one
/// exclusive Scan with its total (OpKind::Scan); a scalar input gives (0, input).
SVal cumsum(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const Arg &in = p.get("input");
  if (!in.val.isTensor() && !in.val.isNumber())
    S.fail(in.loc, c.fname + "() input must be a tile or a scalar, got " + in.val.describe());
  ir::Value *x = S.toTensor(in.val, in.loc);
  if (x->type.elem.isPointer())
    S.fail(in.loc, c.fname + "() expects numbers, got " + x->type.str());
  bool reverse = constBool(S, p, c.fname, "reverse");
  ir::ScalarType t = cumsumType(p, x->type.elem);
  if (t.isPointer() || t.dtype == DType::I1)
    S.fail(p.loc("dtype"), c.fname + "() dtype must be a number type, got " + t.str());
  x = S.castTo(x, t, loc);
  int rank = static_cast<int>(x->type.rank());
  int64_t axis = p.constInt("axis", 0);
  if (x->type.isScalar()) {
    if (axis != 0 && axis != -1)
      S.fail(p.loc("axis"), c.fname + "() axis " + std::to_string(axis) + " is out of range for a scalar");
    ir::Value *zero = ir::isFloat(t.dtype) ? S.b->constFloat(loc, t.dtype, 0.0) : S.b->constInt(loc, t.dtype, 0);
    return SVal::tuple({SVal::tensor(zero), SVal::tensor(x)});
  }
  if (axis < -rank || axis >= rank)
    S.fail(p.loc("axis"), c.fname + "() axis " + std::to_string(axis) + " is out of range for " + x->type.str());
  int a = static_cast<int>(axis < 0 ? axis + rank : axis);
  auto shape = x->type.shape;
  shape.erase(shape.begin() + a);
  ir::Op *scan = S.b->create(OpKind::Scan, loc, {x}, {x->type, ir::Type(x->type.elem, shape)});
  scan->setAxis(a);
  scan->setReduceKind(ir::ReduceKind::Sum);
  scan->setReverse(reverse);
  scan->setExclusive(true);
  return SVal::tuple({SVal::tensor(scan->result(0)), SVal::tensor(scan->result(1))});
}

} // namespace

std::vector<BuiltinSpec> tileBuiltins() {
  return {
      {"tle.extract_tile", "x, index, tile_shape, strides=None", extractTile},
      {"tle.insert_tile", "x, tile, index, strides=None", insertTile},
      {"tle.cumsum", "input, axis=0, reverse=False, dtype=None", cumsum},
  };
}

} // namespace tle::sema
