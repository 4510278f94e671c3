// tle-gpu-tests: runs the examples' cubins (and a runtime self-test) on a GPU and checks them against float64 CPU references.
//
// Usage: tle-gpu-tests [--cubin-dir DIR] [--arch ARCH] [--device N] [--only NAME[,NAME...]]
//   DIR defaults to the build tree's examples/ directory (found next to this executable), where
//   the examples' CMake writes <example>.<arch>.cubin (or .ptx without a CUDA toolkit). ARCH
//   defaults to the device's: sm_90a for compute capability 9.0, sm_80 for 8.x.
//   --print-self-test-ptx prints the runtime self-test's PTX module and exits.
// Exit status: 0 all cases pass, 1 a case fails, 77 no usable GPU (ctest reports "Skipped").
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_rt.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace tle::rt;

namespace {

constexpr int kSkip = 77;

// ------------------------------------------------------------------------------------------------
// Options and reporting
// ------------------------------------------------------------------------------------------------

struct Options {
  std::string cubinDir;
  std::string arch;
  int device = 0;
  std::set<std::string> only; // example names; empty = all
};

std::string exeDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string p(buf, size_t(n));
  return p.substr(0, p.rfind('/'));
}

bool fileExists(const std::string &path) { return access(path.c_str(), R_OK) == 0; }

std::string defaultCubinDir() {
  // build/tests/gpu/tle-gpu-tests -> build/examples; works wherever the build tree is copied.
  std::string rel = exeDir() + "/../../examples";
  if (fileExists(rel))
    return rel;
#ifdef TLE_EXAMPLES_BUILD_DIR
  return TLE_EXAMPLES_BUILD_DIR;
#else
  return rel;
#endif
}

[[noreturn]] void usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: tle-gpu-tests [--cubin-dir DIR] [--arch ARCH] [--device N] "
               "[--only NAME[,NAME...]]\n"
               "  NAME: runtime, vector_add, softmax, softmax_cluster, softmax_cluster_staged, layernorm, matmul,\n"
               "        matmul_tma, matmul_decode, matmul_persistent, matmul_ws, matmul_persistent_tma,\n"
               "        matmul_persistent_ws,"
               " matmul_epilogue, matmul_splitk_cluster, matmul_tf32, matmul_tn, matmul_tn_tf32\n");
  std::exit(status);
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tle-gpu-tests: %s needs a value\n", a.c_str());
        usage(2);
      }
      return argv[++i];
    };
    if (a == "--cubin-dir")
      o.cubinDir = value();
    else if (a == "--arch")
      o.arch = value();
    else if (a == "--device")
      o.device = std::atoi(value().c_str());
    else if (a == "--only") {
      std::stringstream ss(value());
      for (std::string name; std::getline(ss, name, ',');)
        o.only.insert(name);
    } else if (a == "-h" || a == "--help")
      usage(0);
    else {
      std::fprintf(stderr, "tle-gpu-tests: unknown argument '%s'\n", a.c_str());
      usage(2);
    }
  }
  if (o.cubinDir.empty())
    o.cubinDir = defaultCubinDir();
  return o;
}

struct Report {
  int passed = 0, failed = 0, skipped = 0;

  void pass(const std::string &line) {
    ++passed;
    std::printf("PASS  %s\n", line.c_str());
    std::fflush(stdout);
  }
  void fail(const std::string &line) {
    ++failed;
    std::printf("FAIL  %s\n", line.c_str());
    std::fflush(stdout);
  }
  void skip(const std::string &line) {
    ++skipped;
    std::printf("SKIP  %s\n", line.c_str());
    std::fflush(stdout);
  }
  void check(bool ok, const std::string &line) { ok ? pass(line) : fail(line); }
};

// Runs `body` and turns any exception into a FAIL line for `what`.
void guarded(Report &rep, const std::string &what, const std::function<void()> &body) {
  try {
    body();
  } catch (const std::exception &e) {
    rep.fail(what + ": " + e.what());
  }
}

// ------------------------------------------------------------------------------------------------
// Comparison
// ------------------------------------------------------------------------------------------------

// Accumulates errors of a result against a float64 reference. An element passes when
// |got - want| <= atol + rtol * scale, `scale` being the relevant magnitude (the element itself,
// the row's largest value, ...). NaN or infinity where the reference is finite always fails.
struct Errors {
  double atol, rtol;
  double maxAbs = 0, maxRel = 0;
  size_t count = 0, bad = 0;
  std::string firstBad;

  Errors(double atol_, double rtol_) : atol(atol_), rtol(rtol_) {}

  void add(const std::string &where, double got, double want, double scale) {
    ++count;
    double err = std::fabs(got - want);
    bool ok = std::isfinite(got) && err <= atol + rtol * std::fabs(scale);
    if (std::isfinite(err)) {
      maxAbs = std::max(maxAbs, err);
      if (scale != 0)
        maxRel = std::max(maxRel, err / std::fabs(scale));
    } else {
      maxAbs = maxRel = std::numeric_limits<double>::infinity();
    }
    if (!ok && bad++ == 0)
      firstBad = fmt::format("{}: got {:.9g}, want {:.9g}", where, got, want);
  }

  // Cells outside the logical output must still hold the poison bit pattern.
  void untouched(const std::string &where, float got) {
    uint32_t bits;
    std::memcpy(&bits, &got, 4);
    if (bits != 0xffffffffu && bad++ == 0)
      firstBad = fmt::format("{}: written outside the output (0x{:08x})", where, bits);
  }

  bool ok() const { return bad == 0 && count > 0; }

  std::string summary() const {
    std::string s = fmt::format("max_abs={:.3e} max_rel={:.3e} (atol {:.0e}, rtol {:.0e})", maxAbs,
                                maxRel, atol, rtol);
    if (bad)
      s += fmt::format("  {} bad, first {}", bad, firstBad);
    return s;
  }
};

float poison() {
  float f;
  uint32_t bits = 0xffffffffu; // a NaN
  std::memcpy(&f, &bits, 4);
  return f;
}

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// ------------------------------------------------------------------------------------------------
// Locating and loading the examples' modules
// ------------------------------------------------------------------------------------------------

std::vector<std::string> archCandidates(const Device &dev, const Options &opt) {
  if (!opt.arch.empty())
    return {opt.arch};
  int ma = dev.computeMajor(), mi = dev.computeMinor();
  std::vector<std::string> c;
  if (ma == 9 && mi == 0) {
    c = {"sm_90a", "sm_90"};
  } else if (ma == 8) {
    c.push_back(fmt::format("sm_{}{}", ma, mi));
    if (mi != 0)
      c.push_back("sm_80"); // sm_80 code runs on every 8.x device
  } else {
    c.push_back(fmt::format("sm_{}{}", ma, mi));
  }
  return c;
}

// The path of `name`'s module for this device, or "" with `looked` listing what was tried.
std::string findModule(const std::string &name, const Device &dev, const Options &opt,
                       std::string &looked) {
  for (const std::string &arch : archCandidates(dev, opt)) {
    for (const char *ext : {"cubin", "ptx"}) {
      std::string p = fmt::format("{}/{}.{}.{}", opt.cubinDir, name, arch, ext);
      if (fileExists(p))
        return p;
      looked += (looked.empty() ? "" : ", ") + p;
    }
  }
  return "";
}

// Loads `example`'s kernel `kernelName`; on failure reports FAIL and returns false.
bool loadKernel(Report &rep, const Device &dev, const Options &opt, const std::string &example,
                const std::string &kernelName, std::optional<Kernel> &out) {
  std::string looked;
  std::string path = findModule(example, dev, opt, looked);
  if (path.empty()) {
    rep.fail(fmt::format("{}: no module for this device (looked for {}); build the examples "
                         "(cmake target tle_examples) or pass --cubin-dir",
                         example, looked));
    return false;
  }
  try {
    Module mod = Module::fromFile(dev, path);
    Kernel k = mod.kernel(kernelName);
    const KernelInfo &ki = k.info();
    std::printf("----  %s: %s from %s (target %s): num_warps %d, block %u, shared %u B, %d regs, "
                "signature \"%s\"\n",
                example.c_str(), ki.name.c_str(), path.c_str(), ki.target.c_str(), ki.numWarps,
                ki.threadsPerBlock(), ki.sharedBytes, k.numRegisters(), ki.signature().c_str());
    out = std::move(k);
    return true;
  } catch (const std::exception &e) {
    rep.fail(fmt::format("{}: loading {}: {}", example, path, e.what()));
    return false;
  }
}

// ------------------------------------------------------------------------------------------------
// Runtime self-test: hand-written PTX with its own __tle_metadata, no tlec needed
// ------------------------------------------------------------------------------------------------

// A module-scope .global byte array holding `json` and its NUL, as tlec emits it.
std::string ptxMetadata(const std::string &json) {
  std::string s = fmt::format(".visible .global .align 1 .b8 __tle_metadata[{}] = {{", json.size() + 1);
  for (unsigned char c : json)
    s += fmt::format("{}, ", unsigned(c));
  return s + "0};\n";
}

const char *kSelfTestKernels = R"ptx(
.extern .shared .align 16 .b8 smem[];

// out[i] = alpha * in[i] for i < n; 128 threads per block.
.visible .entry scale_kernel(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 alpha)
.reqntid 128, 1, 1
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  ld.param.u32 %r1, [n];
  ld.param.f32 %f1, [alpha];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.s32 %rd5, %r5, 4;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  mul.f32 %f3, %f2, %f1;
  add.s64 %rd7, %rd3, %rd5;
  st.global.f32 [%rd7], %f3;
DONE:
  ret;
}

// Uses the top 512 bytes of 96 KiB of dynamic shared memory: out[t] = (t + 1) % 128.
.visible .entry smem_kernel(.param .u64 out)
.reqntid 128, 1, 1
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, smem;
  add.u32 %r3, %r2, 98300;
  shl.b32 %r4, %r1, 2;
  sub.u32 %r5, %r3, %r4;
  st.shared.u32 [%r5], %r1;
  bar.sync 0;
  add.u32 %r6, %r1, 1;
  and.b32 %r6, %r6, 127;
  shl.b32 %r7, %r6, 2;
  sub.u32 %r8, %r3, %r7;
  ld.shared.u32 %r9, [%r8];
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r9;
  ret;
}
)ptx";

const char *kSelfTestMetadata = R"json({"format": "tle-module", "version": 1, "target": "sm_80",
 "compiler": "hand-written PTX (tle-gpu-tests)", "kernels": [
  {"name": "scale_kernel", "num_warps": 4, "block": [128, 1, 1], "shared_bytes": 0,
   "params": [{"name": "out", "type": "*fp32", "divisibility": 16},
              {"name": "in", "type": "*fp32", "divisibility": 16},
              {"name": "n", "type": "i32"}, {"name": "alpha", "type": "fp32"}],
   "constexprs": {}},
  {"name": "smem_kernel", "num_warps": 4, "shared_bytes": 98304,
   "params": [{"name": "out", "type": "*i32", "divisibility": 16}]}]})json";

std::string selfTestPtx(bool withMetadata) {
  std::string ptx = ".version 7.0\n.target sm_80\n.address_size 64\n\n";
  if (withMetadata)
    ptx += ptxMetadata(kSelfTestMetadata);
  return ptx + kSelfTestKernels;
}

template <class F> std::string thrownMessage(F &&f) {
  try {
    f();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

void runRuntimeSelfTest(Report &rep, const Device &dev) {
  const std::string tag = "runtime";
  Stream stream(dev);
  std::optional<Module> mod;
  guarded(rep, tag + " PTX module with metadata", [&] {
    mod = Module::fromPtx(dev, selfTestPtx(true), "self-test.ptx");
    rep.check(mod->hasMetadata() && mod->info().kernels.size() == 2,
              tag + " PTX module loads and carries its __tle_metadata");
  });
  if (!mod)
    return;

  guarded(rep, tag + " scale_kernel", [&] {
    Kernel k = mod->kernel("scale_kernel");
    for (int n : {1, 127, 128, 1000, 65537}) {
      std::vector<float> in(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i)
        in[size_t(i)] = float(i % 97) - 48.5f;
      DeviceBuffer din = DeviceBuffer::fromHost(dev, in);
      DeviceBuffer dout(dev, size_t(n + 128) * 4);
      dout.fillBytes(0xff);
      unsigned grid = unsigned((n + 127) / 128);
      k.launch(grid, stream, dout, din, int32_t(n), 0.5f);
      stream.synchronize();
      std::vector<float> out = dout.toHost<float>();
      Errors e(0, 0);
      for (int i = 0; i < n; ++i)
        e.add(fmt::format("[{}]", i), out[size_t(i)], 0.5 * in[size_t(i)], 1);
      for (int i = n; i < n + 128; ++i)
        e.untouched(fmt::format("[{}]", i), out[size_t(i)]);
      rep.check(e.ok(), fmt::format("{} typed launch scale_kernel n={} grid={}  {}", tag, n, grid,
                                    e.summary()));
    }
    // Argument checks refuse bad launches before the driver sees them.
    DeviceBuffer buf(dev, 4096);
    std::string m1 = thrownMessage([&] { k.launch(1, stream, buf, buf, int32_t(1), 0.5); });
    rep.check(m1.find("'alpha'") != std::string::npos && m1.find("double") != std::string::npos,
              tag + " double for an fp32 parameter is refused: " + m1);
    std::string m2 = thrownMessage([&] { k.launch(1, stream, buf, buf, int32_t(1)); });
    rep.check(m2.find("expects 4 arguments") != std::string::npos,
              tag + " wrong argument count is refused: " + m2);
    std::string m3 = thrownMessage([&] { k.launch(1, stream, buf.ptr(4), buf, int32_t(1), 1.0f); });
    rep.check(m3.find("divisible by 16") != std::string::npos,
              tag + " misaligned pointer is refused: " + m3);
    std::string m4 = thrownMessage([&] { k.launch(0, stream, buf, buf, int32_t(1), 1.0f); });
    rep.check(m4.find("grid (0, 1, 1) is invalid") != std::string::npos,
              tag + " empty grid is refused: " + m4);
    // Raw launch with void** arguments.
    std::vector<float> in(256, 2.0f);
    DeviceBuffer din = DeviceBuffer::fromHost(dev, in);
    DeviceBuffer dout(dev, 256 * 4);
    uint64_t pout = dout.address(), pin = din.address();
    int32_t n = 256;
    float alpha = 3.0f;
    void *args[] = {&pout, &pin, &n, &alpha};
    k.launchRaw(2, stream, args, 4);
    stream.synchronize();
    std::vector<float> out = dout.toHost<float>();
    rep.check(std::all_of(out.begin(), out.end(), [](float v) { return v == 6.0f; }),
              tag + " launchRaw with void** arguments");
  });

  guarded(rep, tag + " smem_kernel", [&] {
    Kernel k = mod->kernel("smem_kernel");
    DeviceBuffer out(dev, 128 * 4);
    out.fillBytes(0xff);
    k.launch(1, stream, out);
    stream.synchronize();
    std::vector<int32_t> v = out.toHost<int32_t>();
    bool ok = true;
    for (int t = 0; t < 128; ++t)
      ok &= v[size_t(t)] == (t + 1) % 128;
    rep.check(ok, tag + " 96 KiB of dynamic shared memory (above the 48 KiB default)");
  });

  guarded(rep, tag + " modules without metadata", [&] {
    Module plain = Module::fromPtx(dev, selfTestPtx(false), "plain.ptx");
    std::string m = thrownMessage([&] { plain.kernel("scale_kernel"); });
    rep.check(!plain.hasMetadata() && m.find("has no __tle_metadata") != std::string::npos,
              tag + " kernel() on a module without metadata is refused: " + m);
    KernelInfo info = mod->info().find("scale_kernel") ? *mod->info().find("scale_kernel") : KernelInfo{};
    Kernel k = plain.kernel("scale_kernel", info);
    DeviceBuffer d(dev, 128 * 4);
    d.fill32(0x3f800000u); // 1.0f
    k.launch(1, stream, d, d, int32_t(128), 4.0f);
    stream.synchronize();
    std::vector<float> v = d.toHost<float>();
    rep.check(std::all_of(v.begin(), v.end(), [](float x) { return x == 4.0f; }),
              tag + " kernel(name, KernelInfo) launches a module without metadata");
  });

  guarded(rep, tag + " bad PTX", [&] {
    std::string m = thrownMessage([&] {
      Module::fromPtx(dev, ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus; }\n",
                      "bad.ptx");
    });
    rep.check(m.find("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX") != std::string::npos &&
                  m.find("JIT error log") != std::string::npos,
              tag + " invalid PTX names the call, the CUresult and the JIT log: " +
                  m.substr(0, m.find('\n')));
  });

  guarded(rep, tag + " C ABI", [&] {
    std::string ptx = selfTestPtx(true);
    tle_rt_module cm = nullptr;
    tle_rt_kernel ck = nullptr;
    bool ok = tle_rt_module_load_data(dev.ordinal(), ptx.c_str(), ptx.size() + 1, &cm) == TLE_RT_SUCCESS &&
              tle_rt_module_get_kernel(cm, "scale_kernel", &ck) == TLE_RT_SUCCESS &&
              tle_rt_kernel_num_params(ck) == 4 &&
              std::string(tle_rt_kernel_param_type(ck, 0)) == "*fp32" &&
              tle_rt_kernel_block_threads(ck) == 128;
    DeviceBuffer d(dev, 128 * 4);
    d.fill32(0x40000000u); // 2.0f
    uint64_t p = d.address();
    int32_t n = 128;
    float alpha = 0.25f;
    void *args[] = {&p, &p, &n, &alpha};
    ok = ok && tle_rt_launch(ck, 1, 1, 1, nullptr, args, 4) == TLE_RT_SUCCESS &&
         tle_rt_device_synchronize(dev.ordinal()) == TLE_RT_SUCCESS;
    ok = ok && tle_rt_launch(ck, 1, 1, 1, nullptr, args, 3) == TLE_RT_ERROR_INVALID_ARGUMENT;
    std::string last = tle_rt_last_error();
    tle_rt_kernel_release(ck);
    tle_rt_module_unload(cm);
    std::vector<float> v = d.toHost<float>();
    ok = ok && std::all_of(v.begin(), v.end(), [](float x) { return x == 0.5f; });
    rep.check(ok, tag + " C ABI load/get/launch (last error: " + last + ")");
  });

  guarded(rep, tag + " events", [&] {
    Event a(dev), b(dev);
    DeviceBuffer big(dev, size_t(64) << 20);
    a.record(stream);
    big.fill32Async(0, stream);
    b.record(stream);
    float ms = Event::elapsedMs(a, b);
    rep.check(ms > 0 && ms < 1000, fmt::format("{} event timing of a 64 MiB memset: {:.4f} ms", tag, ms));
  });
}

// ------------------------------------------------------------------------------------------------
// vector_add
// ------------------------------------------------------------------------------------------------

void runVectorAdd(Report &rep, const Device &dev, const Options &opt) {
  std::optional<Kernel> k;
  if (!loadKernel(rep, dev, opt, "vector_add", "add_kernel", k))
    return;
  const int64_t block = k->info().constexprInt("BLOCK").value_or(1024);
  Stream stream(dev);
  for (int64_t n : {int64_t(1), int64_t(1000), int64_t(1024), int64_t(98432), int64_t(1) << 20}) {
    std::string what = fmt::format("vector_add n={}", n);
    guarded(rep, what, [&] {
      std::mt19937 rng(uint32_t(1234 + n));
      std::normal_distribution<float> dist(0.0f, 10.0f);
      const int64_t padded = roundUp(n, block) + block; // poisoned tail past n
      std::vector<float> x(size_t(padded), poison()), y(size_t(padded), poison());
      for (int64_t i = 0; i < n; ++i) {
        x[size_t(i)] = dist(rng);
        y[size_t(i)] = dist(rng);
      }
      DeviceBuffer dx = DeviceBuffer::fromHost(dev, x), dy = DeviceBuffer::fromHost(dev, y);
      DeviceBuffer dz(dev, size_t(padded) * 4);
      dz.fillBytes(0xff);
      unsigned grid = unsigned((n + block - 1) / block);
      k->launch(grid, stream, dx, dy, dz, int32_t(n));
      stream.synchronize();
      std::vector<float> z = dz.toHost<float>();
      Errors e(0, 1e-6);
      for (int64_t i = 0; i < n; ++i) {
        double want = double(x[size_t(i)]) + double(y[size_t(i)]);
        e.add(fmt::format("z[{}]", i), z[size_t(i)], want,
              std::fabs(x[size_t(i)]) + std::fabs(y[size_t(i)]));
      }
      for (int64_t i = n; i < padded; ++i)
        e.untouched(fmt::format("z[{}]", i), z[size_t(i)]);
      rep.check(e.ok(), fmt::format("{:<28} grid={:<6} {}", what, grid, e.summary()));
    });
  }
}

// ------------------------------------------------------------------------------------------------
// matmul (examples/matmul.tle: pointer tiles, cp.async), matmul_tma (examples/matmul_tma.tle:
// tensor descriptors, TMA on sm_90a with descriptors the runtime builds at launch),
// matmul_decode (examples/matmul_decode.tle: matmul_tma computed as C^T = B^T A^T, for few rows) and
// matmul_persistent (examples/matmul_persistent.tle: a grid-stride loop over the output tiles),
// matmul_ws (examples/matmul_ws.tle: matmul_tma with a warp-specialised K loop: a TMA producer
// warpgroup and the wgmma consumers); matmul_persistent_tma and matmul_persistent_ws
// (examples/matmul_persistent_{tma,ws}.tle: the persistent loop with TMA fills that continue
// across tiles, unspecialised and with the loop over tiles warp-specialised); matmul_epilogue
// (examples/matmul_epilogue.tle: matmul_persistent_tma with C = relu(A @ B + bias) fused, its
// bias loaded through a pointer and its store a TMA store in the loop);
// matmul_tf32 (matmul.tle on fp32 operands: TF32 tensor cores)
// ------------------------------------------------------------------------------------------------

/// The matmul examples' shapes. M, N, K and the strides are multiples of 16 (the signature's :16)
/// but not of the blocks in the ragged cases (out-of-bounds parts of tiles read as zeros), K = 16
/// runs one iteration of a three-stage pipeline (prefetches past the end are not issued), and
/// K = 0 none (C is zero; tensor descriptors then describe empty tensors).
struct MatmulShape {
  int64_t m, n, k;
};
constexpr MatmulShape kMatmulShapes[] = {{256, 512, 1024}, {304, 272, 80}, {128, 256, 16},
                                         {16, 16, 48},     {528, 784, 336}, {128, 256, 0}};
/// matmul_decode's extra shapes: row counts that are not multiples of 16 (its signature has no
/// :16 on M), one row, and one whole BLOCK_M tile with a ragged N.
constexpr MatmulShape kDecodeShapes[] = {{1, 256, 512}, {7, 272, 336}, {40, 128, 64}, {16, 8192 + 64, 256}};

void runMatmul(Report &rep, const Device &dev, const Options &opt, const char *example) {
  std::optional<Kernel> k;
  if (!loadKernel(rep, dev, opt, example, "matmul_kernel", k))
    return;
  const KernelInfo &ki = k->info();
  const int64_t bm = ki.constexprInt("BLOCK_M").value_or(128), bn = ki.constexprInt("BLOCK_N").value_or(128);
  std::printf("----  %s: %zu TMA descriptor(s) built at launch\n", example, ki.tensorMaps.size());
  const bool epilogue = std::string(example) == "matmul_epilogue";
  const bool persistent = std::string(example).rfind("matmul_persistent", 0) == 0 || epilogue;
  // matmul_tf32: fp32 operands multiplied in TF32, fp32 output holding the fp16-rounded result.
  const bool tf32 = std::string(example) == "matmul_tf32";
  const size_t outBytes = tf32 ? 4 : 2;
  Stream stream(dev);
  std::vector<MatmulShape> shapes(std::begin(kMatmulShapes), std::end(kMatmulShapes));
  if (std::string(example) == "matmul_decode")
    shapes.insert(shapes.end(), std::begin(kDecodeShapes), std::end(kDecodeShapes));
  for (MatmulShape sh : shapes) {
    std::string what = fmt::format("{} {}x{}x{}", example, sh.m, sh.n, sh.k);
    guarded(rep, what, [&] {
      std::mt19937 rng(uint32_t(sh.m * 7 + sh.n * 3 + sh.k));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      const size_t na = size_t(std::max<int64_t>(sh.m * sh.k, 1)), nb = size_t(std::max<int64_t>(sh.k * sh.n, 1));
      // Operands as doubles for the reference, and their device bytes.
      std::vector<double> a(na), b(nb);
      std::vector<Half> ah(na), bh(nb);
      std::vector<float> af(na), bf(nb);
      for (size_t i = 0; i < na + nb; ++i) {
        bool isA = i < na;
        size_t j = isA ? i : i - na;
        float x = dist(rng);
        if (tf32) {
          (isA ? af : bf)[j] = x;
        } else {
          Half h = Half::fromFloat(x);
          (isA ? ah : bh)[j] = h;
          x = h.toFloat();
        }
        (isA ? a : b)[j] = x;
      }
      DeviceBuffer da = tf32 ? DeviceBuffer::fromHost(dev, af) : DeviceBuffer::fromHost(dev, ah);
      DeviceBuffer db = tf32 ? DeviceBuffer::fromHost(dev, bf) : DeviceBuffer::fromHost(dev, bh);
      // matmul_epilogue's bias: one fp16 value per column, in [-4, 4] so that ReLU clamps a
      // good share of the outputs.
      std::vector<double> bias(size_t(sh.n));
      std::vector<Half> biash(size_t(std::max<int64_t>(sh.n, 1)));
      for (int64_t j = 0; j < sh.n; ++j) {
        biash[size_t(j)] = Half::fromFloat(4.0f * dist(rng));
        bias[size_t(j)] = biash[size_t(j)].toFloat();
      }
      DeviceBuffer dbias = DeviceBuffer::fromHost(dev, biash);
      const unsigned tiles = unsigned(((sh.m + bm - 1) / bm) * ((sh.n + bn - 1) / bn));
      // matmul_persistent*: every grid size computes all of C (one program, three programs that
      // share tiles unevenly, one per SM or one per tile). One program runs every tile, its TMA
      // fill counts (and slot phases) carried from tile to tile.
      // matmul_splitk_cluster: every tile on a cluster of SPLIT_K CTAs.
      std::vector<unsigned> grids{tiles * ki.cluster[0]};
      if (persistent)
        grids = {1, 3, std::max(1u, std::min(tiles, unsigned(dev.smCount())))};
      for (unsigned grid : grids) {
        // A poisoned row past the output checks that nothing is written beyond M x N.
        DeviceBuffer dc(dev, size_t((sh.m + 1) * sh.n) * outBytes);
        dc.fillBytes(0xff);
        if (epilogue)
          k->launch(grid, stream, da, db, dc, dbias, int32_t(sh.m), int32_t(sh.n), int32_t(sh.k),
                    int32_t(std::max<int64_t>(sh.k, 16)), int32_t(sh.n), int32_t(sh.n));
        else
          k->launch(grid, stream, da, db, dc, int32_t(sh.m), int32_t(sh.n), int32_t(sh.k), int32_t(std::max<int64_t>(sh.k, 16)),
                    int32_t(sh.n), int32_t(sh.n));
        stream.synchronize();
        std::vector<Half> ch;
        std::vector<float> cf;
        if (tf32)
          cf = dc.toHost<float>();
        else
          ch = dc.toHost<Half>();
        auto got = [&](size_t at) { return tf32 ? double(cf[at]) : double(ch[at].toFloat()); };
        // fp16: fp32 accumulation of fp16 products, rounded to fp16 once. TF32: each product
        // within 2^-9 of itself (10 of 23 mantissa bits kept), then the fp16 rounding (2^-11).
        Errors e(tf32 ? 1e-6 : 1e-3, tf32 ? 0x1p-8 + 0x1p-11 : 2e-3);
        for (int64_t i = 0; i < sh.m; ++i)
          for (int64_t j = 0; j < sh.n; ++j) {
            double want = 0, scale = 0;
            for (int64_t t = 0; t < sh.k; ++t) {
              double p = a[size_t(i * sh.k + t)] * b[size_t(t * sh.n + j)];
              want += p;
              scale += std::fabs(p);
            }
            if (epilogue) { // relu(acc + bias), with the bias's magnitude in the error scale
              want = std::max(want + bias[size_t(j)], 0.0);
              scale += std::fabs(bias[size_t(j)]);
            }
            e.add(fmt::format("c[{}][{}]", i, j), got(size_t(i * sh.n + j)), want, std::max(scale, std::fabs(want)));
          }
        for (int64_t j = 0; j < sh.n; ++j) {
          size_t at = size_t(sh.m * sh.n + j);
          uint32_t bits = tf32 ? 0 : ch[at].bits;
          if (tf32)
            std::memcpy(&bits, &cf[at], 4);
          if (bits != (tf32 ? 0xffffffffu : 0xffffu) && e.bad++ == 0)
            e.firstBad = fmt::format("c[{}][{}]: written outside the output", sh.m, j);
        }
        rep.check(e.ok(), fmt::format("{:<28} grid={:<6} {}", what, grid, e.summary()));
      }
    });
  }
}

// ------------------------------------------------------------------------------------------------
// matmul_tn (examples/matmul_tn.tle: C = A @ B^T, K contiguous in both operands): int8 operands
// with int32 accumulation (module matmul_tn, exact) and fp32 operands multiplied in TF32
// (module matmul_tn_tf32)
// ------------------------------------------------------------------------------------------------

void runMatmulTn(Report &rep, const Device &dev, const Options &opt, const char *example) {
  std::optional<Kernel> k;
  if (!loadKernel(rep, dev, opt, example, "matmul_tn_kernel", k))
    return;
  const KernelInfo &ki = k->info();
  const int64_t bm = ki.constexprInt("BLOCK_M").value_or(128), bn = ki.constexprInt("BLOCK_N").value_or(128);
  const bool tf32 = std::string(example) == "matmul_tn_tf32";
  Stream stream(dev);
  for (MatmulShape sh : kMatmulShapes) {
    std::string what = fmt::format("{} {}x{}x{}", example, sh.m, sh.n, sh.k);
    guarded(rep, what, [&] {
      std::mt19937 rng(uint32_t(sh.m * 5 + sh.n * 11 + sh.k));
      const size_t na = size_t(std::max<int64_t>(sh.m * sh.k, 1)), nb = size_t(std::max<int64_t>(sh.n * sh.k, 1));
      // Operands as doubles for the reference, and their device bytes.
      std::vector<double> a(na), bt(nb);
      std::vector<int8_t> a8(na), b8(nb);
      std::vector<float> af(na), bf(nb);
      std::uniform_int_distribution<int> ints(-128, 127);
      std::uniform_real_distribution<float> reals(-1.0f, 1.0f);
      for (size_t i = 0; i < na + nb; ++i) {
        bool isA = i < na;
        size_t j = isA ? i : i - na;
        double v;
        if (tf32) {
          float x = reals(rng);
          (isA ? af : bf)[j] = x;
          v = x;
        } else {
          int8_t x = int8_t(ints(rng));
          (isA ? a8 : b8)[j] = x;
          v = x;
        }
        (isA ? a : bt)[j] = v;
      }
      DeviceBuffer da = tf32 ? DeviceBuffer::fromHost(dev, af) : DeviceBuffer::fromHost(dev, a8);
      DeviceBuffer db = tf32 ? DeviceBuffer::fromHost(dev, bf) : DeviceBuffer::fromHost(dev, b8);
      const unsigned grid = unsigned(((sh.m + bm - 1) / bm) * ((sh.n + bn - 1) / bn));
      // A poisoned row past the output checks that nothing is written beyond M x N.
      DeviceBuffer dc(dev, size_t((sh.m + 1) * sh.n) * 4);
      dc.fillBytes(0xff);
      const int32_t ld = int32_t(std::max<int64_t>(sh.k, 16));
      k->launch(grid, stream, da, db, dc, int32_t(sh.m), int32_t(sh.n), int32_t(sh.k), ld, ld, int32_t(sh.n));
      stream.synchronize();
      // int8: exact int32 sums. TF32: each operand keeps 10 of its 23 mantissa bits (rounded
      // or truncated), so every product is within 2^-9 of itself; with the fp32 sum, 2^-8 of
      // the sum of the products' magnitudes bounds the error.
      Errors e(tf32 ? 1e-6 : 0.0, tf32 ? 0x1p-8 : 0.0);
      std::vector<int32_t> ci;
      std::vector<float> cf;
      if (tf32)
        cf = dc.toHost<float>();
      else
        ci = dc.toHost<int32_t>();
      for (int64_t i = 0; i < sh.m; ++i)
        for (int64_t j = 0; j < sh.n; ++j) {
          double want = 0, scale = 0;
          for (int64_t t = 0; t < sh.k; ++t) {
            double p = a[size_t(i * sh.k + t)] * bt[size_t(j * sh.k + t)];
            want += p;
            scale += std::fabs(p);
          }
          size_t at = size_t(i * sh.n + j);
          e.add(fmt::format("c[{}][{}]", i, j), tf32 ? double(cf[at]) : double(ci[at]), want, scale);
        }
      for (int64_t j = 0; j < sh.n; ++j) {
        size_t at = size_t(sh.m * sh.n + j);
        uint32_t bits = tf32 ? 0 : uint32_t(ci[at]);
        if (tf32)
          std::memcpy(&bits, &cf[at], 4);
        if (bits != 0xffffffffu && e.bad++ == 0)
          e.firstBad = fmt::format("c[{}][{}]: written outside the output", sh.m, j);
      }
      rep.check(e.ok(), fmt::format("{:<30} grid={:<6} {}", what, grid, e.summary()));
    });
  }
}

// ------------------------------------------------------------------------------------------------
// softmax
// ------------------------------------------------------------------------------------------------

/// Rows of `cols` values (each row with its own offset and spread) at `stride` floats apart, the
/// padding NaN (a masked load must never see it), and their float64 softmax.
void softmaxRows(int64_t rows, int64_t cols, int64_t stride, std::vector<float> &in, std::vector<double> &want) {
  std::mt19937 rng(uint32_t(rows * 7919 + cols));
  std::normal_distribution<float> unit(0.0f, 1.0f);
  std::uniform_real_distribution<float> offset(-30.0f, 30.0f), spread(0.1f, 6.0f);
  in.assign(size_t(rows * stride), poison());
  for (int64_t r = 0; r < rows; ++r) {
    float o = offset(rng), w = spread(rng);
    for (int64_t c = 0; c < cols; ++c)
      in[size_t(r * stride + c)] = o + w * unit(rng);
  }
  want.assign(size_t(rows * stride), 0.0);
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
}

/// A softmax output against `want` (fp32 tolerances), its padding left untouched.
Errors softmaxErrors(const std::vector<float> &out, const std::vector<double> &want, int64_t rows, int64_t cols,
                     int64_t stride) {
  Errors e(2e-6, 1e-5);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      size_t i = size_t(r * stride + c);
      e.add(fmt::format("out[{}][{}]", r, c), out[i], want[i], want[i]);
    }
    for (int64_t c = cols; c < stride; ++c)
      e.untouched(fmt::format("out[{}][{}]", r, c), out[size_t(r * stride + c)]);
  }
  return e;
}

void runSoftmax(Report &rep, const Device &dev, const Options &opt) {
  std::optional<Kernel> k;
  if (!loadKernel(rep, dev, opt, "softmax", "softmax_kernel", k))
    return;
  const int64_t blockSize = k->info().constexprInt("BLOCK_SIZE").value_or(1024);
  Stream stream(dev);
  const int64_t maxGrid = int64_t(dev.smCount()) * 4;
  struct Shape {
    int64_t rows, cols;
  };
  const Shape shapes[] = {{1, 1}, {7, 13}, {128, 1000}, {1823, 781}, {4096, 1024}, {3, 1024}, {33, 17}};
  for (const Shape &s : shapes) {
    if (s.cols > blockSize) {
      rep.skip(fmt::format("softmax {}x{}: n_cols > BLOCK_SIZE {} of this cubin", s.rows, s.cols, blockSize));
      continue;
    }
    const int64_t stride = roundUp(s.cols, 16);
    // Inputs: rows with different offsets and spreads; the padding is NaN, which a masked
    // load must never see.
    std::vector<float> in;
    std::vector<double> want;
    softmaxRows(s.rows, s.cols, stride, in, want);
    DeviceBuffer din = DeviceBuffer::fromHost(dev, in);
    DeviceBuffer dout(dev, in.size() * 4);
    std::vector<int64_t> grids = {std::min(s.rows, maxGrid)};
    if (s.rows >= 7)
      grids.push_back(3); // many rows per program
    for (int64_t grid : grids) {
      std::string what = fmt::format("softmax {}x{} stride={}", s.rows, s.cols, stride);
      guarded(rep, what, [&] {
        dout.fillBytes(0xff);
        k->launch(unsigned(grid), stream, dout, din, int32_t(stride), int32_t(stride),
                  int32_t(s.rows), int32_t(s.cols));
        stream.synchronize();
        std::vector<float> out = dout.toHost<float>();
        Errors e = softmaxErrors(out, want, s.rows, s.cols, stride);
        rep.check(e.ok(), fmt::format("{:<28} grid={:<6} {}", what, grid, e.summary()));
      });
    }
  }
}

// ------------------------------------------------------------------------------------------------
// softmax_cluster: rows split over the CTAs of a thread-block cluster (sm_90a)
// ------------------------------------------------------------------------------------------------

/// softmax_cluster (a CTA's BLOCK columns in registers) and softmax_cluster_staged (2 * BLOCK
/// columns per CTA, the first BLOCK staged in shared memory): one row per cluster.
void runSoftmaxCluster(Report &rep, const Device &dev, const Options &opt, const char *example) {
  if (dev.computeMajor() < 9) {
    rep.skip(std::string(example) + ": thread-block clusters need sm_90");
    return;
  }
  std::optional<Kernel> k;
  if (!loadKernel(rep, dev, opt, example, example, k))
    return;
  const bool staged = std::string(example) == "softmax_cluster_staged";
  const int64_t block = k->info().constexprInt("BLOCK").value_or(0);
  const int64_t cluster = k->info().constexprInt("CLUSTER").value_or(0);
  const int64_t span = staged ? 2 * block : block; // columns per CTA
  rep.check(k->info().cluster == std::array<unsigned, 3>{unsigned(cluster), 1, 1},
            fmt::format("{}: the metadata's cluster is ({}, {}, {}), CLUSTER = {}", example, k->info().cluster[0],
                        k->info().cluster[1], k->info().cluster[2], cluster));
  Stream stream(dev);
  struct Shape {
    int64_t rows, cols;
  };
  // Full rows, rows that end inside a CTA's part, rows only the first CTA has data for (the
  // others' parts are all masked off), and one column. Staged: rows that end inside rank 0's
  // staged half (its register half and the other CTAs empty) and inside rank 1's staged half.
  std::vector<Shape> shapes = {{1, 1}, {3, span * cluster}, {5, span * cluster - 7}, {17, block + 1},
                               {9, 1000}, {130, span * cluster}, {1, span * (cluster - 1) + 16}};
  if (staged)
    shapes.insert(shapes.end(), {{4, block - 3}, {2, span + block / 2 + 5}});
  for (const Shape &s : shapes) {
    const int64_t stride = roundUp(s.cols, 16);
    std::vector<float> in;
    std::vector<double> want;
    softmaxRows(s.rows, s.cols, stride, in, want);
    DeviceBuffer din = DeviceBuffer::fromHost(dev, in);
    DeviceBuffer dout(dev, in.size() * 4);
    const unsigned grid = unsigned(s.rows * cluster);
    std::string what = fmt::format("{} {}x{} stride={}", example, s.rows, s.cols, stride);
    guarded(rep, what, [&] {
      dout.fillBytes(0xff);
      k->launch(grid, stream, dout, din, int32_t(stride), int32_t(stride), int32_t(s.cols));
      stream.synchronize();
      std::vector<float> out = dout.toHost<float>();
      Errors e = softmaxErrors(out, want, s.rows, s.cols, stride);
      rep.check(e.ok(), fmt::format("{:<34} grid={:<6} {}", what, grid, e.summary()));
    });
  }
  // A grid that is not a multiple of the cluster is refused before launch.
  bool refused = false;
  try {
    DeviceBuffer d(dev, 64);
    k->launch(unsigned(cluster + 1), stream, d, d, int32_t(16), int32_t(16), int32_t(1));
  } catch (const ArgumentError &) {
    refused = true;
  }
  rep.check(refused, fmt::format("{}: a grid of CLUSTER + 1 CTAs is refused (ArgumentError)", example));
}

// ------------------------------------------------------------------------------------------------
// layernorm
// ------------------------------------------------------------------------------------------------

void runLayerNorm(Report &rep, const Device &dev, const Options &opt) {
  std::optional<Kernel> k;
  if (!loadKernel(rep, dev, opt, "layernorm", "layer_norm_fwd", k))
    return;
  Stream stream(dev);
  struct Shape {
    int64_t rows, cols;
  };
  const Shape shapes[] = {{1, 1}, {3, 17}, {128, 1024}, {1151, 8192}, {37, 3000}, {5, 1025}};
  const float eps = 1e-5f;
  for (const Shape &s : shapes) {
    std::string what = fmt::format("layernorm {}x{}", s.rows, s.cols);
    guarded(rep, what, [&] {
      const int64_t M = s.rows, N = s.cols, stride = roundUp(N, 16);
      std::mt19937 rng(uint32_t(M * 104729 + N));
      std::normal_distribution<float> unit(0.0f, 1.0f);
      std::uniform_real_distribution<float> offset(-3.0f, 3.0f), spread(0.05f, 4.0f);
      std::uniform_real_distribution<float> wdist(0.5f, 1.5f), bdist(-1.0f, 1.0f);
      std::vector<float> x(size_t(M * stride), poison()), w(static_cast<size_t>(N)), b(static_cast<size_t>(N));
      for (int64_t r = 0; r < M; ++r) {
        float o = offset(rng), sp = spread(rng);
        for (int64_t c = 0; c < N; ++c)
          x[size_t(r * stride + c)] = o + sp * unit(rng);
      }
      for (int64_t c = 0; c < N; ++c) {
        w[size_t(c)] = wdist(rng);
        b[size_t(c)] = bdist(rng);
      }
      DeviceBuffer dx = DeviceBuffer::fromHost(dev, x), dw = DeviceBuffer::fromHost(dev, w),
                   db = DeviceBuffer::fromHost(dev, b);
      DeviceBuffer dy(dev, x.size() * 4), dmean(dev, size_t(M + 16) * 4), drstd(dev, size_t(M + 16) * 4);
      dy.fillBytes(0xff);
      dmean.fillBytes(0xff);
      drstd.fillBytes(0xff);
      k->launch(unsigned(M), stream, dx, dy, dw, db, dmean, drstd, int32_t(stride), int32_t(N), eps);
      stream.synchronize();
      std::vector<float> y = dy.toHost<float>(), mean = dmean.toHost<float>(), rstd = drstd.toHost<float>();
      Errors ey(0, 1e-4), em(0, 1e-5), er(0, 1e-4);
      for (int64_t r = 0; r < M; ++r) {
        const float *row = &x[size_t(r * stride)];
        double mu = 0, var = 0, xmax = 0;
        for (int64_t c = 0; c < N; ++c) {
          mu += row[c];
          xmax = std::max(xmax, std::fabs(double(row[c])));
        }
        mu /= double(N);
        for (int64_t c = 0; c < N; ++c)
          var += (row[c] - mu) * (row[c] - mu);
        var /= double(N);
        double rs = 1.0 / std::sqrt(var + double(eps));
        std::vector<double> want(static_cast<size_t>(N));
        double ymax = 0;
        for (int64_t c = 0; c < N; ++c) {
          want[size_t(c)] = (row[c] - mu) * rs * w[size_t(c)] + b[size_t(c)];
          ymax = std::max(ymax, std::fabs(want[size_t(c)]));
        }
        for (int64_t c = 0; c < N; ++c)
          ey.add(fmt::format("Y[{}][{}]", r, c), y[size_t(r * stride + c)], want[size_t(c)], ymax);
        for (int64_t c = N; c < stride; ++c)
          ey.untouched(fmt::format("Y[{}][{}]", r, c), y[size_t(r * stride + c)]);
        em.add(fmt::format("Mean[{}]", r), mean[size_t(r)], mu, xmax);
        er.add(fmt::format("Rstd[{}]", r), rstd[size_t(r)], rs, rs);
      }
      for (int64_t r = M; r < M + 16; ++r) {
        em.untouched(fmt::format("Mean[{}]", r), mean[size_t(r)]);
        er.untouched(fmt::format("Rstd[{}]", r), rstd[size_t(r)]);
      }
      bool ok = ey.ok() && em.ok() && er.ok();
      rep.check(ok, fmt::format("{:<28} grid={:<6} Y {}; Mean {}; Rstd {}", what, M, ey.summary(),
                                em.summary(), er.summary()));
    });
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::string(argv[1]) == "--print-self-test-ptx") {
    // For checking the hand-written PTX offline: tle-gpu-tests --print-self-test-ptx | ptxas ...
    std::fputs(selfTestPtx(true).c_str(), stdout);
    return 0;
  }
  Options opt = parseOptions(argc, argv);
  std::string reason;
  if (!gpuAvailable(&reason)) {
    std::string msg = "SKIPPED: tle-gpu-tests needs a CUDA GPU: " + reason;
    std::string bar(std::min<size_t>(msg.size(), 100), '*');
    std::printf("%s\n%s\n%s\n", bar.c_str(), msg.c_str(), bar.c_str());
    std::fprintf(stderr, "%s\n", msg.c_str());
    return kSkip;
  }
  Report rep;
  try {
    Device dev(opt.device);
    std::printf("tle-gpu-tests: device %d: %s, compute capability %d.%d (%s), %d SMs, driver %d; "
                "modules from %s\n",
                dev.ordinal(), dev.name().c_str(), dev.computeMajor(), dev.computeMinor(),
                dev.arch().c_str(), dev.smCount(), driverVersion(), opt.cubinDir.c_str());
    auto want = [&](const char *name) { return opt.only.empty() || opt.only.count(name); };
    if (want("runtime"))
      runRuntimeSelfTest(rep, dev);
    if (want("vector_add"))
      runVectorAdd(rep, dev, opt);
    if (want("softmax"))
      runSoftmax(rep, dev, opt);
    if (want("softmax_cluster"))
      runSoftmaxCluster(rep, dev, opt, "softmax_cluster");
    if (want("softmax_cluster_staged"))
      runSoftmaxCluster(rep, dev, opt, "softmax_cluster_staged");
    if (want("layernorm"))
      runLayerNorm(rep, dev, opt);
    if (want("matmul"))
      runMatmul(rep, dev, opt, "matmul");
    if (want("matmul_tma"))
      runMatmul(rep, dev, opt, "matmul_tma");
    if (want("matmul_decode"))
      runMatmul(rep, dev, opt, "matmul_decode");
    if (want("matmul_persistent"))
      runMatmul(rep, dev, opt, "matmul_persistent");
    if (want("matmul_ws"))
      runMatmul(rep, dev, opt, "matmul_ws");
    if (want("matmul_persistent_tma"))
      runMatmul(rep, dev, opt, "matmul_persistent_tma");
    if (want("matmul_persistent_ws"))
      runMatmul(rep, dev, opt, "matmul_persistent_ws");
    if (want("matmul_epilogue"))
      runMatmul(rep, dev, opt, "matmul_epilogue");
    if (want("matmul_splitk_cluster")) {
      if (dev.computeMajor() >= 9)
        runMatmul(rep, dev, opt, "matmul_splitk_cluster");
      else
        rep.skip("matmul_splitk_cluster: thread-block clusters need sm_90");
    }
    if (want("matmul_tf32"))
      runMatmul(rep, dev, opt, "matmul_tf32");
    if (want("matmul_tn"))
      runMatmulTn(rep, dev, opt, "matmul_tn");
    if (want("matmul_tn_tf32"))
      runMatmulTn(rep, dev, opt, "matmul_tn_tf32");
  } catch (const std::exception &e) {
    rep.fail(std::string("tle-gpu-tests: ") + e.what());
  }
  std::printf("tle-gpu-tests: %d passed, %d failed, %d skipped\n", rep.passed, rep.failed, rep.skipped);
  return rep.failed ? 1 : 0;
}
