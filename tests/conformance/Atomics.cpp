// Family "atomic": tl.atomic_add / max / min / and / or / xor / xchg / cas per dtype: with one
// lane per location (old values returned, masked-off lanes untouched), with duplicate indices
// inside a program and across 16 programs run concurrently (the final values of commutative
// ops are order-independent; float sums use exactly representable values), every `sem` and
// `scope`, scalar atomics, and a compare-and-swap race with exactly one winner.
#include "Families.h"

#include <sstream>

namespace tle::conformance {

namespace {

constexpr int kB = 64, kPrograms = 16, kSlots = 8;

enum class A { Add, Max, Min, And, Or, Xor, Xchg };
const char *aName(A a) {
  const char *n[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  return n[int(a)];
}

/// Values for dtype t: small integers (exact float sums), negative ones for signed and floats.
Buffer atomicValues(DType t, size_t n, Rng &rng, A a) {
  Buffer b(t, n);
  for (size_t i = 0; i < n; ++i) {
    if (a == A::And || a == A::Or || a == A::Xor)
      b.setI(i, rng.next());
    else if (isFloatT(t))
      b.setF(i, (long double)rng.range(-40, 40) / 4);
    else if (isSignedT(t))
      b.setF(i, (long double)rng.range(-1000, 1000));
    else
      b.setF(i, (long double)rng.range(0, 2000));
  }
  return b;
}

Val apply(A a, Val cur, Val v, DType t) {
  if (isFloatT(t)) {
    switch (a) {
    case A::Add: return Val::ofF(roundTo(cur.f + v.f, fmtOf(t)));
    case A::Max: return Val::ofF(std::max(cur.f, v.f));
    case A::Min: return Val::ofF(std::min(cur.f, v.f));
    default: return v;
    }
  }
  bool sgn = isSignedT(t);
  bool less = sgn ? int64_t(v.i) < int64_t(cur.i) : v.i < cur.i;
  switch (a) {
  case A::Add: return Val::ofI(wrapInt(cur.i + v.i, t));
  case A::Max: return less ? cur : v;
  case A::Min: return less ? v : cur;
  case A::And: return Val::ofI(cur.i & v.i);
  case A::Or: return Val::ofI(cur.i | v.i);
  case A::Xor: return Val::ofI(cur.i ^ v.i);
  default: return v;
  }
}

void unique(Suite &s, A a, DType t) {
  Rng rng(uint64_t(a) * 100 + uint64_t(t));
  Buffer init = atomicValues(t, kB, rng, a), v = atomicValues(t, kB, rng, a);
  Buffer oldInit(t, kB);
  for (int i = 0; i < kB; ++i)
    oldInit.setF(size_t(i), 77);
  Buffer wFinal(t, kB), wOld(t, kB);
  for (int i = 0; i < kB; ++i) {
    size_t k = size_t(i);
    bool on = i % 5 != 3;
    store(wFinal, k, on ? apply(a, elem(init, k), elem(v, k), t) : elem(init, k));
    if (on)
      wOld.setBits(k, init.bits(k));
    else
      wOld.setF(k, 77);
  }
  Run run;
  run.args = {Arg::buf(init), Arg::buf(v), Arg::buf(oldInit)};
  std::string nm = std::string("atomic/") + aName(a) + "/" + tag(t);
  expect(run, 0, nm + "/unique_final", wFinal);
  expect(run, 2, nm + "/unique_old", wOld);
  Batch b;
  b.name = nm + "/unique";
  b.source = module(subst("@triton.jit\ndef k(u_ptr, v_ptr, old_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                          "    m = (offs % 5) != 3\n    old = tl.atomic_{OP}(u_ptr + offs, tl.load(v_ptr + offs), mask=m)\n"
                          "    tl.static_assert(old.dtype == {T})\n    tl.store(old_ptr + offs, old, mask=m)\n",
                          {{"OP", aName(a)}, {"T", tlName(t)}}));
  b.signature = ptrSig({t, t, t}, std::to_string(kB));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

void duplicates(Suite &s, A a, DType t) {
  Rng rng(uint64_t(a) * 300 + uint64_t(t) + 1);
  Buffer init = atomicValues(t, kSlots, rng, a), v = atomicValues(t, size_t(kB * kPrograms), rng, a);
  if (isFloatT(t) && a == A::Add) // sums of quarters stay exact in every float dtype
    for (size_t i = 0; i < v.size(); ++i)
      v.setF(i, (long double)rng.range(-8, 8) / 4);
  Buffer want(t, kSlots);
  for (int j = 0; j < kSlots; ++j) {
    Val acc = elem(init, size_t(j));
    for (int p = 0; p < kPrograms; ++p)
      for (int i = j; i < kB; i += kSlots)
        acc = apply(a, acc, elem(v, size_t(p * kB + i)), t);
    store(want, size_t(j), acc);
  }
  Run run;
  run.args = {Arg::buf(init), Arg::buf(v)};
  run.grid[0] = kPrograms;
  run.threads = 4;
  std::string nm = std::string("atomic/") + aName(a) + "/" + tag(t) + "/duplicates";
  expect(run, 0, nm, want);
  Batch b;
  b.name = nm;
  b.source = module(subst("@triton.jit\ndef k(d_ptr, v_ptr, BLOCK: tl.constexpr, SLOTS: tl.constexpr):\n"
                          "    pid = tl.program_id(0)\n    offs = tl.arange(0, BLOCK)\n"
                          "    tl.atomic_{OP}(d_ptr + offs % SLOTS, tl.load(v_ptr + pid * BLOCK + offs))\n",
                          {{"OP", aName(a)}}));
  b.signature = ptrSig({t, t}, std::to_string(kB) + ", " + std::to_string(kSlots));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// Every sem and scope on atomic_add; scalar atomics from every program.
void semScope(Suite &s) {
  const char *sems[] = {"relaxed", "acquire", "release", "acq_rel"};
  const char *scopes[] = {"gpu", "cta", "sys"};
  for (const char *sem : sems)
    for (const char *scope : scopes) {
      Buffer c(DType::I32, 2);
      Run run;
      run.args = {Arg::buf(c)};
      run.grid[0] = 40;
      run.threads = 4;
      Buffer want(DType::I32, 2);
      want.setI(0, 40);
      want.setI(1, uint64_t(40 * 3));
      std::string nm = std::string("atomic/sem/") + sem + "/" + scope;
      expect(run, 0, nm, want);
      Batch b;
      b.name = nm;
      b.source = module(subst("@triton.jit\ndef k(c_ptr):\n    tl.atomic_add(c_ptr, 1, sem=\"{S}\", scope=\"{C}\")\n"
                              "    tl.atomic_add(c_ptr + 1, 3, sem=\"{S}\", scope=\"{C}\")\n",
                              {{"S", sem}, {"C", scope}}));
      b.signature = "*i32";
      b.runs.push_back(std::move(run));
      s.add(std::move(b));
    }
}

void cas(Suite &s, DType t) {
  Rng rng(uint64_t(t) + 31337);
  // One lane per location: swaps where the current value equals cmp.
  Buffer init = smallInts(t, kB, rng, 0, 3), cmp = smallInts(t, kB, rng, 0, 3), val = smallInts(t, kB, rng, 10, 50);
  Buffer wFinal(t, kB), wOld(t, kB);
  for (int i = 0; i < kB; ++i) {
    size_t k = size_t(i);
    bool eq = init.bits(k) == cmp.bits(k);
    wFinal.setBits(k, eq ? val.bits(k) : init.bits(k));
    wOld.setBits(k, init.bits(k));
  }
  Run run;
  run.args = {Arg::buf(init), Arg::buf(cmp), Arg::buf(val), Arg::buf(Buffer(t, kB))};
  std::string nm = "atomic/cas/" + tag(t);
  expect(run, 0, nm + "/unique_final", wFinal);
  expect(run, 3, nm + "/unique_old", wOld);
  Batch b;
  b.name = nm + "/unique";
  b.source = module("@triton.jit\ndef k(u_ptr, c_ptr, v_ptr, old_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    old = tl.atomic_cas(u_ptr + offs, tl.load(c_ptr + offs), tl.load(v_ptr + offs))\n"
                    "    tl.store(old_ptr + offs, old)\n");
  b.signature = ptrSig({t, t, t, t}, std::to_string(kB));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));

  // A race: every program tries to swap 0 -> pid + 1; exactly one wins.
  const int P = 48;
  Run race;
  race.args = {Arg::buf(Buffer(t, 1)), Arg::buf(Buffer(t, P))};
  race.grid[0] = P;
  race.threads = 4;
  Check c;
  c.name = nm + "/race_one_winner";
  c.validate = [P](const std::vector<Arg> &args) -> std::string {
    const Buffer &lock = args[0].buffer, &olds = args[1].buffer;
    int winners = 0, winner = -1;
    for (int p = 0; p < P; ++p)
      if (olds.getF(size_t(p)) == 0)
        ++winners, winner = p;
    std::ostringstream m;
    if (winners != 1)
      m << winners << " programs saw the lock free (expected exactly one)";
    else if (lock.getF(0) != winner + 1)
      m << "the lock holds " << lock.str(0) << " but program " << winner << " won";
    else
      for (int p = 0; p < P; ++p)
        if (p != winner && olds.getF(size_t(p)) != winner + 1)
          m << "program " << p << " saw " << olds.str(size_t(p)) << ", expected the winner's " << winner + 1 << "; ";
    return m.str();
  };
  race.checks.push_back(c);
  Batch r;
  r.name = nm + "/race";
  r.source = module(subst("@triton.jit\ndef k(lock_ptr, old_ptr):\n    pid = tl.program_id(0)\n"
                          "    old = tl.atomic_cas(lock_ptr, 0, pid + 1)\n"
                          "    tl.store(old_ptr + pid, old)\n",
                          {{"T", tlName(t)}}));
  r.signature = ptrSig({t, t});
  r.runs.push_back(std::move(race));
  s.add(std::move(r));
}

} // namespace

void addAtomics(Suite &s) {
  const std::vector<DType> ints = {DType::I32, DType::U32, DType::I64, DType::U64};
  const std::vector<DType> nums = {DType::I32, DType::U32, DType::I64, DType::U64, DType::F32, DType::F64};
  for (DType t : {DType::I32, DType::U32, DType::I64, DType::U64, DType::F32, DType::F64, DType::F16, DType::BF16}) {
    unique(s, A::Add, t);
    duplicates(s, A::Add, t);
  }
  for (A a : {A::Max, A::Min})
    for (DType t : nums) {
      unique(s, a, t);
      duplicates(s, a, t);
    }
  for (A a : {A::And, A::Or, A::Xor})
    for (DType t : ints) {
      unique(s, a, t);
      duplicates(s, a, t);
    }
  for (DType t : nums)
    unique(s, A::Xchg, t);
  for (DType t : {DType::I32, DType::I64, DType::U32, DType::U64})
    cas(s, t);
  semScope(s);
  for (DType t : {DType::I8, DType::I16}) {
    Batch e;
    e.name = "atomic/error/add_" + tag(t);
    e.source = module("@triton.jit\ndef k(x_ptr):\n    offs = tl.arange(0, 16)\n    tl.atomic_add(x_ptr + offs, tl.load(x_ptr + offs))\n");
    e.signature = ptrSig({t});
    e.expectError = "atomic";
    s.add(std::move(e));
  }
}

} // namespace tle::conformance
