// tle-conformance: builds the suite (every family's batches), compiles each batch's kernel for
// the CPU target (ORC JIT) or the GPU (cubin through libtle_rt), runs it, and checks every case
// against its reference. Prints "N cases, M passed"; exits 1 on any unexpected result.
//
//   tle-conformance [--target cpu|gpu] [--filter REGEX] [--sample K] [-j N] [--list] [-v]
//                   [--report FILE.md] [--corrupt] [--compile-only [--arch sm_80|sm_90a]]
#include "Harness.h"

#include "tle/Driver/Compiler.h"
#include "tle/IR/IR.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/CPU/CPUBackend.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <iomanip>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

using namespace tle;
using namespace tle::conformance;

namespace {

enum class Status { Pass, Fail, XFail, XPass, Skip };

struct Result {
  std::string name;
  Status status = Status::Pass;
  std::string message; ///< why it failed (or the known failure's reason)
};

struct Options {
  std::string target = "cpu";
  std::string filter;
  unsigned sample = 1;
  unsigned jobs = 0;
  bool list = false, verbose = false;
  /// Self-test of the checks: change the first expected element of every case; each case must
  /// then fail (reported as a pass), so a check that cannot see a wrong value is a failure.
  bool corrupt = false;
  std::string report;
  /// GPU: compile every kernel to a cubin for `arch` without a device and launch nothing (cases
  /// of kernels that compile are skipped; those of kernels that do not compile fail).
  bool compileOnly = false;
  std::string arch = "sm_90a";
};

/// Whether `got` (element gi of the run's buffer) matches `want` (element wi) under `t`.
bool matches(const Buffer &got, size_t gi, const Buffer &want, size_t wi, const Tol &t) {
  if (!isFloatT(want.dtype))
    return got.getI(gi) == want.getI(wi);
  long double g = got.getF(gi), w = want.getF(wi);
  if (std::isnan(w) || std::isnan(g))
    return std::isnan(w) && std::isnan(g);
  if (std::isinf(w) || std::isinf(g))
    return g == w;
  if (t.kind == Tol::Exact || (t.kind == Tol::Ulp && t.ulps == 0))
    return g == w && (!t.zeroSign || w != 0 || std::signbit(g) == std::signbit(w));
  if (t.kind == Tol::Ulp) {
    FloatFormat f = want.dtype == DType::F16 ? kF16 : want.dtype == DType::BF16 ? kBF16f
                    : want.dtype == DType::F32 ? kF32f : want.dtype == DType::F8E4M3 ? FloatFormat{4, -6, 8}
                    : want.dtype == DType::F8E5M2 ? FloatFormat{3, -14, 15} : kF64f;
    int e = 0;
    std::frexp(std::max(std::fabs(w), std::fabs(g)), &e);
    long double ulp = std::ldexp(1.0L, std::max(e - 1, f.emin) - (f.p - 1));
    return std::fabs(g - w) <= t.ulps * ulp && (!t.zeroSign || g != 0 || w != 0 || std::signbit(g) == std::signbit(w));
  }
  return std::fabs(g - w) <= t.abs + t.rel * std::fabs(w);
}

/// A compiled batch on one target.
class Executable {
public:
  virtual ~Executable() = default;
  /// Runs with `args` (buffers updated in place). Throws on a launch failure.
  virtual void run(const Run &r, std::vector<Arg> &args) = 0;
};

class CpuExecutable : public Executable {
public:
  explicit CpuExecutable(std::unique_ptr<cpu::Kernel> k) : k_(std::move(k)) {}
  void run(const Run &r, std::vector<Arg> &args) override {
    std::vector<cpu::ArgValue> values;
    const auto &params = k_->params();
    if (params.size() != args.size())
      throw std::runtime_error("the kernel has " + std::to_string(params.size()) + " runtime parameters, the run passes " +
                               std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i) {
      Arg &a = args[i];
      if (a.isBuffer) {
        auto *p = reinterpret_cast<unsigned char *>(a.buffer.bytes.data());
        if (a.buffer.byteOffset)
          values.push_back(cpu::ArgValue::ptr(reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(p) + uint64_t(a.buffer.byteOffset))));
        else
          values.push_back(cpu::ArgValue::ptr(p, a.buffer.bytes.size()));
      } else {
        values.push_back(cpu::ArgValue::scalarBits(a.dtype, a.bits));
      }
    }
    cpu::RunOptions ro;
    ro.threads = r.threads;
    k_->run({r.grid[0], r.grid[1], r.grid[2]}, values, ro);
  }

private:
  std::unique_ptr<cpu::Kernel> k_;
};

std::mutex gpuMutex; // libtle_rt calls are serialised; compilation is not

class GpuExecutable : public Executable {
public:
  GpuExecutable(rt::Device dev, rt::Module m, rt::Kernel k) : dev_(dev), mod_(std::move(m)), k_(std::move(k)) {}
  void run(const Run &r, std::vector<Arg> &args) override {
    std::lock_guard<std::mutex> lock(gpuMutex);
    std::vector<rt::DeviceBuffer> bufs(args.size());
    std::vector<uint64_t> slots(args.size());
    std::vector<void *> ptrs(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].isBuffer) {
        Buffer &b = args[i].buffer;
        bufs[i] = rt::DeviceBuffer(dev_, std::max<size_t>(b.bytes.size(), 16));
        if (!b.bytes.empty())
          bufs[i].copyFromHost(b.bytes.data(), b.bytes.size());
        slots[i] = bufs[i].address() + uint64_t(b.byteOffset);
      } else {
        slots[i] = args[i].bits;
      }
      ptrs[i] = &slots[i];
    }
    rt::Stream stream(dev_);
    k_.launchRaw(rt::Grid(r.grid[0], r.grid[1], r.grid[2]), stream, ptrs.data(), ptrs.size());
    stream.synchronize();
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].isBuffer && !args[i].buffer.bytes.empty())
        bufs[i].copyToHost(args[i].buffer.bytes.data(), args[i].buffer.bytes.size());
  }

private:
  rt::Device dev_;
  rt::Module mod_;
  rt::Kernel k_;
};

/// Compiles `b` to the tile stage (both targets: the front end and expected errors).
std::unique_ptr<ir::Function> compileTile(const Batch &b, SourceManager &sm, DiagnosticEngine &diags) {
  uint32_t file = sm.addFile(b.name + ".tle", b.source);
  driver::CompileOptions o;
  if (!b.signature.empty())
    o.signature = b.signature;
  o.kernel = b.kernel;
  o.numWarps = b.numWarps;
  return driver::compileToTile(file, o, diags);
}

/// Compiles for the target; on failure returns nullptr with the diagnostics in `err`.
std::unique_ptr<Executable> compileFor(const Options &opt, const Batch &b, const rt::Device *dev, std::string &err) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream es;
  diags.setStream(es);
  auto fn = compileTile(b, sm, diags);
  if (!fn) {
    err = es.str();
    return nullptr;
  }
  if (opt.target == "cpu") {
    auto k = cpu::Kernel::compile(*fn, diags);
    err = es.str();
    if (!k)
      return nullptr;
    return std::make_unique<CpuExecutable>(std::move(k));
  }
  // GPU: the tlec pipeline from a temporary source file to a cubin for the device's arch.
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp");
  std::string src = dir + "/tle-conf-XXXXXX.tle", out = dir + "/tle-conf-XXXXXX.cubin";
  int fd1 = mkstemps(src.data(), 4), fd2 = mkstemps(out.data(), 6);
  if (fd1 < 0 || fd2 < 0) {
    err = "cannot create temporary files";
    return nullptr;
  }
  close(fd1);
  close(fd2);
  { std::ofstream(src) << b.source; }
  driver::CompileOptions co;
  co.input = src;
  co.output = out;
  co.emit = driver::Emit::Cubin;
  co.kernel = b.kernel;
  if (!b.signature.empty())
    co.signature = b.signature;
  co.numWarps = b.numWarps;
  co.arch = dev ? dev->arch() : opt.arch;
  std::ostringstream cout_, cerr_;
  int rc = driver::compile(co, cout_, cerr_);
  std::ifstream in(out, std::ios::binary);
  std::string cubin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(src.c_str());
  unlink(out.c_str());
  if (rc != 0) {
    err = cerr_.str();
    return nullptr;
  }
  if (!dev) { // --compile-only
    err.clear();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(gpuMutex);
  rt::Module m = rt::Module::fromImage(*dev, cubin.data(), cubin.size(), b.name);
  std::string kname = b.kernel.empty() ? fn->name : b.kernel;
  rt::Kernel k = m.kernel(kname);
  return std::make_unique<GpuExecutable>(*dev, std::move(m), std::move(k));
}

const KnownFailure *knownFailure(const std::string &name, const std::string &target) {
  for (const KnownFailure &k : knownFailures())
    if (name.rfind(k.prefix, 0) == 0 && (std::string(k.target) == "any" || k.target == target))
      return &k;
  return nullptr;
}

/// Runs one batch; appends one result per case.
void runBatch(const Options &opt, const Batch &b, const rt::Device *dev, std::vector<Result> &out) {
  auto finish = [&](const std::string &name, bool ok, std::string msg, bool skip = false) {
    Result r{name, Status::Pass, std::move(msg)};
    const KnownFailure *kf = knownFailure(name, opt.target);
    if (skip)
      r.status = Status::Skip;
    else if (kf && ok) {
      r.status = Status::XPass;
      r.message = std::string("listed as a known failure, but passes: ") + kf->reason;
    } else if (kf) {
      r.status = Status::XFail;
      r.message = kf->reason + std::string(" [") + r.message + "]";
    } else
      r.status = ok ? Status::Pass : Status::Fail;
    out.push_back(std::move(r));
  };
  if (!b.expectError.empty()) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    std::ostringstream es;
    diags.setStream(es);
    auto fn = compileTile(b, sm, diags);
    std::string d = es.str();
    if (fn)
      finish(b.name, false, "compiled, but an error containing '" + b.expectError + "' was expected");
    else if (d.find(b.expectError) == std::string::npos)
      finish(b.name, false, "expected an error containing '" + b.expectError + "', got:\n" + d);
    else
      finish(b.name, true, "");
    return;
  }
  std::string err;
  std::unique_ptr<Executable> exe;
  try {
    exe = compileFor(opt, b, dev, err);
  } catch (const std::exception &e) {
    err = e.what();
  }
  if (opt.compileOnly) {
    for (const Run &r : b.runs)
      for (const Check &c : r.checks)
        finish(c.name, err.empty(), err.empty() ? "compiled only" : "kernel '" + b.name + "' does not compile:\n" + err,
               err.empty());
    return;
  }
  for (const Run &r : b.runs) {
    std::string runErr;
    std::vector<Arg> args;
    if (!exe) {
      runErr = "kernel '" + b.name + "' does not compile:\n" + err;
    } else {
      args = r.args;
      try {
        exe->run(r, args);
      } catch (const std::exception &e) {
        runErr = std::string("run failed: ") + e.what();
      }
    }
    for (const Check &c : r.checks) {
      if (opt.target != "cpu" && c.cpuOnly) {
        finish(c.name, true, "cpu only", true);
        continue;
      }
      if (!runErr.empty()) {
        finish(c.name, false, runErr);
        continue;
      }
      if (c.validate) {
        if (opt.corrupt) {
          finish(c.name, true, "validator", true);
          continue;
        }
        std::string why = c.validate(args);
        finish(c.name, why.empty(), why);
        continue;
      }
      const Buffer &got = args.at(size_t(c.arg)).buffer;
      if (opt.corrupt) {
        Buffer want = c.expected;
        if (want.size() == 0) {
          finish(c.name, false, "no expected elements");
          continue;
        }
        if (isFp8T(want.dtype)) { // the neighbouring code (v + |v| + 1 may saturate to v)
          want.setBits(0, want.bits(0) ^ 1);
        } else if (isFloatT(want.dtype)) {
          long double v = want.getF(0);
          want.setF(0, std::isnan(v) || std::isinf(v) ? 1.0L : v + std::fabs(v) + 1);
        } else {
          want.setBits(0, want.bits(0) ^ 1);
        }
        bool seen = c.begin < got.size() && !matches(got, c.begin, want, 0, opt.target == "cpu" ? c.cpu : c.gpu);
        finish(c.name, seen, seen ? "" : "the check accepts a wrong first element");
        continue;
      }
      const Tol &tol = opt.target == "cpu" ? c.cpu : c.gpu;
      size_t bad = 0;
      std::ostringstream msg;
      for (size_t i = 0; i < c.expected.size(); ++i) {
        size_t gi = c.begin + i;
        if (gi >= got.size() || !matches(got, gi, c.expected, i, tol)) {
          if (bad < 4)
            msg << "\n    element " << gi << ": got " << (gi < got.size() ? got.str(gi) : std::string("(out of range)"))
                << ", expected " << c.expected.str(i);
          ++bad;
        }
      }
      if (bad)
        finish(c.name, false, std::to_string(bad) + " of " + std::to_string(c.expected.size()) + " elements differ" + msg.str());
      else
        finish(c.name, true, "");
    }
  }
}

std::string family(const std::string &name) { return name.substr(0, name.find('/')); }

int usage() {
  std::cerr << "usage: tle-conformance [--target cpu|gpu] [--filter REGEX] [--sample K] [-j N] [--list] [-v] "
               "[--report FILE] [--corrupt] [--compile-only [--arch ARCH]]\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "tle-conformance: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--target") opt.target = value();
    else if (a == "--filter") opt.filter = value();
    else if (a == "--sample") opt.sample = unsigned(std::max(1, std::atoi(value().c_str())));
    else if (a == "-j") opt.jobs = unsigned(std::max(1, std::atoi(value().c_str())));
    else if (a == "--list") opt.list = true;
    else if (a == "-v") opt.verbose = true;
    else if (a == "--report") opt.report = value();
    else if (a == "--corrupt") opt.corrupt = true;
    else if (a == "--compile-only") opt.compileOnly = true;
    else if (a == "--arch") opt.arch = value();
    else return usage();
  }
  if (opt.target != "cpu" && opt.target != "gpu")
    return usage();

  Suite suite;
  for (auto add : {addArithmetic, addBitwise, addCompare, addMath, addCasts, addWhereBroadcast, addReductions, addScans,
                   addMemory, addAtomics, addDot, addShapes, addFrontend, addOffsets, addArgReduce, addStandard, addRandom, addCombine, addSort, addFp8,
                   addTleLite})
    add(suite);

  std::vector<const Batch *> selected;
  std::regex re(opt.filter.empty() ? ".*" : opt.filter);
  for (size_t i = 0; i < suite.batches.size(); ++i) {
    const Batch &b = suite.batches[i];
    if (i % opt.sample != 0)
      continue;
    bool any = std::regex_search(b.name, re);
    for (auto &r : b.runs)
      for (auto &c : r.checks)
        any = any || std::regex_search(c.name, re);
    if (any)
      selected.push_back(&b);
  }
  if (opt.list) {
    for (const Batch *b : selected) {
      if (!b->expectError.empty())
        std::cout << b->name << "\n";
      for (auto &r : b->runs)
        for (auto &c : r.checks)
          std::cout << c.name << "\n";
    }
    return 0;
  }

  std::unique_ptr<rt::Device> dev;
  if (opt.compileOnly && opt.target != "gpu") {
    std::cerr << "tle-conformance: --compile-only is for --target gpu\n";
    return 2;
  }
  if (opt.target == "gpu" && !opt.compileOnly) {
    std::string reason;
    if (!rt::gpuAvailable(&reason)) {
      std::cerr << "tle-conformance: --target gpu needs a CUDA GPU: " << reason << "\n";
      return 77;
    }
    dev = std::make_unique<rt::Device>(0);
    std::cout << "tle-conformance: GPU " << dev->name() << " (" << dev->arch() << ")\n";
  }

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<Result>> results(selected.size());
  std::atomic<size_t> next{0};
  unsigned jobs = opt.jobs ? opt.jobs : std::max(1u, std::thread::hardware_concurrency());
  auto worker = [&] {
    for (size_t i; (i = next++) < selected.size();)
      runBatch(opt, *selected[i], dev.get(), results[i]);
  };
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < jobs; ++j)
    pool.emplace_back(worker);
  worker();
  for (auto &t : pool)
    t.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::regex caseRe(opt.filter.empty() ? ".*" : opt.filter);
  std::map<std::string, std::array<size_t, 5>> perFamily;
  size_t counts[5] = {0, 0, 0, 0, 0};
  std::vector<const Result *> bad, xfail, xpass;
  for (size_t i = 0; i < selected.size(); ++i)
    for (const Result &r : results[i]) {
      if (!opt.filter.empty() && !std::regex_search(r.name, caseRe) && !std::regex_search(selected[i]->name, caseRe))
        continue;
      counts[int(r.status)]++;
      perFamily[family(r.name)][size_t(r.status)]++;
      if (r.status == Status::Fail)
        bad.push_back(&r);
      if (r.status == Status::XPass)
        xpass.push_back(&r);
      if (r.status == Status::XFail)
        xfail.push_back(&r);
      if (opt.verbose)
        std::cout << (r.status == Status::Pass ? "PASS  " : r.status == Status::Fail ? "FAIL  " : r.status == Status::XFail ? "XFAIL "
                      : r.status == Status::XPass ? "XPASS " : "SKIP  ") << r.name << "\n";
    }
  for (const Result *r : bad)
    std::cout << "FAIL " << r->name << ": " << r->message << "\n";
  for (const Result *r : xpass)
    std::cout << "XPASS " << r->name << ": " << r->message << " (remove it from KnownFailures.cpp)\n";
  for (const Result *r : xfail)
    std::cout << "XFAIL " << r->name << ": " << r->message << "\n";
  std::cout << "\nfamily            cases  passed  xfail  failed  skipped\n";
  for (auto &[f, c] : perFamily) {
    char line[128];
    std::snprintf(line, sizeof line, "%-16s %6zu %7zu %6zu %7zu %8zu\n", f.c_str(), c[0] + c[1] + c[2] + c[3] + c[4],
                  c[0] + c[3], c[2], c[1], c[4]);
    std::cout << line;
  }
  size_t total = counts[0] + counts[1] + counts[2] + counts[3] + counts[4];
  std::cout << "\ntle-conformance (" << opt.target << "): " << total << " cases, " << counts[0] + counts[3] << " passed ("
            << counts[3] << " of them listed as known failures), " << counts[2] << " expected failures, " << counts[1]
            << " failed, " << counts[4] << " skipped; "
            << selected.size() << " kernels in " << std::fixed << std::setprecision(1) << secs << " s\n";

  if (!opt.report.empty()) {
    std::ofstream rep(opt.report);
    rep << "# Conformance results (" << opt.target << (dev ? ", " + dev->name() : std::string()) << ")\n\n";
    rep << "`tle-conformance --target " << opt.target << (opt.filter.empty() ? "" : " --filter '" + opt.filter + "'")
        << "`: " << total << " cases, " << counts[0] + counts[3] << " passed, " << counts[2] << " expected failures, "
        << counts[1] << " failed, " << counts[4] << " skipped (" << selected.size() << " kernels).\n\n";
    rep << "| family | cases | passed | expected failures | failed | skipped |\n| --- | --- | --- | --- | --- | --- |\n";
    for (auto &[f, c] : perFamily)
      rep << "| " << f << " | " << c[0] + c[1] + c[2] + c[3] + c[4] << " | " << c[0] + c[3] << " | " << c[2] << " | "
          << c[1] << " | " << c[4] << " |\n";
    rep << "\n## Failures\n\n";
    if (bad.empty())
      rep << "None.\n";
    for (const Result *r : bad)
      rep << "- `" << r->name << "`: " << r->message << "\n";
    for (const Result *r : xpass)
      rep << "- `" << r->name << "` passes but is listed as a known failure\n";
    rep << "\n## Expected failures\n\n";
    if (xfail.empty())
      rep << "None.\n";
    for (const Result *r : xfail)
      rep << "- `" << r->name << "`: " << r->message << "\n";
  }
  return bad.empty() ? 0 : 1;
}
