// Canonicalisation of the tile IR: common-subexpression elimination and dead-code elimination.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

struct CanonicalizeStats {
  unsigned cseRemoved = 0; ///< ops replaced by an identical earlier op
  unsigned dceRemoved = 0; ///< ops whose results were unused
};

/// Replaces each pure op (no memory effects, no regions) by an identical op that dominates it
/// (same kind, attributes, operands and result types), then removes pure ops and loads whose
/// results are unused. Stores, loops and terminators are kept. The pipelines run it after
/// widen-fp8-dots (CSE then shares the casts) and mark-tma-stores (DCE then drops the index
/// arithmetic of the stores it marked), and after the passes that leave dead code
/// (tle/Transforms/PassRegistry.h).
CanonicalizeStats canonicalize(ir::Function &f);

} // namespace tle::transforms
