// tle-bench --tune on launch specs (see TuneLaunch.h): inputs, the reference check, dry-run plans and shape dispatch tables.
#include "TuneLaunch.h"

#include "Options.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

namespace tle::bench {

namespace {

/// torch.testing.assert_close's default tolerances for an output dtype: (rtol, atol).
std::pair<double, double> defaultTolerance(DType t) {
  switch (t) {
  case DType::F16: return {1e-3, 1e-5};
  case DType::BF16: return {1.6e-2, 1e-5};
  case DType::F32: return {1.3e-6, 1e-5};
  case DType::F64: return {1e-7, 1e-7};
  default: return {0, 0};
  }
}

/// The case variables as an environment (for file templates).
Env varsOf(const ResolvedCase &rc) { return rc.env; }

/// `text` with each identifier found in `renames` replaced (a spec's size passed under another
/// parameter name, in a grid expression tlec reads with the parameters' names).
std::string renameIdentifiers(const std::string &text, const std::vector<std::pair<std::string, std::string>> &renames) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      size_t e = i;
      while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_'))
        ++e;
      std::string id = text.substr(i, e - i);
      for (const auto &[from, to] : renames)
        if (id == from) {
          id = to;
          break;
        }
      out += id;
      i = e;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string joinList(const std::vector<std::string> &xs, const char *sep = ", ") {
  std::string s;
  for (const std::string &x : xs)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

/// The variables of the launch spec's case `name` (its sizes and scalars).
Env caseEnv(const LaunchSpecFile &ls, const std::string &name) {
  for (const CaseSpec &c : ls.suite.cases)
    if (c.name == name) {
      Env env;
      for (const auto &[n, text] : c.vars)
        env[n] = evalExpr(text, env);
      return env;
    }
  throw BenchError("the results' case " + name + " is not a size of " + ls.path);
}

/// `P % E == 0` with P a runtime parameter: (P, E); else nullopt.
std::optional<std::pair<std::string, std::string>> divisibilityRule(const HeuristicRule &r, const LaunchSpecFile &ls) {
  std::string e = r.expr;
  size_t mod = e.find('%'), eq = e.rfind("==");
  if (mod == std::string::npos || eq == std::string::npos || eq < mod)
    return std::nullopt;
  auto trim = [](std::string x) {
    size_t b = x.find_first_not_of(" ()"), t = x.find_last_not_of(" ");
    return b == std::string::npos ? std::string() : x.substr(b, t - b + 1);
  };
  std::string p = trim(e.substr(0, mod)), rhs = trim(e.substr(eq + 2));
  if (rhs != "0" && rhs != "0)")
    return std::nullopt;
  if (std::find(ls.runtimeParams.begin(), ls.runtimeParams.end(), p) == ls.runtimeParams.end())
    return std::nullopt;
  std::string d = e.substr(mod + 1, eq - mod - 1);
  // `(K % X) == 0`: the divisor's text keeps the closing parenthesis of the left side.
  if (std::count(d.begin(), d.end(), ')') > std::count(d.begin(), d.end(), '('))
    d.erase(d.rfind(')'), 1);
  return std::make_pair(p, d);
}

/// The variants with the @triton.heuristics that read runtime parameters made safe: each module is
/// compiled with the values at the sizes it won (they must agree within a bucket); a divisibility
/// heuristic (`args['K'] % X == 0`) that is true there becomes the predicate `K % X == 0`, followed
/// by the same configuration with it false for the other shapes of the bucket; any other such
/// heuristic cannot be guarded by tle-link's predicates and is an error.
std::vector<DispatchVariant> guardHeuristics(const LaunchSpecFile &ls, const std::vector<TunedSize> &tuned,
                                             std::vector<DispatchVariant> variants) {
  std::vector<DispatchVariant> out;
  for (DispatchVariant &v : variants) {
    std::vector<std::pair<std::string, std::string>> hs;
    Env values;
    for (size_t i = 0; i < v.tuned.size(); ++i) {
      const TunedSize &t = tuned[v.tuned[i]];
      Env vi;
      auto h = runtimeHeuristicDefines(ls, caseEnv(ls, t.caseName), v.config, t.caseName, &vi);
      if (i == 0) {
        hs = h;
        values = vi;
      } else if (h != hs) {
        throw BenchError(fmt::format("@triton.heuristics give {} different values at {} and {} ({}), which one "
                                     "bucket of the dispatch table shares: tune sizes that separate them",
                                     v.config.id(), tuned[v.tuned[0]].caseName, t.caseName, h.empty() ? "" : h[0].first));
      }
    }
    if (hs.empty()) {
      out.push_back(v);
      continue;
    }
    DispatchVariant general = v;
    std::vector<std::string> guards, off;
    for (auto &[name, value] : hs) {
      const HeuristicRule &r = *std::find_if(ls.heuristicRules.begin(), ls.heuristicRules.end(),
                                             [&](const HeuristicRule &x) { return x.name == name; });
      auto div = divisibilityRule(r, ls);
      if (!div)
        throw BenchError(fmt::format("@triton.heuristics '{}' ({}) reads a runtime parameter, and a dispatcher can "
                                     "only guard the form `args['P'] % X == 0`: give '{}' in \"defines\" or as a size",
                                     r.name, r.expr, r.name));
      general.heuristics.push_back(name + "=0");
      if (value == "0")
        continue;
      int64_t d = evalExpr(div->second, values).asInt("@triton.heuristics '" + name + "' divisor");
      v.when.push_back(fmt::format("{} % {} == 0", div->first, d));
      guards.push_back(fmt::format("{} % {} != 0", div->first, d));
      off.push_back(name + "=0");
    }
    for (const auto &[name, value] : hs)
      v.heuristics.push_back(name + "=" + value);
    out.push_back(v);
    if (!guards.empty()) {
      general.why = "the same with " + joinList(off) + " where " + joinList(guards, " or ") + " (" + v.why + ")";
      out.push_back(general);
    }
  }
  return out;
}

} // namespace

std::vector<HostTensor> caseInputs(const ResolvedCase &rc, uint64_t seed) {
  const CaseSpec &c = *rc.spec;
  std::vector<HostTensor> ts;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    ts.emplace_back(c.buffers[i].dtype, rc.shapes[i]);
    const BufferSpec &b = c.buffers[i];
    if (b.role == "output")
      std::memset(ts.back().data(), 0xff, ts.back().bytes());
    else if (b.role == "scratch")
      std::memset(ts.back().data(), 0, ts.back().bytes());
    else if (!b.file.empty())
      readNpyInto(expandTemplate(b.file, varsOf(rc), "buffer " + b.name), ts.back());
    else if (b.init != "derived")
      fillTensor(ts.back(), rc.inits[i], seed * 1000003ull + i * 7919ull + std::hash<std::string>()(c.name));
  }
  CaseData d{rc, ts};
  if (const Family *fam = findFamily(c.family); fam && fam->prepare)
    fam->prepare(d);
  return ts;
}

Expected expectedOutputs(const LaunchSpecFile &ls, const ResolvedCase &rc, Gpu &g, std::vector<rt::DeviceBuffer> &bufs,
                         const std::string &tlec, const std::string &arch, const std::string &work) {
  const CaseSpec &c = *rc.spec;
  Expected e;
  e.outputs.resize(c.buffers.size());
  if (!ls.check.expect.empty()) {
    e.how = "files";
    for (const auto &[name, tmpl] : ls.check.expect) {
      int i = bufferIndex(c, name);
      HostTensor t(c.buffers[size_t(i)].dtype, rc.shapes[size_t(i)]);
      readNpyInto(expandTemplate(tmpl, varsOf(rc), "check.expect." + name), t);
      e.outputs[size_t(i)] = std::move(t);
    }
    return e;
  }
  if (!ls.check.reference) {
    e.how = "finite values only";
    return e;
  }
  const KernelSpec &rk = *ls.check.reference;
  e.how = "reference kernel " + rk.entry;
  std::vector<std::pair<std::string, std::string>> defs;
  for (const std::string &n : ls.check.referenceDefines)
    defs.emplace_back(n, rc.env.at(n).str());
  Candidate cfg;
  cfg.numWarps = rk.numWarps;
  const std::string out = fmt::format("{}/reference.{}.{}.cubin", work, std::hash<std::string>()(c.name), arch);
  std::vector<std::string> av = tlecCommand(tlec, rk, ls.suite.root, defs, cfg, arch, out);
  if (int rc2 = spawnLogged(av, out + ".log"); rc2 != 0)
    throw BenchError(fmt::format("the reference kernel did not compile (tlec status {}): {}\n{}", rc2, shellLine(av),
                                 readText(out + ".log")));
  rt::Module module = rt::Module::fromFile(g.dev, out);
  KernelHandle h;
  h.spec = &rk;
  h.path = out;
  rt::ModuleInfo mi = readMetadataFile(out);
  h.info = mi.kernels.at(0);
  if (const rt::KernelInfo *ki = mi.find(rk.entry))
    h.info = *ki;
  h.kernel.emplace(module.kernel(h.info.name));
  ResolvedLaunch rl = resolveLaunch(*ls.check.referenceLaunch, h, rc);
  poisonOutputs(c, bufs);
  launchOnce(g, rl, bufs);
  g.stream.synchronize();
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == "output") {
      HostTensor t(c.buffers[i].dtype, rc.shapes[i]);
      bufs[i].copyToHost(t.data(), t.bytes());
      // Outputs start as NaN: a reference that leaves some unwritten checks nothing.
      size_t unwritten = 0;
      for (size_t k = 0; k < t.numel(); ++k)
        unwritten += !std::isfinite(t.get(k));
      if (unwritten)
        throw BenchError(fmt::format("the reference kernel {} left {} of {} elements of '{}' non-finite (NaN "
                                     "before the launch): check its grid and arguments",
                                     rk.entry, unwritten, t.numel(), c.buffers[i].name));
      e.outputs[i] = std::move(t);
    }
  unlink(out.c_str());
  unlink((out + ".log").c_str());
  return e;
}

CheckReport checkLaunchOutputs(const LaunchSpecFile &ls, CaseData &d, const Expected &e) {
  CheckReport r;
  const CaseSpec &c = *d.rc.spec;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (c.buffers[i].role != "output")
      continue;
    const HostTensor &got = d.tensors[i];
    auto [rtol, atol] = defaultTolerance(c.buffers[i].dtype);
    rtol = ls.check.rtol.value_or(rtol);
    atol = ls.check.atol.value_or(atol);
    std::vector<double> want(got.numel());
    const HostTensor &src = e.outputs[i] ? *e.outputs[i] : got; // finite values only: itself
    for (size_t k = 0; k < want.size(); ++k)
      want[k] = src.get(k);
    OutputCheck oc = compareOutput(c.buffers[i].name, got, want, atol, rtol);
    r.pass &= oc.bad == 0;
    r.outputs.push_back(oc);
  }
  return r;
}

void printCasePlan(const LaunchSpecFile &ls, const ResolvedCase &rc) {
  const CaseSpec &c = *rc.spec;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    const BufferSpec &b = c.buffers[i];
    std::string shape;
    for (int64_t d : rc.shapes[i])
      shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    std::string from = b.role != "input" ? b.role
                       : !b.file.empty() ? "from " + expandTemplate(b.file, rc.env, "buffer " + b.name)
                                         : b.init;
    std::printf("   buffer %-10s %-5s [%s] %s\n", b.name.c_str(), dtypeName(b.dtype), shape.c_str(), from.c_str());
  }
  const LaunchSpec &l = c.launches.at(0);
  std::printf("   launch %s(%s) grid (%s)\n", ls.suite.kernels[0].entry.c_str(), joinList(l.args).c_str(),
              joinList(l.grid).c_str());
  if (!c.defines.empty()) {
    std::vector<std::string> ds;
    for (const auto &[n, v] : c.defines)
      ds.push_back(n + "=" + v);
    std::printf("   constexprs of this size: %s\n", joinList(ds).c_str());
  }
  std::vector<std::string> byTlec, bySize;
  for (const HeuristicRule &r : ls.heuristicRules)
    (r.runtime ? bySize : byTlec).push_back(r.name);
  if (!byTlec.empty())
    std::printf("   @triton.heuristics computes %s (tlec, from the constexprs)\n", joinList(byTlec).c_str());
  if (!bySize.empty())
    std::printf("   @triton.heuristics computes %s from runtime parameters (tle-bench, per size and config: -D)\n",
                joinList(bySize).c_str());
  if (!ls.check.expect.empty())
    for (const auto &[n, t] : ls.check.expect)
      std::printf("   check %s against %s\n", n.c_str(), expandTemplate(t, rc.env, "check.expect." + n).c_str());
  else if (ls.check.reference)
    std::printf("   check the outputs against the reference kernel %s (%s)\n", ls.check.reference->entry.c_str(),
                ls.check.reference->source.c_str());
  else
    std::printf("   check: none in the spec (outputs must only be finite)\n");
}

ojson writeShapeDispatch(const LaunchSpecFile &ls, const std::vector<TunedSize> &tuned, const std::string &dir,
                         const std::string &tlec, const std::string &tleLink, const std::string &arch,
                         const ojson &device, bool ptx) {
  std::vector<TunedSize> keyed = tuned; // winners with other heuristic values are other variants
  for (TunedSize &t : keyed)
    for (const auto &[n, v] : runtimeHeuristicDefines(ls, caseEnv(ls, t.caseName), t.config, t.caseName))
      t.key = (t.key.empty() ? t.config.id() : t.key) + " " + n + "=" + v;
  std::vector<DispatchVariant> variants = guardHeuristics(ls, keyed, shapeDispatch(keyed, ls.dispatchOn));
  mkdir(dir.c_str(), 0755);
  const KernelSpec &k = ls.suite.kernels.at(0);
  const CaseSpec *any = nullptr; // the constexpr sizes are the same in every case (shapeDispatch checks)
  for (const CaseSpec &c : ls.suite.cases)
    if (c.name == tuned[0].caseName)
      any = &c;
  if (!any)
    throw BenchError("the results' case " + tuned[0].caseName + " is not a size of " + ls.path);
  std::vector<std::pair<std::string, std::string>> renames;
  for (const auto &[size, param] : ls.dispatchOn)
    if (size != param)
      renames.emplace_back(size, param);
  std::vector<std::string> grid;
  for (const std::string &g : any->launches.at(0).grid)
    grid.push_back(renameIdentifiers(g, renames));
  const std::string name = k.entry + "_tuned";
  ojson table = {{"format", "tle-dispatch"}, {"version", 2}, {"kernel", k.entry}, {"source", k.source},
                 {"spec", ls.path}, {"device", device}, {"arch", arch}, {"launcher", name}};
  ojson dims = ojson::array();
  for (const auto &[size, param] : ls.dispatchOn)
    dims.push_back({{"size", size}, {"param", param}});
  table["dims"] = dims;
  // One module per distinct configuration (and values of the heuristics tle-bench computes).
  std::map<std::string, size_t> moduleOf;
  for (DispatchVariant &v : variants)
    v.module = moduleOf.emplace(v.config.id() + "|" + joinList(v.heuristics), moduleOf.size()).first->second;
  const size_t modules = moduleOf.size();
  std::vector<std::string> files(modules);
  table["modules"] = ojson::array();
  for (const DispatchVariant &v : variants) {
    if (!files[v.module].empty())
      continue;
    files[v.module] = fmt::format("{}.v{}.{}.{}", k.entry, v.module, arch, ptx ? "ptx" : "cubin");
    std::string out = dir + "/" + files[v.module];
    std::vector<std::pair<std::string, std::string>> defines = any->defines;
    for (const std::string &h : v.heuristics)
      defines.emplace_back(h.substr(0, h.find('=')), h.substr(h.find('=') + 1));
    std::vector<std::string> av = tlecCommand(tlec, k, ls.suite.root, defines, v.config, arch, out, grid);
    if (int rc = spawnLogged(av, out + ".log"); rc != 0)
      throw BenchError(fmt::format("tlec failed (status {}) for the dispatch module {}:\n{}", rc, out,
                                   readText(out + ".log")));
    unlink((out + ".log").c_str());
    // The command as a user would type it in the spec's directory and the table's.
    std::vector<std::string> shown = tlecCommand("tlec", k, ".", defines, v.config, arch, files[v.module], grid);
    shown[1] = k.source;
    table["modules"].push_back({{"module", files[v.module]}, {"config", v.config.toJson()}, {"tlec", shellLine(shown)}});
  }
  table["variants"] = ojson::array();
  std::vector<std::string> link = {"tle-link", "-n", name};
  for (const DispatchVariant &v : variants) {
    table["variants"].push_back({{"module", files[v.module]}, {"when", v.when}, {"covers", v.covers},
                                 {"config", v.config.toJson()}, {"id", v.config.id()}, {"why", v.why}});
    if (!v.heuristics.empty())
      table["variants"].back()["heuristics"] = v.heuristics;
    link.push_back(files[v.module]);
  }
  for (size_t i = 0; i < variants.size(); ++i)
    if (!variants[i].when.empty())
      link.insert(link.end(), {"--when", fmt::format("{}: {}", i, joinList(variants[i].when, "; "))});
  link.insert(link.end(), {"-o", name + ".h", "--source", name + ".cpp"});
  table["tle_link"] = shellLine(link);
  const std::string tablePath = dir + "/" + k.entry + ".dispatch.json";
  {
    std::ofstream f(tablePath);
    f << table.dump(2) << "\n";
    if (!f)
      throw BenchError("cannot write " + tablePath);
  }
  std::vector<std::string> av = {tleLink, "-n", name, "--table", tablePath, "-o", dir + "/" + name + ".h",
                                 "--source", dir + "/" + name + ".cpp"};
  const std::string log = dir + "/" + name + ".tle-link.log";
  if (int rc = spawnLogged(av, log); rc != 0)
    throw BenchError(fmt::format("tle-link failed (status {}) on {}:\n{}", rc, tablePath, readText(log)));
  std::string warnings = readText(log);
  unlink(log.c_str());
  std::printf("\n== dispatch table %s (%zu variants, %zu modules), by %s:\n", tablePath.c_str(), variants.size(),
              modules, ls.dispatchOn.empty() ? "no size (one configuration)" : "tle-link range predicates");
  for (size_t i = 0; i < variants.size(); ++i) {
    const DispatchVariant &v = variants[i];
    std::printf("   %zu  %-24s %-36s %s\n", i, v.when.empty() ? "(otherwise)" : joinList(v.when, "; ").c_str(),
                v.config.id().c_str(), v.why.c_str());
  }
  if (!warnings.empty())
    std::printf("%s", warnings.c_str());
  std::printf("   launcher %s/%s.h and %s.cpp: %s(...) launches the variant of the shape; %s_select(..., &why) "
              "says which and why\n",
              dir.c_str(), name.c_str(), name.c_str(), name.c_str(), name.c_str());
  return table;
}

/// `--from-results RUN.json --dispatch DIR`: the dispatch table of an earlier run of a launch spec
/// (no GPU: its winners are compiled and linked).
int dispatchFromResults(const TuneOptions &o, const LaunchSpecFile *ls) {
  try {
    if (!ls)
      throw BenchError("--from-results needs a launch spec (" + o.spec + " is a suite-form tune spec)");
    if (o.dispatchDir.empty())
      throw BenchError("--from-results needs --dispatch DIR (where the table and its modules go)");
    std::ifstream f(o.fromResults);
    if (!f)
      throw BenchError("cannot read the results " + o.fromResults);
    ojson doc;
    try {
      doc = ojson::parse(f);
    } catch (const std::exception &e) {
      throw BenchError(o.fromResults + ": invalid JSON: " + e.what());
    }
    ojson device = doc.value("device", ojson::object());
    std::string arch = device.value("arch", o.arch);
    writeShapeDispatch(*ls, tunedSizesOf(doc, o.fromResults), o.dispatchDir, findTool(o.tlec, "TLE_TLEC", "tlec"),
                       findTool(o.tleLink, "TLE_LINK", "tle-link"), arch, device, o.ptxModules);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench --tune: %s\n", e.what());
    return 1;
  }
}

/// The winners of a launch spec's run, one line per size.
void printWinners(const ojson &doc) {
  std::printf("\n== winners\n   %-28s %-40s %10s  %s\n", "size", "config", "median_ms", "check");
  for (const ojson &c : doc["cases"]) {
    if (!c.contains("winner")) {
      std::printf("   %-28s %s\n", c.value("case", "").c_str(), c.value("error", "no winner").c_str());
      continue;
    }
    std::printf("   %-28s %-40s %10.4f  %s\n", c.value("case", "").c_str(), c["winner"].value("id", "").c_str(),
                c["winner"].value("median_ms", 0.0), c.value("check", c.value("cache", "")).c_str());
  }
}

} // namespace tle::bench
