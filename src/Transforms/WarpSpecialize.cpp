// warp-specialize: worker warps and the register ceiling of a kernel's warp partitions (see
// WarpSpecialize.h).
#include "tle/Transforms/WarpSpecialize.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/RegisterEstimate.h"

#include <algorithm>

namespace tle::transforms {

namespace {

/// The producer's register budget after setmaxnreg.dec: it computes a few scalars.
constexpr int kProducerRegisters = 40;
/// The consumers' budget never exceeds this (leaves ptxas headroom below the 255 limit).
constexpr int kMaxConsumerRegisters = 240;

/// Blocks per SM a specialised kernel is compiled for: two only where the shared memory allows it
/// and the consumers' widest wgmma still fits in 65536 / (2 x threads) registers. (ptxas compiles
/// the code after a setmaxnreg.inc within the raised count, but two blocks share the register
/// file, so each block's partitions trade registers within its half of it.)
int blocksPerSM(int64_t sharedBytes, int threads, int wgmmaRegisters) {
  int64_t perBlock = std::max<int64_t>(sharedBytes, 0) + 1024; // 228 KiB per SM, 1 KiB per block reserved
  int blocks = static_cast<int>(std::clamp<int64_t>(228 * 1024 / perBlock, 1, 2));
  blocks = std::min(blocks, 2048 / threads);
  if (blocks == 2 && 65536 / (2 * threads) / 8 * 8 < wgmmaRegisters + kWgmmaHeadroom)
    blocks = 1;
  return blocks;
}

/// The register budgets of the pipeline pass's producer/consumer split (f.producerWarps set,
/// no warp_specialize op): the block's registers are fixed at launch (maxnreg per thread); the
/// producer gives most of its share back and the consumers take it (setmaxnreg.inc: ptxas compiles
/// the consumers' code within their raised count).
void budgetProducerSplit(ir::Function &f, WarpSpecialization &out) {
  int threads = 32 * (f.numWarps + f.producerWarps);
  // The bytes after the kernel's own buffers: the pipeline area and the scratch (allocate-shared).
  int blocks = blocksPerSM(f.sharedBytes - f.pipelineOffset, threads, wgmmaAccumulatorRegisters(f));
  int maxRegs = static_cast<int>(registerCeiling(blocks * (f.numWarps + f.producerWarps))) / 8 * 8;
  int consumerRegs = (maxRegs * threads - kProducerRegisters * 32 * f.producerWarps) / (32 * f.numWarps) / 8 * 8;
  consumerRegs = std::min(consumerRegs, kMaxConsumerRegisters);
  f.maxRegisters = out.maxRegisters = maxRegs;
  f.producerRegisters = kProducerRegisters;
  f.consumerRegisters = consumerRegs > maxRegs ? consumerRegs : 0; // setmaxnreg.inc must not lower the count
  out.workerWarps = f.producerWarps;
}

/// Whether the register budgets of warp_specialize `ws` fit a block of `maxRegisters` per
/// thread (> 0): the partitions' budgets times their threads within the block's registers, so
/// that every setmaxnreg.inc can be granted.
bool budgetsFit(const ir::Op &ws, int numWarps, int maxRegisters) {
  if (maxRegisters <= 0)
    return false;
  const std::vector<int64_t> &warps = ws.partitionWarps(), &budgets = ws.partitionRegisters();
  int64_t used = budgets[0] * numWarps, total = int64_t(maxRegisters) * numWarps;
  for (size_t i = 0; i < warps.size() && i + 1 < budgets.size(); ++i) {
    used += budgets[i + 1] * warps[i];
    total += int64_t(maxRegisters) * warps[i];
  }
  return used <= total;
}

} // namespace

WarpSpecialization warpSpecialize(ir::Function &f) {
  WarpSpecialization out;
  f.consumerRegisters = f.producerRegisters = 0;
  if (producerConsumerSplit(f)) {
    budgetProducerSplit(f, out);
    return out;
  }
  for (auto &op : f.body.ops) {
    if (op->kind != ir::OpKind::WarpSpecialize)
      continue;
    for (int64_t w : op->partitionWarps())
      out.workerWarps += static_cast<int>(w);
    if (!op->partitionRegisters().empty())
      out.maxRegisters = budgetsFit(*op, f.numWarps, f.maxRegisters)
                             ? f.maxRegisters
                             : static_cast<int>(registerCeiling(f.numWarps + out.workerWarps) / 8 * 8);
    f.producerWarps = out.workerWarps;
    f.maxRegisters = out.maxRegisters;
    break;
  }
  return out;
}

} // namespace tle::transforms
