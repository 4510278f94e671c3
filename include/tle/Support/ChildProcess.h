// Running the tools the compiler drives (ptxas, clang) so that they do not outlive it.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

namespace tle {

/// llvm::sys::ExecuteAndWait's contract (the exit status; -1 when the program could not be
/// started, -2 when it crashed or ran past `secondsToWait` (0: no limit), `error` saying why),
/// with the child registered while it runs: when the compiler is interrupted (SIGINT, SIGTERM,
/// SIGHUP, as a build's timeout sends), the child is killed before the compiler exits, instead
/// of running on (ptxas on a very large kernel can take hours). Thread-safe; up to 64 children
/// at once are tracked.
int runChildProcess(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> argv,
                    llvm::ArrayRef<std::optional<llvm::StringRef>> redirects, unsigned secondsToWait, std::string &error);

} // namespace tle
