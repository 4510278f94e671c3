// Timing statistics, terminal table and markdown summary of tle-bench (see Report.h).
#include "Report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tle::bench {

Stats computeStats(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty())
    return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    double pos = f * double(v.size() - 1);
    size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
  };
  s.median = q(0.5);
  s.p10 = q(0.1);
  s.p90 = q(0.9);
  s.min = v.front();
  s.max = v.back();
  for (double x : v)
    s.mean += x;
  s.mean /= double(v.size());
  return s;
}

ojson statsJson(const Stats &s) {
  return {{"n", s.n},          {"median_ms", s.median}, {"min_ms", s.min}, {"max_ms", s.max},
          {"mean_ms", s.mean}, {"p10_ms", s.p10},       {"p90_ms", s.p90}};
}

namespace {

std::string num(const ojson &j, const char *key, const char *spec) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number())
    return "-";
  return fmt::format(fmt::runtime(spec), j.at(key).get<double>());
}

std::string checkText(const ojson &c) {
  if (c.contains("error"))
    return "ERROR";
  if (!c.contains("correct"))
    return "-";
  return c.at("correct").get<bool>() ? "ok" : "WRONG";
}

std::string kernelRegs(const ojson &c) {
  std::string out;
  if (!c.contains("kernels"))
    return "-";
  for (const ojson &k : c.at("kernels")) {
    if (!out.empty())
      out += "/";
    if (k.contains("registers"))
      out += fmt::format("{}", k.at("registers").get<int>());
    else
      out += "?";
    if (k.contains("local_bytes") && k.at("local_bytes").get<int>() > 0)
      out += fmt::format("+{}B spill", k.at("local_bytes").get<int>());
  }
  return out;
}

} // namespace

std::string tableHeader() {
  return fmt::format("{:<34} {:>9} {:>19} {:>8} {:>8} {:>7} {:>12} {:>6}", "case", "median ms", "min..max ms",
                     "GB/s", "copyGB/s", "of copy", "regs", "check");
}

std::string tableRow(const ojson &c) {
  const ojson empty = ojson::object();
  const ojson &t = c.contains("tle") ? c.at("tle") : empty;
  const ojson &cp = c.contains("copy") ? c.at("copy") : empty;
  std::string range = t.contains("min_ms") ? fmt::format("{:.4f}..{:.4f}", t.at("min_ms").get<double>(),
                                                          t.at("max_ms").get<double>())
                                           : "-";
  return fmt::format("{:<34} {:>9} {:>19} {:>8} {:>8} {:>7} {:>12} {:>6}", c.value("name", "?"),
                     num(t, "median_ms", "{:.4f}"), range, num(t, "gbps", "{:.0f}"), num(cp, "gbps", "{:.0f}"),
                     num(c, "fraction_of_copy", "{:.3f}"), kernelRegs(c), checkText(c));
}

std::string markdownSummary(const ojson &doc) {
  std::string md;
  const ojson &dev = doc.at("device");
  md += fmt::format("# tle-bench: suite `{}` on {}\n\n", doc.value("suite", "?"), dev.value("name", "?"));
  const ojson &m = doc.at("method");
  md += fmt::format("- {} timed repetitions after {} warm-up rounds (per case unless the suite says "
                    "otherwise), medians; the L2 is flushed (memset of {} MiB) before every repetition; "
                    "CUDA events around each repetition; variants interleaved round by round.\n",
                    m.value("reps", 0), m.value("warmup", 0), m.value("l2_flush_bytes", 0) >> 20);
  md += "- GB/s = bytes moved (inputs read once + outputs written once) / median time; *of copy* = that "
        "over a `cuMemcpyDtoDAsync` of half those bytes (so the same traffic) timed the same way in the "
        "same run.\n\n";
  md += "| case | median ms | min..max ms | GB/s | copy GB/s | of copy | regs (+spill) | check |\n";
  md += "|---|---:|---:|---:|---:|---:|---|---|\n";
  for (const ojson &c : doc.at("cases")) {
    const ojson empty = ojson::object();
    const ojson &t = c.contains("tle") ? c.at("tle") : empty;
    const ojson &cp = c.contains("copy") ? c.at("copy") : empty;
    std::string range = t.contains("min_ms") ? fmt::format("{:.4f}..{:.4f}", t.at("min_ms").get<double>(),
                                                            t.at("max_ms").get<double>())
                                             : "-";
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", c.value("label", c.value("name", "?")),
                      num(t, "median_ms", "{:.4f}"), range, num(t, "gbps", "{:.0f}"), num(cp, "gbps", "{:.0f}"),
                      num(c, "fraction_of_copy", "{:.3f}"), kernelRegs(c), checkText(c));
  }
  double logSum = 0;
  int n = 0;
  for (const ojson &c : doc.at("cases"))
    if (c.contains("fraction_of_copy")) {
      logSum += std::log(c.at("fraction_of_copy").get<double>());
      ++n;
    }
  if (n)
    md += fmt::format("\nGeometric mean of the fraction of copy bandwidth over {} cases: {:.3f}\n", n,
                      std::exp(logSum / n));
  return md;
}

} // namespace tle::bench
