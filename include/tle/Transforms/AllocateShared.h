// allocate-shared: a byte offset in the CTA's dynamic shared memory for every shared buffer of a
// kernel, from the buffers' live ranges, so that buffers never live at once share bytes.
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

#include <cstdint>

namespace tle::transforms {

/// What allocateShared did: buffers placed, how many of them reuse bytes of a buffer that died
/// before they were allocated, and the bytes the buffers take in all (Function::sharedBytes).
struct SharedAllocation {
  int buffers = 0;
  int reused = 0;
  int64_t bytes = 0;
};

/// The most dynamic shared memory one CTA may use on `arch`, in bytes: 227 KiB on sm_90a, 163
/// KiB on sm_80 (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability",
/// the opt-in maximum per block).
int64_t sharedMemoryLimit(const std::string &arch);

/// Places every LocalAlloc (tle.gpu.alloc) of `f` and sets its Op::sharedOffset.
///
/// Positions: each top-level op of the kernel body is one, except a top-level warp_specialize,
/// whose default partition's ops (region 0, run in order by the kernel's num_warps warps) are
/// positions of their own after the op's; the op itself and its workers' ops span the op's
/// position and all of the partition's, since the workers run alongside it. Below, "the
/// position of an op" is that of the positioned op that is or holds it.
///
/// Live range of a buffer, in positions: from the alloc's position to the last position
/// holding a use of a value derived from its pointer (AddPtr, Splat, Broadcast and any other op
/// with a derived operand and a pointer result; a loop or branch with a derived operand or
/// yield makes its results and block arguments derived). A use
/// inside a loop or branch keeps the buffer for the whole loop or branch. An asynchronous copy
/// goes on after its op: a buffer an async_copy or tma_load writes or a tma_store or wgmma reads
/// stays live to the last position holding a wait that may complete it (async_wait_group or
/// mbarrier_wait, mbarrier_wait, tma_store_wait, wgmma_wait respectively), or to the end of the
/// kernel when no such wait follows the copy. A buffer that holds an mbarrier (an mbarrier op or tma_load
/// names it) lives to the end unless an mbarrier_inval names it (PTX ISA §9.7.13.15: its bytes
/// may be used otherwise only after mbarrier.inval). A buffer is live to the
/// end of the kernel when its pointer escapes what the analysis sees: shared with the cluster
/// (RemotePtr: other CTAs may access it until they exit) or stored to memory as a value; one
/// shared with the cluster is live from the kernel's start as well (other CTAs may write it
/// as soon as they pass the cluster entry barrier, before this CTA reaches its alloc).
///
/// Buffers are placed in program order, each at the lowest 16-byte aligned offset (1024-byte for
/// a swizzled buffer, LocalAlloc's swizzle, and one a tma_load or tma_store names: the swizzle
/// patterns repeat every 1024 bytes of the address) that overlaps no placed buffer
/// whose live range meets its own, so a kernel whose buffers all live to the end
/// gets them one after another, as declared. Reuse is safe because insert-barriers (which runs
/// after this pass) orders every shared-memory access after a conflicting one by a CTA barrier,
/// whichever buffer the two belong to.
///
/// After the buffers, by the same rule, come the areas the backend lays out, so they take the
/// bytes of buffers dead or not yet allocated where they live: the pipeline area
/// (f.pipelineOffset, f.pipelineBytes from transforms::pipeline; 1024-byte aligned, live from
/// the kernel's start to the last position that uses it, usesPipelineArea), then per position
/// one scratch area for the ops there (transforms::scratchNeeds, the largest need; each op's
/// sharedOffset; a TMA store's staging lives to the end), so scratch lies past the pipeline area
/// while that is live and takes its bytes after; scratch areas of different positions share
/// bytes (the backend opens each op's scratch writes with a barrier). On IR without layouts only
/// the buffers are placed. Sets f.sharedBytes to the kernel's total (rounded up to 1024 when the
/// kernel has buffers of its own).
///
/// Errors (reported to `diags` at the alloc that does not fit, with the total and the limit; the
/// pass then places nothing more): the buffers need more than sharedMemoryLimit(f.arch) bytes at
/// once. Returns what it did; `diags` may be null (then an error only stops the placement).
SharedAllocation allocateShared(ir::Function &f, DiagnosticEngine *diags);

} // namespace tle::transforms
