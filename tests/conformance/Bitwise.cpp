// Family "bitwise": & | ^ over every pair of integer dtypes (i1 included), << and >> over every
// pair of the 8 integer dtypes with amounts inside and past the bit width, unary - and ~ and
// the errors for float operands.
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr size_t kN = 64;

const std::vector<DType> kBitDTypes = {DType::I1, DType::I8, DType::I16, DType::I32, DType::I64,
                                       DType::U8, DType::U16, DType::U32, DType::U64};

void logicPair(Suite &s, DType a, DType b) {
  Rng rng(uint64_t(a) * 37 + uint64_t(b) + 5);
  Buffer x = randomBuffer(a, kN, rng), y = randomBuffer(b, kN, rng);
  DType r = intPromote(a, b);
  std::string pair = tag(a) + "," + tag(b);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(y)};
  std::string body = "@triton.jit\ndef k(x_ptr, y_ptr, o_and, o_or, o_xor, BLOCK: tl.constexpr):\n"
                     "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n    y = tl.load(y_ptr + offs)\n";
  const char *names[] = {"and", "or", "xor"}, *ops[] = {"&", "|", "^"};
  for (int k = 0; k < 3; ++k) {
    body += subst("    r_{N} = x {OP} y\n    tl.static_assert(r_{N}.dtype == {T})\n    tl.store(o_{N} + offs, r_{N})\n",
                  {{"N", names[k]}, {"OP", ops[k]}, {"T", tlName(r)}});
    Buffer want(r, kN);
    for (size_t i = 0; i < kN; ++i) {
      uint64_t u = castVal(elem(x, i), a, r).i, v = castVal(elem(y, i), b, r).i;
      want.setI(i, k == 0 ? (u & v) : k == 1 ? (u | v) : (u ^ v));
    }
    run.args.push_back(Arg::buf(Buffer(r, kN)));
    expect(run, 2 + k, std::string("bitwise/") + names[k] + "/" + pair, want);
  }
  Batch bt;
  bt.name = "bitwise/logic/" + pair;
  bt.source = module(body);
  bt.signature = ptrSig({a, b, r, r, r}, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

uint64_t shiftRef(bool left, uint64_t x, uint64_t amt, DType r) {
  unsigned bits = dbits(r);
  if (left)
    return amt >= bits ? 0 : wrapInt(x << amt, r);
  if (isSignedT(r)) {
    int64_t sx = int64_t(x); // already sign-extended to 64 bits
    return uint64_t(amt >= bits ? (sx < 0 ? -1 : 0) : sx >> amt);
  }
  return amt >= bits ? 0 : x >> amt; // zero-extended
}

void shiftPair(Suite &s, DType a, DType b) {
  Rng rng(uint64_t(a) * 41 + uint64_t(b) + 11);
  DType r = intPromote(a, b);
  Buffer x = randomBuffer(a, kN, rng);
  Buffer y(b, kN);
  // Amounts 0 .. bits(r) - 1, and a few at or past the width.
  int64_t maxAmt = int64_t(dbits(r)) + 2; // at most 66: every integer dtype holds it
  for (size_t i = 0; i < kN; ++i)
    y.setI(i, uint64_t(i < 8 ? maxAmt - int64_t(i % 4) : rng.range(0, std::min<int64_t>(maxAmt, dbits(r) - 1))));
  std::string pair = tag(a) + "," + tag(b);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(y), Arg::buf(Buffer(r, kN)), Arg::buf(Buffer(r, kN))};
  Buffer wl(r, kN), wr(r, kN);
  for (size_t i = 0; i < kN; ++i) {
    uint64_t u = castVal(elem(x, i), a, r).i, v = castVal(elem(y, i), b, r).i;
    wl.setI(i, shiftRef(true, u, v, r));
    wr.setI(i, shiftRef(false, u, v, r));
  }
  expect(run, 2, "bitwise/shl/" + pair, wl);
  expect(run, 3, "bitwise/shr/" + pair, wr);
  Batch bt;
  bt.name = "bitwise/shift/" + pair;
  bt.source = module(subst("@triton.jit\ndef k(x_ptr, y_ptr, o_shl, o_shr, BLOCK: tl.constexpr):\n"
                           "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n    y = tl.load(y_ptr + offs)\n"
                           "    l = x << y\n    r = x >> y\n    tl.static_assert(l.dtype == {T})\n"
                           "    tl.store(o_shl + offs, l)\n    tl.store(o_shr + offs, r)\n",
                           {{"T", tlName(r)}}));
  bt.signature = ptrSig({a, b, r, r}, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

/// -x on every numeric dtype, ~x on integers, shifts by constants.
void unary(Suite &s, DType a) {
  Rng rng(uint64_t(a) + 77);
  Buffer x = randomBuffer(a, kN, rng, 100, true);
  bool isInt = !isFloatT(a);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(a, kN)), Arg::buf(Buffer(a, kN)), Arg::buf(Buffer(a, kN))};
  Buffer neg(a, kN), inv(a, kN), shc(a, kN);
  for (size_t i = 0; i < kN; ++i) {
    Val v = elem(x, i);
    if (isInt) {
      neg.setI(i, wrapInt(0 - v.i, a));
      inv.setI(i, wrapInt(~v.i, a));
      shc.setI(i, wrapInt(shiftRef(true, v.i, 3, a) ^ shiftRef(false, v.i, 1, a), a));
    } else {
      neg.setF(i, -v.f);
    }
  }
  expect(run, 1, "bitwise/neg/" + tag(a), neg);
  std::string body = "@triton.jit\ndef k(x_ptr, o_neg, o_inv, o_sh, BLOCK: tl.constexpr):\n"
                     "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n    tl.store(o_neg + offs, -x)\n";
  if (isInt) {
    body += "    tl.store(o_inv + offs, ~x)\n    tl.store(o_sh + offs, (x << 3) ^ (x >> 1))\n";
    expect(run, 2, "bitwise/invert/" + tag(a), inv);
    expect(run, 3, "bitwise/shift_const/" + tag(a), shc);
  }
  Batch bt;
  bt.name = "bitwise/unary/" + tag(a);
  bt.source = module(body);
  bt.signature = ptrSig({a, a, a, a}, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

} // namespace

void addBitwise(Suite &s) {
  for (DType a : kBitDTypes)
    for (DType b : kBitDTypes)
      logicPair(s, a, b);
  for (DType a : kIntDTypes)
    for (DType b : kIntDTypes)
      shiftPair(s, a, b);
  for (DType a : kNumDTypes)
    unary(s, a);
  // Float operands of bitwise operators and ~ are errors.
  const char *ops[] = {"&", "|", "^", "<<", ">>"};
  for (DType f : kFloatDTypes)
    for (const char *op : ops) {
      Batch e;
      e.name = "bitwise/error/" + tag(f) + std::string(op == std::string("&") ? "_and" : op == std::string("|") ? "_or"
                                                         : op == std::string("^") ? "_xor" : op == std::string("<<") ? "_shl" : "_shr");
      e.source = module(subst("@triton.jit\ndef k(x_ptr, y_ptr):\n    offs = tl.arange(0, 16)\n"
                              "    tl.store(y_ptr + offs, tl.load(x_ptr + offs) {OP} tl.load(y_ptr + offs))\n",
                              {{"OP", op}}));
      e.signature = ptrSig({f, DType::I32});
      e.expectError = "integer";
      s.add(std::move(e));
    }
  for (DType f : kFloatDTypes) {
    Batch e;
    e.name = "bitwise/error/" + tag(f) + "_invert";
    e.source = module("@triton.jit\ndef k(x_ptr):\n    offs = tl.arange(0, 16)\n    tl.store(x_ptr + offs, ~tl.load(x_ptr + offs))\n");
    e.signature = ptrSig({f});
    e.expectError = "integer";
    s.add(std::move(e));
  }
}

} // namespace tle::conformance
