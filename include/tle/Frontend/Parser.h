// Entry points of the frontend: Python-syntax source text to tokens and to the TLE AST.
// This is the only layer that sees ANTLR types.
#pragma once

#include "tle/AST/AST.h"
#include "tle/Support/Diagnostics.h"

#include <iosfwd>
#include <string>

namespace tle::frontend {

/// Parses file `file` (already registered in `diags.sources()`) as a Python 3 module.
/// Syntax errors are reported as `file:line:col: error: ...` (every one found, then
/// CompileAborted is thrown). Nodes are allocated in `ctx`.
ast::Module parseModule(uint32_t file, ast::ASTContext &ctx, DiagnosticEngine &diags);

/// Parses `text` as one Python expression (e.g. a command-line constexpr value, `-D
/// mesh=CLUSTER_MESH`) whose tokens sit at `at` in file `file` (registered in `diags.sources()`,
/// its text holding `text` there; `at.col` >= 2 on line 1). Syntax errors are reported at their
/// place in that file and end in CompileAborted. The node is allocated in `ctx`.
ast::Expr *parseExpression(uint32_t file, SourceLoc at, const std::string &text, ast::ASTContext &ctx,
                           DiagnosticEngine &diags);

/// Writes the lexer's token stream, one token per line as `line:col KIND 'text'`, with the
/// synthetic NEWLINE/INDENT/DEDENT tokens included (for `tlec --emit=tokens`).
void dumpTokens(uint32_t file, std::ostream &os, DiagnosticEngine &diags);

} // namespace tle::frontend
