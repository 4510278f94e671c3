// pipeline: which prefetched loads live in shared-memory slots filled by asynchronous copies
// (cp.async or TMA), where those slots, their mbarriers and TMA stores' staging areas lie, and
// whether a tl.range(warp_specialize=True) loop runs as producer and consumer warps.
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

#include <map>
#include <set>
#include <string>

namespace tle::transforms {

/// Decides the kernel's asynchronous load pipelines (docs/compiler.md, "pipeline"), on gpu-stage
/// IR after `prefetch` made each pipelined load a loop-carried window. Replaces whatever an
/// earlier run (or the IR text) recorded, unless the function holds the protocol's ops
/// (pipelineProtocolPlaced: then it is left as it is):
/// - Dot-operand classes: a global tile load whose values reach only tl.dot operands (directly,
///   through loop carries, or through a tl.trans view of one operand) with 16-byte vectors and
///   a zero or no `other` gets `pipeline=k`; f.pipelines[k] holds its slots (carried values + 1),
///   in the layout the dot reads: swizzled for wgmma, padded rows for mma.sync (ldmatrix),
///   unpadded for a restaged K-major wgmma B. A class no loop carries (straight-line dots) keeps
///   its slot for the whole kernel: such classes are declined, the last first, while the slots
///   exceed pipelineSlotBudget or, with the kernel's buffers and its largest scratch area, the
///   shared-memory limit; their loads stay register loads. On sm_90a a class whose every load can be a TMA
///   fill (tensorMapFor; before the kernel's first global write; guarded fills in one top-level
///   loop, or in pipelined loops nested in it: `dynamic`) is copied with TMA; its descriptor is
///   appended to f.tensorMaps after the IR's declared ones.
/// - Private classes: a loop's prefetched window (num_stages >= 2) of a load no dot reads, read
///   only directly in the loop body, 4-, 8- or 16-byte vectors, no hints: each thread copies its
///   own vectors (at most 96 KiB of such slots per kernel).
/// - Warp specialisation: the first top-level loop with warp_specialize=True whose TMA fills'
///   coordinates are scalar computations (producerSlice) gets a producer warpgroup
///   (f.producerWarps = 4, TMA slots with "empty" mbarriers); otherwise a located warning says
///   why it was declined.
/// - TMA stores (marked by mark-tma-stores): their descriptor (`map=k`) and, in a loop, a
///   staging area (`staging=N`). Errors: a marked store that TMA cannot write (not sm_90a, under
///   an `if`/`while`, no descriptor, not the last global access).
/// Offsets are bytes from the start of the pipeline area (after allocate-shared's buffers):
/// slots (swizzled ones 1024-byte aligned), then mbarriers, then staging areas;
/// f.pipelineBytes is the area's size, rounded up to 1024 where wgmma or TMA read swizzled
/// shared memory. Last, the protocol of the slots' mbarriers and copies as ops
/// (placePipelineProtocol). `diags` may be null only when no error or warning can arise.
void pipeline(ir::Function &f, DiagnosticEngine *diags);

/// The shared memory the pipeline slots of a kernel may take on `arch`, in bytes: 192 KiB of
/// sm_90a's 227 (160 KiB of sm_80's 163), which leaves room for the scratch of layout conversions
/// and of the dots that stage their operands from registers. `prefetch` shortens a loop's
/// pipeline to fit it; `pipeline` declines straight-line dot-operand slots past it (see pipeline).
int64_t pipelineSlotBudget(const std::string &arch);

/// Every value that lives in pipeline slots, with its class (Function::pipelines index): the
/// values linked by loop carries to a load marked `pipeline=k` or to a `pipeline_value
/// pipeline=k` (a fill written as ops by pipeline-fills), and the results of Permute
/// views marked `pipeline=k` (also listed in `transposed` when non-null).
std::map<const ir::Value *, int> pipelineValues(const ir::Function &f,
                                                std::set<const ir::Value *> *transposed = nullptr);

/// A TMA store's staging area in a loop (its copies read it while the loop goes on): `buffers`
/// (1 or 2) areas of `bytes`, each holding `boxes` boxes of the store's swizzle width (box by box
/// in two buffers where the layout's lane and warp bits stay within one box; else the whole tile).
struct TmaStoreStaging {
  int buffers = 1, boxes = 1;
  int64_t bytes = 0;
};
TmaStoreStaging tmaStoreStaging(const ir::Op &store);

/// The ops a warp-specialised kernel's producer warpgroup runs: the TMA fills of `values`
/// (pipelineValues) and everything their coordinates, guards and slot counts come from, with
/// the loops around them, into `slice`. False with the reason in `why` when one of them is not
/// a scalar computation the producer can repeat (a vector op, an op under `if` or `while`).
bool producerSlice(const ir::Function &f, const std::map<const ir::Value *, int> &values,
                   std::set<const ir::Op *> &slice, std::string &why);

/// Accumulator registers per thread of the widest wgmma instruction of `f` (N / 2 for m64nNk
/// with fp32 or int32 accumulators), which ptxas must fit within the kernel's maxnreg.
int wgmmaAccumulatorRegisters(const ir::Function &f);

/// Whether `f` holds the pipeline protocol (a pipeline_mbarrier, tensormap_prefetch or
/// `async_wait_group all`): the pass ran on it already (or the IR text was written after it),
/// and `pipeline` leaves such a function as it is, since the protocol's ops name its slots.
bool pipelineProtocolPlaced(ir::Function &f);

/// Places the pipelines' protocol as ops of the IR (the last step of `pipeline`). At the
/// kernel's start, when it has tensor maps: mbarrier_init of every TMA slot's
/// mbarrier (count 1; a warp-specialised kernel's "empty" ones slotReleaseArrivals()), a
/// tensormap_prefetch of every map, and with TMA loads fence_mbarrier_init, fence_proxy_async
/// and a barrier. After the last top-level op that uses the pipeline area (lastPipelineTopOp),
/// when more follow: `async_wait_group all`; with TMA loads, an mbarrier_wait for every
/// unguarded top-level fill outside loops, a barrier and mbarrier_inval of every slot's
/// mbarrier; with TMA stores staged in a loop, `tma_store_wait read 0` and a barrier. At the
/// end (before `return`), with pipelines: `async_wait_group all` (and the fills' waits when
/// not done before). The waits for the fills: a pipeline_wait for each TMA operand of a wgmma
/// dot right before it (before the loop for a tile copied once ahead of a loop whose dots read
/// it); for cp.async fills an async_commit_group after each and, before a fill's first reader,
/// an async_wait_group with the count of groups committed after it in program order (then
/// fence_proxy_async for wgmma and a barrier before a dot; a private slot needs neither). In a
/// top-level op holding fills of a `dynamic` class (a persistent kernel's loop over tiles), a
/// `fence_proxy_async global` after each global write other than a TMA store, so that the
/// later fills' async proxy sees it (PTX ISA §9.7.13.4).
void placePipelineProtocol(ir::Function &f);

/// Whether `f` has its own warp partitions (a top-level warp_specialize op; ir::verify allows one
/// at most, at the top level), which rule out the pipeline pass's producer/consumer split.
bool hasWarpPartitions(const ir::Function &f);
/// Whether `f` runs as the pipeline pass's producer/consumer split of
/// tl.range(warp_specialize=True): producer warps, and no partitions of its own.
inline bool producerConsumerSplit(const ir::Function &f) { return f.producerWarps > 0 && !hasWarpPartitions(f); }

/// Whether a warp-specialised kernel's consumers release a slot once per warpgroup (only
/// wgmma reads its slots: one thread's wgmma.wait_group retires the whole warpgroup's reads)
/// rather than once per thread (slots read into registers: restaged or private).
bool releasePerWarpgroup(const ir::Function &f);
/// Arrivals that complete a phase of a slot's "empty" mbarrier (releasePerWarpgroup: one per
/// consumer warpgroup, else one per consumer thread).
int slotReleaseArrivals(const ir::Function &f);

/// Warps of the producer warpgroup of tl.range(warp_specialize=True): one warpgroup, since
/// setmaxnreg applies to whole warpgroups.
inline constexpr int kProducerWarps = 4;
/// Registers ptxas must find free for a wgmma's operands beyond its accumulator (descriptors,
/// addresses, the loop's counters), from the smallest budgets it accepted.
inline constexpr int kWgmmaHeadroom = 32;

} // namespace tle::transforms
