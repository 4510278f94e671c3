// tle-bench --tune: parallel tlec compiles of a candidate space, cost-model pruning, GPU timing of the top K, cache and dispatch table, for suite-form tune specs and launch specs of any kernel (see Tune.h, docs/bench.md).
#include "Tune.h"

#include "Options.h"
#include "TuneCommon.h"
#include "TuneLaunch.h"

#include "harness/CostModel.h"
#include "harness/Cubin.h"
#include "harness/Families.h"
#include "harness/Launch.h"
#include "harness/Report.h"
#include "harness/Suite.h"
#include "harness/TuneCache.h"
#include "harness/TuneSelect.h"
#include "harness/TuneSpace.h"

#include "tle/Runtime/Runtime.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace tle::bench {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// The constexpr parameters that the signature (bare literals in their positions) or the
/// defines already set.
std::vector<std::string> fixedConstexprs(const std::vector<KernelParam> &params, const KernelSpec &k) {
  size_t entries = 0, depth = 0;
  bool any = false;
  for (char c : k.signature) {
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if (c == ',' && depth == 0) {
      ++entries;
      any = false;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c)))
      any = true;
  }
  if (any)
    ++entries;
  std::vector<std::string> fixed;
  for (size_t i = 0; i < params.size() && i < entries; ++i)
    if (params[i].constexpr_)
      fixed.push_back(params[i].name);
  for (const auto &[n, v] : k.defines)
    fixed.push_back(n);
  return fixed;
}

// ------------------------------------------------------------------------------------------------
// One candidate through the pipeline
// ------------------------------------------------------------------------------------------------

struct Entry {
  Candidate cand;
  std::string path, log;
  double compileS = 0;
  int compileStatus = -1;
  std::string error;             ///< compile error, metadata error, launch error
  KernelHandle handle;           ///< metadata (and, timed, the loaded kernel)
  ResourceUsage res;
  Estimate est;
  int modelRank = -1;            ///< 0-based position in the model's order (valid only)
  bool selected = false;         ///< in the timed set (selectForTiming)
  bool timed = false;
  Stats stats;
  std::optional<rt::Module> module;
  std::optional<ResolvedLaunch> launch;
  std::optional<ResolvedCase> rc;
  int checked = 0;               ///< 0 unchecked, 1 correct, -1 wrong
  int duplicateOf = -1;          ///< index of an earlier candidate with the same machine code and launch
  std::string codeHash;
  std::string checkNote;
};

ojson entryJson(const Entry &e) {
  ojson j = {{"id", e.cand.id()}, {"config", e.cand.toJson()}, {"compile_s", e.compileS}};
  if (e.compileStatus != 0) {
    j["status"] = "compile-error";
    j["error"] = e.error;
    return j;
  }
  j["registers"] = e.res.registers;
  j["shared_bytes"] = e.res.sharedBytes;
  j["local_bytes"] = e.res.localBytes;
  if (!e.error.empty() && !e.timed) {
    j["status"] = "error";
    j["error"] = e.error;
    return j;
  }
  if (e.duplicateOf >= 0) {
    j["status"] = "duplicate";
    j["duplicate_of"] = e.duplicateOf;
    return j;
  }
  if (!e.est.valid) {
    j["status"] = "rejected";
    j["reason"] = e.est.reason;
    return j;
  }
  j["status"] = e.timed ? "timed" : "pruned";
  j["model"] = {{"rank", e.modelRank},         {"est_ms", e.est.seconds * 1e3},  {"ctas_per_sm", e.est.ctasPerSM},
                {"limited_by", e.est.limitedBy}, {"occupancy", e.est.occupancy},  {"waves", e.est.waves},
                {"wave_efficiency", e.est.waveEfficiency}, {"compute_ms", e.est.computeS * 1e3},
                {"memory_ms", e.est.memoryS * 1e3}, {"startup_ms", e.est.startupS * 1e3},
                {"imbalance_ms", e.est.imbalanceS * 1e3}, {"max_items", e.est.maxItemsPerProgram},
                {"class", structuralClass(e.cand.numWarps, e.est)}, {"selected", e.selected}};
  if (e.timed) {
    j["time"] = statsJson(e.stats);
    if (e.checked)
      j["correct"] = e.checked > 0;
    if (!e.error.empty())
      j["error"] = e.error;
  }
  return j;
}

/// Times one candidate: a first launch, `warmup` rounds, then `reps` rounds of (L2-flush memset,
/// event, launch, event) on one stream; the median is the candidate's time.
Stats timeCandidate(Gpu &g, const ResolvedLaunch &rl, std::vector<rt::DeviceBuffer> &bufs, int warmup, int reps) {
  launchOnce(g, rl, bufs);
  g.stream.synchronize();
  for (int w = 0; w < warmup; ++w) {
    g.flush.fill32Async(uint32_t(w), g.stream);
    launchOnce(g, rl, bufs);
  }
  std::vector<rt::Event> ev;
  ev.reserve(size_t(reps) * 2);
  for (int i = 0; i < reps * 2; ++i)
    ev.emplace_back(g.dev);
  for (int r = 0; r < reps; ++r) {
    g.flush.fill32Async(uint32_t(r + 1), g.stream);
    ev[size_t(r) * 2].record(g.stream);
    launchOnce(g, rl, bufs);
    ev[size_t(r) * 2 + 1].record(g.stream);
  }
  g.stream.synchronize();
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r)
    ms.push_back(rt::Event::elapsedMs(ev[size_t(r) * 2], ev[size_t(r) * 2 + 1]));
  return computeStats(ms);
}

/// Runs the candidate once on NaN-filled outputs and checks them against the family's reference,
/// or, for a launch spec, against its expectations.
CheckReport checkCandidate(Gpu &g, const ResolvedLaunch &rl, const ResolvedCase &rc, std::vector<rt::DeviceBuffer> &bufs,
                           std::vector<HostTensor> &host, const LaunchSpecFile *ls, const Expected *expected) {
  const CaseSpec &c = *rc.spec;
  poisonOutputs(c, bufs);
  launchOnce(g, rl, bufs);
  g.stream.synchronize();
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == "output")
      bufs[i].copyToHost(host[i].data(), host[i].bytes());
  CaseData d{rc, host};
  if (ls)
    return checkLaunchOutputs(*ls, d, *expected);
  return findFamily(c.family)->check(d);
}

/// The cases of the spec the filters select.
std::vector<const CaseSpec *> selectCases(const Suite &s, const TuneOptions &o) {
  std::vector<const CaseSpec *> out;
  for (const CaseSpec &c : s.cases) {
    bool ok = o.caseFilters.empty();
    for (const std::string &f : o.caseFilters)
      ok |= c.name.find(f) != std::string::npos;
    if (ok)
      out.push_back(&c);
  }
  return out;
}

std::string mdTable(const ojson &doc);

/// A dry run's list: every configuration with its compile outcome, resources and launch grid.
void printDryRunConfigs(const std::vector<Entry> &es) {
  std::printf("\n   %-40s %-8s %5s %8s %6s  %s\n", "config", "compile", "regs", "smem_KiB", "local",
              "grid [constexprs]");
  for (const Entry &e : es) {
    if (e.compileStatus != 0) {
      std::printf("   %-40s %-8s %s\n", e.cand.id().c_str(), "FAILED", e.error.c_str());
      continue;
    }
    std::string what = e.launch ? fmt::format("({}, {}, {})", e.launch->grid[0], e.launch->grid[1], e.launch->grid[2])
                                : std::string();
    if (!e.est.valid)
      what += (what.empty() ? "" : " ") + std::string("rejected: ") + e.est.reason;
    else if (e.duplicateOf >= 0)
      what += fmt::format(" (same machine code as config {})", e.duplicateOf);
    // The constexprs the module was specialised with (the config's, the size's, @triton.heuristics').
    std::string cx;
    for (const auto &[n, v] : e.handle.info.constexprs)
      cx += (cx.empty() ? "" : " ") + n + "=" + v;
    std::printf("   %-40s %-8s %5d %8lld %6lld  %s  [%s]\n", e.cand.id().c_str(), "ok", e.res.registers,
                (long long)(e.res.sharedBytes >> 10), (long long)e.res.localBytes, what.c_str(), cx.c_str());
  }
}

/// A short class of a rejection reason for the summary line.
std::string rejectKind(const std::string &reason) {
  if (reason.find("shared memory") != std::string::npos)
    return "shared memory";
  if (reason.find("registers") != std::string::npos)
    return "registers";
  if (reason.find("local memory") != std::string::npos)
    return "spills";
  if (reason.find("threads") != std::string::npos)
    return "block size";
  return "other";
}

} // namespace

// ------------------------------------------------------------------------------------------------

int runTune(int argc, char **argv) {
  ParsedCommandLine<TuneOptions> parsed = parseTuneCommandLine(commandLineArgs(argc, argv));
  if (parsed.exitStatus)
    return printParseExit(parsed.exitStatus, parsed.message);
  const TuneOptions &o = parsed.options;
  const auto tStart = Clock::now();
  Suite suite;
  std::optional<LaunchSpecFile> ls; // a launch spec (any kernel) rather than a suite-form tune spec
  try {
    std::ifstream f(o.spec);
    if (!f)
      throw BenchError("cannot read the spec " + o.spec);
    ojson head;
    try {
      head = ojson::parse(f);
    } catch (const std::exception &e) {
      throw BenchError(o.spec + ": invalid JSON: " + e.what());
    }
    if (isLaunchSpec(head)) {
      ls = loadLaunchSpec(o.spec);
      suite = ls->suite;
    } else {
      suite = loadSuite(o.spec);
    }
    if (!suite.tune.is_object())
      throw BenchError(o.spec + ": no \"tune\" object (a tune spec is a suite file with \"tune\"; see docs/bench.md)");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench --tune: %s\n", e.what());
    return 2;
  }
  const ojson &tune = suite.tune;
  if (!o.fromResults.empty())
    return dispatchFromResults(o, ls ? &*ls : nullptr);

  // --- The device (or its model without one).
  std::unique_ptr<Gpu> gpu;
  DeviceModel dm = DeviceModel::forArch(o.arch, o.sms);
  DeviceKey dkey{"none", o.arch, 0};
  ojson doc = {{"tool", "tle-bench --tune"}, {"spec", o.spec}};
  try {
    if (!o.compileOnly) {
      std::string reason;
      if (!rt::gpuAvailable(&reason)) {
        std::fprintf(stderr,
                     "tle-bench --tune: no usable CUDA GPU (%s): timing needs one. --dry-run compiles every "
                     "configuration and prints the plan without a GPU.\n",
                     reason.c_str());
        return 77;
      }
      rt::Device dev(o.device);
      gpu.reset(new Gpu{dev, rt::Stream(dev), rt::DeviceBuffer(dev, size_t(std::max<int64_t>(o.flushMiB, 1)) << 20)});
      dm = DeviceModel::forArch(dev.arch(), dev.smCount());
      dm.smemPerBlockOptin = int64_t(dev.maxSharedBytesPerBlockOptin());
      dkey = {dev.name(), dev.arch(), rt::driverVersion()};
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench --tune: %s\n", e.what());
    return 1;
  }
  doc["device"] = {{"name", dkey.name},        {"arch", dm.arch},
                   {"driver", dkey.driver},     {"sm_count", dm.smCount},
                   {"smem_per_block_optin", dm.smemPerBlockOptin}};
  doc["options"] = {{"top_k", o.topK},  {"exhaustive", o.exhaustive}, {"jobs", o.jobs},
                    {"reps", o.reps},   {"warmup", o.warmup},         {"flush_mib", o.flushMiB},
                    {"max_spill_bytes", o.model.maxLocalBytes}};
  doc["cases"] = ojson::array();

  const std::string cachePath = defaultCachePath(o.cachePath);
  TuneCache cache;
  try {
    if (o.useCache)
      cache = TuneCache::load(cachePath);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench --tune: %s\n", e.what());
    return 2;
  }
  const std::string tlec = findTool(o.tlec, "TLE_TLEC", "tlec");
  bool allOk = true;
  std::vector<CacheEntry> tunedNow;
  std::string kernelKeyStr;

  try {
    std::string kname = tune.value("kernel", suite.kernels.size() == 1 ? suite.kernels[0].name : "");
    const KernelSpec &kspec = suite.kernel(kname);
    const std::string srcPath = !kspec.source.empty() && kspec.source[0] == '/' ? kspec.source
                                                                                : suite.root + "/" + kspec.source;
    const std::string source = readText(srcPath);
    std::vector<KernelParam> params = kernelParams(source, kspec.entry);
    const bool hasDot = kernelBody(source, kspec.entry).find("dot(") != std::string::npos;
    std::optional<AutotuneDecorator> deco = parseAutotune(source, kspec.entry);
    if (o.space == "decorator" && !deco)
      throw BenchError(fmt::format("{}: --space decorator, but `{}` has no @triton.autotune decorator", srcPath,
                                   kspec.entry));
    // A launch spec's "configs" come first, then the decorator, then a generated space.
    const bool fromSpec = ls && !ls->configs.empty() && o.space == "auto";
    const bool fromDecorator = !fromSpec && deco && o.space != "generated";
    SpaceSpec space;
    if (!fromDecorator && !fromSpec) {
      std::vector<std::string> fixed = fixedConstexprs(params, kspec);
      if (ls) { // constexprs given per size, and those @triton.heuristics computes, are not tuned
        for (const auto &[n, v] : suite.cases.at(0).defines)
          fixed.push_back(n);
        fixed.insert(fixed.end(), ls->heuristics.begin(), ls->heuristics.end());
      }
      space = makeSpaceSpec(params, fixed, tune.value("space", ojson()), hasDot);
    }
    const std::string compilerVersion = [&] {
      // The tlec version enters the cache key: another compiler may prefer another config.
      char tmpl[] = "/tmp/tle-tune-version-XXXXXX";
      int fd = mkstemp(tmpl);
      if (fd >= 0)
        close(fd);
      spawnLogged({tlec, "--version"}, tmpl);
      std::string v = readText(tmpl);
      unlink(tmpl);
      while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back())))
        v.pop_back();
      return v;
    }();
    if (compilerVersion.find("tlec") == std::string::npos && compilerVersion.find('.') == std::string::npos)
      throw BenchError(fmt::format("cannot run tlec ('{}'): {} (pass --tlec PATH or set TLE_TLEC)", tlec,
                                   compilerVersion));
    kernelKeyStr = kernelKey(source, kspec.entry, kspec.signature, kspec.defines, compilerVersion);
    std::vector<std::string> bucketDims;
    for (const ojson &d : tune.value("bucket", ojson::array()))
      bucketDims.push_back(d.get<std::string>());
    const ojson model = tune.value("model", ojson::object());

    std::vector<const CaseSpec *> cases = selectCases(suite, o);
    if (cases.empty())
      throw BenchError("no case matches the --case filters");
    Env builtins;
    builtins["SMS"] = Value::ofInt(dm.smCount);

    for (const CaseSpec *cp : cases) {
      const CaseSpec &c = *cp;
      for (const LaunchSpec &l : c.launches)
        if (l.kernel != kspec.name)
          throw BenchError(fmt::format("case '{}' launches '{}': a tuned case may launch only the tuned kernel '{}'",
                                       c.name, l.kernel, kspec.name));
      ojson res = {{"case", c.name}, {"label", c.label}, {"kernel", kspec.name}, {"entry", kspec.entry},
                   {"source", kspec.source}};
      ResolvedCase base = resolveCase(c, builtins, o.overrides);
      ShapeBucket bucket = bucketOf(bucketDims, base.env);
      if (ls) { // a launch spec's sizes are its buckets, as given
        bucket.dims.clear();
        ojson sizes = ojson::object();
        for (const std::string &n : ls->sizeNames) {
          bucket.dims.emplace_back(n, base.env.at(n).i);
          sizes[n] = base.env.at(n).i;
        }
        res["sizes"] = sizes;
      }
      res["bucket"] = bucket.str();
      std::printf("\n== tune %s: case %s, bucket {%s}, %s (%s)\n", kspec.name.c_str(), c.name.c_str(),
                  bucket.str().c_str(), dkey.name.c_str(), dm.arch.c_str());
      if (o.useCache && !o.force && !o.exhaustive && !o.compileOnly) {
        if (auto hit = cache.lookup(kernelKeyStr, bucket, dkey)) {
          std::printf("   cache hit (%s): %s, %.4f ms, tuned %s on case %s\n", cachePath.c_str(), hit->best.id().c_str(),
                      hit->medianMs, hit->tunedAt.c_str(), hit->caseName.c_str());
          res["cache"] = "hit";
          res["winner"] = {{"id", hit->best.id()}, {"config", hit->best.toJson()}, {"median_ms", hit->medianMs}};
          res["wall_s"] = {{"total", since(tStart)}};
          doc["cases"].push_back(res);
          continue;
        }
      }
      res["cache"] = o.useCache ? "miss" : "off";

      // --- Candidates.
      std::vector<Candidate> cands = fromSpec ? ls->configs : fromDecorator ? deco->configs : expandSpace(space, base.env);
      if (o.maxCandidates && cands.size() > o.maxCandidates)
        cands.resize(o.maxCandidates);
      const char *spaceSource = fromSpec ? "spec" : fromDecorator ? "decorator" : "generated";
      res["space"] = {{"source", spaceSource}, {"candidates", cands.size()}};
      if (fromDecorator) {
        res["space"]["decorator_line"] = deco->line;
        res["space"]["key"] = deco->key;
      } else if (!fromSpec) {
        ojson dims = ojson::object();
        for (const SpaceDim &d : space.dims)
          dims[d.name] = d.values;
        res["space"]["dims"] = dims;
      }
      std::printf("   %zu candidates (%s)\n", cands.size(),
                  fromSpec ? "from the spec's configs" : fromDecorator ? "from @triton.autotune" : "generated");
      if (ls && o.dryRun)
        printCasePlan(*ls, base);
      if (!o.exportConfigs.empty()) {
        ojson ex = {{"format", "tle-tune-configs"}, {"version", 1}, {"spec", o.spec}, {"case", c.name},
                    {"kernel", kspec.name}, {"source", kspec.source}, {"entry", kspec.entry},
                    {"signature", kspec.signature}, {"configs", ojson::array()}};
        ojson vars = ojson::object();
        for (const auto &[n, v] : base.env)
          vars[n] = v.isFloat ? ojson(v.f) : ojson(v.i);
        ex["vars"] = vars;
        for (const Candidate &cd : cands)
          ex["configs"].push_back(cd.toJson());
        std::ofstream f(o.exportConfigs);
        f << ex.dump(1) << "\n";
        if (!f)
          throw BenchError("cannot write " + o.exportConfigs);
        std::printf("   wrote %s\n", o.exportConfigs.c_str());
      }

      // --- Compile in parallel (tlec subprocesses).
      std::string work = o.workDir;
      if (work.empty()) {
        const char *tmp = std::getenv("TMPDIR");
        std::string t = fmt::format("{}/tle-tune-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        std::vector<char> buf(t.begin(), t.end());
        buf.push_back('\0');
        if (!mkdtemp(buf.data()))
          throw BenchError("cannot create a work directory under " + std::string(tmp && *tmp ? tmp : "/tmp"));
        work = buf.data();
      } else {
        mkdir(work.c_str(), 0755);
      }
      std::vector<Entry> es(cands.size());
      const std::string ext = "cubin";
      // Per candidate: the case's constexprs, and the @triton.heuristics that read a runtime
      // parameter, evaluated here for this size (tlec cannot: it asks for their value).
      std::vector<std::vector<std::pair<std::string, std::string>>> caseDefines(cands.size(), c.defines);
      if (ls)
        for (size_t i = 0; i < cands.size(); ++i)
          for (const auto &d : runtimeHeuristicDefines(*ls, base.env, cands[i], c.name))
            caseDefines[i].push_back(d);
      if (ls && o.dryRun && caseDefines[0].size() > c.defines.size()) {
        std::string hs;
        for (size_t k = c.defines.size(); k < caseDefines[0].size(); ++k)
          hs += (hs.empty() ? "" : ", ") + caseDefines[0][k].first + "=" + caseDefines[0][k].second;
        std::printf("   @triton.heuristics reading runtime parameters, for this size (first config): %s\n", hs.c_str());
      }
      auto tCompile = Clock::now();
      std::atomic<size_t> next{0};
      std::vector<std::thread> pool;
      for (int t = 0; t < std::min<int>(o.jobs, int(cands.size())); ++t)
        pool.emplace_back([&] {
          for (size_t i = next++; i < es.size(); i = next++) {
            Entry &e = es[i];
            e.cand = cands[i];
            e.path = fmt::format("{}/{}.c{}.{}.{}", work, kspec.name, i, dm.arch, ext);
            e.log = fmt::format("{}/{}.c{}.log", work, kspec.name, i);
            std::vector<std::string> av = tlecCommand(tlec, kspec, suite.root, caseDefines[i], e.cand, dm.arch, e.path);
            auto t0 = Clock::now();
            e.compileStatus = spawnLogged(av, e.log);
            e.compileS = since(t0);
          }
        });
      for (std::thread &t : pool)
        t.join();
      const double compileWall = since(tCompile);
      std::map<std::string, int> compileRejects;
      double compileCpu = 0;
      size_t compiled = 0;
      for (Entry &e : es) {
        compileCpu += e.compileS;
        if (e.compileStatus == 0) {
          ++compiled;
          continue;
        }
        std::string log = readText(e.log);
        size_t nl = log.find('\n', log.find("error"));
        e.error = log.substr(0, std::min<size_t>(nl, 400));
        if (e.error.empty())
          e.error = fmt::format("tlec exited with status {}", e.compileStatus);
      }
      for (const Entry &e : es)
        if (e.compileStatus != 0)
          ++compileRejects[e.error.find("shared memory") != std::string::npos ? "shared memory (tlec)" : "compile error"];
      std::printf("   compile: %zu/%zu ok in %.2f s wall (%.1f s summed over %d jobs, %.3f s per candidate)\n", compiled,
                  es.size(), compileWall, compileCpu, o.jobs, es.empty() ? 0.0 : compileCpu / double(es.size()));
      if (compiled == 0) {
        // Every candidate failing is a setup problem (no ptxas, a wrong signature): say why.
        throw BenchError(fmt::format("no candidate compiled; the first error: {}", es.empty() ? "" : es[0].error));
      }

      // --- Prune: resources from the cubins, hard limits, the model's ranking.
      auto tPrune = Clock::now();
      const LaunchSpec &launchSpec = c.launches.at(0);
      std::map<std::string, int> rejectReasons = compileRejects;
      for (Entry &e : es) {
        if (e.compileStatus != 0)
          continue;
        try {
          rt::ModuleInfo mi = readMetadataFile(e.path);
          const rt::KernelInfo *ki = kspec.entry.empty() ? &mi.kernels.at(0) : mi.find(kspec.entry);
          if (!ki)
            throw BenchError(e.path + " lacks kernel " + kspec.entry);
          e.handle.spec = &kspec;
          e.handle.path = e.path;
          e.handle.info = *ki;
          e.handle.compiler = mi.compiler;
          CubinResources cr = readCubinResourcesFile(e.path, ki->name);
          e.res.threads = 32 * ki->numWarps;
          e.res.registers = cr.registers;
          e.res.sharedBytes = int64_t(ki->sharedBytes) + cr.staticSharedBytes;
          e.res.localBytes = cr.localBytes;
          e.codeHash = cr.codeHash;
          std::vector<std::pair<std::string, std::string>> ov = o.overrides;
          for (const auto &[n, v] : e.cand.launchVars)
            ov.emplace_back(n, std::to_string(v));
          e.rc.emplace(resolveCase(c, builtins, ov));
          e.launch.emplace(resolveLaunch(launchSpec, e.handle, *e.rc));
          Env env = launchEnv(*e.rc, e.handle.info);
          const int64_t ctas = int64_t(e.launch->grid[0]) * e.launch->grid[1] * e.launch->grid[2];
          Workload w = modelWorkload(model, env, ctas, e.cand.numWarps, e.cand.numStages, hasDot, e.rc->flops,
                                     e.rc->bytes);
          e.est = estimateCandidate(dm, e.res, w, o.model);
          if (!e.est.valid)
            ++rejectReasons[rejectKind(e.est.reason)];
        } catch (const std::exception &ex) {
          e.error = ex.what();
          e.est.valid = false;
          e.est.reason = ex.what();
          ++rejectReasons["error"];
        }
      }
      // Candidates whose machine code, shared memory and launch are identical (tlec clamps
      // num_stages to what fits, for instance) are one candidate: keep the first.
      std::map<std::string, size_t> byCode;
      size_t duplicates = 0;
      for (size_t i = 0; i < es.size(); ++i) {
        Entry &e = es[i];
        if (e.compileStatus != 0 || e.codeHash.empty() || !e.est.valid)
          continue;
        std::string key = fmt::format("{}|{}|{}", e.codeHash, e.res.sharedBytes, ojson(e.cand.toJson()["launch"]).dump());
        auto [it, fresh] = byCode.emplace(key, i);
        if (fresh)
          continue;
        // The representative is the one with the fewest stages: identical code means tlec clamped
        // the others to it, and the model should see the pipeline depth that was built.
        size_t keep = it->second;
        if (e.cand.numStages < es[keep].cand.numStages) {
          es[keep].duplicateOf = int(i);
          for (Entry &o : es)
            if (o.duplicateOf == int(keep))
              o.duplicateOf = int(i);
          it->second = i;
        } else {
          e.duplicateOf = int(keep);
        }
        ++duplicates;
      }
      std::vector<Estimate> ests;
      for (const Entry &e : es) {
        ests.push_back(e.est);
        if (e.duplicateOf >= 0) {
          ests.back().valid = false;
          ests.back().reason = "duplicate";
        }
        if (e.compileStatus != 0) {
          ests.back().valid = false;
          ests.back().reason = "compile error";
        }
      }
      std::vector<size_t> order = topK(ests, es.size());
      for (size_t r = 0; r < order.size(); ++r)
        es[order[r]].modelRank = int(r);
      // The timed set: the model's best of each structural class, then the model's order
      // (selectForTiming, docs/bench.md "Choosing what to time").
      std::vector<std::string> classes;
      for (const Entry &e : es)
        classes.push_back(structuralClass(e.cand.numWarps, e.est));
      SelectionOptions sel;
      sel.k = o.topK;
      std::vector<size_t> top = selectForTiming(ests, classes, sel);
      for (size_t i : top)
        es[i].selected = true;
      const double pruneWall = since(tPrune);
      std::printf("   prune: %zu valid, %zu duplicates (same machine code), %zu rejected by hard limits", order.size(),
                  duplicates, es.size() - order.size() - duplicates);
      for (const auto &[r, n] : rejectReasons)
        std::printf(" [%s: %d]", r.c_str(), n);
      std::printf(", keeping %zu by the model and its classes (%.3f s)\n", top.size(), pruneWall);
      ojson rej = ojson::object();
      for (const auto &[r, n] : rejectReasons)
        rej[r] = n;
      res["wall_s"] = {{"compile", compileWall}, {"prune", pruneWall}};
      res["compile"] = {{"ok", compiled}, {"failed", es.size() - compiled}, {"cpu_s", compileCpu}, {"jobs", o.jobs},
                        {"mean_s", compileCpu / double(std::max<size_t>(es.size(), 1))}};
      res["prune"] = {{"valid", order.size()}, {"duplicates", duplicates}, {"rejected", rej}, {"kept", top.size()}};
      if (order.empty())
        throw BenchError("every candidate was rejected by the resource limits");

      // --- GPU timing.
      std::vector<size_t> toTime = o.exhaustive ? order : top;
      double gpuWall = 0;
      if (gpu) {
        auto tGpu = Clock::now();
        std::vector<HostTensor> host = caseInputs(base, o.seed);
        std::vector<rt::DeviceBuffer> bufs;
        for (size_t i = 0; i < c.buffers.size(); ++i) {
          bufs.emplace_back(gpu->dev, host[i].bytes());
          bufs.back().copyFromHost(host[i].data(), host[i].bytes());
        }
        std::optional<Expected> expected;
        if (ls) {
          expected = expectedOutputs(*ls, base, *gpu, bufs, tlec, dm.arch, work);
          std::printf("   check: %s\n", expected->how.c_str());
          res["check"] = expected->how;
        }
        auto checkEntry = [&](Entry &e) {
          try {
            CheckReport r = checkCandidate(*gpu, *e.launch, *e.rc, bufs, host, ls ? &*ls : nullptr,
                                           expected ? &*expected : nullptr);
            e.checked = r.pass ? 1 : -1;
            for (const OutputCheck &oc : r.outputs)
              e.checkNote += fmt::format("{}: max_abs {:.3e} bad {}/{}; ", oc.name, oc.maxAbs, oc.bad, oc.count);
          } catch (const std::exception &ex) {
            e.checked = -1;
            e.checkNote = ex.what();
          }
          std::printf("   check %s: %s (%s)\n", e.cand.id().c_str(), e.checked > 0 ? "ok" : "WRONG",
                      e.checkNote.c_str());
        };
        size_t n = 0;
        auto timeOne = [&](size_t i) {
          Entry &e = es[i];
          ++n;
          try {
            e.module.emplace(rt::Module::fromFile(gpu->dev, e.path));
            e.handle.kernel.emplace(e.module->kernel(e.handle.info.name));
            e.handle.registers = e.handle.kernel->numRegisters();
            e.handle.localBytes = e.handle.kernel->localBytes();
            e.launch->kernel = &e.handle;
            if (ls) { // a launch spec's candidates are checked before they are timed
              checkEntry(e);
              if (e.checked < 0)
                return;
            }
            e.stats = timeCandidate(*gpu, *e.launch, bufs, o.warmup, o.reps);
            e.timed = true;
          } catch (const std::exception &ex) {
            e.error = ex.what();
            std::printf("   [%zu/%zu] %s: ERROR %s\n", n, toTime.size(), e.cand.id().c_str(), ex.what());
          }
          if (o.exhaustive && n % 25 == 0) {
            std::printf("   timed %zu/%zu (%.1f s)\n", n, toTime.size(), since(tGpu));
            std::fflush(stdout);
          }
        };
        for (size_t i : toTime)
          timeOne(i);
        // The second round: more candidates of the class of the first round's fastest
        // (refineForTiming); an exhaustive run has timed them already.
        std::optional<size_t> first;
        for (size_t i : top)
          if (es[i].timed && (!first || es[i].stats.median < es[*first].stats.median))
            first = i;
        if (first) {
          std::vector<size_t> more = refineForTiming(ests, classes, classes[*first], top, sel);
          for (size_t i : more) {
            es[i].selected = true;
            if (!o.exhaustive) {
              toTime.push_back(i);
              timeOne(i);
            }
          }
          if (!more.empty())
            std::printf("   second round: %zu more of class '%s'\n", more.size(), classes[*first].c_str());
        }
        // Check in order of time until a correct one is found: the winner (and, exhaustive, the
        // pruned winner) must match the reference.
        std::vector<size_t> byTime;
        for (size_t i : toTime)
          if (es[i].timed)
            byTime.push_back(i);
        std::stable_sort(byTime.begin(), byTime.end(),
                         [&](size_t a, size_t b) { return es[a].stats.median < es[b].stats.median; });
        auto firstCorrect = [&](const std::vector<size_t> &ids) -> std::optional<size_t> {
          for (size_t i : ids) {
            Entry &e = es[i];
            if (e.checked == 0)
              checkEntry(e);
            if (e.checked > 0)
              return i;
          }
          return std::nullopt;
        };
        std::optional<size_t> best = firstCorrect(byTime);
        std::optional<size_t> prunedBest;
        if (o.exhaustive) {
          std::vector<size_t> topByTime;
          for (size_t i : byTime)
            if (es[i].selected)
              topByTime.push_back(i);
          prunedBest = firstCorrect(topByTime);
        } else {
          prunedBest = best;
        }
        gpuWall = since(tGpu);
        res["wall_s"]["gpu"] = gpuWall;
        res["gpu"] = {{"timed", byTime.size()}, {"reps", o.reps}, {"warmup", o.warmup}};
        if (!best) {
          allOk = false;
          res["error"] = "no timed candidate produced correct results";
          std::printf("   ERROR: no timed candidate produced correct results\n");
        } else {
          const Entry &w = es[*prunedBest ? *prunedBest : *best];
          const Entry &b = es[*best];
          std::printf("\n   %-4s %-48s %9s %9s %7s %6s %5s %s\n", "rank", "candidate", "median_ms", "model_ms", "regs",
                      "smem", "occ", "check");
          for (size_t r = 0; r < std::min<size_t>(byTime.size(), 16); ++r) {
            const Entry &e = es[byTime[r]];
            std::printf("   %-4zu %-48s %9.4f %9.4f %7d %6lld %5.2f %s\n", r, e.cand.id().c_str(), e.stats.median,
                        e.est.seconds * 1e3, e.res.registers, (long long)(e.res.sharedBytes >> 10), e.est.occupancy,
                        e.checked > 0 ? "ok" : e.checked < 0 ? "WRONG" : "");
          }
          ojson wj = {{"id", w.cand.id()}, {"config", w.cand.toJson()}, {"median_ms", w.stats.median},
                      {"model_rank", w.modelRank}, {"registers", w.res.registers}, {"shared_bytes", w.res.sharedBytes},
                      {"check", w.checkNote}, {"correct", true}};
          if (base.flops > 0)
            wj["tflops"] = base.flops / (w.stats.median * 1e-3) / 1e12;
          if (base.bytes > 0)
            wj["gbps"] = base.bytes / (w.stats.median * 1e-3) / 1e9;
          res["winner"] = wj;
          std::printf("   winner%s: %s  %.4f ms (model rank %d)\n", o.exhaustive ? " of the pruned top-K" : "",
                      w.cand.id().c_str(), w.stats.median, w.modelRank);
          if (o.exhaustive) {
            double gap = (w.stats.median / b.stats.median - 1.0) * 100.0;
            res["exhaustive"] = {{"best_id", b.cand.id()},       {"best_config", b.cand.toJson()},
                                 {"best_median_ms", b.stats.median}, {"best_model_rank", b.modelRank},
                                 {"pruned_winner_gap_pct", gap},   {"timed", byTime.size()}};
            std::printf("   exhaustive best: %s  %.4f ms (model rank %d); pruned winner is %.2f%% slower\n",
                        b.cand.id().c_str(), b.stats.median, b.modelRank, gap);
          }
          // Cache the overall best (the exhaustive one when timed exhaustively).
          CacheEntry ce;
          ce.kernelKey = kernelKeyStr;
          ce.kernel = kspec.name;
          ce.entry = kspec.entry;
          ce.source = kspec.source;
          ce.signature = kspec.signature;
          ce.defines = kspec.defines;
          ce.bucket = bucket;
          ce.device = dkey;
          ce.best = b.cand;
          ce.medianMs = b.stats.median;
          ce.caseName = c.name;
          ce.tunedAt = utcNow();
          ce.candidates = int(es.size());
          ce.timed = int(byTime.size());
          tunedNow.push_back(ce);
          if (o.useCache) {
            cache.store(ce);
            cache.save(cachePath);
            std::printf("   cached in %s\n", cachePath.c_str());
          }
        }
      } else if (o.dryRun) {
        printDryRunConfigs(es);
      } else {
        std::printf("\n   the %zu to time: the model's best per class, then its order (--compile-only: nothing timed):\n", top.size());
        for (size_t i : top) {
          const Entry &e = es[i];
          std::printf("   %-3d %-48s model %.4f ms  regs %d smem %lld KiB local %lld occ %.2f waves %lld\n", e.modelRank,
                      e.cand.id().c_str(), e.est.seconds * 1e3, e.res.registers, (long long)(e.res.sharedBytes >> 10),
                      (long long)e.res.localBytes, e.est.occupancy, (long long)e.est.waves);
        }
      }
      res["wall_s"]["total"] = compileWall + pruneWall + gpuWall;
      std::printf("   wall time: compile %.2f s (CPU, %d jobs), prune %.3f s, GPU %.2f s, total %.2f s\n", compileWall,
                  o.jobs, pruneWall, gpuWall, compileWall + pruneWall + gpuWall);
      res["candidates"] = ojson::array();
      for (const Entry &e : es)
        res["candidates"].push_back(entryJson(e));
      doc["cases"].push_back(res);
      if (o.workDir.empty()) { // our temporary directory: remove its files
        for (const Entry &e : es) {
          unlink(e.path.c_str());
          unlink(e.log.c_str());
        }
        rmdir(work.c_str());
      }
    }

    if (ls && !o.compileOnly)
      printWinners(doc);
    // --- A launch spec's dispatch table: range predicates over this run's winners.
    if (ls && !o.dispatchDir.empty() && !o.compileOnly) {
      doc["dispatch"] = writeShapeDispatch(*ls, tunedSizesOf(doc, o.spec), o.dispatchDir, tlec,
                                           findTool(o.tleLink, "TLE_LINK", "tle-link"), dm.arch, doc["device"],
                                           o.ptxModules);
    } else if (ls && !o.dispatchDir.empty()) {
      std::printf("\n   no dispatch table without timings (--dry-run / --compile-only); --from-results RUN.json "
                  "writes one from a run's results\n");
    }
    // --- Dispatch table over every tuned bucket of this kernel on this device.
    if (!ls && !o.dispatchDir.empty()) {
      std::vector<CacheEntry> mine;
      for (const CacheEntry &e : o.useCache ? cache.entries() : tunedNow)
        if (e.kernelKey == kernelKeyStr && e.device.str() == dkey.str())
          mine.push_back(e);
      if (mine.empty()) {
        std::printf("\n   no tuned entries for the dispatch table (--compile-only?)\n");
      } else {
        mkdir(o.dispatchDir.c_str(), 0755);
        ojson table = dispatchTable(mine);
        // Build each spec's module next to the table so `tle-link` can run as printed.
        for (ojson &s : table["specs"]) {
          Candidate cd = Candidate::fromJson(s["config"]);
          std::string out = o.dispatchDir + "/" + s["module"].get<std::string>();
          std::vector<std::string> av = {tlec, srcPath, "-s", kspec.signature};
          for (const std::string &a : includeArgs(kspec, suite.root))
            av.push_back(a);
          if (!kspec.entry.empty())
            av.insert(av.end(), {"-n", kspec.entry});
          for (const auto &[n, v] : kspec.defines)
            av.push_back("-D" + n + "=" + v);
          for (const auto &[n, v] : cd.constexprs)
            av.push_back(fmt::format("-D{}={}", n, v));
          av.insert(av.end(), {"-w", std::to_string(cd.numWarps), "-ns", std::to_string(cd.numStages), "--arch",
                               dm.arch, "-o", out});
          if (spawnLogged(av, out + ".log") != 0)
            throw BenchError("tlec failed for the dispatch module " + out + " (see " + out + ".log)");
          unlink((out + ".log").c_str());
        }
        std::string base = o.dispatchDir + "/" + kspec.name;
        {
          std::ofstream f(base + ".dispatch.json");
          f << table.dump(2) << "\n";
        }
        {
          std::ofstream f(base + "_dispatch.h");
          f << dispatchHeader(table, kspec.name + "_tuned");
        }
        // Link the specs into one launcher library source when tle-link is at hand.
        std::string link = findTool(o.tleLink, "TLE_LINK", "tle-link");
        std::vector<std::string> av = {link, "-n", kspec.name + "_tuned"};
        for (const ojson &s : table["specs"])
          av.push_back(o.dispatchDir + "/" + s["module"].get<std::string>());
        av.insert(av.end(), {"-o", base + "_tuned.h", "--source", base + "_tuned.cpp"});
        int lrc = spawnLogged(av, base + ".tle-link.log");
        std::printf("\n   dispatch table: %s.dispatch.json, %s_dispatch.h (%zu buckets, %zu specs)%s\n", base.c_str(),
                    base.c_str(), table["buckets"].size(), table["specs"].size(),
                    lrc == 0 ? fmt::format("; launchers {}_tuned.h/.cpp by tle-link", base).c_str()
                             : " (tle-link not run: see .tle-link.log)");
        doc["dispatch"] = {{"json", base + ".dispatch.json"}, {"header", base + "_dispatch.h"},
                           {"tle_link_status", lrc}};
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench --tune: %s\n", e.what());
    doc["error"] = e.what();
    allOk = false;
  }
  doc["elapsed_s"] = since(tStart);
  // A launch spec's timed run always leaves its results: SPEC_STEM.results.json / .md here.
  std::string jsonOut = o.jsonOut, mdOut = o.mdOut;
  if (ls && !o.compileOnly && jsonOut.empty() && mdOut.empty()) {
    std::string stem = o.spec.substr(o.spec.rfind('/') == std::string::npos ? 0 : o.spec.rfind('/') + 1);
    stem = stem.substr(0, stem.rfind(".json") == std::string::npos ? stem.size() : stem.rfind(".json"));
    jsonOut = stem + ".results.json";
    mdOut = stem + ".results.md";
  }
  if (!jsonOut.empty()) {
    std::ofstream f(jsonOut);
    f << doc.dump(1) << "\n";
  }
  if (!mdOut.empty()) {
    std::ofstream f(mdOut);
    f << mdTable(doc);
  }
  if (ls && !o.compileOnly)
    std::printf("\n   results: %s%s%s\n", jsonOut.c_str(), mdOut.empty() ? "" : ", ", mdOut.c_str());
  return doc.contains("error") && doc["cases"].empty() ? 2 : allOk ? 0 : 1;
}

namespace {

std::string mdTable(const ojson &doc) {
  std::string s = fmt::format("# tle-bench --tune: {}\n\nDevice: {} ({}, {} SMs, driver {}).\n\n",
                              doc.value("spec", ""), doc["device"].value("name", ""), doc["device"].value("arch", ""),
                              doc["device"].value("sm_count", 0), doc["device"].value("driver", 0));
  s += "| case | bucket | cache | candidates | valid | timed | compile s | prune s | GPU s | winner | ms | "
       "exhaustive best ms | gap |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
  for (const ojson &c : doc["cases"]) {
    auto num = [&](const char *a, const char *b) -> std::string {
      if (c.contains(a) && c[a].contains(b))
        return fmt::format("{:.3f}", c[a][b].get<double>());
      return "";
    };
    std::string winner = c.contains("winner") ? c["winner"].value("id", "") : "";
    std::string ms = c.contains("winner") ? fmt::format("{:.4f}", c["winner"].value("median_ms", 0.0)) : "";
    std::string ex, gap;
    if (c.contains("exhaustive")) {
      ex = fmt::format("{:.4f}", c["exhaustive"].value("best_median_ms", 0.0));
      gap = fmt::format("{:.2f}%", c["exhaustive"].value("pruned_winner_gap_pct", 0.0));
    }
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | `{}` | {} | {} | {} |\n", c.value("case", ""),
                     c.value("bucket", ""), c.value("cache", ""),
                     c.contains("space") ? std::to_string(c["space"].value("candidates", 0)) : "",
                     c.contains("prune") ? std::to_string(c["prune"].value("valid", 0)) : "",
                     c.contains("gpu") ? std::to_string(c["gpu"].value("timed", 0)) : "", num("wall_s", "compile"),
                     num("wall_s", "prune"), num("wall_s", "gpu"), winner, ms, ex, gap);
  }
  return s;
}

} // namespace

} // namespace tle::bench
