// The batch-reduces pass: independent reductions of one block that each combine across warps
// share one exchange through shared memory (one pair of CTA barriers for all of them).
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Groups the reduces of each block of `f` whose results combine across warps (their layout's
/// warp bits move along the axis, reduceWarpBits) into batches: for each such reduce not in a
/// batch yet, the later reduces of the same block in no batch, combining across warps, whose
/// operands are all defined before it and none in pipeline slots, while the batch's partials
/// (16-byte aligned regions side by side) stay within max(its own bytes, 4096), are moved right after it, in their order, and it is marked
/// `batch=N` (Op::reduceBatchSize). The backend then writes all their partials between one pair
/// of barriers instead of a pair each (layernorm backward's two row sums; a cross-entropy's sum
/// beside its maximum), and allocate-shared gives the first reduce the batch's bytes.
///
/// A reduce ahead of a carried wgmma group's wait in its block or a block around it (a
/// `wgmma_wait 0` of a loop body's argument, the wgmma-waits pass's Carried kind) leads no
/// batch: computing later reduces early would keep their operands' registers live across the
/// group. Needs layouts (after assign-layouts) and the wgmma-waits pass's waits; reduces
/// already marked are left as they are. Not run for the CPU target (no warps).
void batchReduces(ir::Function &f);

} // namespace tle::transforms
