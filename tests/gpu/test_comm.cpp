// tle-comm-gpu-tests: the kernels across GPUs (examples/all_gather.tle, all_gather_gemm.tle,
// gemm_reduce_scatter.tle) run on every rank of a communicator and checked against CPU
// references computed from all ranks' inputs.
//
// Usage: tle-comm-gpu-tests --cubin-dir DIR --world W (--nccl | --loopback)
//   DIR holds all_gather.wW.cubin, all_gather_gemm.wW.cubin and gemm_reduce_scatter.wW.cubin
//   (tests/gpu/comm_gpu.sh compiles them with WORLD = W).
//   --nccl: one rank per GPU of a libtle_rt Communicator (NCCL; needs W GPUs): NCCL's symmetric
//     windows, its peer-address rule and the communicator's signal area, for real.
//   --loopback: W ranks on GPU 0, each kernel launched on its own stream; the ranks' symmetric
//     heaps are W physical allocations mapped 4 GiB apart in one reserved range (the CUDA
//     driver's virtual memory management), described by window records of NCCL's layout
//     (lsaFlatBase, lsaRank, worldRank, stride4G = 1): the same kernels and the same addressing,
//     with W ranks where one GPU is all there is. Ranks that wait for each other must run at
//     once; the grids are small enough to be co-resident.
// Every launch is waited for at most 20 s: a protocol that hangs fails the test, it does not
// hang it. Exit status: 0 all pass, 1 a case fails, 77 no usable GPU (or not W of them).
#include "tle/Runtime/Communicator.h"
#include "tle/Runtime/Runtime.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace tle::rt;

namespace {

constexpr int kSkip = 77;
constexpr uint64_t k4G = 1ull << 32;

// The few driver calls the loopback heap and the timed waits need, resolved from libcuda.
struct Driver {
  void *lib = nullptr;
  template <class F> F get(const char *name) {
    void *p = dlsym(lib, name);
    if (!p)
      throw std::runtime_error(std::string("libcuda lacks ") + name);
    return reinterpret_cast<F>(p);
  }
  decltype(&cuMemAddressReserve) addressReserve;
  decltype(&cuMemCreate) create;
  decltype(&cuMemMap) map;
  decltype(&cuMemSetAccess) setAccess;
  decltype(&cuMemGetAllocationGranularity) granularity;
  decltype(&cuMemsetD8_v2) memsetD8;
  decltype(&cuMemcpyHtoD_v2) htod;
  decltype(&cuMemcpyDtoH_v2) dtoh;
  decltype(&cuStreamQuery) streamQuery;
  Driver() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      throw std::runtime_error("no libcuda.so.1");
    addressReserve = get<decltype(addressReserve)>("cuMemAddressReserve");
    create = get<decltype(create)>("cuMemCreate");
    map = get<decltype(map)>("cuMemMap");
    setAccess = get<decltype(setAccess)>("cuMemSetAccess");
    granularity = get<decltype(granularity)>("cuMemGetAllocationGranularity");
    memsetD8 = get<decltype(memsetD8)>("cuMemsetD8_v2");
    htod = get<decltype(htod)>("cuMemcpyHtoD_v2");
    dtoh = get<decltype(dtoh)>("cuMemcpyDtoH_v2");
    streamQuery = get<decltype(streamQuery)>("cuStreamQuery");
  }
};

void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(fmt::format("{} failed: CUresult {}", what, int(r)));
}

/// A symmetric buffer on every rank: its address on each rank, and each rank's window record.
struct Symmetric {
  std::vector<uint64_t> address, window;
};

/// The ranks a test runs on: devices, streams, device records, symmetric buffers and copies.
class Ranks {
public:
  virtual ~Ranks() = default;
  int world = 0;
  std::vector<Device> devices;
  std::vector<Stream> streams;
  std::vector<uint64_t> records; ///< each rank's device record (device_dptr)
  virtual Symmetric alloc(size_t bytes) = 0;
  Driver *drv = nullptr;
  void toDevice(int r, uint64_t addr, const void *src, size_t n) {
    devices[r].makeCurrent();
    check(drv->htod(addr, src, n), "cuMemcpyHtoD");
  }
  void toHost(int r, void *dst, uint64_t addr, size_t n) {
    devices[r].makeCurrent();
    check(drv->dtoh(dst, addr, n), "cuMemcpyDtoH");
  }
  void zero(int r, uint64_t addr, size_t n) {
    devices[r].makeCurrent();
    check(drv->memsetD8(addr, 0, n), "cuMemsetD8");
  }
};

/// One rank per GPU on a libtle_rt Communicator.
class NcclRanks : public Ranks {
public:
  explicit NcclRanks(int w) {
    for (int r = 0; r < w; ++r)
      devices.emplace_back(r);
    comms = Communicator::initAll(devices);
    world = w;
    for (int r = 0; r < w; ++r) {
      streams.emplace_back(devices[r]);
      records.push_back(comms[r].deviceComm());
    }
  }
  Symmetric alloc(size_t bytes) override {
    std::vector<SymmetricBuffer> bufs = Communicator::allocSymmetric(comms, bytes);
    Symmetric s;
    for (SymmetricBuffer &b : bufs) {
      s.address.push_back(b.address());
      s.window.push_back(b.window());
      zero(int(s.address.size() - 1), b.address(), bytes);
      kept.push_back(std::move(b));
    }
    return s;
  }
  std::vector<Communicator> comms;
  std::vector<SymmetricBuffer> kept;
};

/// W ranks on one GPU: heaps 4 GiB apart in one reserved range, NCCL-layout window records.
class LoopbackRanks : public Ranks {
public:
  LoopbackRanks(int w, Driver &d) {
    drv = &d;
    world = w;
    devices.emplace_back(0);
    devices[0].makeCurrent();
    for (int r = 1; r < w; ++r)
      devices.push_back(devices[0]);
    for (int r = 0; r < w; ++r)
      streams.emplace_back(devices[0]);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    check(d.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity");
    heapBytes = (kHeap + gran - 1) / gran * gran;
    check(d.addressReserve(&base, w * k4G, k4G, 0, 0), "cuMemAddressReserve");
    for (int r = 0; r < w; ++r) {
      CUmemGenericAllocationHandle h;
      check(d.create(&h, heapBytes, &prop, 0), "cuMemCreate");
      check(d.map(base + r * k4G, heapBytes, 0, h, 0), "cuMemMap");
      CUmemAccessDesc acc{};
      acc.location = prop.location;
      acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      check(d.setAccess(base + r * k4G, heapBytes, &acc, 1), "cuMemSetAccess");
    }
    recordBuf = DeviceBuffer(devices[0], size_t(w) * 32 + 4096 * 64);
    Symmetric sig = alloc(signalAreaWords(w) * 8);
    for (int r = 0; r < w; ++r) {
      DeviceCommRecord rec;
      rec.rank = r;
      rec.nranks = w;
      rec.signals = sig.window[r];
      rec.signalSlots = kSignalSlots;
      uint64_t at = recordBuf.address() + uint64_t(r) * 32;
      toDevice(0, at, &rec, sizeof rec);
      records.push_back(at);
    }
  }
  Symmetric alloc(size_t bytes) override {
    size_t off = (used + 255) / 256 * 256;
    if (off + bytes > heapBytes || windows >= 4096)
      throw std::runtime_error("loopback heap exhausted");
    used = off + bytes;
    Symmetric s;
    for (int r = 0; r < world; ++r) {
      s.address.push_back(base + r * k4G + off);
      NcclWindowHead win;
      win.lsaFlatBase = base + off;
      win.lsaRank = win.worldRank = r;
      win.stride4G = 1;
      uint64_t at = recordBuf.address() + size_t(world) * 32 + (windows++) * 64;
      toDevice(0, at, &win, sizeof win);
      s.window.push_back(at);
      zero(0, base + r * k4G + off, bytes);
    }
    return s;
  }
  static constexpr size_t kHeap = 256ull << 20;
  CUdeviceptr base = 0;
  size_t heapBytes = 0, used = 0, windows = 0;
  DeviceBuffer recordBuf;
};

/// Launches `k[r]` on every rank's stream with `args[r]`, then waits for all, at most 20 s.
void launchAll(Ranks &R, const std::vector<Kernel> &k, Grid grid, std::vector<std::vector<void *>> &args) {
  for (int r = 0; r < R.world; ++r)
    k[r].launchRaw(grid, R.streams[r], args[r].data(), args[r].size());
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int r = 0; r < R.world; ++r) {
    R.devices[r].makeCurrent();
    for (;;) {
      CUresult q = R.drv->streamQuery(static_cast<CUstream>(R.streams[r].handle()));
      if (q == CUDA_SUCCESS)
        break;
      if (q != CUDA_ERROR_NOT_READY)
        throw std::runtime_error(fmt::format("rank {}: the kernel failed (CUresult {})", r, int(q)));
      if (std::chrono::steady_clock::now() > until)
        throw std::runtime_error(fmt::format("rank {}: the kernel did not finish in 20 s (a hang)", r));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

std::vector<Kernel> load(Ranks &R, const std::string &path, const std::string &name) {
  std::vector<Kernel> ks;
  std::vector<Module> mods;
  for (int r = 0; r < R.world; ++r) {
    if (r > 0 && R.devices[r] == R.devices[0]) {
      ks.push_back(ks[0]);
      continue;
    }
    mods.push_back(Module::fromFile(R.devices[r], path));
    ks.push_back(mods.back().kernel(name));
  }
  return ks;
}

uint16_t toBf16(float f) { return BFloat16::fromFloat(f).bits; }
float fromBf16(uint16_t h) { return BFloat16{h}.toFloat(); }

std::vector<uint16_t> randomBf16(size_t n, std::mt19937 &g) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<uint16_t> v(n);
  for (auto &x : v)
    x = toBf16(d(g));
  return v;
}

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- all_gather: every rank's out holds every rank's shard, twice (the signals are consumed).
void testAllGather(Ranks &R, const std::string &dir) {
  const int W = R.world, n = 3000, block = 1024;
  std::vector<Kernel> k = load(R, fmt::format("{}/all_gather.w{}.cubin", dir, W), "all_gather");
  Symmetric out = R.alloc(size_t(W) * n * 4);
  std::vector<DeviceBuffer> x;
  for (int round = 1; round <= 2; ++round) {
    x.clear();
    std::vector<std::vector<float>> shard(W, std::vector<float>(n));
    for (int r = 0; r < W; ++r) {
      for (int i = 0; i < n; ++i)
        shard[r][i] = float(round * 100000 + r * 10000 + i);
      x.push_back(DeviceBuffer::fromHost(R.devices[r], shard[r]));
    }
    std::vector<uint64_t> a0(W), a1(W), a2(W);
    std::vector<int32_t> a3(W, n);
    std::vector<std::vector<void *>> args(W);
    for (int r = 0; r < W; ++r) {
      a0[r] = R.records[r], a1[r] = out.window[r], a2[r] = x[r].address();
      args[r] = {&a0[r], &a1[r], &a2[r], &a3[r]};
    }
    launchAll(R, k, Grid((n + block - 1) / block), args);
    for (int r = 0; r < W; ++r) {
      std::vector<float> got(size_t(W) * n);
      R.toHost(r, got.data(), out.address[r], got.size() * 4);
      for (int s = 0; s < W; ++s)
        for (int i = 0; i < n; ++i)
          if (got[size_t(s) * n + i] != shard[s][i])
            throw Failure(fmt::format("all_gather round {}: rank {} element {} of shard {} is {}, expected {}", round,
                                      r, i, s, got[size_t(s) * n + i], shard[s][i]));
    }
  }
}

/// |got - want| <= 2e-2 * (1 + |want|) for every element (bf16 outputs of K-term fp32 sums).
void compare(const std::string &what, const std::vector<float> &got, const std::vector<float> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 2e-2f * (1.f + std::fabs(want[i]))))
      throw Failure(fmt::format("{}: element {} is {}, expected {}", what, i, got[i], want[i]));
}

// ---- all_gather_gemm: C = gather(A) @ B on every rank, launched twice (epochs 1 and 2).
void testAllGatherGemm(Ranks &R, const std::string &dir) {
  const int W = R.world, mShard = 208, N = 256, K = 192; // M_SHARD is declared i32:16
  std::vector<Kernel> k = load(R, fmt::format("{}/all_gather_gemm.w{}.cubin", dir, W), "all_gather_gemm");
  std::mt19937 g(7);
  Symmetric a = R.alloc(size_t(W) * mShard * K * 2);
  std::vector<uint16_t> b = randomBf16(size_t(K) * N, g);
  std::vector<std::vector<uint16_t>> shards;
  for (int r = 0; r < W; ++r)
    shards.push_back(randomBf16(size_t(mShard) * K, g));
  std::vector<float> want(size_t(W) * mShard * N, 0.f);
  for (int m = 0; m < W * mShard; ++m)
    for (int kk = 0; kk < K; ++kk) {
      float av = fromBf16(shards[m / mShard][size_t(m % mShard) * K + kk]);
      for (int n = 0; n < N; ++n)
        want[size_t(m) * N + n] += av * fromBf16(b[size_t(kk) * N + n]);
    }
  std::vector<DeviceBuffer> bd, cd;
  for (int r = 0; r < W; ++r) {
    R.toDevice(r, a.address[r] + size_t(r) * mShard * K * 2, shards[r].data(), shards[r].size() * 2);
    bd.push_back(DeviceBuffer::fromHost(R.devices[r], b));
    cd.push_back(DeviceBuffer(R.devices[r], want.size() * 2));
  }
  for (int32_t epoch = 1; epoch <= 2; ++epoch) {
    std::vector<uint64_t> p0(W), p1(W), p2(W), p3(W), p4(W);
    std::vector<int32_t> e(W, epoch), ms(W, mShard), nn(W, N), kk(W, K);
    std::vector<std::vector<void *>> args(W);
    for (int r = 0; r < W; ++r) {
      p0[r] = R.records[r], p1[r] = a.window[r], p2[r] = a.address[r], p3[r] = bd[r].address(),
      p4[r] = cd[r].address();
      args[r] = {&p0[r], &p1[r], &p2[r], &p3[r], &p4[r], &e[r], &ms[r], &nn[r], &kk[r]};
    }
    launchAll(R, k, Grid(3), args);
    for (int r = 0; r < W; ++r) {
      std::vector<uint16_t> raw(want.size());
      cd[r].copyToHost(raw.data(), raw.size() * 2);
      std::vector<float> got(raw.size());
      for (size_t i = 0; i < raw.size(); ++i)
        got[i] = fromBf16(raw[i]);
      compare(fmt::format("all_gather_gemm epoch {} rank {}", epoch, r), got, want);
    }
  }
}

// ---- gemm_reduce_scatter: rank r's output rows are sum over ranks of A_s @ B_s, rows of rank r.
void testGemmReduceScatter(Ranks &R, const std::string &dir) {
  const int W = R.world, M = 128 * W, N = 256, kShard = 128;
  std::vector<Kernel> k = load(R, fmt::format("{}/gemm_reduce_scatter.w{}.cubin", dir, W), "gemm_reduce_scatter");
  std::mt19937 g(11);
  Symmetric c = R.alloc(size_t(M / W) * N * 4);
  std::vector<float> want(size_t(M) * N, 0.f);
  std::vector<DeviceBuffer> ad, bd;
  for (int r = 0; r < W; ++r) {
    std::vector<uint16_t> a = randomBf16(size_t(M) * kShard, g), b = randomBf16(size_t(kShard) * N, g);
    for (int m = 0; m < M; ++m)
      for (int kk = 0; kk < kShard; ++kk)
        for (int n = 0; n < N; ++n)
          want[size_t(m) * N + n] += fromBf16(a[size_t(m) * kShard + kk]) * fromBf16(b[size_t(kk) * N + n]);
    ad.push_back(DeviceBuffer::fromHost(R.devices[r], a));
    bd.push_back(DeviceBuffer::fromHost(R.devices[r], b));
  }
  std::vector<uint64_t> p0(W), p1(W), p2(W), p3(W);
  std::vector<int32_t> mm(W, M), nn(W, N), ks(W, kShard);
  std::vector<std::vector<void *>> args(W);
  for (int r = 0; r < W; ++r) {
    p0[r] = R.records[r], p1[r] = c.window[r], p2[r] = ad[r].address(), p3[r] = bd[r].address();
    args[r] = {&p0[r], &p1[r], &p2[r], &p3[r], &mm[r], &nn[r], &ks[r]};
  }
  launchAll(R, k, Grid((M / 128) * (N / 128)), args);
  for (int r = 0; r < W; ++r) {
    std::vector<float> got(size_t(M / W) * N);
    R.toHost(r, got.data(), c.address[r], got.size() * 4);
    std::vector<float> mine(want.begin() + size_t(r) * (M / W) * N, want.begin() + size_t(r + 1) * (M / W) * N);
    compare(fmt::format("gemm_reduce_scatter rank {}", r), got, mine);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string dir;
  int world = 0;
  bool nccl = false, loopback = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cubin-dir" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--world" && i + 1 < argc)
      world = std::atoi(argv[++i]);
    else if (a == "--nccl")
      nccl = true;
    else if (a == "--loopback")
      loopback = true;
    else {
      fmt::print(stderr, "usage: tle-comm-gpu-tests --cubin-dir DIR --world W (--nccl | --loopback)\n");
      return 2;
    }
  }
  if (dir.empty() || world < 1 || nccl == loopback) {
    fmt::print(stderr, "usage: tle-comm-gpu-tests --cubin-dir DIR --world W (--nccl | --loopback)\n");
    return 2;
  }
  std::unique_ptr<Driver> drv;
  try {
    drv = std::make_unique<Driver>();
    if (Device::count() < (nccl ? world : 1)) {
      fmt::print("SKIPPED: {} GPU(s), {} needed\n", Device::count(), nccl ? world : 1);
      return kSkip;
    }
  } catch (const std::exception &e) {
    fmt::print("SKIPPED: {}\n", e.what());
    return kSkip;
  }
  const char *mode = nccl ? "nccl" : "loopback";
  int failed = 0;
  try {
    std::unique_ptr<Ranks> R;
    if (nccl) {
      R = std::make_unique<NcclRanks>(world);
      R->drv = drv.get();
    } else {
      R = std::make_unique<LoopbackRanks>(world, *drv);
    }
    std::vector<std::pair<const char *, std::function<void(Ranks &, const std::string &)>>> tests = {
        {"all_gather", testAllGather}, {"all_gather_gemm", testAllGatherGemm},
        {"gemm_reduce_scatter", testGemmReduceScatter}};
    for (auto &[name, fn] : tests) {
      try {
        fn(*R, dir);
        fmt::print("PASS {} {} world={}\n", mode, name, world);
      } catch (const Failure &e) {
        fmt::print("FAIL {} {} world={}: {}\n", mode, name, world, e.what());
        ++failed;
      } catch (const Error &e) { // a refused launch or a driver error: the next case still runs
        fmt::print("FAIL {} {} world={}: {}\n", mode, name, world, e.what());
        ++failed;
      }
    }
  } catch (const std::exception &e) {
    fmt::print("FAIL {} world={}: {}\n", mode, world, e.what());
    return 1;
  }
  return failed ? 1 : 0;
}
