// Tile IR construction helpers (the verifier is in Verifier.cpp).
#include "tle/IR/IR.h"
#include "tle/IR/Layout.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>

namespace tle::ir {

const char *name(OpKind k) {
  switch (k) {
  case OpKind::Constant: return "constant";
  case OpKind::Splat: return "splat";
  case OpKind::ProgramId: return "program_id";
  case OpKind::NumPrograms: return "num_programs";
  case OpKind::Arange: return "arange";
  case OpKind::Add: return "add";
  case OpKind::Sub: return "sub";
  case OpKind::Mul: return "mul";
  case OpKind::FDiv: return "fdiv";
  case OpKind::IDiv: return "idiv";
  case OpKind::IRem: return "irem";
  case OpKind::FRem: return "frem";
  case OpKind::And: return "and";
  case OpKind::Or: return "or";
  case OpKind::Xor: return "xor";
  case OpKind::Shl: return "shl";
  case OpKind::Shr: return "shr";
  case OpKind::Max: return "max";
  case OpKind::UMulHi: return "umulhi";
  case OpKind::Min: return "min";
  case OpKind::Cmp: return "cmp";
  case OpKind::Select: return "select";
  case OpKind::Neg: return "neg";
  case OpKind::Not: return "not";
  case OpKind::Exp: return "exp";
  case OpKind::Exp2: return "exp2";
  case OpKind::Log: return "log";
  case OpKind::Log2: return "log2";
  case OpKind::Sqrt: return "sqrt";
  case OpKind::Rsqrt: return "rsqrt";
  case OpKind::Abs: return "abs";
  case OpKind::ExternCall: return "extern_call";
  case OpKind::InlineAsm: return "inline_asm";
  case OpKind::RawCall: return "raw_call";
  case OpKind::Fma: return "fma";
  case OpKind::Cast: return "cast";
  case OpKind::Bitcast: return "bitcast";
  case OpKind::AddPtr: return "addptr";
  case OpKind::Load: return "load";
  case OpKind::Store: return "store";
  case OpKind::AtomicRMW: return "atomic_rmw";
  case OpKind::AtomicCAS: return "atomic_cas";
  case OpKind::ExpandDims: return "expand_dims";
  case OpKind::Broadcast: return "broadcast";
  case OpKind::Reduce: return "reduce";
  case OpKind::ConvertLayout: return "convert_layout";
  case OpKind::Dot: return "dot";
  case OpKind::Permute: return "permute";
  case OpKind::Reshape: return "reshape";
  case OpKind::Cat: return "cat";
  case OpKind::Join: return "join";
  case OpKind::Split: return "split";
  case OpKind::Flip: return "flip";
  case OpKind::Gather: return "gather";
  case OpKind::Histogram: return "histogram";
  case OpKind::ExtractTile: return "extract_tile";
  case OpKind::InsertTile: return "insert_tile";
  case OpKind::Scan: return "scan";
  case OpKind::Print: return "print";
  case OpKind::Assert: return "assert";
  case OpKind::Barrier: return "barrier";
  case OpKind::LocalAlloc: return "local_alloc";
  case OpKind::RemotePtr: return "remote_ptr";
  case OpKind::ClusterBarrier: return "cluster_barrier";
  case OpKind::ClusterArrive: return "cluster_arrive";
  case OpKind::ClusterWait: return "cluster_wait";
  case OpKind::GridBarrier: return "grid_barrier";
  case OpKind::SubmeshBarrier: return "submesh_barrier";
  case OpKind::DeviceBarrier: return "device_barrier";
  case OpKind::SignalWait: return "signal_wait";
  case OpKind::MbarrierInit: return "mbarrier_init";
  case OpKind::MbarrierArrive: return "mbarrier_arrive";
  case OpKind::MbarrierExpectTx: return "mbarrier_expect_tx";
  case OpKind::MbarrierWait: return "mbarrier_wait";
  case OpKind::MbarrierInval: return "mbarrier_inval";
  case OpKind::FenceProxyAsync: return "fence_proxy_async";
  case OpKind::FenceMbarrierInit: return "fence_mbarrier_init";
  case OpKind::BarrierArrive: return "barrier_arrive";
  case OpKind::AsyncCopyMbarrierArrive: return "async_copy_mbarrier_arrive";
  case OpKind::AsyncCopy: return "async_copy";
  case OpKind::AsyncCommitGroup: return "async_commit_group";
  case OpKind::AsyncWaitGroup: return "async_wait_group";
  case OpKind::TmaLoad: return "tma_load";
  case OpKind::TmaStore: return "tma_store";
  case OpKind::TmaStoreCommit: return "tma_store_commit";
  case OpKind::TmaStoreWait: return "tma_store_wait";
  case OpKind::PipelineMbarrier: return "pipeline_mbarrier";
  case OpKind::TensormapPrefetch: return "tensormap_prefetch";
  case OpKind::PipelineWait: return "pipeline_wait";
  case OpKind::PipelineSlot: return "pipeline_slot";
  case OpKind::PipelineValue: return "pipeline_value";
  case OpKind::LocalLoad: return "local_load";
  case OpKind::LocalStore: return "local_store";
  case OpKind::Wgmma: return "wgmma";
  case OpKind::WgmmaWait: return "wgmma_wait";
  case OpKind::WarpSpecialize: return "warp_specialize";
  case OpKind::GridDepControl: return "griddepcontrol";
  case OpKind::For: return "for";
  case OpKind::If: return "if";
  case OpKind::While: return "while";
  case OpKind::Condition: return "condition";
  case OpKind::Yield: return "yield";
  case OpKind::Return: return "return";
  }
  return "?";
}

const char *name(AtomicKind k) {
  static const char *n[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  return n[static_cast<int>(k)];
}
const char *name(MemSem s) {
  static const char *n[] = {"relaxed", "acquire", "release", "acq_rel"};
  return n[static_cast<int>(s)];
}
const char *name(MemScope s) {
  static const char *n[] = {"gpu", "cta", "sys"};
  return n[static_cast<int>(s)];
}

const char *name(Arrivers a) {
  static const char *n[] = {"cta", "warp", "thread", "warpgroup"};
  return n[static_cast<int>(a)];
}

bool isGpuSyncOp(OpKind k) {
  switch (k) {
  case OpKind::MbarrierInit: case OpKind::MbarrierArrive: case OpKind::MbarrierExpectTx: case OpKind::MbarrierWait:
  case OpKind::MbarrierInval: case OpKind::FenceProxyAsync: case OpKind::FenceMbarrierInit:
  case OpKind::BarrierArrive: case OpKind::AsyncCopyMbarrierArrive: case OpKind::AsyncCopy:
  case OpKind::AsyncCommitGroup: case OpKind::AsyncWaitGroup: case OpKind::TmaLoad: case OpKind::TmaStore:
  case OpKind::TmaStoreCommit: case OpKind::TmaStoreWait: case OpKind::LocalLoad: case OpKind::LocalStore:
  case OpKind::Wgmma: case OpKind::WgmmaWait: case OpKind::PipelineMbarrier: case OpKind::TensormapPrefetch:
  case OpKind::PipelineWait: case OpKind::PipelineSlot: case OpKind::PipelineValue: case OpKind::SubmeshBarrier:
  case OpKind::DeviceBarrier: case OpKind::SignalWait:
    return true;
  default:
    return false;
  }
}

void replaceUsesFrom(Block &b, std::list<std::unique_ptr<Op>>::iterator it, const Value *from, Value *to) {
  auto swap = [&](Op &o) {
    for (Value *&v : o.operands)
      if (v == from)
        v = to;
  };
  for (; it != b.ops.end(); ++it) {
    swap(**it);
    for (auto &r : (*it)->regions)
      walk(*r, swap);
  }
}

const Op *sharedBuffer(const Value *p) {
  while (p && p->def && !p->type.isTile()) {
    if (p->def->kind == OpKind::LocalAlloc)
      return p->def;
    if (p->def->kind != OpKind::AddPtr)
      return nullptr;
    p = p->def->operands[0];
  }
  return nullptr;
}

std::string tileWindowError(const std::vector<int64_t> &source, const std::vector<int64_t> &tile,
                            const std::vector<int64_t> &strides) {
  if (tile.size() != source.size())
    return "a tile of rank " + std::to_string(tile.size()) + " does not fit a source of rank " +
           std::to_string(source.size());
  if (!strides.empty() && strides.size() != source.size())
    return std::to_string(strides.size()) + " strides for a source of rank " + std::to_string(source.size());
  for (size_t d = 0; d < source.size(); ++d) {
    int64_t s = strides.empty() ? tile[d] : strides[d];
    std::string dim = " along dim " + std::to_string(d);
    if (tile[d] < 1 || tile[d] > source[d])
      return "tile extent " + std::to_string(tile[d]) + dim + " is outside 1.." + std::to_string(source[d]);
    if (s < 1)
      return "stride " + std::to_string(s) + dim + " must be positive";
    if ((source[d] - tile[d]) % s != 0)
      return "stride " + std::to_string(s) + dim + " does not divide " + std::to_string(source[d]) + " - " +
             std::to_string(tile[d]) + " (the source extent minus the tile's)";
  }
  return "";
}

bool tileOpInRegisters(const Op &op) {
  return op.operands[0]->type.isTile() && !(op.kind == OpKind::InsertTile && op.windowBuffer());
}

TileWindow tileWindow(const Op &op) {
  TileWindow w;
  const Value *x = op.operands[0];
  auto bufferShape = [](const Value *p) { return sharedBuffer(p) ? sharedBuffer(p)->allocShape() : std::vector<int64_t>{}; };
  if (op.kind == OpKind::InsertTile && op.windowBuffer()) { // the tile is the source, the buffer the window
    bool merge = x->type.isTile();
    w.source = op.operands[merge ? 0 : 1]->type.shape;
    w.tile = bufferShape(op.operands[merge ? 1 : 0]);
  } else {
    w.source = x->type.isTile() ? x->type.shape : bufferShape(x);
    w.tile = op.kind == OpKind::ExtractTile ? op.result()->type.shape : op.operands[1]->type.shape;
  }
  w.strides = op.tileStrides().empty() ? w.tile : op.tileStrides();
  w.count = 1;
  for (size_t d = 0; d < w.source.size() && d < w.tile.size() && d < w.strides.size(); ++d) {
    w.grid.push_back(w.strides[d] > 0 ? (w.source[d] - w.tile[d]) / w.strides[d] + 1 : 1);
    w.count *= w.grid.back();
  }
  return w;
}

std::vector<int64_t> TileWindow::origin(int64_t index) const {
  uint64_t i = count > 0 ? static_cast<uint64_t>(index) % static_cast<uint64_t>(count) : 0;
  std::vector<int64_t> o(grid.size());
  for (size_t d = grid.size(); d-- > 0;) {
    o[d] = static_cast<int64_t>(i % static_cast<uint64_t>(grid[d])) * strides[d];
    i /= static_cast<uint64_t>(grid[d]);
  }
  return o;
}

std::array<int64_t, 2> matrixShape(const Op &alloc) {
  const std::vector<int64_t> &s = alloc.allocShape();
  if (s.size() < 2)
    return {1, s.empty() ? 1 : s[0]};
  return {s[s.size() - 2], s.back()};
}

const char *name(DotPrecision p) {
  return p == DotPrecision::IEEE ? "ieee" : p == DotPrecision::TF32x3 ? "tf32x3" : "tf32";
}

bool isElementwise(OpKind k) {
  switch (k) {
  case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::FDiv: case OpKind::IDiv:
  case OpKind::IRem: case OpKind::FRem: case OpKind::And: case OpKind::Or: case OpKind::Xor:
  case OpKind::Shl: case OpKind::Shr: case OpKind::Max: case OpKind::Min: case OpKind::UMulHi: case OpKind::Cmp:
  case OpKind::Select: case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2:
  case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs:
  case OpKind::Cast: case OpKind::Bitcast: case OpKind::AddPtr: case OpKind::ExternCall: case OpKind::Fma:
    return true;
  default:
    return false;
  }
}

const char *name(CmpPred p) {
  switch (p) {
  case CmpPred::Eq: return "eq";
  case CmpPred::Ne: return "ne";
  case CmpPred::Lt: return "lt";
  case CmpPred::Le: return "le";
  case CmpPred::Gt: return "gt";
  case CmpPred::Ge: return "ge";
  }
  return "?";
}

const char *name(ReduceKind k) {
  switch (k) {
  case ReduceKind::Sum: return "sum";
  case ReduceKind::Max: return "max";
  case ReduceKind::Min: return "min";
  case ReduceKind::Prod: return "prod";
  case ReduceKind::Combine: return "combine";
  }
  return "?";
}

std::list<std::unique_ptr<Op>>::iterator Block::find(const Op *op) {
  return std::find_if(ops.begin(), ops.end(), [&](const std::unique_ptr<Op> &o) { return o.get() == op; });
}

std::list<std::unique_ptr<Op>>::const_iterator Block::find(const Op *op) const {
  return std::find_if(ops.begin(), ops.end(), [&](const std::unique_ptr<Op> &o) { return o.get() == op; });
}

Value *Block::addArg(Type t, std::string hint) {
  args.push_back(std::make_unique<Value>(std::move(t)));
  Value *v = args.back().get();
  v->owner = this;
  v->index = static_cast<unsigned>(args.size() - 1);
  v->nameHint = std::move(hint);
  return v;
}

std::vector<std::vector<int64_t>> Op::rawMemrefs() const {
  need(__func__, K::RawCall);
  // Encoded in ints: per operand its rank r followed by its r dims, or -1 (passed as it is).
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < a_.ints.size();) {
    int64_t r = a_.ints[i++];
    std::vector<int64_t> s;
    for (int64_t d = 0; d < r && i < a_.ints.size(); ++d)
      s.push_back(a_.ints[i++]);
    shapes.push_back(std::move(s));
  }
  return shapes;
}

void Op::setRawMemrefs(const std::vector<std::vector<int64_t>> &shapes) {
  need(__func__, K::RawCall);
  a_.ints.clear();
  for (const auto &s : shapes) {
    a_.ints.push_back(s.empty() ? -1 : static_cast<int64_t>(s.size()));
    a_.ints.insert(a_.ints.end(), s.begin(), s.end());
  }
}

Value *Op::addResult(Type t) {
  results.push_back(std::make_unique<Value>(std::move(t)));
  Value *v = results.back().get();
  v->def = this;
  v->index = static_cast<unsigned>(results.size() - 1);
  return v;
}

void Op::attributeMisuse(const char *attr) const {
  std::fprintf(stderr, "internal error: '%s' op has no attribute %s()\n", name(kind), attr);
  std::abort();
}

namespace {
/// The bits of a double, so that equal attributes compare equal even for NaN.
uint64_t bitsOf(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
} // namespace

bool PipelineBuffer::operator==(const PipelineBuffer &o) const {
  return std::tie(base, slotBytes, slots, rows, cols, ld, swizzle, elemBytes, tmaMap, barBase, privateSlots, copyBytes,
                  restaged, dynamicFills) == std::tie(o.base, o.slotBytes, o.slots, o.rows, o.cols, o.ld, o.swizzle,
                                                      o.elemBytes, o.tmaMap, o.barBase, o.privateSlots, o.copyBytes,
                                                      o.restaged, o.dynamicFills);
}

bool Op::Attributes::operator==(const Attributes &o) const {
  uint64_t f = bitsOf(fval), of = bitsOf(o.fval);
  return std::tie(ival, ival2, f, axis, pred, reduceKind, ints, ints2, sym, constraints, pipeline, staging, tmaMap) ==
         std::tie(o.ival, o.ival2, of, o.axis, o.pred, o.reduceKind, o.ints, o.ints2, o.sym, o.constraints, o.pipeline,
                  o.staging, o.tmaMap);
}

bool Op::Attributes::operator<(const Attributes &o) const {
  uint64_t f = bitsOf(fval), of = bitsOf(o.fval);
  return std::tie(ival, ival2, f, axis, pred, reduceKind, ints, ints2, sym, constraints, pipeline, staging, tmaMap) <
         std::tie(o.ival, o.ival2, of, o.axis, o.pred, o.reduceKind, o.ints, o.ints2, o.sym, o.constraints, o.pipeline,
                  o.staging, o.tmaMap);
}

namespace {
thread_local uint64_t opsCreated = 0;
} // namespace

uint64_t opsCreatedOnThisThread() { return opsCreated; }

Op *Builder::create(OpKind k, SourceLoc loc, std::vector<Value *> operands, std::vector<Type> resultTypes) {
  ++opsCreated;
  auto op = std::make_unique<Op>(k, loc);
  op->operands = std::move(operands);
  for (auto &t : resultTypes)
    op->addResult(t);
  op->parent = block_;
  Op *raw = op.get();
  block_->ops.insert(before_, std::move(op));
  return raw;
}

Op *Builder::clone(const Op &op, std::vector<Value *> operands) {
  std::vector<Type> types;
  for (auto &r : op.results)
    types.push_back(r->type);
  Op *c = create(op.kind, op.loc, std::move(operands), types);
  c->setAttributes(op.attributes());
  c->sharedOffset = op.sharedOffset;
  c->sync = op.sync;
  for (size_t i = 0; i < op.results.size(); ++i)
    c->results[i]->nameHint = op.results[i]->nameHint;
  return c;
}

Value *Builder::constInt(SourceLoc loc, DType t, int64_t v) {
  Op *op = create(OpKind::Constant, loc, {}, {Type::scalar(t)});
  op->setIntValue(v);
  op->setFloatValue(static_cast<double>(v));
  return op->result();
}

const char *cacheHintName(CacheHint h) {
  switch (h) {
  case CacheHint::CA: return ".ca";
  case CacheHint::CG: return ".cg";
  case CacheHint::CV: return ".cv";
  case CacheHint::WB: return ".wb";
  case CacheHint::CS: return ".cs";
  case CacheHint::WT: return ".wt";
  case CacheHint::None: break;
  }
  return "";
}

const char *evictionHintName(EvictionHint h) {
  return h == EvictionHint::EvictFirst ? "evict_first" : h == EvictionHint::EvictLast ? "evict_last" : "";
}

Value *Builder::constFloat(SourceLoc loc, DType t, double v) {
  Op *op = create(OpKind::Constant, loc, {}, {Type::scalar(t)});
  op->setFloatValue(v);
  return op->result();
}

Value *Builder::splat(SourceLoc loc, Value *s, const std::vector<int64_t> &shape) {
  assert(s->type.isScalar());
  return create(OpKind::Splat, loc, {s}, {Type(s->type.elem, shape)})->result();
}

Value *Builder::binary(OpKind k, SourceLoc loc, Value *a, Value *b) {
  assert(a->type == b->type || k == OpKind::AddPtr);
  if (k != OpKind::AddPtr && isFP8(a->type.dtype())) {
    ScalarType f32{DType::F32};
    return cast(loc, binary(k, loc, cast(loc, a, f32), cast(loc, b, f32)), a->type.elem);
  }
  return create(k, loc, {a, b}, {a->type})->result();
}

Value *Builder::unary(OpKind k, SourceLoc loc, Value *a) {
  if (isFP8(a->type.dtype()))
    return cast(loc, unary(k, loc, cast(loc, a, ScalarType{DType::F32})), a->type.elem);
  return create(k, loc, {a}, {a->type})->result();
}

Value *Builder::cmp(SourceLoc loc, CmpPred p, Value *a, Value *b) {
  assert(a->type == b->type);
  if (isFP8(a->type.dtype())) {
    ScalarType f32{DType::F32};
    a = cast(loc, a, f32);
    b = cast(loc, b, f32);
  }
  Op *op = create(OpKind::Cmp, loc, {a, b}, {a->type.withElem(ScalarType{DType::I1})});
  op->setPredicate(p);
  return op->result();
}

Value *Builder::select(SourceLoc loc, Value *c, Value *a, Value *b) {
  assert(a->type == b->type && c->type.shape == a->type.shape);
  return create(OpKind::Select, loc, {c, a, b}, {a->type})->result();
}

Value *Builder::cast(SourceLoc loc, Value *v, ScalarType to) {
  if (v->type.elem == to)
    return v;
  return create(OpKind::Cast, loc, {v}, {v->type.withElem(to)})->result();
}

// ---------------------------------------------------------------------------------------------
// Verifier

std::vector<std::string> splitInlineAsmConstraints(const std::string &constraints) {
  std::vector<std::string> toks;
  std::string cur;
  for (char c : constraints + ",") {
    if (c == ',') {
      toks.push_back(cur);
      cur.clear();
    } else if (c != ' ' && c != '\t') {
      cur += c;
    }
  }
  return toks;
}

int64_t inlineAsmElementsPerRegister(const Type &t, int64_t pack) {
  int64_t bits = bitWidth(t.dtype());
  return std::max<int64_t>(1, std::min<int64_t>(bits < 32 ? 32 / bits : 1, pack));
}

size_t inlineAsmRegisterCount(const std::vector<Type> &outs, const std::vector<Type> &ins, int64_t pack) {
  size_t n = 0;
  for (const std::vector<Type> *ts : {&outs, &ins})
    for (const Type &t : *ts)
      n += static_cast<size_t>(pack / inlineAsmElementsPerRegister(t, pack));
  return n;
}

std::string inlineAsmConstraintError(const std::string &constraints, const std::vector<Type> &outs,
                                     const std::vector<Type> &ins, int64_t pack) {
  if (pack < 1 || pack > 16 || (pack & (pack - 1)))
    return "pack must be 1, 2, 4, 8 or 16, got " + std::to_string(pack);
  // One entry per register: (the value's type, output?, its index among outputs or inputs).
  struct Reg {
    const Type *t;
    bool out;
    size_t index;
  };
  std::vector<Reg> regs;
  for (size_t i = 0; i < outs.size() + ins.size(); ++i) {
    bool out = i < outs.size();
    const Type &t = out ? outs[i] : ins[i - outs.size()];
    for (int64_t r = 0; r < pack / inlineAsmElementsPerRegister(t, pack); ++r)
      regs.push_back({&t, out, out ? i : i - outs.size()});
  }
  std::vector<std::string> toks = splitInlineAsmConstraints(constraints);
  if (toks.size() != regs.size())
    return "the constraints \"" + constraints + "\" name " + std::to_string(toks.size()) + " operands; the asm has " +
           std::to_string(outs.size()) + " outputs and " + std::to_string(ins.size()) + " inputs in " +
           std::to_string(regs.size()) + " registers with pack=" + std::to_string(pack) +
           " (values narrower than 32 bits share 32-bit registers, others take one register per element)";
  for (size_t i = 0; i < toks.size(); ++i) {
    const Reg &g = regs[i];
    std::string tok = toks[i];
    std::string what = (g.out ? "output " : "input ") + std::to_string(g.index);
    if (g.out != (!tok.empty() && tok[0] == '='))
      return what + " has constraint \"" + tok + "\": outputs come first and start with '=', inputs do not";
    std::string letter = g.out ? tok.substr(1) : tok;
    int bits = letter == "r" || letter == "f" ? 32 : letter == "l" || letter == "d" ? 64 : letter == "h" ? 16 : 0;
    if (!bits)
      return what + " has constraint \"" + tok + "\"; supported: r (32-bit), l (64-bit), h (16-bit), f (fp32), d (fp64)";
    int64_t per = inlineAsmElementsPerRegister(*g.t, pack);
    int64_t have = int64_t(bitWidth(g.t->dtype())) * per;
    // One integer narrower than its register (a u8 in "=r" with pack=1) is widened into it and
    // truncated out of it, as LLVM's NVPTX backend does for Triton's i8 asm operands.
    bool widened = per == 1 && have < bits && isInteger(g.t->dtype()) && letter != "f" && letter != "d";
    if (have != bits && !widened)
      return what + " is " + std::to_string(have) + " bits a register (" + name(g.t->dtype()) + " x " +
             std::to_string(per) + " of pack " + std::to_string(pack) + ") but constraint \"" + tok + "\" takes " +
             std::to_string(bits);
  }
  return "";
}

std::string inlineAsmOperandError(const std::string &text, size_t numOperands) {
  auto bad = [&](size_t at, const std::string &why) {
    return "malformed operand reference \"" + text.substr(at, 8) + "\" at offset " + std::to_string(at) +
           " of the asm: " + why;
  };
  // The operand number text[from, from + len) (all digits) must name an operand.
  auto range = [&](size_t from, size_t len) -> std::string {
    if (len <= 9 && std::stoul(text.substr(from, len)) < numOperands)
      return "";
    return "operand $" + text.substr(from, std::min<size_t>(len, 24)) + " is out of range: the asm has " +
           std::to_string(numOperands) + " operands (outputs first, then inputs)";
  };
  auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$')
      continue;
    size_t at = i++;
    if (i < text.size() && text[i] == '$') // "$$": a literal '$'
      continue;
    if (i < text.size() && isDigit(text[i])) { // "$N"
      size_t end = i;
      while (end < text.size() && isDigit(text[end]))
        ++end;
      if (std::string why = range(i, end - i); !why.empty())
        return why;
      i = end - 1;
      continue;
    }
    if (i == text.size() || text[i] != '{')
      return bad(at, "'$' must be followed by an operand number or '{' (a literal '$' is written '$$')");
    size_t close = text.find('}', i);
    if (close == std::string::npos)
      return bad(at, "'${' without a closing '}'");
    std::string body = text.substr(i + 1, close - i - 1);
    i = close;
    if (body == ":uid" || body == ":comment" || body == ":private")
      continue;
    std::string num = body.substr(0, body.find(':'));
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos)
      return bad(at, "'${...}' holds an operand number, optionally followed by the modifier ':r'");
    if (num.size() < body.size() && body.substr(num.size()) != ":r")
      return bad(at, "the only operand modifier is ':r'");
    if (std::string why = range(at + 2, num.size()); !why.empty())
      return why;
  }
  return "";
}

namespace {

bool addSource(const Function &f, const Value *v, TensorMapParam::Source &s, int depth) {
  while (v->def && v->def->kind == OpKind::Cast && isInteger(v->def->operands[0]->type.dtype()) &&
         bitWidth(v->def->operands[0]->type.dtype()) < bitWidth(v->type.dtype()) &&
         v->def->operands[0]->type.dtype() != DType::I1)
    v = v->def->operands[0];
  if (v->owner == &f.body && isInteger(v->type.dtype())) {
    s.params.push_back(static_cast<int>(v->index));
    return true;
  }
  if (v->def && v->def->kind == OpKind::Constant && v->type.isScalar()) {
    s.value *= v->def->intValue();
    return true;
  }
  int bits = static_cast<int>(bitWidth(v->type.dtype()));
  if (v->def && v->def->kind == OpKind::Mul && v->type.isScalar() && depth < 4 &&
      (bits == 64 || (bits == 32 && isSigned(v->type.dtype()))) && (depth == 0 || s.bits == bits)) {
    s.bits = bits;
    return addSource(f, v->def->operands[0], s, depth + 1) && addSource(f, v->def->operands[1], s, depth + 1);
  }
  return false;
}

} // namespace

std::optional<TensorMapParam::Source> tensorMapSource(const Function &f, const Value *v) {
  TensorMapParam::Source s;
  if (!addSource(f, v, s, 0))
    return std::nullopt;
  return s;
}

std::optional<TensorMapParam> tensorMap(const Function &f, DType dtype, const Value *base,
                                        const std::vector<const Value *> &shape,
                                        const std::vector<const Value *> &strides, const std::vector<int64_t> &box,
                                        int swizzle, std::string *why) {
  auto bad = [&](const std::string &rule) -> std::optional<TensorMapParam> {
    if (why)
      *why = rule;
    return std::nullopt;
  };
  if (base->owner != &f.body)
    return bad("the descriptor's base to be a pointer param of the kernel (the launcher builds the map from it)");
  if (f.params[base->index].divisibility % 16)
    return bad("the descriptor's base promised 16-byte aligned (a param with divisibility 16: '*fp16:16' in the "
               "signature)");
  TensorMapParam m;
  m.dtype = dtype;
  m.base = static_cast<int>(base->index);
  size_t r = shape.size();
  unsigned eb = storageBytes(dtype);
  for (size_t d = 0; d < r; ++d) {
    std::optional<TensorMapParam::Source> sh = tensorMapSource(f, shape[d]), st = tensorMapSource(f, strides[d]);
    if (!sh || !st)
      return bad("every shape and stride of the descriptor a product of the kernel's integer params and constants, "
                 "which dim " + std::to_string(d) + "'s " + (sh ? "stride" : "shape") + " is not");
    std::sort(sh->params.begin(), sh->params.end());
    std::sort(st->params.begin(), st->params.end());
    // What the params promise the stride is a multiple of (their divisibility, capped to keep
    // the product small), times the constant factor.
    int64_t multiple = st->value;
    for (int p : st->params)
      multiple *= std::min<int64_t>(f.params[p].divisibility, 1024);
    if (d + 1 == r && (!st->params.empty() || st->value != 1))
      return bad("the last stride to be 1 (the contiguous dim)");
    if (d + 1 < r && (st->value <= 0 || (multiple * eb) % 16))
      return bad("strides of whole 16-byte units: dim " + std::to_string(d) + "'s stride must be known to be a "
                 "multiple of " + std::to_string(16 / std::max(1u, eb)) + " elements (give its params divisibility 16)");
    if (box[d] > 256)
      return bad("box dims of at most 256 elements; the block's dim " + std::to_string(d) + " is " +
                 std::to_string(box[d]));
    if (sh->params.empty() && sh->value <= 0)
      return bad("positive dims: the descriptor's dim " + std::to_string(d) + " is " + std::to_string(sh->value));
    m.shape.push_back(*sh);
    m.strides.push_back(*st);
  }
  if ((box[r - 1] * eb) % 16)
    return bad("box rows of whole 16-byte units; the box's rows are " + std::to_string(box[r - 1] * eb) + " bytes");
  m.box = box;
  m.swizzle = swizzle;
  return m;
}

} // namespace tle::ir
