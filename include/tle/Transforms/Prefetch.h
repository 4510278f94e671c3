// Loop prefetching: the global loads that feed a tl.dot in a `for` loop are issued one iteration
// ahead, so that their latency overlaps the current iteration's matrix multiply.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Rewrites every `for` loop whose body loads a dot operand (directly or through one cast) from
/// addresses computed only from the induction variable, loop-carried values and values defined
/// outside the loop:
///   - before the loop, the load of the first iteration (predicated on lb < ub);
///   - in the body, at its start, the load of the next iteration (addresses and mask recomputed
///     for iv + step, predicated on iv + step < ub), carried to the next iteration;
///   - the dot uses the carried value loaded one iteration earlier.
/// A masked-off element reads nothing, so the extra load past the last iteration never touches
/// memory. Returns the number of loads prefetched.
/// Only 16-bit (fp16/bf16) 2-D operands are prefetched: the NVPTX backend copies them with
/// cp.async into double-buffered shared memory (AsyncCopy.cpp). Carried in registers instead,
/// they would compete with the accumulators (measured on the H200: 51 instead of 91 TFLOP/s).
unsigned prefetchDotOperands(ir::Function &f);

} // namespace tle::transforms
