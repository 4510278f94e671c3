// tl.dot on Hopper's warpgroup tensor-core instructions: wgmma.mma_async (PTX ISA §9.7.15,
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): fp16/bf16, tf32 (fp32 inputs of
// input_precision "tf32") and fp8 (e4m3/e5m2, in any pair) inputs with fp32 accumulation, int8 /
// uint8 with int32 accumulation; both operands read from shared memory through matrix
// descriptors (tf32, fp8 and int8: both K-major, the only order those types have).
//
// Operands either arrive there through cp.async (AsyncCopy.cpp: a pipelined loop's slots, in the
// swizzled layout) or are stored from registers into a staging area by the dot itself. The
// accumulator stays in the mma.sync m16n8 register layout (ir::mmaAccLayout): with the warps of
// a CTA along M, 16 rows each, warp w of warpgroup g holds rows 64 g + 16 (w mod 4) .. + 15 of
// every m64nNk16 instruction, exactly the fragment of §9.7.15.5.1 ("Register fragments"), so
// layout assignment does not depend on the instruction family.
#include "Emitter.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/RegisterEstimate.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>

#include <map>

namespace tle::nvptx {

using SmemOperand = Emitter::WgmmaSmem;

bool Emitter::useWgmma(const ir::Op &dot) const { return transforms::wgmmaDot(dot, arch, f.numWarps); }

void Emitter::emitWgmma(const ir::Op &op) {
  transforms::DotPlan plan = transforms::planDot(op, f.numWarps);
  std::vector<llvm::Value *> C = regsIn(op.operands[2], plan.acc);
  ir::DType in = op.operands[0]->type.dtype(), inB = op.operands[1]->type.dtype();
  int64_t M = op.operands[0]->type.shape[0], K = op.operands[0]->type.shape[1], N = op.operands[1]->type.shape[1];
  unsigned eb = ir::storageBytes(in);
  // tf32, fp8 and int8 read both operands K-major (the instruction has no transpose for them).
  bool kMajorOnly = transforms::wgmmaNeedsKMajor(in);
  llvm::Type *i32 = B.getInt32Ty();
  auto *voidTy = llvm::FunctionType::get(B.getVoidTy(), false);
  auto plain = [&](const std::string &text) { B.CreateCall(voidTy, llvm::InlineAsm::get(voidTy, text, "", true)); };

  // Operand placement. Registers are staged with the dim they hold contiguously as the
  // tile's contiguous dim, so that stores are 16-byte vectors.
  bool asyncA = isAsync(op.operands[0]), asyncB = isAsync(op.operands[1]);
  // A held in the accumulator layout of an [M, K] tile (e.g. attention's probabilities, computed
  // from a dot's result) is already wgmma's register fragment for A (PTX ISA §9.7.15.5.1: per
  // warp 16 rows, a0/a1 rows r and r + 8 at columns 2q, 2q + 1, a2/a3 the same 8 columns on):
  // it is read from registers, not staged.
  bool regA = !asyncA && eb == 2 && *op.operands[0]->layout == ir::mmaAccLayout(M, K, f.numWarps);
  SmemOperand ops[2];
  int64_t staging = 0;
  std::vector<int> stagedDim(2, -1);
  for (unsigned k = regA ? 1 : 0; k < 2; ++k) {
    const ir::Value *v = op.operands[k];
    SmemOperand &s = ops[k];
    int contig;
    if (wgmmaReadsSlot(v)) {
      contig = asyncTransposed_.count(v) ? 0 : 1;
      s.swizzle = asyncBuffer(v).swizzle;
    } else {
      // Registers, or a restaged slot (read into registers K-contiguous, below).
      assert(!isAsync(v) || kMajorOnly);
      const ir::Layout &l = *v->layout;
      contig = ir::contiguousRegisters(l, 1) >= ir::contiguousRegisters(l, 0) ? 1 : 0;
      if (kMajorOnly)
        contig = k == 0 ? 1 : 0; // K contiguous, whatever the registers hold
      stagedDim[k] = contig;
    }
    s.cols = v->type.shape[contig];
    s.rows = v->type.shape[1 - contig];
    if (!wgmmaReadsSlot(v))
      s.swizzle = static_cast<int>(std::min<int64_t>(128, s.cols * eb));
    // A is [M, K]: K-major when K (dim 1) is contiguous; B is [K, N]: K-major when dim 0 is.
    s.kMajor = k == 0 ? contig == 1 : contig == 0;
    if (kMajorOnly && !s.kMajor)
      diags.fatal(op.loc, std::string("internal error: a wgmma operand of ") + ir::name(in) +
                              " in shared memory is not K-major");
  }
  int64_t stageOff[2] = {0, 0};
  for (unsigned k = 0; k < 2; ++k)
    if (stagedDim[k] >= 0) {
      stageOff[k] = staging;
      staging += (ops[k].rows * ops[k].cols * eb + 1023) / 1024 * 1024;
    }
  // A restaged operand's copies were waited for before the dot (the pipeline pass's waits, with
  // the barrier that makes cp.async copies visible to every thread, which also orders the
  // staging area's earlier readers); it is read from its slot K-contiguous
  // (ir::kContiguousLayout: 16 bytes of K per thread, lanes along N, so the reads of a warp are
  // consecutive elements of a row) and stored as the registers are.
  bool restage = (asyncA && !wgmmaReadsSlot(op.operands[0])) || (asyncB && !wgmmaReadsSlot(op.operands[1]));
  bool copiedOperand = (asyncA && !isTma(op.operands[0])) || (asyncB && !isTma(op.operands[1]));
  if (staging) {
    assertScratchFits(staging);
    if (!restage && !copiedOperand)
      barrier(); // earlier readers of the staging area are done (else the barrier after the wait)
    for (unsigned k = 0; k < 2; ++k) {
      const ir::Value *v = op.operands[k];
      if (stagedDim[k] < 0)
        continue;
      if (!isAsync(v)) {
        storeSwizzled(v, stagedDim[k], ops[k].rows, ops[k].swizzle, stageOff[k]);
        continue;
      }
      ir::Layout kc = ir::kContiguousLayout(v->type.shape, f.numWarps, eb);
      storeSwizzled(kc, slotRegisters(v, kc), v->type, stagedDim[k], ops[k].rows, ops[k].swizzle, stageOff[k]);
    }
  }
  if (staging) {
    plain("fence.proxy.async.shared::cta;"); // st.shared -> wgmma's reads (PTX ISA §9.7.15.6)
    barrier();
  }
  for (unsigned k = regA ? 1 : 0; k < 2; ++k)
    ops[k].base = wgmmaReadsSlot(op.operands[k]) ? asyncSlotAddr(op.operands[k])
                                          : B.CreatePtrToInt(smemPtr(B.getInt32(static_cast<uint32_t>(stageOff[k]))), i32);

  WgmmaIssue w{{ops[0], ops[1]}, regA, regA ? regs(op.operands[0]) : std::vector<llvm::Value *>{}, in, inB, M, N, K,
               op.maxNumImpreciseAcc(), op.loc};
  if (!issueWgmma(w, C)) {
    vals_[op.result()] = C;
    return;
  }
  // An `async` dot leaves its group in flight: the wgmma-waits pass's wgmma_wait ops retire it.
  if (!op.isAsyncWgmma())
    waitWgmma(C);
  vals_[op.result()] = C;
}

bool Emitter::issueWgmma(const WgmmaIssue &w, std::vector<llvm::Value *> &C) {
  const SmemOperand *ops = w.ops;
  const bool regA = w.regA;
  const ir::DType in = w.in, inB = w.inB;
  const int64_t M = w.M, N = w.N, K = w.K;
  const unsigned eb = ir::storageBytes(in);
  const bool fp8 = ir::isFP8(in), kMajorOnly = transforms::wgmmaNeedsKMajor(in), integer = ir::isInteger(in);
  const int64_t kStep = 32 / eb;
  llvm::Type *i32 = B.getInt32Ty(), *i64 = B.getInt64Ty();
  llvm::Type *accTy = integer ? i32 : static_cast<llvm::Type *>(B.getFloatTy());
  auto *voidTy = llvm::FunctionType::get(B.getVoidTy(), false);
  auto plain = [&](const std::string &text) { B.CreateCall(voidTy, llvm::InlineAsm::get(voidTy, text, "", true)); };
  // Matrix descriptor (PTX ISA §9.7.15.5.1.2): start address, leading-dimension byte offset
  // (between column blocks of the swizzled layout: rows x swizzle bytes), stride-dimension byte
  // offset (between 8-row groups: 8 x swizzle bytes), all in 16-byte units; swizzle mode in
  // bits 62-63 (1: 128 B, 2: 64 B, 3: 32 B).
  // Each operand's descriptor is computed once from its base address; the descriptor of a
  // sub-tile adds its byte offset (a multiple of 16, so a whole number of the start-address
  // field's units) as a constant. The field holds bits 4-17 of the shared address, so the sum
  // never carries out of it. Per-k-step descriptors are then one 64-bit add each and the
  // wgmma instructions of a dot issue back to back.
  llvm::Value *baseDesc[2] = {nullptr, nullptr};
  auto descriptor = [&](const SmemOperand &s, int64_t row, int64_t col, llvm::Value *rowDyn) {
    int64_t perRow = s.swizzle / eb;
    llvm::Value *&bd = baseDesc[&s == &ops[0] ? 0 : 1];
    if (!bd) {
      uint64_t mode = s.swizzle == 128 ? 1 : s.swizzle == 64 ? 2 : 3;
      uint64_t lbo = static_cast<uint64_t>(s.rows * s.swizzle) >> 4, sbo = static_cast<uint64_t>(s.swizzle / 2);
      uint64_t fixed = (lbo & 0x3FFF) << 16 | (sbo & 0x3FFF) << 32 | mode << 62;
      llvm::Value *addr = s.base;
      if (rowDyn)
        addr = B.CreateAdd(addr, B.CreateMul(rowDyn, B.getInt32(static_cast<uint32_t>(perRow * eb))));
      llvm::Value *start = B.CreateZExt(B.CreateAnd(B.CreateLShr(addr, 4), 0x3FFF), i64);
      bd = B.CreateOr(start, B.getInt64(fixed));
    }
    // Element offset of (row, col): whole column blocks, then rows of the block, then the
    // position in the (unswizzled) row; the hardware applies the XOR pattern to the address.
    int64_t elems = (col / perRow) * (s.rows * perRow) + row * perRow + col % perRow;
    if ((elems * eb) % 16)
      diags.fatal(w.loc, "internal error: a wgmma sub-tile does not start on a 16-byte boundary");
    return elems != 0 ? B.CreateAdd(bd, B.getInt64(static_cast<uint64_t>(elems * eb) >> 4)) : bd;
  };
  // The warpgroup's first row of M (uniform within the warpgroup).
  llvm::Value *wgRow = B.CreateMul(B.CreateLShr(warpId(), 2), B.getInt32(64));
  auto descA = [&](int64_t m0, int64_t k0) {
    const SmemOperand &s = ops[0];
    // K-major: rows are M (the warpgroup's rows added at run time); MN-major: rows are K and
    // the warpgroup's rows are columns, a whole number of column blocks apart (64 rows).
    if (s.kMajor)
      return descriptor(s, m0, k0, wgRow);
    llvm::Value *d = descriptor(s, k0, m0, nullptr);
    int64_t perRow = s.swizzle / eb;
    llvm::Value *blocks = B.CreateUDiv(wgRow, B.getInt32(static_cast<uint32_t>(perRow)));
    llvm::Value *delta = B.CreateMul(blocks, B.getInt32(static_cast<uint32_t>(s.rows * perRow * eb / 16)));
    return B.CreateAdd(d, B.CreateZExt(delta, i64));
  };
  auto descB = [&](int64_t n0, int64_t k0) {
    const SmemOperand &s = ops[1];
    return s.kMajor ? descriptor(s, n0, k0, nullptr) : descriptor(s, k0, n0, nullptr);
  };

  // Instruction N: the whole N up to 256 columns (the largest wgmma shape; N % 16 == 0, every
  // such N up to 256 is a shape of every input type).
  int64_t nInstr = N;
  while (nInstr > 256)
    nInstr /= 2;
  // ptxas must find an instruction's N / 2 accumulator registers and about 30 more free within
  // the per-thread ceiling (65536 over the block's threads, at most 255), or it stops with
  // "Insufficient registers" (C7602): with 16 warps (128 registers) an m64n256 needs 154. Such a
  // block issues narrower instructions, each on its slice of the accumulator.
  int64_t ceiling = transforms::registerCeiling(f.numWarps + f.producerWarps);
  while (nInstr % 32 == 0 && nInstr / 2 + 32 > ceiling)
    nInstr /= 2;
  int64_t repM = M / (16 * f.numWarps), repN = N / 8, chunks = N / nInstr;
  int nRegs = static_cast<int>(nInstr / 2);
  auto cIdx = [&](int64_t m, int64_t chunk, int i) {
    return (i & 3) | ((chunk * (nInstr / 8) + i / 4) << 2) | (m << (2 + log2i(repN)));
  };
  auto typeName = [](ir::DType t) {
    switch (t) {
    case ir::DType::BF16: return "bf16";
    case ir::DType::F8E4M3: return "e4m3";
    case ir::DType::F8E5M2: return "e5m2";
    case ir::DType::F32: return "tf32";
    case ir::DType::I8: return "s8";
    case ir::DType::U8: return "u8";
    default: return "f16";
    }
  };
  // Operands: nRegs outputs, nRegs inputs tied to them, then A (a descriptor, or four 32-bit
  // registers of packed pairs), B's descriptor and scale-d.
  int aOps = regA ? 4 : 1;
  auto ref = [](int i) { return "$" + std::to_string(i); };
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + ref(2 * nRegs + aOps + 1) + ", 0;\n" +
                     "wgmma.mma_async.sync.aligned.m64n" + std::to_string(nInstr) + "k" + std::to_string(kStep) +
                     (integer ? ".s32." : ".f32.") + typeName(in) + "." + typeName(inB) + " {";
  std::string cons;
  for (int i = 0; i < nRegs; ++i) {
    text += (i ? ", " : "") + ref(i);
    cons += integer ? "=r," : "=f,";
  }
  text += "}, ";
  if (regA)
    text += "{" + ref(2 * nRegs) + ", " + ref(2 * nRegs + 1) + ", " + ref(2 * nRegs + 2) + ", " + ref(2 * nRegs + 3) + "}";
  else
    text += ref(2 * nRegs);
  // Integer types have no imm-scale operands; only 16-bit types have imm-trans operands.
  text += ", " + ref(2 * nRegs + aOps) + (integer ? ", p" : ", p, 1, 1");
  if (!kMajorOnly) {
    if (!regA)
      text += std::string(", ") + (ops[0].kMajor ? "0" : "1"); // imm-trans-a exists for descriptors only
    text += std::string(", ") + (ops[1].kMajor ? "0" : "1");
  }
  text += ";\n}";
  for (int i = 0; i < nRegs; ++i)
    cons += std::to_string(i) + ",";
  cons += regA ? "r,r,r,r,l,r" : "l,l,r";
  std::vector<llvm::Type *> outTys(nRegs, accTy), inTys(nRegs, accTy);
  for (int i = 0; i < aOps; ++i)
    inTys.push_back(regA ? i32 : i64);
  inTys.push_back(i64);
  inTys.push_back(i32);
  // Register A: the [M, K] tile's accumulator-layout registers, 8-column block b of row block m
  // at (i | b << 2 | m << (2 + log2(K / 8))); a pair (i, i + 1) packs into one 32-bit register.
  std::vector<llvm::Value *> Aregs;
  if (regA)
    Aregs = w.aRegs;
  llvm::Type *pairTy = llvm::FixedVectorType::get(llvmType(ir::ScalarType{in}), 2);
  auto aFragment = [&](int64_t m, int64_t kk) {
    std::vector<llvm::Value *> out;
    for (int64_t blk = 2 * kk; blk < 2 * kk + 2; ++blk)
      for (int half = 0; half < 2; ++half) {
        int64_t base = (half * 2) | (blk << 2) | (m << (2 + log2i(K / 8)));
        llvm::Value *v = llvm::UndefValue::get(pairTy);
        v = B.CreateInsertElement(v, Aregs[base], uint64_t(0));
        v = B.CreateInsertElement(v, Aregs[base + 1], uint64_t(1));
        out.push_back(B.CreateBitCast(v, i32));
      }
    return out;
  };
  auto *mmaTy = llvm::FunctionType::get(llvm::StructType::get(ctx, outTys), inTys, false);
  auto *mma = llvm::InlineAsm::get(mmaTy, text, cons, /*hasSideEffects=*/true);

  // A's fragments are packed before the fence: registers written between it and the wgmmas
  // that read them make ptxas insert more fences (C7519).
  std::map<std::pair<int64_t, int64_t>, std::vector<llvm::Value *>> aFrag;
  if (regA)
    for (int64_t m = 0; m < repM; ++m)
      for (int64_t kk = 0; kk < K / 16; ++kk)
        aFrag[{m, kk}] = aFragment(m, kk);
  // fp8 with max_num_imprecise_acc = n < K (Op::maxNumImpreciseAcc; Triton's knob): Hopper's fp8 wgmma adds
  // with fewer bits than fp32, so every n elements of K go into fresh registers (scale-d = 0 on
  // the first instruction) that are then added to the accumulator in fp32.
  // The base descriptors are computed before the first wgmma.fence, outside the instructions'
  // issue sequence.
  if (!regA)
    descA(0, 0);
  descB(0, 0);
  const int64_t every = w.maxNumImpreciseAcc;
  int64_t promote = fp8 && every > 0 && every < K ? std::max<int64_t>(1, every / kStep) : 0;
  if (promote) {
    for (int64_t m = 0; m < repM; ++m)
      for (int64_t ch = 0; ch < chunks; ++ch)
        for (int64_t g = 0; g < K / kStep; g += promote) {
          std::vector<llvm::Value *> D(nRegs, llvm::ConstantFP::get(accTy, 0.0));
          plain("wgmma.fence.sync.aligned;");
          for (int64_t kk = g; kk < std::min(g + promote, K / kStep); ++kk) {
            std::vector<llvm::Value *> args(D.begin(), D.end());
            args.push_back(descA(m * 16 * f.numWarps, kk * kStep));
            args.push_back(descB(ch * nInstr, kk * kStep));
            args.push_back(B.getInt32(kk == g ? 0 : 1));
            llvm::Value *res = B.CreateCall(mmaTy, mma, args);
            for (int i = 0; i < nRegs; ++i)
              D[size_t(i)] = B.CreateExtractValue(res, static_cast<unsigned>(i));
          }
          plain("wgmma.commit_group.sync.aligned;");
          waitWgmma(D);
          for (int i = 0; i < nRegs; ++i)
            C[cIdx(m, ch, i)] = B.CreateFAdd(C[cIdx(m, ch, i)], D[size_t(i)]);
        }
    return false;
  }
  // A zero accumulator (tl.dot without acc=, or acc= a zeros tile) is not materialised: the
  // first wgmma of each accumulator block runs with scale-d = 0 (D = A * B, PTX ISA §9.7.15.5.2),
  // its accumulator inputs undefined. This saves one register move per accumulator element per
  // dot (32 per thread for a 64 x 64 fp32 block), on every iteration of an attention loop.
  bool zeroAcc = std::all_of(C.begin(), C.end(), [](llvm::Value *c) {
    auto *k = llvm::dyn_cast<llvm::Constant>(c);
    return k && k->isNullValue();
  });
  plain("wgmma.fence.sync.aligned;");
  // One accumulator block at a time, all of K for it: consecutive wgmmas chain on the same
  // registers.
  for (int64_t m = 0; m < repM; ++m)
    for (int64_t ch = 0; ch < chunks; ++ch)
      for (int64_t kk = 0; kk < K / kStep; ++kk) {
        bool fresh = zeroAcc && kk == 0;
        std::vector<llvm::Value *> args;
        for (int i = 0; i < nRegs; ++i)
          args.push_back(fresh ? llvm::UndefValue::get(accTy) : C[cIdx(m, ch, i)]);
        if (regA) {
          for (llvm::Value *a : aFrag[{m, kk}])
            args.push_back(a);
        } else {
          args.push_back(descA(m * 16 * f.numWarps, kk * kStep));
        }
        args.push_back(descB(ch * nInstr, kk * kStep));
        args.push_back(B.getInt32(fresh ? 0 : 1));
        llvm::Value *res = B.CreateCall(mmaTy, mma, args);
        for (int i = 0; i < nRegs; ++i)
          C[cIdx(m, ch, i)] = B.CreateExtractValue(res, static_cast<unsigned>(i));
      }
  plain("wgmma.commit_group.sync.aligned;");
  return true;
}

void Emitter::waitWgmma(std::vector<llvm::Value *> &C, int pending) {
  // The wait takes the accumulators (fp32 or int32) in and out, so that nothing reads them
  // before it.
  std::string wtext = "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";";
  std::string wcons;
  std::vector<llvm::Type *> wTys;
  for (llvm::Value *c : C) {
    wTys.push_back(c->getType());
    wcons += c->getType()->isIntegerTy() ? "=r," : "=f,";
  }
  for (size_t i = 0; i < C.size(); ++i)
    wcons += std::to_string(i) + (i + 1 < C.size() ? "," : "");
  auto *waitTy = llvm::FunctionType::get(llvm::StructType::get(ctx, wTys), wTys, false);
  llvm::Value *w = B.CreateCall(waitTy, llvm::InlineAsm::get(waitTy, wtext, wcons, true), C);
  for (size_t i = 0; i < C.size(); ++i)
    C[i] = B.CreateExtractValue(w, static_cast<unsigned>(i));
}

void Emitter::emitWgmmaOp(const ir::Op &op) {
  if (arch != "sm_90a")
    diags.fatal(op.loc, "wgmma needs sm_90a; here the target is " + arch);
  const ir::Value *a = op.operands[0], *b = op.operands[1];
  // The matrix a scalar shared pointer addresses, in its buffer's layout (ir::sharedBuffer).
  auto matrix = [&](const ir::Value *p, bool kMajor) {
    const ir::Op *alloc = ir::sharedBuffer(p);
    std::array<int64_t, 2> m = ir::matrixShape(*alloc);
    SmemOperand s;
    s.base = B.CreatePtrToInt(scalar(p), B.getInt32Ty());
    s.rows = m[0];
    s.cols = m[1];
    s.swizzle = alloc->allocSwizzle();
    s.kMajor = kMajor;
    return s;
  };
  WgmmaIssue w;
  w.regA = a->type.isTile();
  w.in = w.regA ? a->type.dtype() : a->type.elem.pointee;
  w.inB = b->type.elem.pointee;
  w.M = op.result()->type.shape[0];
  w.N = op.result()->type.shape[1];
  if (w.regA) {
    w.aRegs = regs(a);
    w.K = a->type.shape[1];
  } else {
    w.ops[0] = matrix(a, !op.wgmmaTransA());
    w.K = op.wgmmaTransA() ? w.ops[0].rows : w.ops[0].cols;
  }
  w.ops[1] = matrix(b, op.wgmmaTransB());
  w.loc = op.loc;
  std::vector<llvm::Value *> C = regs(op.operands[2]);
  issueWgmma(w, C);
  vals_[op.result()] = C;
}

void Emitter::emitWgmmaWait(const ir::Op &op) {
  if (op.operands.empty()) { // waits for groups whose registers nothing reads before the next wait
    auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
    B.CreateCall(fty, llvm::InlineAsm::get(fty, "wgmma.wait_group.sync.aligned " + std::to_string(op.sync.pending) + ";",
                                           "", true));
    return;
  }
  std::vector<llvm::Value *> all;
  for (const ir::Value *v : op.operands)
    for (llvm::Value *r : regs(v))
      all.push_back(r);
  waitWgmma(all, op.sync.pending);
  size_t at = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    size_t n = regs(op.operands[i]).size();
    vals_[op.result(static_cast<unsigned>(i))] = std::vector<llvm::Value *>(all.begin() + at, all.begin() + at + n);
    at += n;
  }
}

} // namespace tle::nvptx
