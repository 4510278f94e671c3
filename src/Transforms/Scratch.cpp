// Scratch shared memory per op: the sizes the NVPTX backend's shared-memory lowerings lay out,
// computed once here for allocate-shared and the backend alike.
#include "tle/Transforms/Scratch.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/TensorMaps.h"

#include <algorithm>

namespace tle::transforms {

using ir::OpKind;

namespace {

int64_t alignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

int64_t tileBytes(const ir::Value *v) { return v->type.numElements() * ir::storageBytes(v->type.dtype()); }

/// Whether some thread other than one per element holds each element of `l` (a lane or warp
/// basis is zero): its replicas then take the owner's value through shared memory.
bool replicated(const ir::Layout &l) {
  auto zero = [](const ir::Layout::Basis &b) { return std::all_of(b.begin(), b.end(), [](int64_t x) { return x == 0; }); };
  return std::any_of(l.lane.begin(), l.lane.end(), zero) || std::any_of(l.warp.begin(), l.warp.end(), zero);
}

/// A wgmma tl.dot's staging area: operands not read from a pipeline slot (registers, or a
/// restaged slot), each rounded up to 1024 bytes; A held in the accumulator layout of a 16-bit
/// [M, K] tile is read from registers.
int64_t wgmmaStagingBytes(const ir::Function &f, const ir::Op &dot, const std::map<const ir::Value *, int> &async) {
  const ir::Value *a = dot.operands[0];
  unsigned eb = ir::storageBytes(a->type.dtype());
  int64_t M = a->type.shape[0], K = a->type.shape[1];
  auto readsSlot = [&](const ir::Value *v) {
    auto it = async.find(v);
    return it != async.end() && !f.pipelines[size_t(it->second)].restaged;
  };
  bool regA = !async.count(a) && eb == 2 && *a->layout == ir::mmaAccLayout(M, K, f.numWarps);
  int64_t staging = 0;
  for (unsigned k = regA ? 1 : 0; k < 2; ++k)
    if (!readsSlot(dot.operands[k]))
      staging += alignUp(dot.operands[k]->type.numElements() * eb, 1024);
  return staging;
}

/// An mma.sync tl.dot's staging area (A as [M][K + pad], B as [K][N + pad] for 16-bit inputs
/// or [N][K + pad], K the columns of one staging round), unless both operands arrive in
/// pipeline slots.
int64_t mmaStagingBytes(const ir::Function &f, const ir::Op &dot, const std::map<const ir::Value *, int> &async) {
  DotPlan plan = planDot(dot, f.numWarps);
  if (plan.kind == DotPlan::Kind::Fma || (async.count(dot.operands[0]) && async.count(dot.operands[1])))
    return 0;
  bool f16 = plan.kind == DotPlan::Kind::MmaF16;
  unsigned eb = ir::storageBytes(dot.operands[0]->type.dtype());
  // K columns per staging round (Op::dotStageK): all of K unless allocate-shared chose rounds.
  int64_t M = dot.operands[0]->type.shape[0], N = dot.operands[1]->type.shape[1];
  int64_t K = dot.dotStageK() > 0 ? dot.dotStageK() : dot.operands[0]->type.shape[1];
  int64_t ldA = K + 16 / eb, ldB = f16 ? N + 16 / eb : K + 16 / eb;
  return M * ldA * eb + (f16 ? K : N) * ldB * eb;
}

/// The scratch of one op (no regions), or a zero need.
ScratchNeed needOf(const ir::Function &f, const ir::Op &op, const std::map<const ir::Value *, int> &async,
                   const std::set<const ir::Value *> &used) {
  ScratchNeed n;
  switch (op.kind) {
  case OpKind::Reshape: case OpKind::Join: case OpKind::Flip:
    n.bytes = tileBytes(op.result());
    break;
  case OpKind::Split:
    n.bytes = tileBytes(op.operands[0]);
    break;
  case OpKind::Gather: // src, row-major
    n.bytes = tileBytes(op.operands[0]);
    break;
  case OpKind::Cat:
    n.bytes = 2 * tileBytes(op.operands[0]);
    break;
  case OpKind::ConvertLayout:
    if (convertsThroughShared(op))
      n.bytes = tileBytes(op.operands[0]);
    break;
  case OpKind::Scan: {
    int64_t bits = scanByBitsBytes(op);
    n.bytes = bits >= 0 ? bits : scanFallbackBytes(op);
    break;
  }
  case OpKind::AtomicRMW: case OpKind::AtomicCAS: {
    const ir::Value *r = op.result();
    bool tile = r->type.isTile();
    if (used.count(r) && (!tile || replicated(*r->layout)))
      n.bytes = (tile ? r->type.numElements() : 1) * ir::storageBytes(r->type.dtype());
    break;
  }
  case OpKind::Dot:
    if (wgmmaDot(op, f.arch, f.numWarps)) {
      n.bytes = wgmmaStagingBytes(f, op, async);
      n.align = 1024;
    } else {
      n.bytes = mmaStagingBytes(f, op, async);
    }
    break;
  case OpKind::Store:
    // A TMA store outside loops stages the whole tile in scratch (in a loop: its own area).
    if (op.isTmaStore() && op.tmaStaging() < 0) {
      n.bytes = op.blockShape()[0] * op.blockShape()[1] * ir::storageBytes(op.operands[1]->type.dtype());
      n.align = 1024;
    }
    break;
  default:
    break;
  }
  return n;
}

} // namespace

bool convertsThroughShared(const ir::Op &convert) {
  const ir::Layout *from = convert.operands[0]->layout, *to = convert.result()->layout;
  return from && to && !ir::registerMap(*from, *to);
}

std::vector<int> reduceWarpBits(const ir::Layout &l, int axis) {
  std::vector<int> bits;
  for (size_t i = 0; i < l.warp.size(); ++i)
    if (l.warp[i][static_cast<size_t>(axis)] != 0)
      bits.push_back(static_cast<int>(i));
  return bits;
}

int64_t reducePartialsBytes(const ir::Op &reduce, size_t warpBits, std::vector<int64_t> *base) {
  const ir::Value *in = reduce.operands[0];
  int64_t outElems = in->type.numElements() / in->type.shape[static_cast<size_t>(reduce.axis())];
  const int64_t W = int64_t{1} << warpBits;
  int64_t total = 0;
  for (const ir::Value *x : reduce.operands) {
    int64_t eb = ir::storageBytes(x->type.dtype());
    total = alignUp(total, eb);
    if (base)
      base->push_back(total);
    total += outElems * W * eb;
  }
  return total;
}

std::optional<std::vector<AxisBit>> axisBitOwners(const ir::Layout &l, unsigned axis, int64_t len) {
  if (len < 1 || (len & (len - 1)) != 0)
    return std::nullopt;
  int nbits = 0;
  while ((int64_t(1) << nbits) < len)
    ++nbits;
  std::vector<AxisBit> owner(static_cast<size_t>(nbits), AxisBit{0, -1});
  auto visit = [&](const std::vector<ir::Layout::Basis> &bases, char kind) {
    for (size_t i = 0; i < bases.size(); ++i) {
      int64_t a = bases[i][axis];
      if (a == 0)
        continue;
      for (unsigned d = 0; d < bases[i].size(); ++d)
        if (d != axis && bases[i][d] != 0)
          return false;
      if (a < 0 || (a & (a - 1)) != 0)
        return false;
      int k = 0;
      while ((int64_t(1) << k) < a)
        ++k;
      if (k >= nbits || owner[size_t(k)].bit >= 0)
        return false;
      owner[size_t(k)] = AxisBit{kind, static_cast<int>(i)};
    }
    return true;
  };
  if (!visit(l.reg, 'r') || !visit(l.lane, 'l') || !visit(l.warp, 'w'))
    return std::nullopt;
  for (const AxisBit &o : owner)
    if (o.bit < 0)
      return std::nullopt;
  return owner;
}

int64_t scanByBitsBytes(const ir::Op &scan) {
  const ir::Value *in = scan.operands[0];
  const ir::Layout &l = *in->layout;
  unsigned axis = static_cast<unsigned>(scan.axis());
  auto owners = axisBitOwners(l, axis, in->type.shape[axis]);
  if (!owners)
    return -1;
  // Registers left to exchange in each warp round: those not merged by the register bits below it.
  const int n = l.numRegs();
  size_t maxReps = 0;
  int m = 0;
  for (const AxisBit &o : *owners) {
    if (o.kind == 'r') {
      m |= 1 << o.bit;
    } else if (o.kind == 'w') {
      size_t c = 0;
      for (int r = 0; r < n; ++r)
        c += (r & m) == 0;
      maxReps = std::max(maxReps, c);
    }
  }
  int64_t perThreadSlots = static_cast<int64_t>(maxReps) * 32 * l.numWarps();
  int64_t regionBytes = 0;
  for (const ir::Value *x : scan.operands)
    regionBytes += perThreadSlots * ir::storageBytes(x->type.dtype());
  return 2 * regionBytes;
}

int64_t scanFallbackBytes(const ir::Op &scan) {
  int64_t total = 0;
  for (const ir::Value *x : scan.operands)
    total = alignUp(total, 8) + scan.operands[0]->type.numElements() * ir::storageBytes(x->type.dtype());
  return total;
}

std::map<const ir::Op *, ScratchNeed> scratchNeeds(const ir::Function &f, const std::map<const ir::Value *, int> &async) {
  std::set<const ir::Value *> used;
  bool layouts = true;
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    for (const ir::Value *v : op.operands)
      used.insert(v);
    for (auto &r : op.results)
      layouts &= !r->type.isTile() || r->layout != nullptr;
  });
  if (!layouts)
    return {}; // tile-stage IR: the backend's lowerings are not chosen yet
  std::map<const ir::Op *, ScratchNeed> needs;
  std::set<const ir::Op *> batched;
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    if (op.kind == OpKind::Reduce) {
      const ir::Value *in = op.operands[0];
      if (!in->type.isTile() || !in->layout || reduceWarpBits(*in->layout, op.axis()).empty())
        return;
      // A reduce that leads a batch (batch-reduces' `batch=N`) needs the batch's regions, laid
      // out as the backend writes them; its members are emitted with it and need none.
      if (batched.erase(&op))
        return;
      int64_t total = reducePartialsBytes(op, reduceWarpBits(*in->layout, op.axis()).size());
      auto it = std::next(op.parent->find(&op));
      for (int k = 0; k < op.reduceBatchSize(); ++k, ++it) {
        const ir::Op &m = **it;
        total = alignUp(total, 16) + reducePartialsBytes(m, reduceWarpBits(*m.operands[0]->layout, m.axis()).size());
        batched.insert(&m);
      }
      needs[&op].bytes = total;
      return;
    }
    ScratchNeed n = needOf(f, op, async, used);
    if (n.bytes > 0)
      needs[&op] = n;
  });
  return needs;
}

bool usesPipelineArea(const ir::Op &op, const std::map<const ir::Value *, int> &async) {
  for (const ir::Value *v : op.operands)
    if (async.count(v))
      return true;
  for (auto &r : op.results)
    if (async.count(r.get()))
      return true;
  return op.kind == OpKind::Store && op.tmaStaging() >= 0;
}

size_t lastPipelineTopOp(const ir::Function &f, const std::map<const ir::Value *, int> &async) {
  size_t idx = 0, last = 0;
  for (auto &top : f.body.ops) {
    bool uses = usesPipelineArea(*top, async);
    for (auto &r : top->regions)
      ir::walk(*r, [&](ir::Op &o) { uses |= usesPipelineArea(o, async); });
    if (uses)
      last = idx;
    ++idx;
  }
  return last;
}

} // namespace tle::transforms
