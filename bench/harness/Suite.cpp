// Loading, validation and evaluation of benchmark suite files (see Suite.h).
#include "Suite.h"

#include "Families.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace tle::bench {

namespace {

std::string dirName(const std::string &p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return p.substr(0, slash);
}

void checkKeys(const ojson &obj, const std::set<std::string> &allowed, const std::string &where) {
  if (!obj.is_object())
    throw BenchError(where + " must be a JSON object");
  for (const auto &[k, v] : obj.items()) {
    (void)v;
    if (!allowed.count(k)) {
      std::string list;
      for (const std::string &a : allowed)
        list += (list.empty() ? "" : ", ") + a;
      throw BenchError(fmt::format("{}: unknown key '{}' (known: {})", where, k, list));
    }
  }
}

std::string getString(const ojson &obj, const char *key, const std::string &where, bool required,
                      const std::string &dflt = "") {
  if (!obj.contains(key)) {
    if (required)
      throw BenchError(fmt::format("{}: missing \"{}\"", where, key));
    return dflt;
  }
  const ojson &v = obj.at(key);
  if (!v.is_string())
    throw BenchError(fmt::format("{}: \"{}\" must be a string", where, key));
  return v.get<std::string>();
}

/// A JSON number or string as expression text.
std::string exprText(const ojson &v, const std::string &where) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned())
    return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) {
    std::string s = fmt::format("{}", v.get<double>());
    if (s.find_first_of(".eEn") == std::string::npos)
      s += ".0";
    return s;
  }
  throw BenchError(where + " must be a number or an expression string");
}

std::vector<std::string> exprList(const ojson &v, const std::string &where) {
  std::vector<std::string> out;
  if (!v.is_array())
    throw BenchError(where + " must be an array");
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(exprText(v[i], fmt::format("{}[{}]", where, i)));
  return out;
}

int getInt(const ojson &obj, const char *key, const std::string &where, int dflt) {
  if (!obj.contains(key))
    return dflt;
  if (!obj.at(key).is_number_integer())
    throw BenchError(fmt::format("{}: \"{}\" must be an integer", where, key));
  return obj.at(key).get<int>();
}

} // namespace

std::pair<std::string, std::vector<std::string>> parseCall(const std::string &s, const std::string &where) {
  size_t open = s.find('(');
  if (open == std::string::npos)
    return {s, {}};
  if (s.back() != ')')
    throw BenchError(where + ": expected NAME(ARGS), got '" + s + "'");
  std::vector<std::string> args;
  std::string cur;
  int depth = 0;
  for (size_t i = open + 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c == '(')
      ++depth;
    if (c == ')')
      --depth;
    if (c == ',' && depth == 0) {
      args.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty() || !args.empty())
    args.push_back(cur);
  return {s.substr(0, open), args};
}

namespace {

KernelSpec parseKernel(const std::string &name, const ojson &k, const std::string &root) {
  std::string where = "kernel '" + name + "'";
  checkKeys(k, {"source", "entry", "signature", "num_warps", "defines", "archs", "include_dirs"}, where);
  KernelSpec ks;
  ks.name = name;
  ks.source = getString(k, "source", where, true);
  ks.entry = getString(k, "entry", where, false);
  ks.signature = getString(k, "signature", where, false);
  ks.numWarps = getInt(k, "num_warps", where, 4);
  if (k.contains("defines")) {
    if (!k.at("defines").is_object())
      throw BenchError(where + ": \"defines\" must be an object NAME: VALUE");
    for (const auto &[dn, dv] : k.at("defines").items())
      ks.defines.emplace_back(dn, dv.is_string() ? dv.get<std::string>() : dv.dump());
  }
  if (k.contains("include_dirs")) {
    const ojson &dirs = k.at("include_dirs");
    if (!dirs.is_array())
      throw BenchError(where + ": \"include_dirs\" must be an array of directories");
    for (const ojson &d : dirs) {
      if (!d.is_string())
        throw BenchError(where + ": \"include_dirs\" must be an array of directories");
      ks.includeDirs.push_back(d.get<std::string>());
    }
  }
  completeFromHeader(ks, root + "/" + ks.source, k.contains("num_warps"));
  if (ks.numWarps < 1 || ks.numWarps > 32 || (ks.numWarps & (ks.numWarps - 1)))
    throw BenchError(where + ": num_warps must be a power of two in 1..32");
  return ks;
}

BufferSpec parseBuffer(const std::string &name, const ojson &b, const std::string &caseWhere) {
  std::string where = caseWhere + ", buffer '" + name + "'";
  checkKeys(b, {"dtype", "shape", "role", "init"}, where);
  BufferSpec bs;
  bs.name = name;
  bs.dtype = parseDType(getString(b, "dtype", where, true));
  if (!b.contains("shape"))
    throw BenchError(where + ": missing \"shape\"");
  bs.shape = exprList(b.at("shape"), where + ": \"shape\"");
  if (bs.shape.empty())
    throw BenchError(where + ": \"shape\" needs at least one dimension");
  bs.role = getString(b, "role", where, false, "input");
  if (bs.role != "input" && bs.role != "output" && bs.role != "scratch")
    throw BenchError(where + ": \"role\" must be input, output or scratch, not '" + bs.role + "'");
  std::string init = getString(b, "init", where, false, bs.role == "input" ? "normal" : "zeros");
  auto [kind, args] = parseCall(init, where + ": \"init\"");
  static const std::set<std::string> kinds = {"normal", "uniform", "randint", "zeros", "ones", "full", "derived"};
  if (!kinds.count(kind))
    throw BenchError(where + ": unknown init '" + kind +
                     "' (known: normal(mean, std), uniform(low, high), randint(low, high), zeros, ones, "
                     "full(value), derived)");
  bs.init = kind;
  bs.initArgs = args;
  return bs;
}

CaseSpec parseCase(const ojson &c, size_t index, const Suite &suite) {
  std::string where = fmt::format("{}: cases[{}]", suite.path, index);
  checkKeys(c, {"comment", "name", "family", "label", "vars", "buffers", "launches", "triton_launches", "bytes", "flops",
                "reps", "warmup"},
            where);
  CaseSpec cs;
  cs.name = getString(c, "name", where, true);
  where = fmt::format("{}: case '{}'", suite.path, cs.name);
  cs.family = getString(c, "family", where, true);
  cs.label = getString(c, "label", where, false, cs.name);
  if (c.contains("vars")) {
    if (!c.at("vars").is_object())
      throw BenchError(where + ": \"vars\" must be an object");
    for (const auto &[vn, vv] : c.at("vars").items())
      cs.vars.emplace_back(vn, exprText(vv, where + ": var '" + vn + "'"));
  }
  if (!c.contains("buffers") || !c.at("buffers").is_object())
    throw BenchError(where + ": \"buffers\" must be an object NAME: {dtype, shape, role, init}");
  for (const auto &[bn, bv] : c.at("buffers").items())
    cs.buffers.push_back(parseBuffer(bn, bv, where));
  if (!c.contains("launches") || !c.at("launches").is_array() || c.at("launches").empty())
    throw BenchError(where + ": \"launches\" must be a non-empty array");
  for (size_t i = 0; i < c.at("launches").size(); ++i) {
    const ojson &l = c.at("launches")[i];
    std::string lw = fmt::format("{}: launches[{}]", where, i);
    checkKeys(l, {"kernel", "grid", "args"}, lw);
    LaunchSpec ls;
    ls.kernel = getString(l, "kernel", lw, true);
    suite.kernel(ls.kernel); // must exist
    if (!l.contains("grid"))
      throw BenchError(lw + ": missing \"grid\"");
    ls.grid = exprList(l.at("grid"), lw + ": \"grid\"");
    if (ls.grid.empty() || ls.grid.size() > 3)
      throw BenchError(lw + ": \"grid\" needs 1 to 3 expressions");
    if (!l.contains("args"))
      throw BenchError(lw + ": missing \"args\"");
    ls.args = exprList(l.at("args"), lw + ": \"args\"");
    cs.launches.push_back(std::move(ls));
  }
  // "triton_launches" (read by bench/triton_suite.py): what Triton runs instead of "launches"
  // when the tle kernel uses TLE constructs Triton does not have (a cluster); same form.
  if (c.contains("triton_launches")) {
    if (!c.at("triton_launches").is_array() || c.at("triton_launches").empty())
      throw BenchError(where + ": \"triton_launches\" must be a non-empty array");
    for (size_t i = 0; i < c.at("triton_launches").size(); ++i) {
      const ojson &l = c.at("triton_launches")[i];
      std::string lw = fmt::format("{}: triton_launches[{}]", where, i);
      checkKeys(l, {"kernel", "grid", "args"}, lw);
      suite.kernel(getString(l, "kernel", lw, true)); // must exist
    }
  }
  if (c.contains("bytes"))
    cs.bytes = exprText(c.at("bytes"), where + ": \"bytes\"");
  if (c.contains("flops"))
    cs.flops = exprText(c.at("flops"), where + ": \"flops\"");
  cs.reps = getInt(c, "reps", where, suite.reps);
  cs.warmup = getInt(c, "warmup", where, suite.warmup);

  const Family *fam = findFamily(cs.family);
  if (!fam) {
    std::string list;
    for (const Family &f : families())
      list += (list.empty() ? "" : ", ") + f.name;
    throw BenchError(where + ": unknown family '" + cs.family + "' (known: " + list + ")");
  }
  for (const auto *names : {&fam->inputs, &fam->outputs})
    for (const std::string &n : *names)
      if (bufferIndex(cs, n) < 0)
        throw BenchError(fmt::format("{}: family {} needs a buffer named '{}'", where, fam->name, n));
  for (const std::string &n : fam->outputs)
    if (cs.buffers[size_t(bufferIndex(cs, n))].role != "output")
      throw BenchError(fmt::format("{}: buffer '{}' is checked by family {}, so its role must be output",
                                   where, n, fam->name));
  for (const BufferSpec &b : cs.buffers)
    if (b.init == "derived" && !fam->prepare)
      throw BenchError(fmt::format("{}: buffer '{}' is derived but family {} derives nothing", where, b.name,
                                   fam->name));
  return cs;
}

} // namespace

const KernelSpec &Suite::kernel(const std::string &n) const {
  for (const KernelSpec &k : kernels)
    if (k.name == n)
      return k;
  throw BenchError(fmt::format("{}: no kernel '{}' in \"kernels\"", path, n));
}

std::pair<std::string, std::string> splitAssign(const std::string &s, const char *what) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    throw BenchError(fmt::format("{} expects NAME=VALUE, got '{}'", what, s));
  return {s.substr(0, eq), s.substr(eq + 1)};
}

void completeFromHeader(KernelSpec &k, const std::string &sourcePath, bool suiteGaveWarps) {
  std::ifstream f(sourcePath);
  if (!f)
    throw BenchError(fmt::format("kernel '{}': cannot read its source {}", k.name, sourcePath));
  std::string line, compile;
  while (std::getline(f, line))
    if (line.rfind("# Compile: tlec ", 0) == 0) {
      compile = line.substr(11);
      break;
    }
  // Shell-like words: double quotes group.
  std::vector<std::string> words;
  std::string cur;
  bool inQuote = false, any = false;
  for (char c : compile) {
    if (c == '"') {
      inQuote = !inQuote;
      any = true;
    } else if (c == ' ' && !inQuote) {
      if (any || !cur.empty())
        words.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty())
    words.push_back(cur);
  std::string sig, entry;
  int warps = 0;
  std::vector<std::pair<std::string, std::string>> defines;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "-s")
      sig = words[i + 1];
    else if (words[i] == "-n")
      entry = words[i + 1];
    else if (words[i] == "-w")
      warps = std::atoi(words[i + 1].c_str());
    else if (words[i] == "-D")
      defines.push_back(splitAssign(words[i + 1], "-D"));
  }
  if (k.signature.empty()) {
    k.signature = sig;
    if (k.entry.empty())
      k.entry = entry;
    if (k.defines.empty())
      k.defines = defines;
    if (!suiteGaveWarps && warps > 0)
      k.numWarps = warps;
  }
  if (k.signature.empty())
    throw BenchError(fmt::format("kernel '{}': no \"signature\" in the suite and no `# Compile: tlec ... -s "
                                 "\"SIG\"` line in {}",
                                 k.name, sourcePath));
}

Suite loadSuite(const std::string &path) {
  std::ifstream f(path);
  if (!f)
    throw BenchError("cannot read suite file " + path);
  ojson j;
  try {
    j = ojson::parse(f);
  } catch (const std::exception &e) {
    throw BenchError(path + ": invalid JSON: " + e.what());
  }
  Suite s;
  s.path = path;
  s.root = dirName(dirName(path)); // bench/suites/x.json -> bench
  s.root = s.root == "." ? ".." : s.root + "/..";
  checkKeys(j, {"comment", "suite", "description", "reps", "warmup", "kernels", "cases", "tune"}, path);
  if (j.contains("tune"))
    s.tune = j.at("tune");
  s.name = getString(j, "suite", path, true);
  s.description = getString(j, "description", path, false);
  s.reps = getInt(j, "reps", path, 100);
  s.warmup = getInt(j, "warmup", path, 10);
  if (!j.contains("kernels") || !j.at("kernels").is_object())
    throw BenchError(path + ": \"kernels\" must be an object NAME: {source, entry, signature, num_warps}");
  for (const auto &[kn, kv] : j.at("kernels").items())
    s.kernels.push_back(parseKernel(kn, kv, s.root));
  if (!j.contains("cases") || !j.at("cases").is_array())
    throw BenchError(path + ": \"cases\" must be an array");
  std::set<std::string> names;
  for (size_t i = 0; i < j.at("cases").size(); ++i) {
    s.cases.push_back(parseCase(j.at("cases")[i], i, s));
    if (!names.insert(s.cases.back().name).second)
      throw BenchError(fmt::format("{}: two cases are named '{}'", path, s.cases.back().name));
  }
  return s;
}

int bufferIndex(const CaseSpec &c, const std::string &name) {
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].name == name)
      return int(i);
  return -1;
}

ResolvedCase resolveCase(const CaseSpec &c, const Env &builtins,
                         const std::vector<std::pair<std::string, std::string>> &overrides) {
  ResolvedCase rc;
  rc.spec = &c;
  rc.env = builtins;
  std::string where = "case '" + c.name + "'";
  auto overrideOf = [&](const std::string &n) -> const std::string * {
    for (const auto &[on, ov] : overrides)
      if (on == n)
        return &ov;
    return nullptr;
  };
  // Overrides of built-ins and new names first (the vars may use them), then the vars in order.
  for (const auto &[n, text] : overrides)
    if (std::none_of(c.vars.begin(), c.vars.end(), [&](const auto &v) { return v.first == n; }))
      rc.env[n] = evalExpr(text, rc.env);
  for (const auto &[n, text] : c.vars) {
    const std::string *o = overrideOf(n);
    rc.env[n] = evalExpr(o ? *o : text, rc.env);
  }
  double ioBytes = 0;
  for (const BufferSpec &b : c.buffers) {
    std::vector<int64_t> shape;
    for (const std::string &d : b.shape) {
      int64_t v = evalExpr(d, rc.env).asInt(fmt::format("{}: a dimension of buffer '{}'", where, b.name));
      if (v < 1)
        throw BenchError(fmt::format("{}: buffer '{}' has a dimension {} < 1 ({})", where, b.name, v, d));
      shape.push_back(v);
    }
    InitSpec init;
    auto arg = [&](size_t i, double dflt) {
      return i < b.initArgs.size() ? evalExpr(b.initArgs[i], rc.env).asDouble() : dflt;
    };
    if (b.init == "normal")
      init = {InitSpec::Normal, arg(0, 0.0), arg(1, 1.0)};
    else if (b.init == "uniform")
      init = {InitSpec::Uniform, arg(0, 0.0), arg(1, 1.0)};
    else if (b.init == "randint") {
      if (b.initArgs.size() != 2)
        throw BenchError(fmt::format("{}: buffer '{}': randint needs (low, high)", where, b.name));
      init = {InitSpec::RandInt, arg(0, 0), arg(1, 1)};
    } else if (b.init == "ones")
      init = {InitSpec::Ones, 0, 0};
    else if (b.init == "full")
      init = {InitSpec::Full, arg(0, 0.0), 0};
    else
      init = {InitSpec::Zeros, 0, 0};
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    size_t bytes = n * dtypeBytes(b.dtype);
    rc.totalBufferBytes += bytes;
    if (b.role != "scratch")
      ioBytes += double(bytes);
    rc.shapes.push_back(std::move(shape));
    rc.inits.push_back(init);
  }
  rc.bytes = c.bytes.empty() ? ioBytes : evalExpr(c.bytes, rc.env).asDouble();
  rc.flops = c.flops.empty() ? 0 : evalExpr(c.flops, rc.env).asDouble();
  return rc;
}

std::vector<std::string> includeArgs(const KernelSpec &ks, const std::string &root) {
  std::vector<std::string> args;
  for (const std::string &d : ks.includeDirs) {
    args.push_back("-I");
    args.push_back(!d.empty() && d[0] == '/' ? d : root + "/" + d);
  }
  return args;
}

} // namespace tle::bench
