// insert-barriers: the CTA barriers that order threads' conflicting accesses to shared memory, and
// the split cluster barrier that keeps a CTA's shared memory alive while its cluster may use it.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// What insertBarriers added.
struct BarrierInsertion {
  int ctaBarriers = 0;   ///< Barrier ops (bar.sync 0)
  int proxyFences = 0;   ///< FenceProxyAsync ops before async-proxy readers
  bool clusterEntry = false; ///< a ClusterArrive / ClusterWait pair before the first remote access
  bool clusterExit = false;  ///< a ClusterArrive / ClusterWait pair before the kernel exits
};

/// Makes the ordering of `f`'s accesses to the CTA's shared memory explicit, as Barrier ops.
///
/// CTA barriers. Scanning each block in program order, a Barrier goes right before a load, store
/// or atomic through a shared-memory pointer (the kernel's own buffers: LocalAlloc) that may
/// conflict with an access made by another thread since the last barrier to overlapping bytes
/// (a pointer derived from a placed LocalAlloc by splat, addptr, broadcast, expand_dims, reshape,
/// permute or convert_layout touches only that buffer's bytes, as do local_load, local_store, the
/// shared forms of extract_tile / insert_tile, an async_copy's destination and a copies-only
/// raw_call's buffers; any other pointer, and the other GPU ops below, may touch all of shared
/// memory): a load after a store or
/// an atomic; a store after anything, except a scalar store after scalar stores only (thread 0
/// makes those, in program order); an atomic after a load or a store. Loads after loads and
/// atomics after atomics need no order (the same rule FlagTree's TLE applies between its stores
/// and loads). The GPU ops count as accesses too: an async_copy writes its destination (a
/// barrier before it when anything is pending, none after: its bytes arrive later) and
/// async_wait_group is where they become writes other threads may read (pending after it; the
/// wait itself is not ordered after pending accesses: its copies were, at their issue); a
/// tma_load is written like an async_copy, a tma_store and tma_store_wait read their source;
/// mbarrier_init and mbarrier_inval are thread 0's scalar stores, the other local mbarrier ops
/// loads that leave nothing pending (an mbarrier is used after its initialisation, an arrival
/// comes after the stores before it, an arrival some threads make for all, per=cta, warp or
/// warpgroup, after every access before it, loads too, since it releases the others' accesses,
/// and an arrival or wait needs no barrier before the copy it tracks); local_load reads and local_store writes its matrix (every thread), and a wgmma
/// reads its operands until the wgmma_wait after it (an async-proxy read: see proxy fences,
/// below), so that bytes
/// allocate-shared gives to another buffer are never accessed by two threads at once. Barrier and ClusterBarrier ops (a cluster barrier is a CTA barrier too) settle all
/// pending accesses; a named barrier (`barrier id= threads=`) does only when its threads are
/// the whole CTA's, in a kernel without warp partitions. Before a loop or branch whose regions access shared memory in a way that may
/// conflict with a pending access (or hold a GPU op touching pending bytes, or are warp
/// partitions), pending accesses are settled (a Barrier before it); what stays pending otherwise
/// stays so after the op (a barrier inside may not run, also in a loop or branch without
/// accesses); a loop body starts from what was pending before the loop plus what an iteration
/// leaves pending at its end: the fixed point of walking the body without placing anything
/// (solved once per loop and entry state, so nested loops cost no more than their walks). After
/// such an op, what any of its regions may have left is pending. The
/// regions of a warp_specialize run once each, concurrently: a Barrier placed in one is that
/// partition's own (OpKind::WarpSpecialize), and partitions order their accesses to each other's
/// bytes through mbarriers, which this pass does not place.
///
/// Cluster entry (CUDA's rule for distributed shared memory: a CTA may access another CTA's
/// shared memory only once that CTA has started, which a cluster barrier guarantees). When the
/// kernel accesses other CTAs' shared memory (a cluster pointer, or an mbarrier_arrive with a CTA
/// rank) before any cluster barrier: a relaxed ClusterArrive (it releases nothing) at the start
/// of the kernel and a ClusterWait right before the top-level op holding the first such
/// access (or the first cluster barrier, at any depth), so the work before it overlaps the other
/// CTAs' start. None when a top-level ClusterBarrier, ClusterArrive or ClusterWait comes first.
///
/// Cluster exit (sm_90 clusters, CUDA's rule for distributed shared memory: a CTA's shared
/// memory must outlive every access to it from its cluster). When the kernel accesses other CTAs'
/// shared memory (a pointer in the cluster address space) after the last top-level
/// ClusterBarrier, or has none: a ClusterArrive goes after the top-level op holding the last
/// such access and the last ClusterBarrier at any depth (an arrive must not overtake a barrier's
/// own arrive), and a ClusterWait right before the Return, so the stores in between run on while
/// the other CTAs finish. The kernel's own top-level phases count: nothing is added when a
/// ClusterBarrier, or a ClusterArrive and its ClusterWait, follow those points; an arrival
/// pending at the end gets only the ClusterWait; when the author's arrival came before the last
/// access, the new ClusterArrive goes after its ClusterWait (or after a ClusterWait added to
/// complete it), since a thread arrives once per phase (ir::verify checks the phases).
///
/// Proxy fences (PTX ISA §9.7.13.4). The async proxy (wgmma, tma_store) sees shared-memory
/// writes made through the generic proxy (stores, local_store, atomics) only after a
/// fence.proxy.async in the writing threads, before the barrier that orders them: a
/// FenceProxyAsync goes right before a Wgmma or TmaStore when such writes may have happened since
/// the last one (in this block, in a loop or branch before it, or in the previous iteration of
/// the loop it is in), ahead of the Barrier this pass may place there.
///
/// Layout conversions and shape ops through shared memory (insertStagingBarriers, after the
/// accesses above): a CTA barrier right before each, unless one is there already.
///
/// Refills (last, insertRefillBarriers): a CTA barrier before a fill of a pipeline slot (a load
/// marked `pipeline=k`, transforms::pipeline) inside a loop or branch, which overwrites the slot
/// that readers of an earlier iteration used, unless one already orders it.
///
/// Backend scratch. An op whose scratch area (a reduction's, a scan's, a layout conversion's)
/// or pipeline values share bytes with a buffer (allocate-shared places both by liveness) reads
/// them until its end: a read of all of shared memory is pending after it, in its own block (a
/// warp partition's, a loop body's) and after the top-level op that holds it.
///
/// Running the pass twice adds nothing the second time. Returns what it added.
BarrierInsertion insertBarriers(ir::Function &f);

/// Whether `op` stages its operands through its scratch area from its start: writes them there
/// and reads them back in the result's layout, between two barriers. A convert_layout whose
/// layouts no register renumbering maps (ir::registerMap), and, once layouts are assigned, every
/// reshape, cat, join, split, flip and gather (the NVPTX backend moves them through shared
/// memory by row-major index).
bool stagesThroughScratch(const ir::Op &op);

/// The barrier that opens each op that stagesThroughScratch: it keeps earlier readers of the
/// scratch bytes (the scratch of ops before it, which this pass does not track) from seeing
/// them overwritten. A Barrier op goes right before the op, unless a CTA-wide one is there
/// already; the second barrier, between the op's own writes and reads, stays the backend's. In
/// a warp-specialised kernel the barrier is the consumer warps' (the backend's named barrier).
/// Returns the number of Barrier ops added.
int insertStagingBarriers(ir::Function &f);

/// The barriers before refills of the pipeline pass's slots. Within a block, a fill that is not
/// at the kernel's top level (its slot was read before: by the previous iteration, or by the
/// previous pass of an enclosing loop) gets a Barrier right before it unless
///   - a Barrier comes before it with only register computations, other fills and cp.async
///     commits in between (fills of one stage share one barrier), or
///   - in a loop body, a top-level Barrier comes after the point where the previous iteration's
///     reads of the slot's class were retired in every thread: the body's start when they were
///     synchronous (mma.sync, loads, wgmma groups waited for at once), the body's first wait for
///     every wgmma group (wgmma_wait 0, or a synchronous wgmma dot) when a carried group reads it
///     (transforms::WgmmaGroupWait::Carried: attention's P.V and its V slots). A group left in
///     flight by `wgmma_wait 1` (Deferred) or a read in a nested region rules this out.
/// Private slots (each thread reads its own copies) and the TMA fills of a producer/consumer
/// split (its producer waits on the slot's "empty" mbarrier) get none. Returns the number added.
int insertRefillBarriers(ir::Function &f);

} // namespace tle::transforms
