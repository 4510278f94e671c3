// TLE's device meshes, thread-block clusters and shared-memory buffers (FlagTree's names):
// tle.device_mesh, tle.shard_id, tle.remote, tle.distributed_barrier, tle.gpu.alloc,
// tle.gpu.local_ptr and buffer.slot. docs/language.md "Clusters and shared buffers" states the
// rules; this file checks them and builds the tile IR.
#include "Binder.h"
#include "Sema.h"

namespace tle::sema {

using ir::AddrSpace;
using ir::DType;
using ir::OpKind;

namespace {

/// Largest portable thread-block cluster (CUDA: 8 CTAs; 16 needs a non-portable opt-in).
constexpr int64_t kMaxClusterSize = 8;

/// Whether a mesh axis is a cluster axis: FlagTree's rule, its name contains "cluster".
bool clusterAxis(const std::string &name) { return name.find("cluster") != std::string::npos; }

/// The index of `axis` (a name, or an index that may be negative) in `mesh`.
size_t meshAxis(Specializer &S, const SVal &mesh, const Arg &axis, const std::string &fname) {
  size_t n = mesh.ints.size();
  if (axis.val.kind == SVal::Kind::Str) {
    for (size_t i = 0; i < n; ++i)
      if (mesh.elts[i].s == axis.val.s)
        return i;
    std::string names;
    for (size_t i = 0; i < n; ++i)
      names += (i ? ", " : "") + std::string("'") + mesh.elts[i].s + "'";
    S.fail(axis.loc, fname + "() axis '" + axis.val.s + "' is not an axis of " + mesh.describe() + " (" + names + ")");
  }
  if (axis.val.kind == SVal::Kind::Int) {
    int64_t i = axis.val.i < 0 ? axis.val.i + static_cast<int64_t>(n) : axis.val.i;
    if (i < 0 || i >= static_cast<int64_t>(n))
      S.fail(axis.loc, fname + "() axis " + std::to_string(axis.val.i) + " is out of range for " + mesh.describe());
    return static_cast<size_t>(i);
  }
  S.fail(axis.loc, fname + "() axis must be an axis name or index, got " + axis.val.describe());
}

const SVal &meshArg(Specializer &S, const Binder &p, const std::string &k, const std::string &fname) {
  const Arg &a = p.get(k);
  if (a.val.kind != SVal::Kind::Mesh)
    S.fail(a.loc, fname + "() " + k + " must be a tle.device_mesh, got " + a.val.describe());
  return a.val;
}

/// The mesh's cluster axes: [first, ints.size()). They must be the innermost axes, so that a
/// cluster is a run of consecutive program ids (program_id(0) = cluster index * size + rank).
size_t firstClusterAxis(Specializer &S, const SVal &mesh, SourceLoc loc) {
  size_t n = mesh.ints.size(), first = n;
  while (first > 0 && clusterAxis(mesh.elts[first - 1].s))
    --first;
  for (size_t i = 0; i < first; ++i)
    if (clusterAxis(mesh.elts[i].s))
      S.fail(loc, mesh.describe() + ": the cluster axes (names containing 'cluster') must be the innermost axes, "
                                    "after every other axis");
  return first;
}

} // namespace

int64_t Specializer::useMeshCluster(const SVal &mesh, SourceLoc loc) {
  size_t first = firstClusterAxis(*this, mesh, loc);
  if (first == mesh.ints.size())
    fail(loc, mesh.describe() + " has no cluster axis (an axis whose name contains 'cluster')");
  int64_t size = 1;
  for (size_t i = first; i < mesh.ints.size(); ++i)
    size *= mesh.ints[i];
  if (size > kMaxClusterSize)
    fail(loc, mesh.describe() + " asks for clusters of " + std::to_string(size) + " CTAs; at most " +
                  std::to_string(kMaxClusterSize) + " are supported (the portable cluster size)");
  std::array<int, 3> want = {static_cast<int>(size), 1, 1};
  if (fn->cluster != std::array<int, 3>{1, 1, 1} && fn->cluster != want)
    fail(loc, "the kernel already uses clusters of " + std::to_string(fn->cluster[0]) + " CTAs; " + mesh.describe() +
                  " asks for " + std::to_string(size));
  fn->cluster = want;
  return size;
}

SVal Specializer::bufferSlot(const SVal &buf, CallArgs &args) {
  SourceLoc loc = args.loc;
  Binder p(*this, "slot", args, {"index"}, 1);
  if (buf.ints.size() < 2)
    fail(loc, "slot() needs a buffer of rank 2 or more, got " + buf.describe());
  const Arg &ia = p.get("index");
  if (!(ia.val.isNumber() && ia.val.kind != SVal::Kind::Float) &&
      !(ia.val.isTensor() && ia.val.v->type.isScalar() && ir::isInteger(ia.val.v->type.dtype())))
    fail(ia.loc, "slot() index must be an integer scalar, got " + ia.val.describe());
  if (ia.val.isNumber() && (ia.val.i < 0 || ia.val.i >= buf.ints[0]))
    fail(ia.loc, "slot() index " + std::to_string(ia.val.i) + " is out of range for " + buf.describe());
  int64_t inner = ir::numElements(std::vector<int64_t>(buf.ints.begin() + 1, buf.ints.end()));
  ir::Value *i = castTo(toTensor(ia.val, ia.loc), ir::ScalarType{DType::I32}, ia.loc);
  ir::Value *off = b->binary(OpKind::Mul, loc, i, b->constInt(loc, DType::I32, inner));
  ir::Value *base = buf.elts[0].v;
  SVal r = buf;
  r.elts[0] = SVal::tensor(b->create(OpKind::AddPtr, loc, {base, off}, {base->type})->result());
  r.ints.erase(r.ints.begin());
  return r;
}

std::optional<SVal> Specializer::callTle(const std::string &name, CallArgs &args) {
  SourceLoc loc = args.loc;
  if (name == "tle.device_mesh") {
    Binder p(*this, "device_mesh", args, {"topology"}, 1);
    const Arg &t = p.get("topology");
    if (t.val.kind != SVal::Kind::Dict)
      fail(t.loc, "device_mesh() topology must be a dict of levels ({\"block_cluster\": [(\"cluster_x\", 2)]}), got " +
                      t.val.describe());
    SVal mesh;
    mesh.kind = SVal::Kind::Mesh;
    auto addAxis = [&](const SVal &axisName, const SVal &size) {
      if (axisName.kind != SVal::Kind::Str)
        fail(t.loc, "device_mesh() axis names must be strings, got " + axisName.describe());
      if (size.kind != SVal::Kind::Int || size.i < 1)
        fail(t.loc, "device_mesh() axis '" + axisName.s + "' needs a positive integer size, got " + size.describe());
      for (auto &e : mesh.elts)
        if (e.s == axisName.s)
          fail(t.loc, "device_mesh() has two axes named '" + axisName.s + "'");
      mesh.elts.push_back(axisName);
      mesh.ints.push_back(size.i);
    };
    for (size_t i = 0; i + 1 < t.val.elts.size(); i += 2) {
      const SVal &level = t.val.elts[i], &v = t.val.elts[i + 1];
      if (v.kind == SVal::Kind::Int) { // one axis named as the level
        addAxis(level, v);
        continue;
      }
      if (v.kind != SVal::Kind::Tuple)
        fail(t.loc, "device_mesh() level " + level.describe() + " must be a size or a list of (name, size) pairs, got " +
                        v.describe());
      for (const SVal &ax : v.elts) {
        if (ax.kind != SVal::Kind::Tuple || ax.elts.size() != 2)
          fail(t.loc, "device_mesh() level " + level.describe() + " must list (name, size) pairs, got " + ax.describe());
        addAxis(ax.elts[0], ax.elts[1]);
      }
    }
    if (mesh.ints.empty())
      fail(t.loc, "device_mesh() needs at least one axis");
    firstClusterAxis(*this, mesh, t.loc);
    return mesh;
  }
  if (name == "tle.shard_id") {
    Binder p(*this, "shard_id", args, {"mesh", "axis"}, 2);
    const SVal &mesh = meshArg(*this, p, "mesh", "shard_id");
    size_t axis = meshAxis(*this, mesh, p.get("axis"), "shard_id");
    if (firstClusterAxis(*this, mesh, p.loc("mesh")) < mesh.ints.size())
      useMeshCluster(mesh, p.loc("mesh"));
    // FlagTree's rule: program ids enumerate the mesh row-major, so the coordinate along `axis`
    // is (pid % mesh size) // (product of the inner sizes) % (the axis's size), which is
    // pid // inner % size since the mesh size is a multiple of inner * size.
    if (mesh.ints[axis] == 1)
      return SVal::tensor(b->constInt(loc, DType::I32, 0));
    int64_t inner = ir::numElements(std::vector<int64_t>(mesh.ints.begin() + axis + 1, mesh.ints.end()));
    ir::Op *pid = b->create(OpKind::ProgramId, loc, {}, {ir::Type::scalar(DType::I32)});
    pid->axis = 0;
    ir::Value *r = pid->result();
    if (inner > 1)
      r = b->binary(OpKind::IDiv, loc, r, b->constInt(loc, DType::I32, inner));
    r = b->binary(OpKind::IRem, loc, r, b->constInt(loc, DType::I32, mesh.ints[axis]));
    return SVal::tensor(r);
  }
  if (name == "tle.distributed_barrier") {
    Binder p(*this, "distributed_barrier", args, {"mesh"}, 0);
    if (p.has("mesh")) {
      const SVal &mesh = meshArg(*this, p, "mesh", "distributed_barrier");
      if (firstClusterAxis(*this, mesh, p.loc("mesh")) == mesh.ints.size())
        fail(p.loc("mesh"), "distributed_barrier() over " + mesh.describe() +
                                ", a mesh without cluster axes, would be a grid-wide barrier, which is not "
                                "supported yet; give a mesh with a cluster axis");
      useMeshCluster(mesh, p.loc("mesh"));
    } else if (fn->cluster == std::array<int, 3>{1, 1, 1}) {
      fail(loc, "distributed_barrier() without a mesh needs a kernel that already uses a cluster (tle.shard_id or "
                "tle.remote with a mesh); pass the mesh");
    }
    b->create(OpKind::ClusterBarrier, loc, {}, {});
    return SVal::none();
  }
  if (name == "tle.remote") {
    Binder p(*this, "remote", args, {"tensor", "shard_id", "scope", "space"}, 2);
    if (p.has("space")) {
      const Arg &sp = p.get("space");
      if (sp.val.kind != SVal::Kind::Str || sp.val.s != "cluster")
        fail(sp.loc, "remote() space must be \"cluster\" (device and node spaces are not supported), got " +
                         sp.val.describe());
    }
    const Arg &x = p.get("tensor");
    ir::Value *ptr = x.val.kind == SVal::Kind::Buffer ? x.val.elts[0].v : x.val.isTensor() ? x.val.v : nullptr;
    if (!ptr || !ptr->type.elem.isPointer() || ptr->type.elem.space == AddrSpace::Global)
      fail(x.loc, "remote() needs a buffer (tle.gpu.alloc) or shared-memory pointers (tle.gpu.local_ptr), got " +
                      x.val.describe());
    if (ptr->type.elem.space == AddrSpace::Cluster)
      fail(x.loc, "remote() of " + x.val.describe() + ", which already addresses another CTA: remote() applies once");
    const SVal *mesh = nullptr;
    int64_t size = fn->cluster[0];
    if (p.has("scope")) {
      mesh = &meshArg(*this, p, "scope", "remote");
      size = useMeshCluster(*mesh, p.loc("scope"));
    } else if (fn->cluster == std::array<int, 3>{1, 1, 1}) {
      fail(loc, "remote() without scope= needs a kernel that already uses a cluster (tle.shard_id or "
                "tle.distributed_barrier with a mesh); pass scope=mesh");
    }
    const Arg &sa = p.get("shard_id");
    // One coordinate (the rank) or one per cluster axis of the scope, linearised row-major; each
    // an integer, or an integer scalar known at run time (not range-checked).
    std::vector<SVal> coords = {sa.val};
    std::vector<int64_t> sizes = {size};
    if (sa.val.kind == SVal::Kind::Tuple) {
      if (!mesh)
        fail(sa.loc, "remote() shard_id as a tuple needs scope= (the mesh its coordinates index)");
      size_t first = firstClusterAxis(*this, *mesh, p.loc("scope"));
      if (sa.val.elts.size() != mesh->ints.size() - first)
        fail(sa.loc, "remote() shard_id has " + std::to_string(sa.val.elts.size()) + " coordinates; " +
                         mesh->describe() + " has " + std::to_string(mesh->ints.size() - first) + " cluster axes");
      coords = sa.val.elts;
      sizes.assign(mesh->ints.begin() + first, mesh->ints.end());
    }
    ir::Value *rank = nullptr;
    int64_t known = 0;
    for (size_t i = 0; i < coords.size(); ++i) {
      const SVal &c = coords[i];
      std::string what = coords.size() == 1 ? "remote() shard_id" : "remote() shard_id coordinate " + std::to_string(i);
      ir::Value *v = nullptr;
      if (c.kind == SVal::Kind::Int) {
        if (c.i < 0 || c.i >= sizes[i])
          fail(sa.loc, what + " " + std::to_string(c.i) + " is outside " +
                           (coords.size() == 1 ? "the cluster of " : "the axis of ") + std::to_string(sizes[i]) +
                           " CTAs");
        if (!rank) {
          known = known * sizes[i] + c.i;
          continue;
        }
        v = b->constInt(sa.loc, DType::I32, c.i);
      } else if (c.isTensor() && c.v->type.isScalar() && ir::isInteger(c.v->type.dtype())) {
        v = castTo(c.v, ir::ScalarType{DType::I32}, sa.loc);
      } else {
        fail(sa.loc, what + " must be an integer (or an integer scalar), got " + c.describe());
      }
      if (!rank)
        rank = b->constInt(sa.loc, DType::I32, known);
      rank = b->binary(OpKind::Add, sa.loc, b->binary(OpKind::Mul, sa.loc, rank, b->constInt(sa.loc, DType::I32, sizes[i])), v);
    }
    if (!rank)
      rank = b->constInt(sa.loc, DType::I32, known);
    ir::Type rt = ptr->type.withElem(ir::ScalarType::ptrTo(ptr->type.elem.pointee, AddrSpace::Cluster));
    ir::Value *remote = b->create(OpKind::RemotePtr, loc, {ptr, rank}, {rt})->result();
    if (x.val.kind == SVal::Kind::Buffer) {
      SVal r = x.val;
      r.elts[0] = SVal::tensor(remote);
      return r;
    }
    return SVal::tensor(remote);
  }
  if (name == "tle.gpu.alloc") {
    Binder p(*this, "alloc", args, {"shape", "dtype", "layout", "scope", "init_value", "nv_mma_shared_layout"}, 2);
    const Arg &sh = p.get("shape");
    std::vector<int64_t> shape;
    if (sh.val.kind == SVal::Kind::Int)
      shape.push_back(sh.val.i);
    else if (sh.val.kind == SVal::Kind::Tuple)
      for (const SVal &d : sh.val.elts) {
        if (d.kind != SVal::Kind::Int)
          fail(sh.loc, "alloc() shape must hold compile-time integers, got " + d.describe());
        shape.push_back(d.i);
      }
    else
      fail(sh.loc, "alloc() shape must be a list of compile-time integers, got " + sh.val.describe());
    if (shape.empty())
      fail(sh.loc, "alloc() shape needs at least one dimension");
    for (int64_t d : shape)
      if (d < 1)
        fail(sh.loc, "alloc() shape dims must be positive, got " + std::to_string(d));
    ir::ScalarType et = p.dtype("dtype");
    if (et.isPointer() || et.dtype == DType::I1)
      fail(p.loc("dtype"), "alloc() dtype must be a number type (not a pointer or int1), got " + et.str());
    int64_t n = ir::numElements(shape);
    constexpr int64_t kMaxBytes = 227 * 1024; // shared memory one CTA may have on sm_90
    if (n > kMaxBytes || n * ir::storageBytes(et.dtype) > kMaxBytes)
      fail(sh.loc, "alloc() of " + std::to_string(n) + " " + et.str() + " elements exceeds the " +
                       std::to_string(kMaxBytes) + " bytes of shared memory a CTA can have");
    if (p.has("layout"))
      fail(p.loc("layout"), "alloc() layout= is not supported yet: buffers are row-major, unswizzled");
    if (p.has("scope")) {
      const Arg &sc = p.get("scope");
      if (sc.val.kind != SVal::Kind::Str || sc.val.s != "tle.gpu.smem")
        fail(sc.loc, "alloc() scope must be tle.gpu.smem (the only memory tlec allocates), got " + sc.val.describe());
    }
    if (p.has("nv_mma_shared_layout"))
      truthy(p.get("nv_mma_shared_layout").val, p.loc("nv_mma_shared_layout")); // accepted; the layout is row-major
    ir::Op *op = b->create(OpKind::LocalAlloc, loc, {}, {ir::Type(ir::ScalarType::ptrTo(et.dtype, AddrSpace::Shared))});
    op->ints = shape;
    SVal buf;
    buf.kind = SVal::Kind::Buffer;
    buf.elts = {SVal::tensor(op->result())};
    buf.ints = shape;
    if (p.has("init_value")) {
      for (int64_t d : shape)
        if (d & (d - 1))
          fail(p.loc("init_value"), "alloc() init_value needs a buffer of power-of-two dims (a tile of its shape), got " +
                                        buf.describe());
      CallArgs lp{loc, {Arg{loc, buf}}, {}};
      SVal ptrs = callTle("tle.gpu.local_ptr", lp).value();
      CallArgs st{loc, {Arg{loc, ptrs}, p.get("init_value")}, {}};
      callBuiltin("tl.store", st);
    }
    return buf;
  }
  if (name == "tle.gpu.local_ptr") {
    Binder p(*this, "local_ptr", args, {"buffer", "indices"}, 1);
    const Arg &ba = p.get("buffer");
    if (ba.val.kind != SVal::Kind::Buffer)
      fail(ba.loc, "local_ptr() buffer must be a buffer from tle.gpu.alloc, got " + ba.val.describe());
    const std::vector<int64_t> &shape = ba.val.ints;
    ir::Value *base = ba.val.elts[0].v;
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size() - 1; d > 0; --d)
      strides[d - 1] = strides[d] * shape[d];
    ir::Value *off = nullptr;
    if (!p.has("indices")) { // the whole buffer, as a tile of its shape
      for (int64_t d : shape)
        if (d & (d - 1))
          fail(ba.loc, "local_ptr() of the whole " + ba.val.describe() +
                           " needs power-of-two dims (it is a tile); pass indices for other shapes");
      if (std::string why = ir::tileLimitError(shape); !why.empty())
        fail(ba.loc, "local_ptr() of the whole " + ba.val.describe() + " would be a tile of " + why);
      for (size_t d = 0; d < shape.size(); ++d) {
        ir::Op *ar = b->create(OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {shape[d]})});
        ar->ival = 0;
        ar->ival2 = shape[d];
        ir::Value *v = ar->result();
        if (strides[d] != 1)
          v = b->binary(OpKind::Mul, loc, v, b->splat(loc, b->constInt(loc, DType::I32, strides[d]), {shape[d]}));
        for (size_t e = 0; e < shape.size(); ++e)
          if (e != d)
            v = expandDims(v, static_cast<int>(e), loc);
        v = broadcastTo(v, shape, loc);
        off = off ? b->binary(OpKind::Add, loc, off, v) : v;
      }
    } else {
      const Arg &ia = p.get("indices");
      std::vector<Arg> idx;
      if (ia.val.kind == SVal::Kind::Tuple)
        for (const SVal &e : ia.val.elts)
          idx.push_back(Arg{ia.loc, e});
      else
        idx.push_back(ia);
      if (idx.size() != shape.size())
        fail(ia.loc, "local_ptr() needs one index per buffer dim: " + std::to_string(shape.size()) + " for " +
                         ba.val.describe() + ", got " + std::to_string(idx.size()));
      for (size_t d = 0; d < idx.size(); ++d) {
        const SVal &v = idx[d].val;
        bool ok = (v.isNumber() && v.kind != SVal::Kind::Float) || (v.isTensor() && ir::isInteger(v.v->type.dtype()));
        if (!ok)
          fail(ia.loc, "local_ptr() index " + std::to_string(d) + " must be an integer scalar or tile, got " +
                           v.describe());
        ir::Value *t = castTo(toTensor(v, ia.loc), ir::ScalarType{DType::I32}, ia.loc);
        if (strides[d] != 1) {
          ir::Value *s = b->constInt(loc, DType::I32, strides[d]);
          t = b->binary(OpKind::Mul, loc, t, t->type.isTile() ? b->splat(loc, s, t->type.shape) : s);
        }
        if (off)
          broadcastPair(off, t, ia.loc);
        off = off ? b->binary(OpKind::Add, loc, off, t) : t;
      }
    }
    ir::Value *ptrs = off->type.isTile() ? b->splat(loc, base, off->type.shape) : base;
    return SVal::tensor(b->create(OpKind::AddPtr, loc, {ptrs, off}, {ptrs->type})->result());
  }
  return std::nullopt;
}

} // namespace tle::sema
