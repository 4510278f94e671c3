// warp-specialize: worker warps and the register ceiling of a kernel's warp partitions (see
// WarpSpecialize.h).
#include "tle/Transforms/WarpSpecialize.h"
#include "tle/Transforms/RegisterEstimate.h"

namespace tle::transforms {

WarpSpecialization warpSpecialize(ir::Function &f) {
  WarpSpecialization out;
  for (auto &op : f.body.ops) {
    if (op->kind != ir::OpKind::WarpSpecialize)
      continue;
    for (int64_t w : op->partitionWarps())
      out.workerWarps += static_cast<int>(w);
    if (!op->partitionRegisters().empty())
      out.maxRegisters = static_cast<int>(registerCeiling(f.numWarps + out.workerWarps) / 8 * 8);
    f.producerWarps = out.workerWarps;
    f.maxRegisters = out.maxRegisters;
    break;
  }
  return out;
}

} // namespace tle::transforms
