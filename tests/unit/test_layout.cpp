// Unit tests of the layout algebra (tle/IR/Layout.h): blocked layouts, slicing, expand_dims,
// broadcast operands, register maps and vector widths.
#include "tle/IR/Layout.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace tle::ir;

namespace {

/// The element that register `r` of lane `lane` in warp `w` holds (XOR of the set bits' bases).
Layout::Basis elementOf(const Layout &l, int r, int lane, int w) {
  Layout::Basis c = l.regCoord(r);
  for (size_t i = 0; i < l.lane.size(); ++i)
    if (lane & (1 << i))
      for (size_t d = 0; d < c.size(); ++d)
        c[d] ^= l.lane[i][d];
  for (size_t i = 0; i < l.warp.size(); ++i)
    if (w & (1 << i))
      for (size_t d = 0; d < c.size(); ++d)
        c[d] ^= l.warp[i][d];
  return c;
}

/// Every (register, lane, warp) triple's element; checks that the layout covers each element
/// of its shape and returns how many times each is held.
std::map<std::vector<int64_t>, int> holders(const Layout &l) {
  std::map<std::vector<int64_t>, int> count;
  for (int r = 0; r < l.numRegs(); ++r)
    for (int lane = 0; lane < 32; ++lane)
      for (int w = 0; w < l.numWarps(); ++w)
        ++count[elementOf(l, r, lane, w)];
  return count;
}

} // namespace

TEST_CASE("blocked 1-D layout gives each thread 16-byte vectors", "[layout]") {
  Layout l = blockedLayout({1024}, 4, 4);
  CHECK(l.reg == std::vector<Layout::Basis>{{1}, {2}, {512}});
  CHECK(l.lane == std::vector<Layout::Basis>{{4}, {8}, {16}, {32}, {64}});
  CHECK(l.warp == std::vector<Layout::Basis>{{128}, {256}});
  CHECK(contiguousRegisters(l, 0) == 4);
  auto h = holders(l);
  CHECK(h.size() == 1024);
  for (auto &[c, n] : h)
    CHECK(n == 1);
}

TEST_CASE("a blocked layout with one element per thread puts consecutive elements in consecutive lanes", "[layout]") {
  Layout l = blockedLayoutWithVector({1024}, 8, 1);
  CHECK(l.reg == std::vector<Layout::Basis>{{256}, {512}});
  CHECK(l.lane == std::vector<Layout::Basis>{{1}, {2}, {4}, {8}, {16}});
  CHECK(l.warp == std::vector<Layout::Basis>{{32}, {64}, {128}});
  CHECK(contiguousRegisters(l, 0) == 1);
  for (auto &[c, n] : holders(l))
    CHECK(n == 1);
  // Two elements per thread along the last dim of a 2-D tile; 16 bytes of fp32 is the default.
  Layout two = blockedLayoutWithVector({8, 256}, 4, 2);
  CHECK(contiguousRegisters(two, 1) == 2);
  CHECK(two.lane.front() == Layout::Basis{0, 2});
  CHECK(blockedLayoutWithVector({64, 64}, 4, 4) == blockedLayout({64, 64}, 4, 4));
}

TEST_CASE("fp16 tiles get 8 elements per vector", "[layout]") {
  Layout l = blockedLayout({4096}, 8, 2);
  CHECK(contiguousRegisters(l, 0) == 8);
  CHECK(l.numRegs() == 16);
}

TEST_CASE("small tiles replicate over lanes and warps", "[layout]") {
  Layout l = blockedLayout({16}, 4, 4);
  // 4 registers x 4 lanes cover 16 elements; the other lane bits and both warp bits replicate.
  auto h = holders(l);
  CHECK(h.size() == 16);
  for (auto &[c, n] : h)
    CHECK(n == 8 * 4); // 8 replicating lanes x 4 warps
}

TEST_CASE("2-D blocked layout fills the last dim first, warps along rows", "[layout]") {
  Layout l = blockedLayout({64, 64}, 4, 4);
  CHECK(l.reg[0] == Layout::Basis{0, 1});
  CHECK(l.reg[1] == Layout::Basis{0, 2});
  CHECK(l.lane[0] == Layout::Basis{0, 4});
  CHECK(l.lane[4] == Layout::Basis{1, 0});
  CHECK(l.warp[0] == Layout::Basis{2, 0});
  CHECK(holders(l).size() == 64 * 64);
}

TEST_CASE("slicing drops registers along the axis and replicates lanes/warps", "[layout]") {
  Layout l = blockedLayout({64, 64}, 4, 4);
  Layout rows = sliceLayout(l, 1); // reduce along columns: one value per row
  CHECK(rows.shape == std::vector<int64_t>{64});
  auto h = holders(rows);
  CHECK(h.size() == 64);
  // 16 lanes share a row in the parent, so every row value is held by 16 threads.
  for (auto &[c, n] : h)
    CHECK(n == 16);
  Layout scalar = sliceLayout(blockedLayout({1024}, 4, 4), 0);
  CHECK(scalar.shape.empty());
  CHECK(scalar.numRegs() == 1);
}

TEST_CASE("expand_dims then broadcast is free for a sliced layout", "[layout]") {
  Layout parent = blockedLayout({32, 128}, 4, 4);
  Layout cols = sliceLayout(parent, 0);             // [128]
  Layout expanded = expandDimsLayout(cols, 0);      // [1, 128]
  Layout needed = broadcastOperandLayout(parent, {1, 128});
  auto map = registerMap(expanded, needed);
  REQUIRE(map.has_value());
  CHECK(static_cast<int>(map->size()) == parent.numRegs());
  // Register r of the broadcast result holds column regCoord(r)[1]: the source register must
  // hold the same column.
  for (int r = 0; r < parent.numRegs(); ++r)
    CHECK(expanded.regCoord((*map)[r])[1] == parent.regCoord(r)[1]);
  CHECK(squeezeLayout(expanded, 0) == cols);
}

TEST_CASE("registerMap refuses layouts that distribute elements differently", "[layout]") {
  Layout a = blockedLayout({1024}, 4, 4);
  Layout b = blockedLayout({1024}, 4, 2); // 8-element vectors: other lanes hold other elements
  CHECK_FALSE(registerMap(a, b).has_value());
  auto id = registerMap(a, a);
  REQUIRE(id.has_value());
  for (int r = 0; r < a.numRegs(); ++r)
    CHECK((*id)[r] == r);
}

TEST_CASE("register and thread bits are disjoint in blocked layouts, not after an XOR mix", "[layout]") {
  // A [64, 64] fp16 tile over 4 warps: 8 contiguous elements per thread, lanes then warps: each
  // coordinate bit comes from registers or from threads, never both.
  Layout l = blockedLayout({64, 64}, 4, 2);
  CHECK(registerBitsDisjoint(l));
  // A register basis that shares column bit 8 with lane 0's basis: XOR is not addition there.
  Layout mixed = l;
  REQUIRE(!mixed.lane.empty());
  mixed.reg.push_back(mixed.lane[0]);
  CHECK_FALSE(registerBitsDisjoint(mixed));
  // Replicated lanes (zero bases) take no bits.
  Layout small = blockedLayout({4, 8}, 4, 2);
  CHECK(registerBitsDisjoint(small));
}

TEST_CASE("staged shared-memory offsets split into a thread part and per-register constants", "[layout]") {
  // The emitter computes a thread's staged offset once and, per register, XORs the constant's
  // bits that lanes or warps can set and adds the others. Check that against the offset of every
  // element held by every (register, lane, warp).
  struct Case {
    Layout l;
    unsigned elemBytes;
  };
  std::vector<Case> cases = {
      {mmaAccLayout(128, 256, 8), 2},      // a matmul epilogue, fp16 out: swizzled 512-byte rows
      {mmaAccLayout(64, 64, 4), 4},        // fp32 accumulator
      {blockedLayout({128, 256}, 8, 2), 2},
      {blockedLayout({32, 16}, 4, 4), 4},  // 64-byte rows: not swizzled
      {blockedLayout({4, 8, 64}, 4, 2), 2}, // rank 3
      {sliceLayout(blockedLayout({64, 128}, 4, 4), 0), 4},
      {blockedLayout({1024}, 4, 4), 4},
  };
  for (const auto &[l, eb] : cases) {
    INFO(l.str() << " with " << eb << "-byte elements");
    int64_t threadBits = 0;
    for (const auto *bases : {&l.lane, &l.warp})
      for (const auto &b : *bases)
        threadBits |= stagedOffset(l.shape, eb, b);
    std::set<int64_t> seen;
    for (int r = 0; r < l.numRegs(); ++r) {
      int64_t c = stagedOffset(l.shape, eb, l.regCoord(r));
      for (int lane = 0; lane < 32; ++lane)
        for (int w = 0; w < l.numWarps(); ++w) {
          int64_t t = stagedOffset(l.shape, eb, elementOf(l, 0, lane, w));
          int64_t full = stagedOffset(l.shape, eb, elementOf(l, r, lane, w));
          REQUIRE((t & ~threadBits) == 0);
          REQUIRE(full == ((t ^ (c & threadBits)) + (c & ~threadBits)));
          seen.insert(full);
        }
    }
    // Distinct elements get distinct offsets inside the staged tile.
    int64_t n = 1;
    for (int64_t d : l.shape)
      n *= d;
    CHECK(static_cast<int64_t>(seen.size()) == static_cast<int64_t>(holders(l).size()));
    CHECK(*seen.rbegin() < n * eb);
  }
}

TEST_CASE("staged offsets swizzle rows of 128 bytes or more", "[layout]") {
  // fp16 [16, 64]: 128-byte rows; row 1's chunk 0 lands in chunk 1, row 9's in chunk 1 too.
  CHECK(stagedOffset({16, 64}, 2, {0, 0}) == 0);
  CHECK(stagedOffset({16, 64}, 2, {1, 0}) == 128 + 16);
  CHECK(stagedOffset({16, 64}, 2, {1, 8}) == 128 + 0);
  CHECK(stagedOffset({16, 64}, 2, {9, 0}) == 9 * 128 + 16);
  CHECK(stagedOffset({16, 64}, 2, {7, 63}) == 7 * 128 + ((7 ^ 7) << 4) + 14);
  // 64-byte rows stay row-major, and so does a 1-D tile.
  CHECK(stagedOffset({16, 32}, 2, {3, 5}) == 3 * 64 + 10);
  CHECK(stagedOffset({4096}, 4, {1000}) == 4000);
}

TEST_CASE("int8 mma.sync operand layouts are the m16n8k32 fragments of the PTX ISA", "[layout]") {
  // PTX ISA §9.7.14.5.8 (m16n8k32, .s8/.u8): groupID = lane / 4, t = lane % 4. A element i of
  // 16: row groupID + 8 (i / 4 % 2), column 4 t + i % 4 + 16 (i / 8); B element i of 8: row
  // 4 t + i % 4 + 16 (i / 4), column groupID. One warp, one instruction: [16, 32] and [32, 8].
  Layout a = mmaOperandLayout(0, MmaKind::I8, 16, 8, 32, 1);
  Layout b = mmaOperandLayout(1, MmaKind::I8, 16, 8, 32, 1);
  REQUIRE(a.numRegs() == 16);
  REQUIRE(b.numRegs() == 8);
  for (int lane = 0; lane < 32; ++lane) {
    int64_t g = lane / 4, t = lane % 4;
    for (int i = 0; i < 16; ++i)
      CHECK(elementOf(a, i, lane, 0) == Layout::Basis{g + 8 * (i / 4 % 2), 4 * t + i % 4 + 16 * (i / 8)});
    for (int i = 0; i < 8; ++i)
      CHECK(elementOf(b, i, lane, 0) == Layout::Basis{4 * t + i % 4 + 16 * (i / 4), g});
  }
  // Larger tiles repeat the fragment along K, then M (A) or N (B); 4 warps along M hold each
  // element of A once and replicate B.
  Layout a4 = mmaOperandLayout(0, MmaKind::I8, 128, 64, 64, 4);
  for (auto &[e, n] : holders(a4))
    CHECK(n == 1);
  CHECK(holders(a4).size() == size_t(128 * 64));
  Layout b4 = mmaOperandLayout(1, MmaKind::I8, 128, 64, 64, 4);
  for (auto &[e, n] : holders(b4))
    CHECK(n == 4);
  CHECK(holders(b4).size() == size_t(64 * 64));
  CHECK(mmaKStep(MmaKind::I8) == 32);
}

TEST_CASE("kContiguousLayout: 16 bytes of K per thread, lanes along N, every element held", "[layout]") {
  struct Case {
    int64_t K, N;
    int warps;
    unsigned eb;
  };
  for (Case c : {Case{32, 128, 4, 4}, Case{32, 256, 8, 4}, Case{32, 64, 4, 4}, Case{64, 64, 4, 1},
                 Case{128, 256, 8, 1}, Case{16, 16, 4, 4}}) {
    Layout l = kContiguousLayout({c.K, c.N}, c.warps, c.eb);
    INFO("K=" << c.K << " N=" << c.N << " warps=" << c.warps << " eb=" << c.eb << ": " << l.str());
    CHECK(contiguousRegisters(l, 0) >= std::min<int64_t>(16 / c.eb, c.K));
    // The first lanes go along N: lane bit i is column 2^i while N allows.
    for (int i = 0; i < 5 && (int64_t(1) << i) < c.N; ++i)
      CHECK(l.lane[size_t(i)] == Layout::Basis{0, int64_t(1) << i});
    auto h = holders(l);
    CHECK(h.size() == size_t(c.K * c.N));
    int64_t threads = 32 * c.warps, copies = std::max<int64_t>(1, threads * l.numRegs() / (c.K * c.N));
    for (auto &[e, n] : h)
      CHECK(n == copies);
  }
}
