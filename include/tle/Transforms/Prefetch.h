// Loop prefetching: the global loads that feed a tl.dot in a `for` loop are issued num_stages - 1
// iterations ahead, so that their latency overlaps the matrix multiplies in between; the loop's
// other loads are issued one iteration ahead in registers.
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

namespace tle::transforms {

/// Rewrites every `for` loop whose body loads a dot operand (directly or through one cast) from
/// addresses computed only from the induction variable, loop-carried values and values defined
/// outside the loop into a software pipeline of depth D = num_stages - 1 (f.numStages; 0 means
/// Triton's default of 3 stages, 1 turns prefetching off; D shrinks while the slots of one loop,
/// measured as the NVPTX backend lays them out for f.arch, would take more than 192 KiB of shared
/// memory on sm_90a or 160 KiB on sm_80, with a warning at the loop through `diags` when given):
///   - before the loop, the loads of iterations 0 .. D-1 (carried values advanced from their
///     initial values, each load predicated on lb + j*step < ub);
///   - the loop carries a window of D loaded values per load; at the end of the body (after
///     the dot), the load of iteration iv + D*step (addresses recomputed through the carried
///     values' next-value computations applied D times, predicated on iv + D*step < ub); the
///     yield shifts the window;
///   - the dot uses the oldest value of the window (loaded D iterations earlier).
/// A masked-off element reads nothing, so the loads past the last iteration never touch memory.
/// Returns the number of loads prefetched.
/// Only 16-bit (fp16/bf16) 2-D operands are prefetched: the NVPTX backend copies them with
/// cp.async into D + 1 shared-memory slots (AsyncCopy.cpp). Carried in registers instead,
/// they would compete with the accumulators (measured on the H200: 51 instead of 91 TFLOP/s).
unsigned prefetchDotOperands(ir::Function &f, DiagnosticEngine *diags = nullptr);

/// Issues the other global loads of a `for` loop one iteration ahead in registers (depth
/// num_stages - 1 when the loop is `tl.range(..., num_stages=N)` with N >= 2), with the same
/// rewrite as prefetchDotOperands but the new loads at the top of the body, so that the next
/// iteration's loads are in flight while this one computes. A load is prefetched when:
///   - it sits directly in the loop body, is not volatile and its address and mask are computed
///     only from the induction variable, loop-carried values and values defined outside;
///   - the loop has no tl.dot (its registers belong to the accumulators);
///   - the loop asks for pipelining with num_stages >= 2 (as in Triton, an explicit num_stages
///     pipelines every load of the loop, and is the author's promise that the loop's stores do
///     not write what its later iterations load), or, without num_stages, it is a grid-stride
///     loop (its step computed from tl.num_programs) holding no op a load may not cross
///     (blocksLoadMotion: stores, atomics, impure inline asm, barriers, griddepcontrol,
///     device_print/device_assert, volatile loads);
///   - an estimate of the loop's own live data values (tiles spread evenly over the threads;
///     constants, ranges, pointers and predicates not counted) plus the prefetched values fit in
///     three quarters of the registers ptxas may give a thread at num_warps
///     (min(255, 65536 / threads)), so that prefetching does not make the kernel spill.
/// tl.range(num_stages=1), or num_stages 1 for the kernel with no per-loop value, turns it off.
/// Returns the number of loads prefetched.
unsigned prefetchLoopLoads(ir::Function &f, DiagnosticEngine *diags = nullptr);

} // namespace tle::transforms
