// tle-engine: one transformer block forward on random weights with tlec-compiled kernels, launched through libtle_rt; checked against CPU references and timed per kernel.
//
// See examples/engine/README.md for the build and run commands, block.h for the block and its
// kernel launches, reference.h for the checks. Exit status: 0 when every check passed, or when
// there is no CUDA driver or GPU (the program then prints "no CUDA driver/GPU: <reason>" and runs
// nothing; with --require-gpu it exits 77 instead); 1 when a check failed or the runtime reported
// an error; 2 for a bad command line.
#include "block.h"
#include "reference.h"

#include "tle/Runtime/Runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace rt = tle::rt;
using namespace tle_engine;

namespace {

/// Exit status when --require-gpu is given and there is no GPU (ctest's "skipped").
constexpr int kExitSkipped = 77;

struct Options {
  BlockConfig block;
  uint64_t seed = 1;
  int warmup = 10;
  int reps = 50;
  int64_t checkRows = 0; // all rows
  std::string kernelDir; // default: defaultKernelDir()
  std::string arch; // default: the device's
  int device = 0;
  bool check = true;
  bool time = true;
  bool planOnly = false;
  bool requireGpu = false;
};

/// `kernels/` next to the executable: where the build puts the engine's kernels, so that a build
/// tree copied to another machine still finds them.
std::string defaultKernelDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return "kernels";
  std::string exe(buf, size_t(n));
  size_t slash = exe.rfind('/');
  return (slash == std::string::npos ? std::string(".") : exe.substr(0, slash)) + "/kernels";
}

void usage(FILE *to) {
  std::fprintf(to,
               "usage: tle-engine [options]\n"
               "Runs one transformer block forward (RMSNorm, QKV projection, rotary embedding, causal\n"
               "attention, output projection, residual, RMSNorm, SiLU-gated MLP, residual) with tlec\n"
               "kernels through libtle_rt, checks every step against a CPU reference and times it.\n\n"
               "shapes:\n"
               "  --batch N        sequences (default 2)\n"
               "  --seq N          tokens per sequence, a multiple of 128 (default 1024)\n"
               "  --hidden N       model width = heads * head-dim, at most 4096 (default 1024)\n"
               "  --heads N        attention heads (default 16)\n"
               "  --head-dim N     64 or 128 (default 64)\n"
               "  --ffn N          MLP width, a multiple of 16 (default 2816)\n"
               "  --eps X          RMSNorm epsilon (default 1e-5)\n"
               "run:\n"
               "  --kernel-dir DIR the compiled kernels, NAME.ARCH.cubin or .ptx (default: kernels/ next to\n"
               "                   this program, where the build puts them)\n"
               "  --arch ARCH      which kernel files to load (default: the device's, e.g. sm_90a)\n"
               "  --device N       CUDA device ordinal (default 0)\n"
               "  --seed N         seed of the random inputs and weights (default 1)\n"
               "  --check-rows N   rows checked per matmul and attention step, 0 = all (default 0)\n"
               "  --warmup N       untimed launches per kernel before timing (default 10)\n"
               "  --reps N         timed launches per kernel; the median is reported (default 50)\n"
               "  --no-check       do not compare with the CPU references\n"
               "  --no-time        do not time the kernels\n"
               "  --plan           print the launches (kernels, grids, arguments) and exit; needs no GPU\n"
               "  --require-gpu    exit with status 77 (not 0) when there is no CUDA driver or GPU\n"
               "  -h, --help       this text\n"
               "exit status: 0 all checks passed (or no driver/GPU: \"no CUDA driver/GPU: ...\"),\n"
               "             1 a check failed or a runtime error, 2 bad command line, 77 see --require-gpu\n");
}

/// Parses a whole decimal integer in [lo, hi], or returns false.
bool parseInt(const std::string &s, int64_t lo, int64_t hi, int64_t &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

/// Parses argv into `o`; on an error prints it and returns false.
bool parseArgs(int argc, char **argv, Options &o, bool &help) {
  help = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &v) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tle-engine: %s needs a value\n", a.c_str());
        return false;
      }
      v = argv[++i];
      return true;
    };
    auto intArg = [&](int64_t lo, int64_t hi, auto &dst) {
      std::string v;
      int64_t x;
      if (!value(v))
        return false;
      if (!parseInt(v, lo, hi, x)) {
        std::fprintf(stderr, "tle-engine: %s takes an integer in [%lld, %lld], not '%s'\n", a.c_str(),
                     (long long)lo, (long long)hi, v.c_str());
        return false;
      }
      dst = static_cast<std::remove_reference_t<decltype(dst)>>(x);
      return true;
    };
    const int64_t kMax = int64_t(1) << 30;
    bool ok = true;
    if (a == "-h" || a == "--help") {
      help = true;
      return true;
    } else if (a == "--batch") {
      ok = intArg(1, kMax, o.block.batch);
    } else if (a == "--seq") {
      ok = intArg(1, kMax, o.block.seq);
    } else if (a == "--hidden") {
      ok = intArg(1, kMax, o.block.hidden);
    } else if (a == "--heads") {
      ok = intArg(1, kMax, o.block.heads);
    } else if (a == "--head-dim") {
      ok = intArg(1, kMax, o.block.headDim);
    } else if (a == "--ffn") {
      ok = intArg(1, kMax, o.block.ffn);
    } else if (a == "--device") {
      ok = intArg(0, 1024, o.device);
    } else if (a == "--seed") {
      ok = intArg(0, INT64_MAX, o.seed);
    } else if (a == "--check-rows") {
      ok = intArg(0, INT64_MAX, o.checkRows);
    } else if (a == "--warmup") {
      ok = intArg(0, 1000000, o.warmup);
    } else if (a == "--reps") {
      ok = intArg(1, 1000000, o.reps);
    } else if (a == "--eps") {
      std::string v;
      ok = value(v);
      char *end = nullptr;
      if (ok) {
        o.block.eps = std::strtof(v.c_str(), &end);
        if (v.empty() || *end || !(o.block.eps > 0.f) || !std::isfinite(o.block.eps)) {
          std::fprintf(stderr, "tle-engine: --eps takes a positive number, not '%s'\n", v.c_str());
          ok = false;
        }
      }
    } else if (a == "--kernel-dir") {
      ok = value(o.kernelDir);
    } else if (a == "--arch") {
      ok = value(o.arch);
    } else if (a == "--no-check") {
      o.check = false;
    } else if (a == "--no-time") {
      o.time = false;
    } else if (a == "--plan") {
      o.planOnly = true;
    } else if (a == "--require-gpu") {
      o.requireGpu = true;
    } else {
      std::fprintf(stderr, "tle-engine: unknown option '%s' (see --help)\n", a.c_str());
      ok = false;
    }
    if (!ok)
      return false;
  }
  std::string why = validate(o.block);
  if (!why.empty()) {
    std::fprintf(stderr, "tle-engine: unsupported shape: %s\n", why.c_str());
    return false;
  }
  return true;
}

std::string describeArg(const Arg &a, const std::vector<BufferSpec> &specs) {
  switch (a.kind) {
  case Arg::Buffer:
    return std::string(specs[a.buf].name) + (a.offset ? "+" + std::to_string(a.offset) : "");
  case Arg::I32:
    return std::to_string(a.i);
  case Arg::F32: {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%gf", double(a.f));
    return buf;
  }
  }
  return "?";
}

void printConfig(const Options &o) {
  const BlockConfig &c = o.block;
  std::printf("block: batch %d, seq %d (%lld tokens), hidden %d, heads %d x head_dim %d, ffn %d, eps %g; "
              "fp16 activations and weights, fp32 accumulation\n",
              c.batch, c.seq, (long long)c.tokens(), c.hidden, c.heads, c.headDim, c.ffn, double(c.eps));
}

void printPlan(const Options &o) {
  std::vector<BufferSpec> specs = bufferSpecs(o.block);
  for (const Step &s : planBlock(o.block)) {
    std::printf("%-13s %-15s grid (%u, %u, %u) args (", s.label.c_str(), s.kernel.c_str(), s.grid[0], s.grid[1],
                s.grid[2]);
    for (size_t i = 0; i < s.args.size(); ++i)
      std::printf("%s%s", i ? ", " : "", describeArg(s.args[i], specs).c_str());
    std::printf(")\n");
  }
}

bool fileExists(const std::string &p) { return std::ifstream(p).good(); }

/// The engine's device state: modules, kernels, buffers, one stream.
class Engine {
public:
  Engine(const Options &o, rt::Device &dev) : o_(o), dev_(dev), stream_(dev), specs_(bufferSpecs(o.block)) {
    steps_ = planBlock(o.block);
    std::string arch = o.arch.empty() ? dev.arch() : o.arch;
    for (const Step &s : steps_) {
      if (kernels_.count(s.kernel))
        continue;
      std::string base = o.kernelDir + "/" + s.kernel + "." + arch;
      std::string path = fileExists(base + ".cubin") ? base + ".cubin" : base + ".ptx";
      if (!fileExists(path))
        throw rt::Error("no module for kernel '" + s.kernel + "': neither " + base + ".cubin nor " + base +
                        ".ptx exists (build the engine's kernels, or pass --kernel-dir / --arch; they are "
                        "compiled for sm_90a)");
      modules_.push_back(std::make_unique<rt::Module>(rt::Module::fromFile(dev, path)));
      const rt::ModuleInfo &info = modules_.back()->info();
      if (info.kernels.size() != 1)
        throw rt::Error(path + ": expected one kernel in the module, found " + std::to_string(info.kernels.size()));
      kernels_.emplace(s.kernel, modules_.back()->kernel(info.kernels[0].name));
    }
    for (const BufferSpec &b : specs_)
      buffers_.emplace_back(dev, b.bytes());
  }

  const std::vector<Step> &steps() const { return steps_; }

  /// Uploads every buffer of `st`.
  void upload(const HostState &st) {
    for (size_t b = 0; b < specs_.size(); ++b)
      upload(Buf(b), st[b]);
  }
  void upload(Buf b, const std::vector<float> &v) {
    if (specs_[b].dtype == DType::F32) {
      buffers_[b].copyFromHost(v.data(), v.size() * 4);
      return;
    }
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      h[i] = floatToHalf(v[i]);
    buffers_[b].copyFromHost(h);
  }
  /// Downloads buffer `b` into `v`.
  void download(Buf b, std::vector<float> &v) {
    v.resize(specs_[b].elems);
    if (specs_[b].dtype == DType::F32) {
      buffers_[b].copyToHost(v.data(), v.size() * 4);
      return;
    }
    std::vector<uint16_t> h(v.size());
    buffers_[b].copyToHost(h);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = halfToFloat(h[i]);
  }

  /// Launches step `s` on the engine's stream, checking each argument against the kernel's
  /// parameter types (the count, pointer vs scalar, exact scalar type) first.
  void launch(const Step &s) {
    const rt::Kernel &k = kernels_.at(s.kernel);
    const rt::KernelInfo &info = k.info();
    rt::checkArgCount(info, s.args.size());
    std::vector<uint64_t> slots(s.args.size());
    std::vector<void *> ptrs(s.args.size());
    for (size_t i = 0; i < s.args.size(); ++i) {
      const Arg &a = s.args[i];
      switch (a.kind) {
      case Arg::Buffer: {
        rt::checkArgType(info, i, rt::argDescOf<rt::DevicePtr>());
        size_t elem = specs_[a.buf].dtype == DType::F16 ? 2 : 4;
        if (a.offset < 0 || size_t(a.offset) >= specs_[a.buf].elems)
          throw rt::ArgumentError(s.label + ": offset " + std::to_string(a.offset) + " is outside " +
                                  specs_[a.buf].name);
        slots[i] = buffers_[a.buf].ptr(size_t(a.offset) * elem).address;
        break;
      }
      case Arg::I32:
        rt::checkArgType(info, i, rt::argDescOf<int32_t>());
        std::memcpy(&slots[i], &a.i, 4);
        break;
      case Arg::F32:
        rt::checkArgType(info, i, rt::argDescOf<float>());
        std::memcpy(&slots[i], &a.f, 4);
        break;
      }
      ptrs[i] = &slots[i];
    }
    k.launchRaw(rt::Grid{s.grid[0], s.grid[1], s.grid[2]}, stream_, ptrs.data(), ptrs.size());
  }

  rt::Stream &stream() { return stream_; }
  const rt::Kernel &kernel(const std::string &name) const { return kernels_.at(name); }
  size_t numBuffers() const { return specs_.size(); }

  /// Captures the whole block (every step, in order) into a CUDA graph on the engine's stream:
  /// the kernels are loaded already (the constructor), so the capture only records launches.
  rt::Graph captureBlock() {
    rt::Graph::beginCapture(stream_);
    try {
      for (const Step &s : steps_)
        launch(s);
    } catch (...) {
      rt::Graph::endCapture(stream_);
      throw;
    }
    return rt::Graph::endCapture(stream_);
  }

private:
  const Options &o_;
  rt::Device &dev_;
  rt::Stream stream_;
  std::vector<BufferSpec> specs_;
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<rt::Module>> modules_;
  std::map<std::string, rt::Kernel> kernels_;
  std::vector<rt::DeviceBuffer> buffers_;
};

/// Runs the block once, step by step; checks each step against its reference. Returns the
/// number of failed steps.
int runAndCheck(const Options &o, Engine &e) {
  HostState state = initialState(o.block, o.seed);
  e.upload(state);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int failed = 0;
  if (o.check)
    std::printf("\n%-13s %-15s %10s %11s %11s  %s\n", "step", "kernel", "checked", "max_abs", "max_rel", "result");
  for (const Step &s : e.steps()) {
    e.launch(s);
    e.stream().synchronize();
    if (!o.check)
      continue;
    HostState before = state;
    for (Buf b : s.outputs)
      e.download(b, state[b]);
    auto t0 = std::chrono::steady_clock::now();
    CheckResult r = checkStep(s, o.block, before, state, o.checkRows, threads);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-13s %-15s %10zu %11.3e %11.3e  %s  (reference %.1f s)\n", s.label.c_str(), s.kernel.c_str(),
                r.checked, r.maxAbs, r.maxRel, r.pass() ? "PASS" : "FAIL", secs);
    if (!r.pass()) {
      ++failed;
      std::printf("  %zu elements outside the tolerance; first: %s\n", r.bad, r.firstBad.c_str());
    }
    std::fflush(stdout);
  }
  return failed;
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + double(v[n / 2]));
}

/// Runs the block once from the initial state by eager launches and once as a replay of `graph`,
/// and prints the largest difference between the two final states (0 for deterministic kernels).
/// Returns false when they differ.
bool compareGraph(const Options &o, Engine &e, rt::Graph &graph) {
  HostState init = initialState(o.block, o.seed), eager(e.numBuffers()), replayed(e.numBuffers());
  e.upload(init);
  for (const Step &s : e.steps())
    e.launch(s);
  e.stream().synchronize();
  for (size_t b = 0; b < e.numBuffers(); ++b)
    e.download(Buf(b), eager[b]);
  e.upload(init);
  graph.launch(e.stream());
  e.stream().synchronize();
  double maxAbs = 0;
  for (size_t b = 0; b < e.numBuffers(); ++b) {
    e.download(Buf(b), replayed[b]);
    for (size_t i = 0; i < eager[b].size(); ++i)
      maxAbs = std::max(maxAbs, double(std::fabs(eager[b][i] - replayed[b][i])));
  }
  std::printf("CUDA graph of the block (%zu kernels, one cuGraphLaunch): final state %s eager launches "
              "(max |difference| %.3e)\n",
              e.steps().size(), maxAbs == 0 ? "identical to" : "DIFFERS from", maxAbs);
  return maxAbs == 0;
}

/// Times every step (warm-up, then the median of --reps launches, each between two events), the
/// whole block launched step by step and the whole block replayed as one CUDA graph, and prints
/// the table. Returns false when the graph's result differs from the eager launches'.
bool timeSteps(const Options &o, rt::Device &dev, Engine &e) {
  rt::Graph graph = e.captureBlock();
  bool graphOk = compareGraph(o, e, graph);
  std::printf("\ntimes: median of %d launches after %d warm-up launches, CUDA events on one stream\n", o.reps,
              o.warmup);
  std::printf("%-13s %-15s %-18s %5s %10s %10s %10s\n", "step", "kernel", "grid", "regs", "ms", "TFLOP/s", "GB/s");
  std::vector<rt::Event> starts, ends;
  for (int i = 0; i < o.reps; ++i) {
    starts.emplace_back(dev);
    ends.emplace_back(dev);
  }
  auto measure = [&](const std::function<void()> &body) {
    for (int i = 0; i < o.warmup; ++i)
      body();
    for (int i = 0; i < o.reps; ++i) {
      starts[size_t(i)].record(e.stream());
      body();
      ends[size_t(i)].record(e.stream());
    }
    e.stream().synchronize();
    std::vector<float> ms;
    for (int i = 0; i < o.reps; ++i)
      ms.push_back(rt::Event::elapsedMs(starts[size_t(i)], ends[size_t(i)]));
    return median(ms);
  };
  double sum = 0, flops = 0;
  for (const Step &s : e.steps()) {
    double ms = measure([&] { e.launch(s); });
    sum += ms;
    flops += s.flops;
    char grid[40], tf[16] = "-", gb[16];
    std::snprintf(grid, sizeof grid, "(%u, %u, %u)", s.grid[0], s.grid[1], s.grid[2]);
    if (s.flops > 0)
      std::snprintf(tf, sizeof tf, "%.1f", s.flops / (ms * 1e-3) / 1e12);
    std::snprintf(gb, sizeof gb, "%.0f", s.bytes / (ms * 1e-3) / 1e9);
    int regs = -1;
    try {
      regs = e.kernel(s.kernel).numRegisters();
    } catch (const rt::Error &) {
    }
    std::printf("%-13s %-15s %-18s %5d %10.4f %10s %10s\n", s.label.c_str(), s.kernel.c_str(), grid, regs, ms, tf, gb);
  }
  double block = measure([&] {
    for (const Step &s : e.steps())
      e.launch(s);
  });
  std::printf("%-13s %-15s %-18s %5s %10.4f %10.1f %10s\n", "sum of steps", "", "", "", sum,
              flops / (sum * 1e-3) / 1e12, "");
  double replay = measure([&] { graph.launch(e.stream()); });
  std::printf("%-13s %-15s %-18s %5s %10.4f %10.1f %10s\n", "whole block", "(back to back)", "", "", block,
              flops / (block * 1e-3) / 1e12, "");
  std::printf("%-13s %-15s %-18s %5s %10.4f %10.1f %10s\n", "whole block", "(CUDA graph)", "", "", replay,
              flops / (replay * 1e-3) / 1e12, "");
  std::printf("TFLOP/s counts the matmuls' 2*M*N*K and attention's causal half of 4*B*H*S^2*D; GB/s the ideal "
              "bytes read and written.\n");
  return graphOk;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  bool help = false;
  o.kernelDir = defaultKernelDir();
  if (!parseArgs(argc, argv, o, help)) {
    std::fprintf(stderr, "run 'tle-engine --help' for the options\n");
    return 2;
  }
  if (help) {
    usage(stdout);
    return 0;
  }
  printConfig(o);
  if (o.planOnly) {
    printPlan(o);
    return 0;
  }
  std::string reason;
  if (!rt::gpuAvailable(&reason)) {
    std::printf("no CUDA driver/GPU: %s\n", reason.c_str());
    std::printf("tle-engine: nothing was run (exit status %d)\n", o.requireGpu ? kExitSkipped : 0);
    return o.requireGpu ? kExitSkipped : 0;
  }
  try {
    rt::Device dev(o.device);
    std::printf("device %d: %s (%s, %d SMs), driver %d, kernels from %s\n", o.device, dev.name().c_str(),
                dev.arch().c_str(), dev.smCount(), rt::driverVersion(), o.kernelDir.c_str());
    Engine e(o, dev);
    int failed = runAndCheck(o, e);
    bool graphOk = !o.time || timeSteps(o, dev, e);
    if (!o.check) {
      std::printf("\nchecks skipped (--no-check)\n");
      return 0;
    }
    if (failed) {
      std::printf("\nFAILED: %d of %zu steps outside their tolerance\n", failed, e.steps().size());
      return 1;
    }
    if (!graphOk) {
      std::printf("\nFAILED: the block replayed as a CUDA graph differs from its eager launches\n");
      return 1;
    }
    std::printf("\nPASSED: all %zu steps within their tolerance\n", e.steps().size());
    return 0;
  } catch (const rt::NoDriverError &err) {
    std::printf("no CUDA driver/GPU: %s\n", err.what());
    std::printf("tle-engine: nothing was run (exit status %d)\n", o.requireGpu ? kExitSkipped : 0);
    return o.requireGpu ? kExitSkipped : 0;
  } catch (const std::exception &err) {
    std::fprintf(stderr, "tle-engine: error: %s\n", err.what());
    return 1;
  }
}
