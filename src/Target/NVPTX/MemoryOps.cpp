// Global loads and stores: vectorised (up to 16 bytes per thread) where axis info proves
// contiguity and alignment, predicated by the mask, as `ld.global` / `st.global` inline asm
// (PTX ISA §9.7.9.8 ld, §9.7.9.10 st).
#include "Emitter.h"
#include "tle/IR/BoundMask.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>
#include <cstdio>
#include <optional>

namespace tle::nvptx {

using ir::DType;

int Emitter::vectorWidth(const ir::Value *ptr, const ir::Value *mask) {
  if (ptr->type.isScalar())
    return 1;
  const ir::Layout &l = *ptr->layout;
  int64_t vec = std::min<int64_t>(ir::contiguousRegisters(l, l.rank() - 1), axis.accessVector(ptr, mask));
  return static_cast<int>(std::max<int64_t>(1, vec));
}

namespace {

/// How `vec` elements of `eb` bytes travel: as `words` registers of `wordBits` bits.
struct Packing {
  int words;
  int wordBits;
  const char *ptxType() const { return wordBits == 32 ? "b32" : wordBits == 16 ? "b16" : "b8"; }
  const char *constraint() const { return wordBits == 32 ? "r" : "h"; }
};

Packing packing(int vec, unsigned eb) {
  int bytes = vec * static_cast<int>(eb);
  if (bytes >= 4)
    return {bytes / 4, 32};
  return {1, bytes * 8};
}

std::string vecSuffix(int words) { return words == 1 ? "" : ".v" + std::to_string(words); }

std::string hexLiteral(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(v));
  return buf;
}

/// The bit patterns of `elems` (constants of one scalar type) packed little-endian into
/// `words` words of `wordBits` bits, as a masked-off load leaves them in its registers; nullopt
/// when an element is not a constant.
std::optional<std::vector<uint64_t>> constantWords(const std::vector<llvm::Value *> &elems, int wordBits,
                                                   int words) {
  std::vector<uint64_t> out(words, 0);
  unsigned bits = elems.empty() ? 0 : elems[0]->getType()->getPrimitiveSizeInBits();
  if (bits == 1)
    bits = 8; // i1 travels as one byte
  for (size_t k = 0; k < elems.size(); ++k) {
    uint64_t v;
    if (auto *cf = llvm::dyn_cast<llvm::ConstantFP>(elems[k]))
      v = cf->getValueAPF().bitcastToAPInt().getZExtValue();
    else if (auto *ci = llvm::dyn_cast<llvm::ConstantInt>(elems[k]))
      v = ci->getValue().getZExtValue();
    else
      return std::nullopt;
    if (bits < 64)
      v &= (uint64_t(1) << bits) - 1;
    // An element may span several words (fp64 / i64 in 32-bit words) or share one (fp16).
    for (unsigned done = 0; done < bits;) {
      uint64_t bit = k * bits + done;
      size_t w = bit / wordBits;
      unsigned at = bit % wordBits, take = std::min<unsigned>(bits - done, wordBits - at);
      if (w >= out.size())
        return std::nullopt;
      uint64_t part = (v >> done) & (take >= 64 ? ~uint64_t(0) : (uint64_t(1) << take) - 1);
      out[w] |= part << at;
      done += take;
    }
  }
  return out;
}

} // namespace

namespace {
/// The qualifiers of a global ld/st for `op`'s hints (PTX ISA §9.7.9.8-9.7.9.9): a cache operator,
/// or an L1 eviction priority, and for an eviction policy an L2 cache hint whose policy
/// (createpolicy, PTX ISA §9.7.9.17) `policySetup` makes in the register %tle_pol. Empty for
/// none; "ld.volatile.global" replaces "ld.global" for volatile loads (no other qualifier).
struct MemoryHints {
  std::string qualifiers;  ///< after "ld.global" / "st.global"
  std::string policySetup; ///< instructions before the access ("" without an L2 policy)
  bool usesPolicy = false; ///< the access takes ", %tle_pol" as its last operand
};
MemoryHints memoryHints(const ir::Op &op) {
  MemoryHints h;
  if (op.kind == ir::OpKind::Load && op.isVolatile()) // ld.volatile takes no cache qualifier
    return h;
  ir::CacheHint c = op.cacheHint();
  ir::EvictionHint e = op.evictionHint();
  if (c != ir::CacheHint::None)
    h.qualifiers += ir::cacheHintName(c);
  if (e != ir::EvictionHint::None) {
    std::string pri = ir::evictionHintName(e);
    if (c == ir::CacheHint::None) // the two forms of ld/st: a cache operator or an L1 priority
      h.qualifiers += ".L1::" + pri;
    h.qualifiers += ".L2::cache_hint";
    h.policySetup = ".reg .b64 %tle_pol;\n\tcreatepolicy.fractional.L2::" + pri + ".b64 %tle_pol, 1.0;\n\t";
    h.usesPolicy = true;
  }
  return h;
}
} // namespace

void Emitter::emitLoad(const ir::Op &op) {
  const ir::Value *ptr = op.operands[0];
  const ir::Value *mask = op.operands.size() > 1 ? op.operands[1] : nullptr;
  const ir::Value *other = op.operands.size() > 2 ? op.operands[2] : nullptr;
  ir::ScalarType et = op.result()->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  bool tile = ptr->type.isTile();
  const ir::Layout *l = tile ? op.result()->layout : nullptr;
  int n = tile ? l->numRegs() : 1;
  std::vector<llvm::Value *> P = tile ? regsIn(ptr, *l) : std::vector<llvm::Value *>{scalar(ptr)};
  std::vector<llvm::Value *> M, O;
  if (mask)
    M = tile ? regsIn(mask, *l) : std::vector<llvm::Value *>{scalar(mask)};
  if (other)
    O = tile ? regsIn(other, *l) : std::vector<llvm::Value *>{scalar(other)};
  int vec = vectorWidth(ptr, mask);
  Packing pk = packing(vec, eb);
  llvm::Type *wordTy = B.getIntNTy(pk.wordBits == 8 ? 16 : pk.wordBits);
  llvm::Type *sty = storageType(et);
  std::string space = stateSpace(ptr->type.elem.space);

  std::vector<llvm::Value *> out(n);
  for (int g = 0; g < n; g += vec) {
    // ld.global[.vN].bW {d...}, [addr]; with a predicate when masked: the asm first writes
    // `other` when it is a constant (then no select follows), else zeros.
    std::optional<std::vector<uint64_t>> otherWords;
    if (mask && other)
      otherWords = constantWords(std::vector<llvm::Value *>(O.begin() + g, O.begin() + g + vec), pk.wordBits,
                                 pk.words);
    std::string text;
    std::string cons;
    for (int w = 0; w < pk.words; ++w) {
      cons += std::string(w ? "," : "") + "=" + pk.constraint();
      if (mask)
        text += "mov." + std::string(pk.wordBits == 32 ? "b32" : "b16") + " $" + std::to_string(w) + ", " +
                hexLiteral(otherWords ? (*otherWords)[w] : 0) + ";\n\t";
    }
    auto [addr, addrCons] = addressOperand(P[g], ptr->type.elem.space);
    cons += std::string(",") + addrCons;
    std::string regsList;
    for (int w = 0; w < pk.words; ++w)
      regsList += (w ? ", $" : "$") + std::to_string(w);
    if (pk.words > 1)
      regsList = "{" + regsList + "}";
    std::string pred;
    if (mask) {
      cons += ",b";
      pred = "@$" + std::to_string(pk.words + 1) + " ";
    }
    MemoryHints hints = memoryHints(op);
    text += hints.policySetup + pred + (op.isVolatile() ? "ld.volatile." + space : "ld." + space + hints.qualifiers) +
            vecSuffix(pk.words) + "." + (pk.wordBits == 8 ? "u8" : pk.ptxType()) + " " + regsList + ", [ $" +
            std::to_string(pk.words) + " + 0 ]" + (hints.usesPolicy && !op.isVolatile() ? ", %tle_pol" : "") + ";";
    if (!hints.policySetup.empty())
      text = "{\n\t" + text + "\n\t}";
    std::vector<llvm::Type *> rtys(pk.words, wordTy);
    llvm::Type *retTy = pk.words == 1 ? wordTy : static_cast<llvm::Type *>(llvm::StructType::get(ctx, rtys));
    std::vector<llvm::Type *> argTys = {addr->getType()};
    std::vector<llvm::Value *> args = {addr};
    if (mask) {
      argTys.push_back(B.getInt1Ty());
      args.push_back(M[g]);
    }
    auto *fty = llvm::FunctionType::get(retTy, argTys, false);
    auto *asmv = llvm::InlineAsm::get(fty, text, cons, /*hasSideEffects=*/true);
    llvm::Value *res = B.CreateCall(fty, asmv, args);
    // Unpack words into elements.
    std::vector<llvm::Value *> elems;
    if (pk.wordBits == 32) {
      llvm::Value *v = llvm::UndefValue::get(llvm::FixedVectorType::get(B.getInt32Ty(), pk.words));
      for (int w = 0; w < pk.words; ++w)
        v = B.CreateInsertElement(v, pk.words == 1 ? res : B.CreateExtractValue(res, w), w);
      llvm::Value *asElems = B.CreateBitCast(v, llvm::FixedVectorType::get(sty, vec));
      for (int k = 0; k < vec; ++k)
        elems.push_back(B.CreateExtractElement(asElems, k));
    } else if (pk.wordBits == 16) {
      llvm::Value *asElems = B.CreateBitCast(res, llvm::FixedVectorType::get(sty, vec));
      for (int k = 0; k < vec; ++k)
        elems.push_back(B.CreateExtractElement(asElems, k));
    } else {
      elems.push_back(B.CreateTrunc(res, B.getInt8Ty()));
    }
    for (int k = 0; k < vec; ++k) {
      llvm::Value *e = elems[k];
      if (et.dtype == DType::I1)
        e = B.CreateICmpNE(e, B.getInt8(0));
      if (other && !otherWords)
        e = B.CreateSelect(M[g + k], e, O[g + k]);
      out[g + k] = e;
    }
  }
  vals_[op.result()] = out;
}

std::pair<llvm::Value *, bool> Emitter::boundsMask(const ir::Op &store) {
  if (!store.isBoundsMask())
    return {nullptr, false};
  std::optional<ir::BoundMask> bm = ir::boundMaskOf(store);
  if (!bm) // the verifier checked the mark
    diags.fatal(store.loc, "internal error: a store marked 'bounds' without a bound mask");
  const ir::Layout &l = *store.operands[0]->layout;
  llvm::Value *d = B.CreateSub(scalar(bm->bound), B.getInt32(static_cast<uint32_t>(bm->range->arangeStart())));
  for (const ir::Value *o : bm->offsets)
    d = B.CreateSub(d, scalar(o));
  d = B.CreateSub(d, laneWarpCoord(l)[0]);
  return {d, bm->inclusive};
}

void Emitter::emitStore(const ir::Op &op) {
  if (auto it = tmaStores_.find(&op); it != tmaStores_.end())
    return emitTmaStore(op, it->second);
  const ir::Value *ptr = op.operands[0];
  const ir::Value *val = op.operands[1];
  const ir::Value *mask = op.operands.size() > 2 ? op.operands[2] : nullptr;
  ir::ScalarType et = val->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  bool tile = ptr->type.isTile();
  const ir::Layout *l = tile ? ptr->layout : nullptr;
  int n = tile ? l->numRegs() : 1;
  std::vector<llvm::Value *> P = tile ? regs(ptr) : std::vector<llvm::Value *>{scalar(ptr)};
  std::vector<llvm::Value *> V = tile ? regsIn(val, *l) : std::vector<llvm::Value *>{scalar(val)};
  // Only one thread writes each element: replicated lanes/warps (and, for scalars, every
  // thread but the first) are predicated off.
  llvm::Value *owner = tile ? ownerPredicate(*l) : firstThread(B.CreateOr(laneId(), B.CreateShl(warpId(), 5)));
  auto [bounds, boundsLe] = mask && tile ? boundsMask(op) : std::pair<llvm::Value *, bool>{nullptr, false};
  // The mask's own registers, unless the store recomputes it (no conversion into `l` then).
  std::vector<llvm::Value *> M;
  if (mask && !bounds)
    M = tile ? regsIn(mask, *l) : std::vector<llvm::Value *>{scalar(mask)};
  int vec = vectorWidth(ptr, mask);
  Packing pk = packing(vec, eb);
  llvm::Type *wordTy = B.getIntNTy(pk.wordBits == 8 ? 16 : pk.wordBits);
  llvm::Type *sty = storageType(et);
  std::string space = stateSpace(ptr->type.elem.space);
  // Registers whose bit has a zero basis duplicate a lower register: skip them.
  int dupMask = 0;
  if (tile)
    for (size_t i = 0; i < l->reg.size(); ++i)
      if (std::all_of(l->reg[i].begin(), l->reg[i].end(), [](int64_t x) { return x == 0; }))
        dupMask |= 1 << i;
  for (int g = 0; g < n; g += vec) {
    if (g & dupMask)
      continue;
    std::vector<llvm::Value *> elems;
    for (int k = 0; k < vec; ++k) {
      llvm::Value *e = V[g + k];
      if (et.dtype == DType::I1)
        e = B.CreateZExt(e, B.getInt8Ty());
      elems.push_back(e);
    }
    std::vector<llvm::Value *> words;
    if (pk.wordBits == 8) {
      words.push_back(B.CreateZExt(elems[0], B.getInt16Ty()));
    } else {
      llvm::Value *v = llvm::UndefValue::get(llvm::FixedVectorType::get(sty, vec));
      for (int k = 0; k < vec; ++k)
        v = B.CreateInsertElement(v, elems[k], k);
      if (pk.wordBits == 16) {
        words.push_back(B.CreateBitCast(v, wordTy));
      } else {
        llvm::Value *w = B.CreateBitCast(v, llvm::FixedVectorType::get(B.getInt32Ty(), pk.words));
        for (int i = 0; i < pk.words; ++i)
          words.push_back(B.CreateExtractElement(w, i));
      }
    }
    llvm::Value *pred = owner;
    if (mask && !bounds)
      pred = B.CreateAnd(pred, M[g]);
    std::string regsList;
    for (int w = 0; w < pk.words; ++w)
      regsList += (w ? ", $" : "$") + std::to_string(w + 2);
    if (pk.words > 1)
      regsList = "{" + regsList + "}";
    MemoryHints hints = memoryHints(op);
    // With a bounds mask, the predicate is the owner's and `rc(g) < d` (or `<=`), computed here.
    std::string guard = "$1";
    std::string boundsSetup;
    if (bounds) {
      guard = "%tle_m";
      boundsSetup = ".reg .pred %tle_m;\n\tsetp." + std::string(boundsLe ? "ge" : "gt") + ".s32 %tle_m, $" +
                    std::to_string(pk.words + 2) + ", " + std::to_string(l->regCoord(g)[0]) +
                    ";\n\tand.pred %tle_m, %tle_m, $1;\n\t";
    }
    std::string text = boundsSetup + hints.policySetup + "@" + guard + " st." + space + hints.qualifiers +
                       vecSuffix(pk.words) + "." + (pk.wordBits == 8 ? "u8" : pk.ptxType()) + " [ $0 + 0 ], " +
                       regsList + (hints.usesPolicy ? ", %tle_pol" : "") + ";";
    if (!hints.policySetup.empty() || bounds)
      text = "{\n\t" + text + "\n\t}";
    auto [addr, addrCons] = addressOperand(P[g], ptr->type.elem.space);
    std::string cons = std::string(addrCons) + ",b";
    std::vector<llvm::Type *> argTys = {addr->getType(), B.getInt1Ty()};
    std::vector<llvm::Value *> args = {addr, pred};
    for (auto *w : words) {
      cons += std::string(",") + pk.constraint();
      argTys.push_back(w->getType());
      args.push_back(w);
    }
    if (bounds) {
      cons += ",r";
      argTys.push_back(bounds->getType());
      args.push_back(bounds);
    }
    auto *fty = llvm::FunctionType::get(B.getVoidTy(), argTys, false);
    B.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, /*hasSideEffects=*/true), args);
  }
}

} // namespace tle::nvptx
