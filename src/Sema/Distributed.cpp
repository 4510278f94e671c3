// TLE's thread-block clusters and shared-memory buffers over device meshes (FlagTree's names):
// tle.shard_id, tle.remote, tle.distributed_barrier, tle.gpu.alloc, tle.gpu.local_ptr and
// buffer.slot (the meshes themselves: Meshes.cpp). docs/language.md "Clusters and shared
// buffers" states the rules; this file checks them and builds the tile IR.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>

namespace tle::sema {

using ir::AddrSpace;
using ir::DType;
using ir::OpKind;

namespace {

/// Largest thread-block cluster: 8 CTAs are portable (every sm_90 GPU, CUDA's guarantee); H100 and
/// H200 run 16, a non-portable size libtle_rt opts the kernel into at load
/// (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED); a GPU without it fails the launch.
constexpr int64_t kMaxClusterSize = 16;

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
                  std::to_string(kMaxClusterSize) + " are supported (8 portable, 16 on H100 and H200)");
  if (gridBarrierAt.valid())
    fail(loc, mesh.describe() + " asks for clusters of " + std::to_string(size) +
                  " CTAs in a kernel with a grid barrier (a cooperative launch needs a kernel without clusters)",
         {{gridBarrierAt, "the grid barrier is here"}});
  std::array<int, 3> want = {static_cast<int>(size), 1, 1};
  if (fn->cluster != std::array<int, 3>{1, 1, 1} && fn->cluster != want)
    fail(loc, "the kernel already uses clusters of " + std::to_string(fn->cluster[0]) + " CTAs; " + mesh.describe() +
                  " asks for " + std::to_string(size));
  fn->cluster = want;
  return size;
}


namespace {

/// buf.slot(i): the buffer's i-th slice along its first dim.
SVal bufferSlot(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const SVal &buf = *c.self;
  SourceLoc loc = c.loc;
  if (buf.ints.size() < 2)
    S.fail(loc, "slot() needs a buffer of rank 2 or more, got " + buf.describe());
  if (buf.i && buf.ints.size() == 2)
    S.fail(loc, "slot() of a matrix in the NVMMA layout, " + buf.describe() + ", would be one of its rows, which "
                "that layout does not keep contiguous: allocate it with nv_mma_shared_layout=False");
  const Arg &ia = p.get("index");
  if (!(ia.val.isNumber() && ia.val.kind != SVal::Kind::Float) &&
      !(ia.val.isTensor() && ia.val.v->type.isScalar() && ir::isInteger(ia.val.v->type.dtype())))
    S.fail(ia.loc, "slot() index must be an integer scalar, got " + ia.val.describe());
  if (ia.val.isNumber() && (ia.val.i < 0 || ia.val.i >= buf.ints[0]))
    S.fail(ia.loc, "slot() index " + std::to_string(ia.val.i) + " is out of range for " + buf.describe());
  int64_t inner = ir::numElements(std::vector<int64_t>(buf.ints.begin() + 1, buf.ints.end()));
  ir::Value *i = S.castTo(S.toTensor(ia.val, ia.loc), ir::ScalarType{DType::I32}, ia.loc);
  ir::Value *off = S.b->binary(OpKind::Mul, loc, i, S.b->constInt(loc, DType::I32, inner));
  ir::Value *base = buf.elts[0].v;
  SVal r = buf;
  r.elts[0] = SVal::tensor(S.b->create(OpKind::AddPtr, loc, {base, off}, {base->type})->result());
  r.ints.erase(r.ints.begin());
  return r;
}

SVal shardId(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  // FlagTree's rule: the axis and the coordinates are those of the mesh the kernel is launched
  // over (a sub-mesh's launch mesh).
  const SVal mesh = meshLaunch(meshArg(S, p, "mesh", "shard_id"));
  size_t axis = meshAxis(S, mesh, p.get("axis"), "shard_id");
  MeshLevel lv = meshAxisLevel(mesh, axis);
  if (lv == MeshLevel::Node || lv == MeshLevel::Device || lv == MeshLevel::Chiplet)
    return deviceShardId(S, p, mesh, axis);
  if (firstClusterAxis(S, mesh, p.loc("mesh")) < mesh.ints.size())
    S.useMeshCluster(mesh, p.loc("mesh"));
  // FlagTree's rule: program ids enumerate the mesh row-major, so the coordinate along `axis`
  // is (pid % mesh size) // (product of the inner sizes) % (the axis's size), which is
  // pid // inner % size since the mesh size is a multiple of inner * size.
  if (mesh.ints[axis] == 1)
    return SVal::tensor(S.b->constInt(loc, DType::I32, 0));
  int64_t inner = ir::numElements(std::vector<int64_t>(mesh.ints.begin() + axis + 1, mesh.ints.end()));
  ir::Op *pid = S.b->create(OpKind::ProgramId, loc, {}, {ir::Type::scalar(DType::I32)});
  pid->setAxis(0);
  ir::Value *r = pid->result();
  if (inner > 1)
    r = S.b->binary(OpKind::IDiv, loc, r, S.b->constInt(loc, DType::I32, inner));
  r = S.b->binary(OpKind::IRem, loc, r, S.b->constInt(loc, DType::I32, mesh.ints[axis]));
  return SVal::tensor(r);
}

/// Whether distributed_barrier's `space` asks for a barrier across GPUs ("device"); fails for a
/// space tlec does not build ("node": across hosts) or does not know.
bool deviceSpace(Specializer &S, const Binder &p) {
  if (!p.has("space"))
    return false;
  const Arg &sp = p.get("space");
  if (sp.val.kind == SVal::Kind::Str && sp.val.s == "device")
    return true;
  if (sp.val.kind == SVal::Kind::Str && (sp.val.s == "node" || sp.val.s == "chiplet"))
    S.fail(sp.loc, "distributed_barrier(space=\"" + sp.val.s + "\") is a barrier across hosts, which tlec does not "
                   "build: use space=\"device\" for the GPUs of one communicator");
  S.fail(sp.loc, "distributed_barrier() space must be None (the mesh decides) or \"device\" (every GPU of the "
                 "communicator), got " + sp.val.describe());
  return false;
}

/// FlagTree's choice of a grid-wide barrier: the mesh's axes (its launch mesh's, for a mesh of
/// no axes) have no cluster axis and some block axis (a name containing "block").
bool gridBarrierMesh(const SVal &mesh) {
  const SVal &named = mesh.ints.empty() ? meshLaunch(mesh) : mesh;
  bool cluster = false, block = false;
  for (size_t k = 0; k < named.ints.size(); ++k) {
    cluster |= clusterAxis(named.elts[k].s);
    block |= named.elts[k].s.find("block") != std::string::npos;
  }
  return !cluster && block;
}

/// The cluster ranks of a sub-mesh's members, in member order: their physical ids, in a mesh of
/// the cluster's axes alone (its ids are the ranks); an error at `at` for a sub-mesh of a mesh
/// with other axes (blocks, GPUs), whose members need not lie in one cluster.
std::vector<int64_t> submeshRanks(Specializer &S, const SVal &mesh, int64_t size, SourceLoc at) {
  const SVal launch = meshLaunch(mesh);
  if (static_cast<int64_t>(meshPhysicalIds(launch).size()) != size)
    S.fail(at, "distributed_barrier() over " + mesh.describe() + " is a sub-mesh barrier of a mesh with axes outside "
                   "the cluster of " + std::to_string(size) + " CTAs, which is not supported: slice a mesh of "
                   "cluster axes only");
  return meshPhysicalIds(mesh);
}

/// The counter of the sub-mesh barriers of member set `ranks` (SubmeshBarrier): created on first
/// use at the kernel's start, a one-element i32 buffer that thread 0 zeroes, then a cluster
/// barrier, so that every member's counter is zero and visible before any member arrives.
ir::Value *submeshCounter(Specializer &S, const std::vector<int64_t> &ranks, SourceLoc loc) {
  ir::Value *&counter = S.submeshCounters[ranks];
  if (counter)
    return counter;
  ir::Block &body = S.fn->body;
  ir::Builder B(&body);
  // Before the cluster barrier of the counters made so far (one barrier serves them all).
  B.setInsertionPoint(&body, S.submeshCounters.size() > 1 ? body.find(S.submeshCountersReady) : body.ops.begin());
  ir::Op *alloc = B.create(OpKind::LocalAlloc, loc, {}, {ir::Type(ir::ScalarType::ptrTo(ir::DType::I32, ir::AddrSpace::Shared))});
  alloc->setAllocShape({1});
  B.create(OpKind::Store, loc, {alloc->result(), B.constInt(loc, ir::DType::I32, 0)}, {});
  if (S.submeshCounters.size() == 1)
    S.submeshCountersReady = B.create(OpKind::ClusterBarrier, loc, {}, {});
  return counter = alloc->result();
}

SVal distributedBarrier(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  if (deviceSpace(S, p))
    return deviceBarrier(S, p, loc);
  if (p.has("device_dptr"))
    S.fail(p.loc("device_dptr"), "distributed_barrier() device_dptr= is for a barrier across GPUs: add "
                                 "space=\"device\"");
  if (p.has("mesh")) {
    const SVal &mesh = meshArg(S, p, "mesh", "distributed_barrier");
    if (gridBarrierMesh(mesh)) {
      // FlagTree's grid barrier: every CTA of the grid; the kernel launches cooperatively.
      if (S.fn->cluster != std::array<int, 3>{1, 1, 1})
        S.fail(p.loc("mesh"), "distributed_barrier() over " + mesh.describe() +
                                " is a grid-wide barrier, which needs a cooperative launch of a kernel without "
                                "clusters; this kernel uses clusters of " + std::to_string(S.fn->cluster[0]) + " CTAs");
      if (!S.gridBarrierAt.valid())
        S.gridBarrierAt = p.loc("mesh");
      S.b->create(OpKind::GridBarrier, loc, {}, {});
      return SVal::none();
    }
    int64_t size = S.useMeshCluster(meshLaunch(mesh), p.loc("mesh"));
    size_t members = meshPhysicalIds(mesh).size();
    if (meshDerived(mesh) && members < static_cast<size_t>(size)) {
      std::vector<int64_t> ranks = submeshRanks(S, mesh, size, p.loc("mesh"));
      ir::Op *op = S.b->create(OpKind::SubmeshBarrier, loc, {submeshCounter(S, ranks, loc)}, {});
      op->setSubmeshMembers(ranks);
      return SVal::none();
    }
  }
  // Without a mesh: the kernel's cluster (FlagTree's full-cluster barrier; in a kernel without
  // clusters, each CTA is a cluster of one, and the barrier is the CTA's, with cluster-scope
  // memory ordering).
  S.b->create(OpKind::ClusterBarrier, loc, {}, {});
  return SVal::none();
}

/// The cluster rank of tle.remote's shard_id: `coords` (compile-time ints in range, or integer
/// scalars) along axes of `sizes`, linearised row-major into an i32 scalar; errors at `at`.
ir::Value *linearRank(Specializer &S, const std::vector<SVal> &coords, const std::vector<int64_t> &sizes, SourceLoc at) {
  ir::Value *rank = nullptr;
  int64_t known = 0;
  for (size_t i = 0; i < coords.size(); ++i) {
    const SVal &coord = coords[i];
    std::string what = coords.size() == 1 ? "remote() shard_id" : "remote() shard_id coordinate " + std::to_string(i);
    ir::Value *v = nullptr;
    if (coord.kind == SVal::Kind::Int) {
      if (coord.i < 0 || coord.i >= sizes[i])
        S.fail(at, what + " " + std::to_string(coord.i) + " is outside " +
                         (coords.size() == 1 ? "the cluster of " : "the axis of ") + std::to_string(sizes[i]) +
                         " CTAs");
      if (!rank) {
        known = known * sizes[i] + coord.i;
        continue;
      }
      v = S.b->constInt(at, DType::I32, coord.i);
    } else if (coord.isTensor() && coord.v->type.isScalar() && ir::isInteger(coord.v->type.dtype())) {
      v = S.castTo(coord.v, ir::ScalarType{DType::I32}, at);
    } else {
      S.fail(at, what + " must be an integer (or an integer scalar), got " + coord.describe());
    }
    if (!rank)
      rank = S.b->constInt(at, DType::I32, known);
    rank = S.b->binary(OpKind::Add, at, S.b->binary(OpKind::Mul, at, rank, S.b->constInt(at, DType::I32, sizes[i])), v);
  }
  if (!rank)
    rank = S.b->constInt(at, DType::I32, known);
  return rank;
}

SVal remote(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  if (p.has("space")) {
    const Arg &sp = p.get("space");
    if (sp.val.kind == SVal::Kind::Str && sp.val.s == "device")
      return deviceRemote(S, p, loc);
    if (sp.val.kind != SVal::Kind::Str || sp.val.s != "cluster")
      S.fail(sp.loc, "remote() space must be \"cluster\" or \"device\" (\"node\", across hosts, is not "
                     "supported), got " + sp.val.describe());
  }
  for (const char *k : {"dtype", "offset"})
    if (p.has(k))
      S.fail(p.loc(k), std::string("remote() ") + k + "= is for space=\"device\" (an NCCL window and an offset)");
  const Arg &x = p.get("tensor");
  ir::Value *ptr = x.val.kind == SVal::Kind::Buffer ? x.val.elts[0].v : x.val.isTensor() ? x.val.v : nullptr;
  if (!ptr || !ptr->type.elem.isPointer() || ptr->type.elem.space == AddrSpace::Global)
    S.fail(x.loc, "remote() needs a buffer (tle.gpu.alloc) or shared-memory pointers (tle.gpu.local_ptr), got " +
                    x.val.describe());
  if (ptr->type.elem.space == AddrSpace::Cluster && x.val.kind == SVal::Kind::Buffer)
    S.fail(x.loc, "remote() of " + x.val.describe() + ", which already addresses another CTA: remote() applies once "
                  "to a buffer");
  if (ptr->type.elem.space == AddrSpace::Cluster) {
    // FlagTree's rule: remote() of a pointer that already addresses a CTA of the cluster is that
    // pointer, for shard_id 0 (a compile-time 0, or coordinates that are all 0) only.
    const SVal &sa = p.get("shard_id").val;
    bool zero = sa.kind == SVal::Kind::Int ? sa.i == 0 : sa.kind == SVal::Kind::Tuple && !sa.elts.empty();
    for (const SVal &e : sa.kind == SVal::Kind::Tuple ? sa.elts : std::vector<SVal>{})
      zero &= e.kind == SVal::Kind::Int && e.i == 0;
    if (!zero)
      S.fail(p.loc("shard_id"), "remote() of " + x.val.describe() + ", which already addresses a CTA of the cluster, "
                                "takes only shard_id=0 (a compile-time 0: the pointer as it is), got " + sa.describe());
    return x.val;
  }
  const SVal *mesh = nullptr;
  int64_t size = S.fn->cluster[0];
  SVal launch;
  if (p.has("scope")) {
    mesh = &meshArg(S, p, "scope", "remote");
    launch = meshLaunch(*mesh);
    size = S.useMeshCluster(launch, p.loc("scope"));
  }
  // Without scope=: the kernel's cluster (in a kernel without clusters, each CTA is a cluster of
  // one, and only shard 0, the CTA itself, is in range).
  const Arg &sa = p.get("shard_id");
  if (!mesh && size == 1 && sa.val.kind == SVal::Kind::Int && sa.val.i != 0)
    S.fail(sa.loc, "remote() shard_id " + std::to_string(sa.val.i) + " in a kernel without a cluster, where each CTA "
                   "is a cluster of one (only shard 0, the CTA itself); pass scope=mesh to launch a cluster");
  // One coordinate (the rank) or one per cluster axis of the scope, linearised row-major; each
  // an integer, or an integer scalar known at run time (not range-checked).
  std::vector<SVal> coords = {sa.val};
  std::vector<int64_t> sizes = {size};
  if (sa.val.kind == SVal::Kind::Tuple && mesh && meshDerived(*mesh)) {
    // Coordinates in a sub-mesh (or a reshaped mesh): its member's physical id, whose rank in
    // its cluster is the id modulo the cluster size (the cluster axes are the innermost).
    if (sa.val.elts.size() != mesh->ints.size())
      S.fail(sa.loc, "remote() shard_id has " + std::to_string(sa.val.elts.size()) + " coordinates; " +
                       mesh->describe() + " has " + std::to_string(mesh->ints.size()) + " axes");
    int64_t linear = 0;
    for (size_t i = 0; i < sa.val.elts.size(); ++i) {
      const SVal &coord = sa.val.elts[i];
      if (coord.kind != SVal::Kind::Int || coord.i < 0 || coord.i >= mesh->ints[i])
        S.fail(sa.loc, "remote() shard_id coordinate " + std::to_string(i) + " in " + mesh->describe() +
                         " must be a compile-time integer in [0, " + std::to_string(mesh->ints[i]) + "), got " +
                         coord.describe());
      linear = linear * mesh->ints[i] + coord.i;
    }
    coords = {SVal::integer(meshPhysicalIds(*mesh)[linear] % size)};
  } else if (sa.val.kind == SVal::Kind::Tuple) {
    if (!mesh)
      S.fail(sa.loc, "remote() shard_id as a tuple needs scope= (the mesh its coordinates index)");
    size_t first = firstClusterAxis(S, *mesh, p.loc("scope"));
    if (sa.val.elts.size() != mesh->ints.size() - first)
      S.fail(sa.loc, "remote() shard_id has " + std::to_string(sa.val.elts.size()) + " coordinates; " +
                       mesh->describe() + " has " + std::to_string(mesh->ints.size() - first) + " cluster axes");
    coords = sa.val.elts;
    sizes.assign(mesh->ints.begin() + first, mesh->ints.end());
  }
  ir::Value *rank = linearRank(S, coords, sizes, sa.loc);
  ir::Type rt = ptr->type.withElem(ir::ScalarType::ptrTo(ptr->type.elem.pointee, AddrSpace::Cluster));
  ir::Value *remote = S.b->create(OpKind::RemotePtr, loc, {ptr, rank}, {rt})->result();
  if (x.val.kind == SVal::Kind::Buffer) {
    SVal r = x.val;
    r.elts[0] = SVal::tensor(remote);
    return r;
  }
  return SVal::tensor(remote);
}

/// The NVMMA swizzle (bytes) of a buffer of `shape` with `eb`-byte elements: the widest of 128,
/// 64 and 32 that its rows (the last dim) fill whole, given rows in groups of 8; 0 (row-major)
/// for rank 1 or shapes the layout does not fit (PTX ISA §9.7.15.5.1).
int nvmmaSwizzle(const std::vector<int64_t> &shape, unsigned eb) {
  if (shape.size() < 2 || shape[shape.size() - 2] % 8)
    return 0;
  int64_t rowBytes = shape.back() * eb;
  for (int s : {128, 64, 32})
    if (rowBytes % s == 0)
      return s;
  return 0;
}

/// alloc()'s `layout=`: a tle.gpu.swizzled_shared_layout.make_default(rank) (row-major: 0) or
/// a tle.gpu.nv_mma_shared_layout.make_default(shape, dtype) (the NVMMA layout: 1) fitting a
/// buffer of `shape` and `et`; anything else is a located error.
int layoutRequest(Specializer &S, const Arg &a, const std::vector<int64_t> &shape, ir::ScalarType et) {
  const SVal &l = a.val;
  if (l.kind != SVal::Kind::Namespace || l.s != "shared_layout")
    S.fail(a.loc, "alloc() layout must be tle.gpu.swizzled_shared_layout.make_default(rank) or "
                  "tle.gpu.nv_mma_shared_layout.make_default(shape, dtype), got " + l.describe());
  if (l.attr("kind").s == "swizzled") {
    if (l.attr("rank").i != int64_t(shape.size()))
      S.fail(a.loc, "alloc() layout is of rank " + std::to_string(l.attr("rank").i) + ", the buffer of rank " +
                        std::to_string(shape.size()));
    return 0;
  }
  std::vector<int64_t> ls;
  for (const SVal &d : l.attr("shape").elts)
    ls.push_back(d.i);
  bool fits = ls.size() <= shape.size() && std::equal(ls.rbegin(), ls.rend(), shape.rbegin());
  if (!fits || l.attr("dtype").dtype != et)
    S.fail(a.loc, "alloc() layout was made for another shape or dtype than the buffer's (" + et.str() +
                      "; the layout's shape must be the buffer's last dims)");
  return 1;
}

SVal swizzledLayout(Specializer &S, const BuiltinCall &c) {
  const Arg &r = c.p.get("rank");
  if (r.val.kind != SVal::Kind::Int || r.val.i < 1 || r.val.i > 8)
    S.fail(r.loc, "make_default() rank must be a compile-time integer from 1 to 8, got " + r.val.describe());
  return SVal::record("shared_layout", {{"kind", SVal::str("swizzled")}, {"rank", r.val}});
}

SVal nvmmaLayout(Specializer &S, const BuiltinCall &c) {
  const Arg &sh = c.p.get("shape");
  std::vector<SVal> dims = sh.val.kind == SVal::Kind::Tuple ? sh.val.elts : std::vector<SVal>{sh.val};
  for (const SVal &d : dims)
    if (d.kind != SVal::Kind::Int || d.i < 1)
      S.fail(sh.loc, "make_default() shape must be a list of positive compile-time integers, got " + sh.val.describe());
  return SVal::record("shared_layout", {{"kind", SVal::str("nv_mma")},
                                        {"shape", SVal::tuple(dims)},
                                        {"dtype", SVal::dtypeOf(c.p.dtype("dtype"))}});
}

SVal alloc(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const Arg &sh = p.get("shape");
  std::vector<int64_t> shape;
  if (sh.val.kind == SVal::Kind::Int)
    shape.push_back(sh.val.i);
  else if (sh.val.kind == SVal::Kind::Tuple)
    for (const SVal &d : sh.val.elts) {
      if (d.kind != SVal::Kind::Int)
        S.fail(sh.loc, "alloc() shape must hold compile-time integers, got " + d.describe());
      shape.push_back(d.i);
    }
  else
    S.fail(sh.loc, "alloc() shape must be a list of compile-time integers, got " + sh.val.describe());
  if (shape.empty())
    S.fail(sh.loc, "alloc() shape needs at least one dimension");
  for (int64_t d : shape)
    if (d < 1)
      S.fail(sh.loc, "alloc() shape dims must be positive, got " + std::to_string(d));
  ir::ScalarType et = p.dtype("dtype");
  if (et.isPointer() || et.dtype == DType::I1)
    S.fail(p.loc("dtype"), "alloc() dtype must be a number type (not a pointer or int1), got " + et.str());
  int64_t n = ir::numElements(shape);
  constexpr int64_t kMaxBytes = 227 * 1024; // shared memory one CTA may have on sm_90
  if (n > kMaxBytes || n * ir::storageBytes(et.dtype) > kMaxBytes)
    S.fail(sh.loc, "alloc() of " + std::to_string(n) + " " + et.str() + " elements exceeds the " +
                     std::to_string(kMaxBytes) + " bytes of shared memory a CTA can have");

  if (p.has("scope")) {
    const Arg &sc = p.get("scope");
    if (sc.val.kind != SVal::Kind::Str || sc.val.s != "tle.gpu.smem")
      S.fail(sc.loc, "alloc() scope must be tle.gpu.smem (the only memory tlec allocates), got " + sc.val.describe());
  }
  // FlagTree's default (nv_mma_shared_layout not given) is the NVMMA layout: here for 8- and
  // 16-bit matrices (wgmma's and TMA's operands), row-major for other buffers (histograms,
  // counters, fp32 staging); True asks for it for any dtype (tf32 operands), False for row-major.
  int mma = -1;
  if (p.has("nv_mma_shared_layout"))
    mma = strictBool(S, p, "alloc", "nv_mma_shared_layout") ? 1 : 0;
  if (p.has("layout")) // an explicit layout wins, as in FlagTree
    mma = layoutRequest(S, p.get("layout"), shape, et);
  unsigned eb = ir::storageBytes(et.dtype);
  int swizzle = mma == 0 || (mma < 0 && eb > 2) ? 0 : nvmmaSwizzle(shape, eb);
  ir::Op *op = S.b->create(OpKind::LocalAlloc, loc, {}, {ir::Type(ir::ScalarType::ptrTo(et.dtype, AddrSpace::Shared))});
  op->setAllocShape(shape);
  op->setAllocSwizzle(swizzle);
  SVal buf;
  buf.kind = SVal::Kind::Buffer;
  buf.elts = {SVal::tensor(op->result())};
  buf.ints = shape;
  buf.i = swizzle;
  if (p.has("init_value")) {
    for (int64_t d : shape)
      if (d & (d - 1))
        S.fail(p.loc("init_value"), "alloc() init_value needs a buffer of power-of-two dims (a tile of its shape), got " +
                                      buf.describe());
    CallArgs lp{loc, {Arg{loc, buf}}, {}};
    SVal ptrs = S.callBuiltin("tle.gpu.local_ptr", lp);
    CallArgs st{loc, {Arg{loc, ptrs}, p.get("init_value")}, {}};
    S.callBuiltin("tl.store", st);
  }
  return buf;
}

/// The element offsets, in a buffer of `shape` in the NVMMA layout of `swizzle` bytes, of the
/// elements at row-major offsets `off` (i32, scalar or tile): for each matrix [R, C] of the last
/// two dims, column block c * eb / swizzle of R rows of swizzle bytes, the 16-byte chunks of a
/// row XOR-ed with bits 7.. of the byte offset (the backend's swizzledOffset).
ir::Value *swizzledOffsets(Specializer &S, ir::Value *off, const std::vector<int64_t> &shape, int swizzle, unsigned eb,
                           SourceLoc loc) {
  int64_t R = shape[shape.size() - 2], C = shape.back(), perRow = swizzle / eb;
  auto k = [&](int64_t v) {
    ir::Value *c = S.b->constInt(loc, DType::I32, v);
    return off->type.isTile() ? S.b->splat(loc, c, off->type.shape) : c;
  };
  auto op = [&](OpKind kind, ir::Value *a, ir::Value *b) { return S.b->binary(kind, loc, a, b); };
  ir::Value *matrix = op(OpKind::IDiv, off, k(R * C)), *inMatrix = op(OpKind::IRem, off, k(R * C));
  ir::Value *row = op(OpKind::IDiv, inMatrix, k(C)), *col = op(OpKind::IRem, inMatrix, k(C));
  ir::Value *bytes = op(OpKind::Add, op(OpKind::Mul, op(OpKind::IDiv, col, k(perRow)), k(R * swizzle)),
                        op(OpKind::Add, op(OpKind::Mul, row, k(swizzle)), op(OpKind::Mul, op(OpKind::IRem, col, k(perRow)), k(eb))));
  ir::Value *sel = op(OpKind::And, op(OpKind::Shr, bytes, k(7)), k(swizzle / 16 - 1));
  bytes = op(OpKind::Xor, bytes, op(OpKind::Shl, sel, k(4)));
  return op(OpKind::Add, op(OpKind::Mul, matrix, k(R * C)), op(OpKind::IDiv, bytes, k(eb)));
}

SVal localPtr(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const Arg &ba = p.get("buffer");
  if (ba.val.kind != SVal::Kind::Buffer)
    S.fail(ba.loc, "local_ptr() buffer must be a buffer from tle.gpu.alloc, got " + ba.val.describe());
  const std::vector<int64_t> &shape = ba.val.ints;
  ir::Value *base = ba.val.elts[0].v;
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size() - 1; d > 0; --d)
    strides[d - 1] = strides[d] * shape[d];
  ir::Value *off = nullptr;
  if (p.has("offsets")) { // FlagTree's flat form: row-major element indices, any tile shape
    const Arg &oa = p.get("offsets");
    if (p.has("indices"))
      S.fail(oa.loc, "local_ptr() takes indices or offsets, not both");
    if (!oa.val.isTensor() || !ir::isInteger(oa.val.v->type.dtype()) || oa.val.v->type.dtype() == DType::I1)
      S.fail(oa.loc, "local_ptr() offsets must be a tile of integer element indices, got " + oa.val.describe());
    off = S.castTo(oa.val.v, ir::ScalarType{DType::I32}, oa.loc);
  } else if (!p.has("indices")) { // the whole buffer, as a tile of its shape
    for (int64_t d : shape)
      if (d & (d - 1))
        S.fail(ba.loc, "local_ptr() of the whole " + ba.val.describe() +
                         " needs power-of-two dims (it is a tile); pass indices for other shapes");
    if (std::string why = ir::tileLimitError(shape); !why.empty())
      S.fail(ba.loc, "local_ptr() of the whole " + ba.val.describe() + " would be a tile of " + why);
    for (size_t d = 0; d < shape.size(); ++d) {
      ir::Op *ar = S.b->create(OpKind::Arange, loc, {}, {ir::Type(ir::ScalarType{DType::I32}, {shape[d]})});
      ar->setArangeBounds(0, shape[d]);
      ir::Value *v = ar->result();
      if (strides[d] != 1)
        v = S.b->binary(OpKind::Mul, loc, v, S.b->splat(loc, S.b->constInt(loc, DType::I32, strides[d]), {shape[d]}));
      for (size_t e = 0; e < shape.size(); ++e)
        if (e != d)
          v = S.expandDims(v, static_cast<int>(e), loc);
      v = S.broadcastTo(v, shape, loc);
      off = off ? S.b->binary(OpKind::Add, loc, off, v) : v;
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
      S.fail(ia.loc, "local_ptr() needs one index per buffer dim: " + std::to_string(shape.size()) + " for " +
                       ba.val.describe() + ", got " + std::to_string(idx.size()));
    for (size_t d = 0; d < idx.size(); ++d) {
      const SVal &v = idx[d].val;
      bool ok = (v.isNumber() && v.kind != SVal::Kind::Float) || (v.isTensor() && ir::isInteger(v.v->type.dtype()));
      if (!ok)
        S.fail(ia.loc, "local_ptr() index " + std::to_string(d) + " must be an integer scalar or tile, got " +
                         v.describe());
      ir::Value *t = S.castTo(S.toTensor(v, ia.loc), ir::ScalarType{DType::I32}, ia.loc);
      if (strides[d] != 1) {
        ir::Value *s = S.b->constInt(loc, DType::I32, strides[d]);
        t = S.b->binary(OpKind::Mul, loc, t, t->type.isTile() ? S.b->splat(loc, s, t->type.shape) : s);
      }
      if (off)
        S.broadcastPair(off, t, ia.loc);
      off = off ? S.b->binary(OpKind::Add, loc, off, t) : t;
    }
  }
  if (ba.val.i) // the NVMMA layout: the element at these row-major offsets is elsewhere
    off = swizzledOffsets(S, off, shape, ba.val.i, ir::storageBytes(base->type.elem.pointee), loc);
  ir::Value *ptrs = off->type.isTile() ? S.b->splat(loc, base, off->type.shape) : base;
  SVal r = SVal::tensor(S.b->create(OpKind::AddPtr, loc, {ptrs, off}, {ptrs->type})->result());
  if (ba.val.i && !p.has("indices") && !p.has("offsets") && shape.size() == 2 && base->type.elem.space == AddrSpace::Shared)
    S.matrixViews[r.v] = base; // tl.load / tl.store of it: local_load / local_store
  return r;
}

/// The whole buffer's pointer tile (tle.gpu.local_ptr without indices) of the buffer argument `name`.
SVal wholeView(Specializer &S, const BuiltinCall &c, const char *name) {
  const Arg &ba = c.p.get(name);
  if (ba.val.kind != SVal::Kind::Buffer)
    S.fail(ba.loc, c.fname + "() " + name + " must be a buffer from tle.gpu.alloc, got " + ba.val.describe());
  CallArgs args{c.loc, {ba}, {}};
  return S.callBuiltin("tle.gpu.local_ptr", args);
}

/// FlagTree's tle.gpu.local_load(buffer): the whole buffer as a tile of its shape and dtype (a
/// tl.load of its full local_ptr view: an NVMMA matrix becomes a local_load op).
SVal localLoad(Specializer &S, const BuiltinCall &c) {
  CallArgs ld{c.loc, {Arg{c.loc, wholeView(S, c, "buffer")}}, {}};
  return S.callBuiltin("tl.load", ld);
}

/// FlagTree's tle.gpu.local_store(dst, src): src (a tile of dst's shape, or a scalar broadcast
/// to it) written over the whole buffer, converted to its dtype.
SVal localStore(Specializer &S, const BuiltinCall &c) {
  SVal view = wholeView(S, c, "dst");
  const Arg &src = c.p.get("src");
  if (!src.val.isTensor() && !src.val.isNumber())
    S.fail(src.loc, "local_store() src must be a tile or a scalar, got " + src.val.describe());
  CallArgs st{c.loc, {Arg{c.loc, view}, src}, {}};
  S.callBuiltin("tl.store", st);
  return SVal::none();
}

} // namespace

std::vector<BuiltinSpec> tleBuiltins() {
  return {
      {"tle.shard_id", "mesh, axis, device_dptr=None, comm_ptr=None", shardId},
      {"tle.remote", "tensor, shard_id, scope=None, space='cluster', dtype=None, offset=None", remote},
      {"tle.distributed_barrier", "mesh=None, device_dptr=None, space=None", distributedBarrier},
      {"tle.gpu.alloc", "shape, dtype, layout=None, scope=tle.gpu.smem, init_value=None, nv_mma_shared_layout=None",
       alloc},
      {"tle.gpu.local_ptr", "buffer, indices=None, offsets=None", localPtr},
      {"tle.gpu.local_load", "buffer", localLoad},
      {"tle.gpu.local_store", "dst, src", localStore},
      {"swizzled_shared_layout.make_default", "rank", swizzledLayout},
      {"nv_mma_shared_layout.make_default", "shape, dtype", nvmmaLayout},
      {"buffer.slot", "index", bufferSlot},
  };
}

} // namespace tle::sema
