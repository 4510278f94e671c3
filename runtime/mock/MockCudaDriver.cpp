// A fake libcuda for tests without a GPU: host memory, PTX-text "modules", recorded launches and two emulated kernels.
//
// Loaded by libtle_rt through TLE_RT_CUDA_DRIVER. It exports the versioned entry points libtle_rt
// resolves, with the signatures of cuda.h (CUDA 12/13), and behaves like one compute capability
// 9.0 device with 132 SMs. Device memory is host memory (CUdeviceptr = host address). A "module"
// is PTX text: `.entry NAME(` declares a function (its `.param .u64/.u32/.f32/...` list gives the
// parameter sizes), `__tle_metadata[N] = {b0, b1, ...}` a global. Text containing the word
// "bogus" fails to "JIT" with CUDA_ERROR_INVALID_PTX and an error log; a line
// `__tle_metadata_text = {...}` gives the metadata as plain text (tests/runtime/mock_modules/).
// Launches are recorded (see mock_last_launch); `scale_kernel` (out[i] = alpha * in[i]),
// `smem_kernel` (out[t] = (t + 1) % 128) and the examples' kernels (add_kernel, softmax_kernel, softmax_cluster,
// layer_norm_fwd, with float arithmetic as the .tle sources spell it) are executed on the host.
//
// TLE_MOCK_CUDA_NO_EMULATION=1 records launches without running any emulated kernel.
//
// Fault injection: mock_fail("cuMemAlloc", 2, 1, 0) makes the next call of that entry point (named
// as in cuda.h, without the _v2 suffix) return CUresult 2 instead of doing its work; the
// environment variable TLE_MOCK_CUDA_FAIL="cuInit=3,cuDeviceGetCount=100" does the same from the
// first call on (for cuInit, which libtle_rt calls once per process). mock_live() counts the
// modules, allocations, streams and events not yet released, so tests can check that a failure
// leaks nothing.
//
// Counters and knobs for the module cache and TMA tests: mock_calls("cuModuleLoadDataEx") counts
// the calls of an entry point; mock_delay(call, microseconds) makes each call of it sleep first
// (so racing threads really overlap); mock_set_device_count(n) shows n devices (each with its
// own primary context; mock_module_device(CUmodule) is the device whose context loaded a
// module). cuTensorMapEncodeTiled records its arguments (mock_last_tensor_map) and fills the map
// with a pattern derived from them; built with TLE_MOCK_NO_TENSOR_MAP the library does not export
// it (a driver older than CUDA 12.0). A `.param .align 64 .b8 name[128]` parameter is 128 bytes;
// mock_last_launch_arg copies a launch argument of any size.
//
// Streams know their device (cuStreamGetCtx); mock_foreign_stream() makes one of a context that is
// not a primary context, mock_set_current / mock_current set and read the thread's context as
// another library would. CUDA graphs, captured or built node by node, are MockGraph.cpp's.
#include "MockDriver.h"
#include "mock/MockLaunch.h"
#include "mock/MockTensorMap.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace tle::rt::cu;

using namespace tle::mockcuda;

namespace tle::mockcuda {

std::atomic<int> activeCaptures{0};
std::mutex mutex;

MockStream *mockStream(CUstream s) {
  return reinterpret_cast<uintptr_t>(s) > 2 ? reinterpret_cast<MockStream *>(s) : nullptr;
}

} // namespace tle::mockcuda

namespace {

struct MockModule {
  std::map<std::string, MockFunction> functions;
  std::vector<unsigned char> metadata;
  bool hasMetadata = false;
  int device = -1; // the device of the context current at load time
};

struct CtxTag {
  int device;
};
constexpr int kMaxDevices = 8;
CtxTag primaryCtx[kMaxDevices] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
CtxTag foreignCtx = {0}; // a context of device 0 that is not its primary context

std::atomic<int> deviceCount{1};
thread_local CUcontext current = nullptr;

} // namespace

static MockLaunch lastLaunch;
static int lastSetSharedAttr = -1;
/// Every argument of the last launch, whole (MockLaunch::args keeps the first 8 bytes).
static std::vector<std::vector<unsigned char>> lastLaunchArgs;

static MockTensorMapCall lastTensorMap;

namespace {

/// A failure to inject: `result` for `count` calls (-1: every call) after `skip` successful ones.
struct Injection {
  int result = 0;
  int count = 1;
  int skip = 0;
};
// The bookkeeping below is never destroyed: libtle_rt's process-wide objects (devices held by the
// module cache) release their contexts from exit handlers that may run after this library's
// static destructors, and those calls still come through injected().
std::mutex injectionMutex;
std::map<std::string, Injection> &injections = *new std::map<std::string, Injection>;
int injectedFailures = 0;
std::map<std::string, int> &callCounts = *new std::map<std::string, int>;   // calls per entry point (mock_calls)
std::map<std::string, int> &callDelaysUs = *new std::map<std::string, int>; // sleep before each call (mock_delay)
std::map<std::string, int> &inDelay = *new std::map<std::string, int>;      // calls sleeping in their delay now
std::map<std::string, int> &maxInDelay = *new std::map<std::string, int>;   // the most calls of one entry point delayed at once

/// Resources handed out and not yet released (mock_live).
struct Live {
  std::atomic<int> modules{0}, allocations{0}, streams{0}, events{0};
};
Live live;

/// Parses TLE_MOCK_CUDA_FAIL ("call=result,...", every call fails) when the library loads.
struct EnvInjections {
  EnvInjections() {
    const char *env = std::getenv("TLE_MOCK_CUDA_FAIL");
    std::string list = env ? env : "";
    size_t pos = 0;
    while (pos < list.size()) {
      size_t comma = list.find(',', pos);
      std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      size_t eq = item.find('=');
      if (eq != std::string::npos)
        injections[item.substr(0, eq)] = Injection{std::atoi(item.c_str() + eq + 1), -1, 0};
      if (comma == std::string::npos)
        break;
      pos = comma + 1;
    }
  }
} envInjections;

} // namespace

CUresult tle::mockcuda::injected(const char *call) {
  int delayUs = 0;
  {
    std::lock_guard<std::mutex> lock(injectionMutex);
    ++callCounts[call];
    if (auto d = callDelaysUs.find(call); d != callDelaysUs.end())
      delayUs = d->second;
    if (delayUs > 0 && ++inDelay[call] > maxInDelay[call])
      maxInDelay[call] = inDelay[call];
  }
  if (delayUs > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(delayUs));
    std::lock_guard<std::mutex> lock(injectionMutex);
    --inDelay[call];
  }
  std::lock_guard<std::mutex> lock(injectionMutex);
  auto it = injections.find(call);
  if (it == injections.end())
    return CUDA_SUCCESS;
  Injection &in = it->second;
  if (in.skip > 0) {
    --in.skip;
    return CUDA_SUCCESS;
  }
  CUresult r = in.result;
  if (in.count > 0 && --in.count == 0)
    injections.erase(it);
  ++injectedFailures;
  return r;
}

// Parameter sizes of `.param [.align N] .TYPE name[[COUNT]]` entries (COUNT elements of TYPE).
static std::vector<size_t> parseParams(const std::string &text, size_t open) {
  std::vector<size_t> sizes;
  size_t close = text.find(')', open);
  std::string list = text.substr(open, close - open);
  size_t pos = 0;
  while ((pos = list.find(".param", pos)) != std::string::npos) {
    pos += 6;
    size_t dot = list.find('.', pos);
    if (dot != std::string::npos && list.compare(dot, 6, ".align") == 0)
      dot = list.find('.', dot + 6);
    if (dot == std::string::npos) // `.param` without a type: not PTX the JIT would accept
      break;
    std::string ty = list.substr(dot + 1, 3);
    size_t bits = std::atoi(ty.c_str() + 1);
    size_t bytes = bits ? bits / 8 : 8;
    size_t end = list.find(',', dot);
    size_t bracket = list.find('[', dot);
    if (bracket != std::string::npos && (end == std::string::npos || bracket < end))
      bytes *= std::strtoul(list.c_str() + bracket + 1, nullptr, 10);
    sizes.push_back(bytes);
  }
  return sizes;
}

/// The largest `__tle_metadata[N]` a PTX module may declare (the zero-filled rest is host memory).
constexpr size_t kMaxMockGlobalBytes = size_t(64) << 20;

static MockModule *parseModule(const std::string &text) {
  auto m = new MockModule;
  size_t pos = 0;
  while ((pos = text.find(".entry ", pos)) != std::string::npos) {
    pos += 7;
    size_t open = text.find('(', pos);
    if (open == std::string::npos)
      break;
    MockFunction f;
    f.name = text.substr(pos, open - pos);
    f.paramSizes = parseParams(text, open + 1);
    m->functions[f.name] = f;
  }
  size_t mdText = text.find("__tle_metadata_text = ");
  size_t md = text.find("__tle_metadata[");
  if (mdText != std::string::npos) {
    size_t begin = mdText + 22, end = text.find('\n', begin);
    std::string json = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    m->metadata.assign(json.begin(), json.end());
    m->metadata.push_back(0);
    m->hasMetadata = true;
    for (auto &[name, fn] : m->functions) {
      fn.int8Operands = json.find("\"type\": \"*i8\"") != std::string::npos;
      fn.fp32Operands = json.find("\"type\": \"*fp32\"") != std::string::npos;
    }
  } else if (md != std::string::npos) {
    size_t brace = text.find('{', md), end = text.find('}', brace);
    std::string list = text.substr(brace + 1, end - brace - 1);
    char *p = list.data();
    while (*p) {
      char *next = nullptr;
      long v = std::strtol(p, &next, 10);
      if (next == p) {
        ++p;
        continue;
      }
      m->metadata.push_back((unsigned char)v);
      p = next;
    }
    // As in PTX, a partial initializer leaves the rest of the array zero.
    // Bounded as the driver's memory is (a crafted `__tle_metadata[99999999999]` asked for 100 GB).
    size_t declared = std::min<size_t>(std::strtoul(text.c_str() + md + 15, nullptr, 10), kMaxMockGlobalBytes);
    if (declared > m->metadata.size())
      m->metadata.resize(declared, 0);
    m->hasMetadata = true;
  }
  return m;
}

// ---- cubins (ELF images) ------------------------------------------------------------------------

template <class T> static T readLE(const unsigned char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T)); // ELF64 little-endian, as on every CUDA host
  return v;
}

/// The bytes of symbol `name` of a 64-bit little-endian ELF image (whose size the header gives:
/// the section table is read from it), or false.
static bool elfSymbol(const unsigned char *img, const std::string &name, std::vector<unsigned char> &out) {
  if (img[4] != 2 || img[5] != 1)
    return false;
  uint64_t shoff = readLE<uint64_t>(img + 0x28);
  uint16_t shentsize = readLE<uint16_t>(img + 0x3A), shnum = readLE<uint16_t>(img + 0x3C);
  auto section = [&](unsigned i) { return img + shoff + uint64_t(i) * shentsize; };
  for (unsigned i = 0; i < shnum; ++i) {
    const unsigned char *sh = section(i);
    if (readLE<uint32_t>(sh + 4) != 2 /*SHT_SYMTAB*/)
      continue;
    const unsigned char *strtab = img + readLE<uint64_t>(section(readLE<uint32_t>(sh + 0x28)) + 0x18);
    uint64_t off = readLE<uint64_t>(sh + 0x18), size = readLE<uint64_t>(sh + 0x20);
    for (uint64_t e = 0; e + 24 <= size; e += 24) {
      const unsigned char *sym = img + off + e;
      if (name != reinterpret_cast<const char *>(strtab + readLE<uint32_t>(sym)))
        continue;
      uint16_t shndx = readLE<uint16_t>(sym + 6);
      if (shndx == 0 || shndx >= shnum)
        return false;
      const unsigned char *sec = section(shndx);
      uint64_t addr = readLE<uint64_t>(sec + 0x10), value = readLE<uint64_t>(sym + 8);
      uint64_t at = readLE<uint64_t>(sec + 0x18) + (value >= addr ? value - addr : value);
      out.assign(img + at, img + at + readLE<uint64_t>(sym + 16));
      return true;
    }
  }
  return false;
}

/// The deepest nesting of arrays and objects in JSON text (brackets inside strings not counted).
static size_t jsonNestingDepth(const std::string &text) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

/// The bytes a parameter of type `type` (Triton spelling, or "nvTmaDesc") takes.
static size_t paramBytes(const std::string &type) {
  if (type.empty() || type[0] == '*')
    return 8;
  if (type == "nvTmaDesc")
    return 128;
  if (type == "i1")
    return 1;
  size_t digits = type.find_first_of("0123456789");
  size_t bits = digits == std::string::npos ? 8 : std::strtoul(type.c_str() + digits, nullptr, 10);
  return bits < 8 ? 1 : bits / 8;
}

/// A module for a cubin: its __tle_metadata from the ELF symbol table, and one function per
/// kernel the metadata describes (parameter sizes from its types, then 128 bytes per TMA
/// descriptor), as the driver would find them. Null when the image is not a readable ELF file.
static MockModule *parseCubin(const unsigned char *img) {
  auto m = new MockModule;
  std::vector<unsigned char> md;
  if (!elfSymbol(img, "__tle_metadata", md))
    return m; // a cubin without metadata loads, as with the driver
  m->metadata = md;
  m->hasMetadata = true;
  std::string json(md.begin(), std::find(md.begin(), md.end(), 0));
  // The functions come from the document only when it has the shape tlec writes: a damaged one
  // (libtle_rt reports it) gives a module without functions, never an exception out of the driver
  // or a recursion as deep as the document's nesting.
  if (jsonNestingDepth(json) > 64)
    return m;
  auto doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("kernels") || !doc["kernels"].is_array())
    return m;
  try {
    for (const auto &k : doc["kernels"]) {
      MockFunction f;
      f.name = k.value("symbol", k.value("name", std::string()));
      for (const auto &p : k.value("params", nlohmann::json::array())) {
        std::string type = p.value("type", std::string());
        f.paramSizes.push_back(paramBytes(type));
        f.int8Operands = f.int8Operands || type == "*i8";
        f.fp32Operands = f.fp32Operands || type == "*fp32";
      }
      for (size_t t = 0; t < k.value("tensor_maps", nlohmann::json::array()).size(); ++t)
        f.paramSizes.push_back(128);
      m->functions[f.name] = f;
    }
  } catch (const nlohmann::json::exception &) {
    m->functions.clear();
  }
  return m;
}

template <class T> static T arg(void **args, int i) {
  T v;
  std::memcpy(&v, args[i], sizeof(T));
  return v;
}

// fp16 by its bits (clang before 15 has no _Float16 on x86-64): IEEE binary16, round to nearest even.
static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, f;
  if (exp == 0x1f)
    f = sign | 0x7f800000u | (man << 13);
  else if (exp == 0)
    return (sign ? -1.0f : 1.0f) * std::ldexp(float(man), -24);
  else
    f = sign | ((exp - 15 + 127) << 23) | (man << 13);
  float out;
  std::memcpy(&out, &f, 4);
  return out;
}

static uint16_t floatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  uint32_t sign = (f >> 16) & 0x8000u, exp = (f >> 23) & 0xffu, man = f & 0x7fffffu;
  if (exp == 0xff) // inf / nan (kept quiet)
    return uint16_t(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
  int e = int(exp) - 127 + 15;
  if (e >= 31)
    return uint16_t(sign | 0x7c00u);
  if (e <= 0) { // subnormal or zero
    if (e < -10)
      return uint16_t(sign);
    man |= 0x800000u;
    unsigned shift = unsigned(14 - e);
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (man >> 13), rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
    ++half; // may carry into the exponent, up to infinity
  return uint16_t(sign | half);
}

static void runEmulated(const MockFunction &f, unsigned gx, unsigned bx, void **args) {
  if (f.name == "add_kernel") { // BLOCK = 1024
    auto x = arg<const float *>(args, 0), y = arg<const float *>(args, 1);
    auto z = arg<float *>(args, 2);
    int n = arg<int>(args, 3);
    for (long i = 0; i < long(gx) * 1024; ++i)
      if (i < n)
        z[i] = x[i] + y[i];
  } else if (f.name == "softmax_kernel") {
    auto out = arg<float *>(args, 0);
    auto in = arg<const float *>(args, 1);
    int inStride = arg<int>(args, 2), outStride = arg<int>(args, 3), rows = arg<int>(args, 4),
        cols = arg<int>(args, 5);
    for (unsigned pid = 0; pid < gx; ++pid)
      for (long r = pid; r < rows; r += gx) {
        const float *row = in + r * inStride;
        float m = -INFINITY, sum = 0;
        for (int c = 0; c < cols; ++c)
          m = std::fmax(m, row[c]);
        for (int c = 0; c < cols; ++c)
          sum += std::exp(row[c] - m);
        for (int c = 0; c < cols; ++c)
          out[r * outStride + c] = std::exp(row[c] - m) / sum;
      }
  } else if (f.name == "softmax_cluster" || f.name == "softmax_cluster_staged") {
    // One row per cluster: CLUSTER = 4 programs (softmax_cluster) or 2 (softmax_cluster_staged).
    const long cluster = f.name == "softmax_cluster" ? 4 : 2;
    auto out = arg<float *>(args, 0);
    auto in = arg<const float *>(args, 1);
    int outStride = arg<int>(args, 2), inStride = arg<int>(args, 3), cols = arg<int>(args, 4);
    for (long r = 0; r < long(gx) / cluster; ++r) {
      const float *row = in + r * inStride;
      // The kernel sums in a tree; a float running sum over 64K columns would drift further.
      float m = -INFINITY;
      double sum = 0;
      for (int c = 0; c < cols; ++c)
        m = std::fmax(m, row[c]);
      for (int c = 0; c < cols; ++c)
        sum += std::exp(row[c] - m);
      for (int c = 0; c < cols; ++c)
        out[r * outStride + c] = std::exp(row[c] - m) / float(sum);
    }
  } else if (f.name == "layer_norm_fwd") {
    auto X = arg<const float *>(args, 0), W = arg<const float *>(args, 2), B = arg<const float *>(args, 3);
    auto Y = arg<float *>(args, 1), Mean = arg<float *>(args, 4), Rstd = arg<float *>(args, 5);
    int stride = arg<int>(args, 6), N = arg<int>(args, 7);
    float eps = arg<float>(args, 8);
    for (unsigned row = 0; row < gx; ++row) {
      const float *x = X + long(row) * stride;
      float mean = 0, var = 0;
      for (int c = 0; c < N; ++c)
        mean += x[c];
      mean /= float(N);
      for (int c = 0; c < N; ++c)
        var += (x[c] - mean) * (x[c] - mean);
      var /= float(N);
      float rstd = 1.0f / std::sqrt(var + eps);
      Mean[row] = mean;
      Rstd[row] = rstd;
      for (int c = 0; c < N; ++c)
        Y[long(row) * stride + c] = (x[c] - mean) * rstd * W[c] + B[c];
    }
  } else if (f.name == "matmul_kernel") { // examples/matmul.tle, matmul_tma.tle, matmul_decode.tle, matmul_persistent.tle, matmul_ws.tle, fp16
    // (matmul_tf32: fp32 operands, fp32 output holding the fp16-rounded result; matmul_epilogue:
    // a bias pointer after C, C = relu(A @ B + bias), and a third descriptor, of C)
    const bool epilogue = f.paramSizes.size() == 13;
    const int o = epilogue ? 1 : 0; // the scalars' shift
    auto A = arg<const uint16_t *>(args, 0), Bm = arg<const uint16_t *>(args, 1); // fp16 bits
    auto C = arg<uint16_t *>(args, 2);
    auto Af = arg<const float *>(args, 0), Bf = arg<const float *>(args, 1);
    auto Cf = arg<float *>(args, 2);
    const uint16_t *bias = epilogue ? arg<const uint16_t *>(args, 3) : nullptr;
    int M = arg<int>(args, 3 + o), N = arg<int>(args, 4 + o), K = arg<int>(args, 5 + o);
    int lda = arg<int>(args, 6 + o), ldb = arg<int>(args, 7 + o), ldc = arg<int>(args, 8 + o);
    // matmul_tma: the runtime appends the TMA descriptors of A and B (the fake
    // cuTensorMapEncodeTiled writes the global address first); a wrong one poisons C.
    bool mapsOk = true;
    if (f.paramSizes.size() == 11 && M > 0 && N > 0 && K > 0) // empty tensors get the runtime's zeros
      mapsOk = arg<const void *>(args, 9) == A && arg<const void *>(args, 10) == Bm;
    // matmul_decode: descriptors of A, B and C (its store is a TMA store too).
    if (f.paramSizes.size() == 12 && M > 0 && N > 0 && K > 0)
      mapsOk = arg<const void *>(args, 9) == A && arg<const void *>(args, 10) == Bm && arg<const void *>(args, 11) == C;
    if (epilogue && M > 0 && N > 0 && K > 0)
      mapsOk = arg<const void *>(args, 10) == A && arg<const void *>(args, 11) == Bm && arg<const void *>(args, 12) == C;
    std::vector<float> a(size_t(M) * K), bt(size_t(N) * K); // converted once, B transposed
    for (int i = 0; i < M; ++i)
      for (int t = 0; t < K; ++t)
        a[size_t(i) * K + t] = f.fp32Operands ? Af[long(i) * lda + t] : halfToFloat(A[long(i) * lda + t]);
    for (int t = 0; t < K; ++t)
      for (int j = 0; j < N; ++j)
        bt[size_t(j) * K + t] = f.fp32Operands ? Bf[long(t) * ldb + j] : halfToFloat(Bm[long(t) * ldb + j]);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float acc = 0;
        for (int t = 0; t < K; ++t)
          acc += a[size_t(i) * K + t] * bt[size_t(j) * K + t];
        if (bias)
          acc = std::fmax(acc + halfToFloat(bias[j]), 0.0f);
        uint16_t c = floatToHalf(mapsOk ? acc : NAN);
        if (f.fp32Operands)
          Cf[long(i) * ldc + j] = halfToFloat(c);
        else
          C[long(i) * ldc + j] = c;
      }
  } else if (f.name == "matmul_tn_kernel") { // examples/matmul_tn.tle: int8 -> int32 or fp32 -> fp32
    int M = arg<int>(args, 3), N = arg<int>(args, 4), K = arg<int>(args, 5);
    int lda = arg<int>(args, 6), ldb = arg<int>(args, 7), ldc = arg<int>(args, 8);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        if (f.int8Operands) {
          auto A = arg<const int8_t *>(args, 0), Bt = arg<const int8_t *>(args, 1);
          int32_t acc = 0;
          for (int t = 0; t < K; ++t)
            acc += int32_t(A[long(i) * lda + t]) * int32_t(Bt[long(j) * ldb + t]);
          arg<int32_t *>(args, 2)[long(i) * ldc + j] = acc;
        } else {
          auto A = arg<const float *>(args, 0), Bt = arg<const float *>(args, 1);
          float acc = 0;
          for (int t = 0; t < K; ++t)
            acc += A[long(i) * lda + t] * Bt[long(j) * ldb + t];
          arg<float *>(args, 2)[long(i) * ldc + j] = acc;
        }
      }
  } else if (f.name == "scale_kernel") {
    float *out, *in;
    int n;
    float alpha;
    std::memcpy(&out, args[0], 8);
    std::memcpy(&in, args[1], 8);
    std::memcpy(&n, args[2], 4);
    std::memcpy(&alpha, args[3], 4);
    for (unsigned i = 0; i < gx * bx; ++i)
      if (int(i) < n)
        out[i] = in[i] * alpha;
  } else if (f.name == "smem_kernel") {
    int *out;
    std::memcpy(&out, args[0], 8);
    for (int t = 0; t < 128; ++t)
      out[t] = (t + 1) % 128;
  }
}

CUresult tle::mockcuda::doLaunch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, CUstream stream, void **args) {
  auto *f = reinterpret_cast<MockFunction *>(fn);
  if (!current)
    return 201; // CUDA_ERROR_INVALID_CONTEXT
  if (int(shared) > f->maxDynamicShared || gx == 0 || bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  if (MockStream *ms = mockStream(stream); ms && ms->capture == 1) { // recorded, not run
    CapturedLaunch c{fn, {gx, gy, gz}, {bx, by, bz}, shared, {}};
    for (size_t i = 0; i < f->paramSizes.size(); ++i) {
      const auto *bytes = static_cast<const unsigned char *>(args[i]);
      c.args.emplace_back(bytes, bytes + f->paramSizes[i]);
    }
    ms->captured.push_back(std::move(c));
    return CUDA_SUCCESS;
  }
  std::snprintf(lastLaunch.function, sizeof(lastLaunch.function), "%s", f->name.c_str());
  lastLaunch.grid[0] = gx, lastLaunch.grid[1] = gy, lastLaunch.grid[2] = gz;
  lastLaunch.block[0] = bx, lastLaunch.block[1] = by, lastLaunch.block[2] = bz;
  lastLaunch.shared = shared;
  lastLaunch.stream = stream;
  lastLaunch.numArgs = unsigned(f->paramSizes.size());
  std::memset(lastLaunch.args, 0, sizeof(lastLaunch.args));
  lastLaunchArgs.clear();
  for (size_t i = 0; i < f->paramSizes.size(); ++i) {
    const auto *bytes = static_cast<const unsigned char *>(args[i]);
    lastLaunchArgs.emplace_back(bytes, bytes + f->paramSizes[i]);
    if (i < 16)
      std::memcpy(lastLaunch.args[i], args[i], f->paramSizes[i] < 8 ? f->paramSizes[i] : 8);
  }
  lastLaunch.cluster[0] = lastLaunch.cluster[1] = lastLaunch.cluster[2] = 1;
  lastLaunch.cooperative = 0;
  lastLaunch.viaEx = 0;
  ++lastLaunch.launches;
  // TLE_MOCK_CUDA_NO_EMULATION=1 records launches without running the emulated kernels (the fuzz
  // target launches kernels its metadata names, with arguments that are not the examples' buffers).
  static const bool emulate = std::getenv("TLE_MOCK_CUDA_NO_EMULATION") == nullptr;
  if (emulate)
    runEmulated(*f, gx, bx, args);
  return CUDA_SUCCESS;
}

extern "C" {

__attribute__((visibility("default"))) const MockLaunch *mock_last_launch() { return &lastLaunch; }

/// A new stream of a context of device 0 that is not its primary context (release with
/// cuStreamDestroy).
__attribute__((visibility("default"))) void *mock_foreign_stream() {
  ++live.streams;
  return new MockStream{-1, 0, {}};
}
/// Makes `context` (nullptr: none) current on the calling thread, as another library would.
__attribute__((visibility("default"))) void mock_set_current(void *context) {
  current = static_cast<CUcontext>(context);
}
/// The calling thread's current context.
__attribute__((visibility("default"))) void *mock_current() { return current; }
/// The foreign (non-primary) context of device 0.
__attribute__((visibility("default"))) void *mock_foreign_context() { return &foreignCtx; }
__attribute__((visibility("default"))) int mock_last_set_shared_attr() { return lastSetSharedAttr; }

/// Copies argument `index` of the last launch (up to `cap` bytes) to `out`; returns its size in
/// bytes, or -1 when the last launch had no such argument.
__attribute__((visibility("default"))) long mock_last_launch_arg(int index, void *out, size_t cap) {
  std::lock_guard<std::mutex> lock(mutex);
  if (index < 0 || size_t(index) >= lastLaunchArgs.size())
    return -1;
  const auto &a = lastLaunchArgs[size_t(index)];
  std::memcpy(out, a.data(), a.size() < cap ? a.size() : cap);
  return long(a.size());
}

/// The arguments of the last cuTensorMapEncodeTiled call (calls = how many calls succeeded).
__attribute__((visibility("default"))) const MockTensorMapCall *mock_last_tensor_map() {
  return &lastTensorMap;
}

/// How many times entry point `call` (cuda.h name, no _v2) has been called.
__attribute__((visibility("default"))) int mock_calls(const char *call) {
  std::lock_guard<std::mutex> lock(injectionMutex);
  auto it = callCounts.find(call);
  return it == callCounts.end() ? 0 : it->second;
}
/// Makes every later call of `call` sleep `microseconds` first (0: no delay).
__attribute__((visibility("default"))) void mock_delay(const char *call, int microseconds) {
  std::lock_guard<std::mutex> lock(injectionMutex);
  callDelaysUs[call] = microseconds;
}
/// The most calls of `call` that were in their mock_delay sleep at the same time (overlap).
__attribute__((visibility("default"))) int mock_max_concurrent(const char *call) {
  std::lock_guard<std::mutex> lock(injectionMutex);
  auto it = maxInDelay.find(call);
  return it == maxInDelay.end() ? 0 : it->second;
}
/// Sets the number of devices cuDeviceGetCount reports (1..8; default 1).
__attribute__((visibility("default"))) void mock_set_device_count(int n) {
  deviceCount = n < 1 ? 1 : n > kMaxDevices ? kMaxDevices : n;
}
/// The device whose primary context was current when `module` (a CUmodule) was loaded.
__attribute__((visibility("default"))) int mock_module_device(void *module) {
  return reinterpret_cast<MockModule *>(module)->device;
}

/// Makes calls of entry point `call` (e.g. "cuMemAlloc") return `result`: `count` calls (-1: all)
/// after `skip` calls that succeed. Replaces an earlier injection for the same call.
__attribute__((visibility("default"))) void mock_fail(const char *call, int result, int count, int skip) {
  std::lock_guard<std::mutex> lock(injectionMutex);
  injections[call] = Injection{result, count, skip};
}
/// Removes every pending injection.
__attribute__((visibility("default"))) void mock_clear_failures() {
  std::lock_guard<std::mutex> lock(injectionMutex);
  injections.clear();
}
/// How many calls have failed by injection so far.
__attribute__((visibility("default"))) int mock_injected_failures() {
  std::lock_guard<std::mutex> lock(injectionMutex);
  return injectedFailures;
}
/// Live resources: 0 modules, 1 allocations, 2 streams, 3 events.
__attribute__((visibility("default"))) int mock_live(int what) {
  switch (what) {
  case 0: return live.modules;
  case 1: return live.allocations;
  case 2: return live.streams;
  default: return live.events;
  }
}

CUresult cuInit(unsigned) {
  MOCK_INJECT("cuInit");
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
  MOCK_INJECT("cuDriverGetVersion");
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  MOCK_INJECT("cuGetErrorName");
  static const std::map<int, const char *> names = {
      {0, "CUDA_SUCCESS"},                {1, "CUDA_ERROR_INVALID_VALUE"},
      {2, "CUDA_ERROR_OUT_OF_MEMORY"},    {3, "CUDA_ERROR_NOT_INITIALIZED"},
      {100, "CUDA_ERROR_NO_DEVICE"},      {101, "CUDA_ERROR_INVALID_DEVICE"},
      {200, "CUDA_ERROR_INVALID_IMAGE"},  {201, "CUDA_ERROR_INVALID_CONTEXT"},
      {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {218, "CUDA_ERROR_INVALID_PTX"},
      {500, "CUDA_ERROR_NOT_FOUND"},      {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"}, {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
      {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}, {719, "CUDA_ERROR_LAUNCH_FAILED"}};
  auto it = names.find(r);
  *s = it == names.end() ? nullptr : it->second;
  return it == names.end() ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  MOCK_INJECT("cuGetErrorString");
  static const std::map<int, const char *> texts = {
      {0, "no error"},
      {1, "invalid argument"},
      {2, "out of memory"},
      {3, "initialization error"},
      {100, "no CUDA-capable device is detected"},
      {101, "invalid device ordinal"},
      {200, "device kernel image is invalid"},
      {201, "invalid device context"},
      {209, "no kernel image is available for execution on the device"},
      {218, "a PTX JIT compilation failed"},
      {500, "named symbol not found"},
      {700, "an illegal memory access was encountered"},
      {900, "operation not permitted when stream is capturing"},
      {901, "operation failed due to a previous error during capture"},
      {701, "too many resources requested for launch"},
      {719, "unspecified launch failure"}};
  auto it = texts.find(r);
  *s = it == texts.end() ? nullptr : it->second;
  return it == texts.end() ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) {
  MOCK_INJECT("cuDeviceGetCount");
  *n = deviceCount;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  MOCK_INJECT("cuDeviceGet");
  if (ordinal < 0 || ordinal >= deviceCount)
    return 101;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  MOCK_INJECT("cuDeviceGetName");
  std::snprintf(name, size_t(len), "Mock GPU");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice) {
  MOCK_INJECT("cuDeviceGetAttribute");
  switch (attr) {
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    *v = 50 << 20;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *v = 232448;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice) {
  MOCK_INJECT("cuDeviceTotalMem");
  *b = size_t(141) << 30;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  MOCK_INJECT("cuDevicePrimaryCtxRetain");
  if (d < 0 || d >= kMaxDevices)
    return 101;
  *c = reinterpret_cast<CUcontext>(&primaryCtx[d]);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
  MOCK_INJECT("cuDevicePrimaryCtxRelease");
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
  MOCK_INJECT("cuCtxGetCurrent");
  *c = current;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  MOCK_INJECT("cuCtxSetCurrent");
  current = c;
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() {
  MOCK_INJECT("cuCtxSynchronize");
  return current ? CUDA_SUCCESS : 201;
}
CUresult cuCtxGetDevice(CUdevice *d) {
  MOCK_INJECT("cuCtxGetDevice");
  if (!current)
    return 201;
  *d = reinterpret_cast<CtxTag *>(current)->device;
  return CUDA_SUCCESS;
}

/// Capture in CU_STREAM_CAPTURE_MODE_GLOBAL: a call that is not allowed while any capture is
/// active (a module load, a blocking memset) fails, as the driver's does.
static bool refusedDuringCapture() { return activeCaptures > 0; }

CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned n, int *opts, void **vals) {
  MOCK_INJECT("cuModuleLoadDataEx");
  if (!current)
    return 201;
  if (refusedDuringCapture())
    return 900; // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
  if (std::memcmp(image, "\x7f" "ELF", 4) == 0) { // a cubin
    MockModule *m = parseCubin(static_cast<const unsigned char *>(image));
    m->device = reinterpret_cast<CtxTag *>(current)->device;
    *mod = reinterpret_cast<CUmodule>(m);
    ++live.modules;
    return CUDA_SUCCESS;
  }
  std::string text(static_cast<const char *>(image));
  if (text.find("bogus") != std::string::npos) {
    for (unsigned i = 0; i < n; ++i)
      if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) {
        size_t cap = 0;
        for (unsigned j = 0; j < n; ++j)
          if (opts[j] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            cap = reinterpret_cast<uintptr_t>(vals[j]);
        std::snprintf(static_cast<char *>(vals[i]), cap, "mock ptxas: error: unknown instruction 'bogus'");
      }
    return 218;
  }
  MockModule *m = parseModule(text);
  m->device = reinterpret_cast<CtxTag *>(current)->device;
  *mod = reinterpret_cast<CUmodule>(m);
  ++live.modules;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) {
  MOCK_INJECT("cuModuleUnload");
  delete reinterpret_cast<MockModule *>(m);
  --live.modules;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  MOCK_INJECT("cuModuleGetFunction");
  auto *mm = reinterpret_cast<MockModule *>(m);
  auto it = mm->functions.find(name);
  if (it == mm->functions.end())
    return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(&it->second);
  return CUDA_SUCCESS;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name) {
  MOCK_INJECT("cuModuleGetGlobal");
  auto *mm = reinterpret_cast<MockModule *>(m);
  if (std::strcmp(name, "__tle_metadata") != 0 || !mm->hasMetadata)
    return CUDA_ERROR_NOT_FOUND;
  *p = reinterpret_cast<CUdeviceptr>(mm->metadata.data());
  *bytes = mm->metadata.size();
  return CUDA_SUCCESS;
}
/// The test double's occupancy: 2048 threads, 32 CTAs and 228 KiB of shared memory per SM.
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction, int blockSize, size_t dynamicSmem) {
  MOCK_INJECT("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (blockSize <= 0 || blockSize > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  int blocks = std::min(32, 2048 / blockSize);
  if (dynamicSmem)
    blocks = std::min<int>(blocks, int((228u << 10) / dynamicSmem));
  *n = blocks;
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, int attr, CUfunction) {
  MOCK_INJECT("cuFuncGetAttribute");
  switch (attr) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *v = 1024;
    break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *v = 32;
    break;
  default:
    *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size) {
  MOCK_INJECT("cuFuncGetParamInfo");
  const auto *mf = reinterpret_cast<const MockFunction *>(f);
  if (index >= mf->paramSizes.size())
    return CUDA_ERROR_INVALID_VALUE;
  size_t at = 0;
  for (size_t i = 0; i < index; ++i)
    at += mf->paramSizes[i];
  *offset = at;
  *size = mf->paramSizes[index];
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, int attr, int value) {
  MOCK_INJECT("cuFuncSetAttribute");
  if (attr == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) { // as an H100: 16-CTA clusters
    if (value != 0 && value != 1)
      return CUDA_ERROR_INVALID_VALUE;
    reinterpret_cast<MockFunction *>(f)->nonPortableCluster = value;
    return CUDA_SUCCESS;
  }
  if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value > 232448)
    return CUDA_ERROR_INVALID_VALUE;
  reinterpret_cast<MockFunction *>(f)->maxDynamicShared = value;
  lastSetSharedAttr = value;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, CUstream s, void **args, void **extra) {
  MOCK_INJECT("cuLaunchKernel");
  if (extra)
    return CUDA_ERROR_INVALID_VALUE;
  return doLaunch(f, gx, gy, gz, bx, by, bz, shared, s, args);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **args, void **) {
  MOCK_INJECT("cuLaunchKernelEx");
  // As the driver: a cluster above the portable 8 CTAs needs the function's opt-in
  // (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED); 16 is this device's limit.
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto &d = c->attrs[i].value.clusterDim;
      unsigned n = d.x * d.y * d.z;
      if (n > 16 || (n > 8 && !reinterpret_cast<MockFunction *>(f)->nonPortableCluster))
        return CUresult(912); // CUDA_ERROR_INVALID_CLUSTER_SIZE
    }
  CUresult r = doLaunch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                        c->blockDimZ, c->sharedMemBytes, c->hStream, args);
  if (r)
    return r;
  lastLaunch.viaEx = 1;
  for (unsigned i = 0; i < c->numAttrs; ++i) {
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      lastLaunch.cluster[0] = c->attrs[i].value.clusterDim.x;
      lastLaunch.cluster[1] = c->attrs[i].value.clusterDim.y;
      lastLaunch.cluster[2] = c->attrs[i].value.clusterDim.z;
    } else if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
      lastLaunch.cooperative = c->attrs[i].value.cooperative;
    }
  }
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  MOCK_INJECT("cuMemAlloc");
  if (!current)
    return 201;
  void *m = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  *p = reinterpret_cast<CUdeviceptr>(m);
  if (m)
    ++live.allocations;
  return m ? CUDA_SUCCESS : 2;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  MOCK_INJECT("cuMemFree");
  std::free(reinterpret_cast<void *>(p));
  if (p)
    --live.allocations;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  MOCK_INJECT("cuMemcpyHtoD");
  std::memcpy(reinterpret_cast<void *>(d), s, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  MOCK_INJECT("cuMemcpyDtoH");
  std::memcpy(d, reinterpret_cast<const void *>(s), n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  MOCK_INJECT("cuMemcpyDtoD");
  std::memmove(reinterpret_cast<void *>(d), reinterpret_cast<const void *>(s), n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream) {
  MOCK_INJECT("cuMemcpyDtoDAsync");
  return cuMemcpyDtoD_v2(d, s, n);
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  MOCK_INJECT("cuMemsetD8");
  if (refusedDuringCapture())
    return 900;
  std::memset(reinterpret_cast<void *>(d), v, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
  MOCK_INJECT("cuMemsetD32");
  auto *p = reinterpret_cast<unsigned *>(d);
  for (size_t i = 0; i < n; ++i)
    p[i] = v;
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream) {
  MOCK_INJECT("cuMemsetD8Async");
  std::memset(reinterpret_cast<void *>(d), v, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream) {
  MOCK_INJECT("cuMemsetD32Async");
  return cuMemsetD32_v2(d, v, n);
}
CUresult cuStreamCreate(CUstream *s, unsigned) {
  MOCK_INJECT("cuStreamCreate");
  if (!current)
    return 201;
  *s = reinterpret_cast<CUstream>(new MockStream{reinterpret_cast<CtxTag *>(current)->device, 0, {}});
  ++live.streams;
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream s) {
  MOCK_INJECT("cuStreamDestroy");
  delete mockStream(s);
  --live.streams;
  return CUDA_SUCCESS;
}
CUresult cuStreamGetCtx(CUstream s, CUcontext *ctx) {
  MOCK_INJECT("cuStreamGetCtx");
  MockStream *ms = mockStream(s);
  if (!ms) {
    *ctx = current;
    return current ? CUDA_SUCCESS : 201;
  }
  *ctx = reinterpret_cast<CUcontext>(ms->device < 0 ? &foreignCtx : &primaryCtx[ms->device]);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) {
  MOCK_INJECT("cuStreamSynchronize");
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *e, unsigned) {
  MOCK_INJECT("cuEventCreate");
  *e = reinterpret_cast<CUevent>(new int(0));
  ++live.events;
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent e) {
  MOCK_INJECT("cuEventDestroy");
  delete reinterpret_cast<int *>(e);
  --live.events;
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent, CUstream) {
  MOCK_INJECT("cuEventRecord");
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent) {
  MOCK_INJECT("cuEventSynchronize");
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent, CUevent) {
  MOCK_INJECT("cuEventElapsedTime");
  *ms = 0.001f;
  return CUDA_SUCCESS;
}

#ifndef TLE_MOCK_NO_TENSOR_MAP
// Checks what the driver itself checks cheaply (alignment of the map, rank), records the call, and
// fills the map with words derived from the arguments so tests can see the bytes come back.
CUresult cuTensorMapEncodeTiled(CUtensorMap *map, int dataType, unsigned rank, void *address,
                                const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                const uint32_t *elementStrides, int interleave, int swizzle,
                                int l2Promotion, int oobFill) {
  MOCK_INJECT("cuTensorMapEncodeTiled");
  if (!map || reinterpret_cast<uintptr_t>(map) % 64 || rank < 1 || rank > 5)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  MockTensorMapCall &c = lastTensorMap;
  c.tensorMap = map;
  c.dataType = dataType;
  c.rank = rank;
  c.globalAddress = address;
  std::memset(c.globalDim, 0, sizeof(c.globalDim));
  std::memset(c.globalStrides, 0, sizeof(c.globalStrides));
  std::memset(c.boxDim, 0, sizeof(c.boxDim));
  std::memset(c.elementStrides, 0, sizeof(c.elementStrides));
  for (unsigned i = 0; i < rank; ++i) {
    c.globalDim[i] = dims[i];
    c.boxDim[i] = box[i];
    c.elementStrides[i] = elementStrides[i];
    if (i + 1 < rank)
      c.globalStrides[i] = strides[i];
  }
  c.interleave = interleave;
  c.swizzle = swizzle;
  c.l2Promotion = l2Promotion;
  c.oobFill = oobFill;
  ++c.calls;
  // The pattern: word 0 the address, word 1 a tag with the enums, words 2.. the dims and boxes.
  std::memset(map, 0, sizeof(*map));
  map->opaque[0] = reinterpret_cast<uint64_t>(address);
  map->opaque[1] = 0x544d41ull << 40 | uint64_t(dataType) << 32 | uint64_t(rank) << 24 |
                   uint64_t(interleave) << 16 | uint64_t(swizzle) << 8 |
                   uint64_t(l2Promotion) << 4 | uint64_t(oobFill);
  for (unsigned i = 0; i < rank; ++i) {
    map->opaque[2 + i] = dims[i];
    map->opaque[7 + i] = box[i];
  }
  map->opaque[15] = 0x600d;
  return CUDA_SUCCESS;
}
#endif

} // extern "C"
