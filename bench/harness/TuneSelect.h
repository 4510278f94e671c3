// From a tune spec's "model" to the cost model's inputs, and the offline replay of a recorded exhaustive tuning through the model and the timed-set selection.
#pragma once

#include "CostModel.h"
#include "Expr.h"
#include "Suite.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tle::bench {

/// The Workload of one candidate from the tune spec's `model` object (docs/bench.md, "Tune
/// specs"), its expressions evaluated in `env` (the case's variables, the candidate's constexprs
/// and launch variables). `ctas` is the launch's grid size; `caseFlops` and `caseBytes` are the
/// defaults of "flops" and "dram_bytes"; `hasDot` the default of "tensor_cores". Throws
/// BenchError on a malformed model.
Workload modelWorkload(const ojson &model, const Env &env, int64_t ctas, int numWarps, int numStages, bool hasDot,
                       double caseFlops, double caseBytes);

/// One candidate of a replayed tuning.
struct ReplayCandidate {
  std::string id;             ///< Candidate::id()
  std::string cls;            ///< structuralClass()
  Estimate est;               ///< the model's verdict now
  int rank = -1;              ///< 0-based position in the model's order (valid only)
  bool selected = false;      ///< in the timed set (selectForTiming(), then refineForTiming())
  bool measured = false;      ///< the recorded run timed it (and did not find it wrong)
  double medianMs = 0;        ///< its recorded median time
};

/// The result of replayTune().
struct ReplayResult {
  std::string caseName;
  std::vector<ReplayCandidate> candidates; ///< in the recorded order
  size_t valid = 0;           ///< candidates the model accepts
  size_t selected = 0;        ///< size of the timed set, both rounds
  size_t refined = 0;         ///< of them, chosen by the second round (refineForTiming())
  int best = -1;              ///< index of the fastest measured candidate (the exhaustive best)
  int winner = -1;            ///< index of the fastest measured candidate of the timed set
  double gapPct = 0;          ///< winner's time over best's, minus 1, in percent
};

/// Replays case `caseName` (empty: the first) of a recorded `tle-bench --tune --exhaustive --json`
/// document `run` through today's model and selection: each candidate's resources (registers,
/// shared and local bytes) and median time come from `run`, its workload from the spec `spec`
/// (the same expressions `tle-bench --tune` evaluates; the kernel source gives `hasDot`), the
/// device from run["device"] (arch, sm_count). Candidates that did not compile or duplicate
/// another's machine code are left out, as in the run. No GPU and no compiler are needed.
/// Throws BenchError when the document lacks what it needs.
ReplayResult replayTune(const Suite &spec, const ojson &run, const std::string &caseName, const SelectionOptions &sel,
                        const ModelOptions &model = {});

} // namespace tle::bench
