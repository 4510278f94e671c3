// TLE device meshes as compile-time values (FlagTree's tle.device_mesh and tle.MeshConfig): their
// topology levels, sub-meshes (mesh[0, :]), reshape/flatten and attributes. docs/language.md
// "Clusters and shared buffers" states the rules; Distributed.cpp uses the meshes.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>

#include <algorithm>
#include <optional>

namespace tle::sema {

using llvm::dyn_cast;

namespace {

/// The most members (the product of the axis sizes) a device mesh may have. A mesh's
/// physical_ids are a compile-time tuple, so this is the tuple limit (docs/language.md); without
/// it, an axis of 2^62 made every use that lists the ids (a barrier, a sub-mesh, reshape,
/// mesh.size) allocate without bound.
constexpr int64_t kMaxMeshMembers = static_cast<int64_t>(Specializer::kMaxTupleElements);

/// MeshConfig's fields, outermost level first (FlagTree's dataclass order).
const char *const kMeshConfigFields[] = {"node", "device", "chiplet", "block_cluster", "block"};

MeshLevel levelOf(const std::string &level) {
  if (level == "node")
    return MeshLevel::Node;
  if (level == "device")
    return MeshLevel::Device;
  if (level == "chiplet")
    return MeshLevel::Chiplet;
  if (level == "block_cluster")
    return MeshLevel::BlockCluster;
  if (level == "block")
    return MeshLevel::Block;
  return MeshLevel::Other;
}

/// A tuple of compile-time ints.
SVal ints(const std::vector<int64_t> &v) {
  std::vector<SVal> r;
  for (int64_t x : v)
    r.push_back(SVal::integer(x));
  return SVal::tuple(r);
}

/// The axis names of `mesh` as plain strings (their levels dropped).
SVal names(const SVal &mesh) {
  std::vector<SVal> r;
  for (size_t k = 0; k < mesh.ints.size(); ++k)
    r.push_back(SVal::str(mesh.elts[k].s));
  return SVal::tuple(r);
}

/// A derived mesh: `shape` and the axes `axes` (names with their levels) over `ids`, physical
/// ids of `parent`'s launch mesh.
SVal derived(const SVal &parent, std::vector<int64_t> shape, std::vector<SVal> axes, const std::vector<int64_t> &ids) {
  SVal r;
  r.kind = SVal::Kind::Mesh;
  r.ints = std::move(shape);
  r.elts = std::move(axes);
  r.elts.push_back(SVal::tuple({ints(ids), meshLaunch(parent)}));
  return r;
}

/// The (name, size) axes of one topology level; errors at `at`.
void addLevel(Specializer &S, SVal &mesh, const SVal &level, const SVal &v, SourceLoc at) {
  if (level.kind != SVal::Kind::Str || level.s.empty())
    S.fail(at, "device_mesh() level names must be non-empty strings, got " + level.describe());
  MeshLevel lv = levelOf(level.s);
  auto addAxis = [&](const SVal &axisName, const SVal &size) {
    if (axisName.kind != SVal::Kind::Str || axisName.s.empty())
      S.fail(at, "device_mesh() axis names must be non-empty strings, got " + axisName.describe());
    if (size.kind != SVal::Kind::Int || size.i < 1)
      S.fail(at, "device_mesh() axis '" + axisName.s + "' needs a positive integer size, got " + size.describe());
    for (size_t k = 0; k < mesh.ints.size(); ++k)
      if (mesh.elts[k].s == axisName.s)
        S.fail(at, "device_mesh() has two axes named '" + axisName.s + "'");
    SVal name = SVal::str(axisName.s);
    name.i = static_cast<int64_t>(lv);
    mesh.elts.push_back(name);
    mesh.ints.push_back(size.i);
  };
  if (v.kind == SVal::Kind::Int) { // one axis named as the level
    addAxis(level, v);
    return;
  }
  if (v.kind != SVal::Kind::Tuple)
    S.fail(at, "device_mesh() level " + level.describe() + " must be a size or a list of (name, size) pairs, got " +
                 v.describe());
  if (v.elts.empty())
    S.fail(at, "device_mesh() level " + level.describe() + " has no axes");
  for (const SVal &ax : v.elts) {
    if (ax.kind != SVal::Kind::Tuple || ax.elts.size() != 2)
      S.fail(at, "device_mesh() level " + level.describe() + " must list (name, size) pairs, got " + ax.describe());
    addAxis(ax.elts[0], ax.elts[1]);
  }
}

/// The levels across GPUs (node, device, chiplet) come first, in that order: a level inside
/// another of these, or inside a block level, has no meaning.
void checkLevelOrder(Specializer &S, const SVal &mesh, SourceLoc at) {
  MeshLevel prev = MeshLevel::Node;
  std::string prevName;
  bool inner = false; // a level other than node/device/chiplet was seen
  for (size_t k = 0; k < mesh.ints.size(); ++k) {
    MeshLevel lv = meshAxisLevel(mesh, k);
    bool gpuLevel = lv == MeshLevel::Node || lv == MeshLevel::Device || lv == MeshLevel::Chiplet;
    if (gpuLevel && (inner || lv < prev))
      S.fail(at, "device_mesh() level '" + std::string(meshLevelName(lv)) + "' (axis '" + mesh.elts[k].s +
                     "') must come before " + (inner ? "the levels of blocks" : "level '" + prevName + "'") +
                     ": levels go from the outermost (node, device, chiplet) to the innermost");
    if (gpuLevel) {
      prev = lv;
      prevName = meshLevelName(lv);
    } else {
      inner = true;
    }
  }
}

/// Fails at `at` when `mesh` has more than kMaxMeshMembers members (sizes are >= 1, so the
/// running product never overflows before it passes the limit).
void checkMeshSize(Specializer &S, const SVal &mesh, SourceLoc at) {
  int64_t members = 1;
  for (int64_t d : mesh.ints) {
    if (d > kMaxMeshMembers / members)
      S.fail(at, "compile-time work limit: " + mesh.describe() + " has more than " +
                     std::to_string(kMaxMeshMembers) + " members (the limit of a tuple: mesh.physical_ids is one)");
    members *= d;
  }
}

SVal deviceMesh(Specializer &S, const BuiltinCall &c) {
  const Arg &t = c.p.get("topology");
  SVal mesh;
  mesh.kind = SVal::Kind::Mesh;
  if (t.val.kind == SVal::Kind::Namespace && t.val.s == "MeshConfig") {
    for (size_t i = 0; i + 1 < t.val.elts.size(); i += 2)
      if (t.val.elts[i + 1].kind != SVal::Kind::None)
        addLevel(S, mesh, t.val.elts[i], t.val.elts[i + 1], t.loc);
  } else if (t.val.kind == SVal::Kind::Dict) {
    for (size_t i = 0; i + 1 < t.val.elts.size(); i += 2)
      addLevel(S, mesh, t.val.elts[i], t.val.elts[i + 1], t.loc);
  } else {
    S.fail(t.loc, "device_mesh() topology must be a dict of levels ({\"block_cluster\": [(\"cluster_x\", 2)]}) or a "
                  "tle.MeshConfig, got " + t.val.describe());
  }
  if (mesh.ints.empty())
    S.fail(t.loc, "device_mesh() needs at least one axis (the topology is empty)");
  checkLevelOrder(S, mesh, t.loc);
  checkMeshSize(S, mesh, t.loc);
  // The cluster axes (FlagTree's rule: names containing "cluster") are the innermost, so that a
  // cluster is a run of consecutive program ids.
  bool cluster = false;
  for (size_t k = 0; k < mesh.ints.size(); ++k) {
    bool here = mesh.elts[k].s.find("cluster") != std::string::npos;
    if (cluster && !here)
      S.fail(t.loc, mesh.describe() + ": the cluster axes (names containing 'cluster') must be the innermost axes, "
                                      "after every other axis" +
                      (t.val.kind == SVal::Kind::Namespace
                           ? std::string(" (tle.MeshConfig puts block_cluster before block: give the topology as a "
                                         "dict, block first)")
                           : std::string()));
    cluster |= here;
  }
  return mesh;
}

/// tle.MeshConfig(node=None, device=None, chiplet=None, block_cluster=None, block=None): a
/// topology; device_mesh drops the levels that are None.
SVal meshConfig(Specializer &S, const BuiltinCall &c) {
  SVal r;
  r.kind = SVal::Kind::Namespace;
  r.s = "MeshConfig";
  for (const char *f : kMeshConfigFields) {
    r.elts.push_back(SVal::str(f));
    r.elts.push_back(c.p.has(f) ? c.p.get(f).val : SVal::none());
  }
  return r;
}

/// mesh.reshape(*shape) and mesh.flatten(): the same physical ids, row-major, in a new shape;
/// the axes keep their names when the rank is kept, else are named flat or dim0, dim1, ...
SVal reshapeMesh(Specializer &S, const SVal &mesh, std::vector<int64_t> shape, SourceLoc loc) {
  std::vector<int64_t> ids = meshPhysicalIds(mesh);
  for (int64_t d : shape)
    if (d < 1)
      S.fail(loc, "reshape() dims of a mesh must be positive, got " + std::to_string(d));
  // The product stops growing once past the mesh's size, so it cannot overflow.
  int64_t size = 1, n = static_cast<int64_t>(ids.size());
  for (size_t k = 0; k < shape.size() && size <= n; ++k)
    size = shape[k] > n ? n + 1 : size * shape[k];
  if (shape.empty() || size != n)
    S.fail(loc, "cannot reshape " + describeMesh(mesh) + " of size " + std::to_string(ids.size()) + " into shape " +
                    constexprRecord(ints(shape)));
  std::vector<SVal> axes;
  for (size_t k = 0; k < shape.size(); ++k)
    axes.push_back(shape.size() == mesh.ints.size() ? mesh.elts[k]
                   : shape.size() == 1              ? SVal::str("flat")
                                                    : SVal::str("dim" + std::to_string(k)));
  return derived(mesh, shape, axes, ids);
}

SVal meshReshape(Specializer &S, const BuiltinCall &c) {
  std::vector<int64_t> shape;
  if (!c.args.kw.empty())
    S.fail(c.args.kw[0].second.loc, "reshape() of a mesh takes no keyword arguments");
  std::vector<Arg> dims = c.args.pos;
  if (dims.size() == 1 && dims[0].val.kind == SVal::Kind::Tuple) {
    SourceLoc at = dims[0].loc;
    std::vector<SVal> elts = dims[0].val.elts;
    dims.clear();
    for (const SVal &e : elts)
      dims.push_back(Arg{at, e});
  }
  for (const Arg &d : dims) {
    if (d.val.kind != SVal::Kind::Int)
      S.fail(d.loc, "reshape() of a mesh takes compile-time integer dims, got " + d.val.describe());
    shape.push_back(d.val.i);
  }
  return reshapeMesh(S, *c.self, shape, c.loc);
}

SVal meshFlatten(Specializer &S, const BuiltinCall &c) {
  return reshapeMesh(S, *c.self, {static_cast<int64_t>(meshPhysicalIds(*c.self).size())}, c.loc);
}

} // namespace

bool meshDerived(const SVal &mesh) { return mesh.elts.size() > mesh.ints.size(); }

SVal meshLaunch(const SVal &mesh) { return meshDerived(mesh) ? mesh.elts.back().elts[1] : mesh; }

std::vector<int64_t> meshPhysicalIds(const SVal &mesh) {
  std::vector<int64_t> ids;
  if (meshDerived(mesh)) {
    for (const SVal &e : mesh.elts.back().elts[0].elts)
      ids.push_back(e.i);
    return ids;
  }
  for (int64_t i = 0, n = ir::numElements(mesh.ints); i < n; ++i)
    ids.push_back(i);
  return ids;
}

MeshLevel meshAxisLevel(const SVal &mesh, size_t axis) { return static_cast<MeshLevel>(mesh.elts[axis].i); }

const char *meshLevelName(MeshLevel level) {
  switch (level) {
  case MeshLevel::Node: return "node";
  case MeshLevel::Device: return "device";
  case MeshLevel::Chiplet: return "chiplet";
  case MeshLevel::BlockCluster: return "block_cluster";
  case MeshLevel::Block: return "block";
  case MeshLevel::Other: break;
  }
  return "other";
}

std::string describeMesh(const SVal &mesh) {
  std::string r = "device_mesh(";
  for (size_t k = 0; k < mesh.ints.size(); ++k)
    r += (k ? ", " : "") + mesh.elts[k].s + "=" + std::to_string(mesh.ints[k]);
  r += ")";
  if (!meshDerived(mesh))
    return r;
  std::string ids;
  for (int64_t id : meshPhysicalIds(mesh))
    ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  return r + "[ids " + ids + " of " + describeMesh(meshLaunch(mesh)) + "]";
}

std::optional<SVal> meshAttribute(const SVal &mesh, const std::string &attr) {
  if (attr == "shape")
    return ints(mesh.ints);
  if (attr == "dim_names")
    return names(mesh);
  if (attr == "ndim")
    return SVal::integer(static_cast<int64_t>(mesh.ints.size()));
  if (attr == "size")
    return SVal::integer(static_cast<int64_t>(meshPhysicalIds(mesh).size()));
  if (attr == "physical_ids")
    return ints(meshPhysicalIds(mesh));
  if (attr == "launch_shape")
    return ints(meshLaunch(mesh).ints);
  if (attr == "launch_dim_names")
    return names(meshLaunch(mesh));
  return std::nullopt;
}

SVal Specializer::meshSubscript(const SVal &mesh, const ast::SubscriptExpr *e, Env &env) {
  // FlagTree's device_mesh.__getitem__: an int drops its axis, a slice keeps the axis with the
  // ids it selects, one '...' stands for the axes not indexed; absent trailing indices are ':'.
  size_t ndim = mesh.ints.size();
  std::vector<const ast::Expr *> idx(e->indices.begin(), e->indices.end());
  size_t ellipses = 0, at = 0;
  for (size_t k = 0; k < idx.size(); ++k)
    if (auto *o = dyn_cast<ast::OtherExpr>(idx[k]); o && o->what == "ellipsis") {
      ++ellipses;
      at = k;
    }
  if (ellipses > 1)
    fail(e->loc(), "an index of " + describeMesh(mesh) + " can only have a single ellipsis");
  if (idx.size() - ellipses > ndim)
    fail(e->loc(), "too many indices for " + describeMesh(mesh) + ": " + std::to_string(idx.size() - ellipses) +
                       " for " + std::to_string(ndim) + " axes");
  if (ellipses) {
    idx.erase(idx.begin() + at);
    idx.insert(idx.begin() + at, ndim - idx.size(), nullptr);
  }
  idx.resize(ndim, nullptr); // nullptr: ':'
  std::vector<std::vector<int64_t>> picked(ndim);
  std::vector<int64_t> shape;
  std::vector<SVal> axes;
  for (size_t d = 0; d < ndim; ++d) {
    int64_t n = mesh.ints[d];
    auto *sl = idx[d] ? dyn_cast<ast::SliceExpr>(idx[d]) : nullptr;
    if (idx[d] && !sl) {
      SVal v = eval(idx[d], env);
      if (v.kind != SVal::Kind::Int)
        fail(idx[d]->loc(), "device_mesh indices must be compile-time ints, slices or '...', got " + v.describe());
      int64_t i = v.i < 0 ? v.i + n : v.i;
      if (i < 0 || i >= n)
        fail(idx[d]->loc(), "index " + std::to_string(v.i) + " is out of range for axis '" + mesh.elts[d].s +
                                "' of size " + std::to_string(n));
      picked[d] = {i};
      continue;
    }
    if (sl) { // Python's slice.indices(n)
      picked[d] = sliceIndices(sl, n, env);
    } else { // an axis '...' or no index covers
      for (int64_t i = 0; i < n; ++i)
        picked[d].push_back(i);
    }
    if (picked[d].empty())
      fail(idx[d] ? idx[d]->loc() : e->loc(), "the slice selects no index of axis '" + mesh.elts[d].s +
                                                  "': an empty sub-mesh is not supported");
    shape.push_back(static_cast<int64_t>(picked[d].size()));
    axes.push_back(mesh.elts[d]);
  }
  // The physical ids of the selected coordinates, row-major.
  std::vector<int64_t> parentIds = meshPhysicalIds(mesh), ids;
  std::vector<size_t> pos(ndim, 0);
  while (true) {
    int64_t linear = 0;
    for (size_t d = 0; d < ndim; ++d)
      linear = linear * mesh.ints[d] + picked[d][pos[d]];
    ids.push_back(parentIds[linear]);
    size_t d = ndim;
    for (; d > 0; --d) {
      if (++pos[d - 1] < picked[d - 1].size())
        break;
      pos[d - 1] = 0;
    }
    if (d == 0)
      break;
  }
  return derived(mesh, shape, axes, ids);
}

std::vector<BuiltinSpec> meshBuiltins() {
  return {
      {"tle.device_mesh", "topology", deviceMesh},
      {"tle.MeshConfig", "node=None, device=None, chiplet=None, block_cluster=None, block=None", meshConfig},
      {"mesh.reshape", "*shape", meshReshape, kBindsOwnArguments},
      {"mesh.flatten", "", meshFlatten},
  };
}

} // namespace tle::sema
