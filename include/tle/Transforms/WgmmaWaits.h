// The wgmma-waits pass: where each tl.dot that runs on wgmma (sm_90a) waits for its group, as
// explicit wgmma_wait ops (PTX ISA §9.7.15.6.4, wgmma.wait_group), so that a group may stay in
// flight while the loop goes on.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// How an `async` dot's wgmma group is retired (the pass's decision, as the IR spells it).
enum class WgmmaGroupWait {
  /// A `wgmma_wait 0` of its result right after it: the dot's result is complete there.
  Now,
  /// Its loop's accumulator: the dot reads a loop-carried accumulator and yields its result in
  /// the same position, and both have no other use. The group runs on while the loop goes on; a
  /// `wgmma_wait 1` without operands right after the dot retires the previous iteration's group
  /// (whose slots the loads after the dot refill), the loop's `wgmma_drain` the last one.
  Deferred,
  /// Its result goes to the next iteration alone (the yield), which waits for it (a
  /// `wgmma_wait 0` of the carried argument) before the first op that reads it or refills a
  /// slot class the group reads; the loop's `wgmma_drain` retires the last one.
  Carried,
};

/// How `dot`, a Dot marked `async`, waits for its group, read from the IR around it.
WgmmaGroupWait wgmmaGroupWait(const ir::Op &dot);

/// Marks every tl.dot of `f` that runs on wgmma (wgmmaDot: sm_90a, fp32 or int32 accumulators)
/// `async` and places the wgmma_wait ops that retire its group (WgmmaGroupWait):
///   - Deferred: the dot reads its operands straight from a loop's pipeline slots, carried from
///     earlier iterations (not loaded in this iteration before it), its accumulator is carried
///     and used by it alone, and its result only yielded back in the accumulator's position;
///   - Carried: the same operand slots (A may be registers: ptxas keeps a group's source
///     registers live until its wait), the result used once, by the yield, whose loop result
///     keeps its layout. The next iteration's wait goes before the first top-level op of the
///     body that reads the carried value or is a fill of one of the group's slot classes (or
///     before the yield), ahead of the run of pipeline waits, async_wait_group, fences and
///     barriers right before that op; later uses read the wait's result;
///   - Now: every other dot, except fp8 dots with a max_num_imprecise_acc below K, whose
///     promoted accumulation waits for each partial group (they stay synchronous).
/// A loop holding a Deferred or Carried dot is marked `wgmma_drain`. Needs the pipeline pass's
/// decisions (the `pipeline=k` marks and Function::pipelines); a function whose dots are already
/// `async` is left as it is (its IR was written after this pass). Does nothing for other
/// architectures.
void placeWgmmaWaits(ir::Function &f);

} // namespace tle::transforms
