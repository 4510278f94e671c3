// LLVM intrinsics named by text (extern_elementwise's `llvm.*` symbols), shared by the CPU target
// and the NVPTX target.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <string>

namespace tle::target {

/// A call of the LLVM intrinsic `name` ("llvm.round", or mangled as "llvm.round.f32") on `args`
/// with result type `ret`. Null with `why` set when `name` is no LLVM intrinsic, is another
/// target's intrinsic (target-independent ones, and those whose name starts with
/// `targetPrefix` such as "llvm.nvvm.", are allowed; an empty prefix allows none), or does not
/// take these types.
llvm::Value *callNamedIntrinsic(llvm::IRBuilderBase &B, const std::string &name, llvm::Type *ret,
                                llvm::ArrayRef<llvm::Value *> args, const std::string &targetPrefix, std::string &why);

} // namespace tle::target
