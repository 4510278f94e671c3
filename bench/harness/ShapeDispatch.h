// Shape dispatch from a tuning run: the fastest configuration per size bucket as tle-link range predicates ("M <= 64"), tried in order, the last without predicates.
#pragma once

#include "TuneSpace.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tle::bench {

/// The winner of one tuned size of a tuning run.
struct TunedSize {
  std::vector<std::pair<std::string, int64_t>> sizes; ///< every size name of the spec with its value
  Candidate config;                                   ///< the fastest correct configuration
  double medianMs = 0;                                ///< its median time
  std::string caseName;                               ///< e.g. "M=64,N=4096"
  /// What makes two winners the same variant (empty: the config's id); tle-bench adds the values
  /// of the heuristics it computes per size, so that sizes needing other values stay apart.
  std::string key;
  std::string variantKey() const { return key.empty() ? config.id() : key; }
};

/// One entry of a dispatch table: launch `config` when every predicate of `when` holds (and no
/// earlier entry's did). `module` indexes the table's distinct configurations.
struct DispatchVariant {
  Candidate config;
  size_t module = 0;
  std::vector<std::string> when; ///< tle-link predicates on the launcher's arguments, e.g. "M <= 64"
  std::string covers;            ///< the range in words, e.g. "8 < M <= 64" or "M > 1024"
  std::string why;               ///< e.g. "fastest at M=16 (0.0042 ms), M=64 (0.0051 ms)"
  std::vector<size_t> tuned;     ///< the tuned sizes (indices into shapeDispatch's input) it won
  /// NAME=VALUE of the @triton.heuristics tle-bench computed for its module (those reading a
  /// runtime parameter; tle-bench --tune's dispatch fills them)
  std::vector<std::string> heuristics;
};

/// The dispatch table of a run: one bucket per tuned value of each dispatch dimension (a size
/// with the bucket's value or below it and above the previous tuned value), in the order
/// tle-link tries them: dimensions nested in the given order (the first outermost), values
/// ascending; a bucket's predicates are `PARAM <= VALUE` for every dimension but where the value
/// is the largest tuned one (so the last bucket has none and catches every larger shape). A
/// bucket whose next bucket along the last dimension has the same configuration is merged into
/// it. `dims` are (size name, launcher parameter) pairs. Without dimensions the table is the one
/// configuration that wins the most sizes. Throws BenchError when the tuned sizes do not form a
/// full grid over `dims`, or when a size not in `dims` has two values (a dispatcher cannot tell
/// them apart).
std::vector<DispatchVariant> shapeDispatch(const std::vector<TunedSize> &tuned,
                                           const std::vector<std::pair<std::string, std::string>> &dims);

/// The tuned sizes of a `tle-bench --tune --json` document of a launch spec (each case's "sizes"
/// and "winner"); cases without a winner are skipped. Throws BenchError naming `path` when the
/// document is not such a document.
std::vector<TunedSize> tunedSizesOf(const nlohmann::ordered_json &doc, const std::string &path);

} // namespace tle::bench
