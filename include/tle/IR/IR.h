// The tile IR: SSA values, ops with typed results, structured regions, and the semantics of
// every op (this header is the one place they are written down).
//
// A kernel is a Function whose body is a Block. Ops hold operands (Value*), own their result
// Values and their regions (each region is one Block whose arguments are the region's entry
// values). Control flow is structured: `for` holds its body; `yield` ends a region.
//
// Scalars are uniform across the program instance (CTA); tiles are distributed over its
// threads by a Layout, which the gpu stage attaches to every tile value.
#pragma once

#include "tle/IR/Layout.h"
#include "tle/IR/Types.h"
#include "tle/Support/Diagnostics.h"

#include <array>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tle::ir {

class Op;
class Block;


/// Op kinds. Unless stated otherwise, elementwise ops take operands of one identical type
/// (a scalar, or tiles of one shape: Sema inserts splat/broadcast/cast) and produce that type.
enum class OpKind {
  // --- Constants and program geometry
  Constant,    ///< () -> scalar. Integer value intValue() (two's complement, truncated to the
               ///< dtype), float value floatValue().
  Splat,       ///< (scalar s) -> tile of s's type: every element is s (tt.splat).
  ProgramId,   ///< () -> i32: the CTA index along grid axis axis() (0..2) (ctaid).
  NumPrograms, ///< () -> i32: the grid size along axis axis() (nctaid).
  Arange,      ///< () -> tile<(end-start) x i32> holding start, start+1, ... (arangeStart(),
               ///< arangeEnd(); end-start is a power of two).
  // --- Elementwise binary arithmetic
  Add, Sub, Mul, ///< Integer ops wrap (two's complement); float ops round to nearest.
  FDiv,        ///< Float division. fp32: approximate `div.full.f32` (~2 ulp, Triton's `/`), or
               ///< correctly rounded `div.rn` when isDivRn() (tl.div_rn); fp64: `div.rn.f64`;
               ///< fp16/bf16 are computed in fp32 and rounded.
  IDiv,        ///< Integer division truncating toward zero (C semantics; Triton's `//`).
  IRem,        ///< Integer remainder with the sign of the dividend (C `%`).
  FRem,        ///< Float remainder, C fmod.
  And, Or, Xor, ///< Bitwise, on integers (and i1).
  Shl,         ///< Left shift; amount >= bit width gives an undefined value.
  Shr,         ///< Right shift: arithmetic for signed types, logical for unsigned.
  Max, Min,    ///< Floats: NaN-ignoring maxnum/minnum (Triton's default propagate_nan=NONE);
               ///< integers: signed or unsigned by dtype.
  UMulHi,      ///< Integers (32 or 64 bits): the high half of the unsigned 2N-bit product of the
               ///< operands' bits (tl.umulhi; PTX mul.hi.u32 / mul.hi.u64), whatever their signedness.
  Cmp,         ///< (a, b) -> i1 of a's shape; predicate() says which; floats compare ordered
               ///< except `!=` (unordered, true for NaN), integers by their signedness.
  Select,      ///< (i1 cond, a, b) -> a's type: cond ? a : b elementwise (tl.where).
  // --- Elementwise unary
  Neg,         ///< -x (fneg for floats, 0 - x for integers).
  Not,         ///< Bitwise complement ~x on integers (logical not on i1).
  Exp,         ///< e^x, fp32 as `ex2.approx.f32(x * log2 e)` (Triton's tl.exp); fp32/fp64 only.
  Exp2,        ///< 2^x, fp32 `ex2.approx.f32`.
  Log,         ///< natural log, fp32 `lg2.approx.f32(x) * ln 2`.
  Log2,        ///< log2, fp32 `lg2.approx.f32`.
  Sqrt,        ///< square root, IEEE round-to-nearest (`sqrt.rn`).
  Rsqrt,       ///< 1/sqrt(x), fp32 `rsqrt.approx.f32`.
  Abs,         ///< |x| (floats clear the sign bit; signed ints; unsigned unchanged).
  ExternCall,  ///< (x...) -> result type: the pure elementwise device function callee() (a libdevice
               ///< `__nv_*` function) applied to each element; operands share the result's shape.
  InlineAsm,   ///< (x...) -> (r...): tl.inline_asm_elementwise. Operands are scalars or tiles of
               ///< the results' shape; the PTX text asmText() with LLVM-style asmConstraints()
               ///< (outputs first, `=r`, then inputs; r/l/h/f/d) runs once per asmPack()
               ///< consecutive elements of a thread, packed operands and results bitcast to the
               ///< constraint's register; asmPure(): no side effects. GPU only.
  RawCall,     ///< (args...) -> (tiles...): every thread of the CTA (of the partition it runs in)
               ///< calls the TLE-Raw function rawSymbol() of the LLVM module rawModule()
               ///< (tle.raw.call, tle.md §4), which the backend links into the kernel and
               ///< inlines. Operand i is a scalar or pointer passed as is; where rawMemrefs()[i]
               ///< is a shape, a scalar *T_shared buffer passed as FlagTree's memref expansion
               ///< (allocated ptr, aligned ptr, i64 offset 0, i64 sizes[r], i64 row-major
               ///< strides[r]); a tile is passed as the thread's fragment in rawFragmentLayout
               ///< (Layout.h; rawContiguous() picks which): a rank-1 memref of its n registers
               ///< in the thread's local memory (generic pointers, sizes [n], strides [1]), in
               ///< registers once inlined. Result
               ///< k is the fragment of operand rawResultOperands()[k] after the call (same
               ///< type). The function may read and write its buffers and global memory. GPU only.
  Fma,         ///< (a, b, c) -> a * b + c with one rounding (floats).
  Cast,        ///< Value conversion to the result's dtype (tl.cast / .to): float<->float
               ///< rounds to nearest even, float->int truncates toward zero, int->int
               ///< sign- or zero-extends by the source's signedness or truncates, to i1 is != 0.
               ///< A narrowing float cast rounds toward zero when roundsTowardZero().
  Bitcast,     ///< Reinterpret bits as the result's dtype (same bit width). Pointers convert
               ///< to pointers of the same address space, and a global pointer to and from a
               ///< 64-bit integer (its address: Triton's ptr_to_int / int_to_ptr).
  // --- Memory
  AddPtr,      ///< (ptr p, integer offset) -> ptr: p + offset * sizeof(pointee) (tt.addptr);
               ///< the offset is signed (unsigned offsets are zero-extended).
  Load,        ///< (ptr [, i1 mask [, other]]) -> pointee: masked-off lanes read nothing and
               ///< yield `other`, or zero when there is no other (TLE defines this). Hints
               ///< (tl.load's cache_modifier, eviction_policy, volatile): cacheHint(),
               ///< evictionHint(), isVolatile(); tle.load's is_async: isAsyncHint() (`async`,
               ///< on loads through pointers, not tensor descriptors).
               ///< A tile load through a tensor descriptor (tl.make_tensor_descriptor) also
               ///< records the descriptor, so that a backend may copy the tile with TMA:
               ///< blockShape() (rank r >= 1; hasDescriptor()), and after (ptr, mask, other) come
               ///< the scalars base (the descriptor's pointer), shape_0..r-1, strides_0..r-1
               ///< and offsets_0..r-1 (i64, outermost first), then any number of i1 scalar
               ///< guards. The mask is the descriptor's bounds check (0 <= offset_d + i <
               ///< shape_d in every dim) and'ed with splats of the guards; when a guard is false
               ///< the result is never read (a pipeline's prefetch past its loop's end), so a
               ///< copy need not be issued at all.
  Store,       ///< (ptr, value [, i1 mask]) -> (): masked-off lanes write nothing. Hints
               ///< cacheHint(), evictionHint(). A tensor-descriptor store (blockShape())
               ///< also lists the descriptor after the mask: base, shape_0..r-1,
               ///< strides_0..r-1, offsets_0..r-1 (i64). isTmaStore() ("tma"): written with TMA
               ///< from the descriptor alone (transforms::markTmaStores; ptr and mask are then
               ///< splats of the base and of true, kept for the types).
  AtomicRMW,   ///< (ptr, value [, i1 mask]) -> old values: per element, atomically
               ///< *ptr = *ptr OP value (atomicKind()) with memory order memSem() and
               ///< scope memScope() (AtomicCAS has these two as well); masked-off elements do nothing and
               ///< yield zero. Every element of a tile is one atomic, even when two elements
               ///< address the same location. fp32/fp64 max/min use integer atomics on the bits.
  AtomicCAS,   ///< (ptr, cmp, value) -> old: per element, if *ptr == cmp then *ptr = value.
               ///< Load, Store and the atomics take pointers of any address space: global,
               ///< the CTA's shared memory, or a cluster CTA's shared memory. Cache and eviction
               ///< hints apply to global memory only.
  LocalAlloc,  ///< () -> scalar *T_shared: the first element of a buffer of allocShape() (its shape,
               ///< every dim >= 1, elements row-major) of the pointee dtype T in the CTA's
               ///< shared memory (tle.gpu.alloc), 16-byte aligned, contents undefined until
               ///< written. Every LocalAlloc is a buffer of its own while it is live: from the
               ///< alloc to the last use of a pointer derived from it (the whole kernel once
               ///< the buffer is shared with the cluster through RemotePtr). `Op::sharedOffset`
               ///< is its byte offset in the CTA's dynamic shared memory, -1 until the
               ///< allocate-shared pass places it (transforms::allocateShared). GPU only.
  RemotePtr,   ///< (*T_shared ptr (scalar or tile), i32 scalar rank) -> *T_cluster of ptr's
               ///< shape: the same offset in the shared memory of the cluster's CTA `rank`
               ///< (its %cluster_ctarank; tle.remote; PTX ISA §9.7.9.24, mapa.shared::cluster).
               ///< A rank outside the cluster is undefined behaviour. GPU (sm_90+) only.
  ClusterBarrier, ///< () -> (): every thread of every CTA of the cluster arrives, then waits
               ///< for all of them (tle.distributed_barrier; PTX barrier.cluster.arrive.release
               ///< and barrier.cluster.wait.acquire, §9.7.13.3): shared-memory writes before it,
               ///< in any CTA of the cluster, are visible to reads after it. It is a CTA-wide
               ///< barrier too. GPU (sm_90+) only.
  ClusterArrive, ///< () -> (): the first half of a split cluster barrier (PTX ISA §9.7.13.3,
               ///< barrier.cluster.arrive.release): this thread has arrived, its shared-memory
               ///< writes released to the cluster; `relaxed` (Op::sync): it has arrived and
               ///< releases nothing (barrier.cluster.arrive.relaxed), for a barrier that only
               ///< says every CTA has started. Every thread of every CTA of the cluster must
               ///< arrive exactly once before any of them waits (ClusterWait). Verified: in
               ///< program order a thread's arrivals and waits alternate, starting with an
               ///< arrival (no ClusterBarrier in between), and each region of a loop or branch
               ///< leaves them as it found them; the kernel may return with an arrival pending.
               ///< Inserted by the
               ///< insert-barriers pass so that no CTA exits while another may still access its
               ///< shared memory (CUDA's rule for distributed shared memory). GPU (sm_90+) only.
  ClusterWait, ///< () -> (): the second half (barrier.cluster.wait.acquire): waits until every
               ///< thread of the cluster has arrived; their released writes are visible after
               ///< it. GPU (sm_90+) only.
  GridBarrier, ///< () -> (): every thread of every CTA of the grid arrives, then waits for all of
               ///< them (tle.distributed_barrier over a mesh of blocks, FlagTree's grid barrier):
               ///< global-memory writes before it, in any CTA, are visible to reads after it. A
               ///< CTA barrier, then thread 0 adds to the module's counter __tle_grid_barrier
               ///< (atom.add.release.gpu: CTA 0 adds 2^31 - (CTAs - 1), the others 1, so its top
               ///< bit flips once all have arrived) and spins on ld.acquire.gpu until it flips,
               ///< then a CTA barrier. Needs every CTA resident at once: a kernel with it is a
               ///< cooperative launch (its metadata's "cooperative"). GPU only.
  DeviceBarrier, ///< (*i8 comm) -> (): every thread of every CTA of the grid, on every GPU of
               ///< the communicator whose device record `comm` points to (libtle_rt's
               ///< Communicator::deviceComm(): rank i32 at byte 0, ranks i32 at 4, the signal
               ///< area's NCCL window at 8, signal slots S u32 at 16; docs/runtime.md), arrives,
               ///< then waits for all of them (tle.distributed_barrier(space="device")): global
               ///< writes before it, to any GPU's memory, are visible to reads after it on every
               ///< GPU. A grid barrier (GridBarrier's), then thread 0 of CTA 0 takes the next
               ///< epoch e (the area's word S + ranks, plus one), stores e with st.release.sys
               ///< into word S + rank of every peer's signal area (addressed by NCCL's
               ///< ncclGetPeerPointer rule on the window), spins with ld.acquire.sys until its own
               ///< words S + p (p != rank) reach e, and records e; then a grid barrier again.
               ///< Every rank must reach its barriers in the same order. A cooperative launch,
               ///< like GridBarrier. GPU only.
  SignalWait,  ///< (*u64 slot, u64 target) -> (): thread 0 of the CTA spins with ld.acquire.sys
               ///< until the 64-bit counter at `slot` (global memory) is at least `target`
               ///< (unsigned), then subtracts `target` from it (red.add.relaxed.sys): the
               ///< signals it waited for are consumed, unless `keep` (Op::sync); then a CTA
               ///< barrier, after which the
               ///< writes released by those signals are visible to every thread of the CTA
               ///< (tle.signal_wait). GPU only.
  SubmeshBarrier, ///< (*i32_shared counter) -> (): a barrier of the CTAs of the cluster whose
               ///< ranks (%cluster_ctarank) are submeshMembers() (FlagTree's sub-mesh
               ///< distributed_barrier; the first member leads): every thread of a member CTA
               ///< waits until every thread of every member has arrived, and shared-memory writes
               ///< before it in any member are visible to reads after it in every member. A CTA
               ///< barrier, then thread 0 of each member adds to the leader's `counter` (its
               ///< shared memory, mapa.shared::cluster; atom.add.release.cluster: the leader adds
               ///< 2^31 - (members - 1), the others 1, so its top bit flips once all have arrived)
               ///< and spins on ld.acquire.cluster until it flips, then a CTA barrier; other CTAs
               ///< pass through the two CTA barriers. The counter's low 31 bits must be zero in
               ///< the leader, and visible to the members, before their first arrival (Sema zeroes
               ///< it and puts a cluster_barrier at the kernel's start); each distinct member set
               ///< needs its own counter. The leader's memory is read by the others until they
               ///< pass: insert-barriers' cluster exit protocol counts the op as a remote access.
               ///< GPU (sm_90+) only.
  // --- GPU synchronisation and asynchronous copies (TLE-Struct's explicit ops; GPU only, the
  // CPU target rejects them). Attributes are Op::sync's named fields (SyncAttrs). Like every
  // op they are executed by the whole CTA; each says which of its threads run the instruction.
  // An mbarrier (PTX ISA §9.7.13.15) is an i64 in the CTA's shared memory, named by a scalar
  // `*i64_shared` pointer (8-byte aligned: an element of a `local_alloc shape=[N] :
  // *i64_shared`). The mbarrier ops need sm_90 or newer.
  MbarrierInit, ///< (*i64_shared bar) -> (): thread 0 initialises the mbarrier for `count`
               ///< arrivals per phase (1 <= count < 2^20), in phase 0 (mbarrier.init.shared::cta).
               ///< Other threads may use it after a `barrier`; other CTAs of the cluster after
               ///< fence_mbarrier_init and a cluster barrier. Initialising an mbarrier that is
               ///< in use, or its bytes again before mbarrier_inval, is undefined.
  MbarrierArrive, ///< (*i64_shared bar [, i32 rank]) -> (): the threads `per` chooses (one per
               ///< CTA: thread 0; one per warp: lane 0; one per warpgroup: the CTA's threads
               ///< whose index is a multiple of 128; every thread) each arrive `count` times
               ///< (mbarrier.arrive; release semantics: the arriving thread's own earlier memory
               ///< accesses, not its CTA's: put a `barrier` before it to release the whole
               ///< CTA's). With `tx` > 0 (count must be 1), the arrival also expects `tx` more
               ///< transaction bytes (mbarrier.arrive.expect_tx). With a rank, the arrival goes
               ///< to the mbarrier at the same offset in the cluster's CTA `rank`
               ///< (mapa.shared::cluster, then mbarrier.arrive.release.cluster.shared::cluster),
               ///< which must still be running (it normally waits on that mbarrier); waits are
               ///< always on the CTA's own mbarriers.
  MbarrierExpectTx, ///< (*i64_shared bar) -> (): thread 0 raises the current phase's expected
               ///< transaction count by `tx` bytes (1 <= tx < 2^20) without arriving
               ///< (mbarrier.expect_tx.relaxed.cta).
  MbarrierWait, ///< (*i64_shared bar, i32 or i1 scalar phase) -> (): every thread waits until
               ///< the phase of parity `phase & 1` has completed (a loop of
               ///< mbarrier.try_wait.parity); the memory accesses released by its arrivals and
               ///< the transactions it counted are visible after it. A fresh mbarrier is in
               ///< phase 0, so a wait on parity 1 returns at once.
  MbarrierInval, ///< (*i64_shared bar) -> (): thread 0 invalidates the mbarrier
               ///< (mbarrier.inval.shared::cta), after which its bytes may hold other data or a
               ///< new mbarrier. No thread may still use it: put a `barrier` before.
  FenceProxyAsync, ///< () -> (): every thread orders its earlier shared-memory accesses of the
               ///< generic proxy (ld/st) before later ones of the async proxy (TMA, wgmma) and
               ///< the other way round (fence.proxy.async.shared::cta, §9.7.13.4); with `global`,
               ///< its accesses to global memory instead (fence.proxy.async.global: a store
               ///< before a TMA copy that may read its bytes). GPU (sm_90+).
  FenceMbarrierInit, ///< () -> (): every thread releases its earlier mbarrier_init to the
               ///< cluster (fence.mbarrier_init.release.cluster, §9.7.13.4), before a cluster
               ///< barrier after which other CTAs arrive on them. GPU (sm_90+).
  BarrierArrive, ///< () -> (): the arriving half of named barrier `id` (0..15) of `threads`
               ///< threads (a multiple of 32; waiters and arrivers together): every thread of
               ///< the CTA arrives without waiting (bar.arrive id, threads; §9.7.13.1); the
               ///< barrier completes when `threads` threads have executed `barrier id= threads=`
               ///< or this. Warp-granular: every thread of a warp must execute the same one.
  AsyncCopyMbarrierArrive, ///< (*i64_shared bar) -> (): every thread makes the mbarrier track
               ///< its cp.async copies issued so far: one arrival when they have all completed,
               ///< which the mbarrier's count must include (cp.async.mbarrier.arrive.noinc,
               ///< §9.7.13.15; sm_80+).
  AsyncCopy,   ///< (*T_shared dst, *T src [, i1 mask]) -> (): tiles of one shape (src global):
               ///< each thread starts asynchronous copies of its elements, dst[i] = src[i], in
               ///< vectors of `vec` bytes (4, 8 or 16; 0: the widest the layout, the pointers'
               ///< contiguity and alignment and the mask's runs allow, at least 4 bytes; with
               ///< `vec` given the pointers must be aligned and contiguous for it and the mask
               ///< constant over each vector); a masked-off vector reads nothing and zero-fills
               ///< its bytes (cp.async.ca / .cg with src-size 0, PTX ISA §9.7.9.25.3; `.cg`, L2
               ///< only, for 16-byte vectors unless `cache=ca`). Each element is copied once
               ///< (replicated copies are not). The bytes are written by the time this thread's
               ///< async_wait_group (or an async_copy_mbarrier_arrive's phase) says its group
               ///< completed; other threads see them after a `barrier` that follows. sm_80+.
               ///< Or (*T_shared slot, *T src [, i1 mask]): a pipeline_slot of a cp.async
               ///< pipeline (pipeline-fills) as destination: with shared slots, src a tile of
               ///< its [rows, cols], which goes into the slot in the pipeline's layout (rows of
               ///< `ld` elements, or the NVMMA swizzle) in 16-byte vectors (`vec` 0 or 16);
               ///< with private slots, any tile, each thread's vectors of the pipeline's `copy`
               ///< bytes into its own chunks (copy k of thread t at (k * threads + t) * copy).
  AsyncCommitGroup, ///< () -> (): every thread closes a group of its async_copy copies issued
               ///< since its last commit (cp.async.commit_group). sm_80+.
  AsyncWaitGroup, ///< () -> (): every thread waits until at most `pending` (0..63) of its most
               ///< recently committed groups are incomplete (cp.async.wait_group pending), or,
               ///< written `all`, until every copy it issued has completed, committed or not
               ///< (cp.async.wait_all). sm_80+.
  // TMA (PTX ISA §9.7.9.25.5.2, cp.async.bulk.tensor; sm_90+): tensor map `map` is
  // Function::tensorMaps[map] (rank r, element type T, its box and swizzle), declared by the IR
  // (Function::declaredTensorMaps). Thread 0 issues each copy. A shared buffer a TMA op names is
  // placed 1024-byte aligned (allocate-shared); a pointer into it must stay 128-byte aligned
  // (1024 with a swizzle).
  TmaLoad,     ///< (*T_shared dst, *i64_shared bar, i32 coord_0..r-1) -> (): copies the box of
               ///< the tensor at element coordinates coord (outermost first; elements outside
               ///< the tensor read as zero) into dst, row-major and swizzled as the map says;
               ///< the copy completes the box's bytes as transactions on mbarrier `bar`, whose
               ///< phase must expect them (mbarrier_arrive tx=, mbarrier_expect_tx)
               ///< (...shared::cluster.global.tile.mbarrier::complete_tx::bytes). With
               ///< `multicast=n issuer=r` (SyncAttrs), thread 0 of the cluster's CTA r issues it,
               ///< and the box and its bytes land in every CTA of the cluster of n.
  TmaStore,    ///< (*T_shared src, i32 coord_0..r-1) -> (): copies the box at src to the tensor
               ///< at coord (elements outside it are not written), in thread 0's current bulk
               ///< group (...global.shared::cta.tile.bulk_group). src is read by the async
               ///< proxy: its writers must fence_proxy_async, then `barrier`, before
               ///< (insert-barriers adds them).
  TmaStoreCommit, ///< () -> (): thread 0 closes a bulk group of its TMA stores since the last
               ///< commit (cp.async.bulk.commit_group).
  TmaStoreWait, ///< () -> (): thread 0 waits until at most `pending` (0..63) of its latest bulk
               ///< groups are incomplete (cp.async.bulk.wait_group), or with `read` until they
               ///< have read their sources (.read; the buffers may then be written again, after
               ///< a `barrier` for the other threads).
  // The pipeline pass's slots (Function::pipelines, decided by transforms::pipeline): the
  // mbarriers of a TMA pipeline and the tensor maps, named for the ops above. sm_90+.
  PipelineMbarrier, ///< () or (i32 n) -> scalar *i64_shared: the mbarrier of slot `slot` of
               ///< pipeline `pipeline` (Function::pipelines[pipeline], filled by TMA), or of the
               ///< slot that fill number `n` (0 .. 2 * slots - 1, known at run time; printed
               ///< without `slot=`) takes, n mod slots: its "full"
               ///< barrier, whose phase completes when the slot's copy has landed (1 arrival, the
               ///< copy's bytes as transactions), or with `empty` a warp-specialised
               ///< pipeline's "empty" barrier, whose phase completes when the consumers have
               ///< released the slot. At pipeline_offset + barriers + 8 * slot (+ 8 * slots
               ///< for `empty`) of the CTA's shared memory.
  TensormapPrefetch, ///< () -> (): thread 0 brings tensor map `map` (Function::tensorMaps[map])
               ///< into the cache ahead of the copies that read it (prefetch.tensormap, PTX ISA
               ///< §9.7.9.15); a hint, with no effect on results. sm_90+.
  PipelineWait, ///< (tile v) -> (): every thread waits until the TMA copy that filled the slot
               ///< holding `v` has landed (a value of a TMA pipeline: a load marked
               ///< `pipeline=k`, its loop-carried copies, a tl.trans view of them): a loop of
               ///< mbarrier.try_wait.parity on the slot's mbarrier at the phase of that fill;
               ///< the slot's bytes are then visible to the thread and its wgmma. sm_90+.
  PipelineSlot, ///< (i32 n) -> scalar *T_shared: the first element of the slot of pipeline
               ///< `pipeline` that fill number `n` (0 .. 2 * slots - 1; a cp.async pipeline's 0 ..
               ///< slots - 1) takes, s = n mod slots, at pipeline_offset + offset + s * slot_bytes
               ///< of the CTA's shared memory; T has the pipeline's element size. A TMA fill's
               ///< destination (tma_load, box by box along the swizzle's columns; sm_90+) or a
               ///< cp.async fill's (async_copy; sm_80+).
  PipelineValue, ///< (i32 c) -> tile [rows, cols] of T: the tile that fill number `c` of pipeline
               ///< `pipeline` placed in its slots: slot c mod slots, for TMA in the phase of parity
               ///< c / slots of the slot's mbarrier (TMA fills are numbered 0 .. 2 * slots - 1,
               ///< cp.async fills 0 .. slots - 1, and wrap). Holds no registers: like the load
               ///< it replaces (pipeline-fills), it is one of the pipeline's values
               ///< (pipelineValues), which dots read in place and pipeline_wait waits for (TMA).
  // Shared buffers as matrices. A LocalAlloc with a swizzle (allocSwizzle() 32, 64 or 128: the
  // NVMMA shared layout that TMA writes and wgmma reads, PTX ISA §9.7.15.5.1 "Shared Memory
  // Matrix Layout") holds prod(shape[:-2]) matrices ("slots") of R x C = shape[-2:] elements:
  // C is cut into column blocks of swizzle bytes, each block R rows of swizzle bytes, blocks one
  // after the other; within each 8-row group the 16-byte chunks of a row are permuted by
  // XOR-ing the chunk index with bits 7.. of the byte offset (the row within 8 rows for a
  // 128-byte swizzle). Without a swizzle a buffer is row-major. The ops below take a scalar *T_shared `buf` that is a
  // LocalAlloc's pointer or one advanced by AddPtr (ir::sharedBuffer finds the alloc), at the
  // first element of one matrix (element offset a multiple of R * C; undefined otherwise).
  LocalLoad,   ///< (*T_shared buf) -> tile [R, C] of T (the alloc's last two dims; a rank-1
               ///< buffer: its one dim): the matrix at buf, in the result's layout.
  LocalStore,  ///< (*T_shared buf, tile [R, C] of T) -> (): writes the tile into the matrix at buf.
               ///< Every thread stores its own elements; others see them after a `barrier`, the
               ///< async proxy (wgmma, tma_store) after fence_proxy_async and then a `barrier`
               ///< (insert-barriers places both where they are missing).
  Wgmma,       ///< (a, *T_shared b, acc [M, N]) -> [M, N] of acc's dtype: starts acc + a @ b as
               ///< one asynchronous warpgroup MMA group (wgmma.fence, then wgmma.mma_async per
               ///< 64-row block, N chunk and K step, then wgmma.commit_group; PTX ISA §9.7.15).
               ///< `a` is a swizzled [M, K] matrix (with wgmmaTransA(): [K, M], M contiguous) or
               ///< a 16-bit register tile in the accumulator layout; `b` a swizzled [K, N]
               ///< matrix (wgmmaTransB(): [N, K], K contiguous). fp16/bf16 (fp32 acc), fp8
               ///< (fp32 acc, both K-major), int8 (int32 acc, both K-major), tf32 for fp32
               ///< (K-major). M a multiple of 64 per warpgroup (num_warps / 4 warpgroups along M),
               ///< N a multiple of 16 (<= 256 per instruction), K of 32 bytes. The result must pass
               ///< through WgmmaWait before any other op reads it (the verifier checks), and
               ///< the operands' matrices must not be written until then. sm_90a only.
  WgmmaWait,   ///< (tiles...) -> the same tiles: waits until at most `pending` (Op::sync; 0..7)
               ///< of this warpgroup's most recent wgmma groups are in flight
               ///< (wgmma.wait_group), then yields its operands, which are then readable.
               ///< Without operands it only waits (the groups it retires are read through a
               ///< later wait, or only by the next chained group: their operand buffers may
               ///< then be written again).
  WarpSpecialize, ///< () -> (): runs its regions concurrently on disjoint warps of the CTA
               ///< (FlagTree's tle.gpu.warp_specialize): region 0, the default partition, on the
               ///< kernel's num_warps warps 0..num_warps-1; region i >= 1, worker i, on the next
               ///< partitionWarps()[i-1] warps. Each region ends with a `yield` and may read
               ///< values defined before the op; workers only scalars (their ops are scalar and
               ///< GPU ops). partitionRegisters() (0: not given) are each partition's register
               ///< budgets, set on entry (setmaxnreg, PTX ISA §9.7.17.1: workers decrease to
               ///< theirs, the default partition increases to its own). Within a partition a
               ///< `barrier` without `id=` synchronises that partition's warps only (named
               ///< barrier 1 + region index); partitions order their accesses to shared buffers
               ///< through mbarriers. After the op the workers' warps have exited and the default
               ///< partition continues alone (its barriers stay named barrier 1). One per
               ///< kernel, at its top level; sm_90+ for register budgets.
  // --- Shape
  ExpandDims,  ///< (tile or scalar) -> tile with a size-1 dim inserted at axis().
  Broadcast,   ///< (tile) -> tile of the result shape; every size-1 dim of the operand is
               ///< stretched (operand and result have equal rank).
  Reduce,      ///< (tile) -> tile without dim axis() (or a scalar when the operand has rank
               ///< 1): combine reduceKind() (Sum adds in the operand dtype; Max/Min as Max/Min).
               ///< With ReduceKind::Combine (tl.reduce): N >= 1 operand tiles of one shape give
               ///< N results, and the op has one region, the combine function: its 2N scalar
               ///< arguments are (a_0..a_{N-1}, b_0..b_{N-1}) of the operands' element types and
               ///< it yields N scalars of those types. As in Triton, the combine must be
               ///< associative and commutative: the order of combination is unspecified.
  ConvertLayout, ///< (tile) -> the same tile in another layout (gpu stage only).
  Permute,     ///< (tile) -> tile with dims reordered: result dim i is operand dim permutation()[i]
               ///< (tl.trans, tl.permute).
  Reshape,     ///< (tile) -> tile of the result shape with the same elements in row-major
               ///< order (tl.reshape, tl.view).
  Cat,         ///< (a, b) -> a and b (same shape) concatenated along dim 0 (tl.cat).
  Join,        ///< (a, b) -> tile of shape a.shape + [2]: result[..., 0] = a, [..., 1] = b.
  Split,       ///< (x with last dim 2) -> (x[..., 0], x[..., 1]).
  Flip,        ///< (tile) -> same type with dim axis() reversed: result[..., i, ...] =
               ///< x[..., n - 1 - i, ...] for n = shape[axis()] (tl.flip).
  Histogram,   ///< (x [n] of an integer type but i1, [mask: i1 scalar or [n]]) -> [bins] of i32:
               ///< how many of x's elements (where mask holds) equal each of 0 .. bins - 1;
               ///< values outside that range are not counted (tl.histogram, Triton 3.6; bins a
               ///< power of two). Tile stage only: the pass lower-histograms rewrites it first
               ///< thing (transforms::lowerHistograms), on both targets.
  Gather,      ///< (src tile, index tile of integers) -> tile of index's shape and src's element
               ///< type: result[.., i, ..] = src[.., index[.., i, ..], ..] along dim axis()
               ///< (tl.gather, Triton 3.6). src and index have one rank (>= 1) and equal sizes
               ///< outside axis(); index is any integer type but i1, read by its signedness. TLE
               ///< defines an index outside [0, src.shape[axis()]) to give 0 (all bits zero; Triton
               ///< leaves it undefined). Every other element is src's, bit for bit (-0.0, NaN payloads).
  ExtractTile, ///< (x, i32 scalar index) -> tile of the result's shape T (tle.extract_tile): x
               ///< (a tile of shape S, or a scalar *T_shared pointing at a local_alloc buffer of
               ///< shape S holding the tile row-major, i1 as i8 bytes: the gpu stage's
               ///< shared-memory form, which every thread reads) is cut into windows of shape T whose origins step by
               ///< tileStrides() (strides[d] elements along dim d; empty: T, windows that do not
               ///< overlap), a grid of G[d] = (S[d] - T[d]) / strides[d] + 1 windows (ir::tileWindow).
               ///< The index, taken modulo prod(G) as an unsigned number, numbers the windows
               ///< row-major; result[c] = x[g * strides + c] for the window's grid coordinate g.
  InsertTile,  ///< (x, tile t, i32 scalar index) -> x's type (tle.insert_tile): x with the window
               ///< of t's shape at `index` (as for ExtractTile) replaced by t. Shared-memory form
               ///< (x a *T_shared buffer as above): no result; every thread writes its elements of
               ///< t into the buffer's window (replicated copies are not written twice). Window
               ///< forms (windowBuffer(), printed `window`; the gpu stage's staging of one window
               ///< through a buffer of the window's shape W, row-major): (*T_shared buf, tile x of
               ///< shape S, index) -> (): every thread writes its elements of x that lie in window
               ///< `index` (windows of shape W over S) to buf at their coordinate minus the
               ///< window's origin; (tile x of shape S, *T_shared buf, index) -> x's type: x with
               ///< the elements of window `index` read from buf.
  Scan,        ///< (tile) -> same shape: inclusive prefix combine (reduceKind()) along axis(),
               ///< from the end when isReverse() (tl.cumsum, tl.cumprod; sums in the operand
               ///< dtype, products as Mul). With ReduceKind::Combine (tl.associative_scan): N
               ///< operands and results and a combine region as for Reduce, which need only be
               ///< associative: result[i] = combine(...combine(x[0], x[1])..., x[i]), each call
               ///< combine(earlier, later); from the end, the mirror image (flip, scan, flip:
               ///< the later elements are the first argument). isExclusive() (Sum only;
               ///< tle.cumsum): result 0 holds, for each element, the sum of the elements before
               ///< it along the axis (after it, with isReverse(); 0 for the first), and result 1
               ///< their total along the axis (the operand's shape without dim axis(): a scalar
               ///< for rank 1), summed in an unspecified order.
  Dot,         ///< (a [M,K], b [K,N], acc [M,N]) -> [M,N] of acc's dtype: acc + a @ b (tl.dot).
               ///< a and b share a dtype (or are both fp8, of either format); fp16/bf16/fp8
               ///< products accumulate in fp32; fp32 inputs use TF32 (dotPrecision() ==
               ///< DotPrecision::TF32, Triton's default) or IEEE fp32 FMA (DotPrecision::IEEE);
               ///< integers accumulate in int32. fp8: maxNumImpreciseAcc() > 0 is Triton's
               ///< max_num_imprecise_acc (an fp32 addition every that many elements of K on
               ///< sm_90a). M, N, K >= 16.
  // --- Debugging (tl.device_print, tl.device_assert)
  Print,       ///< (values...) -> (): prints every element of every operand, one line each, as
               ///< Triton does: "pid (X, Y, Z) idx (I, J)<prefix>[(operand K) ]<value>" (idx
               ///< empty for scalars; "(operand K) " only with several operands). printPrefix()
               ///< is the prefix, already in Triton's form (" name: "); printHex() prints
               ///< integers and floats as hexadecimal bits. Without operands it prints "pid (X, Y, Z)<prefix>".
               ///< Each element is printed once (replicated copies are not). Order across
               ///< elements and programs is unspecified.
  Assert,      ///< (i1 cond) -> (): where an element of cond is false, the program stops with
               ///< the message assertMessage() (GPU: __assertfail, which traps the kernel; CPU: the run
               ///< fails with the message, location and program id). Emitted only in debug builds.
  Barrier,     ///< () -> (): a CTA-wide execution barrier (tl.debug_barrier; GPU `bar.sync 0`,
               ///< nothing on the CPU target, where a program is one thread). With a named
               ///< barrier `id` (0..15; Op::sync): `bar.sync id` for every thread of the CTA, or
               ///< with `threads` (a multiple of 32) for that many threads, waiters and arrivers
               ///< (BarrierArrive) together (PTX ISA §9.7.13.1). Named barrier 1 is the consumer
               ///< warps' barrier in a kernel the backend warp-specialises.
  GridDepControl, ///< () -> (): programmatic dependent launch (tl.extra.cuda.gdc_wait /
               ///< gdc_launch_dependents; PTX ISA 9.7.13.9 `griddepcontrol`, sm_90+).
               ///< launchDependents() false (wait): block until the grids this one depends on have completed and their
               ///< memory is visible; true (launch_dependents): let the dependent grid start
               ///< launching. A grid not launched as a programmatic dependent has nothing to wait
               ///< for, so targets without the instruction (sm_80, the CPU) emit nothing.
  // --- Control flow
  For,         ///< (lb, ub, step, init...) -> (final...): runs the body for iv = lb, lb+step,
               ///< ... while iv < ub (step must be positive). The body block's arguments are
               ///< (iv, iter...); it ends with Yield of the next iter values. numStages(): the
               ///< loop's `tl.range(num_stages=...)`, 0 when not given; warpSpecialize() and
               ///< flatten(): `tl.range(warp_specialize=True)` and `tl.range(flatten=True)`
               ///< (requests the GPU backend may decline).
  If,          ///< (i1 scalar cond) -> (results...): two regions, `then` and `else`, each
               ///< ending with a Yield of one value per result (same types); runs one of them.
  While,       ///< (init...) -> (results...): region 0 ("before") takes the carried values as
               ///< arguments and ends with Condition(cond, forwarded...); when cond is true,
               ///< region 1 ("after") runs with the forwarded values as arguments and yields the
               ///< next carried values; when false the forwarded values are the results.
  Condition,   ///< (i1 scalar cond, forwarded...) -> (): terminates a While's "before" region.
  Yield,       ///< Terminates a region, passing its operands to the parent op.
  Return,      ///< Terminates the function body.
};

const char *name(OpKind k);
bool isElementwise(OpKind k);

enum class CmpPred { Eq, Ne, Lt, Le, Gt, Ge };
const char *name(CmpPred p);
/// The combine of Reduce and Scan: a built-in one, or Combine, the op's region (tl.reduce,
/// tl.associative_scan).
enum class ReduceKind { Sum, Max, Min, Prod, Combine };
/// Read-modify-write operations of AtomicRMW (tl.atomic_*; Op::atomicKind).
enum class AtomicKind : int64_t { Add, Max, Min, And, Or, Xor, Xchg };
const char *name(AtomicKind k);
/// Memory ordering of atomics (Triton's `sem`; Op::memSem); PTX ISA §8.6.
enum class MemSem : int64_t { Relaxed, Acquire, Release, AcqRel };
const char *name(MemSem s);
/// Scope of atomics (Triton's `scope`; Op::memScope).
enum class MemScope : int { Gpu, Cta, Sys };
const char *name(MemScope s);
/// Precision of an fp32 tl.dot (Triton's input_precision; Op::dotPrecision).
enum class DotPrecision : int64_t { TF32 = 0, TF32x3 = 1, IEEE = 2 };
/// "tf32", "tf32x3", "ieee" (as the tile IR text spells it).
const char *name(DotPrecision p);
const char *name(ReduceKind k);
/// Cache operators of a global load or store (tl.load / tl.store cache_modifier; PTX ISA
/// §9.7.9.8 "Cache operators"): loads take ca, cg, cv; stores wb, cg, cs, wt.
enum class CacheHint : int64_t { None, CA, CG, CV, WB, CS, WT };
/// Eviction priority of a global load or store (eviction_policy; PTX ISA `.L1::evict_*` and an
/// L2 `createpolicy` of the same priority).
enum class EvictionHint : int64_t { None, EvictFirst, EvictLast };
/// ".ca", ".cg", ... (as tl.load spells them) or "" for None.
const char *cacheHintName(CacheHint h);
/// "evict_first", "evict_last" or "" for None.
const char *evictionHintName(EvictionHint h);

/// Which threads of the CTA execute an mbarrier arrival (MbarrierArrive's `per=`).
enum class Arrivers : int { Cta, Warp, Thread, Warpgroup };
const char *name(Arrivers a);
/// The cache operator of an async_copy (`cache=`): Auto is `.cg` for 16-byte vectors and `.ca`
/// for 4 and 8 (cp.async.cg copies 16 bytes only).
enum class CopyCache : int { Auto, CA, CG };
/// Named attributes of the GPU synchronisation and asynchronous-copy ops (OpKind::MbarrierInit
/// to AsyncCopyMbarrierArrive, and Barrier's named form); each kind's doc says which it reads,
/// the others keep these defaults. Printed as `key=value`, defaults left out.
struct SyncAttrs {
  int64_t count = 1;          ///< `count=`: arrivals (mbarrier_init, mbarrier_arrive)
  int64_t tx = 0;             ///< `tx=`: transaction bytes (mbarrier_arrive, mbarrier_expect_tx)
  int barrierId = -1;         ///< `id=`: named barrier 0..15 (barrier, barrier_arrive); -1: none
  int threads = 0;            ///< `threads=`: threads of a named barrier; 0: the whole CTA
  Arrivers per = Arrivers::Cta; ///< `per=`: who arrives (mbarrier_arrive)
  int vec = 0;                ///< `vec=`: bytes per copy (async_copy; 0: from the layout)
  CopyCache cache = CopyCache::Auto; ///< `cache=`: async_copy's cache operator
  int pending = 0;            ///< groups that may stay incomplete (async_wait_group N, tma_store_wait N)
  int map = -1;               ///< `map=`: the tensor map of tma_load / tma_store
  bool read = false;          ///< tma_store_wait `read`: until the sources are read
  bool relaxed = false;       ///< `relaxed`: a cluster_arrive that releases no memory accesses
  bool all = false;           ///< async_wait_group `all`: every copy, committed or not
  int pipeline = -1;          ///< `pipeline=`: the pipeline of a pipeline_mbarrier, _slot or _value
  int slot = 0;               ///< `slot=`: a pipeline_mbarrier's slot (when not an operand)
  bool empty = false;         ///< `empty`: the slot's release barrier (warp-specialised)
  bool global = false;        ///< fence_proxy_async `global`: for global memory, not the CTA's shared memory
  /// mbarrier_init `unchecked`: the author vouches for this mbarrier's protocol; the barrier-protocol
  /// check gives no warning where it cannot follow it (a wait that surely hangs is still an error).
  bool unchecked = false;
  /// signal_wait `keep`: the signals waited for are not consumed (tle.signal_wait(wait_kind="counter")).
  bool keep = false;
  /// tma_load `multicast=n`: the box lands in each of the cluster's n CTAs (ranks 0..n-1, n the
  /// cluster's size), at the destination's offset in each one's shared memory, and completes its
  /// bytes on each one's mbarrier at the mbarrier operand's offset (PTX ISA §9.7.9.25.5.2,
  /// .multicast::cluster); 0: this CTA only.
  int multicast = 0;
  /// tma_load `issuer=r` (with multicast): only the CTA of cluster rank r issues the copy.
  int issuer = 0;
  bool operator==(const SyncAttrs &o) const {
    return count == o.count && tx == o.tx && barrierId == o.barrierId && threads == o.threads && per == o.per &&
           vec == o.vec && cache == o.cache && pending == o.pending && map == o.map && read == o.read &&
           relaxed == o.relaxed && all == o.all && pipeline == o.pipeline && slot == o.slot && empty == o.empty &&
           global == o.global && unchecked == o.unchecked && keep == o.keep && multicast == o.multicast &&
           issuer == o.issuer;
  }
};
/// Whether `k` is one of the GPU synchronisation and asynchronous-copy ops (mbarriers, fences,
/// barrier_arrive, cp.async, TMA, local_load/local_store, wgmma): ops with effects on memory or
/// on other threads, which passes neither move loads across nor remove, and which only the GPU
/// target runs.
bool isGpuSyncOp(OpKind k);

/// An SSA value: an op result or a block argument.
class Value {
public:
  Type type;
  Op *def = nullptr;        ///< defining op, null for block arguments
  Block *owner = nullptr;   ///< block whose argument this is, null for op results
  unsigned index = 0;       ///< result or argument number
  std::string nameHint;     ///< source variable name, for printing
  const Layout *layout = nullptr; ///< gpu stage: how the tile is spread over threads

  explicit Value(Type t) : type(std::move(t)) {}
};

/// One basic block of a structured region.
class Block {
public:
  std::vector<std::unique_ptr<Value>> args;
  std::list<std::unique_ptr<Op>> ops;
  Op *parent = nullptr; ///< op owning this region, null for the function body

  Value *addArg(Type t, std::string hint = "");
  Op *terminator() const { return ops.empty() ? nullptr : ops.back().get(); }
  /// The position of `op` in ops (ops.end() when it is not one of this block's).
  std::list<std::unique_ptr<Op>>::iterator find(const Op *op);
  std::list<std::unique_ptr<Op>>::const_iterator find(const Op *op) const;
};

/// An operation. Its attributes are read and written through the named accessors below, grouped
/// by the kinds that have them (OpKind states what each means); an accessor stops with an
/// internal error when the op is of a kind without its attribute.
class Op {
public:
  OpKind kind;
  SourceLoc loc;
  std::vector<Value *> operands;
  std::vector<std::unique_ptr<Value>> results;
  std::vector<std::unique_ptr<Block>> regions;
  Block *parent = nullptr;

  /// LocalAlloc: byte offset of the buffer in the CTA's dynamic shared memory (16-byte aligned);
  /// an op the backend lowers through shared memory (transforms::scratchNeeds): where its scratch
  /// area starts (printed `scratch=N` after its types). Set by transforms::allocateShared; -1
  /// while not placed.
  int64_t sharedOffset = -1;
  /// The GPU synchronisation and asynchronous-copy ops' attributes (see SyncAttrs).
  SyncAttrs sync;

  Op(OpKind k, SourceLoc l) : kind(k), loc(l) {}
  Value *result(unsigned i = 0) const { return results[i].get(); }
  Value *addResult(Type t);

  /// Every attribute behind the accessors below, as one value: copied whole (Builder::clone)
  /// and compared whole (common-subexpression elimination; floats by their bits), its parts
  /// reachable only through the accessors.
  class Attributes {
  public:
    bool operator==(const Attributes &o) const;
    bool operator<(const Attributes &o) const;

  private:
    friend class Op;
    // Slots shared by the kinds, each accessor naming what its kind keeps in one.
    int64_t ival = 0, ival2 = 0;
    double fval = 0.0;
    int axis = 0;
    CmpPred pred = CmpPred::Eq;
    ReduceKind reduceKind = ReduceKind::Sum;
    std::vector<int64_t> ints, ints2;
    std::string sym, constraints;
    int pipeline = -1;         ///< Load, Permute: see pipeline()
    int64_t staging = -1;      ///< Store: see tmaStaging(); Dot: see dotStageK()
    int tmaMap = -1;           ///< Store: see storeTensorMap()
  };
  const Attributes &attributes() const { return a_; }
  void setAttributes(const Attributes &a) { a_ = a; }

  // --- ProgramId, NumPrograms: the grid axis (0..2); ExpandDims: the new size-1 dim; Reduce,
  // Scan, Flip: the dim reduced, scanned or reversed; Gather: the dim of src that index selects
  // along (0..rank-1; printed `axis=A`).
  int axis() const {
    need(__func__, K::ProgramId, K::NumPrograms, K::ExpandDims, K::Reduce, K::Scan, K::Flip, K::Gather);
    return a_.axis;
  }
  void setAxis(int d) {
    need(__func__, K::ProgramId, K::NumPrograms, K::ExpandDims, K::Reduce, K::Scan, K::Flip, K::Gather);
    a_.axis = d;
  }
  // --- Reduce, Scan: the combine (a built-in one, or Combine: the op's region).
  ReduceKind reduceKind() const { need(__func__, K::Reduce, K::Scan); return a_.reduceKind; }
  void setReduceKind(ReduceKind k) { need(__func__, K::Reduce, K::Scan); a_.reduceKind = k; }

  // --- Constant
  /// The integer value (two's complement, truncated to the dtype).
  int64_t intValue() const { need(__func__, K::Constant); return a_.ival; }
  void setIntValue(int64_t v) { need(__func__, K::Constant); a_.ival = v; }
  /// The float value; Builder::constInt sets it to an integer constant's value too.
  double floatValue() const { need(__func__, K::Constant); return a_.fval; }
  void setFloatValue(double v) { need(__func__, K::Constant); a_.fval = v; }
  // --- Arange: the half-open range [start, end) of the i32 values.
  int64_t arangeStart() const { need(__func__, K::Arange); return a_.ival; }
  int64_t arangeEnd() const { need(__func__, K::Arange); return a_.ival2; }
  void setArangeBounds(int64_t start, int64_t end) { need(__func__, K::Arange); a_.ival = start, a_.ival2 = end; }
  // --- Cmp: the comparison.
  CmpPred predicate() const { need(__func__, K::Cmp); return a_.pred; }
  void setPredicate(CmpPred p) { need(__func__, K::Cmp); a_.pred = p; }
  // --- FDiv: correctly rounded (tl.div_rn) rather than Triton's approximate `/`.
  bool isDivRn() const { need(__func__, K::FDiv); return a_.ival != 0; }
  void setDivRn(bool rn) { need(__func__, K::FDiv); a_.ival = rn; }
  // --- Cast: a narrowing float cast rounds toward zero instead of to nearest even.
  bool roundsTowardZero() const { need(__func__, K::Cast); return a_.ival != 0; }
  void setRoundTowardZero(bool rtz) { need(__func__, K::Cast); a_.ival = rtz; }
  // --- ExternCall: the device function's name (`__nv_*`).
  const std::string &callee() const { need(__func__, K::ExternCall); return a_.sym; }
  void setCallee(std::string f) { need(__func__, K::ExternCall); a_.sym = std::move(f); }
  // --- InlineAsm: the PTX text, its constraint string, the elements per run (pack) and
  // whether it is pure (no side effects).
  const std::string &asmText() const { need(__func__, K::InlineAsm); return a_.sym; }
  void setAsmText(std::string t) { need(__func__, K::InlineAsm); a_.sym = std::move(t); }
  const std::string &asmConstraints() const { need(__func__, K::InlineAsm); return a_.constraints; }
  void setAsmConstraints(std::string c) { need(__func__, K::InlineAsm); a_.constraints = std::move(c); }
  int64_t asmPack() const { need(__func__, K::InlineAsm); return a_.ival; }
  void setAsmPack(int64_t n) { need(__func__, K::InlineAsm); a_.ival = n; }
  bool asmPure() const { need(__func__, K::InlineAsm); return a_.ival2 != 0; }
  void setAsmPure(bool pure) { need(__func__, K::InlineAsm); a_.ival2 = pure; }
  // --- RawCall: the entry symbol, the LLVM module's text, and per operand the shape of the
  // buffer passed as a memref (empty: the operand is passed as it is).
  const std::string &rawSymbol() const { need(__func__, K::RawCall); return a_.sym; }
  void setRawSymbol(std::string s) { need(__func__, K::RawCall); a_.sym = std::move(s); }
  const std::string &rawModule() const { need(__func__, K::RawCall); return a_.constraints; }
  void setRawModule(std::string m) { need(__func__, K::RawCall); a_.constraints = std::move(m); }
  std::vector<std::vector<int64_t>> rawMemrefs() const;
  void setRawMemrefs(const std::vector<std::vector<int64_t>> &shapes);
  /// Whether fragments are in the contiguous layout (each thread's consecutive row-major
  /// elements) rather than the default blocked one (see ir::rawFragmentLayout).
  bool rawContiguous() const { need(__func__, K::RawCall); return a_.ival != 0; }
  void setRawContiguous(bool c) { need(__func__, K::RawCall); a_.ival = c; }
  /// The tile operand each result is the new fragment of.
  const std::vector<int64_t> &rawResultOperands() const { need(__func__, K::RawCall); return a_.ints2; }
  void setRawResultOperands(std::vector<int64_t> ops) { need(__func__, K::RawCall); a_.ints2 = std::move(ops); }
  /// What the native code does to shared memory (ir::RawSharedEffects bits; 0: unknown, taken
  /// as anything; printed `shared=none|access|async_copy|async_wait`, joined by `+`).
  int rawSharedEffects() const { need(__func__, K::RawCall); return static_cast<int>(a_.ival2); }
  void setRawSharedEffects(int e) { need(__func__, K::RawCall); a_.ival2 = e; }
  // --- Load and Store: cache operator and eviction priority (tl.load / tl.store hints), and
  // the tensor descriptor's block shape (empty for an access through pointers alone).
  CacheHint cacheHint() const { need(__func__, K::Load, K::Store); return static_cast<CacheHint>(a_.ival); }
  void setCacheHint(CacheHint h) { need(__func__, K::Load, K::Store); a_.ival = static_cast<int64_t>(h); }
  EvictionHint evictionHint() const { need(__func__, K::Load, K::Store); return static_cast<EvictionHint>(a_.ival2); }
  void setEvictionHint(EvictionHint h) { need(__func__, K::Load, K::Store); a_.ival2 = static_cast<int64_t>(h); }
  const std::vector<int64_t> &blockShape() const { need(__func__, K::Load, K::Store); return a_.ints; }
  void setBlockShape(std::vector<int64_t> s) { need(__func__, K::Load, K::Store); a_.ints = std::move(s); }
  /// Whether the access goes through a tensor descriptor (its operands follow the mask).
  bool hasDescriptor() const { return !blockShape().empty(); }
  /// Load: tl.load(volatile=True).
  bool isVolatile() const { need(__func__, K::Load); return (a_.axis & kLoadVolatile) != 0; }
  void setVolatile(bool v) { need(__func__, K::Load); a_.axis = v ? a_.axis | kLoadVolatile : a_.axis & ~kLoadVolatile; }
  /// Load: tle.load(is_async=True), FlagTree's `tt.load.async` (printed `async`): a hint that the
  /// load may become an asynchronous copy through shared memory (transforms::lowerAsyncLoads);
  /// it changes no value, and a load the pass cannot copy so stays a load.
  bool isAsyncHint() const { need(__func__, K::Load); return (a_.axis & kLoadAsync) != 0; }
  void setAsyncHint(bool a) { need(__func__, K::Load); a_.axis = a ? a_.axis | kLoadAsync : a_.axis & ~kLoadAsync; }
  /// Store: written with TMA from the descriptor alone (transforms::markTmaStores).
  bool isTmaStore() const { need(__func__, K::Store); return (a_.axis & kStoreTma) != 0; }
  void setTmaStore(bool tma) { need(__func__, K::Store); a_.axis = tma ? a_.axis | kStoreTma : a_.axis & ~kStoreTma; }
  /// Store (printed `bounds`): its mask, `offs < n` with offs an arange plus splatted scalars
  /// (transforms::BoundMask), is recomputed at the store from n rather than kept live from its
  /// compare (transforms::markBoundMasks). The verifier checks the mask has that form.
  bool isBoundsMask() const { need(__func__, K::Store); return (a_.axis & kStoreBounds) != 0; }
  void setBoundsMask(bool b) { need(__func__, K::Store); a_.axis = b ? a_.axis | kStoreBounds : a_.axis & ~kStoreBounds; }
  /// Load, Permute: the pipeline class (Function::pipelines) whose slots hold the load's value
  /// or that a tl.trans view reads with the other major order; -1: none (set by
  /// transforms::pipeline, printed `pipeline=k`).
  int pipeline() const { need(__func__, K::Load, K::Permute); return a_.pipeline; }
  void setPipeline(int k) { need(__func__, K::Load, K::Permute); a_.pipeline = k; }
  /// Store marked tma: the index of its descriptor in Function::tensorMaps (`map=k`), and the
  /// byte offset in the pipeline area of the staging area a store in a loop copies from
  /// (`staging=N`), -1 when it stages in the scratch area (transforms::pipeline).
  int storeTensorMap() const { need(__func__, K::Store); return a_.tmaMap; }
  void setStoreTensorMap(int k) { need(__func__, K::Store); a_.tmaMap = k; }
  int64_t tmaStaging() const { need(__func__, K::Store); return a_.staging; }
  void setTmaStaging(int64_t off) { need(__func__, K::Store); a_.staging = off; }
  // --- AtomicRMW: the operation; AtomicRMW and AtomicCAS: memory order and scope.
  AtomicKind atomicKind() const { need(__func__, K::AtomicRMW); return static_cast<AtomicKind>(a_.ival); }
  void setAtomicKind(AtomicKind k) { need(__func__, K::AtomicRMW); a_.ival = static_cast<int64_t>(k); }
  MemSem memSem() const { need(__func__, K::AtomicRMW, K::AtomicCAS); return static_cast<MemSem>(a_.ival2); }
  void setMemSem(MemSem s) { need(__func__, K::AtomicRMW, K::AtomicCAS); a_.ival2 = static_cast<int64_t>(s); }
  MemScope memScope() const { need(__func__, K::AtomicRMW, K::AtomicCAS); return static_cast<MemScope>(a_.axis); }
  void setMemScope(MemScope s) { need(__func__, K::AtomicRMW, K::AtomicCAS); a_.axis = static_cast<int>(s); }
  // --- LocalAlloc: the buffer's shape (elements row-major; see also sharedOffset).
  // --- SubmeshBarrier: the cluster ranks of its members, the first the leader (printed
  // `members=[...]`).
  const std::vector<int64_t> &submeshMembers() const { need(__func__, K::SubmeshBarrier); return a_.ints; }
  void setSubmeshMembers(std::vector<int64_t> m) { need(__func__, K::SubmeshBarrier); a_.ints = std::move(m); }
  const std::vector<int64_t> &allocShape() const { need(__func__, K::LocalAlloc); return a_.ints; }
  void setAllocShape(std::vector<int64_t> s) { need(__func__, K::LocalAlloc); a_.ints = std::move(s); }
  // --- LocalAlloc: its swizzle in bytes (0: row-major; 32, 64, 128: see OpKind::LocalLoad).
  int allocSwizzle() const { need(__func__, K::LocalAlloc); return static_cast<int>(a_.ival); }
  void setAllocSwizzle(int s) { need(__func__, K::LocalAlloc); a_.ival = s; }
  // --- Wgmma: operand a is [K, M] (M contiguous) / b is [N, K] (K contiguous) in shared memory.
  bool wgmmaTransA() const { need(__func__, K::Wgmma); return (a_.ival & 1) != 0; }
  bool wgmmaTransB() const { need(__func__, K::Wgmma); return (a_.ival & 2) != 0; }
  void setWgmmaTrans(bool a, bool b) { need(__func__, K::Wgmma); a_.ival = (a ? 1 : 0) | (b ? 2 : 0); }
  // --- WarpSpecialize: warps of each worker (region 1..), and the register budgets of every
  // partition, default first (0: not given).
  const std::vector<int64_t> &partitionWarps() const { need(__func__, K::WarpSpecialize); return a_.ints; }
  void setPartitionWarps(std::vector<int64_t> w) { need(__func__, K::WarpSpecialize); a_.ints = std::move(w); }
  /// The first warp of region `region` (the default partition's warps come first, 0 to
  /// numWarps - 1, then each worker's in order).
  int64_t partitionFirstWarp(size_t region, int64_t numWarps) const {
    int64_t first = region ? numWarps : 0;
    for (size_t k = 1; k < region; ++k)
      first += partitionWarps()[k - 1];
    return first;
  }
  const std::vector<int64_t> &partitionRegisters() const { need(__func__, K::WarpSpecialize); return a_.ints2; }
  void setPartitionRegisters(std::vector<int64_t> r) { need(__func__, K::WarpSpecialize); a_.ints2 = std::move(r); }
  // --- Permute: result dim i is operand dim permutation()[i].
  const std::vector<int64_t> &permutation() const { need(__func__, K::Permute); return a_.ints; }
  void setPermutation(std::vector<int64_t> p) { need(__func__, K::Permute); a_.ints = std::move(p); }
  // --- ExtractTile, InsertTile: the windows' strides in elements per dim (empty: the tile shape).
  const std::vector<int64_t> &tileStrides() const { need(__func__, K::ExtractTile, K::InsertTile); return a_.ints; }
  void setTileStrides(std::vector<int64_t> s) { need(__func__, K::ExtractTile, K::InsertTile); a_.ints = std::move(s); }
  // --- InsertTile: a window form (`window`), whose buffer holds the window only (see InsertTile).
  bool windowBuffer() const { need(__func__, K::InsertTile); return a_.ival2 != 0; }
  void setWindowBuffer(bool w) { need(__func__, K::InsertTile); a_.ival2 = w; }
  // --- Scan: combines from the last element toward the first.
  bool isReverse() const { need(__func__, K::Scan); return a_.ival != 0; }
  void setReverse(bool r) { need(__func__, K::Scan); a_.ival = r; }
  // --- Reduce: how many reduces right after this one join its exchange across warps through
  // shared memory (one pair of barriers for the batch; transforms::batchReduces); 0: none.
  int reduceBatchSize() const { need(__func__, K::Reduce); return static_cast<int>(a_.ival2); }
  void setReduceBatchSize(int n) { need(__func__, K::Reduce); a_.ival2 = n; }
  // --- Scan: exclusive sums and their total (two results; see OpKind::Scan).
  bool isExclusive() const { need(__func__, K::Scan); return a_.ival2 != 0; }
  void setExclusive(bool e) { need(__func__, K::Scan); a_.ival2 = e; }
  // --- Dot: the precision of fp32 inputs, and fp8's max_num_imprecise_acc (0: not given).
  DotPrecision dotPrecision() const { need(__func__, K::Dot); return static_cast<DotPrecision>(a_.ival); }
  void setDotPrecision(DotPrecision p) { need(__func__, K::Dot); a_.ival = static_cast<int64_t>(p); }
  int64_t maxNumImpreciseAcc() const { need(__func__, K::Dot); return a_.ival2; }
  void setMaxNumImpreciseAcc(int64_t n) { need(__func__, K::Dot); a_.ival2 = n; }
  /// Dot on wgmma (`async`, set by the wgmma-waits pass, transforms::placeWgmmaWaits): the dot
  /// only starts its wgmma group, whose result is in flight like a Wgmma op's until a
  /// wgmma_wait retires it (or a loop's wgmma_drain). Without it a wgmma dot waits for its own
  /// group before it completes.
  bool isAsyncWgmma() const { need(__func__, K::Dot); return a_.axis != 0; }
  void setAsyncWgmma(bool a) { need(__func__, K::Dot); a_.axis = a; }
  /// Dot on mma.sync whose operands the backend stages in shared memory (`stage_k=C`, set by
  /// allocate-shared when the whole staging would not fit, transforms::chunkableStaging): the
  /// operands are staged C columns of K at a time (A [M][C + pad], B [C][N + pad]), each round
  /// between two CTA barriers, instead of all K at once. -1: all K at once.
  int64_t dotStageK() const { need(__func__, K::Dot); return a_.staging; }
  void setDotStageK(int64_t c) { need(__func__, K::Dot); a_.staging = c; }
  // --- Print: the prefix (Triton's " name: " form), and whether numbers print as hex bits.
  const std::string &printPrefix() const { need(__func__, K::Print); return a_.sym; }
  void setPrintPrefix(std::string p) { need(__func__, K::Print); a_.sym = std::move(p); }
  bool printHex() const { need(__func__, K::Print); return a_.ival != 0; }
  void setPrintHex(bool hex) { need(__func__, K::Print); a_.ival = hex; }
  // --- Assert: the message.
  const std::string &assertMessage() const { need(__func__, K::Assert); return a_.sym; }
  void setAssertMessage(std::string m) { need(__func__, K::Assert); a_.sym = std::move(m); }
  // --- GridDepControl: launch_dependents (true) or wait (false).
  bool launchDependents() const { need(__func__, K::GridDepControl); return a_.ival != 0; }
  void setLaunchDependents(bool l) { need(__func__, K::GridDepControl); a_.ival = l; }
  // --- For: tl.range's num_stages (0: not given), warp_specialize and flatten.
  int64_t numStages() const { need(__func__, K::For); return a_.ival; }
  void setNumStages(int64_t n) { need(__func__, K::For); a_.ival = n; }
  bool warpSpecialize() const { need(__func__, K::For); return (a_.ival2 & kForWarpSpecialize) != 0; }
  void setWarpSpecialize(bool w) {
    need(__func__, K::For);
    a_.ival2 = w ? a_.ival2 | kForWarpSpecialize : a_.ival2 & ~kForWarpSpecialize;
  }
  bool flatten() const { need(__func__, K::For); return (a_.ival2 & kForFlatten) != 0; }
  void setFlatten(bool f) { need(__func__, K::For); a_.ival2 = f ? a_.ival2 | kForFlatten : a_.ival2 & ~kForFlatten; }
  /// `wgmma_drain` (set by the wgmma-waits pass): the loop leaves wgmma groups in flight from
  /// one iteration to the next, and its exit waits for every one (wgmma.wait_group 0), so its
  /// results are complete. A backend emits such a loop with the test at the bottom, the wait on
  /// the exit edge alone (ptxas serialises the loop's wgmma when a path with groups in flight
  /// reaches other code first: its warning C7514).
  bool wgmmaDrain() const { need(__func__, K::For); return (a_.ival2 & kForWgmmaDrain) != 0; }
  void setWgmmaDrain(bool d) {
    need(__func__, K::For);
    a_.ival2 = d ? a_.ival2 | kForWgmmaDrain : a_.ival2 & ~kForWgmmaDrain;
  }

private:
  using K = OpKind;
  /// Stops with an internal error unless the op is of one of `kinds`, naming the accessor `attr`.
  /// Checked in every build (a few compares per access): an accessor read on the wrong op kind
  /// would otherwise read another kind's slot and go on with a wrong value.
  template <typename... Kinds> void need(const char *attr, Kinds... kinds) const {
    if (((kind != kinds) && ...)) [[unlikely]]
      attributeMisuse(attr);
  }
  [[noreturn]] void attributeMisuse(const char *attr) const;
  /// For's flags (a_.ival2).
  static constexpr int64_t kForWarpSpecialize = 1, kForFlatten = 2, kForWgmmaDrain = 4;
  /// Load's and Store's flags (a_.axis).
  static constexpr int kLoadVolatile = 1, kLoadAsync = 2;
  static constexpr int kStoreTma = 1, kStoreBounds = 2;

  Attributes a_;
};

/// A kernel runtime parameter (constexpr parameters are folded away by specialisation).
struct Param {
  std::string name;
  ScalarType type;
  /// Divisibility promise from the signature (`:16`): for pointers in bytes, for integers of
  /// the value. 1 when absent.
  int64_t divisibility = 1;
  SourceLoc loc;
};

/// A TMA descriptor (CUDA's CUtensorMap) that the launcher builds on the host from the kernel's
/// arguments and passes by value (a `.param .align 64 .b8 [128]` grid constant) after the
/// kernel's params. Codegen creates one for each tensor descriptor (tl.make_tensor_descriptor)
/// whose loads it copies with TMA, and the tile IR may declare its own for TmaLoad / TmaStore
/// (text: `{fp16, base = %a, shape = [%M, 64], strides = [(%K * 2), 1], box = [64, 64],
/// swizzle = 128}`, a 32-bit product as `i32(%Z * %H)`); the runtime reads them from the
/// module metadata ("tensor_maps", docs/runtime.md).
struct TensorMapParam {
  /// One number of the descriptor: `value` times the product of the runtime params `params`
  /// (a constant when there are none), computed modulo 2^bits and sign-extended as the kernel
  /// computes it (bits 32: an i32 product such as Triton's `Z * H * N_CTX`).
  struct Source {
    std::vector<int> params;
    int64_t value = 1;
    int bits = 64;
    bool operator==(const Source &o) const { return params == o.params && value == o.value && bits == o.bits; }
  };
  DType dtype = DType::Invalid;       ///< element type
  int base = 0;                       ///< the param holding the global address of element 0
  std::vector<Source> shape, strides; ///< elements, outermost first; the last stride is 1
  std::vector<int64_t> box;           ///< elements one copy moves per dim, outermost first
  int swizzle = 0;                    ///< shared-memory swizzle span in bytes: 0, 32, 64, 128
  bool operator==(const TensorMapParam &o) const {
    return dtype == o.dtype && base == o.base && shape == o.shape && strides == o.strides && box == o.box &&
           swizzle == o.swizzle;
  }
};

/// The shared-memory slots of one pipelined load class, decided by transforms::pipeline (the
/// function attribute `pipelines = [...]`, entry k for the loads marked `pipeline=k`). A class is
/// a load and the values linked to it by loop carries (a prefetched loop's window: the
/// prologue's load, the body's argument, the refill it yields); its values live in the slots,
/// not in registers: each value's single "register" is its slot index (a fill count for TMA).
/// Byte offsets are from the start of the backend's pipeline area, which follows the buffers
/// of allocate-shared (Function::sharedBytes).
struct PipelineBuffer {
  int64_t base = 0;           ///< `offset`: byte offset of slot 0
  int64_t slotBytes = 0;      ///< `slot_bytes`: bytes per slot
  int slots = 1;              ///< slots: the loop's carried values plus the one being filled
  int64_t rows = 0, cols = 0; ///< the tile's shape (cols contiguous in global memory); private: 0
  /// `ld`: row length in elements of the padded layout (mma.sync operands read with ldmatrix,
  /// 16 bytes of padding per row; a restaged operand's unpadded rows); 0 when swizzled.
  int64_t ld = 0;
  /// 0: rows of `ld` elements; 32, 64 or 128: the NVMMA layout of that swizzle (IR.h, LocalAlloc).
  int swizzle = 0;
  unsigned elemBytes = 2; ///< bytes per element (`elem`)
  /// `tma=k`: filled by TMA copies through f.tensorMaps[k] (sm_90a), each completing on the
  /// slot's mbarrier; -1: cp.async copies (PTX ISA §9.7.9.25).
  int tmaMap = -1;
  /// `barriers`: TMA: byte offset of the slots' mbarriers (8 bytes each; in a warp-specialised
  /// kernel a second, "empty", set follows the "full" one).
  int64_t barBase = 0;
  /// `private`: a loop's prefetched load that no tl.dot reads: each thread copies its own
  /// registers' vectors of `copyBytes` (`copy`) and reads back only those (no barrier).
  bool privateSlots = false;
  int copyBytes = 16;
  /// `restaged`: a wgmma B operand of a type read only K-major (tf32, fp8, int8) loaded as
  /// [K, N]: the dot reads the slot into registers and stages it K-major.
  bool restaged = false;
  /// `dynamic`: TMA fills in a pipelined loop nested in a top-level loop (a persistent kernel):
  /// their fill counts are kept at run time across the inner loop's runs.
  bool dynamicFills = false;
  bool operator==(const PipelineBuffer &o) const;
};

/// A specialised kernel.
/// How long a bounded mbarrier wait waits (Function::boundedWaits), in nanoseconds of %globaltimer.
constexpr int64_t kBoundedWaitNs = 4'000'000'000;

class Function {
public:
  std::string name;
  /// Where the kernel is defined (its `def`), for errors about the kernel as a whole (resource
  /// limits); empty for functions parsed from tile IR text.
  SourceLoc loc;
  std::vector<Param> params;
  Block body; ///< args correspond one-to-one to params
  int numWarps = 4;
  /// Software-pipelining stages for dot-operand loads in loops (Triton's num_stages: shared-memory
  /// slots per operand; loads run num_stages - 1 iterations ahead). 0: the default (3); 1: none.
  int numStages = 0;
  /// The GPU architecture the function is compiled for ("sm_80", "sm_90a"; empty: not known),
  /// for passes whose rewrites pay off only where the backend has the instructions for them.
  std::string arch;
  /// Triton's enable_fp_fusion (default on): the GPU backend may contract a floating-point
  /// multiply and a dependent add or subtract into one fused multiply-add (`fma.rn`, one
  /// rounding). Off: every `*`, `+`, `-` rounds on its own (`mul.rn`, `add.rn`).
  bool fpFusion = true;
  /// Constexpr parameter values the kernel was specialised with, as source text.
  std::vector<std::pair<std::string, std::string>> constexprs;
  /// Bytes of dynamic shared memory the kernel needs, set by transforms::allocateShared: the
  /// end of its buffers (LocalAlloc), the pipeline area (pipelineOffset) and the ops' scratch
  /// areas, placed together by liveness (rounded up to 1024 when the kernel has buffers).
  int64_t sharedBytes = 0;
  /// Warps codegen added for warp specialisation (set by codegen): a producer warpgroup that
  /// issues the TMA copies, after the `numWarps` consumer warps that run the rest of the
  /// kernel. The block has 32 * (numWarps + producerWarps) threads.
  int producerWarps = 0;
  /// `bounded_waits`: every mbarrier wait (mbarrier_wait, a TMA pipeline's waits) gives up after
  /// kBoundedWaitNs of global time, prints where it waited (file:line, phase parity, block and
  /// thread) from lane 0 of each waiting warp, and traps: a debug build's protocol error fails
  /// instead of hanging (tlec --debug, @triton.jit(debug=True)).
  bool boundedWaits = false;
  /// Registers per thread of a warp-specialised kernel at launch (ptxas `.maxnreg`, set by the
  /// warp-specialize pass; its roles then move registers with `setmaxnreg`, PTX ISA §9.7.17.1);
  /// 0 when the kernel is not specialised.
  int maxRegisters = 0;
  /// The setmaxnreg budgets of tl.range(warp_specialize=True)'s roles (warp-specialize pass):
  /// `consumer_registers` for the num_warps consumer warps (0: they keep maxRegisters) and
  /// `producer_registers` for the producer warpgroup; 0 without such a split.
  int consumerRegisters = 0, producerRegisters = 0;
  /// CTAs per thread-block cluster along x, y, z (from tle.device_mesh; sm_90+). {1, 1, 1}:
  /// the kernel does not use clusters. The launch grid (in CTAs) must be a multiple of it.
  std::array<int, 3> cluster = {1, 1, 1};
  /// TMA descriptors passed after `params`, in this order: the `declaredTensorMaps` that the
  /// tile IR declares (`tensor_maps = [...]`, named by TmaLoad / TmaStore), then those codegen
  /// creates for its own TMA copies.
  std::vector<TensorMapParam> tensorMaps;
  int declaredTensorMaps = 0;
  /// Pipelined load classes (transforms::pipeline), and the bytes of the area that holds their
  /// slots, mbarriers and TMA-store staging areas (`pipeline_bytes`; the backend's scratch
  /// follows it while a pipeline is live, and starts at the area's beginning after that).
  std::vector<PipelineBuffer> pipelines;
  int64_t pipelineBytes = 0;
  /// Where allocate-shared placed the pipeline area (`pipeline_offset`): after the kernel's
  /// buffers, in bytes of the dynamic shared buffer.
  int64_t pipelineOffset = 0;
  /// Layouts referenced by values of this function (owned here).
  std::vector<std::unique_ptr<Layout>> layouts;
};

/// The launcher's recipe for the tensor-map number `v` (a scalar integer of `f`): a product of
/// `f`'s integer params and constants, each possibly widened by a strictly widening integer cast
/// (which keeps the value the param's bits give), multiplied in one width, 64 bits or signed 32
/// (where the kernel's product wraps, the launcher's does too), at most 4 multiplications deep.
/// Params are listed in the order met; nullopt when `v` is anything else.
std::optional<TensorMapParam::Source> tensorMapSource(const Function &f, const Value *v);

/// The tensor map (CUtensorMap, PTX ISA §9.7.9.25.5) of a tensor of `dtype` at `base` with the
/// given `shape` and `strides` (elements, outermost first; scalar integers of `f`), copied in
/// boxes of `box` elements into shared memory of `swizzle` bytes (0, 32, 64, 128). What TMA
/// and the launcher need: `base` a pointer param promised 16-byte aligned, every shape and stride
/// a product of integer params and constants (tensorMapSource; a constant dim at least 1), the
/// last stride 1 and the others whole 16-byte units (the params' divisibility), box dims of
/// at most 256 and box rows of whole 16-byte units. Otherwise nullopt, with the rule broken in
/// `why` (a phrase: "the last stride to be 1 (the contiguous dim)").
std::optional<TensorMapParam> tensorMap(const Function &f, DType dtype, const Value *base,
                                        const std::vector<const Value *> &shape,
                                        const std::vector<const Value *> &strides, const std::vector<int64_t> &box,
                                        int swizzle, std::string *why = nullptr);

/// Creates ops at an insertion point (the end of a block, or before an op).
class Builder {
public:
  explicit Builder(Block *b) : block_(b), before_(b->ops.end()) {}
  void setInsertionPointToEnd(Block *b) { block_ = b; before_ = b->ops.end(); }
  /// Insert before `it` (an iterator into b->ops).
  void setInsertionPoint(Block *b, std::list<std::unique_ptr<Op>>::iterator it) { block_ = b; before_ = it; }
  Block *block() const { return block_; }

  /// Creates an op with the given result types and operands and inserts it.
  Op *create(OpKind k, SourceLoc loc, std::vector<Value *> operands, std::vector<Type> resultTypes);
  /// Inserts a copy of `op` (kind, location, attributes, result types and name hints; no
  /// regions) with new operands.
  Op *clone(const Op &op, std::vector<Value *> operands);

  Value *constInt(SourceLoc loc, DType t, int64_t v);
  Value *constFloat(SourceLoc loc, DType t, double v);
  Value *splat(SourceLoc loc, Value *s, const std::vector<int64_t> &shape);
  /// An elementwise op of a's type. On fp8 operands the op is computed in fp32 (both formats
  /// convert to fp32 exactly) and the result rounded back to nearest even, saturating as a cast
  /// does: tile IR arithmetic never sees fp8 (the backends have no fp8 arithmetic).
  Value *binary(OpKind k, SourceLoc loc, Value *a, Value *b);
  Value *unary(OpKind k, SourceLoc loc, Value *a);
  /// Compares a and b (same type); fp8 operands compare as their exact fp32 values.
  Value *cmp(SourceLoc loc, CmpPred p, Value *a, Value *b);
  Value *select(SourceLoc loc, Value *c, Value *a, Value *b);
  Value *cast(SourceLoc loc, Value *v, ScalarType to);

private:
  Block *block_;
  std::list<std::unique_ptr<Op>>::iterator before_;
};

/// Ops Builder::create has made on the calling thread so far: Sema's measure of the compile-time
/// work a kernel asks for (its op budget, tle/Sema).
uint64_t opsCreatedOnThisThread();

/// The comma-separated constraints of an InlineAsm op, blanks removed ("=r, r" -> {"=r", "r"}).
std::vector<std::string> splitInlineAsmConstraints(const std::string &constraints);
/// The elements of `t` an InlineAsm operand register holds when `pack` elements go through one
/// asm statement: values narrower than 32 bits share 32-bit registers (32 / bits of them, at most
/// `pack`), wider ones take one register each (Triton's tl.inline_asm_elementwise packing).
/// An operand or result of `t` takes pack / inlineAsmElementsPerRegister registers.
int64_t inlineAsmElementsPerRegister(const Type &t, int64_t pack);
/// The asm operands (registers) of outputs `outs` and inputs `ins` with `pack`.
size_t inlineAsmRegisterCount(const std::vector<Type> &outs, const std::vector<Type> &ins, int64_t pack);
/// Why the InlineAsm constraint string `constraints` does not fit outputs `outs` and inputs `ins`
/// processed `pack` elements at a time (empty when it fits): one comma-separated constraint per
/// register (inlineAsmElementsPerRegister) of each output (`=r`, ...), then of each input (`r`,
/// ...), each register as wide as the elements it holds: r (32-bit integer), l (64-bit), h
/// (16-bit), f (fp32), d (fp64) (PTX ISA inline assembly constraints).
std::string inlineAsmConstraintError(const std::string &constraints, const std::vector<Type> &outs,
                                     const std::vector<Type> &ins, int64_t pack);
/// Why the operand references of the InlineAsm text `text` are malformed or name no operand of
/// the `numOperands` (outputs, then inputs), empty when all are valid. Accepted: `$N` and `${N}`
/// with N < numOperands, `${N:r}`, `$$` (a literal '$'), `${:uid}`, `${:comment}`, `${:private}`
/// (LLVM's inline asm string syntax; anything else aborts LLVM's asm printer).
std::string inlineAsmOperandError(const std::string &text, size_t numOperands);

/// Checks structural invariants (operand types and shapes per OpKind, terminators, dominance
/// of operands within structured regions). Returns an empty string when valid, else the first
/// problem found (an internal error: user errors are caught by Sema), e.g.
/// "'reduce' at line 3: axis out of range".
std::string verify(const Function &f);
/// The same check for hand-written tile IR: returns the problem without the line, e.g.
/// "'reduce': axis out of range", and sets `where` to the location of the op it concerns (left
/// invalid for a problem of the function as a whole).
std::string verify(const Function &f, SourceLoc &where);

/// The LocalAlloc whose buffer scalar shared pointer `p` points into: `p` is the alloc's result
/// or a scalar AddPtr chain from it; nullptr otherwise (a tile of pointers, a block argument,
/// a remote pointer). The rule by which LocalLoad, LocalStore and Wgmma find a matrix's layout.
const Op *sharedBuffer(const Value *p);

/// Replaces `from` by `to` in every operand of the ops of `b` from `it` on, their regions
/// included (the uses `to` dominates, when `it` follows its definition).
void replaceUsesFrom(Block &b, std::list<std::unique_ptr<Op>>::iterator it, const Value *from, Value *to);

/// The matrix shape [R, C] of LocalAlloc `alloc`'s buffer (its last two dims; [1, n] for rank 1).
std::array<int64_t, 2> matrixShape(const Op &alloc);

/// The windows of an ExtractTile or InsertTile (OpKind::ExtractTile): the source's shape S, the
/// tile's shape T, the strides between window origins and the grid G of windows per dim.
struct TileWindow {
  std::vector<int64_t> source, tile, strides, grid;
  int64_t count = 0; ///< prod(grid): the number of windows
  /// Element offset per dim of window `index` (taken modulo count, as an unsigned number).
  std::vector<int64_t> origin(int64_t index) const;
};
/// The windows of `op` (an ExtractTile or InsertTile, tile or shared-memory form). Assumes a
/// verified op.
TileWindow tileWindow(const Op &op);
/// Whether ExtractTile or InsertTile `op` works on registers only: its source is a tile and,
/// for an insert, not a window form (which reads a buffer).
bool tileOpInRegisters(const Op &op);
/// Why windows of shape `tile` stepping by `strides` (empty: `tile`) do not fit a source of shape
/// `source` ("" when they do): same rank, 1 <= tile[d] <= source[d], strides[d] >= 1 and
/// (source[d] - tile[d]) a multiple of strides[d].
std::string tileWindowError(const std::vector<int64_t> &source, const std::vector<int64_t> &tile,
                            const std::vector<int64_t> &strides);

/// Prints the function in the tile IR text form (deterministic value numbering).
/// With `withLayouts`, tile types carry their layout (the gpu stage).
void print(std::ostream &os, const Function &f, bool withLayouts = false);

/// Calls `fn` for every op of `b` and of nested regions, in order (pre-order).
template <typename F> void walk(Block &b, F &&fn) {
  for (auto &op : b.ops) {
    fn(*op);
    for (auto &r : op->regions)
      walk(*r, fn);
  }
}

} // namespace tle::ir
