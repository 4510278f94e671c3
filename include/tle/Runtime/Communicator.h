// libtle_rt communicators: NCCL communicators, symmetric memory and the device record multi-GPU kernels receive.
//
// A Communicator joins one GPU to a group of GPUs (its ranks) through NCCL, which libtle_rt opens
// with dlopen("libnccl.so.2") the first time a communicator is made (TLE_RT_NCCL names another
// library), so programs linked against libtle_rt need NCCL only when they use this header. Two
// ways to make them:
//   - one process (or one thread) per GPU: rank 0 calls Communicator::uniqueId() and ships the
//     128 bytes to the other ranks itself; every rank then constructs
//     Communicator(id, nranks, rank, device), which returns once all ranks have joined;
//   - one process driving every GPU: Communicator::initAll(devices), one communicator per device.
// Each communicator allocates a zero-filled symmetric signal area and writes its 32-byte device
// record (deviceComm(), the `device_dptr` argument of a multi-GPU kernel: layout below). Memory
// every rank can address is allocated with allocSymmetric. NVLink multicast (NVLS) is never asked
// for. See docs/runtime.md, "Communicators (multi-GPU)".
//
// Collective calls: the constructor, allocSymmetric and initAll are collective (every rank makes
// the same calls, with the same sizes, in the same order). A thread that acts for several ranks
// must use the static forms (initAll, allocSymmetric(comms, bytes)), which group the per-rank
// NCCL calls (ncclGroupStart/End) as NCCL requires; calling the member allocSymmetric on each of
// them in turn from one thread waits forever on a real NCCL for the ranks it has not reached.
//
// Thread rules: a Communicator and the SymmetricBuffers it allocated are used by one thread at a
// time (NCCL communicators are not thread-safe); distinct communicators may be used from distinct
// threads at once (the one-thread-per-GPU mode). Every call makes the communicator's device's
// primary context current for its duration and restores the caller's context, as Runtime.h does.
#pragma once

#include "tle/Runtime/Runtime.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tle::rt {

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

/// NCCL cannot be used: libnccl.so.2 (or $TLE_RT_NCCL) cannot be loaded, or it lacks an entry
/// point libtle_rt needs (NCCL older than 2.27). what() names the library and the cause:
/// "libtle_rt: NCCL was not found: cannot load libnccl.so.2 (<dlerror>); install ...".
class TLE_RT_API NoNcclError : public Error {
public:
  /// Creates an error with message `message`.
  explicit NoNcclError(const std::string &message);
};

/// An NCCL call failed. what() reads "<call> failed: <ncclResult_t name> (<ncclGetErrorString>):
/// <what libtle_rt was doing>; NCCL's last error: <ncclGetLastError>" (the last part when NCCL has
/// a message).
class TLE_RT_API NcclError : public Error {
public:
  /// Creates an error for NCCL call `call` that returned ncclResult_t `result`.
  NcclError(std::string call, int result, const std::string &message);
  /// The failing NCCL function, e.g. "ncclCommWindowRegister".
  const std::string &call() const { return call_; }
  /// The ncclResult_t it returned (nccl.h; e.g. 3 = ncclInternalError).
  int result() const { return result_; }

private:
  std::string call_;
  int result_;
};

// ------------------------------------------------------------------------------------------------
// The device record (ABI shared with tlec-compiled kernels)
// ------------------------------------------------------------------------------------------------

/// The communicator's device record, as kernels read it through their `device_dptr` argument
/// (Communicator::deviceComm()): 32 bytes of device memory, 16-byte aligned, little-endian.
///
///   offset 0   int32  rank         this GPU's rank (ncclCommUserRank)
///   offset 4   int32  nranks       the number of ranks (ncclCommCount)
///   offset 8   uint64 signals      device address of the ncclWindow_t record of the signal area
///   offset 16  uint32 signal_slots S = kSignalSlots (64): tle.signal's slot ids are 0..S-1
///   offset 20  uint32 reserved     0
///   offset 24  uint64 reserved     0
///
/// The head of NCCL's window record (the ncclWindow_t a window handle points to: struct
/// ncclWindow_vidmem of NCCL 2.27/2.28, nccl_device/impl/core__types.h), what NCCL's
/// ncclGetPeerPointer reads: peer p's copy of byte `off` is at lsaFlatBase + ((uint64)(uint32)
/// ((lsaRank + p - worldRank) * stride4G) << 32) + off. tlec's tle.remote(space="device") and
/// device barrier read these fields at these offsets (docs/language.md, "TLE across GPUs").
struct NcclWindowHead {
  uint64_t winHost = 0;     ///< offset 0: NCCL's host-side window
  uint64_t lsaFlatBase = 0; ///< offset 8: the device address of rank 0's copy in the flat mapping
  int32_t lsaRank = 0;      ///< offset 16: this rank in its load/store-accessible team
  int32_t worldRank = 0;    ///< offset 20: this rank in the communicator
  uint32_t stride4G = 0;    ///< offset 24: the distance between copies, in units of 4 GiB
  uint32_t mcOffset4K = 0;  ///< offset 28: multicast offset (unused here)
};
static_assert(sizeof(NcclWindowHead) == 32 && offsetof(NcclWindowHead, stride4G) == 24,
              "the window record's head is 32 bytes, with the fields at NCCL's offsets");

/// The signal area is a symmetric buffer of S + nranks + 1 uint64 words per rank, zero when the
/// communicator is made: words [0, S) are signal slots (peers add to them), words
/// [S, S + nranks) the device-barrier inbox (word S + r written by rank r), word S + nranks this
/// rank's count of completed device barriers. A kernel finds a peer's copy of any symmetric
/// buffer from its window record as NCCL's ncclGetPeerPointer does (SymmetricBuffer::peerAddress).
struct alignas(16) DeviceCommRecord {
  int32_t rank = 0;         ///< offset 0
  int32_t nranks = 0;       ///< offset 4
  uint64_t signals = 0;     ///< offset 8: the signal area's window (ncclWindow_t) device address
  uint32_t signalSlots = 0; ///< offset 16: S
  uint32_t reserved0 = 0;   ///< offset 20
  uint64_t reserved1 = 0;   ///< offset 24
};
static_assert(sizeof(DeviceCommRecord) == 32 && alignof(DeviceCommRecord) == 16,
              "the device record is 32 bytes, 16-byte aligned");
static_assert(offsetof(DeviceCommRecord, signals) == 8 && offsetof(DeviceCommRecord, signalSlots) == 16,
              "the device record's fields sit at the offsets of its ABI");

/// S: the signal slots of every communicator's signal area (tle.signal slot ids are 0..S-1).
constexpr uint32_t kSignalSlots = 64;

/// The uint64 words of a signal area per rank for `nranks` ranks: S slots, the barrier inbox, the
/// barrier count.
constexpr size_t signalAreaWords(int nranks) { return kSignalSlots + size_t(nranks) + 1; }

// ------------------------------------------------------------------------------------------------
// Communicators and symmetric memory
// ------------------------------------------------------------------------------------------------

namespace detail {
struct CommState;
} // namespace detail

/// The 128-byte ncclUniqueId that names one communicator group; plain bytes the application
/// sends to the other ranks (over its own channel) before they construct their Communicator.
struct UniqueId {
  std::array<char, 128> bytes{}; ///< ncclUniqueId::internal
};

/// Device memory every rank of a communicator allocated together (ncclMemAlloc) and registered as
/// one symmetric NCCL window (ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC): each rank has
/// its own copy of bytes() bytes, and kernels reach the peers' copies through the window record.
/// Zero-filled when allocated. Move-only; the destructor deregisters the window and frees the
/// memory (ncclCommWindowDeregister, ncclMemFree; never throws). A buffer keeps the NCCL
/// communicator it belongs to alive (shared ownership), so it may outlive its Communicator
/// object; the NCCL communicator is destroyed when both are gone.
class TLE_RT_API SymmetricBuffer {
public:
  /// An empty buffer (address 0, no window).
  SymmetricBuffer() = default;
  /// Deregisters the window and frees this rank's copy.
  ~SymmetricBuffer();
  /// Moves the buffer; the source becomes empty.
  SymmetricBuffer(SymmetricBuffer &&) noexcept;
  /// Releases the current buffer, then moves.
  SymmetricBuffer &operator=(SymmetricBuffer &&) noexcept;
  SymmetricBuffer(const SymmetricBuffer &) = delete;
  SymmetricBuffer &operator=(const SymmetricBuffer &) = delete;

  /// This rank's copy: its device address (a CUdeviceptr, as ncclMemAlloc returned it).
  uint64_t address() const { return address_; }
  /// The size of each rank's copy, bytes (as requested).
  size_t bytes() const { return bytes_; }
  /// The device address of the window record (the ncclWindow_t), which kernels read to find the
  /// peers' copies; 0 for an empty buffer.
  uint64_t window() const { return window_; }
  /// A pointer argument for byte `byteOffset` of this rank's copy. Throws ArgumentError past the
  /// end.
  DevicePtr ptr(size_t byteOffset = 0) const;
  /// The device address, valid in kernels on this rank's device, of byte `byteOffset` of rank
  /// `peer`'s copy: NCCL's formula over the window record (read back when the buffer was made),
  /// lsaFlatBase + ((lsaRank + peer - rank) * stride4G, as uint32) * 4 GiB + byteOffset. peer ==
  /// rank gives this copy's flat alias. Throws ArgumentError for a peer outside [0, nranks) or
  /// an offset past the end.
  uint64_t peerAddress(int peer, size_t byteOffset = 0) const;
  /// The rank that owns this copy, -1 for an empty buffer.
  int rank() const;

private:
  friend class Communicator;
  friend struct detail::CommState;
  void release() noexcept;
  std::shared_ptr<detail::CommState> comm_;
  uint64_t address_ = 0;
  size_t bytes_ = 0;
  uint64_t window_ = 0;
  uint64_t flatBase_ = 0; // the window record's lsaFlatBase
  int lsaRank_ = 0;       // its lsaRank
  uint32_t stride4G_ = 0; // its stride4G
};

/// One GPU's membership in a group of GPUs: an NCCL communicator (ncclComm_t) on one device, its
/// signal area and its device record. Move-only; the destructor frees the device record and the
/// signal area and drops the NCCL communicator (ncclCommDestroy once no SymmetricBuffer of it is
/// left); it never throws.
class TLE_RT_API Communicator {
public:
  /// A fresh group name (ncclGetUniqueId), made by one rank and sent to the others by the
  /// application. Throws NoNcclError, NcclError.
  static UniqueId uniqueId();

  /// Joins group `id` as rank `rank` of `nranks` on `device` (ncclCommInitRank with the device's
  /// primary context current): collective, returns once all `nranks` ranks have joined (from
  /// other threads or processes), then allocates the signal area (collective too) and writes the
  /// device record. Throws ArgumentError (nranks < 1, rank outside [0, nranks)), NoNcclError,
  /// NcclError, DriverError, Error (NCCL cannot make symmetric windows for this communicator,
  /// see allocSymmetric); nothing is left allocated when it throws.
  Communicator(const UniqueId &id, int nranks, int rank, const Device &device);

  /// One communicator per device of `devices` (ncclCommInitAll; rank i on devices[i]), for one
  /// thread driving every GPU; their signal areas are allocated in one NCCL group. Throws
  /// ArgumentError (no devices, a device listed twice), NoNcclError, NcclError, DriverError,
  /// Error (no symmetric windows, as the constructor); nothing is left allocated when it throws.
  static std::vector<Communicator> initAll(const std::vector<Device> &devices);

  /// Frees the record and the signal area; the NCCL communicator goes once no buffer uses it.
  ~Communicator();
  /// Moves the communicator; the source becomes empty (its accessors throw Error).
  Communicator(Communicator &&) noexcept;
  /// Releases the current communicator, then moves.
  Communicator &operator=(Communicator &&) noexcept;
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  /// This GPU's rank, 0..size()-1.
  int rank() const;
  /// The number of ranks.
  int size() const;
  /// The device this rank runs on.
  Device device() const;
  /// The ncclComm_t, for applications that call NCCL themselves (libtle_rt keeps ownership).
  void *handle() const;

  /// The device address of the device record (layout: DeviceCommRecord), the value to pass for a
  /// kernel's `device_dptr` (u64) parameter; valid while this Communicator lives.
  uint64_t deviceComm() const;
  /// The signal area (signalAreaWords(size()) uint64 words per rank; DeviceCommRecord).
  const SymmetricBuffer &signals() const;

  /// Allocates `bytes` bytes on every rank as one symmetric window: collective, every rank calls
  /// it with the same size in the same order, each from its own thread or process (for several
  /// ranks in one thread use the static form). The copy is zero-filled before the window is
  /// registered. Throws ArgumentError (bytes == 0), NcclError (e.g. ncclMemAlloc out of memory),
  /// Error (NCCL made no window: it does not support symmetric memory on this communicator),
  /// DriverError; nothing is left allocated when it throws.
  SymmetricBuffer allocSymmetric(size_t bytes);

  /// allocSymmetric on every communicator of `comms` (all ranks of one group, e.g. initAll's),
  /// from one thread: the registrations are grouped (ncclGroupStart/End). Returns buffer i for
  /// comms[i]. Throws as allocSymmetric; nothing is left allocated when it throws.
  static std::vector<SymmetricBuffer> allocSymmetric(std::vector<Communicator> &comms, size_t bytes);

  /// Launches kernels[i] on streams[i] with argument list args[i] (args[i][j] points to the value
  /// of parameter j, as Kernel::launchRaw takes it) for every rank i of `comms`, all with `grid`,
  /// and returns once all are enqueued (asynchronous). Kernels that wait for their peers need
  /// every rank's kernel running at once: synchronise only after this returns. kernels[i] (one
  /// kernel, loaded on each rank's device) and streams[i] must be of comms[i].device(). Every
  /// rank's launch is checked first (devices, argument count and divisibility, grid, and a
  /// cooperative kernel's co-residency: a cooperative kernel goes through the cooperative launch
  /// path), so a refused launch (ArgumentError) enqueues nothing. A DriverError while enqueuing
  /// rank k leaves ranks before k enqueued: their kernels may then wait for rank k forever.
  static void launchAll(std::vector<Communicator> &comms, const std::vector<Kernel> &kernels, Grid grid,
                        std::vector<Stream> &streams, const std::vector<std::vector<void *>> &args);

private:
  Communicator() = default;
  const detail::CommState &state() const;
  std::shared_ptr<detail::CommState> state_;
  SymmetricBuffer signals_;
  DeviceBuffer record_;
};

} // namespace tle::rt
