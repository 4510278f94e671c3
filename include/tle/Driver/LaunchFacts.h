// What tlec records for ahead-of-time launchers beyond what code generation knows (-ns, -g and the
// parameters `:1` hints specialised away), and the --emit-header / --emit-header-c outputs.
#pragma once

#include "tle/Driver/Compiler.h"
#include "tle/Support/Diagnostics.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace tle {
namespace ast {
struct Module;
} // namespace ast
namespace ir {
class Function;
} // namespace ir
} // namespace tle

namespace tle::driver {

/// Launch facts of one specialised kernel, recorded in its `__tle_metadata` as the optional keys
/// "num_stages", "grid" and "equal_to_1" (tle/Runtime/Metadata.h).
struct LaunchFacts {
  std::optional<int> numStages;  ///< -ns / --num-stages, when given
  std::vector<std::string> grid; ///< -g: the three dimension expressions, or empty
  /// A parameter a `:1` hint specialised to the constant 1: gone from the kernel's parameters,
  /// still an argument of its launchers (which check that it is 1).
  struct EqualToOne {
    std::string name;  ///< the parameter name
    std::string type;  ///< its type spelling, e.g. "i32"
    size_t index = 0;  ///< its position among the launcher's arguments (runtime + `:1` parameters)
  };
  std::vector<EqualToOne> equalToOne;
  /// True when nothing is to be recorded.
  bool empty() const { return !numStages && grid.empty() && equalToOne.empty(); }
};

/// Collects the launch facts of `fn` specialised from `module` (null for tile-IR input) with
/// `options`, and checks the -g expressions against its parameters. A bad expression is reported
/// as `-g:1:COL: error: ...` with the expression and a caret (the -g text is registered in `sm`),
/// then CompileAborted is thrown.
LaunchFacts collectLaunchFacts(const CompileOptions &options, const ast::Module *module, const ir::Function &fn,
                               SourceManager &sm, DiagnosticEngine &diags);

/// Adds `facts` to the `__tle_metadata` global of `m` (a no-op when facts.empty()).
void recordLaunchFacts(llvm::Module &m, const LaunchFacts &facts);

/// Writes the launchers --emit-header (C++) and --emit-header-c (C) ask for, from the emitted
/// module `image` (cubin or PTX, read back the way tle-link reads it). Returns false after
/// reporting an error through `diags`.
bool writeLaunchHeaders(const CompileOptions &options, const std::string &image, DiagnosticEngine &diags);

} // namespace tle::driver
