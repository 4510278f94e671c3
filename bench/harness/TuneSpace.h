// The candidate space of `tle-bench --tune`: @triton.autotune configs parsed from the source, or a space generated over the kernel's constexprs.
#pragma once

#include "Expr.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tle::bench {

/// One candidate specialisation: constexpr values (tlec -D), launch variables (case variables
/// the launch grid reads, e.g. a persistent kernel's program count), num_warps and num_stages.
struct Candidate {
  std::vector<std::pair<std::string, int64_t>> constexprs; ///< in the space's dimension order
  std::vector<std::pair<std::string, int64_t>> launchVars; ///< overrides of case variables
  int numWarps = 4;
  int numStages = 3;

  /// A stable, human-readable id: "BLOCK_M=128 BLOCK_N=64 w4 s3" (launch variables after the
  /// constexprs). Two candidates with the same id are the same specialisation and launch.
  std::string id() const;
  /// {"constexprs": {...}, "launch": {...}, "num_warps": W, "num_stages": S}.
  nlohmann::ordered_json toJson() const;
  /// The inverse of toJson(); throws BenchError on a malformed object.
  static Candidate fromJson(const nlohmann::ordered_json &j);
};

/// A parameter of a kernel's `def`, with whether it is annotated `tl.constexpr`.
struct KernelParam {
  std::string name;
  bool constexpr_ = false;
};

/// The parameters of the `def ENTRY(...)` in Python source text `source` (the first `def` when
/// `entry` is empty). Throws BenchError when there is no such function.
std::vector<KernelParam> kernelParams(const std::string &source, const std::string &entry);

/// The source text of the body of `def ENTRY` (up to the next top-level statement); used to tell
/// whether a kernel has a `tl.dot` (num_stages only matters then). Empty when not found.
std::string kernelBody(const std::string &source, const std::string &entry);

/// An `@triton.autotune(configs=[triton.Config({...}, num_warps=W, num_stages=S), ...], key=[...])`
/// decorator of a kernel.
struct AutotuneDecorator {
  std::vector<Candidate> configs; ///< in source order; num_warps 4 and num_stages 3 unless given
  std::vector<std::string> key;   ///< the `key=[...]` argument names
  int line = 0;                   ///< 1-based line of the decorator
};

/// Parses the `@triton.autotune(...)` / `@autotune(...)` decorator directly above `def ENTRY`
/// (any decorator order) with a small parser for Python literals: dicts, lists, tuples, numbers,
/// strings, True/False/None, names and calls with keyword arguments. Config arguments other than
/// the kwargs dict, num_warps and num_stages (num_ctas, maxnreg, pre_hook) are ignored.
/// Returns nullopt when the kernel has no such decorator; throws BenchError naming the line when
/// it cannot be read (e.g. `configs=make_configs()`: the list must be written out).
std::optional<AutotuneDecorator> parseAutotune(const std::string &source, const std::string &entry);

/// Parses one Python expression made of literals, names and calls (see parseAutotune) into JSON:
/// numbers, strings, booleans and null as themselves, lists and tuples as arrays, dicts as
/// objects (keys must be strings), a name as {"name": "a.b"} and a call as
/// {"call": "triton.Config", "args": [...], "kwargs": {...}}. Throws BenchError on a syntax error.
nlohmann::ordered_json parsePyLiteral(const std::string &text);

/// One dimension of a generated space: a constexpr, a launch variable, num_warps or num_stages,
/// with the candidate values as expressions over the case's variables.
struct SpaceDim {
  enum Kind { Constexpr, Launch, Warps, Stages } kind = Constexpr;
  std::string name;                ///< the constexpr or variable name ("num_warps", "num_stages" for those)
  std::vector<std::string> values; ///< expressions; evaluated per case, deduplicated, order kept
};

/// The generated space: the cross product of its dimensions, in order (the last varies fastest).
struct SpaceSpec {
  std::vector<SpaceDim> dims;
};

/// The values `pow2(lo, hi)` stands for: every power of two p with lo <= p <= hi (lo is rounded up
/// to a power of two). Throws BenchError when lo < 1 or there are more than 64.
std::vector<int64_t> powersOfTwo(int64_t lo, int64_t hi);

/// Builds the generated space of a kernel. `params` are its parameters; `fixed` the constexprs
/// the signature or defines already set (not tuned); `spec` the tune spec's "space" object
/// (NAME: [values...] | {"pow2": [lo, hi]}, lo and hi expressions; "num_warps" and
/// "num_stages" too; a NAME that is not a constexpr is a launch variable). Every free constexpr
/// the spec does not mention gets a default by its name: GROUP*: [1, 4, 8, 16]; anything else
/// (BLOCK_*, *_SIZE, ...): pow2(16, 256). num_warps defaults to [2, 4, 8] and num_stages to
/// [1, 2, 3, 4, 5] when `hasDot`, else [3] (tlec pipelines only tl.dot operand loads).
/// Throws BenchError for a malformed spec.
SpaceSpec makeSpaceSpec(const std::vector<KernelParam> &params, const std::vector<std::string> &fixed,
                        const nlohmann::ordered_json &spec, bool hasDot);

/// Expands `space` over the case environment `env` into candidates (values evaluated with
/// evalExpr, duplicates dropped, non-positive values rejected). Throws BenchError naming the
/// dimension on a bad expression.
std::vector<Candidate> expandSpace(const SpaceSpec &space, const Env &env);

} // namespace tle::bench
