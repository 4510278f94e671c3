// Family "compare": == != < <= > >= over every pair of the 12 numeric dtypes (operands promoted
// as for arithmetic; NaN compares unordered except !=), tile against Python scalars, and
// comparison results used as masks and combined with & | ^.
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr size_t kN = 64;

const char *kNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
const char *kOps[] = {"==", "!=", "<", "<=", ">", ">="};

bool cmpRef(int k, Val a, Val b, DType r) {
  if (isFloatT(r)) {
    long double x = a.f, y = b.f;
    if (std::isnan(x) || std::isnan(y))
      return k == 1;
    switch (k) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    default: return x >= y;
    }
  }
  if (isSignedT(r)) {
    int64_t x = int64_t(a.i), y = int64_t(b.i);
    const bool res[] = {x == y, x != y, x < y, x <= y, x > y, x >= y};
    return res[k];
  }
  uint64_t x = a.i, y = b.i;
  const bool res[] = {x == y, x != y, x < y, x <= y, x > y, x >= y};
  return res[k];
}

void pair(Suite &s, DType a, DType b) {
  Rng rng(uint64_t(a) * 53 + uint64_t(b) + 3);
  Buffer x = randomBuffer(a, kN, rng, 20, true), y = randomBuffer(b, kN, rng, 20, true);
  // Equal values at every fourth position (where y's dtype holds x's value).
  for (size_t i = 0; i < kN; i += 4)
    store(y, i, castVal(elem(x, i), a, b));
  DType r = promote(a, b);
  std::string p = tag(a) + "," + tag(b);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(y)};
  std::string body = "@triton.jit\ndef k(x_ptr, y_ptr, o_eq, o_ne, o_lt, o_le, o_gt, o_ge, BLOCK: tl.constexpr):\n"
                     "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n    y = tl.load(y_ptr + offs)\n";
  for (int k = 0; k < 6; ++k) {
    body += subst("    tl.store(o_{N} + offs, x {OP} y)\n", {{"N", kNames[k]}, {"OP", kOps[k]}});
    Buffer want(DType::I1, kN);
    for (size_t i = 0; i < kN; ++i)
      want.setI(i, cmpRef(k, castVal(elem(x, i), a, r), castVal(elem(y, i), b, r), r));
    run.args.push_back(Arg::buf(Buffer(DType::I1, kN)));
    expect(run, 2 + k, std::string("compare/") + kNames[k] + "/" + p, want);
  }
  Batch bt;
  bt.name = "compare/" + p;
  bt.source = module(body);
  bt.signature = ptrSig({a, b, DType::I1, DType::I1, DType::I1, DType::I1, DType::I1, DType::I1}, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

/// Tile against literals, and comparisons combined as masks.
void scalars(Suite &s, DType a) {
  Rng rng(uint64_t(a) + 313);
  Buffer x = isFloatT(a) ? randomBuffer(a, kN, rng, 10, true) : smallInts(a, kN, rng, isSignedT(a) ? -10 : 0, 10);
  struct SC {
    const char *name, *expr;
    std::function<bool(long double)> ref;
  };
  std::vector<SC> cases = {
      {"lt_int", "x < 5", [](long double v) { return v < 5; }},
      {"eq_int", "x == 3", [](long double v) { return v == 3; }},
      {"ge_float", "x >= 2.5", [](long double v) { return v >= 2.5L; }},
      {"rgt_int", "7 > x", [](long double v) { return 7 > v; }},
      {"range_and", "(x > 1) & (x <= 6)", [](long double v) { return v > 1 && v <= 6; }},
      {"range_or", "(x < 2) | (x == 8)", [](long double v) { return v < 2 || v == 8; }},
      {"xor", "(x < 4) ^ (x > 2)", [](long double v) { return (v < 4) != (v > 2); }},
      {"not_eq", "(x != 4) == (x < 100)", [](long double v) { return (v != 4) == (v < 100); }},
  };
  Run run;
  run.args = {Arg::buf(x)};
  std::string outs, body;
  int n = 0;
  for (auto &c : cases) {
    std::string o = "o" + std::to_string(n);
    outs += o + ", ";
    body += subst("    tl.store({O} + offs, {E})\n", {{"O", o}, {"E", c.expr}});
    Buffer want(DType::I1, kN);
    for (size_t i = 0; i < kN; ++i) {
      bool r = c.ref(x.getF(i)); // NaN compares false except != (long double semantics)
      want.setI(i, r);
    }
    run.args.push_back(Arg::buf(Buffer(DType::I1, kN)));
    expect(run, 1 + n, std::string("compare/scalar/") + c.name + "/" + tag(a), want);
    ++n;
  }
  Batch bt;
  bt.name = "compare/scalar/" + tag(a);
  bt.source = module("@triton.jit\ndef k(x_ptr, " + outs + "BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                     "    x = tl.load(x_ptr + offs)\n" + body);
  std::vector<DType> ptrs = {a};
  for (int i = 0; i < n; ++i)
    ptrs.push_back(DType::I1);
  bt.signature = ptrSig(ptrs, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

} // namespace

void addCompare(Suite &s) {
  for (DType a : kNumDTypes)
    for (DType b : kNumDTypes)
      pair(s, a, b);
  for (DType a : kNumDTypes)
    scalars(s, a);
  Batch e;
  e.name = "compare/error/chained_runtime";
  e.source = module("@triton.jit\ndef k(x_ptr, o_ptr):\n    offs = tl.arange(0, 16)\n    x = tl.load(x_ptr + offs)\n"
                    "    tl.store(o_ptr + offs, 0 < x < 5)\n");
  e.signature = "*i32, *i1";
  e.expectError = "chained";
  s.add(std::move(e));
}

} // namespace tle::conformance
