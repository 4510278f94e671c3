// The barrier-protocol check (TLE-Struct): runs a kernel's mbarrier protocol at compile time and
// reports the wait that can never complete.
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

#include <string>
#include <utility>
#include <vector>

namespace tle::transforms {

/// A located finding of checkBarrierProtocols, with notes at the other side of the protocol.
struct BarrierFinding {
  bool warning = false; ///< found in a trial with assumed arguments, or a protocol not followed
  SourceLoc loc;
  std::string message;
  std::vector<std::pair<SourceLoc, std::string>> notes;
  bool race = false; ///< a buffer overwritten while an asynchronous unit may read it (not a hang)
  bool notFollowed = false; ///< the warning that the protocol depends on what the check cannot follow
};

/// Runs the mbarrier protocol of `f` (tile IR as Sema makes it: the mbarriers of
/// tle.gpu.alloc_barriers, tle.pipe and tle.gpu.copy, each a slot of an i64 local_alloc; or as
/// the passes leave it: a pipeline's slot mbarriers, pipeline_mbarrier ops) on one program, or
/// on one cluster for a kernel with clusters (its CTAs are programs 0 to size - 1 along x, each
/// with its own mbarriers and partitions): the scalar code of every partition of its
/// warp_specialize runs concurrently (the
/// default partition with the kernel's warps, worker i with partitionWarps()[i-1]), each until an
/// mbarrier_wait whose phase has not completed stops it. An mbarrier counts as the PTX ISA
/// defines it (§9.7.13.15): mbarrier_init sets its arrival count C in phase 0;
/// mbarrier_arrive adds `count` arrivals per arriving thread (per=cta: one; per=warp: one per
/// warp of the partition; per=warpgroup: one per 4 warps; per=thread: every thread) and
/// `tx` expected bytes, on this CTA's mbarrier or, with a rank operand, on the same mbarrier of
/// the cluster's CTA of that rank (a rank outside the cluster is reported); async_copy_mbarrier_arrive one arrival per thread of the partition
/// (cp.async.mbarrier.arrive.noinc: the copies are assumed to land); mbarrier_expect_tx expects
/// bytes; a tma_load completes its box's bytes (at issue: the copy itself is assumed to finish),
/// and a multicast one, in the CTA of its `issuer` rank, writes its box and completes its bytes
/// in every CTA of the cluster (in the others it does nothing);
/// the phase completes when its C arrivals and its expected bytes are all in, and a wait on parity
/// p returns once the current phase's parity is not p. Returns, when every partition is stopped at
/// a wait that nothing left can complete, the hang: located at one partition's wait, with the
/// mbarrier's state and a note at each other partition's wait; and an arrival on a phase whose
/// arrivals are complete while its bytes are outstanding (the arrival count would underflow), and
/// a wait or arrival on an mbarrier not initialised. When the protocol depends on the kernel's
/// integer arguments (a loop bound, a branch, a slot or phase computed from them), it is run with
/// every such argument 16, 64, 256 and 1024 in turn on a grid of one program (one cluster), and
/// a hang in a trial is returned as a warning naming the values. A protocol it cannot follow at
/// all (a value read from memory) is never passed silently: a warning
/// at the op where the run stopped names the mbarriers concerned, with a note at the memory read.
/// Warnings are left out for mbarriers whose every mbarrier_init is `unchecked` (the author
/// vouches for them: check_protocol=False); a hang for every launch stays an error. The run also
/// follows the shared buffers' asynchronous readers: each wgmma's operand matrices and each TMA
/// store's source box are read until the wgmma_wait / tma_store_wait that retires them, and a
/// TMA copy or local_store into those elements is reported (a race, not a hang) unless the
/// retirement happens before it: in the same partition, or in another one followed by an
/// mbarrier arrival whose phase the writer has waited for (vector clocks over the partitions).
/// Empty when the program finishes, and when the kernel has no mbarriers.
std::vector<BarrierFinding> checkBarrierProtocols(const ir::Function &f);

} // namespace tle::transforms
