// A fake libnccl.so.2 for tests without GPUs: communicators of one process, symmetric windows whose peer pointers are real host addresses.
//
// Loaded by libtle_rt through TLE_RT_NCCL, next to the fake driver (MockCudaDriver.cpp), whose
// "device memory" is host memory. It exports the nccl.h (NCCL 2.28) entry points libtle_rt
// resolves, with their signatures, and models them in one process:
//
// - Groups: the ranks of one unique id (ncclGetUniqueId, then ncclCommInitRank from one thread
//   per rank) or of one ncclCommInitAll share a clique. ncclCommInitRank waits, as NCCL's does,
//   until all ranks have joined; inside ncclGroupStart/End that wait happens at ncclGroupEnd.
//   A communicator's device is the device of the fake driver's current context at init
//   (cuCtxGetDevice of the driver TLE_RT_CUDA_DRIVER names; device 0 without one).
// - Memory: ncclMemAlloc maps a memfd (2 MiB granularity, zero-filled) on the current device.
// - Windows: the k-th ncclCommWindowRegister of every rank of a clique forms window k. Its first
//   registration reserves nranks * stride4G * 4 GiB of address space (PROT_NONE; stride4G = the
//   size in 4 GiB units, rounded up) and each rank maps its own memfd pages at
//   lsaFlatBase + rank * stride4G * 4 GiB, so rank r's buffer and its flat alias are the same
//   memory, and NCCL's device formula lsaFlatBase + ((lsaRank + peer - worldRank) * stride4G) *
//   4 GiB + offset gives real host addresses of every peer's copy. The window record (the head of
//   NCCL's struct ncclWindow_vidmem: winHost, lsaFlatBase, lsaRank = worldRank = rank, stride4G)
//   lives in 256 bytes of host memory, the fake driver's device memory. Registration is
//   collective as NCCL's: without a group it waits until every rank has registered window k; in a
//   group the handle is written at ncclGroupEnd, after that wait. A thread that registers for two
//   ranks without a group therefore times out (TLE_MOCK_NCCL_TIMEOUT_MS, default 20000) with
//   ncclSystemError and a last error saying so, where a real NCCL would hang. Deregistration is
//   local; the reservation goes when the last rank deregisters.
// - Misuse (a buffer not from ncclMemAlloc, or of another device than the communicator's, sizes
//   that differ between ranks, ncclMemFree of a registered buffer, a rank joining twice) returns
//   ncclInvalidUsage / ncclInvalidArgument with a last error, and is counted (mock_nccl_live(3)).
//
// Failure injection: TLE_MOCK_NCCL_FAIL="ncclCommWindowRegister,ncclMemAlloc" (read at every call)
// makes those entry points return ncclInternalError, with ncclGetLastError saying so; a failing
// ncclGroupEnd closes the group and undoes what was queued in it.
// mock_nccl_live(what) counts what is not released: 0 communicators, 1 ncclMemAlloc allocations,
// 2 registered windows, 3 misuses so far; mock_nccl_calls(name) counts the calls of an entry point.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using ncclResult_t = int;
enum : int {
  ncclSuccess = 0,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
};
constexpr int kWinCollSymmetric = 0x01;
constexpr uint64_t k4G = uint64_t(1) << 32;
constexpr size_t kGranularity = size_t(2) << 20; // ncclMemAlloc rounds sizes up to this
constexpr size_t kPage = 4096;                   // window offsets must be multiples (NCCL: 4096)

struct UniqueIdBytes {
  char internal[128];
};

/// The head of NCCL's window record (the fields its device functions read), in "device memory".
struct WindowRecord {
  void *winHost;
  char *lsaFlatBase;
  int lsaRank;
  int worldRank;
  uint32_t stride4G;
  uint32_t mcOffset4K;
  uint32_t ginOffset4K;
  uint32_t pad;
};
constexpr size_t kRecordBytes = 256; // room for the rest of NCCL's record, zero

/// An ncclMemAlloc allocation: its memfd, mapped size and device.
struct Allocation {
  int fd = -1;
  size_t size = 0;
  int device = 0;
  int windows = 0; // registrations that use it
};

/// Window k of a clique: the flat reservation and its registrations.
struct WindowSet {
  char *flat = nullptr;
  size_t reserved = 0;
  size_t bytes = 0;
  uint32_t stride4G = 0;
  int arrived = 0;
  int live = 0;
};

/// The ranks of one unique id or one ncclCommInitAll.
struct Clique {
  int nranks = 0;
  std::vector<bool> joined;
  int joinedCount = 0;
  std::map<uint64_t, WindowSet> windows;
};

} // namespace

/// A communicator (nccl.h's opaque struct ncclComm).
struct ncclComm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  int device = 0;
  uint64_t nextWindow = 0;
  std::map<WindowRecord *, uint64_t> windows; // record -> window index
};

namespace {

// Everything below is guarded by `mutex` (never destroyed: communicators may go at exit).
std::mutex &mutex = *new std::mutex;
std::condition_variable &changed = *new std::condition_variable;
std::map<std::string, std::weak_ptr<Clique>> &cliquesById = *new std::map<std::string, std::weak_ptr<Clique>>;
std::map<uintptr_t, Allocation> &allocations = *new std::map<uintptr_t, Allocation>; // by base address
std::map<std::string, int> &callCounts = *new std::map<std::string, int>;
std::atomic<int> liveComms{0}, liveAllocations{0}, liveWindows{0}, misuses{0};
std::atomic<uint64_t> idCounter{0};

thread_local std::string lastError;
thread_local int groupDepth = 0;

/// A registration or init of the open group, completed at ncclGroupEnd.
struct Pending {
  ncclComm *comm = nullptr;
  WindowRecord **winOut = nullptr; // a registration: write the record here
  WindowRecord *record = nullptr;
  uint64_t index = 0;
  ncclComm **commOut = nullptr;    // an init: write the communicator here
};
thread_local std::vector<Pending> pending;

ncclResult_t error(ncclResult_t result, std::string message) {
  lastError = "mock NCCL: " + std::move(message);
  if (result == ncclInvalidUsage || result == ncclInvalidArgument)
    ++misuses;
  return result;
}

/// Counts the call; ncclInternalError when TLE_MOCK_NCCL_FAIL lists `call`.
ncclResult_t injected(const char *call) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++callCounts[call];
  }
  const char *env = std::getenv("TLE_MOCK_NCCL_FAIL");
  std::string list = env ? "," + std::string(env) + "," : "";
  if (list.find("," + std::string(call) + ",") == std::string::npos)
    return ncclSuccess;
  lastError = std::string("mock NCCL: ") + call + " failed by injection (TLE_MOCK_NCCL_FAIL)";
  return ncclInternalError;
}

#define MOCK_NCCL_INJECT(call)                                                                                         \
  do {                                                                                                                 \
    if (ncclResult_t injected_result = injected(call))                                                                 \
      return injected_result;                                                                                          \
  } while (0)

std::chrono::milliseconds timeout() {
  const char *env = std::getenv("TLE_MOCK_NCCL_TIMEOUT_MS");
  return std::chrono::milliseconds(env && *env ? std::atol(env) : 20000);
}

/// The device of the fake driver's current context (what NCCL's cudaGetDevice would answer).
int currentDevice() {
  using Fn = int (*)(int *);
  static std::atomic<Fn> getDevice{nullptr};
  if (!getDevice) {
    const char *env = std::getenv("TLE_RT_CUDA_DRIVER");
    if (void *h = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD))
      getDevice = reinterpret_cast<Fn>(dlsym(h, "cuCtxGetDevice"));
  }
  int device = 0;
  Fn fn = getDevice;
  if (!fn || fn(&device) != 0)
    return 0;
  return device;
}

/// Waits (the lock held) until `done`; false after the timeout.
template <class Pred> bool waitFor(std::unique_lock<std::mutex> &lock, Pred done) {
  return changed.wait_for(lock, timeout(), done);
}

/// The allocation holding [p, p + bytes), or nullptr.
Allocation *allocationOf(const void *p, size_t bytes, uintptr_t *base) {
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = allocations.upper_bound(addr);
  if (it == allocations.begin())
    return nullptr;
  --it;
  if (addr - it->first > it->second.size || bytes > it->second.size - (addr - it->first))
    return nullptr;
  *base = it->first;
  return &it->second;
}

char *slotOf(const WindowSet &w, int rank) { return w.flat + uint64_t(rank) * w.stride4G * k4G; }

/// Gives rank `rank`'s slot of window `w` back to the reservation, and the reservation back to
/// the system once no rank uses it.
void dropSlot(Clique &c, uint64_t index, int rank) {
  WindowSet &w = c.windows[index];
  mmap(slotOf(w, rank), w.stride4G * k4G, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (--w.live == 0) {
    munmap(w.flat, w.reserved);
    c.windows.erase(index);
  }
}

/// Undoes registration `rec` of `comm` (the lock held).
void dropWindow(ncclComm *comm, WindowRecord *rec) {
  auto it = comm->windows.find(rec);
  uint64_t index = it->second;
  comm->windows.erase(it);
  uintptr_t base = 0;
  if (Allocation *a = allocationOf(rec->winHost, 1, &base))
    --a->windows;
  dropSlot(*comm->clique, index, comm->rank);
  std::free(rec);
  --liveWindows;
}

/// Window `index` of the clique for a `size`-byte registration: reserved by the first rank.
ncclResult_t windowSet(Clique &c, uint64_t index, size_t size, WindowSet **out) {
  WindowSet &w = c.windows[index];
  if (w.live == 0) {
    w.bytes = size;
    w.stride4G = uint32_t((size + k4G - 1) / k4G);
    w.reserved = size_t(c.nranks) * w.stride4G * k4G;
    void *flat = mmap(nullptr, w.reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (flat == MAP_FAILED) {
      c.windows.erase(index);
      return error(ncclSystemError, "cannot reserve the address space of a window");
    }
    w.flat = static_cast<char *>(flat);
  } else if (w.bytes != size) {
    return error(ncclInvalidUsage, "window " + std::to_string(index) + " registered with " +
                                       std::to_string(w.bytes) + " bytes by one rank and " +
                                       std::to_string(size) + " by another (a collective call)");
  }
  *out = &w;
  return ncclSuccess;
}

/// Registers `buff` as this rank's part of the comm's next window (the lock held).
ncclResult_t registerLocked(ncclComm *comm, void *buff, size_t size, WindowRecord **rec, uint64_t *index) {
  uintptr_t base = 0;
  Allocation *a = allocationOf(buff, size, &base);
  if (!a)
    return error(ncclInvalidArgument, "ncclCommWindowRegister: the buffer was not allocated by ncclMemAlloc");
  size_t offset = reinterpret_cast<uintptr_t>(buff) - base;
  if (offset % kPage)
    return error(ncclInvalidArgument, "ncclCommWindowRegister: the buffer is not 4096-byte aligned");
  if (a->device != comm->device)
    return error(ncclInvalidUsage, "ncclCommWindowRegister: the buffer is on device " + std::to_string(a->device) +
                                       ", the communicator on device " + std::to_string(comm->device));
  WindowSet *w = nullptr;
  *index = comm->nextWindow;
  if (ncclResult_t r = windowSet(*comm->clique, *index, size, &w))
    return r;
  size_t length = (size + kPage - 1) / kPage * kPage;
  if (mmap(slotOf(*w, comm->rank), length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, a->fd, off_t(offset)) ==
      MAP_FAILED) {
    if (w->live == 0) {
      munmap(w->flat, w->reserved);
      comm->clique->windows.erase(*index);
    }
    return error(ncclSystemError, "cannot map a buffer into its window");
  }
  ++comm->nextWindow;
  ++w->arrived;
  ++w->live;
  ++a->windows;
  *rec = static_cast<WindowRecord *>(std::aligned_alloc(256, kRecordBytes));
  std::memset(*rec, 0, kRecordBytes);
  (*rec)->winHost = buff; // the host side of the record: here, the buffer it registers
  (*rec)->lsaFlatBase = w->flat;
  (*rec)->lsaRank = (*rec)->worldRank = comm->rank;
  (*rec)->stride4G = w->stride4G;
  comm->windows[*rec] = *index;
  ++liveWindows;
  changed.notify_all();
  return ncclSuccess;
}

/// Waits (the lock held) until every rank has registered window `index` of `comm`'s clique.
ncclResult_t awaitWindow(std::unique_lock<std::mutex> &lock, ncclComm *comm, uint64_t index) {
  Clique &c = *comm->clique;
  if (waitFor(lock, [&] { return c.windows.count(index) && c.windows[index].arrived == c.nranks; }))
    return ncclSuccess;
  return error(ncclSystemError, "timed out waiting for every rank to register window " + std::to_string(index) +
                                    " (a collective call: every rank must make it; a thread that registers for "
                                    "several ranks must group the calls with ncclGroupStart/End)");
}

/// Waits (the lock held) until every rank of `comm`'s clique has joined.
ncclResult_t awaitRanks(std::unique_lock<std::mutex> &lock, ncclComm *comm) {
  Clique &c = *comm->clique;
  if (waitFor(lock, [&] { return c.joinedCount == c.nranks; }))
    return ncclSuccess;
  return error(ncclSystemError, "timed out waiting for " + std::to_string(c.nranks - c.joinedCount) +
                                    " more rank(s) to join (ncclCommInitRank is collective)");
}

/// Deletes `comm` (the lock held): its windows, its rank, its clique when it is the last.
void destroyLocked(ncclComm *comm) {
  while (!comm->windows.empty())
    dropWindow(comm, comm->windows.begin()->first);
  delete comm;
  --liveComms;
}

} // namespace

#define MOCK_NCCL_API extern "C" __attribute__((visibility("default")))

MOCK_NCCL_API ncclResult_t ncclGetVersion(int *version) {
  MOCK_NCCL_INJECT("ncclGetVersion");
  *version = 22800;
  return ncclSuccess;
}

MOCK_NCCL_API const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case 0: return "no error";
  case 1: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case 2: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case 3: return "internal error - please report this issue to the NCCL developers";
  case 4: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case 5: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case 6: return "remote process exited or there was a network error";
  case 7: return "NCCL operation in progress";
  default: return "unknown result code";
  }
}

MOCK_NCCL_API const char *ncclGetLastError(ncclComm *) { return lastError.c_str(); }

MOCK_NCCL_API ncclResult_t ncclGetUniqueId(UniqueIdBytes *id) {
  MOCK_NCCL_INJECT("ncclGetUniqueId");
  if (!id)
    return error(ncclInvalidArgument, "ncclGetUniqueId: id is NULL");
  std::memset(id->internal, 0, sizeof id->internal);
  std::string tag = "tle-mock-nccl:" + std::to_string(getpid()) + ":" + std::to_string(++idCounter);
  std::memcpy(id->internal, tag.data(), tag.size());
  return ncclSuccess;
}

/// The clique of unique id `key` with `nranks` ranks, made by its first rank (the lock held).
static ncclResult_t cliqueOf(const std::string &key, int nranks, std::shared_ptr<Clique> *out) {
  std::shared_ptr<Clique> c = cliquesById[key].lock();
  if (!c) {
    c = std::make_shared<Clique>();
    c->nranks = nranks;
    c->joined.assign(size_t(nranks), false);
    cliquesById[key] = c;
  } else if (c->nranks != nranks) {
    return error(ncclInvalidUsage, "ncclCommInitRank: " + std::to_string(nranks) + " ranks where another rank said " +
                                       std::to_string(c->nranks));
  }
  *out = c;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommInitRank(ncclComm **out, int nranks, UniqueIdBytes id, int rank) {
  MOCK_NCCL_INJECT("ncclCommInitRank");
  if (!out || nranks < 1 || rank < 0 || rank >= nranks)
    return error(ncclInvalidArgument, "ncclCommInitRank: bad rank " + std::to_string(rank) + " of " +
                                          std::to_string(nranks));
  int device = currentDevice();
  std::unique_lock<std::mutex> lock(mutex);
  std::shared_ptr<Clique> c;
  if (ncclResult_t r = cliqueOf(std::string(id.internal, sizeof id.internal), nranks, &c))
    return r;
  if (c->joined[size_t(rank)])
    return error(ncclInvalidUsage, "ncclCommInitRank: rank " + std::to_string(rank) + " joined twice");
  c->joined[size_t(rank)] = true;
  ++c->joinedCount;
  auto *comm = new ncclComm{c, rank, device, 0, {}};
  ++liveComms;
  changed.notify_all();
  if (groupDepth > 0) {
    pending.push_back(Pending{comm, nullptr, nullptr, 0, out});
    return ncclSuccess;
  }
  if (ncclResult_t r = awaitRanks(lock, comm)) {
    c->joined[size_t(rank)] = false;
    --c->joinedCount;
    destroyLocked(comm);
    return r;
  }
  *out = comm;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommInitAll(ncclComm **comms, int ndev, const int *devlist) {
  MOCK_NCCL_INJECT("ncclCommInitAll");
  if (!comms || ndev < 1)
    return error(ncclInvalidArgument, "ncclCommInitAll: no devices");
  std::set<int> seen;
  for (int i = 0; i < ndev; ++i)
    if (!seen.insert(devlist ? devlist[i] : i).second)
      return error(ncclInvalidUsage, "ncclCommInitAll: device " + std::to_string(devlist[i]) + " listed twice");
  std::lock_guard<std::mutex> lock(mutex);
  auto c = std::make_shared<Clique>();
  c->nranks = c->joinedCount = ndev;
  c->joined.assign(size_t(ndev), true);
  for (int i = 0; i < ndev; ++i) {
    comms[i] = new ncclComm{c, i, devlist ? devlist[i] : i, 0, {}};
    ++liveComms;
  }
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommDestroy(ncclComm *comm) {
  MOCK_NCCL_INJECT("ncclCommDestroy");
  if (!comm)
    return error(ncclInvalidArgument, "ncclCommDestroy: comm is NULL");
  std::lock_guard<std::mutex> lock(mutex);
  destroyLocked(comm);
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommCount(const ncclComm *comm, int *count) {
  MOCK_NCCL_INJECT("ncclCommCount");
  *count = comm->clique->nranks;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommUserRank(const ncclComm *comm, int *rank) {
  MOCK_NCCL_INJECT("ncclCommUserRank");
  *rank = comm->rank;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommCuDevice(const ncclComm *comm, int *device) {
  MOCK_NCCL_INJECT("ncclCommCuDevice");
  *device = comm->device;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclGroupStart() {
  MOCK_NCCL_INJECT("ncclGroupStart");
  ++groupDepth;
  return ncclSuccess;
}

/// Completes the open group's inits and registrations (the lock held): waits for the other ranks,
/// then writes the handles. The first failure is returned; the rest still complete.
static ncclResult_t completeGroup(std::unique_lock<std::mutex> &lock) {
  ncclResult_t result = ncclSuccess;
  for (const Pending &p : pending) {
    ncclResult_t r = p.commOut ? awaitRanks(lock, p.comm) : awaitWindow(lock, p.comm, p.index);
    if (r == ncclSuccess && p.commOut)
      *p.commOut = p.comm;
    else if (r == ncclSuccess)
      *p.winOut = p.record;
    else if (result == ncclSuccess)
      result = r;
  }
  pending.clear();
  return result;
}

/// Undoes the open group's inits and registrations (the lock held): a failed group did nothing.
static void abortGroup() {
  for (auto p = pending.rbegin(); p != pending.rend(); ++p) {
    if (p->commOut) {
      Clique &c = *p->comm->clique;
      c.joined[size_t(p->comm->rank)] = false;
      --c.joinedCount;
      destroyLocked(p->comm);
    } else {
      dropWindow(p->comm, p->record);
      --p->comm->nextWindow;
    }
  }
  pending.clear();
}

MOCK_NCCL_API ncclResult_t ncclGroupEnd() {
  if (ncclResult_t r = injected("ncclGroupEnd")) {
    if (groupDepth > 0 && --groupDepth == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      abortGroup();
    }
    return r;
  }
  if (groupDepth == 0)
    return error(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--groupDepth > 0)
    return ncclSuccess;
  std::unique_lock<std::mutex> lock(mutex);
  return completeGroup(lock);
}

MOCK_NCCL_API ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  MOCK_NCCL_INJECT("ncclMemAlloc");
  if (!ptr || size == 0)
    return error(ncclInvalidArgument, "ncclMemAlloc: NULL pointer or 0 bytes");
  size_t mapped = (size + kGranularity - 1) / kGranularity * kGranularity;
  int fd = memfd_create("tle-mock-nccl", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, off_t(mapped)) != 0) {
    if (fd >= 0)
      close(fd);
    return error(ncclSystemError, "ncclMemAlloc: cannot make " + std::to_string(mapped) + " bytes of memory");
  }
  void *p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return error(ncclSystemError, "ncclMemAlloc: cannot map " + std::to_string(mapped) + " bytes");
  }
  int device = currentDevice();
  std::lock_guard<std::mutex> lock(mutex);
  allocations[reinterpret_cast<uintptr_t>(p)] = Allocation{fd, mapped, device, 0};
  ++liveAllocations;
  *ptr = p;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclMemFree(void *ptr) {
  MOCK_NCCL_INJECT("ncclMemFree");
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == allocations.end())
    return error(ncclInvalidArgument, "ncclMemFree: not an ncclMemAlloc pointer");
  if (it->second.windows > 0)
    return error(ncclInvalidUsage, "ncclMemFree: the buffer is still registered in a window");
  munmap(ptr, it->second.size);
  close(it->second.fd);
  allocations.erase(it);
  --liveAllocations;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm *comm, void *buff, size_t size, WindowRecord **win,
                                                  int winFlags) {
  MOCK_NCCL_INJECT("ncclCommWindowRegister");
  if (!comm || !buff || !win || size == 0)
    return error(ncclInvalidArgument, "ncclCommWindowRegister: NULL argument or 0 bytes");
  if (!(winFlags & kWinCollSymmetric))
    return error(ncclInvalidUsage, "ncclCommWindowRegister: this mock makes NCCL_WIN_COLL_SYMMETRIC windows only");
  std::unique_lock<std::mutex> lock(mutex);
  WindowRecord *rec = nullptr;
  uint64_t index = 0;
  if (ncclResult_t r = registerLocked(comm, buff, size, &rec, &index))
    return r;
  if (groupDepth > 0) {
    pending.push_back(Pending{comm, win, rec, index, nullptr});
    return ncclSuccess;
  }
  if (ncclResult_t r = awaitWindow(lock, comm, index)) {
    dropWindow(comm, rec);
    --comm->nextWindow;
    return r;
  }
  *win = rec;
  return ncclSuccess;
}

MOCK_NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm *comm, WindowRecord *win) {
  MOCK_NCCL_INJECT("ncclCommWindowDeregister");
  if (!comm || !win)
    return error(ncclInvalidArgument, "ncclCommWindowDeregister: NULL argument");
  std::lock_guard<std::mutex> lock(mutex);
  if (!comm->windows.count(win))
    return error(ncclInvalidArgument, "ncclCommWindowDeregister: not a window of this communicator");
  dropWindow(comm, win);
  return ncclSuccess;
}

/// What is not released: 0 communicators, 1 allocations, 2 windows; 3: misuses so far.
MOCK_NCCL_API int mock_nccl_live(int what) {
  switch (what) {
  case 0: return liveComms;
  case 1: return liveAllocations;
  case 2: return liveWindows;
  default: return misuses;
  }
}

/// How many times entry point `call` has been called.
MOCK_NCCL_API int mock_nccl_calls(const char *call) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = callCounts.find(call);
  return it == callCounts.end() ? 0 : it->second;
}
