// Private interface of the CPU target: the buffer plan (Plan.cpp), the tile IR -> host LLVM IR
// lowering (Lowering.cpp, Elementwise.cpp) and the runtime helpers the JIT binds (Kernel.cpp).
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/CPU/CPUBackend.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tle::cpu::detail {

// ---------------------------------------------------------------------------------------------
// Runtime helpers called by generated code (defined in Kernel.cpp, bound as absolute symbols).

/// `ptr __tle_cpu_frame(i64 bytes)`: this thread's storage for tiles too big for the stack
/// (64-byte aligned, reused across calls); null when out of memory (the failure is recorded).
inline constexpr const char *kFrameFn = "__tle_cpu_frame";
/// `i32 __tle_cpu_check(ptr addr, i64 bytes, i32 site, i32 pid_x, i32 pid_y, i32 pid_z)`:
/// nonzero when [addr, addr+bytes) lies inside one of the run's pointer arguments; otherwise
/// records the out-of-bounds access and returns 0 (the access is then skipped).
inline constexpr const char *kCheckFn = "__tle_cpu_check";
/// `void __tle_cpu_fail(i32 site, i64 value)`: records a runtime failure at `site` (e.g. a for
/// loop whose step `value` is not positive).
inline constexpr const char *kFailFn = "__tle_cpu_fail";
/// `void __tle_cpu_print(i32 site, i32 operand, i64 bits, ptr index, i32 pid_x, i32 pid_y,
/// i32 pid_z)`: prints one element of operand `operand` of the print at `site` (its bits
/// zero-extended; `index` points at one i64 per dimension), or the bare prefix when operand < 0.
inline constexpr const char *kPrintFn = "__tle_cpu_print";
/// `void __tle_cpu_assert(i32 site, ptr index, i32 pid_x, i32 pid_y, i32 pid_z)`: records that
/// the device assert at `site` failed at element `index` (one i64 per dimension); the program
/// then returns.
inline constexpr const char *kAssertFn = "__tle_cpu_assert";

/// A place in the kernel that can fail at run time, for messages.
struct Site {
  std::string what;  ///< "load", "store", "for loop", "print", "assert"
  std::string where; ///< "file:line:col", or empty when unknown
  std::string text;  ///< print: the prefix; assert: the message
  bool hex = false;  ///< print: integers and floats as hexadecimal bits
  std::vector<ir::Type> types; ///< print and assert: the operands' types
};

/// The lowered module and what the JIT needs to run it.
struct Lowered {
  std::unique_ptr<llvm::Module> module;
  std::string entryName;   ///< `__tle_cpu_entry_<kernel>`
  std::vector<Site> sites; ///< indexed by the site ids passed to the helpers
};

/// Lowers `f`; returns false after reporting an unsupported op through `diags`.
bool lower(const ir::Function &f, llvm::LLVMContext &ctx, DiagnosticEngine &diags, const CompileOptions &options,
           Lowered &out);

// ---------------------------------------------------------------------------------------------
// Where tile values live.

/// The storage decision for every tile value. A tile value is either materialised (it owns, or
/// shares, a row-major buffer of numElements() elements) or lazy: its elements are recomputed
/// by each consumer from its operands (splat, arange, shape ops and elementwise ops whose
/// expression is cheap or used once), which fuses elementwise chains into their consumers'
/// loops and keeps addresses affine so LLVM vectorises loads and stores.
struct BufferPlan {
  /// Size in bytes of every buffer.
  std::vector<uint64_t> bufferBytes;
  /// Materialised tile values -> buffer. A For's tile results share its iter-arg buffers;
  /// an If's results and a While's "after" arguments and results share theirs.
  std::unordered_map<const ir::Value *, int> bufferOf;
  /// For each region terminator that writes carried tiles (the Yield of a For body, of an If
  /// region or of a While's "after" region; a While's Condition): per value, how it is written.
  /// -1: directly into the carried buffer; -2: nothing to write (the yield passes the carried
  /// value through unchanged); >= 0: through this temporary buffer (the yielded expression
  /// reads a carried buffer that another carried value overwrites).
  std::unordered_map<const ir::Op *, std::vector<int>> yieldTemps;

  bool isLazy(const ir::Value *v) const { return v->type.isTile() && !bufferOf.count(v); }
};

/// Decides materialisation and assigns buffers (no reuse between values).
BufferPlan planBuffers(const ir::Function &f);

// ---------------------------------------------------------------------------------------------
// The lowering.

/// Element indices (i64), one per dimension of the tile being read or written.
using Index = std::vector<llvm::Value *>;

class Lowering {
public:
  Lowering(const ir::Function &f, llvm::Module &m, DiagnosticEngine &diags, const CompileOptions &options,
           std::vector<Site> &sites);
  /// Emits the kernel and its entry; false after reporting an error.
  bool run(std::string &entryName);

private:
  // --- Types (Lowering.cpp). Values live in registers in their "register" type (16-bit floats
  // as i16 bit patterns, i1 as i1) and in memory in their storage type (i1 as i8).
  llvm::Type *regType(ir::ScalarType t);
  llvm::Type *memType(ir::ScalarType t);
  llvm::Value *loadMem(llvm::Value *base, llvm::Value *index, ir::ScalarType t);
  void storeMem(llvm::Value *base, llvm::Value *index, llvm::Value *v, ir::ScalarType t);

  // --- Values
  llvm::Value *scalar(const ir::Value *v);
  llvm::Value *buffer(const ir::Value *v);
  /// The element of `v` at `idx` (v's shape); scalars are returned as they are.
  llvm::Value *elem(const ir::Value *v, const Index &idx);
  /// The element at `idx` of `v`, the result of a lazy-capable op, computed from its operands.
  llvm::Value *compute(const ir::Value *v, const Index &idx);
  llvm::Value *linear(const Index &idx, const std::vector<int64_t> &shape);
  /// Emits a loop nest over `shape` (innermost = last dim) and `body` in its innermost block.
  void forEach(const std::vector<int64_t> &shape, const std::function<void(const Index &)> &body);
  /// Writes every element of `v` into buffer `dst` (of v's shape).
  void writeTile(llvm::Value *dst, const ir::Value *v);
  void copyTile(llvm::Value *dst, llvm::Value *src, const ir::Type &t);

  // --- Ops
  bool emitBlock(const ir::Block &b);
  bool emitOp(const ir::Op &op);
  void emitLoad(const ir::Op &op);
  void emitStore(const ir::Op &op);
  /// The combine of Reduce / Scan `op` applied to (a, b), one value per operand: the built-in
  /// kind, or the op's combine region emitted inline on these scalars (empty entries after an
  /// error).
  std::vector<llvm::Value *> combineValues(const ir::Op &op, const std::vector<llvm::Value *> &a,
                                           const std::vector<llvm::Value *> &b);
  void emitReduce(const ir::Op &op);
  void emitScan(const ir::Op &op);
  /// tl.histogram (OpKind::Histogram, left by lower-histograms on the CPU target): a counting
  /// loop over the values, O(n + bins).
  void emitHistogram(const ir::Op &op);
  /// An exclusive Scan (tle.cumsum): the sums before each element, then the total.
  void emitExclusiveScan(const ir::Op &op);
  void emitDot(const ir::Op &op);
  bool emitAtomic(const ir::Op &op);
  // --- tl.device_print and tl.device_assert (Debug.cpp)
  void emitPrint(const ir::Op &op);
  void emitAssert(const ir::Op &op);
  /// The bits of register value `v` of type `t`, zero-extended to i64.
  llvm::Value *bitsOf(llvm::Value *v, ir::ScalarType t);
  /// A stack array of `rank` i64 (in the entry block) holding `idx`; null for rank 0.
  llvm::Value *indexArray(const Index &idx);
  /// One atomic read-modify-write (or compare-and-swap when `cmp` is set) at `p`; returns the
  /// old value (register type); nullptr when the dtype / kind pair is not supported.
  llvm::Value *atomicRMW(const ir::Op &op, llvm::Value *p, llvm::Value *v, llvm::Value *cmp, ir::ScalarType t);
  bool emitFor(const ir::Op &op);
  bool emitIf(const ir::Op &op);
  bool emitWhile(const ir::Op &op);
  /// Writes the tiles among `yielded` (operands of terminator `term`) into the buffers of
  /// `dest` as planned; returns the scalars among them (nullptr for tiles).
  std::vector<llvm::Value *> emitYield(const ir::Op &term, const std::vector<const ir::Value *> &yielded,
                                       const std::vector<const ir::Value *> &dest);
  llvm::Value *globalLoad(llvm::Value *p, ir::ScalarType t, int site);
  void globalStore(llvm::Value *p, llvm::Value *v, ir::ScalarType t, int site);
  /// Emits `if (cond) { then() }` and returns to the join block.
  void ifThen(llvm::Value *cond, const std::function<void()> &then);
  int addSite(const std::string &what, SourceLoc loc);
  bool unsupported(const ir::Op &op, const std::string &why = "");

  // --- Elementwise semantics (Elementwise.cpp)
  /// The element result of elementwise op `op` applied to `in` (register values); nullptr when
  /// the op / dtype pair is not supported.
  llvm::Value *apply(const ir::Op &op, const std::vector<llvm::Value *> &in);
  /// Value conversion (ir::OpKind::Cast semantics); `towardZero` makes narrowing float
  /// conversions round toward zero (fp_downcast_rounding="rtz") instead of to nearest even.
  llvm::Value *cast(llvm::Value *v, ir::ScalarType from, ir::ScalarType to, bool towardZero = false);
  /// Reduction / max / min combine in dtype `t`.
  llvm::Value *combine(ir::ReduceKind k, ir::DType t, llvm::Value *a, llvm::Value *b);
  /// A constant of type `t` (16-bit floats rounded to nearest even).
  llvm::Value *constant(ir::ScalarType t, int64_t ival, double fval);
  llvm::Value *toF32(llvm::Value *v, ir::DType t);
  llvm::Value *fromF32(llvm::Value *f, ir::DType t);
  llvm::Value *fromF32TowardZero(llvm::Value *f, ir::DType t);
  llvm::Value *f64ToF32Odd(llvm::Value *d);
  llvm::Value *f64ToF32TowardZero(llvm::Value *d);
  /// An ExternCall: an LLVM intrinsic (`llvm.*`) or a libdevice function; null after reporting
  /// one that the host cannot run, or whose declared result type is not the function's.
  llvm::Value *externCall(const ir::Op &op, const std::vector<llvm::Value *> &in);
  /// A libdevice `__nv_*` ExternCall on the host: inline code or a host math function; null
  /// when there is none for these operands.
  llvm::Value *libdeviceCall(const ir::Op &op, const std::vector<llvm::Value *> &in);
  /// libdevice's integer function `fn` (popc, clz, ffs, brev, each with its `ll` 64-bit name) of
  /// `x` through LLVM's bit intrinsics; nullptr for another name.
  llvm::Value *bitFunction(const std::string &fn, llvm::Value *x);
  /// libdevice's typed functions (bit reinterpretations, conversions with a rounding mode,
  /// saturatef, the integer intrinsics mulhi / mul24 / hadd / rhadd / byte_perm) on the host;
  /// null for a function or rounding mode without a host form here.
  llvm::Value *typedLibdevice(const ir::Op &op, const std::vector<llvm::Value *> &in);
  llvm::Value *fma(ir::DType t, llvm::Value *a, llvm::Value *b, llvm::Value *c);
  llvm::Value *intToSmallFloat(llvm::Value *v, bool isSigned, ir::DType to);
  llvm::Value *intDivRem(bool rem, bool isSigned, llvm::Value *a, llvm::Value *b);
  llvm::Value *shift(ir::OpKind k, bool isSigned, llvm::Value *a, llvm::Value *b);
  llvm::Value *floatUnary(ir::OpKind k, llvm::Value *x);
  llvm::Value *intrinsic(unsigned id, llvm::ArrayRef<llvm::Type *> tys, llvm::ArrayRef<llvm::Value *> args);

  const ir::Function &f_;
  llvm::Module &m_;
  llvm::LLVMContext &ctx_;
  DiagnosticEngine &diags_;
  const CompileOptions &opts_;
  std::vector<Site> &sites_;
  llvm::IRBuilder<> B;
  BufferPlan plan_;

  llvm::Function *kernel_ = nullptr;
  /// OpKind::SignalWait: an acquire-load spin, then the consuming subtraction (ControlFlow.cpp).
  void emitSignalWait(const ir::Op &op);
  llvm::BasicBlock *entry_ = nullptr;
  llvm::Value *pid_[3] = {}, *nprog_[3] = {};
  std::vector<llvm::Value *> buffers_; ///< buffer id -> pointer
  std::unordered_map<const ir::Value *, llvm::Value *> scalars_;
  /// Elements of lazy values computed in the current loop body, keyed by value and index.
  std::map<std::pair<const ir::Value *, Index>, llvm::Value *> memo_;
  llvm::FunctionCallee checkFn_, failFn_;
  bool failed_ = false; ///< an error was reported
};

} // namespace tle::cpu::detail
