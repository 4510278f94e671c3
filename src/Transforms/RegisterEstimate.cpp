// Register-pressure estimates on the tile IR (see RegisterEstimate.h).
#include "tle/Transforms/RegisterEstimate.h"

#include <algorithm>
#include <map>
#include <set>

namespace tle::transforms {

using ir::OpKind;

int64_t estimatedRegisters(const ir::Type &t, int numWarps) {
  int64_t words = (t.numElements() * ir::storageBytes(t.dtype()) + 3) / 4;
  if (t.isScalar())
    return words;
  int64_t threads = 32 * int64_t(std::max(1, numWarps));
  return std::max<int64_t>(1, (words + threads - 1) / threads);
}

int64_t registerCeiling(int numWarps) { return std::min<int64_t>(255, 65536 / (32 * int64_t(std::max(1, numWarps)))); }

namespace {

bool isInside(const ir::Op *op, const ir::Block &b) {
  for (const ir::Block *p = op->parent; p; p = p->parent ? p->parent->parent : nullptr)
    if (p == &b)
      return true;
  return false;
}

bool counted(const ir::Value *v) {
  if (v->type.elem.isPointer() || v->type.dtype() == ir::DType::I1)
    return false;
  const ir::Op *d = v->def;
  if (d && d->kind == OpKind::Splat && d->operands[0]->def)
    d = d->operands[0]->def;
  return !d || (d->kind != OpKind::Constant && d->kind != OpKind::Arange);
}

} // namespace

std::vector<int64_t> liveRegisters(const ir::Block &b, int numWarps) {
  std::map<const ir::Value *, size_t> defAt, lastUse;
  std::set<const ir::Value *> outside;
  for (auto &a : b.args)
    defAt[a.get()] = 0;
  size_t i = 0;
  for (auto &op : b.ops) {
    ++i;
    auto visit = [&](const ir::Op &o) {
      for (const ir::Value *v : o.operands) {
        if (defAt.count(v))
          lastUse[v] = i;
        else if (!(v->owner && (v->owner == &b || (v->owner->parent && isInside(v->owner->parent, b)))) &&
                 !(v->def && (v->def->parent == &b || isInside(v->def, b))))
          outside.insert(v);
      }
    };
    visit(*op);
    for (auto &r : op->regions)
      ir::walk(*r, [&](ir::Op &o) { visit(o); });
    for (auto &r : op->results)
      defAt[r.get()] = i;
  }
  int64_t base = 0;
  for (const ir::Value *v : outside)
    if (counted(v))
      base += estimatedRegisters(v->type, numWarps);
  std::vector<int64_t> live(i + 1, base);
  for (auto &[v, d] : defAt) {
    auto u = lastUse.find(v);
    if (u == lastUse.end() || !counted(v))
      continue;
    int64_t r = estimatedRegisters(v->type, numWarps);
    for (size_t at = d; at <= u->second; ++at)
      live[at] += r;
  }
  return live;
}

} // namespace tle::transforms
