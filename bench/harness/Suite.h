// Benchmark suite files (bench/suites/*.json): kernels, cases, buffers, launches; loading and evaluation.
#pragma once

#include "Expr.h"
#include "Tensor.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace tle::bench {

using ojson = nlohmann::ordered_json;

/// One compiled specialisation: `tlec SOURCE -n ENTRY -s SIGNATURE -w NUM_WARPS -D...`, built by
/// CMake as <build>/bench/kernels/<name>.<arch>.cubin. Fields missing from the suite come from
/// the source's `# Compile: tlec ...` header line.
struct KernelSpec {
  std::string name;      ///< the cubin's base name (the key in the suite's "kernels" object)
  std::string source;    ///< repository-relative path of the .tle file
  std::string entry;     ///< the @jit function (empty: the file's only kernel)
  std::string signature; ///< Triton AOT signature, e.g. "*fp32:16, i32, 1024"
  int numWarps = 4;
  std::vector<std::pair<std::string, std::string>> defines; ///< -D NAME=VALUE
  /// "include_dirs": repository-relative directories searched for the modules the source imports
  /// (tlec / tle-run -I), after the source's own package root.
  std::vector<std::string> includeDirs;
};

/// The `-I DIR` arguments of `ks`'s include directories, each under the repository root `root`.
std::vector<std::string> includeArgs(const KernelSpec &ks, const std::string &root);

/// A buffer of a case. Role "input" is generated before the run; "output" is written by the
/// kernels and checked; "scratch" is zeroed and neither checked nor counted in the bytes moved.
struct BufferSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::string> shape; ///< expressions over the case's variables
  std::string role = "input";
  std::string init = "normal";    ///< normal, uniform, randint, zeros, ones, full, derived
  std::vector<std::string> initArgs; ///< expressions: normal [mean, std]; uniform/randint [low, high]; full [value]
  /// Inputs of launch specs: a .npy path template (`{NAME}`: a case variable) read instead of
  /// generating; empty otherwise.
  std::string file;
};

/// One kernel launch of a case: grid expressions and one argument per runtime parameter (a
/// buffer name for pointers, an expression for scalars; the kernel's constexprs are in scope).
struct LaunchSpec {
  std::string kernel;
  std::vector<std::string> grid;
  std::vector<std::string> args;
};

/// One benchmark case.
struct CaseSpec {
  std::string name;   ///< unique id, e.g. "softmax_65536x1024"
  std::string family; ///< which reference checks it (see Families.h)
  std::string label;  ///< one line for tables, e.g. "softmax fp32 65536 x 1024"
  std::vector<std::pair<std::string, std::string>> vars; ///< evaluated in order
  std::vector<BufferSpec> buffers;
  std::vector<LaunchSpec> launches;
  std::string bytes; ///< bytes moved (empty: the sum of input and output buffers)
  std::string flops; ///< optional
  int reps = 0, warmup = 0;
  /// Constexprs of this case passed to tlec as -D NAME=VALUE (a launch spec's size or scalar that
  /// names a constexpr parameter); empty for suite files.
  std::vector<std::pair<std::string, std::string>> defines;
};

/// A loaded suite file.
struct Suite {
  std::string path;        ///< as given
  std::string root;        ///< the repository root the kernel sources are relative to
  std::string name, description;
  std::vector<KernelSpec> kernels;
  std::vector<CaseSpec> cases;
  int reps = 100, warmup = 10;
  /// The optional "tune" object of a tuning spec (bench/tune/*.json), read by `tle-bench --tune`
  /// (Tune.h); null when absent.
  ojson tune;

  /// The kernel called `name`; throws BenchError.
  const KernelSpec &kernel(const std::string &name) const;
};

/// Reads and validates a suite file: unknown keys, missing fields, undefined kernels and buffer
/// names, and families' required buffers are reported as BenchError naming the case. The
/// repository root is the directory two levels above the suite file (bench/suites/x.json).
Suite loadSuite(const std::string &path);

/// Parses a `# Compile: tlec FILE [-n NAME] -s "SIG" [-w N] [-D X=Y]...` line of `sourcePath`
/// into the fields of `k` that are still empty (signature, entry, defines) or default (num_warps
/// when the suite gives none). Throws BenchError when no signature is found anywhere.
void completeFromHeader(KernelSpec &k, const std::string &sourcePath, bool suiteGaveWarps);

/// A case with its variables, shapes and byte counts evaluated.
struct ResolvedCase {
  const CaseSpec *spec = nullptr;
  Env env; ///< built-ins (SMS), the case's vars, overrides
  std::vector<std::vector<int64_t>> shapes; ///< per buffer
  std::vector<InitSpec> inits;              ///< per buffer (inputs)
  double bytes = 0, flops = 0;
  size_t totalBufferBytes = 0;              ///< every buffer, scratch included
};

/// Evaluates `c` with `builtins` (e.g. SMS) and then `overrides` (NAME=VALUE strings replacing
/// the case's vars of that name, or adding new names). Throws BenchError.
ResolvedCase resolveCase(const CaseSpec &c, const Env &builtins,
                         const std::vector<std::pair<std::string, std::string>> &overrides);

/// "normal(0, 2)" -> ("normal", {"0", "2"}) (commas inside parentheses kept); a text without
/// parentheses is a name without arguments. Throws BenchError naming `where` when malformed.
std::pair<std::string, std::vector<std::string>> parseCall(const std::string &s, const std::string &where);

/// Splits NAME=VALUE at the first '='; throws BenchError naming `what`.
std::pair<std::string, std::string> splitAssign(const std::string &s, const char *what);

/// The index of buffer `name` in `c`, or -1.
int bufferIndex(const CaseSpec &c, const std::string &name);

} // namespace tle::bench
