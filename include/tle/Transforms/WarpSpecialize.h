// warp-specialize: the launch facts of a kernel's warp partitions (ir::OpKind::WarpSpecialize):
// the workers' warps and the register ceiling their budgets move from.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// What warpSpecialize decided: the worker warps added to the kernel's num_warps, and the
/// per-thread register ceiling of the block (0 when the partitions give no budgets).
struct WarpSpecialization {
  int workerWarps = 0;
  int maxRegisters = 0;
};

/// For the kernel's warp_specialize op (one at most, at the top level: ir::verify), sets
/// f.producerWarps to the sum of its workers' warps, so that the block is launched with
/// 32 * (num_warps + producerWarps) threads, and, when the op gives register budgets
/// (partitionRegisters), f.maxRegisters to the registers per thread one block of that many
/// threads may have (registerCeiling, rounded down to a multiple of 8, as setmaxnreg counts):
/// ptxas compiles every partition within it, and on entry each partition's setmaxnreg raises
/// (.inc) or lowers (.dec) its warpgroups' registers to the budget (PTX ISA §9.7.17.1). A
/// maxRegisters the function has already (`max_registers`: this pass ran on it, or the split
/// below became the op) is kept when the budgets fit it (each partition's budget times its
/// threads, summed, at most maxRegisters times the block's threads), so that a second run
/// decides as the first did.
/// For the pipeline pass's producer/consumer split of tl.range(warp_specialize=True)
/// (f.producerWarps set, no warp_specialize op; runs after allocate-shared, whose shared bytes
/// decide it): the blocks per SM it is compiled for (two where the shared memory allows and the
/// widest wgmma's accumulator plus kWgmmaHeadroom fits half the registers), f.maxRegisters for
/// them, f.producerRegisters (40) and f.consumerRegisters (what the producer gives back, at most
/// 240; 0 when that is not more than maxRegisters). A kernel with neither is left as it is.
/// Returns what it set.
WarpSpecialization warpSpecialize(ir::Function &f);

} // namespace tle::transforms
