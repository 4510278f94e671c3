// Issuing independent loads early: a global load moves up, with the pure ops that compute its
// address and mask, to just after the last op before it that touches memory or synchronises, so
// that its latency overlaps the reductions and loops in between.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Whether a global load may not be moved from after `op` to before it: `op` writes memory (a
/// store, an atomic, impure inline asm), synchronises (a barrier, griddepcontrol), reports
/// (device_print, device_assert: a load an assert guards stays after it), is a volatile load, or
/// is a loop or branch holding one of those. Shared by hoistLoads and prefetchLoopLoads.
bool blocksLoadMotion(const ir::Op &op);

/// Moves each load of every block of `f` (the body, loop bodies, branches) up to just after the
/// last preceding op of the same block that has an effect a load may not cross: a store, an
/// atomic, a barrier, griddepcontrol, device_print/device_assert (a load guarded by an assert
/// stays after it), impure inline asm, a volatile load, or a loop or branch holding one of them.
/// It does not cross an earlier load either, so that loads are issued in program order. The
/// in-block ops computing its operands that lie in between move with it, in their order. A load
/// moves only when:
///   - it crosses an op that waits on other threads or runs long: a reduction, a scan, a
///     permute/reshape/cat/join/split/flip (exchanged through shared memory), or a loop or branch
///     (ptxas does not move loads across the barriers those hold);
///   - none of the ops that would move has regions;
///   - the loaded value, live for longer, still fits: the values hoisted in the block take at
///     most 8 registers per thread in all (estimatedRegisters), so that hoisting does not cost
///     the kernel occupancy, and the block's estimated live registers (RegisterEstimate.h) over
///     the crossed ops plus the value's stay within three quarters of registerCeiling(num_warps),
///     so that it does not make the kernel spill.
/// Kernels with tl.dot are left as written (their registers belong to the accumulators, and their
/// operand loads are pipelined by prefetchDotOperands). Returns the number of loads moved.
unsigned hoistLoads(ir::Function &f);

} // namespace tle::transforms
