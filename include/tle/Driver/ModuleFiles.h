// The files of the modules a kernel's file imports: read, parsed and kept alive for
// specialisation (sema::SpecializeOptions::loadModule), and listed in a depfile.
#pragma once

#include "tle/AST/AST.h"
#include "tle/Sema/Specialize.h"
#include "tle/Support/Diagnostics.h"

#include <deque>
#include <string>
#include <vector>

namespace tle::driver {

/// Loads imported modules for one compilation: registers each file with the diagnostics'
/// source manager (so errors in it show its lines), parses it (syntax errors are reported and
/// end in CompileAborted) and owns its AST.
class ModuleFiles {
public:
  explicit ModuleFiles(DiagnosticEngine &diags) : diags_(diags) {}
  /// Reads and parses `path`; a null module with the reason when it cannot be read.
  sema::LoadedModule load(const std::string &path);
  /// Parses `text` as the module at pseudo-path `path` (a module built into the compiler): it
  /// enters the source hash, not the depfile.
  sema::LoadedModule loadText(const std::string &path, const std::string &text);
  /// Gives `so` the import search path `importPath` (-I), this loader, and the parser of
  /// command-line constexpr expressions (-D, the signature's), whose ASTs it owns too.
  void attach(sema::SpecializeOptions &so, const std::vector<std::string> &importPath);
  /// The loaded module of source file `file` (a kernel imported from it), or null.
  const ast::Module *moduleOfFile(uint32_t file) const;
  /// The files loaded so far, in load order.
  const std::vector<std::string> &paths() const { return paths_; }
  /// The source hash of a compilation of `input` (a file of the diagnostics' source manager):
  /// SHA-256, as 64 lowercase hex digits, over the input's text and then every loaded module's
  /// text in load order (the depfile's order), each preceded by its length in bytes in decimal
  /// and a newline. Paths do not enter it: the same sources anywhere give the same hash.
  std::string sourceHash(uint32_t input) const;

private:
  DiagnosticEngine &diags_;
  ast::ASTContext ctx_;
  std::deque<ast::Module> modules_; ///< a deque: a module stays in place as others are loaded
  std::vector<std::string> paths_;
};

/// Writes a Make-style depfile "TARGET: INPUT IMPORTED..." (spaces, '#' and '$' escaped) for
/// build systems (CMake's DEPFILE, Ninja's deps). Reports an error and returns false when the
/// file cannot be written.
bool writeDepfile(const std::string &depfile, const std::string &target, const std::string &input,
                  const std::vector<std::string> &imported, DiagnosticEngine &diags);

} // namespace tle::driver
