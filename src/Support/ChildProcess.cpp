// Child processes killed with the compiler (see ChildProcess.h).
#include "tle/Support/ChildProcess.h"

#include <llvm/Support/Program.h>
#include <llvm/Support/Signals.h>

#include <array>
#include <atomic>
#include <mutex>
#include <csignal>
#include <sys/types.h>

namespace tle {

namespace {

/// The running children's pids (0: a free slot). Read by the interrupt handler, which may only
/// use async-signal-safe calls: lock-free atomics and kill().
std::array<std::atomic<long>, 64> children{};

void killChildren() {
  for (std::atomic<long> &c : children)
    if (long pid = c.load())
      ::kill(static_cast<pid_t>(pid), SIGKILL);
}

} // namespace

int runChildProcess(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> argv,
                    llvm::ArrayRef<std::optional<llvm::StringRef>> redirects, unsigned secondsToWait, std::string &error) {
  static std::once_flag installed;
  std::call_once(installed, [] { llvm::sys::SetInterruptFunction(killChildren); });
  bool failed = false;
  llvm::sys::ProcessInfo pi =
      llvm::sys::ExecuteNoWait(program, argv, std::nullopt, redirects, /*MemoryLimit=*/0, &error, &failed);
  if (failed)
    return -1;
  std::atomic<long> *slot = nullptr;
  for (std::atomic<long> &c : children) {
    long free = 0;
    if (c.compare_exchange_strong(free, static_cast<long>(pi.Pid))) {
      slot = &c;
      break;
    }
  }
  llvm::sys::ProcessInfo done = llvm::sys::Wait(
      pi, secondsToWait ? std::optional<unsigned>(secondsToWait) : std::nullopt, &error);
  if (slot)
    slot->store(0);
  return done.ReturnCode;
}

} // namespace tle
