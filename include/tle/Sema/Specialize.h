// Specialisation: a kernel of a parsed module plus a signature becomes a tile IR Function,
// with constexprs folded, @jit helpers inlined, types and shapes known.
#pragma once

#include "tle/AST/AST.h"
#include "tle/IR/IR.h"
#include "tle/IR/RawCode.h"
#include "tle/Support/Diagnostics.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tle::sema {

/// One entry of Triton's AOT signature string, e.g. `*fp32:16`, `i32`, `i32:1`, `1024`.
struct SignatureEntry {
  /// TensorDesc: a host tensor descriptor, `tensordesc<fp16[64, 64]>` (Triton's AOT spelling of
  /// a `TensorDescriptor` argument): `type` is its element dtype, `blockShape` its block.
  /// Tuple: a tuple of runtime values, `(i32, i32)` (Triton's tuple arguments): `elements` are
  /// Runtime entries or Tuples; each runtime element is a kernel parameter of its own.
  enum class Kind { Runtime, Constexpr, TensorDesc, Tuple } kind = Kind::Runtime;
  ir::ScalarType type;        ///< Runtime: the parameter type; TensorDesc: the element dtype
  std::vector<int64_t> blockShape; ///< TensorDesc: the block shape (1 to 5 dims)
  int64_t divisibility = 1;   ///< Runtime: the `:16` hint (bytes for pointers, value for ints)
  bool specializedToOne = false; ///< Runtime integer with `:1`: the value is the constant 1
  /// Runtime: written as the bare `B`, Triton's signature alias of i1, which a module-level name
  /// `B` overrides for a parameter annotated `tl.constexpr`.
  bool bareAliasB = false;
  /// Constexpr: the value as written: a literal (int, float, True/False, None, a quoted string,
  /// a dtype name) or an expression evaluated in the kernel's module (a module-level name,
  /// `tl.bfloat16`, a tuple, a `tle.device_mesh(...)` call)
  std::string constexprText;
  size_t column = 0; ///< where the entry's text starts in the signature (0-based)
  /// Constexpr: the signature left this trailing parameter out; its default value applies.
  bool fromDefault = false;
  std::vector<SignatureEntry> elements; ///< Tuple: its elements, in order
};

/// An entry as a type or value text: `*fp32`, `i32`, `(i32, (i64, *fp16))`, `1024`.
std::string signatureText(const SignatureEntry &e);

/// The kernel parameters an entry passes at launch: 1 for a runtime one, a tuple's runtime
/// elements (flattened depth first), 0 for a constexpr or a `:1` one.
size_t runtimeLeaves(const SignatureEntry &e);

/// Parses a comma-separated signature ("*fp32:16, *fp32:16, i32, 1024"). Errors are reported
/// as command-line errors naming the offending entry; returns nullopt after reporting.
std::optional<std::vector<SignatureEntry>> parseSignature(const std::string &text, DiagnosticEngine &diags);

/// An imported module's file, read and parsed by SpecializeOptions::loadModule.
struct LoadedModule {
  const ast::Module *module = nullptr; ///< null when the file cannot be read
  std::string error;                   ///< why not
};

/// What to specialise.
struct SpecializeOptions {
  std::string kernel;                 ///< -n; empty: the module's only @jit kernel
  std::optional<std::string> signature; ///< -s; absent: parameter annotations are used
  std::map<std::string, std::string> defines; ///< -D NAME=VALUE (constexpr parameters)
  /// Without a signature: the type of each parameter that has no annotation, by name, as one
  /// signature entry ("*fp16", "i32"); tle-run infers them from its --arg values. A parameter's
  /// own annotation wins.
  std::map<std::string, std::string> argTypes;
  int numWarps = 4;                   ///< -w (a power of two, 1..32)
  /// --debug (Triton's debug=True): runtime `assert` and tl.device_assert become device asserts;
  /// otherwise they are compiled out. A kernel decorated @triton.jit(debug=True) is a debug build
  /// too.
  bool debug = false;
  /// -I: directories searched for imported modules, in order, after the kernel file's package
  /// root (the parent of its outermost directory with an __init__.py, else its own directory).
  std::vector<std::string> importPath;
  /// Reads and parses an imported module's file (registering it with the diagnostics' source
  /// manager; syntax errors are reported there and end in CompileAborted). The module stays
  /// alive until specialisation ends. Without it, only the language's modules can be imported.
  std::function<LoadedModule(const std::string &path)> loadModule;
  /// Parses a module the compiler has built in (src/Sema/Bundled): `text` registered with the
  /// diagnostics' source manager under the pseudo-path `path`, as loadModule does for a file.
  /// Without it, built-in modules are unknown modules.
  std::function<LoadedModule(const std::string &path, const std::string &text)> loadText;
  /// Parses a -D value or a signature's constexpr entry that is not a literal as one Python
  /// expression: `text` starts at `at` in `file`, a command-line pseudo-file of the diagnostics'
  /// source manager; syntax errors are reported there and end in CompileAborted. The expression
  /// lives until specialisation ends. Without it, such values must be literals.
  std::function<const ast::Expr *(uint32_t file, SourceLoc at, const std::string &text)> parseExpression;
  /// The target the kernel is compiled for (TLE-Raw functions are compiled for it).
  std::string arch = "sm_90a";
  /// Compiles TLE-Raw functions (the GPU target's nvptx::compileRaw); absent on the CPU target,
  /// where a raw call is a located error.
  ir::RawCompiler compileRaw;
};

/// Specialises a kernel of `module`. User errors are reported through `diags` (located at the
/// offending source) and end in CompileAborted.
std::unique_ptr<ir::Function> specialize(const ast::Module &module, const SpecializeOptions &opts,
                                         DiagnosticEngine &diags);

} // namespace tle::sema
