// Parsing shape predicates ("M <= 64", "N % 128 == 0") for the dispatchers of tle-link and tle_add_kernels.
#include "tle/Driver/ShapePredicate.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace tle::driver {

namespace {

/// A cursor over the predicate text that skips blanks.
struct Cursor {
  const std::string &s;
  size_t i = 0;
  void blanks() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
  }
  bool identifier(std::string &out) {
    blanks();
    size_t b = i;
    if (i < s.size() && (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
        ++i;
    out = s.substr(b, i - b);
    return !out.empty();
  }
  bool integer(int64_t &out) {
    blanks();
    size_t b = i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+'))
      ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i;
    std::string digits = s.substr(b, i - b);
    if (digits.empty() || digits == "-" || digits == "+")
      return false;
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(digits.c_str(), &end, 10);
    out = v;
    return errno == 0;
  }
  bool literal(const char *lit) {
    blanks();
    size_t n = std::char_traits<char>::length(lit);
    if (s.compare(i, n, lit) != 0)
      return false;
    i += n;
    return true;
  }
};

bool comparison(Cursor &c, ShapePredicate::Op &op, std::string &spelling) {
  static const struct {
    const char *text;
    ShapePredicate::Op op;
  } ops[] = {{"<=", ShapePredicate::Le}, {">=", ShapePredicate::Ge}, {"==", ShapePredicate::Eq},
             {"!=", ShapePredicate::Ne}, {"<", ShapePredicate::Lt},  {">", ShapePredicate::Gt}};
  for (auto &o : ops)
    if (c.literal(o.text)) {
      op = o.op;
      spelling = o.text;
      return true;
    }
  return false;
}

} // namespace

const char *ShapePredicate::opMacro() const {
  static const char *names[] = {"TLE_LAUNCHER_LT", "TLE_LAUNCHER_LE", "TLE_LAUNCHER_GT", "TLE_LAUNCHER_GE",
                                "TLE_LAUNCHER_EQ", "TLE_LAUNCHER_NE", "TLE_LAUNCHER_MOD_EQ"};
  return names[op];
}

std::optional<ShapePredicate> parseShapePredicate(const std::string &text, std::string &error) {
  Cursor c{text};
  ShapePredicate p;
  auto bad = [&](const std::string &why) {
    error = "shape predicate '" + text + "': " + why +
            " (expected `NAME OP INTEGER` with OP one of < <= > >= == !=, or `NAME % INTEGER == INTEGER`)";
    return std::nullopt;
  };
  if (!c.identifier(p.name))
    return bad("no argument name at the start");
  std::string spelling;
  if (c.literal("%")) {
    if (!c.integer(p.modulus) || p.modulus == 0)
      return bad("the divisor after % must be a non-zero integer");
    if (!c.literal("=="))
      return bad("a remainder is compared with ==");
    if (!c.integer(p.value))
      return bad("no integer remainder after ==");
    bool inRange = p.modulus > 0 ? p.value >= 0 && p.value < p.modulus : p.value <= 0 && p.value > p.modulus;
    if (!inRange)
      return bad("the remainder " + std::to_string(p.value) + " is never the value of a % " +
                 std::to_string(p.modulus));
    p.op = ShapePredicate::ModEq;
    p.text = p.name + " % " + std::to_string(p.modulus) + " == " + std::to_string(p.value);
  } else {
    if (!comparison(c, p.op, spelling))
      return bad("no comparison after '" + p.name + "'");
    if (!c.integer(p.value))
      return bad("no integer after " + spelling);
    p.text = p.name + " " + spelling + " " + std::to_string(p.value);
  }
  c.blanks();
  if (c.i != text.size())
    return bad("unexpected '" + text.substr(c.i) + "' at the end");
  return p;
}

} // namespace tle::driver
