// Shape predicates of dispatched specialisations: range and divisibility conditions on a launcher's integer arguments ("M <= 64", "N % 128 == 0"), parsed for tle-link --when and tle_add_kernels WHEN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tle::driver {

/// One predicate on an integer argument, with the comparison codes of tle_launcher.h
/// (TLE_LAUNCHER_LT ... TLE_LAUNCHER_MOD_EQ).
struct ShapePredicate {
  enum Op { Lt = 0, Le = 1, Gt = 2, Ge = 3, Eq = 4, Ne = 5, ModEq = 6 };
  std::string text;    ///< normalised spelling: "M <= 64", "N % 128 == 0"
  std::string name;    ///< the argument's name
  Op op = Le;          ///< the comparison
  int64_t value = 0;   ///< the right-hand side; for ModEq the remainder
  int64_t modulus = 0; ///< for ModEq: the divisor (not 0)

  /// The C spelling of op: "TLE_LAUNCHER_LE".
  const char *opMacro() const;
};

/// Parses `NAME OP INT` (OP one of < <= > >= == !=) or `NAME % INT == INT` (Python's modulo: the
/// remainder has the divisor's sign and is smaller than it in magnitude). Returns nullopt with
/// `error` set ("'M <== 4': expected ...") otherwise.
std::optional<ShapePredicate> parseShapePredicate(const std::string &text, std::string &error);

} // namespace tle::driver
