// Shape dispatch tables from tuned sizes (see ShapeDispatch.h): buckets over the tuned values, merged where the winner repeats.
#include "ShapeDispatch.h"

#include "Expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tle::bench {

namespace {

int64_t sizeValue(const TunedSize &t, const std::string &name) {
  for (const auto &[n, v] : t.sizes)
    if (n == name)
      return v;
  throw BenchError("tuned size " + t.caseName + " has no size '" + name + "'");
}

/// The range of values[from..to] along one dimension in words: "M <= 8", "8 < M <= 64",
/// "M > 1024" (the first bucket has no lower bound, the last no upper one).
std::string rangeText(const std::string &param, const std::vector<int64_t> &values, size_t from, size_t to) {
  const bool lower = from > 0, upper = to + 1 < values.size();
  if (!lower && !upper)
    return "any " + param;
  if (!lower)
    return fmt::format("{} <= {}", param, values[to]);
  if (!upper)
    return fmt::format("{} > {}", param, values[from - 1]);
  return fmt::format("{} < {} <= {}", values[from - 1], param, values[to]);
}

std::string whyText(const std::vector<const TunedSize *> &wins) {
  std::string s = "fastest at ";
  for (size_t i = 0; i < wins.size(); ++i)
    s += fmt::format("{}{} ({:.4f} ms)", i ? ", " : "", wins[i]->caseName, wins[i]->medianMs);
  return s;
}

} // namespace

std::vector<DispatchVariant> shapeDispatch(const std::vector<TunedSize> &tuned,
                                           const std::vector<std::pair<std::string, std::string>> &dims) {
  if (tuned.empty())
    throw BenchError("no tuned size has a winner: nothing to dispatch");
  // Sizes not dispatched on must be the same everywhere: one module serves all shapes.
  for (const auto &[n, v] : tuned[0].sizes) {
    if (std::any_of(dims.begin(), dims.end(), [&](const auto &d) { return d.first == n; }))
      continue;
    for (const TunedSize &t : tuned)
      if (sizeValue(t, n) != v)
        throw BenchError(fmt::format("size '{}' is {} in {} but {} in {}, and the dispatcher does not test it "
                                     "(a constexpr, or not in \"dispatch_on\"): tune one spec per value of {}",
                                     n, v, tuned[0].caseName, sizeValue(t, n), t.caseName, n));
  }
  std::map<std::string, size_t> moduleOf;
  std::vector<Candidate> modules;
  auto moduleIndex = [&](const Candidate &c) {
    auto [it, fresh] = moduleOf.emplace(c.id(), modules.size());
    if (fresh)
      modules.push_back(c);
    return it->second;
  };
  if (dims.empty()) {
    std::map<std::string, std::vector<const TunedSize *>> wins;
    for (const TunedSize &t : tuned)
      wins[t.variantKey()].push_back(&t);
    const TunedSize *best = nullptr;
    size_t most = 0;
    for (const TunedSize &t : tuned)
      if (wins[t.variantKey()].size() > most) {
        most = wins[t.variantKey()].size();
        best = &t;
      }
    DispatchVariant v;
    v.config = best->config;
    v.module = moduleIndex(best->config);
    v.covers = "every shape";
    v.why = whyText(wins[best->variantKey()]);
    for (const TunedSize *t : wins[best->variantKey()])
      v.tuned.push_back(size_t(t - tuned.data()));
    if (most < tuned.size())
      v.why += fmt::format(" (wins {} of {} sizes; no size varies among the kernel's integer arguments)", most,
                           tuned.size());
    return {v};
  }
  // The grid of tuned values, and the tuned size of each cell.
  std::vector<std::vector<int64_t>> values(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    std::set<int64_t> vs;
    for (const TunedSize &t : tuned)
      vs.insert(sizeValue(t, dims[d].first));
    values[d].assign(vs.begin(), vs.end());
  }
  std::map<std::vector<size_t>, const TunedSize *> cell;
  for (const TunedSize &t : tuned) {
    std::vector<size_t> at;
    for (size_t d = 0; d < dims.size(); ++d)
      at.push_back(size_t(std::lower_bound(values[d].begin(), values[d].end(), sizeValue(t, dims[d].first)) -
                          values[d].begin()));
    if (!cell.emplace(at, &t).second)
      throw BenchError(fmt::format("{} and {} are the same shape for the dispatcher", cell[at]->caseName, t.caseName));
  }
  std::vector<std::vector<size_t>> order;
  std::vector<size_t> at(dims.size(), 0);
  for (;;) {
    if (!cell.count(at)) {
      std::string missing;
      for (size_t d = 0; d < dims.size(); ++d)
        missing += fmt::format("{}{}={}", d ? "," : "", dims[d].first, values[d][at[d]]);
      throw BenchError("the tuned sizes do not form a grid over the dispatch sizes: none is " + missing);
    }
    order.push_back(at);
    size_t d = dims.size();
    while (d > 0 && ++at[d - 1] == values[d - 1].size())
      at[--d] = 0;
    if (d == 0)
      break;
  }
  // Merge a bucket into the next one along the last dimension when their winners are the same.
  std::vector<DispatchVariant> out;
  std::vector<const TunedSize *> pending;
  for (size_t i = 0; i < order.size(); ++i) {
    const std::vector<size_t> &c = order[i];
    const TunedSize *t = cell[c];
    pending.push_back(t);
    const size_t last = dims.size() - 1;
    if (c[last] + 1 < values[last].size()) {
      std::vector<size_t> next = c;
      ++next[last];
      if (cell[next]->variantKey() == t->variantKey())
        continue;
    }
    DispatchVariant v;
    v.config = t->config;
    v.module = moduleIndex(t->config);
    size_t first = c[last] + 1 - pending.size();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (c[d] + 1 < values[d].size())
        v.when.push_back(fmt::format("{} <= {}", dims[d].second, values[d][c[d]]));
      std::string r = rangeText(dims[d].second, values[d], d == last ? first : c[d], c[d]);
      v.covers += (v.covers.empty() ? "" : ", ") + r;
    }
    v.why = whyText(pending);
    for (const TunedSize *p : pending)
      v.tuned.push_back(size_t(p - tuned.data()));
    pending.clear();
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<TunedSize> tunedSizesOf(const nlohmann::ordered_json &doc, const std::string &path) {
  if (!doc.is_object() || !doc.contains("cases") || !doc.at("cases").is_array())
    throw BenchError(path + ": not a tle-bench --tune results document (no \"cases\" list)");
  std::vector<TunedSize> out;
  for (const auto &c : doc.at("cases")) {
    if (!c.contains("winner"))
      continue;
    if (!c.contains("sizes") || !c.at("sizes").is_object())
      throw BenchError(path + ": case '" + c.value("case", "?") +
                       "' has no \"sizes\" (results of a launch spec have them)");
    TunedSize t;
    t.caseName = c.value("case", "");
    for (const auto &[n, v] : c.at("sizes").items()) {
      if (!v.is_number_integer())
        throw BenchError(path + ": case '" + t.caseName + "': size " + n + " is not an integer");
      t.sizes.emplace_back(n, v.get<int64_t>());
    }
    const auto &w = c.at("winner");
    if (!w.contains("config"))
      throw BenchError(path + ": case '" + t.caseName + "': the winner has no \"config\"");
    t.config = Candidate::fromJson(w.at("config"));
    t.medianMs = w.value("median_ms", 0.0);
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace tle::bench
