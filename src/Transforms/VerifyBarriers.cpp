// The barrier-protocol check: the kernel's scalar code, partition by partition, run against a
// model of its mbarriers (see VerifyBarriers.h for the contract).
#include "tle/Transforms/VerifyBarriers.h"

#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

/// An mbarrier: the local_alloc of its array and its slot.
using Key = std::pair<const ir::Op *, int64_t>;

/// One mbarrier's state (PTX ISA §9.7.13.15.1): arrivals still expected in the current phase,
/// transaction bytes still expected (negative: completed before they were expected), completed
/// phases.
/// A vector clock: entry i counts process i's synchronisation events (happens-before between the
/// partitions, through mbarrier arrivals and the waits that see their phase complete).
using Clock = std::vector<int64_t>;

void join(Clock &a, const Clock &b) {
  if (a.size() < b.size())
    a.resize(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i)
    a[i] = std::max(a[i], b[i]);
}

int64_t at(const Clock &c, size_t i) { return i < c.size() ? c[i] : 0; }

struct Mbarrier {
  int64_t count = 0, pending = 0, tx = 0, phases = 0;
  bool unchecked = false; ///< mbarrier_init `unchecked`: no warnings about it
  Clock arrived;          ///< the clocks of the current phase's arrivals, joined
  std::map<int64_t, Clock> completed; ///< the last two completed phases' clocks
};

/// A named barrier that warp partitions share (bar.sync / bar.arrive with id= and threads=, PTX
/// ISA §9.7.13.1): the threads arrived in its current generation, their clocks, and the clocks
/// of the last kKept completed generations (a generation completes once `threads` threads have
/// arrived; a waiter is part of its generation's count, so it resumes one generation later
/// unless other partitions alone complete more).
struct NamedBarrier {
  static constexpr int64_t kKept = 8;
  int64_t arrived = 0, generation = 0;
  Clock clock;
  std::map<int64_t, Clock> completed;
};

/// Elements [lo, hi) of a shared buffer (its local_alloc), as an async reader or a writer sees them.
struct Region {
  const ir::Op *alloc = nullptr;
  int64_t lo = 0, hi = 0;
  size_t cta = 0; ///< whose shared memory (the CTA's rank in its cluster)
  bool overlaps(const Region &o) const { return alloc == o.alloc && cta == o.cta && lo < o.hi && o.lo < hi; }
};

/// A read of a shared buffer by an asynchronous unit (a wgmma group's operand, a TMA store's
/// source): in flight until its process retires it (wgmma_wait, tma_store_wait), then retired at
/// that process's clock.
struct AsyncRead {
  Region region;
  size_t proc = 0;
  const ir::Op *op = nullptr;
  int64_t retiredAt = -1;            ///< -1: still in flight
  const ir::Op *retiredBy = nullptr; ///< the wgmma_wait / tma_store_wait that retired it
}; 

using OpIt = std::list<std::unique_ptr<ir::Op>>::const_iterator;

/// A region being run: its block, the next op, and for a loop's body its induction variable.
struct Frame {
  const ir::Block *block;
  OpIt it;
  const ir::Op *owner; ///< the op whose region this is (null: the function body)
  int64_t iv = 0, ub = 0, step = 1;
};

/// One partition (or the whole CTA outside warp_specialize).
struct Process {
  int warps = 1;
  int index = 0; ///< the warp_specialize region (0: default partition)
  size_t cta = 0; ///< the CTA it runs in (its rank in the cluster)
  std::vector<Frame> stack;
  bool done = false;
  const ir::Op *waitingAt = nullptr; ///< the mbarrier_wait (or cluster or named barrier) it is stopped at
  int64_t namedGeneration = 0;       ///< at a named barrier's bar.sync: the generation it arrived in
  std::vector<size_t> workers;        ///< the default partition: the workers it joins
  Clock clock;                        ///< its vector clock (entry `self` its own events)
  std::vector<std::vector<size_t>> wgmmaGroups; ///< its wgmma groups in flight: their reads_ entries
  std::vector<size_t> uncommitted;              ///< its TMA stores since the last tma_store_commit
  std::vector<std::vector<size_t>> bulkStores;  ///< its committed TMA store groups not yet waited for
};

/// Why a run stopped without a verdict (the protocol depends on what is not known): the op it
/// stopped at, what it could not know, where that value came from, and the mbarrier involved.
struct Undetermined {
  const ir::Op *at = nullptr;
  std::string why;
  const ir::Op *origin = nullptr;
  std::optional<Key> bar;
};

int64_t wrap(int64_t v, ir::DType t) {
  unsigned bits = ir::bitWidth(t);
  if (bits >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << bits) - 1, u = uint64_t(v) & mask;
  if (ir::isSigned(t) && bits > 1 && (u >> (bits - 1)))
    u |= ~mask;
  return int64_t(u);
}

class Simulator {
public:
  /// With `args`, every integer kernel argument is that value and the grid has one program, or
  /// one cluster (a
  /// trial of a protocol that depends on the arguments).
  /// A kernel with clusters runs as the CTAs of one cluster (programs 0 to size - 1), each with
  /// its own mbarriers and partitions: remote arrivals and TMA multicast reach the others.
  Simulator(const ir::Function &f, std::optional<int64_t> args)
      : f_(f), trial_(args.has_value()), ctas_(size_t(std::max(1, f.cluster[0] * f.cluster[1] * f.cluster[2]))) {
    if (args)
      for (Cta &c : ctas_)
        for (size_t i = 0; i < f.params.size() && i < f.body.args.size(); ++i)
          if (!f.params[i].type.isPointer() && ir::isInteger(f.params[i].type.dtype))
            c.vals[f.body.args[i].get()] = wrap(*args, f.params[i].type.dtype);
  }

  /// Whether the last run reached a verdict (it did not stop at a value it could not know).
  bool determined() const { return determined_; }
  /// Why the last run reached no verdict (when !determined()).
  const Undetermined &undetermined() const { return why_; }
  /// Whether the last run's hang is at a wait on an mbarrier initialised `unchecked`.
  bool hungOnUnchecked() const {
    if (!hungOn_)
      return false;
    const auto &bars = ctas_[hungCta_].bars;
    auto it = bars.find(*hungOn_);
    return it != bars.end() && it->second.unchecked;
  }

  std::vector<BarrierFinding> run() {
    for (size_t c = 0; c < ctas_.size(); ++c) {
      Process main;
      main.warps = f_.numWarps;
      main.cta = c;
      main.stack.push_back({&f_.body, f_.body.ops.begin(), nullptr});
      procs_.push_back(std::move(main));
    }
    try {
      for (;;) {
        bool progress = false, allDone = true;
        for (size_t p = 0; p < procs_.size(); ++p) {
          while (!procs_[p].done && step(p))
            progress = true;
          allDone &= procs_[p].done;
          if (!findings_.empty())
            return findings_;
        }
        if (allDone)
          return {};
        if (!progress) {
          BarrierFinding h = hang();
          return {h};
        }
      }
    } catch (const Undetermined &u) {
      determined_ = !findings_.empty();
      why_ = u;
      return findings_; // a rule broken before the run stopped, or nothing
    }
  }

private:
  const ir::Function &f_;
  bool trial_ = false, determined_ = true;
  std::vector<Process> procs_;
  /// What one CTA of the cluster holds: its mbarriers, and its processes' values.
  struct Cta {
    std::map<Key, Mbarrier> bars;
    std::map<const ir::Value *, int64_t> vals; ///< scalars (SSA: one value each at a time)
    std::map<const ir::Value *, Key> ptrs;     ///< pointers into mbarrier arrays
    /// Scalar pointers into other shared buffers: (local_alloc, element offset).
    std::map<const ir::Value *, std::pair<const ir::Op *, int64_t>> bufs;
    /// Integer scalars stored into shared buffers at known places (a pipe's close tags).
    std::map<std::pair<const ir::Op *, int64_t>, int64_t> mem;
    /// Its arrivals at the cluster's barrier (cluster_barrier, cluster_arrive): the clock of each.
    std::vector<Clock> clusterArrivals;
    int64_t clusterWaits = 0; ///< the cluster barriers it has passed
    std::map<int, NamedBarrier> named; ///< by id
  };
  std::vector<Cta> ctas_; ///< one per CTA of the cluster (the function's cluster size)
  size_t cta_ = 0;        ///< the CTA of the process being run
  Cta &C() { return ctas_[cta_]; }
  const Cta &C() const { return ctas_[cta_]; }
  /// The asynchronous reads of buffers that may still matter, by id (those retired before every
  /// partition's present are dropped as writes pass them).
  std::map<size_t, AsyncRead> reads_;
  size_t nextRead_ = 0;
  /// Each compiler-made pipeline's (pipeline, empty) mbarriers: the first pipeline_mbarrier op
  /// naming them stands for the array.
  std::map<std::pair<int, bool>, const ir::Op *> pipeAnchors_;
  int64_t steps_ = 0;
  std::vector<BarrierFinding> findings_;
  const ir::Op *current_ = nullptr; ///< the op being run
  Undetermined why_;
  std::optional<Key> hungOn_; ///< the mbarrier of the reported hang's (first) wait
  size_t hungCta_ = 0;        ///< and its CTA

  static constexpr int64_t kMaxSteps = 2000000;

  /// Stops the run: the protocol depends on `v`, which the check cannot know here. The reason
  /// names what `v` is computed from: a memory read (noted at it), else a kernel argument, else
  /// its own defining op.
  [[noreturn]] void unknown(const ir::Value *v, std::optional<Key> bar = std::nullopt) const {
    auto [read, arg] = sources(v);
    std::string why = read ? "a value read from memory (line " + std::to_string(read->loc.line) + ")"
                      : !arg.empty() ? "the kernel's argument '" + arg + "'"
                      : v->def ? "a value computed at line " + std::to_string(v->def->loc.line) +
                                     " that it does not evaluate"
                               : "a value it cannot follow";
    throw Undetermined{current_, why, read, bar};
  }

  /// Whether `op` reads memory: a value the run of the scalar code cannot know.
  static bool isMemoryRead(const ir::Op &op) {
    switch (op.kind) {
    case OpKind::Load: case OpKind::LocalLoad: case OpKind::AtomicRMW: case OpKind::AtomicCAS: return true;
    default: return false;
    }
  }

  /// What `v` is computed from (a walk of its operands, 256 values at most): the first memory
  /// read found, and the name of the first kernel argument found ("" when none).
  std::pair<const ir::Op *, std::string> sources(const ir::Value *v) const {
    std::vector<const ir::Value *> todo{v};
    std::set<const ir::Value *> seen;
    std::string arg;
    while (!todo.empty() && seen.size() < 256) {
      const ir::Value *x = todo.back();
      todo.pop_back();
      if (!x || !seen.insert(x).second)
        continue;
      for (size_t i = 0; arg.empty() && i < f_.body.args.size() && i < f_.params.size(); ++i)
        if (f_.body.args[i].get() == x)
          arg = f_.params[i].name;
      if (!x->def)
        continue;
      if (isMemoryRead(*x->def))
        return {x->def, arg};
      for (const ir::Value *o : x->def->operands)
        todo.push_back(o);
    }
    return {nullptr, arg};
  }

  int64_t known(const ir::Value *v) const {
    auto it = C().vals.find(v);
    if (it == C().vals.end())
      unknown(v);
    return it->second;
  }

  Key barrier(const ir::Value *v) const {
    auto it = C().ptrs.find(v);
    if (it == C().ptrs.end())
      throw Undetermined{current_, "an mbarrier address it cannot follow", nullptr, std::nullopt};
    return it->second;
  }

  std::string describe(const Key &k) const {
    if (k.first->kind == OpKind::PipelineMbarrier) // a pipeline the compiler made
      return "pipeline " + std::to_string(k.first->sync.pipeline) + "'s " + (k.first->sync.empty ? "empty" : "full") +
             " mbarrier [" + std::to_string(k.second) + "]";
    const ir::Value *v = k.first->result();
    std::string name = v->nameHint.empty() ? "the mbarrier" : "mbarrier '" + v->nameHint + "'";
    const std::vector<int64_t> &shape = k.first->allocShape();
    if (ir::numElements(shape) > 1)
      name += " [" + std::to_string(k.second) + "]";
    return name + " (allocated at line " + std::to_string(k.first->loc.line) + ")";
  }

  Mbarrier &state(const Key &k, const ir::Op &at) {
    auto it = C().bars.find(k);
    if (it == C().bars.end()) {
      findings_.push_back({false, at.loc, "barrier protocol: " + describe(k) + " is used before it is initialised", {}});
      throw Undetermined{&at, "", nullptr, k};
    }
    return it->second;
  }

  /// Mbarrier `k` of CTA `c` (initialised there: an error otherwise, as for state()).
  Mbarrier &ctaBarrier(size_t c, const Key &k, const ir::Op &at) {
    size_t self = cta_;
    cta_ = c;
    Mbarrier &b = state(k, at);
    cta_ = self;
    return b;
  }

  /// The mbarrier a remote arrival `op` reaches: `k` in the CTA of its rank operand, which must be
  /// a rank of the cluster.
  Mbarrier &remote(const Key &k, const ir::Op &op) {
    int64_t rank = known(op.operands[1]);
    if (rank < 0 || rank >= int64_t(ctas_.size())) {
      findings_.push_back({false, op.loc,
                           "barrier protocol: this arrival on " + describe(k) + " of the CTA of cluster rank " +
                               std::to_string(rank) + " is outside the cluster of " + std::to_string(ctas_.size()) +
                               " CTA" + (ctas_.size() == 1 ? "" : "s"),
                           {}});
      throw Undetermined{&op, "", nullptr, k};
    }
    return ctaBarrier(size_t(rank), k, op);
  }

  /// `n` arrivals on `b`: each completes the phase when it is the last one expected and no bytes
  /// are outstanding; the count then restarts.
  void arrive(Mbarrier &b, int64_t n, const Key &k, const ir::Op &at) {
    for (; n > 0; --n) {
      if (b.pending == 0) { // the phase's arrivals are in, its bytes are not
        findings_.push_back({false, at.loc,
                             "barrier protocol: this arrival on " + describe(k) + " comes after all " +
                                 std::to_string(b.count) + " arrivals of its phase " + std::to_string(b.phases) +
                                 ", whose " + std::to_string(b.tx) + " transaction bytes are still expected "
                                 "(the arrival count would underflow)",
                             {}});
        throw Undetermined{&at, "", nullptr, k};
      }
      --b.pending;
      complete(b);
    }
  }

  static void complete(Mbarrier &b) {
    if (b.pending == 0 && b.tx == 0) {
      b.completed[b.phases] = std::move(b.arrived);
      b.completed.erase(b.phases - 2);
      b.arrived.clear();
      ++b.phases;
      b.pending = b.count;
    }
  }

  /// Process `pi`'s next event: its own clock entry advances.
  Clock &tick(size_t pi) {
    Clock &c = procs_[pi].clock;
    if (c.size() <= pi)
      c.resize(pi + 1, 0);
    ++c[pi];
    return c;
  }

  int arrivers(const ir::Op &op, const Process &p) const {
    switch (op.sync.per) {
    case ir::Arrivers::Cta: return 1;
    case ir::Arrivers::Warp: return p.warps;
    case ir::Arrivers::Warpgroup: return std::max(1, p.warps / 4);
    case ir::Arrivers::Thread: return 32 * p.warps;
    }
    return 1;
  }

  /// The tensor map of a tma_load or tma_store.
  const ir::TensorMapParam &tensorMap(const ir::Op &op) const {
    if (op.sync.map < 0 || size_t(op.sync.map) >= f_.tensorMaps.size())
      throw Undetermined{&op, "a TMA copy without its tensor map", nullptr, std::nullopt};
    return f_.tensorMaps[op.sync.map];
  }

  /// The bytes one tma_load moves: its tensor map's box.
  int64_t boxBytes(const ir::Op &op) const {
    const ir::TensorMapParam &m = tensorMap(op);
    return ir::numElements(m.box) * ir::storageBytes(m.dtype);
  }

  /// The elements of one matrix of the buffer `ptr` points into (its alloc's last two dims): what
  /// a wgmma operand or a local_store covers from `ptr`.
  int64_t matrixElements(const ir::Value *ptr) const {
    auto it = C().bufs.find(ptr);
    return it == C().bufs.end() ? 0 : matrixOf(it->second.first);
  }

  /// The elements of one matrix of buffer `alloc`: the product of its last two dims.
  static int64_t matrixOf(const ir::Op *alloc) {
    const std::vector<int64_t> &shape = alloc->allocShape();
    return ir::numElements(std::vector<int64_t>(shape.end() - std::min<size_t>(2, shape.size()), shape.end()));
  }

  /// The `n` elements from shared pointer `ptr`, when the run knows where it points.
  std::optional<Region> region(const ir::Value *ptr, int64_t n) const {
    auto it = C().bufs.find(ptr);
    if (it == C().bufs.end() || n <= 0)
      return std::nullopt;
    return Region{it->second.first, it->second.second, it->second.second + n, cta_};
  }

  /// Records an asynchronous read by process `pi`'s `op`; its id in reads_.
  size_t read(size_t pi, const ir::Op &op, const Region &r) {
    reads_[nextRead_] = {r, pi, &op, -1, nullptr};
    return nextRead_++;
  }

  /// Whether every partition has seen read `a`'s retirement (no later write can race with it).
  bool seenByAll(const AsyncRead &a) const {
    if (a.retiredAt < 0)
      return false;
    for (size_t q = 0; q < procs_.size(); ++q)
      if (q != a.proc && !procs_[q].done && at(procs_[q].clock, a.proc) < a.retiredAt)
        return false;
    return true;
  }

  /// Retires all but the last `keep` of `groups` (wgmma_wait N, tma_store_wait N): their reads
  /// are over at process `pi`'s next event.
  void retire(size_t pi, const ir::Op &op, std::vector<std::vector<size_t>> &groups, int64_t keep) {
    size_t n = groups.size() > size_t(std::max<int64_t>(keep, 0)) ? groups.size() - size_t(keep) : 0;
    if (n == 0)
      return;
    int64_t now = tick(pi)[pi];
    for (size_t g = 0; g < n; ++g)
      for (size_t r : groups[g]) {
        reads_[r].retiredAt = now;
        reads_[r].retiredBy = &op;
      }
    groups.erase(groups.begin(), groups.begin() + long(n));
  }

  /// A write by process `pi`'s `op` into `r`: a located error when an asynchronous read of those
  /// elements is still in flight, or was retired by another partition without that retirement
  /// happening before this write (no chain of arrivals and waits from it to here).
  void write(size_t pi, const ir::Op &op, std::optional<Region> r) {
    if (!r)
      return;
    const Clock &mine = procs_[pi].clock;
    for (auto it = reads_.begin(); it != reads_.end();) {
      const AsyncRead &a = it->second;
      if (seenByAll(a)) {
        it = reads_.erase(it);
        continue;
      }
      ++it;
      if (!a.region.overlaps(*r))
        continue;
      bool inFlight = a.retiredAt < 0;
      if (!inFlight && (a.proc == pi || at(mine, a.proc) >= a.retiredAt))
        continue;
      const char *reader = a.op->kind == OpKind::Wgmma ? "the wgmma" : "the TMA store";
      const char *retire = a.op->kind == OpKind::Wgmma ? "wgmma_wait" : "tma_store_wait";
      findings_.push_back(
          {false, op.loc,
           "barrier protocol: this " + std::string(op.kind == OpKind::TmaLoad ? "TMA copy" : "store") + " overwrites " +
               describeRegion(a.region) +
               " while " + reader + " at line " + std::to_string(a.op->loc.line) + " (" + where(procs_[a.proc]) + ") " +
               (inFlight ? "may still read it: no " + std::string(retire) + " has retired it"
                         : "may still read it: the " + std::string(retire) + " at line " +
                               std::to_string(a.retiredBy->loc.line) + " that retires it does not happen before this "
                               "write (this partition waits for no mbarrier arrival made after it)"),
           {{a.op->loc, std::string(reader) + " reading those elements"}}});
      if (a.retiredBy)
        findings_.back().notes.push_back({a.retiredBy->loc, "retired here"});
      findings_.back().race = true;
      throw Undetermined{&op, "", nullptr, std::nullopt};
    }
  }

  std::string describeRegion(const Region &r) const {
    const ir::Value *v = r.alloc->result();
    std::string name = v->nameHint.empty() ? "the buffer" : "buffer '" + v->nameHint + "'";
    // A ring (rank 3 or more) is named by its slot when the region is within one matrix.
    int64_t matrix = r.alloc->allocShape().size() >= 3 ? matrixOf(r.alloc) : 0;
    std::string where = matrix > 0 && r.lo % matrix == 0 && r.hi - r.lo <= matrix
                            ? " slot " + std::to_string(r.lo / matrix)
                            : " elements " + std::to_string(r.lo) + " to " + std::to_string(r.hi - 1);
    return name + where + " (allocated at line " + std::to_string(r.alloc->loc.line) + ")";
  }

  void bind(const ir::Block &b, const std::vector<std::optional<int64_t>> &args) {
    for (size_t i = 0; i < b.args.size() && i < args.size(); ++i) {
      if (args[i])
        C().vals[b.args[i].get()] = *args[i];
      else
        C().vals.erase(b.args[i].get());
    }
  }

  std::optional<int64_t> maybe(const ir::Value *v) const {
    auto it = C().vals.find(v);
    return it == C().vals.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

  std::vector<std::optional<int64_t>> values(const std::vector<ir::Value *> &vs, size_t from = 0) const {
    std::vector<std::optional<int64_t>> r;
    for (size_t i = from; i < vs.size(); ++i)
      r.push_back(maybe(vs[i]));
    return r;
  }

  void results(const ir::Op &op, const std::vector<std::optional<int64_t>> &vs) {
    for (size_t i = 0; i < op.results.size() && i < vs.size(); ++i) {
      if (vs[i])
        C().vals[op.result(unsigned(i))] = *vs[i];
      else
        C().vals.erase(op.result(unsigned(i)));
    }
  }

  /// A scalar integer op's value, when its operands are known.
  std::optional<int64_t> scalar(const ir::Op &op) const {
    if (op.results.size() != 1 || !op.result()->type.isScalar() || op.result()->type.elem.isPointer())
      return std::nullopt;
    ir::DType t = op.result()->type.dtype();
    if (op.kind == OpKind::Constant)
      return ir::isInteger(t) || t == ir::DType::I1 ? std::optional<int64_t>(wrap(op.intValue(), t)) : std::nullopt;
    // The first cluster stands for every cluster (program 0 for every program without clusters):
    // the protocol is each cluster's own. Clusters lie along x.
    if (op.kind == OpKind::ProgramId)
      return op.axis() == 0 ? int64_t(cta_) : 0;
    if (op.kind == OpKind::NumPrograms && trial_)
      return op.axis() == 0 ? int64_t(ctas_.size()) : 1;
    std::vector<int64_t> x;
    for (const ir::Value *v : op.operands) {
      auto m = maybe(v);
      if (!m || v->type.isTile())
        return std::nullopt;
      x.push_back(*m);
    }
    bool isInt = ir::isInteger(t) || t == ir::DType::I1;
    switch (op.kind) {
    case OpKind::Add: return isInt ? std::optional(wrap(x[0] + x[1], t)) : std::nullopt;
    case OpKind::Sub: return isInt ? std::optional(wrap(x[0] - x[1], t)) : std::nullopt;
    case OpKind::Mul: return isInt ? std::optional(wrap(x[0] * x[1], t)) : std::nullopt;
    case OpKind::IDiv: return isInt && x[1] ? std::optional(wrap(x[0] / x[1], t)) : std::nullopt;
    case OpKind::IRem: return isInt && x[1] ? std::optional(wrap(x[0] % x[1], t)) : std::nullopt;
    case OpKind::And: return wrap(x[0] & x[1], t);
    case OpKind::Or: return wrap(x[0] | x[1], t);
    case OpKind::Xor: return wrap(x[0] ^ x[1], t);
    case OpKind::Shl: return x[1] >= 0 && x[1] < 64 ? std::optional(wrap(x[0] << x[1], t)) : std::nullopt;
    case OpKind::Shr: return x[1] >= 0 && x[1] < 64 ? std::optional(wrap(x[0] >> x[1], t)) : std::nullopt;
    case OpKind::Max: return isInt ? std::optional(std::max(x[0], x[1])) : std::nullopt;
    case OpKind::Min: return isInt ? std::optional(std::min(x[0], x[1])) : std::nullopt;
    case OpKind::Neg: return isInt ? std::optional(wrap(-x[0], t)) : std::nullopt;
    case OpKind::Not: return wrap(t == ir::DType::I1 ? !x[0] : ~x[0], t);
    case OpKind::Select: return x[0] ? x[1] : x[2];
    case OpKind::Cast:
      return isInt && !ir::isFloat(op.operands[0]->type.dtype()) ? std::optional(wrap(x[0], t)) : std::nullopt;
    case OpKind::Cmp: {
      if (!ir::isInteger(op.operands[0]->type.dtype()) && op.operands[0]->type.dtype() != ir::DType::I1)
        return std::nullopt;
      int64_t a = x[0], b = x[1];
      switch (op.predicate()) {
      case ir::CmpPred::Eq: return a == b;
      case ir::CmpPred::Ne: return a != b;
      case ir::CmpPred::Lt: return a < b;
      case ir::CmpPred::Le: return a <= b;
      case ir::CmpPred::Gt: return a > b;
      case ir::CmpPred::Ge: return a >= b;
      }
      return std::nullopt;
    }
    default: return std::nullopt;
    }
  }

  /// Leaves the region of the top frame with the values `vs` its terminator passes.
  void leave(Process &p, const std::vector<std::optional<int64_t>> &vs) {
    const ir::Op *owner = p.stack.back().owner;
    p.stack.pop_back();
    results(*owner, vs);
    ++p.stack.back().it;
  }

  /// Runs one op of process `pi`; false when it is stopped (at a wait, or joining its workers).
  bool step(size_t pi) {
    cta_ = procs_[pi].cta;
    Process &p = procs_[pi];
    Frame &fr = p.stack.back();
    const ir::Op &op = **fr.it;
    current_ = &op;
    if (++steps_ > kMaxSteps)
      throw Undetermined{&op, "more than " + std::to_string(kMaxSteps) + " steps of the kernel's scalar code", nullptr,
                         std::nullopt};
    switch (op.kind) {
    case OpKind::Return:
      p.done = true;
      return true;
    case OpKind::Yield: return yield(pi, op);
    case OpKind::Condition: {
      int64_t cond = known(op.operands[0]);
      const ir::Op *w = fr.owner;
      auto forwarded = values(op.operands, 1);
      p.stack.pop_back();
      if (cond) {
        bind(*w->regions[1], forwarded);
        p.stack.push_back({w->regions[1].get(), w->regions[1]->ops.begin(), w});
      } else {
        results(*w, forwarded);
        ++p.stack.back().it;
      }
      return true;
    }
    case OpKind::For: {
      int64_t lb = known(op.operands[0]), ub = known(op.operands[1]), st = known(op.operands[2]);
      if (st <= 0)
        throw Undetermined{&op, "a loop whose step is not positive", nullptr, std::nullopt};
      auto inits = values(op.operands, 3);
      if (lb >= ub) {
        results(op, inits);
        ++fr.it;
        return true;
      }
      const ir::Block &body = *op.regions[0];
      std::vector<std::optional<int64_t>> args{lb};
      args.insert(args.end(), inits.begin(), inits.end());
      bind(body, args);
      p.stack.push_back({&body, body.ops.begin(), &op, lb, ub, st});
      return true;
    }
    case OpKind::If: {
      const ir::Block &r = *op.regions[known(op.operands[0]) ? 0 : 1];
      p.stack.push_back({&r, r.ops.begin(), &op});
      return true;
    }
    case OpKind::While: {
      const ir::Block &before = *op.regions[0];
      bind(before, values(op.operands));
      p.stack.push_back({&before, before.ops.begin(), &op});
      return true;
    }
    case OpKind::WarpSpecialize: {
      for (size_t r = 1; r < op.regions.size(); ++r) {
        Process w;
        w.warps = int(op.partitionWarps()[r - 1]);
        w.index = int(r);
        w.cta = procs_[pi].cta;
        w.clock = procs_[pi].clock; // the workers start after what came before
        w.stack.push_back({op.regions[r].get(), op.regions[r]->ops.begin(), &op});
        procs_[pi].workers.push_back(procs_.size()); // not `p`: the push_back below may move procs_
        procs_.push_back(std::move(w));
      }
      Process &self = procs_[pi]; // procs_ may have moved
      self.stack.push_back({op.regions[0].get(), op.regions[0]->ops.begin(), &op});
      return true;
    }
    default: break;
    }
    if (!sync(pi, op))
      return false;
    ++procs_[pi].stack.back().it;
    return true;
  }

  bool yield(size_t pi, const ir::Op &op) {
    Process &p = procs_[pi];
    Frame &fr = p.stack.back();
    const ir::Op *owner = fr.owner;
    auto vs = values(op.operands);
    if (owner->kind == OpKind::For) {
      fr.iv += fr.step;
      if (fr.iv < fr.ub) {
        std::vector<std::optional<int64_t>> args{fr.iv};
        args.insert(args.end(), vs.begin(), vs.end());
        bind(*fr.block, args);
        fr.it = fr.block->ops.begin();
        return true;
      }
      leave(p, vs);
      return true;
    }
    if (owner->kind == OpKind::While) {
      if (fr.block == owner->regions[1].get()) { // after: back to before with the next values
        bind(*owner->regions[0], vs);
        fr.block = owner->regions[0].get();
        fr.it = fr.block->ops.begin();
        return true;
      }
      throw Undetermined{&op, "a while loop's form it does not run", nullptr, std::nullopt};
    }
    if (owner->kind == OpKind::WarpSpecialize) {
      if (p.index != 0) { // a worker's end
        p.done = true;
        return true;
      }
      for (size_t w : p.workers) // the default partition continues once its workers are done
        if (!procs_[w].done)
          return false;
      for (size_t w : p.workers)
        join(procs_[pi].clock, procs_[w].clock);
      p.workers.clear();
      leave(p, {});
      return true;
    }
    leave(p, vs); // If
    return true;
  }

  /// The mbarrier ops, the shared buffers' asynchronous readers and writers, and scalar
  /// arithmetic; false when `op` is a wait that cannot return yet.
  bool sync(size_t pi, const ir::Op &op) {
    Process &p = procs_[pi];
    switch (op.kind) {
    case OpKind::LocalAlloc:
      if (op.result()->type.elem.pointee == ir::DType::I64)
        C().ptrs[op.result()] = {&op, 0};
      else
        C().bufs[op.result()] = {&op, 0};
      return true;
    case OpKind::AddPtr:
      if (auto b = C().bufs.find(op.operands[0]); b != C().bufs.end() && op.result()->type.isScalar()) {
        if (auto off = maybe(op.operands[1]))
          C().bufs[op.result()] = {b->second.first, b->second.second + *off};
        else
          C().bufs.erase(op.result()); // a place chosen by run-time values: not followed
        return true;
      }
      if (auto it = C().ptrs.find(op.operands[0]); it != C().ptrs.end() && op.result()->type.isScalar()) {
        if (auto off = maybe(op.operands[1]))
          C().ptrs[op.result()] = {it->second.first, it->second.second + *off};
        else
          unknown(op.operands[1], Key{it->second.first, -1}); // a slot chosen by run-time values
      }
      return true;
    case OpKind::MbarrierInit: {
      Key k = barrier(op.operands[0]);
      Mbarrier b;
      b.count = b.pending = op.sync.count;
      b.unchecked = op.sync.unchecked;
      C().bars[k] = std::move(b);
      return true;
    }
    case OpKind::MbarrierInval:
      C().bars.erase(barrier(op.operands[0]));
      return true;
    case OpKind::PipelineMbarrier: { // a compiler-made pipeline's slot mbarrier
      const ir::Op *&anchor = pipeAnchors_[{op.sync.pipeline, op.sync.empty}];
      if (!anchor)
        anchor = &op;
      int64_t slots = op.sync.pipeline >= 0 && size_t(op.sync.pipeline) < f_.pipelines.size()
                          ? f_.pipelines[op.sync.pipeline].slots
                          : 1;
      int64_t slot = op.operands.empty() ? op.sync.slot : known(op.operands[0]) % std::max<int64_t>(slots, 1);
      C().ptrs[op.result()] = {anchor, slot};
      return true;
    }
    case OpKind::MbarrierArrive: {
      Key k = barrier(op.operands[0]);
      Mbarrier &b = op.operands.size() > 1 ? remote(k, op) : state(k, op); // remote: the same mbarrier of another CTA
      b.tx += op.sync.tx;
      join(b.arrived, tick(pi));
      arrive(b, op.sync.count * arrivers(op, p), k, op);
      return true;
    }
    case OpKind::AsyncCopyMbarrierArrive: { // one arrival per thread once its cp.async copies land
      Key k = barrier(op.operands[0]);
      Mbarrier &b = state(k, op);
      join(b.arrived, tick(pi));
      arrive(b, 32 * int64_t(p.warps), k, op);
      return true;
    }
    case OpKind::MbarrierExpectTx: {
      Key k = barrier(op.operands[0]);
      state(k, op).tx += op.sync.tx;
      return true;
    }
    case OpKind::TmaLoad: {
      // A multicast copy (issued by one CTA) writes the buffer and completes the bytes in every CTA.
      if (op.sync.multicast && size_t(op.sync.issuer) != cta_)
        return true;
      size_t first = op.sync.multicast ? 0 : cta_, last = op.sync.multicast ? ctas_.size() : cta_ + 1;
      std::optional<Region> r = region(op.operands[0], ir::numElements(tensorMap(op).box));
      Key k = barrier(op.operands[1]);
      state(k, op);
      const Clock &now = tick(pi);
      for (size_t c = first; c < last; ++c) {
        if (r)
          r->cta = c;
        write(pi, op, r);
        Mbarrier &b = ctaBarrier(c, k, op);
        b.tx -= boxBytes(op);
        join(b.arrived, now);
        complete(b);
      }
      return true;
    }
    case OpKind::LocalStore:
      write(pi, op, region(op.operands[0], matrixElements(op.operands[0])));
      return true;
    case OpKind::Wgmma: {
      std::vector<size_t> group;
      for (size_t i = 0; i < 2; ++i)
        if (auto r = region(op.operands[i], matrixElements(op.operands[i])))
          group.push_back(read(pi, op, *r));
      p.wgmmaGroups.push_back(std::move(group));
      return true;
    }
    case OpKind::WgmmaWait:
      retire(pi, op, p.wgmmaGroups, op.sync.pending);
      return true;
    case OpKind::TmaStore:
      if (auto r = region(op.operands[0], ir::numElements(tensorMap(op).box)))
        p.uncommitted.push_back(read(pi, op, *r));
      return true;
    case OpKind::TmaStoreCommit:
      p.bulkStores.push_back(std::move(p.uncommitted));
      p.uncommitted.clear();
      return true;
    case OpKind::TmaStoreWait:
      retire(pi, op, p.bulkStores, op.sync.pending);
      return true;
    case OpKind::ClusterArrive:
      C().clusterArrivals.push_back(tick(pi));
      return true;
    case OpKind::ClusterBarrier: // an arrival, then the wait
      if (p.waitingAt != &op)
        C().clusterArrivals.push_back(tick(pi));
      [[fallthrough]];
    case OpKind::ClusterWait:
      return clusterWait(pi, op);
    case OpKind::Barrier:
    case OpKind::BarrierArrive:
      return namedBarrier(pi, op);
    case OpKind::MbarrierWait: {
      Key k = barrier(op.operands[0]);
      const Mbarrier &b = state(k, op);
      auto phase = maybe(op.operands[1]);
      if (!phase)
        unknown(op.operands[1], k);
      int64_t parity = *phase & 1;
      if ((b.phases & 1) != parity) {
        p.waitingAt = nullptr;
        // The wait sees the last completed phase of its parity: what happened before its
        // arrivals happens before what follows the wait.
        int64_t seen = ((b.phases - 1) & 1) == parity ? b.phases - 1 : b.phases - 2;
        if (auto c = b.completed.find(seen); c != b.completed.end())
          join(procs_[pi].clock, c->second);
        return true;
      }
      p.waitingAt = &op;
      return false;
    }
    case OpKind::Store: // a scalar store into shared memory (a pipe's close tag): remembered
      if (auto pos = C().bufs.find(op.operands[0]); pos != C().bufs.end() && op.operands.size() == 2) {
        if (auto v = maybe(op.operands[1]))
          C().mem[pos->second] = *v;
        else
          C().mem.erase(pos->second);
        return true;
      }
      return true;
    case OpKind::Load: // and read back
      if (auto pos = C().bufs.find(op.operands[0]); pos != C().bufs.end() && op.operands.size() == 1 && op.result()->type.isScalar()) {
        if (auto m = C().mem.find(pos->second); m != C().mem.end())
          C().vals[op.result()] = wrap(m->second, op.result()->type.dtype());
        else
          C().vals.erase(op.result());
        return true;
      }
      C().vals.erase(op.result());
      return true;
    default:
      if (auto v = scalar(op))
        C().vals[op.result()] = *v;
      else
        for (auto &r : op.results)
          C().vals.erase(r.get());
      return true;
    }
  }

  /// Process `pi` at the cluster barrier's wait `op`: it returns once every CTA has arrived as
  /// often as this one, and then follows their arrivals (barrier.cluster.wait, PTX ISA §9.7.13.2).
  bool clusterWait(size_t pi, const ir::Op &op) {
    int64_t n = C().clusterWaits + 1;
    for (const Cta &c : ctas_)
      if (int64_t(c.clusterArrivals.size()) < n) {
        procs_[pi].waitingAt = &op;
        return false;
      }
    procs_[pi].waitingAt = nullptr;
    ++C().clusterWaits;
    for (const Cta &c : ctas_)
      join(procs_[pi].clock, c.clusterArrivals[size_t(n - 1)]);
    return true;
  }

  /// Process `pi` at a named barrier shared by warp partitions (`op` a barrier or
  /// barrier_arrive with id= and threads=; a partition's own barrier orders nothing across them):
  /// its arrival counts its threads; a generation completes once the barrier's thread count has
  /// arrived, and then a bar.sync returns, following the generation's arrivals.
  bool namedBarrier(size_t pi, const ir::Op &op) {
    const ir::SyncAttrs &a = op.sync;
    if (a.barrierId < 0 || a.threads == 0)
      return true;
    Process &p = procs_[pi];
    NamedBarrier &nb = C().named[a.barrierId];
    if (p.waitingAt != &op) {
      nb.arrived += 32 * p.warps;
      join(nb.clock, tick(pi));
      p.namedGeneration = nb.generation;
      if (nb.arrived >= a.threads) {
        nb.arrived -= a.threads;
        nb.completed.erase(nb.generation - NamedBarrier::kKept);
        nb.completed[nb.generation++] = nb.clock;
        nb.clock.clear();
      }
    }
    if (op.kind == OpKind::BarrierArrive)
      return true;
    if (nb.generation > p.namedGeneration) {
      p.waitingAt = nullptr;
      if (auto c = nb.completed.find(p.namedGeneration); c != nb.completed.end())
        join(p.clock, c->second);
      return true;
    }
    p.waitingAt = &op;
    return false;
  }

  std::string where(const Process &p) const {
    std::string part = p.index == 0 ? "the default partition" : "worker " + std::to_string(p.index);
    return ctas_.size() > 1 ? part + " of the CTA of cluster rank " + std::to_string(p.cta) : part;
  }

  BarrierFinding hang() {
    BarrierFinding h;
    for (const Process &p : procs_) {
      if (p.done || !p.waitingAt)
        continue;
      cta_ = p.cta;
      if (p.waitingAt->kind != OpKind::MbarrierWait) { // the cluster's barrier, or a named barrier
        std::string msg = where(p) + " waits at the cluster's barrier, where not every CTA of the cluster arrives";
        if (p.waitingAt->kind == OpKind::Barrier) {
          const ir::SyncAttrs &a = p.waitingAt->sync;
          msg = where(p) + " waits at named barrier " + std::to_string(a.barrierId) + " (" +
                std::to_string(C().named[a.barrierId].arrived) + " of its " + std::to_string(a.threads) +
                " threads have arrived, " + std::to_string(32 * p.warps) + " of them this partition's)";
        }
        if (!h.loc.valid()) {
          h.loc = p.waitingAt->loc;
          h.message = "barrier protocol hangs: this wait (" + msg + ") never returns, and no partition can go on";
        } else {
          h.notes.push_back({p.waitingAt->loc, msg});
        }
        continue;
      }
      Key k = barrier(p.waitingAt->operands[0]);
      const Mbarrier &b = C().bars.at(k);
      int64_t parity = known(p.waitingAt->operands[1]) & 1;
      std::string state = "it has completed " + std::to_string(b.phases) + " phase" + (b.phases == 1 ? "" : "s") +
                          "; the current one has " + std::to_string(b.count - b.pending) + " of its " +
                          std::to_string(b.count) + " arrivals" +
                          (b.tx > 0   ? " and expects " + std::to_string(b.tx) + " more transaction bytes"
                           : b.tx < 0 ? " and has " + std::to_string(-b.tx) + " transaction bytes beyond those expected"
                                      : "");
      if (!h.loc.valid()) {
        hungOn_ = k;
        hungCta_ = p.cta;
        h.loc = p.waitingAt->loc;
        h.message = "barrier protocol hangs: this wait (" + where(p) + ") on " + describe(k) + " for the phase of parity " +
                    std::to_string(parity) + " never returns: " + state + ", and no partition can go on";
      } else {
        h.notes.push_back({p.waitingAt->loc, where(p) + " waits here on " + describe(k) + " (parity " +
                                                 std::to_string(parity) + "): " + state});
      }
    }
    return h;
  }
};

/// The mbarrier arrays of `f` (their local_allocs) with whether every mbarrier_init of each is
/// `unchecked`, in the order they are initialised.
std::vector<std::pair<const ir::Op *, bool>> mbarrierArrays(const ir::Function &f) {
  std::vector<std::pair<const ir::Op *, bool>> arrays;
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    if (op.kind != OpKind::MbarrierInit || op.operands.empty())
      return;
    const ir::Value *v = op.operands[0];
    while (v->def && v->def->kind == OpKind::AddPtr)
      v = v->def->operands[0];
    if (!v->def || v->def->kind != OpKind::LocalAlloc)
      return;
    auto it = std::find_if(arrays.begin(), arrays.end(), [&](auto &a) { return a.first == v->def; });
    if (it == arrays.end())
      arrays.push_back({v->def, op.sync.unchecked});
    else
      it->second &= op.sync.unchecked;
  });
  return arrays;
}

/// "mbarrier 'full' (allocated at line 12)" for an array's alloc.
std::string arrayName(const ir::Op *alloc) {
  const ir::Value *v = alloc->result();
  return (v->nameHint.empty() ? std::string("the mbarriers") : "mbarrier '" + v->nameHint + "'") +
         " (allocated at line " + std::to_string(alloc->loc.line) + ")";
}

/// The warning for a protocol the check could not follow, naming the mbarriers it concerns
/// (`only`, or every array of the kernel) that the author has not marked unchecked; none when
/// no such mbarrier is left.
std::vector<BarrierFinding> notChecked(const ir::Function &f, SourceLoc at, const std::string &why,
                                       const ir::Op *only, const ir::Op *origin) {
  std::string names; // the arrays the author has not vouched for
  for (auto &[alloc, unchecked] : mbarrierArrays(f))
    if ((!only || alloc == only) && !unchecked)
      names += (names.empty() ? "" : ", ") + arrayName(alloc);
  if (names.empty())
    return {};
  BarrierFinding w;
  w.warning = true;
  w.notFollowed = true;
  w.loc = at;
  w.message = "barrier protocol not checked: the protocol of " + names + " depends on " + why +
              ", which the compile-time check cannot follow (check_protocol=False on the mbarriers' allocation "
              "silences this)";
  if (origin)
    w.notes.push_back({origin->loc, "the value is read here"});
  return {w};
}

/// Whether `f` has what the check follows: mbarriers, or asynchronous readers of shared buffers.
bool hasProtocol(const ir::Function &f) {
  bool any = false;
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    any |= op.kind == OpKind::MbarrierInit || op.kind == OpKind::Wgmma || op.kind == OpKind::TmaStore;
    any |= (op.kind == OpKind::Barrier || op.kind == OpKind::BarrierArrive) && op.sync.barrierId >= 0 &&
           op.sync.threads > 0; // a named barrier that warp partitions share
  });
  return any;
}

} // namespace

std::vector<BarrierFinding> checkBarrierProtocols(const ir::Function &f) {
  if (!hasProtocol(f))
    return {};
  Simulator exact(f, std::nullopt);
  std::vector<BarrierFinding> found = exact.run();
  if (exact.determined())
    return found;
  // The protocol depends on the kernel's arguments: a few trials, each with every integer argument
  // one value and one program; a hang in one is a warning (the kernel may never run so).
  bool tried = false;
  int cluster = f.cluster[0] * f.cluster[1] * f.cluster[2];
  std::optional<Undetermined> trialWhy; // where a trial, knowing the arguments, stopped
  for (int64_t v : {16, 64, 256, 1024}) {
    Simulator trial(f, v);
    std::vector<BarrierFinding> hang = trial.run();
    if (!trial.determined()) {
      if (!trialWhy)
        trialWhy = trial.undetermined();
      continue;
    }
    tried = true;
    if (hang.empty())
      continue;
    for (BarrierFinding &h : hang) {
      h.warning = true;
      h.message += " (when every integer argument of the kernel is " + std::to_string(v) + " and the grid has one " +
                   (cluster > 1 ? "cluster of " + std::to_string(cluster) + " programs" : std::string("program")) +
                   "; the protocol depends on the arguments)";
    }
    if (trial.hungOnUnchecked())
      return {}; // the author vouches for this mbarrier
    return hang;
  }
  if (tried)
    return {};
  const Undetermined &u = trialWhy ? *trialWhy : exact.undetermined();
  const ir::Op *only = u.bar ? u.bar->first : nullptr;
  return notChecked(f, u.at ? u.at->loc : f.loc, u.why, only, u.origin);
}

} // namespace tle::transforms
