// Compile-time strings: f-strings, str() and repr() of compile-time values with Python's
// spelling, and Python's format-spec mini-language for module-level and constexpr-function code.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tle::sema {

namespace {

/// printf of one double with a format such as "%.6e".
std::string printfDouble(const char *fmt, int precision, double x) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, precision, x);
  return buf;
}

/// Python's repr of a float: the shortest digits that read back to the same double, in fixed
/// notation for decimal exponents -4 <= e < 16, else scientific ("1e-05", "1e+16").
std::string floatRepr(double x) {
  if (std::isnan(x))
    return "nan";
  if (std::isinf(x))
    return x < 0 ? "-inf" : "inf";
  if (x == 0)
    return std::signbit(x) ? "-0.0" : "0.0";
  std::string e;
  for (int p = 0; p <= 16; ++p) {
    e = printfDouble("%.*e", p, x);
    if (std::strtod(e.c_str(), nullptr) == x)
      break;
  }
  std::string sign = x < 0 ? "-" : "";
  size_t mantEnd = e.find('e');
  std::string digits;
  for (size_t i = sign.size(); i < mantEnd; ++i)
    if (e[i] != '.')
      digits += e[i];
  int exp = std::atoi(e.c_str() + mantEnd + 1);
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      std::string intPart = digits.substr(0, std::min(digits.size(), size_t(exp) + 1));
      intPart += std::string(size_t(exp) + 1 > digits.size() ? size_t(exp) + 1 - digits.size() : 0, '0');
      std::string frac = digits.size() > size_t(exp) + 1 ? digits.substr(size_t(exp) + 1) : "0";
      return sign + intPart + "." + frac;
    }
    return sign + "0." + std::string(size_t(-exp - 1), '0') + digits;
  }
  std::string r = sign + digits.substr(0, 1);
  if (digits.size() > 1)
    r += "." + digits.substr(1);
  char buf[16];
  std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return r + buf;
}

/// Python's repr of a str: single quotes unless the text has ' and no ".
std::string strRepr(const std::string &s) {
  char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string r(1, q);
  for (unsigned char c : s) {
    if (c == '\\') r += "\\\\";
    else if (c == '\n') r += "\\n";
    else if (c == '\r') r += "\\r";
    else if (c == '\t') r += "\\t";
    else if (c == static_cast<unsigned char>(q)) r += std::string("\\") + q;
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      r += buf;
    } else r += static_cast<char>(c);
  }
  return r + q;
}

/// Triton's str() of a dtype ("fp16", "pointer<fp16>").
std::string dtypeStr(const ir::ScalarType &t) {
  if (t.isPointer())
    return "pointer<" + dtypeStr(ir::ScalarType{t.pointee}) + ">";
  std::string n = t.str(); // "i8", "u32", "fp16", ...: Triton spells the integers in full
  if (n.size() > 1 && (n[0] == 'i' || n[0] == 'u') && std::isdigit(static_cast<unsigned char>(n[1])))
    return (n[0] == 'i' ? "int" : "uint") + n.substr(1);
  return n;
}

/// A parsed format spec: [[fill]align][sign][#][0][width][,|_][.precision][type].
struct Spec {
  char fill = ' ', align = 0, sign = '-', type = 0, grouping = 0;
  bool alternate = false;
  int width = 0, precision = -1;
};

/// Inserts `sep` every three digits of the integer part of a number's text.
std::string group(const std::string &num, char sep) {
  size_t start = num.find_first_of("0123456789");
  size_t end = num.find_first_not_of("0123456789", start);
  if (end == std::string::npos)
    end = num.size();
  std::string r = num.substr(0, start);
  std::string digits = num.substr(start, end - start);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      r += sep;
    r += digits[i];
  }
  return r + num.substr(end);
}

} // namespace

std::string Specializer::pyStr(const SVal &v, bool repr, SourceLoc loc) {
  switch (v.kind) {
  case SVal::Kind::None: return "None";
  case SVal::Kind::Bool: return v.i ? "True" : "False";
  case SVal::Kind::Int: return std::to_string(v.i);
  case SVal::Kind::Float: return floatRepr(v.f);
  case SVal::Kind::Str: return repr ? strRepr(v.s) : v.s;
  case SVal::Kind::Namespace:
    if (isPath(v))
      return repr ? "PosixPath(" + strRepr(v.attr("__path__").s) + ")" : v.attr("__path__").s;
    fail(loc, "cannot convert " + v.describe() + " to a string at compile time");
  case SVal::Kind::DType: return repr ? "triton.language." + dtypeStr(v.dtype) : dtypeStr(v.dtype);
  case SVal::Kind::Tuple: {
    std::string r = "(";
    for (size_t k = 0; k < v.elts.size(); ++k)
      r += (k ? ", " : "") + pyStr(v.elts[k], true, loc);
    return r + (v.elts.size() == 1 ? ",)" : ")");
  }
  default:
    fail(loc, "cannot convert " + v.describe() + " to a string at compile time");
  }
}

std::string Specializer::pyFormat(const SVal &v, const std::string &specText, SourceLoc loc) {
  if (specText.empty())
    return pyStr(v, false, loc);
  Spec sp;
  size_t i = 0;
  auto isAlign = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (specText.size() >= 2 && isAlign(specText[1])) {
    sp.fill = specText[0];
    sp.align = specText[1];
    i = 2;
  } else if (!specText.empty() && isAlign(specText[0])) {
    sp.align = specText[0];
    i = 1;
  }
  if (i < specText.size() && (specText[i] == '+' || specText[i] == '-' || specText[i] == ' '))
    sp.sign = specText[i++];
  if (i < specText.size() && specText[i] == '#') {
    sp.alternate = true;
    ++i;
  }
  if (i < specText.size() && specText[i] == '0') {
    if (!sp.align) {
      sp.fill = '0';
      sp.align = '=';
    }
    ++i;
  }
  // Width and precision are bounded (Python's are not): a fuzzed `.4611686018427387904%` overflowed
  // the int, and the float conversions format into a 512-byte buffer.
  auto number = [&](int limit, const char *what) {
    int n = 0;
    while (i < specText.size() && std::isdigit(static_cast<unsigned char>(specText[i]))) {
      n = n * 10 + (specText[i++] - '0');
      if (n > limit)
        fail(loc, "format specifier '" + specText + "': a " + what + " above " + std::to_string(limit) +
                      " is not supported");
    }
    return n;
  };
  sp.width = number(1000, "width");
  if (i < specText.size() && (specText[i] == ',' || specText[i] == '_'))
    sp.grouping = specText[i++];
  if (i < specText.size() && specText[i] == '.') {
    ++i;
    sp.precision = 0;
    if (i >= specText.size() || !std::isdigit(static_cast<unsigned char>(specText[i])))
      fail(loc, "format specifier '" + specText + "': a precision needs digits after '.'");
    sp.precision = number(100, "precision");
  }
  if (i < specText.size())
    sp.type = specText[i++];
  if (i != specText.size() || (sp.type && std::string("bcdeEfFgGnosxX%").find(sp.type) == std::string::npos))
    fail(loc, "invalid format specifier '" + specText + "' for " + v.describe());

  std::string body, signText;
  bool numeric = true;
  if (v.kind == SVal::Kind::Str || (v.kind != SVal::Kind::Int && v.kind != SVal::Kind::Bool &&
                                    v.kind != SVal::Kind::Float)) {
    if (sp.type && sp.type != 's')
      fail(loc, "format code '" + std::string(1, sp.type) + "' does not apply to " + v.describe());
    body = pyStr(v, false, loc);
    if (sp.precision >= 0 && size_t(sp.precision) < body.size())
      body = body.substr(0, size_t(sp.precision));
    numeric = false;
  } else if ((v.kind == SVal::Kind::Int || v.kind == SVal::Kind::Bool) &&
             (!sp.type || std::string("bdnoxXc").find(sp.type) != std::string::npos)) {
    if (sp.precision >= 0)
      fail(loc, "precision is not allowed in an integer format specifier '" + specText + "'");
    if (sp.type == 0 && v.kind == SVal::Kind::Bool && !sp.width)
      return v.i ? "True" : "False";
    uint64_t mag = v.i < 0 ? 0 - uint64_t(v.i) : uint64_t(v.i);
    int base = sp.type == 'b' ? 2 : sp.type == 'o' ? 8 : (sp.type == 'x' || sp.type == 'X') ? 16 : 10;
    const char *digits = sp.type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
      body.insert(body.begin(), digits[mag % uint64_t(base)]);
      mag /= uint64_t(base);
    } while (mag);
    if (sp.grouping)
      body = group(body, sp.grouping);
    if (sp.alternate && base != 10)
      body = std::string(sp.type == 'b' ? "0b" : sp.type == 'o' ? "0o" : sp.type == 'X' ? "0X" : "0x") + body;
    signText = v.i < 0 ? "-" : sp.sign == '+' ? "+" : sp.sign == ' ' ? " " : "";
  } else {
    double x = v.kind == SVal::Kind::Float ? v.f : double(v.i);
    double mag = std::fabs(x);
    int prec = sp.precision >= 0 ? sp.precision : 6;
    char t = sp.type;
    if (t == '%') {
      body = printfDouble("%.*f", prec, mag * 100) + "%";
    } else if (t == 'f' || t == 'F' || t == 'e' || t == 'E' || t == 'g' || t == 'G') {
      const char *fmt = t == 'f' || t == 'F' ? "%.*f" : t == 'e' ? "%.*e" : t == 'E' ? "%.*E" : t == 'g' ? "%.*g" : "%.*G";
      body = printfDouble(fmt, prec, mag);
    } else if (sp.precision >= 0) { // no type, a precision: 'g' that keeps a decimal point
      body = printfDouble("%.*g", std::max(prec, 1), mag);
      if (body.find_first_of(".e") == std::string::npos && std::isfinite(mag))
        body += ".0";
    } else {
      body = floatRepr(mag);
    }
    if (std::isnan(x))
      body = t == 'F' || t == 'E' || t == 'G' ? "NAN" : "nan";
    else if (std::isinf(x))
      body = t == 'F' || t == 'E' || t == 'G' ? "INF" : "inf";
    if (sp.grouping)
      body = group(body, sp.grouping);
    signText = std::signbit(x) && !std::isnan(x) ? "-" : sp.sign == '+' ? "+" : sp.sign == ' ' ? " " : "";
  }
  // Padding to the width: numbers align right by default, text left; '=' pads after the sign.
  char align = sp.align ? sp.align : numeric ? '>' : '<';
  std::string whole = signText + body;
  if (int(whole.size()) >= sp.width)
    return whole;
  size_t pad = size_t(sp.width) - whole.size();
  std::string fill(pad, sp.fill);
  switch (align) {
  case '<': return whole + fill;
  case '^': return std::string(pad / 2, sp.fill) + whole + std::string(pad - pad / 2, sp.fill);
  case '=': return signText + fill + body;
  default: return fill + whole;
  }
}

SVal Specializer::evalFString(const ast::FStringExpr *f, Env &env) {
  // In a kernel, as Triton's code generator: each field is a compile-time value formatted with
  // str() (or its !r / !s conversion) and the format spec is not applied. Module-level code and
  // constexpr functions are Python: the spec applies.
  if (!f->error.empty())
    fail(f->errorLoc, f->error);
  bool kernelCode = pythonDepth == 0 && !callStack.empty();
  std::string r;
  for (const ast::FStringPart &p : f->parts) {
    if (!p.value) {
      r += p.literal;
      continue;
    }
    SVal v = eval(p.value, env);
    SourceLoc at = startLoc(p.value);
    if (!v.isConstexpr())
      fail(at, "an f-string formats compile-time values only, and this field is a " + v.describe() +
                   (kernelCode ? " (print runtime values as tl.device_print's arguments)" : ""));
    r += p.label;
    if (p.conversion == 'r' || p.conversion == 'a')
      r += pyStr(v, true, at);
    else if (kernelCode || p.conversion == 's')
      r += pyStr(v, false, at);
    else
      r += pyFormat(v, p.spec, at);
    if (r.size() > kMaxStringBytes)
      fail(at, "compile-time work limit: a string of more than 1 MiB");
  }
  return SVal::str(r);
}

namespace {

/// str(x) / repr(x) of a compile-time value (str() with no argument is "").
SVal strBuiltin(Specializer &S, const BuiltinCall &c) {
  if (!c.p.has("object"))
    return SVal::str("");
  const SVal &v = c.p.get("object").val;
  if (!v.isConstexpr())
    S.fail(c.p.loc("object"), c.fname + "() of a runtime value (" + v.describe() + ") is not supported in a kernel");
  SVal r = SVal::str(S.pyStr(v, c.fname == "repr", c.p.loc("object")));
  S.checkValueSize(r, c.loc);
  return r;
}

/// The compile-time string `v` of argument `what`, else a located error.
const std::string &textArg(Specializer &S, const BuiltinCall &c, const char *what) {
  const SVal &v = c.p.get(what).val;
  if (v.kind != SVal::Kind::Str)
    S.fail(c.p.loc(what), "str." + c.fname + "() argument must be a str, got " + v.describe());
  return v.s;
}

/// The receiver as a string of at most kMaxStringBytes, else a located error.
SVal boundedStr(Specializer &S, std::string r, SourceLoc loc) {
  if (r.size() > Specializer::kMaxStringBytes)
    S.fail(loc, "compile-time work limit: a string of more than 1 MiB");
  return SVal::str(std::move(r));
}

/// str.join(iterable): the strings of a compile-time iterable with the receiver between them.
SVal strJoin(Specializer &S, const BuiltinCall &c) {
  std::vector<SVal> items = S.iterate(c.p.get("iterable").val, c.p.loc("iterable"));
  std::string r;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind != SVal::Kind::Str)
      S.fail(c.p.loc("iterable"), "str.join() item " + std::to_string(i) + " must be a str, got " + items[i].describe());
    r += (i ? c.self->s : "") + items[i].s;
    if (r.size() > Specializer::kMaxStringBytes)
      break;
  }
  return boundedStr(S, std::move(r), c.loc);
}

/// str.split(sep=None, maxsplit=-1), as Python: without sep, on runs of whitespace with no empty
/// parts; with sep, at each occurrence; at most maxsplit splits (-1: all). A list (a tuple here).
SVal strSplit(Specializer &S, const BuiltinCall &c) {
  const std::string &x = c.self->s;
  int64_t maxsplit = -1;
  if (c.p.has("maxsplit")) {
    if (c.p.get("maxsplit").val.kind != SVal::Kind::Int)
      S.fail(c.p.loc("maxsplit"), "str.split() maxsplit must be an int");
    maxsplit = c.p.get("maxsplit").val.i;
  }
  bool ws = !c.p.has("sep") || c.p.get("sep").val.kind == SVal::Kind::None;
  std::string sep = ws ? "" : textArg(S, c, "sep");
  if (!ws && sep.empty())
    S.fail(c.p.loc("sep"), "str.split(): empty separator");
  auto space = [](char ch) { return std::isspace(static_cast<unsigned char>(ch)) != 0; };
  std::vector<SVal> parts;
  auto full = [&] { return maxsplit >= 0 && int64_t(parts.size()) >= maxsplit; };
  for (size_t i = 0;;) {
    if (ws) {
      while (i < x.size() && space(x[i]))
        ++i;
      if (i == x.size())
        break;
    }
    size_t end = full() ? std::string::npos : ws ? i : x.find(sep, i);
    while (ws && end < x.size() && !space(x[end]))
      ++end;
    parts.push_back(SVal::str(x.substr(i, end == std::string::npos ? std::string::npos : end - i)));
    if (end >= x.size())
      break;
    i = ws ? end : end + sep.size();
  }
  return SVal::tuple(parts);
}

/// One replacement field of str.format ("name!r:>8" without its braces) formatted.
std::string formatField(Specializer &S, const BuiltinCall &c, std::string field, size_t &next) {
  std::string spec;
  if (size_t colon = field.find(':'); colon != std::string::npos)
    spec = field.substr(colon + 1), field.resize(colon);
  char conv = 0;
  if (size_t bang = field.find('!'); bang != std::string::npos) {
    std::string cv = field.substr(bang + 1);
    if (cv != "r" && cv != "s" && cv != "a")
      S.fail(c.loc, "str.format(): unknown conversion '!" + cv + "'");
    conv = cv[0], field.resize(bang);
  }
  if (spec.find('{') != std::string::npos)
    S.fail(c.loc, "str.format(): nested replacement fields in a format spec are not supported");
  const Arg *a = nullptr;
  bool digits = !field.empty() && std::all_of(field.begin(), field.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
  if (field.empty() || digits) {
    // next counts the automatic fields; kManual marks a numbered one (Python refuses a mix).
    constexpr size_t kManual = size_t(1) << 40;
    if (field.empty() ? next >= kManual : (next != 0 && next < kManual))
      S.fail(c.loc, "str.format(): cannot switch between automatic field numbering and manual field specification");
    size_t k = field.empty() ? next++ : std::stoul(field.substr(0, 9));
    if (!field.empty())
      next = kManual;
    if (k >= c.args.pos.size())
      S.fail(c.loc, "str.format(): replacement index " + std::to_string(k) + " out of range for " +
                        std::to_string(c.args.pos.size()) + " positional arguments");
    a = &c.args.pos[k];
  } else {
    for (auto &[n, kw] : c.args.kw)
      if (n == field)
        a = &kw;
    if (!a)
      S.fail(c.loc, "str.format(): no keyword argument '" + field + "' (attribute and index fields are not supported)");
  }
  if (!a->val.isConstexpr())
    S.fail(a->loc, "str.format() of a runtime value (" + a->val.describe() + ")");
  if (conv)
    return S.pyFormat(SVal::str(S.pyStr(a->val, conv != 's', a->loc)), spec, a->loc);
  return S.pyFormat(a->val, spec, a->loc);
}

/// str.format(*args, **kwargs) of compile-time values: {} (auto-numbered), {0}, {name}, each
/// with !r / !s and a format spec as f-strings take; {{ and }} are braces.
SVal strFormat(Specializer &S, const BuiltinCall &c) {
  const std::string &t = c.self->s;
  std::string r;
  size_t next = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    char ch = t[i];
    if ((ch == '{' || ch == '}') && i + 1 < t.size() && t[i + 1] == ch) {
      r += ch, ++i;
    } else if (ch == '}') {
      S.fail(c.loc, "str.format(): single '}' encountered in format string");
    } else if (ch == '{') {
      size_t end = t.find('}', i);
      if (end == std::string::npos)
        S.fail(c.loc, "str.format(): single '{' encountered in format string");
      r += formatField(S, c, t.substr(i + 1, end - i - 1), next);
      i = end;
    } else {
      r += ch;
    }
    if (r.size() > Specializer::kMaxStringBytes)
      break;
  }
  return boundedStr(S, std::move(r), c.loc);
}

/// packaging.version.parse(s) / Version(s): the release numbers of a version string as a tuple
/// of ints without trailing zeros, so that versions compare as tuples ("3.5" == "3.5.0" <
/// "3.6.0"); a local part ("+cu128") and a pre- or post-release suffix ("rc1", ".dev0") after
/// the release numbers are dropped.
SVal packagingVersion(Specializer &S, const BuiltinCall &c) {
  const Arg &a = c.p.get("version");
  if (a.val.kind != SVal::Kind::Str)
    S.fail(a.loc, "packaging.version.parse() takes a version string, got " + a.val.describe());
  std::string v = a.val.s;
  if (!v.empty() && (v[0] == 'v' || v[0] == 'V'))
    v.erase(0, 1);
  SVal r;
  r.kind = SVal::Kind::Tuple;
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    int64_t n = 0;
    for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i)
      n = n < (int64_t(1) << 50) ? n * 10 + (v[i] - '0') : n;
    r.elts.push_back(SVal::integer(n));
    if (i + 1 < v.size() && v[i] == '.' && std::isdigit(static_cast<unsigned char>(v[i + 1])))
      ++i;
    else
      break;
  }
  if (r.elts.empty())
    S.fail(a.loc, "packaging.version.parse(): '" + a.val.s + "' is not a version (release numbers first)");
  while (r.elts.size() > 1 && r.elts.back().i == 0)
    r.elts.pop_back();
  return r;
}

} // namespace

std::vector<BuiltinSpec> stringBuiltins() {
  return {
      {"str", "object=None, /", strBuiltin},
      {"repr", "object, /", strBuiltin},
      {"str.join", "iterable, /", strJoin},
      {"str.split", "sep=None, maxsplit=-1", strSplit},
      {"str.format", "", strFormat, kBindsOwnArguments},
      {"packaging.version.parse", "version", packagingVersion},
  };
}

} // namespace tle::sema
