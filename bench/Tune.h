// tle-bench --tune: compile a kernel's candidate configurations in parallel, prune them with the cost model, time the survivors, cache and dispatch the best.
#pragma once

namespace tle::bench {

/// The `tle-bench --tune SPEC.json ...` command (docs/bench.md, "Autotuning"); `argv` is the
/// whole command line. Returns the exit status: 0 when every case was tuned (or found in the
/// cache) and its winner checked correct, 1 when a case failed, 2 on bad usage or a bad spec, 77
/// when a GPU is needed and there is none.
int runTune(int argc, char **argv);

} // namespace tle::bench
