// Layouts as linear maps over GF(2).
#include "tle/IR/Layout.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace tle::ir {

namespace {

Layout::Basis zeroBasis(unsigned rank) { return Layout::Basis(rank, 0); }

bool isZero(const Layout::Basis &b) {
  return std::all_of(b.begin(), b.end(), [](int64_t x) { return x == 0; });
}

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

Layout blockedLayout(const std::vector<int64_t> &shape, int numWarps, unsigned elemBytes) {
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
  unsigned last = rank - 1;
  int64_t vec = std::max<int64_t>(1, 16 / std::max(1u, elemBytes));
  vec = std::min(vec, shape[last]);
  for (int i = 0; i < log2Exact(vec); ++i)
    take(l.reg);
  for (int i = 0; i < 5; ++i)
    take(l.lane);
  for (int i = 0; i < log2Exact(numWarps); ++i)
    take(l.warp);
  while (nextDim() >= 0)
    take(l.reg);
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

} // namespace tle::ir
