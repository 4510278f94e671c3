// Host tensors of the benchmark harness: element types, typed access through double, parallel
// loops, deterministic random generators and .npy files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tle::bench {

/// Element types a suite buffer may have (Triton's spelling).
enum class DType { F16, BF16, F32, F64, I32, I64 };

/// Parses "fp16", "bf16", "fp32", "fp64", "i32", "i64"; throws BenchError otherwise.
DType parseDType(const std::string &s);
/// The Triton spelling, e.g. "fp16".
const char *dtypeName(DType t);
/// Bytes per element.
size_t dtypeBytes(DType t);
/// True for the floating-point types.
bool isFloatType(DType t);

/// A dense row-major array in host memory (uninitialised on creation).
class HostTensor {
public:
  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  /// Number of elements.
  size_t numel() const { return numel_; }
  /// Size in bytes.
  size_t bytes() const { return numel_ * dtypeBytes(dtype_); }
  uint8_t *data() { return data_.get(); }
  const uint8_t *data() const { return data_.get(); }

  /// Element i as a double (fp16/bf16 exactly, i64 beyond 2^53 rounded).
  double get(size_t i) const;
  /// Stores `v` rounded to the element type (round to nearest even; integers truncate).
  void set(size_t i, double v);

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  size_t numel_ = 0;
  std::unique_ptr<uint8_t[]> data_;
};

/// The number of worker threads parallelFor uses: TLE_BENCH_THREADS, else the hardware's.
unsigned workerThreads();
/// Calls fn(begin, end) over [0, n) split into contiguous chunks on workerThreads() threads;
/// rethrows the first exception.
void parallelFor(size_t n, const std::function<void(size_t, size_t)> &fn);

/// How to fill an input buffer. Every generator is deterministic in (seed, element index), not in
/// the number of threads.
struct InitSpec {
  enum Kind { Normal, Uniform, RandInt, Zeros, Ones, Full } kind = Normal;
  double a = 0, b = 1; ///< Normal: mean, std; Uniform: [low, high); RandInt: [low, high); Full: value
};

/// Fills `t` as `init` says, with stream `seed`.
void fillTensor(HostTensor &t, const InitSpec &init, uint64_t seed);

/// Writes `t` as a NumPy .npy file (bf16 as uint16, NumPy having no bf16). Throws BenchError.
void writeNpy(const std::string &path, const HostTensor &t);
/// Reads a .npy file written by writeNpy or by tle-run into `t`, whose dtype and element count
/// it must match (a uint16 file fills a bf16 tensor). Throws BenchError.
void readNpyInto(const std::string &path, HostTensor &t);

} // namespace tle::bench
