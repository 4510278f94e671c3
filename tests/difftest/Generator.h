// A structure-aware generator of random, valid `.tle` kernels and their inputs, deterministic
// from a seed: 1-D or 2-D tiles with constexpr block sizes, masked loads (with and without
// `other`) of several dtypes, random elementwise expression trees (integer and float arithmetic,
// bitwise ops, comparisons, `where`, casts, math), reductions and scans along an axis, `for`
// loops with carried values, runtime `if`s, and masked stores of full tiles and of reductions.
#pragma once

#include "tle/IR/Types.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tle::difftest {

/// A small deterministic random number generator (splitmix64), the same on every platform.
class Rng {
public:
  /// A generator seeded with `seed`.
  explicit Rng(uint64_t seed) : state_(seed) {}
  /// A generator that replays a tape of choices (a fuzzer's input): each call of next() takes one
  /// byte b of `tape` and returns b * 0x0101010101010101, so that b sets range()'s residue and
  /// unit()'s value (about b / 256) alike; past the tape's end, splitmix64 seeded with its size.
  /// The tape must outlive the generator.
  Rng(const uint8_t *tape, size_t size) : state_(size), tape_(tape), tapeSize_(size) {}
  /// The next 64 random bits.
  uint64_t next();
  /// A uniform integer in [lo, hi] (lo <= hi).
  int64_t range(int64_t lo, int64_t hi);
  /// True with probability `p`.
  bool chance(double p);
  /// A uniform double in [0, 1).
  double unit();
  /// A uniformly chosen element of `v` (not empty).
  template <class T> const T &pick(const std::vector<T> &v) { return v[size_t(range(0, int64_t(v.size()) - 1))]; }

private:
  uint64_t state_;
  const uint8_t *tape_ = nullptr;
  size_t tapeSize_ = 0, tapePos_ = 0;
};

/// One runtime argument of a generated kernel, in parameter order.
struct KernelArg {
  std::string name;
  bool isPointer = false;
  /// The pointee dtype of a pointer, or the dtype of a scalar.
  ir::DType dtype = ir::DType::I32;
  /// Pointers: the buffer's shape and its initial contents (storageBytes(dtype) per element).
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  /// Scalars: the value's bits (as cpu::ArgValue and InterpArg take them).
  uint64_t bits = 0;
};

/// A generated kernel: its source, how to specialise and launch it, and its arguments.
struct GeneratedKernel {
  uint64_t seed = 0;
  std::string source;     ///< the `.tle` file
  std::string kernelName; ///< the @triton.jit function to compile
  std::string signature;  ///< Triton's AOT signature (runtime parameters, then constexprs)
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::vector<KernelArg> args;
  /// Whether the kernel calls math functions whose results may differ in the last bits between
  /// implementations (exp, log): float outputs are then compared with a tolerance.
  bool approximate = false;
};

/// Generates kernel number `seed` (the same seed gives the same kernel and inputs).
GeneratedKernel generateKernel(uint64_t seed);

/// Generates the kernel whose every structural choice (dtypes, sizes, expression shapes, loops,
/// branches, outputs) is read from the `size` bytes at `choices` (Rng's tape), one byte a choice:
/// the fuzz target tle-fuzz-gen maps its inputs to valid kernels this way. The input data comes
/// from a separate generator, so it takes no byte of the tape. The kernel is named difftest_0.
GeneratedKernel generateKernelFromChoices(const uint8_t *choices, size_t size);

} // namespace tle::difftest
