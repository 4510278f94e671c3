// pipeline-fills: the fills of the pipeline pass's slots written as the ops an author would
// write with TLE-Struct (fill numbers, expect-tx on the slot's mbarrier and a tma_load per box,
// or an async_copy into the slot; a warp-specialised kernel's producer and consumer partitions).
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

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
/// constant), every `for` around a fill carries it as a new u32 iteration value (appended to
/// its operands, body arguments, yield and results), and every `if` around one as a new u32
/// result that each branch yields (an early `return` puts the kernel's loops in one). A fill is number (previous + 1) mod
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
/// (the phase of parity n / slots of its slot's mbarrier). Fill numbers are u32, so that
/// `n >= slots` is an unsigned compare (PTX's .u32). Last, the computations nothing reads any
/// more (the loads' addresses and masks, unused views) are erased.
///
/// A producer/consumer split (tl.range(warp_specialize=True): f.producerWarps set by the
/// pipeline pass, no warp_specialize of the kernel's own) becomes a `warp_specialize
/// warps=[producerWarps] regs=[consumer, producer]` op after the pipeline's setup (docs/
/// compiler.md, "Warp specialisation"). Its region 0, the consumers, is the kernel without the
/// copies: each fill there is its number and pipeline_value, and in a loop that carries the
/// class, from the second iteration on,
///
///     if %k != %lb { mbarrier_arrive per=warpgroup|thread (pipeline_mbarrier empty %n) }
///
/// releases the slot the previous iteration's dots read (the one this fill takes; once per
/// warpgroup when only wgmma reads the slots, releasePerWarpgroup); a `dynamic` class counts its
/// releases as u32 iteration values too (`release`), and releases the last fill's slot after
/// each loop that refills it. Region 1, the producer warpgroup, repeats the scalar computations
/// and loops the fills need, and before each copy waits for its slot's release:
///
///     if %guards { mbarrier_wait (pipeline_mbarrier empty %n), %n < slots }
///     if %guards { mbarrier_arrive tx= %bar ; tma_load ... }
///
/// (parity 1 of a fresh mbarrier passes at once: the first round of fills does not wait).
///
/// A cp.async class's fills (tmaMap < 0) are numbered the same way modulo the slots (no
/// mbarrier phase to track: the pipeline's async_wait_group orders them), each
///
///     %c   = <fill number>                  (u32, 0 .. slots - 1)
///     %dst = pipeline_slot pipeline=k %c : u32 -> *T_shared
///     async_copy vec=V %dst, %ptrs [, %mask]   (the load's pointers and mask; masked-off
///                                                vectors zero-fill, as the load's zero `other`)
///     %v   = pipeline_value pipeline=k %c : u32 -> tile
///
/// with V = 16 for shared slots (laid out as the dots read them) and the pipeline's `copy` bytes
/// for private ones (each thread's own chunks, read back by the thread alone).
///
/// Counts are carried through `for` (iteration values and results), `if` (a result each branch
/// yields) and `while` (a carried value its condition forwards, and a result): every fill is
/// rewritten, and the backend numbers none (a `load pipeline=k` reaching it is a located error).
/// The pipeline pass plans no class inside a kernel's own warp_specialize partitions; a fill of
/// hand-written IR there, or one whose shape is not its class's, is a located error (`diags`;
/// std::logic_error without it). Returns the number of fills rewritten.
unsigned lowerPipelineFills(ir::Function &f, DiagnosticEngine *diags = nullptr);

} // namespace tle::transforms
