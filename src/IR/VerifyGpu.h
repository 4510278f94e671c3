// Internal to the IR library: the verifier's rules for the GPU stage (VerifyGpu.cpp), called by
// Verifier.cpp.
#pragma once

#include "tle/IR/IR.h"

#include <string>

namespace tle::ir {

/// Why one of `f`'s tensor maps cannot be encoded (cuTensorMapEncodeTiled's limits), or "":
/// rank 1..5 with one shape, stride and box dim each; a base param pointing to the dtype;
/// integer params in the products; the last stride 1; box dims 1..256, the inner one a multiple
/// of 16 bytes and, with a swizzle (32, 64 or 128 bytes), at most the swizzle span.
std::string tensorMapsError(const Function &f);

/// The split cluster barrier's phases in `b`, entered with `arrived` (this thread has arrived and
/// not yet waited): cluster_arrive needs none pending, cluster_wait one, cluster_barrier none;
/// each region of a loop or branch leaves the state as it found it (every path and iteration
/// arrives once per wait). Sets `arrived` to the state at the end of `b`; returns the problem
/// (at `where`) or "".
std::string clusterPhases(const Block &b, bool &arrived, SourceLoc &where);

/// The operand, shape and dtype rules of a LocalLoad, LocalStore, Wgmma, WgmmaWait or
/// WarpSpecialize `op` of `f` (IR.h states them); "" when it follows them, else the problem.
std::string verifyMatrixOp(const Function &f, const Op &op);
/// TmaLoad / TmaStore `op` with tensor map `map`, when its buffer's alloc is known
/// (ir::sharedBuffer): the buffer's swizzle is the map's, and the box fits the buffer from the
/// pointer's constant element offset (0 when it is not constant). "" or the problem.
std::string verifyTmaBuffer(const Op &op, const TensorMapParam &map);
/// A scalar AddPtr into a local_alloc buffer by constant offsets stays within the buffer (up to
/// one past its end). "" or the problem.
std::string verifySharedPointer(const Op &addptr);
/// The layout rules of a LocalAlloc's swizzle (32, 64 or 128 bytes; matrices of whole column
/// blocks and 8-row groups); "" without a swizzle or when they hold.
std::string verifySwizzledAlloc(const Op &alloc);
/// The rules of one GPU synchronisation or copy op (IR.h states them); "" when `op` follows
/// them, else the problem: a Barrier's or BarrierArrive's named barrier (namedBarrierError), an
/// AsyncCopy's operands and vector (asyncCopyError), a PipelineMbarrier's pipeline and slot of
/// `fn` (pipelineMbarrierError), a PipelineSlot's or PipelineValue's pipeline, operand and result
/// (pipelineSlotError), a SubmeshBarrier's counter and members (submeshBarrierError), a TmaLoad's or TmaStore's tensor map of `fn`, buffer, mbarrier
/// and coordinates (tmaCopyError), an mbarrier op's operands and counts (mbarrierOpError).
std::string namedBarrierError(const Op &op);
std::string asyncCopyError(const Function &fn, const Op &op);
std::string pipelineMbarrierError(const Function &fn, const Op &op);
std::string pipelineSlotError(const Function &fn, const Op &op);
std::string submeshBarrierError(const Function &fn, const Op &op);
std::string tmaCopyError(const Function &fn, const Op &op);
std::string mbarrierOpError(const Op &op);
/// The rules across ops: a wgmma's result is read only by wgmma_wait; one warp_specialize per
/// kernel, whose partitions' named barriers (1..regions) no other barrier names, and before
/// which the kernel computes on scalars only. Sets `where` to the offending op.
std::string verifyMatrixFunction(const Function &f, SourceLoc &where);

} // namespace tle::ir
