// Family "random": tl.philox (the Random123 known-answer vectors), tl.randint / randint4x,
// tl.rand / rand4x, tl.randn / randn4x and tl.uint_to_uniform_float, with 32- and 64-bit
// offsets, several seeds and round counts. The reference is Philox 4x32 / 4x64 written here from
// the algorithm (checked against the known answers before any case is generated); integer and
// uniform results must be bit-identical on both targets, normals (log, cos, sin) within a
// tolerance.
#include "Families.h"

#include <array>
#include <stdexcept>

namespace tle::conformance {

namespace {

/// Philox with W-bit words: per round, the double-width products of counter words 0 and 2
/// with the round multipliers mixed with the key; the key is bumped by the Weyl constants.
template <typename W, typename WW>
std::array<W, 4> philox(std::array<W, 4> c, W k0, W k1, int rounds, W mulA, W mulB, W weylA, W weylB) {
  constexpr int bits = sizeof(W) * 8;
  for (int r = 0; r < rounds; ++r) {
    WW p0 = WW(mulA) * c[0], p1 = WW(mulB) * c[2];
    c = {W(W(p1 >> bits) ^ c[1] ^ k0), W(p1), W(W(p0 >> bits) ^ c[3] ^ k1), W(p0)};
    k0 = W(k0 + weylA);
    k1 = W(k1 + weylB);
  }
  return c;
}
std::array<uint32_t, 4> philox32(std::array<uint32_t, 4> c, uint32_t k0, uint32_t k1, int rounds = 10) {
  return philox<uint32_t, uint64_t>(c, k0, k1, rounds, 0xD2511F53u, 0xCD9E8D57u, 0x9E3779B9u, 0xBB67AE85u);
}
std::array<uint64_t, 4> philox64(std::array<uint64_t, 4> c, uint64_t k0, uint64_t k1, int rounds = 10) {
  return philox<uint64_t, unsigned __int128>(c, k0, k1, rounds, 0xD2E7470EE14C6C93ull, 0xCA5A826395121157ull,
                                             0x9E3779B97F4A7C15ull, 0xBB67AE8584CAA73Bull);
}

/// The reference must reproduce Random123's known answers before it checks anything.
void checkKnownAnswers() {
  using A = std::array<uint32_t, 4>;
  bool ok = philox32({0, 0, 0, 0}, 0, 0) == A{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8} &&
            philox32({~0u, ~0u, ~0u, ~0u}, ~0u, ~0u) == A{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd} &&
            philox32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0) ==
                A{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1} &&
            philox64({0, 0, 0, 0}, 0, 0) == std::array<uint64_t, 4>{0x16554d9eca36314cull, 0xdb20fe9d672d0fdcull,
                                                                    0xd7e772cee186176bull, 0x7e68b68aec7ba23bull};
  if (!ok)
    throw std::logic_error("random: the Philox reference does not reproduce the known-answer vectors");
}

/// Triton's uint -> [0, 1): the bits as a signed integer, negatives mirrored to -x - 1, to fp32
/// (rounded to nearest), times the scale in fp32 (one rounding).
long double uniform(uint64_t bits, bool is64) {
  if (is64) {
    int64_t x = int64_t(bits);
    if (x < 0)
      x = ~x;
    return (long double)(float(x) * 1.0842020432385337e-19f);
  }
  int32_t x = int32_t(uint32_t(bits));
  if (x < 0)
    x = ~x;
  return (long double)(float(x) * 4.6566127342e-10f);
}
/// Box-Muller on the fp32 uniforms (u1 kept >= 1e-7), in double.
long double normal(long double u1, long double u2, bool sine) {
  float a = std::max(1.0e-7f, float(u1));
  double th = double(6.283185307179586f * float(u2));
  double r = std::sqrt(-2.0 * std::log(double(a)));
  return r * (sine ? std::sin(th) : std::cos(th));
}

/// One batch per offset dtype and round count: randint4x's four words, rand, rand4x, randn,
/// randn4x at offsets `offs` under `seed`.
void randomCase(Suite &s, DType offT, DType seedT, int rounds, const std::vector<int64_t> &seeds) {
  bool is64 = dbits(offT) == 64;
  DType ut = is64 ? DType::U64 : DType::U32;
  const size_t n = 512;
  Rng rng(uint64_t(offT) * 17 + uint64_t(rounds));
  Buffer offs(offT, n);
  for (size_t i = 0; i < n; ++i)
    offs.setI(i, i < 8 ? uint64_t(int64_t(i) - 2) : is64 ? rng.next() : rng.next() & 0xffffffffull);
  std::string nm = "random/" + tag(offT) + "_seed_" + tag(seedT) + "_r" + std::to_string(rounds);
  Batch b;
  b.name = nm;
  b.source = module(subst(
      "@triton.jit\ndef k(off_ptr, w0, w1, w2, w3, ri, u, u3, nn, n3, seed, N: tl.constexpr, R: tl.constexpr):\n"
      "    i = tl.arange(0, N)\n    off = tl.load(off_ptr + i)\n"
      "    a, b, c, d = tl.randint4x(seed, off, R)\n"
      "    tl.static_assert(a.dtype == {U})\n"
      "    tl.store(w0 + i, a)\n    tl.store(w1 + i, b)\n    tl.store(w2 + i, c)\n    tl.store(w3 + i, d)\n"
      "    tl.store(ri + i, tl.randint(seed, off, n_rounds=R))\n"
      "    r = tl.rand(seed, off, R)\n    tl.static_assert(r.dtype == tl.float32)\n    tl.store(u + i, r)\n"
      "    r0, r1, r2, r3 = tl.rand4x(seed, off, R)\n    tl.store(u3 + i, r3)\n"
      "    tl.store(nn + i, tl.randn(seed, off, R))\n"
      "    n0, n1, n2, n3v = tl.randn4x(seed, off, R)\n    tl.store(n3 + i, n3v)\n",
      {{"U", tlName(ut)}}));
  b.signature = ptrSig({offT, ut, ut, ut, ut, ut, DType::F32, DType::F32, DType::F32, DType::F32},
                       sigName(seedT) + ", " + std::to_string(n) + ", " + std::to_string(rounds));
  for (int64_t seed : seeds) {
    Run run;
    run.args = {Arg::buf(offs)};
    Buffer w[4] = {Buffer(ut, n), Buffer(ut, n), Buffer(ut, n), Buffer(ut, n)};
    Buffer u(DType::F32, n), u3(DType::F32, n), nn(DType::F32, n), n3(DType::F32, n);
    // The seed goes to uint64 (sign-extended from a signed type); 32-bit counters are keyed by
    // its (low, high) halves, 64-bit counters by (seed, 0).
    uint64_t s64 = wrapInt(uint64_t(seed), seedT);
    for (size_t i = 0; i < n; ++i) {
      std::array<uint64_t, 4> r;
      if (is64) {
        r = philox64({offs.getI(i), 0, 0, 0}, s64, 0, rounds);
      } else {
        auto r32 = philox32({uint32_t(offs.getI(i)), 0, 0, 0}, uint32_t(s64), uint32_t(s64 >> 32), rounds);
        r = {r32[0], r32[1], r32[2], r32[3]};
      }
      for (int k = 0; k < 4; ++k)
        w[k].setI(i, r[size_t(k)]);
      u.setF(i, uniform(r[0], is64));
      u3.setF(i, uniform(r[3], is64));
      nn.setF(i, normal(uniform(r[0], is64), uniform(r[1], is64), false));
      n3.setF(i, normal(uniform(r[2], is64), uniform(r[3], is64), true));
    }
    std::string rn = nm + "/seed" + std::to_string(seed);
    for (int k = 0; k < 4; ++k) {
      run.args.push_back(Arg::buf(Buffer(ut, n)));
      expect(run, 1 + k, rn + "/randint4x_" + std::to_string(k), w[k]);
    }
    run.args.push_back(Arg::buf(Buffer(ut, n)));
    expect(run, 5, rn + "/randint", w[0]);
    run.args.push_back(Arg::buf(Buffer(DType::F32, n)));
    expect(run, 6, rn + "/rand", u);
    run.args.push_back(Arg::buf(Buffer(DType::F32, n)));
    expect(run, 7, rn + "/rand4x_3", u3);
    // Normals: libm on the CPU, approximate log and libdevice sin/cos on the GPU; sqrt(-2 ln u)
    // magnifies the log's absolute error where u is near 1.
    run.args.push_back(Arg::buf(Buffer(DType::F32, n)));
    expect(run, 8, rn + "/randn", nn, Tol::close(1e-5, 1e-5), Tol::close(1e-4, 2e-3));
    run.args.push_back(Arg::buf(Buffer(DType::F32, n)));
    expect(run, 9, rn + "/randn4x_3", n3, Tol::close(1e-5, 1e-5), Tol::close(1e-4, 2e-3));
    run.args.push_back(Arg::i(seedT, seed));
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
}

/// tl.philox with all four counters and the full key: the Random123 vectors.
void knownAnswerCase(Suite &s) {
  Batch b;
  b.name = "random/philox_known_answers";
  b.source = module("@triton.jit\ndef k(c_ptr, o_ptr, seed, R: tl.constexpr):\n"
                    "    i = tl.arange(0, 4)\n"
                    "    c0 = tl.load(c_ptr + 4 * i)\n    c1 = tl.load(c_ptr + 4 * i + 1)\n"
                    "    c2 = tl.load(c_ptr + 4 * i + 2)\n    c3 = tl.load(c_ptr + 4 * i + 3)\n"
                    "    a, b, c, d = tl.philox(seed, c0, c1, c2, c3, R)\n"
                    "    tl.store(o_ptr + 4 * i, a)\n    tl.store(o_ptr + 4 * i + 1, b)\n"
                    "    tl.store(o_ptr + 4 * i + 2, c)\n    tl.store(o_ptr + 4 * i + 3, d)\n");
  b.signature = "*u32, *u32, i64, 10";
  Buffer c(DType::U32, 16);
  uint32_t ctr[16] = {0, 0, 0, 0, ~0u, ~0u, ~0u, ~0u, 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 7, 8, 9, 10};
  for (size_t i = 0; i < 16; ++i)
    c.setI(i, ctr[i]);
  struct Key {
    uint64_t seed;
    const char *name;
  };
  for (Key key : {Key{0, "key0"}, Key{~0ull, "key_ones"}, Key{0x299f31d0a4093822ull, "key_pi"}}) {
    Buffer want(DType::U32, 16);
    for (size_t n = 0; n < 4; ++n) {
      auto r = philox32({ctr[4 * n], ctr[4 * n + 1], ctr[4 * n + 2], ctr[4 * n + 3]}, uint32_t(key.seed),
                        uint32_t(key.seed >> 32));
      for (size_t w = 0; w < 4; ++w)
        want.setI(4 * n + w, r[w]);
    }
    Run run;
    run.args = {Arg::buf(c), Arg::buf(Buffer(DType::U32, 16)), Arg::i(DType::I64, int64_t(key.seed))};
    expect(run, 1, std::string("random/philox_known_answers/") + key.name, want);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
}

/// uint_to_uniform_float at the edges of its domain (0, INT_MAX, INT_MIN, -1) and random words.
void uniformCase(Suite &s) {
  for (DType t : {DType::U32, DType::I32, DType::U64, DType::I64}) {
    bool is64 = dbits(t) == 64;
    Rng rng(uint64_t(t) + 77);
    const size_t n = 128;
    Buffer x(t, n), want(DType::F32, n);
    for (size_t i = 0; i < n; ++i) {
      uint64_t top = is64 ? 1ull << 63 : 1ull << 31;
      uint64_t v = i == 0 ? 0 : i == 1 ? top - 1 : i == 2 ? top : i == 3 ? ~0ull : rng.next();
      x.setI(i, v);
      want.setF(i, uniform(x.getI(i), is64));
    }
    Batch b;
    b.name = "random/uint_to_uniform_float/" + tag(t);
    b.source = module("@triton.jit\ndef k(x_ptr, o_ptr, N: tl.constexpr):\n    i = tl.arange(0, N)\n"
                      "    tl.store(o_ptr + i, tl.uint_to_uniform_float(tl.load(x_ptr + i)))\n");
    b.signature = ptrSig({t, DType::F32}, std::to_string(n));
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(DType::F32, n))};
    expect(run, 1, b.name, want);
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
}

} // namespace

void addRandom(Suite &s) {
  checkKnownAnswers();
  knownAnswerCase(s);
  uniformCase(s);
  randomCase(s, DType::I32, DType::I32, 10, {0, 42, -1, 2147483647});
  randomCase(s, DType::U32, DType::I64, 10, {0x123456789abcdefll, -5});
  randomCase(s, DType::I32, DType::U32, 7, {12345});
  randomCase(s, DType::I64, DType::I64, 10, {0, 987654321987ll, -3});
  randomCase(s, DType::U64, DType::I32, 6, {77});
}

} // namespace tle::conformance
