// Tile IR -> host LLVM IR for the CPU target: the kernel function and its entry, tile storage,
// loops over elements, global memory accesses and reductions (structured control flow is in
// ControlFlow.cpp).
#include "Lowering.h"

#include "HostMath.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cassert>
#include <optional>

namespace tle::cpu::detail {

using ir::DType;
using ir::OpKind;

namespace {
/// Tiles up to this size live on the stack (where LLVM can keep small ones in registers);
/// larger ones, and everything past kMaxStackTotal, in the per-thread heap frame.
constexpr uint64_t kMaxStackBuffer = 4096;
constexpr uint64_t kMaxStackTotal = 64 * 1024;
constexpr uint64_t kBufferAlign = 64;

/// The index `i` of a tile without dim `axis`, with `j` put back in at that dim.
Index withAxisIndex(const Index &i, size_t axis, llvm::Value *j) {
  Index full(i.begin(), i.begin() + static_cast<long>(axis));
  full.push_back(j);
  full.insert(full.end(), i.begin() + static_cast<long>(axis), i.end());
  return full;
}
} // namespace

Lowering::Lowering(const ir::Function &f, llvm::Module &m, DiagnosticEngine &diags, const CompileOptions &options,
                   std::vector<Site> &sites)
    : f_(f), m_(m), ctx_(m.getContext()), diags_(diags), opts_(options), sites_(sites), B(m.getContext()) {}

// ---------------------------------------------------------------------------------------------
// Types and storage

llvm::Type *Lowering::regType(ir::ScalarType t) {
  switch (t.dtype) {
  case DType::I1: return B.getInt1Ty();
  case DType::I8: case DType::U8: case DType::F8E4M3: case DType::F8E5M2: return B.getInt8Ty(); // fp8: bits
  case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return B.getInt16Ty();
  case DType::I32: case DType::U32: return B.getInt32Ty();
  case DType::I64: case DType::U64: return B.getInt64Ty();
  case DType::F32: return B.getFloatTy();
  case DType::F64: return B.getDoubleTy();
  case DType::Ptr: return B.getPtrTy();
  case DType::Invalid: break;
  }
  assert(false && "invalid dtype");
  return B.getInt8Ty();
}

llvm::Type *Lowering::memType(ir::ScalarType t) { return t.dtype == DType::I1 ? B.getInt8Ty() : regType(t); }

llvm::Value *Lowering::loadMem(llvm::Value *base, llvm::Value *index, ir::ScalarType t) {
  llvm::Type *mt = memType(t);
  llvm::Value *p = B.CreateInBoundsGEP(mt, base, index);
  llvm::Value *v = B.CreateAlignedLoad(mt, p, llvm::Align(ir::storageBytes(t.dtype)));
  return t.dtype == DType::I1 ? B.CreateICmpNE(v, B.getInt8(0)) : v;
}

void Lowering::storeMem(llvm::Value *base, llvm::Value *index, llvm::Value *v, ir::ScalarType t) {
  llvm::Type *mt = memType(t);
  llvm::Value *p = B.CreateInBoundsGEP(mt, base, index);
  if (t.dtype == DType::I1)
    v = B.CreateZExt(v, B.getInt8Ty());
  B.CreateAlignedStore(v, p, llvm::Align(ir::storageBytes(t.dtype)));
}

// ---------------------------------------------------------------------------------------------
// Values

llvm::Value *Lowering::scalar(const ir::Value *v) {
  auto it = scalars_.find(v);
  assert(it != scalars_.end() && "scalar used before its definition was emitted");
  return it != scalars_.end() ? it->second : llvm::PoisonValue::get(regType(v->type.elem));
}

llvm::Value *Lowering::buffer(const ir::Value *v) {
  auto it = plan_.bufferOf.find(v);
  assert(it != plan_.bufferOf.end() && "tile value without a buffer");
  return buffers_[it->second];
}

llvm::Value *Lowering::linear(const Index &idx, const std::vector<int64_t> &shape) {
  llvm::Value *lin = idx.empty() ? B.getInt64(0) : idx[0];
  for (size_t d = 1; d < idx.size(); ++d)
    lin = B.CreateAdd(B.CreateMul(lin, B.getInt64(static_cast<uint64_t>(shape[d]))), idx[d]);
  return lin;
}

llvm::Value *Lowering::elem(const ir::Value *v, const Index &idx) {
  if (v->type.isScalar())
    return scalar(v);
  auto b = plan_.bufferOf.find(v);
  if (b != plan_.bufferOf.end())
    return loadMem(buffers_[b->second], linear(idx, v->type.shape), v->type.elem);
  auto key = std::make_pair(v, idx);
  auto it = memo_.find(key);
  if (it != memo_.end())
    return it->second;
  llvm::Value *r = compute(v, idx);
  memo_[key] = r;
  return r;
}

llvm::Value *Lowering::compute(const ir::Value *res, const Index &idx) {
  const ir::Op &op = *res->def;
  switch (op.kind) {
  case OpKind::Splat:
    return scalar(op.operands[0]);
  case OpKind::Arange:
    return B.CreateAdd(B.CreateTrunc(idx[0], B.getInt32Ty()), B.getInt32(static_cast<uint32_t>(op.arangeStart())));
  case OpKind::ExpandDims: {
    const ir::Value *in = op.operands[0];
    if (in->type.isScalar())
      return scalar(in);
    Index j = idx;
    j.erase(j.begin() + op.axis());
    return elem(in, j);
  }
  case OpKind::Broadcast: {
    const ir::Value *in = op.operands[0];
    Index j(idx.size());
    for (size_t d = 0; d < idx.size(); ++d)
      j[d] = in->type.shape[d] == 1 && res->type.shape[d] != 1 ? B.getInt64(0) : idx[d];
    return elem(in, j);
  }
  case OpKind::ConvertLayout:
    return elem(op.operands[0], idx);
  case OpKind::Permute: {
    // Result dim i is operand dim permutation()[i].
    const std::vector<int64_t> &order = op.permutation();
    Index j(idx.size());
    for (size_t i = 0; i < idx.size() && i < order.size(); ++i)
      j[static_cast<size_t>(order[i])] = idx[i];
    return elem(op.operands[0], j);
  }
  case OpKind::Reshape: {
    // The same row-major position in the operand's shape.
    const auto &shape = op.operands[0]->type.shape;
    llvm::Value *lin = linear(idx, res->type.shape);
    Index j(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      auto n = static_cast<uint64_t>(shape[d]);
      j[d] = d == 0 ? lin : B.CreateURem(lin, B.getInt64(n));
      if (d)
        lin = B.CreateUDiv(lin, B.getInt64(n));
    }
    return elem(op.operands[0], j);
  }
  case OpKind::Cat: {
    // Dim 0 of a, then of b; both operands are read at an index clamped into range.
    auto n0 = static_cast<uint64_t>(op.operands[0]->type.shape[0]);
    llvm::Value *first = B.CreateICmpULT(idx[0], B.getInt64(n0));
    Index ia = idx, ib = idx;
    ia[0] = B.CreateSelect(first, idx[0], B.getInt64(n0 - 1));
    ib[0] = B.CreateSelect(first, B.getInt64(0), B.CreateSub(idx[0], B.getInt64(n0)));
    return B.CreateSelect(first, elem(op.operands[0], ia), elem(op.operands[1], ib));
  }
  case OpKind::Join: {
    Index base(idx.begin(), idx.end() - 1);
    return B.CreateSelect(B.CreateICmpEQ(idx.back(), B.getInt64(0)), elem(op.operands[0], base),
                          elem(op.operands[1], base));
  }
  case OpKind::Split: {
    Index j = idx;
    j.push_back(B.getInt64(res->index));
    return elem(op.operands[0], j);
  }
  case OpKind::ExtractTile: case OpKind::InsertTile: {
    // The window's origin from the index (modulo the number of windows, unsigned), then: extract
    // reads x at origin + i; insert reads the tile inside the window and x elsewhere.
    ir::TileWindow w = ir::tileWindow(op);
    llvm::Value *lin = B.CreateURem(B.CreateZExt(scalar(op.operands.back()), B.getInt64Ty()),
                                    B.getInt64(static_cast<uint64_t>(w.count)));
    Index origin(w.grid.size());
    for (size_t d = w.grid.size(); d-- > 0;) {
      auto g = static_cast<uint64_t>(w.grid[d]);
      origin[d] = B.CreateMul(d == 0 ? lin : B.CreateURem(lin, B.getInt64(g)), B.getInt64(static_cast<uint64_t>(w.strides[d])));
      if (d)
        lin = B.CreateUDiv(lin, B.getInt64(g));
    }
    if (op.kind == OpKind::ExtractTile) {
      Index j(idx.size());
      for (size_t d = 0; d < idx.size(); ++d)
        j[d] = B.CreateAdd(origin[d], idx[d]);
      return elem(op.operands[0], j);
    }
    llvm::Value *inside = B.getTrue();
    Index rel(idx.size());
    for (size_t d = 0; d < idx.size(); ++d) {
      llvm::Value *r = B.CreateSub(idx[d], origin[d]);
      llvm::Value *in = B.CreateICmpULT(r, B.getInt64(static_cast<uint64_t>(w.tile[d])));
      inside = B.CreateAnd(inside, in);
      rel[d] = B.CreateSelect(in, r, B.getInt64(0));
    }
    return B.CreateSelect(inside, elem(op.operands[1], rel), elem(op.operands[0], idx));
  }
  case OpKind::Gather: {
    // A direct read of src at the index (widened by its signedness); an index outside [0, n)
    // reads element 0 instead (always in bounds) and gives 0.
    const ir::Value *src = op.operands[0], *index = op.operands[1];
    auto ax = static_cast<size_t>(op.axis());
    llvm::Value *i = elem(index, idx);
    i = ir::isSigned(index->type.dtype()) ? B.CreateSExtOrTrunc(i, B.getInt64Ty()) : B.CreateZExtOrTrunc(i, B.getInt64Ty());
    llvm::Value *inside = B.CreateICmpULT(i, B.getInt64(static_cast<uint64_t>(src->type.shape[ax])));
    Index j = idx;
    j[ax] = B.CreateSelect(inside, i, B.getInt64(0));
    llvm::Value *x = elem(src, j);
    return B.CreateSelect(inside, x, llvm::Constant::getNullValue(x->getType()));
  }
  case OpKind::Flip: {
    // Element i along `axis` reads element n - 1 - i.
    Index j = idx;
    auto n = static_cast<uint64_t>(res->type.shape[static_cast<size_t>(op.axis())]);
    j[static_cast<size_t>(op.axis())] = B.CreateSub(B.getInt64(n - 1), idx[static_cast<size_t>(op.axis())]);
    return elem(op.operands[0], j);
  }
  default:
    break;
  }
  std::vector<llvm::Value *> in;
  for (const ir::Value *o : op.operands)
    in.push_back(elem(o, idx));
  if (llvm::Value *r = apply(op, in))
    return r;
  unsupported(op);
  return llvm::PoisonValue::get(regType(res->type.elem));
}

void Lowering::forEach(const std::vector<int64_t> &shape, const std::function<void(const Index &)> &body) {
  struct Loop {
    llvm::PHINode *iv;
    llvm::BasicBlock *head;
    int64_t n;
  };
  std::vector<Loop> loops;
  Index idx(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      idx[d] = B.getInt64(0);
      continue;
    }
    llvm::BasicBlock *pre = B.GetInsertBlock();
    llvm::BasicBlock *head = llvm::BasicBlock::Create(ctx_, "tile.loop", kernel_);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    llvm::PHINode *iv = B.CreatePHI(B.getInt64Ty(), 2, "i" + std::to_string(d));
    iv->addIncoming(B.getInt64(0), pre);
    idx[d] = iv;
    loops.push_back({iv, head, shape[d]});
  }
  memo_.clear();
  body(idx);
  memo_.clear();
  for (auto l = loops.rbegin(); l != loops.rend(); ++l) {
    llvm::BasicBlock *latch = B.GetInsertBlock();
    llvm::Value *next = B.CreateAdd(l->iv, B.getInt64(1));
    l->iv->addIncoming(next, latch);
    llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx_, "tile.loop.end", kernel_);
    B.CreateCondBr(B.CreateICmpULT(next, B.getInt64(static_cast<uint64_t>(l->n))), l->head, exit);
    B.SetInsertPoint(exit);
  }
}

void Lowering::writeTile(llvm::Value *dst, const ir::Value *v) {
  forEach(v->type.shape, [&](const Index &i) { storeMem(dst, linear(i, v->type.shape), elem(v, i), v->type.elem); });
}

void Lowering::copyTile(llvm::Value *dst, llvm::Value *src, const ir::Type &t) {
  uint64_t bytes = static_cast<uint64_t>(t.numElements()) * ir::storageBytes(t.elem.dtype);
  B.CreateMemCpy(dst, llvm::Align(kBufferAlign), src, llvm::Align(kBufferAlign), bytes);
}

void Lowering::ifThen(llvm::Value *cond, const std::function<void()> &then) {
  memo_.clear();
  auto *thenBB = llvm::BasicBlock::Create(ctx_, "then", kernel_);
  auto *join = llvm::BasicBlock::Create(ctx_, "join", kernel_);
  B.CreateCondBr(cond, thenBB, join);
  B.SetInsertPoint(thenBB);
  then();
  B.CreateBr(join);
  B.SetInsertPoint(join);
  memo_.clear();
}

int Lowering::addSite(const std::string &what, SourceLoc loc) {
  std::string where;
  if (loc.valid() && loc.file)
    where = diags_.sources().path(loc.file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  sites_.push_back({what, where});
  return static_cast<int>(sites_.size() - 1);
}

bool Lowering::unsupported(const ir::Op &op, const std::string &why) {
  if (!failed_) {
    diags_.error(op.loc, std::string("'") + ir::name(op.kind) + "' " +
                             (op.operands.empty() ? "" : "on " + op.operands[0]->type.str() + " ") +
                             "is not supported on the cpu target" + (why.empty() ? "" : ": " + why));
  }
  failed_ = true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Kernel function and entry

bool Lowering::run(std::string &entryName) {
  plan_ = planBuffers(f_);
  std::vector<llvm::Type *> params;
  for (auto &p : f_.params)
    params.push_back(p.type.dtype == DType::I1 ? B.getInt8Ty() : regType(p.type));
  for (int i = 0; i < 6; ++i)
    params.push_back(B.getInt32Ty());
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), params, false);
  // The kernel's name, unless that would capture calls LLVM makes to the C library.
  std::string fnName = isHostSymbol(f_.name) ? "__tle_kernel_" + f_.name : f_.name;
  kernel_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, fnName, m_);
  kernel_->addFnAttr(llvm::Attribute::NoUnwind);
  static const char *geo[6] = {"pid_x", "pid_y", "pid_z", "nprog_x", "nprog_y", "nprog_z"};
  size_t np = f_.params.size();
  for (size_t i = 0; i < np; ++i)
    kernel_->getArg(static_cast<unsigned>(i))->setName(f_.params[i].name);
  for (unsigned i = 0; i < 6; ++i) {
    kernel_->getArg(static_cast<unsigned>(np) + i)->setName(geo[i]);
    (i < 3 ? pid_[i] : nprog_[i - 3]) = kernel_->getArg(static_cast<unsigned>(np) + i);
  }
  checkFn_ = m_.getOrInsertFunction(
      kCheckFn, llvm::FunctionType::get(B.getInt32Ty(),
                                        {B.getPtrTy(), B.getInt64Ty(), B.getInt32Ty(), B.getInt32Ty(),
                                         B.getInt32Ty(), B.getInt32Ty()},
                                        false));
  failFn_ = m_.getOrInsertFunction(
      kFailFn, llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt64Ty()}, false));

  entry_ = llvm::BasicBlock::Create(ctx_, "entry", kernel_);
  B.SetInsertPoint(entry_);
  // Tile storage: small buffers on the stack, the rest in the thread's heap frame.
  uint64_t stackTotal = 0, frameBytes = 0;
  std::vector<std::pair<size_t, uint64_t>> heap; // buffer, frame offset
  buffers_.assign(plan_.bufferBytes.size(), nullptr);
  for (size_t i = 0; i < plan_.bufferBytes.size(); ++i) {
    uint64_t bytes = std::max<uint64_t>(plan_.bufferBytes[i], 1);
    if (bytes <= kMaxStackBuffer && stackTotal + bytes <= kMaxStackTotal) {
      auto *a = B.CreateAlloca(llvm::ArrayType::get(B.getInt8Ty(), bytes), nullptr, "tile" + std::to_string(i));
      a->setAlignment(llvm::Align(kBufferAlign));
      buffers_[i] = a;
      stackTotal += bytes;
    } else {
      heap.push_back({i, frameBytes});
      frameBytes += (bytes + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
    }
  }
  if (frameBytes) {
    auto frameFn = m_.getOrInsertFunction(kFrameFn, llvm::FunctionType::get(B.getPtrTy(), {B.getInt64Ty()}, false));
    llvm::Value *frame = B.CreateCall(frameFn, {B.getInt64(frameBytes)}, "frame");
    auto *ok = llvm::BasicBlock::Create(ctx_, "frame.ok", kernel_);
    auto *fail = llvm::BasicBlock::Create(ctx_, "frame.fail", kernel_);
    B.CreateCondBr(B.CreateIsNotNull(frame), ok, fail);
    B.SetInsertPoint(fail);
    B.CreateRetVoid();
    B.SetInsertPoint(ok);
    for (auto [i, off] : heap)
      buffers_[i] = B.CreateInBoundsGEP(B.getInt8Ty(), frame, B.getInt64(off), "tile" + std::to_string(i));
  }
  for (size_t i = 0; i < np; ++i) {
    llvm::Value *a = kernel_->getArg(static_cast<unsigned>(i));
    if (f_.params[i].type.dtype == DType::I1)
      a = B.CreateICmpNE(a, B.getInt8(0));
    scalars_[f_.body.args[i].get()] = a;
  }
  if (!emitBlock(f_.body))
    return false;
  B.CreateRetVoid();

  // The entry: parameters from an array of 8-byte slots (little-endian, low bytes first).
  std::vector<llvm::Type *> eparams{B.getPtrTy()};
  for (int i = 0; i < 6; ++i)
    eparams.push_back(B.getInt32Ty());
  entryName = "__tle_cpu_entry_" + f_.name;
  auto *entry = llvm::Function::Create(llvm::FunctionType::get(B.getVoidTy(), eparams, false),
                                       llvm::GlobalValue::ExternalLinkage, entryName, m_);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  B.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", entry));
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < np; ++i) {
    llvm::Value *slot = B.CreateConstInBoundsGEP1_64(B.getInt64Ty(), entry->getArg(0), i);
    args.push_back(B.CreateAlignedLoad(params[i], slot, llvm::Align(8), f_.params[i].name));
  }
  for (unsigned i = 0; i < 6; ++i)
    args.push_back(entry->getArg(i + 1));
  B.CreateCall(kernel_, args);
  B.CreateRetVoid();

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*kernel_, &os) || llvm::verifyFunction(*entry, &os)) {
    diags_.error({}, "internal error: the cpu target produced invalid LLVM IR for '" + f_.name + "': " + os.str());
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Ops

bool Lowering::emitBlock(const ir::Block &b) {
  for (auto &op : b.ops)
    if (!emitOp(*op) || failed_)
      return false;
  return true;
}

bool Lowering::emitOp(const ir::Op &op) {
  memo_.clear();
  switch (op.kind) {
  case OpKind::Return: case OpKind::Yield: case OpKind::Condition:
    return true;
  case OpKind::For:
    return emitFor(op);
  case OpKind::If:
    return emitIf(op);
  case OpKind::While:
    return emitWhile(op);
  case OpKind::Load:
    emitLoad(op);
    return true;
  case OpKind::Store:
    // A store marked for TMA (sm_90a) no longer has its pointers and mask: only the NVPTX
    // backend can write it (transforms::markTmaStores).
    if (op.isTmaStore())
      return unsupported(op, "it is marked 'tma' (written from its tensor descriptor on sm_90a)");
    emitStore(op);
    return true;
  case OpKind::Reduce:
    emitReduce(op);
    return !failed_;
  case OpKind::Scan:
    emitScan(op);
    return !failed_;
  case OpKind::Histogram:
    emitHistogram(op);
    return true;
  case OpKind::Dot:
    emitDot(op);
    return !failed_;
  case OpKind::AtomicRMW: case OpKind::AtomicCAS:
    return emitAtomic(op);
  case OpKind::Print:
    emitPrint(op);
    return true;
  case OpKind::Assert:
    emitAssert(op);
    return true;
  case OpKind::Barrier: // one program is one thread: nothing to wait for
    return true;
  case OpKind::MbarrierInit: case OpKind::MbarrierArrive: case OpKind::MbarrierExpectTx: case OpKind::MbarrierWait:
  case OpKind::MbarrierInval: case OpKind::FenceProxyAsync: case OpKind::FenceMbarrierInit:
  case OpKind::BarrierArrive: case OpKind::AsyncCopyMbarrierArrive: case OpKind::AsyncCopy:
  case OpKind::AsyncCommitGroup: case OpKind::AsyncWaitGroup: case OpKind::TmaLoad: case OpKind::TmaStore:
  case OpKind::TmaStoreCommit: case OpKind::TmaStoreWait:
    return unsupported(op, "mbarriers, fences, named barriers and asynchronous copies need the GPU target");
  case OpKind::LocalLoad: case OpKind::LocalStore: case OpKind::Wgmma: case OpKind::WgmmaWait:
  case OpKind::WarpSpecialize:
    return unsupported(op, "shared matrices, wgmma and warp specialisation need the GPU target");
  case OpKind::GridDepControl: // grids run one after the other: nothing to wait for or release
    return true;
  case OpKind::InlineAsm:
    return unsupported(op, "tl.inline_asm_elementwise runs PTX, which only the GPU target can");
  case OpKind::RawCall:
    return unsupported(op, "tle.raw.call runs native CUDA or LLVM code for NVPTX, which only the GPU target can");
  case OpKind::SignalWait:
    emitSignalWait(op);
    return true;
  case OpKind::DeviceBarrier:
    return unsupported(op, "a barrier across GPUs (tle.distributed_barrier(space=\"device\")) waits for every "
                           "program of the grid at once, which the CPU target does not run together");
  case OpKind::LocalAlloc: case OpKind::RemotePtr: case OpKind::ClusterBarrier:
  case OpKind::ClusterArrive: case OpKind::ClusterWait: case OpKind::GridBarrier: case OpKind::SubmeshBarrier:
    return unsupported(op, "shared buffers and thread-block clusters (tle.gpu.alloc, tle.remote, "
                           "tle.distributed_barrier) need the GPU target");
  case OpKind::Constant:
    scalars_[op.result()] = constant(op.result()->type.elem, op.intValue(), op.floatValue());
    return true;
  case OpKind::ProgramId: case OpKind::NumPrograms:
    if (op.axis() < 0 || op.axis() > 2)
      return unsupported(op, "axis must be 0, 1 or 2");
    scalars_[op.result()] = op.kind == OpKind::ProgramId ? pid_[op.axis()] : nprog_[op.axis()];
    return true;
  default:
    break;
  }
  bool lazyKind = ir::isElementwise(op.kind);
  switch (op.kind) {
  case OpKind::Splat: case OpKind::Arange: case OpKind::ExpandDims: case OpKind::Broadcast:
  case OpKind::ConvertLayout: case OpKind::Permute: case OpKind::Reshape: case OpKind::Cat: case OpKind::Join:
  case OpKind::Split: case OpKind::Flip: case OpKind::ExtractTile: case OpKind::InsertTile: case OpKind::Gather:
    lazyKind = true;
    break;
  default:
    break;
  }
  if (!lazyKind || op.results.empty() || !op.regions.empty())
    return unsupported(op);
  if (op.results.size() == 1 && op.result()->type.isScalar()) {
    std::vector<llvm::Value *> in;
    for (const ir::Value *o : op.operands)
      in.push_back(scalar(o));
    llvm::Value *v = ir::isElementwise(op.kind) ? apply(op, in) : nullptr;
    if (!v)
      return unsupported(op);
    scalars_[op.result()] = v;
    return true;
  }
  for (auto &res : op.results) {
    const ir::Value *r = res.get();
    if (r->type.isScalar())
      return unsupported(op);
    if (plan_.isLazy(r))
      continue;
    llvm::Value *dst = buffer(r);
    forEach(r->type.shape, [&](const Index &i) { storeMem(dst, linear(i, r->type.shape), compute(r, i), r->type.elem); });
  }
  return !failed_;
}

llvm::Value *Lowering::globalLoad(llvm::Value *p, ir::ScalarType t, int site) {
  auto plain = [&]() {
    llvm::Type *mt = memType(t);
    llvm::Value *v = B.CreateAlignedLoad(mt, p, llvm::Align(ir::storageBytes(t.dtype)));
    return t.dtype == DType::I1 ? B.CreateICmpNE(v, B.getInt8(0)) : v;
  };
  if (!opts_.checkBounds)
    return plain();
  llvm::Value *ok = B.CreateCall(checkFn_, {p, B.getInt64(ir::storageBytes(t.dtype)), B.getInt32(site), pid_[0],
                                            pid_[1], pid_[2]});
  llvm::BasicBlock *pre = B.GetInsertBlock();
  auto *ld = llvm::BasicBlock::Create(ctx_, "checked.load", kernel_);
  auto *join = llvm::BasicBlock::Create(ctx_, "checked.join", kernel_);
  B.CreateCondBr(B.CreateICmpNE(ok, B.getInt32(0)), ld, join);
  B.SetInsertPoint(ld);
  llvm::Value *v = plain();
  B.CreateBr(join);
  B.SetInsertPoint(join);
  llvm::PHINode *phi = B.CreatePHI(regType(t), 2);
  phi->addIncoming(llvm::Constant::getNullValue(regType(t)), pre);
  phi->addIncoming(v, ld);
  return phi;
}

void Lowering::globalStore(llvm::Value *p, llvm::Value *v, ir::ScalarType t, int site) {
  auto plain = [&]() {
    llvm::Value *x = t.dtype == DType::I1 ? B.CreateZExt(v, B.getInt8Ty()) : v;
    B.CreateAlignedStore(x, p, llvm::Align(ir::storageBytes(t.dtype)));
  };
  if (!opts_.checkBounds)
    return plain();
  llvm::Value *ok = B.CreateCall(checkFn_, {p, B.getInt64(ir::storageBytes(t.dtype)), B.getInt32(site), pid_[0],
                                            pid_[1], pid_[2]});
  ifThen(B.CreateICmpNE(ok, B.getInt32(0)), plain);
}

void Lowering::emitLoad(const ir::Op &op) {
  const ir::Value *ptr = op.operands[0];
  const ir::Value *mask = op.operands.size() > 1 ? op.operands[1] : nullptr;
  const ir::Value *other = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const ir::Value *r = op.result();
  ir::ScalarType t = r->type.elem;
  int site = addSite("load", op.loc);
  // Operands are evaluated before branching so that every element value dominates its uses.
  auto one = [&](const Index &i) -> llvm::Value * {
    llvm::Value *p = elem(ptr, i);
    if (!mask)
      return globalLoad(p, t, site);
    llvm::Value *m = elem(mask, i);
    llvm::Value *o = other ? elem(other, i) : llvm::Constant::getNullValue(regType(t));
    llvm::BasicBlock *pre = B.GetInsertBlock();
    auto *ld = llvm::BasicBlock::Create(ctx_, "masked.load", kernel_);
    auto *join = llvm::BasicBlock::Create(ctx_, "masked.join", kernel_);
    B.CreateCondBr(m, ld, join);
    B.SetInsertPoint(ld);
    llvm::Value *v = globalLoad(p, t, site);
    llvm::BasicBlock *ldEnd = B.GetInsertBlock();
    B.CreateBr(join);
    B.SetInsertPoint(join);
    llvm::PHINode *phi = B.CreatePHI(regType(t), 2);
    phi->addIncoming(o, pre);
    phi->addIncoming(v, ldEnd);
    return phi;
  };
  if (r->type.isScalar()) {
    scalars_[r] = one({});
    return;
  }
  llvm::Value *dst = buffer(r);
  forEach(r->type.shape, [&](const Index &i) { storeMem(dst, linear(i, r->type.shape), one(i), t); });
}

void Lowering::emitStore(const ir::Op &op) {
  const ir::Value *ptr = op.operands[0], *val = op.operands[1];
  const ir::Value *mask = op.operands.size() > 2 ? op.operands[2] : nullptr;
  ir::ScalarType t = val->type.elem;
  int site = addSite("store", op.loc);
  auto one = [&](const Index &i) {
    llvm::Value *p = elem(ptr, i);
    llvm::Value *v = elem(val, i);
    if (!mask)
      return globalStore(p, v, t, site);
    ifThen(elem(mask, i), [&] { globalStore(p, v, t, site); });
  };
  if (ptr->type.isScalar())
    return one({});
  forEach(ptr->type.shape, one);
}

std::vector<llvm::Value *> Lowering::combineValues(const ir::Op &op, const std::vector<llvm::Value *> &a,
                                                  const std::vector<llvm::Value *> &b) {
  if (op.reduceKind() != ir::ReduceKind::Combine)
    return {combine(op.reduceKind(), op.operands[0]->type.dtype(), a[0], b[0])};
  // The combine region, emitted inline on these scalars.
  const ir::Block &r = *op.regions[0];
  size_t n = op.operands.size();
  for (size_t i = 0; i < n; ++i) {
    scalars_[r.args[i].get()] = a[i];
    scalars_[r.args[n + i].get()] = b[i];
  }
  std::vector<llvm::Value *> out(n, nullptr);
  if (!emitBlock(r))
    return out;
  const ir::Op *y = r.terminator();
  for (size_t i = 0; i < n; ++i)
    out[i] = scalar(y->operands[i]);
  return out;
}

void Lowering::emitReduce(const ir::Op &op) {
  const size_t n = op.operands.size();
  const auto &S = op.operands[0]->type.shape;
  size_t axis = static_cast<size_t>(op.axis());
  int64_t A = S[axis];
  auto elems = [&](const Index &i) {
    std::vector<llvm::Value *> v;
    for (const ir::Value *in : op.operands)
      v.push_back(elem(in, i));
    return v;
  };
  if (op.result()->type.isScalar()) {
    // Rank 1: a sequential accumulation in index order, through stack slots LLVM promotes.
    llvm::IRBuilder<> E(entry_, entry_->begin());
    std::vector<llvm::AllocaInst *> slots;
    for (const ir::Value *in : op.operands)
      slots.push_back(E.CreateAlloca(regType(in->type.elem), nullptr, "acc"));
    auto load = [&]() {
      std::vector<llvm::Value *> v;
      for (auto *slot : slots)
        v.push_back(B.CreateLoad(slot->getAllocatedType(), slot));
      return v;
    };
    auto store = [&](const std::vector<llvm::Value *> &v) {
      for (size_t k = 0; k < n; ++k)
        B.CreateStore(v[k], slots[k]);
    };
    store(elems({B.getInt64(0)}));
    if (A > 1)
      forEach({A - 1}, [&](const Index &j) {
        std::vector<llvm::Value *> acc = load();
        std::vector<llvm::Value *> x = elems({B.CreateAdd(j[0], B.getInt64(1))});
        std::vector<llvm::Value *> c = combineValues(op, acc, x);
        if (!failed_)
          store(c);
      });
    std::vector<llvm::Value *> v = load();
    for (size_t k = 0; k < n; ++k)
      scalars_[op.result(static_cast<unsigned>(k))] = v[k];
    return;
  }
  // Rank > 1: out[o, k] = in[o, 0, k], then out[o, k] = combine(out[o, k], in[o, j, k]) for
  // j = 1 .. A-1 with k innermost, so every output element is combined in index order and the
  // loop over k vectorises.
  const auto &R = op.result()->type.shape;
  std::vector<llvm::Value *> dst;
  for (auto &res : op.results)
    dst.push_back(buffer(res.get()));
  std::vector<int64_t> outer(S.begin(), S.begin() + static_cast<long>(axis));
  std::vector<int64_t> inner(S.begin() + static_cast<long>(axis) + 1, S.end());
  auto split = [&](const Index &i, llvm::Value *j) {
    Index src(i.begin(), i.begin() + static_cast<long>(axis));
    src.push_back(j);
    src.insert(src.end(), i.begin() + static_cast<long>(axis), i.end());
    return src;
  };
  forEach(R, [&](const Index &i) {
    std::vector<llvm::Value *> x = elems(split(i, B.getInt64(0)));
    for (size_t k = 0; k < n; ++k)
      storeMem(dst[k], linear(i, R), x[k], op.operands[k]->type.elem);
  });
  if (A == 1)
    return;
  std::vector<int64_t> loopShape = outer;
  loopShape.push_back(A - 1);
  loopShape.insert(loopShape.end(), inner.begin(), inner.end());
  forEach(loopShape, [&](const Index &l) {
    Index o(l.begin(), l.begin() + static_cast<long>(axis));
    o.insert(o.end(), l.begin() + static_cast<long>(axis) + 1, l.end());
    llvm::Value *j = B.CreateAdd(l[axis], B.getInt64(1));
    llvm::Value *lin = linear(o, R);
    std::vector<llvm::Value *> acc;
    for (size_t k = 0; k < n; ++k)
      acc.push_back(loadMem(dst[k], lin, op.operands[k]->type.elem));
    std::vector<llvm::Value *> c = combineValues(op, acc, elems(split(o, j)));
    if (failed_)
      return;
    for (size_t k = 0; k < n; ++k)
      storeMem(dst[k], lin, c[k], op.operands[k]->type.elem);
  });
}

void Lowering::emitHistogram(const ir::Op &op) {
  // counts[b] = 0, then for each value in index order, where the mask holds and 0 <= v < bins:
  // counts[v] += 1. v is compared widened to i64 by its signedness, so that no bin wraps.
  const ir::Value *x = op.operands[0];
  const ir::Value *mask = op.operands.size() > 1 ? op.operands[1] : nullptr;
  const ir::ScalarType i32{DType::I32};
  const int64_t bins = op.result()->type.shape[0];
  llvm::Value *dst = buffer(op.result());
  forEach({bins}, [&](const Index &i) { storeMem(dst, i[0], B.getInt32(0), i32); });
  bool sig = ir::isSigned(x->type.dtype());
  forEach(x->type.shape, [&](const Index &i) {
    llvm::Value *v = B.CreateIntCast(elem(x, i), B.getInt64Ty(), sig);
    llvm::Value *ok = B.CreateICmpULT(v, B.getInt64(static_cast<uint64_t>(bins))); // 0 <= v < bins
    if (mask)
      ok = B.CreateAnd(ok, elem(mask, i));
    ifThen(ok, [&] { storeMem(dst, v, B.CreateAdd(loadMem(dst, v, i32), B.getInt32(1)), i32); });
  });
}

void Lowering::emitScan(const ir::Op &op) {
  // Inclusive scan in index order: out[j] = combine(out[j-1], in[j]) (forward) or, from the
  // end, out[j] = combine(out[j+1], in[j]) (Triton's reverse scan: flip, scan, flip), with the
  // dims after the axis innermost.
  const size_t n = op.operands.size();
  const auto &S = op.operands[0]->type.shape;
  size_t axis = static_cast<size_t>(op.axis());
  int64_t A = S[axis];
  bool reverse = op.isReverse();
  if (op.isExclusive())
    return emitExclusiveScan(op);
  std::vector<llvm::Value *> dst;
  for (auto &res : op.results)
    dst.push_back(buffer(res.get()));
  std::vector<int64_t> around = S;
  around.erase(around.begin() + static_cast<long>(axis));
  auto at = [&](const Index &i, llvm::Value *j) { return withAxisIndex(i, axis, j); };
  llvm::Value *first = B.getInt64(reverse ? static_cast<uint64_t>(A - 1) : 0);
  forEach(around, [&](const Index &i) {
    Index p = at(i, first);
    for (size_t k = 0; k < n; ++k)
      storeMem(dst[k], linear(p, S), elem(op.operands[k], p), op.operands[k]->type.elem);
  });
  if (A == 1)
    return;
  std::vector<int64_t> loopShape = S;
  loopShape[axis] = A - 1;
  forEach(loopShape, [&](const Index &l) {
    Index j = l;
    Index prev = l;
    if (reverse) {
      j[axis] = B.CreateSub(B.getInt64(static_cast<uint64_t>(A - 2)), l[axis]);
      prev[axis] = B.CreateAdd(j[axis], B.getInt64(1));
    } else {
      j[axis] = B.CreateAdd(l[axis], B.getInt64(1));
      prev[axis] = l[axis];
    }
    std::vector<llvm::Value *> x, acc;
    for (size_t k = 0; k < n; ++k) {
      x.push_back(elem(op.operands[k], j));
      acc.push_back(loadMem(dst[k], linear(prev, S), op.operands[k]->type.elem));
    }
    std::vector<llvm::Value *> v = combineValues(op, acc, x);
    if (failed_)
      return;
    for (size_t k = 0; k < n; ++k)
      storeMem(dst[k], linear(j, S), v[k], op.operands[k]->type.elem);
  });
}

void Lowering::emitExclusiveScan(const ir::Op &op) {
  // In index order (from the end, with reverse): out[first] = 0, out[j] = out[prev] + in[prev];
  // the total is out[last] + in[last] (a scalar for a rank-1 operand).
  const ir::Value *x = op.operands[0];
  const auto &S = x->type.shape;
  const ir::ScalarType et = x->type.elem;
  size_t axis = static_cast<size_t>(op.axis());
  int64_t A = S[axis];
  bool reverse = op.isReverse();
  llvm::Value *dst = buffer(op.result(0));
  std::vector<int64_t> around = S;
  around.erase(around.begin() + static_cast<long>(axis));
  auto at = [&](const Index &i, llvm::Value *j) { return withAxisIndex(i, axis, j); };
  auto add = [&](llvm::Value *a, llvm::Value *b) {
    std::vector<llvm::Value *> r = combineValues(op, {a}, {b});
    return r.empty() ? a : r[0];
  };
  llvm::Value *zero = constant(et, 0, 0.0);
  llvm::Value *first = B.getInt64(reverse ? static_cast<uint64_t>(A - 1) : 0);
  forEach(around, [&](const Index &i) { storeMem(dst, linear(at(i, first), S), zero, et); });
  if (A > 1) {
    std::vector<int64_t> loopShape = S;
    loopShape[axis] = A - 1;
    forEach(loopShape, [&](const Index &l) {
      Index j = l, prev = l;
      if (reverse) {
        j[axis] = B.CreateSub(B.getInt64(static_cast<uint64_t>(A - 2)), l[axis]);
        prev[axis] = B.CreateAdd(j[axis], B.getInt64(1));
      } else {
        j[axis] = B.CreateAdd(l[axis], B.getInt64(1));
        prev[axis] = l[axis];
      }
      llvm::Value *v = add(loadMem(dst, linear(prev, S), et), elem(x, prev));
      storeMem(dst, linear(j, S), v, et);
    });
  }
  llvm::Value *last = B.getInt64(reverse ? 0 : static_cast<uint64_t>(A - 1));
  const ir::Value *total = op.result(1);
  if (total->type.isScalar()) {
    Index p = {last};
    scalars_[total] = add(loadMem(dst, linear(p, S), et), elem(x, p));
    return;
  }
  llvm::Value *tdst = buffer(total);
  forEach(around, [&](const Index &i) {
    Index p = at(i, last);
    storeMem(tdst, linear(i, around), add(loadMem(dst, linear(p, S), et), elem(x, p)), et);
  });
}

void Lowering::emitDot(const ir::Op &op) {
  // out = acc + a @ b, each output element accumulated over k in index order with fused
  // multiply-adds: in fp32 for fp16/bf16 (and fp32 TF32, whose inputs are first rounded to TF32
  // like cvt.rna.tf32.f32), in fp64 for fp64, in the accumulator's integer type for integers.
  const ir::Value *a = op.operands[0], *b = op.operands[1], *acc = op.operands[2];
  const ir::Value *r = op.result();
  DType in = a->type.dtype(), out = r->type.dtype();
  int64_t M = a->type.shape[0], K = a->type.shape[1], N = b->type.shape[1];
  bool fl = ir::isFloat(out);
  bool small = out == DType::F16 || out == DType::BF16;
  llvm::Type *accTy = fl ? (out == DType::F64 ? B.getDoubleTy() : B.getFloatTy()) : regType(r->type.elem);
  bool tf32 = in == DType::F32 && op.dotPrecision() == ir::DotPrecision::TF32;
  auto widen = [&](llvm::Value *v) -> llvm::Value * {
    if (!fl)
      return B.CreateIntCast(v, accTy, ir::isSigned(in));
    llvm::Value *x = in == DType::F64 ? v : toF32(v, in);
    if (tf32) {
      llvm::Value *bits = B.CreateBitCast(x, B.getInt32Ty());
      llvm::Value *special = B.CreateICmpEQ(B.CreateAnd(bits, 0x7F800000), B.getInt32(0x7F800000));
      llvm::Value *rounded = B.CreateAnd(B.CreateAdd(bits, B.getInt32(0x1000)), B.getInt32(0xFFFFE000));
      x = B.CreateBitCast(B.CreateSelect(special, bits, rounded), B.getFloatTy());
    }
    return x->getType() == accTy ? x : B.CreateFPExt(x, accTy);
  };
  auto fma = [&](llvm::Value *x, llvm::Value *y, llvm::Value *z) -> llvm::Value * {
    return fl ? intrinsic(llvm::Intrinsic::fma, {accTy}, {x, y, z}) : B.CreateAdd(z, B.CreateMul(x, y));
  };
  auto accIn = [&](llvm::Value *v) -> llvm::Value * {
    if (!fl)
      return v;
    return small ? toF32(v, out) : v;
  };
  llvm::Value *dst = buffer(r);
  if (small) {
    // 16-bit accumulators: accumulate each element in fp32 in a register, round once.
    llvm::IRBuilder<> E(entry_, entry_->begin());
    llvm::AllocaInst *slot = E.CreateAlloca(accTy, nullptr, "dot.acc");
    forEach({M, N}, [&](const Index &mn) {
      B.CreateStore(accIn(elem(acc, mn)), slot);
      forEach({K}, [&](const Index &k) {
        llvm::Value *x = widen(elem(a, {mn[0], k[0]})), *y = widen(elem(b, {k[0], mn[1]}));
        B.CreateStore(fma(x, y, B.CreateLoad(accTy, slot)), slot);
      });
      storeMem(dst, linear(mn, {M, N}), fromF32(B.CreateLoad(accTy, slot), out), r->type.elem);
    });
    return;
  }
  forEach({M, N}, [&](const Index &mn) { storeMem(dst, linear(mn, {M, N}), elem(acc, mn), r->type.elem); });
  forEach({M, K, N}, [&](const Index &mkn) {
    Index mn{mkn[0], mkn[2]};
    llvm::Value *lin = linear(mn, {M, N});
    llvm::Value *x = widen(elem(a, {mkn[0], mkn[1]})), *y = widen(elem(b, {mkn[1], mkn[2]}));
    llvm::Value *z = loadMem(dst, lin, r->type.elem);
    storeMem(dst, lin, fma(x, y, z), r->type.elem);
  });
}

namespace {
llvm::AtomicOrdering ordering(ir::MemSem sem) {
  switch (sem) {
  case ir::MemSem::Relaxed: return llvm::AtomicOrdering::Monotonic;
  case ir::MemSem::Acquire: return llvm::AtomicOrdering::Acquire;
  case ir::MemSem::Release: return llvm::AtomicOrdering::Release;
  case ir::MemSem::AcqRel: return llvm::AtomicOrdering::AcquireRelease;
  }
  return llvm::AtomicOrdering::SequentiallyConsistent;
}
} // namespace

llvm::Value *Lowering::atomicRMW(const ir::Op &op, llvm::Value *p, llvm::Value *v, llvm::Value *cmp, ir::ScalarType t) {
  llvm::AtomicOrdering ord = ordering(op.memSem());
  llvm::AtomicOrdering failOrd = ord == llvm::AtomicOrdering::AcquireRelease || ord == llvm::AtomicOrdering::Acquire
                                     ? llvm::AtomicOrdering::Acquire
                                     : llvm::AtomicOrdering::Monotonic;
  DType dt = t.dtype;
  if (dt == DType::I1 || dt == DType::Ptr || dt == DType::Invalid)
    return nullptr;
  llvm::Align align(ir::storageBytes(dt));
  llvm::Type *ity = B.getIntNTy(ir::bitWidth(dt));
  auto bits = [&](llvm::Value *x) { return x->getType() == ity ? x : B.CreateBitCast(x, ity); };
  auto fromBits = [&](llvm::Value *x) { return regType(t) == ity ? x : B.CreateBitCast(x, regType(t)); };
  if (cmp) {
    llvm::Value *pair = B.CreateAtomicCmpXchg(p, bits(cmp), bits(v), align, ord, failOrd);
    return fromBits(B.CreateExtractValue(pair, 0));
  }
  ir::AtomicKind kind = op.atomicKind();
  bool fl = ir::isFloat(dt), sg = ir::isSigned(dt);
  using RMW = llvm::AtomicRMWInst::BinOp;
  std::optional<RMW> rmw;
  switch (kind) {
  case ir::AtomicKind::Add: rmw = fl ? RMW::FAdd : RMW::Add; break;
  case ir::AtomicKind::Max: rmw = fl ? RMW::FMax : sg ? RMW::Max : RMW::UMax; break;
  case ir::AtomicKind::Min: rmw = fl ? RMW::FMin : sg ? RMW::Min : RMW::UMin; break;
  case ir::AtomicKind::And: rmw = fl ? std::optional<RMW>() : RMW::And; break;
  case ir::AtomicKind::Or: rmw = fl ? std::optional<RMW>() : RMW::Or; break;
  case ir::AtomicKind::Xor: rmw = fl ? std::optional<RMW>() : RMW::Xor; break;
  case ir::AtomicKind::Xchg: return fromBits(B.CreateAtomicRMW(RMW::Xchg, p, bits(v), align, ord));
  }
  if (!rmw)
    return nullptr;
  if (dt != DType::F16 && dt != DType::BF16)
    return B.CreateAtomicRMW(*rmw, p, v, align, ord);
  // fp16 / bf16 (kept as bits): a compare-and-swap loop computing in fp32.
  ir::ReduceKind rk = kind == ir::AtomicKind::Add ? ir::ReduceKind::Sum
                      : kind == ir::AtomicKind::Max ? ir::ReduceKind::Max
                                                    : ir::ReduceKind::Min;
  llvm::BasicBlock *pre = B.GetInsertBlock();
  llvm::LoadInst *init = B.CreateAlignedLoad(ity, p, align);
  init->setAtomic(llvm::AtomicOrdering::Monotonic);
  auto *loop = llvm::BasicBlock::Create(ctx_, "atomic.cas", kernel_);
  auto *done = llvm::BasicBlock::Create(ctx_, "atomic.done", kernel_);
  B.CreateBr(loop);
  B.SetInsertPoint(loop);
  llvm::PHINode *old = B.CreatePHI(ity, 2);
  old->addIncoming(init, pre);
  llvm::Value *next = combine(rk, dt, old, v);
  llvm::Value *pair = B.CreateAtomicCmpXchg(p, old, next, align, ord, failOrd);
  old->addIncoming(B.CreateExtractValue(pair, 0), loop);
  B.CreateCondBr(B.CreateExtractValue(pair, 1), done, loop);
  B.SetInsertPoint(done);
  return old;
}

bool Lowering::emitAtomic(const ir::Op &op) {
  bool cas = op.kind == OpKind::AtomicCAS;
  const ir::Value *ptr = op.operands[0];
  const ir::Value *val = op.operands[cas ? 2 : 1];
  const ir::Value *cmp = cas ? op.operands[1] : nullptr;
  const ir::Value *mask = !cas && op.operands.size() > 2 ? op.operands[2] : nullptr;
  const ir::Value *r = op.result();
  ir::ScalarType t = r->type.elem;
  int site = addSite("atomic", op.loc);
  bool ok = true;
  // One element: masked off (or out of bounds under checking) it does nothing and yields zero.
  auto one = [&](const Index &i) -> llvm::Value * {
    llvm::Value *p = elem(ptr, i), *v = elem(val, i);
    llvm::Value *c = cmp ? elem(cmp, i) : nullptr;
    llvm::Value *go = mask ? elem(mask, i) : B.getTrue();
    if (opts_.checkBounds) {
      llvm::Value *inBounds = B.CreateCall(checkFn_, {p, B.getInt64(ir::storageBytes(t.dtype)), B.getInt32(site),
                                                      pid_[0], pid_[1], pid_[2]});
      go = B.CreateAnd(go, B.CreateICmpNE(inBounds, B.getInt32(0)));
    }
    llvm::BasicBlock *pre = B.GetInsertBlock();
    auto *doIt = llvm::BasicBlock::Create(ctx_, "atomic", kernel_);
    auto *join = llvm::BasicBlock::Create(ctx_, "atomic.join", kernel_);
    B.CreateCondBr(go, doIt, join);
    B.SetInsertPoint(doIt);
    llvm::Value *old = atomicRMW(op, p, v, c, t);
    if (!old) {
      ok = false;
      old = llvm::Constant::getNullValue(regType(t));
    }
    llvm::BasicBlock *end = B.GetInsertBlock();
    B.CreateBr(join);
    B.SetInsertPoint(join);
    llvm::PHINode *phi = B.CreatePHI(regType(t), 2);
    phi->addIncoming(llvm::Constant::getNullValue(regType(t)), pre);
    phi->addIncoming(old, end);
    return phi;
  };
  if (r->type.isScalar()) {
    scalars_[r] = one({});
  } else {
    llvm::Value *dst = buffer(r);
    forEach(r->type.shape, [&](const Index &i) { storeMem(dst, linear(i, r->type.shape), one(i), t); });
  }
  if (!ok)
    return unsupported(op, std::string("atomic ") + (op.kind == OpKind::AtomicCAS ? "cas" : ir::name(op.atomicKind())) + " on " +
                               ir::name(t.dtype));
  return !failed_;
}

// ---------------------------------------------------------------------------------------------

bool lower(const ir::Function &f, llvm::LLVMContext &ctx, DiagnosticEngine &diags, const CompileOptions &options,
           Lowered &out) {
  out.module = std::make_unique<llvm::Module>(f.name, ctx);
  Lowering l(f, *out.module, diags, options, out.sites);
  return l.run(out.entryName);
}

} // namespace tle::cpu::detail
