// Unit tests of the tl.dot lowering queries (tle/Transforms/DotLowering.h) on hand-written tile
// IR: which operands mma.sync reads straight from a cp.async slot, by dtype and major order.
#include "tle/IR/IR.h"
#include "tle/IR/Parser.h"
#include "tle/Transforms/DotLowering.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace tle;

namespace {

/// A function whose body is one `dot` of two loaded-shape operands, `a` [M, K] and `b` [K, N]
/// of dtype `in` (with `prec`, "" or "tf32 "/"ieee "), into an accumulator of dtype `acc`; the
/// operands come from splats of the pointer arguments' loads.
std::unique_ptr<ir::Function> dotFunction(SourceManager &sm, DiagnosticEngine &diags, const std::string &in,
                                          const std::string &acc, const std::string &prec, int m, int n, int k,
                                          int warps) {
  auto tile = [&](int r, int c, const std::string &t) {
    return "tile<" + std::to_string(r) + "x" + std::to_string(c) + "x" + t + ">";
  };
  std::string a = tile(m, k, in), b = tile(k, n, in), c = tile(m, n, acc);
  std::string text = "func @k(%x.0: " + in + ", %y.1: " + in + ", %z.2: " + acc +
                     ") attributes {num_warps = " + std::to_string(warps) + "} {\n" +
                     "  %3 = splat %x.0 : " + in + " -> " + a + "\n" +
                     "  %4 = splat %y.1 : " + in + " -> " + b + "\n" +
                     "  %5 = splat %z.2 : " + acc + " -> " + c + "\n" +
                     "  %6 = dot " + prec + "%3, %4, %5 : " + a + ", " + b + ", " + c + " -> " + c + "\n" +
                     "  return\n}\n";
  uint32_t file = sm.addFile("t.tir", text);
  return ir::parseFunction(file, diags);
}

const ir::Op &theDot(const ir::Function &f) {
  for (auto &op : f.body.ops)
    if (op->kind == ir::OpKind::Dot)
      return *op;
  FAIL("no dot");
  return *f.body.ops.front();
}

} // namespace

TEST_CASE("mmaSyncSlotOperand: what mma.sync reads from a cp.async slot, by dtype", "[dot]") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  using transforms::mmaSyncSlotOperand;
  // fp16 (m16n8k16): A and B as loaded (ldmatrix, B with .trans); never through tl.trans.
  auto f16 = dotFunction(sm, diags, "fp16", "fp32", "", 64, 64, 32, 4);
  const ir::Op &d16 = theDot(*f16);
  CHECK(mmaSyncSlotOperand(d16, 0, false, "sm_80", 4));
  CHECK(mmaSyncSlotOperand(d16, 1, false, "sm_80", 4));
  CHECK_FALSE(mmaSyncSlotOperand(d16, 1, true, "sm_80", 4));
  CHECK_FALSE(mmaSyncSlotOperand(d16, 0, true, "sm_80", 4));
  // tf32 (m16n8k8): A as loaded, B either way; "ieee" runs on FMA, which has no slots.
  auto tf = dotFunction(sm, diags, "fp32", "fp32", "tf32 ", 64, 64, 32, 4);
  const ir::Op &dtf = theDot(*tf);
  CHECK(mmaSyncSlotOperand(dtf, 0, false, "sm_80", 4));
  CHECK(mmaSyncSlotOperand(dtf, 1, false, "sm_80", 4));
  CHECK(mmaSyncSlotOperand(dtf, 1, true, "sm_80", 4));
  CHECK_FALSE(mmaSyncSlotOperand(dtf, 0, true, "sm_80", 4));
  auto ieee = dotFunction(sm, diags, "fp32", "fp32", "ieee ", 64, 64, 32, 4);
  CHECK_FALSE(mmaSyncSlotOperand(theDot(*ieee), 0, false, "sm_80", 4));
  // int8 (m16n8k32): A as loaded, B only through tl.trans (ldmatrix has no byte transpose);
  // K not a multiple of 32 runs on FMA.
  auto s8 = dotFunction(sm, diags, "i8", "i32", "", 64, 64, 64, 4);
  const ir::Op &d8 = theDot(*s8);
  CHECK(mmaSyncSlotOperand(d8, 0, false, "sm_80", 4));
  CHECK_FALSE(mmaSyncSlotOperand(d8, 1, false, "sm_80", 4));
  CHECK(mmaSyncSlotOperand(d8, 1, true, "sm_80", 4));
  auto s8k16 = dotFunction(sm, diags, "i8", "i32", "", 64, 64, 16, 4);
  CHECK_FALSE(mmaSyncSlotOperand(theDot(*s8k16), 0, false, "sm_80", 4));
  // The same dots on sm_90a run on wgmma: not mma.sync's to read.
  CHECK_FALSE(mmaSyncSlotOperand(dtf, 0, false, "sm_90a", 4));
  CHECK_FALSE(mmaSyncSlotOperand(d8, 1, true, "sm_90a", 4));
  CHECK_FALSE(mmaSyncSlotOperand(d16, 0, false, "sm_90a", 4));
  // ... unless wgmma does not take them (two warps are not a warpgroup).
  auto s8w2 = dotFunction(sm, diags, "i8", "i32", "", 64, 64, 64, 2);
  CHECK(mmaSyncSlotOperand(theDot(*s8w2), 1, true, "sm_90a", 2));
  // Only operands 0 and 1 are read from slots.
  CHECK_FALSE(mmaSyncSlotOperand(d16, 2, false, "sm_80", 4));
  CHECK(err.str().empty());
}
