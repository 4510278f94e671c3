// tle-bench-softmax: times tlec's softmax cubin against a device-to-device copy of the same bytes, and writes JSON.
//
// Usage: tle-bench-softmax [--cubin PATH] [--rows 4096] [--cols 4096] [--reps 200] [--warmup 20]
//                          [--flush-mib 256] [--device 0] [--out result.json]
// PATH defaults to <build>/examples/softmax4096.<arch>.cubin (.ptx when there is no cubin).
// Method: the output is checked against a float64 CPU reference first (exit 1 on mismatch). Then,
// interleaving the variants round by round, each repetition zeroes a --flush-mib buffer (evicting
// the 50 MiB L2) with cuMemsetD32Async, records a CUDA event, runs the operation, records another;
// the median over --reps repetitions is reported. Variants: the kernel with grid = min(rows,
// 4 * SMs) and with grid = rows, and cuMemcpyDtoDAsync of rows*cols*4 bytes (the bytes the kernel
// reads; it writes as many). GB/s = (bytes read + bytes written) / median time.
#include "tle/Runtime/Runtime.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace tle::rt;
using nlohmann::json;

namespace {

struct Options {
  std::string cubin;
  int64_t rows = 4096, cols = 4096;
  int reps = 200, warmup = 20;
  int64_t flushMiB = 256;
  int device = 0;
  std::string out;
};

[[noreturn]] void usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: tle-bench-softmax [--cubin PATH] [--rows N] [--cols N] [--reps N] "
               "[--warmup N] [--flush-mib N] [--device N] [--out FILE.json]\n");
  std::exit(status);
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tle-bench-softmax: %s needs a value\n", a.c_str());
        usage(2);
      }
      return argv[++i];
    };
    if (a == "--cubin")
      o.cubin = value();
    else if (a == "--rows")
      o.rows = std::stoll(value());
    else if (a == "--cols")
      o.cols = std::stoll(value());
    else if (a == "--reps")
      o.reps = std::stoi(value());
    else if (a == "--warmup")
      o.warmup = std::stoi(value());
    else if (a == "--flush-mib")
      o.flushMiB = std::stoll(value());
    else if (a == "--device")
      o.device = std::stoi(value());
    else if (a == "--out")
      o.out = value();
    else if (a == "-h" || a == "--help")
      usage(0);
    else {
      std::fprintf(stderr, "tle-bench-softmax: unknown argument '%s'\n", a.c_str());
      usage(2);
    }
  }
  if (o.rows < 1 || o.cols < 1 || o.reps < 1 || o.warmup < 0 || o.flushMiB < 0) {
    std::fprintf(stderr, "tle-bench-softmax: rows, cols and reps must be positive\n");
    usage(2);
  }
  return o;
}

std::string exeDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string p(buf, size_t(n));
  return p.substr(0, p.rfind('/'));
}

std::string defaultCubin(const Device &dev) {
  std::string dir = exeDir() + "/../examples";
  std::vector<std::string> archs = {dev.arch()};
  if (dev.computeMajor() == 8 && dev.computeMinor() != 0)
    archs.push_back("sm_80");
  for (const std::string &arch : archs)
    for (const char *ext : {"cubin", "ptx"}) {
      std::string p = fmt::format("{}/softmax4096.{}.{}", dir, arch, ext);
      if (access(p.c_str(), R_OK) == 0)
        return p;
    }
  return fmt::format("{}/softmax4096.{}.cubin", dir, dev.arch());
}

struct Stats {
  double median = 0, min = 0, max = 0, mean = 0, p10 = 0, p90 = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    double pos = f * double(v.size() - 1);
    size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
  };
  s.median = q(0.5);
  s.p10 = q(0.1);
  s.p90 = q(0.9);
  s.min = v.front();
  s.max = v.back();
  for (double x : v)
    s.mean += x;
  s.mean /= double(v.size());
  return s;
}

struct Variant {
  std::string name;
  int64_t grid = 0; // 0 for the copy
  std::function<void()> run;
  std::vector<double> ms;
};

} // namespace

int main(int argc, char **argv) {
  Options opt = parseOptions(argc, argv);
  std::string reason;
  if (!gpuAvailable(&reason)) {
    std::fprintf(stderr, "SKIPPED: tle-bench-softmax needs a CUDA GPU: %s\n", reason.c_str());
    return 77;
  }
  try {
    Device dev(opt.device);
    if (opt.cubin.empty())
      opt.cubin = defaultCubin(dev);
    Module mod = Module::fromFile(dev, opt.cubin);
    Kernel k = mod.kernel("softmax_kernel");
    const KernelInfo &ki = k.info();
    const int64_t blockSize = ki.constexprInt("BLOCK_SIZE").value_or(0);
    if (blockSize < opt.cols)
      throw Error(fmt::format("{}: BLOCK_SIZE {} is smaller than n_cols {}; compile softmax.tle "
                              "with BLOCK_SIZE >= n_cols (e.g. -s \"..., 4096\")",
                              opt.cubin, blockSize, opt.cols));
    const int64_t rows = opt.rows, cols = opt.cols, stride = (cols + 15) / 16 * 16;
    const size_t logicalBytes = size_t(rows * cols) * 4, bufferBytes = size_t(rows * stride) * 4;
    std::printf("tle-bench-softmax: %s (%d SMs, %s), driver %d\n", dev.name().c_str(), dev.smCount(),
                dev.arch().c_str(), driverVersion());
    std::printf("  %s: %s, num_warps %d, shared %u B, %d regs, BLOCK_SIZE %lld\n", opt.cubin.c_str(),
                ki.name.c_str(), ki.numWarps, ki.sharedBytes, k.numRegisters(), (long long)blockSize);

    // Inputs and the float64 reference.
    std::vector<float> in(size_t(rows * stride), 0.0f);
    std::mt19937 rng(20240607);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        in[size_t(r * stride + c)] = dist(rng);
    std::vector<double> want(in.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = &in[size_t(r * stride)];
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t c = 0; c < cols; ++c)
        m = std::max(m, double(row[c]));
      for (int64_t c = 0; c < cols; ++c)
        sum += std::exp(double(row[c]) - m);
      for (int64_t c = 0; c < cols; ++c)
        want[size_t(r * stride + c)] = std::exp(double(row[c]) - m) / sum;
    }

    Stream stream(dev);
    DeviceBuffer din = DeviceBuffer::fromHost(dev, in);
    DeviceBuffer dout(dev, bufferBytes), dcopy(dev, bufferBytes);
    DeviceBuffer flush(dev, size_t(opt.flushMiB) << 20);

    std::vector<Variant> variants;
    const int64_t gridPersistent = std::min<int64_t>(rows, int64_t(dev.smCount()) * 4);
    for (int64_t grid : {gridPersistent, rows}) {
      if (!variants.empty() && grid == variants.back().grid)
        continue;
      variants.push_back({fmt::format("tle softmax (grid {})", grid), grid, [&, grid] {
                            k.launch(unsigned(grid), stream, dout, din, int32_t(stride),
                                     int32_t(stride), int32_t(rows), int32_t(cols));
                          }, {}});
    }
    variants.push_back({"cuMemcpyDtoD (same bytes)", 0,
                        [&] { dcopy.copyFromDeviceAsync(din, logicalBytes, stream); }, {}});

    // Correctness of every kernel variant before timing.
    json correctness = json::array();
    bool allCorrect = true;
    for (Variant &v : variants) {
      if (!v.grid)
        continue;
      dout.fillBytes(0xff);
      v.run();
      stream.synchronize();
      std::vector<float> out = dout.toHost<float>();
      double maxAbs = 0, maxRel = 0;
      size_t bad = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          size_t i = size_t(r * stride + c);
          double err = std::fabs(double(out[i]) - want[i]);
          if (!std::isfinite(double(out[i])))
            err = std::numeric_limits<double>::infinity();
          maxAbs = std::max(maxAbs, err);
          maxRel = std::max(maxRel, want[i] > 0 ? err / want[i] : err);
          bad += !(err <= 2e-6 + 1e-5 * want[i]);
        }
      bool ok = bad == 0;
      allCorrect &= ok;
      std::printf("  check %-28s max_abs %.3e max_rel %.3e  %s\n", v.name.c_str(), maxAbs, maxRel,
                  ok ? "PASS" : "FAIL");
      correctness.push_back({{"name", v.name}, {"grid", v.grid}, {"max_abs", maxAbs},
                             {"max_rel", maxRel}, {"bad_elements", bad}, {"pass", ok}});
    }

    json constexprs = json::object();
    for (const auto &[name, text] : ki.constexprs)
      constexprs[name] = json::parse(text);
    json result = {
        {"benchmark", "softmax"},
        {"shape", {rows, cols}},
        {"row_stride", stride},
        {"dtype", "fp32"},
        {"bytes_read", logicalBytes},
        {"bytes_written", logicalBytes},
        {"device",
         {{"name", dev.name()},
          {"ordinal", dev.ordinal()},
          {"compute_capability", fmt::format("{}.{}", dev.computeMajor(), dev.computeMinor())},
          {"arch", dev.arch()},
          {"sm_count", dev.smCount()},
          {"l2_bytes", dev.l2CacheBytes()},
          {"driver_version", driverVersion()}}},
        {"cubin", opt.cubin},
        {"kernel",
         {{"name", ki.name},
          {"num_warps", ki.numWarps},
          {"block", ki.block},
          {"shared_bytes", ki.sharedBytes},
          {"registers", k.numRegisters()},
          {"signature", ki.signature()},
          {"constexprs", constexprs},
          {"compiler", mod.info().compiler}}},
        {"method",
         {{"warmup", opt.warmup},
          {"reps", opt.reps},
          {"l2_flush_bytes", flush.bytes()},
          {"timer", "cuEventRecord before and after each operation on one stream; cuMemsetD32Async "
                    "of the flush buffer before each repetition; variants interleaved per round; "
                    "median reported"}}},
        {"correctness", correctness},
        {"correct", allCorrect},
        {"results", json::array()},
    };
    auto writeJson = [&] {
      if (opt.out.empty())
        return;
      std::ofstream f(opt.out);
      f << result.dump(2) << "\n";
      if (!f)
        throw Error("cannot write " + opt.out);
      std::printf("  wrote %s\n", opt.out.c_str());
    };
    if (!allCorrect) {
      std::printf("tle-bench-softmax: the kernel's output is wrong; not timing it\n");
      writeJson();
      return 1;
    }

    // Timing: warm-up, then interleaved rounds.
    for (int w = 0; w < opt.warmup; ++w)
      for (Variant &v : variants) {
        flush.fill32Async(0, stream);
        v.run();
      }
    stream.synchronize();
    const size_t nv = variants.size();
    std::vector<Event> starts, ends;
    for (size_t i = 0; i < nv * size_t(opt.reps); ++i) {
      starts.emplace_back(dev);
      ends.emplace_back(dev);
    }
    for (int r = 0; r < opt.reps; ++r)
      for (size_t vi = 0; vi < nv; ++vi) {
        size_t e = size_t(r) * nv + vi;
        flush.fill32Async(uint32_t(r), stream);
        starts[e].record(stream);
        variants[vi].run();
        ends[e].record(stream);
      }
    stream.synchronize();
    for (int r = 0; r < opt.reps; ++r)
      for (size_t vi = 0; vi < nv; ++vi) {
        size_t e = size_t(r) * nv + vi;
        variants[vi].ms.push_back(Event::elapsedMs(starts[e], ends[e]));
      }

    const double traffic = 2.0 * double(logicalBytes);
    const Stats copy = stats(variants.back().ms);
    const double copyGbps = traffic / (copy.median * 1e-3) / 1e9;
    std::printf("  %-28s %8s %10s %10s %10s %9s %8s\n", "variant", "grid", "median ms", "p10 ms",
                "p90 ms", "GB/s", "vs copy");
    for (Variant &v : variants) {
      Stats s = stats(v.ms);
      double gbps = traffic / (s.median * 1e-3) / 1e9;
      std::printf("  %-28s %8lld %10.4f %10.4f %10.4f %9.1f %8.3f\n", v.name.c_str(),
                  (long long)v.grid, s.median, s.p10, s.p90, gbps, gbps / copyGbps);
      json r = {{"name", v.name},
                {"kind", v.grid ? "tle" : "copy"},
                {"median_ms", s.median},
                {"min_ms", s.min},
                {"max_ms", s.max},
                {"mean_ms", s.mean},
                {"p10_ms", s.p10},
                {"p90_ms", s.p90},
                {"gbps", gbps},
                {"bw_ratio_to_copy", gbps / copyGbps}};
      if (v.grid)
        r["grid"] = v.grid;
      result["results"].push_back(r);
    }
    writeJson();
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench-softmax: %s\n", e.what());
    return 1;
  }
}
