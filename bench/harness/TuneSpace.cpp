// Candidate spaces of tle-bench --tune: the autotune decorator parser, kernel parameters, generated spaces (see TuneSpace.h).
#include "TuneSpace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace tle::bench {

using ojson = nlohmann::ordered_json;

std::string Candidate::id() const {
  std::string s;
  for (const auto &[n, v] : constexprs)
    s += fmt::format("{}={} ", n, v);
  for (const auto &[n, v] : launchVars)
    s += fmt::format("{}={} ", n, v);
  return s + fmt::format("w{} s{}", numWarps, numStages);
}

ojson Candidate::toJson() const {
  ojson cx = ojson::object(), lv = ojson::object();
  for (const auto &[n, v] : constexprs)
    cx[n] = v;
  for (const auto &[n, v] : launchVars)
    lv[n] = v;
  ojson j = {{"constexprs", cx}, {"num_warps", numWarps}, {"num_stages", numStages}};
  if (!launchVars.empty())
    j["launch"] = lv;
  return j;
}

Candidate Candidate::fromJson(const ojson &j) {
  try {
    Candidate c;
    for (const auto &[n, v] : j.at("constexprs").items())
      c.constexprs.emplace_back(n, v.get<int64_t>());
    if (j.contains("launch"))
      for (const auto &[n, v] : j.at("launch").items())
        c.launchVars.emplace_back(n, v.get<int64_t>());
    c.numWarps = j.at("num_warps").get<int>();
    c.numStages = j.at("num_stages").get<int>();
    return c;
  } catch (const nlohmann::json::exception &e) {
    throw BenchError(std::string("malformed candidate JSON: ") + e.what());
  }
}

// ------------------------------------------------------------------------------------------------
// A small reader of Python literals and calls
// ------------------------------------------------------------------------------------------------

namespace {

class PyReader {
public:
  PyReader(const std::string &text, size_t pos, int firstLine) : t_(text), p_(pos), line0_(firstLine), start_(pos) {}

  ojson expr() {
    skip();
    ojson v = primary();
    skip();
    while (p_ < t_.size() && (t_[p_] == '(' || t_[p_] == '.')) {
      if (t_[p_] == '.') { // attribute on a call result: keep it readable, e.g. f().x
        ++p_;
        std::string n = ident();
        v = ojson{{"name", (v.contains("name") ? v["name"].get<std::string>() : std::string("<expr>")) + "." + n}};
      } else {
        v = call(v);
      }
      skip();
    }
    return v;
  }

  size_t pos() const { return p_; }
  void skip() {
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == '#') {
        while (p_ < t_.size() && t_[p_] != '\n')
          ++p_;
      } else if (std::isspace(static_cast<unsigned char>(c)) || (c == '\\' && p_ + 1 < t_.size() && t_[p_ + 1] == '\n')) {
        ++p_;
      } else {
        break;
      }
    }
  }
  bool eat(char c) {
    skip();
    if (p_ < t_.size() && t_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  [[noreturn]] void fail(const std::string &what) const {
    int line = line0_ + int(std::count(t_.begin() + long(start_), t_.begin() + long(std::min(p_, t_.size())), '\n'));
    throw BenchError(fmt::format("line {}: {}", line, what));
  }

private:
  std::string ident() {
    skip();
    size_t b = p_;
    while (p_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[p_])) || t_[p_] == '_'))
      ++p_;
    if (b == p_)
      fail("expected a name");
    return t_.substr(b, p_ - b);
  }

  ojson primary() {
    if (p_ >= t_.size())
      fail("unexpected end of text");
    char c = t_[p_];
    if (c == '-' || c == '+') {
      ++p_;
      skip();
      ojson v = primary();
      if (c == '-') {
        if (v.is_number_integer())
          return -v.get<int64_t>();
        if (v.is_number_float())
          return -v.get<double>();
        fail("unary minus on a non-number");
      }
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && p_ + 1 < t_.size() && std::isdigit(static_cast<unsigned char>(t_[p_ + 1]))))
      return number();
    if (c == '"' || c == '\'')
      return string();
    if (c == '[' || c == '(') {
      char close = c == '[' ? ']' : ')';
      ++p_;
      ojson a = ojson::array();
      bool comma = false;
      while (!eat(close)) {
        a.push_back(expr());
        comma = eat(',');
        if (!comma) {
          if (!eat(close))
            fail(fmt::format("expected ',' or '{}'", close));
          break;
        }
      }
      if (c == '(' && a.size() == 1 && !comma)
        return a[0]; // parenthesised expression
      return a;
    }
    if (c == '{') {
      ++p_;
      ojson o = ojson::object();
      while (!eat('}')) {
        ojson k = expr();
        if (!k.is_string())
          fail("dict keys must be strings");
        if (!eat(':'))
          fail("expected ':' in a dict");
        o[k.get<std::string>()] = expr();
        if (!eat(',')) {
          if (!eat('}'))
            fail("expected ',' or '}' in a dict");
          break;
        }
      }
      return o;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::string n = ident();
      while (p_ < t_.size() && t_[p_] == '.') {
        ++p_;
        n += "." + ident();
      }
      if (n == "True")
        return true;
      if (n == "False")
        return false;
      if (n == "None")
        return nullptr;
      return ojson{{"name", n}};
    }
    fail(fmt::format("unexpected character '{}'", c));
  }

  ojson call(const ojson &callee) {
    ++p_; // '('
    ojson args = ojson::array(), kwargs = ojson::object();
    while (!eat(')')) {
      skip();
      size_t save = p_;
      // keyword argument?
      if (p_ < t_.size() && (std::isalpha(static_cast<unsigned char>(t_[p_])) || t_[p_] == '_')) {
        std::string n = ident();
        skip();
        if (p_ < t_.size() && t_[p_] == '=' && (p_ + 1 >= t_.size() || t_[p_ + 1] != '=')) {
          ++p_;
          kwargs[n] = expr();
        } else {
          p_ = save;
          args.push_back(expr());
        }
      } else {
        args.push_back(expr());
      }
      if (!eat(',')) {
        if (!eat(')'))
          fail("expected ',' or ')' in a call");
        break;
      }
    }
    std::string name = callee.is_object() && callee.contains("name") ? callee["name"].get<std::string>() : "<expr>";
    return ojson{{"call", name}, {"args", args}, {"kwargs", kwargs}};
  }

  ojson number() {
    size_t b = p_;
    bool isFloat = false;
    if (t_.compare(p_, 2, "0x") == 0 || t_.compare(p_, 2, "0X") == 0) {
      p_ += 2;
      while (p_ < t_.size() && std::isxdigit(static_cast<unsigned char>(t_[p_])))
        ++p_;
      return int64_t(std::stoll(t_.substr(b + 2, p_ - b - 2), nullptr, 16));
    }
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '_')
        ++p_;
      else if (c == '.' || c == 'e' || c == 'E') {
        isFloat = true;
        ++p_;
        if ((c == 'e' || c == 'E') && p_ < t_.size() && (t_[p_] == '-' || t_[p_] == '+'))
          ++p_;
      } else
        break;
    }
    std::string s = t_.substr(b, p_ - b);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    try {
      if (isFloat)
        return std::stod(s);
      return int64_t(std::stoll(s));
    } catch (const std::exception &) {
      fail("bad number '" + s + "'");
    }
  }

  ojson string() {
    char q = t_[p_++];
    std::string s;
    while (p_ < t_.size() && t_[p_] != q) {
      if (t_[p_] == '\\' && p_ + 1 < t_.size())
        ++p_;
      s += t_[p_++];
    }
    if (p_ >= t_.size())
      fail("unterminated string");
    ++p_;
    return s;
  }

  const std::string &t_;
  size_t p_;
  int line0_;
  size_t start_;
};

/// Offset of `def NAME(` at the start of a line (after indentation); npos when absent.
size_t findDef(const std::string &src, const std::string &entry, std::string *found = nullptr) {
  size_t at = 0;
  while ((at = src.find("def ", at)) != std::string::npos) {
    size_t ls = src.rfind('\n', at);
    ls = ls == std::string::npos ? 0 : ls + 1;
    bool lineStart = std::all_of(src.begin() + long(ls), src.begin() + long(at), [](char c) { return c == ' ' || c == '\t'; });
    size_t n = at + 4;
    while (n < src.size() && src[n] == ' ')
      ++n;
    size_t e = n;
    while (e < src.size() && (std::isalnum(static_cast<unsigned char>(src[e])) || src[e] == '_'))
      ++e;
    std::string name = src.substr(n, e - n);
    if (lineStart && (entry.empty() || name == entry)) {
      if (found)
        *found = name;
      return at;
    }
    at = e;
  }
  return std::string::npos;
}

int lineOf(const std::string &src, size_t at) { return 1 + int(std::count(src.begin(), src.begin() + long(at), '\n')); }

} // namespace

ojson parsePyLiteral(const std::string &text) {
  PyReader r(text, 0, 1);
  ojson v = r.expr();
  r.skip();
  if (r.pos() != text.size())
    r.fail("unexpected text after the expression");
  return v;
}

std::vector<KernelParam> kernelParams(const std::string &source, const std::string &entry) {
  size_t at = findDef(source, entry);
  if (at == std::string::npos)
    throw BenchError(entry.empty() ? "the source has no `def`" : "the source has no `def " + entry + "`");
  size_t open = source.find('(', at);
  std::vector<KernelParam> ps;
  int depth = 0;
  std::string cur;
  auto flush = [&]() {
    size_t colon = cur.find(':'), eq = cur.find('=');
    std::string name = cur.substr(0, std::min(colon, eq));
    name.erase(std::remove_if(name.begin(), name.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
               name.end());
    if (!name.empty() && name != "*" && name != "/") {
      std::string ann = colon == std::string::npos ? "" : cur.substr(colon + 1);
      ps.push_back({name, ann.find("constexpr") != std::string::npos});
    }
    cur.clear();
  };
  for (size_t i = open + 1; i < source.size(); ++i) {
    char c = source[i];
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) {
        flush();
        return ps;
      }
      --depth;
    } else if (c == ',' && depth == 0) {
      flush();
      continue;
    } else if (c == '#') {
      while (i < source.size() && source[i] != '\n')
        ++i;
      continue;
    }
    cur += c;
  }
  throw BenchError(fmt::format("line {}: unterminated parameter list", lineOf(source, at)));
}

std::string kernelBody(const std::string &source, const std::string &entry) {
  size_t at = findDef(source, entry);
  if (at == std::string::npos)
    return "";
  // The body ends at the next line that starts at column 0 with something other than a comment.
  size_t e = source.find('\n', at);
  while (e != std::string::npos && e + 1 < source.size()) {
    char c = source[e + 1];
    if (c != ' ' && c != '\t' && c != '\n' && c != '#' && c != '\r') {
      // a continuation of the def line itself is indented; a column-0 `)` closes the signature
      if (c != ')')
        return source.substr(at, e - at);
    }
    e = source.find('\n', e + 1);
  }
  return source.substr(at);
}

std::optional<AutotuneDecorator> parseAutotune(const std::string &source, const std::string &entry) {
  size_t def = findDef(source, entry);
  if (def == std::string::npos)
    return std::nullopt;
  // Walk back over the decorator lines directly above the def: each starts with '@' at column 0
  // (or continues a bracketed decorator). Find the '@' that begins the decorator block.
  size_t blockStart = def;
  {
    size_t ls = source.rfind('\n', def == 0 ? 0 : def - 1);
    size_t lineStart = ls == std::string::npos ? 0 : ls + 1;
    blockStart = lineStart;
    // Scan back line by line while the previous non-empty text belongs to a decorator.
    while (blockStart > 0) {
      size_t prevEnd = blockStart - 1; // the '\n' before this line
      size_t prevStart = source.rfind('\n', prevEnd == 0 ? 0 : prevEnd - 1);
      prevStart = prevStart == std::string::npos ? 0 : prevStart + 1;
      std::string line = source.substr(prevStart, prevEnd - prevStart);
      std::string trimmed = line;
      trimmed.erase(0, trimmed.find_first_not_of(" \t"));
      if (trimmed.empty() || trimmed[0] == '#') { // blank or comment lines inside a decorator block
        blockStart = prevStart;
        continue;
      }
      // Any line that is part of a decorator expression: starts with '@', or is inside brackets
      // opened by an earlier '@' line. Accept it; the '@' search below checks the structure.
      if (trimmed[0] == '@' || line[0] == ' ' || line[0] == '\t' || trimmed[0] == ')' || trimmed[0] == ']' ||
          trimmed[0] == '}') {
        blockStart = prevStart;
        continue;
      }
      break;
    }
  }
  std::string block = source.substr(blockStart, def - blockStart);
  const int baseLine = lineOf(source, blockStart);
  size_t at = 0;
  while ((at = block.find('@', at)) != std::string::npos) {
    size_t ls = block.rfind('\n', at == 0 ? 0 : at - 1);
    ls = (ls == std::string::npos || at == 0) ? 0 : ls + 1;
    if (block.find_first_not_of(" \t", ls) != at) { // '@' inside an expression (matmul operator)
      ++at;
      continue;
    }
    const int decoLine = lineOf(block, at) + baseLine - 1;
    PyReader r(block, at + 1, decoLine);
    ojson d = r.expr();
    at = r.pos();
    if (!d.contains("call"))
      continue;
    std::string fn = d["call"].get<std::string>();
    if (fn != "triton.autotune" && fn != "autotune" && fn != "tl.autotune")
      continue;
    AutotuneDecorator out;
    out.line = decoLine;
    const ojson &kw = d["kwargs"];
    ojson configs = kw.contains("configs") ? kw["configs"] : (d["args"].empty() ? ojson() : d["args"][0]);
    if (!configs.is_array())
      throw BenchError(fmt::format("line {}: @triton.autotune: `configs` must be a list written out in the "
                                   "source (a list of triton.Config(...)); it is {}",
                                   out.line, configs.is_null() ? "missing" : configs.dump()));
    ojson key = kw.contains("key") ? kw["key"] : (d["args"].size() > 1 ? d["args"][1] : ojson::array());
    if (key.is_array())
      for (const ojson &k : key)
        if (k.is_string())
          out.key.push_back(k.get<std::string>());
    for (size_t i = 0; i < configs.size(); ++i) {
      const ojson &c = configs[i];
      if (!c.is_object() || !c.contains("call") || (c["call"] != "triton.Config" && c["call"] != "Config"))
        throw BenchError(fmt::format("line {}: @triton.autotune: config {} is not a triton.Config(...) call",
                                     out.line, i));
      const ojson &ckw = c["kwargs"];
      ojson kwargs = !c["args"].empty() ? c["args"][0] : (ckw.contains("kwargs") ? ckw["kwargs"] : ojson::object());
      if (!kwargs.is_object())
        throw BenchError(fmt::format("line {}: @triton.autotune: config {}: the first argument must be a dict", out.line, i));
      Candidate cand;
      for (const auto &[n, v] : kwargs.items()) {
        if (!v.is_number_integer() && !v.is_boolean())
          throw BenchError(fmt::format("line {}: @triton.autotune: config {}: {} must be an integer, is {}", out.line,
                                       i, n, v.dump()));
        cand.constexprs.emplace_back(n, v.is_boolean() ? int64_t(v.get<bool>()) : v.get<int64_t>());
      }
      auto intKw = [&](const char *name, int dflt) {
        if (!ckw.contains(name) || ckw[name].is_null())
          return dflt;
        if (!ckw[name].is_number_integer())
          throw BenchError(fmt::format("line {}: @triton.autotune: config {}: {} must be an integer", out.line, i, name));
        return ckw[name].get<int>();
      };
      cand.numWarps = intKw("num_warps", 4);
      cand.numStages = intKw("num_stages", 3);
      if (c["args"].size() > 1) // positional num_warps, num_stages
        cand.numWarps = c["args"][1].get<int>();
      if (c["args"].size() > 2)
        cand.numStages = c["args"][2].get<int>();
      out.configs.push_back(std::move(cand));
    }
    return out;
  }
  return std::nullopt;
}

// ------------------------------------------------------------------------------------------------
// Generated spaces
// ------------------------------------------------------------------------------------------------

std::vector<int64_t> powersOfTwo(int64_t lo, int64_t hi) {
  if (lo < 1)
    throw BenchError(fmt::format("pow2({}, {}): the lower bound must be >= 1", lo, hi));
  int64_t p = 1;
  while (p < lo)
    p *= 2;
  std::vector<int64_t> out;
  for (; p <= hi; p *= 2) {
    out.push_back(p);
    if (out.size() > 64)
      throw BenchError(fmt::format("pow2({}, {}): too many values", lo, hi));
  }
  return out;
}

namespace {

std::string valueText(const ojson &v, const std::string &where) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number_integer())
    return std::to_string(v.get<int64_t>());
  throw BenchError(where + ": values must be integers or expression strings");
}

/// A spec entry as value expressions; "pow2" ranges become the marker "pow2:LO:HI".
std::vector<std::string> dimValues(const ojson &v, const std::string &where) {
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const ojson &x : v)
      out.push_back(valueText(x, where));
  } else if (v.is_object() && v.contains("pow2") && v["pow2"].is_array() && v["pow2"].size() == 2 && v.size() == 1) {
    out.push_back("pow2:" + valueText(v["pow2"][0], where) + ":" + valueText(v["pow2"][1], where));
  } else {
    throw BenchError(where + ": expected a list of values or {\"pow2\": [lo, hi]}");
  }
  if (out.empty())
    throw BenchError(where + ": no values");
  return out;
}

std::string upper(std::string s) {
  for (char &c : s)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

SpaceSpec makeSpaceSpec(const std::vector<KernelParam> &params, const std::vector<std::string> &fixed,
                        const ojson &spec, bool hasDot) {
  if (!spec.is_null() && !spec.is_object())
    throw BenchError("tune \"space\" must be an object NAME: values");
  SpaceSpec s;
  std::set<std::string> constexprs, seen;
  for (const KernelParam &p : params)
    if (p.constexpr_)
      constexprs.insert(p.name);
  for (const std::string &f : fixed)
    if (spec.is_object() && spec.contains(f))
      throw BenchError(fmt::format("tune space: '{}' is fixed by the kernel's signature or defines", f));
  // Free constexprs, in parameter order.
  for (const KernelParam &p : params) {
    if (!p.constexpr_ || std::find(fixed.begin(), fixed.end(), p.name) != fixed.end())
      continue;
    SpaceDim d;
    d.kind = SpaceDim::Constexpr;
    d.name = p.name;
    if (spec.is_object() && spec.contains(p.name))
      d.values = dimValues(spec[p.name], "tune space '" + p.name + "'");
    else if (upper(p.name).rfind("GROUP", 0) == 0)
      d.values = {"1", "4", "8", "16"};
    else
      d.values = {"pow2:16:256"};
    seen.insert(p.name);
    s.dims.push_back(std::move(d));
  }
  // Launch variables: spec names that are neither constexprs nor warps/stages.
  if (spec.is_object())
    for (const auto &[n, v] : spec.items()) {
      if (n == "num_warps" || n == "num_stages" || seen.count(n))
        continue;
      if (constexprs.count(n))
        continue; // fixed (checked above)
      SpaceDim d;
      d.kind = SpaceDim::Launch;
      d.name = n;
      d.values = dimValues(v, "tune space '" + n + "'");
      s.dims.push_back(std::move(d));
    }
  SpaceDim w{SpaceDim::Warps, "num_warps", {"2", "4", "8"}};
  if (spec.is_object() && spec.contains("num_warps"))
    w.values = dimValues(spec["num_warps"], "tune space 'num_warps'");
  SpaceDim st{SpaceDim::Stages, "num_stages", hasDot ? std::vector<std::string>{"1", "2", "3", "4", "5"}
                                                     : std::vector<std::string>{"3"}};
  if (spec.is_object() && spec.contains("num_stages"))
    st.values = dimValues(spec["num_stages"], "tune space 'num_stages'");
  s.dims.push_back(std::move(w));
  s.dims.push_back(std::move(st));
  return s;
}

std::vector<Candidate> expandSpace(const SpaceSpec &space, const Env &env) {
  std::vector<std::vector<int64_t>> vals;
  for (const SpaceDim &d : space.dims) {
    std::vector<int64_t> v;
    auto add = [&](int64_t x) {
      if (x <= 0)
        throw BenchError(fmt::format("tune space '{}': value {} is not positive", d.name, x));
      if (std::find(v.begin(), v.end(), x) == v.end())
        v.push_back(x);
    };
    for (const std::string &e : d.values) {
      if (e.rfind("pow2:", 0) == 0) {
        size_t c2 = e.find(':', 5);
        int64_t lo = evalExpr(e.substr(5, c2 - 5), env).asInt("pow2 lower bound");
        int64_t hi = evalExpr(e.substr(c2 + 1), env).asInt("pow2 upper bound");
        for (int64_t x : powersOfTwo(lo, hi))
          add(x);
      } else {
        add(evalExpr(e, env).asInt(fmt::format("tune space '{}'", d.name)));
      }
    }
    if (v.empty())
      throw BenchError(fmt::format("tune space '{}': no values for this case", d.name));
    vals.push_back(std::move(v));
  }
  std::vector<Candidate> out;
  std::vector<size_t> idx(vals.size(), 0);
  while (true) {
    Candidate c;
    for (size_t i = 0; i < space.dims.size(); ++i) {
      const SpaceDim &d = space.dims[i];
      int64_t x = vals[i][idx[i]];
      switch (d.kind) {
      case SpaceDim::Constexpr: c.constexprs.emplace_back(d.name, x); break;
      case SpaceDim::Launch: c.launchVars.emplace_back(d.name, x); break;
      case SpaceDim::Warps: c.numWarps = int(x); break;
      case SpaceDim::Stages: c.numStages = int(x); break;
      }
    }
    out.push_back(std::move(c));
    size_t k = vals.size();
    while (k > 0) {
      --k;
      if (++idx[k] < vals[k].size())
        break;
      idx[k] = 0;
      if (k == 0)
        return out;
    }
    if (vals.empty())
      return out;
  }
}

} // namespace tle::bench
