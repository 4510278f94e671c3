// Timing statistics and the outputs of tle-bench: the terminal table and the markdown summary.
#pragma once

#include "Suite.h"

#include <string>
#include <vector>

namespace tle::bench {

/// Order statistics of repeated timings, milliseconds.
struct Stats {
  size_t n = 0;
  double median = 0, min = 0, max = 0, mean = 0, p10 = 0, p90 = 0;
};

/// Stats of `ms` (linear interpolation between order statistics); all zero when empty.
Stats computeStats(std::vector<double> ms);
/// {"n", "median_ms", "min_ms", "max_ms", "mean_ms", "p10_ms", "p90_ms"}.
ojson statsJson(const Stats &s);

/// The header line of the terminal table.
std::string tableHeader();
/// One terminal-table line for a case result (the "cases" element of tle-bench's JSON).
std::string tableRow(const ojson &caseResult);
/// The markdown summary of tle-bench's whole JSON document (one table, ratios to the copy).
std::string markdownSummary(const ojson &doc);

} // namespace tle::bench
