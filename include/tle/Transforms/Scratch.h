// Scratch shared memory: the bytes each op that the NVPTX backend lowers through shared memory
// needs while it runs (reductions across warps, scans, layout conversions, shape ops, replicated
// atomics, gathers, dot operand staging, TMA-store staging), as allocate-shared reserves them and the
// backend lays them out.
#pragma once

#include "tle/IR/IR.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

namespace tle::transforms {

/// Whether convert_layout `convert` moves its tile through shared memory: its layouts are
/// known and no register renumbering maps one to the other (ir::registerMap).
bool convertsThroughShared(const ir::Op &convert);

/// The warp bits of layout `l` that move along `axis`: a reduce over it combines across them
/// through shared memory (none: within warps only, no scratch).
std::vector<int> reduceWarpBits(const ir::Layout &l, int axis);

/// Bytes of a reduce's cross-warp partials: per operand (aligned to its element size), one
/// element per result element and per combination of `warpBits` warp bits; `base` (when given)
/// receives each operand's offset.
int64_t reducePartialsBytes(const ir::Op &reduce, size_t warpBits, std::vector<int64_t> *base = nullptr);

/// Which register ('r'), lane ('l') or warp ('w') bit of a layout holds each bit of the index
/// along a scan's axis.
struct AxisBit {
  char kind;
  int bit;
};
/// The owner of every bit of the index along `axis` (length `len`, a power of two), when each
/// basis that moves along `axis` moves along it alone by a distinct power of two; nullopt
/// otherwise (then a scan goes through shared memory step by step).
std::optional<std::vector<AxisBit>> axisBitOwners(const ir::Layout &l, unsigned axis, int64_t len);

/// Bytes of the two alternating regions of a scan by index bits (its warp rounds), or -1 when
/// the layout mixes the axis with other dims (the scan then goes through shared memory step by
/// step: scanFallbackBytes).
int64_t scanByBitsBytes(const ir::Op &scan);
int64_t scanFallbackBytes(const ir::Op &scan);

/// What the scratch of `f`'s ops is, from its layouts and pipeline classes (pipelineValues).
struct ScratchNeed {
  int64_t bytes = 0;
  int64_t align = 16; ///< 1024 for swizzled areas (wgmma operand staging, TMA-store staging)
};
/// Every op of `f` that needs scratch while it runs, with its need; none on IR without layouts.
/// `async` are the values in pipeline slots (pipelineValues).
std::map<const ir::Op *, ScratchNeed> scratchNeeds(const ir::Function &f, const std::map<const ir::Value *, int> &async);

/// Whether `op` itself touches a pipeline class's values (`async`, pipelineValues: operands or
/// results) or is a TMA store with its own staging area: it uses the pipeline area.
bool usesPipelineArea(const ir::Op &op, const std::map<const ir::Value *, int> &async);

/// The index of the last top-level op of `f` that uses the pipeline area (usesPipelineArea, it
/// or an op of its regions); 0 when none.
/// The pipeline area is live up to it; scratch after it may reuse the area's bytes.
size_t lastPipelineTopOp(const ir::Function &f, const std::map<const ir::Value *, int> &async);

} // namespace tle::transforms
