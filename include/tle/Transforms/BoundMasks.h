// bound-masks: stores whose `offs < n` mask the backend recomputes at the store from n, instead of
// keeping the mask's predicates live from a compare long before (a softmax's loads, ahead of its
// reductions and barriers).
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Marks `bounds` (ir::Op::isBoundsMask) every store of `f` (gpu stage, layouts assigned) whose
/// mask has an ir::BoundMask and whose compare comes before a reduce, scan, dot, barrier (CTA, cluster
/// or grid) or control-flow op that precedes the store in its block, or sits in another block:
/// there the mask's predicates would stay live across that work, where the backend instead
/// keeps one value per thread, d = n - start - scalars - (the thread's index), and compares it
/// with each register's constant offset at the store. A store next to its compare keeps the
/// mask (its predicates are short-lived anyway); so do TMA stores. Marks set already stay.
/// Returns the number of stores marked.
int markBoundMasks(ir::Function &f);

} // namespace tle::transforms
