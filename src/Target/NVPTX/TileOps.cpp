// tle.extract_tile and tle.insert_tile on the GPU: the register-only form (each thread picks or
// replaces its own registers, ir::windowRegisters) and the shared-memory form that
// assign-layouts staged (reads or writes of a window of a row-major local_alloc buffer; the
// buffer comes from allocate-shared, the barriers around it from insert-barriers).
#include "Emitter.h"

#include <algorithm>

namespace tle::nvptx {

using ir::OpKind;

namespace {

/// The constant value of scalar `v` (a Constant op's result), or nullopt.
std::optional<int64_t> constantOf(const ir::Value *v) {
  if (v->def && v->def->kind == OpKind::Constant)
    return v->def->intValue();
  return std::nullopt;
}

/// The coordinate bits any lane or warp basis of `l` sets, per dim, when no register basis sets
/// any of them (ir::registerBitsDisjoint: each element's coordinate is then its register's OR a
/// subset of these); nullopt for other layouts.
std::optional<ir::Layout::Basis> threadBits(const ir::Layout &l) {
  if (!ir::registerBitsDisjoint(l))
    return std::nullopt;
  ir::Layout::Basis bits(l.shape.size(), 0);
  for (const auto *bases : {&l.lane, &l.warp})
    for (const ir::Layout::Basis &b : *bases)
      for (size_t d = 0; d < bits.size(); ++d)
        bits[d] |= b[d];
  return bits;
}

/// Whether a register whose coordinate is `lo` OR a subset of `bits` (threadBits) holds an
/// element of the window at `origin` of shape `tile` in every thread (1), in none (0), or in
/// some (-1).
int inWindowEverywhere(const ir::Layout::Basis &lo, const ir::Layout::Basis &bits, const std::vector<int64_t> &origin,
                       const std::vector<int64_t> &tile) {
  ir::Layout::Basis hi = lo;
  for (size_t d = 0; d < hi.size(); ++d)
    hi[d] |= bits[d];
  bool all = true;
  for (size_t d = 0; d < lo.size(); ++d) {
    if (hi[d] < origin[d] || lo[d] >= origin[d] + tile[d])
      return 0;
    all &= lo[d] >= origin[d] && hi[d] < origin[d] + tile[d];
  }
  return all ? 1 : -1;
}

} // namespace

std::vector<llvm::Value *> Emitter::windowOrigin(const ir::Op &op, const ir::TileWindow &w) {
  const size_t rank = w.source.size();
  std::vector<llvm::Value *> origin(rank);
  if (std::optional<int64_t> index = constantOf(op.operands.back())) {
    std::vector<int64_t> o = w.origin(*index);
    for (size_t d = 0; d < rank; ++d)
      origin[d] = B.getInt32(static_cast<uint32_t>(o[d]));
    return origin;
  }
  llvm::Value *lin = B.CreateURem(scalar(op.operands.back()), B.getInt32(static_cast<uint32_t>(w.count)));
  for (size_t d = rank; d-- > 0;) {
    auto g = static_cast<uint32_t>(w.grid[d]);
    llvm::Value *gd = d == 0 ? lin : B.CreateURem(lin, B.getInt32(g));
    origin[d] = B.CreateMul(gd, B.getInt32(static_cast<uint32_t>(w.strides[d])));
    if (d)
      lin = B.CreateUDiv(lin, B.getInt32(g));
  }
  return origin;
}

void Emitter::emitWindowTileOp(const ir::Op &op) {
  // Each register of x whose element may lie in the window: its coordinate minus the origin,
  // checked against the window's shape at run time unless the layout settles it, and its
  // element stored to or loaded from that place of the row-major buffer.
  const bool merge = op.operands[0]->type.isTile();
  const ir::Value *x = op.operands[merge ? 0 : 1];
  llvm::Value *base = scalar(op.operands[merge ? 1 : 0]);
  const ir::Layout &l = *x->layout;
  ir::TileWindow w = ir::tileWindow(op);
  const unsigned eb = ir::storageBytes(x->type.dtype());
  std::optional<int64_t> index = constantOf(op.operands.back());
  std::vector<llvm::Value *> origin = windowOrigin(op, w);
  // With a constant origin, registers the layout keeps out of the window (or in it) are known here.
  std::optional<ir::Layout::Basis> bits = index ? threadBits(l) : std::nullopt;
  const std::vector<int64_t> constOrigin = bits ? w.origin(*index) : std::vector<int64_t>{};
  const int dupMask = ir::replicatedRegisterBits(l);
  const std::vector<llvm::Value *> &in = regs(x);
  std::vector<llvm::Value *> out = in;
  llvm::Type *ety = storageType(x->type.elem);
  for (int r = 0; r < l.numRegs(); ++r) {
    if (!merge && (r & dupMask))
      continue;
    int where = bits ? inWindowEverywhere(l.regCoord(r), *bits, constOrigin, w.tile) : -1;
    if (where == 0)
      continue;
    std::vector<llvm::Value *> c = coord(l, r);
    llvm::Value *inside = B.getTrue();
    for (size_t d = 0; d < c.size(); ++d) {
      c[d] = B.CreateSub(c[d], origin[d]);
      if (where < 0)
        inside = B.CreateAnd(inside, B.CreateICmpULT(c[d], B.getInt32(static_cast<uint32_t>(w.tile[d]))));
    }
    // Outside the window the offset is replaced by 0: an address in the buffer either way.
    llvm::Value *off = B.CreateMul(linearize(c, w.tile), B.getInt32(eb));
    if (where < 0)
      off = B.CreateSelect(inside, off, B.getInt32(0));
    llvm::Value *ptr = B.CreateGEP(B.getInt8Ty(), base, off);
    llvm::Align align(eb);
    if (merge) {
      llvm::Value *v = B.CreateAlignedLoad(ety, ptr, align);
      if (x->type.dtype() == ir::DType::I1)
        v = B.CreateICmpNE(v, B.getInt8(0));
      out[size_t(r)] = where < 0 ? B.CreateSelect(inside, v, in[size_t(r)]) : v;
      continue;
    }
    llvm::Value *v = in[size_t(r)];
    if (x->type.dtype() == ir::DType::I1)
      v = B.CreateZExt(v, B.getInt8Ty());
    if (where > 0) {
      B.CreateAlignedStore(v, ptr, align);
      continue;
    }
    llvm::Function *fn = B.GetInsertBlock()->getParent();
    auto *then = llvm::BasicBlock::Create(ctx, "window.store", fn);
    auto *cont = llvm::BasicBlock::Create(ctx, "window.stored", fn);
    B.CreateCondBr(inside, then, cont);
    B.SetInsertPoint(then);
    B.CreateAlignedStore(v, ptr, align);
    B.CreateBr(cont);
    B.SetInsertPoint(cont);
  }
  if (merge)
    vals_[op.result()] = out;
}

void Emitter::emitTileOp(const ir::Op &op) {
  if (op.kind == OpKind::InsertTile && op.windowBuffer())
    return emitWindowTileOp(op);
  if (!op.operands[0]->type.isTile())
    return emitSharedTileOp(op);
  const ir::Value *x = op.operands[0];
  const bool extract = op.kind == OpKind::ExtractTile;
  const ir::Value *tile = extract ? op.result() : op.operands[1];
  ir::TileWindow w = ir::tileWindow(op);
  std::optional<int64_t> index = constantOf(op.operands.back());
  std::optional<std::vector<int>> map;
  if (index)
    map = ir::windowRegisters(*x->layout, *tile->layout, w.origin(*index));
  if (!map)
    diags.fatal(op.loc, std::string("internal error: ") + ir::name(op.kind) +
                            " of a tile in registers needs a constant index and a window its layouts line up with "
                            "(assign-layouts stages the others in shared memory)");
  const std::vector<llvm::Value *> &src = regs(x);
  if (extract) {
    std::vector<llvm::Value *> out(static_cast<size_t>(tile->layout->numRegs()), nullptr);
    for (size_t s = 0; s < map->size(); ++s)
      if ((*map)[s] >= 0 && !out[size_t((*map)[s])])
        out[size_t((*map)[s])] = src[s];
    vals_[op.result()] = out;
    return;
  }
  std::vector<llvm::Value *> out = src;
  const std::vector<llvm::Value *> &t = regs(tile);
  for (size_t s = 0; s < map->size(); ++s)
    if ((*map)[s] >= 0)
      out[s] = t[size_t((*map)[s])];
  vals_[op.result()] = out;
}

void Emitter::emitSharedTileOp(const ir::Op &op) {
  // The window's origin from the index (modulo the number of windows), then each register's
  // element at origin + its coordinate, row-major in the buffer.
  const bool extract = op.kind == OpKind::ExtractTile;
  const ir::Value *tile = extract ? op.result() : op.operands[1];
  const ir::Layout &l = *tile->layout;
  ir::TileWindow w = ir::tileWindow(op);
  const size_t rank = w.source.size();
  const unsigned last = static_cast<unsigned>(rank - 1);
  const unsigned eb = ir::storageBytes(tile->type.dtype());
  std::optional<int64_t> index = constantOf(op.operands.back());
  std::vector<llvm::Value *> origin = windowOrigin(op, w);
  // Registers contiguous along the last dim go as one vector of up to 16 bytes when every
  // window origin keeps the vector aligned.
  int vec = std::max(1, std::min<int>(ir::contiguousRegisters(l, last), static_cast<int>(16 / eb)));
  int64_t originAlign = index ? w.origin(*index)[last] : w.strides[last];
  while (vec > 1 && (originAlign % vec != 0 || tile->type.dtype() == ir::DType::I1))
    vec /= 2;
  const int dupMask = ir::replicatedRegisterBits(l);
  llvm::Type *ety = storageType(tile->type.elem);
  llvm::Type *vty = vec > 1 ? static_cast<llvm::Type *>(llvm::FixedVectorType::get(ety, vec)) : ety;
  llvm::Value *base = scalar(op.operands[0]);
  std::vector<llvm::Value *> out(static_cast<size_t>(l.numRegs()));
  const std::vector<llvm::Value *> *in = extract ? nullptr : &regs(tile);
  for (int i = 0; i < l.numRegs(); i += vec) {
    if (!extract && (i & dupMask))
      continue;
    std::vector<llvm::Value *> c = coord(l, i);
    for (size_t d = 0; d < rank; ++d)
      c[d] = B.CreateAdd(c[d], origin[d]);
    llvm::Value *off = B.CreateMul(linearize(c, w.source), B.getInt32(eb));
    llvm::Value *ptr = B.CreateGEP(B.getInt8Ty(), base, off);
    llvm::Align align(static_cast<uint64_t>(vec) * eb);
    if (extract) {
      llvm::Value *v = B.CreateAlignedLoad(vty, ptr, align);
      for (int e = 0; e < vec; ++e) {
        llvm::Value *x = vec > 1 ? B.CreateExtractElement(v, uint64_t(e)) : v;
        if (tile->type.dtype() == ir::DType::I1)
          x = B.CreateICmpNE(x, B.getInt8(0));
        out[size_t(i + e)] = x;
      }
      continue;
    }
    llvm::Value *v = vec > 1 ? llvm::UndefValue::get(vty) : (*in)[size_t(i)];
    for (int e = 0; vec > 1 && e < vec; ++e)
      v = B.CreateInsertElement(v, (*in)[size_t(i + e)], uint64_t(e));
    if (tile->type.dtype() == ir::DType::I1)
      v = B.CreateZExt(v, B.getInt8Ty());
    B.CreateAlignedStore(v, ptr, align);
  }
  if (extract)
    vals_[op.result()] = out;
}

} // namespace tle::nvptx
