// Unit tests of the tile-IR verifier (ir::verify): operand/result counts, dtypes, shapes and
// terminators of hand-written IR are rejected with the op's location, before any pass reads them.
#include "tle/IR/IR.h"
#include "tle/IR/Parser.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

using namespace tle;

namespace {

/// Parses `body` as the body of `func @k(%p.0: *fp32, %q.1: *i32)` and verifies it; returns the
/// problem ("" when valid) and sets `line` to its line within `body` (1-based, 0 when unlocated).
std::string verifyBody(const std::string &body, unsigned *line = nullptr) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile("t.tir", "func @k(%p.0: *fp32, %q.1: *i32) attributes {num_warps = 4} {\n" + body + "}\n");
  std::unique_ptr<ir::Function> f;
  try {
    f = ir::parseFunction(file, diags);
  } catch (const CompileAborted &) {
    FAIL("does not parse: " << err.str());
  }
  SourceLoc where;
  std::string msg = ir::verify(*f, where);
  if (line)
    *line = where.valid() ? where.line - 1 : 0;
  return msg;
}

} // namespace

TEST_CASE("verifier: a valid kernel passes", "[verifier]") {
  CHECK(verifyBody("  %1 = arange 0, 16 : tile<16xi32>\n"
                   "  %2 = splat %p.0 : *fp32 -> tile<16x*fp32>\n"
                   "  %3 = addptr %2, %1 : tile<16x*fp32>, tile<16xi32> -> tile<16x*fp32>\n"
                   "  %4 = cmp lt %1, %1 : tile<16xi32>, tile<16xi32> -> tile<16xi1>\n"
                   "  %5 = load %3, %4 : tile<16x*fp32>, tile<16xi1> -> tile<16xfp32>\n"
                   "  %6 = exp %5 : tile<16xfp32> -> tile<16xfp32>\n"
                   "  store %3, %6, %4 : tile<16x*fp32>, tile<16xfp32>, tile<16xi1>\n"
                   "  return\n") == "");
}

TEST_CASE("verifier: problems are named at their op", "[verifier]") {
  struct Case {
    const char *body;
    const char *message;
    unsigned line;
  };
  const Case cases[] = {
      // Counts, checked before anything reads an operand or result.
      {"  %1 = constant 1.0 : fp32\n  cmp lt %1, %1 : fp32, fp32\n  return\n", "'cmp': expects 1 result, got 0", 2},
      {"  %1 = constant 1.0 : fp32\n  %2 = neg %1, %1 : fp32, fp32 -> fp32\n  return\n",
       "'neg': expects 1 operand, got 2", 2},
      {"  %1 = reduce sum axis=0 : fp32\n  return\n", "'reduce': expects 1 operand, got 0", 1},
      {"  %1 = constant 1.0 : fp32\n  store %p.0 : *fp32\n  return\n", "'store': expects 2 to 3 operands, got 1", 2},
      // A store marked for TMA needs its tensor descriptor; a descriptor store lists all of it.
      {"  %1 = constant 1.0 : fp32\n  store tma %p.0, %1 : *fp32, fp32\n  return\n",
       "'store': a TMA store needs the tensor descriptor (desc=[...])", 2},
      {"  %1 = splat %p.0 : *fp32 -> tile<16x16x*fp32>\n  %2 = constant 1.0 : fp32\n"
       "  %3 = splat %2 : fp32 -> tile<16x16xfp32>\n  store desc=[16,16] %1, %3 : tile<16x16x*fp32>, tile<16x16xfp32>\n"
       "  return\n",
       "'store': expects 10 operands, got 2", 4},
      // Terminators.
      {"  yield\n  return\n", "'yield': a terminator must be the last op of its region", 1},
      {"  %1 = constant 0 : i32\n  %2 = constant 4 : i32\n  %3 = constant 1 : i32\n"
       "  for %i = %1 to %2 step %3 : i32 {\n    return\n  }\n  return\n",
       "'for': body must end with a yield of every iter value", 4},
      {"  %1 = constant 1 : i1\n  %2 = constant 1.0 : fp32\n  %3 = if %1 -> fp32 {\n    yield %2\n  } else {\n"
       "    yield %1\n  }\n  return\n",
       "'if': yielded value 0 has the wrong type", 3},
      // Types and shapes.
      {"  %1 = constant 0 : *fp32\n  return\n", "'constant': result must be a numeric scalar, got *fp32", 1},
      {"  %1 = arange 0, 16 : tile<32xi32>\n  return\n", "'arange': result must be tile<16xi32>, got tile<32xi32>", 1},
      {"  %1 = arange 0, 16 : tile<16xi32>\n  %2 = splat %1 : tile<16xi32> -> tile<16xi32>\n  return\n",
       "'splat': expects a scalar and a tile of its type, got tile<16xi32> -> tile<16xi32>", 2},
      {"  %1 = arange 0, 16 : tile<16xi32>\n  %2 = expand_dims axis=1 %1 : tile<16xi32> -> tile<16x1xi32>\n"
       "  %3 = broadcast %2 : tile<16x1xi32> -> tile<16x4xi64>\n  return\n",
       "'broadcast': cannot broadcast tile<16x1xi32> to tile<16x4xi64>", 3},
      {"  %1 = arange 0, 16 : tile<16xi32>\n  %2 = splat %p.0 : *fp32 -> tile<16x*fp32>\n"
       "  %3 = load %2, %1 : tile<16x*fp32>, tile<16xi32> -> tile<16xfp32>\n  return\n",
       "'load': mask must be i1 of the pointer's shape", 3},
      {"  %1 = constant 0.0 : fp16\n  %2 = splat %1 : fp16 -> tile<16x16xfp16>\n"
       "  %3 = dot %2, %2, %2 : tile<16x16xfp16>, tile<16x16xfp16>, tile<16x16xfp16> -> tile<16x16xfp16>\n  return\n",
       "'dot': the accumulator must be fp32 for fp16 operands, got fp16", 3},
      {"  %1 = constant 0.0 : fp32\n  %2 = splat %1 : fp32 -> tile<2xfp32>\n"
       "  %3, %4 = split %2 : tile<2xfp32> -> fp32, fp32\n  return\n",
       "'split': expects a tile of rank 2 or more whose last dim is 2, got tile<2xfp32>", 3},
      {"  %1 = constant 0 : i32\n  %2 = splat %1 : i32 -> tile<4x8xi32>\n"
       "  %3 = permute order=[1, 0] %2 : tile<4x8xi32> -> tile<8xi32>\n  return\n",
       "'permute': order must name every dim", 3},
      {"  %1 = constant 0 : i32\n  %2 = splat %1 : i32 -> tile<4xi32>\n"
       "  %3 = cat %2, %2 : tile<4xi32>, tile<4xi32> -> tile<4xi32>\n  return\n",
       "'cat': result must be tile<8xi32>, got tile<4xi32>", 3},
      {"  %1 = constant 1 : i32\n  %2 = atomic_rmw add relaxed gpu %q.1, %1 : *i32, i32 -> i64\n  return\n",
       "'atomic_rmw': result must be the pointee type of the pointer's shape", 2},
      {"  %1 = constant 2.0 : fp64\n  %2 = not %1 : fp64 -> fp64\n  return\n", "'not': expects an integer operand, got fp64",
       2},
      {"  %1 = constant 1 : i32\n  %2 = bitcast %p.0 : *fp32 -> i32\n  return\n",
       "'bitcast': converts a pointer only to a pointer, or a global pointer to and from a 64-bit integer: *fp32 -> i32",
       2},
  };
  for (const Case &c : cases) {
    INFO(c.body);
    unsigned line = 0;
    CHECK(verifyBody(c.body, &line) == c.message);
    CHECK(line == c.line);
  }
}

TEST_CASE("verifier: without a location the message carries the line", "[verifier]") {
  ir::Function f;
  f.name = "k";
  ir::Builder b(&f.body);
  ir::Value *c = b.constFloat({1, 3, 5}, ir::DType::F32, 1.0);
  b.create(ir::OpKind::Fma, {1, 4, 5}, {c, c}, {c->type});
  b.create(ir::OpKind::Return, {}, {}, {});
  CHECK(ir::verify(f) == "'fma' at line 4: expects 3 operands, got 2");
}

TEST_CASE("verifier: fp8 values take no arithmetic, compares or plain reductions", "[verifier][fp8]") {
  // ir::Builder computes fp8 arithmetic in fp32; hand-written IR that does not is rejected.
  const std::string load = "  %1 = arange 0, 16 : tile<16xi32>\n"
                           "  %2 = splat %p.0 : *fp32 -> tile<16x*fp32>\n"
                           "  %3 = addptr %2, %1 : tile<16x*fp32>, tile<16xi32> -> tile<16x*fp32>\n"
                           "  %4 = load %3 : tile<16x*fp32> -> tile<16xfp32>\n"
                           "  %5 = cast %4 : tile<16xfp32> -> tile<16xfp8e4nv>\n";
  CHECK(verifyBody(load + "  return\n") == "");
  CHECK(verifyBody(load + "  %6 = add %5, %5 : tile<16xfp8e4nv>, tile<16xfp8e4nv> -> tile<16xfp8e4nv>\n  return\n")
            .find("fp8 arithmetic must be computed in fp32") != std::string::npos);
  CHECK(verifyBody(load + "  %6 = neg %5 : tile<16xfp8e4nv> -> tile<16xfp8e4nv>\n  return\n")
            .find("fp8 arithmetic must be computed in fp32") != std::string::npos);
  CHECK(verifyBody(load + "  %6 = cmp lt %5, %5 : tile<16xfp8e4nv>, tile<16xfp8e4nv> -> tile<16xi1>\n  return\n")
            .find("fp8 operands must be compared in fp32") != std::string::npos);
  CHECK(verifyBody(load + "  %6 = reduce sum axis=0 %5 : tile<16xfp8e4nv> -> fp8e4nv\n  return\n")
            .find("fp8 only with a combine region") != std::string::npos);
}

TEST_CASE("fp8 host conversions: every code round-trips; rounding and saturation", "[fp8]") {
  using ir::DType;
  for (DType t : {DType::F8E4M3, DType::F8E5M2}) {
    for (int c = 0; c < 256; ++c) {
      double v = ir::fp8ToDouble(uint8_t(c), t);
      if (std::isnan(v))
        continue;
      if (std::isinf(v)) { // fp8e5 infinities saturate (cvt.satfinite)
        CHECK(ir::fp8FromDouble(v, t) == (c & 0x80 ? 0xFB : 0x7B));
        continue;
      }
      INFO("code " << c << " = " << v);
      CHECK(ir::fp8FromDouble(v, t) == uint8_t(c));
      CHECK(ir::fp8FromDouble(v, t, true) == uint8_t(c));
    }
  }
  CHECK(ir::fp8ToDouble(0x7E, DType::F8E4M3) == 448.0);
  CHECK(std::isnan(ir::fp8ToDouble(0x7F, DType::F8E4M3)));
  CHECK(ir::fp8ToDouble(0x01, DType::F8E4M3) == std::ldexp(1.0, -9));
  CHECK(ir::fp8ToDouble(0x7B, DType::F8E5M2) == 57344.0);
  CHECK(std::isinf(ir::fp8ToDouble(0x7C, DType::F8E5M2)));
  CHECK(ir::fp8ToDouble(0x01, DType::F8E5M2) == std::ldexp(1.0, -16));
  // 300 lies between 288 (0x79: 1.001b x 2^8) and 320 (0x7A: 1.010b x 2^8), nearer 288; 304 is
  // the tie, which goes to the even mantissa, 320.
  CHECK(ir::fp8FromDouble(300.0, DType::F8E4M3) == 0x79);
  CHECK(ir::fp8FromDouble(304.0, DType::F8E4M3) == 0x7A);
  CHECK(ir::fp8FromDouble(296.0, DType::F8E4M3) == 0x79);
  CHECK(ir::fp8FromDouble(319.0, DType::F8E4M3, true) == 0x79);
  // Beyond the largest finite value, and infinity, saturate; NaN stays NaN; the sign is kept.
  CHECK(ir::fp8FromDouble(464.0, DType::F8E4M3) == 0x7E);
  CHECK(ir::fp8FromDouble(-1e30, DType::F8E4M3) == 0xFE);
  CHECK(ir::fp8FromDouble(INFINITY, DType::F8E4M3) == 0x7E);
  CHECK(ir::fp8FromDouble(61440.0, DType::F8E5M2) == 0x7B);
  CHECK(std::isnan(ir::fp8ToDouble(ir::fp8FromDouble(NAN, DType::F8E5M2), DType::F8E5M2)));
  // Half the smallest subnormal is a tie with zero (to even: zero); just above it rounds up.
  CHECK(ir::fp8FromDouble(std::ldexp(1.0, -10), DType::F8E4M3) == 0x00);
  CHECK(ir::fp8FromDouble(std::ldexp(1.0, -10) * 1.01, DType::F8E4M3) == 0x01);
  CHECK(ir::fp8FromDouble(-0.0, DType::F8E5M2) == 0x80);
}
