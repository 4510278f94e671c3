// Arithmetic expressions of the benchmark suites (shapes, grids, byte counts), with Python semantics.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace tle::bench {

/// Every error of the harness that is the user's (a bad suite, option or expression). what() is
/// a complete sentence naming the offending item.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A Python number: an int (64-bit, overflow is an error) or a float (double).
struct Value {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0;

  static Value ofInt(int64_t v) { return {false, v, 0}; }
  static Value ofFloat(double v) { return {true, 0, v}; }
  /// The value as a double.
  double asDouble() const { return isFloat ? f : double(i); }
  /// The integer value; throws BenchError for a float with a fractional part (`what` names it).
  int64_t asInt(const std::string &what) const;
  /// Python's repr: "42", "1e-05", "0.5".
  std::string str() const;
};

/// Names visible to an expression.
using Env = std::map<std::string, Value>;

/// Evaluates `text` over `env` with Python 3 semantics: integer and float literals, names,
/// parentheses, unary + and -, `+ - * / // % **` (`/` gives a float, `//` and `%` floor on ints
/// and floats, `**` with a negative int exponent gives a float), and the functions
/// `cdiv(a, b)` (ceil of a / b on ints), `min(...)`, `max(...)`, `next_power_of_2(n)`,
/// `int(x)` (truncates) and `float(x)` (also spelt `triton.cdiv`, `tl.next_power_of_2`, ...), and,
/// for @triton.heuristics lambdas, comparisons (chained), `and`, `or`, `not`, `True` and `False`
/// (a comparison is 1 or 0). Throws BenchError naming the expression and the position
/// on a syntax error, an unknown name, a division by zero or an int64 overflow.
Value evalExpr(const std::string &text, const Env &env);

} // namespace tle::bench
