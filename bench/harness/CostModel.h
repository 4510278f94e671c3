// The analytic cost model of tle-bench --tune: hard resource limits, occupancy, waves and a roofline estimate used to rank candidates before any GPU run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tle::bench {

/// The limits and peak rates of one GPU, per architecture (CUDA C Programming Guide, "Compute
/// Capabilities" table: registers, threads, CTAs and shared memory per SM; the opt-in shared
/// memory per block comes from the device when there is one).
struct DeviceModel {
  std::string arch = "sm_90a";
  int smCount = 132;
  int64_t smemPerBlockOptin = 232448;  ///< bytes a CTA may opt in to (227 KiB on sm_90)
  int64_t smemPerSM = 233472;          ///< bytes per SM (228 KiB on sm_90)
  int64_t smemReservedPerCTA = 1024;   ///< the driver's per-CTA reservation (sm_80 and later)
  int regsPerSM = 65536;
  int regAllocUnit = 256;              ///< registers are allotted per warp in units of 256
  int maxRegsPerThread = 255;
  int maxThreadsPerSM = 2048;
  int maxThreadsPerBlock = 1024;
  int maxCTAsPerSM = 32;
  double dramBytesPerS = 4.8e12;       ///< H200 HBM3e
  double l2BytesPerS = 12e12;          ///< L2 to SM, aggregate
  double tensorFlopsPerS = 989e12;     ///< dense fp16/bf16 tensor-core peak
  double fmaFlopsPerS = 67e12;         ///< fp32 FMA peak (2 flops per FMA)
  double smemBytesPerClkPerSM = 128;   ///< shared-memory bandwidth per SM
  double clockHz = 1.98e9;
  double memLatencyS = 1.0e-6;         ///< loaded DRAM latency: bytes in flight needed = bandwidth x latency
  double kStepOverheadClk = 120;       ///< fixed cost of one K iteration of a dot loop (barrier, waits, address math)
  double ctaStartS = 2e-6;             ///< start of a CTA (dispatch, prologue, first loads) when nothing else on its SM overlaps it
  /// Relative spread of the throughput the SMs of one GPU see (position on the die and in the
  /// memory system, clocks): programs fixed to SMs at launch finish as late as the slowest one,
  /// while the hardware scheduler gives the next program to whichever slot frees first. A round
  /// figure, not fitted: the ranking is the same for 0.05 to 0.2 on the recorded tunings.
  double smThroughputSpread = 0.1;

  /// The model for `arch` ("sm_80", "sm_90a", ...) with `smCount` SMs (0: the architecture's
  /// usual count: 108 for sm_80, 132 for sm_90). Unknown architectures get sm_90's numbers.
  static DeviceModel forArch(const std::string &arch, int smCount = 0);
};

/// What one compiled candidate needs per CTA, from its cubin (Cubin.h) and metadata.
struct ResourceUsage {
  int threads = 128;          ///< 32 x num_warps
  int registers = -1;         ///< per thread; -1 when unknown (PTX only): the register limit is not checked
  int64_t sharedBytes = 0;    ///< dynamic + static shared memory per CTA
  int64_t localBytes = 0;     ///< local memory (stack frame: spills) per thread
};

/// What the candidate computes for the case being tuned, evaluated from the tune spec's "model".
struct Workload {
  int64_t ctas = 1;           ///< grid size (x * y * z)
  double flops = 0;           ///< useful floating-point operations (0: memory-bound only)
  bool tensorCores = false;   ///< flops run on tensor cores (a tl.dot kernel)
  double dramBytes = 0;       ///< bytes to and from DRAM
  double l2Bytes = 0;         ///< bytes between L2 and the SMs (0: same as dramBytes)
  double tileEfficiency = 1;  ///< useful / computed elements over the tiled dimensions (padding)
  double extraEfficiency = 1; ///< the spec's "efficiency" factor in (0, 1] (e.g. load imbalance)
  int numWarps = 4;
  int numStages = 3;
  double inflightBytes = 0;   ///< bytes one CTA loads per step (e.g. a row tile); 0: estimate latency hiding from warps
  int64_t tileM = 0, tileN = 0; ///< the output tile of a tl.dot kernel (0: not a dot kernel)
  int64_t tileK = 0;          ///< its K step (0: unknown; the per-iteration overhead is then not modelled)
  /// Work items a grid-stride loop deals out over the programs (program p takes items p, p + ctas,
  /// p + 2 ctas, ...), e.g. the rows of a persistent softmax; 0: every program is one item.
  int64_t items = 0;
};

/// The order in which the hardware runs a 1-D grid: programs are dispatched in index order, each
/// to the first slot (resident CTA position) that frees, and all running programs advance one item
/// per step. The memory term charges every step by how many programs run in it.
struct GridSchedule {
  /// Consecutive steps with the same number of running programs: {steps, running}.
  std::vector<std::pair<int64_t, int64_t>> segments;
  int64_t makespan = 0;       ///< steps until the last program ends
  int64_t maxItems = 0;       ///< items of the longest program
  int64_t totalItems = 0;     ///< items over all programs
};

/// The schedule of `programs` programs over `slots` slots (resident CTAs per SM x SMs) when they
/// share `items` work items round-robin (0: one each). Exact up to 2^18 programs; larger grids
/// are treated as full rounds of equal programs (their tail is under 1/64 of the time).
GridSchedule scheduleGrid(int64_t programs, int64_t items, int64_t slots);

/// Options of the model.
struct ModelOptions {
  int64_t maxLocalBytes = 512;  ///< reject candidates that spill more than this per thread
  double spillPenaltyPer256B = 1.0; ///< estimated time x (1 + this x local/256) for smaller spills
};

/// The verdict and estimate for one candidate.
struct Estimate {
  bool valid = true;
  std::string reason;         ///< why it is rejected (a resource limit), empty when valid
  int ctasPerSM = 0;          ///< resident CTAs per SM (occupancy limit)
  std::string limitedBy;      ///< what bounds ctasPerSM: "threads", "registers", "shared", "ctas"
  double occupancy = 0;       ///< resident warps / the SM's maximum
  int64_t waves = 0;          ///< ceil(ctas / (ctasPerSM x SMs)): program starts per slot
  /// items / (makespan x slots used), x the busy fraction of the SMs when the grid is smaller than
  /// the SM count; with one item per program: ctas / (waves x ctasPerSM x SMs)
  double waveEfficiency = 0;
  double computeS = 0, memoryS = 0; ///< roofline terms over the schedule, seconds
  double startupS = 0;        ///< CTA starts that the other resident CTAs do not overlap
  double imbalanceS = 0;      ///< smThroughputSpread x the longest program's share of the time
  int64_t maxItemsPerProgram = 1; ///< items of the longest program (GridSchedule::maxItems)
  double seconds = 0;         ///< the estimate the ranking sorts by (smaller is better)
};

/// Applies the hard limits (block size <= maxThreadsPerBlock; registers x threads <= regsPerSM
/// and registers <= maxRegsPerThread; shared memory <= smemPerBlockOptin; local memory <=
/// maxLocalBytes) and, for a valid candidate, computes occupancy, the grid's schedule and the
/// estimate (docs/bench.md, "The cost model"):
///   compute = flops / (peak x tile efficiency x pipeline efficiency x shared-memory efficiency)
///             / wave efficiency
///   memory  = sum over the schedule's steps of the step's bytes / (bandwidth x the busy SMs'
///             fraction x latency hiding of the CTAs resident per SM in that step) / tile efficiency
///   latency hiding(r) = min(1, r x inflightBytes / (DRAM bandwidth x latency / SMs)),
///                       or min(1, 0.3 + 0.7 x r x warps / 32) without inflightBytes
///   startup = waves x ctaStartS x (1 - latency hiding(resident - 1))   (0 overlap with one resident)
///   imbalance = smThroughputSpread x max(compute, memory) x longest program / makespan
///   seconds = max(compute, memory) / extra efficiency x spill penalty + startup + imbalance
Estimate estimateCandidate(const DeviceModel &dev, const ResourceUsage &res, const Workload &work,
                           const ModelOptions &opt = {});

/// Indices of the `k` valid estimates with the smallest `seconds` (ties: the lower index first),
/// best first. Invalid estimates are never chosen.
std::vector<size_t> topK(const std::vector<Estimate> &estimates, size_t k);

/// The structural class of a candidate for selectForTiming(): its warp count and whether its grid
/// fits in one wave (every program resident at once: a persistent grid) or runs in several
/// ("w4 one wave", "w4 waves"). Candidates of one class differ in tile sizes and counts, which
/// the model prices from bytes and schedules; across classes they differ in what it prices least
/// well (cross-warp reductions and per-thread work, persistent against dynamic scheduling).
std::string structuralClass(int numWarps, const Estimate &e);

/// How selectForTiming() spends the timing budget.
struct SelectionOptions {
  size_t k = 12;              ///< candidates to time
  double classShare = 0.5;    ///< at most this fraction of k goes to the best of each class
  double classSlack = 1.5;    ///< a class is covered only if its best estimate is within this factor of the best
  size_t refine = 3;          ///< second round: this many more of the first round's fastest class (refineForTiming)
};

/// The candidates to time, best estimate first: first the model's best of each class (classes in
/// the order of their best estimate; at most classShare x k of them, and only classes whose best
/// estimate is within classSlack of the overall best), then the rest of the budget in the
/// model's order. A term the model gets wrong for a whole class (a warp count, persistent grids)
/// then moves that class's candidates down the order but cannot take the class out of the timed
/// set, while most of the budget still follows the model. `classes` has one entry per estimate;
/// invalid estimates are never chosen; returns at most k indices (fewer when fewer are valid).
std::vector<size_t> selectForTiming(const std::vector<Estimate> &estimates, const std::vector<std::string> &classes,
                                    const SelectionOptions &opt);

/// The second round of timing: up to `opt.refine` candidates of class `cls` (the class of the first
/// round's fastest candidate) that `timed` does not hold, in the model's order. The model orders
/// classes less well than it orders candidates within one (tile and program counts), and one
/// candidate of the winning class is often not its best: on the recorded softmax tunings the
/// fastest of the first round's class was 3.7 % behind that class's best (docs/bench.md,
/// "Choosing what to time"). Invalid estimates are never chosen.
std::vector<size_t> refineForTiming(const std::vector<Estimate> &estimates, const std::vector<std::string> &classes,
                                    const std::string &cls, const std::vector<size_t> &timed,
                                    const SelectionOptions &opt);

} // namespace tle::bench
