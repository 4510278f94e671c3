// pipeline-fills: the TMA fills of the pipeline pass's slots written as the ops an author would
// write with TLE-Struct (fill numbers, expect-tx on the slot's mbarrier, tma_load per box).
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Rewrites each fill of a TMA pipeline (a `load pipeline=k` whose class Function::pipelines[k]
/// the `pipeline` pass gave TMA copies, tmaMap >= 0) into explicit GPU ops, on gpu-stage IR after
/// insert-barriers (whose refill barrier stays in front of it):
///
///     %c    = <fill number>                 (u32, 0 .. 2 * slots - 1; see below)
///     %bar  = pipeline_mbarrier pipeline=k %c : u32 -> *i64_shared   ("full" mbarrier of its slot)
///     %dst  = pipeline_slot pipeline=k %c : u32 -> *T_shared         (slot c mod slots)
///     if %guards {                          (the load's guards, and-ed; no `if` without guards)
///       mbarrier_arrive tx=rows*cols*sizeof(T) %bar                  (one thread)
///       tma_load map=m %dst, %bar, %row, %col                       (one box per swizzle span
///       tma_load map=m %dst + rows*span, %bar, %row, %col + span     of columns, in order)
///     }
///     %v    = pipeline_value pipeline=k %c : u32 -> tile          (replaces the load's result)
///
/// %row and %col are the load's descriptor coordinates as i32 (PTX ISA §9.7.9.25.5.2: the box
/// at those element coordinates; outside the tensor, zeros). Fill numbers count the class's
/// fills at run time in program order, wrapping at 2 * slots (the slot, and the parity of its
/// mbarrier's phase: docs/compiler.md, "pipeline"): the function starts the count at
/// 2 * slots - 1 (so the first fill is number 0; a fill with a constant predecessor gets a
/// constant), and every `for` around a fill carries it as a new u32 iteration value (appended
/// to its operands, body arguments, yield and results). A fill is number (previous + 1) mod
/// 2 * slots; the count moves on with every fill of an ordinary class, and only with the fills
/// whose guards hold in a `dynamic` class (a persistent kernel's fills across inner loops).
///
/// Then loops carry fill numbers instead of tiles: every iteration value of a rewritten class
/// (each of them a pipeline_value, a tl.trans view of one, or a `for`'s iteration value or
/// result) becomes a u32 number, viewed as its tile by a pipeline_value at the body's start and
/// after the loop, and each `pipeline_wait %v` of such a tile becomes
///
///     %bar = pipeline_mbarrier pipeline=k %n ; %p = cmp ge %n, slots ; mbarrier_wait %bar, %p
///
/// (the phase of parity n / slots of its slot's mbarrier; unused views are erased). Fill numbers
/// are u32, so that `n >= slots` is an unsigned compare (PTX's .u32).
///
/// Left to the backend, unchanged: a warp-specialised kernel's fills (f.producerWarps > 0: its
/// producer and consumers share one body until the backend splits it), cp.async classes, and a
/// class with a fill under an `if`, a `while` or a warp_specialize (a count cannot be carried
/// out of them as iteration values). Returns the number of fills rewritten.
unsigned lowerPipelineFills(ir::Function &f);

} // namespace tle::transforms
