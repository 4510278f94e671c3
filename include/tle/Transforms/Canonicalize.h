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
/// results are unused. Stores, loops and terminators are kept. First, fp8 dots that no native
/// instruction takes get fp16 operands (widenFp8Dots).
CanonicalizeStats canonicalize(ir::Function &f);

} // namespace tle::transforms
