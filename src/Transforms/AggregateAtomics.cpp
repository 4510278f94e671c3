// Warp-aggregated shared-memory atomic adds (see AggregateAtomics.h).
#include "tle/Transforms/AggregateAtomics.h"

#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

/// Whether `v` is a tile splatting an integer constant.
bool constantSplat(const ir::Value *v) {
  const ir::Op *d = v->def;
  return d && d->kind == OpKind::Splat && d->operands[0]->def && d->operands[0]->def->kind == OpKind::Constant &&
         ir::isInteger(v->type.dtype());
}

bool aggregatable(const ir::Op &op, const std::set<const ir::Value *> &read) {
  if (op.kind != OpKind::AtomicRMW || op.atomicKind() != ir::AtomicKind::Add || op.memSem() != ir::MemSem::Relaxed)
    return false;
  const ir::Type &p = op.operands[0]->type;
  ir::DType t = p.elem.pointee;
  return p.isTile() && p.elem.space != ir::AddrSpace::Global && ir::isInteger(t) && ir::bitWidth(t) >= 32 &&
         constantSplat(op.operands[1]) && !read.count(op.result());
}

} // namespace

unsigned aggregateAtomics(ir::Function &f) {
  std::set<const ir::Value *> read;
  ir::walk(f.body, [&](ir::Op &op) { read.insert(op.operands.begin(), op.operands.end()); });
  unsigned marked = 0;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::AtomicRMW)
      return;
    bool w = aggregatable(op, read);
    op.setWarpAggregate(w);
    marked += w;
  });
  return marked;
}

} // namespace tle::transforms
