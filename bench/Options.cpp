// tle-bench's command line with CLI11: the suite-run and --tune options, the options both share defined once (see Options.h).
#include "Options.h"

#include "harness/Launch.h"
#include "harness/Suite.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>

namespace tle::bench {

namespace {

enum class Mode { Suite, Tune };

/// Accepts a decimal integer in [lo, hi] and rewrites it in canonical form (CLI11 alone would
/// read "010" as octal, "0x10" as hex and wrap "-1" into an unsigned option).
CLI::Validator integerIn(int64_t lo, uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string &s) -> std::string {
        const bool negative = !s.empty() && s[0] == '-';
        const size_t start = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
        if (start == s.size() || s.find_first_not_of("0123456789", start) != std::string::npos)
          return fmt::format("'{}' is not an integer", s);
        errno = 0;
        const unsigned long long magnitude = std::strtoull(s.c_str() + start, nullptr, 10);
        const bool overflow = errno == ERANGE;
        if (negative && magnitude != 0) {
          // -magnitude >= lo, i.e. magnitude <= -lo, written without overflowing.
          if (lo >= 0 || overflow || magnitude - 1 > uint64_t(-(lo + 1)))
            return fmt::format("must be at least {}, got {}", lo, s);
          s = fmt::format("-{}", magnitude);
          return {};
        }
        if (overflow || magnitude > hi)
          return fmt::format("must be at most {}, got {}", hi, s);
        if (lo > 0 && magnitude < uint64_t(lo))
          return fmt::format("must be at least {}, got {}", lo, s);
        s = fmt::format("{}", magnitude);
        return {};
      },
      "");
}

constexpr uint64_t kIntMax = uint64_t(std::numeric_limits<int>::max());

/// A single-valued option: given twice, the last one counts (as scripts append to a default).
template <class T> CLI::Option *single(CLI::App &app, const std::string &name, T &value, const std::string &help) {
  return app.add_option(name, value, help)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

/// A repeatable option: one value per occurrence, all of them kept in order.
CLI::Option *repeatable(CLI::App &app, const std::string &name, std::vector<std::string> &values,
                        const std::string &help) {
  return app.add_option(name, values, help)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::string defaultText(int v, const char *whenNegative) {
  return v < 0 ? whenNegative : std::to_string(v);
}

/// The options both modes take: one definition, with each mode's defaults (already in `o`) in
/// the help. `sets` receives the raw --set values (split after parsing).
void addCommonOptions(CLI::App &app, CommonOptions &o, std::vector<std::string> &sets, Mode mode) {
  const bool tune = mode == Mode::Tune;
  repeatable(app, "--case", o.caseFilters,
             tune ? "only the cases whose name contains SUBSTR (repeatable)"
                  : "only the cases whose name contains SUBSTR or whose family is SUBSTR (repeatable)")
      ->type_name("SUBSTR")
      ->group("Cases");
  repeatable(app, "--set", sets, "override a case variable or the built-in SMS, e.g. M=256 (repeatable)")
      ->type_name("NAME=VALUE")
      ->group("Cases");
  single(app, "--reps", o.reps,
         fmt::format("timed rounds per {} (default: {})", tune ? "candidate" : "case",
                     defaultText(o.reps, "the suite's \"reps\"")))
      ->type_name("N")
      ->transform(integerIn(1, kIntMax))
      ->group("Timing");
  single(app, "--warmup", o.warmup,
         fmt::format("untimed rounds before them (default: {})", defaultText(o.warmup, "the suite's \"warmup\"")))
      ->type_name("N")
      ->transform(integerIn(0, kIntMax))
      ->group("Timing");
  single(app, "--flush-mib", o.flushMiB,
         fmt::format("MiB of the buffer set before every timed round to flush the L2 (default {})", o.flushMiB))
      ->type_name("N")
      ->transform(integerIn(0, 1 << 20))
      ->group("Timing");
  single(app, "--device", o.device, fmt::format("CUDA device ordinal (default {})", o.device))
      ->type_name("N")
      ->transform(integerIn(0, kIntMax))
      ->group("Timing");
  single(app, "--seed", o.seed, fmt::format("seed of the generated inputs (default {})", o.seed))
      ->type_name("N")
      ->transform(integerIn(0, std::numeric_limits<uint64_t>::max()))
      ->group("Timing");
  single(app, "--json", o.jsonOut, "write the results as JSON")->type_name("FILE")->group("Output");
  single(app, "--md", o.mdOut, "write the results as a Markdown table")->type_name("FILE")->group("Output");
  const char *without = tune ? "of the device model with --compile-only" : "with --dry-run or --cpu-check";
  single(app, "--arch", o.arch, fmt::format("architecture {} (default {})", without, o.arch))
      ->type_name("ARCH")
      ->group("Without a GPU");
  single(app, "--sms", o.sms,
         fmt::format("SM count {} (default {})", without,
                     o.sms > 0 ? std::to_string(o.sms) : std::string("0: the architecture's")))
      ->type_name("N")
      ->transform(integerIn(tune ? 0 : 1, kIntMax))
      ->group("Without a GPU");
}

std::string usageError(const std::string &tool, const std::string &what) {
  return fmt::format("{}: {}\nRun '{} --help' for the options.\n", tool, what, tool);
}

/// Parses `args` with `app`, then runs `finish` (checks and conversions after parsing, which may
/// throw BenchError). Fills the result's exit status and message on --help (0) or an error (2).
template <class Options, class Finish>
void parseWith(CLI::App &app, ParsedCommandLine<Options> &result, const std::string &tool,
               const std::vector<std::string> &args, Finish finish) {
  // CLI11 parses a reversed vector (it pops from the back).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
    finish(result.options);
  } catch (const CLI::CallForHelp &) {
    result.exitStatus = 0;
    result.message = app.help();
  } catch (const CLI::ParseError &e) {
    result.exitStatus = 2;
    result.message = usageError(tool, e.what());
  } catch (const BenchError &e) { // a --set without NAME=
    result.exitStatus = 2;
    result.message = usageError(tool, e.what());
  }
}

void splitSets(const std::vector<std::string> &sets, CommonOptions &o) {
  for (const std::string &s : sets)
    o.overrides.push_back(splitAssign(s, "--set"));
}

} // namespace

bool isTuneCommandLine(const std::vector<std::string> &args) {
  return std::find(args.begin(), args.end(), "--tune") != args.end();
}

ParsedCommandLine<BenchOptions> parseBenchCommandLine(const std::vector<std::string> &args) {
  ParsedCommandLine<BenchOptions> r;
  BenchOptions &o = r.options;
  CLI::App app{"tle-bench: run benchmark suites (bench/suites/*.json) of tlec kernels through libtle_rt: check "
               "every case against a float64 reference, time it, and time a copy of the same traffic.",
               "tle-bench"};
  app.footer("Exit status: 0 when every case ran and was correct, 1 otherwise, 2 for bad usage or a bad suite, "
             "77 when there is no GPU (GPU mode).\n"
             "Autotuning: tle-bench --tune SPEC.json ... (tle-bench --tune --help). See docs/bench.md.");
  app.add_option("SUITE.json", o.suites, "suite files")->required();
  std::vector<std::string> sets;
  addCommonOptions(app, o, sets, Mode::Suite);
  single(app, "--max-rotate", o.maxRotate,
         fmt::format("at most N copies of a case's buffers used in turn when they fit twice in the L2 (default {})",
                     o.maxRotate))
      ->type_name("N")
      ->transform(integerIn(1, kIntMax))
      ->group("Timing");
  single(app, "--kernel-dir", o.kernelDir, "the compiled kernels (default: kernels/ beside tle-bench)")
      ->type_name("DIR")
      ->group("Cases");
  CLI::Option *dry = app.add_flag("--dry-run", o.dryRun, "no GPU: print the plan (grids, constexprs, bytes)")
                         ->group("Without a GPU");
  CLI::Option *timeHost =
      app.add_flag("--time-host", o.timeHost,
                   "a dry run (--dry-run implied) that also generates the inputs and runs the references, to "
                   "time the host side")
          ->group("Without a GPU");
  single(app, "--cpu-check", o.tleRun,
         "no GPU: run and check every case through `TLE_RUN --target cpu`, normally at small --set sizes")
      ->type_name("TLE_RUN")
      ->excludes(dry)
      ->excludes(timeHost)
      ->group("Without a GPU");
  parseWith(app, r, "tle-bench", args, [&](BenchOptions &opts) {
    splitSets(sets, opts);
    opts.dryRun |= opts.timeHost;
    if (opts.kernelDir.empty())
      opts.kernelDir = executableDirectory() + "/kernels";
  });
  return r;
}

ParsedCommandLine<TuneOptions> parseTuneCommandLine(const std::vector<std::string> &args) {
  ParsedCommandLine<TuneOptions> r;
  TuneOptions &o = r.options;
  CLI::App app{"tle-bench --tune: compile a kernel's candidate configurations in parallel, prune them with the "
               "cost model, time the survivors on the GPU, cache the best and write dispatch tables.",
               "tle-bench --tune"};
  app.footer("Exit status: 0 when every case was tuned or found in the cache, 1 when one failed, 2 on bad usage "
             "or a bad spec, 77 without a GPU (except with --compile-only). See docs/bench.md, \"Autotuning\".");
  app.add_flag("--tune", "this mode (anywhere on the command line)");
  app.add_option("SPEC.json", o.spec,
                 "the tune spec: a launch spec of any kernel (\"source\", \"kernel\", \"buffers\", \"grid\", "
                 "\"sizes\"; paths relative to it), or a suite file with a \"tune\" object")
      ->required();
  std::vector<std::string> sets;
  addCommonOptions(app, o, sets, Mode::Tune);
  single(app, "--top-k", o.topK, fmt::format("candidates the cost model keeps for timing (default {})", o.topK))
      ->type_name("K")
      ->transform(integerIn(1, std::numeric_limits<uint32_t>::max()))
      ->group("Candidates");
  app.add_flag("--exhaustive", o.exhaustive, "time every valid candidate (and report the pruned winner's gap)")
      ->group("Candidates");
  app.add_flag("--compile-only", o.compileOnly, "no GPU: compile and rank the candidates with the cost model")
      ->group("Candidates");
  app.add_flag("--dry-run", o.dryRun,
               "no GPU: compile every configuration of every size and print the plan (buffers, launch, check, "
               "each config's resources and grid)")
      ->group("Candidates");
  single(app, "--space", o.space,
         "the candidate space: the kernel's @triton.autotune decorator, a generated one, or auto (the decorator "
         "when there is one; default)")
      ->type_name("SPACE")
      ->check(CLI::IsMember({"auto", "decorator", "generated"}))
      ->group("Candidates");
  single(app, "--max-candidates", o.maxCandidates, "only the first N candidates (for tests; default 0: all)")
      ->type_name("N")
      ->transform(integerIn(0, std::numeric_limits<uint32_t>::max()))
      ->group("Candidates");
  single(app, "--max-spill-bytes", o.model.maxLocalBytes,
         fmt::format("reject candidates with more local memory per thread (default {})", o.model.maxLocalBytes))
      ->type_name("N")
      ->transform(integerIn(0, uint64_t(std::numeric_limits<int64_t>::max())))
      ->group("Candidates");
  single(app, "-j,--jobs", o.jobs, "parallel tlec processes (default: one per hardware thread, also for 0)")
      ->type_name("N")
      ->transform(integerIn(0, kIntMax))
      ->group("Compiling");
  single(app, "--tlec", o.tlec, "the compiler (default: $TLE_TLEC, then ../src/tlec or tlec beside tle-bench, then PATH)")
      ->type_name("PATH")
      ->group("Compiling");
  single(app, "--tle-link", o.tleLink,
         "the linker of dispatch launchers (default: $TLE_LINK, then ../src/tle-link or tle-link beside tle-bench, then PATH)")
      ->type_name("PATH")
      ->group("Compiling");
  single(app, "--work-dir", o.workDir, "keep the candidates' modules and logs there (default: a temporary directory)")
      ->type_name("DIR")
      ->group("Compiling");
  single(app, "--cache", o.cachePath,
         "the tuning cache (default: $TLE_TUNE_CACHE, then $XDG_CACHE_HOME/tle/tune-cache.json, then "
         "~/.cache/tle/tune-cache.json)")
      ->type_name("FILE")
      ->group("Cache and dispatch");
  CLI::Option *noCache =
      app.add_flag("--no-cache", "neither read nor write the cache")->group("Cache and dispatch");
  app.add_flag("--force", o.force, "re-tune on a cache hit")->group("Cache and dispatch");
  single(app, "--dispatch", o.dispatchDir,
         "write the dispatch table there: for a launch spec, the fastest config per size as tle-link range "
         "predicates, its modules and the dispatcher NAME_tuned.h/.cpp (tle-link --table); for a suite-form spec, "
         "every cached bucket of the kernel")
      ->type_name("DIR")
      ->group("Cache and dispatch");
  single(app, "--from-results", o.fromResults,
         "with --dispatch: build the table from an earlier run's --json results instead of tuning (no GPU)")
      ->type_name("RUN.json")
      ->group("Cache and dispatch");
  app.add_flag("--ptx-modules", o.ptxModules,
               "a launch spec's dispatch modules as PTX, which needs no ptxas (the driver compiles them when the "
               "launcher loads them); default: cubins")
      ->group("Cache and dispatch");
  single(app, "--export-configs", o.exportConfigs,
         "write the candidate list for bench/triton_autotune_compare.py")
      ->type_name("FILE")
      ->group("Cache and dispatch");
  parseWith(app, r, "tle-bench --tune", args, [&](TuneOptions &opts) {
    splitSets(sets, opts);
    opts.useCache = noCache->count() == 0;
    opts.compileOnly |= opts.dryRun;
    if (opts.jobs == 0)
      opts.jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  });
  return r;
}

std::vector<std::string> commandLineArgs(int argc, char **argv) {
  return std::vector<std::string>(argv + std::min(argc, 1), argv + argc);
}

int printParseExit(const std::optional<int> &exitStatus, const std::string &message) {
  std::fputs(message.c_str(), *exitStatus == 0 ? stdout : stderr);
  return *exitStatus;
}

} // namespace tle::bench
