// tl.dot on the GPU: mma.sync tensor-core instructions (PTX ISA §9.7.14.5.8, mma.m16n8k16 for
// fp16/bf16 and mma.m16n8k8 for tf32, fp32 accumulation) or FMA on the CUDA cores.
#include "Emitter.h"
#include "tle/Transforms/DotLowering.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

#include <array>
#include <map>

namespace tle::nvptx {

using transforms::DotPlan;

namespace {

int log2i(int64_t x) {
  int k = 0;
  while ((int64_t(1) << k) < x)
    ++k;
  return k;
}

} // namespace

void Emitter::emitDot(const ir::Op &op) {
  DotPlan plan = transforms::planDot(op, f.numWarps);
  std::vector<llvm::Value *> C = regsIn(op.operands[2], plan.acc);
  ir::DType in = op.operands[0]->type.dtype();
  ir::DType out = op.result()->type.dtype();
  int64_t M = op.operands[0]->type.shape[0], K = op.operands[0]->type.shape[1], N = op.operands[1]->type.shape[1];

  if (plan.kind == DotPlan::Kind::Fma) {
    std::vector<llvm::Value *> A = regsIn(op.operands[0], plan.a);
    std::vector<llvm::Value *> Bv = regsIn(op.operands[1], plan.b);
    int accBits = static_cast<int>(plan.acc.reg.size());
    llvm::Type *accTy = C.empty() ? nullptr : C[0]->getType();
    auto widen = [&](llvm::Value *v) -> llvm::Value * {
      if (ir::isFloat(out))
        return v->getType() == accTy ? v : B.CreateFPExt(v, accTy);
      return v->getType() == accTy ? v : B.CreateIntCast(v, accTy, ir::isSigned(in));
    };
    for (size_t r = 0; r < C.size(); ++r) {
      llvm::Value *acc = C[r];
      for (int64_t k = 0; k < K; ++k) {
        size_t idx = r | (static_cast<size_t>(k) << accBits);
        llvm::Value *x = widen(A[idx]), *y = widen(Bv[idx]);
        acc = ir::isFloat(out) ? declareIntrinsicCall(llvm::Intrinsic::fmuladd, {accTy}, {x, y, acc})
                               : B.CreateAdd(acc, B.CreateMul(x, y));
      }
      C[r] = acc;
    }
    vals_[op.result()] = C;
    return;
  }

  bool f16 = plan.kind == DotPlan::Kind::MmaF16;
  auto [wm, wn] = ir::mmaWarps(M, N, f.numWarps);
  int64_t kStep = f16 ? 16 : 8;
  int64_t repM = M / (16 * wm), repN = N / (8 * wn), repK = K / kStep;
  int aIntra = f16 ? 3 : 2, bIntra = f16 ? 2 : 1;
  auto aIdx = [&](int64_t m, int64_t k, int i) { return i | (k << aIntra) | (m << (aIntra + log2i(repK))); };
  auto bIdx = [&](int64_t n, int64_t k, int i) { return i | (k << bIntra) | (n << (bIntra + log2i(repK))); };
  auto cIdx = [&](int64_t m, int64_t n, int i) { return i | (n << 2) | (m << (2 + log2i(repN))); };

  // Stage A as [M][K + pad] and B transposed as [N][K + pad] in shared memory: fragment pairs
  // along K are then adjacent, and the 16-byte row padding makes the fragment reads of a warp
  // (8 rows x 4 words) hit 32 distinct banks.
  unsigned eb = ir::storageBytes(in);
  int64_t ld = K + 16 / eb; // row length in elements
  int64_t bytesA = M * ld * eb, bytesB = N * ld * eb;
  reserveShared(bytesA + bytesB);
  llvm::Type *ety = llvmType(op.operands[0]->type.elem);
  const ir::Layout &la = *op.operands[0]->layout, &lb = *op.operands[1]->layout;
  const auto &ra = regs(op.operands[0]), &rb = regs(op.operands[1]);
  barrier();
  auto stageOffset = [&](llvm::Value *row, llvm::Value *col, int64_t base) {
    llvm::Value *e = B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<uint32_t>(ld))), col);
    return B.CreateAdd(B.CreateMul(e, B.getInt32(eb)), B.getInt32(static_cast<uint32_t>(base)));
  };
  {
    // A: contiguous registers along K become one vector store.
    int vec = std::min<int>(ir::contiguousRegisters(la, 1), std::max(1u, 16 / eb));
    for (int r = 0; r < la.numRegs(); r += vec) {
      std::vector<llvm::Value *> c = coord(la, r);
      llvm::Value *v = llvm::UndefValue::get(llvm::FixedVectorType::get(ety, vec));
      for (int k = 0; k < vec; ++k)
        v = B.CreateInsertElement(v, ra[r + k], uint64_t(k));
      B.CreateAlignedStore(v, smemPtr(stageOffset(c[0], c[1], 0)), llvm::Align(vec * eb));
    }
  }
  for (int r = 0; r < lb.numRegs(); ++r) {
    std::vector<llvm::Value *> c = coord(lb, r); // (k, n)
    B.CreateAlignedStore(rb[r], smemPtr(stageOffset(c[1], c[0], bytesA)), llvm::Align(eb));
  }
  barrier();
  // Fragment element (row, k) of A / (k, n) of B for operand register `idx`; with fp16/bf16 a
  // pair of registers adjacent along K is one 32-bit word. The address is a per-thread base
  // (lane and warp bits, computed once) plus a constant (register bits), which the backend
  // folds into the ld.shared addressing mode instead of keeping one register per fragment.
  llvm::Type *wordTy = f16 ? static_cast<llvm::Type *>(B.getInt32Ty()) : ety;
  std::map<std::string, llvm::Value *> threadBase;
  auto fragment = [&](const ir::Layout &l, int idx, bool transposed, int64_t base) -> llvm::Value * {
    const auto &lw = laneWarpCoord(l);
    ir::Layout::Basis rc = l.regCoord(idx);
    int row = transposed ? 1 : 0, col = transposed ? 0 : 1;
    std::string key = l.str() + (transposed ? "T" : "N");
    llvm::Value *&tb = threadBase[key];
    if (!tb) // 32-bit shared-window address of this thread's fragment origin
      tb = B.CreatePtrToInt(smemPtr(stageOffset(lw[row], lw[col], base)), B.getInt32Ty());
    int64_t constOff = (rc[row] * ld + rc[col]) * eb;
    auto *fty = llvm::FunctionType::get(wordTy, {B.getInt32Ty()}, false);
    std::string text = std::string("ld.shared.") + (f16 ? "b32" : "f32") + " $0, [$1+" + std::to_string(constOff) + "];";
    return B.CreateCall(fty, llvm::InlineAsm::get(fty, text, f16 ? "=r,r" : "=f,r", /*hasSideEffects=*/true), {tb});
  };
  auto loadA = [&](int idx) { return fragment(plan.a, idx, false, 0); };
  auto loadB = [&](int idx) { return fragment(plan.b, idx, true, bytesA); };

  llvm::Type *i32 = B.getInt32Ty();
  auto tf32 = [&](llvm::Value *x) {
    auto *fty = llvm::FunctionType::get(i32, {B.getFloatTy()}, false);
    return B.CreateCall(fty, llvm::InlineAsm::get(fty, "cvt.rna.tf32.f32 $0, $1;", "=r,f", false), {x});
  };
  std::string ab = in == ir::DType::BF16 ? "bf16" : "f16";
  std::string text = f16 ? "mma.sync.aligned.m16n8k16.row.col.f32." + ab + "." + ab + ".f32 "
                         : std::string("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 ");
  text += "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  llvm::Type *f32 = B.getFloatTy();
  auto *retTy = llvm::StructType::get(ctx, {f32, f32, f32, f32});
  auto *fty = llvm::FunctionType::get(retTy, {i32, i32, i32, i32, i32, i32, f32, f32, f32, f32}, false);
  auto *mma = llvm::InlineAsm::get(fty, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*hasSideEffects=*/false);

  // Fragments are read from shared memory as each k step needs them, so only one k step's
  // operands are live next to the accumulators.
  for (int64_t k = 0; k < repK; ++k) {
    std::vector<std::array<llvm::Value *, 2>> bw(repN);
    for (int64_t n = 0; n < repN; ++n)
      for (int j = 0; j < 2; ++j)
        bw[n][j] = f16 ? loadB(bIdx(n, k, 2 * j)) : tf32(loadB(bIdx(n, k, j)));
    for (int64_t m = 0; m < repM; ++m) {
      std::array<llvm::Value *, 4> aw;
      for (int j = 0; j < 4; ++j)
        aw[j] = f16 ? loadA(aIdx(m, k, 2 * j)) : tf32(loadA(aIdx(m, k, j)));
      for (int64_t n = 0; n < repN; ++n) {
        llvm::Value *res = B.CreateCall(fty, mma, {aw[0], aw[1], aw[2], aw[3], bw[n][0], bw[n][1], C[cIdx(m, n, 0)],
                                                    C[cIdx(m, n, 1)], C[cIdx(m, n, 2)], C[cIdx(m, n, 3)]});
        for (int i = 0; i < 4; ++i)
          C[cIdx(m, n, i)] = B.CreateExtractValue(res, i);
      }
    }
  }
  vals_[op.result()] = C;
}

} // namespace tle::nvptx
