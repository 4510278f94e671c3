// Per-thread LLVM IR for gpu-stage tile IR: geometry, elementwise ops, loops, reductions and
// layout conversions. Global memory accesses are in MemoryOps.cpp.
#include "Emitter.h"
#include "tle/Transforms/TensorMaps.h"

#include "tle/Target/Fp8.h"

#include <algorithm>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Support/MathExtras.h>

#include <cassert>
#include <cmath>

namespace tle::nvptx {

using ir::DType;
using ir::OpKind;

Emitter::Emitter(ir::Function &fn, llvm::Module &mod, DiagnosticEngine &d)
    : f(fn), m(mod), ctx(mod.getContext()), diags(d), B(mod.getContext()), axis(fn) {
  // Triton's enable_fp_fusion: floating-point ops carry `contract`, so that the NVPTX backend
  // may fuse a multiply and a dependent add into fma.rn.
  if (fn.fpFusion) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    B.setFastMathFlags(fmf);
  }
}

llvm::Type *Emitter::llvmType(ir::ScalarType t) {
  switch (t.dtype) {
  case DType::I1: return B.getInt1Ty();
  case DType::I8: case DType::U8: case DType::F8E4M3: case DType::F8E5M2: return B.getInt8Ty(); // fp8: bits
  case DType::I16: case DType::U16: return B.getInt16Ty();
  case DType::I32: case DType::U32: return B.getInt32Ty();
  case DType::I64: case DType::U64: return B.getInt64Ty();
  case DType::F16: return B.getHalfTy();
  case DType::BF16: return B.getBFloatTy();
  case DType::F32: return B.getFloatTy();
  case DType::F64: return B.getDoubleTy();
  case DType::Ptr: // global: addrspace 1; shared: 3; a cluster CTA's shared memory: 7 (only ever
                   // converted to an integer for the inline PTX that accesses it)
    return llvm::PointerType::get(ctx, t.space == ir::AddrSpace::Global ? 1 : t.space == ir::AddrSpace::Shared ? 3 : 7);
  case DType::Invalid: break;
  }
  assert(false && "invalid dtype");
  return nullptr;
}

llvm::Type *Emitter::storageType(ir::ScalarType t) {
  return t.dtype == DType::I1 ? B.getInt8Ty() : llvmType(t);
}

llvm::Value *Emitter::declareIntrinsicCall(unsigned id, llvm::ArrayRef<llvm::Type *> tys,
                                           llvm::ArrayRef<llvm::Value *> args) {
  llvm::Function *fn = llvm::Intrinsic::getDeclaration(&m, static_cast<llvm::Intrinsic::ID>(id), tys);
  return B.CreateCall(fn, args);
}

llvm::Function *Emitter::run() {
  ir::walk(f.body, [&](ir::Op &op) {
    for (const ir::Value *v : op.operands)
      used_.insert(v);
  });
  f.tensorMaps.clear();
  userBytes_ = f.sharedBytes; // the IR's own buffers (allocate-shared)
  planAsyncOperands(); // decides the TMA descriptors, passed after the params
  std::vector<llvm::Type *> params;
  for (auto &p : f.params)
    params.push_back(p.type.dtype == DType::I1 ? B.getInt8Ty() : llvmType(p.type));
  for (size_t k = 0; k < f.tensorMaps.size(); ++k)
    params.push_back(llvm::PointerType::get(ctx, 0));
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), params, false);
  kernel_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, f.name, m);
  kernel_->setCallingConv(llvm::CallingConv::PTX_Kernel);
  for (size_t i = 0; i < f.params.size(); ++i)
    kernel_->getArg(i)->setName(f.params[i].name);
  // A TMA descriptor: 128 bytes by value, 64-byte aligned (CUtensorMap), read in place (the
  // backend marks it a grid constant, so its address is the param's own).
  for (size_t k = 0; k < f.tensorMaps.size(); ++k) {
    unsigned i = static_cast<unsigned>(f.params.size() + k);
    kernel_->addParamAttr(i, llvm::Attribute::getWithByValType(ctx, llvm::ArrayType::get(B.getInt8Ty(), 128)));
    kernel_->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
    kernel_->getArg(i)->setName("tensor_map_" + std::to_string(k));
  }

  entry_ = llvm::BasicBlock::Create(ctx, "entry", kernel_);
  auto *body = llvm::BasicBlock::Create(ctx, "body", kernel_);
  B.SetInsertPoint(entry_);
  tid_ = declareIntrinsicCall(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  lane_ = B.CreateAnd(tid_, 31, "lane");
  warp_ = B.CreateLShr(tid_, 5, "warp");
  for (size_t i = 0; i < f.params.size(); ++i) {
    llvm::Value *a = kernel_->getArg(i);
    if (f.params[i].type.dtype == DType::I1)
      a = B.CreateICmpNE(a, B.getInt8(0));
    vals_[f.body.args[i].get()] = {a};
  }
  B.CreateBr(body);
  B.SetInsertPoint(body);
  if (!f.tensorMaps.empty())
    initTmaBarriers();
  if (ws_) {
    emitSpecialized();
  } else {
    emitBlock(f.body);
    if (!buffers_.empty()) {
      auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
      B.CreateCall(fty, llvm::InlineAsm::get(fty, "cp.async.wait_all;", "", true));
      drainTma(); // no copy into the block's shared memory outlives it
    }
    drainTmaStores();
    B.CreateRetVoid();
  }

  if ((sharedBytes_ > 0 || userBytes_ > 0) && smem_)
    smem_->setAlignment(llvm::Align(smemAlign_)); // 1024 for wgmma's swizzled layouts
  f.sharedBytes = sharedBytes_ + userBytes_;
  return kernel_;
}

// ---------------------------------------------------------------------------------------------
// Geometry

const std::vector<llvm::Value *> &Emitter::laneWarpCoord(const ir::Layout &l) {
  // Cached by the layout's text: layouts are value types, often rebuilt.
  std::string key = l.str();
  auto it = coordCache_.find(key);
  if (it != coordCache_.end())
    return it->second;
  llvm::IRBuilder<> E(entry_->getTerminator());
  std::vector<llvm::Value *> c(l.rank(), E.getInt32(0));
  auto addBits = [&](const std::vector<ir::Layout::Basis> &bases, llvm::Value *id) {
    for (size_t i = 0; i < bases.size(); ++i) {
      llvm::Value *bit = nullptr;
      for (unsigned d = 0; d < l.rank(); ++d) {
        if (bases[i][d] == 0)
          continue;
        if (!bit)
          bit = E.CreateAnd(E.CreateLShr(id, i), 1);
        c[d] = E.CreateXor(c[d], E.CreateMul(bit, E.getInt32(static_cast<uint32_t>(bases[i][d]))));
      }
    }
  };
  addBits(l.lane, lane_);
  addBits(l.warp, warp_);
  return coordCache_.emplace(key, c).first->second;
}

std::vector<llvm::Value *> Emitter::coord(const ir::Layout &l, int r) {
  const auto &lw = laneWarpCoord(l);
  ir::Layout::Basis rc = l.regCoord(r);
  // When register bits and lane/warp bits never overlap in a coordinate (blocked and mma
  // layouts), XOR is addition: emit `add` so that addresses fold into base + immediate.
  bool disjoint = ir::registerBitsDisjoint(l);
  std::vector<llvm::Value *> c(l.rank());
  for (unsigned d = 0; d < l.rank(); ++d) {
    llvm::Value *k = B.getInt32(static_cast<uint32_t>(rc[d]));
    c[d] = !rc[d] ? lw[d] : disjoint ? B.CreateAdd(lw[d], k, "", /*HasNUW=*/true, /*HasNSW=*/true) : B.CreateXor(lw[d], k);
  }
  return c;
}

llvm::Value *Emitter::linearize(const std::vector<llvm::Value *> &c, const std::vector<int64_t> &shape) {
  llvm::Value *idx = B.getInt32(0);
  for (size_t d = 0; d < shape.size(); ++d)
    idx = B.CreateAdd(B.CreateMul(idx, B.getInt32(static_cast<uint32_t>(shape[d]))), c[d]);
  return idx;
}

llvm::Value *Emitter::ownerPredicate(const ir::Layout &l) {
  llvm::Value *pred = B.getTrue();
  auto zeroBits = [&](const std::vector<ir::Layout::Basis> &bases, llvm::Value *id) {
    uint32_t mask = 0;
    for (size_t i = 0; i < bases.size(); ++i)
      if (std::all_of(bases[i].begin(), bases[i].end(), [](int64_t x) { return x == 0; }))
        mask |= 1u << i;
    if (mask)
      pred = B.CreateAnd(pred, B.CreateICmpEQ(B.CreateAnd(id, mask), B.getInt32(0)));
  };
  zeroBits(l.lane, lane_);
  zeroBits(l.warp, warp_);
  return pred;
}

// ---------------------------------------------------------------------------------------------
// Values

std::vector<llvm::Value *> &Emitter::regs(const ir::Value *v) {
  auto it = vals_.find(v);
  assert(it != vals_.end() && "value used before emission");
  return it->second;
}

llvm::Value *Emitter::scalar(const ir::Value *v) { return regs(v)[0]; }

std::vector<llvm::Value *> Emitter::regsIn(const ir::Value *v, const ir::Layout &l) {
  if (v->type.isScalar())
    return std::vector<llvm::Value *>(l.numRegs(), scalar(v));
  if (isAsync(v) && !privateActive_.count(v))
    return regs(v); // the slot index; layouts do not apply

  const auto &r = regs(v);
  if (*v->layout == l)
    return r;
  auto map = ir::registerMap(*v->layout, l);
  assert(map && "operand layout not compatible; layout assignment should have converted it");
  std::vector<llvm::Value *> out(l.numRegs());
  for (int i = 0; i < l.numRegs(); ++i)
    out[i] = r[(*map)[i]];
  return out;
}

llvm::Value *Emitter::smemPtr(llvm::Value *byteOffset) {
  return smemRaw(scratchBase_ ? B.CreateAdd(byteOffset, B.getInt32(static_cast<uint32_t>(scratchBase_))) : byteOffset);
}

llvm::Value *Emitter::smemRaw(llvm::Value *byteOffset) {
  if (!smem_) {
    auto *ty = llvm::ArrayType::get(B.getInt8Ty(), 0);
    smem_ = new llvm::GlobalVariable(m, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, "__tle_smem",
                                     nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    smem_->setAlignment(llvm::Align(16));
  }
  if (userBytes_) // the kernel's own buffers come first (allocate-shared)
    byteOffset = B.CreateAdd(byteOffset, llvm::ConstantInt::get(byteOffset->getType(), userBytes_));
  return B.CreateGEP(B.getInt8Ty(), smem_, byteOffset);
}

void Emitter::barrier() {
  // After a warp-specialised kernel splits into roles the producer warps no longer take part:
  // the consumers synchronise on named barrier 1 with their own thread count.
  if (split_)
    declareIntrinsicCall(llvm::Intrinsic::nvvm_barrier_sync_cnt, {},
                         {B.getInt32(1), B.getInt32(static_cast<uint32_t>(32 * f.numWarps))});
  else
    declareIntrinsicCall(llvm::Intrinsic::nvvm_barrier0, {}, {});
  ++barrierSeq_;
  if (curBlock_)
    lastTopBarrier_[curBlock_] = barrierSeq_;
}

// ---------------------------------------------------------------------------------------------
// Ops

void Emitter::emitBlock(const ir::Block &b) {
  const ir::Block *outer = curBlock_;
  curBlock_ = &b;
  size_t i = 0;
  for (auto &op : b.ops) {
    // Past the last top-level user of the async buffers, scratch space starts at 0 again; the
    // copies still in flight (a pipeline's masked-off prefetches) must land first.
    if (&b == &f.body && scratchBase_ && i > lastAsyncTopOp_ && !producer_) {
      auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
      B.CreateCall(fty, llvm::InlineAsm::get(fty, "cp.async.wait_all;", "", true));
      if (tmaLoads())
        invalidateTmaBarriers(); // TMA loads' mbarriers (TMA stores have none)
      if (tmaStoresPending_) { // a loop's TMA stores may still read their staging areas
        drainTmaStores();
        barrier();
      }
      scratchBase_ = 0;
    }
    if (batchedReduces_.erase(op.get())) { // emitted with an earlier reduce's batch
      ++i;
      continue;
    }
    if (!pendingWgmma_.empty())
      waitPendingWgmma(b, *op);
    emitOp(*op);
    curBlock_ = &b; // ops with regions emit other blocks
    ++i;
  }
  curBlock_ = outer;
}

void Emitter::planSlotRetirement(const ir::Block &body) {
  // The refill of a class in iteration i overwrites the slot the previous iteration read. Its
  // readers: a wgmma waited for at once or an mma.sync (ldmatrix) retired their reads in that
  // iteration, before this body starts; a carried wgmma group (carriedWgmma) retires at this
  // body's first wgmma.wait_group 0. Anything else (a group left in flight with wait_group 1,
  // readers in nested regions, private slots) keeps the barrier before the refill.
  std::set<int> refilled;
  for (auto &o : body.ops)
    if (o->kind == OpKind::Load && isAsync(o->result()) && !asyncBuffer(o->result()).privateSlots)
      refilled.insert(asyncOf_.at(o->result()));
  for (int cls : refilled) {
    bool ok = true, carried = false;
    auto reads = [&](const ir::Op &x) {
      for (const ir::Value *v : x.operands)
        if (isAsync(v) && asyncOf_.at(v) == cls)
          return true;
      return false;
    };
    for (auto &o : body.ops) {
      if (o->kind == OpKind::Yield || o->kind == OpKind::Permute || (o->kind == OpKind::Load && isAsync(o->result())))
        continue;
      for (auto &r : o->regions)
        ir::walk(*r, [&](ir::Op &x) { ok &= !reads(x); });
      if (!reads(*o))
        continue;
      if (o->kind != OpKind::Dot || !useWgmma(*o))
        continue; // mma.sync (ldmatrix) and loads from the slot read synchronously
      if (deferrableWgmma(*o))
        ok = false;
      else if (carriedWgmma(*o))
        carried = true;
    }
    if (ok)
      slotReadsRetired_[{&body, cls}] = carried ? -1 : barrierSeq_;
  }
}

bool Emitter::slotReadsRetiredBehindBarrier(int cls, const ir::Block *block) const {
  auto it = slotReadsRetired_.find({block, cls});
  if (it == slotReadsRetired_.end() || it->second < 0)
    return false;
  auto b = lastTopBarrier_.find(block);
  return b != lastTopBarrier_.end() && b->second > it->second;
}

void Emitter::waitPendingWgmma(const ir::Block &block, const ir::Op &op) {
  auto needs = [&](const PendingWgmma &p) {
    if (&op == block.terminator())
      return true;
    bool hit = false;
    auto visit = [&](const ir::Op &x) {
      for (const ir::Value *v : x.operands)
        hit |= v == p.value;
      if (x.kind == ir::OpKind::Load && isAsync(x.result()) && p.classes.count(asyncOf_.at(x.result())))
        hit = true;
    };
    visit(op);
    for (auto &r : op.regions)
      ir::walk(*r, [&](ir::Op &x) { visit(x); });
    return hit;
  };
  for (auto it = pendingWgmma_.begin(); it != pendingWgmma_.end();) {
    if (it->body != &block || !needs(*it)) {
      ++it;
      continue;
    }
    std::vector<llvm::Value *> C = vals_.at(it->value);
    waitWgmma(C);
    vals_[it->value] = C;
    it = pendingWgmma_.erase(it);
  }
}

void Emitter::emitOp(const ir::Op &op) {
  if (producer_ && !slice_.count(&op))
    return undefResults(op); // the producer computes only the TMA fills and their inputs
  // A prefetched value held in private shared-memory slots stands in as its registers for the
  // ops that read it (the loop's yield and the loop itself carry its slot index).
  std::vector<std::pair<const ir::Value *, std::vector<llvm::Value *>>> swapped;
  if (op.kind != OpKind::Yield && op.kind != OpKind::For && op.kind != OpKind::Return &&
      op.kind != OpKind::Condition)
    for (const ir::Value *v : op.operands)
      if (isPrivateAsync(v) && !privateActive_.count(v)) {
        std::vector<llvm::Value *> r = materializePrivate(v);
        swapped.push_back({v, vals_[v]});
        vals_[v] = r;
        privateActive_.insert(v);
      }
  emitOpImpl(op);
  // A global write in a loop whose TMA fills continue across its iterations (a persistent
  // kernel's epilogue store, before the next tile's copies): the async proxy must see it
  // (PTX ISA, membar/fence: fence.proxy.async), and the barrier before the next fill orders the
  // other threads' writes.
  if (!tmaFillNests_.empty() && transforms::writesGlobalMemory(op) && !tmaStores_.count(&op)) {
    const ir::Op *top = &op;
    while (top->parent && top->parent != &f.body)
      top = top->parent->parent;
    if (tmaFillNests_.count(top)) {
      auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
      B.CreateCall(fty, llvm::InlineAsm::get(fty, "fence.proxy.async.global;", "", true));
    }
  }
  for (auto &[v, slot] : swapped) {
    vals_[v] = slot;
    privateActive_.erase(v);
  }
}

void Emitter::emitOpImpl(const ir::Op &op) {
  // Ops that only compute in registers keep the barrier an async load issued valid for the
  // next one (loads of one pipeline stage share it); anything else may touch shared memory.
  bool registersOnly = ir::isElementwise(op.kind) || op.kind == OpKind::Constant || op.kind == OpKind::Splat ||
                       op.kind == OpKind::Arange || op.kind == OpKind::ExpandDims || op.kind == OpKind::Broadcast ||
                       op.kind == OpKind::ProgramId || op.kind == OpKind::NumPrograms;
  if (!registersOnly && !(op.kind == OpKind::Load && isAsync(op.result())))
    asyncBarrierValid_ = false;
  switch (op.kind) {
  case OpKind::Return: case OpKind::Yield: case OpKind::Condition:
    return;
  case OpKind::For:
    return emitFor(op);
  case OpKind::If:
    return emitIf(op);
  case OpKind::While:
    return emitWhile(op);
  case OpKind::LocalAlloc:
    return emitLocalAlloc(op);
  case OpKind::RemotePtr:
    return emitRemotePtr(op);
  case OpKind::ClusterBarrier:
    return emitClusterBarrier(op.loc);
  case OpKind::ClusterArrive:
    return emitClusterArrive(op.loc);
  case OpKind::ClusterWait:
    return emitClusterWait(op.loc);
  case OpKind::Load:
    if (isAsync(op.result()))
      return emitAsyncLoad(op);
    return emitLoad(op);
  case OpKind::Store:
    return emitStore(op);
  case OpKind::Reduce:
    return emitReduce(op);
  case OpKind::ConvertLayout:
    return emitConvert(op);
  case OpKind::Dot:
    return emitDot(op);
  case OpKind::Permute: case OpKind::Reshape: case OpKind::Cat: case OpKind::Join: case OpKind::Split:
  case OpKind::Flip:
    return emitShapeOp(op);
  case OpKind::Scan:
    return emitScan(op);
  case OpKind::AtomicRMW: case OpKind::AtomicCAS:
    return emitAtomic(op);
  case OpKind::Print:
    return emitPrint(op);
  case OpKind::Assert:
    return emitAssert(op);
  case OpKind::Barrier: // tl.debug_barrier: bar.sync 0
    return barrier();
  case OpKind::GridDepControl: { // griddepcontrol needs sm_90; before it there is nothing to do
    if (smVersion() < 90)
      return;
    auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
    const char *text = op.ival ? "griddepcontrol.launch_dependents;" : "griddepcontrol.wait;";
    B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "~{memory}", /*hasSideEffects=*/true));
    return;
  }
  case OpKind::InlineAsm:
    return emitInlineAsm(op);
  case OpKind::Constant: {
    ir::ScalarType t = op.result()->type.elem;
    llvm::Type *ty = llvmType(t);
    llvm::Value *c = ir::isFP8(t.dtype)    ? B.getInt8(ir::fp8FromDouble(op.fval, t.dtype))
                     : ir::isFloat(t.dtype) ? llvm::ConstantFP::get(ty, op.fval)
                                            : llvm::ConstantInt::get(ty, static_cast<uint64_t>(op.ival), ir::isSigned(t.dtype));
    vals_[op.result()] = {c};
    return;
  }
  case OpKind::ProgramId: case OpKind::NumPrograms: {
    static const unsigned ids[2][3] = {
        {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
         llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
        {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
         llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z}};
    vals_[op.result()] = {declareIntrinsicCall(ids[op.kind == OpKind::NumPrograms][op.axis], {}, {})};
    return;
  }
  case OpKind::Arange: {
    const ir::Layout &l = *op.result()->layout;
    std::vector<llvm::Value *> out;
    for (int r = 0; r < l.numRegs(); ++r)
      out.push_back(B.CreateAdd(coord(l, r)[0], B.getInt32(static_cast<uint32_t>(op.ival))));
    vals_[op.result()] = out;
    return;
  }
  case OpKind::Splat: {
    vals_[op.result()] = std::vector<llvm::Value *>(op.result()->layout->numRegs(), scalar(op.operands[0]));
    return;
  }
  case OpKind::ExpandDims: {
    const ir::Value *in = op.operands[0];
    const ir::Layout &l = *op.result()->layout;
    if (in->type.isScalar())
      vals_[op.result()] = std::vector<llvm::Value *>(l.numRegs(), scalar(in));
    else
      vals_[op.result()] = regsIn(in, ir::squeezeLayout(l, op.axis));
    return;
  }
  case OpKind::Broadcast: {
    const ir::Layout &l = *op.result()->layout;
    vals_[op.result()] = regsIn(op.operands[0], ir::broadcastOperandLayout(l, op.operands[0]->type.shape));
    return;
  }
  default:
    break;
  }
  assert(ir::isElementwise(op.kind) && "unhandled op");
  const ir::Value *r = op.result();
  if (r->type.isScalar()) {
    std::vector<llvm::Value *> in;
    for (auto *v : op.operands)
      in.push_back(scalar(v));
    vals_[r] = {elementwise(op, in)};
    return;
  }
  const ir::Layout &l = *r->layout;
  std::vector<std::vector<llvm::Value *>> ins;
  for (auto *v : op.operands)
    ins.push_back(regsIn(v, l));
  // Registers whose elements lie in one run of equal values (axis-info constancy) share the
  // value computed for the first of them: `cols < N` with N % 16 == 0 is one compare per
  // vector of 8 instead of 8 (Triton deduplicates elementwise results the same way).
  int same = equalRegisterBits(r);
  std::vector<llvm::Value *> out(l.numRegs());
  for (int i = 0; i < l.numRegs(); ++i) {
    if (i & same) {
      out[i] = out[i & ~same];
      continue;
    }
    std::vector<llvm::Value *> in;
    for (auto &x : ins)
      in.push_back(x[i]);
    out[i] = elementwise(op, in);
  }
  vals_[r] = out;
}

int Emitter::equalRegisterBits(const ir::Value *v) {
  const ir::Layout &l = *v->layout;
  const transforms::AxisInfo &ai = axis.get(v);
  // A register bit with a zero basis holds the same element twice (a layout replicated within
  // the thread, as a row statistic broadcast against the mma accumulator layout): always equal.
  int bits = ir::replicatedRegisterBits(l);
  if (ai.constancy.size() != l.rank())
    return bits;
  for (size_t b = 0; b < l.reg.size(); ++b) {
    int dim = -1;
    bool single = true;
    for (unsigned d = 0; d < l.rank(); ++d)
      if (l.reg[b][d] != 0) {
        single = single && dim < 0;
        dim = static_cast<int>(d);
      }
    // Flipping this register bit moves the element by 2^k along one dim, inside its aligned
    // run of `constancy` equal elements (runs are aligned, 2^k < constancy).
    if (single && dim >= 0 && l.reg[b][dim] < ai.constancy[dim])
      bits |= 1 << b;
  }
  return bits;
}

unsigned Emitter::smVersion() const {
  unsigned sm = 0;
  for (size_t i = 3; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
    sm = sm * 10 + unsigned(arch[i] - '0');
  return sm;
}

bool Emitter::hasFp8Cvt() const {
  // cvt with .e4m3x2 / .e5m2x2: sm_89 and later (PTX ISA §9.7.9.21).
  return smVersion() >= 89;
}

llvm::Value *Emitter::castFp8(llvm::Value *a, DType from, DType to, bool towardZero) {
  llvm::Type *f32 = B.getFloatTy();
  auto asm1 = [&](llvm::Type *rt, llvm::ArrayRef<llvm::Value *> args, const std::string &text, const char *cons) {
    std::vector<llvm::Type *> tys;
    for (llvm::Value *v : args)
      tys.push_back(v->getType());
    auto *fty = llvm::FunctionType::get(rt, tys, false);
    return B.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, false), args);
  };
  auto fmt = [](DType t) { return t == DType::F8E4M3 ? "e4m3x2" : "e5m2x2"; };
  // To fp32, exactly.
  llvm::Value *x;
  if (ir::isFP8(from)) {
    if (hasFp8Cvt()) {
      llvm::Value *pair = asm1(B.getInt32Ty(), {B.CreateZExt(a, B.getInt16Ty())},
                               std::string("cvt.rn.f16x2.") + fmt(from) + " $0, $1;", "=r,h");
      x = B.CreateFPExt(B.CreateBitCast(B.CreateTrunc(pair, B.getInt16Ty()), B.getHalfTy()), f32);
    } else {
      x = target::fp8ToF32(B, a, from);
    }
    if (to == DType::I1)
      return B.CreateFCmpUNE(x, llvm::ConstantFP::get(f32, 0.0));
    if (ir::isInteger(to))
      return declareIntrinsicCall(ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                  {llvmType(ir::ScalarType{to}), f32}, {x});
    if (!ir::isFP8(to))
      return to == DType::F32 ? x : to == DType::F64 ? B.CreateFPExt(x, B.getDoubleTy())
                                                     : B.CreateFPTrunc(x, llvmType(ir::ScalarType{to})); // exact
  } else if (from == DType::F64) {
    x = target::f64ToF32RoundToOdd(B, a); // one correct rounding below
  } else if (ir::isFloat(from)) {
    x = from == DType::F32 ? a : B.CreateFPExt(a, f32); // exact
  } else {
    // Integers: |v| >= 2^24 saturates in fp8 either way, so rounding to fp32 first is exact enough.
    x = ir::isSigned(from) ? B.CreateSIToFP(a, f32) : B.CreateUIToFP(a, f32);
  }
  // fp32 to fp8.
  if (hasFp8Cvt() && !towardZero) {
    // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, hi, lo: the low byte converts `lo`.
    llvm::Value *pair = asm1(B.getInt16Ty(), {llvm::ConstantFP::get(f32, 0.0), x},
                             std::string("cvt.rn.satfinite.") + fmt(to) + ".f32 $0, $1, $2;", "=h,f,f");
    return B.CreateTrunc(pair, B.getInt8Ty());
  }
  return target::f32ToFp8(B, x, to, towardZero);
}

llvm::Value *Emitter::elementwise(const ir::Op &op, const std::vector<llvm::Value *> &in) {
  DType t = op.operands[0]->type.dtype();
  bool fl = ir::isFloat(t), sg = ir::isSigned(t);
  llvm::Value *a = in[0], *b = in.size() > 1 ? in[1] : nullptr;
  auto viaF32 = [&](auto fn) -> llvm::Value * {
    if (t == DType::F32)
      return fn(a, b);
    llvm::Value *x = B.CreateFPExt(a, B.getFloatTy());
    llvm::Value *y = b ? B.CreateFPExt(b, B.getFloatTy()) : nullptr;
    return B.CreateFPTrunc(fn(x, y), a->getType());
  };
  switch (op.kind) {
  case OpKind::Add: return fl ? B.CreateFAdd(a, b) : B.CreateAdd(a, b);
  case OpKind::Sub: return fl ? B.CreateFSub(a, b) : B.CreateSub(a, b);
  case OpKind::Mul: return fl ? B.CreateFMul(a, b) : B.CreateMul(a, b);
  case OpKind::FDiv:
    if (t == DType::F64)
      return B.CreateFDiv(a, b);
    if (op.ival) // correctly rounded: LLVM's fdiv lowers to div.rn
      return viaF32([&](llvm::Value *x, llvm::Value *y) -> llvm::Value * { return B.CreateFDiv(x, y); });
    return viaF32([&](llvm::Value *x, llvm::Value *y) -> llvm::Value * {
      // Triton's fp32 '/': div.full.f32 (approximate, ~2 ulp).
      auto *fty = llvm::FunctionType::get(B.getFloatTy(), {B.getFloatTy(), B.getFloatTy()}, false);
      auto *asmv = llvm::InlineAsm::get(fty, "div.full.f32 $0, $1, $2;", "=f,f,f", false);
      return B.CreateCall(fty, asmv, {x, y});
    });
  case OpKind::IDiv: return sg ? B.CreateSDiv(a, b) : B.CreateUDiv(a, b);
  case OpKind::IRem: return sg ? B.CreateSRem(a, b) : B.CreateURem(a, b);
  case OpKind::FRem: {
    // C fmod, exact: libdevice's __nv_fmod(f). LLVM's frem expands to x - trunc(x / y) * y on
    // NVPTX, which overflows to inf for tiny divisors (found by the conformance suite on the GPU).
    auto fmodOf = [&](llvm::Value *x, llvm::Value *y) -> llvm::Value * {
      llvm::Type *ft = x->getType();
      auto *fty = llvm::FunctionType::get(ft, {ft, ft}, false);
      llvm::FunctionCallee callee = m.getOrInsertFunction(ft->isDoubleTy() ? "__nv_fmod" : "__nv_fmodf", fty);
      if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
        fn->setDoesNotAccessMemory();
      return B.CreateCall(callee, {x, y});
    };
    return t == DType::F64 ? fmodOf(a, b) : viaF32(fmodOf);
  }
  case OpKind::And: return B.CreateAnd(a, b);
  case OpKind::Or: return B.CreateOr(a, b);
  case OpKind::Xor: return B.CreateXor(a, b);
  case OpKind::Shl: return B.CreateShl(a, b);
  case OpKind::Shr: return sg ? B.CreateAShr(a, b) : B.CreateLShr(a, b);
  case OpKind::Max: case OpKind::Min:
    return combine(op.kind == OpKind::Max ? ir::ReduceKind::Max : ir::ReduceKind::Min, t, a, b);
  case OpKind::UMulHi: {
    // zext, multiply, shift: the NVPTX backend selects mul.hi.u32 / mul.hi.u64.
    unsigned n = a->getType()->getIntegerBitWidth();
    llvm::Type *wide = B.getIntNTy(2 * n);
    llvm::Value *p = B.CreateMul(B.CreateZExt(a, wide), B.CreateZExt(b, wide));
    return B.CreateTrunc(B.CreateLShr(p, llvm::ConstantInt::get(wide, n)), a->getType());
  }
  case OpKind::Cmp: {
    if (fl) {
      llvm::CmpInst::Predicate p;
      switch (op.pred) {
      case ir::CmpPred::Eq: p = llvm::CmpInst::FCMP_OEQ; break;
      case ir::CmpPred::Ne: p = llvm::CmpInst::FCMP_UNE; break;
      case ir::CmpPred::Lt: p = llvm::CmpInst::FCMP_OLT; break;
      case ir::CmpPred::Le: p = llvm::CmpInst::FCMP_OLE; break;
      case ir::CmpPred::Gt: p = llvm::CmpInst::FCMP_OGT; break;
      default: p = llvm::CmpInst::FCMP_OGE; break;
      }
      return B.CreateFCmp(p, a, b);
    }
    llvm::CmpInst::Predicate p;
    switch (op.pred) {
    case ir::CmpPred::Eq: p = llvm::CmpInst::ICMP_EQ; break;
    case ir::CmpPred::Ne: p = llvm::CmpInst::ICMP_NE; break;
    case ir::CmpPred::Lt: p = sg ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT; break;
    case ir::CmpPred::Le: p = sg ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE; break;
    case ir::CmpPred::Gt: p = sg ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT; break;
    default: p = sg ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE; break;
    }
    return B.CreateICmp(p, a, b);
  }
  case OpKind::Select: return B.CreateSelect(in[0], in[1], in[2]);
  case OpKind::Neg: return fl ? B.CreateFNeg(a) : B.CreateNeg(a);
  case OpKind::Not: return B.CreateNot(a);
  case OpKind::Exp: case OpKind::Exp2:
    // As Triton 3.6 emits them for fp32: exp2 is ex2.approx.ftz.f32 (results below 2^-126
    // flush to zero), exp is ex2.approx.f32 of x * log2 e. The non-ftz form costs ptxas a
    // compare and two multiplies per element to scale denormals (in attention's exp2-based
    // online softmax, 102 of the 454 instructions of the head-dim-128 loop body).
    if (t != DType::F32)
      break;
    if (op.kind == OpKind::Exp2)
      return declareIntrinsicCall(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {a});
    return declareIntrinsicCall(llvm::Intrinsic::nvvm_ex2_approx_f, {},
                                {B.CreateFMul(a, llvm::ConstantFP::get(a->getType(), M_LOG2E))});
  case OpKind::Log: case OpKind::Log2: {
    if (t != DType::F32)
      break;
    llvm::Value *l2 = declareIntrinsicCall(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {a});
    return op.kind == OpKind::Log ? B.CreateFMul(l2, llvm::ConstantFP::get(a->getType(), M_LN2)) : l2;
  }
  case OpKind::Sqrt: return declareIntrinsicCall(llvm::Intrinsic::sqrt, {a->getType()}, {a});
  case OpKind::Rsqrt:
    if (t != DType::F32)
      break;
    return declareIntrinsicCall(llvm::Intrinsic::nvvm_rsqrt_approx_f, {}, {a});
  case OpKind::Abs:
    if (fl)
      return declareIntrinsicCall(llvm::Intrinsic::fabs, {a->getType()}, {a});
    if (!sg)
      return a;
    return declareIntrinsicCall(llvm::Intrinsic::abs, {a->getType()}, {a, B.getFalse()});
  case OpKind::Cast: {
    DType to = op.result()->type.dtype();
    llvm::Type *ty = llvmType(op.result()->type.elem);
    if (ir::isFP8(t) || ir::isFP8(to))
      return castFp8(a, t, to, op.ival != 0);
    if (to == DType::I1)
      return fl ? B.CreateFCmpUNE(a, llvm::ConstantFP::get(a->getType(), 0.0))
                : B.CreateICmpNE(a, llvm::ConstantInt::get(a->getType(), 0));
    if (fl && ir::isFloat(to) && op.ival && ir::bitWidth(to) < ir::bitWidth(t)) {
      // Round toward zero: cvt.rz (PTX ISA §9.7.9.21).
      llvm::Value *x = t == DType::F64 && to != DType::F32 ? B.CreateFPTrunc(a, B.getFloatTy()) : a;
      std::string src = x->getType()->isDoubleTy() ? "f64" : "f32";
      std::string dst = to == DType::F32 ? "f32" : to == DType::F16 ? "f16" : "bf16";
      bool half = to != DType::F32;
      auto *fty = llvm::FunctionType::get(half ? static_cast<llvm::Type *>(B.getInt16Ty()) : ty, {x->getType()}, false);
      std::string cons = std::string(half ? "=h," : "=f,") + (src == "f64" ? "d" : "f");
      llvm::Value *r = B.CreateCall(fty, llvm::InlineAsm::get(fty, "cvt.rz." + dst + "." + src + " $0, $1;", cons, false), {x});
      return half ? B.CreateBitCast(r, ty) : r;
    }
    if (fl && ir::isFloat(to))
      return ir::bitWidth(to) > ir::bitWidth(t) || (t == DType::F16 && to == DType::BF16) ||
                     (t == DType::BF16 && to == DType::F16)
                 ? (ir::bitWidth(to) == ir::bitWidth(t) ? B.CreateFPTrunc(B.CreateFPExt(a, B.getFloatTy()), ty)
                                                        : B.CreateFPExt(a, ty))
                 : B.CreateFPTrunc(a, ty);
    if (fl) {
      // Saturating, NaN -> 0 (PTX cvt.rzi semantics, and the CPU target's): fptosi/fptoui
      // would make out-of-range values poison (wrapped on the GPU: conformance suite).
      llvm::Value *x = ir::bitWidth(t) < 32 ? B.CreateFPExt(a, B.getFloatTy()) : a;
      return declareIntrinsicCall(ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                  {ty, x->getType()}, {x});
    }
    if (ir::isFloat(to))
      return sg ? B.CreateSIToFP(a, ty) : B.CreateUIToFP(a, ty);
    return B.CreateIntCast(a, ty, sg);
  }
  case OpKind::Bitcast:
    return B.CreateBitCast(a, llvmType(op.result()->type.elem));
  case OpKind::Fma:
    return declareIntrinsicCall(llvm::Intrinsic::fma, {a->getType()}, {in[0], in[1], in[2]});
  case OpKind::ExternCall: {
    // A libdevice function, linked into the module before optimisation (Backend.cpp).
    std::vector<llvm::Type *> tys;
    for (llvm::Value *x : in)
      tys.push_back(x->getType());
    auto *fty = llvm::FunctionType::get(llvmType(op.result()->type.elem), tys, false);
    llvm::FunctionCallee callee = m.getOrInsertFunction(op.sym, fty);
    if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
      fn->setDoesNotAccessMemory();
    return B.CreateCall(callee, in);
  }
  case OpKind::AddPtr: {
    ir::ScalarType pointee{op.operands[0]->type.elem.pointee};
    llvm::Value *off = b;
    // The offset is signed; unsigned offsets are zero-extended (IR.h, AddPtr).
    if (off->getType()->getIntegerBitWidth() < 64 && ir::isUnsigned(op.operands[1]->type.dtype()))
      off = B.CreateZExt(off, B.getInt64Ty());
    else if (off->getType()->getIntegerBitWidth() < 32)
      off = B.CreateSExt(off, B.getInt32Ty());
    return B.CreateGEP(storageType(pointee), a, off);
  }
  default:
    break;
  }
  diags.fatal(op.loc, std::string("'") + ir::name(op.kind) + "' on " + ir::name(t) + " is not supported by the NVPTX backend yet");
}

llvm::Value *Emitter::combine(ir::ReduceKind k, DType t, llvm::Value *a, llvm::Value *b) {
  bool fl = ir::isFloat(t), sg = ir::isSigned(t);
  switch (k) {
  case ir::ReduceKind::Sum:
    return fl ? B.CreateFAdd(a, b) : B.CreateAdd(a, b);
  case ir::ReduceKind::Max:
    if (fl)
      return declareIntrinsicCall(llvm::Intrinsic::maxnum, {a->getType()}, {a, b});
    return declareIntrinsicCall(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, {a->getType()}, {a, b});
  case ir::ReduceKind::Min:
    if (fl)
      return declareIntrinsicCall(llvm::Intrinsic::minnum, {a->getType()}, {a, b});
    return declareIntrinsicCall(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, {a->getType()}, {a, b});
  case ir::ReduceKind::Prod:
    return fl ? B.CreateFMul(a, b) : B.CreateMul(a, b);
  case ir::ReduceKind::Combine: // a region: combineValues
    break;
  }
  return nullptr;
}

llvm::Value *Emitter::shuffleXor(llvm::Value *v, int laneMask) {
  llvm::Type *ty = v->getType();
  unsigned bits = ty->getPrimitiveSizeInBits();
  auto shfl32 = [&](llvm::Value *x) {
    return declareIntrinsicCall(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                                {B.getInt32(0xffffffffu), x, B.getInt32(laneMask), B.getInt32(0x1f)});
  };
  if (bits == 64) {
    llvm::Value *i = B.CreateBitCast(v, B.getInt64Ty());
    llvm::Value *lo = shfl32(B.CreateTrunc(i, B.getInt32Ty()));
    llvm::Value *hi = shfl32(B.CreateTrunc(B.CreateLShr(i, 32), B.getInt32Ty()));
    llvm::Value *r = B.CreateOr(B.CreateZExt(lo, B.getInt64Ty()), B.CreateShl(B.CreateZExt(hi, B.getInt64Ty()), 32));
    return B.CreateBitCast(r, ty);
  }
  llvm::Type *ity = B.getIntNTy(bits);
  llvm::Value *i = ty->isIntegerTy() ? v : B.CreateBitCast(v, ity);
  llvm::Value *r = shfl32(bits == 32 ? i : B.CreateZExt(i, B.getInt32Ty()));
  if (bits != 32)
    r = B.CreateTrunc(r, ity);
  return ty->isIntegerTy() ? r : B.CreateBitCast(r, ty);
}

void Emitter::emitFor(const ir::Op &op) {
  const ir::Block &body = *op.regions[0];
  llvm::Value *lb = scalar(op.operands[0]), *ub = scalar(op.operands[1]), *step = scalar(op.operands[2]);
  bool sg = ir::isSigned(op.operands[0]->type.dtype());
  llvm::BasicBlock *pre = B.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx, "for.header", kernel_);
  auto *loop = llvm::BasicBlock::Create(ctx, "for.body", kernel_);
  auto *exit = llvm::BasicBlock::Create(ctx, "for.exit", kernel_);
  // A loop that leaves wgmma groups in flight across iterations is emitted rotated (guard, body,
  // test at the bottom) with the final wait on the exit edge alone: ptxas serializes every
  // wgmma of the loop (C7514) when a path that may still have groups in flight reaches other
  // code before the wait.
  // Groups left in flight by the previous iteration (carriedWgmma) are waited for where the
  // next iteration first needs them (pendingWgmma_, set up before the body).
  bool rotated = false;
  std::vector<PendingWgmma> carried;
  for (auto &o : body.ops) {
    if (o->kind != ir::OpKind::Dot || !useWgmma(*o) || producer_)
      continue;
    unsigned yieldIndex = 0;
    if (carriedWgmma(*o, &yieldIndex) == &op) {
      PendingWgmma p{&body, body.args[yieldIndex + 1].get(), {}};
      for (unsigned k = 0; k < 2; ++k)
        if (isAsync(o->operands[k]))
          p.classes.insert(asyncOf_.at(o->operands[k]));
      carried.push_back(p);
      rotated = true;
    }
    rotated |= deferrableWgmma(*o) == &op;
  }
  // A wgmma operand copied by TMA before the loop (not a pipeline's prologue, whose copies may
  // not be issued: those have guards) is waited for here, once: in the body the wait would
  // be a try_wait and a branch in every iteration.
  std::vector<const ir::Value *> waitedHere;
  if (!producer_)
    for (auto &o : body.ops) {
      if (o->kind != ir::OpKind::Dot || !useWgmma(*o))
        continue;
      for (unsigned k = 0; k < 2; ++k) {
        const ir::Value *v = o->operands[k];
        const ir::Op *d = v->def;
        if (!isTma(v) || tmaWaitedBeforeLoop_.count(v) || !d || d->kind != ir::OpKind::Load || d->parent == &body ||
            d->operands.size() > 4 + 3 * d->ints.size())
          continue;
        waitTma(v);
        tmaWaitedBeforeLoop_.insert(v);
        waitedHere.push_back(v);
      }
    }
  pre = B.GetInsertBlock(); // the waits end in a block of their own
  auto lessThan = [&](llvm::Value *a, llvm::Value *b) { return sg ? B.CreateICmpSLT(a, b) : B.CreateICmpULT(a, b); };
  if (rotated)
    B.CreateCondBr(lessThan(lb, ub), header, exit);
  else
    B.CreateBr(header);
  B.SetInsertPoint(header);
  llvm::PHINode *iv = B.CreatePHI(lb->getType(), 2, "iv");
  iv->addIncoming(lb, pre);
  vals_[body.args[0].get()] = {iv};
  std::vector<std::vector<llvm::PHINode *>> phis;
  for (size_t i = 3; i < op.operands.size(); ++i) {
    // The initial value in the argument's layout: layout assignment leaves an init whose
    // registers only need renumbering (a layout with replicated register bits) unconverted.
    const std::vector<llvm::Value *> init = regsLike(op.operands[i], body.args[i - 2].get());
    std::vector<llvm::PHINode *> ps;
    std::vector<llvm::Value *> asVals;
    for (llvm::Value *x : init) {
      llvm::PHINode *p = B.CreatePHI(x->getType(), 2);
      p->addIncoming(x, pre);
      ps.push_back(p);
      asVals.push_back(p);
    }
    phis.push_back(ps);
    vals_[body.args[i - 2].get()] = asVals;
    vals_[op.result(static_cast<unsigned>(i - 3))] = asVals;
  }
  if (rotated)
    B.CreateBr(loop);
  else
    B.CreateCondBr(lessThan(iv, ub), loop, exit);
  B.SetInsertPoint(loop);
  int savedCommits = commits_;
  commits_ = 0;
  // Async values issued before the loop (attention's Q, copied once) keep counting: at least
  // the savedCommits - stamp groups committed after them before the loop, plus the body's, are
  // newer, so their stamps move to the body's origin (a lower bound, hence a safe wait count).
  // Without this a value from before the loop looked newer than every group in the body and
  // forced cp.async.wait_group 0, draining the whole pipeline each iteration.
  std::map<const ir::Value *, int> savedStamps = commitStamp_;
  for (auto &[v, stamp] : commitStamp_)
    stamp -= savedCommits;
  // A carried async value was committed before this iteration started; in a pipeline of depth
  // D, the value for iteration i + j (argument j of the window) has the groups of the later
  // stages, (D - 1 - j) iterations' worth, committed after it. Stamps count back from the
  // body's first commit (0), so that waitAsyncOperands can take commits_ - stamp.
  // Within an iteration the refills commit in body order (the prologue issues its stages in the
  // same order, iteration by iteration: Prefetch.cpp), so a value whose refill is the n-th of G commits also has the G - 1 - n later
  // refills of its own iteration committed after it: attention's K waits for K alone, not for
  // the V copied after it.
  int groupsPerIteration = 0;
  std::map<const ir::Value *, int> commitOrder;
  ir::walk(const_cast<ir::Block &>(body), [&](ir::Op &o) {
    if (o.kind == ir::OpKind::Load && isAsync(o.result()) && !isTma(o.result()))
      commitOrder[o.result()] = groupsPerIteration++;
  });
  const ir::Op *bodyYield = body.terminator();
  for (auto &a : body.args) {
    if (!isAsync(a.get()))
      continue;
    int later = 0;
    const ir::Value *v = a.get();
    while (v->owner == &body && v->index >= 1 && later < 64) {
      v = bodyYield->operands[v->index - 1];
      if (v->owner == &body)
        ++later;
    }
    auto it = commitOrder.find(v);
    int sameIteration = it != commitOrder.end() ? groupsPerIteration - 1 - it->second : 0;
    commitStamp_[a.get()] = -later * groupsPerIteration - sameIteration;
  }
  pendingWgmma_.insert(pendingWgmma_.end(), carried.begin(), carried.end());
  if (!producer_)
    planSlotRetirement(body);
  emitBlock(body);
  for (const ir::Value *v : waitedHere)
    tmaWaitedBeforeLoop_.erase(v);
  assert(std::none_of(pendingWgmma_.begin(), pendingWgmma_.end(),
                      [&](const PendingWgmma &p) { return p.body == &body; }));
  for (auto &a : body.args)
    privateRegs_.erase(a.get());
  commits_ = savedCommits;
  for (auto &[v, stamp] : commitStamp_)
    if (!savedStamps.count(v))
      savedStamps[v] = stamp + savedCommits;
  commitStamp_ = std::move(savedStamps);
  const ir::Op *yield = body.terminator();
  llvm::BasicBlock *latch = B.GetInsertBlock();
  std::vector<std::vector<llvm::Value *>> nexts;
  for (size_t i = 0; i < phis.size(); ++i) {
    const ir::Value *y = yield->operands[i];
    nexts.push_back(y->type.isScalar() ? std::vector<llvm::Value *>{scalar(y)}
                                       : regsIn(y, *op.result(static_cast<unsigned>(i))->layout));
  }
  llvm::Value *ivNext = B.CreateAdd(iv, step, "iv.next");
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t k = 0; k < phis[i].size(); ++k)
      phis[i][k]->addIncoming(nexts[i][k], latch);
  iv->addIncoming(ivNext, latch);
  if (!rotated) {
    B.CreateBr(header);
    B.SetInsertPoint(exit);
    if (ws_ && !producer_)
      releaseAfterLoop(op, lessThan(lb, ub));
    return;
  }
  auto *drain = llvm::BasicBlock::Create(ctx, "for.drain", kernel_);
  B.CreateCondBr(lessThan(ivNext, ub), header, drain);
  B.SetInsertPoint(drain);
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, "wgmma.wait_group.sync.aligned 0;", "", true));
  B.CreateBr(exit);
  // The loop's results: the initial values when it runs no iteration, the last yield's after.
  B.SetInsertPoint(exit);
  for (size_t i = 0; i < phis.size(); ++i) {
    std::vector<llvm::Value *> res;
    for (size_t k = 0; k < phis[i].size(); ++k) {
      llvm::PHINode *p = B.CreatePHI(phis[i][k]->getType(), 2);
      p->addIncoming(phis[i][k]->getIncomingValueForBlock(pre), pre);
      p->addIncoming(nexts[i][k], drain);
      res.push_back(p);
    }
    vals_[op.result(static_cast<unsigned>(i))] = res;
  }
  if (ws_ && !producer_) // after the drain's wgmma.wait_group 0
    releaseAfterLoop(op, lessThan(lb, ub));
}

std::vector<llvm::Value *> Emitter::regsLike(const ir::Value *v, const ir::Value *like) {
  if (like->type.isScalar())
    return {scalar(v)};
  return regsIn(v, *like->layout);
}

void Emitter::emitIf(const ir::Op &op) {
  llvm::Value *cond = scalar(op.operands[0]);
  auto *thenB = llvm::BasicBlock::Create(ctx, "if.then", kernel_);
  auto *elseB = llvm::BasicBlock::Create(ctx, "if.else", kernel_);
  auto *merge = llvm::BasicBlock::Create(ctx, "if.end", kernel_);
  B.CreateCondBr(cond, thenB, elseB);
  std::vector<std::vector<llvm::Value *>> outs[2];
  llvm::BasicBlock *ends[2];
  llvm::BasicBlock *starts[2] = {thenB, elseB};
  for (int r = 0; r < 2; ++r) {
    B.SetInsertPoint(starts[r]);
    emitBlock(*op.regions[r]);
    const ir::Op *yield = op.regions[r]->terminator();
    for (size_t i = 0; i < op.results.size(); ++i)
      outs[r].push_back(regsLike(yield->operands[i], op.result(static_cast<unsigned>(i))));
    ends[r] = B.GetInsertBlock();
    B.CreateBr(merge);
  }
  B.SetInsertPoint(merge);
  for (size_t i = 0; i < op.results.size(); ++i) {
    std::vector<llvm::Value *> vs;
    for (size_t k = 0; k < outs[0][i].size(); ++k) {
      llvm::PHINode *p = B.CreatePHI(outs[0][i][k]->getType(), 2);
      p->addIncoming(outs[0][i][k], ends[0]);
      p->addIncoming(outs[1][i][k], ends[1]);
      vs.push_back(p);
    }
    vals_[op.result(static_cast<unsigned>(i))] = vs;
  }
}

void Emitter::emitWhile(const ir::Op &op) {
  const ir::Block &before = *op.regions[0], &after = *op.regions[1];
  llvm::BasicBlock *pre = B.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx, "while.cond", kernel_);
  auto *body = llvm::BasicBlock::Create(ctx, "while.body", kernel_);
  auto *exit = llvm::BasicBlock::Create(ctx, "while.end", kernel_);
  B.CreateBr(header);
  B.SetInsertPoint(header);
  std::vector<std::vector<llvm::PHINode *>> phis;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    std::vector<llvm::Value *> init = regsLike(op.operands[i], before.args[i].get());
    std::vector<llvm::PHINode *> ps;
    std::vector<llvm::Value *> asVals;
    for (llvm::Value *x : init) {
      llvm::PHINode *p = B.CreatePHI(x->getType(), 2);
      p->addIncoming(x, pre);
      ps.push_back(p);
      asVals.push_back(p);
    }
    phis.push_back(ps);
    vals_[before.args[i].get()] = asVals;
  }
  emitBlock(before);
  const ir::Op *cond = before.terminator();
  for (size_t i = 0; i < op.results.size(); ++i) {
    auto fwd = regsLike(cond->operands[i + 1], op.result(static_cast<unsigned>(i)));
    vals_[op.result(static_cast<unsigned>(i))] = fwd;
    vals_[after.args[i].get()] = fwd;
  }
  B.CreateCondBr(scalar(cond->operands[0]), body, exit);
  B.SetInsertPoint(body);
  emitBlock(after);
  const ir::Op *yield = after.terminator();
  llvm::BasicBlock *latch = B.GetInsertBlock();
  for (size_t i = 0; i < phis.size(); ++i) {
    auto next = regsLike(yield->operands[i], before.args[i].get());
    for (size_t k = 0; k < phis[i].size(); ++k)
      phis[i][k]->addIncoming(next[k], latch);
  }
  B.CreateBr(header);
  B.SetInsertPoint(exit);
}

std::vector<llvm::Value *> Emitter::combineValues(const ir::Op &op, const std::vector<llvm::Value *> &a,
                                                 const std::vector<llvm::Value *> &b) {
  if (op.reduceKind != ir::ReduceKind::Combine)
    return {combine(op.reduceKind, op.operands[0]->type.dtype(), a[0], b[0])};
  // The combine region, emitted inline on these scalars (every value in it is a scalar).
  const ir::Block &r = *op.regions[0];
  size_t n = op.operands.size();
  for (size_t i = 0; i < n; ++i) {
    vals_[r.args[i].get()] = {a[i]};
    vals_[r.args[n + i].get()] = {b[i]};
  }
  emitBlock(r);
  const ir::Op *y = r.terminator();
  std::vector<llvm::Value *> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(scalar(y->operands[i]));
  return out;
}

std::vector<llvm::Value *> Emitter::combineOrdered(const ir::Op &op, llvm::Value *upper, const std::vector<llvm::Value *> &mine,
                                                  const std::vector<llvm::Value *> &partner) {
  if (op.reduceKind != ir::ReduceKind::Combine)
    return combineValues(op, mine, partner); // built-in combines are commutative
  std::vector<llvm::Value *> first, second;
  for (size_t k = 0; k < mine.size(); ++k) {
    first.push_back(B.CreateSelect(upper, partner[k], mine[k]));
    second.push_back(B.CreateSelect(upper, mine[k], partner[k]));
  }
  return combineValues(op, first, second);
}

llvm::Value *Emitter::laneBitSet(int bit) {
  return B.CreateICmpNE(B.CreateAnd(B.CreateLShr(laneId(), B.getInt32(bit)), B.getInt32(1)), B.getInt32(0));
}

std::vector<llvm::Value *> Emitter::shuffledAll(const std::vector<llvm::Value *> &v, int laneMask) {
  std::vector<llvm::Value *> out;
  for (llvm::Value *x : v)
    out.push_back(shuffleXor(x, laneMask));
  return out;
}

Emitter::ReducePartials Emitter::reduceWithinWarps(const ir::Op &op) {
  // N operands (tl.reduce over a tuple) travel together: every step moves each of them and
  // combines them once. Combines follow the element order along the axis where the layout's
  // bits do (registers, then lanes, then warps, each in order), so that a combine region sees
  // (earlier, later) operands; built-in combines are commutative and skip the ordering.
  const size_t n = op.operands.size();
  const ir::Value *in = op.operands[0];
  const ir::Layout &L = *in->layout;
  unsigned axisDim = static_cast<unsigned>(op.axis);
  std::vector<std::vector<llvm::Value *>> src;
  for (const ir::Value *x : op.operands)
    src.push_back(regs(x));
  ReducePartials p{&op, ir::sliceLayout(L, axisDim), {}, {}};
  auto column = [&](int r) {
    std::vector<llvm::Value *> v;
    for (size_t k = 0; k < n; ++k)
      v.push_back(src[k][static_cast<size_t>(r)]);
    return v;
  };
  // 1. Within each thread: registers that differ only along the axis.
  std::vector<int> keptBits;
  for (size_t i = 0; i < L.reg.size(); ++i)
    if (L.reg[i][axisDim] == 0)
      keptBits.push_back(static_cast<int>(i));
  p.acc.resize(p.S.numRegs());
  for (int r = 0; r < L.numRegs(); ++r) {
    int j = 0;
    for (size_t k = 0; k < keptBits.size(); ++k)
      if (r & (1 << keptBits[k]))
        j |= 1 << k;
    p.acc[j] = p.acc[j].empty() ? column(r) : combineValues(op, p.acc[j], column(r));
  }
  // 2. Across lanes: butterfly over the lane bits that move along the axis.
  for (size_t i = 0; i < L.lane.size(); ++i)
    if (L.lane[i][axisDim] != 0) {
      llvm::Value *upper = laneBitSet(static_cast<int>(i));
      for (auto &a : p.acc)
        a = combineOrdered(op, upper, a, shuffledAll(a, 1 << i));
    }
  // Step 3 (reduceAcrossWarps) combines over the warp bits that move along the axis.
  p.warpBits = reduceWarpBits(L, op.axis);
  return p;
}

std::vector<int> Emitter::reduceWarpBits(const ir::Layout &l, int axis) {
  std::vector<int> bits;
  for (size_t i = 0; i < l.warp.size(); ++i)
    if (l.warp[i][static_cast<size_t>(axis)] != 0)
      bits.push_back(static_cast<int>(i));
  return bits;
}

int64_t Emitter::reducePartialsBytes(const ReducePartials &p, std::vector<int64_t> *base) const {
  int64_t outElems = 1;
  for (int64_t d : p.S.shape)
    outElems *= d;
  const int64_t W = int64_t{1} << p.warpBits.size();
  int64_t total = 0;
  for (const ir::Value *x : p.op->operands) {
    int64_t eb = ir::storageBytes(x->type.dtype());
    total = (total + eb - 1) / eb * eb;
    if (base)
      base->push_back(total);
    total += outElems * W * eb;
  }
  return total;
}

void Emitter::reduceAcrossWarps(std::vector<ReducePartials> &parts) {
  // 3. Across warps, through shared memory: every reduce of the batch writes its partials to
  // its own region between one pair of barriers (the first keeps earlier readers of the
  // scratch area from seeing it overwritten, the second publishes the partials).
  struct Region {
    std::vector<int64_t> base; ///< per operand, bytes from the batch's start
    std::vector<llvm::Value *> slots;
    llvm::Value *warpIndex = nullptr;
  };
  std::vector<Region> regions(parts.size());
  int64_t total = 0;
  for (size_t q = 0; q < parts.size(); ++q) {
    ReducePartials &p = parts[q];
    std::vector<int64_t> base;
    int64_t bytes = reducePartialsBytes(p, &base);
    total = (total + 15) / 16 * 16;
    for (int64_t &b : base)
      b += total;
    total += bytes;
    Region &rg = regions[q];
    rg.base = std::move(base);
    rg.warpIndex = B.getInt32(0);
    for (size_t k = 0; k < p.warpBits.size(); ++k)
      rg.warpIndex = B.CreateOr(rg.warpIndex, B.CreateShl(B.CreateAnd(B.CreateLShr(warp_, p.warpBits[k]), 1), k));
    for (size_t j = 0; j < p.acc.size(); ++j)
      rg.slots.push_back(p.S.rank() ? linearize(coord(p.S, static_cast<int>(j)), p.S.shape) : B.getInt32(0));
  }
  reserveShared(total);
  auto at = [&](size_t q, size_t k, llvm::Value *idx) {
    unsigned eb = ir::storageBytes(parts[q].op->operands[k]->type.dtype());
    return smemPtr(B.CreateAdd(B.CreateMul(idx, B.getInt32(eb)), B.getInt32(static_cast<uint32_t>(regions[q].base[k]))));
  };
  auto zero = [](const ir::Layout::Basis &b) { return std::all_of(b.begin(), b.end(), [](int64_t c) { return c == 0; }); };
  // One thread per partial writes it: lanes and warps that hold the same output element (the
  // axis' lanes after the butterfly, replicated lanes and warps) would write the same value to
  // the same slot, a write-write race for compute-sanitizer's racecheck.
  std::vector<llvm::Value *> writers;
  for (const ReducePartials &p : parts) {
    uint32_t laneMask = 0, warpMask = 0;
    for (size_t i = 0; i < p.S.lane.size(); ++i)
      if (zero(p.S.lane[i]))
        laneMask |= 1u << i;
    for (size_t i = 0; i < p.S.warp.size(); ++i)
      if (zero(p.S.warp[i]) && std::find(p.warpBits.begin(), p.warpBits.end(), static_cast<int>(i)) == p.warpBits.end())
        warpMask |= 1u << i;
    writers.push_back(B.CreateAnd(B.CreateICmpEQ(B.CreateAnd(laneId(), B.getInt32(laneMask)), B.getInt32(0)),
                                  B.CreateICmpEQ(B.CreateAnd(warpId(), B.getInt32(warpMask)), B.getInt32(0))));
  }
  barrier();
  for (size_t q = 0; q < parts.size(); ++q) {
    ReducePartials &p = parts[q];
    const int W = 1 << p.warpBits.size();
    llvm::Value *writer = writers[q];
    auto *storeBB = llvm::BasicBlock::Create(ctx, "reduce.partials", kernel_);
    auto *joinBB = llvm::BasicBlock::Create(ctx, "reduce.partials.end", kernel_);
    B.CreateCondBr(writer, storeBB, joinBB);
    B.SetInsertPoint(storeBB);
    for (size_t j = 0; j < p.acc.size(); ++j) {
      llvm::Value *idx = B.CreateAdd(B.CreateMul(regions[q].slots[j], B.getInt32(W)), regions[q].warpIndex);
      for (size_t k = 0; k < p.acc[j].size(); ++k)
        B.CreateStore(p.acc[j][k], at(q, k, idx));
    }
    B.CreateBr(joinBB);
    B.SetInsertPoint(joinBB);
  }
  barrier();
  for (size_t q = 0; q < parts.size(); ++q) {
    ReducePartials &p = parts[q];
    const ir::Op &op = *p.op;
    const int W = 1 << p.warpBits.size();
    auto loadPartial = [&](size_t j, llvm::Value *w) {
      llvm::Value *idx = B.CreateAdd(B.CreateMul(regions[q].slots[j], B.getInt32(W)), w);
      std::vector<llvm::Value *> v;
      for (size_t k = 0; k < op.operands.size(); ++k)
        v.push_back(B.CreateLoad(llvmType(op.operands[k]->type.elem), at(q, k, idx)));
      return v;
    };
    // Lane bits along which the result is replicated (lanes differing only in them hold the
    // same output elements).
    std::vector<int> freeLanes;
    for (size_t i = 0; i < p.S.lane.size(); ++i)
      if (zero(p.S.lane[i]))
        freeLanes.push_back(static_cast<int>(i));
    if (W >= 4 && freeLanes.size() >= p.warpBits.size()) {
      // Many partials: the lanes that share an output split its W partials among them, one
      // each, and a butterfly over those lane bits combines them, so each thread holds one
      // partial instead of W registers (16 warps: one load and 4 shuffles per output instead
      // of 16 loads).
      llvm::Value *mine = B.getInt32(0);
      for (size_t k = 0; k < p.warpBits.size(); ++k)
        mine = B.CreateOr(mine, B.CreateShl(B.CreateAnd(B.CreateLShr(laneId(), freeLanes[k]), 1), k));
      for (size_t j = 0; j < p.acc.size(); ++j) {
        std::vector<llvm::Value *> v = loadPartial(j, mine);
        for (size_t k = 0; k < p.warpBits.size(); ++k)
          v = combineOrdered(op, laneBitSet(freeLanes[k]), v, shuffledAll(v, 1 << freeLanes[k]));
        p.acc[j] = v;
      }
    } else {
      for (size_t j = 0; j < p.acc.size(); ++j) {
        std::vector<llvm::Value *> r;
        for (int w = 0; w < W; ++w) {
          std::vector<llvm::Value *> v = loadPartial(j, B.getInt32(w));
          r = r.empty() ? v : combineValues(op, r, v);
        }
        p.acc[j] = r;
      }
    }
  }
}

std::vector<const ir::Op *> Emitter::reduceBatch(const ir::Op &op, const ReducePartials &first) const {
  // Later reduces of the same block whose operands are all defined before `op` can be computed
  // here instead (a reduce has no side effects); those that also combine across warps share
  // `op`'s exchange. Not where a carried wgmma group is still pending: its wait is placed
  // before the first op that reads the accumulators, which a moved reduce would skip.
  std::vector<const ir::Op *> batch;
  if (first.warpBits.empty() || !op.parent || op.parent != curBlock_ || !pendingWgmma_.empty())
    return batch;
  const ir::Block &blk = *op.parent;
  std::set<const ir::Op *> before; // the ops of the block ahead of `op`
  auto it = blk.ops.begin();
  for (; it != blk.ops.end() && it->get() != &op; ++it)
    before.insert(it->get());
  auto definedBefore = [&](const ir::Value *x) {
    // A block argument or a value of an enclosing block is visible throughout the block.
    return !x->def || x->def->parent != &blk || before.count(x->def);
  };
  // The batch's shared memory stays small: its regions are laid out side by side.
  int64_t total = reducePartialsBytes(first, nullptr);
  const int64_t limit = std::max<int64_t>(total, 4096);
  for (++it; it != blk.ops.end(); ++it) {
    const ir::Op &o = **it;
    if (o.kind != OpKind::Reduce || batchedReduces_.count(&o))
      continue;
    const ir::Value *in = o.operands[0];
    if (!in->type.isTile() || !in->layout)
      continue;
    std::vector<int> warpBits = reduceWarpBits(*in->layout, o.axis);
    if (warpBits.empty())
      continue; // no exchange to share
    if (!std::all_of(o.operands.begin(), o.operands.end(), [&](const ir::Value *x) { return definedBefore(x) && !isAsync(x); }))
      continue;
    ReducePartials probe{&o, ir::sliceLayout(*in->layout, static_cast<unsigned>(o.axis)), std::move(warpBits), {}};
    int64_t bytes = (total + 15) / 16 * 16 + reducePartialsBytes(probe, nullptr);
    if (bytes > limit)
      continue;
    total = bytes;
    batch.push_back(&o);
  }
  return batch;
}

void Emitter::emitReduce(const ir::Op &op) {
  std::vector<ReducePartials> parts{reduceWithinWarps(op)};
  if (!parts[0].warpBits.empty()) {
    // Independent reduces later in the block join this one's exchange through shared memory:
    // one pair of barriers for all of them instead of a pair each (layernorm backward's two
    // row sums; a label-smoothed cross-entropy's sum of logits beside its maximum).
    for (const ir::Op *o : reduceBatch(op, parts[0])) {
      batchedReduces_.insert(o);
      parts.push_back(reduceWithinWarps(*o));
    }
    reduceAcrossWarps(parts);
  }
  for (ReducePartials &p : parts)
    for (size_t k = 0; k < p.op->operands.size(); ++k) {
      std::vector<llvm::Value *> out;
      for (auto &a : p.acc)
        out.push_back(a[k]);
      vals_[p.op->result(static_cast<unsigned>(k))] = out;
    }
}

void Emitter::emitInlineAsm(const ir::Op &op) {
  // One asm statement per `pack` consecutive registers of the thread. Each operand and result
  // travels in the register its constraint names (checked in Sema and by the verifier: r/f 32,
  // l/d 64, h 16 bits): the pack's elements form a vector bitcast to that register's type.
  const int pack = static_cast<int>(op.ival);
  const ir::Value *r0 = op.result();
  const int n = r0->type.isTile() ? r0->layout->numRegs() : 1;
  if (n % pack)
    diags.fatal(op.loc, "tl.inline_asm_elementwise with pack=" + std::to_string(pack) + " needs a multiple of " +
                            std::to_string(pack) + " elements per thread; this tile's layout gives each thread " +
                            std::to_string(n));
  std::vector<std::string> toks = ir::splitInlineAsmConstraints(op.constraints);
  auto regType = [&](const std::string &tok) -> llvm::Type * {
    char c = tok.back();
    return c == 'r' ? B.getInt32Ty() : c == 'l' ? B.getInt64Ty() : c == 'h' ? B.getInt16Ty() : c == 'f' ? B.getFloatTy()
                                                                                                  : B.getDoubleTy();
  };
  const size_t nout = op.results.size();
  std::vector<std::vector<llvm::Value *>> ins;
  for (const ir::Value *v : op.operands)
    ins.push_back(v->type.isScalar() ? std::vector<llvm::Value *>(size_t(n), scalar(v)) : regsIn(v, *r0->layout));
  // value -> the constraint's register: a vector of `pack` elements, bitcast (same bit width).
  auto toReg = [&](const std::vector<llvm::Value *> &elems, llvm::Type *rt) -> llvm::Value * {
    llvm::Value *v = elems[0];
    if (elems.size() > 1) {
      llvm::Value *vec = llvm::UndefValue::get(llvm::FixedVectorType::get(elems[0]->getType(), elems.size()));
      for (size_t k = 0; k < elems.size(); ++k)
        vec = B.CreateInsertElement(vec, elems[k], uint64_t(k));
      v = vec;
    }
    return v->getType() == rt ? v : B.CreateBitCast(v, rt);
  };
  std::vector<llvm::Type *> outTys, inTys;
  for (size_t i = 0; i < nout; ++i)
    outTys.push_back(regType(toks[i]));
  for (size_t i = 0; i < op.operands.size(); ++i)
    inTys.push_back(regType(toks[nout + i]));
  llvm::Type *ret = nout == 1 ? outTys[0] : static_cast<llvm::Type *>(llvm::StructType::get(ctx, outTys));
  auto *fty = llvm::FunctionType::get(ret, inTys, false);
  std::string cons;
  for (size_t i = 0; i < toks.size(); ++i)
    cons += (i ? "," : "") + toks[i];
  auto *asmv = llvm::InlineAsm::get(fty, op.sym, cons, /*hasSideEffects=*/op.ival2 == 0);
  std::vector<std::vector<llvm::Value *>> outs(nout, std::vector<llvm::Value *>(size_t(n)));
  for (int g = 0; g < n; g += pack) {
    std::vector<llvm::Value *> args;
    for (size_t i = 0; i < ins.size(); ++i)
      args.push_back(toReg(std::vector<llvm::Value *>(ins[i].begin() + g, ins[i].begin() + g + pack), inTys[i]));
    llvm::Value *call = B.CreateCall(fty, asmv, args);
    for (size_t i = 0; i < nout; ++i) {
      llvm::Value *rv = nout == 1 ? call : B.CreateExtractValue(call, {unsigned(i)});
      llvm::Type *et = llvmType(op.result(unsigned(i))->type.elem);
      if (pack == 1) {
        outs[i][size_t(g)] = rv->getType() == et ? rv : B.CreateBitCast(rv, et);
        continue;
      }
      llvm::Value *vec = B.CreateBitCast(rv, llvm::FixedVectorType::get(et, unsigned(pack)));
      for (int k = 0; k < pack; ++k)
        outs[i][size_t(g + k)] = B.CreateExtractElement(vec, uint64_t(k));
    }
  }
  for (size_t i = 0; i < nout; ++i)
    vals_[op.result(unsigned(i))] = outs[i];
}

void Emitter::emitConvert(const ir::Op &op) {
  const ir::Value *in = op.operands[0];
  const ir::Layout &A = *in->layout, &D = *op.result()->layout;
  if (auto map = ir::registerMap(A, D)) {
    vals_[op.result()] = regsIn(in, D);
    return;
  }
  ir::ScalarType et = in->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  llvm::Type *sty = storageType(et);
  const std::vector<int64_t> &shape = in->type.shape;
  unsigned last = in->type.rank() - 1;
  reserveShared(in->type.numElements() * eb);
  // The tile goes through shared memory row-major, in vectors of up to 16 bytes along the last
  // dim on both sides. Rows of 128 bytes or more are swizzled: the 16-byte chunk index within
  // each 128-byte segment is XOR-ed with the row index mod 8, so that a warp writing (or reading)
  // a column of 8 rows hits different banks (ir::stagedOffset; offsetOf is its run-time form).
  int64_t rowBytes = shape[last] * eb;
  bool swizzle = in->type.rank() >= 2 && rowBytes >= 128;
  auto offsetOf = [&](const std::vector<llvm::Value *> &c) -> llvm::Value * {
    llvm::Value *off = B.CreateMul(linearize(c, shape), B.getInt32(eb));
    if (!swizzle)
      return off;
    llvm::Value *row = B.CreateUDiv(off, B.getInt32(static_cast<uint32_t>(rowBytes)));
    return B.CreateXor(off, B.CreateShl(B.CreateAnd(row, 7), 4));
  };
  // With power-of-two dims the row-major offset is a concatenation of coordinate bits and the
  // swizzle XORs offset bits into offset bits, so the byte offset is linear over GF(2) in the
  // coordinate: offset(thread ^ reg) = offset(thread) ^ offset(reg). The thread's part is then
  // computed once, and each register adds a constant. The constant's bits that the thread's part
  // can never set are added (they fold into the address as an immediate); the rest (the swizzle's
  // chunk bits) are XOR-ed, once per distinct value.
  bool linear = std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0 && (d & (d - 1)) == 0; });
  auto constOffset = [&](const ir::Layout::Basis &c) {
    return static_cast<uint32_t>(ir::stagedOffset(shape, eb, c));
  };
  // The byte offsets of every `step`-th register of `l` (the first of each vector), by register.
  auto offsets = [&](const ir::Layout &l, int step) {
    std::vector<llvm::Value *> out(size_t(l.numRegs()));
    if (!linear) {
      for (int r = 0; r < l.numRegs(); r += step)
        out[size_t(r)] = offsetOf(coord(l, r));
      return out;
    }
    uint32_t threadBits = 0;
    for (const auto *bases : {&l.lane, &l.warp})
      for (const auto &b : *bases)
        threadBits |= constOffset(b);
    llvm::Value *t = offsetOf(coord(l, 0)); // register 0 holds the thread's own coordinate
    std::map<uint32_t, llvm::Value *> xored{{0u, t}};
    for (int r = 0; r < l.numRegs(); r += step) {
      uint32_t c = constOffset(l.regCoord(r));
      auto [it, fresh] = xored.try_emplace(c & threadBits, nullptr);
      if (fresh)
        it->second = B.CreateXor(t, B.getInt32(c & threadBits));
      uint32_t added = c & ~threadBits;
      out[size_t(r)] = added ? B.CreateAdd(it->second, B.getInt32(added), "", /*HasNUW=*/true, /*HasNSW=*/true)
                             : it->second;
    }
    return out;
  };
  // Registers that hold consecutive elements along the last dim at an aligned start (lanes and
  // warps select only whole groups) form one vector access.
  auto vectorWidth = [&](const ir::Layout &l) {
    int v = std::min<int>(ir::contiguousRegisters(l, last), static_cast<int>(16 / eb));
    if (et.dtype == DType::I1)
      return 1;
    auto aligned = [&](const std::vector<ir::Layout::Basis> &bases) {
      for (const auto &b : bases)
        if (b[last] % v)
          return false;
      return true;
    };
    while (v > 1 && !(aligned(l.lane) && aligned(l.warp) && shape[last] % v == 0))
      v /= 2;
    return v;
  };
  int vs = vectorWidth(A), vd = vectorWidth(D);
  const auto &src = regs(in);
  barrier();
  std::vector<llvm::Value *> offA = offsets(A, vs);
  for (int r = 0; r < A.numRegs(); r += vs) {
    llvm::Value *ptr = smemPtr(offA[size_t(r)]);
    if (vs == 1) {
      llvm::Value *v = src[r];
      if (et.dtype == DType::I1)
        v = B.CreateZExt(v, B.getInt8Ty());
      B.CreateStore(v, ptr);
      continue;
    }
    llvm::Value *vec = llvm::UndefValue::get(llvm::FixedVectorType::get(sty, vs));
    for (int k = 0; k < vs; ++k)
      vec = B.CreateInsertElement(vec, src[r + k], uint64_t(k));
    B.CreateAlignedStore(vec, ptr, llvm::Align(vs * eb));
  }
  barrier();
  std::vector<llvm::Value *> out;
  std::vector<llvm::Value *> offD = offsets(D, vd);
  for (int r = 0; r < D.numRegs(); r += vd) {
    llvm::Value *ptr = smemPtr(offD[size_t(r)]);
    if (vd == 1) {
      llvm::Value *v = B.CreateLoad(sty, ptr);
      if (et.dtype == DType::I1)
        v = B.CreateICmpNE(v, B.getInt8(0));
      out.push_back(v);
      continue;
    }
    llvm::Value *vec = B.CreateAlignedLoad(llvm::FixedVectorType::get(sty, vd), ptr, llvm::Align(vd * eb));
    for (int k = 0; k < vd; ++k)
      out.push_back(B.CreateExtractElement(vec, uint64_t(k)));
  }
  vals_[op.result()] = out;
}

} // namespace tle::nvptx
