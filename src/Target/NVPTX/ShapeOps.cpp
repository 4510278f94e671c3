// Shape ops on the GPU: permute (free: registers keep their elements), and reshape, cat, join
// and split through shared memory; inclusive scans (tl.cumsum, tl.cumprod) as a Hillis-Steele
// scan in shared memory.
#include "Emitter.h"

namespace tle::nvptx {

using ir::OpKind;

namespace {

/// Row-major linear index of `c` in `shape` times `scale` plus `offset`.
llvm::Value *linearIndex(llvm::IRBuilder<> &B, const std::vector<llvm::Value *> &c, const std::vector<int64_t> &shape,
                         int64_t scale, int64_t offset) {
  llvm::Value *idx = B.getInt32(0);
  for (size_t d = 0; d < shape.size(); ++d)
    idx = B.CreateAdd(B.CreateMul(idx, B.getInt32(static_cast<uint32_t>(shape[d]))), c[d]);
  return B.CreateAdd(B.CreateMul(idx, B.getInt32(static_cast<uint32_t>(scale))), B.getInt32(static_cast<uint32_t>(offset)));
}

} // namespace

void Emitter::storeToShared(const ir::Value *v, int64_t scale, int64_t offset) {
  ir::ScalarType et = v->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  const ir::Layout &l = *v->layout;
  const auto &r = regs(v);
  for (int i = 0; i < l.numRegs(); ++i) {
    llvm::Value *x = r[i];
    if (et.dtype == ir::DType::I1)
      x = B.CreateZExt(x, B.getInt8Ty());
    llvm::Value *idx = linearIndex(B, coord(l, i), v->type.shape, scale, offset);
    B.CreateStore(x, smemPtr(B.CreateMul(idx, B.getInt32(eb))));
  }
}

std::vector<llvm::Value *> Emitter::loadFromShared(const ir::Value *result, int64_t scale, int64_t offset) {
  ir::ScalarType et = result->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  const ir::Layout &l = *result->layout;
  std::vector<llvm::Value *> out;
  for (int i = 0; i < l.numRegs(); ++i) {
    llvm::Value *idx = linearIndex(B, coord(l, i), result->type.shape, scale, offset);
    llvm::Value *x = B.CreateLoad(storageType(et), smemPtr(B.CreateMul(idx, B.getInt32(eb))));
    if (et.dtype == ir::DType::I1)
      x = B.CreateICmpNE(x, B.getInt8(0));
    out.push_back(x);
  }
  return out;
}

void Emitter::emitShapeOp(const ir::Op &op) {
  switch (op.kind) {
  case OpKind::Permute:
    vals_[op.result()] = regs(op.operands[0]); // the layout was permuted instead (or: the async slot)
    if (auto it = commitStamp_.find(op.operands[0]); it != commitStamp_.end())
      commitStamp_[op.result()] = it->second;
    return;
  case OpKind::Reshape: {
    // The row-major linear index of an element is the same before and after.
    reserveShared(op.result()->type.numElements() * ir::storageBytes(op.result()->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 1, 0);
    barrier();
    vals_[op.result()] = loadFromShared(op.result(), 1, 0);
    return;
  }
  case OpKind::Cat: {
    int64_t n = op.operands[0]->type.numElements();
    reserveShared(2 * n * ir::storageBytes(op.result()->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 1, 0);
    storeToShared(op.operands[1], 1, n);
    barrier();
    vals_[op.result()] = loadFromShared(op.result(), 1, 0);
    return;
  }
  case OpKind::Join: {
    reserveShared(op.result()->type.numElements() * ir::storageBytes(op.result()->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 2, 0);
    storeToShared(op.operands[1], 2, 1);
    barrier();
    vals_[op.result()] = loadFromShared(op.result(), 1, 0);
    return;
  }
  case OpKind::Split: {
    reserveShared(op.operands[0]->type.numElements() * ir::storageBytes(op.operands[0]->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 1, 0);
    barrier();
    vals_[op.result(0)] = loadFromShared(op.result(0), 2, 0);
    vals_[op.result(1)] = loadFromShared(op.result(1), 2, 1);
    return;
  }
  default:
    break;
  }
}

void Emitter::emitScan(const ir::Op &op) {
  // Hillis-Steele inclusive scan along `axis`: after the round with distance s, every element
  // holds the combine of the 2s elements ending at it. Each round reads the previous round's
  // values from shared memory (barrier, read, barrier, write).
  const ir::Value *in = op.operands[0];
  const ir::Layout &l = *in->layout;
  ir::ScalarType et = in->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  unsigned axis = static_cast<unsigned>(op.axis);
  int64_t len = in->type.shape[axis];
  bool reverse = op.ival != 0;
  reserveShared(in->type.numElements() * eb);
  std::vector<llvm::Value *> vals = regs(in);
  std::vector<std::vector<llvm::Value *>> coords;
  for (int r = 0; r < l.numRegs(); ++r)
    coords.push_back(coord(l, r));
  auto combineScan = [&](llvm::Value *a, llvm::Value *b) -> llvm::Value * {
    if (op.reduceKind == ir::ReduceKind::Prod)
      return ir::isFloat(et.dtype) ? B.CreateFMul(a, b) : B.CreateMul(a, b);
    return combine(op.reduceKind, et.dtype, a, b);
  };
  auto address = [&](const std::vector<llvm::Value *> &c) {
    return smemPtr(B.CreateMul(linearIndex(B, c, in->type.shape, 1, 0), B.getInt32(eb)));
  };
  for (int64_t s = 1; s < len; s *= 2) {
    barrier();
    for (int r = 0; r < l.numRegs(); ++r)
      B.CreateStore(vals[r], address(coords[r]));
    barrier();
    for (int r = 0; r < l.numRegs(); ++r) {
      // The partner s elements before (after, for reverse) along the axis, if inside the tile.
      std::vector<llvm::Value *> pc = coords[r];
      llvm::Value *pos = pc[axis];
      llvm::Value *inside = reverse ? B.CreateICmpSLT(B.CreateAdd(pos, B.getInt32(static_cast<uint32_t>(s))),
                                                      B.getInt32(static_cast<uint32_t>(len)))
                                    : B.CreateICmpSGE(pos, B.getInt32(static_cast<uint32_t>(s)));
      pc[axis] = reverse ? B.CreateAdd(pos, B.getInt32(static_cast<uint32_t>(s)))
                         : B.CreateSelect(inside, B.CreateSub(pos, B.getInt32(static_cast<uint32_t>(s))), pos);
      if (reverse)
        pc[axis] = B.CreateSelect(inside, pc[axis], pos);
      llvm::Value *partner = B.CreateLoad(llvmType(et), address(pc));
      vals[r] = B.CreateSelect(inside, reverse ? combineScan(vals[r], partner) : combineScan(partner, vals[r]), vals[r]);
    }
  }
  vals_[op.result()] = vals;
}

} // namespace tle::nvptx
