// Private to the frontend: turns an ANTLR parse tree of a Python module into the TLE AST.
#pragma once

#include "tle/AST/AST.h"
#include "tle/Support/Diagnostics.h"

#include "TLEParser.h"

namespace tle::frontend {

/// Walks a complete (error-free) parse tree and builds the AST in `ctx`. Constructs the AST
/// does not model become OtherStmt / OtherExpr. Reports the first semantic-syntax error
/// (invalid assignment target, integer literal out of range, misplaced parameters, bad
/// escapes, expressions nested too deeply, ...) through `diags` and throws CompileAborted.
ast::Module buildModule(uint32_t file, grammar::TLEParser::File_inputContext *tree, ast::ASTContext &ctx,
                        DiagnosticEngine &diags);

/// Builds the expression of an `eval_input` parse tree (an f-string's replacement field).
ast::Expr *buildExpression(uint32_t file, grammar::TLEParser::Eval_inputContext *tree, ast::ASTContext &ctx,
                           DiagnosticEngine &diags);

/// Parses `text`, the source of an f-string's replacement field that starts at `at` in file
/// `file`, as one expression whose tokens carry their locations in the file; syntax errors are
/// reported there (CompileAborted).
ast::Expr *parseFieldExpression(uint32_t file, SourceLoc at, const std::string &text, ast::ASTContext &ctx,
                                DiagnosticEngine &diags);

} // namespace tle::frontend
