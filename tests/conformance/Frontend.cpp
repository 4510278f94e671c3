// Families "constexpr" (compile-time evaluation with Python semantics, against fixed vectors),
// "control" (runtime if / while / for with carried scalars and tiles, nested loops, tl.range,
// static_range, runtime ternaries; several runs per kernel), "helper" (@triton.jit helpers:
// nested calls, constexpr parameters, defaults, tuple returns, early returns), "tuple" and
// "program" (program_id / num_programs over 3-D grids).
#include "Families.h"

namespace tle::conformance {

namespace {

/// Compile-time expressions and their Python values (fixed vectors).
void constexprs(Suite &s) {
  struct E {
    const char *name, *expr;
    long double value;
    bool isFloat;
  };
  const E es[] = {
      {"floordiv_neg", "-7 // 2", -4, false},
      {"mod_neg_lhs", "-7 % 3", 2, false},
      {"mod_neg_rhs", "7 % -3", -2, false},
      {"floordiv_neg_rhs", "7 // -2", -4, false},
      {"pow", "2 ** 10", 1024, false},
      {"pow_big", "3 ** 30", 205891132094649.0L, false},
      {"precedence", "(3 + 4) * 5 - 6 // 4", 34, false},
      {"shift_i64", "1 << 40", 1099511627776.0L, false},
      {"shift_right_neg", "-17 >> 2", -5, false},
      {"min_builtin", "min(3, 9, -2)", -2, false},
      {"max_builtin", "max(2, 8)", 8, false},
      {"abs_builtin", "abs(-5)", 5, false},
      {"cdiv", "triton.cdiv(10, 3)", 4, false},
      {"tl_cdiv", "tl.cdiv(17, 4)", 5, false},
      {"next_pow2", "triton.next_power_of_2(100)", 128, false},
      {"next_pow2_exact", "triton.next_power_of_2(64)", 64, false},
      {"int_trunc", "int(7.9)", 7, false},
      {"int_trunc_neg", "int(-7.9)", -7, false},
      {"bool_add", "True + True", 2, false},
      {"ternary", "3 if 2 > 1 else 4", 3, false},
      {"and_or", "(5 > 3) and (2 > 1) or False", 1, false},
      {"not", "not 0", 1, false},
      {"len_tuple", "len((1, 2, 3))", 3, false},
      {"tuple_index", "(10, 20, 30)[1]", 20, false},
      {"tuple_neg_index", "(10, 20, 30)[-1]", 30, false},
      {"block_mul", "BLOCK * 2", 32, false},
      {"block_floordiv_neg", "-BLOCK // 3", -6, false},
      {"invert", "~5", -6, false},
      {"xor", "5 ^ 3", 6, false},
      {"hex_bin", "0x10 | 0b11", 19, false},
      {"chained_cmp", "1 < 2 < 3", 1, false},
      {"chained_cmp_false", "1 < 3 < 2", 0, false},
      {"eq_chain", "BLOCK == 16", 1, false},
      {"const_global", "SCALE * 3", 21, false},
      {"true_div", "7 / 2", 3.5L, true},
      {"float_div", "7.0 / 4", 1.75L, true},
      {"float_pow_neg", "2.0 ** -2", 0.25L, true},
      {"float_floordiv", "-7.5 // 2", -4, true},
      {"float_mod", "-7.5 % 2", 0.5L, true},
      {"float_mix", "1e3 + 0.5", 1000.5L, true},
      {"float_min", "min(2.5, -1.25)", -1.25L, true},
      {"float_of_int", "float(3) / 8", 0.375L, true},
      {"sci", "1.5e-3 * 1000", 1.5L, true},
  };
  std::string ibody, fbody;
  Buffer wi(DType::I64, 64), wf(DType::F64, 64);
  Run run;
  int ni = 0, nf = 0;
  std::vector<std::pair<std::string, std::pair<bool, int>>> names;
  for (const E &e : es) {
    if (e.isFloat) {
      fbody += subst("    tl.store(f_ptr + {K}, {E})\n", {{"K", std::to_string(nf)}, {"E", e.expr}});
      wf.setF(size_t(nf), e.value);
      names.push_back({e.name, {true, nf++}});
    } else {
      ibody += subst("    tl.store(i_ptr + {K}, {E})\n", {{"K", std::to_string(ni)}, {"E", e.expr}});
      wi.setF(size_t(ni), e.value);
      names.push_back({e.name, {false, ni++}});
    }
  }
  run.args = {Arg::buf(Buffer(DType::I64, 64)), Arg::buf(Buffer(DType::F64, 64))};
  for (auto &[name, where] : names) {
    Buffer one(where.first ? DType::F64 : DType::I64, 1);
    one.setBits(0, (where.first ? wf : wi).bits(size_t(where.second)));
    Check &c = expect(run, where.first ? 1 : 0, "constexpr/" + name, one);
    c.begin = size_t(where.second);
  }
  Batch b;
  b.name = "constexpr/expressions";
  b.source = module("SCALE = tl.constexpr(7)\n\n@triton.jit\ndef k(i_ptr, f_ptr, BLOCK: tl.constexpr):\n" + ibody + fbody);
  b.signature = "*i64, *fp64, 16";
  b.runs.push_back(std::move(run));
  s.add(std::move(b));

  // static_range unrolling, constexpr branches, constexpr locals, dtype checks.
  Batch u;
  u.name = "constexpr/static";
  u.source = module("@triton.jit\ndef k(o_ptr, FLAG: tl.constexpr, N: tl.constexpr):\n"
                    "    acc = 0\n    for i in tl.static_range(0, N, 3):\n        acc += i * i\n"
                    "    tl.store(o_ptr, acc)\n"
                    "    if FLAG:\n        tl.store(o_ptr + 1, 111)\n    else:\n        tl.store(o_ptr + 1, 222)\n"
                    "    W: tl.constexpr = N * 2 + 1\n    tl.store(o_ptr + 2, W)\n"
                    "    x = tl.zeros((4,), tl.float16)\n"
                    "    tl.store(o_ptr + 3, 1 if x.dtype == tl.float16 else 0)\n"
                    "    tl.store(o_ptr + 4, 5 if FLAG else 6)\n"
                    "    t = (1, 2, (3, 4))\n    tl.store(o_ptr + 5, t[2][1] * 10 + len(t))\n"
                    "    tl.static_assert(N > 3, \"N must exceed 3\")\n"
                    "    tl.store(o_ptr + 6, o_ptr.dtype.element_ty == tl.int32)\n");
  u.signature = "*i32, True, 10";
  Buffer w(DType::I32, 7);
  const long double vals[] = {0 + 9 + 36 + 81, 111, 21, 1, 5, 43, 1};
  for (int i = 0; i < 7; ++i)
    w.setF(size_t(i), vals[i]);
  Run r2;
  r2.args = {Arg::buf(Buffer(DType::I32, 7))};
  expect(r2, 0, "constexpr/static_range_if_locals", w);
  u.runs.push_back(std::move(r2));
  s.add(std::move(u));

  Batch e;
  e.name = "constexpr/error/static_assert";
  e.source = module("@triton.jit\ndef k(o_ptr, N: tl.constexpr):\n    tl.static_assert(N > 3, \"N must exceed 3\")\n    tl.store(o_ptr, N)\n");
  e.signature = "*i32, 2";
  e.expectError = "N must exceed 3";
  s.add(std::move(e));
}

long long collatzSteps(long long v) {
  long long n = 0;
  while (v != 1) {
    v = v % 2 == 0 ? v / 2 : 3 * v + 1;
    ++n;
  }
  return n;
}

void control(Suite &s) {
  // Runtime if/else on a scalar, with carried scalars and tiles, nested.
  Batch b;
  b.name = "control/if";
  b.source = module("@triton.jit\ndef k(x_ptr, o_ptr, s_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    x = tl.load(x_ptr + offs)\n    c = 0\n"
                    "    if n > 5:\n        y = x * 2\n        c = 1\n"
                    "        if n > 50:\n            y = y + 100\n            c = 2\n"
                    "    elif n < 0:\n        y = x - x\n        c = -1\n"
                    "    else:\n        y = x - 1\n"
                    "    tl.store(o_ptr + offs, y)\n    tl.store(s_ptr, c)\n"
                    "    z = n * 3 if n % 2 == 0 else n + 1000\n    tl.store(s_ptr + 1, z)\n");
  b.signature = "*i32, *i32, *i32, i32, 32";
  for (int n : {-4, 0, 3, 6, 51, 77}) {
    Buffer x(DType::I32, 32), y(DType::I32, 32), sc(DType::I32, 2);
    for (int i = 0; i < 32; ++i) {
      x.setI(size_t(i), uint64_t(i * 3 - 20));
      long long v = i * 3 - 20;
      y.setI(size_t(i), uint64_t(n > 5 ? (n > 50 ? v * 2 + 100 : v * 2) : n < 0 ? 0 : v - 1));
    }
    sc.setI(0, uint64_t(n > 5 ? (n > 50 ? 2 : 1) : n < 0 ? -1 : 0));
    sc.setI(1, uint64_t(n % 2 == 0 ? n * 3 : n + 1000));
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(DType::I32, 32)), Arg::buf(Buffer(DType::I32, 2)), Arg::i32(n)};
    expect(run, 1, "control/if/n" + std::to_string(n) + "/tile", y);
    expect(run, 2, "control/if/n" + std::to_string(n) + "/scalars", sc);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));

  // for with runtime bounds and step: accumulate rows of x.
  Batch f;
  f.name = "control/for";
  f.source = module("@triton.jit\ndef k(x_ptr, o_ptr, c_ptr, lo, hi, step, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    acc = tl.zeros((BLOCK,), tl.float32)\n    cnt = 0\n"
                    "    for i in range(lo, hi, step):\n        acc += tl.load(x_ptr + i * BLOCK + offs) * (i + 1)\n        cnt += 1\n"
                    "    tl.store(o_ptr + offs, acc)\n    tl.store(c_ptr, cnt)\n"
                    "    t = 0\n    for j in tl.range(0, hi, num_stages=2):\n        t += j\n    tl.store(c_ptr + 1, t)\n"
                    "    u = 0\n    for a in range(lo, hi):\n        for bb in range(a):\n            u += a * bb\n"
                    "    tl.store(c_ptr + 2, u)\n");
  f.signature = "*fp32, *fp32, *i32, i32, i32, i32, 16";
  Buffer xs(DType::F32, 16 * 20);
  Rng rng(1234);
  for (size_t i = 0; i < xs.size(); ++i)
    xs.setF(i, (long double)rng.range(-50, 50) / 8);
  for (auto [lo, hi, st] : {std::array<int, 3>{0, 10, 1}, {2, 17, 3}, {5, 5, 1}, {7, 3, 2}, {0, 20, 7}}) {
    Buffer acc(DType::F32, 16), cnt(DType::I32, 3);
    int c = 0;
    for (int j = 0; j < 16; ++j) {
      float a = 0;
      for (int i = lo; i < hi; i += st)
        a = float(double(a) + double(float(xs.getF(size_t(i * 16 + j))) * float(i + 1)));
      acc.setF(size_t(j), a);
    }
    for (int i = lo; i < hi; i += st)
      ++c;
    long long t = 0, u = 0;
    for (int j = 0; j < hi; ++j)
      t += j;
    for (int a = lo; a < hi; ++a)
      for (int bb = 0; bb < a; ++bb)
        u += a * bb;
    cnt.setI(0, uint64_t(c));
    cnt.setI(1, uint64_t(t));
    cnt.setI(2, uint64_t(u));
    Run run;
    run.args = {Arg::buf(xs), Arg::buf(Buffer(DType::F32, 16)), Arg::buf(Buffer(DType::I32, 3)), Arg::i32(lo), Arg::i32(hi),
                Arg::i32(st)};
    std::string nm = "control/for/" + std::to_string(lo) + "," + std::to_string(hi) + "," + std::to_string(st);
    expect(run, 1, nm + "/acc", acc);
    expect(run, 2, nm + "/counts", cnt);
    f.runs.push_back(std::move(run));
  }
  s.add(std::move(f));

  // while loops: Collatz steps per lane-free scalar, a tile loop with swaps (Fibonacci).
  Batch w;
  w.name = "control/while";
  w.source = module("@triton.jit\ndef k(o_ptr, f_ptr, start, n, BLOCK: tl.constexpr):\n"
                    "    v = start\n    steps = 0\n    while v != 1:\n        if v % 2 == 0:\n            v = v // 2\n"
                    "        else:\n            v = 3 * v + 1\n        steps += 1\n    tl.store(o_ptr, steps)\n"
                    "    offs = tl.arange(0, BLOCK)\n    a = tl.zeros((BLOCK,), tl.int64)\n    b = a + offs\n    i = 0\n"
                    "    while i < n:\n        a, b = b, a + b\n        i += 1\n    tl.store(f_ptr + offs, a)\n");
  w.signature = "*i32, *i64, i32, i32, 16";
  for (auto [start, n] : {std::pair{1, 0}, std::pair{6, 5}, std::pair{27, 30}, std::pair{97, 60}}) {
    Buffer steps(DType::I32, 1), fib(DType::I64, 16);
    steps.setI(0, uint64_t(collatzSteps(start)));
    for (int j = 0; j < 16; ++j) {
      uint64_t a = 0, bb = uint64_t(j);
      for (int i = 0; i < n; ++i) {
        uint64_t t = a + bb;
        a = bb;
        bb = t;
      }
      fib.setI(size_t(j), a);
    }
    Run run;
    run.args = {Arg::buf(Buffer(DType::I32, 1)), Arg::buf(Buffer(DType::I64, 16)), Arg::i32(start), Arg::i32(n)};
    std::string nm = "control/while/" + std::to_string(start) + "," + std::to_string(n);
    expect(run, 0, nm + "/collatz", steps);
    expect(run, 1, nm + "/fibonacci_swap", fib);
    w.runs.push_back(std::move(run));
  }
  s.add(std::move(w));
}

void helpers(Suite &s) {
  Batch b;
  b.name = "helper/calls";
  b.source = module(
      "@triton.jit\ndef scale_add(x, y, K: tl.constexpr):\n    return x * K + y\n\n"
      "@triton.jit\ndef twice(x):\n    return scale_add(x, x, 1)\n\n"
      "@triton.jit\ndef minmax(x, y):\n    return tl.minimum(x, y), tl.maximum(x, y)\n\n"
      "@triton.jit\ndef with_default(x, bias=5):\n    return x + bias\n\n"
      "@triton.jit\ndef store_it(ptr, offs, v):\n    tl.store(ptr + offs, v)\n\n"
      "@triton.jit\ndef clamp_loop(v, n):\n    i = 0\n    while i < n:\n        v = v * 2\n        i += 1\n    return v\n\n"
      "@triton.jit\ndef k(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
      "    x = tl.load(x_ptr + offs)\n    y = tl.load(y_ptr + offs)\n"
      "    store_it(o_ptr, offs, scale_add(x, y, 3))\n"
      "    store_it(o_ptr, BLOCK + offs, twice(x))\n"
      "    lo, hi = minmax(x, y)\n    store_it(o_ptr, 2 * BLOCK + offs, lo)\n    store_it(o_ptr, 3 * BLOCK + offs, hi)\n"
      "    store_it(o_ptr, 4 * BLOCK + offs, with_default(x))\n    store_it(o_ptr, 5 * BLOCK + offs, with_default(x, bias=-1))\n"
      "    store_it(o_ptr, 6 * BLOCK + offs, clamp_loop(x, n))\n"
      "    r = minmax(x, y)\n    store_it(o_ptr, 7 * BLOCK + offs, r[1] - r[0])\n");
  b.signature = "*i32, *i32, *i32, i32, 16";
  Rng rng(77);
  Buffer x = smallInts(DType::I32, 16, rng, -30, 30), y = smallInts(DType::I32, 16, rng, -30, 30);
  for (int n : {0, 3}) {
    Buffer want(DType::I32, 8 * 16);
    for (int i = 0; i < 16; ++i) {
      long long a = int64_t(x.getI(size_t(i))), c = int64_t(y.getI(size_t(i)));
      const long long vals[] = {a * 3 + c, a + a, std::min(a, c), std::max(a, c), a + 5, a - 1, a * (1LL << n), std::max(a, c) - std::min(a, c)};
      for (int k = 0; k < 8; ++k)
        want.setI(size_t(k * 16 + i), uint64_t(vals[k]));
    }
    Run run;
    run.args = {Arg::buf(x), Arg::buf(y), Arg::buf(Buffer(DType::I32, 8 * 16)), Arg::i32(n)};
    const char *names[] = {"constexpr_param", "nested", "tuple_min", "tuple_max", "default_arg", "keyword_arg", "loop_inside", "tuple_index"};
    for (int k = 0; k < 8; ++k) {
      Buffer part(DType::I32, 16);
      for (int i = 0; i < 16; ++i)
        part.setBits(size_t(i), want.bits(size_t(k * 16 + i)));
      Check &c = expect(run, 2, std::string("helper/") + names[k] + "/n" + std::to_string(n), part);
      c.begin = size_t(k * 16);
    }
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));

  // Early returns: at the top level of a helper under a compile-time condition, and inside a
  // runtime if (Triton lowers it to unstructured control flow).
  for (bool runtime : {false, true}) {
    Batch r;
    r.name = std::string("helper/early_return/") + (runtime ? "runtime_if" : "constexpr_if");
    r.source = module(runtime ? "@triton.jit\ndef sign(v):\n    if v < 0:\n        return -1\n    return 1\n\n"
                                "@triton.jit\ndef k(o_ptr, v):\n    tl.store(o_ptr, sign(v))\n"
                              : "@triton.jit\ndef pick(x, FAST: tl.constexpr):\n    if FAST:\n        return x + 1\n    return x - 1\n\n"
                                "@triton.jit\ndef k(o_ptr, v):\n    tl.store(o_ptr, pick(v, True))\n    tl.store(o_ptr + 1, pick(v, False))\n");
    r.signature = "*i32, i32";
    for (int v : {-5, 8}) {
      Buffer w(DType::I32, runtime ? 1 : 2);
      if (runtime) {
        w.setI(0, uint64_t(v < 0 ? -1 : 1));
      } else {
        w.setI(0, uint64_t(v + 1));
        w.setI(1, uint64_t(v - 1));
      }
      Run run;
      run.args = {Arg::buf(Buffer(DType::I32, w.size())), Arg::i32(v)};
      expect(run, 0, r.name + "/v" + std::to_string(v), w);
      r.runs.push_back(std::move(run));
    }
    s.add(std::move(r));
  }
}

void tuples(Suite &s) {
  Batch b;
  b.name = "tuple/values";
  b.source = module("@triton.jit\ndef swap(t):\n    return t[1], t[0]\n\n"
                    "@triton.jit\ndef k(x_ptr, o_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    x = tl.load(x_ptr + offs)\n    t = (x, x * 2, 7)\n    a, b, c = t\n"
                    "    tl.store(o_ptr + offs, a + b + c)\n"
                    "    u = swap((x, x + 1))\n    tl.store(o_ptr + BLOCK + offs, u[0] * 10 + u[1])\n"
                    "    p, (q, r) = 1, (x, 3)\n    tl.store(o_ptr + 2 * BLOCK + offs, p + q * r)\n"
                    "    tl.store(o_ptr + 3 * BLOCK + offs, x + len(t))\n");
  b.signature = "*i32, *i32, 16";
  Rng rng(5);
  Buffer x = smallInts(DType::I32, 16, rng, -100, 100);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(DType::I32, 64))};
  const char *names[] = {"unpack", "helper_swap", "nested_unpack", "len"};
  for (int k = 0; k < 4; ++k) {
    Buffer part(DType::I32, 16);
    for (int i = 0; i < 16; ++i) {
      long long v = int64_t(x.getI(size_t(i)));
      const long long vals[] = {v + 2 * v + 7, (v + 1) * 10 + v, 1 + v * 3, v + 3};
      part.setI(size_t(i), uint64_t(vals[k]));
    }
    Check &c = expect(run, 1, std::string("tuple/") + names[k], part);
    c.begin = size_t(k * 16);
  }
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

void programs(Suite &s) {
  Batch b;
  b.name = "program/ids";
  b.source = module("@triton.jit\ndef k(o_ptr, n_ptr):\n    x = tl.program_id(0)\n    y = tl.program_id(axis=1)\n    z = tl.program_id(2)\n"
                    "    nx = tl.num_programs(0)\n    ny = tl.num_programs(1)\n    nz = tl.num_programs(2)\n"
                    "    idx = (z * ny + y) * nx + x\n    tl.store(o_ptr + idx, x + 10 * y + 100 * z)\n"
                    "    tl.store(n_ptr + idx, nx + 10 * ny + 100 * nz)\n");
  b.signature = "*i32, *i32";
  for (auto g : {std::array<uint32_t, 3>{1, 1, 1}, {7, 1, 1}, {3, 4, 1}, {2, 3, 5}, {33, 2, 2}}) {
    size_t n = size_t(g[0] * g[1] * g[2]);
    Buffer ids(DType::I32, n), nums(DType::I32, n);
    for (uint32_t z = 0; z < g[2]; ++z)
      for (uint32_t y = 0; y < g[1]; ++y)
        for (uint32_t x = 0; x < g[0]; ++x) {
          size_t i = (size_t(z) * g[1] + y) * g[0] + x;
          ids.setI(i, x + 10 * y + 100 * z);
          nums.setI(i, g[0] + 10 * g[1] + 100 * g[2]);
        }
    Run run;
    run.args = {Arg::buf(Buffer(DType::I32, n)), Arg::buf(Buffer(DType::I32, n))};
    run.grid[0] = g[0], run.grid[1] = g[1], run.grid[2] = g[2];
    run.threads = 2;
    std::string nm = "program/grid" + std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
    expect(run, 0, nm + "/program_id", ids);
    expect(run, 1, nm + "/num_programs", nums);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
  Batch e;
  e.name = "program/error/axis3";
  e.source = module("@triton.jit\ndef k(o_ptr):\n    tl.store(o_ptr, tl.program_id(3))\n");
  e.signature = "*i32";
  e.expectError = "axis";
  s.add(std::move(e));
}

} // namespace

void addFrontend(Suite &s) {
  constexprs(s);
  control(s);
  helpers(s);
  tuples(s);
  programs(s);
}

} // namespace tle::conformance
