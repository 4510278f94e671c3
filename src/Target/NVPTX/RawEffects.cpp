// The shared-memory effects of a TLE-Raw function (see RawEffects.h), for insert-barriers: a raw
// call that only issues cp.async copies needs no barrier after it, one that only waits for them
// none before it, and one that does not touch shared memory none at all.
#include "RawEffects.h"
#include "tle/IR/RawCode.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <vector>

namespace tle::nvptx {

namespace {

/// The effect of one PTX instruction's opcode (its first word, after any predicate).
int ptxEffect(llvm::StringRef opcode) {
  if (opcode.starts_with("cp.async.wait_group") || opcode.starts_with("cp.async.wait_all"))
    return ir::kRawSharedAsyncWait;
  if (opcode.starts_with("cp.async.commit_group") || opcode.starts_with("cp.async.ca.") ||
      opcode.starts_with("cp.async.cg."))
    return ir::kRawSharedAsyncCopy;
  for (const char *p : {"ld", "st", "atom", "red", "bar", "barrier", "mbarrier", "fence", "membar", "wgmma",
                        "ldmatrix", "stmatrix", "tensormap", "cp", "multimem", "prefetch", "discard", "applypriority",
                        "createpolicy", "setmaxnreg", "trap", "exit", "call", "ret", "brkpt"})
    if (opcode == p || opcode.starts_with(std::string(p) + "."))
      return ir::kRawSharedAccess;
  return 0;
}

/// The effect of an inline-asm text: each statement (split at ';' and newlines, braces and
/// labels skipped) classified by its opcode.
int asmEffect(llvm::StringRef text) {
  int e = 0;
  llvm::SmallVector<llvm::StringRef, 8> stmts, lines;
  text.split(stmts, ';');
  for (llvm::StringRef t : stmts)
    t.split(lines, '\n');
  for (llvm::StringRef l : lines) {
    l = l.trim().ltrim("{} \t").trim();
    if (l.empty() || l.starts_with("//") || l.starts_with(".reg") || l.ends_with(":"))
      continue;
    if (l.starts_with("@")) // a predicate: @p or @!p, then the instruction
      l = l.drop_until([](char c) { return c == ' ' || c == '\t'; }).trim();
    e |= ptxEffect(l.take_until([](char c) { return c == ' ' || c == '\t'; }));
  }
  return e;
}

/// Whether a pointer in address space `as` may point into shared memory: generic (0), shared (3)
/// or a cluster's shared memory (7, this compiler's shared::cluster).
bool mayBeShared(unsigned as) { return as == 0 || as == 3 || as == 7; }

} // namespace

int rawSharedEffects(llvm::Function &entry) {
  int e = 0;
  std::vector<llvm::Function *> work = {&entry};
  llvm::SmallPtrSet<llvm::Function *, 8> seen = {&entry};
  while (!work.empty()) {
    llvm::Function *f = work.back();
    work.pop_back();
    for (llvm::BasicBlock &bb : *f)
      for (llvm::Instruction &i : bb) {
        if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(&i)) {
          e |= mayBeShared(ld->getPointerAddressSpace()) ? ir::kRawSharedAccess : 0;
        } else if (auto *st = llvm::dyn_cast<llvm::StoreInst>(&i)) {
          e |= mayBeShared(st->getPointerAddressSpace()) ? ir::kRawSharedAccess : 0;
        } else if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&i)) {
          e |= mayBeShared(rmw->getPointerAddressSpace()) ? ir::kRawSharedAccess : 0;
        } else if (auto *cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&i)) {
          e |= mayBeShared(cas->getPointerAddressSpace()) ? ir::kRawSharedAccess : 0;
        } else if (llvm::isa<llvm::FenceInst>(&i)) {
          e |= ir::kRawSharedAccess;
        } else if (auto *call = llvm::dyn_cast<llvm::CallBase>(&i)) {
          if (auto *ia = llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand())) {
            e |= asmEffect(ia->getAsmString());
            continue;
          }
          llvm::Function *callee = call->getCalledFunction();
          if (!callee)
            return ir::kRawSharedUnknown; // an indirect call
          if (!callee->isDeclaration()) {
            if (seen.insert(callee).second)
              work.push_back(callee);
            continue;
          }
          llvm::StringRef name = callee->getName();
          if (callee->doesNotAccessMemory() || name.starts_with("llvm.nvvm.read.ptx.sreg.") ||
              name.starts_with("__nv_") || name.starts_with("llvm.lifetime.") || name.starts_with("llvm.assume") ||
              name.starts_with("llvm.dbg."))
            continue;
          if (auto *mi = llvm::dyn_cast<llvm::MemIntrinsic>(call)) {
            e |= mayBeShared(mi->getDestAddressSpace()) ? ir::kRawSharedAccess : 0;
            if (auto *mt = llvm::dyn_cast<llvm::MemTransferInst>(mi))
              e |= mayBeShared(mt->getSourceAddressSpace()) ? ir::kRawSharedAccess : 0;
            continue;
          }
          return ir::kRawSharedUnknown; // a declaration that may do anything (barrier0, vprintf, ...)
        }
      }
  }
  return e | ir::kRawSharedKnown;
}

} // namespace tle::nvptx
