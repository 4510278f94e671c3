// Layouts: which register, lane and warp of a CTA holds each element of a tile.
//
// One representation for every layout (DESIGN.md §3, the "linear layouts" approach): a linear
// map over GF(2) from the bits of (register, lane, warp) to element coordinates. Bit i of the
// register index contributes basis `reg[i]` (a coordinate vector); the element held is the XOR
// of the bases of the set bits. A zero basis means replication: that bit does not change the
// element (e.g. more lanes than elements, or a reduced dimension).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tle::ir {

struct Layout {
  using Basis = std::vector<int64_t>; ///< one coordinate per tile dim
  std::vector<int64_t> shape;
  std::vector<Basis> reg;  ///< log2(#registers) bases
  std::vector<Basis> lane; ///< 5 bases (32 lanes)
  std::vector<Basis> warp; ///< log2(num_warps) bases

  unsigned rank() const { return static_cast<unsigned>(shape.size()); }
  int numRegs() const { return 1 << reg.size(); }
  int numWarps() const { return 1 << warp.size(); }
  /// Coordinate contributed by register index `r` alone (XOR of its bit bases).
  Basis regCoord(int r) const;
  bool operator==(const Layout &o) const {
    return shape == o.shape && reg == o.reg && lane == o.lane && warp == o.warp;
  }
  bool operator!=(const Layout &o) const { return !(*this == o); }
  /// "#linear<[1024] reg=[(1),(2),(512)] lane=[(4),...] warp=[(128),(256)]>": each basis as a
  /// coordinate tuple, in bit order.
  std::string str() const;
};

/// Why `l` is not a layout the compiler can use, or "" when it is: every dim a power of two,
/// every basis `rank()` coordinates each within its dim, 5 lane bases (32 lanes), and the
/// register, lane and warp bases together reaching every element of the tile (their span over
/// GF(2) is the whole coordinate space; zero bases replicate). For layouts read from IR text.
std::string layoutError(const Layout &l);

/// True when no coordinate bit of any dim comes from both a register basis and a lane or warp
/// basis (blocked and MMA layouts): a register's coordinate is then added to the thread's, since
/// XOR of disjoint bits is addition, so addresses fold into base + immediate.
bool registerBitsDisjoint(const Layout &l);

/// The register-index bits whose basis is zero: register r holds the same element as register
/// r & ~mask (a layout replicated within the thread). As a bit mask over the register index.
int replicatedRegisterBits(const Layout &l);

/// Triton's default blocked layout for `shape` over `numWarps` warps: each thread holds
/// 16 / elemBytes contiguous elements along the last dim (capped by the dim), lanes then warps
/// fill the last dim first, then earlier dims; leftover extent becomes more registers, leftover
/// lanes/warps replicate.
Layout blockedLayout(const std::vector<int64_t> &shape, int numWarps, unsigned elemBytes);

/// A layout of a [K, N] tile for storing it K-contiguous (a wgmma operand of tf32, fp8 or int8,
/// which has no transposed form, staged from registers): each thread holds 16 bytes of
/// consecutive K (capped by K) as its first registers, so the staging stores are 16-byte
/// vectors; lanes, then warps, go along N first (a warp's load of one register reads a whole
/// row of N, coalesced), then along K; leftover extent becomes more registers (K, then N), and
/// leftover lanes or warps replicate.
Layout kContiguousLayout(const std::vector<int64_t> &shape, int numWarps, unsigned elemBytes);

/// blockedLayout with `vec` contiguous elements per thread along the last dim (a power of two,
/// capped by the dim) instead of 16 bytes' worth: with vec = 1 a warp's 32 lanes hold 32
/// consecutive elements, so an access that cannot be vectorised is still coalesced.
Layout blockedLayoutWithVector(const std::vector<int64_t> &shape, int numWarps, int64_t vec);

/// TLE-Raw's fragment layout: thread t (warp * 32 + lane) holds the n = numel / (32 * numWarps)
/// consecutive elements t * n .. t * n + n - 1 of the tile's row-major order, register i being
/// element t * n + i (a blocked layout whose per-thread vector may span dims). A tile of fewer
/// elements than threads replicates (callers reject it).
Layout fragmentLayout(const std::vector<int64_t> &shape, int numWarps);

/// The layout a TLE-Raw fragment of a tile of `shape` (elements of `elemBytes`) is passed in:
/// fragmentLayout when `contiguous`, else blockedLayout (the layout tile code gives a tile by
/// default, so an elementwise raw function costs no conversion).
Layout rawFragmentLayout(const std::vector<int64_t> &shape, int numWarps, unsigned elemBytes, bool contiguous);

/// The layout of the result of reducing dim `axis` of a tile in `l`: register bases along
/// `axis` are dropped, lane/warp bases along it become zero (the result is replicated over
/// them), and the coordinate is removed.
Layout sliceLayout(const Layout &l, unsigned axis);

/// The layout of expand_dims(x, axis) for x in `l`: a zero coordinate inserted at `axis`.
Layout expandDimsLayout(const Layout &l, unsigned axis);

/// The inverse of expandDimsLayout for a size-1 dim: drops coordinate `axis` (all bases must
/// be zero there).
Layout squeezeLayout(const Layout &l, unsigned axis);

/// The layout a broadcast operand of shape `operandShape` (size-1 dims where the result is
/// larger) must have for the broadcast to be free: `result` with every basis's coordinate
/// along a stretched dim set to zero.
Layout broadcastOperandLayout(const Layout &result, const std::vector<int64_t> &operandShape);

/// If every thread holds, in `src`, all the elements it holds in `dst` (same lane and warp
/// bases, register bases of dst found among src's), returns for each dst register the src
/// register holding the same element: the conversion is then free. Otherwise nullopt.
std::optional<std::vector<int>> registerMap(const Layout &src, const Layout &dst);

/// The layout of a window of shape `tile` (each dim a power of two dividing `src`'s) cut from a
/// tile in `src` without moving data (tle.extract_tile's register-only form): every lane and warp
/// basis lies within the window (each coordinate below tile[d]), and every register basis lies
/// within it or moves by whole windows (each coordinate a multiple of tile[d]); the result keeps
/// the lane and warp bases and the register bases within the window. nullopt otherwise (the
/// window must then go through shared memory).
std::optional<Layout> subTileLayout(const Layout &src, const std::vector<int64_t> &tile);

/// For the window of `tile.shape` at element offset `origin` (a multiple of the window's shape)
/// of a tile in `src`: for each register of `src`, the register of `tile` holding the same
/// element (-1 for registers outside the window), when every thread holds in `src` all the
/// window's elements it holds in `tile` (same lane and warp bases, lying within the window);
/// nullopt otherwise.
std::optional<std::vector<int>> windowRegisters(const Layout &src, const Layout &tile, const Layout::Basis &origin);

/// The layout of permute(x, order) for x in `l`: result dim i is operand dim order[i]; every
/// register, lane and warp keeps its element (a transposition moves no data).
Layout permuteLayout(const Layout &l, const std::vector<int64_t> &order);

/// Which mma.sync shape a tl.dot uses (PTX ISA §9.7.14.5, "Matrix fragments for mma.m16n8k*").
enum class MmaKind { F16 /* m16n8k16, fp16/bf16 */, TF32 /* m16n8k8 */, I8 /* m16n8k32, s8/u8 */ };

/// K of one mma.sync instruction of `kind`: 16, 8 or 32 elements (32 bytes for every kind).
int64_t mmaKStep(MmaKind kind);

/// Warps of a CTA along M and N for an [M, N] mma.sync accumulator (warps go to M first,
/// 16 rows each, then to N, 8 columns each; warps beyond that replicate).
std::pair<int, int> mmaWarps(int64_t M, int64_t N, int numWarps);

/// The accumulator layout of mma.sync m16n8 for an [M, N] tile (fp32/int32 elements): register
/// bits (0,1) and (8,0) inside one instruction's fragment, lanes (0,2),(0,4),(1,0),(2,0),(4,0),
/// warps along M then N, then repetitions along N then M as more registers.
Layout mmaAccLayout(int64_t M, int64_t N, int numWarps);

/// The layout of operand `opIdx` (0: A [M,K], 1: B [K,N]) of mma.sync for an [M, N] accumulator
/// over `numWarps`: the instruction's fragment bits first, then K repetitions, then M (A) or N
/// (B) repetitions; warps that split the other dimension replicate the operand.
Layout mmaOperandLayout(int opIdx, MmaKind kind, int64_t M, int64_t N, int64_t K, int numWarps);

/// FMA dot operand layouts for an accumulator in `acc`: operand A [M,K] holds, in each thread,
/// the rows of the thread's accumulator elements with all of K in registers (register index
/// = accumulator register | k << log2(#acc registers)); operand B [K,N] likewise for columns.
Layout fmaOperandLayout(int opIdx, const Layout &acc, int64_t K);

/// Byte offset of element `coord` of a tile of `shape` staged in shared memory for a layout
/// conversion (convert_layout through shared memory): row-major, `elemBytes` bytes per element,
/// and when the tile has rank >= 2 and rows of 128 bytes or more, the 16-byte chunk index within
/// each 128-byte segment XOR-ed with the row index mod 8 (rows 0-7 of one column hit 8 different
/// bank groups). When every dim is a power of two this offset is linear over GF(2):
/// stagedOffset(a ^ b) == stagedOffset(a) ^ stagedOffset(b) for coordinates combined bitwise,
/// which is what lets the emitter compute a thread's part once and add per-register constants.
int64_t stagedOffset(const std::vector<int64_t> &shape, unsigned elemBytes, const Layout::Basis &coord);

/// Number of leading registers holding consecutive elements along `dim` (a power of two):
/// the largest k such that reg[i] = 2^i along dim (zero elsewhere) for i < log2(k).
int contiguousRegisters(const Layout &l, unsigned dim);

} // namespace tle::ir
