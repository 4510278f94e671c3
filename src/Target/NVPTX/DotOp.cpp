// tl.dot on the GPU: mma.sync tensor-core instructions (PTX ISA §9.7.14.5.8, mma.m16n8k16 for
// fp16/bf16 and mma.m16n8k8 for tf32 with fp32 accumulation, mma.m16n8k32 for int8/uint8 with
// int32 accumulation) or FMA on the CUDA cores; on sm_90a, dots of whole warpgroups go to wgmma
// (Wgmma.cpp).
#include "Emitter.h"
#include "tle/Transforms/DotLowering.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

#include <array>
#include <map>

namespace tle::nvptx {

using transforms::DotPlan;


void Emitter::stageKUnsupported(const ir::Op &op) {
  diags.fatal(op.loc, "stage_k=" + std::to_string(op.dotStageK()) +
                          " applies only to an mma.sync dot of fp16/bf16 or int8 operands that stages both from "
                          "registers (neither read from a pipeline slot); this dot runs on " +
                          (useWgmma(op) ? "wgmma" : transforms::planDot(op, f.numWarps).kind == DotPlan::Kind::Fma
                                                        ? "FMA"
                                                        : "mma.sync with operands it cannot stage in rounds"));
}

void Emitter::emitDot(const ir::Op &op) {
  if (op.isAsyncWgmma() && !useWgmma(op))
    diags.fatal(op.loc, "'dot async' starts a wgmma group, but this dot does not run on wgmma (sm_90a, whole "
                        "warpgroups along M, wgmma's shapes and types): remove 'async' and its wgmma_wait ops");
  if ((ir::isFP8(op.operands[0]->type.dtype()) || ir::isFP8(op.operands[1]->type.dtype())) && !useWgmma(op))
    diags.fatal(op.loc, "an fp8 tl.dot that no native instruction takes reached the NVPTX backend unwidened: the "
                        "pass widen-fp8-dots gives it fp16 operands (the default pipeline runs it; add it to --pass)");
  DotPlan plan = transforms::planDot(op, f.numWarps);
  if (op.dotStageK() > 0 && (plan.kind == DotPlan::Kind::Fma || useWgmma(op)))
    stageKUnsupported(op);
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

  if (useWgmma(op))
    return emitWgmma(op);
  bool f16 = plan.kind == DotPlan::Kind::MmaF16;
  // int8 fragments are 16-bit fragments' bytes (PTX ISA §9.7.14.5.8, m16n8k32 ".s8"/".u8": each
  // 32-bit register holds 4 consecutive K where fp16 holds 2), so they are read with ldmatrix
  // too: A as stored, B from a transposed ([N][K]) copy, both without .trans.
  bool i8 = plan.kind == DotPlan::Kind::MmaI8;
  auto [wm, wn] = ir::mmaWarps(M, N, f.numWarps);
  int64_t kStep = f16 ? 16 : i8 ? 32 : 8;
  int64_t repM = M / (16 * wm), repN = N / (8 * wn), repK = K / kStep;
  int aIntra = f16 ? 3 : 2, bIntra = f16 ? 2 : 1;
  auto aIdx = [&](int64_t m, int64_t k, int i) { return i | (k << aIntra) | (m << (aIntra + log2i(repK))); };
  auto bIdx = [&](int64_t n, int64_t k, int i) { return i | (k << bIntra) | (n << (bIntra + log2i(repK))); };
  auto cIdx = [&](int64_t m, int64_t n, int i) { return i | (n << 2) | (m << (2 + log2i(repN))); };

  // Stage A as [M][K + pad] in shared memory. fp16/bf16 keep B as [K][N + pad] and read both
  // operands with ldmatrix (B with .trans); tf32 and int8 store B transposed as [N][K + pad];
  // tf32 reads 32-bit fragments one by one, int8 with ldmatrix. The 16-byte row padding makes a warp's fragment reads (8 rows
  // of 16 bytes per ldmatrix phase, or 8 rows x 4 words) hit 32 distinct banks.
  // Staged operands hold KC columns of K at a time: all of K, or a round of Op::dotStageK
  // (allocate-shared's choice when the whole staging would not fit), rounds one after another.
  unsigned eb = ir::storageBytes(in);
  const int64_t KC = op.dotStageK() > 0 ? op.dotStageK() : K, rounds = K / KC;
  int64_t ldA = KC + 16 / eb;                  // A row length in elements
  int64_t ldB = f16 ? N + 16 / eb : KC + 16 / eb; // B row length ([K][N] or [N][K])
  int64_t bytesA = M * ldA * eb, bytesB = (f16 ? KC : N) * ldB * eb;
  llvm::Type *ety = llvmType(op.operands[0]->type.elem);
  const ir::Layout &la = *op.operands[0]->layout, &lb = *op.operands[1]->layout;
  const auto &ra = regs(op.operands[0]), &rb = regs(op.operands[1]);
  // Operands that arrive through cp.async already sit in their shared-memory slot, with rows
  // padded as the staging area's (the pipeline pass admits only what transforms::mmaSyncSlotOperand
  // lists): fp16 A [M][K] and B [K][N]; tf32 A [M][K] and B as [K][N] or, through tl.trans,
  // [N][K]; int8 A [M][K] and B^T [N][K].
  bool asyncA = isAsync(op.operands[0]), asyncB = isAsync(op.operands[1]);
  bool slotBT = asyncB && asyncTransposed_.count(op.operands[1]) > 0; // B's slot holds [N][K]
  assert(!(f16 && slotBT) && !(i8 && asyncB && !slotBT));
  if (rounds > 1 && (asyncA || asyncB || !(f16 || i8)))
    stageKUnsupported(op);
  // The pipeline pass's async_wait_group and barrier precede the dot.
  bool staged = !(asyncA && asyncB);
  if (staged)
    assertScratchFits(bytesA + bytesB);
  auto offsetIn = [&](int64_t ld, llvm::Value *row, llvm::Value *col, int64_t base) {
    llvm::Value *e = B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<uint32_t>(ld))), col);
    return B.CreateAdd(B.CreateMul(e, B.getInt32(eb)), B.getInt32(static_cast<uint32_t>(base)));
  };
  // Round `round`'s registers of an operand in layout `l` (K along dim `kDim`), with rounds
  // (Op::dotStageK): a register is staged in the round of its K column, at its K within the
  // round. When the lanes and warps move K by less than KC, the register alone decides the round
  // (others are skipped); otherwise a thread tests its K at run time (`guard`, else null).
  auto roundMoves = [&](const ir::Layout &l, size_t kDim) {
    bool byLane = false;
    for (const auto *bases : {&l.lane, &l.warp})
      for (const ir::Layout::Basis &b : *bases)
        byLane |= b[kDim] >= KC;
    return byLane;
  };
  struct RoundElem {
    bool staged = true;
    llvm::Value *guard = nullptr;
    std::vector<llvm::Value *> c;
  };
  // `dynamic`: roundMoves(l, kDim), computed once per operand by the caller.
  auto roundElem = [&](const ir::Layout &l, int i, size_t kDim, int64_t round, bool dynamic) {
    RoundElem e;
    if (rounds == 1) {
      e.c = coord(l, i);
      return e;
    }
    if (!dynamic && l.regCoord(i)[kDim] / KC != round) {
      e.staged = false;
      return e;
    }
    e.c = coord(l, i);
    if (dynamic)
      e.guard = B.CreateICmpEQ(B.CreateAnd(e.c[kDim], B.getInt32(~static_cast<uint32_t>(KC - 1))),
                               B.getInt32(static_cast<uint32_t>(round * KC)));
    e.c[kDim] = B.CreateAnd(e.c[kDim], B.getInt32(static_cast<uint32_t>(KC - 1)));
    return e;
  };
  // A store into the staging area, under `guard` when there is one.
  auto stageStore = [&](llvm::Value *guard, llvm::Value *v, llvm::Value *ptr, llvm::Align align) {
    if (!guard) {
      B.CreateAlignedStore(v, ptr, align);
      return;
    }
    auto *then = llvm::BasicBlock::Create(ctx, "dot.stage", B.GetInsertBlock()->getParent());
    auto *cont = llvm::BasicBlock::Create(ctx, "dot.staged", B.GetInsertBlock()->getParent());
    B.CreateCondBr(guard, then, cont);
    B.SetInsertPoint(then);
    B.CreateAlignedStore(v, ptr, align);
    B.CreateBr(cont);
    B.SetInsertPoint(cont);
  };
  // Stores round `round`'s registers of a tile held in `l` (registers `r`, K along `kDim`)
  // row-major with row length `ld`, turning registers contiguous along the last dim into one
  // vector store (at most 16 bytes: never across a round, KC being a multiple of 16).
  auto stage = [&](const ir::Layout &l, const std::vector<llvm::Value *> &r, int64_t ld, int64_t base, size_t kDim,
                   int64_t round) {
    int vec = std::min<int>(ir::contiguousRegisters(l, 1), std::max(1u, 16 / eb));
    const bool dynamic = roundMoves(l, kDim);
    for (int i = 0; i < l.numRegs(); i += vec) {
      RoundElem e = roundElem(l, i, kDim, round, dynamic);
      if (!e.staged)
        continue;
      llvm::Value *v = llvm::UndefValue::get(llvm::FixedVectorType::get(ety, vec));
      for (int k = 0; k < vec; ++k)
        v = B.CreateInsertElement(v, r[i + k], uint64_t(k));
      stageStore(e.guard, v, smemPtr(offsetIn(ld, e.c[0], e.c[1], base)), llvm::Align(vec * eb));
    }
  };
  // One round's staging between two CTA barriers (the first orders the area's earlier readers,
  // the second makes the round visible to every warp).
  auto stageRound = [&](int64_t round) {
    if (!staged)
      return;
    barrier();
    if (!asyncA)
      stage(la, ra, ldA, 0, 1, round);
    if (f16) {
      if (!asyncB)
        stage(lb, rb, ldB, bytesA, 0, round);
    } else if (!asyncB) {
      const bool dynamic = roundMoves(lb, 0);
      for (int r = 0; r < lb.numRegs(); ++r) {
        RoundElem e = roundElem(lb, r, 0, round, dynamic); // (k, n)
        if (e.staged)
          stageStore(e.guard, rb[r], smemPtr(offsetIn(ldB, e.c[1], e.c[0], bytesA)), llvm::Align(eb));
      }
    }
    barrier();
  };
  stageRound(0);
  auto smemAddr32 = [&](llvm::Value *byteOffset) { return B.CreatePtrToInt(smemPtr(byteOffset), B.getInt32Ty()); };
  // Byte address of element (row, col) of operand k's tile: its async slot, or the staging area.
  auto operandAddr32 = [&](unsigned k, int64_t ld, llvm::Value *row, llvm::Value *col, int64_t stagingBase) {
    const ir::Value *v = op.operands[k];
    if (!(k == 0 ? asyncA : asyncB))
      return smemAddr32(offsetIn(ld, row, col, stagingBase));
    const AsyncBuffer &buf = asyncBuffer(v);
    llvm::Value *slotBase = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.base)),
                                        B.CreateMul(scalar(v), B.getInt32(static_cast<uint32_t>(buf.slotBytes))));
    return B.CreatePtrToInt(smemRaw(B.CreateAdd(slotBase, offsetIn(buf.ld, row, col, 0))), B.getInt32Ty());
  };
  // The warp's own origin in an operand layout (the coordinate its warp bits select).
  auto warpOrigin = [&](const ir::Layout &l, int dim) {
    llvm::Value *c = B.getInt32(0);
    for (size_t i = 0; i < l.warp.size(); ++i)
      if (l.warp[i][dim])
        c = B.CreateOr(c, B.CreateMul(B.CreateAnd(B.CreateLShr(warpId(), i), 1), B.getInt32(static_cast<uint32_t>(l.warp[i][dim]))));
    return c;
  };
  llvm::Type *i32t = B.getInt32Ty();
  auto ldmatrix = [&](int count, bool trans, llvm::Value *addr) {
    std::vector<llvm::Type *> tys(count, i32t);
    llvm::Type *ret = count == 1 ? i32t : static_cast<llvm::Type *>(llvm::StructType::get(ctx, tys));
    auto *ft = llvm::FunctionType::get(ret, {i32t}, false);
    std::string regsList;
    for (int i = 0; i < count; ++i)
      regsList += (i ? ", $" : "$") + std::to_string(i);
    std::string t = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (trans ? ".trans" : "") +
                    ".shared.b16 {" + regsList + "}, [$" + std::to_string(count) + "];";
    std::string cons;
    for (int i = 0; i < count; ++i)
      cons += "=r,";
    llvm::Value *res = B.CreateCall(ft, llvm::InlineAsm::get(ft, t, cons + "r", /*hasSideEffects=*/true), {addr});
    std::vector<llvm::Value *> out;
    for (int i = 0; i < count; ++i)
      out.push_back(count == 1 ? res : B.CreateExtractValue(res, i));
    return out;
  };
  // ldmatrix row addresses: lane l supplies row (l % 8) of matrix (l / 8).
  llvm::Value *lane = laneId();
  llvm::Value *quad = B.CreateLShr(lane, 3), *row8 = B.CreateAnd(lane, 7);
  llvm::Value *aRow = nullptr, *aCol = nullptr, *bRow = nullptr, *bColSel = nullptr;
  if (f16 || i8) {
    // A (16 rows x 32 bytes at m0,k0): matrices (rows 0-7, bytes 0-15), (rows 8-15, bytes 0-15),
    // (rows 0-7, bytes 16-31), (8-15, 16-31); 8 elements of fp16, 16 of int8.
    aRow = B.CreateAdd(B.CreateAdd(warpOrigin(plan.a, 0), row8), B.CreateShl(B.CreateAnd(quad, 1), 3));
    aCol = B.CreateShl(B.CreateLShr(quad, 1), f16 ? 3 : 4);
    bColSel = B.CreateLShr(quad, 1);
  }
  if (f16) {
    // B (k16 x n8 blocks at k0): matrices (k 0-7, block j), (k 8-15, block j), then block j+1.
    bRow = B.CreateAdd(row8, B.CreateShl(B.CreateAnd(quad, 1), 3));
  }
  llvm::Value *bOriginN = f16 || i8 ? warpOrigin(plan.b, 1) : nullptr;
  // Fragment element (row, k) of A / (k, n) of B for operand register `idx` (tf32 path). The
  // address is a per-thread base (lane and warp bits, computed once) plus a constant (register
  // bits) written into the ld.shared instruction.
  std::map<std::string, llvm::Value *> threadBase;
  // `k` is the operand (0: A, 1: B); an async one is read from its slot, whose row length
  // replaces `ld`.
  auto fragment = [&](unsigned k, const ir::Layout &l, int idx, bool transposed, int64_t ld,
                      int64_t base) -> llvm::Value * {
    const auto &lw = laneWarpCoord(l);
    ir::Layout::Basis rc = l.regCoord(idx);
    int row = transposed ? 1 : 0, col = transposed ? 0 : 1;
    bool inSlot = k == 0 ? asyncA : asyncB;
    if (inSlot)
      ld = asyncBuffer(op.operands[k]).ld;
    std::string key = l.str() + (transposed ? "T" : "N");
    llvm::Value *&tb = threadBase[key];
    if (!tb)
      tb = operandAddr32(k, ld, lw[row], lw[col], base);
    int64_t constOff = (rc[row] * ld + rc[col]) * eb;
    auto *ft = llvm::FunctionType::get(ety, {i32t}, false);
    std::string t = "ld.shared.f32 $0, [$1+" + std::to_string(constOff) + "];";
    return B.CreateCall(ft, llvm::InlineAsm::get(ft, t, "=f,r", /*hasSideEffects=*/true), {tb});
  };
  auto loadA = [&](int idx) { return fragment(0, plan.a, idx, false, ldA, 0); };
  // B is staged as [N][K]; a slot holds [N][K] through tl.trans, else [K][N] as loaded.
  auto loadB = [&](int idx) { return fragment(1, plan.b, idx, !asyncB || slotBT, ldB, bytesA); };

  llvm::Type *i32 = i32t;
  auto tf32 = [&](llvm::Value *x) {
    auto *fty = llvm::FunctionType::get(i32, {B.getFloatTy()}, false);
    return B.CreateCall(fty, llvm::InlineAsm::get(fty, "cvt.rna.tf32.f32 $0, $1;", "=r,f", false), {x});
  };
  std::string ab = in == ir::DType::BF16 ? "bf16" : in == ir::DType::I8 ? "s8" : in == ir::DType::U8 ? "u8" : "f16";
  std::string text = f16  ? "mma.sync.aligned.m16n8k16.row.col.f32." + ab + "." + ab + ".f32 "
                     : i8 ? "mma.sync.aligned.m16n8k32.row.col.s32." + ab + "." + ab + ".s32 "
                          : std::string("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 ");
  text += "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  llvm::Type *accTy = i8 ? i32 : static_cast<llvm::Type *>(B.getFloatTy());
  auto *retTy = llvm::StructType::get(ctx, {accTy, accTy, accTy, accTy});
  auto *fty = llvm::FunctionType::get(retTy, {i32, i32, i32, i32, i32, i32, accTy, accTy, accTy, accTy}, false);
  auto *mma = llvm::InlineAsm::get(fty, text, i8 ? "=r,=r,=r,=r,r,r,r,r,r,r,r,r,r,r" : "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                                   /*hasSideEffects=*/false);

  // Fragments are read from shared memory as each k step needs them, so only one k step's
  // operands are live next to the accumulators. With rounds, each round's k steps follow its
  // staging and address the round's columns (kr: the k step within the round).
  const int64_t stepsPerRound = repK / rounds;
  for (int64_t k = 0; k < repK; ++k) {
    if (k > 0 && k % stepsPerRound == 0)
      stageRound(k / stepsPerRound);
    const int64_t kr = k % stepsPerRound;
    std::vector<std::array<llvm::Value *, 2>> bw(repN);
    if (f16) {
      for (int64_t n = 0; n < repN; n += 2) {
        int count = n + 1 < repN ? 4 : 2;
        // Lanes 16-31 address block n+1 (ignored by .x2).
        llvm::Value *blk = B.CreateAdd(B.getInt32(static_cast<uint32_t>(n)), count == 4 ? bColSel : B.getInt32(0));
        llvm::Value *col = B.CreateAdd(bOriginN, B.CreateMul(blk, B.getInt32(static_cast<uint32_t>(8 * wn))));
        llvm::Value *rowK = B.CreateAdd(bRow, B.getInt32(static_cast<uint32_t>(kr * 16)));
        auto r = ldmatrix(count, true, operandAddr32(1, ldB, rowK, col, bytesA));
        bw[n] = {r[0], r[1]};
        if (count == 4)
          bw[n + 1] = {r[2], r[3]};
      }
    } else if (i8) {
      // B^T (8 columns of N x 32 bytes of K per block): matrices (block n, bytes 0-15), (block n,
      // bytes 16-31), then block n + 1; lane l addresses row l % 8 of matrix l / 8.
      for (int64_t n = 0; n < repN; n += 2) {
        int count = n + 1 < repN ? 4 : 2;
        llvm::Value *blk = B.CreateAdd(B.getInt32(static_cast<uint32_t>(n)), count == 4 ? bColSel : B.getInt32(0));
        llvm::Value *rowN = B.CreateAdd(B.CreateAdd(bOriginN, row8), B.CreateMul(blk, B.getInt32(static_cast<uint32_t>(8 * wn))));
        llvm::Value *colK = B.CreateAdd(B.CreateShl(B.CreateAnd(quad, 1), 4), B.getInt32(static_cast<uint32_t>(kr * 32)));
        auto r = ldmatrix(count, false, operandAddr32(1, ldB, rowN, colK, bytesA));
        bw[n] = {r[0], r[1]};
        if (count == 4)
          bw[n + 1] = {r[2], r[3]};
      }
    } else {
      for (int64_t n = 0; n < repN; ++n)
        for (int j = 0; j < 2; ++j)
          bw[n][j] = tf32(loadB(bIdx(n, k, j)));
    }
    for (int64_t m = 0; m < repM; ++m) {
      std::array<llvm::Value *, 4> aw;
      if (f16 || i8) {
        llvm::Value *rowM = B.CreateAdd(aRow, B.getInt32(static_cast<uint32_t>(m * 16 * wm)));
        llvm::Value *colK = B.CreateAdd(aCol, B.getInt32(static_cast<uint32_t>(kr * kStep)));
        auto r = ldmatrix(4, false, operandAddr32(0, ldA, rowM, colK, 0));
        aw = {r[0], r[1], r[2], r[3]};
      } else {
        for (int j = 0; j < 4; ++j)
          aw[j] = tf32(loadA(aIdx(m, k, j)));
      }
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
