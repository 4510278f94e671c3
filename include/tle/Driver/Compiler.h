// The compilation pipeline behind `tlec`: source file to tokens, AST, tile IR, gpu-stage IR,
// LLVM IR, PTX or cubin. The pipeline is one readable function (Compiler.cpp).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tle {
class DiagnosticEngine;
namespace ir {
class Function;
}
} // namespace tle

namespace tle::driver {

/// The stages `--emit` can stop at (DESIGN.md §3).
enum class Emit { Tokens, Ast, Tile, Gpu, LLVM, PTX, Cubin };

/// Parses an --emit value ("tokens", "ast", "tile", "gpu", "llvm", "ptx", "cubin").
std::optional<Emit> parseEmit(const std::string &s);
/// The stage an output file's extension implies (.tokens .ast .tir .gpu.tir .ll .ptx .cubin).
std::optional<Emit> emitForPath(const std::string &path);

struct CompileOptions {
  std::string input;                  ///< the .tle / .py file
  /// -I DIR (repeatable): directories searched for imported modules, in order, after the input's
  /// package root (docs/language.md, "Modules and imports").
  std::vector<std::string> importPath;
  /// --depfile / -MF FILE: a Make-style depfile naming the output and, as its prerequisites, the
  /// input and every module file it imported (needs an output file).
  std::string depfile;
  std::string output;                 ///< "-" or empty: standard output (not for cubin)
  Emit emit = Emit::Cubin;
  std::string kernel;                 ///< -n
  std::optional<std::string> signature; ///< -s
  std::map<std::string, std::string> defines; ///< -D
  /// Types of parameters that have no annotation, by name, when there is no signature (tle-run
  /// infers them from its --arg values); sema::SpecializeOptions::argTypes.
  std::map<std::string, std::string> argTypes;
  int numWarps = 4;                   ///< -w
  /// --debug: keep runtime `assert` / tl.device_assert as device asserts (Triton's debug=True).
  bool debug = false;
  std::string arch = "sm_90a";        ///< --arch: sm_80 or sm_90a
  std::string ptxas;                  ///< --ptxas: path override (else $TLE_PTXAS, the CUDA toolkit)
  /// --from=tile: the input is tile IR text (default for .tir inputs), not Python source.
  bool fromTile = false;
  /// --pass=NAME (repeatable): run only these tile-IR passes, in order, instead of the default
  /// pipeline (names from tle/Transforms/PassRegistry.h; an unknown name is an error).
  std::vector<std::string> passes;
  /// --print-after=PASS: print the IR after these passes (`specialize` or a registry name).
  std::vector<std::string> printAfter;
  bool printAfterAll = false;         ///< --print-after-all
  bool timePasses = false;            ///< --time-passes: report wall time per pass on `err`
  /// --layout-stats: after layout assignment, one line on `err` with what it did to the kernel
  /// (tiles, convert_layout ops inserted, conversions avoided; transforms::LayoutAssignmentStats).
  bool layoutStats = false;
  /// -g: launch grid, Triton AOT style ("cdiv(n, 1024), 1, 1") over the kernel's integer
  /// parameters and constexprs (tle/Driver/GridExpr.h); checked, and recorded in the metadata.
  std::string grid;
  /// --no-fp-fusion: Triton's enable_fp_fusion=False (no a*b+c contraction into fma on the GPU).
  bool fpFusion = true;
  std::optional<int> numStages;       ///< -ns/--num-stages: pipeline stages of dot-operand loads (default 3); in the metadata
  std::string emitHeader;             ///< --emit-header=PATH: typed C++ launcher (cubin or PTX output)
  std::string emitHeaderC;            ///< --emit-header-c=PATH: C launcher (cubin or PTX output)
  std::string launcherName;           ///< -on/--out-name: the launcher's name (default: the kernel's)
  /// -o PREFIX without an output extension (Triton's --out-path): no module file, but the C
  /// launcher pair PREFIX.<hash>_<suffix>.h / .c with the module (cubin, or PTX with --emit=ptx)
  /// embedded, named as triton.tools.compile names its output (LaunchFacts.h, writeTritonLauncher).
  std::string tritonPrefix;
};

/// Runs the pipeline. Diagnostics go to `err`; output to `options.output` (or `out`).
/// Returns the process exit status: 0 on success, 1 on a user error (bad source, signature,
/// options, missing CUDA toolkit for a cubin), never crashing on bad input.
int compile(const CompileOptions &options, std::ostream &out, std::ostream &err);

/// Runs the pipeline up to the `tile` stage on `file` (registered in the source manager of
/// `diags`): parse and specialise (or read tile IR when options.fromTile), run the CPU pipeline
/// (transforms::cpuPipeline), verify.
/// This is the input of the CPU target (tle/Target/CPU/CPUBackend.h). Returns nullptr after
/// reporting errors through `diags`; never throws CompileAborted.
std::unique_ptr<ir::Function> compileToTile(uint32_t file, const CompileOptions &options, DiagnosticEngine &diags);

} // namespace tle::driver
