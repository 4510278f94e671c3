// tle.gpu.warp_specialize (FlagTree TLE-Struct's warp specialisation, ../shared/reference/tle.md
// §3.3): the kernel's warps split into partitions that run concurrently, lowered to the tile IR's
// `warp_specialize` op.
//
//   tle.gpu.warp_specialize([(fn0, args0), (fn1, args1), ...], worker_num_warps, worker_num_regs)
//
// Entry 0 is the default partition, on the kernel's num_warps warps; entry i > 0 a worker on
// worker_num_warps[i - 1] more warps. Each fn (a @triton.jit function) is inlined into its
// partition's region with its args (a tuple: tiles, pointers, buffers, barriers, pipe endpoints,
// descriptors, compile-time values). The partitions share nothing but shared memory and global
// memory; they order their accesses with mbarriers, named barriers or pipes.
//
// The tile IR runs tile code (values with a layout over num_warps warps) in partitions of
// num_warps warps, and scalar code (pointers, coordinates, mbarrier and TMA ops) in any. When
// entry 0 computes on scalars only and a worker of num_warps warps computes on tiles (a TMA
// producer as entry 0, as FlagTree's tests write it), the first such worker and entry 0 swap
// regions, so that the default region computes on tiles; a tile partition of another warp
// count is a located error. Several tile partitions run side by side, each on its own warps
// (two consumer warpgroups in ping-pong).
//
// worker_num_regs are the workers' register budgets (setmaxnreg, PTX ISA §9.7.17.1); the default
// partition gets what the workers leave of the block's registers at one block per SM (up to 256:
// a consumer above the block's per-thread ceiling when the workers give theirs back): every
// partition must be whole warpgroups for that, else the budgets are dropped with a warning.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>
#include <optional>

namespace tle::sema {

using ir::OpKind;

namespace {

/// The compile-time ints of `a` (a list), `n` of them, each from `lo` to `hi`.
std::vector<int64_t> intList(Specializer &S, const Arg &a, size_t n, const char *what, int64_t lo, int64_t hi) {
  std::vector<SVal> xs = a.val.kind == SVal::Kind::Tuple ? a.val.elts : std::vector<SVal>{a.val};
  if (xs.size() != n)
    S.fail(a.loc, std::string("warp_specialize() ") + what + " needs one entry per worker partition (" +
                      std::to_string(n) + "), got " + std::to_string(xs.size()));
  std::vector<int64_t> out;
  for (const SVal &x : xs) {
    if (x.kind != SVal::Kind::Int || x.i < lo || x.i > hi)
      S.fail(a.loc, std::string("warp_specialize() ") + what + " must be compile-time integers from " +
                        std::to_string(lo) + " to " + std::to_string(hi) + ", got " + x.describe());
    out.push_back(x.i);
  }
  return out;
}

/// Whether `o` has a tile operand or result.
bool onTiles(const ir::Op &o) {
  for (auto &r : o.results)
    if (r->type.isTile())
      return true;
  for (const ir::Value *v : o.operands)
    if (v->type.isTile())
      return true;
  return false;
}

/// The first op of `b` (its ops' regions included) that has a tile operand or result, or null.
const ir::Op *firstTileOp(ir::Block &b) {
  const ir::Op *found = nullptr;
  ir::walk(b, [&](ir::Op &o) {
    if (!found && onTiles(o))
      found = &o;
  });
  return found;
}

/// Register budgets: the workers' `regs` and, first, the default partition's share of what the
/// register file leaves at one block per SM (multiples of 8, 24 to 256; PTX ISA setmaxnreg).
std::vector<int64_t> budgets(Specializer &S, const Arg &a, const std::vector<int64_t> &warps,
                             const std::vector<int64_t> &regs) {
  int64_t numWarps = S.fn->numWarps, total = numWarps;
  bool groups = numWarps % 4 == 0;
  for (int64_t w : warps) {
    total += w;
    groups &= w % 4 == 0;
  }
  if (!groups) {
    S.diags.warning(a.loc, "warp_specialize() worker_num_regs are dropped: setmaxnreg sets a whole warpgroup's "
                           "registers, and not every partition is whole warpgroups (4 warps)");
    return {};
  }
  int64_t perThread = std::min<int64_t>(255, 65536 / (32 * total)) / 8 * 8;
  int64_t left = perThread * total;
  for (size_t i = 0; i < warps.size(); ++i)
    left -= regs[i] * warps[i];
  // What is left, up to setmaxnreg's 256: ptxas allocates the code after a setmaxnreg.inc within
  // the raised count, above the kernel's .maxnreg (the block's ceiling, which the launch reserves).
  int64_t r0 = std::min<int64_t>(256, left / numWarps / 8 * 8);
  if (r0 < 24)
    S.fail(a.loc, "warp_specialize() worker_num_regs leave the default partition " + std::to_string(std::max<int64_t>(r0, 0)) +
                      " registers per thread, fewer than 24 (" + std::to_string(total) + " warps share 65536 registers)");
  std::vector<int64_t> out = {r0};
  out.insert(out.end(), regs.begin(), regs.end());
  return out;
}

/// Entry `e` (a (function, args) pair) inlined into a new region of `ws`, ending in a yield.
void inlinePartition(Specializer &S, ir::Op &ws, const SVal &e, SourceLoc loc) {
  ws.regions.push_back(std::make_unique<ir::Block>());
  ir::Block *region = ws.regions.back().get();
  region->parent = &ws;
  BuilderScope scope(S.b);
  S.b = std::make_unique<ir::Builder>(region);
  CallArgs args{loc, {}, {}};
  for (const SVal &v : e.elts[1].elts)
    args.pos.push_back(Arg{loc, v});
  SVal r = S.callJit(e.elts[0].fn, args);
  if (r.kind != SVal::Kind::None)
    S.fail(loc, "warp_specialize() partition '" + e.elts[0].fn->name + "' returns a value; tlec's partitions "
                "return nothing (pass results through shared memory or global memory)");
  S.b->create(OpKind::Yield, loc, {}, {});
}

/// The first region of `ws` that computes on tiles (0 when none does). Every region that
/// computes on tiles must run on the kernel's num_warps warps (a tile's layout spans that many):
/// region 0, or a worker of that many warps; a located error otherwise. Several may (FA3's
/// ping-pong consumers: each partition its own tiles on its own warps).
size_t tileRegion(Specializer &S, ir::Op &ws, const std::vector<SVal> &entries, const std::vector<int64_t> &warps) {
  std::optional<size_t> first;
  for (size_t r = 0; r < ws.regions.size(); ++r) {
    const ir::Op *at = firstTileOp(*ws.regions[r]);
    if (!at)
      continue;
    const int64_t warp = ws.partitionFirstWarp(r, S.fn->numWarps);
    if (r > 0 && S.fn->numWarps % 4 == 0 && warp % 4)
      S.fail(at->loc, "this op of warp partition '" + entries[r].elts[0].fn->name + "' computes on tiles, on warps " +
                          std::to_string(warp) + " to " + std::to_string(warp + warps[r - 1] - 1) +
                          ": a tile partition starts at a warpgroup (a warp index that is a multiple of 4, as "
                          "wgmma and setmaxnreg need); list the workers of fewer warps after it");
    if (r > 0 && warps[r - 1] != S.fn->numWarps)
      S.fail(at->loc, "this op of warp partition '" + entries[r].elts[0].fn->name + "' computes on tiles, on " +
                          std::to_string(warps[r - 1]) + " warps: tlec runs tile code in partitions of the "
                          "kernel's num_warps (" + std::to_string(S.fn->numWarps) + "); give such a worker " +
                          std::to_string(S.fn->numWarps) + " warps, or compute on scalars there (pointers, "
                          "coordinates, mbarriers, TMA copies)");
    if (!first)
      first = r;
  }
  return first.value_or(0);
}

SVal warpSpecialize(Specializer &S, const BuiltinCall &c) {
  const Arg &fa = c.p.get("functions_and_args");
  if (fa.val.kind != SVal::Kind::Tuple || fa.val.elts.empty())
    S.fail(fa.loc, "warp_specialize() functions_and_args must be a list of (function, args) pairs, got " +
                       fa.val.describe());
  const std::vector<SVal> &entries = fa.val.elts;
  for (const SVal &e : entries)
    if (e.kind != SVal::Kind::Tuple || e.elts.size() != 2 || e.elts[0].kind != SVal::Kind::JitFn ||
        e.elts[1].kind != SVal::Kind::Tuple)
      S.fail(fa.loc, "warp_specialize() entries must be (function, args) pairs of a @triton.jit function and a tuple, "
                     "got " + e.describe());
  size_t workers = entries.size() - 1;
  std::vector<int64_t> warps = intList(S, c.p.get("worker_num_warps"), workers, "worker_num_warps", 1, 32);
  std::vector<int64_t> regs;
  if (c.p.has("worker_num_regs"))
    regs = intList(S, c.p.get("worker_num_regs"), workers, "worker_num_regs", 24, 256);
  for (int64_t r : regs)
    if (r % 8)
      S.fail(c.p.loc("worker_num_regs"), "warp_specialize() worker_num_regs must be multiples of 8 (setmaxnreg), got " +
                                             std::to_string(r));
  if (S.loopDepth > 0 || S.b->block() != &S.fn->body)
    S.fail(c.loc, "warp_specialize() must be called at the kernel's top level, outside loops and branches (and "
                  "before any early return, after which the rest of the kernel runs in a branch)");
  if (S.warpSpecializeAt.valid())
    S.fail(c.loc, "a kernel has one warp_specialize", {{S.warpSpecializeAt, "the first is here"}});
  S.warpSpecializeAt = c.loc;
  // Before the op every warp of the block runs the kernel: tiles (whose layouts span num_warps
  // warps) belong in its partitions or after it.
  if (const ir::Op *t = firstTileOp(S.fn->body))
    S.fail(t->loc, "this op computes on tiles before the kernel's warp_specialize, where every warp of the block "
                     "runs the kernel: compute tiles in a partition, or after the warp_specialize",
           {{c.loc, "the warp_specialize is here"}});
  if (workers == 0) { // one partition: the function runs on the kernel's warps
    CallArgs args{c.loc, {}, {}};
    for (const SVal &v : entries[0].elts[1].elts)
      args.pos.push_back(Arg{c.loc, v});
    S.callJit(entries[0].elts[0].fn, args);
    return SVal::none();
  }
  ir::Op *ws = S.b->create(OpKind::WarpSpecialize, c.loc, {}, {});
  ws->setPartitionWarps(warps);
  S.partitionCount = int(entries.size());
  if (S.nextNamedBarrier + 1 <= S.partitionCount) // tle.gpu's named barriers go down from 15
    S.fail(c.loc, "this warp_specialize's " + std::to_string(entries.size()) + " partitions use named barriers 1 to " +
                      std::to_string(entries.size()) + ", and the kernel's tle.gpu barriers without phaseIdx already use " +
                      std::to_string(S.nextNamedBarrier + 1) + " to 15: use fewer partitions or named barrier slots");
  S.blockWarps = S.fn->numWarps;
  for (int64_t w : warps)
    S.blockWarps += int(w);
  for (const SVal &e : entries)
    inlinePartition(S, *ws, e, c.loc);
  S.blockWarps = 0; // after the op the default partition goes on alone
  size_t first = tileRegion(S, *ws, entries, warps);
  // Swapped, region `first` runs entry 0 on as many warps (num_warps) as entry `first` had.
  if (first > 0)
    std::swap(ws->regions[0], ws->regions[first]);
  if (!regs.empty()) {
    std::vector<int64_t> b = budgets(S, c.p.get("worker_num_regs"), warps, regs); // by entry
    if (!b.empty() && first > 0)
      std::swap(b[0], b[first]); // by region
    ws->setPartitionRegisters(b);
  }
  return SVal::none();
}

} // namespace

std::vector<BuiltinSpec> partitionBuiltins() {
  return {
      {"tle.gpu.warp_specialize", "functions_and_args, worker_num_warps, worker_num_regs=None", warpSpecialize},
  };
}

} // namespace tle::sema
