// Loop prefetching: the global loads that feed a tl.dot in a `for` loop are issued num_stages - 1
// iterations ahead, so that their latency overlaps the matrix multiplies in between.
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

} // namespace tle::transforms
