// Launch-grid expressions (`tlec -g "cdiv(n, 1024), 1, 1"`): parsing, evaluation and C code.
//
// Grammar (Triton AOT's `-g`, restricted to what can be checked at compile time):
//   grid    := expr [',' expr [',' expr]]          missing dimensions are 1
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '//' | '%') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := INTEGER | NAME | CALL | '(' expr ')'
//   CALL    := ('cdiv' | 'triton.cdiv' | 'min' | 'max') '(' expr (',' expr)* ')'
// Arithmetic is on 64-bit signed integers with Python's meaning (a result outside int64 is an
// error, checked at compile time for constant parts and at launch): `//` and `%` round toward
// negative infinity; cdiv(a, b) = (a + b - 1) // b as triton.cdiv; min and max take two or more
// arguments. Names are the kernel's integer parameters and integer constexprs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tle::driver {

/// One node of a parsed grid expression.
struct GridNode {
  /// What the node is.
  enum class Kind { Integer, Name, Negate, Add, Sub, Mul, FloorDiv, Mod, CDiv, Min, Max };
  Kind kind = Kind::Integer;
  int64_t value = 0;                           ///< Integer: the literal
  std::string name;                            ///< Name: the identifier
  std::vector<std::unique_ptr<GridNode>> operands; ///< operator and call operands, in order
  size_t column = 0;                           ///< 0-based offset of the node in the -g text
  int depth = 1;                               ///< levels of operators and calls, this node included
};

/// The deepest grid expression parseGrid accepts: parentheses, signs and call arguments nest at
/// most this many levels and the expression tree is at most this deep (evaluation and the
/// generated C code recurse over it; C compilers need only accept 63 nested parentheses).
inline constexpr int kMaxGridDepth = 64;

/// A parsed `-g` string: one expression per grid dimension (x, y, z; absent ones are 1).
struct GridExpr {
  std::string text;                            ///< the -g string as given
  std::vector<std::unique_ptr<GridNode>> dims; ///< 1 to 3 expressions
  /// The source text of dimension `i` (trimmed), or "1" for an absent dimension.
  std::string dimText(size_t i) const;
};

/// A grid-expression error: `message` and the 0-based `column` in the -g text it points at.
struct GridError {
  std::string message;
  size_t column = 0;
};

/// Parses `text`. On a syntax error returns nullopt with `*error` set (message and column), e.g.
/// "'/' is true division; grid expressions use '//' (floor division) or cdiv(a, b)".
std::optional<GridExpr> parseGrid(const std::string &text, GridError *error);

/// How a name in a grid expression is bound: to a runtime integer parameter (evaluated at launch)
/// or to an integer constant (a constexpr, or a parameter specialised to 1 by a `:1` hint).
struct GridBinding {
  bool isConstant = false; ///< true: `constant`; false: the runtime parameter of that name
  int64_t constant = 0;    ///< the value when isConstant
  std::string ident;       ///< gridToC: the C identifier of the runtime parameter (empty: its name)
};

/// Checks that every name of `grid` is bound in `names`; otherwise returns the error naming it:
/// the reason from `unusable` when it has the name (e.g. "'x_ptr' is a pointer (*fp32)"), else
/// "unknown name" and the names that may be used, `usable`.
std::optional<GridError> checkGridNames(const GridExpr &grid, const std::map<std::string, GridBinding> &names,
                                        const std::string &usable,
                                        const std::map<std::string, std::string> &unusable = {});

/// Evaluates dimension expression `node` with every name bound to a value in `values`. Returns
/// nullopt with `*error` set on an unbound name, a division by zero or a result (of the whole or
/// of a part) outside int64, e.g. for (-9223372036854775807 - 1) // -1.
std::optional<int64_t> evaluateGrid(const GridNode &node, const std::map<std::string, int64_t> &values,
                                    GridError *error);

/// Checks the parts of `grid` that are constant under `names` (integers, constexprs and `:1`
/// parameters), as a launcher would compute them: returns the first division by zero or int64
/// overflow among them, e.g. "integer overflow in grid expression: ..." at the '//' of
/// "(-9223372036854775807 - 1) // -1". Parts that depend on runtime parameters are checked at launch.
std::optional<GridError> checkGridConstants(const GridExpr &grid, const std::map<std::string, GridBinding> &names);

/// C (and C++) source for `node`: an int64_t expression over the parameters bound at run time,
/// with constants folded in, using the helpers of tle/Runtime/tle_launcher.h. Arithmetic goes
/// through `tle_launcher_add(CTX, a, b)`, `tle_launcher_floordiv(CTX, a, b)` etc., where `ctx` is
/// the spelling of a `tle_launcher_grid_ctx *` that records a division by zero or an overflow. Names must be bound (checkGridNames).
std::string gridToC(const GridNode &node, const std::map<std::string, GridBinding> &names, const std::string &ctx);

} // namespace tle::driver
