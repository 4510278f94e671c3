// Host math functions backing ExternCall (libdevice `__nv_*` names) on the CPU target.
#pragma once

#include <string>
#include <vector>

namespace tle::cpu::detail {

/// A host function the generated code calls by `symbol`, bound into the JIT at `address`.
struct HostMathFn {
  std::string symbol; ///< the name the module declares, e.g. "sinf"
  void *address = nullptr;
  unsigned arity = 1; ///< operands (all of the one float type)
  bool isDouble = false;
};

/// The host function for libdevice function `fn` without its `__nv_` prefix ("sinf", "pow"),
/// or nullptr when there is none (the lowering then handles it inline or rejects it).
const HostMathFn *hostMathFunction(const std::string &fn);

/// Every host math function, for binding.
std::vector<HostMathFn> hostMathFunctions();

} // namespace tle::cpu::detail
