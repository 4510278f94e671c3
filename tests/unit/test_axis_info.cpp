// Unit tests of the axis-info analysis (transforms::AxisInfoAnalysis) on hand-written tile IR:
// the constancy of compares, which decides how many compares the GPU target emits per thread,
// and the contiguity of remainders. Each fact is checked against the values it describes.
#include "tle/IR/IR.h"
#include "ir_test_util.h"
#include "tle/IR/Parser.h"
#include "tle/Transforms/AxisInfo.h"

#include <catch2/catch.hpp>

#include <iterator>
#include <sstream>

using namespace tle;

namespace {

std::unique_ptr<ir::Function> parse(const std::string &text) { return testing::parseTileIR(text); }

/// The function's last value (the op right before `return`).
const ir::Value *lastValue(const ir::Function &f) {
  return (*std::prev(f.body.ops.end(), 2))->result();
}

/// Constancy along dim 0 of `lhs PRED rhs` on 16 elements, where each side is `arange` (0..15),
/// `off` (arange 1..16) or a splatted constant C.
int64_t cmpConstancy(const std::string &pred, const std::string &lhs, const std::string &rhs, int c) {
  std::string text = "func @k() attributes {num_warps = 1} {\n"
                     "  %0 = arange 0, 16 : tile<16xi32>\n"
                     "  %1 = arange 1, 17 : tile<16xi32>\n"
                     "  %2 = constant " + std::to_string(c) + " : i32\n"
                     "  %3 = splat %2 : i32 -> tile<16xi32>\n";
  auto name = [](const std::string &s) { return s == "arange" ? "%0" : s == "off" ? "%1" : "%3"; };
  text += "  %4 = cmp " + pred + " " + name(lhs) + ", " + name(rhs) +
          " : tile<16xi32>, tile<16xi32> -> tile<16xi1>\n  return\n}\n";
  auto f = parse(text);
  transforms::AxisInfoAnalysis ai(*f);
  return ai.get(lastValue(*f)).constancy.at(0);
}

/// Whether `v[i]` is constant over aligned runs of `k` elements.
bool constantInRuns(const std::vector<bool> &v, int64_t k) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != v[i - i % static_cast<size_t>(k)])
      return false;
  return true;
}

} // namespace

TEST_CASE("axis info: a compare's constancy holds for the values it describes", "[axisinfo]") {
  // For every predicate, side and constant, the fact must hold on the real values.
  const char *preds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  for (const char *p : preds)
    for (int c : {0, 1, 2, 4, 8, 12, 16}) {
      for (bool rangeLeft : {true, false}) {
        int64_t k = rangeLeft ? cmpConstancy(p, "arange", "const", c) : cmpConstancy(p, "const", "arange", c);
        std::vector<bool> v;
        for (int i = 0; i < 16; ++i) {
          int x = rangeLeft ? i : c, y = rangeLeft ? c : i;
          std::string s = p;
          v.push_back(s == "eq" ? x == y : s == "ne" ? x != y : s == "lt" ? x < y : s == "le" ? x <= y
                                                               : s == "gt" ? x > y : x >= y);
        }
        INFO(p << (rangeLeft ? " arange, " : " C, arange; C = ") << c << ": constancy " << k);
        CHECK(constantInRuns(v, k));
      }
    }
}

TEST_CASE("axis info: compares that split no aligned run keep their constancy", "[axisinfo]") {
  // offs < N and offs >= N with N % 8 == 0: runs of 8 (one compare per 8 elements).
  CHECK(cmpConstancy("lt", "arange", "const", 8) == 8);
  CHECK(cmpConstancy("ge", "arange", "const", 8) == 8);
  CHECK(cmpConstancy("gt", "const", "arange", 8) == 8); // N > offs
  CHECK(cmpConstancy("le", "const", "arange", 8) == 8); // N <= offs
  CHECK(cmpConstancy("lt", "arange", "const", 4) == 4);
  // == and != single out one element: only as constant as the operands (1 here).
  CHECK(cmpConstancy("eq", "arange", "const", 0) == 1);
  CHECK(cmpConstancy("eq", "arange", "const", 4) == 1);
  CHECK(cmpConstancy("ne", "const", "arange", 8) == 1);
  // offs <= N and offs > N: N itself splits its run.
  CHECK(cmpConstancy("le", "arange", "const", 8) == 1);
  CHECK(cmpConstancy("gt", "arange", "const", 8) == 1);
  // A run that starts at 1 splits anywhere.
  CHECK(cmpConstancy("lt", "off", "const", 8) == 1);
}

TEST_CASE("axis info: a remainder is contiguous only where no run wraps", "[axisinfo]") {
  auto rem = [](int start, int n) {
    std::string text = "func @k() attributes {num_warps = 1} {\n"
                       "  %0 = arange " + std::to_string(start) + ", " + std::to_string(start + 16) +
                       " : tile<16xi32>\n"
                       "  %1 = constant " + std::to_string(n) + " : i32\n"
                       "  %2 = splat %1 : i32 -> tile<16xi32>\n"
                       "  %3 = irem %0, %2 : tile<16xi32>, tile<16xi32> -> tile<16xi32>\n  return\n}\n";
    auto f = parse(text);
    transforms::AxisInfoAnalysis ai(*f);
    return ai.get(lastValue(*f)).contiguity.at(0);
  };
  CHECK(rem(0, 4) == 4);   // [0, 1, 2, 3, 0, ...]
  CHECK(rem(0, 64) == 16); // no wrap at all
  CHECK(rem(1, 4) == 1);   // [1, 2, 3, 0, ...]: a run of 4 would wrap
  CHECK(rem(2, 8) == 2);   // [2, 3, 4, 5, 6, 7, 0, 1, ...]: aligned pairs stay contiguous
}
