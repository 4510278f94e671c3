// LLVM intrinsics named by text: the intrinsic's ID from its name, its overloaded types from
// the call's function type.
#include "tle/Target/Intrinsics.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

namespace tle::target {

namespace {

/// "(float, i32) -> float", for messages.
std::string signatureText(llvm::FunctionType *fty) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "(";
  for (unsigned i = 0; i < fty->getNumParams(); ++i) {
    os << (i ? ", " : "");
    fty->getParamType(i)->print(os);
  }
  os << ") -> ";
  fty->getReturnType()->print(os);
  return os.str();
}

} // namespace

llvm::Value *callNamedIntrinsic(llvm::IRBuilderBase &B, const std::string &name, llvm::Type *ret,
                                llvm::ArrayRef<llvm::Value *> args, const std::string &targetPrefix, std::string &why) {
  llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(name);
  if (id == llvm::Intrinsic::not_intrinsic) {
    why = "'" + name + "' is not an LLVM intrinsic";
    return nullptr;
  }
  if (llvm::Function::isTargetIntrinsic(id) && (targetPrefix.empty() || name.rfind(targetPrefix, 0) != 0)) {
    why = "'" + name + "' is an intrinsic of another target";
    return nullptr;
  }
  std::vector<llvm::Type *> params;
  for (llvm::Value *a : args)
    params.push_back(a->getType());
  llvm::FunctionType *fty = llvm::FunctionType::get(ret, params, false);
  llvm::SmallVector<llvm::Type *, 4> overloads;
  if (!llvm::Intrinsic::getIntrinsicSignature(id, fty, overloads)) {
    why = "'" + name + "' does not take " + signatureText(fty);
    return nullptr;
  }
  llvm::Module *m = B.GetInsertBlock()->getModule();
  llvm::Function *fn = llvm::Intrinsic::getDeclaration(m, id, overloads);
  if (name != llvm::Intrinsic::getBaseName(id).str() && name != fn->getName().str()) { // mangled for other types
    why = "'" + name + "' is mangled for other types than " + signatureText(fty) + " ('" + fn->getName().str() + "')";
    return nullptr;
  }
  return B.CreateCall(fn, args);
}

} // namespace tle::target
