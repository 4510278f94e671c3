// TLE-Raw's native functions as the compiler's layers exchange them (FlagTree's TLE-Raw,
// ../shared/reference/tle.md §4): what a `@tle.raw.dialect` declaration names, and what its
// compilation to LLVM IR yields. Sema calls a RawCompiler (the NVPTX target's, wired by the
// driver) to check a call against the function's signature; the backend links the module.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tle::ir {

/// A native function's source.
struct RawSource {
  std::string dialect;    ///< "cuda" (a CUDA device function) or "llvm" (LLVM IR text)
  std::string path;       ///< the source file (absolute), or empty for inline `text`
  std::string text;       ///< the source: the inline text, or the file's contents as the caller
                          ///< read them (CUDA files are compiled from `path`, for their includes)
  std::string externName; ///< extern_func_name: the entry's name (C++ name or symbol); empty: the
                          ///< module's only function with external linkage and a body
  std::string arch;       ///< the kernel's target (sm_80, sm_90a)
};

/// One LLVM parameter of the entry.
struct RawParam {
  enum class Kind { Int, Float, Pointer, Other } kind = Kind::Other;
  unsigned bits = 0;      ///< Int and Float: the width
  unsigned addrSpace = 0; ///< Pointer: 0 generic, 1 global, 3 shared
  std::string spelling;   ///< the LLVM type as written (`ptr addrspace(3)`, `i64`)
};

/// What a native function does to shared memory, read from its LLVM IR (the entry and the
/// functions it calls): a bit set, for insert-barriers, which orders a raw call against the tile
/// code's accesses by it. 0 (kRawSharedUnknown): anything, as a load and a store by every thread.
enum RawSharedEffects : int {
  kRawSharedUnknown = 0,
  kRawSharedKnown = 1,     ///< the bits below are all it does (none set: it touches no shared memory)
  kRawSharedAccess = 2,    ///< loads, stores or atomics that may be to shared memory, barriers, or
                           ///< PTX that may touch it (ld, st, atom, red, bar, mbarrier, wgmma, ...)
  kRawSharedAsyncCopy = 4, ///< cp.async copies (not bulk) and cp.async.commit_group: written later
  kRawSharedAsyncWait = 8, ///< cp.async.wait_group / wait_all: this thread's copies land here
};

/// The effect bits' names in tile IR (`shared=access+async_copy`; `none` for no bit).
inline constexpr struct {
  int bit;
  const char *name;
} kRawSharedEffectNames[] = {{kRawSharedAccess, "access"}, {kRawSharedAsyncCopy, "async_copy"},
                             {kRawSharedAsyncWait, "async_wait"}};

/// A native function compiled to LLVM IR for NVPTX.
struct RawFunction {
  std::string symbol; ///< the entry's symbol in `module`, unique to this source and entry
  std::string name;   ///< the entry's name as the source spells it (demangled), for messages
  std::string module; ///< the LLVM module's text
  std::vector<RawParam> params;
  bool returnsVoid = true;
  int sharedEffects = kRawSharedUnknown; ///< RawSharedEffects bits
  /// The memref structs it returns ({ptr, ptr, i64, [r x i64], [r x i64]}, or a struct of them),
  /// each the index of the parameter its aligned pointer is, -1 where that cannot be told.
  std::vector<int> returnedParams;
  std::string returnSpelling; ///< the return type as written, for messages
  /// The files the source read (a CUDA source and the headers it includes, as clang lists them;
  /// an LLVM IR file), for the output's dependencies.
  std::vector<std::string> dependencies;
};

/// What compiling a RawSource gives: the function, or an error and the native tool's log.
struct RawResult {
  std::optional<RawFunction> fn;
  std::string error;  ///< one line: what failed
  std::string detail; ///< clang's diagnostics or the LLVM parser's message (may be empty)
};

/// Compiles a RawSource (the NVPTX target's nvptx::compileRaw).
using RawCompiler = std::function<RawResult(const RawSource &)>;

} // namespace tle::ir
