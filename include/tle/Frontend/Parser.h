// Entry points of the frontend: Python-syntax source text to tokens and to the TLE AST.
// This is the only layer that sees ANTLR types.
#pragma once

#include "tle/AST/AST.h"
#include "tle/Support/Diagnostics.h"

#include <iosfwd>

namespace tle::frontend {

/// Parses file `file` (already registered in `diags.sources()`) as a Python 3 module.
/// Syntax errors are reported as `file:line:col: error: ...` (every one found, then
/// CompileAborted is thrown). Nodes are allocated in `ctx`.
ast::Module parseModule(uint32_t file, ast::ASTContext &ctx, DiagnosticEngine &diags);

/// Writes the lexer's token stream, one token per line as `line:col KIND 'text'`, with the
/// synthetic NEWLINE/INDENT/DEDENT tokens included (for `tlec --emit=tokens`).
void dumpTokens(uint32_t file, std::ostream &os, DiagnosticEngine &diags);

} // namespace tle::frontend
