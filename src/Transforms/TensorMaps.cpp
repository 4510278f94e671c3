// Tensor maps (CUtensorMap) for tensor-descriptor accesses copied with TMA, and which
// descriptor stores the NVPTX backend writes with TMA.
#include "tle/Transforms/TensorMaps.h"

#include <algorithm>

namespace tle::transforms {

using ir::OpKind;

std::optional<ir::TensorMapParam> tensorMapFor(const ir::Function &f, const ir::Op &access, int swizzle) {
  const std::vector<int64_t> &block = access.blockShape();
  size_t r = block.size();
  if (r != 2 || access.operands.size() < 4 + 3 * r || (swizzle != 32 && swizzle != 64 && swizzle != 128))
    return std::nullopt;
  const ir::DType dtype = access.kind == OpKind::Store ? access.operands[1]->type.dtype() : access.result()->type.dtype();
  unsigned eb = ir::storageBytes(dtype);
  if (block[1] * eb < swizzle || (block[1] * eb) % swizzle)
    return std::nullopt; // whole boxes of one swizzle span of columns
  std::vector<const ir::Value *> shape(access.operands.begin() + 4, access.operands.begin() + 4 + r);
  std::vector<const ir::Value *> strides(access.operands.begin() + 4 + r, access.operands.begin() + 4 + 2 * r);
  return ir::tensorMap(f, dtype, access.operands[3], shape, strides, {block[0], swizzle / static_cast<int64_t>(eb)},
                       swizzle);
}

int tmaStoreSwizzle(const ir::Op &store) {
  return static_cast<int>(std::min<int64_t>(128, store.blockShape()[1] * ir::storageBytes(store.operands[1]->type.dtype())));
}

bool writesGlobalMemory(const ir::Op &op) {
  if (op.kind == OpKind::Store || op.kind == OpKind::AtomicRMW || op.kind == OpKind::AtomicCAS) // not shared buffers
    return op.operands[0]->type.elem.space == ir::AddrSpace::Global;
  return (op.kind == OpKind::InlineAsm && !op.asmPure()) || op.kind == OpKind::RawCall;
}

bool writesGlobalMemoryIn(const ir::Op &op) {
  bool writes = writesGlobalMemory(op);
  for (auto &r : op.regions)
    ir::walk(*r, [&](ir::Op &o) { writes |= writesGlobalMemory(o); });
  return writes;
}

const ir::Value *pointerParam(const ir::Function &f, const ir::Value *ptr) {
  for (int depth = 0; depth < 64 && ptr; ++depth) {
    if (ptr->owner == &f.body)
      return ptr->type.elem.isPointer() ? ptr : nullptr;
    const ir::Op *d = ptr->def;
    if (!d || (d->kind != OpKind::AddPtr && d->kind != OpKind::Splat && d->kind != OpKind::Broadcast &&
               d->kind != OpKind::ExpandDims && d->kind != OpKind::ConvertLayout))
      return nullptr;
    ptr = d->operands[0];
  }
  return nullptr;
}

bool inForLoopsOnly(const ir::Function &f, const ir::Op &op) {
  for (const ir::Op *o = &op; o->parent != &f.body; o = o->parent->parent)
    if (!o->parent || !o->parent->parent || o->parent->parent->kind != OpKind::For)
      return false;
  return true;
}

const ir::Op *tmaStoreLoop(const ir::Function &f, const ir::Op &store) {
  const ir::Op *top = &store;
  while (top->parent && top->parent != &f.body)
    top = top->parent->parent;
  return top == &store ? nullptr : top;
}

bool tmaStore(const ir::Function &f, const ir::Op &store) {
  if (f.arch != "sm_90a" || store.kind != OpKind::Store || store.blockShape().size() != 2)
    return false;
  if (!inForLoopsOnly(f, store))
    return false;
  const ir::DType t = store.operands[1]->type.dtype();
  int64_t rowBytes = store.blockShape()[1] * ir::storageBytes(t);
  if (t == ir::DType::I1 || rowBytes < 32)
    return false;
  // The tile may be staged whole in shared memory (a layout whose lanes span its boxes): at most
  // half of sm_90a's 227 KiB, so that a store from registers does not make a kernel too big
  // for shared memory (a plain store needs none).
  if (store.blockShape()[0] * rowBytes > kMaxTmaStoreTileBytes)
    return false;
  // Nothing after it may read or write global memory: the bulk copy writes through the async
  // proxy and completes after the kernel's last generic access; a later load or atomic of the
  // same addresses would need a wait for its completion and a proxy fence. In a loop, "after"
  // is the rest of the loop too (its next iterations); there loads through another pointer param
  // are allowed (a persistent matmul's A and B tiles, a fused epilogue's bias): they read what
  // the stores never write, unless two params overlap (docs/compiler.md, "TMA stores").
  const ir::Op *loop = tmaStoreLoop(f, store);
  const ir::Value *base = store.operands[3];
  auto otherTensorLoad = [&](const ir::Op &x) {
    if (!loop || x.kind != OpKind::Load)
      return false;
    size_t r = x.blockShape().size();
    if (r >= 1 && x.operands.size() >= 4 + 3 * r) // through a tensor descriptor
      return x.operands[3] != base && x.operands[3]->owner == &f.body;
    const ir::Value *root = pointerParam(f, x.operands[0]);
    return root && root != base;
  };
  bool after = false, later = false;
  auto visit = [&](ir::Op &x) {
    if (&x == &store || otherTensorLoad(x))
      return;
    bool memory = x.kind == OpKind::Load || x.kind == OpKind::Store || x.kind == OpKind::AtomicRMW ||
                  x.kind == OpKind::AtomicCAS;
    later |= (memory && x.operands[0]->type.elem.space == ir::AddrSpace::Global) || x.kind == OpKind::InlineAsm ||
             x.kind == OpKind::RawCall || x.kind == OpKind::Print || x.kind == OpKind::Assert;
  };
  for (auto &o : f.body.ops) {
    if (o.get() == (loop ? loop : &store))
      after = true;
    if (!after)
      continue;
    visit(*o);
    for (auto &r : o->regions)
      ir::walk(*r, visit);
  }
  return !later && tensorMapFor(f, store, tmaStoreSwizzle(store)).has_value();
}

unsigned markTmaStores(ir::Function &f) {
  std::vector<ir::Op *> stores;
  ir::walk(f.body, [&](ir::Op &o) {
    if (o.kind == OpKind::Store && !o.isTmaStore() && tmaStore(f, o))
      stores.push_back(&o);
  });
  for (ir::Op *st : stores) {
    ir::Block *blk = st->parent;
    auto it = std::find_if(blk->ops.begin(), blk->ops.end(), [&](const auto &o) { return o.get() == st; });
    ir::Builder b(blk);
    b.setInsertionPoint(blk, it);
    const std::vector<int64_t> &shape = st->operands[0]->type.shape;
    st->operands[0] = b.splat(st->loc, st->operands[3], shape);
    st->operands[2] = b.splat(st->loc, b.constInt(st->loc, ir::DType::I1, 1), shape);
    st->setTmaStore(true);
  }
  return static_cast<unsigned>(stores.size());
}

} // namespace tle::transforms
