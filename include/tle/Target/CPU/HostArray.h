// Host-side data for running kernels: 16-bit float conversions, typed row-major host arrays,
// NumPy .npy files, and the generated arrays tle-run accepts (zeros, ones, full, rand).
#pragma once

#include "tle/IR/Types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tle::cpu {

/// Rounds `x` to the nearest IEEE binary16 (ties to even, overflow to infinity, NaN to a quiet
/// NaN of the same sign) directly from double, without double rounding; returns the bits.
uint16_t halfFromDouble(double x);
/// The exact value of binary16 bits `h`.
float halfToFloat(uint16_t h);
/// Rounds `x` to the nearest bfloat16 (ties to even), directly from double; returns the bits.
uint16_t bf16FromDouble(double x);
/// The exact value of bfloat16 bits `h`.
float bf16ToFloat(uint16_t h);

/// A row-major array of `dtype` elements on the host (16-bit floats as their bit patterns,
/// i1 as one byte holding 0 or 1). Data is 64-byte aligned.
class HostArray {
public:
  HostArray() = default;
  /// A zero-filled array. Throws cpu::Error (CPUBackend.h) when a dim is negative or the size
  /// overflows or cannot be allocated.
  HostArray(ir::DType dtype, std::vector<int64_t> shape);

  ir::DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  /// Product of the dims (1 for a 0-d array).
  size_t numElements() const { return numElements_; }
  /// Bytes of the data (numElements * storageBytes(dtype)).
  size_t bytes() const { return numElements_ * ir::storageBytes(dtype_); }
  void *data() { return data_.empty() ? nullptr : data_.data(); }
  const void *data() const { return data_.empty() ? nullptr : data_.data(); }
  /// Relabels the dtype (same element size), e.g. u16 bits read from a .npy as bf16.
  void reinterpret(ir::DType dtype);

  /// Element `i` as a double (integers exactly up to 2^53; 16-bit floats exactly).
  double get(size_t i) const;
  /// Sets element `i` from a double: floats round to nearest even, integers truncate toward zero
  /// and wrap, i1 is `v != 0`.
  void set(size_t i, double v);
  /// Element `i` as text: integers in decimal, floats with up to 9 significant digits.
  std::string str(size_t i) const;
  /// "fp32[128x1024]".
  std::string describe() const;

private:
  struct alignas(64) Chunk {
    unsigned char bytes[64];
  };
  ir::DType dtype_ = ir::DType::Invalid;
  std::vector<int64_t> shape_;
  size_t numElements_ = 0;
  std::vector<Chunk> data_; ///< bytes(), rounded up to whole chunks
};

/// The NumPy `descr` for a dtype: "<f4", "<f2", "|i1", "|b1", ...; bf16 and fp8 (which NumPy
/// lacks) are written as their bits, "<u2" and "|u1".
std::string npyDescr(ir::DType t);
/// The dtype of a NumPy `descr` ("<f4", "|u1", "|b1", "<i8", ... ; "=" and "|" byte orders
/// accepted where unambiguous); nullopt for big-endian or unsupported types.
std::optional<ir::DType> dtypeFromNpyDescr(const std::string &descr);

/// Reads a .npy file (format 1.0, 2.0 or 3.0; little-endian; C order, or Fortran order for
/// arrays of at most one dim > 1). Throws cpu::Error with the path and the cause.
HostArray readNpy(const std::string &path);
/// The dtype of a .npy file, from its header alone. Throws cpu::Error as readNpy.
ir::DType readNpyDType(const std::string &path);
/// Writes `a` as a .npy file (format 1.0). Throws cpu::Error when the file cannot be written.
void writeNpy(const std::string &path, const HostArray &a);

/// Parses a dtype spelled as in signatures or NumPy (ir::parseDTypeName, the one vocabulary of
/// the command lines).
std::optional<ir::DType> parseArrayDType(const std::string &s);

/// Makes an array from a generator spec (tle-run's --arg syntax), for a pointer to `pointee`:
///   zeros:[DTYPE:]SHAPE   ones:[DTYPE:]SHAPE   full:VALUE:[DTYPE:]SHAPE   rand:[DTYPE:]SHAPE
/// SHAPE is "N" or "AxBxC". DTYPE defaults to `pointee` and must equal it. rand draws floats
/// uniformly from [-1, 1), signed integers from [-8, 8], unsigned ones from [0, 16] and i1 from
/// {0, 1}, with a generator seeded by `seed`. Returns nullopt when `spec` is not a generator
/// spec at all; throws cpu::Error for a malformed one.
std::optional<HostArray> makeArray(const std::string &spec, ir::DType pointee, uint64_t seed);

} // namespace tle::cpu
