// tle-tune-replay: replays a recorded exhaustive `tle-bench --tune` run through today's cost model and timed-set selection, without a GPU (docs/bench.md, "Replaying a recorded tuning").
#include "harness/Suite.h"
#include "harness/TuneSelect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace tle::bench;

namespace {

const char *kUsage =
    "Usage: tle-tune-replay SPEC.json RUN.json [--case NAME] [--top-k K] [--class-share F] [--class-slack F]\n"
    "                       [--refine R] [--list N] [--max-gap PCT]\n"
    "Replays RUN.json (the --json of `tle-bench --tune SPEC.json --exhaustive`, or a fixture cut from it)\n"
    "through the cost model and the timed-set selection: prints the exhaustive best, its model rank,\n"
    "the timed set and the gap of its fastest candidate to the exhaustive best.\n"
    "  --case NAME       the recorded case (default: the first)\n"
    "  --top-k K         candidates to time (default 12)\n"
    "  --class-share F   at most F x K of them are the best of a structural class (default 0.5; 0: model order only)\n"
    "  --class-slack F   only classes whose best estimate is within F of the best (default 1.5)\n"
    "  --refine R        then R more of the first round's fastest class (default 3; 0: one round)\n"
    "  --list N          also list the model's first N candidates (default 0)\n"
    "  --max-gap PCT     exit with status 1 when the gap exceeds PCT percent\n"
    "Exit status: 0, 1 (gap over --max-gap), 2 (bad usage or input).\n";

double number(const std::string &opt, const char *text) {
  char *end = nullptr;
  double v = std::strtod(text, &end);
  if (!end || *end || !std::isfinite(v) || v < 0)
    throw BenchError(fmt::format("{}: expected a number >= 0, got '{}'", opt, text));
  return v;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> pos;
  std::string caseName;
  SelectionOptions sel;
  size_t list = 0;
  double maxGap = -1;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&]() -> const char * {
        if (i + 1 >= argc)
          throw BenchError(a + ": missing value");
        return argv[++i];
      };
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--case") {
        caseName = value();
      } else if (a == "--top-k") {
        sel.k = size_t(number(a, value()));
      } else if (a == "--class-share") {
        sel.classShare = number(a, value());
      } else if (a == "--class-slack") {
        sel.classSlack = number(a, value());
      } else if (a == "--refine") {
        sel.refine = size_t(number(a, value()));
      } else if (a == "--list") {
        list = size_t(number(a, value()));
      } else if (a == "--max-gap") {
        maxGap = number(a, value());
      } else if (!a.empty() && a[0] == '-') {
        throw BenchError("unknown option " + a);
      } else {
        pos.push_back(a);
      }
    }
    if (pos.size() != 2)
      throw BenchError("expected SPEC.json and RUN.json");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-tune-replay: %s\n%s", e.what(), kUsage);
    return 2;
  }
  ReplayResult r;
  try {
    Suite spec = loadSuite(pos[0]);
    std::ifstream f(pos[1]);
    if (!f)
      throw BenchError("cannot read " + pos[1]);
    ojson run = ojson::parse(f);
    r = replayTune(spec, run, caseName, sel);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-tune-replay: %s\n", e.what());
    return 2;
  }
  const ReplayCandidate &best = r.candidates[size_t(r.best)];
  std::printf("case %s: %zu candidates, %zu valid, %zu timed (top-k %zu, class share %.2f, %zu in the second round)\n",
              r.caseName.c_str(), r.candidates.size(), r.valid, r.selected, sel.k, sel.classShare, r.refined);
  std::printf("  exhaustive best: %-48s %.4f ms, model rank %d\n", best.id.c_str(), best.medianMs, best.rank);
  std::vector<size_t> timed;
  for (size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].selected)
      timed.push_back(i);
  std::sort(timed.begin(), timed.end(), [&](size_t a, size_t b) { return r.candidates[a].rank < r.candidates[b].rank; });
  std::printf("  timed set (model rank, class, estimate, recorded time, vs best):\n");
  for (size_t i : timed) {
    const ReplayCandidate &c = r.candidates[i];
    std::printf("    %4d  %-48s %-12s %8.4f ms %8.4f ms %+7.2f%%%s\n", c.rank, c.id.c_str(), c.cls.c_str(),
                c.est.seconds * 1e3, c.medianMs, (c.medianMs / best.medianMs - 1) * 100,
                int(i) == r.winner ? "  <- winner" : "");
  }
  if (list > 0) {
    std::vector<size_t> order;
    for (size_t i = 0; i < r.candidates.size(); ++i)
      if (r.candidates[i].rank >= 0)
        order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.candidates[a].rank < r.candidates[b].rank; });
    std::printf("  the model's first %zu:\n", std::min(list, order.size()));
    for (size_t k = 0; k < std::min(list, order.size()); ++k) {
      const ReplayCandidate &c = r.candidates[order[k]];
      std::printf("    %4d  %-48s %-12s %8.4f ms %8.4f ms%s\n", c.rank, c.id.c_str(), c.cls.c_str(), c.est.seconds * 1e3,
                  c.medianMs, c.selected ? "  timed" : "");
    }
  }
  if (r.winner < 0) {
    std::printf("  pruned winner: none of the timed set was measured\n");
    return maxGap >= 0 ? 1 : 0;
  }
  const ReplayCandidate &w = r.candidates[size_t(r.winner)];
  std::printf("  pruned winner: %s %.4f ms (model rank %d): %.2f%% behind the exhaustive best\n", w.id.c_str(),
              w.medianMs, w.rank, r.gapPct);
  return maxGap >= 0 && r.gapPct > maxGap ? 1 : 0;
}
