// TLE-Lite across GPUs: the mesh levels that span GPUs (node, device, chiplet) on a communicator
// of libtle_rt (an NCCL communicator, docs/runtime.md), with FlagTree's names:
// tle.shard_id(mesh, <GPU axis>, device_dptr=), tle.remote(window, peer, space="device",
// dtype=, offset=), tle.distributed_barrier(space="device", device_dptr=), tle.signal and
// tle.signal_wait.
//
// Two records reach a kernel as arguments. `device_dptr` is the communicator's device record
// (rank i32 at byte 0, ranks i32 at 4, the signal area's NCCL window at 8, signal slots u32 at
// 16). A window is NCCL's ncclWindow_t, the device address of its window record, whose
// lsaFlatBase (byte 8), lsaRank (16), worldRank (20) and stride4G (24) place every peer's copy of
// a symmetric buffer: peer p's byte `off` is at lsaFlatBase + ((u32)((lsaRank + p - worldRank) *
// stride4G) << 32) + off (NCCL 2.28's ncclGetPeerPointer). Those reads and that arithmetic are
// ordinary tile IR built here, so a peer address is a global pointer like any other; the barrier
// and the wait are the ops DeviceBarrier and SignalWait (IR.h).
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

using ir::AddrSpace;
using ir::DType;
using ir::OpKind;

namespace {

/// The device record's fields and the signal area's first word (docs/runtime.md).
constexpr int64_t kRecordRank = 0, kRecordRanks = 4, kRecordSignals = 8, kSignalSlots = 64;
/// NCCL's window record (nccl_device/impl/core__types.h): lsaFlatBase, lsaRank, worldRank, stride4G.
constexpr int64_t kWinFlatBase = 8, kWinLsaRank = 16, kWinWorldRank = 20, kWinStride4G = 24;

ir::Type scalarPtr(DType t) { return ir::Type(ir::ScalarType::ptrTo(t, AddrSpace::Global)); }

/// The scalar of dtype `t` at byte `offset` of the record `base` points to.
ir::Value *field(Specializer &S, SourceLoc loc, ir::Value *base, DType t, int64_t offset) {
  ir::Value *p = S.b->create(OpKind::Bitcast, loc, {base}, {scalarPtr(t)})->result();
  int64_t size = ir::bitWidth(t) / 8;
  if (offset)
    p = S.b->create(OpKind::AddPtr, loc, {p, S.b->constInt(loc, DType::I64, offset / size)}, {p->type})->result();
  return S.b->create(OpKind::Load, loc, {p}, {ir::Type::scalar(t)})->result();
}

/// A record argument: a scalar global pointer (of any pointee) or an integer address, as *i8.
ir::Value *recordArg(Specializer &S, const Arg &a, const std::string &what) {
  ir::Value *v = a.val.isTensor() ? a.val.v : nullptr;
  if (!v || !v->type.isScalar() ||
      !(ir::isInteger(v->type.dtype()) || (v->type.elem.isPointer() && v->type.elem.space == AddrSpace::Global)))
    S.fail(a.loc, what + " must be a scalar pointer (or an integer address) in global memory, got " + a.val.describe());
  if (!v->type.elem.isPointer())
    return S.addressCast(v, ir::ScalarType::ptrTo(DType::I8), a.loc);
  return S.castTo(v, ir::ScalarType::ptrTo(DType::I8), a.loc);
}

/// The address (i64, of `byteOffset`'s shape) of byte `byteOffset` in peer `peer`'s copy of the
/// symmetric buffer of NCCL window `win` (NCCL's ncclGetPeerPointer rule, above).
ir::Value *peerAddress(Specializer &S, SourceLoc loc, ir::Value *win, ir::Value *peer, ir::Value *byteOffset) {
  ir::Value *base = field(S, loc, win, DType::I64, kWinFlatBase);
  ir::Value *lsa = field(S, loc, win, DType::I32, kWinLsaRank);
  ir::Value *world = field(S, loc, win, DType::I32, kWinWorldRank);
  ir::Value *stride = field(S, loc, win, DType::I32, kWinStride4G);
  ir::Value *i = S.b->binary(OpKind::Sub, loc, S.b->binary(OpKind::Add, loc, lsa, peer), world);
  ir::Value *slot = S.b->cast(loc, S.b->cast(loc, S.b->binary(OpKind::Mul, loc, i, stride), {DType::U32}), {DType::I64});
  ir::Value *copy = S.b->binary(OpKind::Add, loc, base,
                                S.b->binary(OpKind::Shl, loc, slot, S.b->constInt(loc, DType::I64, 32)));
  return S.b->binary(OpKind::Add, loc, S.broadcastTo(copy, byteOffset->type.shape, loc), byteOffset);
}

/// An integer argument (a compile-time int or an integer scalar) as an i32 scalar; when it is
/// known, it must lie in [0, limit) (limit 0: no bound).
ir::Value *indexArg(Specializer &S, const Arg &a, const std::string &what, int64_t limit) {
  if (a.val.kind == SVal::Kind::Int || a.val.kind == SVal::Kind::Bool) {
    if (a.val.i < 0 && limit == 0)
      S.fail(a.loc, what + " is " + std::to_string(a.val.i) + ": it must not be negative");
    if (a.val.i < 0 || (limit > 0 && a.val.i >= limit))
      S.fail(a.loc, what + " is " + std::to_string(a.val.i) + ", outside [0, " + std::to_string(limit) + ")");
    return S.b->constInt(a.loc, DType::I32, a.val.i);
  }
  if (!a.val.isTensor() || !a.val.v->type.isScalar() || !ir::isInteger(a.val.v->type.dtype()))
    S.fail(a.loc, what + " must be an integer (or an integer scalar), got " + a.val.describe());
  return S.castTo(a.val.v, ir::ScalarType{DType::I32}, a.loc);
}

/// The GPU axes of `mesh` (its leading node, device and chiplet axes): how many.
size_t gpuAxes(const SVal &mesh) {
  size_t n = 0;
  while (n < mesh.ints.size() && meshAxisLevel(mesh, n) <= MeshLevel::Chiplet)
    ++n;
  return n;
}

/// A peer: an integer, an integer scalar, or a tuple of coordinates along the GPU axes of
/// `mesh` (linearised row-major), as an i32 scalar.
ir::Value *peerArg(Specializer &S, const Arg &a, const SVal *mesh, const std::string &what) {
  int64_t ranks = mesh ? ir::numElements(std::vector<int64_t>(mesh->ints.begin(),
                                                                 mesh->ints.begin() + gpuAxes(*mesh)))
                       : 0;
  if (a.val.kind != SVal::Kind::Tuple)
    return indexArg(S, a, what, ranks);
  if (!mesh)
    S.fail(a.loc, what + " as a tuple needs scope= (the mesh whose GPU axes it indexes)");
  size_t n = gpuAxes(*mesh);
  if (a.val.elts.size() != n)
    S.fail(a.loc, what + " has " + std::to_string(a.val.elts.size()) + " coordinates; " + mesh->describe() +
                      " has " + std::to_string(n) + (n == 1 ? " axis" : " axes") + " across GPUs");
  ir::Value *r = S.b->constInt(a.loc, DType::I32, 0);
  for (size_t k = 0; k < n; ++k) {
    ir::Value *c = indexArg(S, Arg{a.loc, a.val.elts[k]}, what + " coordinate " + std::to_string(k), mesh->ints[k]);
    r = S.b->binary(OpKind::Add, a.loc, S.b->binary(OpKind::Mul, a.loc, r, S.b->constInt(a.loc, DType::I32, mesh->ints[k])),
                    c);
  }
  return r;
}

/// The address of signal slot `slot` (i32) in peer `peer`'s signal area, as *u64.
ir::Value *signalSlot(Specializer &S, SourceLoc loc, ir::Value *comm, ir::Value *peer, ir::Value *slot) {
  ir::Value *win = S.addressCast(field(S, loc, comm, DType::I64, kRecordSignals), ir::ScalarType::ptrTo(DType::I8), loc);
  ir::Value *off = S.b->binary(OpKind::Mul, loc, S.b->cast(loc, slot, {DType::I64}), S.b->constInt(loc, DType::I64, 8));
  return S.addressCast(peerAddress(S, loc, win, peer, off), ir::ScalarType::ptrTo(DType::U64), loc);
}

/// Fails unless the keyword `k` is absent or one of `ok` (FlagTree's options tlec implements).
void requireOption(Specializer &S, const Binder &p, const std::string &fname, const std::string &k,
                   const std::vector<std::string> &ok) {
  if (!p.has(k))
    return;
  const Arg &a = p.get(k);
  for (const std::string &o : ok)
    if (a.val.kind == SVal::Kind::Str && a.val.s == o)
      return;
  std::string list;
  for (const std::string &o : ok)
    list += (list.empty() ? "\"" : ", \"") + o + "\"";
  S.fail(a.loc, fname + "() " + k + " must be " + list + " here, got " + a.val.describe());
}

} // namespace

SVal deviceShardId(Specializer &S, const Binder &p, const SVal &mesh, size_t axis) {
  // comm_ptr= is FlagTree's earlier name of device_dptr=.
  const char *key = p.has("device_dptr") ? "device_dptr" : p.has("comm_ptr") ? "comm_ptr" : nullptr;
  if (!key)
    S.fail(p.loc("axis"), "shard_id() along axis '" + mesh.elts[axis].s + "', which spans GPUs, needs device_dptr= "
                          "(the communicator's device record: libtle_rt's Communicator::deviceComm())");
  SourceLoc loc = p.loc("axis");
  ir::Value *rank = field(S, loc, recordArg(S, p.get(key), std::string("shard_id() ") + key), DType::I32, kRecordRank);
  size_t n = gpuAxes(mesh);
  int64_t inner = ir::numElements(std::vector<int64_t>(mesh.ints.begin() + axis + 1, mesh.ints.begin() + n));
  ir::Value *r = rank;
  if (inner > 1)
    r = S.b->binary(OpKind::IDiv, loc, r, S.b->constInt(loc, DType::I32, inner));
  r = S.b->binary(OpKind::IRem, loc, r, S.b->constInt(loc, DType::I32, mesh.ints[axis]));
  return SVal::tensor(r);
}

SVal deviceRemote(Specializer &S, const Binder &p, SourceLoc loc) {
  ir::Value *win = recordArg(S, p.get("tensor"), "remote(space=\"device\") tensor (an NCCL window)");
  if (!p.has("dtype") || !p.has("offset"))
    S.fail(loc, "remote(space=\"device\") needs dtype= (the elements' type) and offset= (elements from the start "
              "of the symmetric buffer), as FlagTree's device-space remote");
  ir::ScalarType et = p.dtype("dtype");
  if (et.isPointer())
    S.fail(p.loc("dtype"), "remote(space=\"device\") dtype must be an element type, got " + et.str());
  const SVal *mesh = p.has("scope") ? &p.get("scope").val : nullptr;
  if (mesh && mesh->kind != SVal::Kind::Mesh)
    S.fail(p.loc("scope"), "remote() scope must be a device mesh, got " + mesh->describe());
  ir::Value *peer = peerArg(S, p.get("shard_id"), mesh, "remote() shard_id");
  const Arg &oa = p.get("offset");
  ir::Value *off = S.toTensor(oa.val, oa.loc);
  if (!ir::isInteger(off->type.dtype()))
    S.fail(oa.loc, "remote() offset must be an integer (or integers), got " + oa.val.describe());
  off = S.b->cast(oa.loc, off, {DType::I64});
  ir::Value *bytes = S.b->binary(OpKind::Mul, loc, off,
                                 S.broadcastTo(S.b->constInt(loc, DType::I64, ir::bitWidth(et.dtype) / 8),
                                               off->type.shape, loc));
  return SVal::tensor(S.addressCast(peerAddress(S, loc, win, peer, bytes), ir::ScalarType::ptrTo(et.dtype), loc));
}

SVal deviceBarrier(Specializer &S, const Binder &p, SourceLoc loc) {
  if (!p.has("device_dptr"))
    S.fail(loc, "distributed_barrier(space=\"device\") needs device_dptr= (the communicator's device record: "
                "libtle_rt's Communicator::deviceComm())");
  if (S.fn->cluster != std::array<int, 3>{1, 1, 1})
    S.fail(loc, "distributed_barrier(space=\"device\") waits for every CTA of the grid, which needs a cooperative "
                "launch of a kernel without clusters; this kernel uses clusters of " +
                    std::to_string(S.fn->cluster[0]) + " CTAs");
  if (!S.gridBarrierAt.valid())
    S.gridBarrierAt = loc;
  S.b->create(OpKind::DeviceBarrier, loc, {recordArg(S, p.get("device_dptr"), "distributed_barrier() device_dptr")},
              {});
  return SVal::none();
}

namespace {

SVal signal(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  requireOption(S, p, "signal", "op", {"inc", "add"});
  requireOption(S, p, "signal", "space", {"intra_node", "world"});
  requireOption(S, p, "signal", "group_kind", {"block"});
  if (p.constInt("context_idx", 0) != 0)
    S.fail(p.loc("context_idx"), "signal() context_idx must be 0 (one signal area per communicator)");
  ir::Value *comm = recordArg(S, p.get("device_dptr"), "signal() device_dptr");
  ir::Value *peer = indexArg(S, p.get("peer"), "signal() peer", 0);
  ir::Value *slot = signalSlot(S, c.loc, comm, peer, indexArg(S, p.get("slot_id"), "signal() slot_id", kSignalSlots));
  bool add = p.has("op") && p.get("op").val.s == "add";
  if (add != p.has("value"))
    S.fail(add ? c.loc : p.loc("value"), add ? "signal(op=\"add\") needs value=" : "signal() value= needs op=\"add\"");
  Arg value = add ? p.get("value") : Arg{c.loc, SVal::integer(1)};
  ir::Value *v = S.toTensor(value.val, value.loc);
  if (!v->type.isScalar() || !ir::isInteger(v->type.dtype()))
    S.fail(value.loc, "signal() value must be an integer scalar, got " + value.val.describe());
  CallArgs args{c.loc, {{c.loc, SVal::tensor(slot)}, {value.loc, SVal::tensor(S.b->cast(value.loc, v, {DType::U64}))}},
                {{"sem", {c.loc, SVal::str("release")}}, {"scope", {c.loc, SVal::str("sys")}}}};
  // The CTA's writes before the signal are ordered before thread 0's release (FlagTree's
  // group_kind="block": one signal per program).
  S.b->create(OpKind::Barrier, c.loc, {}, {});
  S.callBuiltin("tl.atomic_add", args);
  return SVal::none();
}

SVal signalWait(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  requireOption(S, p, "signal_wait", "wait_kind", {"signal", "counter"});
  requireOption(S, p, "signal_wait", "group_kind", {"block"});
  if (p.constInt("context_idx", 0) != 0)
    S.fail(p.loc("context_idx"), "signal_wait() context_idx must be 0 (one signal area per communicator)");
  ir::Value *comm = recordArg(S, p.get("device_dptr"), "signal_wait() device_dptr");
  ir::Value *rank = field(S, c.loc, comm, DType::I32, kRecordRank);
  ir::Value *slot =
      signalSlot(S, c.loc, comm, rank, indexArg(S, p.get("slot_id"), "signal_wait() slot_id", kSignalSlots));
  Arg target = p.has("target") ? p.get("target") : Arg{c.loc, SVal::integer(1)};
  ir::Value *t = S.toTensor(target.val, target.loc);
  if (!t->type.isScalar() || !ir::isInteger(t->type.dtype()))
    S.fail(target.loc, "signal_wait() target must be an integer scalar, got " + target.val.describe());
  if (target.val.kind == SVal::Kind::Int && target.val.i < 0)
    S.fail(target.loc, "signal_wait() target must not be negative, got " + std::to_string(target.val.i));
  ir::Op *wait = S.b->create(OpKind::SignalWait, c.loc, {slot, S.b->cast(target.loc, t, {DType::U64})}, {});
  wait->sync.keep = p.has("wait_kind") && p.get("wait_kind").val.s == "counter";
  return SVal::none();
}

/// FlagTree's tle.my_pe(device_dptr) / tle.n_pes(device_dptr): this GPU's rank and the
/// communicator's size, i32 scalars read from the device record (rank@0, nranks@4).
SVal myPe(Specializer &S, const BuiltinCall &c) {
  ir::Value *comm = recordArg(S, c.p.get("device_dptr"), c.fname + "() device_dptr");
  return SVal::tensor(field(S, c.loc, comm, DType::I32, c.fname == "my_pe" ? kRecordRank : kRecordRanks));
}

} // namespace

std::vector<BuiltinSpec> deviceBuiltins() {
  return {
      {"tle.my_pe", "device_dptr", myPe},
      {"tle.n_pes", "device_dptr", myPe},
      {"tle.signal",
       "device_dptr, peer, slot_id, value=None, op='inc', space='intra_node', group_kind='block', context_idx=0",
       signal},
      {"tle.signal_wait", "device_dptr, slot_id, wait_kind='signal', target=None, group_kind='block', context_idx=0",
       signalWait},
  };
}

} // namespace tle::sema
