// Private to the frontend: rejects ASTs nested too deeply for recursive consumers.
#pragma once

#include "tle/AST/AST.h"
#include "tle/Support/Diagnostics.h"

namespace tle::frontend {

/// The deepest expression nesting the frontend accepts (keeps recursive consumers of the AST,
/// such as Sema and the AST printer, within a small stack).
constexpr unsigned kMaxExprDepth = 1000;

/// Reports the first expression of `m` nested deeper than kMaxExprDepth (e.g. a chain of
/// thousands of `+`, which parses iteratively but builds a deep tree) and throws
/// CompileAborted. Runs iteratively, so it cannot itself overflow the stack.
void checkNesting(const ast::Module &m, DiagnosticEngine &diags);

} // namespace tle::frontend
