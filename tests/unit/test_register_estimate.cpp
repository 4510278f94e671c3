// Unit tests of the tile-IR register estimates (transforms::estimatedRegisters, registerCeiling,
// liveRegisters) that bound prefetching and load hoisting.
#include "tle/IR/IR.h"
#include "ir_test_util.h"
#include "tle/IR/Parser.h"
#include "tle/Transforms/RegisterEstimate.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace tle;

namespace {

std::unique_ptr<ir::Function> parse(const std::string &text) { return testing::parseTileIR(text); }

} // namespace

TEST_CASE("register estimate: a tile's registers per thread", "[estimate]") {
  ir::Type f32x1024(ir::ScalarType{ir::DType::F32}, {1024});
  ir::Type f16x1024(ir::ScalarType{ir::DType::F16}, {1024});
  CHECK(transforms::estimatedRegisters(f32x1024, 4) == 8);  // 1024 words over 128 threads
  CHECK(transforms::estimatedRegisters(f16x1024, 4) == 4);  // two halves per register
  CHECK(transforms::estimatedRegisters(f32x1024, 32) == 1); // fewer words than threads: one
  CHECK(transforms::estimatedRegisters(ir::Type::scalar(ir::DType::F64), 4) == 2);
  CHECK(transforms::registerCeiling(4) == 255);
  CHECK(transforms::registerCeiling(16) == 128);
  CHECK(transforms::registerCeiling(32) == 64);
}

TEST_CASE("register estimate: live values over a block", "[estimate]") {
  // 4 warps: a tile<1024xfp32> is 8 registers. %5 (loaded) lives from op 4 to op 6, %6 (exp)
  // from op 5 to op 6, %7 from op 6 to op 7 (at an op its operands and its result all count);
  // the pointer and range tiles are not counted.
  auto f = parse("func @k(%p.0: *fp32) attributes {num_warps = 4} {\n"
                 "  %1 = arange 0, 1024 : tile<1024xi32>\n"
                 "  %2 = splat %p.0 : *fp32 -> tile<1024x*fp32>\n"
                 "  %3 = addptr %2, %1 : tile<1024x*fp32>, tile<1024xi32> -> tile<1024x*fp32>\n"
                 "  %5 = load %3 : tile<1024x*fp32> -> tile<1024xfp32>\n"
                 "  %6 = exp %5 : tile<1024xfp32> -> tile<1024xfp32>\n"
                 "  %7 = add %5, %6 : tile<1024xfp32>, tile<1024xfp32> -> tile<1024xfp32>\n"
                 "  store %3, %7 : tile<1024x*fp32>, tile<1024xfp32>\n"
                 "  return\n"
                 "}\n");
  std::vector<int64_t> live = transforms::liveRegisters(f->body, f->numWarps);
  REQUIRE(live.size() == 9); // the start, then 8 ops
  CHECK(live == std::vector<int64_t>{0, 0, 0, 0, 8, 16, 24, 8, 0});
}
