// Helpers for the CPU target's unit tests: compile kernel source (text or an example file) through
// the driver's tile pipeline and the CPU backend.
#pragma once

#include "tle/Driver/Compiler.h"
#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/CPU/CPUBackend.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
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

/// An independent reference for 16-bit floats: the value of each bit pattern from its fields,
/// and rounding to nearest (ties to even) by searching the sorted finite values.
struct Format16 {
  int expBits, manBits;
  double value(uint16_t h) const {
    int e = (h >> manBits) & ((1 << expBits) - 1), m = h & ((1 << manBits) - 1);
    int bias = (1 << (expBits - 1)) - 1;
    double v = e == 0 ? std::ldexp(m, 1 - bias - manBits) : std::ldexp((1 << manBits) + m, e - bias - manBits);
    return (h & 0x8000) ? -v : v;
  }
  uint16_t inf() const { return static_cast<uint16_t>(((1 << expBits) - 1) << manBits); }
  /// Rounds `x` to the nearest pattern (comparisons in long double are exact for these values).
  uint16_t round(long double x) const {
    using F = long double;
    uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    F a = std::fabs(x);
    uint16_t maxFinite = static_cast<uint16_t>(inf() - 1);
    uint16_t lo = 0, hi = maxFinite;
    if (a >= F(value(maxFinite))) {
      lo = maxFinite;
    } else {
      while (lo < hi) {
        uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
        if (F(value(mid)) <= a)
          lo = mid;
        else
          hi = static_cast<uint16_t>(mid - 1);
      }
    }
    F below = F(value(lo));
    // Past the largest finite value the next "value" is 2^(emax+1) (infinity).
    F above = lo == maxFinite ? F(std::ldexp(1.0, 1 << (expBits - 1))) : F(value(static_cast<uint16_t>(lo + 1)));
    uint16_t r = 2 * a < below + above ? lo
                 : 2 * a > below + above ? static_cast<uint16_t>(lo + 1)
                 : (lo & 1) ? static_cast<uint16_t>(lo + 1) : lo;
    return static_cast<uint16_t>(r | sign);
  }
  /// Rounds toward zero.
  uint16_t truncate(double x) const {
    uint16_t r = round(x);
    if (std::fabs(value(static_cast<uint16_t>(r & 0x7FFF))) > std::fabs(x) || (r & 0x7FFF) == inf())
      r = static_cast<uint16_t>(r - 1);
    return r;
  }
};
inline const Format16 kHalf{5, 10}, kBF16{8, 7};

} // namespace tle::cputest
