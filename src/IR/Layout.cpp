// Layouts as linear maps over GF(2).
#include "tle/IR/Layout.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace tle::ir {

namespace {

Layout::Basis zeroBasis(unsigned rank) { return Layout::Basis(rank, 0); }

void xorInto(Layout::Basis &acc, const Layout::Basis &b) {
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] ^= b[i];
}

std::string basesStr(const std::vector<Layout::Basis> &bs) {
  std::string s = "[";
  for (size_t i = 0; i < bs.size(); ++i) {
    s += i ? ",(" : "(";
    for (size_t j = 0; j < bs[i].size(); ++j)
      s += (j ? "," : "") + std::to_string(bs[i][j]);
    s += ")";
  }
  return s + "]";
}

int log2Exact(int64_t x) {
  int k = 0;
  while ((int64_t(1) << k) < x)
    ++k;
  return k;
}

} // namespace

bool registerBitsDisjoint(const Layout &l) {
  for (unsigned d = 0; d < l.rank(); ++d) {
    int64_t regBits = 0, threadBits = 0;
    for (auto &b : l.reg)
      regBits |= b[d];
    for (auto &b : l.lane)
      threadBits |= b[d];
    for (auto &b : l.warp)
      threadBits |= b[d];
    if (regBits & threadBits)
      return false;
  }
  return true;
}

int64_t stagedOffset(const std::vector<int64_t> &shape, unsigned elemBytes, const Layout::Basis &coord) {
  int64_t idx = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    idx = idx * shape[d] + coord[d];
  int64_t off = idx * elemBytes;
  int64_t rowBytes = shape.back() * elemBytes;
  if (shape.size() >= 2 && rowBytes >= 128)
    off ^= ((off / rowBytes) & 7) << 4;
  return off;
}

Layout::Basis Layout::regCoord(int r) const {
  Basis c = zeroBasis(rank());
  for (size_t i = 0; i < reg.size(); ++i)
    if (r & (1 << i))
      xorInto(c, reg[i]);
  return c;
}

std::string Layout::str() const {
  std::string s = "#linear<[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  s += "] reg=" + basesStr(reg) + " lane=" + basesStr(lane) + " warp=" + basesStr(warp) + ">";
  return s;
}

std::string layoutError(const Layout &l) {
  if (l.shape.empty())
    return "has no dims";
  int bits = 0;
  std::vector<int> offset; // where each dim's bits start in a flattened coordinate
  for (int64_t d : l.shape) {
    if (d < 1 || (d & (d - 1)) || d > (int64_t(1) << 30))
      return "has a dim of " + std::to_string(d) + ", not a power of two up to 2^30";
    offset.push_back(bits);
    bits += log2Exact(d);
  }
  if (bits > 62)
    return "has more than 2^62 elements";
  if (l.lane.size() != 5)
    return "has " + std::to_string(l.lane.size()) + " lane bases; a warp has 32 lanes (5 bases)";
  if (l.reg.size() > 16 || l.warp.size() > 5)
    return "has more than 2^16 registers or 32 warps";
  // Gaussian elimination over GF(2) on the flattened coordinates of the bases.
  uint64_t pivot[64] = {}; // the reduced basis, by highest bit
  int rank = 0;
  for (const auto *bases : {&l.reg, &l.lane, &l.warp})
    for (const Layout::Basis &b : *bases) {
      if (b.size() != l.rank())
        return "has a basis of " + std::to_string(b.size()) + " coordinates for a rank-" + std::to_string(l.rank()) +
               " tile";
      uint64_t v = 0;
      for (unsigned i = 0; i < l.rank(); ++i) {
        if (b[i] < 0 || b[i] >= l.shape[i])
          return "has a basis coordinate " + std::to_string(b[i]) + " outside its dim of " + std::to_string(l.shape[i]);
        v |= uint64_t(b[i]) << offset[i];
      }
      for (int bit = 63; bit >= 0 && v; --bit) {
        if (!((v >> bit) & 1))
          continue;
        if (!pivot[bit]) {
          pivot[bit] = v;
          ++rank;
          break;
        }
        v ^= pivot[bit];
      }
    }
  if (rank != bits)
    return "reaches 2^" + std::to_string(rank) + " of the tile's 2^" + std::to_string(bits) +
           " elements (its bases must span every element)";
  return "";
}

int replicatedRegisterBits(const Layout &l) {
  int mask = 0;
  for (size_t i = 0; i < l.reg.size(); ++i)
    if (std::all_of(l.reg[i].begin(), l.reg[i].end(), [](int64_t x) { return x == 0; }))
      mask |= 1 << i;
  return mask;
}

Layout blockedLayout(const std::vector<int64_t> &shape, int numWarps, unsigned elemBytes) {
  return blockedLayoutWithVector(shape, numWarps, std::max<int64_t>(1, 16 / std::max(1u, elemBytes)));
}

namespace {
/// The layout whose register, lane and warp bits, in that order after `regBits` register bits,
/// walk the tile's row-major element index from its lowest bit; leftover extent becomes more
/// registers, leftover lanes and warps replicate.
Layout rowMajorBits(const std::vector<int64_t> &shape, int numWarps, int regBits) {
  Layout l;
  l.shape = shape;
  unsigned rank = static_cast<unsigned>(shape.size());
  assert(rank > 0);
  std::vector<int64_t> covered(rank, 1); // extent already covered along each dim
  auto nextDim = [&]() -> int {
    for (int d = int(rank) - 1; d >= 0; --d)
      if (covered[d] < shape[d])
        return d;
    return -1;
  };
  auto take = [&](std::vector<Layout::Basis> &into) {
    Layout::Basis b = zeroBasis(rank);
    int d = nextDim();
    if (d >= 0) {
      b[d] = covered[d];
      covered[d] *= 2;
    }
    into.push_back(b);
  };
  for (int i = 0; i < regBits; ++i)
    take(l.reg);
  for (int i = 0; i < 5; ++i)
    take(l.lane);
  for (int i = 0; i < log2Exact(numWarps); ++i)
    take(l.warp);
  while (nextDim() >= 0)
    take(l.reg);
  return l;
}
} // namespace

Layout blockedLayoutWithVector(const std::vector<int64_t> &shape, int numWarps, int64_t vec) {
  vec = std::min(std::max<int64_t>(1, vec), shape.back());
  return rowMajorBits(shape, numWarps, log2Exact(vec));
}

Layout fragmentLayout(const std::vector<int64_t> &shape, int numWarps) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  int64_t perThread = std::max<int64_t>(1, n / (32 * int64_t(numWarps)));
  return rowMajorBits(shape, numWarps, log2Exact(perThread));
}

Layout rawFragmentLayout(const std::vector<int64_t> &shape, int numWarps, unsigned elemBytes, bool contiguous) {
  return contiguous ? fragmentLayout(shape, numWarps) : blockedLayout(shape, numWarps, elemBytes);
}

Layout kContiguousLayout(const std::vector<int64_t> &shape, int numWarps, unsigned elemBytes) {
  assert(shape.size() == 2);
  Layout l;
  l.shape = shape;
  const int64_t K = shape[0], N = shape[1];
  int64_t k = 1, n = 1; // the next coordinate bit to give out along each dim
  for (int64_t vec = std::min<int64_t>(std::max(1u, 16 / std::max(1u, elemBytes)), K); k < vec; k *= 2)
    l.reg.push_back({k, 0});
  auto take = [&](std::vector<Layout::Basis> &into) { // N first, then K, then replicas
    if (n < N) {
      into.push_back({0, n});
      n *= 2;
    } else if (k < K) {
      into.push_back({k, 0});
      k *= 2;
    } else {
      into.push_back({0, 0});
    }
  };
  for (int i = 0; i < 5; ++i)
    take(l.lane);
  for (int i = 0; i < log2Exact(numWarps); ++i)
    take(l.warp);
  for (; k < K; k *= 2)
    l.reg.push_back({k, 0});
  for (; n < N; n *= 2)
    l.reg.push_back({0, n});
  return l;
}

Layout sliceLayout(const Layout &l, unsigned axis) {
  Layout r;
  r.shape = l.shape;
  r.shape.erase(r.shape.begin() + axis);
  auto drop = [&](Layout::Basis b) {
    b.erase(b.begin() + axis);
    return b;
  };
  for (auto &b : l.reg)
    if (b[axis] == 0)
      r.reg.push_back(drop(b));
  for (auto &b : l.lane)
    r.lane.push_back(b[axis] == 0 ? drop(b) : zeroBasis(r.rank()));
  for (auto &b : l.warp)
    r.warp.push_back(b[axis] == 0 ? drop(b) : zeroBasis(r.rank()));
  return r;
}

Layout expandDimsLayout(const Layout &l, unsigned axis) {
  Layout r;
  r.shape = l.shape;
  r.shape.insert(r.shape.begin() + axis, 1);
  auto ins = [&](Layout::Basis b) {
    b.insert(b.begin() + axis, 0);
    return b;
  };
  for (auto &b : l.reg)
    r.reg.push_back(ins(b));
  for (auto &b : l.lane)
    r.lane.push_back(ins(b));
  for (auto &b : l.warp)
    r.warp.push_back(ins(b));
  return r;
}

Layout squeezeLayout(const Layout &l, unsigned axis) {
  Layout r;
  r.shape = l.shape;
  r.shape.erase(r.shape.begin() + axis);
  auto drop = [&](Layout::Basis b) {
    assert(b[axis] == 0);
    b.erase(b.begin() + axis);
    return b;
  };
  for (auto &b : l.reg)
    r.reg.push_back(drop(b));
  for (auto &b : l.lane)
    r.lane.push_back(drop(b));
  for (auto &b : l.warp)
    r.warp.push_back(drop(b));
  return r;
}

Layout broadcastOperandLayout(const Layout &result, const std::vector<int64_t> &operandShape) {
  Layout r = result;
  r.shape = operandShape;
  auto fix = [&](std::vector<Layout::Basis> &bs) {
    for (auto &b : bs)
      for (size_t d = 0; d < b.size(); ++d)
        if (operandShape[d] == 1)
          b[d] = 0;
  };
  fix(r.reg);
  fix(r.lane);
  fix(r.warp);
  return r;
}

std::optional<std::vector<int>> registerMap(const Layout &src, const Layout &dst) {
  if (src.shape != dst.shape || src.lane != dst.lane || src.warp != dst.warp)
    return std::nullopt;
  std::map<Layout::Basis, int> where;
  for (int r = src.numRegs() - 1; r >= 0; --r)
    where[src.regCoord(r)] = r; // lowest register index wins
  std::vector<int> map(dst.numRegs());
  for (int r = 0; r < dst.numRegs(); ++r) {
    auto it = where.find(dst.regCoord(r));
    if (it == where.end())
      return std::nullopt;
    map[r] = it->second;
  }
  return map;
}

Layout permuteLayout(const Layout &l, const std::vector<int64_t> &order) {
  Layout r;
  for (int64_t d : order)
    r.shape.push_back(l.shape[d]);
  auto perm = [&](const std::vector<Layout::Basis> &in, std::vector<Layout::Basis> &out) {
    for (auto &b : in) {
      Layout::Basis p;
      for (int64_t d : order)
        p.push_back(b[d]);
      out.push_back(p);
    }
  };
  perm(l.reg, r.reg);
  perm(l.lane, r.lane);
  perm(l.warp, r.warp);
  return r;
}

std::pair<int, int> mmaWarps(int64_t M, int64_t N, int numWarps) {
  int wm = 1;
  while (wm < numWarps && 16 * wm * 2 <= M)
    wm *= 2;
  int wn = 1;
  while (wm * wn < numWarps && 8 * wn * 2 <= N)
    wn *= 2;
  return {wm, wn};
}

namespace {

/// Adds bases of `per`-element steps along `dim` (coordinate d of a rank-2 basis) until
/// `extent` is covered starting from `covered`.
void repeat(std::vector<Layout::Basis> &into, int dim, int64_t covered, int64_t extent) {
  for (int64_t c = covered; c < extent; c *= 2) {
    Layout::Basis b{0, 0};
    b[dim] = c;
    into.push_back(b);
  }
}

/// Warp bases for an mma layout: wm bits along M (16 rows each) then wn bits along N (8 columns
/// each), with M or N bases replaced by zero in operand layouts that do not span that dim; extra
/// warps replicate.
std::vector<Layout::Basis> mmaWarpBases(int wm, int wn, int numWarps, bool keepM, bool keepN, int mDim, int nDim) {
  std::vector<Layout::Basis> w;
  for (int c = 1; c < wm; c *= 2) {
    Layout::Basis b{0, 0};
    if (keepM)
      b[mDim] = 16 * c;
    w.push_back(b);
  }
  for (int c = 1; c < wn; c *= 2) {
    Layout::Basis b{0, 0};
    if (keepN)
      b[nDim] = 8 * c;
    w.push_back(b);
  }
  for (int c = wm * wn; c < numWarps; c *= 2)
    w.push_back({0, 0});
  return w;
}

} // namespace

Layout mmaAccLayout(int64_t M, int64_t N, int numWarps) {
  auto [wm, wn] = mmaWarps(M, N, numWarps);
  Layout l;
  l.shape = {M, N};
  l.reg = {{0, 1}, {8, 0}};
  l.lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  l.warp = mmaWarpBases(wm, wn, numWarps, true, true, 0, 1);
  repeat(l.reg, 1, 8 * wn, N);
  repeat(l.reg, 0, 16 * wm, M);
  return l;
}

int64_t mmaKStep(MmaKind kind) { return kind == MmaKind::F16 ? 16 : kind == MmaKind::I8 ? 32 : 8; }

Layout mmaOperandLayout(int opIdx, MmaKind kind, int64_t M, int64_t N, int64_t K, int numWarps) {
  auto [wm, wn] = mmaWarps(M, N, numWarps);
  Layout l;
  if (opIdx == 0) { // A [M, K]
    l.shape = {M, K};
    if (kind == MmaKind::F16) {
      l.reg = {{0, 1}, {8, 0}, {0, 8}};
      l.lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
    } else if (kind == MmaKind::I8) { // a0-a3: row g, k 4t..4t+3; a4-a7: row g+8; a8-a15: k + 16
      l.reg = {{0, 1}, {0, 2}, {8, 0}, {0, 16}};
      l.lane = {{0, 4}, {0, 8}, {1, 0}, {2, 0}, {4, 0}};
    } else {
      l.reg = {{8, 0}, {0, 4}};
      l.lane = {{0, 1}, {0, 2}, {1, 0}, {2, 0}, {4, 0}};
    }
    l.warp = mmaWarpBases(wm, wn, numWarps, true, false, 0, 1);
    repeat(l.reg, 1, mmaKStep(kind), K);
    repeat(l.reg, 0, 16 * wm, M);
  } else { // B [K, N]
    l.shape = {K, N};
    if (kind == MmaKind::F16) {
      l.reg = {{1, 0}, {8, 0}};
      l.lane = {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}};
    } else if (kind == MmaKind::I8) { // b0-b3: k 4t..4t+3, column g; b4-b7: k + 16
      l.reg = {{1, 0}, {2, 0}, {16, 0}};
      l.lane = {{4, 0}, {8, 0}, {0, 1}, {0, 2}, {0, 4}};
    } else {
      l.reg = {{4, 0}};
      l.lane = {{1, 0}, {2, 0}, {0, 1}, {0, 2}, {0, 4}};
    }
    l.warp = mmaWarpBases(wm, wn, numWarps, false, true, 1, 1);
    repeat(l.reg, 0, mmaKStep(kind), K);
    repeat(l.reg, 1, 8 * wn, N);
  }
  return l;
}

Layout fmaOperandLayout(int opIdx, const Layout &acc, int64_t K) {
  // Keep the accumulator's distribution of M (A) or N (B); zero the other dim's bases.
  int keep = opIdx == 0 ? 0 : 1;
  auto project = [&](const Layout::Basis &b) {
    Layout::Basis r{0, 0};
    r[keep] = b[keep]; // A keeps M at dim 0, B keeps N at dim 1: the same index as in acc
    return r;
  };
  Layout l;
  l.shape = opIdx == 0 ? std::vector<int64_t>{acc.shape[0], K} : std::vector<int64_t>{K, acc.shape[1]};
  for (auto &b : acc.reg)
    l.reg.push_back(project(b));
  for (auto &b : acc.lane)
    l.lane.push_back(project(b));
  for (auto &b : acc.warp)
    l.warp.push_back(project(b));
  repeat(l.reg, opIdx == 0 ? 1 : 0, 1, K);
  return l;
}

int contiguousRegisters(const Layout &l, unsigned dim) {
  int k = 0;
  for (size_t i = 0; i < l.reg.size(); ++i) {
    Layout::Basis want = zeroBasis(l.rank());
    want[dim] = int64_t(1) << i;
    if (l.reg[i] != want)
      break;
    ++k;
  }
  return 1 << k;
}

std::optional<Layout> subTileLayout(const Layout &src, const std::vector<int64_t> &tile) {
  if (tile.size() != src.shape.size())
    return std::nullopt;
  auto within = [&](const Layout::Basis &b) {
    for (size_t d = 0; d < b.size(); ++d)
      if (b[d] >= tile[d])
        return false;
    return true;
  };
  auto wholeWindows = [&](const Layout::Basis &b) {
    for (size_t d = 0; d < b.size(); ++d)
      if (b[d] % tile[d] != 0)
        return false;
    return true;
  };
  Layout l;
  l.shape = tile;
  l.lane = src.lane;
  l.warp = src.warp;
  for (const auto &b : src.lane)
    if (!within(b))
      return std::nullopt;
  for (const auto &b : src.warp)
    if (!within(b))
      return std::nullopt;
  for (const auto &b : src.reg) {
    if (within(b))
      l.reg.push_back(b);
    else if (!wholeWindows(b))
      return std::nullopt;
  }
  if (!layoutError(l).empty())
    return std::nullopt;
  return l;
}

std::optional<std::vector<int>> windowRegisters(const Layout &src, const Layout &tile, const Layout::Basis &origin) {
  const size_t rank = src.shape.size();
  if (tile.shape.size() != rank || origin.size() != rank || src.lane != tile.lane || src.warp != tile.warp)
    return std::nullopt;
  for (size_t d = 0; d < rank; ++d)
    if (origin[d] % tile.shape[d] != 0)
      return std::nullopt;
  auto within = [&](const Layout::Basis &b) {
    for (size_t d = 0; d < rank; ++d)
      if (b[d] >= tile.shape[d])
        return false;
    return true;
  };
  for (const auto &b : src.lane)
    if (!within(b))
      return std::nullopt;
  for (const auto &b : src.warp)
    if (!within(b))
      return std::nullopt;
  std::vector<Layout::Basis> tileCoords;
  for (int r = 0; r < tile.numRegs(); ++r)
    tileCoords.push_back(tile.regCoord(r));
  std::vector<int> map(static_cast<size_t>(src.numRegs()), -1);
  std::vector<bool> found(tileCoords.size(), false);
  for (int s = 0; s < src.numRegs(); ++s) {
    Layout::Basis c = src.regCoord(s), low(rank);
    bool inWindow = true;
    for (size_t d = 0; d < rank; ++d) {
      low[d] = c[d] & (tile.shape[d] - 1);
      inWindow = inWindow && (c[d] & ~(tile.shape[d] - 1)) == origin[d];
    }
    if (!inWindow)
      continue;
    auto it = std::find(tileCoords.begin(), tileCoords.end(), low);
    if (it == tileCoords.end())
      return std::nullopt;
    map[static_cast<size_t>(s)] = static_cast<int>(it - tileCoords.begin());
    found[static_cast<size_t>(it - tileCoords.begin())] = true;
  }
  if (std::find(found.begin(), found.end(), false) != found.end())
    return std::nullopt;
  return map;
}

} // namespace tle::ir
