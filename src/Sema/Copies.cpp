// tle.gpu.copy (FlagTree TLE-Struct's data movement, ../shared/reference/tle.md §3.2): the
// direction follows the operands' kinds, as FlagTree's does.
//
//   pointers -> buffer      tl.load of the pointer tile, tl.store through the buffer's full view
//   buffer -> pointers      the reverse (both: the pointer tile must be the buffer's shape;
//                           a smaller `shape` masks both to its leading elements)
//   descriptor -> buffer    a TMA copy (PTX ISA §9.7.9.25.5.2) of the block at `offsets` into the
//                           buffer, issued by thread 0: one box when the buffer is row-major (its
//                           tensor map unswizzled), one per column block of the swizzle when it
//                           is in the NVMMA layout (the map swizzled as the buffer is);
//                           with barrier=b (a slot of tle.gpu.alloc_barriers(expect_bytes=N)),
//                           thread 0 arrives on b's mbarrier expecting N bytes, then copies; the
//                           bytes may be read after barrier_wait(b, phaseIdx). Into a field of a
//                           tle.pipe slot its writer holds, it completes on the stage's "full"
//                           mbarrier (expect-tx; the commit completes the phase once the bytes
//                           have landed, and the reader's wait sees them). Otherwise the copy
//                           is synchronous: an mbarrier of its own, made, waited for at phase 0
//                           and invalidated around it (FlagTree's lowering).
//   buffer -> descriptor    a TMA store of the buffer to the box at `offsets`, in a bulk group
//                           thread 0 commits and waits for (synchronous, as FlagTree's).
//
// The descriptor's tensor map (Function::tensorMaps, declared by the kernel) needs what TMA
// needs: a base param promised 16-byte aligned, every shape and stride a product of integer
// params and constants (ir::tensorMapSource), the last stride 1 and the others whole 16-byte
// units, box dims of at most 256 and rows of whole 16-byte units; anything else is a located
// error naming the rule.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>
#include <climits>
#include <numeric>

namespace tle::sema {

using ir::AddrSpace;
using ir::DType;
using ir::OpKind;

namespace {

/// "[64, 32]".
std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

/// copy()'s `shape` argument: a list of compile-time ints (an int alone is one dim).
std::vector<int64_t> shapeInts(Specializer &S, const Arg &shape) {
  std::vector<int64_t> got;
  const SVal &v = shape.val;
  std::vector<SVal> dims = v.kind == SVal::Kind::Tuple ? v.elts : std::vector<SVal>{v};
  for (const SVal &d : dims) {
    if (d.kind != SVal::Kind::Int)
      S.fail(shape.loc, "copy() shape must be a list of compile-time integers, got " + v.describe());
    got.push_back(d.i);
  }
  return got;
}

/// `shape` (a list of compile-time ints) checked against `want`.
void checkShape(Specializer &S, const Arg &shape, const std::vector<int64_t> &want, const std::string &what) {
  std::vector<int64_t> got = shapeInts(S, shape);
  if (got != want)
    S.fail(shape.loc, "copy() shape " + shapeStr(got) + " is not " + what + " " + shapeStr(want));
}

/// `shape` (a list of compile-time ints, one per dim of `within`), each dim at least 1 and at
/// most `within`'s (FlagTree's validate_copy_compatibility: a copy dim may not exceed the source
/// or the destination).
std::vector<int64_t> copyShapeWithin(Specializer &S, const Arg &shape, const std::vector<int64_t> &within) {
  std::vector<int64_t> got = shapeInts(S, shape);
  bool ok = got.size() == within.size();
  for (size_t i = 0; ok && i < got.size(); ++i)
    ok = got[i] >= 1 && got[i] <= within[i];
  if (!ok)
    S.fail(shape.loc, "copy() shape " + shapeStr(got) + " must have one dim per buffer dim, each from 1 to the buffer's " +
                          shapeStr(within));
  return got;
}

/// The [within] mask of the elements inside the leading `shape` of every dim, or null when
/// `shape` is all of `within`.
ir::Value *leadingMask(Specializer &S, const std::vector<int64_t> &shape, const std::vector<int64_t> &within,
                       SourceLoc loc) {
  ir::Value *mask = nullptr;
  for (size_t d = 0; d < within.size(); ++d) {
    if (shape[d] == within[d])
      continue;
    ir::Op *ar = S.b->create(OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {within[d]})});
    ar->setArangeBounds(0, within[d]);
    ir::Value *in = S.b->cmp(loc, ir::CmpPred::Lt, ar->result(),
                             S.b->splat(loc, S.b->constInt(loc, DType::I32, shape[d]), {within[d]}));
    for (size_t e = 0; e < within.size(); ++e)
      if (e != d)
        in = S.expandDims(in, static_cast<int>(e), loc);
    in = S.broadcastTo(in, within, loc);
    mask = mask ? S.b->binary(OpKind::And, loc, mask, in) : in;
  }
  return mask;
}

/// A pointer tile <-> buffer copy: a load and a store, one of them through the buffer's view;
/// a `shape` smaller than the buffer masks both to its leading elements (the buffer's others
/// keep what they held; the pointers past it are neither read nor written).
void plainCopy(Specializer &S, const BuiltinCall &c, const Arg &src, const Arg &dst, bool toBuffer) {
  const Arg &buf = toBuffer ? dst : src;
  const Arg &ptrs = toBuffer ? src : dst;
  if (c.p.has("barrier"))
    S.fail(c.p.loc("barrier"), "copy() barrier= is for TMA copies (a tensor descriptor into a buffer); this copy "
                               "moves pointers' elements with loads and stores");
  if (!ptrs.val.v->type.isTile() || ptrs.val.v->type.shape != buf.val.ints)
    S.fail(ptrs.loc, "copy() pointers must be a tile of the buffer's shape " + buf.val.describe() + ", got " +
                         ptrs.val.describe());
  if (ptrs.val.v->type.elem.pointee != buf.val.elts[0].v->type.elem.pointee)
    S.fail(ptrs.loc, "copy() pointers must point to the buffer's element type " + buf.val.describe() + ", got " +
                         ptrs.val.describe());
  std::vector<int64_t> shape = copyShapeWithin(S, c.p.get("shape"), buf.val.ints);
  ir::Value *mask = leadingMask(S, shape, buf.val.ints, c.loc);
  CallArgs lp{c.loc, {buf}, {}};
  SVal view = S.callBuiltin("tle.gpu.local_ptr", lp);
  CallArgs ld{c.loc, {toBuffer ? ptrs : Arg{c.loc, view}}, {}};
  if (mask)
    ld.kw.push_back({"mask", Arg{c.loc, SVal::tensor(mask)}});
  SVal v = S.callBuiltin("tl.load", ld);
  CallArgs st{c.loc, {toBuffer ? Arg{c.loc, view} : ptrs, Arg{c.loc, v}}, {}};
  if (mask)
    st.kw.push_back({"mask", Arg{c.loc, SVal::tensor(mask)}});
  S.callBuiltin("tl.store", st);
}

/// The index of `m` among the kernel's declared tensor maps, declaring it when new.
int declareTensorMap(Specializer &S, const ir::TensorMapParam &m) {
  ir::Function &f = *S.fn;
  for (int k = 0; k < f.declaredTensorMaps; ++k)
    if (f.tensorMaps[k] == m)
      return k;
  f.tensorMaps.insert(f.tensorMaps.begin() + f.declaredTensorMaps, m);
  return f.declaredTensorMaps++;
}

/// The tensor map of descriptor `desc` for boxes of its block shape into a buffer of `swizzle`
/// (0: row-major, a box is the block; 32, 64, 128: the NVMMA layout, a box is one column block
/// of swizzle bytes).
ir::TensorMapParam tensorMapOf(Specializer &S, const Arg &desc, int swizzle, SourceLoc loc) {
  const SVal &d = desc.val;
  std::vector<const ir::Value *> shape, strides;
  for (size_t i = 0; i < d.ints.size(); ++i) {
    shape.push_back(d.elts[1].elts[i].v);
    strides.push_back(d.elts[2].elts[i].v);
  }
  std::vector<int64_t> box = d.ints;
  if (swizzle)
    box.back() = swizzle / ir::storageBytes(d.elts[0].v->type.elem.pointee);
  std::string why;
  std::optional<ir::TensorMapParam> m =
      ir::tensorMap(*S.fn, d.elts[0].v->type.elem.pointee, d.elts[0].v, shape, strides, box, swizzle, &why);
  if (!m)
    S.fail(loc, "copy() with a tensor descriptor is a TMA copy, whose tensor map needs " + why);
  return *m;
}

/// The buffer `buf` checked as the other side of a TMA copy of descriptor `desc`.
void checkTmaBuffer(Specializer &S, const Arg &buf, const Arg &desc) {
  const SVal &d = desc.val;
  if (buf.val.elts[0].v->type.elem.space != AddrSpace::Shared)
    S.fail(buf.loc, "copy()'s buffer, " + buf.val.describe() + ", must be this CTA's: a TMA copy moves bytes "
                    "between global memory and the issuing CTA's shared memory (tle.remote buffers are not supported)");
  if (buf.val.elts[0].v->type.elem.pointee != d.elts[0].v->type.elem.pointee)
    S.fail(buf.loc, "copy()'s buffer, " + buf.val.describe() + ", must have the descriptor's element type " +
                        ir::ScalarType{d.elts[0].v->type.elem.pointee}.str());
  // The box lands row-major: the buffer's shape is the block's, less leading dims of 1.
  std::vector<int64_t> block = d.ints;
  while (block.size() > buf.val.ints.size() && block.front() == 1)
    block.erase(block.begin());
  if (block != buf.val.ints)
    S.fail(buf.loc, "copy()'s buffer, " + buf.val.describe() + ", must have the descriptor's block shape " +
                        shapeStr(d.ints) + " (the TMA box; leading dims of 1 may be left out)");
  if (buf.val.i && ir::numElements(buf.val.ints) != buf.val.ints[block.size() - 2] * block.back())
    S.fail(buf.loc, "copy()'s buffer, " + buf.val.describe() + ", holds several matrices in the NVMMA layout; a "
                    "TMA copy fills one: copy each slot (buf.slot(i)), or allocate with nv_mma_shared_layout=False");
  const ir::Value *base = buf.val.elts[0].v;
  int64_t bytes = ir::numElements(buf.val.ints) * ir::storageBytes(base->type.elem.pointee);
  int64_t align = buf.val.i ? 8 * buf.val.i : 128; // a swizzled box starts at a whole pattern of 8 rows
  if ((!base->def || base->def->kind != OpKind::LocalAlloc) && bytes % align)
    S.fail(buf.loc, "copy()'s buffer, " + buf.val.describe() + ", is a slot of " + std::to_string(bytes) +
                        " bytes: a TMA copy's slots must start " + std::to_string(align) +
                        "-byte aligned (slots of a multiple of " + std::to_string(align) + " bytes)");
}

/// One TMA box per column block of the buffer's swizzle (one box when row-major): the element
/// offset of box `k` in the buffer and of its first column in the tensor.
struct Box {
  int64_t bufferOffset, column;
};
std::vector<Box> boxesOf(const Arg &buf) {
  int swizzle = buf.val.i;
  if (!swizzle)
    return {{0, 0}};
  const std::vector<int64_t> &sh = buf.val.ints;
  int64_t rows = sh[sh.size() - 2], perRow = swizzle / ir::storageBytes(buf.val.elts[0].v->type.elem.pointee);
  std::vector<Box> out;
  for (int64_t k = 0; k * perRow < sh.back(); ++k)
    out.push_back({k * rows * perRow, k * perRow});
  return out;
}

/// `coords` with `column` added to the last (the box's first column).
std::vector<ir::Value *> shifted(Specializer &S, std::vector<ir::Value *> coords, int64_t column, SourceLoc loc) {
  if (column)
    coords.back() = S.b->binary(OpKind::Add, loc, coords.back(), S.b->constInt(loc, DType::I32, column));
  return coords;
}

/// The pointer `k` elements past `base` (itself when k is 0).
ir::Value *advanced(Specializer &S, ir::Value *base, int64_t k, SourceLoc loc) {
  if (!k)
    return base;
  return S.b->create(OpKind::AddPtr, loc, {base, S.b->constInt(loc, DType::I32, k)}, {base->type})->result();
}

/// The copy's coordinates: one i32 per descriptor dim.
std::vector<ir::Value *> coordsOf(Specializer &S, const BuiltinCall &c, size_t rank) {
  if (!c.p.has("offsets"))
    S.fail(c.loc, "copy() with a tensor descriptor needs offsets= (one coordinate per descriptor dim)");
  const Arg &o = c.p.get("offsets");
  std::vector<SVal> xs = o.val.kind == SVal::Kind::Tuple ? o.val.elts : std::vector<SVal>{o.val};
  if (xs.size() != rank)
    S.fail(o.loc, "copy() offsets has " + std::to_string(xs.size()) + " coordinates; the descriptor has " +
                      std::to_string(rank) + " dims");
  std::vector<ir::Value *> out;
  for (const SVal &x : xs) {
    bool ok = (x.isNumber() && x.kind != SVal::Kind::Float) ||
              (x.isTensor() && x.v->type.isScalar() && ir::isInteger(x.v->type.dtype()));
    if (!ok)
      S.fail(o.loc, "copy() offsets must be integer scalars, got " + x.describe());
    if (x.isNumber() && (x.i < INT32_MIN || x.i > INT32_MAX))
      S.fail(o.loc, "copy() offset " + std::to_string(x.i) + " is outside the i32 coordinates TMA takes");
    out.push_back(S.castTo(S.toTensor(x, o.loc), ir::ScalarType{DType::I32}, o.loc));
  }
  return out;
}

/// copy()'s multicast=: the size of the cluster of the device mesh given (which becomes the
/// kernel's cluster), or 1 when absent or None.
int64_t multicastOf(Specializer &S, const BuiltinCall &c) {
  if (!c.p.has("multicast") || c.p.get("multicast").val.kind == SVal::Kind::None)
    return 1;
  const Arg &m = c.p.get("multicast");
  if (m.val.kind != SVal::Kind::Mesh || meshDerived(m.val))
    S.fail(m.loc, "copy() multicast= must be a tle.device_mesh whose cluster axes are the kernel's cluster (every CTA "
                  "of the cluster gets the box), got " + m.val.describe());
  if (!c.p.has("barrier") || c.p.get("barrier").val.kind == SVal::Kind::None)
    S.fail(m.loc, "copy() multicast= needs barrier=: the box completes on the mbarrier at that offset in every CTA of "
                  "the cluster, each of which waits for it there");
  return S.useMeshCluster(m.val, m.loc);
}

/// A multicast copy's pieces: the buffer's boxes, each split into `parts` runs of rows so that
/// the cluster's `n` CTAs issue an equal share (piece j by rank j % n). Fails at `loc` when
/// the box's rows do not split so.
int64_t rowsOf(const Arg &buf) {
  const std::vector<int64_t> &sh = buf.val.ints;
  return sh.size() >= 2 ? sh[sh.size() - 2] : 1;
}

struct Piece {
  int64_t bufferOffset, row, column, rows;
};
std::vector<Piece> piecesOf(Specializer &S, const Arg &buf, int64_t n, SourceLoc loc) {
  std::vector<Box> boxes = boxesOf(buf);
  const std::vector<int64_t> &sh = buf.val.ints;
  int64_t rows = rowsOf(buf);
  int64_t boxCols = buf.val.i ? buf.val.i / ir::storageBytes(buf.val.elts[0].v->type.elem.pointee) : sh.back();
  int64_t parts = n / std::gcd(static_cast<int64_t>(boxes.size()), n);
  int64_t eb = ir::storageBytes(buf.val.elts[0].v->type.elem.pointee);
  bool splits = parts == 1 || (sh.size() == 2 && rows % parts == 0 &&
                               (buf.val.i ? (rows / parts) % 8 == 0 : (rows / parts) * boxCols * eb % 128 == 0));
  if (!splits)
    S.fail(loc, "copy() multicast over a cluster of " + std::to_string(n) + " CTAs shares the copy's " +
                    std::to_string(boxes.size()) + " box(es) among them by splitting each into " +
                    std::to_string(parts) + " runs of rows, which " + buf.val.describe() +
                    " does not allow (a matrix whose rows split into runs of whole swizzle patterns of 8 rows, or "
                    "of multiples of 128 bytes)");
  std::vector<Piece> out;
  for (const Box &b : boxes)
    for (int64_t q = 0; q < parts; ++q)
      out.push_back({b.bufferOffset + q * (rows / parts) * boxCols, q * (rows / parts), b.column, rows / parts});
  return out;
}

void tmaLoad(Specializer &S, const BuiltinCall &c, const Arg &desc, const Arg &buf) {
  checkTmaBuffer(S, buf, desc);
  checkShape(S, c.p.get("shape"), buf.val.ints, "the buffer's shape");
  int64_t n = multicastOf(S, c);
  std::vector<ir::Value *> coords = coordsOf(S, c, desc.val.ints.size());
  int64_t bytes = ir::numElements(desc.val.ints) * ir::storageBytes(desc.val.elts[0].v->type.elem.pointee);
  ir::Value *dst = buf.val.elts[0].v;
  auto load = [&](ir::Value *bar) { // every box completes on `bar`
    if (n > 1)
      S.clusterMbarriers(c.loc);
    std::vector<Piece> pieces = piecesOf(S, buf, n, c.loc);
    const ir::TensorMapParam whole = tensorMapOf(S, desc, buf.val.i, c.loc);
    for (size_t j = 0; j < pieces.size(); ++j) {
      const Piece &pc = pieces[j];
      ir::TensorMapParam m = whole;
      if (pc.rows != rowsOf(buf)) // a run of the box's rows (a matrix buffer: the box's last two dims)
        m.box[m.box.size() - 2] = pc.rows;
      std::vector<ir::Value *> ops = {advanced(S, dst, pc.bufferOffset, c.loc), bar};
      std::vector<ir::Value *> at = shifted(S, coords, pc.column, c.loc);
      if (pc.row)
        at[at.size() - 2] = S.b->binary(OpKind::Add, c.loc, at[at.size() - 2], S.b->constInt(c.loc, DType::I32, pc.row));
      for (ir::Value *x : at)
        ops.push_back(x);
      ir::Op *op = S.b->create(OpKind::TmaLoad, c.loc, ops, {});
      op->sync.map = declareTensorMap(S, m);
      if (n > 1) {
        op->sync.multicast = static_cast<int>(n);
        op->sync.issuer = static_cast<int>(j % static_cast<size_t>(n));
      }
    }
  };
  if (c.p.has("barrier") && S.openPipeSlotBarrier(dst))
    S.fail(c.p.loc("barrier"), "copy() into a tle.pipe slot completes on the pipe's own mbarrier, which its reader "
                               "waits for: drop barrier=");
  if (ir::Value *full = S.openPipeSlotBarrier(dst)) {
    // A field of a tle.pipe slot its writer holds: the bytes complete on the stage's "full"
    // mbarrier, whose phase the writer's commit() completes once they have landed.
    S.b->create(OpKind::MbarrierExpectTx, c.loc, {full}, {})->sync.tx = bytes;
    load(full);
    return;
  }
  if (c.p.has("barrier")) {
    ir::Value *bar = S.tmaBarrier(c.p.get("barrier"), bytes);
    ir::Op *arrive = S.b->create(OpKind::MbarrierArrive, c.loc, {bar}, {});
    arrive->sync.tx = bytes;
    load(bar);
    return;
  }
  // Synchronous: an mbarrier of the copy's own, waited for and invalidated.
  ir::Op *a = S.b->create(OpKind::LocalAlloc, c.loc, {}, {ir::Type(ir::ScalarType::ptrTo(DType::I64, AddrSpace::Shared))});
  a->setAllocShape({1});
  ir::Value *bar = a->result();
  S.b->create(OpKind::MbarrierInit, c.loc, {bar}, {})->sync.count = 1;
  S.b->create(OpKind::MbarrierArrive, c.loc, {bar}, {})->sync.tx = bytes;
  load(bar);
  S.b->create(OpKind::MbarrierWait, c.loc, {bar, S.b->constInt(c.loc, DType::I32, 0)}, {});
  S.b->create(OpKind::Barrier, c.loc, {}, {}); // every thread has waited before the inval
  S.b->create(OpKind::MbarrierInval, c.loc, {bar}, {});
}

void tmaStore(Specializer &S, const BuiltinCall &c, const Arg &buf, const Arg &desc) {
  if (c.p.has("barrier"))
    S.fail(c.p.loc("barrier"), "copy() barrier= is for TMA copies into a buffer; a TMA store completes in its bulk "
                               "group, which the copy waits for");
  checkTmaBuffer(S, buf, desc);
  checkShape(S, c.p.get("shape"), buf.val.ints, "the buffer's shape");
  int map = declareTensorMap(S, tensorMapOf(S, desc, buf.val.i, c.loc));
  std::vector<ir::Value *> coords = coordsOf(S, c, desc.val.ints.size());
  for (const Box &box : boxesOf(buf)) {
    std::vector<ir::Value *> ops = {advanced(S, buf.val.elts[0].v, box.bufferOffset, c.loc)};
    for (ir::Value *x : shifted(S, coords, box.column, c.loc))
      ops.push_back(x);
    S.b->create(OpKind::TmaStore, c.loc, ops, {})->sync.map = map;
  }
  S.b->create(OpKind::TmaStoreCommit, c.loc, {}, {});
  // Waited for until the copy has read the buffer (the buffer may then be rewritten), as
  // Triton's TMA stores wait; the global writes complete in the background, by the kernel's end.
  ir::Op *wait = S.b->create(OpKind::TmaStoreWait, c.loc, {}, {});
  wait->sync.pending = 0;
  wait->sync.read = true;
}

SVal copy(Specializer &S, const BuiltinCall &c) {
  const Arg &src = c.p.get("src");
  const Arg &dst = c.p.get("dst");
  auto kind = [](const SVal &v) {
    return v.kind == SVal::Kind::Buffer     ? 'b'
           : v.kind == SVal::Kind::TensorDesc ? 'd'
           : v.isTensor() && v.v->type.elem.isPointer() && v.v->type.elem.space == AddrSpace::Global ? 'p'
                                                                                                       : '?';
  };
  char a = kind(src.val), b = kind(dst.val);
  if (a == 'p' && b == 'b')
    plainCopy(S, c, src, dst, true);
  else if (a == 'b' && b == 'p')
    plainCopy(S, c, src, dst, false);
  else if (a == 'd' && b == 'b')
    tmaLoad(S, c, src, dst);
  else if (a == 'b' && b == 'd')
    tmaStore(S, c, src, dst);
  else
    S.fail(c.loc, "copy() moves data between a buffer (tle.gpu.alloc) and global memory (a pointer tile or a tensor "
                  "descriptor), got " + src.val.describe() + " to " + dst.val.describe());
  return SVal::none();
}

/// tle.gpu.memory_space(x, space) / storage_kind: FlagTree's placement hint for the op that made
/// tile `x` ("shared_memory": stage it through shared memory). The values are `x`'s either way,
/// and where a tile lives is this compiler's decision (its passes), so `x` is returned as it is;
/// the space is checked.
SVal memorySpace(Specializer &S, const BuiltinCall &c) {
  const Arg &x = c.p.get("x"), &sp = c.p.get("space");
  if (!x.val.isTensor())
    S.fail(x.loc, "memory_space() takes a tensor, got " + x.val.describe());
  std::string s = sp.val.kind == SVal::Kind::Str ? sp.val.s : "";
  if (s != "shared_memory" && s != "tensor_memory" && s != "register" && s != "tle.gpu.smem")
    S.fail(sp.loc, "memory_space() space must be \"shared_memory\", \"tensor_memory\" or \"register\", got " +
                       sp.val.describe());
  return x.val;
}

/// FlagTree's distributed encodings (tle.gpu.BlockEncoding, MmaEncoding, DotOperandEncoding,
/// SlicedEncoding, with their fields as arguments): a compile-time record that set_layout takes.
SVal encoding(Specializer &, const BuiltinCall &c) {
  return SVal::record("layout_encoding", {{"kind", SVal::str(c.fname)}});
}

/// tle.gpu.set_layout(x, layout): FlagTree's request for tile x's register layout. The values are
/// x's whatever the layout, and this compiler's assign-layouts pass chooses layouts itself (as it
/// does for tle.gpu.memory_space), so x is returned as it is; the layout must be an encoding.
SVal setLayout(Specializer &S, const BuiltinCall &c) {
  const Arg &x = c.p.get("x"), &l = c.p.get("layout");
  if (!x.val.isTensor())
    S.fail(x.loc, "set_layout() takes a tensor, got " + x.val.describe());
  if (l.val.kind != SVal::Kind::Namespace || l.val.s != "layout_encoding")
    S.fail(l.loc, "set_layout() layout must be a register encoding (tle.gpu.BlockEncoding, MmaEncoding, "
                  "DotOperandEncoding or SlicedEncoding), got " + l.val.describe());
  return x.val;
}

} // namespace

std::vector<BuiltinSpec> copyBuiltins() {
  return {
      {"tle.gpu.copy", "src, dst, shape, offsets=None, barrier=None, multicast=None", copy},
      {"tle.gpu.memory_space", "x, space", memorySpace},
      {"tle.gpu.storage_kind", "x, space", memorySpace},
      {"tle.gpu.set_layout", "x, layout", setLayout},
      {"tle.gpu.BlockEncoding", "*args", encoding},
      {"tle.gpu.MmaEncoding", "*args", encoding},
      {"tle.gpu.DotOperandEncoding", "*args", encoding},
      {"tle.gpu.SlicedEncoding", "*args", encoding},
  };
}

} // namespace tle::sema
