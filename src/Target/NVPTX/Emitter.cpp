// Per-thread LLVM IR for gpu-stage tile IR: thread geometry, values, the shared buffer, and op
// dispatch; the op families are in this directory's other files (Elementwise, ControlFlow, Reduce, ...).
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
  userBytes_ = f.pipelineOffset; // the IR's own buffers come first (allocate-shared)
  loadPipelines();                // the pipeline pass's slots, TMA descriptors and roles
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
  emitBlock(f.body);
  B.CreateRetVoid();

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

void Emitter::assertScratchFits(int64_t bytes) {
  if (bytes > scratchRoom_)
    diags.fatal(f.loc, "internal error: an op lays out " + std::to_string(bytes) + " bytes of scratch where "
                           "allocate-shared placed " + std::to_string(std::max<int64_t>(scratchRoom_, 0)));
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
  if (partitionBarrier_) // within a warp partition, or after one: the partition's warps
    declareIntrinsicCall(llvm::Intrinsic::nvvm_barrier_sync_cnt, {},
                         {B.getInt32(static_cast<uint32_t>(partitionBarrier_)),
                          B.getInt32(static_cast<uint32_t>(partitionThreads_))});
  else
    declareIntrinsicCall(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

// ---------------------------------------------------------------------------------------------
// Ops

void Emitter::emitBlock(const ir::Block &b) {
  const ir::Block *outer = curBlock_;
  curBlock_ = &b;
  for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
    const auto &op = *it;
    if (batchedReduces_.erase(op.get())) // emitted already
      continue;
    // The pipeline pass's waits before a loop are emitted by the loop, once its blocks exist
    // (emitFor).
    auto target = it;
    auto waits = [](const ir::Op &o) {
      return o.kind == OpKind::PipelineWait || o.kind == OpKind::AsyncWaitGroup ||
             (o.kind == OpKind::FenceProxyAsync && !o.sync.global) || (o.kind == OpKind::Barrier && o.sync.barrierId < 0);
    };
    while (waits(**target) && std::next(target) != b.ops.end())
      ++target;
    if (target != it && (*target)->kind == OpKind::For) {
      loopWaits_.push_back(op.get());
      continue;
    }
    emitOp(*op);
    curBlock_ = &b; // ops with regions emit other blocks
  }
  curBlock_ = outer;
}

void Emitter::emitOp(const ir::Op &op) {
  // An op lowered through shared memory works in the scratch area allocate-shared gave it.
  // Others have none (-1: assertScratchFits refuses any use); an op of a region (a combine)
  // leaves its parent's as it found it.
  const int64_t parentScratch = scratchBase_, parentRoom = scratchRoom_;
  bool scratch = op.kind != OpKind::LocalAlloc && op.sharedOffset >= 0;
  scratchBase_ = scratch ? op.sharedOffset - userBytes_ : 0;
  auto need = scratchNeeds_.find(&op);
  scratchRoom_ = scratch && need != scratchNeeds_.end() ? need->second.bytes : -1;
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
  for (auto &[v, slot] : swapped) {
    vals_[v] = slot;
    privateActive_.erase(v);
  }
  scratchBase_ = parentScratch;
  scratchRoom_ = parentRoom;
}

void Emitter::emitOpImpl(const ir::Op &op) {
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
  case OpKind::GridBarrier:
    return emitGridBarrier();
  case OpKind::SubmeshBarrier:
    return emitSubmeshBarrier(op);
  case OpKind::DeviceBarrier:
    return emitDeviceBarrier(op);
  case OpKind::SignalWait:
    return emitSignalWait(op);
  case OpKind::ClusterArrive:
    return emitClusterArrive(op);
  case OpKind::ClusterWait:
    return emitClusterWait(op.loc);
  case OpKind::Load:
    if (isAsync(op.result())) // pipeline-fills writes every fill as ops
      diags.fatal(op.loc, "a load marked pipeline=" + std::to_string(op.pipeline()) +
                              " reached code generation: run pass 'pipeline-fills', which writes each fill of a "
                              "pipeline's slots as ops (docs/compiler.md, \"pipeline-fills\")");
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
  case OpKind::Gather:
    return emitGather(op);
  case OpKind::ExtractTile: case OpKind::InsertTile:
    return emitTileOp(op);
  case OpKind::Scan:
    return emitScan(op);
  case OpKind::AtomicRMW: case OpKind::AtomicCAS:
    return emitAtomic(op);
  case OpKind::Print:
    return emitPrint(op);
  case OpKind::Assert:
    return emitAssert(op);
  case OpKind::Barrier: // tl.debug_barrier: bar.sync 0; a named barrier (id=) as written
    if (op.sync.barrierId >= 0)
      return emitSyncOp(op);
    return barrier();
  case OpKind::GridDepControl: { // griddepcontrol needs sm_90; before it there is nothing to do
    if (smVersion() < 90)
      return;
    auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
    const char *text = op.launchDependents() ? "griddepcontrol.launch_dependents;" : "griddepcontrol.wait;";
    B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "~{memory}", /*hasSideEffects=*/true));
    return;
  }
  case OpKind::InlineAsm:
    return emitInlineAsm(op);
  case OpKind::RawCall:
    return emitRawCall(op);
  case OpKind::MbarrierInit: case OpKind::MbarrierArrive: case OpKind::MbarrierExpectTx: case OpKind::MbarrierWait:
  case OpKind::MbarrierInval: case OpKind::FenceProxyAsync: case OpKind::FenceMbarrierInit:
  case OpKind::BarrierArrive: case OpKind::AsyncCopyMbarrierArrive: case OpKind::AsyncCommitGroup:
  case OpKind::AsyncWaitGroup:
    return emitSyncOp(op);
  case OpKind::PipelineMbarrier: case OpKind::TensormapPrefetch: case OpKind::PipelineWait:
  case OpKind::PipelineSlot: case OpKind::PipelineValue:
    return emitPipelineOp(op);
  case OpKind::AsyncCopy:
    return emitAsyncCopy(op);
  case OpKind::TmaLoad: case OpKind::TmaStore: case OpKind::TmaStoreCommit: case OpKind::TmaStoreWait:
    return emitTmaOp(op);
  case OpKind::LocalLoad: case OpKind::LocalStore:
    return emitLocalMove(op);
  case OpKind::Wgmma:
    return emitWgmmaOp(op);
  case OpKind::WgmmaWait:
    return emitWgmmaWait(op);
  case OpKind::WarpSpecialize:
    return emitWarpSpecialize(op);
  case OpKind::Constant: {
    ir::ScalarType t = op.result()->type.elem;
    llvm::Type *ty = llvmType(t);
    llvm::Value *c = ir::isFP8(t.dtype)    ? B.getInt8(ir::fp8FromDouble(op.floatValue(), t.dtype))
                     : ir::isFloat(t.dtype) ? llvm::ConstantFP::get(ty, op.floatValue())
                                            : llvm::ConstantInt::get(ty, static_cast<uint64_t>(op.intValue()), ir::isSigned(t.dtype));
    vals_[op.result()] = {c};
    return;
  }
  case OpKind::ProgramId: case OpKind::NumPrograms: {
    static const unsigned ids[2][3] = {
        {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
         llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
        {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
         llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z}};
    vals_[op.result()] = {declareIntrinsicCall(ids[op.kind == OpKind::NumPrograms][op.axis()], {}, {})};
    return;
  }
  case OpKind::Arange: {
    const ir::Layout &l = *op.result()->layout;
    std::vector<llvm::Value *> out;
    for (int r = 0; r < l.numRegs(); ++r)
      out.push_back(B.CreateAdd(coord(l, r)[0], B.getInt32(static_cast<uint32_t>(op.arangeStart()))));
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
      vals_[op.result()] = regsIn(in, ir::squeezeLayout(l, op.axis()));
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

} // namespace tle::nvptx
