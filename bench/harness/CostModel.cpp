// Hard resource limits, occupancy and the roofline estimate of tle-bench --tune (see CostModel.h, docs/bench.md).
#include "CostModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <numeric>

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

  // --- Waves over the grid.
  const int64_t slots = int64_t(ctas) * dev.smCount;
  e.waves = (work.ctas + slots - 1) / slots;
  e.waveEfficiency = double(work.ctas) / double(e.waves * slots);
  // A grid of less than one full wave: only min(ctas, SMs) SMs work, each with the CTAs it got.
  const int resident = int(std::min<int64_t>(ctas, (work.ctas + dev.smCount - 1) / dev.smCount));
  if (e.waves == 1)
    e.waveEfficiency = double(std::min<int64_t>(work.ctas, dev.smCount)) / dev.smCount;

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
    e.computeS = work.flops / (peak * eff);
  }

  // --- Memory term: bandwidth, derated when too few warps are resident to keep enough loads in
  // flight (about 32 resident warps per SM saturate HBM on streaming kernels).
  double hiding = std::min(1.0, 0.3 + 0.7 * double(resident * warps) / 32.0);
  if (work.inflightBytes > 0) // Little's law: bandwidth x latency must be in flight on every SM
    hiding = std::min(1.0, double(resident) * work.inflightBytes /
                               (dev.dramBytesPerS * dev.memLatencyS / dev.smCount));
  if (work.tensorCores && work.numStages >= 2)
    hiding = 1.0; // cp.async pipelines keep loads in flight independently of occupancy
  double l2 = work.l2Bytes > 0 ? work.l2Bytes : work.dramBytes;
  e.memoryS = std::max(work.dramBytes / dev.dramBytesPerS, l2 / dev.l2BytesPerS) / (hiding * tileEff);

  double extra = std::clamp(work.extraEfficiency, 1e-6, 1.0);
  e.seconds = std::max(e.computeS, e.memoryS) / (e.waveEfficiency * extra);
  if (res.localBytes > 0)
    e.seconds *= 1.0 + opt.spillPenaltyPer256B * double(res.localBytes) / 256.0;
  e.seconds += double(e.waves) * 2e-6;
  return e;
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

} // namespace tle::bench
