// Layout assignment: gives every tile value of a function a Layout (tle/IR/Layout.h) and makes
// every layout change explicit as a convert_layout op — the step from the `tile` stage to the
// `gpu` stage.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Statistics of one run, for reports and tests.
struct LayoutAssignmentStats {
  unsigned tiles = 0;       ///< tile values given a layout
  unsigned conversions = 0; ///< convert_layout ops inserted (each one costs shared memory traffic)
  unsigned rematerialized = 0; ///< operands recomputed in the needed layout instead of converted
  unsigned renumbered = 0; ///< operands whose layout differs from the use's but whose registers only
                           ///< need renumbering (tle::ir::registerMap): no data moves
  unsigned followed = 0;   ///< elementwise results kept in an anchored operand's layout
};

/// Assigns layouts. Anchors are global memory accesses, which take the blocked layout that
/// gives each thread 16-byte vectors of the accessed dtype; layouts flow backward from uses to
/// definitions (elementwise ops, expand_dims, broadcast, loop-carried values), so that index
/// arithmetic is built directly in the layout its load or store needs. Reductions produce
/// sliced layouts of their operand. Where two requirements meet and registers cannot simply be
/// renumbered (tle::ir::registerMap), cheap index arithmetic (arange, splat, expand_dims,
/// broadcast and cheap elementwise ops, up to a small budget) is recomputed in the needed
/// layout; anything else gets a convert_layout.
LayoutAssignmentStats assignLayouts(ir::Function &f);

/// `l` as one of `f`'s layouts (Function::layouts, which tile values point into): the equal one
/// `f` has, or `l` added to them. Passes that give values layouts after assign-layouts use it too.
const ir::Layout *internLayout(ir::Function &f, const ir::Layout &l);

} // namespace tle::transforms
