// Internal to Sema: the user modules of one compilation (files found on the import search path),
// each run once, and the table that finds them by name, file and path.
#pragma once

#include "Sema.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tle::sema {

/// A module of the user's code: the kernel's file or a file it imports (directly or not).
/// Whether `name` is a module of the language (triton..., libdevice, torch, pathlib, os): never
/// searched for on disk, and never shadowed by a user package of that name (an installed triton
/// comes first on Python's path, as it does for Triton's JIT).
bool languageImport(const std::string &name);

struct UserModule {
  enum class State { NotStarted, Running, Done };
  std::string name;    ///< absolute dotted name ("mylib.ops.norm")
  std::string package; ///< what relative imports start from: the package itself or the module's parent ("" at top level)
  std::string path;    ///< the file (empty for a namespace package: a directory without __init__.py)
  std::string dir;     ///< a package's directory, where its submodules are found (empty for a plain module)
  const ast::Module *ast = nullptr;
  State state = State::NotStarted;
  /// Its names once run (Done); while it runs, `running` holds them.
  Env globals;
  std::map<std::string, Specializer::Unresolved> unresolved;
  /// Its names taken from the first branch of an `if` it could not evaluate
  /// (Specializer::guessedGlobals_), warned about where a kernel reads them.
  std::map<std::string, Specializer::Unresolved> guessed;
  std::map<std::string, const ast::FunctionDef *> jitFns;
  /// Its kernel names bound through the decorators' call form (Specializer::kernelWrappers_).
  std::map<std::string, std::vector<const ast::CallExpr *>> kernelWrappers;
  const Specializer *running = nullptr;

  /// The names of the namespace as they are now (partially initialised while it runs).
  const Env &names() const;
  /// Its kernelWrappers as they are now (while it runs, its specializer's).
  const std::map<std::string, std::vector<const ast::CallExpr *>> &wrapperNames() const;
  const std::map<std::string, Specializer::Unresolved> &unresolvedNames() const;
};

/// The user modules of one compilation, shared by all its specializers.
struct ModuleTable {
  /// The most modules running at once (an import inside a module being imported nests a
  /// specializer): bounds the compiler's own recursion.
  static constexpr size_t kMaxDepth = 200;
  /// Directories searched for a top-level module, in order: the kernel file's package root,
  /// then SpecializeOptions::importPath.
  std::vector<std::string> searchPath;
  std::vector<std::unique_ptr<UserModule>> owned;
  std::map<std::string, UserModule *> byName;
  std::map<std::string, UserModule *> byPath; ///< canonical file path (each file runs once)
  std::map<uint32_t, UserModule *> byFile;    ///< source file id (a helper's home module)
  /// Names that failed to import, with the reason (asked again, the same answer) and, as its
  /// note, the first import statement that asked.
  std::map<std::string, Specializer::Unresolved> failed;
  /// The modules being run, outermost first, with the import statement of each (cycle notes).
  std::vector<std::pair<UserModule *, SourceLoc>> stack;
  UserModule *main = nullptr;
};

} // namespace tle::sema
