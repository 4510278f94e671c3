// pipeline-fills' producer/consumer split: a warp-specialised kernel's TMA fills moved into a
// producer partition of a warp_specialize op (internal to the pass; see PipelineFills.h).
#pragma once

#include "tle/IR/IR.h"

#include <map>
#include <vector>

namespace tle::transforms {

/// What lowering the fills of a producer/consumer split (transforms::producerConsumerSplit)
/// needs and collects.
struct SplitFills {
  /// The pipeline values and their classes before any fill is rewritten (pipelineValues).
  std::map<const ir::Value *, int> values;
  /// Consumers release a slot once per warpgroup, not once per thread (releasePerWarpgroup).
  bool perWarpgroup = false;
  /// The ops only the producer runs: each fill's wait for its slot's release and its issue
  /// (the `if` of its guards, or the unguarded mbarrier_arrive and tma_load ops).
  std::vector<ir::Op *> producerOps;
};

/// Moves the kernel's top-level ops after its setup (the pipeline protocol's mbarrier_init,
/// tensormap_prefetch, fences and barrier at the start, which the whole CTA runs) into a
/// warp_specialize op: region 0, the default partition of num_warps consumer warps, holds them
/// without `producerOps`; region 1, the producer of f.producerWarps warps, holds `producerOps`
/// and the ops they depend on (scalar computations, and the `for` loops around them with only
/// the iteration values they need; drained loops lose `wgmma_drain`, having no wgmma). The
/// partitions' register budgets are f.consumerRegisters (or f.maxRegisters when 0) and
/// f.producerRegisters, the warp-specialize pass's (none when it has not set them). Throws std::logic_error when a
/// producer op depends on anything but scalar computations in `for` loops (the pipeline pass's
/// producerSlice admits no such kernel).
void partitionProducer(ir::Function &f, const std::vector<ir::Op *> &producerOps);

/// Erases, in `b` and its regions, the computations without effects (elementwise and shape ops,
/// constants, addptr, program ids, pipeline_mbarrier, pipeline_slot, pipeline_value) whose
/// results nothing reads: the addresses, masks and coordinates of the loads pipeline-fills
/// replaced.
void eraseUnreadComputations(ir::Block &b);

} // namespace tle::transforms
