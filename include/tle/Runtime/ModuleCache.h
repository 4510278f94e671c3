// libtle_rt's content-keyed module cache: the same image bytes on the same device/context give the same loaded Module.
//
// An engine that builds kernels from embedded images (tlec --emit-header launchers, AOT bundles,
// plugins that each carry a copy of the same cubin) loads every distinct image once per device:
//
//   tle::rt::ModuleCache &cache = tle::rt::ModuleCache::global();
//   tle::rt::Module mod = cache.getImage(dev, kCubin, sizeof(kCubin), "softmax.cubin");
//   tle::rt::Kernel k = mod.kernel("softmax_kernel");
//
// The key is (device ordinal and its CUcontext, ImageKind, SHA-256 of the image bytes). See
// docs/runtime.md ("Module cache") for the concurrency and eviction rules.
#pragma once

#include "tle/Runtime/Runtime.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tle::rt {

/// A SHA-256 digest (FIPS 180-4), 32 bytes, most significant byte of the first word first.
using Sha256Digest = std::array<uint8_t, 32>;

/// The SHA-256 digest of the `size` bytes at `data` (FIPS 180-4; `data` may be null when size is
/// 0). Implemented in libtle_rt (no dependency), checked against the FIPS 180-2 test vectors.
TLE_RT_API Sha256Digest sha256(const void *data, size_t size);

/// The digest as 64 lowercase hexadecimal digits, e.g. "ba7816bf..." for "abc".
TLE_RT_API std::string toHex(const Sha256Digest &digest);

/// What the bytes of a cached image are; part of the cache key, so the same bytes given as a
/// binary and as PTX are two entries.
enum class ImageKind : uint8_t {
  Binary, ///< a cubin (ELF) or fatbin image, loaded with Module::fromImage
  Ptx,    ///< PTX text (without a terminating NUL), JIT-compiled by Module::fromPtx
};

/// Counters of a ModuleCache since it was made (or since resetStats()), and its current size.
struct ModuleCacheStats {
  uint64_t hits = 0;      ///< get calls answered from a loaded entry (no driver call)
  uint64_t joins = 0;     ///< get calls that waited for another thread's load of the same key
  uint64_t misses = 0;    ///< get calls that loaded the image (one cuModuleLoadDataEx each)
  uint64_t failures = 0;  ///< of those loads, the ones that threw (nothing was cached)
  uint64_t evictions = 0; ///< loaded entries dropped by evict, evictDevice, clear or the capacity
  size_t entries = 0;     ///< loaded entries held now
  size_t loading = 0;     ///< loads in flight now
};

/// A thread-safe cache of loaded modules keyed by content: (device, ImageKind, SHA-256 of the
/// image bytes). The device part is the ordinal and its primary CUcontext (Device::context()).
///
/// - Every member function may be called from any thread at any time, except that the cache must
///   not be destroyed while a call is in flight.
/// - Concurrent get calls for one key load it once: the first caller loads (outside the cache's
///   lock), the others wait for that load and get its Module, or its exception. Loads of
///   different keys run in parallel. Hashing happens before the lock is taken.
/// - A load that throws caches nothing: the callers of that attempt get the exception (the
///   runtime's own types: DriverError, MetadataError, ArgumentError, NoDriverError, Error), and the
///   next get of the key loads again.
/// - Ownership is shared: a Module returned by get keeps the module loaded after evict or clear
///   and after the cache itself is gone. Entries hold their Modules (and so their devices'
///   primary contexts) until they are evicted.
/// - Eviction is explicit (evict, evictDevice, clear) or by capacity: with capacity N > 0, a
///   completed load that makes the cache hold more than N entries drops the least recently used
///   ones (a hit counts as a use). Capacity 0 (the default) means unbounded.
/// - The label of an entry is the label given to the get call that loaded it.
class TLE_RT_API ModuleCache {
public:
  /// An empty cache holding at most `capacity` loaded entries (0 = unbounded).
  explicit ModuleCache(size_t capacity = 0);
  /// Drops every entry (modules still referred to elsewhere stay loaded).
  ~ModuleCache();
  ModuleCache(const ModuleCache &) = delete;
  ModuleCache &operator=(const ModuleCache &) = delete;

  /// The process-wide cache (unbounded; never destroyed, so it may be used during static
  /// destruction). The C ABI's tle_rt_module_cache_get uses it when given a NULL cache.
  static ModuleCache &global();

  /// The module loaded from the `size` bytes at `data` on `device`, loading it on a miss.
  /// Binary images must start with the ELF or fatbin magic (else ArgumentError, as
  /// Module::fromImage); PTX is `size` bytes of text (a NUL at the end is not part of the key).
  /// `label` names the module in messages (default "<memory image>" / "<ptx text>").
  /// Throws ArgumentError for a null or empty image, and whatever the load throws.
  Module get(const Device &device, ImageKind kind, const void *data, size_t size,
             std::string label = {});
  /// get(device, ImageKind::Binary, image, size, label): a cubin or fatbin image.
  Module getImage(const Device &device, const void *image, size_t size,
                  std::string label = "<memory image>");
  /// get(device, ImageKind::Ptx, ptx.data(), ptx.size(), label).
  Module getPtx(const Device &device, std::string_view ptx, std::string label = "<ptx text>");
  /// Reads the file at `path` (every call; the key is its content, so a changed file is a new
  /// entry) and gets it as a binary image when it starts with the ELF or fatbin magic, else as
  /// PTX text. Label: the path. Throws Error when the file cannot be read or is empty.
  Module getFile(const Device &device, const std::string &path);

  /// True when a loaded entry for these bytes on `device` is held (a load in flight is not).
  bool contains(const Device &device, ImageKind kind, const void *data, size_t size) const;
  /// Drops the entry for these bytes on `device` (loaded, or in flight: its callers still get
  /// the module, which is then not kept). Returns whether there was one.
  bool evict(const Device &device, ImageKind kind, const void *data, size_t size);
  /// Drops every entry of `device` (e.g. before releasing it). Returns how many were dropped.
  size_t evictDevice(const Device &device);
  /// Drops every entry. Returns how many were dropped.
  size_t clear();

  /// The number of loaded entries held.
  size_t size() const;
  /// The capacity (0 = unbounded).
  size_t capacity() const;
  /// Sets the capacity, dropping least recently used entries now if there are more.
  void setCapacity(size_t capacity);
  /// The counters and current sizes.
  ModuleCacheStats stats() const;
  /// Zeroes the counters (entries and loading still report the current sizes).
  void resetStats();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tle::rt
