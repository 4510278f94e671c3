// The verifier's rules for the GPU stage: tensor maps, the split cluster barrier's phases, shared
// matrices, wgmma and warp specialisation; Verifier.cpp calls them.
#include "VerifyGpu.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

namespace tle::ir {

namespace {

bool sharedScalarPtr(const Type &t) { return t.isScalar() && t.elem.isPointer() && t.elem.space == AddrSpace::Shared; }

/// The shape a LocalLoad / LocalStore moves for `alloc`: its one dim, or its matrix [R, C].
std::vector<int64_t> movedShape(const Op &alloc) {
  if (alloc.allocShape().size() == 1)
    return alloc.allocShape();
  std::array<int64_t, 2> m = matrixShape(alloc);
  return {m[0], m[1]};
}

std::string shapeText(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

/// `p` (operand `what`) points into a local_alloc buffer of element type `elem`; returns the
/// alloc, or sets `err`.
const Op *bufferOf(const Value *p, const char *what, std::string &err) {
  if (!sharedScalarPtr(p->type)) {
    err = std::string("expects ") + what + " to be a scalar shared-memory pointer, got " + p->type.str();
    return nullptr;
  }
  const Op *alloc = sharedBuffer(p);
  if (!alloc)
    err = std::string("expects ") + what + " to point into a local_alloc buffer (the alloc's pointer or an addptr of it)";
  return alloc;
}

/// The element offset of scalar shared pointer `p` from its buffer's start when every AddPtr
/// on the way adds a constant; nullopt otherwise.
std::optional<int64_t> constantOffset(const Value *p) {
  int64_t off = 0;
  for (; p && p->def && p->def->kind == OpKind::AddPtr; p = p->def->operands[0]) {
    const Op *c = p->def->operands[1]->def;
    if (!c || c->kind != OpKind::Constant || __builtin_add_overflow(off, c->intValue(), &off))
      return std::nullopt;
  }
  return off;
}

/// `p` (operand `what`) at the first element of one matrix of `alloc`'s buffer, when its
/// offset is a constant; "" or the problem.
std::string atMatrix(const Value *p, const Op &alloc, const char *what) {
  std::optional<int64_t> off = constantOffset(p);
  std::array<int64_t, 2> m = matrixShape(alloc);
  int64_t per = m[0] * m[1], total = numElements(alloc.allocShape());
  if (!off || (*off >= 0 && *off % per == 0 && *off + per <= total))
    return "";
  return std::string("expects ") + what + " at the start of one of the buffer's " + std::to_string(total / per) +
         " matrices (an element offset k * " + std::to_string(per) + "), got element offset " + std::to_string(*off);
}

std::string localMove(const Op &op) {
  std::string err;
  const Op *alloc = bufferOf(op.operands[0], "the buffer", err);
  if (!alloc)
    return err;
  if (std::string e = atMatrix(op.operands[0], *alloc, "the buffer"); !e.empty())
    return e;
  const Type &tile = op.kind == OpKind::LocalLoad ? op.result()->type : op.operands[1]->type;
  DType t = op.operands[0]->type.elem.pointee;
  std::vector<int64_t> shape = movedShape(*alloc);
  if (tile != Type(ScalarType{t}, shape))
    return "expects " + Type(ScalarType{t}, shape).str() + " (one matrix of the buffer), got " + tile.str();
  return "";
}

/// A wgmma operand in shared memory: a swizzled matrix of `rows` x `cols` (`what` names it).
std::string wgmmaMatrix(const Value *p, const char *what, int64_t rows, int64_t cols) {
  std::string err;
  const Op *alloc = bufferOf(p, what, err);
  if (!alloc)
    return err;
  if (!alloc->allocSwizzle())
    return std::string("expects ") + what + " in a swizzled buffer (local_alloc swizzle=32, 64 or 128)";
  std::array<int64_t, 2> m = matrixShape(*alloc);
  if (alloc->allocShape().size() < 2 || m[0] != rows || m[1] != cols)
    return std::string("expects ") + what + " to be a " + shapeText({rows, cols}) + " matrix, got " +
           shapeText(alloc->allocShape().size() < 2 ? alloc->allocShape() : std::vector<int64_t>{m[0], m[1]});
  return atMatrix(p, *alloc, what);
}

bool wgmmaInput(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || isFP8(t) || t == DType::I8 || t == DType::U8;
}

std::string wgmma(const Function &f, const Op &op) {
  const Value *a = op.operands[0], *b = op.operands[1], *acc = op.operands[2];
  if (!acc->type.isTile() || acc->type.rank() != 2)
    return "expects a rank-2 accumulator tile, got " + acc->type.str();
  if (op.result()->type != acc->type)
    return "result must have the accumulator's type " + acc->type.str() + ", got " + op.result()->type.str();
  bool regA = a->type.isTile();
  DType ta = regA ? a->type.dtype() : a->type.elem.pointee;
  DType tb = sharedScalarPtr(b->type) ? b->type.elem.pointee : DType::I1;
  if (!wgmmaInput(ta) || !wgmmaInput(tb) || (ta != tb && !(isFP8(ta) && isFP8(tb))))
    return "expects fp16, bf16, fp32 (tf32), fp8 or int8 operands of one type (fp8 of either format), got " +
           a->type.str() + " and " + b->type.str();
  bool integer = isInteger(ta);
  if (acc->type.dtype() != (integer ? DType::I32 : DType::F32))
    return std::string("expects an ") + (integer ? "i32" : "fp32") + " accumulator for " + name(ta) + " inputs, got " +
           acc->type.str();
  int64_t M = acc->type.shape[0], N = acc->type.shape[1];
  int64_t eb = storageBytes(ta), kStep = 32 / eb;
  if (f.numWarps % 4 || M % (16 * f.numWarps))
    return "needs whole warpgroups along M: num_warps a multiple of 4 and M a multiple of 16 * num_warps (" +
           std::to_string(16 * f.numWarps) + "), got M = " + std::to_string(M) + " with num_warps = " +
           std::to_string(f.numWarps);
  if (N % 16 || N < 16)
    return "expects N a positive multiple of 16, got " + std::to_string(N);
  bool kMajorOnly = ta == DType::F32 || isFP8(ta) || integer;
  if (kMajorOnly && (op.wgmmaTransA() || !op.wgmmaTransB()))
    return std::string("reads ") + name(ta) + " operands K-major only: a as [M, K] and b as [N, K] (trans_b)";
  int64_t K;
  if (regA) {
    if (eb != 2 || op.wgmmaTransA())
      return "takes a register operand a of fp16 or bf16 only, as an [M, K] tile (no trans_a)";
    if (a->type.rank() != 2 || a->type.shape[0] != M)
      return "expects a register operand a of shape [" + std::to_string(M) + ", K], got " + a->type.str();
    K = a->type.shape[1];
  } else {
    std::string err;
    const Op *alloc = bufferOf(a, "operand a", err);
    if (!alloc)
      return err;
    std::array<int64_t, 2> m = matrixShape(*alloc);
    K = op.wgmmaTransA() ? m[0] : m[1];
    if (std::string e = wgmmaMatrix(a, "operand a", op.wgmmaTransA() ? K : M, op.wgmmaTransA() ? M : K); !e.empty())
      return e;
  }
  if (K % kStep || K < kStep)
    return "expects K a positive multiple of " + std::to_string(kStep) + " (32 bytes), got " + std::to_string(K);
  return wgmmaMatrix(b, "operand b", op.wgmmaTransB() ? N : K, op.wgmmaTransB() ? K : N);
}

std::string wgmmaWait(const Op &op) {
  if (op.sync.pending < 0 || op.sync.pending > 7)
    return "expects 0 to 7 pending groups, got " + std::to_string(op.sync.pending);
  if (op.results.size() != op.operands.size())
    return "expects one result per operand";
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (!op.operands[i]->type.isTile() || op.result(static_cast<unsigned>(i))->type != op.operands[i]->type ||
        (op.operands[i]->type.dtype() != DType::F32 && op.operands[i]->type.dtype() != DType::I32))
      return "expects fp32 or i32 tiles (wgmma accumulators) and results of their types";
  return "";
}

std::string warpSpecialize(const Function &f, const Op &op) {
  if (op.parent != &f.body)
    return "must be at the kernel's top level";
  const std::vector<int64_t> &w = op.partitionWarps(), &r = op.partitionRegisters();
  if (w.empty() || op.regions.size() != w.size() + 1)
    return "expects a default region and one partition per worker (warps=[...])";
  int64_t total = f.numWarps;
  for (int64_t n : w) {
    if (n < 1 || n > 32)
      return "expects 1 to 32 warps per worker, got " + std::to_string(n);
    total += n;
  }
  if (total > 32)
    return "needs " + std::to_string(total) + " warps in all, more than 32 (1024 threads)";
  if (!r.empty()) {
    if (r.size() != w.size() + 1)
      return "expects one register budget per partition, default first (regs=[...] of " +
             std::to_string(w.size() + 1) + ")";
    int64_t regs = 0;
    for (size_t i = 0; i < r.size(); ++i) {
      int64_t warps = i ? w[i - 1] : f.numWarps;
      if (r[i] < 24 || r[i] > 256 || r[i] % 8)
        return "register budgets must be multiples of 8 from 24 to 256 (setmaxnreg), got " + std::to_string(r[i]);
      if (warps % 4)
        return "register budgets apply to whole warpgroups: partition " + std::to_string(i) + " has " +
               std::to_string(warps) + " warps";
      regs += r[i] * warps * 32;
    }
    if (regs > 65536)
      return "register budgets take " + std::to_string(regs) + " registers, more than the SM's 65536";
  }
  for (size_t i = 0; i < op.regions.size(); ++i) {
    const Block &b = *op.regions[i];
    if (!b.args.empty())
      return "partitions take no arguments";
    const Op *y = b.terminator();
    if (!y || y->kind != OpKind::Yield || !y->operands.empty())
      return "each partition must end with a yield of no values";
  }
  return "";
}

/// The rules for ops inside the partitions of `ws` (OpKind::WarpSpecialize); the problem at
/// `where`, or "".
std::string partitionRules(const Op &ws, int numWarps, SourceLoc &where) {
  std::string bad;
  for (size_t i = 0; i < ws.regions.size() && bad.empty(); ++i) {
    const int64_t first = ws.partitionFirstWarp(i, numWarps);
    walk(const_cast<Block &>(*ws.regions[i]), [&](Op &o) {
      if (!bad.empty())
        return;
      bool tile = false;
      for (auto &res : o.results)
        tile |= res->type.isTile();
      for (const Value *v : o.operands)
        tile |= v->type.isTile();
      bool cta = (o.kind == OpKind::Barrier || o.kind == OpKind::BarrierArrive) && o.sync.barrierId >= 0 &&
                 o.sync.threads == 0;
      bool cluster = o.kind == OpKind::ClusterBarrier || o.kind == OpKind::ClusterArrive ||
                     o.kind == OpKind::ClusterWait || o.kind == OpKind::GridBarrier ||
                     o.kind == OpKind::SubmeshBarrier || o.kind == OpKind::DeviceBarrier ||
                     o.kind == OpKind::SignalWait;
      bool remote = o.kind == OpKind::RemotePtr || (o.kind == OpKind::MbarrierArrive && o.operands.size() > 1);
      int64_t warps = i ? ws.partitionWarps()[i - 1] : numWarps;
      if (i > 0 && tile && warps != numWarps)
        bad = "a worker partition of " + std::to_string(warps) + " warps computes on scalars only (a tile's "
              "layout spans num_warps = " + std::to_string(numWarps) + " warps)";
      else if (i > 0 && tile && numWarps % 4 == 0 && first % 4)
        bad = "a worker partition that computes on tiles starts at a warpgroup (warp " + std::to_string(first) +
              " is not a multiple of 4): put the workers of fewer warps after it";
      else if (cta)
        bad = "a named barrier of the whole CTA in a warp partition waits for warps that never come (give "
              "threads=, or use `barrier`, the partition's own)";
      else if (cluster)
        bad = "a cluster barrier in a warp partition waits for the other partitions' threads, which never come";
      else if (i > 0 && remote)
        bad = "a worker partition does not access other CTAs' shared memory (its warps exit before the "
              "cluster's exit protocol)";
      if (!bad.empty()) {
        where = o.loc;
        bad = "'" + std::string(name(o.kind)) + "': " + bad;
      }
    });
  }
  return bad;
}

/// The wgmma results still in flight: every Wgmma result and `async` dot's, a WgmmaWait N > 0
/// result whose wgmma is among the last N issued before the wait in its block (so certainly
/// among the groups left in flight), and what a loop or branch carries or yields of them (a
/// `wgmma_drain` loop's results are complete).
std::set<const Value *> wgmmaInFlight(const Function &f) {
  std::set<const Value *> pending;
  walk(const_cast<Block &>(f.body), [&](Op &op) {
    if (op.kind == OpKind::Wgmma || (op.kind == OpKind::Dot && op.isAsyncWgmma()))
      pending.insert(op.result());
    if (op.kind != OpKind::WgmmaWait || op.sync.pending == 0)
      return;
    // The wgmma ops issued before the wait in its block, latest first (ops with regions count
    // as one group of unknown origin).
    std::vector<const Op *> latest;
    for (auto it = op.parent->ops.begin(); it->get() != &op; ++it)
      if ((*it)->kind == OpKind::Wgmma || ((*it)->kind == OpKind::Dot && (*it)->isAsyncWgmma()) ||
          !(*it)->regions.empty())
        latest.insert(latest.begin(), it->get());
    latest.resize(std::min(latest.size(), static_cast<size_t>(op.sync.pending)));
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (std::find(latest.begin(), latest.end(), op.operands[i]->def) != latest.end())
        pending.insert(op.result(static_cast<unsigned>(i)));
  });
  for (bool changed = true; changed;) {
    changed = false;
    walk(const_cast<Block &>(f.body), [&](Op &op) {
      if (op.kind == OpKind::For)
        for (size_t i = 0; i < op.results.size(); ++i)
          if (pending.count(op.operands[3 + i]) || pending.count(op.regions[0]->terminator()->operands[i])) {
            changed |= pending.insert(op.regions[0]->args[i + 1].get()).second;
            if (!op.wgmmaDrain())
              changed |= pending.insert(op.result(static_cast<unsigned>(i))).second;
          }
      if (op.kind == OpKind::If)
        for (size_t i = 0; i < op.results.size(); ++i)
          for (auto &r : op.regions)
            if (pending.count(r->terminator()->operands[i]))
              changed |= pending.insert(op.result(static_cast<unsigned>(i))).second;
    });
  }
  return pending;
}

/// Reads of wgmma results in flight (wgmmaInFlight): only wgmma_wait, a wgmma's accumulator
/// (a chained group) and a loop or branch carrying them may take one.
std::string wgmmaResultUses(const Function &f, SourceLoc &where) {
  std::set<const Value *> pending = wgmmaInFlight(f);
  std::string bad;
  walk(const_cast<Block &>(f.body), [&](Op &op) {
    for (size_t i = 0; i < op.operands.size() && bad.empty(); ++i) {
      if (!pending.count(op.operands[i]))
        continue;
      const Op *owner = op.parent ? op.parent->parent : nullptr;
      bool carried = (op.kind == OpKind::For && i >= 3) ||
                     (op.kind == OpKind::Yield && owner && (owner->kind == OpKind::For || owner->kind == OpKind::If));
      bool chained = i == 2 && (op.kind == OpKind::Wgmma || (op.kind == OpKind::Dot && op.isAsyncWgmma()));
      if (op.kind == OpKind::WgmmaWait || chained || carried)
        continue;
      where = op.loc;
      bad = "'" + std::string(name(op.kind)) +
            "': reads the result of a wgmma still in flight (pass it through a wgmma_wait that leaves its "
            "group complete: wgmma_wait 0, or N below the groups issued after it)";
    }
  });
  return bad;
}

/// The shared buffer (LocalAlloc) that pointers `p` (a pointer or a tile of them, through
/// splats, broadcasts and addptrs) point into, or null.
const Op *bufferOfPointers(const Value *p) {
  while (p && p->def && p->type.isTile() &&
         (p->def->kind == OpKind::AddPtr || p->def->kind == OpKind::Splat || p->def->kind == OpKind::Broadcast ||
          p->def->kind == OpKind::ExpandDims || p->def->kind == OpKind::ConvertLayout))
    p = p->def->operands[0];
  return p && !p->type.isTile() ? sharedBuffer(p) : nullptr;
}

/// Writes into a matrix a wgmma group still in flight reads: a store, local_store, TMA copy or
/// cp.async into a one-matrix buffer that is an operand of a wgmma not yet retired by a
/// wgmma_wait in the same block (wgmma_wait N retires all but the last N groups). A ring's
/// slots (buffers of several matrices, addressed at run time) are the protocol's to order.
std::string wgmmaOperandWrites(const Block &b, SourceLoc &where) {
  std::vector<std::vector<const Op *>> groups; // the operand buffers of each group in flight
  for (auto &u : b.ops) {
    const Op &op = *u;
    for (auto &r : op.regions)
      if (std::string bad = wgmmaOperandWrites(*r, where); !bad.empty())
        return bad;
    if (op.kind == OpKind::Wgmma) {
      std::vector<const Op *> reads;
      for (size_t i = 0; i < 2; ++i)
        if (const Op *a = op.operands[i]->type.isTile() ? nullptr : sharedBuffer(op.operands[i])) {
          std::array<int64_t, 2> m = matrixShape(*a);
          if (numElements(a->allocShape()) == m[0] * m[1])
            reads.push_back(a);
        }
      groups.push_back(reads);
    } else if (op.kind == OpKind::WgmmaWait) {
      size_t keep = std::min(groups.size(), static_cast<size_t>(op.sync.pending));
      groups.erase(groups.begin(), groups.end() - static_cast<long>(keep));
    } else if (op.kind == OpKind::Store || op.kind == OpKind::LocalStore || op.kind == OpKind::TmaLoad ||
               op.kind == OpKind::AsyncCopy) {
      const Op *written = bufferOfPointers(op.operands[0]);
      if (!written && !op.operands[0]->type.isTile())
        written = sharedBuffer(op.operands[0]);
      for (const auto &g : groups)
        if (written && std::find(g.begin(), g.end(), written) != g.end()) {
          where = op.loc;
          return "'" + std::string(name(op.kind)) + "': writes a matrix that a wgmma still in flight reads (the "
                 "group reads its operands until a wgmma_wait retires it: wgmma_wait 0 before writing)";
        }
    }
  }
  return "";
}

/// Calls `fn` on `op` and every op nested in its regions.
template <typename F> void walk(const Op &op, F &&fn) {
  fn(op);
  for (auto &r : op.regions)
    for (auto &o : r->ops)
      walk(*o, fn);
}

} // namespace

std::string tensorMapsError(const Function &f) {
  if (f.declaredTensorMaps < 0 || size_t(f.declaredTensorMaps) > f.tensorMaps.size())
    return "declared tensor maps out of range";
  for (size_t k = 0; k < f.tensorMaps.size(); ++k) {
    const TensorMapParam &t = f.tensorMaps[k];
    std::string m = "tensor map " + std::to_string(k) + ": ";
    size_t r = t.box.size();
    if (r < 1 || r > 5 || t.shape.size() != r || t.strides.size() != r)
      return m + "needs rank 1 to 5 and one shape, stride and box dim per dim";
    if (t.base < 0 || size_t(t.base) >= f.params.size() || !f.params[t.base].type.isPointer() ||
        f.params[t.base].type.pointee != t.dtype)
      return m + "its base must be a pointer parameter to " + name(t.dtype);
    for (const auto *list : {&t.shape, &t.strides})
      for (const TensorMapParam::Source &src : *list)
        for (int p : src.params)
          if (p < 0 || size_t(p) >= f.params.size() || !isInteger(f.params[p].type.dtype))
            return m + "shapes and strides are products of integer parameters and a constant";
    const TensorMapParam::Source &last = t.strides.back();
    if (!last.params.empty() || last.value != 1)
      return m + "the innermost stride must be 1";
    unsigned eb = storageBytes(t.dtype);
    for (int64_t b : t.box)
      if (b < 1 || b > 256)
        return m + "box dims must be 1 to 256, got " + std::to_string(b);
    int64_t inner = t.box.back() * eb;
    if (inner % 16)
      return m + "the inner box dim must span a multiple of 16 bytes, got " + std::to_string(inner);
    if (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 && t.swizzle != 128)
      return m + "swizzle must be 0, 32, 64 or 128, got " + std::to_string(t.swizzle);
    if (t.swizzle && inner > t.swizzle)
      return m + "the inner box dim spans " + std::to_string(inner) + " bytes, more than the " +
             std::to_string(t.swizzle) + "-byte swizzle";
  }
  return "";
}

std::string clusterPhases(const Block &b, bool &arrived, SourceLoc &where) {
  for (auto &op : b.ops) {
    std::string bad;
    if (op->kind == OpKind::ClusterArrive && arrived)
      bad = "'cluster_arrive': arrives again before a cluster_wait (every thread arrives once per phase)";
    else if (op->kind == OpKind::ClusterWait && !arrived)
      bad = "'cluster_wait': no cluster_arrive before it (the wait would never complete)";
    else if (op->kind == OpKind::ClusterBarrier && arrived)
      bad = "'cluster_barrier': a cluster_arrive is pending (wait for it first)";
    if (!bad.empty()) {
      where = op->loc;
      return bad;
    }
    if (op->kind == OpKind::ClusterArrive || op->kind == OpKind::ClusterWait)
      arrived = op->kind == OpKind::ClusterArrive;
    for (auto &r : op->regions) {
      bool inner = arrived;
      if (std::string e = clusterPhases(*r, inner, where); !e.empty())
        return e;
      if (inner != arrived) {
        where = op->loc;
        return "'" + std::string(name(op->kind)) + "': a region " + (inner ? "arrives at" : "waits for") +
               " the cluster barrier without the matching " + (inner ? "cluster_wait" : "cluster_arrive") +
               " in the same region";
      }
    }
  }
  return "";
}

std::string verifyMatrixOp(const Function &f, const Op &op) {
  switch (op.kind) {
  case OpKind::LocalLoad: case OpKind::LocalStore: return localMove(op);
  case OpKind::Wgmma: return wgmma(f, op);
  case OpKind::WgmmaWait: return wgmmaWait(op);
  case OpKind::WarpSpecialize: return warpSpecialize(f, op);
  default: return "";
  }
}

std::string verifyTmaBuffer(const Op &op, const TensorMapParam &map) {
  const Op *alloc = sharedBuffer(op.operands[0]);
  if (!alloc)
    return ""; // a pointer whose buffer the verifier does not follow
  if (alloc->allocSwizzle() != map.swizzle)
    return "tensor map " + std::to_string(op.sync.map) + " arranges its box with a " + std::to_string(map.swizzle) +
           "-byte swizzle, its buffer with " +
           (alloc->allocSwizzle() ? std::to_string(alloc->allocSwizzle()) + "-byte one" : std::string("none")) +
           " (local_alloc swizzle= must match the map's)";
  int64_t box = numElements(map.box), total = numElements(alloc->allocShape());
  int64_t off = constantOffset(op.operands[0]).value_or(0);
  if (off < 0 || box > total - off)
    return "the box of " + std::to_string(box) + " elements does not fit its buffer of " + std::to_string(total) +
           " elements from element offset " + std::to_string(off);
  return "";
}

std::string verifySharedPointer(const Op &addptr) {
  const Op *alloc = addptr.result()->type.isScalar() ? sharedBuffer(addptr.result()) : nullptr;
  std::optional<int64_t> off = alloc ? constantOffset(addptr.result()) : std::nullopt;
  int64_t total = alloc ? numElements(alloc->allocShape()) : 0;
  if (!off || (*off >= 0 && *off <= total))
    return "";
  return "element offset " + std::to_string(*off) + " is outside its buffer of " + std::to_string(total) + " elements";
}

std::string verifySwizzledAlloc(const Op &alloc) {
  int sw = alloc.allocSwizzle();
  if (!sw)
    return "";
  if (sw != 32 && sw != 64 && sw != 128)
    return "swizzle must be 32, 64 or 128 bytes, got " + std::to_string(sw);
  const std::vector<int64_t> &s = alloc.allocShape();
  int64_t eb = storageBytes(alloc.result()->type.elem.pointee);
  if (s.size() < 2)
    return "a swizzled buffer holds matrices: rank 2 or more, got rank " + std::to_string(s.size());
  std::array<int64_t, 2> m = matrixShape(alloc);
  if (m[0] % 8)
    return "a swizzled matrix has a multiple of 8 rows, got " + std::to_string(m[0]);
  if ((m[1] * eb) % sw)
    return "a swizzled matrix's rows are whole " + std::to_string(sw) + "-byte column blocks, got " +
           std::to_string(m[1] * eb) + " bytes";
  return "";
}

std::string verifyMatrixFunction(const Function &f, SourceLoc &where) {
  if (std::string bad = wgmmaResultUses(f, where); !bad.empty())
    return bad;
  if (std::string bad = wgmmaOperandWrites(f.body, where); !bad.empty())
    return bad;
  // Named barriers 1..partitions are the partitions' own (OpKind::WarpSpecialize).
  size_t partitions = 0;
  const Op *tileOp = nullptr; // the first op before the warp_specialize with a tile
  for (auto &op : f.body.ops) {
    if (op->kind == OpKind::WarpSpecialize) {
      if (partitions) {
        where = op->loc;
        return "'warp_specialize': a kernel has one warp_specialize";
      }
      partitions = op->regions.size();
      if (std::string bad = partitionRules(*op, f.numWarps, where); !bad.empty())
        return bad;
      if (tileOp) {
        where = tileOp->loc;
        return "'" + std::string(name(tileOp->kind)) +
               "': before a warp_specialize every warp of the block runs the kernel, so it computes on scalars "
               "only (tiles belong in its partitions or after it)";
      }
    }
    if (partitions || tileOp)
      continue;
    walk(*op, [&](const Op &o) {
      for (auto &r : o.results)
        if (!tileOp && r->type.isTile())
          tileOp = &o;
    });
  }
  if (!partitions)
    return "";
  std::string bad;
  walk(const_cast<Block &>(f.body), [&](Op &op) {
    bool named = (op.kind == OpKind::Barrier || op.kind == OpKind::BarrierArrive) && op.sync.barrierId >= 1;
    if (bad.empty() && named && static_cast<size_t>(op.sync.barrierId) <= partitions) {
      where = op.loc;
      bad = "'" + std::string(name(op.kind)) + "': named barriers 1 to " + std::to_string(partitions) +
            " are the warp partitions' own in this kernel, got id=" + std::to_string(op.sync.barrierId);
    }
  });
  return bad;
}

/// Barrier's optional and BarrierArrive's required named barrier: id 0..15 (PTX has 16 per
/// CTA), threads a positive multiple of 32 up to 1024 (whole warps of one CTA).
std::string namedBarrierError(const Op &op) {
  const SyncAttrs &a = op.sync;
  bool arrive = op.kind == OpKind::BarrierArrive;
  if (arrive && (a.barrierId < 0 || a.threads == 0))
    return "expects a named barrier: id=0..15 and threads=N";
  if (a.barrierId < -1 || a.barrierId > 15)
    return "expects a barrier id from 0 to 15, got " + std::to_string(a.barrierId);
  if (a.threads < 0 || a.threads % 32 || a.threads > 1024)
    return "expects threads= to be a multiple of 32 from 32 to 1024 (whole warps), got " +
           std::to_string(a.threads);
  if (a.threads && a.barrierId < 0)
    return "threads= needs a named barrier (id=)";
  return "";
}

/// AsyncCopy into a pipeline slot: the slot a pipeline_slot of a cp.async pipeline names, a tile
/// of global pointers to the slot's element type, of the pipeline's [rows, cols] in 16-byte
/// vectors, or of any shape in the pipeline's `copy` bytes for private slots.
static std::string slotCopyError(const Function &fn, const Op &op) {
  const Value *d = op.operands[0];
  if (!d->def || d->def->kind != OpKind::PipelineSlot)
    return "a scalar destination must be a pipeline_slot (a cp.async pipeline's slot), got " + d->type.str();
  const int k = d->def->sync.pipeline;
  if (k < 0 || size_t(k) >= fn.pipelines.size() || fn.pipelines[size_t(k)].tmaMap >= 0)
    return "copies into the slots of a cp.async pipeline; pipeline " + std::to_string(k) + " is not one";
  const PipelineBuffer &p = fn.pipelines[size_t(k)];
  const Type &s = op.operands[1]->type;
  if (!s.isTile() || !s.elem.isPointer() || s.elem.space != AddrSpace::Global ||
      (!p.privateSlots && s.shape != std::vector<int64_t>{p.rows, p.cols}) || s.elem.pointee != d->type.elem.pointee)
    return std::string("expects a ") +
           (p.privateSlots ? "" : "[" + std::to_string(p.rows) + ", " + std::to_string(p.cols) + "] ") +
           "tile of global pointers to " + name(d->type.elem.pointee) + " (pipeline " + std::to_string(k) +
           "'s tile), got " + s.str();
  const int vec = p.privateSlots ? p.copyBytes : 16;
  if (op.sync.vec != 0 && op.sync.vec != vec)
    return "copies into pipeline " + std::to_string(k) + "'s slots in " + std::to_string(vec) +
           "-byte vectors, got vec=" + std::to_string(op.sync.vec);
  if (op.operands.size() > 2 && op.operands[2]->type != s.withElem(ScalarType{DType::I1}))
    return "mask must be i1 of the pointers' shape, got " + op.operands[2]->type.str();
  return "";
}

/// AsyncCopy: a shared pointer tile and a global one of one shape and pointee, an i1 mask of
/// that shape; a vector of 4, 8 or 16 bytes that holds whole elements; `.cg` only for 16. Or a
/// scalar destination: a pipeline slot (slotCopyError).
std::string asyncCopyError(const Function &fn, const Op &op) {
  const Type &d = op.operands[0]->type, &s = op.operands[1]->type;
  if (d.isScalar() && d.elem.isPointer() && d.elem.space == AddrSpace::Shared)
    return slotCopyError(fn, op);
  if (!d.isTile() || !d.elem.isPointer() || d.elem.space != AddrSpace::Shared)
    return "expects a tile of shared-memory pointers as destination, got " + d.str();
  if (!s.isTile() || !s.elem.isPointer() || s.elem.space != AddrSpace::Global)
    return "expects a tile of global-memory pointers as source, got " + s.str();
  if (d.shape != s.shape || d.elem.pointee != s.elem.pointee || d.elem.pointee == DType::I1)
    return "expects source and destination of one shape and element type (not i1), got " + d.str() +
           " and " + s.str();
  if (op.operands.size() > 2 && op.operands[2]->type != s.withElem(ScalarType{DType::I1}))
    return "mask must be i1 of the pointers' shape, got " + op.operands[2]->type.str();
  int v = op.sync.vec;
  unsigned eb = storageBytes(d.elem.pointee);
  if ((v != 0 && v != 4 && v != 8 && v != 16) || (v && v % static_cast<int>(eb)))
    return "expects vec=4, 8 or 16 bytes, a multiple of the " + std::to_string(eb) + "-byte element, got " +
           std::to_string(v);
  if (op.sync.cache == CopyCache::CG && v && v != 16)
    return "cache=cg copies 16-byte vectors only, got vec=" + std::to_string(v);
  return "";
}

/// submesh_barrier: a scalar `*i32_shared` counter, members distinct cluster ranks below the
/// function's cluster size (at least one; 16 at most, 8 portable).
std::string submeshBarrierError(const Function &fn, const Op &op) {
  if (op.operands[0]->type != Type(ScalarType::ptrTo(DType::I32, AddrSpace::Shared)))
    return "expects a scalar *i32_shared counter, got " + op.operands[0]->type.str();
  const std::vector<int64_t> &m = op.submeshMembers();
  const int64_t ctas = int64_t(fn.cluster[0]) * fn.cluster[1] * fn.cluster[2];
  if (m.empty())
    return "expects at least one member";
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 0 || m[i] >= ctas)
      return "member " + std::to_string(m[i]) + " is not a rank of the function's cluster of " + std::to_string(ctas) +
             " CTAs";
    if (std::find(m.begin(), m.begin() + long(i), m[i]) != m.begin() + long(i))
      return "member " + std::to_string(m[i]) + " is listed twice";
  }
  return "";
}

/// Whether `t` may be a pipeline fill number: a 32-bit integer scalar (pipeline-fills makes them u32).
static bool fillNumber(const Type &t) { return t == Type::scalar(DType::I32) || t == Type::scalar(DType::U32); }

/// pipeline_mbarrier names a slot of a TMA pipeline of the function (by index, or by an i32 fill
/// number given at run time; its `empty` barrier only
/// in a warp-specialised kernel, whose producer warps release slots) and yields its address.
/// Why `op`'s pipeline= names no TMA pipeline of `fn` ("" when it names one); `cpAsync` says
/// what a cp.async pipeline lacks.
static std::string tmaPipelineError(const Function &fn, const Op &op, const char *cpAsync) {
  int k = op.sync.pipeline;
  if (k < 0 || size_t(k) >= fn.pipelines.size())
    return "expects pipeline= to name one of the function's " + std::to_string(fn.pipelines.size()) +
           " pipelines, got " + std::to_string(k);
  if (fn.pipelines[size_t(k)].tmaMap < 0)
    return "pipeline " + std::to_string(k) + " is filled by cp.async" + cpAsync;
  return "";
}

std::string pipelineMbarrierError(const Function &fn, const Op &op) {
  const Type mbar(ScalarType::ptrTo(DType::I64, AddrSpace::Shared));
  if (op.result()->type != mbar)
    return "expects a scalar *i64_shared result, got " + op.result()->type.str();
  std::string bad = tmaPipelineError(fn, op, " and has no mbarriers");
  if (!bad.empty())
    return bad;
  int k = op.sync.pipeline;
  const PipelineBuffer &p = fn.pipelines[size_t(k)];
  if (!op.operands.empty() && !fillNumber(op.operands[0]->type))
    return "expects an i32 or u32 fill number, got " + op.operands[0]->type.str();
  if (op.operands.empty() && (op.sync.slot < 0 || op.sync.slot >= p.slots))
    return "expects a slot of pipeline " + std::to_string(k) + " (0 to " + std::to_string(p.slots - 1) +
           "), got " + std::to_string(op.sync.slot);
  if (op.sync.empty && fn.producerWarps <= 0)
    return "'empty' names a warp-specialised pipeline's release barrier; this kernel has no producer warps";
  return "";
}

/// pipeline_slot and pipeline_value name a pipeline of the function and take an i32 or u32 fill
/// number; a slot's pointer is to an element of the pipeline's size, a value is a tile of such
/// elements, of the pipeline's [rows, cols] unless its slots are private (any shape).
std::string pipelineSlotError(const Function &fn, const Op &op) {
  int k = op.sync.pipeline;
  if (k < 0 || size_t(k) >= fn.pipelines.size())
    return "expects pipeline= to name one of the function's " + std::to_string(fn.pipelines.size()) +
           " pipelines, got " + std::to_string(k);
  const PipelineBuffer &p = fn.pipelines[size_t(k)];
  if (!fillNumber(op.operands[0]->type))
    return "expects an i32 or u32 fill number, got " + op.operands[0]->type.str();
  const Type &r = op.result()->type;
  bool slot = op.kind == OpKind::PipelineSlot;
  DType elem = slot ? (r.elem.isPointer() && r.elem.space == AddrSpace::Shared ? r.elem.pointee : DType::I1)
                    : r.dtype();
  bool shaped = slot ? r.isScalar() : r.isTile() && (p.privateSlots || r.shape == std::vector<int64_t>{p.rows, p.cols});
  if (!shaped || elem == DType::I1 || elem == DType::Ptr || storageBytes(elem) != p.elemBytes)
    return std::string("expects ") +
           (slot ? "a scalar shared pointer to " : "a tile [" + std::to_string(p.rows) + ", " + std::to_string(p.cols) + "] of ") +
           std::to_string(p.elemBytes) + "-byte elements (pipeline " + std::to_string(k) + "), got " + r.str();
  return "";
}

/// TmaLoad (dst, bar, coords) and TmaStore (src, coords): a tensor map of the function, a
/// scalar shared pointer to its element type, an mbarrier (loads), one i32 coordinate per dim.
std::string tmaCopyError(const Function &fn, const Op &op) {
  int k = op.sync.map;
  if (k < 0 || size_t(k) >= fn.tensorMaps.size())
    return "expects map= to name one of the function's " + std::to_string(fn.tensorMaps.size()) +
           " tensor maps, got " + std::to_string(k);
  const TensorMapParam &t = fn.tensorMaps[size_t(k)];
  const Type buf(ScalarType::ptrTo(t.dtype, AddrSpace::Shared));
  if (op.operands[0]->type != buf)
    return "expects a scalar " + buf.str() + " buffer (tensor map " + std::to_string(k) + " holds " +
           name(t.dtype) + "), got " + op.operands[0]->type.str();
  size_t first = 1;
  if (op.kind == OpKind::TmaLoad) {
    const Type mbar(ScalarType::ptrTo(DType::I64, AddrSpace::Shared));
    if (op.operands.size() < 2 || op.operands[1]->type != mbar)
      return "expects an mbarrier (a scalar *i64_shared) after the destination";
    first = 2;
  }
  if (op.operands.size() - first != t.box.size())
    return "expects " + std::to_string(t.box.size()) + " coordinates for tensor map " + std::to_string(k) +
           ", got " + std::to_string(op.operands.size() - first);
  for (size_t i = first; i < op.operands.size(); ++i)
    if (op.operands[i]->type != Type::scalar(DType::I32))
      return "coordinates must be i32 scalars, got " + op.operands[i]->type.str();
  if (op.sync.multicast) {
    int64_t cluster = int64_t(fn.cluster[0]) * fn.cluster[1] * fn.cluster[2];
    if (op.sync.multicast != cluster)
      return "multicast=" + std::to_string(op.sync.multicast) + " must be the function's cluster size, " +
             std::to_string(cluster);
    if (op.sync.issuer >= op.sync.multicast)
      return "issuer=" + std::to_string(op.sync.issuer) + " is not a rank of the cluster of " +
             std::to_string(op.sync.multicast);
  }
  return verifyTmaBuffer(op, t);
}

/// The mbarrier ops: operand 0 a scalar `*i64_shared`; the counts in PTX's ranges (arrival
/// and transaction counts below 2^20); a remote rank and a phase as i32 (phase also i1).
std::string mbarrierOpError(const Op &op) {
  const Type mbar(ScalarType::ptrTo(DType::I64, AddrSpace::Shared));
  if (op.operands[0]->type != mbar)
    return "expects an mbarrier: a scalar *i64_shared pointer, got " + op.operands[0]->type.str();
  const SyncAttrs &a = op.sync;
  constexpr int64_t kMax = (int64_t(1) << 20) - 1;
  switch (op.kind) {
  case OpKind::MbarrierInit:
    if (a.count < 1 || a.count > kMax)
      return "expects an arrival count=1.." + std::to_string(kMax) + ", got " + std::to_string(a.count);
    return "";
  case OpKind::MbarrierArrive:
    if (a.count < 1 || a.count > kMax)
      return "expects an arrival count=1.." + std::to_string(kMax) + ", got " + std::to_string(a.count);
    if (a.tx < 0 || a.tx > kMax)
      return "expects tx=0.." + std::to_string(kMax) + " bytes, got " + std::to_string(a.tx);
    if (a.tx && a.count != 1)
      return "an arrival with tx= counts once: count must be 1, got " + std::to_string(a.count);
    if (a.per != Arrivers::Cta && a.per != Arrivers::Warp && a.per != Arrivers::Thread &&
        a.per != Arrivers::Warpgroup)
      return "expects per=cta, warp, warpgroup or thread";
    if (op.operands.size() > 1 && op.operands[1]->type != Type::scalar(DType::I32))
      return "expects an i32 scalar CTA rank, got " + op.operands[1]->type.str();
    return "";
  case OpKind::MbarrierExpectTx:
    if (a.tx < 1 || a.tx > kMax)
      return "expects tx=1.." + std::to_string(kMax) + " bytes, got " + std::to_string(a.tx);
    return "";
  case OpKind::MbarrierWait: {
    const Type &p = op.operands[1]->type;
    if (p != Type::scalar(DType::I32) && p != Type::scalar(DType::I1))
      return "expects an i32 or i1 scalar phase, got " + p.str();
    return "";
  }
  default:
    return "";
  }
}

} // namespace tle::ir
