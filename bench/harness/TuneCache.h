// The tuning cache of tle-bench --tune (best config per kernel source, shape bucket and GPU) and the dispatch tables made from it.
#pragma once

#include "Expr.h"
#include "TuneSpace.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tle::bench {

/// A shape bucket: each named dimension rounded up to the next power of two, e.g. M=4096 N=3000
/// -> {M: 4096, N: 4096}. Shapes in one bucket share a tuned configuration.
struct ShapeBucket {
  std::vector<std::pair<std::string, int64_t>> dims; ///< in the tune spec's "bucket" order

  /// "M=4096,N=4096" (empty for a kernel without bucket dimensions).
  std::string str() const;
  bool operator==(const ShapeBucket &o) const { return dims == o.dims; }
};

/// The bucket of the case variables `names` evaluated in `env`; throws BenchError when a name is
/// missing or not a positive integer.
ShapeBucket bucketOf(const std::vector<std::string> &names, const Env &env);

/// The GPU part of a cache key: the device name, its architecture and the driver's CUDA version.
struct DeviceKey {
  std::string name;   ///< e.g. "NVIDIA H200"
  std::string arch;   ///< e.g. "sm_90a"
  int driver = 0;     ///< cuDriverGetVersion, e.g. 13000
  /// "NVIDIA H200|sm_90a|13000".
  std::string str() const;
};

/// 16 hex digits of the FNV-1a 64-bit hash of `text`.
std::string fnv1aHex(const std::string &text);

/// The kernel part of a cache key: a hash over the kernel's source text, entry, signature, fixed
/// defines and the tlec version string, so that editing the source or the compiler re-tunes.
std::string kernelKey(const std::string &sourceText, const std::string &entry, const std::string &signature,
                      const std::vector<std::pair<std::string, std::string>> &defines, const std::string &compiler);

/// One tuned result.
struct CacheEntry {
  std::string kernelKey;  ///< kernelKey()
  std::string kernel;     ///< the spec's kernel name (e.g. "matmul")
  std::string entry;      ///< the @jit function
  std::string source;     ///< repository-relative source path
  std::string signature;  ///< the base signature (tuned constexprs are -D)
  std::vector<std::pair<std::string, std::string>> defines; ///< fixed -D of the spec
  ShapeBucket bucket;
  DeviceKey device;
  Candidate best;
  double medianMs = 0;    ///< the winner's median time on the case that was tuned
  std::string caseName;   ///< that case
  std::string tunedAt;    ///< UTC time, ISO 8601
  int candidates = 0;     ///< how many candidates the space had
  int timed = 0;          ///< how many were timed on the GPU

  nlohmann::ordered_json toJson() const;
  /// Throws BenchError naming the missing field.
  static CacheEntry fromJson(const nlohmann::ordered_json &j);
};

/// The cache file: {"format": "tle-tune-cache", "version": 1, "entries": [CacheEntry...]}, one
/// entry per (kernelKey, bucket, device).
class TuneCache {
public:
  /// Reads `path`; a missing file is an empty cache; a malformed one throws BenchError.
  static TuneCache load(const std::string &path);
  /// The entry for this key, if any.
  std::optional<CacheEntry> lookup(const std::string &kernelKey, const ShapeBucket &bucket, const DeviceKey &device) const;
  /// Inserts or replaces the entry with the same key.
  void store(const CacheEntry &e);
  /// Writes the cache to `path` (creating its directory; atomically through a temporary file
  /// and rename). Throws BenchError.
  void save(const std::string &path) const;
  /// Every entry, in insertion order.
  const std::vector<CacheEntry> &entries() const { return entries_; }

private:
  std::vector<CacheEntry> entries_;
};

/// The cache path: `flag` if non-empty, else $TLE_TUNE_CACHE, else $XDG_CACHE_HOME/tle/tune-cache.json,
/// else $HOME/.cache/tle/tune-cache.json.
std::string defaultCachePath(const std::string &flag);

/// A dispatch table over the entries of one kernel on one device: the distinct configurations
/// ("specs", numbered in first-use order, each with its module file name
/// `<kernel>.spec<i>.<arch>.cubin` and the tlec command that builds it) and the buckets mapping
/// to them. Format (docs/bench.md, "Dispatch tables"):
/// {"format": "tle-dispatch", "version": 1, "kernel", "entry", "source", "signature", "device",
///  "dims": [...], "specs": [{"spec", "config", "module", "tlec"}],
///  "buckets": [{"bucket": {...}, "spec", "median_ms", "case"}], "tle_link": "tle-link ..."}.
/// Throws BenchError when `entries` is empty or mixes kernels or devices.
nlohmann::ordered_json dispatchTable(const std::vector<CacheEntry> &entries);

/// A C++ header with `int <name>_dispatch_spec(int64_t dim...)`: the spec index of the bucket of
/// the given dimensions (each rounded up to a power of two), or of the nearest bucket (smallest
/// sum of |log2| distances) when the exact bucket was not tuned. Index i is the tle-link
/// launcher `<name>_spec<i>`. `table` is dispatchTable()'s output.
std::string dispatchHeader(const nlohmann::ordered_json &table, const std::string &name);

} // namespace tle::bench
