// The table of tile-IR passes: names, one-line summaries, entry points and pipeline places.
#include "tle/Transforms/PassRegistry.h"
#include "tle/Transforms/AllocateShared.h"
#include "tle/Transforms/AsyncLoads.h"
#include "tle/Transforms/BoundMasks.h"
#include "tle/Transforms/Canonicalize.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/Histograms.h"
#include "tle/Transforms/HoistLoads.h"
#include "tle/Transforms/InsertBarriers.h"
#include "tle/Transforms/LayoutAssignment.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/PipelineFills.h"
#include "tle/Transforms/Prefetch.h"
#include "tle/Transforms/ReduceBatches.h"
#include "tle/Transforms/TensorMaps.h"
#include "tle/Transforms/VersionMasks.h"
#include "tle/Transforms/WarpSpecialize.h"
#include "tle/Transforms/WgmmaWaits.h"

#include <ostream>

namespace tle::transforms {

namespace {

void runWidenFp8Dots(ir::Function &f, PassContext &) { widenFp8Dots(f); }

void runMarkTmaStores(ir::Function &f, PassContext &) { markTmaStores(f); }

void runCanonicalize(ir::Function &f, PassContext &) { canonicalize(f); }

/// Dot operands first (cp.async slots), then the loop's other loads (registers).
void runPrefetch(ir::Function &f, PassContext &ctx) {
  prefetchDotOperands(f, ctx.diags);
  prefetchLoopLoads(f, ctx.diags);
}

void runVersionMasks(ir::Function &f, PassContext &) { versionUniformMasks(f); }

void runHoistLoads(ir::Function &f, PassContext &) { hoistLoads(f); }

/// Layout assignment, with its statistics on ctx.layoutStats when asked for.
void runAssignLayouts(ir::Function &f, PassContext &ctx) {
  LayoutAssignmentStats st = assignLayouts(f);
  if (!ctx.layoutStats)
    return;
  *ctx.layoutStats << "tlec: layout stats: " << f.name << ": " << st.tiles << " tiles, " << st.conversions
                   << " convert_layout inserted; conversions avoided: " << st.renumbered
                   << " by renumbering registers, " << st.rematerialized << " by recomputing index arithmetic; "
                   << st.followed << " elementwise results kept in an operand's layout\n";
}

void runAllocateShared(ir::Function &f, PassContext &ctx) { allocateShared(f, ctx.diags); }

void runInsertBarriers(ir::Function &f, PassContext &) { insertBarriers(f); }
void runWarpSpecialize(ir::Function &f, PassContext &) { warpSpecialize(f); }
void runPipeline(ir::Function &f, PassContext &ctx) { pipeline(f, ctx.diags); }
void runLowerAsyncLoads(ir::Function &f, PassContext &) { lowerAsyncLoads(f); }
void runWgmmaWaits(ir::Function &f, PassContext &) { placeWgmmaWaits(f); }
void runBatchReduces(ir::Function &f, PassContext &) { batchReduces(f); }
void runLowerHistograms(ir::Function &f, PassContext &ctx) { lowerHistograms(f, ctx.diags); }
void runBoundMasks(ir::Function &f, PassContext &) { markBoundMasks(f); }
void runPipelineFills(ir::Function &f, PassContext &ctx) { lowerPipelineFills(f, ctx.diags); }

} // namespace

const std::vector<PassInfo> &passRegistry() {
  static const std::vector<PassInfo> passes = {
      // The tile stage: target-independent rewrites, before layouts.
      {"lower-histograms",
       "tl.histogram as comparisons with each bin, or on the GPU (more than 64 comparisons per thread) as "
       "shared-memory atomics",
       runLowerHistograms, kInPipeline | kOnCpu},
      {"widen-fp8-dots", "fp8 tl.dot operands that no native instruction takes widened to fp16 (exact)",
       runWidenFp8Dots, kInPipeline | kOnCpu},
      {"mark-tma-stores",
       "sm_90a stores of a tile that TMA can write marked 'tma', their pointer and mask tiles replaced",
       runMarkTmaStores, kInPipeline | kOnCpu | kCleanup},
      {"canonicalize", "common-subexpression and dead-code elimination", runCanonicalize, 0},
      {"prefetch",
       "loads feeding tl.dot in loops pipelined num_stages - 1 iterations ahead; other loop loads one "
       "iteration ahead in registers",
       runPrefetch, kInPipeline | kCleanup},
      {"version-masks",
       "loop bodies given a branch without the compare and select of an index mask true for every element",
       runVersionMasks, kInPipeline | kOnCpu | kCleanup},
      {"hoist-loads", "loads issued early, ahead of reductions and loops they do not depend on (no tl.dot)",
       runHoistLoads, kInPipeline},
      {"assign-layouts", "a layout on every tile value, layout changes made explicit (tile stage to gpu stage)",
       runAssignLayouts, kInPipeline | kAssignsLayouts | kCleanup},
      // The gpu stage: the passes that make the GPU's resources explicit ops of the IR, in the
      // order the pipeline runs them.
      {"pipeline",
       "prefetched loads feeding tl.dot (or read in their loop body) placed in shared-memory slots filled by "
       "cp.async or TMA; their mbarriers, TMA stores' staging, tl.range(warp_specialize=True)'s producer warps",
       runPipeline, kInPipeline | kBeforeEmit},
      {"async-loads",
       "tle.load(is_async=True) as a cp.async copy into a shared buffer, waited for before the value's first use "
       "(sm_80+; a load it cannot copy so stays a load)",
       runLowerAsyncLoads, kInPipeline},
      {"wgmma-waits",
       "tl.dot on wgmma marked async, each group retired by a wgmma_wait: at once, or left in flight across "
       "the loop's iterations (the loop marked wgmma_drain)",
       runWgmmaWaits, kInPipeline | kBeforeEmit},
      {"batch-reduces",
       "independent reduces of a block that combine across warps grouped after the first (batch=N): one "
       "exchange through shared memory, one pair of barriers",
       runBatchReduces, kInPipeline | kBeforeEmit},
      {"allocate-shared",
       "byte offsets for the kernel's shared buffers from their live ranges (buffers never live at once share "
       "bytes); the kernel's shared bytes",
       runAllocateShared, kInPipeline | kBeforeEmit},
      {"warp-specialize",
       "a warp_specialize's worker warps added to the launch, and the register ceiling its partitions' "
       "setmaxnreg budgets move from; the budgets of tl.range(warp_specialize=True)'s producer and consumers",
       runWarpSpecialize, kInPipeline | kBeforeEmit},
      {"insert-barriers",
       "CTA barriers between conflicting shared-memory accesses, and the cluster exit protocol", runInsertBarriers,
       kInPipeline | kBeforeEmit},
      {"pipeline-fills",
       "the fills of the pipeline pass's slots as ops: fill numbers carried through loops, expect-tx on the "
       "slot's mbarrier and a tma_load per box or an async_copy into the slot, the tile a pipeline_value; a "
       "warp-specialised split as a warp_specialize of consumers and a producer",
       runPipelineFills, kInPipeline | kBeforeEmit},
      {"bound-masks",
       "stores whose 'offs < n' mask would stay live across reductions, barriers or loops marked 'bounds': the "
       "backend recomputes it at the store from n",
       runBoundMasks, kInPipeline | kBeforeEmit},
  };
  return passes;
}

const PassInfo *findPass(std::string_view name) {
  for (const PassInfo &p : passRegistry())
    if (name == p.name)
      return &p;
  return nullptr;
}

namespace {

/// The passes carrying `flag`, in table order, each followed by canonicalize when it asks for it.
std::vector<std::string> pipelineOf(PassFlag flag) {
  std::vector<std::string> order;
  for (const PassInfo &p : passRegistry()) {
    if (!p.has(flag))
      continue;
    order.push_back(p.name);
    if (p.has(kCleanup))
      order.push_back("canonicalize");
  }
  return order;
}

} // namespace

std::vector<std::string> defaultPipeline() { return pipelineOf(kInPipeline); }

std::vector<std::string> cpuPipeline() { return pipelineOf(kOnCpu); }

std::string passNameList() {
  std::string names;
  for (const PassInfo &p : passRegistry())
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

} // namespace tle::transforms
