// Unit tests of tle-bench's command line (Options.h): the values parsed from the command lines that the docs, scripts and CMake tests use, and the errors of bad usage.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "Options.h"

#include <string>
#include <vector>

using namespace tle::bench;

namespace {

using Args = std::vector<std::string>;
using Overrides = std::vector<std::pair<std::string, std::string>>;

bool endsWith(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The error of a suite-run command line that must fail with status 2.
std::string benchError(const Args &args) {
  ParsedCommandLine<BenchOptions> p = parseBenchCommandLine(args);
  REQUIRE(p.exitStatus);
  CHECK(*p.exitStatus == 2);
  return p.message;
}

/// The error of a --tune command line that must fail with status 2.
std::string tuneError(const Args &args) {
  ParsedCommandLine<TuneOptions> p = parseTuneCommandLine(args);
  REQUIRE(p.exitStatus);
  CHECK(*p.exitStatus == 2);
  return p.message;
}

std::string benchMsg(const std::string &what) {
  return "tle-bench: " + what + "\nRun 'tle-bench --help' for the options.\n";
}

std::string tuneMsg(const std::string &what) {
  return "tle-bench --tune: " + what + "\nRun 'tle-bench --tune --help' for the options.\n";
}

BenchOptions bench(const Args &args) {
  ParsedCommandLine<BenchOptions> p = parseBenchCommandLine(args);
  INFO(p.message);
  REQUIRE_FALSE(p.exitStatus);
  return p.options;
}

TuneOptions tune(const Args &args) {
  ParsedCommandLine<TuneOptions> p = parseTuneCommandLine(args);
  INFO(p.message);
  REQUIRE_FALSE(p.exitStatus);
  return p.options;
}

} // namespace

TEST_CASE("the mode is --tune wherever it appears", "[options]") {
  CHECK(isTuneCommandLine({"--tune", "spec.json"}));
  CHECK(isTuneCommandLine({"spec.json", "--top-k", "4", "--tune"}));
  CHECK_FALSE(isTuneCommandLine({"suite.json", "--dry-run"}));
  CHECK_FALSE(isTuneCommandLine({}));
}

TEST_CASE("suite runs: defaults", "[options]") {
  BenchOptions o = bench({"bench/suites/memory_bound.json"});
  CHECK(o.suites == Args{"bench/suites/memory_bound.json"});
  CHECK(o.caseFilters.empty());
  CHECK(o.overrides.empty());
  CHECK(o.reps == -1); // the suite's
  CHECK(o.warmup == -1);
  CHECK(o.flushMiB == 256);
  CHECK(o.maxRotate == 8);
  CHECK(o.device == 0);
  CHECK(o.seed == 1);
  CHECK(o.jsonOut.empty());
  CHECK(o.mdOut.empty());
  CHECK(o.sms == 132);
  CHECK(o.arch == "sm_90a");
  CHECK_FALSE(o.dryRun);
  CHECK_FALSE(o.timeHost);
  CHECK(o.tleRun.empty());
  CHECK(endsWith(o.kernelDir, "/kernels"));
}

TEST_CASE("suite runs: every option, repeatable ones repeated, suites between options", "[options]") {
  BenchOptions o = bench({"a.json", "--json", "tle.json", "--md", "tle.md", "--case", "softmax", "b.json", "--case",
                          "layernorm_fwd", "--set", "M=3", "--set", "N=16", "--reps", "200", "--warmup", "0",
                          "--flush-mib", "0", "--max-rotate", "1", "--device", "1", "--kernel-dir", "kdir", "--seed",
                          "18446744073709551615"});
  CHECK(o.suites == Args{"a.json", "b.json"});
  CHECK(o.jsonOut == "tle.json");
  CHECK(o.mdOut == "tle.md");
  CHECK(o.caseFilters == Args{"softmax", "layernorm_fwd"});
  CHECK(o.overrides == Overrides{{"M", "3"}, {"N", "16"}});
  CHECK(o.reps == 200);
  CHECK(o.warmup == 0);
  CHECK(o.flushMiB == 0);
  CHECK(o.maxRotate == 1);
  CHECK(o.device == 1);
  CHECK(o.kernelDir == "kdir");
  CHECK(o.seed == 18446744073709551615ull);
  CHECK_FALSE(o.dryRun);
}

TEST_CASE("suite runs: the modes without a GPU as docs/bench.md writes them", "[options]") {
  BenchOptions d = bench({"s.json", "--dry-run", "--sms", "8", "--arch", "sm_80"});
  CHECK(d.dryRun);
  CHECK_FALSE(d.timeHost);
  CHECK(d.sms == 8);
  CHECK(d.arch == "sm_80");

  BenchOptions t = bench({"s.json", "--time-host"}); // implies --dry-run
  CHECK(t.dryRun);
  CHECK(t.timeHost);
  CHECK(bench({"s.json", "--dry-run", "--time-host"}).timeHost);

  BenchOptions c = bench({"s.json", "--cpu-check", "build/src/tle-run", "--case", "softmax", "--set", "M=3"});
  CHECK(c.tleRun == "build/src/tle-run");
  CHECK_FALSE(c.dryRun);
  CHECK(c.caseFilters == Args{"softmax"});
  CHECK(c.overrides == Overrides{{"M", "3"}});
}

TEST_CASE("suite runs: the last of a repeated single option counts; NAME=VALUE forms", "[options]") {
  BenchOptions o = bench({"s.json", "--reps", "3", "--reps", "4", "--warmup=7", "--set", "X=a=b", "--set=Y="});
  CHECK(o.reps == 4);
  CHECK(o.warmup == 7);
  CHECK(o.overrides == Overrides{{"X", "a=b"}, {"Y", ""}});
  // Numbers are decimal: no octal, and a leading + is allowed.
  CHECK(bench({"s.json", "--reps", "010"}).reps == 10);
  CHECK(bench({"s.json", "--device", "+2"}).device == 2);
}

TEST_CASE("suite runs: --help", "[options]") {
  for (const char *h : {"--help", "-h"}) {
    ParsedCommandLine<BenchOptions> p = parseBenchCommandLine({h});
    REQUIRE(p.exitStatus);
    CHECK(*p.exitStatus == 0);
    CHECK(p.message.find("Usage: tle-bench [OPTIONS] SUITE.json...") != std::string::npos);
    for (const char *opt : {"--case", "--set", "--reps", "--warmup", "--flush-mib", "--max-rotate", "--device",
                            "--kernel-dir", "--json", "--md", "--seed", "--dry-run", "--time-host", "--cpu-check",
                            "--sms", "--arch", "--tune"}) {
      INFO(opt);
      CHECK(p.message.find(opt) != std::string::npos);
    }
  }
}

TEST_CASE("suite runs: bad usage", "[options]") {
  CHECK(benchError({}) == benchMsg("SUITE.json is required"));
  CHECK(benchError({"s.json", "--frobnicate"}) == benchMsg("The following argument was not expected: --frobnicate"));
  CHECK(benchError({"s.json", "--reps"}) == benchMsg("--reps: 1 required N missing"));
  CHECK(benchError({"s.json", "--json"}) == benchMsg("--json: 1 required FILE missing"));
  CHECK(benchError({"s.json", "--reps", "0"}) == benchMsg("--reps: must be at least 1, got 0"));
  CHECK(benchError({"s.json", "--reps", "abc"}) == benchMsg("--reps: 'abc' is not an integer"));
  CHECK(benchError({"s.json", "--reps", "12abc"}) == benchMsg("--reps: '12abc' is not an integer"));
  CHECK(benchError({"s.json", "--reps", "1.5"}) == benchMsg("--reps: '1.5' is not an integer"));
  CHECK(benchError({"s.json", "--reps", "0x10"}) == benchMsg("--reps: '0x10' is not an integer"));
  CHECK(benchError({"s.json", "--reps", "99999999999"}) == benchMsg("--reps: must be at most 2147483647, got 99999999999"));
  CHECK(benchError({"s.json", "--warmup", "-1"}) == benchMsg("--warmup: must be at least 0, got -1"));
  CHECK(benchError({"s.json", "--flush-mib", "-1"}) == benchMsg("--flush-mib: must be at least 0, got -1"));
  CHECK(benchError({"s.json", "--flush-mib", "2000000"}) ==
        benchMsg("--flush-mib: must be at most 1048576, got 2000000"));
  CHECK(benchError({"s.json", "--max-rotate", "0"}) == benchMsg("--max-rotate: must be at least 1, got 0"));
  CHECK(benchError({"s.json", "--device", "-1"}) == benchMsg("--device: must be at least 0, got -1"));
  CHECK(benchError({"s.json", "--seed", "-1"}) == benchMsg("--seed: must be at least 0, got -1"));
  CHECK(benchError({"s.json", "--seed", "18446744073709551616"}) ==
        benchMsg("--seed: must be at most 18446744073709551615, got 18446744073709551616"));
  CHECK(benchError({"s.json", "--sms", "0"}) == benchMsg("--sms: must be at least 1, got 0"));
  CHECK(benchError({"s.json", "--set", "M"}) == benchMsg("--set expects NAME=VALUE, got 'M'"));
  CHECK(benchError({"s.json", "--set", "=3"}) == benchMsg("--set expects NAME=VALUE, got '=3'"));
  CHECK(benchError({"s.json", "--dry-run", "--cpu-check", "tle-run"}) == benchMsg("--dry-run excludes --cpu-check"));
  CHECK(benchError({"s.json", "--cpu-check", "tle-run", "--time-host"}) ==
        benchMsg("--time-host excludes --cpu-check"));
  // A --tune option without --tune.
  CHECK(benchError({"s.json", "--top-k", "3"}) == benchMsg("The following argument was not expected: --top-k"));
}

TEST_CASE("--tune: defaults", "[options]") {
  TuneOptions o = tune({"--tune", "bench/tune/matmul.json"});
  CHECK(o.spec == "bench/tune/matmul.json");
  CHECK(o.caseFilters.empty());
  CHECK(o.overrides.empty());
  CHECK(o.topK == 12);
  CHECK(o.reps == 20);
  CHECK(o.warmup == 5);
  CHECK(o.flushMiB == 256);
  CHECK(o.device == 0);
  CHECK(o.seed == 1);
  CHECK(o.sms == 0); // the architecture's
  CHECK(o.arch == "sm_90a");
  CHECK(o.jobs >= 1); // every core
  CHECK(o.space == "auto");
  CHECK(o.maxCandidates == 0);
  CHECK(o.model.maxLocalBytes == 512);
  CHECK(o.useCache);
  CHECK_FALSE(o.exhaustive);
  CHECK_FALSE(o.compileOnly);
  CHECK_FALSE(o.dryRun);
  CHECK(o.fromResults.empty());
  CHECK_FALSE(o.force);
  CHECK(o.cachePath.empty());
  CHECK(o.dispatchDir.empty());
  CHECK(o.exportConfigs.empty());
  CHECK(o.workDir.empty());
  CHECK(o.tlec.empty());
  CHECK(o.tleLink.empty());
  CHECK(o.jsonOut.empty());
  CHECK(o.mdOut.empty());
}

TEST_CASE("--tune: the command lines of the CMake tests and run_tune.sh", "[options]") {
  TuneOptions c = tune({"--tune", "bench/tune/softmax.json", "--compile-only", "--no-cache", "--max-candidates", "8",
                        "--jobs", "2", "--tlec", "build/src/tlec", "--json", "out.json"});
  CHECK(c.spec == "bench/tune/softmax.json");
  CHECK(c.compileOnly);
  CHECK_FALSE(c.useCache);
  CHECK(c.maxCandidates == 8);
  CHECK(c.jobs == 2);
  CHECK(c.tlec == "build/src/tlec");
  CHECK(c.jsonOut == "out.json");

  TuneOptions g = tune({"--tune", "s.json", "--no-cache", "--max-candidates", "8", "--top-k", "4"});
  CHECK(g.topK == 4);

  // A launch spec's dry run (no GPU) and its dispatch table from a run's results.
  TuneOptions d = tune({"--tune", "examples/tune/add_rmsnorm.json", "--dry-run", "--jobs", "2"});
  CHECK(d.dryRun);
  CHECK(d.compileOnly); // --dry-run is a --compile-only that prints the plan
  TuneOptions f = tune({"--tune", "add.json", "--from-results", "run.json", "--dispatch", "out"});
  CHECK(f.fromResults == "run.json");
  CHECK(f.dispatchDir == "out");
  CHECK_FALSE(f.compileOnly);

  // The exhaustive step appends TUNE_ARGS: its --jobs and a second --reps (the last counts).
  TuneOptions e = tune({"--tune", "s.json", "--tlec", "t", "--exhaustive", "--no-cache", "--reps", "10", "--warmup",
                        "2", "--json", "e.json", "--md", "e.md", "--jobs", "16", "--reps", "30"});
  CHECK(e.exhaustive);
  CHECK(e.reps == 30);
  CHECK(e.warmup == 2);
  CHECK(e.mdOut == "e.md");
  CHECK(e.jobs == 16);

  TuneOptions p = tune({"--tune", "s.json", "--export-configs", "c.json", "--dispatch", "disp", "--cache", "cache.json",
                        "--force", "--tle-link", "tl", "--work-dir", "w", "--space", "generated", "--max-spill-bytes",
                        "0", "-j", "3", "--case", "matmul_4096", "--case", "matmul_1024", "--set", "K=64",
                        "--flush-mib", "64", "--device", "2", "--seed", "7", "--arch", "sm_80", "--sms", "108"});
  CHECK(p.exportConfigs == "c.json");
  CHECK(p.dispatchDir == "disp");
  CHECK(p.cachePath == "cache.json");
  CHECK(p.useCache);
  CHECK(p.force);
  CHECK(p.tleLink == "tl");
  CHECK(p.workDir == "w");
  CHECK(p.space == "generated");
  CHECK(p.model.maxLocalBytes == 0);
  CHECK(p.jobs == 3);
  CHECK(p.caseFilters == Args{"matmul_4096", "matmul_1024"});
  CHECK(p.overrides == Overrides{{"K", "64"}});
  CHECK(p.flushMiB == 64);
  CHECK(p.device == 2);
  CHECK(p.seed == 7);
  CHECK(p.arch == "sm_80");
  CHECK(p.sms == 108);

  // --tune anywhere, the spec anywhere.
  TuneOptions l = tune({"s.json", "--top-k", "2", "--tune"});
  CHECK(l.spec == "s.json");
  CHECK(l.topK == 2);
}

TEST_CASE("--tune: --help", "[options]") {
  ParsedCommandLine<TuneOptions> p = parseTuneCommandLine({"--tune", "--help"});
  REQUIRE(p.exitStatus);
  CHECK(*p.exitStatus == 0);
  CHECK(p.message.find("Usage: tle-bench --tune [OPTIONS] SPEC.json") != std::string::npos);
  for (const char *opt : {"--case", "--set", "--top-k", "--exhaustive", "--compile-only", "--jobs", "--tlec",
                          "--tle-link", "--work-dir", "--space", "--max-candidates", "--max-spill-bytes", "--reps",
                          "--warmup", "--flush-mib", "--device", "--seed", "--cache", "--no-cache", "--force",
                          "--dispatch", "--export-configs", "--json", "--md", "--arch", "--sms", "--dry-run",
                          "--from-results", "--ptx-modules"}) {
    INFO(opt);
    CHECK(p.message.find(opt) != std::string::npos);
  }
}

TEST_CASE("--tune: bad usage", "[options]") {
  CHECK(tuneError({"--tune"}) == tuneMsg("SPEC.json is required"));
  CHECK(tuneError({"--tune", "a.json", "b.json"}) == tuneMsg("The following argument was not expected: b.json"));
  CHECK(tuneError({"--tune", "a.json", "--time-host"}) ==
        tuneMsg("The following argument was not expected: --time-host"));
  CHECK(tuneError({"--tune", "a.json", "--top-k"}) == tuneMsg("--top-k: 1 required K missing"));
  CHECK(tuneError({"--tune", "a.json", "--top-k", "0"}) == tuneMsg("--top-k: must be at least 1, got 0"));
  CHECK(tuneError({"--tune", "a.json", "--reps", "0"}) == tuneMsg("--reps: must be at least 1, got 0"));
  CHECK(tuneError({"--tune", "a.json", "--reps", "abc"}) == tuneMsg("--reps: 'abc' is not an integer"));
  CHECK(tuneError({"--tune", "a.json", "--warmup", "-1"}) == tuneMsg("--warmup: must be at least 0, got -1"));
  CHECK(tuneError({"--tune", "a.json", "--flush-mib", "-1"}) == tuneMsg("--flush-mib: must be at least 0, got -1"));
  CHECK(tuneError({"--tune", "a.json", "--jobs", "-2"}) == tuneMsg("--jobs: must be at least 0, got -2"));
  CHECK(tuneError({"--tune", "a.json", "--max-spill-bytes", "-1"}) ==
        tuneMsg("--max-spill-bytes: must be at least 0, got -1"));
  CHECK(tuneError({"--tune", "a.json", "--max-candidates", "x"}) == tuneMsg("--max-candidates: 'x' is not an integer"));
  CHECK(tuneError({"--tune", "a.json", "--space", "random"}) ==
        tuneMsg("--space: random not in {auto,decorator,generated}"));
  CHECK(tuneError({"--tune", "a.json", "--set", "K"}) == tuneMsg("--set expects NAME=VALUE, got 'K'"));
}
