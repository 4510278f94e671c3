// triton.language.standard as libraries import it by name: its public functions are the tl
// builtins, and its underscore helpers (_log2, _is_power_of_two, and the combine functions
// _sum_combine, _argmax_combine_tie_break_left, ...) are builtins usable as tl.reduce /
// tl.associative_scan combine functions.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

namespace {

using ast::BinaryOp;
using ast::CompareOp;

/// _log2(n): floor(log2(n)) of a compile-time integer (0 for n <= 1).
SVal log2Of(Specializer &S, const BuiltinCall &c) {
  int64_t n = c.p.constInt("i", 0), r = 0;
  while (n > 1) {
    n >>= 1;
    ++r;
  }
  return SVal::integer(r);
}

/// _is_power_of_two(n) of a compile-time integer.
SVal isPowerOfTwo(Specializer &S, const BuiltinCall &c) {
  int64_t n = c.p.constInt("i", 0);
  return SVal::boolean(n > 0 && (n & (n - 1)) == 0);
}

/// The two-operand combines: a + b, a * b, a ^ b, a | b, a & b, maximum, minimum.
SVal pairCombine(Specializer &S, const BuiltinCall &c) {
  const Arg &a = c.p.get("a"), &bv = c.p.get("b");
  const std::string &n = c.fname;
  if (n == "_elementwise_max" || n == "_elementwise_min") {
    CallArgs args{c.loc, {a, bv}, {}};
    return S.callBuiltin(n == "_elementwise_max" ? "tl.maximum" : "tl.minimum", args);
  }
  BinaryOp op = n == "_sum_combine"    ? BinaryOp::Add
                : n == "_prod_combine" ? BinaryOp::Mul
                : n == "_xor_combine"  ? BinaryOp::BitXor
                : n == "_or_combine"   ? BinaryOp::BitOr
                                       : BinaryOp::BitAnd;
  return S.binary(op, a.val, bv.val, c.loc, a.loc, bv.loc);
}

/// The (value, index) combines of argmax / argmin: the greater (smaller) value wins; with
/// tie_break_left an equal value keeps the lower index.
SVal argCombine(Specializer &S, const BuiltinCall &c) {
  const std::string &n = c.fname;
  bool isMax = n.rfind("_argmax", 0) == 0;
  bool left = n.find("tie_break_left") != std::string::npos;
  if (n == "_argmax_combine" || n == "_argmin_combine")
    left = S.truthy(c.p.get("tie_break_left").val, c.p.loc("tie_break_left"));
  SourceLoc loc = c.loc;
  const SVal &v1 = c.p.get("value1").val, &i1 = c.p.get("index1").val;
  const SVal &v2 = c.p.get("value2").val, &i2 = c.p.get("index2").val;
  SVal wins = S.compare(isMax ? CompareOp::Gt : CompareOp::Lt, v1, v2, loc);
  if (left) {
    SVal same = S.compare(CompareOp::Eq, v1, v2, loc);
    SVal lower = S.compare(CompareOp::Lt, i1, i2, loc);
    SVal tie = S.binary(BinaryOp::BitAnd, same, lower, loc, loc, loc);
    wins = S.binary(BinaryOp::BitOr, wins, tie, loc, loc, loc);
  }
  CallArgs pickV{loc, {{loc, wins}, {loc, v1}, {loc, v2}}, {}};
  CallArgs pickI{loc, {{loc, wins}, {loc, i1}, {loc, i2}}, {}};
  return SVal::tuple({S.callBuiltin("tl.where", pickV), S.callBuiltin("tl.where", pickI)});
}

} // namespace

std::vector<BuiltinSpec> standardBuiltins() {
  const char *arg4 = "value1, index1, value2, index2";
  return {
      {"standard._log2", "i", log2Of},
      {"standard._is_power_of_two", "i", isPowerOfTwo},
      {"standard._sum_combine", "a, b", pairCombine},
      {"standard._prod_combine", "a, b", pairCombine},
      {"standard._xor_combine", "a, b", pairCombine},
      {"standard._or_combine", "a, b", pairCombine},
      {"standard._and_combine", "a, b", pairCombine},
      {"standard._elementwise_max", "a, b", pairCombine},
      {"standard._elementwise_min", "a, b", pairCombine},
      {"standard._argmax_combine", "value1, index1, value2, index2, tie_break_left", argCombine},
      {"standard._argmin_combine", "value1, index1, value2, index2, tie_break_left", argCombine},
      {"standard._argmax_combine_tie_break_left", arg4, argCombine},
      {"standard._argmax_combine_tie_break_fast", arg4, argCombine},
      {"standard._argmin_combine_tie_break_left", arg4, argCombine},
      {"standard._argmin_combine_tie_break_fast", arg4, argCombine},
  };
}

} // namespace tle::sema
