// Helpers for the CPU target's unit tests: compile kernel source (text or an example file) through
// the driver's tile pipeline and the CPU backend.
#pragma once

#include "tle/Driver/Compiler.h"
#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/CPU/CPUBackend.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <sstream>
#include <string>

namespace tle::cputest {

/// A compiled kernel, or the diagnostics that stopped it.
struct Compiled {
  std::unique_ptr<cpu::Kernel> kernel;
  std::string diagnostics;
  cpu::Kernel *operator->() const { return kernel.get(); }
};

/// Compiles `source` (Python syntax) with `signature` for the CPU.
inline Compiled compileSource(const std::string &source, const std::string &signature,
                              const cpu::CompileOptions &co = {}, const std::map<std::string, std::string> &defines = {},
                              const std::string &path = "test.tle") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile(path, source);
  driver::CompileOptions o;
  if (!signature.empty())
    o.signature = signature;
  o.defines = defines;
  Compiled c;
  if (auto fn = driver::compileToTile(file, o, diags))
    c.kernel = cpu::Kernel::compile(*fn, diags, co);
  c.diagnostics = err.str();
  return c;
}

/// Compiles examples/`name` with `signature`.
inline Compiled compileExample(const std::string &name, const std::string &signature, const cpu::CompileOptions &co = {}) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  std::string ioErr;
  uint32_t file = sm.loadFile(std::string(TLE_SOURCE_DIR) + "/examples/" + name, ioErr);
  REQUIRE(file != 0);
  driver::CompileOptions o;
  o.signature = signature;
  Compiled c;
  if (auto fn = driver::compileToTile(file, o, diags))
    c.kernel = cpu::Kernel::compile(*fn, diags, co);
  c.diagnostics = err.str();
  return c;
}

/// Requires that compilation succeeded, showing the diagnostics otherwise.
#define TLE_REQUIRE_COMPILED(c)                                                                                       \
  do {                                                                                                                 \
    INFO((c).diagnostics);                                                                                            \
    REQUIRE((c).kernel);                                                                                              \
  } while (0)

inline cpu::ArgValue i32(int32_t v) { return cpu::ArgValue::of<int32_t>(v); }

} // namespace tle::cputest
