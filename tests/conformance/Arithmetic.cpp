// Family "binary": + - * / % // between tiles over every pair of the 12 numeric dtypes, with the
// result dtype checked by tl.static_assert (Triton's computation_type_impl), tile op Python
// scalar (the scalar-kind rule), and the compile errors Triton requires (mixed-signedness
// / % //, // on floats).
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr size_t kN = 64;

struct BinOp {
  const char *name, *spelling;
  bool divMod; ///< / and % (and //): half types go to fp32, mixed signedness is an error
};
const BinOp kOps[] = {{"add", "+", false}, {"sub", "-", false}, {"mul", "*", false},
                      {"truediv", "/", true}, {"mod", "%", true}, {"floordiv", "//", true}};

/// The reference of `a OP b`, both already converted to the result dtype `r`.
Val apply(const std::string &op, Val a, Val b, DType r) {
  if (isFloatT(r)) {
    double x = double(a.f), y = double(b.f), z;
    if (op == "add") z = x + y;
    else if (op == "sub") z = x - y;
    else if (op == "mul") z = x * y;
    else if (op == "truediv") z = x / y;
    else z = std::fmod(x, y);
    // Correctly rounded in double, then once more to r: innocuous (53 >= 2p + 2 for p <= 24).
    return Val::ofF(roundTo(z, fmtOf(r)));
  }
  uint64_t x = a.i, y = b.i, z;
  if (op == "add") z = x + y;
  else if (op == "sub") z = x - y;
  else if (op == "mul") z = x * y;
  else if (isSignedT(r)) {
    int64_t sx = int64_t(x), sy = int64_t(y);
    z = uint64_t(op == "mod" ? sx % sy : sx / sy); // C: truncation toward zero
  } else {
    z = op == "mod" ? x % y : x / y;
  }
  return Val::ofI(wrapInt(z, r));
}

/// Result dtype of `a OP b` for tiles, or Invalid for a compile error.
DType resultType(const BinOp &op, DType a, DType b) {
  std::string n = op.name;
  if (n == "floordiv" && (isFloatT(a) || isFloatT(b)))
    return DType::Invalid;
  DType r = promote(a, b, op.divMod);
  if (r == DType::Invalid)
    return r;
  if (n == "truediv" && !isFloatT(r))
    return DType::F32; // int / int is fp32
  return r;
}

/// Divisor data: no zeros and no -1 (division by zero and INT_MIN / -1 are undefined on the GPU).
Buffer divisors(DType t, Rng &rng) {
  Buffer b = randomBuffer(t, kN, rng, 50, isFloatT(t));
  for (size_t i = 0; i < kN; ++i) {
    Val v = elem(b, i);
    if (!v.isF && (v.i == 0 || (isSignedT(t) && int64_t(v.i) == -1)))
      b.setI(i, 7);
  }
  return b;
}

void tileTile(Suite &s, DType a, DType b) {
  Rng rng(uint64_t(a) * 131 + uint64_t(b));
  Buffer x = randomBuffer(a, kN, rng, 100, true), y = divisors(b, rng);
  std::string body = "@triton.jit\ndef k(x_ptr, y_ptr, {OUTS}BLOCK: tl.constexpr):\n"
                     "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n    y = tl.load(y_ptr + offs)\n";
  std::string outs;
  std::vector<DType> ptrs = {a, b};
  Run run;
  run.args = {Arg::buf(x), Arg::buf(y)};
  std::string pair = tag(a) + "," + tag(b);
  for (const BinOp &op : kOps) {
    DType r = resultType(op, a, b);
    std::string caseName = std::string("binary/") + op.name + "/" + pair;
    if (r == DType::Invalid) {
      Batch e;
      e.name = caseName;
      e.source = module(subst("@triton.jit\ndef k(x_ptr, y_ptr, o_ptr):\n    offs = tl.arange(0, 16)\n"
                              "    z = tl.load(x_ptr + offs) {OP} tl.load(y_ptr + offs)\n    tl.store(o_ptr + offs, z)\n",
                              {{"OP", op.spelling}}));
      e.signature = ptrSig({a, b, DType::F32});
      e.expectError = std::string(op.name) == "floordiv" && (isFloatT(a) || isFloatT(b)) ? "'//' on floating-point"
                                                                                           : "mixed signedness";
      // Triton 3.6 also refuses // between a float and an int; mixed int // is "mixed signedness".
      s.add(std::move(e));
      continue;
    }
    int idx = int(run.args.size());
    std::string o = std::string("o_") + op.name;
    outs += o + ", ";
    ptrs.push_back(r);
    body += subst("    r_{N} = x {OP} y\n    tl.static_assert(r_{N}.dtype == {T})\n    tl.store({O} + offs, r_{N})\n",
                  {{"N", op.name}, {"OP", op.spelling}, {"T", tlName(r)}, {"O", o}});
    Buffer want(r, kN);
    for (size_t i = 0; i < kN; ++i)
      store(want, i, apply(op.name, castVal(elem(x, i), a, r), castVal(elem(y, i), b, r), r));
    run.args.push_back(Arg::buf(Buffer(r, kN)));
    Tol gpu = Tol::exact();
    if (std::string(op.name) == "truediv" && r == DType::F32)
      gpu = Tol::ulp(2); // div.full.f32
    if (std::string(op.name) == "mod" && isFloatT(r))
      gpu = Tol::close(1e-6, 1e-6);
    expect(run, idx, caseName, want, Tol::exact(), gpu);
  }
  Batch bt;
  bt.name = "binary/" + pair;
  bt.source = module(subst(body, {{"OUTS", outs}}));
  bt.signature = ptrSig(ptrs, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

/// Tile OP Python literal: the literal takes the tile's dtype unless it is of a higher kind
/// (bool < integer < float).
void tileScalar(Suite &s, DType a) {
  struct SOp {
    const char *name, *expr, *op;
    long double lit;
    bool litFloat, litLeft;
  };
  const SOp ops[] = {{"add_int", "x + 3", "add", 3, false, false},       {"rmul_int", "5 * x", "mul", 5, false, true},
                     {"rsub_int", "7 - x", "sub", 7, false, true},       {"add_float", "x + 2.5", "add", 2.5, true, false},
                     {"mul_float", "x * 0.75", "mul", 0.75, true, false}, {"div_int", "x / 4", "truediv", 4, false, false},
                     {"mod_int", "x % 7", "mod", 7, false, false},       {"floordiv_int", "x // 3", "floordiv", 3, false, false}};
  Rng rng(uint64_t(a) + 999);
  Buffer x = randomBuffer(a, kN, rng, 100, true);
  std::string body = "@triton.jit\ndef k(x_ptr, {OUTS}BLOCK: tl.constexpr):\n"
                     "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n";
  std::string outs;
  std::vector<DType> ptrs = {a};
  Run run;
  run.args = {Arg::buf(x)};
  int n = 0;
  for (const SOp &op : ops) {
    bool div = std::string(op.op) == "truediv" || std::string(op.op) == "mod" || std::string(op.op) == "floordiv";
    if (std::string(op.op) == "floordiv" && isFloatT(a))
      continue;
    DType litT = op.litFloat ? DType::F32 : DType::I32;
    DType r;
    int kindA = isFloatT(a) ? 2 : 1, kindL = op.litFloat ? 2 : 1;
    if (kindL <= kindA)
      r = div && (a == DType::F16 || a == DType::BF16) ? DType::F32 : a;
    else
      r = promote(a, litT, div);
    if (std::string(op.op) == "truediv" && !isFloatT(r))
      r = DType::F32;
    std::string o = "o" + std::to_string(n++);
    outs += o + ", ";
    ptrs.push_back(r);
    body += subst("    {O}_v = {E}\n    tl.static_assert({O}_v.dtype == {T})\n    tl.store({O} + offs, {O}_v)\n",
                  {{"O", o}, {"E", op.expr}, {"T", tlName(r)}});
    Buffer want(r, kN);
    // The literal converted to r (exact for these values in every dtype).
    Val lit = isFloatT(r) ? Val::ofF(roundTo(op.lit, fmtOf(r))) : Val::ofI(wrapInt(uint64_t(int64_t(op.lit)), r));
    for (size_t i = 0; i < kN; ++i) {
      Val xv = castVal(elem(x, i), a, r);
      store(want, i, op.litLeft ? apply(op.op, lit, xv, r) : apply(op.op, xv, lit, r));
    }
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(r, kN)));
    Tol gpu = std::string(op.op) == "truediv" && r == DType::F32 ? Tol::ulp(2)
              : std::string(op.op) == "mod" && isFloatT(r)          ? Tol::close(1e-6, 1e-6)
                                                                    : Tol::exact();
    expect(run, idx, std::string("binary/scalar/") + op.name + "/" + tag(a), want, Tol::exact(), gpu);
  }
  Batch bt;
  bt.name = "binary/scalar/" + tag(a);
  bt.source = module(subst(body, {{"OUTS", outs}}));
  bt.signature = ptrSig(ptrs, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

} // namespace

void addArithmetic(Suite &s) {
  for (DType a : kNumDTypes)
    for (DType b : kNumDTypes)
      tileTile(s, a, b);
  for (DType a : kNumDTypes)
    tileScalar(s, a);
  // A negative literal with an unsigned tile is an error.
  Batch e;
  e.name = "binary/scalar/negative_literal_unsigned";
  e.source = module("@triton.jit\ndef k(x_ptr):\n    offs = tl.arange(0, 16)\n    x = tl.load(x_ptr + offs)\n"
                    "    tl.store(x_ptr + offs, x + (-3))\n");
  e.signature = "*u32";
  e.expectError = "negative";
  s.add(std::move(e));
}

} // namespace tle::conformance
