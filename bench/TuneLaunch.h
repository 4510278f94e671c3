// tle-bench --tune on launch specs (any user kernel): inputs from files, the reference check, the plan of a dry run and the shape dispatch table.
#pragma once

#include "TuneCommon.h"

#include "harness/Families.h"
#include "harness/LaunchSpecFile.h"
#include "harness/ShapeDispatch.h"

#include <optional>
#include <string>
#include <vector>

namespace tle::bench {

/// A case's host buffers: inputs generated (deterministic in `seed`) or read from their `.npy`
/// files, outputs filled with 0xff bytes (NaN), scratch zeroed; a suite family's `prepare` runs
/// when the case has one.
std::vector<HostTensor> caseInputs(const ResolvedCase &rc, uint64_t seed);

/// What a launch spec's case is checked against, per buffer (set for outputs with an expectation).
struct Expected {
  std::vector<std::optional<HostTensor>> outputs;
  std::string how; ///< "files", "reference kernel ENTRY" or "finite values only"
};

/// The expectations of case `rc`: the `.npy` files of the spec's "expect", or the outputs of its
/// reference kernel (compiled into `work` for `arch` by `tlec` and run once on the inputs already
/// in `bufs`), or none. Throws BenchError (a reference that does not compile or launch).
Expected expectedOutputs(const LaunchSpecFile &ls, const ResolvedCase &rc, Gpu &g, std::vector<rt::DeviceBuffer> &bufs,
                         const std::string &tlec, const std::string &arch, const std::string &work);

/// Compares a case's outputs (`d.tensors`, as the candidate wrote them) with `e`: an element is
/// bad unless finite and within atol + rtol x |want| (the spec's tolerances, else torch.testing's
/// defaults for the dtype); outputs without an expectation are only checked to be finite.
CheckReport checkLaunchOutputs(const LaunchSpecFile &ls, CaseData &d, const Expected &e);

/// Prints what a dry run of case `rc` would launch: the buffers, scalars, grid expressions and
/// the check.
void printCasePlan(const LaunchSpecFile &ls, const ResolvedCase &rc);

/// Writes the shape dispatch table of `tuned` into `dir` (docs/bench.md, "Dispatch tables of
/// launch specs"): each variant's module compiled by `tlec` for `arch` (with the spec's grid, so
/// the launchers compute it), `<entry>.dispatch.json` with the variants' predicates, and, by
/// `tleLink --table`, the dispatcher `<name>.h` / `<name>.cpp` whose `_select` says which variant
/// and why. Returns the table. Throws BenchError.
ojson writeShapeDispatch(const LaunchSpecFile &ls, const std::vector<TunedSize> &tuned, const std::string &dir,
                         const std::string &tlec, const std::string &tleLink, const std::string &arch,
                         const ojson &device, bool ptx);

struct TuneOptions;

/// `tle-bench --tune SPEC --from-results RUN.json --dispatch DIR`: the dispatch table of an earlier
/// run of launch spec `ls` (null: a suite-form spec, an error), without a GPU. Returns the exit
/// status: 0, or 1 with the error on standard error.
int dispatchFromResults(const TuneOptions &o, const LaunchSpecFile *ls);

/// Prints the winners of a launch spec's run (the `--json` document), one line per size.
void printWinners(const ojson &doc);

} // namespace tle::bench
