// Bound masks: recognising a store mask of the form `offs < n` (see BoundMask.h).
#include "tle/IR/BoundMask.h"
#include "tle/IR/Layout.h"

#include <utility>

namespace tle::ir {

namespace {

const Value *throughConversions(const Value *v) {
  while (v->def && v->def->kind == OpKind::ConvertLayout)
    v = v->def->operands[0];
  return v;
}

bool isI32(const Value *v) { return v->type.elem.dtype == DType::I32 && !v->type.elem.isPointer(); }

} // namespace

std::optional<BoundMask> boundMaskOf(const Op &store) {
  if (store.kind != OpKind::Store || store.operands.size() < 3 || store.hasDescriptor())
    return std::nullopt;
  const Value *ptr = store.operands[0];
  if (!ptr->type.isTile() || !ptr->layout || ptr->layout->rank() != 1 || !registerBitsDisjoint(*ptr->layout))
    return std::nullopt;
  const Value *m = throughConversions(store.operands[2]);
  if (!m->def || m->def->kind != OpKind::Cmp || m->def->operands.size() != 2)
    return std::nullopt;
  BoundMask bm;
  bm.compare = m->def;
  const Value *idx = throughConversions(bm.compare->operands[0]);
  const Value *bound = throughConversions(bm.compare->operands[1]);
  CmpPred pred = bm.compare->predicate();
  if (pred == CmpPred::Gt || pred == CmpPred::Ge) { // n > offs is offs < n
    std::swap(idx, bound);
    pred = pred == CmpPred::Gt ? CmpPred::Lt : CmpPred::Le;
  }
  if (pred != CmpPred::Lt && pred != CmpPred::Le)
    return std::nullopt;
  bm.inclusive = pred == CmpPred::Le;
  if (!isI32(idx) || !isI32(bound) || !bound->def || bound->def->kind != OpKind::Splat)
    return std::nullopt;
  bm.bound = bound->def->operands[0];
  std::vector<const Value *> work{idx};
  while (!work.empty()) {
    const Value *v = throughConversions(work.back());
    work.pop_back();
    if (!v->def || bm.offsets.size() > 8)
      return std::nullopt;
    if (v->def->kind == OpKind::Arange && !bm.range) {
      bm.range = v->def;
    } else if (v->def->kind == OpKind::Splat) {
      bm.offsets.push_back(v->def->operands[0]);
    } else if (v->def->kind == OpKind::Add) {
      work.push_back(v->def->operands[0]);
      work.push_back(v->def->operands[1]);
    } else {
      return std::nullopt;
    }
  }
  if (!bm.range)
    return std::nullopt;
  return bm;
}

} // namespace tle::ir
