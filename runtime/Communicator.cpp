// Communicators over the dlopen'ed NCCL: creation, symmetric windows, the device record and collective launches.
#include "tle/Runtime/Communicator.h"

#include "CudaDriver.h"
#include "Nccl.h"
#include "RuntimeState.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <set>

namespace tle::rt {

NoNcclError::NoNcclError(const std::string &message) : Error(message) {}
NcclError::NcclError(std::string call, int result, const std::string &message)
    : Error(message), call_(std::move(call)), result_(result) {}

namespace {

/// An open NCCL group (ncclGroupStart); closed by end(), or by the destructor on an exception.
class NcclGroup {
public:
  NcclGroup() { nccl::check(nccl::api().ncclGroupStart(), "ncclGroupStart", nullptr); }
  NcclGroup(const NcclGroup &) = delete;
  NcclGroup &operator=(const NcclGroup &) = delete;
  ~NcclGroup() {
    if (open_)
      nccl::api().ncclGroupEnd();
  }
  nccl::ncclResult_t end() {
    open_ = false;
    return nccl::api().ncclGroupEnd();
  }

private:
  bool open_ = true;
};

} // namespace

namespace detail {

/// One rank's NCCL communicator on its device. Shared by the Communicator and every
/// SymmetricBuffer allocated through it, so that ncclCommDestroy comes after their deregistration.
struct CommState {
  explicit CommState(Device d) : device(std::move(d)) {}
  CommState(const CommState &) = delete;
  CommState &operator=(const CommState &) = delete;
  ~CommState() {
    if (!comm)
      return;
    ScopedContext scope(context(), std::nothrow);
    if (scope.ok())
      nccl::api().ncclCommDestroy(comm); // api() loaded, or comm would be null
  }

  cu::CUcontext context() const { return static_cast<cu::CUcontext>(device.context()); }

  /// "rank 1 of 4 (device 1)", for messages.
  std::string where() const { return fmt::format("rank {} of {} (device {})", rank, nranks, device.ordinal()); }

  /// This rank's copy of a new symmetric buffer: ncclMemAlloc'd on the device and zero-filled
  /// (finished before the window exists, so no peer can write into it first); no window yet.
  static SymmetricBuffer allocateCopy(const std::shared_ptr<CommState> &st, size_t bytes);

  /// Registers the copies `bufs` (one per rank of a group, from allocateCopy) as their ranks'
  /// parts of one window, in one NCCL group; each buffer then owns the window NCCL made for it
  /// (in SymmetricBuffer::window_, so that a failure deregisters it), checked by adoptWindow.
  static void registerGrouped(std::vector<SymmetricBuffer> &bufs, size_t bytes);

  /// Checks the window NCCL made for `b` and reads the part of its record the peer-address
  /// formula needs (cuMemcpyDtoH); the buffer then owns the window.
  static void adoptWindow(SymmetricBuffer &b, nccl::ncclWindow_t win);

  Device device;
  nccl::ncclComm_t comm = nullptr;
  int rank = 0;
  int nranks = 0;
};

SymmetricBuffer CommState::allocateCopy(const std::shared_ptr<CommState> &st, size_t bytes) {
  SymmetricBuffer b;
  b.comm_ = st;
  b.bytes_ = bytes;
  ScopedContext scope(st->context());
  void *p = nullptr;
  nccl::check(nccl::api().ncclMemAlloc(&p, bytes), "ncclMemAlloc", st->comm,
              fmt::format("allocating {} symmetric bytes for {}", bytes, st->where()));
  b.address_ = reinterpret_cast<uintptr_t>(p);
  const cu::Api &a = cu::api();
  cu::check(a.cuMemsetD8(b.address_, 0, bytes), "cuMemsetD8");
  cu::check(a.cuCtxSynchronize(), "cuCtxSynchronize");
  return b;
}

void CommState::registerGrouped(std::vector<SymmetricBuffer> &bufs, size_t bytes) {
  // NCCL writes the windows by ncclGroupEnd.
  std::vector<nccl::ncclWindow_t> wins(bufs.size(), nullptr);
  auto own = [&] {
    for (size_t i = 0; i < bufs.size(); ++i)
      bufs[i].window_ = reinterpret_cast<uintptr_t>(wins[i]);
  };
  const nccl::Api &a = nccl::api();
  ScopedContext outer(bufs[0].comm_->context()); // NCCL switches devices at ncclGroupEnd
  NcclGroup group;
  for (size_t i = 0; i < bufs.size(); ++i) {
    const CommState &st = *bufs[i].comm_;
    ScopedContext scope(st.context());
    nccl::ncclResult_t r = a.ncclCommWindowRegister(st.comm, reinterpret_cast<void *>(bufs[i].address_), bytes,
                                                     &wins[i], nccl::NCCL_WIN_COLL_SYMMETRIC);
    if (r != nccl::ncclSuccess) {
      group.end();
      own();
      nccl::fail("ncclCommWindowRegister", r, st.comm,
                 fmt::format("registering a {}-byte symmetric window for {} (grouped)", bytes, st.where()));
    }
  }
  nccl::ncclResult_t r = group.end();
  own();
  if (r != nccl::ncclSuccess)
    nccl::fail("ncclGroupEnd", r, nullptr,
               fmt::format("registering {} symmetric windows of {} bytes", bufs.size(), bytes));
}


void CommState::adoptWindow(SymmetricBuffer &b, nccl::ncclWindow_t win) {
  const CommState &st = *b.comm_;
  if (!win)
    throw Error(fmt::format("libtle_rt: ncclCommWindowRegister made no window for {}: this NCCL "
                            "communicator does not support symmetric memory (NCCL provides it "
                            "with its cuMem allocator, for GPUs that can map each other's memory)",
                            st.where()));
  b.window_ = reinterpret_cast<uintptr_t>(win);
  NcclWindowHead head{};
  {
    ScopedContext scope(st.context());
    // The record may be device memory, or page-locked host memory the device reads through the
    // unified address space (CU_POINTER_ATTRIBUTE_MEMORY_TYPE: 1 host, 2 device, 3 array,
    // 4 unified): a host record is read in place.
    unsigned type = 0;
    bool known = cu::api().cuPointerGetAttribute &&
                 cu::api().cuPointerGetAttribute(&type, 2, b.window_) == cu::CUDA_SUCCESS;
    cu::CUresult r = cu::CUDA_SUCCESS;
    if (known && type == 1)
      std::memcpy(&head, reinterpret_cast<const void *>(b.window_), sizeof head);
    else
      r = cu::api().cuMemcpyDtoH(&head, b.window_, sizeof head);
    if (r != cu::CUDA_SUCCESS) {
      throw DriverError("cuMemcpyDtoH", r,
                        fmt::format("libtle_rt: cannot read the window record NCCL made for {} at {:#x} "
                                    "(cuMemcpyDtoH: CUresult {}; the CUDA driver knows that address as {})",
                                    st.where(), b.window_, r,
                                    known ? fmt::format("memory of type {}", type) : std::string("no allocation")));
    }
  }
  if (head.worldRank != st.rank || head.stride4G == 0 || head.lsaFlatBase == 0)
    throw Error(fmt::format("libtle_rt: the window record NCCL made for {} does not have the layout "
                            "libtle_rt reads (NCCL 2.27/2.28's ncclWindow_vidmem): worldRank {}, "
                            "stride4G {}, lsaFlatBase {:#x}",
                            st.where(), head.worldRank, head.stride4G, head.lsaFlatBase));
  b.flatBase_ = head.lsaFlatBase;
  b.lsaRank_ = head.lsaRank;
  b.stride4G_ = head.stride4G;
}

} // namespace detail

// ---------------------------------------------------------------------------------------------
// SymmetricBuffer
// ---------------------------------------------------------------------------------------------

void SymmetricBuffer::release() noexcept {
  if (comm_ && (address_ || window_)) {
    detail::ScopedContext scope(comm_->context(), std::nothrow);
    if (scope.ok()) {
      const nccl::Api &a = nccl::api(); // loaded, or there would be no address
      if (window_)
        a.ncclCommWindowDeregister(comm_->comm, reinterpret_cast<nccl::ncclWindow_t>(window_));
      if (address_)
        a.ncclMemFree(reinterpret_cast<void *>(address_));
    }
  }
  comm_.reset();
  address_ = window_ = flatBase_ = 0;
  bytes_ = 0;
  lsaRank_ = 0;
  stride4G_ = 0;
}

SymmetricBuffer::~SymmetricBuffer() { release(); }

SymmetricBuffer::SymmetricBuffer(SymmetricBuffer &&o) noexcept { *this = std::move(o); }

SymmetricBuffer &SymmetricBuffer::operator=(SymmetricBuffer &&o) noexcept {
  if (this != &o) {
    release();
    comm_ = std::move(o.comm_);
    address_ = std::exchange(o.address_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
    window_ = std::exchange(o.window_, 0);
    flatBase_ = std::exchange(o.flatBase_, 0);
    lsaRank_ = std::exchange(o.lsaRank_, 0);
    stride4G_ = std::exchange(o.stride4G_, 0);
  }
  return *this;
}

DevicePtr SymmetricBuffer::ptr(size_t byteOffset) const {
  if (byteOffset > bytes_)
    throw ArgumentError(fmt::format("SymmetricBuffer::ptr: offset {} is past the end of a {}-byte buffer",
                                    byteOffset, bytes_));
  return DevicePtr{address_ + byteOffset};
}

uint64_t SymmetricBuffer::peerAddress(int peer, size_t byteOffset) const {
  if (!comm_ || !window_)
    throw ArgumentError("SymmetricBuffer::peerAddress: the buffer is empty");
  if (peer < 0 || peer >= comm_->nranks)
    throw ArgumentError(fmt::format("SymmetricBuffer::peerAddress: peer {} is not a rank of the {}-rank "
                                    "communicator",
                                    peer, comm_->nranks));
  if (byteOffset > bytes_)
    throw ArgumentError(fmt::format("SymmetricBuffer::peerAddress: offset {} is past the end of a "
                                    "{}-byte buffer",
                                    byteOffset, bytes_));
  // NCCL's add4G: the slot index times stride4G is added to the upper 32 bits, modulo 2^32.
  int64_t slot = int64_t(lsaRank_) + peer - comm_->rank;
  uint32_t delta = uint32_t(slot * int64_t(stride4G_));
  uint32_t high = uint32_t(flatBase_ >> 32) + delta;
  return ((uint64_t(high) << 32) | (flatBase_ & 0xffffffffull)) + byteOffset;
}

int SymmetricBuffer::rank() const { return comm_ ? comm_->rank : -1; }

// ---------------------------------------------------------------------------------------------
// Communicator: creation
// ---------------------------------------------------------------------------------------------

namespace {

using detail::CommState;
using detail::ScopedContext;

/// Reads the rank, size and device NCCL gave `st` and checks them against what was asked.
void describeComm(CommState &st, int rank, int nranks) {
  const nccl::Api &a = nccl::api();
  int device = -1;
  nccl::check(a.ncclCommUserRank(st.comm, &st.rank), "ncclCommUserRank", st.comm);
  nccl::check(a.ncclCommCount(st.comm, &st.nranks), "ncclCommCount", st.comm);
  nccl::check(a.ncclCommCuDevice(st.comm, &device), "ncclCommCuDevice", st.comm);
  if (st.rank != rank || st.nranks != nranks || device != st.device.ordinal())
    throw Error(fmt::format("libtle_rt: NCCL made rank {} of {} on device {} where rank {} of {} on "
                            "device {} was asked for",
                            st.rank, st.nranks, device, rank, nranks, st.device.ordinal()));
}

/// The device record of `st` with signal area `signals`, in fresh device memory (cuMemAlloc,
/// 256-byte aligned, written with cuMemcpyHtoD).
DeviceBuffer writeRecord(const CommState &st, const SymmetricBuffer &signals) {
  DeviceCommRecord r;
  r.rank = st.rank;
  r.nranks = st.nranks;
  r.signals = signals.window();
  r.signalSlots = kSignalSlots;
  DeviceBuffer b(st.device, sizeof r);
  b.copyFromHost(&r, sizeof r);
  return b;
}

void checkLaunchSizes(size_t comms, size_t kernels, size_t streams, size_t args) {
  if (comms == 0 || kernels != comms || streams != comms || args != comms)
    throw ArgumentError(fmt::format("Communicator::launchAll: {} communicators need as many kernels, streams "
                                    "and argument lists (given {}, {} and {})",
                                    comms, kernels, streams, args));
}

void checkBytes(size_t bytes) {
  if (bytes == 0)
    throw ArgumentError("Communicator::allocSymmetric: a symmetric buffer needs at least one byte");
}

} // namespace

UniqueId Communicator::uniqueId() {
  nccl::ncclUniqueId raw{};
  nccl::check(nccl::api().ncclGetUniqueId(&raw), "ncclGetUniqueId", nullptr);
  UniqueId id;
  std::memcpy(id.bytes.data(), raw.internal, sizeof raw.internal);
  return id;
}

Communicator::Communicator(const UniqueId &id, int nranks, int rank, const Device &device) {
  if (nranks < 1 || rank < 0 || rank >= nranks)
    throw ArgumentError(fmt::format("Communicator: rank {} of {} ranks is not a rank (0 <= rank < nranks, "
                                    "nranks >= 1)",
                                    rank, nranks));
  const nccl::Api &a = nccl::api();
  auto st = std::make_shared<CommState>(device);
  nccl::ncclUniqueId raw;
  std::memcpy(raw.internal, id.bytes.data(), sizeof raw.internal);
  nccl::ncclComm_t comm = nullptr;
  {
    ScopedContext scope(st->context());
    nccl::check(a.ncclCommInitRank(&comm, nranks, raw, rank), "ncclCommInitRank", nullptr,
                fmt::format("joining as rank {} of {} on device {}", rank, nranks, device.ordinal()));
  }
  st->comm = comm;
  describeComm(*st, rank, nranks);
  state_ = std::move(st);
  signals_ = allocSymmetric(signalAreaWords(nranks) * sizeof(uint64_t));
  record_ = writeRecord(*state_, signals_);
}

std::vector<Communicator> Communicator::initAll(const std::vector<Device> &devices) {
  int n = int(devices.size());
  std::vector<int> ordinals;
  for (const Device &d : devices)
    ordinals.push_back(d.ordinal());
  if (n == 0)
    throw ArgumentError("Communicator::initAll: no devices");
  if (std::set<int>(ordinals.begin(), ordinals.end()).size() != ordinals.size())
    throw ArgumentError("Communicator::initAll: a device is listed twice (one rank per GPU)");
  std::vector<nccl::ncclComm_t> raw(size_t(n), nullptr);
  {
    // NCCL switches devices as it goes; the scope gives the caller's context back afterwards.
    ScopedContext scope(static_cast<cu::CUcontext>(devices[0].context()));
    nccl::check(nccl::api().ncclCommInitAll(raw.data(), n, ordinals.data()), "ncclCommInitAll", nullptr,
                fmt::format("making {} communicators", n));
  }
  std::vector<Communicator> comms;
  for (int i = 0; i < n; ++i) {
    Communicator c;
    c.state_ = std::make_shared<CommState>(devices[size_t(i)]);
    c.state_->comm = raw[size_t(i)];
    comms.push_back(std::move(c));
  }
  for (int i = 0; i < n; ++i)
    describeComm(*comms[size_t(i)].state_, i, n);
  std::vector<SymmetricBuffer> signals = allocSymmetric(comms, signalAreaWords(n) * sizeof(uint64_t));
  for (int i = 0; i < n; ++i) {
    Communicator &c = comms[size_t(i)];
    c.signals_ = std::move(signals[size_t(i)]);
    c.record_ = writeRecord(*c.state_, c.signals_);
  }
  return comms;
}

Communicator::~Communicator() = default;
Communicator::Communicator(Communicator &&) noexcept = default;
Communicator &Communicator::operator=(Communicator &&) noexcept = default;

const detail::CommState &Communicator::state() const {
  if (!state_)
    throw Error("libtle_rt: the Communicator is empty (moved from)");
  return *state_;
}

int Communicator::rank() const { return state().rank; }
int Communicator::size() const { return state().nranks; }
Device Communicator::device() const { return state().device; }
void *Communicator::handle() const { return state().comm; }

uint64_t Communicator::deviceComm() const {
  state();
  return record_.address();
}

const SymmetricBuffer &Communicator::signals() const {
  state();
  return signals_;
}

// ---------------------------------------------------------------------------------------------
// Communicator: symmetric memory
// ---------------------------------------------------------------------------------------------

SymmetricBuffer Communicator::allocSymmetric(size_t bytes) {
  checkBytes(bytes);
  const CommState &st = state();
  SymmetricBuffer b = CommState::allocateCopy(state_, bytes);
  nccl::ncclWindow_t win = nullptr;
  {
    ScopedContext scope(st.context());
    nccl::check(nccl::api().ncclCommWindowRegister(st.comm, reinterpret_cast<void *>(b.address_), bytes,
                                                   &win, nccl::NCCL_WIN_COLL_SYMMETRIC),
                "ncclCommWindowRegister", st.comm,
                fmt::format("registering a {}-byte symmetric window for {}", bytes, st.where()));
  }
  CommState::adoptWindow(b, win);
  return b;
}

std::vector<SymmetricBuffer> Communicator::allocSymmetric(std::vector<Communicator> &comms, size_t bytes) {
  checkBytes(bytes);
  if (comms.empty())
    throw ArgumentError("Communicator::allocSymmetric: no communicators");
  std::vector<SymmetricBuffer> out;
  for (Communicator &c : comms) {
    c.state();
    out.push_back(CommState::allocateCopy(c.state_, bytes));
  }
  CommState::registerGrouped(out, bytes);
  for (SymmetricBuffer &b : out) {
    auto win = reinterpret_cast<nccl::ncclWindow_t>(std::exchange(b.window_, 0));
    CommState::adoptWindow(b, win);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Communicator: collective launches
// ---------------------------------------------------------------------------------------------

void Communicator::launchAll(std::vector<Communicator> &comms, const std::vector<Kernel> &kernels, Grid grid,
                             std::vector<Stream> &streams, const std::vector<std::vector<void *>> &args) {
  size_t n = comms.size();
  checkLaunchSizes(n, kernels.size(), streams.size(), args.size());
  // Every rank's launch is checked before any is enqueued: a kernel that waits for its peers
  // must not be left running alone.
  for (size_t i = 0; i < n; ++i) {
    const Kernel &k = kernels[i];
    Device dev = comms[i].device();
    if (k.device() != dev || streams[i].device() != dev)
      throw ArgumentError(fmt::format("Communicator::launchAll: rank {} runs on device {}, but its kernel is "
                                      "on device {} and its stream on device {}",
                                      i, dev.ordinal(), k.device().ordinal(), streams[i].device().ordinal()));
    if (k.info().name != kernels[0].info().name)
      throw ArgumentError(fmt::format("Communicator::launchAll: rank {}'s kernel is {}, rank 0's {} (one "
                                      "kernel on every rank)",
                                      i, k.info().name, kernels[0].info().name));
    void **a = const_cast<void **>(args[i].data());
    k.checkRawArgs(a, args[i].size());
    ScopedContext scope(static_cast<cu::CUcontext>(dev.context()));
    std::vector<TensorMap> maps;
    std::vector<void *> withMaps;
    k.prepareLaunch(grid, a, args[i].size(), maps, withMaps);
  }
  for (size_t i = 0; i < n; ++i)
    kernels[i].launchOnHandle(grid, streams[i].handle(), const_cast<void **>(args[i].data()), args[i].size());
}

} // namespace tle::rt
