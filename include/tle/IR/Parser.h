// Reads the tile IR text form (as written by ir::print without layouts) back into a Function.
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

#include <memory>

namespace tle::ir {

/// Parses the single `func` in file `file` of `diags.sources()`. Errors (unknown ops, undefined
/// values, type mismatches between an operand and its written type) are located user errors
/// ending in CompileAborted. The result still has to pass ir::verify.
std::unique_ptr<Function> parseFunction(uint32_t file, DiagnosticEngine &diags);

} // namespace tle::ir
