// The tile-IR passes by name: one table from which the default pipeline, the CPU target's
// pipeline, `tlec --pass`, `--print-after` and `tlec --help` all derive.
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace tle::transforms {

/// What a pass may use besides the function it rewrites.
struct PassContext {
  /// Warnings at source locations (prefetch's shortened pipelines); may be null.
  DiagnosticEngine *diags = nullptr;
  /// When set, assign-layouts writes its one-line summary here (`tlec --layout-stats`).
  std::ostream *layoutStats = nullptr;
};

/// Properties of a pass, or-ed together in PassInfo::flags.
enum PassFlag : unsigned {
  /// Reads IR with a layout on every tile value (the `gpu` stage): assign-layouts must run first.
  kNeedsLayouts = 1u << 0,
  /// Gives every tile value a layout: the `tile` stage ends before it (`--emit=tile` stops there).
  kAssignsLayouts = 1u << 1,
  /// Part of the default GPU pipeline, at its place in the table.
  kInPipeline = 1u << 2,
  /// Part of the CPU target's pipeline (driver::compileToTile), at its place in the table.
  kOnCpu = 1u << 3,
  /// The pipelines run canonicalize right after it, to remove what it left dead or duplicated.
  kCleanup = 1u << 4,
  /// Makes ops the NVPTX backend needs (shared buffers' offsets, barriers): it runs before LLVM
  /// emission even when `--pass` leaves it out.
  kBeforeEmit = 1u << 5,
};

/// One tile-IR pass: a rewrite of an ir::Function in place, run by name.
struct PassInfo {
  const char *name;    ///< as `--pass` and `--print-after` spell it
  const char *summary; ///< one line for `tlec --help`
  /// Runs the pass on `f`. User errors are reported through ctx.diags (CompileAborted may be thrown).
  void (*run)(ir::Function &f, PassContext &ctx);
  unsigned flags = 0; ///< PassFlag values
  bool has(PassFlag flag) const { return (flags & flag) != 0; }
};

/// Every tile-IR pass, in the order the pipelines run them.
const std::vector<PassInfo> &passRegistry();

/// The pass named `name`, or null when there is none.
const PassInfo *findPass(std::string_view name);

/// The default GPU pipeline as pass names, in order: every inPipeline pass of the table, each
/// followed by canonicalize when it asks for a cleanup.
std::vector<std::string> defaultPipeline();

/// The CPU target's pipeline as pass names, in order: every onCpu pass, with cleanups as above.
std::vector<std::string> cpuPipeline();

/// The pass names of the table, comma-separated ("widen-fp8-dots, mark-tma-stores, ..."), for
/// messages.
std::string passNameList();

} // namespace tle::transforms
