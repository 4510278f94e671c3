// The tile IR verifier: operand types and shapes per op kind, terminators, dominance in regions.
#include "VerifyGpu.h"
#include "tle/IR/BoundMask.h"
#include "tle/IR/IR.h"
#include "tle/IR/Layout.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>

namespace tle::ir {

namespace {

bool isTerminator(OpKind k) { return k == OpKind::Yield || k == OpKind::Condition || k == OpKind::Return; }

struct Verifier {
  const Function &fn;
  std::string msg;
  SourceLoc where;
  std::set<const Value *> defined;

  explicit Verifier(const Function &f) : fn(f) {}

  bool fail(const Op &op, const std::string &m) {
    msg = "'" + std::string(name(op.kind)) + "': " + m;
    where = op.loc;
    return false;
  }

  /// A reduce marked `batch=N` (transforms::batchReduces) is followed in its block by N reduces
  /// without a mark of their own that read none of the batch's results.
  bool reduceBatch(const Op &op) {
    int n = op.reduceBatchSize();
    if (n <= 0 || !op.parent)
      return true;
    std::set<const Value *> batch;
    auto it = op.parent->find(&op);
    for (int k = 0; k <= n; ++k, ++it) {
      if (it == op.parent->ops.end() || (*it)->kind != OpKind::Reduce || (k && (*it)->reduceBatchSize()))
        return fail(op, "batch=" + std::to_string(n) + " needs " + std::to_string(n) +
                            " reduces without a batch of their own right after it");
      for (const Value *v : (*it)->operands)
        if (batch.count(v))
          return fail(**it, "a reduce of a batch reads another's result");
      for (auto &r : (*it)->results)
        batch.insert(r.get());
    }
    return true;
  }

  /// Verifies `b`, region `region` of `owner` (null for the function body). The values `b`
  /// defines (its arguments, its ops' results) are visible in `b` after their definition and in
  /// the regions nested in it, not after `b` ends: a region's values reach its parent only
  /// through its terminator (the parent op's results).
  bool block(const Block &b, const Op *owner, size_t region) {
    std::vector<const Value *> scope;
    auto define = [&](const Value *v) {
      if (defined.insert(v).second)
        scope.push_back(v);
    };
    for (auto &a : b.args)
      define(a.get());
    bool ok = true;
    for (auto &op : b.ops) {
      for (Value *v : op->operands)
        if (!defined.count(v)) {
          ok = fail(*op, "operand used before its definition or outside its region");
          break;
        }
      ok = ok && (!isTerminator(op->kind) || terminates(*op, b, owner, region)) && arity(*op) && check(*op);
      for (size_t r = 0; ok && r < op->regions.size(); ++r)
        ok = block(*op->regions[r], op.get(), r);
      if (!ok)
        break;
      for (auto &res : op->results)
        define(res.get());
    }
    for (const Value *v : scope)
      defined.erase(v);
    return ok;
  }

  /// A terminator ends its block, and the block is one it can end: yield ends for and if bodies
  /// and the after region of while, condition the before region, return the function body.
  bool terminates(const Op &op, const Block &b, const Op *owner, size_t region) {
    if (&op != b.terminator())
      return fail(op, "a terminator must be the last op of its region");
    bool ok;
    if (op.kind == OpKind::Return)
      ok = !owner;
    else if (op.kind == OpKind::Condition)
      ok = owner && owner->kind == OpKind::While && region == 0;
    else
      ok = owner && (owner->kind == OpKind::For || owner->kind == OpKind::If || owner->kind == OpKind::WarpSpecialize ||
                     (owner->kind == OpKind::While && region == 1) ||
                     ((owner->kind == OpKind::Reduce || owner->kind == OpKind::Scan) &&
                      owner->reduceKind() == ReduceKind::Combine));
    if (!ok)
      return fail(op, "cannot end this region");
    return true;
  }

  /// Operand, result and region counts: checked before anything else reads them.
  bool arity(const Op &op) {
    size_t lo = 0, hi = 0, res = 1, regions = 0;
    switch (op.kind) {
    case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
      break;
    case OpKind::Splat: case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log:
    case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs: case OpKind::Cast:
    case OpKind::Bitcast: case OpKind::ExpandDims: case OpKind::Broadcast:
    case OpKind::ConvertLayout: case OpKind::Permute: case OpKind::Reshape: case OpKind::Flip:
      lo = hi = 1;
      break;
    case OpKind::Reduce: case OpKind::Scan:
      if (op.reduceKind() == ReduceKind::Combine)
        lo = 1, hi = SIZE_MAX, res = op.operands.size(), regions = 1;
      else
        lo = hi = 1, res = op.kind == OpKind::Scan && op.isExclusive() ? 2 : 1;
      break;
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::FDiv: case OpKind::IDiv:
    case OpKind::IRem: case OpKind::FRem: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr: case OpKind::Max: case OpKind::Min: case OpKind::Cmp:
    case OpKind::AddPtr: case OpKind::Cat: case OpKind::Join: case OpKind::UMulHi: case OpKind::Gather:
      lo = hi = 2;
      break;
    case OpKind::Select: case OpKind::Fma: case OpKind::Dot: case OpKind::AtomicCAS:
      lo = hi = 3;
      break;
    case OpKind::Histogram:
      lo = 1, hi = 2;
      break;
    case OpKind::ExternCall:
      lo = 1, hi = SIZE_MAX;
      break;
    case OpKind::InlineAsm:
      lo = 0, hi = SIZE_MAX, res = std::max<size_t>(op.results.size(), 1);
      break;
    case OpKind::Load:
      lo = 1, hi = 3;
      if (op.hasDescriptor()) // a tensor-descriptor load: + base, shape, strides, offsets, guards
        lo = 4 + 3 * op.blockShape().size(), hi = SIZE_MAX;
      break;
    case OpKind::Store:
      lo = 2, hi = 3, res = 0;
      if (op.hasDescriptor()) // a tensor-descriptor store: mask, base, shape, strides, offsets
        lo = hi = 4 + 3 * op.blockShape().size();
      break;
    case OpKind::AtomicRMW:
      lo = 2, hi = 3;
      break;
    case OpKind::Split:
      lo = hi = 1, res = 2;
      break;
    case OpKind::For: // checked by check()
      lo = 3, hi = SIZE_MAX, res = op.operands.size() >= 3 ? op.operands.size() - 3 : 0, regions = 1;
      break;
    case OpKind::If:
      lo = hi = 1, res = op.results.size(), regions = 2;
      break;
    case OpKind::While:
      lo = 0, hi = SIZE_MAX, res = op.results.size(), regions = 2;
      break;
    case OpKind::Condition:
      lo = 1, hi = SIZE_MAX, res = 0;
      break;
    case OpKind::Yield:
      lo = 0, hi = SIZE_MAX, res = 0;
      break;
    case OpKind::Print:
      lo = 0, hi = SIZE_MAX, res = 0;
      break;
    case OpKind::RawCall:
      lo = 0, hi = SIZE_MAX, res = op.rawResultOperands().size();
      break;
    case OpKind::Assert: case OpKind::SubmeshBarrier: case OpKind::DeviceBarrier:
      lo = hi = 1, res = 0;
      break;
    case OpKind::SignalWait:
      lo = hi = 2, res = 0;
      break;
    case OpKind::Barrier: case OpKind::GridDepControl: case OpKind::ClusterBarrier: case OpKind::GridBarrier:
    case OpKind::ClusterArrive: case OpKind::ClusterWait: case OpKind::FenceProxyAsync:
    case OpKind::FenceMbarrierInit: case OpKind::BarrierArrive: case OpKind::AsyncCommitGroup:
    case OpKind::AsyncWaitGroup:
      lo = hi = 0, res = 0;
      break;
    case OpKind::AsyncCopy:
      lo = 2, hi = 3, res = 0;
      break;
    case OpKind::TmaStoreCommit: case OpKind::TmaStoreWait: case OpKind::TensormapPrefetch:
      lo = hi = 0, res = 0;
      break;
    case OpKind::PipelineMbarrier:
      lo = 0, hi = 1, res = 1;
      break;
    case OpKind::PipelineSlot: case OpKind::PipelineValue:
      lo = hi = 1, res = 1;
      break;
    case OpKind::PipelineWait:
      lo = hi = 1, res = 0;
      break;
    case OpKind::TmaLoad: case OpKind::TmaStore:
      lo = 1, hi = SIZE_MAX, res = 0;
      break;
    case OpKind::MbarrierInit: case OpKind::MbarrierExpectTx: case OpKind::MbarrierInval:
    case OpKind::AsyncCopyMbarrierArrive:
      lo = hi = 1, res = 0;
      break;
    case OpKind::MbarrierArrive:
      lo = 1, hi = 2, res = 0;
      break;
    case OpKind::MbarrierWait:
      lo = hi = 2, res = 0;
      break;
    case OpKind::LocalAlloc:
      lo = hi = 0, res = 1;
      break;
    case OpKind::LocalLoad:
      lo = hi = 1, res = 1;
      break;
    case OpKind::LocalStore:
      lo = hi = 2, res = 0;
      break;
    case OpKind::Wgmma:
      lo = hi = 3, res = 1;
      break;
    case OpKind::WgmmaWait:
      lo = 0, hi = SIZE_MAX, res = op.operands.size();
      break;
    case OpKind::WarpSpecialize:
      lo = hi = 0, res = 0, regions = op.regions.size() ? op.regions.size() : 1;
      break;
    case OpKind::RemotePtr:
      lo = hi = 2, res = 1;
      break;
    case OpKind::ExtractTile:
      lo = hi = 2, res = 1;
      break;
    case OpKind::InsertTile: // the shared-memory form has no result
      lo = hi = 3, res = op.operands.size() == 3 && !op.operands[0]->type.isTile() ? 0 : 1;
      break;
    case OpKind::Return:
      res = 0;
      break;
    default: // a kind without a row here is checked by check() alone
      return true;
    }
    auto count = [](size_t n, const char *what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
    if (op.operands.size() < lo || op.operands.size() > hi)
      return fail(op, "expects " +
                          (lo == hi ? count(lo, "operand")
                                    : hi == SIZE_MAX ? "at least " + count(lo, "operand")
                                                     : std::to_string(lo) + " to " + count(hi, "operand")) +
                          ", got " + std::to_string(op.operands.size()));
    if (op.results.size() != res)
      return fail(op, "expects " + count(res, "result") + ", got " + std::to_string(op.results.size()));
    if (op.regions.size() != regions)
      return fail(op, "expects " + count(regions, "region") + ", got " + std::to_string(op.regions.size()));
    return true;
  }

  /// An ExtractTile or InsertTile: the source (a tile, or a shared pointer into a local_alloc
  /// buffer), an i32 scalar index, windows that fit the source, the tile's element type; "" or
  /// the problem.
  static std::string tileOpError(const Op &op) {
    const Type &x = op.operands[0]->type;
    const Type &index = op.operands.back()->type;
    if (index != Type::scalar(DType::I32))
      return "expects an i32 scalar index, got " + index.str();
    if (op.kind == OpKind::InsertTile && op.windowBuffer())
      return windowFormError(op);
    ScalarType elem = x.elem;
    if (!x.isTile()) {
      if (!rowMajorBuffer(op.operands[0]))
        return "expects a tile or a row-major local_alloc buffer's pointer, got " + x.str();
      elem = ScalarType{x.elem.pointee};
    }
    const Type &t = op.kind == OpKind::ExtractTile ? op.result()->type : op.operands[1]->type;
    if (!x.isTile() && elem.dtype == DType::I8 && t.isTile() && t.dtype() == DType::I1)
      elem = ScalarType{DType::I1}; // i1 tiles are staged as bytes
    if (!t.isTile() || t.elem != elem)
      return "expects a tile of " + elem.str() + " elements, got " + t.str();
    TileWindow w = tileWindow(op);
    if (std::string why = tileWindowError(w.source, w.tile, op.tileStrides()); !why.empty())
      return why;
    if (op.kind == OpKind::InsertTile && x.isTile() && op.result()->type != x)
      return "result must have the source's type " + x.str() + ", got " + op.result()->type.str();
    return "";
  }

  /// Whether `v` is a row-major (unswizzled) local_alloc buffer's own *T_shared pointer.
  static bool rowMajorBuffer(const Value *v) {
    const Type &t = v->type;
    const Op *alloc = t.isScalar() && t.elem.isPointer() && t.elem.space == AddrSpace::Shared ? sharedBuffer(v) : nullptr;
    return alloc && alloc->result() == v && !alloc->allocSwizzle();
  }

  /// An InsertTile window form: a tile and a row-major local_alloc buffer of its element type
  /// (i1 staged as i8) whose shape is a window of the tile's, and a result of the tile's type when
  /// the tile comes first; "" or the problem.
  static std::string windowFormError(const Op &op) {
    const bool merge = op.operands[0]->type.isTile();
    const Value *t = op.operands[merge ? 0 : 1], *buf = op.operands[merge ? 1 : 0];
    if (!rowMajorBuffer(buf))
      return "window form expects a row-major local_alloc buffer's pointer, got " + buf->type.str();
    if (!t->type.isTile())
      return "window form expects a tile, got " + t->type.str();
    DType want = t->type.dtype() == DType::I1 ? DType::I8 : t->type.dtype();
    if (t->type.elem.isPointer() || buf->type.elem.pointee != want)
      return "window form expects a buffer of the tile's elements, got " + buf->type.str() + " for " + t->type.str();
    TileWindow w = tileWindow(op);
    if (std::string why = tileWindowError(w.source, w.tile, op.tileStrides()); !why.empty())
      return why;
    if (merge && op.result()->type != t->type)
      return "result must have the source's type " + t->type.str() + ", got " + op.result()->type.str();
    return "";
  }

  /// A Gather: a tile of numbers, an integer index tile of its rank and of its sizes outside
  /// the axis, the axis in range, a result of index's shape and src's element type (in the
  /// index's layout, at the gpu stage); "" or the problem.
  static std::string gatherError(const Op &op) {
    const Type &src = op.operands[0]->type, &index = op.operands[1]->type;
    if (!src.isTile() || src.elem.isPointer())
      return "expects a tile of numbers as src, got " + src.str();
    if (!index.isTile() || !isInteger(index.dtype()) || index.dtype() == DType::I1)
      return "expects a tile of integers (not i1) as index, got " + index.str();
    if (index.rank() != src.rank())
      return "expects an index of src's rank " + std::to_string(src.rank()) + ", got " + index.str();
    int axis = op.axis();
    if (axis < 0 || axis >= static_cast<int>(src.rank()))
      return "axis " + std::to_string(axis) + " out of range for " + src.str();
    for (size_t d = 0; d < src.rank(); ++d)
      if (static_cast<int>(d) != axis && src.shape[d] != index.shape[d])
        return "expects index " + index.str() + " to match src " + src.str() + " outside axis " +
               std::to_string(axis);
    if (op.result()->type != Type(src.elem, index.shape))
      return "result must be " + Type(src.elem, index.shape).str() + ", got " + op.result()->type.str();
    // gpu stage: each thread reads src at its own registers of index.
    const Layout *il = op.operands[1]->layout, *rl = op.result()->layout;
    if (il && rl && *il != *rl && !registerMap(*il, *rl))
      return "expects the result in the index's layout";
    return "";
  }

  /// The combine region of a Reduce or Scan with ReduceKind::Combine: 2N scalar arguments of
  /// the operands' element types (twice), a yield of N scalars of those types, and no op that
  /// touches memory or makes a tile.
  bool combineRegion(const Op &op) {
    if (op.reduceKind() != ReduceKind::Combine)
      return true;
    const Block &r = *op.regions[0];
    size_t n = op.operands.size();
    if (r.args.size() != 2 * n)
      return fail(op, "the combine region needs " + std::to_string(2 * n) + " arguments, got " +
                          std::to_string(r.args.size()));
    for (size_t i = 0; i < 2 * n; ++i)
      if (r.args[i]->type != Type(op.operands[i % n]->type.elem))
        return fail(op, "combine argument " + std::to_string(i) + " must be a " + op.operands[i % n]->type.elem.str() +
                            " scalar, got " + r.args[i]->type.str());
    const Op *y = r.terminator();
    if (!y || y->kind != OpKind::Yield || y->operands.size() != n)
      return fail(op, "the combine region must end with a yield of " + std::to_string(n) + " values");
    for (size_t i = 0; i < n; ++i)
      if (y->operands[i]->type != Type(op.operands[i]->type.elem))
        return fail(op, "combine result " + std::to_string(i) + " must be a " + op.operands[i]->type.elem.str() +
                            " scalar, got " + y->operands[i]->type.str());
    std::string bad;
    walk(const_cast<Block &>(r), [&](Op &o) {
      bool memory = o.kind == OpKind::Load || o.kind == OpKind::Store || o.kind == OpKind::AtomicRMW ||
                    o.kind == OpKind::AtomicCAS || o.kind == OpKind::Dot || o.kind == OpKind::Barrier ||
                    o.kind == OpKind::GridDepControl || o.kind == OpKind::ClusterBarrier ||
                    o.kind == OpKind::GridBarrier ||
                    o.kind == OpKind::ClusterArrive || o.kind == OpKind::ClusterWait || o.kind == OpKind::LocalAlloc ||
                    o.kind == OpKind::Print || o.kind == OpKind::Assert || isGpuSyncOp(o.kind);
      bool tile = false;
      for (auto &res : o.results)
        tile = tile || res->type.isTile();
      if (bad.empty() && (memory || tile))
        bad = name(o.kind);
    });
    if (!bad.empty())
      return fail(op, "the combine region may only compute on scalars, got '" + bad + "'");
    return true;
  }

  /// A load marked pipeline=k of a TMA pipeline of the function (a fill of its slots) loads the
  /// pipeline's tile [rows, cols] through a rank-2 descriptor.
  bool tmaFillShape(const Op &op) {
    int k = op.pipeline();
    if (k < 0 || size_t(k) >= fn.pipelines.size() || fn.pipelines[size_t(k)].tmaMap < 0)
      return true;
    const PipelineBuffer &b = fn.pipelines[size_t(k)];
    if (!op.hasDescriptor() || op.blockShape() != std::vector<int64_t>{b.rows, b.cols})
      return fail(op, "a fill of TMA pipeline " + std::to_string(k) + " loads its tile [" + std::to_string(b.rows) +
                          ", " + std::to_string(b.cols) + "] through a tensor descriptor");
    return true;
  }

  /// The cache, eviction and volatile hints of a Load or Store.
  /// A tensor-descriptor load's or store's operands from index 3 (`p`: its pointer tile's type):
  /// the base, a scalar pointer to the pointee; shape, strides and offsets, i64 scalars; then
  /// (loads only, by arity) i1 guards.
  bool descriptorOperands(const Op &op, const Type &p) {
    if (op.blockShape() != p.shape)
      return fail(op, "the descriptor's block shape must be the pointer tile's shape");
    const Type &base = op.operands[3]->type;
    if (!base.isScalar() || !base.elem.isPointer() || base.elem.pointee != p.elem.pointee)
      return fail(op, "the descriptor's base must be a scalar pointer of the accessed type");
    size_t guards = 4 + 3 * op.blockShape().size();
    for (size_t i = 4; i < op.operands.size(); ++i)
      if (op.operands[i]->type != Type(ScalarType{i < guards ? DType::I64 : DType::I1}))
        return fail(op, i < guards ? "the descriptor's shape, strides and offsets must be i64 scalars"
                                   : "a descriptor load's guards must be i1 scalars");
    return true;
  }

  bool memoryHints(const Op &op) {
    CacheHint c = op.cacheHint();
    EvictionHint e = op.evictionHint();
    bool load = op.kind == OpKind::Load;
    bool cacheOk = c == CacheHint::None || c == CacheHint::CG ||
                   (load ? (c == CacheHint::CA || c == CacheHint::CV) : (c == CacheHint::WB || c == CacheHint::CS || c == CacheHint::WT));
    if (!cacheOk || e < EvictionHint::None || e > EvictionHint::EvictLast)
      return fail(op, "unknown cache or eviction hint");
    if (op.operands[0]->type.elem.space != AddrSpace::Global &&
        (c != CacheHint::None || e != EvictionHint::None || op.hasDescriptor() || (!load && op.isTmaStore())))
      return fail(op, "cache and eviction hints, tensor descriptors and TMA apply to global memory only");
    return true;
  }

  /// A GPU op's rule from VerifyGpu.h: `bad` is "" when it holds.
  bool gpuRule(const Op &op, const std::string &bad) { return bad.empty() || fail(op, bad); }

  bool sameOperandTypes(const Op &op, size_t first = 0) {
    for (size_t i = first; i < op.operands.size(); ++i)
      if (op.operands[i]->type != op.operands[first]->type)
        return fail(op, "operand types differ: " + op.operands[first]->type.str() + " vs " + op.operands[i]->type.str());
    return true;
  }

  /// The element class an op needs, as a predicate and a name for the message.
  bool elemIs(const Op &op, const Type &t, bool ok, const char *what) {
    if (!ok)
      return fail(op, std::string("expects ") + what + ", got " + t.str());
    return true;
  }
  static bool numeric(DType d) { return d != DType::Ptr && d != DType::Invalid; }

  bool binary(const Op &op) {
    if (!sameOperandTypes(op))
      return false;
    const Type &t = op.operands[0]->type;
    if (op.result()->type != t)
      return fail(op, "result type differs from operand type");
    DType d = t.dtype();
    if (d == DType::Ptr)
      return fail(op, "arithmetic on pointers must use addptr");
    if (isFP8(d))
      return fail(op, "fp8 arithmetic must be computed in fp32 (Builder::binary), got " + t.str());
    switch (op.kind) {
    case OpKind::FDiv: case OpKind::FRem:
      return elemIs(op, t, isFloat(d), "float operands");
    case OpKind::IDiv: case OpKind::IRem: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr:
      return elemIs(op, t, isInteger(d), "integer operands");
    case OpKind::UMulHi:
      return elemIs(op, t, isInteger(d) && (bitWidth(d) == 32 || bitWidth(d) == 64), "32- or 64-bit integer operands");
    default:
      return true;
    }
  }

  bool unary(const Op &op) {
    const Type &t = op.operands[0]->type;
    if (op.result()->type != t)
      return fail(op, "result type differs from operand type");
    DType d = t.dtype();
    if (isFP8(d))
      return fail(op, "fp8 arithmetic must be computed in fp32 (Builder::unary), got " + t.str());
    switch (op.kind) {
    case OpKind::Not:
      return elemIs(op, t, isInteger(d), "an integer operand");
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt:
      return elemIs(op, t, isFloat(d), "a float operand");
    default:
      return elemIs(op, t, numeric(d), "a numeric operand");
    }
  }

  bool check(const Op &op) {
    switch (op.kind) {
    case OpKind::Constant:
      if (!op.result()->type.isScalar() || !numeric(op.result()->type.dtype()))
        return fail(op, "result must be a numeric scalar, got " + op.result()->type.str());
      return true;
    case OpKind::Splat:
      if (!op.operands[0]->type.isScalar() || !op.result()->type.isTile() ||
          op.result()->type.elem != op.operands[0]->type.elem)
        return fail(op, "expects a scalar and a tile of its type, got " + op.operands[0]->type.str() + " -> " +
                            op.result()->type.str());
      return true;
    case OpKind::ProgramId: case OpKind::NumPrograms:
      if (op.axis() < 0 || op.axis() > 2)
        return fail(op, "axis must be 0, 1 or 2, got " + std::to_string(op.axis()));
      if (op.result()->type != Type::scalar(DType::I32))
        return fail(op, "result must be i32");
      return true;
    case OpKind::Arange: {
      const Type &t = op.result()->type;
      int64_t start = op.arangeStart(), end = op.arangeEnd();
      if (start < std::numeric_limits<int32_t>::min() || end > int64_t(std::numeric_limits<int32_t>::max()) + 1 ||
          end <= start)
        return fail(op, "bounds " + std::to_string(start) + ", " + std::to_string(end) +
                            " must satisfy start < end within int32");
      if (t.rank() != 1 || t.dtype() != DType::I32 || t.shape[0] != end - start)
        return fail(op, "result must be tile<" + std::to_string(end - start) + "xi32>, got " + t.str());
      return true;
    }
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::FDiv: case OpKind::IDiv:
    case OpKind::IRem: case OpKind::FRem: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr: case OpKind::Max: case OpKind::Min: case OpKind::UMulHi:
      return binary(op);
    case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2:
    case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs:
      return unary(op);
    case OpKind::Fma:
      if (!sameOperandTypes(op))
        return false;
      if (op.result()->type != op.operands[0]->type)
        return fail(op, "result type differs from operand type");
      return elemIs(op, op.operands[0]->type,
                    isFloat(op.operands[0]->type.dtype()) && !isFP8(op.operands[0]->type.dtype()),
                    "fp16, bf16, fp32 or fp64 operands");
    case OpKind::Cmp:
      if (!sameOperandTypes(op))
        return false;
      if (isFP8(op.operands[0]->type.dtype()))
        return fail(op, "fp8 operands must be compared in fp32 (Builder::cmp), got " + op.operands[0]->type.str());
      if (op.result()->type != op.operands[0]->type.withElem(ScalarType{DType::I1}))
        return fail(op, "result must be i1 of the operands' shape");
      return true;
    case OpKind::Select:
      if (op.operands[0]->type.dtype() != DType::I1 || op.operands[1]->type != op.operands[2]->type ||
          op.operands[0]->type.shape != op.operands[1]->type.shape || op.result()->type != op.operands[1]->type)
        return fail(op, "expects (i1 cond, a, b) of one shape");
      return true;
    case OpKind::InlineAsm: {
      std::vector<Type> outs, ins;
      for (auto &r : op.results) {
        if (r->type.shape != op.result()->type.shape || !numeric(r->type.dtype()))
          return fail(op, "results must be numeric values of one shape");
        outs.push_back(r->type);
      }
      for (Value *v : op.operands) {
        if ((v->type.isTile() && v->type.shape != op.result()->type.shape) || !numeric(v->type.dtype()))
          return fail(op, "operands must be numeric scalars or tiles of the results' shape");
        ins.push_back(v->type);
      }
      if (std::string why = inlineAsmConstraintError(op.asmConstraints(), outs, ins, op.asmPack()); !why.empty())
        return fail(op, why);
      if (std::string why = inlineAsmOperandError(op.asmText(), inlineAsmRegisterCount(outs, ins, op.asmPack())); !why.empty())
        return fail(op, why);
      return true;
    }
    case OpKind::ExternCall:
      if (op.callee().empty())
        return fail(op, "needs a function name");
      for (Value *v : op.operands)
        if (v->type.shape != op.result()->type.shape || !numeric(v->type.dtype()) || isFP8(v->type.dtype()))
          return fail(op, "operands must be numeric values (not fp8) of the result's shape");
      return elemIs(op, op.result()->type, numeric(op.result()->type.dtype()) && !isFP8(op.result()->type.dtype()),
                    "a numeric result (not fp8)");
    case OpKind::Cast: {
      const Type &a = op.operands[0]->type, &r = op.result()->type;
      if (a.shape != r.shape)
        return fail(op, "must keep the shape: " + a.str() + " -> " + r.str());
      if (!numeric(a.dtype()) || !numeric(r.dtype()))
        return fail(op, "converts numbers only (pointers use bitcast): " + a.str() + " -> " + r.str());
      return true;
    }
    case OpKind::Bitcast: {
      const Type &a = op.operands[0]->type, &r = op.result()->type;
      if (a.shape != r.shape)
        return fail(op, "must keep the shape: " + a.str() + " -> " + r.str());
      if (a.elem.isPointer() != r.elem.isPointer()) {
        // A global pointer and a 64-bit integer convert both ways (Triton's int_to_ptr / ptr_to_int).
        const Type &p = a.elem.isPointer() ? a : r, &i = a.elem.isPointer() ? r : a;
        if (p.elem.space != AddrSpace::Global || !isInteger(i.dtype()) || bitWidth(i.dtype()) != 64)
          return fail(op, "converts a pointer only to a pointer, or a global pointer to and from a 64-bit integer: " +
                              a.str() + " -> " + r.str());
        return true;
      }
      if (bitWidth(a.dtype()) != bitWidth(r.dtype()))
        return fail(op, "needs types of one bit width: " + a.str() + " -> " + r.str());
      if (a.elem.isPointer() && a.elem.space != r.elem.space)
        return fail(op, "cannot move a pointer to another address space: " + a.str() + " -> " + r.str());
      return true;
    }
    case OpKind::AddPtr:
      if (!op.operands[0]->type.elem.isPointer() || !isInteger(op.operands[1]->type.dtype()) ||
          op.operands[0]->type.shape != op.operands[1]->type.shape)
        return fail(op, "expects (ptr, integer offset) of one shape");
      if (op.result()->type != op.operands[0]->type)
        return fail(op, "result type differs from the pointer type");
      if (std::string bad = verifySharedPointer(op); !bad.empty())
        return fail(op, bad);
      return true;
    case OpKind::Load: {
      const Type &p = op.operands[0]->type;
      if (!p.elem.isPointer())
        return fail(op, "expects a pointer operand");
      if (op.result()->type != Type(ScalarType{p.elem.pointee}, p.shape))
        return fail(op, "result must be the pointee type of the pointer's shape");
      if (op.operands.size() > 1 && op.operands[1]->type != p.withElem(ScalarType{DType::I1}))
        return fail(op, "mask must be i1 of the pointer's shape");
      if (op.operands.size() > 2 && op.operands[2]->type != op.result()->type)
        return fail(op, "other must have the result type");
      if (op.hasDescriptor() && !descriptorOperands(op, p)) // base, shape, strides, offsets, guards
        return false;
      if (op.hasDescriptor() && op.isAsyncHint())
        return fail(op, "the async hint (tle.load's is_async) marks loads through pointers, not tensor descriptors");
      if (!tmaFillShape(op))
        return false;
      return memoryHints(op);
    }
    case OpKind::Store: {
      const Type &p = op.operands[0]->type;
      if (!p.elem.isPointer() || op.operands[1]->type != Type(ScalarType{p.elem.pointee}, p.shape))
        return fail(op, "expects (ptr, value of the pointee type) of one shape");
      if (op.operands.size() > 2 && op.operands[2]->type != p.withElem(ScalarType{DType::I1}))
        return fail(op, "mask must be i1 of the pointer's shape");
      if (op.hasDescriptor() && !descriptorOperands(op, p)) // mask, then base, shape, strides, offsets
        return false;
      if (!op.hasDescriptor() && op.isTmaStore())
        return fail(op, "a TMA store needs the tensor descriptor (desc=[...])");
      if (op.isBoundsMask() && !boundMaskOf(op))
        return fail(op, "'bounds' needs a mask 'offs < n' (or <=, >, >=) on a rank-1 tile whose registers hold "
                        "distinct elements, offs an arange plus splatted i32 scalars and n a splatted i32 scalar");
      return memoryHints(op);
    }
    case OpKind::AtomicRMW: case OpKind::AtomicCAS: {
      const Type &p = op.operands[0]->type;
      if (!p.elem.isPointer())
        return fail(op, "expects a pointer operand");
      Type v(ScalarType{p.elem.pointee}, p.shape);
      if (isFP8(p.elem.pointee))
        return fail(op, "atomics do not take fp8 values");
      size_t values = op.kind == OpKind::AtomicCAS ? 2 : 1;
      for (size_t i = 1; i <= values; ++i)
        if (op.operands[i]->type != v)
          return fail(op, "values must be the pointee type of the pointer's shape");
      if (op.operands.size() > values + 1 && op.operands[values + 1]->type != p.withElem(ScalarType{DType::I1}))
        return fail(op, "mask must be i1 of the pointer's shape");
      if (op.result()->type != v)
        return fail(op, "result must be the pointee type of the pointer's shape");
      if ((op.kind == OpKind::AtomicRMW && (op.atomicKind() < AtomicKind::Add || op.atomicKind() > AtomicKind::Xchg)) ||
          op.memSem() < MemSem::Relaxed || op.memSem() > MemSem::AcqRel || op.memScope() < MemScope::Gpu ||
          op.memScope() > MemScope::Sys)
        return fail(op, "unknown operation, ordering or scope");
      return true;
    }
    case OpKind::ExpandDims: {
      const Type &in = op.operands[0]->type;
      if (op.axis() < 0 || unsigned(op.axis()) > in.rank())
        return fail(op, "axis " + std::to_string(op.axis()) + " out of range for " + in.str());
      auto shape = in.shape;
      shape.insert(shape.begin() + op.axis(), 1);
      if (op.result()->type != Type(in.elem, shape))
        return fail(op, "result must be " + Type(in.elem, shape).str() + ", got " + op.result()->type.str());
      return true;
    }
    case OpKind::Broadcast: {
      const Type &in = op.operands[0]->type, &r = op.result()->type;
      bool ok = in.isTile() && r.elem == in.elem && r.rank() == in.rank();
      for (unsigned d = 0; ok && d < in.rank(); ++d)
        ok = in.shape[d] == r.shape[d] || in.shape[d] == 1;
      if (!ok)
        return fail(op, "cannot broadcast " + in.str() + " to " + r.str());
      return true;
    }
    case OpKind::ConvertLayout:
      if (op.result()->type != op.operands[0]->type)
        return fail(op, "must keep the type");
      return true;
    case OpKind::Reduce: {
      auto &in = op.operands[0]->type;
      if (!in.isTile() || op.axis() < 0 || unsigned(op.axis()) >= in.rank())
        return fail(op, "axis out of range");
      auto shape = in.shape;
      shape.erase(shape.begin() + op.axis());
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const Type &t = op.operands[i]->type;
        if (t.shape != in.shape)
          return fail(op, "operands must have one shape, got " + in.str() + " and " + t.str());
        if (op.result(static_cast<unsigned>(i))->type.shape != shape || op.result(static_cast<unsigned>(i))->type.elem != t.elem)
          return fail(op, "result type mismatch");
        if (!elemIs(op, t, numeric(t.dtype()) && (!isFP8(t.dtype()) || op.reduceKind() == ReduceKind::Combine),
                    "numeric operands (fp8 only with a combine region)"))
          return false;
      }
      return combineRegion(op) && reduceBatch(op);
    }
    case OpKind::Scan: {
      auto &in = op.operands[0]->type;
      if (!in.isTile() || op.axis() < 0 || unsigned(op.axis()) >= in.rank())
        return fail(op, "axis " + std::to_string(op.axis()) + " out of range for " + in.str());
      if (op.isExclusive()) { // (sums, total): the total drops the axis (a scalar for rank 1)
        if (op.reduceKind() != ReduceKind::Sum)
          return fail(op, "an exclusive scan sums");
        auto shape = in.shape;
        shape.erase(shape.begin() + op.axis());
        Type total = shape.empty() ? Type(in.elem) : Type(in.elem, shape);
        if (op.result(1)->type != total)
          return fail(op, "the total must be " + total.str() + ", got " + op.result(1)->type.str());
      }
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const Type &t = op.operands[i]->type;
        if (t.shape != in.shape)
          return fail(op, "operands must have one shape, got " + in.str() + " and " + t.str());
        if (op.result(static_cast<unsigned>(i))->type != t)
          return fail(op, "result type differs from operand type");
        if (!elemIs(op, t, numeric(t.dtype()) && (!isFP8(t.dtype()) || op.reduceKind() == ReduceKind::Combine),
                    "numeric operands (fp8 only with a combine region)"))
          return false;
      }
      return combineRegion(op);
    }
    case OpKind::For: {
      const Block &body = *op.regions[0];
      size_t niter = op.operands.size() - 3;
      const Type &iv = op.operands[0]->type;
      if (!iv.isScalar() || !isInteger(iv.dtype()) || iv.dtype() == DType::I1 || op.operands[1]->type != iv ||
          op.operands[2]->type != iv)
        return fail(op, "bounds and step must be integer scalars of one type, got " + iv.str() + ", " +
                            op.operands[1]->type.str() + ", " + op.operands[2]->type.str());
      if (op.numStages() < 0 || op.numStages() > 16) // tl.range(num_stages=)'s range (Sema's rule)
        return fail(op, "num_stages must be from 0 to 16, got " + std::to_string(op.numStages()));
      if (body.args.size() != niter + 1)
        return fail(op, "body arguments / results do not match iter values");
      if (body.args[0]->type != iv)
        return fail(op, "the induction variable must have the bounds' type");
      Op *term = body.terminator();
      if (!term || term->kind != OpKind::Yield || term->operands.size() != niter)
        return fail(op, "body must end with a yield of every iter value");
      for (size_t i = 0; i < niter; ++i)
        if (term->operands[i]->type != op.operands[3 + i]->type || op.result(unsigned(i))->type != op.operands[3 + i]->type ||
            body.args[i + 1]->type != op.operands[3 + i]->type)
          return fail(op, "iter value " + std::to_string(i) + " changes type");
      return true;
    }
    case OpKind::Permute: {
      const Type &in = op.operands[0]->type;
      const std::vector<int64_t> &order = op.permutation();
      if (order.size() != in.rank() || op.result()->type.rank() != in.rank() || op.result()->type.elem != in.elem)
        return fail(op, "order must name every dim");
      std::vector<bool> seen(in.rank(), false);
      for (size_t i = 0; i < order.size(); ++i) {
        if (order[i] < 0 || order[i] >= int64_t(in.rank()) || seen[order[i]])
          return fail(op, "order is not a permutation");
        seen[order[i]] = true;
        if (op.result()->type.shape[i] != in.shape[order[i]])
          return fail(op, "result shape does not match the order");
      }
      return true;
    }
    case OpKind::Reshape:
      if (!op.operands[0]->type.isTile() || !op.result()->type.isTile() ||
          op.result()->type.numElements() != op.operands[0]->type.numElements() ||
          op.result()->type.elem != op.operands[0]->type.elem)
        return fail(op, "reshape must keep the element count and type");
      return true;
    case OpKind::Assert:
      if (op.operands[0]->type.dtype() != DType::I1)
        return fail(op, "expects one i1 condition and no results");
      return true;
    case OpKind::Print:
      return true; // any values, no results: checked by arity()
    case OpKind::RawCall: {
      auto shapes = op.rawMemrefs();
      if (shapes.size() != op.operands.size())
        return fail(op, "has " + std::to_string(op.operands.size()) + " operands but " + std::to_string(shapes.size()) +
                            " memref entries");
      if (op.rawSymbol().empty() || op.rawModule().empty())
        return fail(op, "needs a symbol and an LLVM module");
      for (size_t k = 0; k < op.results.size(); ++k) {
        int64_t i = op.rawResultOperands()[k];
        if (i < 0 || size_t(i) >= op.operands.size() || !op.operands[i]->type.isTile() ||
            op.results[k]->type != op.operands[i]->type)
          return fail(op, "result " + std::to_string(k) + " must be the new fragment of a tile operand (same type)");
      }
      for (size_t i = 0; i < shapes.size(); ++i) {
        const Type &t = op.operands[i]->type;
        if (t.isTile() && shapes[i].empty())
          continue; // a fragment
        if (!t.isScalar())
          return fail(op, "operands are scalars, pointers, buffers or fragment tiles, got " + t.str());
        if (!shapes[i].empty() && (!t.elem.isPointer() || t.elem.space != AddrSpace::Shared))
          return fail(op, "a memref operand must be a *T_shared buffer pointer, got " + t.str());
        for (int64_t d : shapes[i])
          if (d < 1)
            return fail(op, "memref dims must be positive");
        if (const Op *alloc = shapes[i].empty() ? nullptr : sharedBuffer(op.operands[i]);
            alloc && numElements(shapes[i]) > numElements(alloc->allocShape()))
          return fail(op, "memref " + std::to_string(i) + " has more elements than its buffer");
      }
      return true;
    }
    case OpKind::ClusterBarrier: case OpKind::ClusterArrive: case OpKind::ClusterWait: case OpKind::GridBarrier:
    case OpKind::FenceProxyAsync: case OpKind::FenceMbarrierInit: case OpKind::AsyncCommitGroup:
    case OpKind::GridDepControl:
      return true;
    case OpKind::AsyncWaitGroup:
      if (op.sync.all)
        return true;
      if (op.sync.pending < 0 || op.sync.pending > 63)
        return fail(op, "expects 0 to 63 pending groups, got " + std::to_string(op.sync.pending));
      return true;
    case OpKind::AsyncCopy:
      return gpuRule(op, asyncCopyError(fn, op));
    case OpKind::TmaLoad: case OpKind::TmaStore:
      return gpuRule(op, tmaCopyError(fn, op));
    case OpKind::TmaStoreCommit:
      return true;
    case OpKind::TensormapPrefetch:
      if (op.sync.map < 0 || size_t(op.sync.map) >= fn.tensorMaps.size())
        return fail(op, "expects map= to name one of the function's " + std::to_string(fn.tensorMaps.size()) +
                            " tensor maps, got " + std::to_string(op.sync.map));
      return true;
    case OpKind::PipelineMbarrier:
      return gpuRule(op, pipelineMbarrierError(fn, op));
    case OpKind::SubmeshBarrier:
      return gpuRule(op, submeshBarrierError(fn, op));
    case OpKind::DeviceBarrier: {
      const Type &c = op.operands[0]->type;
      if (!c.isScalar() || !c.elem.isPointer() || c.elem.space != AddrSpace::Global)
        return fail(op, "expects the device record as a scalar global pointer, got " + c.str());
      return true;
    }
    case OpKind::SignalWait: {
      const Type &s = op.operands[0]->type, &t = op.operands[1]->type;
      if (s != Type(ScalarType::ptrTo(DType::U64, AddrSpace::Global)) || t != Type::scalar(DType::U64))
        return fail(op, "expects (*u64 slot, u64 target) scalars, got " + s.str() + ", " + t.str());
      return true;
    }
    case OpKind::PipelineSlot: case OpKind::PipelineValue:
      return gpuRule(op, pipelineSlotError(fn, op));
    case OpKind::PipelineWait:
      if (!op.operands[0]->type.isTile())
        return fail(op, "expects a tile held in a pipeline's slots, got " + op.operands[0]->type.str());
      return true;
    case OpKind::TmaStoreWait:
      if (op.sync.pending < 0 || op.sync.pending > 63)
        return fail(op, "expects 0 to 63 pending groups, got " + std::to_string(op.sync.pending));
      return true;
    case OpKind::Barrier: case OpKind::BarrierArrive:
      return gpuRule(op, namedBarrierError(op));
    case OpKind::MbarrierInit: case OpKind::MbarrierArrive: case OpKind::MbarrierExpectTx: case OpKind::MbarrierWait:
    case OpKind::MbarrierInval: case OpKind::AsyncCopyMbarrierArrive:
      return gpuRule(op, mbarrierOpError(op));
    case OpKind::LocalAlloc: {
      const Type &r = op.result()->type;
      if (!r.isScalar() || !r.elem.isPointer() || r.elem.space != AddrSpace::Shared || r.elem.pointee == DType::I1)
        return fail(op, "expects a scalar shared-memory pointer result (not to i1), got " + r.str());
      const std::vector<int64_t> &shape = op.allocShape();
      if (shape.empty() || std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 1; }))
        return fail(op, "expects a shape of positive dims (shape=[...])");
      if (op.sharedOffset < -1 || (op.sharedOffset >= 0 && op.sharedOffset % 16))
        return fail(op, "expects a 16-byte aligned offset, got " + std::to_string(op.sharedOffset));
      if (std::string bad = verifySwizzledAlloc(op); !bad.empty())
        return fail(op, bad);
      if (op.allocSwizzle() && op.sharedOffset >= 0 && op.sharedOffset % 1024)
        return fail(op, "expects a swizzled buffer at a multiple of 1024 bytes, got offset " +
                            std::to_string(op.sharedOffset));
      return true;
    }
    case OpKind::LocalLoad: case OpKind::LocalStore: case OpKind::Wgmma: case OpKind::WgmmaWait:
    case OpKind::WarpSpecialize: {
      std::string bad = verifyMatrixOp(fn, op);
      return bad.empty() || fail(op, bad);
    }
    case OpKind::RemotePtr: {
      const Type &p = op.operands[0]->type;
      if (!p.elem.isPointer() || p.elem.space != AddrSpace::Shared)
        return fail(op, "expects a shared-memory pointer, got " + p.str());
      if (op.operands[1]->type != Type::scalar(DType::I32))
        return fail(op, "expects an i32 scalar rank, got " + op.operands[1]->type.str());
      if (op.result()->type != p.withElem(ScalarType::ptrTo(p.elem.pointee, AddrSpace::Cluster)))
        return fail(op, "result must be the cluster pointer of the operand's shape");
      return true;
    }
    case OpKind::ExtractTile: case OpKind::InsertTile: {
      std::string bad = tileOpError(op);
      return bad.empty() || fail(op, bad);
    }
    case OpKind::Flip: {
      const Type &in = op.operands[0]->type;
      if (!in.isTile() || op.result()->type != in)
        return fail(op, "expects a tile and a result of its type, got " + in.str() + " -> " + op.result()->type.str());
      if (op.axis() < 0 || op.axis() >= static_cast<int>(in.rank()))
        return fail(op, "axis out of range");
      return true;
    }
    case OpKind::Gather: {
      std::string bad = gatherError(op);
      return bad.empty() || fail(op, bad);
    }
    case OpKind::Cat: case OpKind::Join: {
      if (!sameOperandTypes(op))
        return false;
      const Type &in = op.operands[0]->type;
      auto shape = in.shape;
      if (op.kind == OpKind::Cat) {
        if (!in.isTile())
          return fail(op, "expects tiles, got " + in.str());
        shape[0] *= 2;
      } else {
        shape.push_back(2);
      }
      if (op.result()->type != Type(in.elem, shape))
        return fail(op, "result must be " + Type(in.elem, shape).str() + ", got " + op.result()->type.str());
      return true;
    }
    case OpKind::Split: {
      const Type &in = op.operands[0]->type;
      if (in.rank() < 2 || in.shape.back() != 2)
        return fail(op, "expects a tile of rank 2 or more whose last dim is 2, got " + in.str());
      Type half(in.elem, std::vector<int64_t>(in.shape.begin(), in.shape.end() - 1));
      if (op.result(0)->type != half || op.result(1)->type != half)
        return fail(op, "results must be " + half.str());
      return true;
    }
    case OpKind::Histogram: {
      const Type &x = op.operands[0]->type, &r = op.result()->type;
      if (!x.isTile() || x.rank() != 1 || !isInteger(x.dtype()) || x.dtype() == DType::I1)
        return fail(op, "expects a 1-D integer tile, got " + x.str());
      if (op.operands.size() == 2) {
        const Type &m = op.operands[1]->type;
        if (m.dtype() != DType::I1 || (m.isTile() && m.shape != x.shape))
          return fail(op, "mask must be an i1 scalar or an i1 tile of the input's shape, got " + m.str());
      }
      if (!r.isTile() || r.rank() != 1 || r.dtype() != DType::I32 || (r.shape[0] & (r.shape[0] - 1)) != 0)
        return fail(op, "result must be a 1-D i32 tile of a power-of-two size, got " + r.str());
      return true;
    }
    case OpKind::Dot: {
      const Type &a = op.operands[0]->type, &b = op.operands[1]->type, &c = op.operands[2]->type;
      if (a.rank() != 2 || b.rank() != 2 || c.rank() != 2 || a.shape[1] != b.shape[0] || c.shape[0] != a.shape[0] ||
          c.shape[1] != b.shape[1] || (a.elem != b.elem && !(isFP8(a.dtype()) && isFP8(b.dtype()))) ||
          op.result()->type != c)
        return fail(op, "shapes or types do not form acc[M,N] + a[M,K] @ b[K,N]");
      if (a.shape[0] < 16 || a.shape[1] < 16 || b.shape[1] < 16)
        return fail(op, "M, N and K must be at least 16");
      DType in = a.dtype();
      if (!numeric(in) || in == DType::I1)
        return fail(op, std::string("operands must be floats or integers wider than i1, got ") + name(in));
      DType acc = isInteger(in) ? DType::I32 : in == DType::F64 ? DType::F64 : DType::F32;
      if (c.dtype() != acc)
        return fail(op, std::string("the accumulator must be ") + name(acc) + " for " + name(in) + " operands, got " +
                            name(c.dtype()));
      if (int64_t sk = op.dotStageK(); sk != -1 && (sk < 16 || sk % 16 || a.shape[1] % sk || sk == a.shape[1]))
        return fail(op, "stage_k=" + std::to_string(sk) + " must be a multiple of 16 that divides K (" +
                            std::to_string(a.shape[1]) + ") and is less than it");
      return true;
    }
    case OpKind::If: {
      if (op.operands[0]->type != Type::scalar(DType::I1))
        return fail(op, "expects an i1 scalar condition and two regions");
      for (auto &r : op.regions) {
        Op *term = r->terminator();
        if (!term || term->kind != OpKind::Yield || term->operands.size() != op.results.size())
          return fail(op, "each region must end with a yield of every result");
        for (size_t i = 0; i < op.results.size(); ++i)
          if (term->operands[i]->type != op.result(static_cast<unsigned>(i))->type)
            return fail(op, "yielded value " + std::to_string(i) + " has the wrong type");
      }
      return true;
    }
    case OpKind::While: {
      const Block &before = *op.regions[0], &after = *op.regions[1];
      Op *cond = before.terminator();
      Op *yield = after.terminator();
      if (!cond || cond->kind != OpKind::Condition || !yield || yield->kind != OpKind::Yield)
        return fail(op, "before must end with condition, after with yield");
      if (before.args.size() != op.operands.size() || yield->operands.size() != op.operands.size())
        return fail(op, "carried values do not match");
      if (cond->operands.size() != op.results.size() + 1 || after.args.size() != op.results.size())
        return fail(op, "forwarded values do not match");
      if (cond->operands[0]->type != Type::scalar(DType::I1))
        return fail(op, "the condition must be an i1 scalar");
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (yield->operands[i]->type != op.operands[i]->type || before.args[i]->type != op.operands[i]->type)
          return fail(op, "carried value " + std::to_string(i) + " changes type");
      for (size_t i = 0; i < op.results.size(); ++i)
        if (cond->operands[i + 1]->type != op.result(unsigned(i))->type || after.args[i]->type != op.result(unsigned(i))->type)
          return fail(op, "forwarded value " + std::to_string(i) + " changes type");
      return true;
    }
    case OpKind::Return:
      if (!op.operands.empty())
        return fail(op, "a kernel returns no values");
      return true;
    case OpKind::Condition: case OpKind::Yield:
      return true; // checked with their parent op
    }
    return true;
  }
};

} // namespace

std::string verify(const Function &f, SourceLoc &where) {
  where = {};
  // num_warps as tlec's -w accepts it (a power of two, 1 to 32 warps: at most 1024 threads).
  if (f.numWarps < 1 || f.numWarps > 32 || (f.numWarps & (f.numWarps - 1)) != 0)
    return "num_warps must be a power of two from 1 to 32, got " + std::to_string(f.numWarps);
  if (f.numStages < 0 || f.numStages > 16)
    return "num_stages must be from 0 (the default) to 16, got " + std::to_string(f.numStages);
  if (f.sharedBytes < 0)
    return "shared_bytes must not be negative, got " + std::to_string(f.sharedBytes);
  if (f.producerWarps < 0 || f.numWarps + f.producerWarps > 32)
    return "producer_warps must be from 0 to " + std::to_string(32 - f.numWarps) + " (1024 threads), got " +
           std::to_string(f.producerWarps);
  if (f.maxRegisters != 0 && (f.maxRegisters < 24 || f.maxRegisters > 255))
    return "max_registers must be from 24 to 255, got " + std::to_string(f.maxRegisters);
  if (f.body.args.size() != f.params.size())
    return "function arguments do not match parameters";
  const int clusterSize = f.cluster[0] * f.cluster[1] * f.cluster[2];
  if (f.cluster[0] < 1 || f.cluster[1] < 1 || f.cluster[2] < 1 || clusterSize > 16)
    return "cluster dims must be positive, at most 16 CTAs in all (8 portable, 16 on H100 and H200)";
  for (const Param &p : f.params)
    if (p.type.isPointer() && p.type.space != AddrSpace::Global) {
      where = p.loc;
      return "kernel parameters point to global memory";
    }
  for (size_t i = 0; i < f.params.size(); ++i)
    if (f.body.args[i]->type != Type(f.params[i].type)) {
      where = f.params[i].loc;
      return "argument " + std::to_string(i) + " does not have its parameter's type";
    }
  Op *term = f.body.terminator();
  if (!term || term->kind != OpKind::Return)
    return "function body must end with return";
  if (std::string bad = tensorMapsError(f); !bad.empty())
    return bad;
  Verifier v(f);
  if (!v.block(f.body, nullptr, 0)) {
    where = v.where;
    return v.msg;
  }
  if (std::string bad = verifyMatrixFunction(f, where); !bad.empty())
    return bad;
  bool arrived = false; // the kernel may exit with an arrival pending
  if (std::string bad = clusterPhases(f.body, arrived, where); !bad.empty())
    return bad;
  // A constant remote rank must name a CTA of the kernel's cluster.
  std::string bad;
  walk(const_cast<Block &>(f.body), [&](Op &op) {
    bool remote = op.kind == OpKind::RemotePtr || (op.kind == OpKind::MbarrierArrive && op.operands.size() > 1);
    if (!remote || !bad.empty() || !op.operands[1]->def || op.operands[1]->def->kind != OpKind::Constant)
      return;
    int64_t rank = op.operands[1]->def->intValue();
    if (rank < 0 || rank >= clusterSize) {
      where = op.loc;
      bad = "'" + std::string(name(op.kind)) + "': rank " + std::to_string(rank) +
            " is outside the kernel's cluster of " + std::to_string(clusterSize) + " CTAs";
    }
  });
  return bad;
}

std::string verify(const Function &f) {
  SourceLoc where;
  std::string msg = verify(f, where);
  if (msg.empty() || !where.valid())
    return msg;
  // "'reduce' at line 3: axis out of range"
  size_t colon = msg.find("': ");
  if (colon == std::string::npos)
    return msg;
  return msg.substr(0, colon + 1) + " at line " + std::to_string(where.line) + msg.substr(colon + 1);
}

} // namespace tle::ir
