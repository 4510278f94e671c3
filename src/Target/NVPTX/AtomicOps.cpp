// Atomics on the GPU: one `atom.global` per element (PTX ISA §9.7.13.5, atom), predicated by the
// mask and by element ownership (replicated copies of an element do not repeat the atomic); the
// old values reach the replicas through shared memory when the result is used.
#include "Emitter.h"

#include <llvm/IR/InlineAsm.h>

namespace tle::nvptx {

using ir::AtomicKind;
using ir::DType;

namespace {

std::string opSuffix(AtomicKind k, DType t, bool cas) {
  unsigned bits = ir::bitWidth(t);
  std::string b = "b" + std::to_string(bits);
  if (cas)
    return "cas." + b;
  switch (k) {
  case AtomicKind::Add:
    if (t == DType::F16) return "add.noftz.f16";
    if (t == DType::BF16) return "add.noftz.bf16";
    if (t == DType::F32) return "add.f32";
    if (t == DType::F64) return "add.f64";
    return "add.u" + std::to_string(bits);
  case AtomicKind::Max: case AtomicKind::Min: {
    std::string o = k == AtomicKind::Max ? "max." : "min.";
    return o + (ir::isSigned(t) ? "s" : "u") + std::to_string(bits);
  }
  case AtomicKind::And: return "and." + b;
  case AtomicKind::Or: return "or." + b;
  case AtomicKind::Xor: return "xor." + b;
  case AtomicKind::Xchg: return "exch." + b;
  }
  return "";
}

} // namespace

void Emitter::emitAtomic(const ir::Op &op) {
  bool cas = op.kind == ir::OpKind::AtomicCAS;
  const ir::Value *ptr = op.operands[0];
  DType et = op.result()->type.dtype();
  unsigned bits = ir::bitWidth(et);
  AtomicKind kind = cas ? AtomicKind::Add : op.atomicKind(); // unused by a compare-and-swap
  std::string prefix = std::string("atom.") + ir::name(op.memSem()) + "." + ir::name(op.memScope()) + "." +
                       stateSpace(ptr->type.elem.space) + ".";
  // PTX ISA §9.7.13.5: atom.add.noftz.bf16 needs sm_90; below, a compare-and-swap loop adds.
  bool bf16Loop = !cas && et == ir::DType::BF16 && kind == AtomicKind::Add && smVersion() < 90;
  bool tile = ptr->type.isTile();
  const ir::Layout *l = tile ? op.result()->layout : nullptr;
  int n = tile ? l->numRegs() : 1;
  auto get = [&](const ir::Value *v) { return tile ? regsIn(v, *l) : std::vector<llvm::Value *>{scalar(v)}; };
  std::vector<llvm::Value *> P = get(ptr), V = get(op.operands[cas ? 2 : 1]);
  std::vector<llvm::Value *> Cmp = cas ? get(op.operands[1]) : std::vector<llvm::Value *>();
  std::vector<llvm::Value *> M = !cas && op.operands.size() > 2 ? get(op.operands[2]) : std::vector<llvm::Value *>();
  llvm::Value *owner =
      tile ? ownerPredicate(*l) : firstThread(B.CreateOr(laneId(), B.CreateShl(warpId(), 5)));
  llvm::Type *ity = B.getIntNTy(bits);
  std::string c = bits == 64 ? "l" : bits == 16 ? "h" : "r";
  std::string mov = bits == 64 ? "mov.b64" : bits == 16 ? "mov.b16" : "mov.b32";
  llvm::Type *ety = llvmType(op.result()->type.elem);

  // One predicated atomic returning the old bits (zero when the predicate is false).
  auto atom = [&](const std::string &suffix, llvm::Value *pred, llvm::Value *addr, llvm::Value *a, llvm::Value *b2) {
    std::string text = mov + " $0, 0;\n\t@$" + std::to_string(b2 ? 4 : 3) + " " + prefix + suffix + " $0, [$1], $2" +
                       (b2 ? ", $3" : "") + ";";
    auto [address, addrCons] = addressOperand(addr, ptr->type.elem.space);
    std::string cons = "=" + c + "," + addrCons + "," + c + (b2 ? "," + c : "") + ",b";
    std::vector<llvm::Type *> tys = {address->getType(), ity};
    std::vector<llvm::Value *> args = {address, a};
    if (b2) {
      tys.push_back(ity);
      args.push_back(b2);
    }
    tys.push_back(B.getInt1Ty());
    args.push_back(pred);
    auto *fty = llvm::FunctionType::get(ity, tys, false);
    return B.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, /*hasSideEffects=*/true), args);
  };
  // bf16 add without atom.add.noftz.bf16 (sm_80 to sm_89), as CUDA's atomicAdd(__nv_bfloat16 *)
  // there: read the 16 bits, add the value with one rounding (fma.rn.bf16 x * 1.0 + v, sm_80),
  // and atom.cas.b16 (sm_70) the sum in while another thread changed the bits meanwhile. The
  // result is the bits replaced, 0 where the predicate is false. Labels take the asm's uid.
  auto casAddBF16 = [&](llvm::Value *pred, llvm::Value *addr, llvm::Value *v) {
    std::string space = stateSpace(ptr->type.elem.space);
    std::string loop = "Lbf16_add_loop_${:uid}", done = "Lbf16_add_done_${:uid}";
    std::string text = "{\n\t.reg .pred %p;\n\t.reg .b16 %a, %o, %n, %one;\n\t"
                       "mov.b16 %a, 0;\n\t@!$3 bra " + done + ";\n\t"
                       "mov.b16 %one, 0x3F80;\n\tld." + space + ".b16 %a, [$1];\n" +
                       loop + ":\n\tfma.rn.bf16 %n, %a, %one, $2;\n\t" +
                       prefix + "cas.b16 %o, [$1], %a, %n;\n\tsetp.ne.b16 %p, %o, %a;\n\t"
                       "mov.b16 %a, %o;\n\t@%p bra " + loop + ";\n" +
                       done + ":\n\tmov.b16 $0, %a;\n\t}";
    auto [address, addrCons] = addressOperand(addr, ptr->type.elem.space);
    std::vector<llvm::Type *> tys = {address->getType(), ity, B.getInt1Ty()};
    auto *fty = llvm::FunctionType::get(ity, tys, false);
    return B.CreateCall(fty, llvm::InlineAsm::get(fty, text, std::string("=h,") + addrCons + ",h,b", /*hasSideEffects=*/true),
                        {address, v, pred});
  };
  auto bitsOf = [&](llvm::Value *v) { return v->getType() == ity ? v : B.CreateBitCast(v, ity); };
  auto fromBits = [&](llvm::Value *v) { return ety == ity ? v : B.CreateBitCast(v, ety); };

  int dupMask = tile ? ir::replicatedRegisterBits(*l) : 0;
  std::vector<llvm::Value *> out(n);
  for (int r = 0; r < n; ++r) {
    if (r & dupMask) {
      out[r] = out[r & ~dupMask];
      continue;
    }
    llvm::Value *pred = M.empty() ? owner : B.CreateAnd(owner, M[r]);
    llvm::Value *old;
    if (!cas && ir::isFloat(et) && (kind == AtomicKind::Max || kind == AtomicKind::Min) && bits >= 32) {
      // IEEE order matches signed-integer order of the bits for non-negative values and reverse
      // unsigned order for negative ones: max = signed max (v >= 0) or unsigned min (v < 0).
      llvm::Value *nonneg = B.CreateFCmpOGE(V[r], llvm::ConstantFP::get(ety, 0.0));
      std::string w = std::to_string(bits);
      std::string posOp = kind == AtomicKind::Max ? "max.s" + w : "min.s" + w;
      std::string negOp = kind == AtomicKind::Max ? "min.u" + w : "max.u" + w;
      llvm::Value *a = atom(posOp, B.CreateAnd(pred, nonneg), P[r], bitsOf(V[r]), nullptr);
      llvm::Value *bOld = atom(negOp, B.CreateAnd(pred, B.CreateNot(nonneg)), P[r], bitsOf(V[r]), nullptr);
      old = B.CreateSelect(nonneg, a, bOld);
    } else if (bf16Loop) {
      old = casAddBF16(pred, P[r], bitsOf(V[r]));
    } else {
      old = atom(opSuffix(kind, et, cas), pred, P[r], bitsOf(cas ? Cmp[r] : V[r]), cas ? bitsOf(V[r]) : nullptr);
    }
    out[r] = fromBits(old);
  }
  // Replicas (and, for a scalar, every thread but the first) get the old values from the owner.
  bool replicated = !tile || ownerPredicate(*l) != B.getTrue();
  if (used_.count(op.result()) && replicated) {
    unsigned eb = ir::storageBytes(et);
    int64_t elems = tile ? op.result()->type.numElements() : 1;
    assertScratchFits(elems * eb);
    barrier();
    for (int r = 0; r < n; ++r) {
      if (r & dupMask)
        continue;
      llvm::Value *idx = tile ? linearize(coord(*l, r), op.result()->type.shape) : B.getInt32(0);
      llvm::Value *addr = smemPtr(B.CreateMul(idx, B.getInt32(eb)));
      llvm::Value *pred = owner;
      auto *then = llvm::BasicBlock::Create(ctx, "atomic.share", B.GetInsertBlock()->getParent());
      auto *cont = llvm::BasicBlock::Create(ctx, "atomic.shared", B.GetInsertBlock()->getParent());
      B.CreateCondBr(pred, then, cont);
      B.SetInsertPoint(then);
      B.CreateStore(out[r], addr);
      B.CreateBr(cont);
      B.SetInsertPoint(cont);
    }
    barrier();
    for (int r = 0; r < n; ++r) {
      if (r & dupMask) {
        out[r] = out[r & ~dupMask];
        continue;
      }
      llvm::Value *idx = tile ? linearize(coord(*l, r), op.result()->type.shape) : B.getInt32(0);
      out[r] = B.CreateLoad(ety, smemPtr(B.CreateMul(idx, B.getInt32(eb))));
    }
  }
  vals_[op.result()] = out;
}

} // namespace tle::nvptx
