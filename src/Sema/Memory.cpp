// Memory builtins: tl.load and tl.store through pointers, block pointers (tl.make_block_ptr,
// tl.advance) and tensor descriptors (tl.make_tensor_descriptor, desugared like block pointers:
// every dim bounds-checked), with Triton 3.6's cache and eviction hints; tle.load's async hint.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace tle::sema {

using ir::DType;

namespace {

/// The dims listed by a block-pointer access's boundary_check (an int or a tuple of ints).
std::vector<int64_t> boundaryCheckDims(Specializer &S, const Arg *bc) {
  std::vector<int64_t> dims;
  if (!bc || bc->val.kind == SVal::Kind::None)
    return dims;
  std::vector<SVal> es = bc->val.kind == SVal::Kind::Tuple ? bc->val.elts : std::vector<SVal>{bc->val};
  for (auto &e : es) {
    if (e.kind != SVal::Kind::Int)
      S.fail(bc->loc, "boundary_check must list dims as integers");
    dims.push_back(e.i);
  }
  return dims;
}

/// Reads tl.load / tl.store's cache_modifier, eviction_policy and (loads) volatile into `op`
/// (Triton's accepted spellings; "" and None mean none). Located errors for other values.
void applyMemoryHints(Specializer &S, const Binder &p, ir::Op *op, bool load) {
  auto text = [&](const char *name) -> std::string {
    if (!p.has(name) || p.get(name).val.kind == SVal::Kind::None)
      return "";
    if (p.get(name).val.kind != SVal::Kind::Str)
      S.fail(p.loc(name), std::string(name) + " must be a string, got " + p.get(name).val.describe());
    return p.get(name).val.s;
  };
  std::string c = text("cache_modifier");
  if (!c.empty()) {
    static const std::pair<const char *, ir::CacheHint> loads[] = {
        {".ca", ir::CacheHint::CA}, {".cg", ir::CacheHint::CG}, {".cv", ir::CacheHint::CV}};
    static const std::pair<const char *, ir::CacheHint> stores[] = {
        {".wb", ir::CacheHint::WB}, {".cg", ir::CacheHint::CG}, {".cs", ir::CacheHint::CS}, {".wt", ir::CacheHint::WT}};
    bool found = false;
    for (auto &[n, h] : load ? std::vector<std::pair<const char *, ir::CacheHint>>(std::begin(loads), std::end(loads))
                             : std::vector<std::pair<const char *, ir::CacheHint>>(std::begin(stores), std::end(stores)))
      if (c == n) {
        op->setCacheHint(h);
        found = true;
      }
    if (!found)
      S.fail(p.loc("cache_modifier"), std::string(load ? "load" : "store") + "() cache_modifier \"" + c +
                                          "\" is not supported (" + (load ? "\".ca\", \".cg\" or \".cv\"" : "\".wb\", \".cg\", \".cs\" or \".wt\"") +
                                          ")");
  }
  std::string e = text("eviction_policy");
  if (!e.empty()) {
    if (e == "evict_first")
      op->setEvictionHint(ir::EvictionHint::EvictFirst);
    else if (e == "evict_last")
      op->setEvictionHint(ir::EvictionHint::EvictLast);
    else if (e != "evict_normal")
      S.fail(p.loc("eviction_policy"), std::string(load ? "load" : "store") + "() eviction_policy \"" + e +
                                           "\" is not supported (\"evict_first\", \"evict_last\" or \"evict_normal\")");
  }
  if (load && p.has("volatile") && S.truthy(p.get("volatile").val, p.loc("volatile"))) {
    if (op->cacheHint() != ir::CacheHint::None)
      S.fail(p.loc("volatile"), "load() volatile=True takes no cache_modifier (PTX ld.volatile has no cache operator)");
    op->setVolatile(true);
  }
  ir::AddrSpace space = op->operands[0]->type.elem.space;
  bool cached = op->cacheHint() != ir::CacheHint::None;
  if (space != ir::AddrSpace::Global && (cached || op->evictionHint() != ir::EvictionHint::None))
    S.fail(p.loc(cached ? "cache_modifier" : "eviction_policy"),
           std::string(load ? "load" : "store") + "() cache_modifier and eviction_policy apply to global memory; "
           "this pointer addresses " + (space == ir::AddrSpace::Shared ? "the CTA's shared memory" : "a cluster CTA's shared memory"));
}

SVal makeBlockPtr(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const Arg &base = p.get("base");
  if (!base.val.isTensor() || !base.val.v->type.isScalar() || !base.val.v->type.elem.isPointer())
    S.fail(base.loc, "make_block_ptr() base must be a scalar pointer, got " + base.val.describe());
  auto list = [&](const char *k) {
    const Arg &a = p.get(k);
    if (a.val.kind != SVal::Kind::Tuple)
      S.fail(a.loc, std::string("make_block_ptr() ") + k + " must be a tuple or list");
    return a.val.elts;
  };
  std::vector<int64_t> block = shapeArg(S, p.get("block_shape"), "make_block_ptr");
  size_t rank = block.size();
  SVal bp;
  bp.kind = SVal::Kind::BlockPtr;
  bp.ints = block;
  bp.elts.push_back(base.val);
  for (const char *k : {"shape", "strides", "offsets"}) {
    std::vector<SVal> es = list(k);
    if (es.size() != rank)
      S.fail(p.loc(k), std::string("make_block_ptr() ") + k + " has " + std::to_string(es.size()) +
                         " entries but block_shape has " + std::to_string(rank));
    std::vector<SVal> vals;
    for (auto &e : es) {
      if (!(e.isNumber() || (e.isTensor() && e.v->type.isScalar() && ir::isInteger(e.v->type.dtype()))))
        S.fail(p.loc(k), std::string("make_block_ptr() ") + k + " entries must be integer scalars, got " + e.describe());
      vals.push_back(SVal::tensor(S.toTensorOfType(e, DType::I64, p.loc(k))));
    }
    bp.elts.push_back(SVal::tuple(vals));
  }
  std::vector<SVal> order = list("order");
  std::vector<bool> seen(rank, false);
  for (auto &o : order)
    if (o.kind != SVal::Kind::Int || o.i < 0 || o.i >= int64_t(rank) || seen[o.i] || !(seen[o.i] = true))
      S.fail(p.loc("order"), "make_block_ptr() order must be a permutation of the dims");
  return bp;
}

SVal advance(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  SVal bp = p.get("base").val;
  if (bp.kind != SVal::Kind::BlockPtr)
    S.fail(p.loc("base"), "advance() expects a block pointer, got " + bp.describe());
  const Arg &o = p.get("offsets");
  if (o.val.kind != SVal::Kind::Tuple || o.val.elts.size() != bp.ints.size())
    S.fail(o.loc, "advance() offsets must be a tuple of " + std::to_string(bp.ints.size()) + " integers");
  for (size_t d = 0; d < bp.ints.size(); ++d) {
    ir::Value *delta = S.toTensorOfType(o.val.elts[d], DType::I64, o.loc);
    bp.elts[3].elts[d] = SVal::tensor(S.b->binary(ir::OpKind::Add, loc, bp.elts[3].elts[d].v, delta));
  }
  return bp;
}

SVal makeTensorDescriptor(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const Arg &base = p.get("base");
  if (!base.val.isTensor() || !base.val.v->type.isScalar() || !base.val.v->type.elem.isPointer())
    S.fail(base.loc, "make_tensor_descriptor() base must be a scalar pointer, got " + base.val.describe());
  if (base.val.v->type.elem.space != ir::AddrSpace::Global)
    S.fail(base.loc, "make_tensor_descriptor() base must point to global memory (tensor descriptors and TMA "
                   "read and write global memory), got " + base.val.v->type.str());
  std::vector<int64_t> block = shapeArg(S, p.get("block_shape"), "make_tensor_descriptor");
  size_t rank = block.size();
  if (rank < 1 || rank > 5)
    S.fail(p.loc("block_shape"), "make_tensor_descriptor() needs 1 to 5 dimensions, got " + std::to_string(rank));
  DType et = base.val.v->type.elem.pointee;
  int64_t lastBytes = block.back() * int64_t(ir::storageBytes(et));
  if (lastBytes < 16)
    S.fail(p.loc("block_shape"), "a tensor descriptor's block needs at least 16 bytes in the last dimension, got " +
                                   std::to_string(block.back()) + " * " + std::to_string(ir::storageBytes(et)) +
                                   " = " + std::to_string(lastBytes) + " bytes");
  SVal td;
  td.kind = SVal::Kind::TensorDesc;
  td.ints = block;
  td.elts.push_back(base.val);
  for (const char *k : {"shape", "strides"}) {
    const Arg &a = p.get(k);
    if (a.val.kind != SVal::Kind::Tuple)
      S.fail(a.loc, std::string("make_tensor_descriptor() ") + k + " must be a tuple or list");
    if (a.val.elts.size() != rank)
      S.fail(a.loc, std::string("make_tensor_descriptor() ") + k + " has " + std::to_string(a.val.elts.size()) +
                      " entries but block_shape has " + std::to_string(rank));
    std::vector<SVal> vals;
    for (auto &e : a.val.elts) {
      if (!(e.isNumber() || (e.isTensor() && e.v->type.isScalar() && ir::isInteger(e.v->type.dtype()))))
        S.fail(a.loc, std::string("make_tensor_descriptor() ") + k + " entries must be integer scalars, got " +
                        e.describe());
      vals.push_back(SVal::tensor(S.toTensorOfType(e, DType::I64, a.loc)));
    }
    td.elts.push_back(SVal::tuple(vals));
  }
  const SVal &last = p.get("strides").val.elts.back();
  if (!(last.kind == SVal::Kind::Int && last.i == 1))
    S.fail(p.loc("strides"), "a tensor descriptor's last stride must be the compile-time constant 1, got " +
                               last.describe());
  td.s = "zero";
  if (p.has("padding_option")) {
    const SVal &pad = p.get("padding_option").val;
    if (pad.kind != SVal::Kind::Str || (pad.s != "zero" && pad.s != "nan"))
      S.fail(p.loc("padding_option"), "padding_option must be \"zero\" or \"nan\", got " + pad.describe());
    if (pad.s == "nan" && !ir::isFloat(et))
      S.fail(p.loc("padding_option"), "padding_option=\"nan\" needs a floating-point element type, got " +
                                        std::string(ir::name(et)));
    td.s = pad.s;
  }
  return td;
}

/// The pointers and mask of a descriptor access: the descriptor as a block pointer at the
/// offsets, bounds-checked along every dim; `offs` gets the int64 offsets.
void descriptorPointers(Specializer &S, const BuiltinCall &c, ir::Value *&ptrs, ir::Value *&mask,
                        std::vector<SVal> &offs) {
  const Binder &p = c.p;
  const std::string &fname = c.fname;
  const SVal &td = p.get("desc").val;
  if (td.kind != SVal::Kind::TensorDesc)
    S.fail(p.loc("desc"), fname + "() expects a tensor descriptor (tl.make_tensor_descriptor), got " + td.describe());
  const Arg &o = p.get("offsets");
  if (o.val.kind != SVal::Kind::Tuple || o.val.elts.size() != td.ints.size())
    S.fail(o.loc, fname + "() offsets must be a list of " + std::to_string(td.ints.size()) +
                      " integers (one per dimension), got " + o.val.describe());
  SVal bp = td;
  bp.kind = SVal::Kind::BlockPtr;
  for (auto &e : o.val.elts) {
    if (!(e.isNumber() || (e.isTensor() && e.v->type.isScalar() && ir::isInteger(e.v->type.dtype()))))
      S.fail(o.loc, fname + "() offsets must be integer scalars, got " + e.describe());
    offs.push_back(SVal::tensor(S.toTensorOfType(e, DType::I64, o.loc)));
  }
  bp.elts.push_back(SVal::tuple(offs));
  std::vector<int64_t> all;
  for (size_t d = 0; d < td.ints.size(); ++d)
    all.push_back(int64_t(d));
  S.materializeBlockPtr(bp, all, c.loc, ptrs, mask);
}

/// Appends the descriptor's base, shape and strides and the access's offsets to `ops`: they ride
/// along on the Load / Store (ir::OpKind::Load), for backends that copy with TMA.
void appendDescriptor(const SVal &td, const std::vector<SVal> &offs, std::vector<ir::Value *> &ops) {
  ops.push_back(td.elts[0].v);
  for (size_t k = 1; k <= 2; ++k)
    for (auto &e : td.elts[k].elts)
      ops.push_back(e.v);
  for (auto &e : offs)
    ops.push_back(e.v);
}

/// tl.load(desc, offsets) / desc.load(offsets): out-of-range elements read as the padding.
SVal descLoad(Specializer &S, const BuiltinCall &c) {
  SourceLoc loc = c.loc;
  const SVal &td = c.p.get("desc").val;
  ir::Value *ptrs, *mask;
  std::vector<SVal> offs;
  descriptorPointers(S, c, ptrs, mask, offs);
  DType et = ptrs->type.elem.pointee;
  ir::Value *pad = td.s == "nan" ? S.b->constFloat(loc, et, std::numeric_limits<double>::quiet_NaN())
                                 : ir::isFloat(et) ? S.b->constFloat(loc, et, 0.0) : S.b->constInt(loc, et, 0);
  std::vector<ir::Value *> ops = {ptrs, mask, S.b->splat(loc, pad, ptrs->type.shape)};
  appendDescriptor(td, offs, ops);
  ir::Op *ld = S.b->create(ir::OpKind::Load, loc, ops, {ptrs->type.withElem(ir::ScalarType{et})});
  ld->setBlockShape(td.ints);
  applyMemoryHints(S, c.p, ld, true);
  return SVal::tensor(ld->result());
}

/// tl.store(desc, offsets, value) / desc.store(offsets, value): the value cast to the
/// descriptor's dtype, as Triton does; out-of-range elements are not written.
SVal descStore(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &fname = c.fname;
  const SVal &td = p.get("desc").val;
  ir::Value *ptrs, *mask;
  std::vector<SVal> offs;
  descriptorPointers(S, c, ptrs, mask, offs);
  DType et = ptrs->type.elem.pointee;
  if (p.has("store_reduce") && !(p.get("store_reduce").val.kind == SVal::Kind::Str && p.get("store_reduce").val.s.empty()))
    S.fail(p.loc("store_reduce"), fname + "() store_reduce is not supported yet");
  const Arg &va = p.get("value");
  if (!va.val.isTensor() || va.val.v->type.shape != ptrs->type.shape)
    S.fail(va.loc, fname + "() value must be a tile of the descriptor's block shape " +
                       ptrs->type.withElem(ir::ScalarType{et}).str() + ", got " + va.val.describe());
  // Triton's descriptor_store casts the value to the descriptor's dtype (an fp32 accumulator
  // stored through a bf16 descriptor: mamba3's backward kernels).
  ir::Value *value = va.val.v;
  if (value->type.dtype() != et)
    value = S.castTo(value, ir::ScalarType{et}, va.loc);
  std::vector<ir::Value *> ops = {ptrs, value, mask};
  appendDescriptor(td, offs, ops);
  ir::Op *st = S.b->create(ir::OpKind::Store, c.loc, ops, {});
  st->setBlockShape(td.ints);
  return SVal::none();
}

SVal blockPtrLoad(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  if (p.has("mask") || p.has("other"))
    S.fail(p.loc("mask"), "load() through a block pointer takes boundary_check and padding_option, not mask/other");
  std::vector<int64_t> check = boundaryCheckDims(S, p.has("boundary_check") ? &p.get("boundary_check") : nullptr);
  ir::Value *ptrs, *mask;
  S.materializeBlockPtr(p.get("pointer").val, check, p.loc("boundary_check"), ptrs, mask);
  DType et = ptrs->type.elem.pointee;
  std::vector<ir::Value *> ops = {ptrs};
  if (mask) {
    ops.push_back(mask);
    std::string pad = p.has("padding_option") && p.get("padding_option").val.kind == SVal::Kind::Str
                          ? p.get("padding_option").val.s : "";
    if (pad == "nan") {
      if (!ir::isFloat(et))
        S.fail(p.loc("padding_option"), "padding_option=\"nan\" needs a floating-point pointee, got " + std::string(ir::name(et)));
      ops.push_back(S.b->splat(loc, S.b->constFloat(loc, et, std::numeric_limits<double>::quiet_NaN()), ptrs->type.shape));
    } else if (!pad.empty() && pad != "zero") {
      S.fail(p.loc("padding_option"), "padding_option must be \"\", \"zero\" or \"nan\"");
    }
  }
  ir::Op *ld = S.b->create(ir::OpKind::Load, loc, ops, {ptrs->type.withElem(ir::ScalarType{et})});
  applyMemoryHints(S, p, ld, true);
  return SVal::tensor(ld->result());
}

SVal blockPtrStore(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  if (p.has("mask"))
    S.fail(p.loc("mask"), "store() through a block pointer takes boundary_check, not mask");
  std::vector<int64_t> check = boundaryCheckDims(S, p.has("boundary_check") ? &p.get("boundary_check") : nullptr);
  ir::Value *ptrs, *mask;
  S.materializeBlockPtr(p.get("pointer").val, check, p.loc("boundary_check"), ptrs, mask);
  const Arg &va = p.get("value");
  ir::Value *val = S.castTo(S.toTensor(va.val, va.loc), ir::ScalarType{ptrs->type.elem.pointee}, va.loc);
  val = S.broadcastTo(val, ptrs->type.shape, va.loc);
  std::vector<ir::Value *> ops = {ptrs, val};
  if (mask)
    ops.push_back(mask);
  applyMemoryHints(S, p, S.b->create(ir::OpKind::Store, loc, ops, {}), false);
  return SVal::none();
}

SVal load(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const Arg &pa = p.get("pointer");
  if (!pa.val.isTensor() || !pa.val.v->type.elem.isPointer())
    S.fail(pa.loc, "load() pointer must be a pointer or a tile of pointers, got " + pa.val.describe());
  if (p.has("boundary_check"))
    S.fail(p.loc("boundary_check"), "load() boundary_check needs a block pointer (tl.make_block_ptr), not supported yet");
  ir::Value *ptr = pa.val.v;
  std::vector<ir::Value *> ops = {ptr};
  if (p.has("mask")) {
    ir::Value *mask = p.tensor("mask");
    if (mask->type.dtype() != DType::I1)
      S.fail(p.loc("mask"), "load() mask must be a boolean (i1) tensor, got " + mask->type.str());
    S.broadcastPair(ptr, mask, p.loc("mask"));
    ops = {ptr, mask};
    if (p.has("other")) {
      const Arg &o = p.get("other");
      ir::Value *other = S.toTensorOfType(o.val, ptr->type.elem.pointee, o.loc);
      other = S.broadcastTo(other, ptr->type.shape, o.loc);
      ops.push_back(other);
    }
  } else if (p.has("other")) {
    S.fail(p.loc("other"), "load() 'other' needs a 'mask'");
  }
  auto view = S.matrixViews.find(ptr);
  if (view != S.matrixViews.end() && ops.size() == 1) // a whole matrix in the NVMMA layout
    return SVal::tensor(S.b->create(ir::OpKind::LocalLoad, loc, {view->second},
                                    {ptr->type.withElem(ir::ScalarType{ptr->type.elem.pointee})})->result());
  ir::Op *op = S.b->create(ir::OpKind::Load, loc, ops, {ptr->type.withElem(ir::ScalarType{ptr->type.elem.pointee})});
  applyMemoryHints(S, p, op, true);
  return SVal::tensor(op->result());
}

SVal store(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const Arg &pa = p.get("pointer");
  if (!pa.val.isTensor() || !pa.val.v->type.elem.isPointer())
    S.fail(pa.loc, "store() pointer must be a pointer or a tile of pointers, got " + pa.val.describe());
  ir::Value *ptr = pa.val.v;
  if (!S.pipes.empty())
    S.checkPipeFieldWrite(ptr, pa.loc);
  const Arg &va = p.get("value");
  if (!va.val.isTensor() && !va.val.isNumber())
    S.fail(va.loc, "store() value must be a tensor or a number, got " + va.val.describe());
  ir::Value *val = S.toTensor(va.val, va.loc);
  ir::ScalarType elem{ptr->type.elem.pointee};
  if (val->type.elem.isPointer())
    S.fail(va.loc, "cannot store a value of type " + val->type.str() + " through a pointer to " + elem.str());
  if (val->type.isTile() && ptr->type.isScalar())
    S.fail(va.loc, "cannot store a tile (" + val->type.str() + ") through a single pointer (" + ptr->type.str() + ")");
  if (val->type.isTile() && val->type.shape != ptr->type.shape) {
    // The value must broadcast to the pointer's shape.
    ir::Value *pp = ptr, *vv = val;
    S.broadcastPair(pp, vv, va.loc);
    if (pp->type.shape != ptr->type.shape)
      S.fail(va.loc, "store() value of shape " + val->type.str() + " does not fit the pointer tile " + ptr->type.str());
    val = vv;
  }
  val = S.castTo(val, elem, va.loc);
  val = S.broadcastTo(val, ptr->type.shape, va.loc);
  std::vector<ir::Value *> ops = {ptr, val};
  if (p.has("mask")) {
    ir::Value *mask = p.tensor("mask");
    if (mask->type.dtype() != DType::I1)
      S.fail(p.loc("mask"), "store() mask must be a boolean (i1) tensor, got " + mask->type.str());
    if (mask->type.shape != ptr->type.shape) {
      if (mask->type.isTile() && ptr->type.isScalar())
        S.fail(p.loc("mask"), "store() mask is a tile but the pointer is a scalar");
      mask = S.broadcastTo(mask, ptr->type.shape, p.loc("mask"));
    }
    ops.push_back(mask);
  }
  auto view = S.matrixViews.find(ptr);
  if (view != S.matrixViews.end() && ops.size() == 2) { // a whole matrix in the NVMMA layout
    S.b->create(ir::OpKind::LocalStore, loc, {view->second, val}, {});
    return SVal::none();
  }
  applyMemoryHints(S, p, S.b->create(ir::OpKind::Store, loc, ops, {}), false);
  return SVal::none();
}

/// tle.load: tl.load (through pointers or a block pointer) whose load carries the async hint
/// when is_async is True (FlagTree's `tt.load.async`; transforms::lowerAsyncLoads decides).
SVal tleLoad(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  bool async = false;
  if (p.has("is_async")) {
    const SVal &v = p.get("is_async").val;
    if (v.kind != SVal::Kind::Bool)
      S.fail(p.loc("is_async"), "load() is_async must be a compile-time bool (True or False), got " + v.describe());
    async = v.i != 0;
  }
  SVal r = p.get("pointer").val.kind == SVal::Kind::BlockPtr ? blockPtrLoad(S, c) : load(S, c);
  if (async && r.isTensor() && r.v->def && r.v->def->kind == ir::OpKind::Load)
    r.v->def->setAsyncHint(true);
  return r;
}

bool firstIsDescriptor(const CallArgs &a) { return !a.pos.empty() && a.pos[0].val.kind == SVal::Kind::TensorDesc; }
bool firstIsBlockPtr(const CallArgs &a) { return !a.pos.empty() && a.pos[0].val.kind == SVal::Kind::BlockPtr; }

} // namespace

std::vector<BuiltinSpec> memoryBuiltins() {
  const char *loadSig = "pointer, mask=None, other=None, boundary_check=(), padding_option='', cache_modifier='', "
                     "eviction_policy='', volatile=False";
  const char *tleLoadSig = "pointer, mask=None, other=None, boundary_check=(), padding_option='', cache_modifier='', "
                           "eviction_policy='', volatile=False, is_async=False";
  const char *storeSig = "pointer, value, mask=None, boundary_check=(), cache_modifier='', eviction_policy=''";
  const char *descLoadSig = "desc, offsets, cache_modifier='', eviction_policy=''";
  const char *descStoreSig = "desc, offsets, value, store_reduce=''";
  return {
      {"tl.load", descLoadSig, descLoad, kDescriptorMethod, firstIsDescriptor},
      {"tl.load", loadSig, blockPtrLoad, 0, firstIsBlockPtr},
      {"tl.load", loadSig, load},
      {"tle.load", tleLoadSig, tleLoad},
      {"tl.store", descStoreSig, descStore, kDescriptorMethod, firstIsDescriptor},
      {"tl.store", storeSig, blockPtrStore, 0, firstIsBlockPtr},
      {"tl.store", storeSig, store},
      {"tl.make_block_ptr", "base, shape, strides, offsets, block_shape, order", makeBlockPtr},
      {"tl.advance", "base, offsets", advance},
      {"tl.make_tensor_descriptor", "base, shape, strides, block_shape, padding_option='zero'", makeTensorDescriptor},
      {"tl.load_tensor_descriptor", descLoadSig, descLoad},
      {"tl.store_tensor_descriptor", descStoreSig, descStore},
  };
}

void Specializer::materializeBlockPtr(const SVal &bp, const std::vector<int64_t> &boundaryCheck, SourceLoc loc,
                                      ir::Value *&ptrs, ir::Value *&mask) {
  // coord_d = offset_d + arange(block_d) along dim d; ptrs = base + sum_d coord_d * stride_d;
  // boundary_check d adds 0 <= coord_d < shape_d (Triton 3.6 semantics, int64 arithmetic).
  const std::vector<int64_t> &block = bp.ints;
  size_t rank = block.size();
  ir::Value *offset = nullptr;
  mask = nullptr;
  for (size_t d = 0; d < rank; ++d) {
    ir::Op *ar = b->create(ir::OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {block[d]})});
    ar->setArangeBounds(0, block[d]);
    ir::Value *c = castTo(ar->result(), ir::ScalarType{DType::I64}, loc);
    c = b->binary(ir::OpKind::Add, loc, c, b->splat(loc, bp.elts[3].elts[d].v, {block[d]}));
    // Size-1 dims around d: c becomes [1, .., block_d, .., 1].
    for (size_t e = 0; e < rank; ++e)
      if (e != d)
        c = expandDims(c, static_cast<int>(e), loc);
    std::vector<int64_t> full(block.begin(), block.end());
    ir::Value *cf = broadcastTo(c, full, loc);
    ir::Value *term = b->binary(ir::OpKind::Mul, loc, cf, b->splat(loc, bp.elts[2].elts[d].v, full));
    offset = offset ? b->binary(ir::OpKind::Add, loc, offset, term) : term;
    if (std::find(boundaryCheck.begin(), boundaryCheck.end(), int64_t(d)) != boundaryCheck.end()) {
      ir::Value *zero = b->splat(loc, b->constInt(loc, DType::I64, 0), full);
      ir::Value *inside = b->binary(ir::OpKind::And, loc, b->cmp(loc, ir::CmpPred::Ge, cf, zero),
                                    b->cmp(loc, ir::CmpPred::Lt, cf, b->splat(loc, bp.elts[1].elts[d].v, full)));
      mask = mask ? b->binary(ir::OpKind::And, loc, mask, inside) : inside;
    }
  }
  for (int64_t d : boundaryCheck)
    if (d < 0 || d >= int64_t(rank))
      fail(loc, "boundary_check dim " + std::to_string(d) + " is out of range for a rank-" + std::to_string(rank) +
                    " block pointer");
  ir::Value *base = bp.elts[0].v;
  ptrs = b->create(ir::OpKind::AddPtr, loc, {b->splat(loc, base, block), offset}, {ir::Type(base->type.elem, block)})
             ->result();
}

} // namespace tle::sema
