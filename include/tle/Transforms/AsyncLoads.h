// async-loads: tle.load(..., is_async=True) made an asynchronous global-to-shared copy
// (cp.async) that is waited for right before the loaded value is first needed.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Rewrites each eligible load of `f` that carries the async hint (Op::isAsyncHint,
/// FlagTree's `tt.load.async`) on gpu-stage IR (layouts assigned) into the explicit GPU ops:
///
///     %buf = local_alloc shape=S : *T_shared          (the load's tile shape S, row-major)
///     %dst = addptr (splat %buf), row-major offsets    (in the load's layout L)
///     async_copy [cache=ca] %dst, %src [, %mask]       (at the load's place)
///     async_commit_group
///     ...                                              (ops that neither read the value nor
///                                                       write memory or synchronise)
///     async_wait_group N                               (N: groups committed after it here)
///     %v = load %dst                                   (each thread reads its elements, in L)
///     %v' = select %mask, %v, %other                   (only when other is not all zero bits)
///
/// The wait goes right before the first op of the load's block that uses the value (in it or
/// in its regions) or that blocksLoadMotion (a store, atomic, barrier, GPU sync op, ...: the
/// copy must read global memory as the load would have, before any of them), or before the
/// block's terminator. Loads whose waits fall at the same op share one wait, N counting the
/// async_commit_group ops of the block between the last of their copies and it (groups complete
/// in order, PTX ISA §9.7.9.25.3.2, so the count of a region's commits left out only waits
/// longer). A masked-off element reads nothing: cp.async zero-fills it, and the select gives
/// `other` where other is not a splat of zero bits (-0.0 is not). allocate-shared places the
/// buffer (live from the copy to the wait and the read), insert-barriers puts the barrier
/// between the wait and the read (and before a refill in a loop).
///
/// A load stays a load, with its hint, unless all of these hold (FlagTree's rule: a hint only):
///   - the target has cp.async: f.arch is sm_80 or newer;
///   - it is not volatile, not a tensor-descriptor load, has no eviction hint and no `.cv`
///     cache hint (`.ca` becomes cache=ca; `.cg` leaves the copy its default, `.cg` for 16 bytes);
///   - it reads a tile (not a scalar) of global memory, of a type other than i1, and its
///     operands and result share one layout (on IR without layouts nothing changes);
///   - each copy moves 4, 8 or 16 bytes (cp.async's sizes): the elements a thread holds
///     contiguously along the last dim (the layout), the pointers' contiguity and alignment and
///     the mask's constancy (AxisInfoAnalysis::accessVector) allow at least 4 bytes, as the
///     NVPTX backend computes the copy's width;
///   - the loop pipeliner has not taken it: it is not marked pipeline=k (its values already
///     live in cp.async or TMA slots) and its value is not carried by a loop (an operand of a
///     `for`/`while` or of their regions' yield: a prefetched window, issued iterations ahead);
///   - it is not in a loop the pipeline pass pipelines (one whose regions hold a load marked
///     pipeline=k, at any depth): a wait there would also wait for the slots' prefetches, which
///     are meant to stay in flight across iterations;
///   - it is not inside a warp_specialize, and the kernel has no producer warps
///     (tl.range(warp_specialize=True)): its roles order their shared memory with mbarriers;
///   - the value is used in its block (a dead load is left to canonicalize);
///   - shared memory stays within sharedMemoryLimit(f.arch) even with every buffer, the pipeline
///     area and the largest scratch area live at once (the new buffers counted as well).
/// Returns the number of loads rewritten.
unsigned lowerAsyncLoads(ir::Function &f);

} // namespace tle::transforms
