// tle-bench --tune: compile a kernel's candidate configurations in parallel, prune them with the cost model, time the survivors, cache and dispatch the best.
#pragma once

namespace tle::bench {

/// The `tle-bench --tune SPEC.json ...` command (docs/bench.md, "Autotuning" and "Tuning any
/// kernel"): SPEC is a launch spec of any kernel or a suite-form tune spec; `argv` is the whole
/// command line. Returns the exit status: 0 when every case was tuned (or found in the cache) and
/// its winner checked correct (or, with --from-results, the dispatch table written), 1 when a case
/// or the table failed, 2 on bad usage or a bad spec, 77 when a GPU is needed and there is none.
int runTune(int argc, char **argv);

} // namespace tle::bench
