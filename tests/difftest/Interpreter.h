// The reference interpreter of the tile IR (the `tile` stage, before layouts), used by the
// differential tester to check the CPU target. It is written to be obviously correct rather than
// fast: every value is a plain array of elements, every op a loop over them, programs of the grid
// run one after another. It shares no code with src/Target/CPU; the semantics it implements are
// the ones written in include/tle/IR/IR.h and, where the IR leaves them open, the ones the CPU
// target documents (docs/cpu-backend.md: integer division by zero yields 0, shifts by the bit
// width or more saturate, float -> int conversions saturate and map NaN to 0, fp16 / bf16
// arithmetic is fp32 arithmetic rounded to nearest even, reductions and scans combine in index
// order).
#pragma once

#include "tle/IR/IR.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tle::difftest {

/// A failure of the interpreter: an op it does not support, an access outside every buffer, a
/// loop with a non-positive step, or the step limit. what() is a complete sentence.
class InterpError : public std::runtime_error {
public:
  /// An error with message `message`.
  explicit InterpError(const std::string &message) : std::runtime_error(message) {}
};

/// One kernel argument for the interpreter.
struct InterpArg {
  /// Pointer arguments: host memory [data, data + bytes) the kernel may read and write.
  void *data = nullptr;
  size_t bytes = 0;
  /// Scalar arguments: the value's bits, zero-extended (i1: 0 or 1; fp16 / bf16: the pattern;
  /// fp32 / fp64: the IEEE bits). Its dtype is the parameter's.
  uint64_t bits = 0;

  /// A pointer argument over `bytes` bytes at `p`.
  static InterpArg buffer(void *p, size_t bytes) {
    InterpArg a;
    a.data = p;
    a.bytes = bytes;
    return a;
  }
  /// A scalar argument with raw bits `bits`.
  static InterpArg scalar(uint64_t bits) {
    InterpArg a;
    a.bits = bits;
    return a;
  }
};

/// Limits of one interpretation.
struct InterpOptions {
  /// The most element operations (ops times elements, summed over all programs) before the run
  /// stops with an InterpError; catches kernels that do not terminate.
  uint64_t maxWork = uint64_t(1) << 32;
};

/// The first op of `f` the interpreter cannot evaluate, as a sentence ("'dot' at line 12 is not
/// supported by the reference interpreter"), or an empty string when it supports them all.
std::string unsupportedOp(const ir::Function &f);

/// Runs every program of the grid `grid` (x fastest, then y, then z) of the verified tile-stage
/// function `f`, one after another, over `args` (one per parameter of `f`, in order): pointer
/// parameters access only their buffers, and an access outside every buffer is an error, not a
/// crash. Throws InterpError for unsupported ops and for the failures listed at InterpError.
void interpret(const ir::Function &f, const std::array<uint32_t, 3> &grid, const std::vector<InterpArg> &args,
               const InterpOptions &options = {});

/// Rounds the real `x` to the nearest value of the float dtype `t` (ties to even; toward zero
/// when `towardZero`), with overflow to infinity (to the largest finite value toward zero).
/// Exposed for tests.
long double roundToFloat(long double x, ir::DType t, bool towardZero = false);
/// The bit pattern of `x`, a value exactly representable in the float dtype `t`.
uint64_t floatToBits(long double x, ir::DType t);
/// The value of the bit pattern `bits` of the float dtype `t`.
long double floatFromBits(uint64_t bits, ir::DType t);

} // namespace tle::difftest
