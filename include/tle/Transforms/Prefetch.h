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
///
/// Not in the default pipeline (run it with `tlec --pass=canonicalize,prefetch,canonicalize,
/// assign-layouts`): the operands carried in registers compete with the accumulators, and on the
/// H200 examples/matmul.tle ran at 51 instead of 91 TFLOP/s (4096^3, fp16).
unsigned prefetchDotOperands(ir::Function &f);

} // namespace tle::transforms
