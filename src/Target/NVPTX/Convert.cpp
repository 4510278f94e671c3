// Layout conversions (convert_layout): by renumbering registers, shuffles or through shared memory.
#include "Emitter.h"

#include <algorithm>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Support/MathExtras.h>

#include <cassert>
#include <cmath>

namespace tle::nvptx {

using ir::DType;
using ir::OpKind;

void Emitter::emitConvert(const ir::Op &op) {
  const ir::Value *in = op.operands[0];
  const ir::Layout &A = *in->layout, &D = *op.result()->layout;
  if (auto map = ir::registerMap(A, D)) {
    vals_[op.result()] = regsIn(in, D);
    return;
  }
  ir::ScalarType et = in->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  llvm::Type *sty = storageType(et);
  const std::vector<int64_t> &shape = in->type.shape;
  unsigned last = in->type.rank() - 1;
  assertScratchFits(in->type.numElements() * eb);
  // The tile goes through shared memory row-major, in vectors of up to 16 bytes along the last
  // dim on both sides. Rows of 128 bytes or more are swizzled: the 16-byte chunk index within
  // each 128-byte segment is XOR-ed with the row index mod 8, so that a warp writing (or reading)
  // a column of 8 rows hits different banks (ir::stagedOffset; offsetOf is its run-time form).
  int64_t rowBytes = shape[last] * eb;
  bool swizzle = in->type.rank() >= 2 && rowBytes >= 128;
  auto offsetOf = [&](const std::vector<llvm::Value *> &c) -> llvm::Value * {
    llvm::Value *off = B.CreateMul(linearize(c, shape), B.getInt32(eb));
    if (!swizzle)
      return off;
    llvm::Value *row = B.CreateUDiv(off, B.getInt32(static_cast<uint32_t>(rowBytes)));
    return B.CreateXor(off, B.CreateShl(B.CreateAnd(row, 7), 4));
  };
  // With power-of-two dims the row-major offset is a concatenation of coordinate bits and the
  // swizzle XORs offset bits into offset bits, so the byte offset is linear over GF(2) in the
  // coordinate: offset(thread ^ reg) = offset(thread) ^ offset(reg). The thread's part is then
  // computed once, and each register adds a constant. The constant's bits that the thread's part
  // can never set are added (they fold into the address as an immediate); the rest (the swizzle's
  // chunk bits) are XOR-ed, once per distinct value.
  bool linear = std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0 && (d & (d - 1)) == 0; });
  auto constOffset = [&](const ir::Layout::Basis &c) {
    return static_cast<uint32_t>(ir::stagedOffset(shape, eb, c));
  };
  // The byte offsets of every `step`-th register of `l` (the first of each vector), by register.
  auto offsets = [&](const ir::Layout &l, int step) {
    std::vector<llvm::Value *> out(size_t(l.numRegs()));
    if (!linear) {
      for (int r = 0; r < l.numRegs(); r += step)
        out[size_t(r)] = offsetOf(coord(l, r));
      return out;
    }
    uint32_t threadBits = 0;
    for (const auto *bases : {&l.lane, &l.warp})
      for (const auto &b : *bases)
        threadBits |= constOffset(b);
    llvm::Value *t = offsetOf(coord(l, 0)); // register 0 holds the thread's own coordinate
    std::map<uint32_t, llvm::Value *> xored{{0u, t}};
    for (int r = 0; r < l.numRegs(); r += step) {
      uint32_t c = constOffset(l.regCoord(r));
      auto [it, fresh] = xored.try_emplace(c & threadBits, nullptr);
      if (fresh)
        it->second = B.CreateXor(t, B.getInt32(c & threadBits));
      uint32_t added = c & ~threadBits;
      out[size_t(r)] = added ? B.CreateAdd(it->second, B.getInt32(added), "", /*HasNUW=*/true, /*HasNSW=*/true)
                             : it->second;
    }
    return out;
  };
  // Registers that hold consecutive elements along the last dim at an aligned start (lanes and
  // warps select only whole groups) form one vector access.
  auto vectorWidth = [&](const ir::Layout &l) {
    int v = std::min<int>(ir::contiguousRegisters(l, last), static_cast<int>(16 / eb));
    if (et.dtype == DType::I1)
      return 1;
    auto aligned = [&](const std::vector<ir::Layout::Basis> &bases) {
      for (const auto &b : bases)
        if (b[last] % v)
          return false;
      return true;
    };
    while (v > 1 && !(aligned(l.lane) && aligned(l.warp) && shape[last] % v == 0))
      v /= 2;
    return v;
  };
  int vs = vectorWidth(A), vd = vectorWidth(D);
  const auto &src = regs(in);
  // The barrier before the writes (earlier readers of the scratch bytes are done) is the IR's:
  // insert-barriers puts one right before every conversion through shared memory.
  std::vector<llvm::Value *> offA = offsets(A, vs);
  for (int r = 0; r < A.numRegs(); r += vs) {
    llvm::Value *ptr = smemPtr(offA[size_t(r)]);
    if (vs == 1) {
      llvm::Value *v = src[r];
      if (et.dtype == DType::I1)
        v = B.CreateZExt(v, B.getInt8Ty());
      B.CreateStore(v, ptr);
      continue;
    }
    llvm::Value *vec = llvm::UndefValue::get(llvm::FixedVectorType::get(sty, vs));
    for (int k = 0; k < vs; ++k)
      vec = B.CreateInsertElement(vec, src[r + k], uint64_t(k));
    B.CreateAlignedStore(vec, ptr, llvm::Align(vs * eb));
  }
  barrier();
  std::vector<llvm::Value *> out;
  std::vector<llvm::Value *> offD = offsets(D, vd);
  for (int r = 0; r < D.numRegs(); r += vd) {
    llvm::Value *ptr = smemPtr(offD[size_t(r)]);
    if (vd == 1) {
      llvm::Value *v = B.CreateLoad(sty, ptr);
      if (et.dtype == DType::I1)
        v = B.CreateICmpNE(v, B.getInt8(0));
      out.push_back(v);
      continue;
    }
    llvm::Value *vec = B.CreateAlignedLoad(llvm::FixedVectorType::get(sty, vd), ptr, llvm::Align(vd * eb));
    for (int k = 0; k < vd; ++k)
      out.push_back(B.CreateExtractElement(vec, uint64_t(k)));
  }
  vals_[op.result()] = out;
}

} // namespace tle::nvptx
