// Launch-grid expressions: a recursive-descent parser, an evaluator and a C code generator.
#include "tle/Driver/GridExpr.h"

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

  std::unique_ptr<GridNode> expr() {
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
      auto n = makeNode(k, pos_++);
      auto rhs = term();
      if (!rhs)
        return nullptr;
      n->operands.push_back(std::move(lhs));
      n->operands.push_back(std::move(rhs));
      lhs = std::move(n);
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
      auto n = makeNode(k, at);
      auto rhs = unary();
      if (!rhs)
        return nullptr;
      n->operands.push_back(std::move(lhs));
      n->operands.push_back(std::move(rhs));
      lhs = std::move(n);
    }
    return lhs;
  }

  std::unique_ptr<GridNode> unary() {
    skipSpace();
    if (peek("-") || peek("+")) {
      bool neg = s_[pos_] == '-';
      size_t at = pos_++;
      auto operand = unary();
      if (!operand)
        return nullptr;
      if (!neg)
        return operand;
      auto n = makeNode(Kind::Negate, at);
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

std::optional<int64_t> evaluateGrid(const GridNode &n, const std::map<std::string, int64_t> &values,
                                    GridError *error) {
  auto fail = [&](const std::string &m) -> std::optional<int64_t> {
    if (error)
      *error = {m, n.column};
    return std::nullopt;
  };
  std::vector<int64_t> ops;
  for (auto &o : n.operands) {
    auto v = evaluateGrid(*o, values, error);
    if (!v)
      return std::nullopt;
    ops.push_back(*v);
  }
  switch (n.kind) {
  case Kind::Integer:
    return n.value;
  case Kind::Name: {
    auto it = values.find(n.name);
    if (it == values.end())
      return fail("unknown name '" + n.name + "' in grid expression");
    return it->second;
  }
  case Kind::Negate:
    return -ops[0];
  case Kind::Add:
    return ops[0] + ops[1];
  case Kind::Sub:
    return ops[0] - ops[1];
  case Kind::Mul:
    return ops[0] * ops[1];
  case Kind::FloorDiv:
  case Kind::Mod:
  case Kind::CDiv:
    if (ops[1] == 0)
      return fail("division by zero in grid expression");
    if (n.kind == Kind::FloorDiv)
      return floorDiv(ops[0], ops[1]);
    if (n.kind == Kind::Mod)
      return floorMod(ops[0], ops[1]);
    return floorDiv(ops[0] + ops[1] - 1, ops[1]);
  case Kind::Min:
  case Kind::Max: {
    int64_t r = ops[0];
    for (int64_t v : ops)
      r = n.kind == Kind::Min ? std::min(r, v) : std::max(r, v);
    return r;
  }
  }
  return fail("internal error: unknown grid node");
}

std::string gridToC(const GridNode &n, const std::map<std::string, GridBinding> &names, const std::string &ctx) {
  auto op = [&](size_t i) { return gridToC(*n.operands[i], names, ctx); };
  auto call = [&](const char *fn, bool withCtx) {
    std::string s = std::string(fn) + "(" + (withCtx ? ctx + ", " : "");
    // min/max fold left over their operands: max(a, b, c) = max(max(a, b), c).
    std::string acc = op(0);
    if (n.operands.size() == 2 || n.kind == Kind::FloorDiv || n.kind == Kind::Mod || n.kind == Kind::CDiv)
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
    return "(-" + op(0) + ")";
  case Kind::Add:
    return "(" + op(0) + " + " + op(1) + ")";
  case Kind::Sub:
    return "(" + op(0) + " - " + op(1) + ")";
  case Kind::Mul:
    return "(" + op(0) + " * " + op(1) + ")";
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
