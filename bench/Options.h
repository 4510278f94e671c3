// tle-bench's command line: the options of suite runs and of --tune, parsed with CLI11 (one definition of the options both modes share).
#pragma once

#include "harness/CostModel.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tle::bench {

/// The options that suite runs and `--tune` both take, with the same names and meanings; only
/// some defaults differ (each mode's options struct sets them).
struct CommonOptions {
  std::vector<std::string> caseFilters;                       ///< --case SUBSTR (repeatable)
  std::vector<std::pair<std::string, std::string>> overrides; ///< --set NAME=VALUE (repeatable)
  int reps = -1;          ///< --reps N: timed rounds (-1: the suite's "reps")
  int warmup = -1;        ///< --warmup N: untimed rounds first (-1: the suite's "warmup")
  int64_t flushMiB = 256; ///< --flush-mib N: the L2-flush buffer set before every timed round
  int device = 0;         ///< --device N: CUDA device ordinal
  std::string jsonOut;    ///< --json FILE: the results as JSON (empty: none)
  std::string mdOut;      ///< --md FILE: the results as a Markdown table (empty: none)
  uint64_t seed = 1;      ///< --seed N: seed of the generated inputs
  int sms = 132;          ///< --sms N: the SM count used without a GPU
  std::string arch = "sm_90a"; ///< --arch ARCH: the architecture used without a GPU
};

/// `tle-bench SUITE.json... [options]`: run, check and time the cases of benchmark suites
/// (docs/bench.md, "tle-bench options").
struct BenchOptions : CommonOptions {
  std::vector<std::string> suites; ///< the suite files, in order (at least one)
  int maxRotate = 8;               ///< --max-rotate N: copies of a case's buffers used in turn
  std::string kernelDir;           ///< --kernel-dir DIR (default: kernels/ beside the executable)
  bool dryRun = false;             ///< --dry-run (also set by --time-host): plan only, no GPU
  bool timeHost = false;           ///< --time-host: a dry run that also generates inputs and runs the references
  std::string tleRun;              ///< --cpu-check TLE_RUN: run every case through tle-run on the CPU
};

/// `tle-bench --tune SPEC.json [options]`: tune one kernel per case of a tune spec (docs/bench.md,
/// "Autotuning").
struct TuneOptions : CommonOptions {
  TuneOptions() {
    reps = 20;
    warmup = 5;
    sms = 0; // the architecture's own SM count
  }
  std::string spec;             ///< the tune spec file
  size_t topK = 12;             ///< --top-k K: candidates the cost model keeps for timing
  bool exhaustive = false;      ///< --exhaustive: time every valid candidate
  bool compileOnly = false;     ///< --compile-only: compile and rank, no GPU
  bool dryRun = false;          ///< --dry-run: --compile-only that also prints each case's launch and every config
  std::string fromResults;      ///< --from-results FILE: --dispatch from an earlier run's --json (no GPU)
  bool ptxModules = false;      ///< --ptx-modules: a launch spec's dispatch modules as PTX (no ptxas needed)
  bool force = false;           ///< --force: re-tune on a cache hit
  bool useCache = true;         ///< false with --no-cache
  std::string cachePath;        ///< --cache FILE (empty: $TLE_TUNE_CACHE, then the XDG cache)
  std::string dispatchDir;      ///< --dispatch DIR: write the dispatch table (and its launcher) there
  std::string exportConfigs;    ///< --export-configs FILE: the candidate list for Triton's autotuner
  std::string workDir;          ///< --work-dir DIR: keep candidates there (empty: a temporary directory)
  std::string tlec;             ///< --tlec PATH (empty: $TLE_TLEC, ../src/tlec, PATH)
  std::string tleLink;          ///< --tle-link PATH (empty: $TLE_LINK, ../src/tle-link, PATH)
  std::string space = "auto";   ///< --space auto|decorator|generated
  int jobs = 0;                 ///< --jobs N: parallel tlec processes (0 on the command line: every core)
  size_t maxCandidates = 0;     ///< --max-candidates N: only the first N candidates (0: all)
  ModelOptions model;           ///< --max-spill-bytes N sets model.maxLocalBytes
};

/// What a command line asks for: run with `options`, or, when `exitStatus` is set, print
/// `message` (on standard output for status 0, i.e. --help; on standard error otherwise) and exit
/// with that status. Bad usage is status 2.
template <class Options> struct ParsedCommandLine {
  Options options;
  std::optional<int> exitStatus;
  std::string message;
};

/// True when the command line (without the program name) asks for the --tune mode.
bool isTuneCommandLine(const std::vector<std::string> &args);

/// Parses a suite-run command line (`args` without the program name). An empty `kernelDir`
/// becomes kernels/ beside the executable.
ParsedCommandLine<BenchOptions> parseBenchCommandLine(const std::vector<std::string> &args);

/// Parses a `--tune` command line (`args` without the program name, `--tune` anywhere in it).
/// `jobs` 0 becomes the number of hardware threads.
ParsedCommandLine<TuneOptions> parseTuneCommandLine(const std::vector<std::string> &args);

/// The arguments of `main` after the program name.
std::vector<std::string> commandLineArgs(int argc, char **argv);

/// Prints a parse result's message where it belongs (standard output for status 0, standard
/// error otherwise) and returns its exit status; call it only when `exitStatus` is set.
int printParseExit(const std::optional<int> &exitStatus, const std::string &message);

} // namespace tle::bench
