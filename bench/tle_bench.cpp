// tle-bench: runs benchmark suites (bench/suites/*.json) of tlec kernels through libtle_rt — check, time, compare with a copy.
//
// Modes (the options: Options.h, `tle-bench --help`): with a GPU, check and time every case;
// --dry-run (no GPU) prints the plan, and --time-host also generates the inputs and runs the
// references to time the host side; --cpu-check TLE_RUN (no GPU) runs and checks every case through
// `tle-run --target cpu`; --tune SPEC.json is autotuning (Tune.h, docs/bench.md "Autotuning").
// Per case: inputs are generated on the host (deterministic in --seed), the family's hook derives
// dependent inputs, outputs are filled with 0xff bytes (NaN) and every launch runs once; the
// outputs are compared with an independent float64 reference (Families.cpp) and a wrong case is
// not timed. Timing: --warmup rounds, then --reps rounds; each round runs the kernel(s) and then a
// cuMemcpyDtoDAsync of bytes/2 (the same traffic), each preceded by a memset of the --flush-mib
// L2-flush buffer and bracketed by CUDA events. When all buffers of a case fit twice in the L2,
// up to --max-rotate copies of them are used in turn. Exit status: 0 when every case ran and
// was correct, 1 otherwise, 2 on bad usage, 77 when there is no GPU (GPU mode).
#include "harness/Families.h"
#include "harness/Launch.h"
#include "harness/Report.h"
#include "harness/Suite.h"
#include "Options.h"
#include "Tune.h"

#include "tle/Runtime/Runtime.h"

#include <fmt/format.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

extern char **environ;

using namespace tle;
using namespace tle::bench;

namespace {

bool selected(const BenchOptions &o, const CaseSpec &c) {
  if (o.caseFilters.empty())
    return true;
  for (const std::string &f : o.caseFilters)
    if (c.name.find(f) != std::string::npos || c.family == f)
      return true;
  return false;
}

std::string baseName(const std::string &p) { return p.substr(p.rfind('/') + 1); }

double nowSeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// ------------------------------------------------------------------------------------------------
// Kernels of a suite
// ------------------------------------------------------------------------------------------------

/// Loads the metadata (and, with a device, the module) of every kernel of `suite`. A kernel whose
/// file is missing or broken keeps its error, reported by the cases that use it.
struct KernelSet {
  std::map<std::string, KernelHandle> handles;
  std::map<std::string, std::string> errors;

  const KernelHandle &get(const std::string &name) const {
    auto e = errors.find(name);
    if (e != errors.end())
      throw BenchError(e->second);
    return handles.at(name);
  }
};

KernelSet loadKernels(const Suite &suite, const BenchOptions &o, const rt::Device *dev) {
  KernelSet ks;
  std::vector<std::string> archs;
  if (dev) {
    archs.push_back(dev->arch());
    if (dev->computeMajor() >= 8 && dev->arch() != "sm_80")
      archs.push_back("sm_80"); // sm_80 code runs on later GPUs (sm_90a's does not run elsewhere)
  } else {
    archs = {o.arch, "sm_90a", "sm_80"};
  }
  for (const KernelSpec &spec : suite.kernels) {
    try {
      std::string path = findKernelFile(o.kernelDir, spec.name, archs);
      if (path.empty())
        throw BenchError(fmt::format("kernel '{}': no {}/{}.{{{}}}.{{cubin,ptx}}; build it with `ninja tle-bench` "
                                     "(or pass --kernel-dir)",
                                     spec.name, o.kernelDir, spec.name, fmt::join(archs, ",")));
      KernelHandle h;
      h.spec = &spec;
      h.path = path;
      rt::ModuleInfo mi;
      std::optional<rt::Module> mod;
      if (dev) {
        mod = rt::Module::fromFile(*dev, path);
        mi = mod->info();
      } else {
        mi = readMetadataFile(path);
      }
      h.compiler = mi.compiler;
      const rt::KernelInfo *ki = spec.entry.empty() ? (mi.kernels.size() == 1 ? &mi.kernels[0] : nullptr)
                                                    : mi.find(spec.entry);
      if (!ki)
        throw BenchError(fmt::format("kernel '{}': {} has no kernel '{}'", spec.name, path, spec.entry));
      h.info = *ki;
      if (h.info.numWarps != spec.numWarps)
        throw BenchError(fmt::format("kernel '{}': {} was built with num_warps {}, the suite says {}; rebuild",
                                     spec.name, path, h.info.numWarps, spec.numWarps));
      if (mod) {
        h.kernel = mod->kernel(h.info.name);
        h.registers = h.kernel->numRegisters();
        h.localBytes = h.kernel->localBytes();
      }
      ks.handles.emplace(spec.name, std::move(h));
    } catch (const std::exception &e) {
      ks.errors[spec.name] = e.what();
    }
  }
  return ks;
}

ojson kernelJson(const KernelHandle &h, const ResolvedLaunch &rl) {
  ojson cx = ojson::object();
  for (const auto &[n, text] : h.info.constexprs) {
    try {
      cx[n] = ojson::parse(text);
    } catch (const std::exception &) {
      cx[n] = text;
    }
  }
  ojson j = {{"name", h.spec->name},
             {"entry", h.info.name},
             {"source", h.spec->source},
             {"file", baseName(h.path)},
             {"target", h.info.target},
             {"signature", h.spec->signature},
             {"num_warps", h.info.numWarps},
             {"shared_bytes", h.info.sharedBytes},
             {"constexprs", cx},
             {"grid", {rl.grid[0], rl.grid[1], rl.grid[2]}}};
  if (h.registers >= 0) {
    j["registers"] = h.registers;
    j["local_bytes"] = h.localBytes;
  }
  return j;
}

// ------------------------------------------------------------------------------------------------
// Host data of a case
// ------------------------------------------------------------------------------------------------

std::vector<HostTensor> makeHostData(const ResolvedCase &rc, uint64_t seed, bool generate) {
  const CaseSpec &c = *rc.spec;
  std::vector<HostTensor> ts;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    ts.emplace_back(c.buffers[i].dtype, rc.shapes[i]);
    if (!generate)
      continue;
    const BufferSpec &b = c.buffers[i];
    if (b.role == "output")
      std::memset(ts.back().data(), 0xff, ts.back().bytes());
    else if (b.init != "derived")
      fillTensor(ts.back(), rc.inits[i], seed * 1000003ull + i * 7919ull + std::hash<std::string>()(c.name));
  }
  if (generate) {
    const Family *fam = findFamily(c.family);
    CaseData d{rc, ts};
    if (fam->prepare)
      fam->prepare(d);
  }
  return ts;
}

ojson checkJson(const CheckReport &r) {
  ojson outs = ojson::array();
  for (const OutputCheck &o : r.outputs) {
    ojson j = {{"output", o.name}, {"elements", o.count}, {"bad", o.bad},      {"max_abs", o.maxAbs},
               {"max_rel", o.maxRel}, {"atol", o.atol},   {"rtol", o.rtol}};
    if (o.firstBad >= 0)
      j["first_bad"] = {{"index", o.firstBad}, {"got", o.gotAtFirstBad}, {"want", o.wantAtFirstBad}};
    outs.push_back(j);
  }
  return outs;
}

void printCheck(const CheckReport &r) {
  for (const OutputCheck &o : r.outputs) {
    std::printf("    check %-6s max_abs %.3e max_rel %.3e  bad %zu/%zu", o.name.c_str(), o.maxAbs, o.maxRel, o.bad,
                o.count);
    if (o.firstBad >= 0)
      std::printf("  (first at %lld: got %.8g, want %.8g)", (long long)o.firstBad, o.gotAtFirstBad,
                  o.wantAtFirstBad);
    std::printf("\n");
  }
}

// ------------------------------------------------------------------------------------------------
// GPU
// ------------------------------------------------------------------------------------------------

struct Gpu {
  rt::Device dev;
  rt::Stream stream;
  rt::DeviceBuffer flush;
};

/// One set of device buffers of a case.
using BufferSet = std::vector<rt::DeviceBuffer>;

void launchAll(Gpu &g, const std::vector<ResolvedLaunch> &launches, const BufferSet &bufs) {
  for (const ResolvedLaunch &rl : launches) {
    std::vector<uint64_t> slots(rl.args.size());
    std::vector<void *> ptrs(rl.args.size());
    for (size_t i = 0; i < rl.args.size(); ++i) {
      slots[i] = rl.args[i].pointer ? bufs[size_t(rl.args[i].buffer)].address() : rl.args[i].bits;
      ptrs[i] = &slots[i];
    }
    rl.kernel->kernel->launchRaw(rt::Grid(rl.grid[0], rl.grid[1], rl.grid[2]), g.stream, ptrs.data(), ptrs.size());
  }
}

void runGpuCase(Gpu &g, const BenchOptions &o, const CaseSpec &c, const ResolvedCase &rc,
                const std::vector<ResolvedLaunch> &launches, ojson &res) {
  const size_t l2 = g.dev.l2CacheBytes();
  const size_t copyBytes = size_t(rc.bytes / 2) / 16 * 16;
  size_t sets = 1;
  if (rc.totalBufferBytes * 2 <= l2)
    sets = std::min<size_t>(size_t(o.maxRotate), std::max<size_t>(2, (2 * l2) / std::max<size_t>(rc.totalBufferBytes, 1)));
  const double needed = double(sets) * double(rc.totalBufferBytes + 2 * copyBytes) + double(g.flush.bytes());
  if (needed > 0.9 * double(g.dev.totalMemoryBytes()))
    throw BenchError(fmt::format("case '{}' needs {:.1f} GiB of device memory, the device has {:.1f}", c.name,
                                 needed / (1 << 30), double(g.dev.totalMemoryBytes()) / (1 << 30)));

  double t0 = nowSeconds();
  std::vector<HostTensor> host = makeHostData(rc, o.seed, true);
  res["host_prepare_s"] = nowSeconds() - t0;

  std::vector<BufferSet> bufs(sets);
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    bufs[0].emplace_back(g.dev, host[i].bytes());
    if (c.buffers[i].role == "scratch")
      bufs[0].back().fillBytes(0);
    else
      bufs[0].back().copyFromHost(host[i].data(), host[i].bytes());
  }

  // Correctness before timing.
  launchAll(g, launches, bufs[0]);
  g.stream.synchronize();
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == "output")
      bufs[0][i].copyToHost(host[i].data(), host[i].bytes());
  t0 = nowSeconds();
  CaseData data{rc, host};
  CheckReport check = findFamily(c.family)->check(data);
  res["check_s"] = nowSeconds() - t0;
  res["check"] = checkJson(check);
  res["correct"] = check.pass;
  printCheck(check);
  if (!check.pass)
    return;
  host.clear();

  // Rotating copies of every buffer (inputs as generated, outputs as written).
  for (size_t s = 1; s < sets; ++s)
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      bufs[s].emplace_back(g.dev, bufs[0][i].bytes());
      bufs[s].back().copyFromDevice(bufs[0][i], bufs[0][i].bytes());
    }
  std::vector<rt::DeviceBuffer> copySrc, copyDst;
  for (size_t s = 0; s < sets; ++s) {
    copySrc.emplace_back(g.dev, copyBytes);
    copyDst.emplace_back(g.dev, copyBytes);
    copySrc.back().fillBytes(0x3c);
  }
  res["rotation_sets"] = sets;
  res["copy_bytes"] = copyBytes;

  const int reps = o.reps > 0 ? o.reps : c.reps, warmup = o.warmup >= 0 ? o.warmup : c.warmup;
  auto runVariant = [&](int v, size_t s) {
    if (v == 0)
      launchAll(g, launches, bufs[s]);
    else
      copyDst[s].copyFromDeviceAsync(copySrc[s], copyBytes, g.stream);
  };
  for (int w = 0; w < warmup; ++w)
    for (int v = 0; v < 2; ++v) {
      g.flush.fill32Async(uint32_t(w), g.stream);
      runVariant(v, size_t(w) % sets);
    }
  g.stream.synchronize();
  std::vector<rt::Event> ev;
  ev.reserve(size_t(reps) * 4);
  for (int i = 0; i < reps * 4; ++i)
    ev.emplace_back(g.dev);
  for (int r = 0; r < reps; ++r)
    for (int v = 0; v < 2; ++v) {
      size_t e = (size_t(r) * 2 + size_t(v)) * 2;
      g.flush.fill32Async(uint32_t(r), g.stream);
      ev[e].record(g.stream);
      runVariant(v, size_t(r) % sets);
      ev[e + 1].record(g.stream);
    }
  g.stream.synchronize();
  std::vector<double> ms[2];
  for (int r = 0; r < reps; ++r)
    for (int v = 0; v < 2; ++v) {
      size_t e = (size_t(r) * 2 + size_t(v)) * 2;
      ms[v].push_back(rt::Event::elapsedMs(ev[e], ev[e + 1]));
    }
  Stats ts = computeStats(ms[0]), cs = computeStats(ms[1]);
  ojson tj = statsJson(ts), cj = statsJson(cs);
  tj["gbps"] = rc.bytes / (ts.median * 1e-3) / 1e9;
  if (rc.flops > 0)
    tj["gflops"] = rc.flops / (ts.median * 1e-3) / 1e9;
  cj["gbps"] = 2.0 * double(copyBytes) / (cs.median * 1e-3) / 1e9;
  res["tle"] = tj;
  res["copy"] = cj;
  res["fraction_of_copy"] = tj["gbps"].get<double>() / cj["gbps"].get<double>();
  res["reps"] = reps;
  res["warmup"] = warmup;
}

// ------------------------------------------------------------------------------------------------
// CPU check through tle-run
// ------------------------------------------------------------------------------------------------

int spawnWait(const std::vector<std::string> &argv) {
  std::vector<char *> av;
  for (const std::string &a : argv)
    av.push_back(const_cast<char *>(a.c_str()));
  av.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, av[0], nullptr, nullptr, av.data(), environ) != 0)
    throw BenchError("cannot start " + argv[0] + ": " + std::strerror(errno));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    throw BenchError("waitpid failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string shellJoin(const std::vector<std::string> &argv) {
  std::string s;
  for (const std::string &a : argv) {
    bool plain = a.find_first_of(" \"'*,()") == std::string::npos && !a.empty();
    s += (s.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return s;
}

void runCpuCase(const BenchOptions &o, const Suite &suite, const CaseSpec &c, const ResolvedCase &rc,
                const std::vector<ResolvedLaunch> &launches, ojson &res) {
  std::vector<HostTensor> host = makeHostData(rc, o.seed, true);
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == "scratch")
      std::memset(host[i].data(), 0, host[i].bytes());
  char tmpl[] = "/tmp/tle-bench-XXXXXX";
  if (!mkdtemp(tmpl))
    throw BenchError("cannot create a temporary directory");
  std::string dir = tmpl;
  std::vector<std::string> files;
  for (const ResolvedLaunch &rl : launches) {
    const KernelSpec &ks = *rl.kernel->spec;
    std::vector<std::string> argv = {o.tleRun, suite.root + "/" + ks.source, "-n", rl.kernel->info.name,
                                     "-s", ks.signature, "-w", std::to_string(ks.numWarps),
                                     "--grid", fmt::format("{},{},{}", rl.grid[0], rl.grid[1], rl.grid[2]),
                                     "--target", "cpu", "--check-bounds", "-q"};
    for (const auto &[dn, dv] : ks.defines) {
      argv.push_back("-D");
      argv.push_back(dn + "=" + dv);
    }
    for (const std::string &a : includeArgs(ks, suite.root))
      argv.push_back(a);
    std::vector<std::pair<int, std::string>> saved;
    for (size_t i = 0; i < rl.args.size(); ++i) {
      const std::string &pname = rl.kernel->info.params[i].name;
      const ResolvedArg &a = rl.args[i];
      if (!a.pointer) {
        argv.push_back("--arg");
        argv.push_back(pname + "=" + a.text);
        continue;
      }
      std::string in = fmt::format("{}/{}.npy", dir, c.buffers[size_t(a.buffer)].name);
      std::string out = fmt::format("{}/{}.{}.out.npy", dir, c.buffers[size_t(a.buffer)].name, pname);
      writeNpy(in, host[size_t(a.buffer)]);
      files.push_back(in);
      files.push_back(out);
      argv.push_back("--arg");
      argv.push_back(pname + "=" + in);
      argv.push_back("--save");
      argv.push_back(pname + "=" + out);
      saved.emplace_back(a.buffer, out);
    }
    std::printf("    + %s\n", shellJoin(argv).c_str());
    std::fflush(stdout);
    int rcode = spawnWait(argv);
    if (rcode != 0)
      throw BenchError(fmt::format("tle-run exited with status {}", rcode));
    for (const auto &[b, path] : saved)
      readNpyInto(path, host[size_t(b)]);
  }
  for (const std::string &f : files)
    unlink(f.c_str());
  rmdir(dir.c_str());
  CaseData data{rc, host};
  CheckReport check = findFamily(c.family)->check(data);
  res["check"] = checkJson(check);
  res["correct"] = check.pass;
  printCheck(check);
}

// ------------------------------------------------------------------------------------------------

void writeOutputs(const BenchOptions &o, const ojson &doc) {
  if (!o.jsonOut.empty()) {
    std::ofstream f(o.jsonOut);
    f << doc.dump(2) << "\n";
    if (!f)
      throw BenchError("cannot write " + o.jsonOut);
  }
  if (!o.mdOut.empty() && doc.contains("device")) {
    std::ofstream f(o.mdOut);
    f << markdownSummary(doc);
    if (!f)
      throw BenchError("cannot write " + o.mdOut);
  }
}

} // namespace

int main(int argc, char **argv) {
  const std::vector<std::string> args = commandLineArgs(argc, argv);
  if (isTuneCommandLine(args))
    return tle::bench::runTune(argc, argv);
  ParsedCommandLine<BenchOptions> parsed = parseBenchCommandLine(args);
  if (parsed.exitStatus)
    return printParseExit(parsed.exitStatus, parsed.message);
  const BenchOptions &o = parsed.options;
  const bool gpuMode = !o.dryRun && o.tleRun.empty();
  std::vector<Suite> suites;
  try {
    for (const std::string &p : o.suites)
      suites.push_back(loadSuite(p));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench: %s\n", e.what());
    return 2;
  }

  std::unique_ptr<Gpu> gpu;
  ojson doc = ojson::object();
  doc["tool"] = "tle-bench";
  std::string suiteNames;
  for (const Suite &s : suites)
    suiteNames += (suiteNames.empty() ? "" : ",") + s.name;
  doc["suite"] = suiteNames;
  doc["suite_files"] = o.suites;
  doc["mode"] = gpuMode ? "gpu" : o.dryRun ? "dry-run" : "cpu-check";
  Env builtins;
  try {
    if (gpuMode) {
      std::string reason;
      if (!rt::gpuAvailable(&reason)) {
        std::fprintf(stderr, "SKIPPED: tle-bench needs a CUDA GPU: %s (use --dry-run or --cpu-check without one)\n",
                     reason.c_str());
        return 77;
      }
      rt::Device dev(o.device);
      gpu.reset(new Gpu{dev, rt::Stream(dev), rt::DeviceBuffer(dev, size_t(o.flushMiB) << 20)});
      builtins["SMS"] = Value::ofInt(dev.smCount());
      doc["device"] = {{"name", dev.name()},
                       {"ordinal", dev.ordinal()},
                       {"compute_capability", fmt::format("{}.{}", dev.computeMajor(), dev.computeMinor())},
                       {"arch", dev.arch()},
                       {"sm_count", dev.smCount()},
                       {"l2_bytes", dev.l2CacheBytes()},
                       {"memory_bytes", dev.totalMemoryBytes()},
                       {"driver_version", rt::driverVersion()}};
      std::printf("tle-bench: %s (%d SMs, %s, L2 %zu MiB), driver %d\n", dev.name().c_str(), dev.smCount(),
                  dev.arch().c_str(), dev.l2CacheBytes() >> 20, rt::driverVersion());
    } else {
      builtins["SMS"] = Value::ofInt(o.sms);
      doc["device"] = {{"name", o.dryRun ? "none (dry run)" : "host CPU via tle-run"}, {"sm_count", o.sms}};
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench: %s\n", e.what());
    return 1;
  }
  doc["method"] = {{"reps", o.reps > 0 ? o.reps : (suites.empty() ? 0 : suites[0].reps)},
                   {"warmup", o.warmup >= 0 ? o.warmup : (suites.empty() ? 0 : suites[0].warmup)},
                   {"l2_flush_bytes", gpu ? gpu->flush.bytes() : size_t(o.flushMiB) << 20},
                   {"max_rotate", o.maxRotate},
                   {"seed", o.seed},
                   {"timer", "CUDA events around each repetition on one stream; memset of the flush buffer "
                             "before each; kernel and copy interleaved per round; median"},
                   {"bytes", "inputs read once + outputs written once (scratch buffers excluded) unless the "
                             "case gives \"bytes\""},
                   {"copy", "cuMemcpyDtoDAsync of bytes/2 (rounded down to 16), i.e. the same traffic"}};
  if (!o.overrides.empty()) {
    ojson ov = ojson::object();
    for (const auto &[n, v] : o.overrides)
      ov[n] = v;
    doc["overrides"] = ov;
  }
  doc["cases"] = ojson::array();

  bool allOk = true;
  size_t total = 0, index = 0;
  for (const Suite &s : suites)
    for (const CaseSpec &c : s.cases)
      total += selected(o, c);
  if (total == 0) {
    std::fprintf(stderr, "tle-bench: no case matches the --case filters\n");
    return 2;
  }
  const double start = nowSeconds();
  for (const Suite &suite : suites) {
    KernelSet kernels = loadKernels(suite, o, gpu ? &gpu->dev : nullptr);
    std::printf("\nsuite %s (%s): %zu cases\n%s\n", suite.name.c_str(), suite.path.c_str(), suite.cases.size(),
                tableHeader().c_str());
    for (const CaseSpec &c : suite.cases) {
      if (!selected(o, c))
        continue;
      ++index;
      ojson res = {{"name", c.name}, {"label", c.label}, {"family", c.family}, {"suite", suite.name}};
      std::printf("[%zu/%zu %.0fs] %s\n", index, total, nowSeconds() - start, c.label.c_str());
      std::fflush(stdout);
      try {
        ResolvedCase rc = resolveCase(c, builtins, o.overrides);
        ojson vars = ojson::object();
        for (const auto &[n, v] : c.vars)
          vars[n] = rc.env.at(n).isFloat ? ojson(rc.env.at(n).f) : ojson(rc.env.at(n).i);
        res["vars"] = vars;
        ojson shapes = ojson::object();
        for (size_t i = 0; i < c.buffers.size(); ++i)
          shapes[c.buffers[i].name] = {{"dtype", dtypeName(c.buffers[i].dtype)}, {"shape", rc.shapes[i]},
                                       {"role", c.buffers[i].role}};
        res["buffers"] = shapes;
        res["bytes"] = rc.bytes;
        if (rc.flops > 0)
          res["flops"] = rc.flops;
        std::vector<ResolvedLaunch> launches;
        res["kernels"] = ojson::array();
        for (const LaunchSpec &l : c.launches) {
          launches.push_back(resolveLaunch(l, kernels.get(l.kernel), rc));
          res["kernels"].push_back(kernelJson(*launches.back().kernel, launches.back()));
        }
        if (gpu)
          runGpuCase(*gpu, o, c, rc, launches, res);
        else if (!o.tleRun.empty())
          runCpuCase(o, suite, c, rc, launches, res);
        else {
          for (const ojson &k : res["kernels"])
            std::printf("    %s: %s, grid %s, num_warps %d, constexprs %s\n", k["name"].get<std::string>().c_str(),
                        k["file"].get<std::string>().c_str(), k["grid"].dump().c_str(), k["num_warps"].get<int>(),
                        k["constexprs"].dump().c_str());
          std::printf("    buffers %.1f MiB, bytes moved %.1f MiB\n", double(rc.totalBufferBytes) / (1 << 20),
                      rc.bytes / (1 << 20));
          if (o.timeHost) { // the host side of a GPU run: generation, then the reference (outputs unwritten)
            double t0 = nowSeconds();
            std::vector<HostTensor> host = makeHostData(rc, o.seed, true);
            double t1 = nowSeconds();
            CaseData data{rc, host};
            findFamily(c.family)->check(data);
            double t2 = nowSeconds();
            res["host_prepare_s"] = t1 - t0;
            res["check_s"] = t2 - t1;
            std::printf("    host: generate %.2f s, reference and compare %.2f s (%u threads)\n", t1 - t0, t2 - t1,
                        workerThreads());
          }
        }
        if (res.contains("correct") && !res["correct"].get<bool>())
          allOk = false;
      } catch (const std::exception &e) {
        res["error"] = e.what();
        std::printf("    ERROR: %s\n", e.what());
        allOk = false;
      }
      std::printf("%s\n", tableRow(res).c_str());
      std::fflush(stdout);
      doc["cases"].push_back(res);
      doc["elapsed_s"] = nowSeconds() - start;
      try {
        writeOutputs(o, doc);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "tle-bench: %s\n", e.what());
        return 1;
      }
    }
  }
  std::printf("\n%s\n", tableHeader().c_str());
  for (const ojson &c : doc["cases"])
    std::printf("%s\n", tableRow(c).c_str());
  std::printf("tle-bench: %zu cases in %.1f s%s\n", total, nowSeconds() - start,
              allOk ? "" : "; SOME CASES FAILED OR WERE WRONG");
  if (!o.jsonOut.empty())
    std::printf("  wrote %s\n", o.jsonOut.c_str());
  if (!o.mdOut.empty())
    std::printf("  wrote %s\n", o.mdOut.c_str());
  return allOk ? 0 : 1;
}
