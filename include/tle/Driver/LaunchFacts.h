// What tlec records for ahead-of-time launchers beyond what code generation knows (-ns, -g and the
// parameters `:1` hints specialised away), and the --emit-header / --emit-header-c outputs.
#pragma once

#include "tle/Driver/Compiler.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/NVPTX/KernelMetadata.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tle {
namespace ast {
struct Module;
} // namespace ast
namespace ir {
class Function;
} // namespace ir
} // namespace tle

namespace tle::driver {

/// Launch facts of one specialised kernel (-ns, -g, `:1` parameters), handed to the NVPTX
/// backend, which records them in the kernel's metadata as the optional keys "num_stages",
/// "grid" and "equal_to_1" (tle/Target/NVPTX/KernelMetadata.h, tle/Runtime/Metadata.h), with the
/// document's "source_hash" (set by the driver, not by collectLaunchFacts).
using LaunchFacts = nvptx::LaunchFacts;

/// Collects the launch facts of `fn` specialised from `module` (null for tile-IR input) with
/// `options`, and checks the -g expressions against its parameters. A bad expression is reported
/// as `-g:1:COL: error: ...` with the expression and a caret (the -g text is registered in `sm`),
/// then CompileAborted is thrown.
LaunchFacts collectLaunchFacts(const CompileOptions &options, const ast::Module *module, const ir::Function &fn,
                               SourceManager &sm, DiagnosticEngine &diags);

/// Writes the launchers --emit-header (C++) and --emit-header-c (C) ask for, from the emitted
/// module `image` (cubin or PTX, read back the way tle-link reads it). Returns false after
/// reporting an error through `diags`.
bool writeLaunchHeaders(const CompileOptions &options, const std::string &image, DiagnosticEngine &diags);

/// The names triton.tools.compile gives one specialisation: `hash` is the first 8 hex digits of
/// SHA-256 over the stripped signature items and "warps{W}xstages{S}" joined by spaces; `suffix`
/// is "{i}d" for every `:16` item and "{i}c" for every `:1` item, in order (e.g. "0d1d3c").
struct TritonNames {
  std::string hash, suffix;
};
TritonNames tritonNames(const std::string &signature, int numWarps, int numStages);

/// `prefix` with its file name's extension (if any) replaced by `suffix`, as Python's
/// Path.with_suffix: ("out/rms", ".h") -> "out/rms.h", ("rms.o", ".h") -> "rms.h".
std::string withSuffix(const std::string &prefix, const std::string &suffix);

/// For `-o PREFIX` (options.tritonPrefix): writes the C launcher of `image` as
/// PREFIX.<hash>_<suffix>.h (declarations) and .c (definitions, the module embedded), the
/// function named <out-name>_<hash>_<suffix>, where triton.tools.compile writes its pair.
/// Returns false after reporting an error through `diags`.
bool writeTritonLauncher(const CompileOptions &options, const std::string &image, DiagnosticEngine &diags);

} // namespace tle::driver
