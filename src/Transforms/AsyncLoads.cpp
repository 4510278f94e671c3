// Async-hinted loads as cp.async copies through shared memory (see AsyncLoads.h).
#include "tle/Transforms/AsyncLoads.h"
#include "tle/Transforms/AllocateShared.h"
#include "tle/Transforms/AxisInfo.h"
#include "tle/Transforms/HoistLoads.h"
#include "tle/Transforms/LayoutAssignment.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/Scratch.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <vector>

namespace tle::transforms {

using ir::Layout;
using ir::OpKind;

namespace {

using OpIt = std::list<std::unique_ptr<ir::Op>>::iterator;

/// The SM version of an NVPTX target ("sm_80" -> 80, "sm_90a" -> 90); 0 for another target.
int smVersion(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0)
    return 0;
  return std::atoi(arch.c_str() + 3);
}

/// Whether every element of `v` has all bits zero: a splat of the constant 0 or +0.0 (the bytes
/// cp.async writes for a masked-off vector).
bool zeroBits(const ir::Value *v) {
  while (v->def && v->def->kind == OpKind::ConvertLayout)
    v = v->def->operands[0];
  if (!v->def || v->def->kind != OpKind::Splat)
    return false;
  const ir::Op *c = v->def->operands[0]->def;
  if (!c || c->kind != OpKind::Constant)
    return false;
  if (ir::isFloat(c->result()->type.dtype()))
    return c->floatValue() == 0.0 && !std::signbit(c->floatValue());
  return c->intValue() == 0;
}

/// Whether `v` is carried by a loop: an operand of a `for` or `while`, or of the yield or
/// condition that ends one of their regions.
bool loopCarried(ir::Function &f, const ir::Value *v) {
  bool carried = false;
  ir::walk(f.body, [&](ir::Op &op) {
    bool loop = op.kind == OpKind::For || op.kind == OpKind::While;
    if (!loop && (op.kind == OpKind::Yield || op.kind == OpKind::Condition))
      loop = op.parent && op.parent->parent &&
             (op.parent->parent->kind == OpKind::For || op.parent->parent->kind == OpKind::While);
    if (loop && std::find(op.operands.begin(), op.operands.end(), v) != op.operands.end())
      carried = true;
  });
  return carried;
}

/// Whether block `b` lies in a loop (at any depth) whose regions hold a fill of pipeline slots (a
/// load marked pipeline=k): a loop the pipeline pass pipelines.
bool inPipelinedLoop(const ir::Block &b) {
  for (ir::Op *loop = b.parent; loop; loop = loop->parent ? loop->parent->parent : nullptr) {
    if (loop->kind != OpKind::For && loop->kind != OpKind::While)
      continue;
    bool fills = false;
    for (auto &r : loop->regions)
      ir::walk(*r, [&](ir::Op &o) { fills |= o.kind == OpKind::Load && o.pipeline() >= 0; });
    if (fills)
      return true;
  }
  return false;
}

/// Whether `op` or an op of its regions reads `v`.
bool uses(ir::Op &op, const ir::Value *v) {
  bool used = std::find(op.operands.begin(), op.operands.end(), v) != op.operands.end();
  for (auto &r : op.regions)
    ir::walk(*r, [&](ir::Op &o) {
      used |= std::find(o.operands.begin(), o.operands.end(), v) != o.operands.end();
    });
  return used;
}

/// Bytes of the buffer a LocalAlloc (or a tile of `shape` and `dtype`) takes, saturated at 2^60
/// (a hand-written alloc may be far larger than any shared memory), so that sums stay in int64.
int64_t tileBytes(const std::vector<int64_t> &shape, ir::DType dtype) {
  constexpr int64_t kHuge = int64_t(1) << 60;
  int64_t n = ir::numElements(shape), eb = ir::storageBytes(dtype);
  return n > kHuge / eb ? kHuge : n * eb;
}

class Lowerer {
public:
  explicit Lowerer(ir::Function &f) : f_(f), axis_(f) { room_ = sharedRoom(); }
  unsigned count = 0;

  void block(ir::Block &b) {
    for (auto &op : b.ops)
      if (op->kind != OpKind::WarpSpecialize)
        for (auto &r : op->regions)
          block(*r);
    // Each eligible load with the op its wait goes before, in program order.
    std::vector<std::pair<ir::Op *, ir::Op *>> loads;
    if (inPipelinedLoop(b))
      return;
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it)
      if (ir::Op *at = eligible(b, it))
        loads.push_back({it->get(), at});
    // Loads whose waits fall at one op share it; the waits are placed in program order (a
    // later load may be the first use of an earlier one, through its `other`).
    std::map<ir::Op *, ir::Op *> lastCommit;
    for (auto [load, at] : loads)
      lastCommit[at] = lower(b, *load, at);
    std::vector<ir::Op *> waits;
    for (auto &op : b.ops)
      if (lastCommit.count(op.get()))
        waits.push_back(op.get());
    for (ir::Op *at : waits)
      placeWait(b, at, lastCommit[at]);
  }

private:
  ir::Function &f_;
  AxisInfoAnalysis axis_;
  int64_t room_ = 0; ///< shared bytes still free in the worst case (all buffers live at once)
  /// The reads waiting for each wait position, in program order of their loads.
  std::map<ir::Op *, std::vector<std::pair<ir::Op *, ir::Op *>>> reads_;

  /// Bytes of shared memory left when every buffer, the pipeline area and the largest scratch
  /// area are live at once (buffers rounded to 16 bytes, swizzled ones to 1024 more).
  int64_t sharedRoom() const {
    const int64_t limit = sharedMemoryLimit(f_.arch);
    int64_t used = 1024; // the buffers' end is rounded up to 1024
    auto add = [&](int64_t bytes) { used = std::min(limit + 1, used + std::min(limit + 1, bytes)); };
    ir::walk(f_.body, [&](ir::Op &op) {
      if (op.kind == OpKind::LocalAlloc)
        add((tileBytes(op.allocShape(), op.result()->type.elem.pointee) + 15) / 16 * 16 +
            (op.allocSwizzle() ? 1024 : 0));
    });
    add(f_.pipelineBytes);
    int64_t scratch = 0;
    for (auto &[op, need] : scratchNeeds(f_, pipelineValues(f_)))
      scratch = std::max(scratch, std::min(limit, need.bytes) + need.align);
    add(scratch);
    return limit - used;
  }

  /// Bytes one cp.async of `load` moves, as the backend computes it (Emitter::asyncCopyBytes):
  /// the layout's contiguous registers, the source's and the row-major destination's vectors.
  int copyBytes(const ir::Op &load) const {
    const ir::Value *src = load.operands[0];
    const Layout &l = *src->layout;
    int64_t eb = ir::storageBytes(src->type.elem.pointee);
    int64_t elems = std::min<int64_t>({ir::contiguousRegisters(l, l.rank() - 1),
                                       axis_.accessVector(src, load.operands.size() > 1 ? load.operands[1] : nullptr),
                                       std::max<int64_t>(1, 16 / eb), src->type.shape.back()});
    int64_t bytes = std::min<int64_t>(elems * eb, 16);
    while (bytes & (bytes - 1))
      bytes &= bytes - 1;
    return static_cast<int>(bytes);
  }

  /// The op the wait of the load at `it` goes before, when the load is eligible (AsyncLoads.h);
  /// null otherwise.
  ir::Op *eligible(ir::Block &b, OpIt it) {
    ir::Op &op = **it;
    if (op.kind != OpKind::Load || !op.isAsyncHint() || op.isVolatile() || op.hasDescriptor() || op.pipeline() >= 0 ||
        op.evictionHint() != ir::EvictionHint::None || op.cacheHint() == ir::CacheHint::CV)
      return nullptr;
    const ir::Value *src = op.operands[0], *r = op.result();
    if (!r->type.isTile() || src->type.elem.space != ir::AddrSpace::Global || r->type.dtype() == ir::DType::I1 ||
        r->type.dtype() == ir::DType::Ptr || !r->layout)
      return nullptr;
    for (const ir::Value *v : op.operands)
      if (!v->layout || *v->layout != *r->layout)
        return nullptr;
    if (copyBytes(op) < 4 || loopCarried(f_, r))
      return nullptr;
    ir::Op *at = nullptr;
    for (auto u = std::next(it); u != b.ops.end() && !at; ++u)
      if (uses(**u, r) || blocksLoadMotion(**u) || *u == b.ops.back())
        at = u->get();
    bool used = std::any_of(std::next(it), b.ops.end(), [&](auto &u) { return uses(*u, r); });
    int64_t bytes = (tileBytes(r->type.shape, r->type.dtype()) + 15) / 16 * 16;
    if (!at || !used || bytes > room_)
      return nullptr;
    room_ -= bytes;
    return at;
  }

  /// `v` with layout `l` (returned for chaining).
  ir::Value *laid(ir::Value *v, const Layout &l) {
    v->layout = internLayout(f_, l);
    return v;
  }

  /// The element offsets of a row-major tile of `shape` in layout `l`: the sum over dims d of
  /// arange(shape[d]) * stride[d], each expanded and broadcast to `shape` as Sema builds
  /// tle.gpu.local_ptr's (its arange in `l`'s part along d, so that the broadcast is free).
  ir::Value *rowMajorOffsets(ir::Builder &bld, SourceLoc loc, const std::vector<int64_t> &shape, const Layout &l) {
    const unsigned rank = static_cast<unsigned>(shape.size());
    ir::Value *sum = nullptr;
    int64_t stride = 1;
    for (unsigned d = rank; d-- > 0; stride *= shape[d]) {
      std::vector<int64_t> alone(rank, 1);
      alone[d] = shape[d];
      Layout part = ir::broadcastOperandLayout(l, alone);
      Layout line = part;
      for (unsigned e = rank; e-- > 0;)
        if (e != d)
          line = ir::squeezeLayout(line, e);
      ir::Op *ar = bld.create(OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{ir::DType::I32}, {shape[d]})});
      ar->setArangeBounds(0, shape[d]);
      ir::Value *v = laid(ar->result(), line);
      if (stride != 1)
        v = laid(bld.binary(OpKind::Mul, loc, v,
                            laid(bld.splat(loc, bld.constInt(loc, ir::DType::I32, stride), {shape[d]}), line)),
                 line);
      for (unsigned e = 0; e < rank; ++e) {
        if (e == d)
          continue;
        std::vector<int64_t> s = v->type.shape;
        s.insert(s.begin() + e, 1);
        ir::Op *x = bld.create(OpKind::ExpandDims, loc, {v}, {ir::Type(v->type.elem, s)});
        x->setAxis(static_cast<int>(e));
        v = laid(x->result(), ir::expandDimsLayout(*v->layout, e));
      }
      if (v->type.shape != shape)
        v = laid(bld.create(OpKind::Broadcast, loc, {v}, {ir::Type(v->type.elem, shape)})->result(), l);
      sum = sum ? laid(bld.binary(OpKind::Add, loc, sum, v), l) : v;
    }
    return sum;
  }

  /// Replaces `load` by its buffer, pointers, copy and commit (returned); records the read that
  /// goes before `at`.
  ir::Op *lower(ir::Block &b, ir::Op &load, ir::Op *at) {
    const SourceLoc loc = load.loc;
    ir::Value *src = load.operands[0], *r = load.result();
    const Layout &l = *r->layout;
    ir::Builder bld(&b);
    bld.setInsertionPoint(&b, b.find(&load));
    ir::Op *alloc = bld.create(OpKind::LocalAlloc, loc, {},
                               {ir::Type(ir::ScalarType::ptrTo(r->type.dtype(), ir::AddrSpace::Shared))});
    alloc->setAllocShape(r->type.shape);
    ir::Value *base = laid(bld.splat(loc, alloc->result(), r->type.shape), l);
    ir::Value *offsets = rowMajorOffsets(bld, loc, r->type.shape, l);
    ir::Value *dst = laid(bld.create(OpKind::AddPtr, loc, {base, offsets}, {base->type})->result(), l);
    std::vector<ir::Value *> copyOps = {dst, src};
    if (load.operands.size() > 1)
      copyOps.push_back(load.operands[1]);
    ir::Op *copy = bld.create(OpKind::AsyncCopy, loc, copyOps, {});
    if (load.cacheHint() == ir::CacheHint::CA)
      copy->sync.cache = ir::CopyCache::CA;
    ir::Op *commit = bld.create(OpKind::AsyncCommitGroup, loc, {}, {});
    reads_[at].push_back({&load, dst->def});
    ++count;
    return commit;
  }

  /// The wait before `at` for the copies up to the one `lastCommit` closes, then the reads that
  /// wait there, each replacing its load.
  void placeWait(ir::Block &b, ir::Op *at, ir::Op *lastCommit) {
    int later = 0;
    for (auto it = std::next(b.find(lastCommit)); it->get() != at; ++it)
      later += (*it)->kind == OpKind::AsyncCommitGroup;
    ir::Builder bld(&b);
    bld.setInsertionPoint(&b, b.find(at));
    ir::Op *wait = bld.create(OpKind::AsyncWaitGroup, at->loc, {}, {});
    wait->sync.pending = std::min(later, 63);
    for (auto [load, dstDef] : reads_[at]) {
      ir::Value *r = load->result();
      ir::Value *dst = dstDef->result();
      ir::Value *v = laid(bld.create(OpKind::Load, load->loc, {dst}, {r->type})->result(), *r->layout);
      if (load->operands.size() > 2 && !zeroBits(load->operands[2]))
        v = laid(bld.select(load->loc, load->operands[1], v, load->operands[2]), *r->layout);
      v->nameHint = r->nameHint;
      auto swap = [&](ir::Op &o) {
        for (ir::Value *&x : o.operands)
          if (x == r)
            x = v;
      };
      for (auto it = b.find(at); it != b.ops.end(); ++it) {
        swap(**it);
        for (auto &reg : (*it)->regions)
          ir::walk(*reg, swap);
      }
      b.ops.erase(b.find(load));
    }
  }
};

} // namespace

unsigned lowerAsyncLoads(ir::Function &f) {
  if (smVersion(f.arch) < 80 || f.producerWarps > 0)
    return 0;
  Lowerer l(f);
  l.block(f.body);
  return l.count;
}

} // namespace tle::transforms
