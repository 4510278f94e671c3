// lower-histograms: tl.histogram as comparisons, or as shared-memory atomics on the GPU.
#pragma once

#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"

namespace tle::transforms {

/// Rewrites every `histogram` op of `f` (ir::OpKind::Histogram: counts of 0 .. bins - 1 among
/// the n values of an integer tile where a mask holds) into ops both targets lower:
///
/// - On the GPU (`f.arch` set), when the comparisons would take more than 64 per thread
///   (n * bins > 64 * 32 * num_warps): a [bins] i32 buffer (`local_alloc`) filled with zeros,
///   one `atomic_rmw add relaxed cta` of 1 per value at its bin, masked to the values in
///   [0, bins) where the mask holds, and the buffer read back (insert-barriers orders the three
///   phases). Work per thread scales with n / threads (plus bins / threads), and so does the
///   code: 256 bins of 8192 values compile in well under a second, where the comparisons took
///   tens of seconds.
/// - On the CPU target (`f.arch` empty), past the same size: left as it is, for the CPU backend
///   to count in a loop over the values (O(n + bins); the comparisons' code grows with n * bins,
///   and 16384 values x 16384 bins took minutes to compile).
/// - Otherwise (small histograms on either target): each value compared with each bin, an
///   [n, bins] comparison summed over n.
///
/// Both count the same values: a value outside [0, bins), or where the mask is false, counts
/// nowhere. Values narrower than 32 bits are compared as i32 (widened by their signedness), so
/// that bin numbers past their type's range (256 bins of uint8, 128 of int8) do not wrap. The pass runs first in both targets' pipelines (`lower-histograms`). Returns the
/// number of histograms rewritten (not those left for the CPU backend). A GPU histogram whose counts (4 bytes a bin) would take more
/// shared memory than a block may have (sharedMemoryLimit) is a located error at its
/// `tl.histogram` when `diags` is given, and stays unrewritten.
unsigned lowerHistograms(ir::Function &f, DiagnosticEngine *diags = nullptr);

} // namespace tle::transforms
