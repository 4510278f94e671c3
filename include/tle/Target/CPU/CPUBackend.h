// The CPU target: tile-stage IR lowered to host LLVM IR, JIT-compiled with ORC LLJIT, and run
// on host buffers with the grid spread over a thread pool (docs/cpu-backend.md).
//
// Typical use:
//   std::unique_ptr<ir::Function> fn = driver::compileToTile(file, options, diags);
//   std::unique_ptr<cpu::Kernel> k = cpu::Kernel::compile(*fn, diags);
//   k->run({cdiv(n, 1024)}, {cpu::ArgValue::ptr(x), cpu::ArgValue::ptr(y), cpu::ArgValue::ptr(z),
//                            cpu::ArgValue::of<int32_t>(n)});
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tle::cpu {

/// A launch grid in programs (CTAs on the GPU): x up to 2^31-1, y and z up to 65535, each >= 1
/// (the GPU's limits, enforced on the CPU too so that a grid that runs here also launches there).
struct Grid {
  uint32_t x = 1, y = 1, z = 1; ///< programs per dimension
};

/// One kernel argument: a host pointer (for pointer parameters) or a typed scalar.
struct ArgValue {
  enum class Kind { Pointer, Scalar };
  Kind kind = Kind::Scalar;
  /// Pointer: the host address of element 0 of the buffer.
  void *pointer = nullptr;
  /// Pointer: the buffer's size in bytes, when `sized`. Bounds checking needs every size.
  size_t bytes = 0;
  /// Pointer: whether `bytes` is known.
  bool sized = false;
  /// Scalar: the value's dtype; it must equal the parameter's (no implicit conversions).
  ir::DType dtype = ir::DType::Invalid;
  /// Scalar: the value's bits, zero-extended (i1: 0 or 1; fp16/bf16: the 16-bit pattern).
  uint64_t bits = 0;

  /// A pointer argument for host memory at `p` of unknown size.
  static ArgValue ptr(void *p) {
    ArgValue a;
    a.kind = Kind::Pointer;
    a.pointer = p;
    return a;
  }
  /// A pointer argument for `bytes` bytes of host memory at `p`.
  static ArgValue ptr(void *p, size_t bytes) {
    ArgValue a = ptr(p);
    a.bytes = bytes;
    a.sized = true;
    return a;
  }
  /// A pointer argument for the elements of `v` (its size is known, so it can be bounds-checked).
  template <class T> static ArgValue ptr(std::vector<T> &v) { return ptr(v.data(), v.size() * sizeof(T)); }
  /// A scalar of dtype `t` with raw bits `bits` (e.g. an fp16 bit pattern).
  static ArgValue scalarBits(ir::DType t, uint64_t bits) {
    ArgValue a;
    a.dtype = t;
    a.bits = bits;
    return a;
  }
  /// A scalar from a C++ value: bool -> i1, intN_t -> iN, uintN_t -> uN, float -> fp32,
  /// double -> fp64. (fp16 and bf16 scalars: scalarBits with the bit pattern.)
  template <class T> static ArgValue of(T value) {
    static_assert(std::is_arithmetic_v<T>, "ArgValue::of takes bool, (u)intN_t, float or double");
    uint64_t b = 0;
    std::memcpy(&b, &value, sizeof(T));
    return scalarBits(dtypeOf<T>(), std::is_same_v<T, bool> ? uint64_t(value ? 1 : 0) : b);
  }
  /// The dtype ArgValue::of<T> produces.
  template <class T> static constexpr ir::DType dtypeOf() {
    if constexpr (std::is_same_v<T, bool>) return ir::DType::I1;
    else if constexpr (std::is_same_v<T, float>) return ir::DType::F32;
    else if constexpr (std::is_same_v<T, double>) return ir::DType::F64;
    else if constexpr (std::is_integral_v<T>) return ir::intDType(8 * sizeof(T), std::is_signed_v<T>);
    else return ir::DType::Invalid;
  }
  /// "pointer 0x... (4096 bytes)" or "i32 1000", for messages.
  std::string str() const;
};

/// A launch refused before running (argument count or types, alignment, a broken divisibility
/// promise, a bad grid) or a failure detected while running (an out-of-bounds access under
/// bounds checking, a loop with a non-positive step, no memory for tile storage). what() is a
/// complete sentence naming the kernel.
class Error : public std::runtime_error {
public:
  /// An error with message `message`.
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// How to compile a kernel for the CPU.
struct CompileOptions {
  /// Check every global memory access against the pointer arguments' buffers: an access outside
  /// all of them is not performed (a load yields zero) and run() throws an Error naming the
  /// kernel, the source location, the program id and the nearest buffer. Slower; every pointer
  /// argument must then come with its size.
  bool checkBounds = false;
  /// LLVM optimisation level, 0..3 (2 = the O2 pipeline, which vectorises).
  unsigned optLevel = 2;
  /// Keep the optimised LLVM IR text (Kernel::llvmIR()), for debugging and tests.
  bool keepIR = false;
};

/// How to run a kernel.
struct RunOptions {
  /// Worker threads; 0 = std::thread::hardware_concurrency(). Never more than the grid's
  /// number of programs; 1 runs on the calling thread.
  unsigned threads = 0;
  /// Where the lines of tl.device_print go (each a complete line, without the newline; called
  /// from the worker threads, one call at a time). Unset: standard output.
  std::function<void(const std::string &line)> printSink;
};

/// A kernel compiled for the host: LLVM IR, optimised, JIT-compiled by ORC LLJIT once, runnable
/// any number of times from any thread (run() is const and keeps no state between calls).
class Kernel {
public:
  /// Lowers and JIT-compiles `f`, a `tile`-stage function (after sema::specialize and the CPU
  /// pipeline, transforms::cpuPipeline; no layouts needed). Ops the CPU target cannot run are reported
  /// through `diags` ("'X' is not supported on the cpu target") and give nullptr, as do JIT
  /// failures; never crashes on valid tile IR.
  static std::unique_ptr<Kernel> compile(const ir::Function &f, DiagnosticEngine &diags,
                                         const CompileOptions &options = {});
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  /// The kernel's name.
  const std::string &name() const;
  /// Its runtime parameters, in ABI order (constexprs are folded away).
  const std::vector<ir::Param> &params() const;
  /// The optimised LLVM IR (empty unless compiled with keepIR).
  const std::string &llvmIR() const;

  /// Runs every program of `grid` (each a call of the kernel with its program id), spread over
  /// a thread pool; returns when all are done. `args` match params() one to one: pointer
  /// parameters take ArgValue::ptr (host memory, aligned to the element size), scalar parameters
  /// take scalars of exactly the parameter's dtype. Throws Error (see above) for refused
  /// launches and for failures detected while running.
  void run(const Grid &grid, const std::vector<ArgValue> &args, const RunOptions &options = {}) const;

private:
  struct Impl;
  explicit Kernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Lowers `f` (tile stage) to a host LLVM module without optimising or compiling it: the kernel
/// function `<name>(params..., i32 pid_x, i32 pid_y, i32 pid_z, i32 nprog_x, i32 nprog_y,
/// i32 nprog_z)` with the GPU kernel's parameters (pointers as `ptr`, scalars by value, i1 as
/// i8) plus the program id and grid size, and an entry `__tle_cpu_entry_<name>(ptr args, i32 x6)`
/// that reads the parameters from an array of 8-byte slots. Returns nullptr after reporting
/// unsupported ops through `diags`.
std::unique_ptr<llvm::Module> emitLLVM(const ir::Function &f, llvm::LLVMContext &ctx, DiagnosticEngine &diags,
                                       const CompileOptions &options = {});

} // namespace tle::cpu
