// Recursive-descent evaluator of suite expressions (see Expr.h) with Python's int/float semantics.
#include "Expr.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace tle::bench {

int64_t Value::asInt(const std::string &what) const {
  if (!isFloat)
    return i;
  if (!std::isfinite(f) || f != std::floor(f) || std::fabs(f) > 9.0e18)
    throw BenchError(fmt::format("{} must be an integer, got {}", what, str()));
  return int64_t(f);
}

std::string Value::str() const {
  if (!isFloat)
    return std::to_string(i);
  std::string s = fmt::format("{}", f);
  return s;
}

namespace {

class Parser {
public:
  Parser(const std::string &text, const Env &env) : text_(text), env_(env) {}

  Value parse() {
    Value v = orTest();
    skip();
    if (pos_ != text_.size())
      fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return v;
  }

private:
  const std::string &text_;
  const Env &env_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string &why) const {
    throw BenchError(fmt::format("in expression '{}' at column {}: {}", text_, pos_ + 1, why));
  }
  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool eat(const char *tok) {
    skip();
    size_t n = std::char_traits<char>::length(tok);
    if (text_.compare(pos_, n, tok) != 0)
      return false;
    pos_ += n;
    return true;
  }

  static bool mulOverflow(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }

  /// `op(a, b, &r)` is a __builtin_*_overflow; returns r or fails on overflow.
  template <class Op> int64_t checked(Op op, int64_t a, int64_t b) const {
    int64_t r = 0;
    if (op(a, b, &r))
      fail("integer overflow (beyond int64)");
    return r;
  }
  static bool addOv(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
  static bool subOv(int64_t a, int64_t b, int64_t *r) { return __builtin_sub_overflow(a, b, r); }
  static int64_t floorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return q;
  }
  static int64_t floorMod(int64_t a, int64_t b) {
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
      r += b;
    return r;
  }

  Value binary(char op, Value a, Value b, bool floorOp) {
    if (!a.isFloat && !b.isFloat) {
      switch (op) {
      case '+': return Value::ofInt(checked(addOv, a.i, b.i));
      case '-': return Value::ofInt(checked(subOv, a.i, b.i));
      case '*': return Value::ofInt(checked(mulOverflow, a.i, b.i));
      case '/':
        if (floorOp) {
          if (b.i == 0)
            fail("integer division by zero");
          return Value::ofInt(floorDiv(a.i, b.i));
        }
        if (b.i == 0)
          fail("division by zero");
        return Value::ofFloat(double(a.i) / double(b.i));
      case '%':
        if (b.i == 0)
          fail("integer modulo by zero");
        return Value::ofInt(floorMod(a.i, b.i));
      }
    }
    double x = a.asDouble(), y = b.asDouble();
    switch (op) {
    case '+': return Value::ofFloat(x + y);
    case '-': return Value::ofFloat(x - y);
    case '*': return Value::ofFloat(x * y);
    case '/':
      if (y == 0)
        fail("float division by zero");
      return Value::ofFloat(floorOp ? std::floor(x / y) : x / y);
    case '%': {
      if (y == 0)
        fail("float modulo by zero");
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
      return Value::ofFloat(r);
    }
    }
    fail("internal: unknown operator");
  }

  Value power(Value a, Value b) {
    if (!a.isFloat && !b.isFloat && b.i >= 0) {
      int64_t r = 1;
      for (int64_t k = 0; k < b.i; ++k)
        r = checked(mulOverflow, r, a.i);
      return Value::ofInt(r);
    }
    return Value::ofFloat(std::pow(a.asDouble(), b.asDouble()));
  }

  /// `a or b`, `a and b`, `not a` (Python's truth of numbers; the value of the deciding operand).
  Value orTest() {
    Value v = andTest();
    while (keyword("or")) {
      Value w = andTest();
      v = truth(v) ? v : w;
    }
    return v;
  }
  Value andTest() {
    Value v = notTest();
    while (keyword("and")) {
      Value w = notTest();
      v = truth(v) ? w : v;
    }
    return v;
  }
  Value notTest() {
    if (keyword("not"))
      return Value::ofInt(!truth(notTest()));
    return comparison();
  }
  /// `a < b`, chained as Python does (`a < b <= c` is `a < b and b <= c`); 1 or 0.
  Value comparison() {
    Value v = expr();
    bool all = true, any = false;
    for (;;) {
      int op = eat("<=") ? 1 : eat(">=") ? 2 : eat("==") ? 3 : eat("!=") ? 4 : eat("<") ? 5 : eat(">") ? 6 : 0;
      if (!op)
        break;
      Value w = expr();
      double x = v.asDouble(), y = w.asDouble();
      bool r = op == 1 ? x <= y : op == 2 ? x >= y : op == 3 ? x == y : op == 4 ? x != y : op == 5 ? x < y : x > y;
      if (!v.isFloat && !w.isFloat) // exact on int64
        r = op == 1 ? v.i <= w.i : op == 2 ? v.i >= w.i : op == 3 ? v.i == w.i : op == 4 ? v.i != w.i
            : op == 5 ? v.i < w.i : v.i > w.i;
      all &= r;
      any = true;
      v = w;
    }
    return any ? Value::ofInt(all) : v;
  }
  static bool truth(const Value &v) { return v.isFloat ? v.f != 0 : v.i != 0; }
  /// Eats the word `kw` when it is not the start of a longer name.
  bool keyword(const char *kw) {
    skip();
    size_t n = std::char_traits<char>::length(kw);
    if (text_.compare(pos_, n, kw) != 0)
      return false;
    if (pos_ + n < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_ + n])) || text_[pos_ + n] == '_'))
      return false;
    pos_ += n;
    return true;
  }

  Value expr() {
    Value v = term();
    for (;;) {
      if (eat("+"))
        v = binary('+', v, term(), false);
      else if (eat("-"))
        v = binary('-', v, term(), false);
      else
        return v;
    }
  }
  Value term() {
    Value v = unary();
    for (;;) {
      skip();
      if (text_.compare(pos_, 2, "**") == 0)
        return v; // handled in factor; cannot happen here
      if (eat("//"))
        v = binary('/', v, unary(), true);
      else if (eat("*"))
        v = binary('*', v, unary(), false);
      else if (eat("/"))
        v = binary('/', v, unary(), false);
      else if (eat("%"))
        v = binary('%', v, unary(), false);
      else
        return v;
    }
  }
  Value unary() {
    if (eat("-")) {
      Value v = unary();
      if (v.isFloat)
        return Value::ofFloat(-v.f);
      return Value::ofInt(checked(subOv, 0, v.i));
    }
    if (eat("+"))
      return unary();
    Value base = atom();
    if (eat("**"))
      return power(base, unary());
    return base;
  }
  Value number() {
    const char *start = text_.c_str() + pos_;
    char *end = nullptr;
    size_t len = 0;
    while (pos_ + len < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(start[len])) || start[len] == '.' || start[len] == '_' ||
            ((start[len] == '-' || start[len] == '+') && len > 0 && (start[len - 1] == 'e' || start[len - 1] == 'E'))))
      ++len;
    std::string tok(start, len);
    std::string digits;
    for (char c : tok)
      if (c != '_')
        digits += c;
    bool isFloat = digits.find_first_of(".eE") != std::string::npos;
    errno = 0;
    if (isFloat) {
      double d = std::strtod(digits.c_str(), &end);
      if (*end)
        fail("bad number '" + tok + "'");
      pos_ += len;
      return Value::ofFloat(d);
    }
    long long v = std::strtoll(digits.c_str(), &end, 10);
    if (*end || errno)
      fail("bad integer '" + tok + "'");
    pos_ += len;
    return Value::ofInt(v);
  }
  Value call(const std::string &name) {
    std::vector<Value> args;
    if (!eat(")")) {
      do
        args.push_back(orTest());
      while (eat(","));
      if (!eat(")"))
        fail("expected ')' after the arguments of " + name);
    }
    auto need = [&](size_t n) {
      if (args.size() != n)
        fail(fmt::format("{}() takes {} argument(s), got {}", name, n, args.size()));
    };
    if (name == "cdiv") {
      need(2);
      if (args[0].isFloat || args[1].isFloat)
        fail("cdiv() takes integers");
      if (args[1].i == 0)
        fail("cdiv() by zero");
      return Value::ofInt(-floorDiv(-args[0].i, args[1].i));
    }
    if (name == "min" || name == "max") {
      if (args.empty())
        fail(name + "() needs at least one argument");
      Value best = args[0];
      for (const Value &a : args)
        if (name == "min" ? a.asDouble() < best.asDouble() : a.asDouble() > best.asDouble())
          best = a;
      return best;
    }
    if (name == "next_power_of_2") {
      need(1);
      int64_t n = args[0].asInt("next_power_of_2's argument"), p = 1;
      while (p < n)
        p <<= 1;
      return Value::ofInt(p);
    }
    if (name == "int") {
      need(1);
      return args[0].isFloat ? Value::ofInt(int64_t(args[0].f)) : args[0];
    }
    if (name == "float") {
      need(1);
      return Value::ofFloat(args[0].asDouble());
    }
    fail("unknown function '" + name + "' (known: cdiv, min, max, next_power_of_2, int, float)");
  }
  Value atom() {
    skip();
    if (pos_ >= text_.size())
      fail("unexpected end of expression");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Value v = orTest();
      if (!eat(")"))
        fail("expected ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.')
      return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      std::string name = text_.substr(start, pos_ - start);
      // A module-qualified function, as lambdas spell them: triton.cdiv, tl.next_power_of_2.
      while (pos_ < text_.size() && text_[pos_] == '.' &&
             (name == "triton" || name == "tl" || name == "language")) {
        size_t s2 = ++pos_;
        while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
          ++pos_;
        name = text_.substr(s2, pos_ - s2);
      }
      if (eat("("))
        return call(name);
      if (name == "True" || name == "False")
        return Value::ofInt(name == "True");
      auto it = env_.find(name);
      if (it == env_.end()) {
        pos_ = start;
        std::string known;
        for (const auto &[k, v] : env_)
          known += (known.empty() ? "" : ", ") + k;
        fail("unknown name '" + name + "' (known: " + (known.empty() ? "none" : known) + ")");
      }
      return it->second;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
};

} // namespace

Value evalExpr(const std::string &text, const Env &env) { return Parser(text, env).parse(); }

} // namespace tle::bench
