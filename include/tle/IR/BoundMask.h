// Bound masks: a store mask of the form `offs < n`, which the GPU backend may recompute at the
// store from n (Op::isBoundsMask, transforms::markBoundMasks).
#pragma once

#include "tle/IR/IR.h"

#include <optional>
#include <vector>

namespace tle::ir {

/// The parts of a store mask of the form `offs < n` (or `<=`; `n > offs` and `n >= offs` read
/// the other way round), on a rank-1 tile: offs is one arange plus any number of splatted i32
/// scalars (at most 8), added in any order, and n a splatted i32 scalar; convert_layouts in
/// between are looked through.
struct BoundMask {
  const Op *compare = nullptr;          ///< the cmp that computes the mask
  const Op *range = nullptr;            ///< the arange in offs
  std::vector<const Value *> offsets;   ///< the scalars splatted into offs
  const Value *bound = nullptr;         ///< n: the scalar splatted as the bound
  bool inclusive = false;                   ///< offs <= n
};

/// The BoundMask of `store`'s mask, when it has that form and the stored tile's layout gives
/// each register its own element (registerBitsDisjoint); nullopt otherwise.
std::optional<BoundMask> boundMaskOf(const Op &store);

} // namespace tle::ir
