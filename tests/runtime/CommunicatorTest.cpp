// Communicators against the fake NCCL and the fake driver: creation in both modes, the device record, symmetric windows, errors, cleanup, collective launches, the C ABI.
//
// The fake driver's device memory is host memory, and the fake NCCL maps every rank's copy of a
// symmetric buffer at its slot of a reserved flat range (runtime/mock/MockNccl.cpp), so the
// tests read device records and window records, and follow NCCL's peer-pointer formula, with
// plain host loads and stores.
#include "tle/Runtime/Communicator.h"
#include "tle/Runtime/tle_rt.h"

#include "MockSymbols.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace tle::rt;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

extern std::string mockNcclPath;

namespace {

/// The fake NCCL's function `name`.
template <class Fn> Fn ncclFn(const char *name) {
  void *h = dlopen(mockNcclPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  void *s = dlsym(h, name);
  REQUIRE(s);
  return reinterpret_cast<Fn>(s);
}

int ncclCalls(const char *call) { return ncclFn<int (*)(const char *)>("mock_nccl_calls")(call); }

/// What the fake NCCL holds: communicators, allocations, windows, and the misuses it refused.
struct NcclLive {
  int comms, allocations, windows, misuses;
  NcclLive() {
    auto live = ncclFn<int (*)(int)>("mock_nccl_live");
    comms = live(0);
    allocations = live(1);
    windows = live(2);
    misuses = live(3);
  }
  bool operator==(const NcclLive &o) const {
    return comms == o.comms && allocations == o.allocations && windows == o.windows && misuses == o.misuses;
  }
};

std::ostream &operator<<(std::ostream &os, const NcclLive &l) {
  return os << "{comms " << l.comms << ", allocations " << l.allocations << ", windows " << l.windows
            << ", misuses " << l.misuses << "}";
}

/// Shows `n` devices for the scope (the fake driver's mock_set_device_count), then 1 again.
struct DeviceCount {
  explicit DeviceCount(int n) { tle::test::mockFn<void (*)(int)>("mock_set_device_count")(n); }
  ~DeviceCount() { tle::test::mockFn<void (*)(int)>("mock_set_device_count")(1); }
};

/// Sets environment variable `name` for the scope.
struct EnvVar {
  EnvVar(const char *name, const char *value) : name_(name) { setenv(name, value, 1); }
  ~EnvVar() { unsetenv(name_); }
  const char *name_;
};

std::vector<Device> devices(int n) {
  std::vector<Device> d;
  for (int i = 0; i < n; ++i)
    d.emplace_back(i);
  return d;
}

template <class T> T load(uint64_t address) {
  T v;
  std::memcpy(&v, reinterpret_cast<const void *>(address), sizeof v);
  return v;
}

template <class T> void store(uint64_t address, T v) { std::memcpy(reinterpret_cast<void *>(address), &v, sizeof v); }

/// The head of a window record, as NCCL's device code reads it (nccl_device/impl/core__types.h).
struct WindowHead {
  uint64_t winHost;
  uint64_t lsaFlatBase;
  int32_t lsaRank;
  int32_t worldRank;
  uint32_t stride4G;
};

/// NCCL's ncclGetPeerPointer over the window record at `window`, computed here independently of
/// SymmetricBuffer::peerAddress.
uint64_t peerPointer(uint64_t window, int peer, uint64_t offset) {
  auto w = load<WindowHead>(window);
  uint64_t slot = uint32_t(int64_t(w.lsaRank + peer - w.worldRank) * w.stride4G);
  return w.lsaFlatBase + (slot << 32) + offset;
}

/// Checks communicator `c` as rank `rank` of `n`: its accessors, its device record, its zeroed
/// signal area.
void checkRank(const Communicator &c, int rank, int n) {
  CHECK(c.rank() == rank);
  CHECK(c.size() == n);
  CHECK(c.device().ordinal() == rank);
  REQUIRE(c.deviceComm() != 0);
  CHECK(c.deviceComm() % 16 == 0);
  auto rec = load<DeviceCommRecord>(c.deviceComm());
  CHECK(rec.rank == rank);
  CHECK(rec.nranks == n);
  CHECK(rec.signals != 0);
  CHECK(rec.signals == c.signals().window());
  CHECK(rec.signalSlots == 64);
  CHECK(rec.reserved0 == 0);
  CHECK(rec.reserved1 == 0);
  const SymmetricBuffer &s = c.signals();
  CHECK(s.bytes() == (64 + size_t(n) + 1) * 8);
  CHECK(s.bytes() == signalAreaWords(n) * sizeof(uint64_t));
  std::vector<uint64_t> words(s.bytes() / 8, 1);
  std::memcpy(words.data(), reinterpret_cast<const void *>(s.address()), s.bytes());
  CHECK(words == std::vector<uint64_t>(words.size(), 0));
  auto head = load<WindowHead>(s.window());
  CHECK(head.worldRank == rank);
  CHECK(head.stride4G >= 1);
}

/// Rank `from` writes `value` at byte `offset` of rank `to`'s copy of `buffer` through the
/// window record of rank `from`, and the value arrives in rank `to`'s own copy.
void checkPeerWrite(const std::vector<SymmetricBuffer> &bufs, int from, int to, uint64_t offset, uint64_t value) {
  uint64_t remote = peerPointer(bufs[size_t(from)].window(), to, offset);
  CHECK(remote == bufs[size_t(from)].peerAddress(to, offset));
  store<uint64_t>(remote, value);
  CHECK(load<uint64_t>(bufs[size_t(to)].address() + offset) == value);
}

template <class E, class F> std::string messageOf(F &&body) {
  try {
    body();
  } catch (const E &e) {
    return e.what();
  }
  FAIL("no exception was thrown");
  return "";
}

} // namespace

TEST_CASE("comm: one rank through a unique id", "[comm]") {
  NcclLive before;
  UniqueId id = Communicator::uniqueId();
  CHECK(id.bytes != UniqueId{}.bytes);
  {
    Communicator c(id, 1, 0, Device(0));
    checkRank(c, 0, 1);
    CHECK(c.handle() != nullptr);
    CHECK(ncclCalls("ncclCommInitRank") > 0);
  }
  CHECK(NcclLive() == before);
}

TEST_CASE("comm: initAll makes one communicator per device", "[comm]") {
  int n = GENERATE(1, 2, 4);
  DeviceCount count(4);
  NcclLive before;
  int groups = ncclCalls("ncclGroupStart");
  {
    std::vector<Communicator> comms = Communicator::initAll(devices(n));
    REQUIRE(comms.size() == size_t(n));
    for (int i = 0; i < n; ++i)
      checkRank(comms[size_t(i)], i, n);
    // The signal areas were registered in one NCCL group.
    CHECK(ncclCalls("ncclGroupStart") == groups + 1);
    NcclLive now;
    CHECK(now.comms == before.comms + n);
    CHECK(now.windows == before.windows + n);
  }
  CHECK(NcclLive() == before);
}

TEST_CASE("comm: one thread per rank joins through a unique id", "[comm]") {
  int n = GENERATE(2, 4);
  DeviceCount count(4);
  NcclLive before;
  UniqueId id = Communicator::uniqueId();
  std::vector<std::optional<Communicator>> comms(static_cast<size_t>(n));
  std::vector<SymmetricBuffer> bufs(static_cast<size_t>(n));
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        comms[size_t(r)].emplace(id, n, r, Device(r)); // waits for every rank
        bufs[size_t(r)] = comms[size_t(r)]->allocSymmetric(4096); // collective
      } catch (const std::exception &e) {
        errors[size_t(r)] = e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r);
    CHECK(errors[size_t(r)] == "");
    REQUIRE(comms[size_t(r)]);
    checkRank(*comms[size_t(r)], r, n);
    CHECK(bufs[size_t(r)].rank() == r);
  }
  checkPeerWrite(bufs, 1, 0, 64, 0x1122334455667788ull);
  checkPeerWrite(bufs, 0, n - 1, 4088, 42);
  bufs.clear();
  comms.clear();
  CHECK(NcclLive() == before);
}

TEST_CASE("comm: symmetric buffers reach every peer's copy through the window record", "[comm]") {
  int n = GENERATE(2, 4);
  DeviceCount count(4);
  NcclLive before;
  {
    std::vector<Communicator> comms = Communicator::initAll(devices(n));
    std::vector<SymmetricBuffer> bufs = Communicator::allocSymmetric(comms, 8192);
    REQUIRE(bufs.size() == size_t(n));
    for (int r = 0; r < n; ++r) {
      const SymmetricBuffer &b = bufs[size_t(r)];
      INFO("rank " << r);
      CHECK(b.bytes() == 8192);
      CHECK(b.address() != 0);
      CHECK(b.window() != 0);
      CHECK(b.ptr(16).address == b.address() + 16);
      CHECK(load<uint64_t>(b.address() + 8184) == 0); // zero-filled
      auto head = load<WindowHead>(b.window());
      CHECK(head.lsaRank == r);
      CHECK(head.worldRank == r);
      CHECK(head.stride4G == 1);
      // Every rank's record gives the same slot for a peer.
      for (int p = 0; p < n; ++p)
        CHECK(peerPointer(b.window(), p, 0) == peerPointer(bufs[0].window(), p, 0));
    }
    // Writes through rank 1's pointers land in rank 0's copy, and the other way round.
    checkPeerWrite(bufs, 1, 0, 0, 0xfeedfacecafebeefull);
    checkPeerWrite(bufs, 0, 1, 8, 7);
    checkPeerWrite(bufs, n - 1, n - 2, 4096, 99);
    // A rank's own slot aliases its copy.
    store<uint64_t>(bufs[0].address() + 24, 5);
    CHECK(load<uint64_t>(bufs[0].peerAddress(0, 24)) == 5);
    // A peer signals rank 0's slot 3 through the signal area's window.
    uint64_t slot3 = peerPointer(load<DeviceCommRecord>(comms[1].deviceComm()).signals, 0, 3 * 8);
    store<uint64_t>(slot3, load<uint64_t>(slot3) + 5);
    CHECK(load<uint64_t>(comms[0].signals().address() + 3 * 8) == 5);
    CHECK_THROWS_AS(bufs[0].peerAddress(n), ArgumentError);
    CHECK_THROWS_AS(bufs[0].peerAddress(-1), ArgumentError);
    CHECK_THROWS_AS(bufs[0].peerAddress(0, 8193), ArgumentError);
    CHECK_THROWS_AS(bufs[0].ptr(8193), ArgumentError);
  }
  CHECK(NcclLive() == before);
}

TEST_CASE("comm: a thread driving several ranks must group their collective calls", "[comm]") {
  DeviceCount count(2);
  NcclLive before;
  {
    std::vector<Communicator> comms = Communicator::initAll(devices(2));
    EnvVar quick("TLE_MOCK_NCCL_TIMEOUT_MS", "100");
    // The member form on rank 0 alone: NCCL waits for rank 1 (forever; the fake, for 100 ms).
    std::string msg = messageOf<NcclError>([&] { comms[0].allocSymmetric(4096); });
    CHECK_THAT(msg, StartsWith("ncclCommWindowRegister failed: ncclSystemError"));
    CHECK_THAT(msg, Contains("registering a 4096-byte symmetric window for rank 0 of 2 (device 0)"));
    CHECK_THAT(msg, Contains("must group the calls with ncclGroupStart/End"));
    // The grouped form works.
    std::vector<SymmetricBuffer> bufs = Communicator::allocSymmetric(comms, 4096);
    checkPeerWrite(bufs, 1, 0, 0, 3);
  }
  CHECK(NcclLive() == before);
}

TEST_CASE("comm: an injected NCCL failure is an NcclError naming the call, and leaks nothing", "[comm]") {
  DeviceCount count(2);
  const char *call = GENERATE("ncclCommInitAll", "ncclCommUserRank", "ncclCommCuDevice", "ncclMemAlloc",
                              "ncclGroupStart", "ncclCommWindowRegister", "ncclGroupEnd");
  INFO(call);
  NcclLive before;
  int allocations = tle::test::mockFn<int (*)(int)>("mock_live")(1);
  {
    EnvVar fail("TLE_MOCK_NCCL_FAIL", call);
    try {
      Communicator::initAll(devices(2));
      FAIL("initAll succeeded");
    } catch (const NcclError &e) {
      CHECK(e.call() == call);
      CHECK(e.result() == 3);
      CHECK_THAT(e.what(), StartsWith(std::string(call) + " failed: ncclInternalError (internal error - please "
                                                          "report this issue to the NCCL developers)"));
      CHECK_THAT(e.what(), Contains(std::string("; NCCL's last error: mock NCCL: ") + call +
                                    " failed by injection (TLE_MOCK_NCCL_FAIL)"));
    }
  }
  CHECK(NcclLive() == before);
  CHECK(tle::test::mockFn<int (*)(int)>("mock_live")(1) == allocations); // device records freed
  // Communicators work again.
  std::vector<Communicator> comms = Communicator::initAll(devices(2));
  checkRank(comms[1], 1, 2);
}

TEST_CASE("comm: injected failures of the unique-id path", "[comm]") {
  NcclLive before;
  {
    EnvVar fail("TLE_MOCK_NCCL_FAIL", "ncclGetUniqueId");
    std::string msg = messageOf<NcclError>([] { Communicator::uniqueId(); });
    CHECK_THAT(msg, StartsWith("ncclGetUniqueId failed: ncclInternalError"));
  }
  UniqueId id = Communicator::uniqueId();
  {
    EnvVar fail("TLE_MOCK_NCCL_FAIL", "ncclCommInitRank");
    std::string msg = messageOf<NcclError>([&] { Communicator c(id, 1, 0, Device(0)); });
    CHECK_THAT(msg, StartsWith("ncclCommInitRank failed: ncclInternalError"));
    CHECK_THAT(msg, Contains("joining as rank 0 of 1 on device 0"));
  }
  {
    EnvVar fail("TLE_MOCK_NCCL_FAIL", "ncclCommWindowRegister");
    std::string msg = messageOf<NcclError>([&] { Communicator c(Communicator::uniqueId(), 1, 0, Device(0)); });
    CHECK_THAT(msg, StartsWith("ncclCommWindowRegister failed: ncclInternalError"));
  }
  CHECK(NcclLive() == before);
}

TEST_CASE("comm: buffers and communicators may be destroyed in any order", "[comm]") {
  DeviceCount count(2);
  NcclLive before;
  SECTION("communicators first: the buffers keep NCCL's communicators") {
    std::vector<SymmetricBuffer> bufs;
    {
      std::vector<Communicator> comms = Communicator::initAll(devices(2));
      bufs = Communicator::allocSymmetric(comms, 4096);
    }
    NcclLive now;
    CHECK(now.comms == before.comms + 2);
    CHECK(now.windows == before.windows + 2); // the signal areas went with their communicators
    checkPeerWrite(bufs, 0, 1, 128, 11);
    bufs.clear();
  }
  SECTION("buffers first") {
    std::vector<Communicator> comms = Communicator::initAll(devices(2));
    { std::vector<SymmetricBuffer> bufs = Communicator::allocSymmetric(comms, 4096); }
    CHECK(NcclLive().windows == before.windows + 2);
    comms.clear();
  }
  SECTION("moves") {
    std::vector<Communicator> comms = Communicator::initAll(devices(1));
    Communicator c = std::move(comms[0]);
    CHECK_THROWS_AS(comms[0].rank(), Error);
    CHECK(c.rank() == 0);
    SymmetricBuffer a = c.allocSymmetric(256);
    SymmetricBuffer b = std::move(a);
    CHECK(a.address() == 0);
    CHECK(a.rank() == -1);
    CHECK(b.rank() == 0);
    a = std::move(b);
    CHECK(a.bytes() == 256);
  }
  CHECK(NcclLive() == before);
}

TEST_CASE("comm: arguments are checked", "[comm]") {
  DeviceCount count(2);
  UniqueId id = Communicator::uniqueId();
  CHECK_THROWS_AS(Communicator(id, 2, 2, Device(0)), ArgumentError);
  CHECK_THROWS_AS(Communicator(id, 0, 0, Device(0)), ArgumentError);
  CHECK_THROWS_AS(Communicator::initAll({}), ArgumentError);
  CHECK_THROWS_AS(Communicator::initAll({Device(1), Device(1)}), ArgumentError);
  std::vector<Communicator> comms = Communicator::initAll(devices(2));
  CHECK_THROWS_AS(comms[0].allocSymmetric(0), ArgumentError);
  CHECK_THROWS_AS(Communicator::allocSymmetric(comms, 0), ArgumentError);
}

namespace {

std::string metadataGlobal(const std::string &json) {
  std::string s = "__tle_metadata[" + std::to_string(json.size() + 1) + "] = {";
  for (unsigned char c : json)
    s += std::to_string(unsigned(c)) + ", ";
  return s + "0};\n";
}

/// A module with two multi-GPU kernels taking the device record: `put_kernel` and the
/// cooperative `barrier_kernel`.
std::string commModule() {
  std::string json = R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [
    {"name": "put_kernel", "num_warps": 4, "params": [
      {"name": "device_dptr", "type": "u64"}, {"name": "data", "type": "*fp32", "divisibility": 16}]},
    {"name": "barrier_kernel", "num_warps": 4, "cooperative": true, "params": [
      {"name": "device_dptr", "type": "u64"}]}]})";
  return ".version 8.0\n.target sm_90a\n.address_size 64\n" + metadataGlobal(json) +
         ".visible .entry put_kernel(.param .u64 device_dptr, .param .u64 data) { ret; }\n"
         ".visible .entry barrier_kernel(.param .u64 device_dptr) { ret; }\n";
}

using tle::test::lastLaunch;

} // namespace

TEST_CASE("comm: launchAll enqueues one kernel on every rank", "[comm]") {
  DeviceCount count(2);
  std::vector<Communicator> comms = Communicator::initAll(devices(2));
  std::vector<Stream> streams;
  std::vector<Kernel> put, barrier;
  std::vector<DeviceBuffer> data;
  for (Communicator &c : comms) {
    Module m = Module::fromPtx(c.device(), commModule());
    put.push_back(m.kernel("put_kernel"));
    barrier.push_back(m.kernel("barrier_kernel"));
    streams.emplace_back(c.device());
    data.emplace_back(c.device(), 256);
  }
  std::vector<uint64_t> record = {comms[0].deviceComm(), comms[1].deviceComm()};
  std::vector<uint64_t> ptrs = {data[0].address(), data[1].address()};
  std::vector<std::vector<void *>> args = {{&record[0], &ptrs[0]}, {&record[1], &ptrs[1]}};
  int before = lastLaunch().launches;

  Communicator::launchAll(comms, put, Grid(4), streams, args);
  CHECK(lastLaunch().launches == before + 2);
  CHECK(std::string(lastLaunch().function) == "put_kernel");
  CHECK(lastLaunch().stream == streams[1].handle());
  CHECK(std::memcmp(lastLaunch().args[0], &record[1], 8) == 0);
  CHECK(std::memcmp(lastLaunch().args[1], &ptrs[1], 8) == 0);

  std::vector<std::vector<void *>> barrierArgs = {{&record[0]}, {&record[1]}};
  Communicator::launchAll(comms, barrier, Grid(2), streams, barrierArgs);
  CHECK(lastLaunch().launches == before + 4);
  CHECK(lastLaunch().cooperative == 1); // the cooperative path
  CHECK(lastLaunch().viaEx == 1);

  SECTION("a refused rank enqueues nothing") {
    std::vector<std::vector<void *>> bad = {{&record[0], &ptrs[0]}, {&record[1]}};
    CHECK_THROWS_AS(Communicator::launchAll(comms, put, Grid(4), streams, bad), ArgumentError);
    uint64_t misaligned = ptrs[1] + 4; // breaks data's divisibility 16
    std::vector<std::vector<void *>> odd = {{&record[0], &ptrs[0]}, {&record[1], &misaligned}};
    CHECK_THROWS_AS(Communicator::launchAll(comms, put, Grid(4), streams, odd), ArgumentError);
    CHECK(lastLaunch().launches == before + 4);
  }
  SECTION("kernels and streams belong to their rank's device") {
    std::vector<Kernel> swapped = {put[1], put[0]};
    std::string msg = messageOf<ArgumentError>([&] { Communicator::launchAll(comms, swapped, Grid(4), streams, args); });
    CHECK_THAT(msg, Contains("rank 0 runs on device 0, but its kernel is on device 1"));
    std::vector<Kernel> mixed = {put[0], barrier[1]};
    CHECK_THROWS_AS(Communicator::launchAll(comms, mixed, Grid(4), streams, args), ArgumentError);
    std::vector<Kernel> one = {put[0]};
    CHECK_THROWS_AS(Communicator::launchAll(comms, one, Grid(4), streams, args), ArgumentError);
    CHECK(lastLaunch().launches == before + 4);
  }
}

TEST_CASE("comm: the C ABI", "[comm][capi]") {
  DeviceCount count(2);
  NcclLive before;
  tle_rt_comm_unique_id id;
  REQUIRE(tle_rt_comm_unique_id_get(&id) == TLE_RT_SUCCESS);
  tle_rt_comm one = nullptr;
  REQUIRE(tle_rt_comm_init_rank(&id, 1, 0, 0, &one) == TLE_RT_SUCCESS);
  CHECK(tle_rt_comm_rank(one) == 0);
  CHECK(tle_rt_comm_size(one) == 1);
  CHECK(load<DeviceCommRecord>(tle_rt_comm_device_comm(one)).signalSlots == 64);
  tle_rt_symmetric s = nullptr;
  REQUIRE(tle_rt_comm_alloc_symmetric(one, 4096, &s) == TLE_RT_SUCCESS);
  CHECK(tle_rt_symmetric_bytes(s) == 4096);
  CHECK(tle_rt_symmetric_address(s) != 0);
  CHECK(tle_rt_symmetric_window(s) != 0);
  tle_rt_comm_destroy(one); // the buffer keeps NCCL's communicator until it is freed
  tle_rt_symmetric_free(s);

  int devs[2] = {0, 1};
  tle_rt_comm comms[2] = {nullptr, nullptr};
  REQUIRE(tle_rt_comm_init_all(devs, 2, comms) == TLE_RT_SUCCESS);
  CHECK(tle_rt_comm_rank(comms[1]) == 1);
  CHECK(load<DeviceCommRecord>(tle_rt_comm_device_comm(comms[1])).nranks == 2);
  tle_rt_symmetric bufs[2] = {nullptr, nullptr};
  REQUIRE(tle_rt_comm_alloc_symmetric_all(comms, 2, 1024, bufs) == TLE_RT_SUCCESS);
  store<uint64_t>(peerPointer(tle_rt_symmetric_window(bufs[1]), 0, 8), 77);
  CHECK(load<uint64_t>(tle_rt_symmetric_address(bufs[0]) + 8) == 77);
  {
    EnvVar fail("TLE_MOCK_NCCL_FAIL", "ncclMemAlloc");
    tle_rt_symmetric more[2] = {nullptr, nullptr};
    CHECK(tle_rt_comm_alloc_symmetric_all(comms, 2, 1024, more) == TLE_RT_ERROR_NCCL);
    CHECK_THAT(tle_rt_last_error(), StartsWith("ncclMemAlloc failed: ncclInternalError"));
    CHECK(tle_rt_comm_size(comms[0]) == 2); // the communicators are back in their handles
  }
  CHECK(tle_rt_comm_alloc_symmetric(nullptr, 8, &s) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK(tle_rt_comm_rank(nullptr) == -1);
  for (int i = 0; i < 2; ++i) {
    tle_rt_symmetric_free(bufs[i]);
    tle_rt_comm_destroy(comms[i]);
  }
  CHECK(NcclLive() == before);
}

// Run by ctest as runtime.comm.no-nccl with TLE_RT_NCCL naming a library that does not exist.
TEST_CASE("comm: without NCCL, communicators throw NoNcclError", "[.][no-nccl]") {
  const char *lib = std::getenv("TLE_RT_NCCL");
  REQUIRE(lib);
  std::string expected = std::string("libtle_rt: NCCL was not found: cannot load ") + lib + " (";
  std::string msg = messageOf<NoNcclError>([] { Communicator::uniqueId(); });
  CHECK_THAT(msg, StartsWith(expected));
  CHECK_THAT(msg, Contains("install NCCL 2.27 or newer (the CUDA toolkit's NCCL) or set TLE_RT_NCCL"));
  // The same answer every time, from every entry point; devices still work.
  CHECK(messageOf<NoNcclError>([] { Communicator::initAll({Device(0)}); }) == msg);
  CHECK(messageOf<NoNcclError>([] { Communicator c(UniqueId{}, 1, 0, Device(0)); }) == msg);
  tle_rt_comm_unique_id id;
  CHECK(tle_rt_comm_unique_id_get(&id) == TLE_RT_ERROR_NO_NCCL);
  CHECK(std::string(tle_rt_last_error()) == msg);
  CHECK(Device(0).name().size() > 0);
}
