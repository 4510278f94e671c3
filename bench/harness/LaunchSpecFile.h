// Launch specs of tle-bench --tune: a JSON file describing how to run any user kernel (source, buffers by dtype and shape expression, scalars, grid, sizes to tune over, reference check), loaded into the harness's suite form.
#pragma once

#include "Suite.h"
#include "TuneSpace.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tle::bench {

/// One `'NAME': lambda args: EXPR` of a kernel's @triton.heuristics, with `args['X']` written as X.
struct HeuristicRule {
  std::string name;               ///< the parameter it computes
  std::string expr;               ///< the lambda's body as an expression over parameter names
  std::vector<std::string> reads; ///< the parameters it reads (the `args['X']` keys)
  bool runtime = false;           ///< reads a runtime parameter of the kernel
};

/// How a launch spec's outputs are checked: against `.npy` files (one path template per output,
/// `{NAME}` replaced by the size's values), against the outputs of a reference kernel run on the
/// same inputs, or, with neither, only for finite values.
struct LaunchCheck {
  std::vector<std::pair<std::string, std::string>> expect; ///< output buffer -> path template (resolved)
  std::optional<KernelSpec> reference;                     ///< named "reference"
  std::optional<LaunchSpec> referenceLaunch;               ///< its grid and arguments
  std::vector<std::string> referenceDefines;               ///< sizes and scalars that are its constexprs
  std::optional<double> rtol, atol;                        ///< default: by the output's dtype
};

/// A loaded launch spec (docs/bench.md, "Tuning any kernel"). `suite` is the harness form: its
/// first kernel is the tuned one (named by its entry), `root` is the spec's directory, one case per
/// size with the size's values as variables (then the scalars), and its "tune" object names the
/// kernel and the bucket (every size name).
struct LaunchSpecFile {
  std::string path;                      ///< as given
  Suite suite;
  std::vector<std::string> sizeNames;    ///< in the first size's order
  std::vector<std::string> runtimeParams; ///< the kernel's runtime parameters (the launch's args, in order)
  /// The sizes the dispatch table's predicates test, as (size name, the kernel parameter it is
  /// passed as: the launcher argument tle-link's predicates name).
  std::vector<std::pair<std::string, std::string>> dispatchOn;
  std::vector<Candidate> configs;        ///< the spec's "configs" (empty: the decorator or a space)
  std::vector<std::string> heuristics;   ///< parameters the kernel's @triton.heuristics computes
  /// The lambdas of those heuristics, in order, as expressions (see HeuristicRule); tle-bench
  /// evaluates them when one reads a runtime parameter (tlec cannot: it asks for the value).
  std::vector<HeuristicRule> heuristicRules;
  LaunchCheck check;
};

/// True when the JSON document is a launch spec (it has "source" and no "kernels").
bool isLaunchSpec(const ojson &doc);

/// Reads and validates a launch spec. Every error is a BenchError starting with the spec's path
/// and the field, e.g. `add.json: buffers.x.dtype: unknown dtype 'fp33' (known: ...)`: a missing
/// or unreadable file (source, include_dirs, expectation files per size), an unknown key, a
/// kernel not in the source, a kernel parameter no buffer, scalar or size gives, a bad dtype,
/// role or init, and an expression that does not evaluate for some size (shapes, scalars, grid,
/// with the candidate's constexprs set to 1).
LaunchSpecFile loadLaunchSpec(const std::string &path);

/// Replaces each `{NAME}` in `text` by the value of NAME in `env` (an integer, or Python's repr of
/// a float). Throws BenchError naming `where` when NAME is not in `env` or a brace is unmatched.
std::string expandTemplate(const std::string &text, const Env &env, const std::string &where);

/// The names of the parameters an `@triton.heuristics({'NAME': lambda ...})` decorator of
/// `def ENTRY` computes, in order (empty when it has none).
std::vector<std::string> heuristicParams(const std::string &source, const std::string &entry);

/// The rules of that decorator (`runtime` left false). Throws BenchError naming the parameter when
/// a value is not `lambda NAME: EXPR`.
std::vector<HeuristicRule> heuristicRules(const std::string &source, const std::string &entry);

/// The values of the heuristics of `ls` that read a runtime parameter, for a launch with the
/// variables `env` (the case's sizes and scalars) and configuration `config`, as tlec -D pairs;
/// the other heuristics are evaluated too (a rule may read them) but left to tlec. Empty when no
/// rule reads a runtime parameter. A heuristic the config or the spec's defines set is not
/// computed (as tlec lets -D win). Throws BenchError naming the heuristic and the case.
std::vector<std::pair<std::string, std::string>> runtimeHeuristicDefines(const LaunchSpecFile &ls, const Env &env,
                                                                         const Candidate &config,
                                                                         const std::string &caseName,
                                                                         Env *values = nullptr);

} // namespace tle::bench
