// Loading and validation of launch specs (see LaunchSpecFile.h): a user kernel's buffers, scalars, grid, sizes and check, turned into one suite case per size.
#include "LaunchSpecFile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <set>

namespace tle::bench {

namespace {

/// Errors name the spec file and the field: "spec.json: buffers.x.dtype: ...".
struct Where {
  std::string path;
  [[noreturn]] void fail(const std::string &field, const std::string &message) const {
    throw BenchError(fmt::format("{}: {}: {}", path, field, message));
  }
};

std::string dirOf(const std::string &p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string under(const std::string &dir, const std::string &rel) {
  return !rel.empty() && rel[0] == '/' ? rel : dir + "/" + rel;
}

bool readable(const std::string &path) { return std::ifstream(path).good(); }

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

void checkKeys(const Where &w, const ojson &obj, const std::set<std::string> &allowed, const std::string &field) {
  if (!obj.is_object())
    w.fail(field, "must be a JSON object");
  for (const auto &[k, v] : obj.items()) {
    (void)v;
    if (allowed.count(k))
      continue;
    std::string list;
    for (const std::string &a : allowed)
      list += (list.empty() ? "" : ", ") + a;
    w.fail(field.empty() ? k : field + "." + k, "unknown key (known: " + list + ")");
  }
}

std::string str(const Where &w, const ojson &obj, const char *key, const std::string &field, bool required,
                 const std::string &dflt = "") {
  if (!obj.contains(key)) {
    if (required)
      w.fail(field.empty() ? key : field + "." + key, "missing");
    return dflt;
  }
  if (!obj.at(key).is_string())
    w.fail(field.empty() ? key : field + "." + key, "must be a string");
  return obj.at(key).get<std::string>();
}

/// A number or an expression string as expression text.
std::string exprOf(const Where &w, const ojson &v, const std::string &field) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned())
    return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) {
    std::string s = fmt::format("{}", v.get<double>());
    return s.find_first_of(".eEn") == std::string::npos ? s + ".0" : s;
  }
  w.fail(field, "must be a number or an expression string");
}

/// A grid: an array of 1 to 3 expressions, or one string whose top-level commas separate them.
std::vector<std::string> gridOf(const Where &w, const ojson &v, const std::string &field) {
  std::vector<std::string> out;
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(exprOf(w, v[i], fmt::format("{}[{}]", field, i)));
  } else if (v.is_string()) {
    std::string cur;
    int depth = 0;
    for (char c : v.get<std::string>()) {
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (c == ',' && depth == 0) {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    out.push_back(cur);
  } else if (v.is_number_integer()) {
    out.push_back(exprOf(w, v, field));
  } else {
    w.fail(field, "must be an expression string or an array of 1 to 3 expressions");
  }
  if (out.empty() || out.size() > 3)
    w.fail(field, fmt::format("needs 1 to 3 dimensions, has {}", out.size()));
  return out;
}

/// The defines of a kernel object ("defines": {NAME: VALUE}).
std::vector<std::pair<std::string, std::string>> definesOf(const Where &w, const ojson &obj, const std::string &field) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!obj.contains("defines"))
    return out;
  const ojson &d = obj.at("defines");
  if (!d.is_object())
    w.fail(field, "must be an object NAME: VALUE");
  for (const auto &[n, v] : d.items()) {
    if (v.is_boolean())
      out.emplace_back(n, v.get<bool>() ? "True" : "False");
    else
      out.emplace_back(n, v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

const std::set<std::string> kScalarTypes = {"i1",  "i8",  "i16",  "i32",  "i64",  "u8",  "u16",
                                            "u32", "u64", "fp16", "bf16", "fp32", "fp64"};

/// A scalar of the spec: its value expression and its signature type.
struct Scalar {
  std::string name, value, type;
};

/// What the spec's sizes, scalars, buffers and "args" give a kernel: the case variables, the
/// launch's arguments, the generated signature and the per-case defines.
struct Binding {
  std::vector<std::string> args;                 ///< one per runtime parameter (buffer name or expression)
  std::vector<std::string> argParams;            ///< the runtime parameters' names
  std::string signature;                         ///< generated unless given
  std::vector<std::string> caseDefines;          ///< sizes and scalars that name constexpr parameters
};

Binding bindParams(const Where &w, const std::string &field, const std::vector<KernelParam> &params, const ojson &argMap,
             const std::vector<BufferSpec> &buffers, const std::vector<Scalar> &scalars,
             const std::vector<std::string> &sizes, const std::vector<std::pair<std::string, int64_t>> &firstSize) {
  Binding b;
  std::set<std::string> mapped;
  std::vector<std::string> sig;
  for (const KernelParam &p : params) {
    auto scalar = std::find_if(scalars.begin(), scalars.end(), [&](const Scalar &s) { return s.name == p.name; });
    bool isSize = std::find(sizes.begin(), sizes.end(), p.name) != sizes.end();
    if (p.constexpr_) {
      if (isSize || scalar != scalars.end())
        b.caseDefines.push_back(p.name);
      continue;
    }
    std::string arg;
    if (argMap.contains(p.name)) {
      arg = exprOf(w, argMap.at(p.name), field + ".args." + p.name);
      mapped.insert(p.name);
    } else if (std::any_of(buffers.begin(), buffers.end(), [&](const BufferSpec &x) { return x.name == p.name; }) ||
               scalar != scalars.end() || isSize) {
      arg = p.name;
    } else {
      w.fail(field.empty() ? "args" : field + ".args",
             fmt::format("the kernel's parameter '{}' gets no value: name a buffer, scalar or size '{}', or map it "
                         "in \"args\"",
                         p.name, p.name));
    }
    auto buf = std::find_if(buffers.begin(), buffers.end(), [&](const BufferSpec &x) { return x.name == arg; });
    auto sc = std::find_if(scalars.begin(), scalars.end(), [&](const Scalar &s) { return s.name == arg; });
    if (buf != buffers.end()) {
      sig.push_back(fmt::format("*{}:16", dtypeName(buf->dtype)));
    } else if (sc != scalars.end()) {
      sig.push_back(sc->type);
    } else {
      // A size, or an integer expression over sizes: i32 unless a first-size value needs i64.
      bool wide = std::any_of(firstSize.begin(), firstSize.end(), [&](const auto &s) {
        return s.first == arg && (s.second > INT32_MAX || s.second < INT32_MIN);
      });
      sig.push_back(wide ? "i64" : "i32");
    }
    b.args.push_back(arg);
    b.argParams.push_back(p.name);
  }
  for (const auto &[k, v] : argMap.items()) {
    (void)v;
    if (!mapped.count(k))
      w.fail(field.empty() ? "args." + k : field + ".args." + k,
             "not a runtime parameter of the kernel (constexprs take \"defines\", configs or sizes)");
  }
  for (const std::string &s : sig)
    b.signature += (b.signature.empty() ? "" : ", ") + s;
  return b;
}

BufferSpec parseBuffer(const Where &w, const std::string &dir, const std::string &name, const ojson &j) {
  const std::string field = "buffers." + name;
  if (!isIdentifier(name))
    w.fail(field, "a buffer name must be an identifier");
  checkKeys(w, j, {"dtype", "shape", "role", "init", "file"}, field);
  BufferSpec b;
  b.name = name;
  std::string dt = str(w, j, "dtype", field, true);
  try {
    b.dtype = parseDType(dt);
  } catch (const BenchError &e) {
    w.fail(field + ".dtype", e.what());
  }
  if (!j.contains("shape"))
    w.fail(field + ".shape", "missing (a list of expressions over the sizes, e.g. [\"M\", \"N\"])");
  const ojson &shape = j.at("shape");
  if (!shape.is_array() || shape.empty())
    w.fail(field + ".shape", "must be a non-empty list of expressions");
  for (size_t i = 0; i < shape.size(); ++i)
    b.shape.push_back(exprOf(w, shape[i], fmt::format("{}.shape[{}]", field, i)));
  b.role = str(w, j, "role", field, false, "input");
  if (b.role != "input" && b.role != "output" && b.role != "scratch")
    w.fail(field + ".role", "must be input, output or scratch, not '" + b.role + "'");
  std::string init = str(w, j, "init", field, false, b.role == "input" ? "normal" : "zeros");
  auto [kind, args] = parseCall(init, w.path + ": " + field + ".init");
  static const std::set<std::string> kinds = {"normal", "uniform", "randint", "zeros", "ones", "full"};
  if (!kinds.count(kind))
    w.fail(field + ".init", "unknown init '" + kind +
                                "' (known: normal(mean, std), uniform(low, high), randint(low, high), zeros, ones, "
                                "full(value))");
  b.init = kind;
  b.initArgs = args;
  if (j.contains("file")) {
    if (b.role != "input")
      w.fail(field + ".file", "only inputs are read from files");
    b.file = under(dir, str(w, j, "file", field, true));
  }
  return b;
}

std::vector<Scalar> parseScalars(const Where &w, const ojson &doc) {
  std::vector<Scalar> out;
  if (!doc.contains("scalars"))
    return out;
  const ojson &s = doc.at("scalars");
  if (!s.is_object())
    w.fail("scalars", "must be an object NAME: VALUE or NAME: {\"dtype\", \"value\"}");
  for (const auto &[n, v] : s.items()) {
    const std::string field = "scalars." + n;
    if (!isIdentifier(n))
      w.fail(field, "a scalar name must be an identifier");
    Scalar sc{n, "", ""};
    if (v.is_object()) {
      checkKeys(w, v, {"dtype", "value"}, field);
      sc.type = str(w, v, "dtype", field, true);
      if (!kScalarTypes.count(sc.type))
        w.fail(field + ".dtype", "unknown dtype '" + sc.type +
                                     "' (known: i1 i8 i16 i32 i64 u8 u16 u32 u64 fp16 bf16 fp32 fp64)");
      if (!v.contains("value"))
        w.fail(field + ".value", "missing");
      sc.value = exprOf(w, v.at("value"), field + ".value");
    } else {
      sc.value = exprOf(w, v, field);
      sc.type = v.is_number_float() ? "fp32" : "i32";
    }
    out.push_back(sc);
  }
  return out;
}

std::vector<std::vector<std::pair<std::string, int64_t>>> parseSizes(const Where &w, const ojson &doc) {
  if (!doc.contains("sizes") || !doc.at("sizes").is_array() || doc.at("sizes").empty())
    w.fail("sizes", "must be a non-empty list of objects NAME: INTEGER (the problem sizes to tune over)");
  std::vector<std::vector<std::pair<std::string, int64_t>>> out;
  const ojson &sizes = doc.at("sizes");
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string field = fmt::format("sizes[{}]", i);
    if (!sizes[i].is_object() || sizes[i].empty())
      w.fail(field, "must be a non-empty object NAME: INTEGER");
    std::vector<std::pair<std::string, int64_t>> one;
    for (const auto &[n, v] : sizes[i].items()) {
      if (!isIdentifier(n))
        w.fail(field + "." + n, "a size name must be an identifier");
      if (!v.is_number_integer())
        w.fail(field + "." + n, "must be an integer, is " + v.dump());
      one.emplace_back(n, v.get<int64_t>());
    }
    if (i > 0) {
      auto names = [](const auto &s) {
        std::vector<std::string> ns;
        for (const auto &[n, v] : s)
          ns.push_back(n);
        std::sort(ns.begin(), ns.end());
        return ns;
      };
      if (names(one) != names(out[0]))
        w.fail(field, "names other sizes than sizes[0] (every size gives the same names)");
    }
    out.push_back(std::move(one));
  }
  return out;
}

std::vector<Candidate> parseConfigs(const Where &w, const ojson &doc) {
  std::vector<Candidate> out;
  if (!doc.contains("configs"))
    return out;
  const ojson &cs = doc.at("configs");
  if (!cs.is_array() || cs.empty())
    w.fail("configs", "must be a non-empty list of {NAME: VALUE, \"num_warps\": W, \"num_stages\": S}");
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::string field = fmt::format("configs[{}]", i);
    if (!cs[i].is_object())
      w.fail(field, "must be an object");
    Candidate c;
    for (const auto &[n, v] : cs[i].items()) {
      if (!v.is_number_integer() && !v.is_boolean())
        w.fail(field + "." + n, "must be an integer");
      int64_t x = v.is_boolean() ? int64_t(v.get<bool>()) : v.get<int64_t>();
      if (n == "num_warps") {
        if (x < 1 || x > 32 || (x & (x - 1)))
          w.fail(field + ".num_warps", "must be a power of two in 1..32");
        c.numWarps = int(x);
      } else if (n == "num_stages") {
        if (x < 1 || x > 8)
          w.fail(field + ".num_stages", "must be in 1..8");
        c.numStages = int(x);
      } else {
        c.constexprs.emplace_back(n, x);
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

/// Evaluates every expression of a kernel's launch and the buffers for each size, so that a typo
/// is reported at load time with its field. Constexprs not yet known are 1.
void checkExpressions(const Where &w, const std::string &field, const Suite &s, const LaunchSpec &launch,
                      const std::vector<KernelParam> &params, const std::vector<std::string> &heuristics) {
  for (const CaseSpec &c : s.cases) {
    Env env;
    for (const KernelParam &p : params)
      if (p.constexpr_)
        env[p.name] = Value::ofInt(1);
    for (const std::string &h : heuristics)
      env[h] = Value::ofInt(1);
    for (const auto &[n, text] : c.vars) {
      try {
        env[n] = evalExpr(text, env);
      } catch (const BenchError &e) {
        w.fail("scalars." + n, fmt::format("for {}: {}", c.name, e.what()));
      }
    }
    for (const BufferSpec &b : c.buffers)
      for (size_t i = 0; i < b.shape.size(); ++i) {
        std::string f = fmt::format("buffers.{}.shape[{}]", b.name, i);
        try {
          int64_t v = evalExpr(b.shape[i], env).asInt(b.shape[i]);
          if (v < 1)
            w.fail(f, fmt::format("for {}: '{}' is {}, not a positive size", c.name, b.shape[i], v));
        } catch (const BenchError &e) {
          w.fail(f, fmt::format("for {}: {}", c.name, e.what()));
        }
      }
    for (size_t i = 0; i < launch.grid.size(); ++i)
      try {
        evalExpr(launch.grid[i], env).asInt(launch.grid[i]);
      } catch (const BenchError &e) {
        w.fail(fmt::format("{}grid[{}]", field, i), fmt::format("for {}: {}", c.name, e.what()));
      }
    for (size_t i = 0; i < launch.args.size(); ++i)
      if (bufferIndex(c, launch.args[i]) < 0)
        try {
          evalExpr(launch.args[i], env);
        } catch (const BenchError &e) {
          w.fail(fmt::format("{}args", field), fmt::format("for {}: argument {}: {}", c.name, i, e.what()));
        }
  }
}

/// Reads the kernel `entry` of `sourcePath` (its parameters), or fails on `field`.
std::string readSource(const Where &w, const std::string &field, const std::string &sourcePath) {
  std::ifstream f(sourcePath, std::ios::binary);
  if (!f)
    w.fail(field, "cannot read '" + sourcePath + "' (paths are relative to the spec's directory)");
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

KernelSpec kernelOf(const Where &w, const std::string &dir, const ojson &j, const std::string &field,
                    const std::string &defaultSource) {
  KernelSpec k;
  std::string src = str(w, j, "source", field, defaultSource.empty(), defaultSource);
  k.source = src; // relative to the suite root, the spec's directory
  k.entry = str(w, j, "kernel", field, true);
  k.signature = str(w, j, "signature", field, false);
  k.defines = definesOf(w, j, field.empty() ? "defines" : field + ".defines");
  if (j.contains("include_dirs")) {
    const ojson &d = j.at("include_dirs");
    if (!d.is_array())
      w.fail(field.empty() ? "include_dirs" : field + ".include_dirs", "must be a list of directories");
    for (const ojson &x : d) {
      if (!x.is_string())
        w.fail(field.empty() ? "include_dirs" : field + ".include_dirs", "must be a list of directories");
      std::string p = under(dir, x.get<std::string>());
      if (!std::ifstream(p + "/.").good() && !readable(p))
        w.fail(field.empty() ? "include_dirs" : field + ".include_dirs", "no directory '" + p + "'");
      k.includeDirs.push_back(x.get<std::string>());
    }
  }
  return k;
}

} // namespace

bool isLaunchSpec(const ojson &doc) { return doc.is_object() && doc.contains("source") && !doc.contains("kernels"); }

std::string expandTemplate(const std::string &text, const Env &env, const std::string &where) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    size_t close = text.find('}', i);
    if (close == std::string::npos)
      throw BenchError(where + ": unmatched '{' in '" + text + "'");
    std::string name = text.substr(i + 1, close - i - 1);
    auto it = env.find(name);
    if (it == env.end())
      throw BenchError(fmt::format("{}: '{{{}}}' in '{}' names no size or scalar", where, name, text));
    out += it->second.str();
    i = close;
  }
  return out;
}

namespace {

/// `args['X']` / `args["X"]` (ARG the lambda's parameter) replaced by X; the keys into `reads`.
std::string argsToNames(const std::string &body, const std::string &arg, std::vector<std::string> &reads) {
  std::string out;
  for (size_t i = 0; i < body.size();) {
    bool word = body.compare(i, arg.size(), arg) == 0 &&
                (i == 0 || !(std::isalnum(static_cast<unsigned char>(body[i - 1])) || body[i - 1] == '_'));
    size_t q = i + arg.size();
    if (word && q + 1 < body.size() && body[q] == '[' && (body[q + 1] == '\'' || body[q + 1] == '"')) {
      size_t end = body.find(body[q + 1], q + 2);
      if (end != std::string::npos && end + 1 < body.size() && body[end + 1] == ']') {
        std::string key = body.substr(q + 2, end - q - 2);
        if (std::find(reads.begin(), reads.end(), key) == reads.end())
          reads.push_back(key);
        out += key;
        i = end + 2;
        continue;
      }
    }
    out += body[i++];
  }
  return out;
}

std::string trimmed(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\n\\"), e = s.find_last_not_of(" \t\n\\");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

} // namespace

std::vector<HeuristicRule> heuristicRules(const std::string &source, const std::string &entry) {
  size_t def = source.find("def " + entry + "(");
  if (def == std::string::npos)
    return {};
  size_t prevDef = def < 2 ? std::string::npos : source.rfind("\ndef ", def - 2); // the previous def
  size_t from = prevDef == std::string::npos ? 0 : prevDef + 1;
  size_t at = std::string::npos;
  for (const char *spelling : {"@triton.heuristics(", "@heuristics("}) {
    size_t a = source.rfind(spelling, def);
    if (a != std::string::npos && a >= from && (at == std::string::npos || a > at))
      at = a;
  }
  std::vector<HeuristicRule> out;
  if (at == std::string::npos)
    return out;
  // Walk the dict at depth 2 (inside `(` and `{`): 'NAME': lambda ARG: BODY, ...
  int depth = 0;
  HeuristicRule *open = nullptr;
  size_t bodyStart = 0;
  std::string arg;
  auto close = [&](size_t end) {
    if (!open)
      return;
    open->expr = argsToNames(trimmed(source.substr(bodyStart, end - bodyStart)), arg, open->reads);
    open = nullptr;
  };
  for (size_t i = source.find('(', at); i < def; ++i) {
    char c = source[i];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 2)
        close(i);
      if (--depth == 0)
        break;
    } else if (c == ',' && depth == 2) {
      close(i);
    } else if ((c == '\'' || c == '"') && depth == 2 && !open) {
      size_t end = source.find(c, i + 1);
      if (end == std::string::npos)
        break;
      size_t colon = source.find_first_not_of(" \t\n", end + 1);
      if (colon != std::string::npos && source[colon] == ':') {
        std::string name = source.substr(i + 1, end - i - 1);
        size_t lam = source.find_first_not_of(" \t\n", colon + 1);
        if (lam == std::string::npos || source.compare(lam, 7, "lambda ") != 0)
          throw BenchError("@triton.heuristics: the value of '" + name + "' is not `lambda ARGS: EXPR`");
        size_t argEnd = source.find(':', lam);
        arg = trimmed(source.substr(lam + 7, argEnd - lam - 7));
        out.push_back({name, "", {}, false});
        open = &out.back();
        bodyStart = argEnd + 1;
        i = argEnd;
        continue;
      }
      i = end;
    } else if ((c == '\'' || c == '"') && open) {
      size_t end = source.find(c, i + 1); // a string inside a body (args['X'])
      i = end == std::string::npos ? i : end;
    }
  }
  return out;
}

std::vector<std::string> heuristicParams(const std::string &source, const std::string &entry) {
  std::vector<std::string> names;
  for (const HeuristicRule &r : heuristicRules(source, entry))
    names.push_back(r.name);
  return names;
}

std::vector<std::pair<std::string, std::string>> runtimeHeuristicDefines(const LaunchSpecFile &ls, const Env &env,
                                                                         const Candidate &config,
                                                                         const std::string &caseName, Env *values) {
  std::vector<std::pair<std::string, std::string>> out;
  if (std::none_of(ls.heuristicRules.begin(), ls.heuristicRules.end(), [](const auto &r) { return r.runtime; }))
    return out;
  Env e = env;
  std::set<std::string> given;
  for (const auto &[n, v] : ls.suite.kernels.at(0).defines) {
    given.insert(n);
    try {
      e[n] = evalExpr(v == "True" ? "1" : v == "False" ? "0" : v, e);
    } catch (const BenchError &) { // a define that is not a number (a dtype) is not for heuristics
    }
  }
  for (const auto &[n, v] : config.constexprs) {
    given.insert(n);
    e[n] = Value::ofInt(v);
  }
  // The runtime parameters a lambda reads: the launch's integer and float arguments.
  const CaseSpec &c0 = ls.suite.cases.at(0);
  for (size_t i = 0; i < ls.runtimeParams.size() && i < c0.launches.at(0).args.size(); ++i) {
    const std::string &a = c0.launches[0].args[i];
    if (bufferIndex(c0, a) < 0 && !e.count(ls.runtimeParams[i]))
      e[ls.runtimeParams[i]] = evalExpr(a, e);
  }
  e["num_warps"] = Value::ofInt(config.numWarps);
  e["num_stages"] = Value::ofInt(config.numStages);
  for (const HeuristicRule &r : ls.heuristicRules) {
    if (given.count(r.name))
      continue;
    Value v;
    try {
      v = evalExpr(r.expr, e);
    } catch (const BenchError &x) {
      throw BenchError(fmt::format("@triton.heuristics '{}' for {} ({}): {}", r.name, caseName, config.id(), x.what()));
    }
    e[r.name] = v;
    if (r.runtime)
      out.emplace_back(r.name, v.str());
  }
  if (values)
    *values = e;
  return out;
}

LaunchSpecFile loadLaunchSpec(const std::string &path) {
  Where w{path};
  std::ifstream f(path);
  if (!f)
    throw BenchError("cannot read the launch spec " + path);
  ojson doc;
  try {
    doc = ojson::parse(f);
  } catch (const std::exception &e) {
    throw BenchError(path + ": invalid JSON: " + e.what());
  }
  checkKeys(w, doc,
            {"comment", "format", "source", "kernel", "signature", "defines", "include_dirs", "sizes", "dispatch_on",
             "buffers", "scalars", "args", "grid", "configs", "space", "model", "check"},
            "");
  if (doc.contains("format") && doc.at("format") != "tle-launch-spec")
    w.fail("format", "must be \"tle-launch-spec\" when given");
  const std::string dir = dirOf(path);
  LaunchSpecFile out;
  out.path = path;
  Suite &s = out.suite;
  s.path = path;
  s.root = dir;
  s.name = "tune-" + str(w, doc, "kernel", "", true);

  KernelSpec k = kernelOf(w, dir, doc, "", "");
  k.name = k.entry; // the suite's kernel name: the entry, as tables print it
  const std::string source = readSource(w, "source", under(dir, k.source));
  // Sources are relative to the suite root (the spec's directory) from here on.
  std::vector<KernelParam> params;
  try {
    params = kernelParams(source, k.entry);
  } catch (const BenchError &e) {
    w.fail("kernel", std::string(e.what()) + " in " + k.source);
  }
  try {
    out.heuristicRules = heuristicRules(source, k.entry);
  } catch (const BenchError &e) {
    w.fail("kernel", std::string(e.what()) + " in " + k.source);
  }
  for (HeuristicRule &r : out.heuristicRules) {
    out.heuristics.push_back(r.name);
    for (const std::string &x : r.reads)
      r.runtime |= std::any_of(params.begin(), params.end(), [&](const KernelParam &p) {
        return p.name == x && !p.constexpr_;
      });
  }
  auto sizes = parseSizes(w, doc);
  for (const auto &[n, v] : sizes[0])
    out.sizeNames.push_back(n);
  std::vector<Scalar> scalars = parseScalars(w, doc);
  std::vector<BufferSpec> buffers;
  if (!doc.contains("buffers") || !doc.at("buffers").is_object() || doc.at("buffers").empty())
    w.fail("buffers", "must be an object NAME: {\"dtype\", \"shape\", \"role\", \"init\"}");
  for (const auto &[n, b] : doc.at("buffers").items())
    buffers.push_back(parseBuffer(w, dir, n, b));
  for (const Scalar &sc : scalars)
    if (std::find(out.sizeNames.begin(), out.sizeNames.end(), sc.name) != out.sizeNames.end())
      w.fail("scalars." + sc.name, "is also a size");
  const ojson argMap = doc.value("args", ojson::object());
  if (!argMap.is_object())
    w.fail("args", "must be an object PARAMETER: buffer name or expression");
  Binding b = bindParams(w, "", params, argMap, buffers, scalars, out.sizeNames, sizes[0]);
  out.runtimeParams = b.argParams;
  if (k.signature.empty())
    k.signature = b.signature;
  if (!doc.contains("grid"))
    w.fail("grid", "missing (expressions over the sizes, scalars and the config's constexprs, e.g. \"cdiv(M, BLOCK_M)\")");
  LaunchSpec launch{k.name, gridOf(w, doc.at("grid"), "grid"), b.args};

  // The reference check.
  if (doc.contains("check")) {
    const ojson &c = doc.at("check");
    checkKeys(w, c, {"expect", "reference", "rtol", "atol"}, "check");
    for (const char *t : {"rtol", "atol"})
      if (c.contains(t)) {
        if (!c.at(t).is_number() || c.at(t).get<double>() < 0)
          w.fail(std::string("check.") + t, "must be a number >= 0");
        (t[0] == 'r' ? out.check.rtol : out.check.atol) = c.at(t).get<double>();
      }
    if (c.contains("expect")) {
      if (!c.at("expect").is_object())
        w.fail("check.expect", "must be an object OUTPUT: \"FILE.npy\" (a template: {M} is a size's value)");
      for (const auto &[n, v] : c.at("expect").items()) {
        auto bi = std::find_if(buffers.begin(), buffers.end(), [&](const BufferSpec &x) { return x.name == n; });
        if (bi == buffers.end() || bi->role != "output")
          w.fail("check.expect." + n, "names no output buffer");
        if (!v.is_string())
          w.fail("check.expect." + n, "must be a .npy path template");
        out.check.expect.emplace_back(n, under(dir, v.get<std::string>()));
      }
    }
    if (c.contains("reference")) {
      const ojson &r = c.at("reference");
      checkKeys(w, r, {"source", "kernel", "signature", "defines", "include_dirs", "num_warps", "grid", "args"},
                "check.reference");
      KernelSpec rk = kernelOf(w, dir, r, "check.reference", k.source);
      rk.name = k.entry == "reference" ? "reference_check" : "reference";
      rk.numWarps = r.value("num_warps", 4);
      std::string rsrc = readSource(w, "check.reference.source", under(dir, rk.source));
      std::vector<KernelParam> rparams;
      try {
        rparams = kernelParams(rsrc, rk.entry);
      } catch (const BenchError &e) {
        w.fail("check.reference.kernel", std::string(e.what()) + " in " + rk.source);
      }
      Binding rb = bindParams(w, "check.reference", rparams, r.value("args", ojson::object()), buffers, scalars,
                        out.sizeNames, sizes[0]);
      if (rk.signature.empty())
        rk.signature = rb.signature;
      if (!r.contains("grid"))
        w.fail("check.reference.grid", "missing");
      out.check.referenceLaunch = LaunchSpec{rk.name, gridOf(w, r.at("grid"), "check.reference.grid"), rb.args};
      out.check.reference = rk;
      out.check.referenceDefines = rb.caseDefines;
    }
    if (out.check.expect.empty() && !out.check.reference)
      w.fail("check", "gives neither \"expect\" nor \"reference\"");
  }

  // One case per size: the sizes, then the scalars, as variables.
  for (size_t i = 0; i < sizes.size(); ++i) {
    CaseSpec c;
    for (const auto &[n, v] : sizes[i]) {
      c.name += (c.name.empty() ? "" : ",") + fmt::format("{}={}", n, v);
      c.vars.emplace_back(n, std::to_string(v));
    }
    for (const Scalar &sc : scalars)
      c.vars.emplace_back(sc.name, sc.value);
    c.label = k.entry + " " + c.name;
    c.buffers = buffers;
    c.launches.push_back(launch);
    for (const std::string &d : b.caseDefines)
      for (const auto &[n, v] : c.vars)
        if (n == d)
          c.defines.emplace_back(n, v);
    s.cases.push_back(std::move(c));
  }
  checkExpressions(w, "", s, launch, params, out.heuristics);
  if (out.check.referenceLaunch) {
    std::string rsrc = readSource(w, "check.reference.source", under(dir, out.check.reference->source));
    checkExpressions(w, "check.reference.", s, *out.check.referenceLaunch, kernelParams(rsrc, out.check.reference->entry),
                     heuristicParams(rsrc, out.check.reference->entry));
  }
  // Input files and expectations must exist for every size.
  for (const CaseSpec &c : s.cases) {
    Env env;
    for (const auto &[n, text] : c.vars)
      env[n] = evalExpr(text, env);
    for (const BufferSpec &bs : c.buffers)
      if (!bs.file.empty()) {
        std::string p = expandTemplate(bs.file, env, path + ": buffers." + bs.name + ".file");
        if (!readable(p))
          w.fail("buffers." + bs.name + ".file", "cannot read '" + p + "' (for " + c.name + ")");
      }
    for (const auto &[n, t] : out.check.expect) {
      std::string p = expandTemplate(t, env, path + ": check.expect." + n);
      if (!readable(p))
        w.fail("check.expect." + n, "cannot read '" + p + "' (for " + c.name + ")");
    }
  }

  // What the dispatch table tests: the sizes passed as the kernel's own integer arguments.
  auto paramOf = [&](const std::string &n) -> std::string {
    auto it = std::find(b.args.begin(), b.args.end(), n);
    return it == b.args.end() ? "" : b.argParams[size_t(it - b.args.begin())];
  };
  if (doc.contains("dispatch_on")) {
    const ojson &d = doc.at("dispatch_on");
    if (!d.is_array())
      w.fail("dispatch_on", "must be a list of size names");
    for (const ojson &x : d) {
      std::string n = x.is_string() ? x.get<std::string>() : x.dump();
      if (paramOf(n).empty())
        w.fail("dispatch_on", fmt::format("'{}' is not a size passed as an integer argument of the kernel "
                                          "(tle-link's predicates test the launcher's integer arguments)",
                                          n));
      out.dispatchOn.emplace_back(n, paramOf(n));
    }
  } else {
    for (size_t i = 0; i < out.sizeNames.size(); ++i) {
      const std::string &n = out.sizeNames[i];
      bool varies = std::any_of(sizes.begin(), sizes.end(), [&](const auto &one) {
        auto at = std::find_if(one.begin(), one.end(), [&](const auto &x) { return x.first == n; });
        auto first = std::find_if(sizes[0].begin(), sizes[0].end(), [&](const auto &x) { return x.first == n; });
        return at->second != first->second;
      });
      if (varies && !paramOf(n).empty())
        out.dispatchOn.emplace_back(n, paramOf(n));
    }
  }

  out.configs = parseConfigs(w, doc);
  s.kernels.push_back(k);
  if (out.check.reference)
    s.kernels.push_back(*out.check.reference);
  s.tune = ojson::object();
  s.tune["kernel"] = k.name;
  s.tune["bucket"] = out.sizeNames;
  if (doc.contains("space"))
    s.tune["space"] = doc.at("space");
  if (doc.contains("model"))
    s.tune["model"] = doc.at("model");
  return out;
}

} // namespace tle::bench
