// Internal to the NVPTX target: per-thread LLVM IR emission state for one kernel.
#pragma once

#include "tle/IR/IR.h"
#include "tle/IR/Layout.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Transforms/AxisInfo.h"
#include "tle/Transforms/Scratch.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace tle::nvptx {

/// Links the raw functions' modules into the kernel's module `m` (after emission, before
/// libdevice): clang's module flags and target attributes dropped, helpers renamed and made
/// internal, globals internal, each entry (the symbols of `callers`, each with the location of a
/// raw_call of it) internal, always_inline and convergent, so that the O3 pipeline inlines it into
/// the kernel (TLE-Raw, RawCode.cpp). The native code sees the block geometry the kernel's
/// `.reqntid threads, 1, 1` fixes: blockDim (%ntid) is the constant (threads, 1, 1), threadIdx.y/z
/// are 0 and threadIdx.x is known to be below `threads`, so loops strided by blockDim.x unroll. A function or global the native code uses that
/// nothing defines is a located error. Returns the bytes of the modules' shared-memory variables
/// (the kernel's static shared memory).
int64_t linkRawModules(llvm::Module &m, std::vector<std::unique_ptr<llvm::Module>> raws,
                       const std::map<std::string, SourceLoc> &callers, int threads, DiagnosticEngine &diags);

/// ceil(log2(x)) for x >= 1: the number of index bits of x registers (tile extents are powers of two).
inline int log2i(int64_t x) {
  int k = 0;
  while ((int64_t(1) << k) < x)
    ++k;
  return k;
}

/// Emits the body of one kernel. A scalar IR value becomes one LLVM value (the same in every
/// thread); a tile becomes one LLVM value per register of its layout.
class Emitter {
public:
  Emitter(ir::Function &f, llvm::Module &m, DiagnosticEngine &diags);
  llvm::Function *run();

  // Types
  llvm::Type *llvmType(ir::ScalarType t);
  llvm::Type *storageType(ir::ScalarType t); ///< i1 is stored as i8

  // Thread geometry, computed once in the entry block.
  llvm::Value *laneId() const { return lane_; }
  llvm::Value *warpId() const { return warp_; }
  /// The coordinate along each dim contributed by this thread's lane and warp in `l`.
  const std::vector<llvm::Value *> &laneWarpCoord(const ir::Layout &l);
  /// Full coordinate of register `r` of `l` in this thread.
  std::vector<llvm::Value *> coord(const ir::Layout &l, int r);
  /// Row-major linear index of a coordinate in `shape`.
  llvm::Value *linearize(const std::vector<llvm::Value *> &c, const std::vector<int64_t> &shape);

  // Values
  std::vector<llvm::Value *> &regs(const ir::Value *v);
  llvm::Value *scalar(const ir::Value *v);
  /// v's registers as seen in layout `l` (free renumbering; see ir::registerMap).
  std::vector<llvm::Value *> regsIn(const ir::Value *v, const ir::Layout &l);

  // Shared memory: one dynamic buffer; every use is barrier, write, barrier, read.
  llvm::Value *smemPtr(llvm::Value *byteOffset);
  /// The op being emitted lays out `bytes` of scratch from scratchBase_: they must lie within
  /// what allocate-shared placed for it (scratchRoom_); an internal error otherwise.
  void assertScratchFits(int64_t bytes);
  /// Pointer into the whole shared buffer, below the scratch area smemPtr() hands out.
  llvm::Value *smemRaw(llvm::Value *byteOffset);
  void barrier();

  // Ops
  void emitBlock(const ir::Block &b);
  void emitOp(const ir::Op &op);
  void emitFor(const ir::Op &op);
  void emitIf(const ir::Op &op);
  void emitWhile(const ir::Op &op);
  /// The registers of `v` as a region result in layout `like` (a scalar has one).
  std::vector<llvm::Value *> regsLike(const ir::Value *v, const ir::Value *like);
  void emitLoad(const ir::Op &op);
  void emitStore(const ir::Op &op);
  // Shared buffers and clusters (ClusterOps.cpp). Where the buffers live is decided by the
  // allocate-shared pass (Op::sharedOffset), and the barriers around their accesses and the
  // cluster exit protocol by insert-barriers: the emitter only translates those ops.
  /// LocalAlloc: the address of its buffer, at its Op::sharedOffset.
  void emitLocalAlloc(const ir::Op &op);
  /// RemotePtr: `mapa.shared::cluster.u64` per register (PTX ISA §9.7.9.24).
  void emitRemotePtr(const ir::Op &op);
  /// ClusterBarrier: barrier.cluster.arrive (release) and barrier.cluster.wait (acquire).
  void emitClusterBarrier(SourceLoc loc);
  /// GridBarrier: a CTA barrier, thread 0's arrival on the module's counter __tle_grid_barrier
  /// (atom.add.release.gpu) and its spin until the counter's top bit flips (ld.acquire.gpu),
  /// then a CTA barrier (FlagTree's grid barrier).
  void emitGridBarrier();
  /// OpKind::SubmeshBarrier: the grid barrier's counter scheme on the leader's shared memory.
  void emitSubmeshBarrier(const ir::Op &op);
  /// OpKind::DeviceBarrier: grid barrier, CTA 0's epoch exchange with every peer GPU through
  /// the communicator's signal area (Devices.cpp), grid barrier.
  void emitDeviceBarrier(const ir::Op &op);
  /// OpKind::SignalWait: thread 0's ld.acquire.sys spin and consuming subtraction, CTA barrier.
  void emitSignalWait(const ir::Op &op);
  /// ClusterArrive / ClusterWait: one half of the split cluster barrier (PTX ISA §9.7.13.3).
  void emitClusterArrive(const ir::Op &op);
  void emitClusterWait(SourceLoc loc);
  // GPU synchronisation ops (SyncOps.cpp): mbarriers, proxy fences, named barriers, each
  // translated alone.
  /// The ops of ir::isGpuSyncOp, and Barrier's named form (`id=`).
  void emitSyncOp(const ir::Op &op);
  /// TmaLoad, TmaStore and their bulk-group ops: thread 0 issues each (SyncOps.cpp).
  void emitTmaOp(const ir::Op &op);
  /// AsyncCopy: one cp.async per vector of the source tile's layout (SyncOps.cpp).
  void emitAsyncCopy(const ir::Op &op);
  /// The bytes each cp.async of AsyncCopy `op` copies: its `vec=`, else the widest vector the
  /// layout, the pointers' contiguity and alignment and the mask allow (4, 8 or 16); a located
  /// error when that is under 4 bytes or `vec=` exceeds the layout's contiguous registers.
  int asyncCopyBytes(const ir::Op &op);
  /// MbarrierArrive: the threads `per` picks arrive, on this CTA's mbarrier or (a rank operand)
  /// on another cluster CTA's.
  void emitMbarrierArrive(const ir::Op &op);
  /// The 32-bit shared address of the mbarrier that scalar `bar` points to.
  llvm::Value *mbarrierAddress(const ir::Value *bar);
  /// True in the threads that `who` names: thread 0, lane 0 of each warp, or every thread.
  llvm::Value *syncThreads(ir::Arrivers who);
  /// Every thread loops on mbarrier.try_wait.parity until the phase of parity `parity` (i32 0
  /// or 1) of the mbarrier at shared address `bar` has completed.
  /// Every thread waits until mbarrier `bar`'s phase of parity `parity` (i32 0/1) completes: a
  /// loop of try_wait (with a memory clobber: the wait orders the shared-memory accesses after
  /// it). Under Function::boundedWaits it gives up after ir::kBoundedWaitNs, reporting `site`.
  /// `cluster`: the wait acquires at cluster scope (mbarrier.try_wait...acquire.cluster, PTX ISA
  /// §9.7.13.15.16), for an mbarrier that other CTAs of the cluster arrive on (their arrivals
  /// release at cluster scope, which an acquire at CTA scope does not synchronise with).
  void waitMbarrierParity(llvm::Value *bar, llvm::Value *parity, SourceLoc site, bool clobberMemory,
                          bool cluster = false);
  /// Whether mbarrier pointer `bar` points into a local_alloc that some remote mbarrier_arrive
  /// (one with a rank operand) arrives on.
  bool remotelyArrived(const ir::Value *bar);
  std::set<const ir::Op *> remoteMbarriers_; ///< those local_allocs (filled at the first query)
  bool remoteMbarriersKnown_ = false;
  /// %globaltimer (ns, i64).
  llvm::Value *globalTimer();
  /// A bounded wait's end: lane 0 of the warp prints `fmt` (printf, with `value`, the block
  /// index and the thread index), then the thread traps.
  void reportTimeout(const std::string &fmt, llvm::Value *value);
  /// The PTX state space of a pointer: "global", "shared" or "shared::cluster".
  static const char *stateSpace(ir::AddrSpace s);
  /// For a store marked `bounds` (transforms::markBoundMasks; its mask is an ir::BoundMask,
  /// `offs < n` or `<=`, in the pointer tile's layout l with register and lane/warp bits
  /// disjoint): register r's element is in bounds iff `rc(r) < d` (or `<=`), with rc(r) the
  /// register's constant offset and d = n - start - scalars - (the thread's index), one value
  /// per thread. The store computes its predicates from d (`setp` in its own asm) instead of
  /// reading the mask's registers. Indices are assumed not to overflow i32, as the address
  /// arithmetic already does. Returns d and whether the comparison is `<=`; null d for a store
  /// without the mark.
  std::pair<llvm::Value *, bool> boundsMask(const ir::Op &store);
  /// A pointer as an inline-asm address operand and its constraint: shared (CTA) addresses are
  /// 32 bits (PTX ISA §5.1.3's shared window; the module uses 32-bit pointers there), so they
  /// take one register ("r") instead of a pair; global and cluster addresses are 64 bits ("l").
  std::pair<llvm::Value *, const char *> addressOperand(llvm::Value *p, ir::AddrSpace s);
  /// A tensor-descriptor store written with TMA (transforms::tmaStore; tensor map `map`): the
  /// tile goes into a swizzled staging area in shared memory, then thread 0 issues one
  /// cp.async.bulk.tensor per swizzle span of columns (a box) in one bulk async-group (PTX ISA
  /// §9.7.9.25.5.2); TMA leaves out the elements outside the tensor, as the descriptor's bounds
  /// check does. At the top level the staging area is scratch space, and thread 0 waits until
  /// the copies have read it. In a loop (a persistent kernel's epilogue) it is the store's own
  /// (TmaStaging), and the copies run on while the loop goes on: thread 0 waits only before a
  /// staging buffer is written again (cp.async.bulk.wait_group.read) and before the block exits
  /// (tma_store_wait read, placed by the pipeline pass). Where the tile's layout gives each thread's boxes from its register bits
  /// alone (the wgmma accumulator's does), the boxes go through two box-sized buffers in turn,
  /// one bulk group per box, instead of one buffer of the whole tile.
  void emitTmaStore(const ir::Op &op, int map);
  /// The staging area of a TMA store in a loop: `buffers` buffers of `bytes` each from byte
  /// `offset` of the shared buffer; each holds `boxes` boxes of the tile (all of them when
  /// `buffers` is 1).
  struct TmaStaging {
    int64_t offset = 0, bytes = 0;
    int buffers = 1, boxes = 1;
  };
  std::map<const ir::Op *, TmaStaging> tmaStaging_;
  bool genericGlobalWrites_ = false; ///< the kernel writes global memory other than by TMA stores
  /// Emits `body` in a branch that thread 0 alone takes: TMA stores' bulk copies and their waits
  /// (predicating them instead makes ptxas step through the warp's lanes).
  void onThreadZero(const std::function<void()> &body);
  /// Inside a branch that only the CTA's (or partition's) first thread takes (issueRegion): ops
  /// IR.h gives to thread 0 need no predicate or branch of their own.
  bool firstThreadOnly_ = false;
  /// Whether `ifOp` (no results, an empty `else`) holds only ops that thread 0 issues (TMA
  /// copies and their commits and waits, expect-tx and other single arrivals on a local
  /// mbarrier) and scalar arithmetic for their operands: then thread 0 alone takes its branch
  /// (its condition and'ed with the thread test), which spares each op its own predicate and
  /// ptxas a walk over the warp's lanes per copy.
  bool issueRegion(const ir::Op &ifOp) const;
  /// Stores tile `v` (its registers in its layout) into shared memory at byte offset `base` in
  /// the swizzled layout that wgmma and TMA read: dim `contig` of the tile becomes the
  /// contiguous one, in column blocks of `swizzle` bytes, each `rows` rows (swizzledOffset).
  /// 16-byte vectors where the registers are contiguous along `contig` (bytes packed into
  /// 32-bit words first, which NVPTX would store one word at a time); replicated registers once.
  void storeSwizzled(const ir::Value *v, int contig, int64_t rows, int swizzle, int64_t base);
  /// The same for registers `r` of a tile of type `t` held in layout `l`.
  /// With `box` >= 0 only the registers whose column block (of `swizzle` bytes) is `box` are
  /// stored; the layout's lane and warp bits must then stay within one column block.
  void storeSwizzled(const ir::Layout &l, const std::vector<llvm::Value *> &r, const ir::Type &t, int contig,
                     int64_t rows, int swizzle, int64_t base, int box = -1);
  /// storeSwizzled by stmatrix (sm_90, 16-bit elements, a tile in the mma / wgmma accumulator's
  /// fragment layout: four 8 x 8 matrices per instruction, 16 bytes per thread, instead of one
  /// 4-byte store per register pair); false, storing nothing, for any other case.
  bool storeMatrices(const ir::Layout &l, const std::vector<llvm::Value *> &r, const ir::Type &t, int contig,
                     int64_t rows, int swizzle, int64_t base, int box);
  /// The registers of async value `v` (a padded slot, `ld` elements per row) as layout `l`
  /// holds them: one ld.shared per register, after the copies were waited for.
  std::vector<llvm::Value *> slotRegisters(const ir::Value *v, const ir::Layout &l);
  /// Whether some async operand class is copied with TMA (and so has mbarriers to set up and retire).
  bool tmaLoads() const {
    return std::any_of(buffers_.begin(), buffers_.end(), [](const AsyncBuffer &buf) { return buf.tmaMap >= 0; });
  }
  /// tl.reduce / tl.sum / tl.max ...: within threads, across lanes by shuffles, across warps
  /// through shared memory; the reduces of its batch (the batch-reduces pass's `batch=N`, right
  /// after it) share the exchange.
  void emitReduce(const ir::Op &op);
  /// A reduce between its in-warp steps and its cross-warp exchange: per output register of
  /// the sliced layout S, one partial per operand.
  struct ReducePartials {
    const ir::Op *op;
    ir::Layout S;                                ///< the result layout (the input's sliced along the axis)
    std::vector<int> warpBits;                   ///< warp bits that move along the axis
    std::vector<std::vector<llvm::Value *>> acc; ///< [S register][operand]
  };
  /// Steps 1-2 of a reduce: within each thread, then a butterfly across the axis' lanes.
  ReducePartials reduceWithinWarps(const ir::Op &op);
  /// Step 3 for every reduce of a batch: their partials through shared memory, each reduce in
  /// its own region, between one pair of barriers.
  void reduceAcrossWarps(std::vector<ReducePartials> &parts);
  /// Reduces emitted with the reduce that leads their batch (batch=N); emitBlock skips them (once).
  std::set<const ir::Op *> batchedReduces_;
  /// Whether bit `bit` of this thread's lane id is set.
  llvm::Value *laneBitSet(int bit);
  /// shuffleXor of each value.
  std::vector<llvm::Value *> shuffledAll(const std::vector<llvm::Value *> &v, int laneMask);
  void emitConvert(const ir::Op &op);
  void emitDot(const ir::Op &op);
  /// Fatal located error for a `stage_k=C` dot (Op::dotStageK, hand-written tile IR) that the
  /// backend cannot stage in rounds: wgmma, FMA, tf32, or an operand read from a pipeline slot.
  [[noreturn]] void stageKUnsupported(const ir::Op &op);
  void emitShapeOp(const ir::Op &op);
  /// tl.gather (OpKind::Gather): src stored row-major to the scratch area between barriers,
  /// then each thread reads src[.., index, ..] for its own registers of index (the result's
  /// layout is index's), one ld.shared each; an index outside [0, src.shape[axis]) reads
  /// element 0 and yields 0 (ShapeOps.cpp).
  void emitGather(const ir::Op &op);
  /// ExtractTile / InsertTile of a tile in registers: each thread picks or replaces its own
  /// registers (ir::windowRegisters; the index is a constant) (TileOps.cpp).
  void emitTileOp(const ir::Op &op);
  /// Their shared-memory form: each thread reads (extract) or writes (insert) its elements of
  /// the window in the row-major buffer, 16-byte vectors where registers and origins allow.
  void emitSharedTileOp(const ir::Op &op);
  /// insert_tile's window forms (TileOps.cpp): x's elements in the window to or from a buffer of
  /// the window's shape.
  void emitWindowTileOp(const ir::Op &op);
  /// Window `w`'s origin for `op`'s index operand: constants for a constant index.
  std::vector<llvm::Value *> windowOrigin(const ir::Op &op, const ir::TileWindow &w);
  void emitScan(const ir::Op &op);
  /// An exclusive scan's total (result 1) from each operand register's line total: a scalar, or
  /// the registers of the operand's slice layout (ShapeOps.cpp).
  std::vector<llvm::Value *> scanTotals(const ir::Op &op, const std::vector<llvm::Value *> &lineTotal);
  /// The warp rounds of an exclusive rank-1 scan whose warp bits are its highest index bits
  /// (owners[firstWarp..]): each warp's total (T[rep]) through shared memory once, then every
  /// thread adds the totals of the warps before its own to P and sets T to the whole total.
  void exchangeWarpTotals(const ir::Op &op, const std::vector<transforms::AxisBit> &owners, size_t firstWarp, int rep,
                          std::vector<std::vector<llvm::Value *>> &P, std::vector<std::vector<llvm::Value *>> &T);
  void emitAtomic(const ir::Op &op);
  /// tl.inline_asm_elementwise: one asm statement per `pack` registers.
  void emitInlineAsm(const ir::Op &op);
  /// raw_call: a call of the raw function, declared in the kernel's module; its LLVM module is
  /// parsed once per symbol and kept in rawModules_ for linkRawModules (RawCode.cpp).
  void emitRawCall(const ir::Op &op);
  llvm::Function *rawCallee(const ir::Op &op);
  /// The raw functions' LLVM modules the kernel calls, in the kernel's context, not yet linked.
  std::vector<std::unique_ptr<llvm::Module>> rawModules_;
  std::map<std::string, SourceLoc> rawCallers_; ///< each raw callee's symbol: a call's location
  /// Each libdevice function an ExternCall names: a call's location (for checkLibdeviceCalls).
  std::map<std::string, SourceLoc> externCallers_;
  /// tl.device_print: one vprintf per element (once per element: replicated copies and, for
  /// scalars, every thread but the first are predicated off) (DebugOps.cpp).
  void emitPrint(const ir::Op &op);
  /// tl.device_assert: __assertfail in every thread holding a false element (DebugOps.cpp).
  void emitAssert(const ir::Op &op);
  /// A private constant global holding `text` and a terminating NUL, as a generic pointer.
  llvm::Value *globalString(const std::string &text, const std::string &name);

  // --- Asynchronous operand pipelines (AsyncCopy.cpp): loads whose values only travel through
  // loop-carried values into tl.dot operands are copied with cp.async straight into one of
  // `slots` shared-memory slots (num_stages of them in a pipelined loop); such a value's single
  // "register" is its slot index.
  /// One class's slots, as the pipeline pass placed them (ir::PipelineBuffer, offsets from the
  /// pipeline area's start).
  using AsyncBuffer = ir::PipelineBuffer;
  /// Whether wgmma reads async value `v` straight from its slot (not restaged).
  bool wgmmaReadsSlot(const ir::Value *v) const { return isAsync(v) && !asyncBuffer(v).restaged; }
  /// Private slots: the registers of async value `v` (a loop-carried prefetched load), read
  /// from its slot after cp.async.wait_group; once per value in the block it is used in.
  std::vector<llvm::Value *> &materializePrivate(const ir::Value *v);
  bool isPrivateAsync(const ir::Value *v) const { return isAsync(v) && asyncBuffer(v).privateSlots; }
  std::map<const ir::Value *, std::vector<llvm::Value *>> privateRegs_;
  std::set<const ir::Value *> privateActive_; ///< private values standing in as registers now
  /// Reads the pipeline pass's decisions (Function::pipelines, the `pipeline=k` marks, TMA
  /// stores' maps and staging, f.producerWarps) into buffers_, asyncOf_ and the tables below.
  void loadPipelines();
  bool isAsync(const ir::Value *v) const { return asyncOf_.count(v) > 0; }
  const AsyncBuffer &asyncBuffer(const ir::Value *v) const { return buffers_[asyncOf_.at(v)]; }
  /// The byte offset of slot `slot` (an i32 index) of `buf` in the pipeline area (smemRaw's):
  /// buf.base + slot * buf.slotBytes.
  llvm::Value *slotOffset(const AsyncBuffer &buf, llvm::Value *slot);
  /// cp.async of tile `ptrs` (global pointers in layout `l`; `mask` may be null) into the slot of
  /// `buf` at byte `slotBase` of the pipeline area, in the slot's layout (`ld`-element rows or the
  /// NVMMA swizzle), 16 bytes per copy, each element once (a masked-off vector zero-fills).
  void copyIntoSlot(const AsyncBuffer &buf, llvm::Value *slotBase, const ir::Value *ptrs, const ir::Value *mask,
                    const ir::Layout &l);
  /// async_copy into a pipeline_slot (pipeline-fills' cp.async fill): copyIntoSlot.
  void emitSlotCopy(const ir::Op &copy);
  /// Private slots: each thread copies its own registers' vectors of tile `ptrs` (layout `l`,
  /// `mask` may be null) into its chunks of slot `slot` of `buf` (privateCopyBase), copyBytes
  /// per cp.async; a masked-off vector zero-fills its chunk.
  void copyIntoPrivateSlot(const AsyncBuffer &buf, llvm::Value *slot, const ir::Value *ptrs, const ir::Value *mask,
                           const ir::Layout &l);
  /// Private slots: the byte offset of this thread's first copy in slot `slot` of `buf`; its copy
  /// k lies k * threads * copyBytes further.
  llvm::Value *privateCopyBase(const AsyncBuffer &buf, llvm::Value *slot);
  void emitOpImpl(const ir::Op &op);
  /// Byte address (32-bit shared window) of the slot holding async value `v`.
  llvm::Value *asyncSlotAddr(const ir::Value *v);
  /// The slot index of async value `v` (for TMA values, its fill count modulo the slots).
  llvm::Value *asyncSlotIndex(const ir::Value *v);
  /// The slot of fill number `c` of `buf`: c mod slots for a TMA pipeline (c < 2 * slots), `c`
  /// itself for cp.async slots (counted modulo the slots).
  llvm::Value *fillSlot(const AsyncBuffer &buf, llvm::Value *c);
  bool isTma(const ir::Value *v) const { return isAsync(v) && asyncBuffer(v).tmaMap >= 0; }
  /// The shared address (32-bit window) of buffer `buf`'s mbarrier for slot `slot`.
  llvm::Value *tmaBarrierAddr(const AsyncBuffer &buf, llvm::Value *slot);
  /// pipeline_wait ops right before a for loop, which emitFor emits (emitBlock defers them).
  std::vector<const ir::Op *> loopWaits_;
  /// pipeline_mbarrier: the address of a pipeline slot's mbarrier; tensormap_prefetch;
  /// pipeline_wait.
  void emitPipelineOp(const ir::Op &op);
  /// Every thread waits until the TMA copy of `v` has landed (its mbarrier phase completed).
  void waitTma(const ir::Value *v);
  /// Every thread waits until the phase of parity `parity` (i32 0 or 1) of the mbarrier at
  /// shared address `bar` has completed.
  /// The generic address of TMA descriptor k (a grid-constant kernel param).
  llvm::Value *tensorMapAddr(int k);
  /// Byte offset of element (row, col) in a [rows, cols] tile (cols contiguous) stored in the
  /// wgmma layout with `swizzle`-byte swizzling: columns in blocks of swizzle/elemBytes, each
  /// block rows x swizzle bytes, 16-byte chunks XOR-permuted within every 8 rows (the pattern
  /// of the PTX ISA's "Shared Memory Matrix Layout" for wgmma, §9.7.15.5.1). The block's base
  /// must be aligned to 8 * swizzle bytes.
  llvm::Value *swizzledOffset(llvm::Value *row, llvm::Value *col, int64_t rows, int swizzle, unsigned elemBytes);
  /// Where a wgmma operand sits in shared memory: a [rows, cols] matrix, cols contiguous, in the
  /// swizzled layout of `swizzle` bytes (swizzledOffset), at 32-bit shared address `base`.
  struct WgmmaSmem {
    llvm::Value *base = nullptr;
    int64_t rows = 0, cols = 0;
    int swizzle = 0;
    /// Whether the contiguous dim is K (wgmma's default "K-major"); otherwise M or N
    /// ("MN-major", the instruction's transpose flag).
    bool kMajor = true;
  };
  /// One wgmma group: A [M, K] (a matrix in shared memory, or with `regA` the registers `aRegs`
  /// of a 16-bit tile in the accumulator layout) times B [K, N] (ops[1]), inputs `in` and `inB`.
  struct WgmmaIssue {
    WgmmaSmem ops[2];
    bool regA = false;
    std::vector<llvm::Value *> aRegs;
    ir::DType in, inB;
    int64_t M = 0, N = 0, K = 0;
    int64_t maxNumImpreciseAcc = 0; ///< fp8: Op::maxNumImpreciseAcc (0: not given)
    SourceLoc loc;
  };
  /// Issues `w` on the accumulator registers `C` (mmaAccLayout of [M, N]; all-zero constants
  /// start from scale-d 0): wgmma.fence, the wgmma.mma_async instructions, wgmma.commit_group
  /// (PTX ISA §9.7.15). Returns true with the group in flight and `C` its (not yet readable)
  /// outputs; false when it waited for the group itself (fp8 with promoted accumulation) and
  /// `C` is complete.
  bool issueWgmma(const WgmmaIssue &w, std::vector<llvm::Value *> &C);
  /// Wgmma (the tile IR op): its matrices' descriptors from their buffers (ir::sharedBuffer),
  /// then issueWgmma; the result's registers are in flight until a WgmmaWait.
  void emitWgmmaOp(const ir::Op &op);
  /// WgmmaWait: wgmma.wait_group `pending`, the operands' registers passed through it.
  void emitWgmmaWait(const ir::Op &op);
  /// LocalLoad / LocalStore: the matrix's elements at their offsets in its buffer's layout
  /// (swizzledOffset), 16-byte vectors where the registers are contiguous.
  void emitLocalMove(const ir::Op &op);
  /// WarpSpecialize: each partition on its warps (a branch on the warp id), register budgets
  /// by setmaxnreg; the workers exit after their region, the default partition goes on.
  void emitWarpSpecialize(const ir::Op &op);
  /// The named barrier and thread count of the partition being emitted (OpKind::WarpSpecialize):
  /// id 0 (the CTA, bar.sync 0) outside partitions. Within a partition tid_ and warp_ count from
  /// its first thread (emitWarpSpecialize).
  int partitionBarrier_ = 0, partitionThreads_ = 0;
  /// Whether this is the first thread of the CTA, or of the partition being emitted (its
  /// "thread 0", which issues the ops IR.h gives to thread 0): `tid` (this thread's index in the
  /// partition, however the caller computed it) == 0.
  llvm::Value *firstThread(llvm::Value *tid) { return B.CreateICmpEQ(tid, B.getInt32(0)); }
  /// Whether `dot` runs on wgmma.mma_async (sm_90a, fp16/bf16, warps along M in whole
  /// warpgroups); otherwise mma.sync.
  bool useWgmma(const ir::Op &dot) const;
  void emitWgmma(const ir::Op &dot);
  /// wgmma.wait_group `pending`, with `C` (accumulator registers) passed through it and replaced.
  void waitWgmma(std::vector<llvm::Value *> &C, int pending = 0);
  /// Target architecture ("sm_80", "sm_90a").
  std::string arch = "sm_80";
  /// Stores tiles `parts` (of one layout) to the scratch area, element c of parts[k] at element
  /// index linear(c) * stride + k + offset (row-major): one tile (stride 1), or a join's two
  /// interleaved (stride 2), or one of them (stride 2, offset 0 or 1). Vectors of up to 16
  /// bytes where registers are consecutive in memory. Callers put barriers around it.
  void storeToShared(const std::vector<const ir::Value *> &parts, int64_t stride, int64_t offset);
  /// Loads the registers of tiles `results` (of one layout) from element index
  /// linear(c) * stride + k + offset, the inverse of storeToShared: one list per result.
  std::vector<std::vector<llvm::Value *>> loadFromShared(const std::vector<const ir::Value *> &results, int64_t stride,
                                                         int64_t offset);
  /// How many consecutive registers of `v` (with `parts` tiles interleaved at `stride`) one
  /// 16-byte-at-most vector access of storeToShared/loadFromShared moves: 1 unless parts == stride.
  int stagedVectorWidth(const ir::Value *v, int parts, int64_t stride, int64_t offset);
  /// Byte offset in the scratch area of each register of `l` (a tile of `shape`, `eb` bytes an
  /// element) at element index linear(coord) * scale + offset: for power-of-two dims the thread's
  /// part once and a constant per register, else the whole index per register.
  std::vector<llvm::Value *> stagedElementOffsets(const ir::Layout &l, const std::vector<int64_t> &shape, unsigned eb,
                                                  int64_t scale, int64_t offset);
  llvm::Value *elementwise(const ir::Op &op, const std::vector<llvm::Value *> &in);
  /// A cast from or to fp8 (`towardZero`: fp_downcast_rounding="rtz"): cvt on sm_89+, integer
  /// code otherwise (tle/Target/Fp8.h); saturating as cvt.rn.satfinite.
  llvm::Value *castFp8(llvm::Value *a, ir::DType from, ir::DType to, bool towardZero);
  /// Whether `arch` has the fp8 cvt instructions (sm_89 and later).
  bool hasFp8Cvt() const;
  /// The SM version of the target architecture (90 for sm_90a, 80 for sm_80).
  unsigned smVersion() const;
  /// Register-index bits of `v`'s layout that only move an element within an aligned run of
  /// equal values (axis-info constancy) or not at all (zero bases: replicated registers):
  /// registers differing in these bits hold one value.
  int equalRegisterBits(const ir::Value *v);
  llvm::Value *combine(ir::ReduceKind k, ir::DType t, llvm::Value *a, llvm::Value *b);
  /// The combine of Reduce / Scan `op` on (a, b), one value per operand: the built-in kind, or
  /// the op's combine region emitted inline on these scalars.
  std::vector<llvm::Value *> combineValues(const ir::Op &op, const std::vector<llvm::Value *> &a,
                                           const std::vector<llvm::Value *> &b);
  /// combineValues on this thread's values and a partner's, in element order: (partner, mine)
  /// where `upper` (this thread holds the later elements), else (mine, partner). Built-in
  /// combines, which are commutative, skip the selects.
  std::vector<llvm::Value *> combineOrdered(const ir::Op &op, llvm::Value *upper, const std::vector<llvm::Value *> &mine,
                                            const std::vector<llvm::Value *> &partner);
  llvm::Value *shuffleXor(llvm::Value *v, int laneMask);
  /// An inclusive scan (tl.cumsum / tl.cumprod, `reverse` too) computed over the bits of the
  /// index along the axis: within registers, across lanes by shuffles, across warps through
  /// shared memory. Returns false (emitting nothing) when the layout mixes the axis with other
  /// dims; emitScan then uses shared memory for every step.
  bool emitScanByBits(const ir::Op &op);
  /// Predicate that is true in exactly one thread among those holding the same element of
  /// `l` (lane and warp bits with a zero basis must be 0).
  llvm::Value *ownerPredicate(const ir::Layout &l);
  /// Vector width (elements) for a global access through pointer tile `ptr` with `mask`.
  int vectorWidth(const ir::Value *ptr, const ir::Value *mask);

  llvm::Value *declareIntrinsicCall(unsigned id, llvm::ArrayRef<llvm::Type *> tys, llvm::ArrayRef<llvm::Value *> args);

  ir::Function &f;
  llvm::Module &m;
  llvm::LLVMContext &ctx;
  DiagnosticEngine &diags;
  llvm::IRBuilder<> B;
  transforms::AxisInfoAnalysis axis;

private:
  llvm::Function *kernel_ = nullptr;
  llvm::BasicBlock *entry_ = nullptr;
  llvm::Value *tid_ = nullptr, *lane_ = nullptr, *warp_ = nullptr;
  llvm::GlobalVariable *smem_ = nullptr;
  int64_t sharedBytes_ = 0;
  /// Bytes at the start of the shared buffer that the IR's own buffers take (Function::sharedBytes
  /// as allocate-shared left it, a multiple of 1024, so that codegen's swizzled areas after them
  /// stay aligned).
  int64_t userBytes_ = 0;
  std::map<const ir::Value *, std::vector<llvm::Value *>> vals_;
  std::map<std::string, std::vector<llvm::Value *>> coordCache_;
  std::set<const ir::Value *> used_; ///< values some op reads
  std::map<const ir::Value *, int> asyncOf_;   ///< value -> index into buffers_
  std::vector<AsyncBuffer> buffers_;
  /// Where smemPtr's scratch area starts, from userBytes_ (it may be below: allocate-shared
  /// places scratch wherever the bytes are free): the scratch offset of the op being emitted
  /// (Op::sharedOffset); and the bytes it may use there (its transforms::scratchNeeds; -1: none).
  int64_t scratchBase_ = 0, scratchRoom_ = -1;
  std::map<const ir::Op *, transforms::ScratchNeed> scratchNeeds_;
  const ir::Block *curBlock_ = nullptr; ///< the block emitBlock is emitting ops of
  /// Async values that are transposed views (tl.trans) of a slot: their dim 0 is the slot's
  /// contiguous dim.
  std::set<const ir::Value *> asyncTransposed_;
  std::map<const ir::Op *, int> tmaStores_; ///< TMA stores -> their index into f.tensorMaps
  int smemAlign_ = 16; ///< alignment of the shared buffer (1024: wgmma's swizzle repeats every 1024 bytes)
};

} // namespace tle::nvptx
