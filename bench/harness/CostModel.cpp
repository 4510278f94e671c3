// Hard resource limits, occupancy and the roofline estimate of tle-bench --tune (see CostModel.h, docs/bench.md).
#include "CostModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <functional>
#include <map>
#include <numeric>
#include <queue>

namespace tle::bench {

DeviceModel DeviceModel::forArch(const std::string &arch, int smCount) {
  DeviceModel d;
  d.arch = arch;
  if (arch.rfind("sm_80", 0) == 0 || arch.rfind("sm_86", 0) == 0 || arch.rfind("sm_89", 0) == 0) {
    // A100: 164 KiB shared per SM (163 KiB per block), 1555-2039 GB/s, 312 TFLOP/s fp16 dense.
    d.smCount = 108;
    d.smemPerBlockOptin = 166912;
    d.smemPerSM = 167936;
    d.dramBytesPerS = 2.0e12;
    d.l2BytesPerS = 5.0e12;
    d.tensorFlopsPerS = 312e12;
    d.fmaFlopsPerS = 19.5e12;
    d.clockHz = 1.41e9;
  }
  if (smCount > 0) {
    // Peak rates scale with the SM count (a partitioned or smaller part of the same architecture).
    double f = double(smCount) / double(d.smCount);
    d.tensorFlopsPerS *= f;
    d.fmaFlopsPerS *= f;
    d.l2BytesPerS *= f;
    d.smCount = smCount;
  }
  return d;
}

Estimate estimateCandidate(const DeviceModel &dev, const ResourceUsage &res, const Workload &work,
                           const ModelOptions &opt) {
  Estimate e;
  auto reject = [&](std::string why) {
    e.valid = false;
    e.reason = std::move(why);
    return e;
  };
  // --- Hard limits.
  if (res.threads < 1 || res.threads > dev.maxThreadsPerBlock)
    return reject(fmt::format("block of {} threads exceeds {}", res.threads, dev.maxThreadsPerBlock));
  if (res.registers > dev.maxRegsPerThread)
    return reject(fmt::format("{} registers per thread exceed {}", res.registers, dev.maxRegsPerThread));
  if (res.registers > 0 && int64_t(res.registers) * res.threads > dev.regsPerSM)
    return reject(fmt::format("{} registers x {} threads = {} exceed the SM's {}", res.registers, res.threads,
                              int64_t(res.registers) * res.threads, dev.regsPerSM));
  if (res.sharedBytes > dev.smemPerBlockOptin)
    return reject(fmt::format("{} bytes of shared memory per CTA exceed the opt-in limit of {}", res.sharedBytes,
                              dev.smemPerBlockOptin));
  if (res.localBytes > opt.maxLocalBytes)
    return reject(fmt::format("{} bytes of local memory (spills) per thread exceed {}", res.localBytes,
                              opt.maxLocalBytes));
  if (work.ctas < 1)
    return reject("empty grid");

  // --- Occupancy: resident CTAs per SM.
  const int warps = (res.threads + 31) / 32;
  int ctas = dev.maxCTAsPerSM;
  e.limitedBy = "ctas";
  auto limit = [&](int n, const char *by) {
    if (n < ctas) {
      ctas = n;
      e.limitedBy = by;
    }
  };
  limit(dev.maxThreadsPerSM / (warps * 32), "threads");
  if (res.registers > 0) {
    int regsPerWarp = (res.registers * 32 + dev.regAllocUnit - 1) / dev.regAllocUnit * dev.regAllocUnit;
    limit((dev.regsPerSM / regsPerWarp) / warps, "registers");
  }
  if (res.sharedBytes > 0)
    limit(int(dev.smemPerSM / (res.sharedBytes + dev.smemReservedPerCTA)), "shared");
  if (ctas < 1)
    return reject(fmt::format("no CTA fits on an SM (limited by {})", e.limitedBy));
  e.ctasPerSM = ctas;
  e.occupancy = double(ctas * warps * 32) / dev.maxThreadsPerSM;

  // --- The grid's schedule over the slots.
  const int64_t slots = int64_t(ctas) * dev.smCount;
  e.waves = (work.ctas + slots - 1) / slots;
  const GridSchedule sched = scheduleGrid(work.ctas, work.items, slots);
  e.maxItemsPerProgram = sched.maxItems;
  // Items done per slot-step over the slots in use; a grid smaller than the SM count also leaves
  // whole SMs idle. With one item per program this is ctas / (waves x slots).
  e.waveEfficiency = double(sched.totalItems) / (double(sched.makespan) * double(std::min(work.ctas, slots))) *
                     double(std::min<int64_t>(work.ctas, dev.smCount)) / dev.smCount;
  const int resident = int(std::min<int64_t>(ctas, (work.ctas + dev.smCount - 1) / dev.smCount));

  // --- Compute term.
  const double tileEff = std::clamp(work.tileEfficiency, 1e-6, 1.0);
  if (work.flops > 0) {
    double peak = work.tensorCores ? dev.tensorFlopsPerS : dev.fmaFlopsPerS;
    double eff = tileEff;
    if (work.tensorCores) {
      // Warpgroup MMA needs whole warpgroups (4 warps); otherwise mma.sync at about 60 %.
      if (dev.arch.rfind("sm_90", 0) == 0 && work.numWarps % 4 != 0)
        eff *= 0.6;
      // Operand pipeline: one stage exposes every load; two hide most of it.
      double pipe = work.numStages <= 1 ? 0.45 : work.numStages == 2 ? 0.8 : 1.0;
      // Other resident CTAs hide latency a single pipeline cannot.
      pipe = std::min(1.0, pipe + 0.15 * (resident - 1));
      eff *= pipe;
      // Shared-memory bandwidth the operands need per clock vs what an SM delivers.
      if (work.tileM > 0 && work.tileN > 0) {
        double flopsPerClk = dev.tensorFlopsPerS / dev.smCount / dev.clockHz;
        double need = flopsPerClk * double(work.tileM + work.tileN) / double(work.tileM * work.tileN);
        eff *= std::min(1.0, dev.smemBytesPerClkPerSM / need);
        // Each K iteration pays a fixed overhead; the MMA work of the resident CTAs covers it.
        if (work.tileK > 0) {
          double mmaClk = 2.0 * double(work.tileM * work.tileN * work.tileK) / flopsPerClk * resident;
          eff *= mmaClk / (mmaClk + dev.kStepOverheadClk);
        }
      }
    }
    e.computeS = work.flops / (peak * eff) / e.waveEfficiency;
  }

  // --- Memory term: bandwidth, derated when too few loads are in flight. `r` CTAs resident per
  // SM hide latency by Little's law (inflightBytes per CTA against bandwidth x latency per SM) or,
  // without inflightBytes, by warps (about 32 resident warps per SM saturate HBM on streaming
  // kernels); cp.async pipelines keep loads in flight independently of occupancy.
  auto hiding = [&](int64_t r) {
    if (work.tensorCores && work.numStages >= 2)
      return 1.0;
    if (work.inflightBytes > 0)
      return std::min(1.0, double(r) * work.inflightBytes / (dev.dramBytesPerS * dev.memLatencyS / dev.smCount));
    return std::min(1.0, 0.3 + 0.7 * double(r * warps) / 32.0);
  };
  // Each step moves the bytes of the items running in it; with fewer programs running (a tail, a
  // persistent grid smaller than the machine) fewer SMs are busy and fewer CTAs per SM hide
  // latency, so the step takes longer per item, but not longer than a full step.
  const double l2 = work.l2Bytes > 0 ? work.l2Bytes : work.dramBytes;
  const double itemS = std::max(work.dramBytes / dev.dramBytesPerS, l2 / dev.l2BytesPerS) /
                       double(std::max<int64_t>(sched.totalItems, 1)) / tileEff;
  for (const auto &[steps, running] : sched.segments) {
    const int64_t perSM = std::min<int64_t>(ctas, (running + dev.smCount - 1) / dev.smCount);
    const double busySMs = double(std::min<int64_t>(running, dev.smCount)) / dev.smCount;
    e.memoryS += double(steps) * double(running) * itemS / (busySMs * hiding(perSM));
  }

  double extra = std::clamp(work.extraEfficiency, 1e-6, 1.0);
  double main = std::max(e.computeS, e.memoryS) / extra;
  if (res.localBytes > 0)
    main *= 1.0 + opt.spillPenaltyPer256B * double(res.localBytes) / 256.0;
  // A CTA start is hidden when the other CTAs resident on its SM keep the bottleneck busy: enough
  // loads in flight, or (a pipelined dot kernel) MMA work of their own.
  const double cover = resident >= 2 ? hiding(resident - 1) : 0.0;
  e.startupS = double(e.waves) * dev.ctaStartS * (1.0 - cover);
  // The hardware rebalances between programs, not within one: the longer the longest program,
  // the more of the SMs' throughput spread shows.
  e.imbalanceS = dev.smThroughputSpread * main * double(sched.maxItems) / double(std::max<int64_t>(sched.makespan, 1));
  e.seconds = main + e.startupS + e.imbalanceS;
  return e;
}

GridSchedule scheduleGrid(int64_t programs, int64_t items, int64_t slots) {
  GridSchedule g;
  if (programs < 1 || slots < 1)
    return g;
  const int64_t total = items > 0 ? items : programs;
  g.totalItems = total;
  // Program p takes ceil((items - p) / programs) items: the first `extra` programs one more.
  const int64_t base = items > 0 ? total / programs : 1, extra = items > 0 ? total % programs : 0;
  g.maxItems = base + (extra > 0 ? 1 : 0);
  auto itemsOf = [&](int64_t p) { return base + (p < extra ? 1 : 0); };
  if (programs > (int64_t(1) << 18)) {
    // Full rounds of equal programs and one partial round.
    const int64_t rounds = programs / slots, rest = programs % slots;
    if (rounds > 0)
      g.segments.push_back({rounds * g.maxItems, slots});
    if (rest > 0)
      g.segments.push_back({g.maxItems, rest});
    g.makespan = (rounds + (rest > 0 ? 1 : 0)) * g.maxItems;
    return g;
  }
  // Dispatch in order to the earliest free slot; record where the running count changes.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> freeAt;
  for (int64_t s = 0; s < std::min(slots, programs); ++s)
    freeAt.push(0);
  std::map<int64_t, int64_t> delta;
  for (int64_t p = 0; p < programs; ++p) {
    const int64_t start = freeAt.top(), end = start + itemsOf(p);
    freeAt.pop();
    freeAt.push(end);
    if (end > start) {
      ++delta[start];
      --delta[end];
    }
    g.makespan = std::max(g.makespan, end);
  }
  int64_t running = 0;
  for (auto it = delta.begin(); it != delta.end(); ++it) {
    running += it->second;
    auto next = std::next(it);
    if (next == delta.end() || running == 0)
      continue;
    if (!g.segments.empty() && g.segments.back().second == running)
      g.segments.back().first += next->first - it->first; // programs ended and as many started
    else
      g.segments.push_back({next->first - it->first, running});
  }
  return g;
}

std::vector<size_t> topK(const std::vector<Estimate> &estimates, size_t k) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < estimates.size(); ++i)
    if (estimates[i].valid)
      idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return estimates[a].seconds < estimates[b].seconds; });
  if (idx.size() > k)
    idx.resize(k);
  return idx;
}

std::string structuralClass(int numWarps, const Estimate &e) {
  return fmt::format("w{} {}", numWarps, e.waves > 1 ? "waves" : "one wave");
}

std::vector<size_t> selectForTiming(const std::vector<Estimate> &estimates, const std::vector<std::string> &classes,
                                    const SelectionOptions &opt) {
  if (classes.size() != estimates.size())
    throw std::invalid_argument("selectForTiming: one class per estimate");
  const std::vector<size_t> order = topK(estimates, estimates.size());
  std::vector<size_t> picked;
  if (order.empty() || opt.k == 0)
    return picked;
  // The best of each class, classes in the order of their best estimate.
  const size_t classBudget = size_t(std::floor(double(opt.k) * std::clamp(opt.classShare, 0.0, 1.0)));
  const double limit = estimates[order[0]].seconds * std::max(opt.classSlack, 1.0);
  std::vector<bool> taken(estimates.size(), false);
  std::vector<std::string> seen;
  for (size_t i : order) {
    if (picked.size() >= classBudget)
      break;
    if (std::find(seen.begin(), seen.end(), classes[i]) != seen.end())
      continue;
    seen.push_back(classes[i]);
    if (estimates[i].seconds <= limit) {
      picked.push_back(i);
      taken[i] = true;
    }
  }
  // The rest of the budget in the model's order.
  for (size_t i : order) {
    if (picked.size() >= opt.k)
      break;
    if (!taken[i]) {
      picked.push_back(i);
      taken[i] = true;
    }
  }
  std::vector<size_t> rank(estimates.size(), 0);
  for (size_t r = 0; r < order.size(); ++r)
    rank[order[r]] = r;
  std::sort(picked.begin(), picked.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
  return picked;
}

std::vector<size_t> refineForTiming(const std::vector<Estimate> &estimates, const std::vector<std::string> &classes,
                                    const std::string &cls, const std::vector<size_t> &timed,
                                    const SelectionOptions &opt) {
  if (classes.size() != estimates.size())
    throw std::invalid_argument("refineForTiming: one class per estimate");
  std::vector<size_t> more;
  for (size_t i : topK(estimates, estimates.size())) {
    if (more.size() >= opt.refine)
      break;
    if (classes[i] == cls && std::find(timed.begin(), timed.end(), i) == timed.end())
      more.push_back(i);
  }
  return more;
}

} // namespace tle::bench
