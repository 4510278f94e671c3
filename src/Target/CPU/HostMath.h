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

/// A host function bound into the JIT under `name`.
struct HostSymbol {
  std::string name;
  void *address = nullptr;
};

/// Every host function generated code may call: the libdevice stand-ins above and the C library
/// functions LLVM lowers intrinsics to (expf, fmodf, fma, memcpy, memset, ...).
const std::vector<HostSymbol> &hostSymbols();

/// Whether `name` is one of hostSymbols() or reserved for the CPU target's helpers (`__tle_`):
/// a kernel of that name gets another LLVM function name so that it cannot capture those calls.
bool isHostSymbol(const std::string &name);

} // namespace tle::cpu::detail
