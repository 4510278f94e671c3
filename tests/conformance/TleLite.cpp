// TLE-Lite family: tle.cumsum (exclusive sums and totals, FlagTree's promotion, forward, reverse
// and along dim 1), tle.extract_tile and tle.insert_tile with every index form (a list of ints, a
// linear int, a runtime scalar, a mix), overlapping windows (strides=), windows that line up with
// the layout (registers only) and windows that do not (through shared memory), and masked
// tle.load(is_async=True). References copy elements by their row-major positions.
#include "Families.h"

namespace tle::conformance {

namespace {

struct Out {
  std::string name;
  Buffer want;
};

/// One batch of kernel `k(params)` with `body`, `inputs` then one output buffer per `outs`, then
/// `scalars`; the module imports tle.
void tleBatch(Suite &s, const std::string &name, const std::string &params, const std::string &body,
              const std::vector<Buffer> &inputs, const std::vector<Out> &outs, const std::vector<Arg> &scalars,
              const std::string &tail, int warps = 4) {
  Batch b;
  b.name = name;
  b.source = module("import triton.experimental.tle.language as tle\n\n\n@triton.jit\ndef k(" + params + "):\n" + body);
  b.numWarps = warps;
  std::vector<DType> ptrs;
  Run run;
  for (auto &in : inputs) {
    ptrs.push_back(in.dtype);
    run.args.push_back(Arg::buf(in));
  }
  for (auto &o : outs) {
    ptrs.push_back(o.want.dtype);
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(o.want.dtype, o.want.size())));
    expect(run, idx, name + "/" + o.name, o.want);
  }
  for (auto &a : scalars)
    run.args.push_back(a);
  b.signature = ptrSig(ptrs, tail);
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// The [th, tw] window of the [H, W] row-major `x` at (r0, c0).
Buffer window(const Buffer &x, int W, int r0, int c0, int th, int tw) {
  Buffer out(x.dtype, size_t(th * tw));
  for (int i = 0; i < th; ++i)
    for (int j = 0; j < tw; ++j)
      out.setBits(size_t(i * tw + j), x.bits(size_t((r0 + i) * W + c0 + j)));
  return out;
}

/// `x` with the [th, tw] window at (r0, c0) replaced by `t`.
Buffer replaced(const Buffer &x, int W, const Buffer &t, int r0, int c0, int th, int tw) {
  Buffer out = x;
  for (int i = 0; i < th; ++i)
    for (int j = 0; j < tw; ++j)
      out.setBits(size_t((r0 + i) * W + c0 + j), t.bits(size_t(i * tw + j)));
  return out;
}

/// An [8, 32] tile cut into [4, 8] windows (a grid of 2 x 4; with strides [2, 4], 3 x 7), every
/// index form; the windows cross lanes, so they go through shared memory on the GPU.
void smallWindows(Suite &s, DType t) {
  const int H = 8, W = 32, th = 4, tw = 8;
  Rng rng(uint64_t(t) + 3400);
  Buffer x = t == DType::I1 ? smallInts(t, H * W, rng, 0, 1) : randomBuffer(t, H * W, rng, 100, false);
  Buffer y = t == DType::I1 ? smallInts(t, th * tw, rng, 0, 1) : randomBuffer(t, th * tw, rng, 100, false);
  Buffer z = t == DType::I1 ? smallInts(t, th * tw, rng, 0, 1) : randomBuffer(t, th * tw, rng, 100, false);
  const int k = 6, k2 = 1; // runtime indices: linear 6 = (1, 2); [k2, 3] = (1, 3)
  Buffer ins = replaced(replaced(x, W, y, 0, 8, th, tw), W, z, 4, 16, th, tw);
  tleBatch(s, "tle/extract_insert/" + tag(t),
           "x_ptr, y_ptr, z_ptr, e_list, e_int, e_dyn, e_mix, e_str, o_ins, o_str, k, k2",
           "    i = tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :]\n"
           "    j = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]\n"
           "    x = tl.load(x_ptr + i)\n"
           "    tl.store(e_list + j, tle.extract_tile(x, [1, 2], [4, 8]))\n"
           "    tl.store(e_int + j, tle.extract_tile(x, 5, tile_shape=[4, 8]))\n"
           "    tl.store(e_dyn + j, tle.extract_tile(x, k, [4, 8]))\n"
           "    tl.store(e_mix + j, tle.extract_tile(x, index=[k2, 3], tile_shape=[4, 8]))\n"
           "    tl.store(e_str + j, tle.extract_tile(x, [2, 5], [4, 8], strides=[2, 4]))\n"
           "    y = tle.insert_tile(x, tl.load(y_ptr + j), [0, 1])\n"
           "    tl.store(o_ins + i, tle.insert_tile(y, tl.load(z_ptr + j), k))\n"
           "    tl.store(o_str + i, tle.insert_tile(x, tl.load(y_ptr + j), [1, 3], strides=[2, 4]))\n",
           {x, y, z},
           {{"list", window(x, W, 4, 16, th, tw)},
            {"int", window(x, W, 4, 8, th, tw)},
            {"runtime", window(x, W, 4, 16, th, tw)},
            {"mixed", window(x, W, 4, 24, th, tw)},
            {"strides", window(x, W, 4, 20, th, tw)},
            {"insert", ins},
            {"insert_strides", replaced(x, W, y, 2, 12, th, tw)}},
           {Arg::i32(k), Arg::i32(k2)}, "i32, i32");
}

/// A [64, 64] tile cut into [32, 64] halves at a constant index: with 4 warps each thread holds
/// its elements of both halves, so the GPU picks registers without moving data; the insert
/// writes a scaled half back.
void registerWindows(Suite &s, DType t) {
  const int H = 64, W = 64;
  Rng rng(uint64_t(t) + 3500);
  Buffer x = randomBuffer(t, H * W, rng, 100, false);
  Buffer lower = window(x, W, 32, 0, 32, 64);
  Buffer doubled(t, lower.size());
  for (size_t i = 0; i < lower.size(); ++i)
    store(doubled, i, isFloatT(t) ? Val::ofF(elem(lower, i).f * 2) : Val::ofI(elem(lower, i).i * 2));
  Buffer back = replaced(x, W, doubled, 32, 0, 32, 64);
  tleBatch(s, "tle/extract_insert_regs/" + tag(t), "x_ptr, o_half, o_back",
           "    i = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]\n"
           "    x = tl.load(x_ptr + i)\n"
           "    h = tle.extract_tile(x, [1, 0], [32, 64])\n"
           "    tl.store(o_half + tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :], h)\n"
           "    tl.store(o_back + i, tle.insert_tile(x, h * 2, [1, 0]))\n",
           {x}, {{"half", lower}, {"back", back}}, {}, "");
}

/// FlagTree's cumsum accumulation type: bf16 in fp32, integers narrower than 32 bits in 32.
DType cumsumType(DType t) {
  if (t == DType::BF16)
    return DType::F32;
  if (t == DType::I8 || t == DType::I16)
    return DType::I32;
  if (t == DType::U8 || t == DType::U16)
    return DType::U32;
  return t;
}

/// tle.cumsum of a rank-1 tile (forward and reverse) and along dim 1 of an [8, 32] tile, with its
/// totals. Small integers, so float sums are exact in any order (fp16 sums stay below 2048).
void cumsumCases(Suite &s, DType t) {
  const int N = 128, R = 8, C = 32;
  Rng rng(uint64_t(t) + 3600);
  Buffer x = smallInts(t, N, rng, isSignedT(t) || isFloatT(t) ? -4 : 0, 4);
  Buffer m = smallInts(t, R * C, rng, isSignedT(t) || isFloatT(t) ? -4 : 0, 4);
  DType u = cumsumType(t);
  auto wide = [&](const Buffer &b, size_t i) { return castVal(elem(b, i), t, u); };
  auto add = [&](Val a, Val b) {
    return isFloatT(u) ? Val::ofF(a.f + b.f) : Val::ofI(wrapInt(a.i + b.i, u));
  };
  Val zero = isFloatT(u) ? Val::ofF(0) : Val::ofI(0);
  Buffer fwd(u, N), rev(u, N), tot(u, 1), rows(u, size_t(R * C)), rowTot(u, size_t(R));
  Val acc = zero;
  for (int i = 0; i < N; ++i) {
    store(fwd, size_t(i), acc);
    acc = add(acc, wide(x, size_t(i)));
  }
  store(tot, 0, acc);
  acc = zero;
  for (int i = N - 1; i >= 0; --i) {
    store(rev, size_t(i), acc);
    acc = add(acc, wide(x, size_t(i)));
  }
  for (int r = 0; r < R; ++r) {
    acc = zero;
    for (int j = 0; j < C; ++j) {
      store(rows, size_t(r * C + j), acc);
      acc = add(acc, wide(m, size_t(r * C + j)));
    }
    store(rowTot, size_t(r), acc);
  }
  tleBatch(s, "tle/cumsum/" + tag(t), "x_ptr, m_ptr, o_fwd, o_tot, o_rev, o_rows, o_rtot",
           "    i = tl.arange(0, 128)\n"
           "    ex, total = tle.cumsum(tl.load(x_ptr + i))\n"
           "    tl.store(o_fwd + i, ex)\n"
           "    tl.store(o_tot, total)\n"
           "    tl.store(o_rev + i, tle.cumsum(tl.load(x_ptr + i), 0, reverse=True)[0])\n"
           "    k = tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :]\n"
           "    rex, rtot = tle.cumsum(tl.load(m_ptr + k), axis=1)\n"
           "    tl.store(o_rows + k, rex)\n"
           "    tl.store(o_rtot + tl.arange(0, 8), rtot)\n",
           {x, m}, {{"exclusive", fwd}, {"total", tot}, {"reverse", rev}, {"rows", rows}, {"row_totals", rowTot}}, {},
           "");
}

/// tle.load(..., is_async=True): a masked row with a constant `other` (3), with none (zeros), and
/// an [8, 32] tile masked by a runtime column bound with other -2 (signed types) or 5; masked-off
/// elements read `other`. On the GPU the elements of 4 bytes and more become cp.async copies
/// (async-loads), narrower ones unaligned for them stay loads; the values are the same.
void asyncLoads(Suite &s, DType t) {
  const int N = 256, R = 8, C = 32, n = 200, cols = 19;
  Rng rng(uint64_t(t) + 3700);
  Buffer x = randomBuffer(t, N, rng, 100, false);
  auto num = [&](int64_t v) { return isFloatT(t) ? Val::ofF(v) : Val::ofI(wrapInt(uint64_t(v), t)); };
  const int64_t other2 = isSignedT(t) || isFloatT(t) ? -2 : 5;
  Buffer withOther(t, N), zeros(t, N), tile(t, size_t(R * C));
  for (int i = 0; i < N; ++i) {
    store(withOther, size_t(i), i < n ? elem(x, size_t(i)) : num(3));
    store(zeros, size_t(i), i < n ? elem(x, size_t(i)) : num(0));
    store(tile, size_t(i), i % C < cols ? elem(x, size_t(i)) : num(other2));
  }
  tleBatch(s, "tle/load_async/" + tag(t), "x_ptr, o_other, o_zero, o_tile, n, cols",
           "    i = tl.arange(0, 256)\n"
           "    tl.store(o_other + i, tle.load(x_ptr + i, mask=i < n, other=3, is_async=True))\n"
           "    tl.store(o_zero + i, tle.load(x_ptr + i, mask=i < n, is_async=True))\n"
           "    c = tl.arange(0, 32)[None, :]\n"
           "    k = tl.arange(0, 8)[:, None] * 32 + c\n"
           "    tl.store(o_tile + k, tle.load(x_ptr + k, mask=c < cols, other=" + std::to_string(other2) +
               ", is_async=True))\n",
           {x}, {{"other", withOther}, {"zero_fill", zeros}, {"tile", tile}}, {Arg::i32(n), Arg::i32(cols)},
           "i32, i32");
}

} // namespace

void addTleLite(Suite &s) {
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::F16, DType::BF16, DType::F32,
                  DType::F64})
    asyncLoads(s, t);
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::F16, DType::BF16, DType::F32,
                  DType::F64})
    cumsumCases(s, t);
  for (DType t : {DType::I1, DType::I8, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64})
    smallWindows(s, t);
  for (DType t : {DType::I32, DType::F32, DType::F16})
    registerWindows(s, t);
}

} // namespace tle::conformance
