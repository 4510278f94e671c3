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

} // namespace

void Emitter::emitTileOp(const ir::Op &op) {
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
  std::vector<llvm::Value *> origin(rank);
  if (index) {
    std::vector<int64_t> o = w.origin(*index);
    for (size_t d = 0; d < rank; ++d)
      origin[d] = B.getInt32(static_cast<uint32_t>(o[d]));
  } else {
    llvm::Value *lin = B.CreateURem(scalar(op.operands.back()), B.getInt32(static_cast<uint32_t>(w.count)));
    for (size_t d = rank; d-- > 0;) {
      auto g = static_cast<uint32_t>(w.grid[d]);
      llvm::Value *gd = d == 0 ? lin : B.CreateURem(lin, B.getInt32(g));
      origin[d] = B.CreateMul(gd, B.getInt32(static_cast<uint32_t>(w.strides[d])));
      if (d)
        lin = B.CreateUDiv(lin, B.getInt32(g));
    }
  }
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
