// Register-pressure estimates on the tile IR, before layouts exist: for the passes that trade
// registers for latency (prefetchLoopLoads, hoistLoads).
#pragma once

#include "tle/IR/IR.h"

#include <cstdint>
#include <vector>

namespace tle::transforms {

/// 32-bit registers per thread a value of type `t` takes when its elements are spread evenly over
/// the 32 * numWarps threads of a CTA (at least one for a tile; a scalar's words). An estimate: a
/// layout that replicates the tile over threads takes more.
int64_t estimatedRegisters(const ir::Type &t, int numWarps);

/// Registers ptxas may give a thread of a CTA of numWarps warps: 65536 per SM over the CTA's
/// threads, at most 255 (CUDA C Programming Guide, compute capability 8.x/9.0 limits).
int64_t registerCeiling(int numWarps);

/// Estimated registers per thread live in `b`: element 0 at its start, element k while its k-th
/// op (1-based) runs. Counted: data values (not pointers, not i1 predicates, which mostly fold
/// into memory instructions' addresses and predicates; not constants or ranges, which are
/// rematerialised), from their definition to their last use in `b` (a use inside a nested region
/// counts at the region's op); values from outside `b` that it reads are live throughout.
std::vector<int64_t> liveRegisters(const ir::Block &b, int numWarps);

} // namespace tle::transforms
