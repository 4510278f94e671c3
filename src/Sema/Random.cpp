// Triton's counter-based random numbers (`tl.philox`, `tl.rand`, `tl.randn`, `tl.randint`, ...),
// built while specialising from integer and float ops, so that both targets produce Triton's
// bits: Philox 4x32 (or 4x64 for 64-bit counters) with `n_rounds` rounds (default 10), the
// uint -> [0, 1) float map and the Box-Muller transform.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

using ir::DType;

namespace {

/// Philox constants: the Weyl key increments and the round multipliers, for 32- and 64-bit words.
struct PhiloxConstants {
  uint64_t keyA, keyB, roundA, roundB;
};
constexpr PhiloxConstants kPhilox32{0x9E3779B9u, 0xBB67AE85u, 0xD2511F53u, 0xCD9E8D57u};
constexpr PhiloxConstants kPhilox64{0x9E3779B97F4A7C15ull, 0xBB67AE8584CAA73Bull, 0xD2E7470EE14C6C93ull,
                                    0xCA5A826395121157ull};
constexpr int64_t kDefaultRounds = 10;

/// The Philox generator and the maps from its words to floats, building tile IR for one call.
struct Philox {
  Specializer &S;
  SourceLoc loc;
  const std::string &fname;

  /// Elementwise integer op of two values of one dtype, broadcast together.
  ir::Value *op2(ir::OpKind k, ir::Value *x, ir::Value *y) {
    S.broadcastPair(x, y, loc);
    return S.b->binary(k, loc, x, y);
  }

  /// The n_rounds argument (default 10), at most kMaxRounds.
  int64_t rounds(const Binder &p) {
    int64_t n = p.constInt("n_rounds", kDefaultRounds);
    if (n < 0)
      S.fail(p.loc("n_rounds"), fname + "() n_rounds must not be negative, got " + std::to_string(n));
    // Every round is unrolled into the kernel: a bound keeps compile time and memory in check
    // (Philox uses 7 or 10; Triton does not bound it).
    constexpr int64_t kMaxRounds = 256;
    if (n > kMaxRounds)
      S.fail(p.loc("n_rounds"), fname + "() n_rounds " + std::to_string(n) + " is more than " +
                                    std::to_string(kMaxRounds) + " (each round is unrolled into the kernel)");
    return n;
  }

  /// philox(seed, c0, c1, c2, c3): key = (low, high) 32-bit halves of the seed as uint64 for
  /// 32-bit counters; (seed, 0) for 64-bit counters. Returns the four output words.
  std::vector<ir::Value *> philox(const Arg &seedArg, std::vector<ir::Value *> c, int64_t nRounds,
                                  const std::vector<SourceLoc> &cloc) {
    auto &b = S.b;
    if (!seedArg.val.isTensor() && !seedArg.val.isNumber())
      S.fail(seedArg.loc, fname + "() seed must be an integer, got " + seedArg.val.describe());
    ir::Value *seed = S.toTensor(seedArg.val, seedArg.loc);
    DType sd = seed->type.dtype();
    if (!ir::isInteger(sd) || sd == DType::I1)
      S.fail(seedArg.loc, fname + "() seed must be an integer, got " + seed->type.str());
    seed = S.castTo(seed, ir::ScalarType{DType::U64}, loc);
    if (c[0]->type.elem.isPointer())
      S.fail(cloc[0], fname + "() counters must be integers, got " + c[0]->type.str());
    unsigned width = ir::bitWidth(c[0]->type.dtype());
    if (width != 32 && width != 64)
      S.fail(cloc[0], fname + "() counters must be 32- or 64-bit, got " + c[0]->type.str());
    DType ut = width == 32 ? DType::U32 : DType::U64;
    const PhiloxConstants &K = width == 32 ? kPhilox32 : kPhilox64;
    for (size_t i = 0; i < 4; ++i) {
      if (c[i]->type.elem.isPointer() || ir::bitWidth(c[i]->type.dtype()) != width)
        S.fail(cloc[i], fname + "() counters must all have " + std::to_string(width) + "-bit types, got " +
                            c[i]->type.str());
      if (c[i]->type.dtype() != ut)
        c[i] = b->create(ir::OpKind::Bitcast, loc, {c[i]}, {c[i]->type.withElem(ir::ScalarType{ut})})->result();
    }
    ir::Value *k0, *k1;
    if (width == 32) {
      k0 = S.castTo(seed, ir::ScalarType{DType::U32}, loc);
      k1 = S.castTo(op2(ir::OpKind::Shr, seed, b->constInt(loc, DType::U64, 32)), ir::ScalarType{DType::U32}, loc);
    } else {
      k0 = seed;
      k1 = b->splat(loc, b->constInt(loc, DType::U64, 0), {1}); // Triton: tl.full((1,), 0, tl.uint64)
    }
    auto cst = [&](uint64_t v) { return b->constInt(loc, ut, static_cast<int64_t>(v)); };
    for (int64_t r = 0; r < nRounds; ++r) {
      ir::Value *c0 = c[0], *c2 = c[2];
      c[0] = op2(ir::OpKind::Xor, op2(ir::OpKind::Xor, op2(ir::OpKind::UMulHi, cst(K.roundB), c2), c[1]), k0);
      c[2] = op2(ir::OpKind::Xor, op2(ir::OpKind::Xor, op2(ir::OpKind::UMulHi, cst(K.roundA), c0), c[3]), k1);
      c[1] = op2(ir::OpKind::Mul, cst(K.roundB), c2);
      c[3] = op2(ir::OpKind::Mul, cst(K.roundA), c0);
      k0 = op2(ir::OpKind::Add, k0, cst(K.keyA));
      k1 = op2(ir::OpKind::Add, k1, cst(K.keyB));
    }
    return c;
  }

  /// randint4x(seed, offset): philox(seed, offset, 0, 0, 0).
  std::vector<ir::Value *> randint4x(const Binder &p, const char *offsetName) {
    auto &b = S.b;
    const Arg &off = p.get(offsetName);
    if (!off.val.isTensor() && !off.val.isNumber())
      S.fail(off.loc, fname + "() " + offsetName + " must be an integer tensor, got " + off.val.describe());
    ir::Value *o = S.toTensor(off.val, off.loc);
    if (!ir::isInteger(o->type.dtype()) || o->type.dtype() == DType::I1)
      S.fail(off.loc, fname + "() " + offsetName + " must be an integer tensor, got " + o->type.str());
    ir::Value *zero = o->type.isTile() ? b->splat(loc, b->constInt(loc, o->type.dtype(), 0), o->type.shape)
                                       : b->constInt(loc, o->type.dtype(), 0);
    return philox(p.get("seed"), {o, zero, zero, zero}, rounds(p), {off.loc, loc, loc, loc});
  }

  /// uint_to_uniform_float: the bits as a signed integer, negatives mirrored (-x - 1), times
  /// the largest scale that keeps the result below 1.0 in fp32.
  ir::Value *toUniform(ir::Value *x, SourceLoc xloc) {
    DType d = x->type.dtype();
    bool is32 = d == DType::I32 || d == DType::U32, is64 = d == DType::I64 || d == DType::U64;
    if (!is32 && !is64)
      S.fail(xloc, "uint_to_uniform_float() expects int32, uint32, int64 or uint64, got " + x->type.str());
    DType st = is32 ? DType::I32 : DType::I64;
    if (d != st)
      x = S.b->create(ir::OpKind::Bitcast, loc, {x}, {x->type.withElem(ir::ScalarType{st})})->result();
    double scale = is32 ? 4.6566127342e-10 : 1.0842020432385337e-19;
    SVal xv = SVal::tensor(x);
    SVal neg = S.compare(ast::CompareOp::Lt, xv, SVal::integer(0), loc);
    SVal mirrored = S.binary(ast::BinaryOp::Sub, S.unary(ast::UnaryOp::Neg, xv, loc), SVal::integer(1), loc, loc, loc);
    CallArgs w{loc, {{loc, neg}, {loc, mirrored}, {loc, xv}}, {}};
    SVal y = S.callBuiltin("tl.where", w);
    return S.binary(ast::BinaryOp::Mul, y, SVal::real(scale), loc, loc, loc).v;
  }

  /// Box-Muller: (sqrt(-2 ln u1) cos(2 pi u2), sqrt(-2 ln u1) sin(2 pi u2)), u1 kept >= 1e-7.
  std::pair<ir::Value *, ir::Value *> toNormal(ir::Value *u1, ir::Value *u2) {
    auto call = [&](const char *f, std::vector<SVal> xs) {
      CallArgs a{loc, {}, {}};
      for (auto &x : xs)
        a.pos.push_back({loc, x});
      return S.callBuiltin(f, a);
    };
    SVal a = call("tl.maximum", {SVal::real(1.0e-7), SVal::tensor(u1)});
    SVal th = S.binary(ast::BinaryOp::Mul, SVal::real(6.283185307179586), SVal::tensor(u2), loc, loc, loc);
    SVal r = call("tl.sqrt", {S.binary(ast::BinaryOp::Mul, SVal::real(-2.0), call("tl.log", {a}), loc, loc, loc)});
    SVal n1 = S.binary(ast::BinaryOp::Mul, r, call("tl.cos", {th}), loc, loc, loc);
    SVal n2 = S.binary(ast::BinaryOp::Mul, r, call("tl.sin", {th}), loc, loc, loc);
    return {n1.v, n2.v};
  }
};

SVal tuple(const std::vector<ir::Value *> &vs) {
  std::vector<SVal> e;
  for (auto *v : vs)
    e.push_back(SVal::tensor(v));
  return SVal::tuple(e);
}

SVal philox(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  Philox g{S, c.loc, c.fname};
  std::vector<ir::Value *> cs;
  std::vector<SourceLoc> cl;
  for (const char *k : {"c0", "c1", "c2", "c3"}) {
    const Arg &a = p.get(k);
    if (!a.val.isTensor() && !a.val.isNumber())
      S.fail(a.loc, c.fname + "() " + k + " must be an integer tensor, got " + a.val.describe());
    cs.push_back(S.toTensor(a.val, a.loc));
    cl.push_back(a.loc);
  }
  return tuple(g.philox(p.get("seed"), cs, g.rounds(p), cl));
}

SVal randint(Specializer &S, const BuiltinCall &c) {
  Philox g{S, c.loc, c.fname};
  return SVal::tensor(g.randint4x(c.p, "offset")[0]);
}

SVal randint4x(Specializer &S, const BuiltinCall &c) {
  Philox g{S, c.loc, c.fname};
  return tuple(g.randint4x(c.p, "offset"));
}

SVal rand(Specializer &S, const BuiltinCall &c) {
  Philox g{S, c.loc, c.fname};
  return SVal::tensor(g.toUniform(g.randint4x(c.p, "offset")[0], c.loc));
}

SVal rand4x(Specializer &S, const BuiltinCall &c) {
  Philox g{S, c.loc, c.fname};
  auto r = g.randint4x(c.p, "offsets");
  for (auto *&x : r)
    x = g.toUniform(x, c.loc);
  return tuple(r);
}

SVal randn(Specializer &S, const BuiltinCall &c) {
  Philox g{S, c.loc, c.fname};
  auto r = g.randint4x(c.p, "offset");
  return SVal::tensor(g.toNormal(g.toUniform(r[0], c.loc), g.toUniform(r[1], c.loc)).first);
}

SVal randn4x(Specializer &S, const BuiltinCall &c) {
  Philox g{S, c.loc, c.fname};
  auto r = g.randint4x(c.p, "offset");
  for (auto *&x : r)
    x = g.toUniform(x, c.loc);
  auto [n1, n2] = g.toNormal(r[0], r[1]);
  auto [n3, n4] = g.toNormal(r[2], r[3]);
  return tuple({n1, n2, n3, n4});
}

SVal uintToUniformFloat(Specializer &S, const BuiltinCall &c) {
  Philox g{S, c.loc, c.fname};
  const Arg &x = c.p.get("x");
  if (!x.val.isTensor())
    S.fail(x.loc, c.fname + "() expects an integer tensor, got " + x.val.describe());
  return SVal::tensor(g.toUniform(x.val.v, x.loc));
}

SVal pairUniformToNormal(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  Philox g{S, c.loc, c.fname};
  ir::Value *u1 = p.tensor("u1"), *u2 = p.tensor("u2");
  for (auto [u, k] : {std::pair{u1, "u1"}, std::pair{u2, "u2"}})
    if (u->type.dtype() != DType::F32 && u->type.dtype() != DType::F64)
      S.fail(p.loc(k), c.fname + "() expects fp32 or fp64 uniforms, got " + u->type.str());
  auto [n1, n2] = g.toNormal(u1, u2);
  return tuple({n1, n2});
}

} // namespace

std::vector<BuiltinSpec> randomBuiltins() {
  return {
      {"tl.philox", "seed, c0, c1, c2, c3, n_rounds=10", philox},
      {"tl.randint", "seed, offset, n_rounds=10", randint},
      {"tl.randint4x", "seed, offset, n_rounds=10", randint4x},
      {"tl.rand", "seed, offset, n_rounds=10", rand},
      {"tl.rand4x", "seed, offsets, n_rounds=10", rand4x},
      {"tl.randn", "seed, offset, n_rounds=10", randn},
      {"tl.randn4x", "seed, offset, n_rounds=10", randn4x},
      {"tl.uint_to_uniform_float", "x", uintToUniformFloat},
      {"tl.pair_uniform_to_normal", "u1, u2", pairUniformToNormal},
  };
}

} // namespace tle::sema
