// Launch-grid expressions: a recursive-descent parser, an evaluator and a C code generator.
#include "tle/Driver/GridExpr.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace tle::driver {

namespace {

using Kind = GridNode::Kind;

std::unique_ptr<GridNode> makeNode(Kind k, size_t column) {
  auto n = std::make_unique<GridNode>();
  n->kind = k;
  n->column = column;
  return n;
}

/// Recursive descent over the -g text; the first error wins and stops the parse.
class GridParser {
public:
  explicit GridParser(const std::string &text) : s_(text) {}

  std::optional<GridExpr> run(GridError *error) {
    GridExpr g;
    g.text = s_;
    while (true) {
      auto e = expr();
      if (!e)
        return fail(error);
      g.dims.push_back(std::move(e));
      skipSpace();
      if (pos_ == s_.size())
        break;
      if (s_[pos_] != ',') {
        err("unexpected '" + std::string(1, s_[pos_]) + "' in grid expression", pos_);
        return fail(error);
      }
      size_t comma = pos_++;
      skipSpace();
      if (pos_ == s_.size() && g.dims.size() < 3)
        break; // a trailing comma, as in Python's (x,)
      if (g.dims.size() == 3) {
        err("a grid has at most 3 dimensions (x, y, z)", comma);
        return fail(error);
      }
    }
    return g;
  }

private:
  std::optional<GridExpr> fail(GridError *error) {
    if (error)
      *error = err_;
    return std::nullopt;
  }
  void err(const std::string &m, size_t col) {
    if (!failed_) {
      err_ = {m, col};
      failed_ = true;
    }
  }
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool peek(const char *tok) {
    skipSpace();
    return s_.compare(pos_, std::char_traits<char>::length(tok), tok) == 0;
  }

  /// Counts parser recursion (parentheses, unary signs, call arguments) against kMaxGridDepth.
  struct Nest {
    GridParser &p;
    bool ok;
    explicit Nest(GridParser &parser) : p(parser), ok(++parser.depth_ <= kMaxGridDepth) {
      if (!ok)
        p.tooDeep(p.pos_);
    }
    ~Nest() { --p.depth_; }
  };
  void tooDeep(size_t at) {
    err("grid expression nested too deeply (more than " + std::to_string(kMaxGridDepth) +
            " levels of parentheses, operators or calls)",
        at);
  }
  /// A binary node over lhs and rhs, or null when the tree would exceed kMaxGridDepth.
  std::unique_ptr<GridNode> combine(Kind k, size_t at, std::unique_ptr<GridNode> lhs, std::unique_ptr<GridNode> rhs) {
    auto n = makeNode(k, at);
    n->depth = 1 + std::max(lhs->depth, rhs->depth);
    if (n->depth > kMaxGridDepth) {
      tooDeep(at);
      return nullptr;
    }
    n->operands.push_back(std::move(lhs));
    n->operands.push_back(std::move(rhs));
    return n;
  }

  std::unique_ptr<GridNode> expr() {
    Nest nest(*this);
    if (!nest.ok)
      return nullptr;
    auto lhs = term();
    while (lhs) {
      skipSpace();
      Kind k;
      if (peek("+"))
        k = Kind::Add;
      else if (peek("-"))
        k = Kind::Sub;
      else
        break;
      size_t at = pos_++;
      auto rhs = term();
      if (!rhs)
        return nullptr;
      lhs = combine(k, at, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  std::unique_ptr<GridNode> term() {
    auto lhs = unary();
    while (lhs) {
      skipSpace();
      Kind k;
      size_t at = pos_;
      if (peek("**")) {
        err("'**' (power) is not supported in grid expressions", at);
        return nullptr;
      } else if (peek("//")) {
        k = Kind::FloorDiv;
        pos_ += 2;
      } else if (peek("/")) {
        err("'/' is true division; grid expressions use '//' (floor division) or cdiv(a, b)", at);
        return nullptr;
      } else if (peek("*")) {
        k = Kind::Mul;
        ++pos_;
      } else if (peek("%")) {
        k = Kind::Mod;
        ++pos_;
      } else {
        break;
      }
      auto rhs = unary();
      if (!rhs)
        return nullptr;
      lhs = combine(k, at, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  std::unique_ptr<GridNode> unary() {
    skipSpace();
    if (peek("-") || peek("+")) {
      Nest nest(*this);
      if (!nest.ok)
        return nullptr;
      bool neg = s_[pos_] == '-';
      size_t at = pos_++;
      auto operand = unary();
      if (!operand)
        return nullptr;
      if (!neg)
        return operand;
      auto n = makeNode(Kind::Negate, at);
      n->depth = operand->depth + 1;
      n->operands.push_back(std::move(operand));
      return n;
    }
    return primary();
  }

  std::unique_ptr<GridNode> primary() {
    skipSpace();
    size_t at = pos_;
    if (pos_ == s_.size()) {
      err(s_.find_first_not_of(" \t") == std::string::npos ? "empty grid expression"
                                                          : "expected a grid expression at the end",
          at);
      return nullptr;
    }
    char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)))
      return integer();
    if (c == '(') {
      ++pos_;
      auto e = expr();
      if (!e)
        return nullptr;
      skipSpace();
      if (pos_ == s_.size() || s_[pos_] != ')') {
        err("expected ')' to close the '(' here", at);
        return nullptr;
      }
      ++pos_;
      return e;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
      return nameOrCall();
    err("unexpected '" + std::string(1, c) +
            "' in grid expression (expected an integer, a parameter name, cdiv, min, max or '(')",
        at);
    return nullptr;
  }

  std::unique_ptr<GridNode> integer() {
    size_t at = pos_;
    while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
    std::string digits = s_.substr(at, pos_ - at);
    if (pos_ < s_.size() && s_[pos_] == '.') {
      size_t end = pos_ + 1;
      while (end < s_.size() && std::isalnum(static_cast<unsigned char>(s_[end])))
        ++end;
      err("'" + s_.substr(at, end - at) + "' is not an integer: grid expressions are integer-valued", at);
      return nullptr;
    }
    int64_t v = 0;
    for (char d : digits) {
      if (!std::isdigit(static_cast<unsigned char>(d))) {
        err("'" + digits + "' is not a decimal integer", at);
        return nullptr;
      }
      if (v > (std::numeric_limits<int64_t>::max() - (d - '0')) / 10) {
        err("integer '" + digits + "' does not fit in 64 bits", at);
        return nullptr;
      }
      v = v * 10 + (d - '0');
    }
    auto n = makeNode(Kind::Integer, at);
    n->value = v;
    return n;
  }

  std::string identifier() {
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }

  std::unique_ptr<GridNode> nameOrCall() {
    size_t at = pos_;
    std::string name = identifier();
    while (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      name += "." + identifier();
    }
    skipSpace();
    bool call = pos_ < s_.size() && s_[pos_] == '(';
    if (!call) {
      if (name.find('.') != std::string::npos) {
        err("'" + name + "' is not a parameter name", at);
        return nullptr;
      }
      auto n = makeNode(Kind::Name, at);
      n->name = name;
      return n;
    }
    Kind k;
    size_t minArgs = 2, maxArgs = 2;
    if (name == "cdiv" || name == "triton.cdiv") {
      k = Kind::CDiv;
    } else if (name == "min" || name == "max") {
      k = name == "min" ? Kind::Min : Kind::Max;
      maxArgs = SIZE_MAX;
    } else {
      err("unknown function '" + name + "' in grid expression (available: cdiv, min, max)", at);
      return nullptr;
    }
    ++pos_; // '('
    auto n = makeNode(k, at);
    while (true) {
      auto a = expr();
      if (!a)
        return nullptr;
      // min and max fold left in C (max(max(a, b), c)): every argument nests one level.
      n->depth = std::max(n->depth, a->depth) + 1;
      if (n->depth > kMaxGridDepth) {
        tooDeep(at);
        return nullptr;
      }
      n->operands.push_back(std::move(a));
      skipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ')') {
        ++pos_;
        break;
      }
      err("expected ',' or ')' in the arguments of " + name + "(...)", pos_ < s_.size() ? pos_ : at);
      return nullptr;
    }
    if (n->operands.size() < minArgs || n->operands.size() > maxArgs) {
      err(name + "(...) takes " + (maxArgs == 2 ? std::string("2 arguments") : std::string("2 or more arguments")) +
              ", got " + std::to_string(n->operands.size()),
          at);
      return nullptr;
    }
    return n;
  }

  const std::string &s_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool failed_ = false;
  GridError err_;
};

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

void collectNames(const GridNode &n, std::vector<const GridNode *> &out) {
  if (n.kind == Kind::Name)
    out.push_back(&n);
  for (auto &o : n.operands)
    collectNames(*o, out);
}

} // namespace

std::string GridExpr::dimText(size_t i) const {
  if (i >= dims.size())
    return "1";
  // Dimension i runs from its first column to the next top-level comma.
  size_t start = 0, depth = 0, dim = 0;
  for (size_t p = 0; p <= text.size(); ++p) {
    if (p == text.size() || (text[p] == ',' && depth == 0)) {
      if (dim == i) {
        std::string s = text.substr(start, p - start);
        size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
        return b == std::string::npos ? "1" : s.substr(b, e - b + 1);
      }
      ++dim;
      start = p + 1;
    } else if (text[p] == '(') {
      ++depth;
    } else if (text[p] == ')' && depth) {
      --depth;
    }
  }
  return "1";
}

std::optional<GridExpr> parseGrid(const std::string &text, GridError *error) {
  return GridParser(text).run(error);
}

std::optional<GridError> checkGridNames(const GridExpr &grid, const std::map<std::string, GridBinding> &names,
                                        const std::string &usable,
                                        const std::map<std::string, std::string> &unusable) {
  std::vector<const GridNode *> used;
  for (auto &d : grid.dims)
    collectNames(*d, used);
  for (const GridNode *n : used) {
    if (names.count(n->name))
      continue;
    if (auto why = unusable.find(n->name); why != unusable.end())
      return GridError{why->second + "; grid expressions use integer parameters and integer constexprs", n->column};
    return GridError{"unknown name '" + n->name + "' in grid expression" +
                           (usable.empty() ? std::string(" (the kernel has no integer parameters)")
                                           : " (usable names: " + usable + ")"),
                       n->column};
  }
  return std::nullopt;
}

namespace {

/// Applies node kind `k` to operand values with Python's meaning; nullopt with `*why` set on a
/// division by zero or a result outside int64.
std::optional<int64_t> applyGrid(Kind k, const std::vector<int64_t> &ops, std::string *why) {
  auto overflow = [&]() -> std::optional<int64_t> {
    *why = "integer overflow in grid expression: the result does not fit in 64 bits";
    return std::nullopt;
  };
  int64_t r = 0;
  switch (k) {
  case Kind::Integer: case Kind::Name:
    break;
  case Kind::Negate:
    if (__builtin_sub_overflow(int64_t(0), ops[0], &r))
      return overflow();
    return r;
  case Kind::Add:
    if (__builtin_add_overflow(ops[0], ops[1], &r))
      return overflow();
    return r;
  case Kind::Sub:
    if (__builtin_sub_overflow(ops[0], ops[1], &r))
      return overflow();
    return r;
  case Kind::Mul:
    if (__builtin_mul_overflow(ops[0], ops[1], &r))
      return overflow();
    return r;
  case Kind::FloorDiv: case Kind::Mod: case Kind::CDiv: {
    if (ops[1] == 0) {
      *why = "division by zero in grid expression";
      return std::nullopt;
    }
    int64_t a = ops[0];
    // cdiv(a, b) = (a + b - 1) // b, computed as the launcher does: for b > 0 as the ceiling of
    // a / b (no intermediate can overflow), for b < 0 with an intermediate that must fit in int64.
    if (k == Kind::CDiv && ops[1] > 0)
      return floorDiv(a, ops[1]) + (floorMod(a, ops[1]) != 0);
    if (k == Kind::CDiv && (__builtin_add_overflow(a, ops[1], &a) || __builtin_sub_overflow(a, int64_t(1), &a)))
      return overflow();
    if (a == std::numeric_limits<int64_t>::min() && ops[1] == -1)
      return k == Kind::Mod ? std::optional<int64_t>(0) : overflow();
    return k == Kind::Mod ? floorMod(a, ops[1]) : floorDiv(a, ops[1]);
  }
  case Kind::Min: case Kind::Max: {
    r = ops[0];
    for (int64_t v : ops)
      r = k == Kind::Min ? std::min(r, v) : std::max(r, v);
    return r;
  }
  }
  *why = "internal error: unknown grid node";
  return std::nullopt;
}

/// Folds `n` over the constants in `constants`: the value when every name under `n` is a
/// constant, nullopt when `n` depends on a runtime parameter; false with `*error` set when a
/// constant part divides by zero or overflows.
bool foldGrid(const GridNode &n, const std::map<std::string, int64_t> &constants, std::optional<int64_t> &value,
              GridError *error) {
  value.reset();
  if (n.kind == Kind::Integer) {
    value = n.value;
    return true;
  }
  if (n.kind == Kind::Name) {
    if (auto it = constants.find(n.name); it != constants.end())
      value = it->second;
    return true;
  }
  std::vector<int64_t> ops;
  bool constant = true;
  for (auto &o : n.operands) {
    std::optional<int64_t> v;
    if (!foldGrid(*o, constants, v, error))
      return false;
    if (v)
      ops.push_back(*v);
    else
      constant = false;
  }
  if (!constant)
    return true;
  std::string why;
  value = applyGrid(n.kind, ops, &why);
  if (!value) {
    if (error)
      *error = {why, n.column};
    return false;
  }
  return true;
}

} // namespace

std::optional<int64_t> evaluateGrid(const GridNode &n, const std::map<std::string, int64_t> &values,
                                    GridError *error) {
  if (n.kind == Kind::Name && !values.count(n.name)) {
    if (error)
      *error = {"unknown name '" + n.name + "' in grid expression", n.column};
    return std::nullopt;
  }
  for (auto &o : n.operands)
    if (!evaluateGrid(*o, values, error))
      return std::nullopt;
  std::optional<int64_t> v;
  if (!foldGrid(n, values, v, error))
    return std::nullopt;
  return v;
}

std::optional<GridError> checkGridConstants(const GridExpr &grid, const std::map<std::string, GridBinding> &names) {
  std::map<std::string, int64_t> constants;
  for (auto &[n, b] : names)
    if (b.isConstant)
      constants[n] = b.constant;
  for (auto &d : grid.dims) {
    std::optional<int64_t> v;
    GridError e;
    if (!foldGrid(*d, constants, v, &e))
      return e;
  }
  return std::nullopt;
}

std::string gridToC(const GridNode &n, const std::map<std::string, GridBinding> &names, const std::string &ctx) {
  auto op = [&](size_t i) { return gridToC(*n.operands[i], names, ctx); };
  auto call = [&](const char *fn, bool withCtx) {
    std::string s = std::string(fn) + "(" + (withCtx ? ctx + ", " : "");
    // min/max fold left over their operands: max(a, b, c) = max(max(a, b), c).
    std::string acc = op(0);
    if (n.operands.size() == 2)
      return s + acc + ", " + op(1) + ")";
    for (size_t i = 1; i < n.operands.size(); ++i)
      acc = std::string(fn) + "(" + acc + ", " + op(i) + ")";
    return acc;
  };
  switch (n.kind) {
  case Kind::Integer:
    return "INT64_C(" + std::to_string(n.value) + ")";
  case Kind::Name: {
    const GridBinding &b = names.at(n.name);
    if (b.isConstant)
      return "INT64_C(" + std::to_string(b.constant) + ")";
    return "(int64_t)" + (b.ident.empty() ? n.name : b.ident);
  }
  case Kind::Negate:
    return "tle_launcher_neg(" + ctx + ", " + op(0) + ")";
  case Kind::Add:
    return call("tle_launcher_add", true);
  case Kind::Sub:
    return call("tle_launcher_sub", true);
  case Kind::Mul:
    return call("tle_launcher_mul", true);
  case Kind::FloorDiv:
    return call("tle_launcher_floordiv", true);
  case Kind::Mod:
    return call("tle_launcher_floormod", true);
  case Kind::CDiv:
    return call("tle_launcher_cdiv", true);
  case Kind::Min:
    return call("tle_launcher_min", false);
  case Kind::Max:
    return call("tle_launcher_max", false);
  }
  return "0";
}

} // namespace tle::driver
