// Unit tests of shape predicates: parsing (tle/Driver/ShapePredicate.h) and the dispatcher's evaluation (tle_launcher_holds, tle_launcher_explain_choice) at the edges of int64 and of Python's modulo.
#include "tle/Driver/ShapePredicate.h"
#include "tle/Runtime/tle_launcher.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

using namespace tle::driver;

namespace {

/// Whether `text`, parsed, holds for `arg`.
bool holds(const std::string &text, tle_launcher_arg arg) {
  std::string error;
  auto p = parseShapePredicate(text, error);
  INFO(text << ": " << error);
  REQUIRE(p);
  tle_launcher_predicate c{p->text.c_str(), 0, int(p->op), p->value, p->modulus};
  return tle_launcher_holds(&c, &arg) != 0;
}

tle_launcher_arg s(int64_t v) { return tle_launcher_arg_signed(v); }
tle_launcher_arg u(uint64_t v) { return tle_launcher_arg_unsigned(v); }

} // namespace

TEST_CASE("shape predicates parse into a normalised spelling", "[launcher][shapes]") {
  std::string error;
  auto p = parseShapePredicate("  M<=64 ", error);
  REQUIRE(p);
  CHECK(p->text == "M <= 64");
  CHECK(p->op == ShapePredicate::Le);
  p = parseShapePredicate("N%128==0", error);
  REQUIRE(p);
  CHECK(p->text == "N % 128 == 0");
  CHECK(p->modulus == 128);
  CHECK(std::string(p->opMacro()) == "TLE_LAUNCHER_MOD_EQ");
  p = parseShapePredicate("K != -1", error);
  REQUIRE(p);
  CHECK(p->value == -1);
  for (const char *bad : {"", "64 >= M", "M => 4", "M <= ", "M <= 4x", "M % 4 != 0", "M % 4 == -1",
                          "M <= 99999999999999999999"})
    CHECK_FALSE(parseShapePredicate(bad, error));
  CHECK(error.find("M <= 99999999999999999999") != std::string::npos);
}

TEST_CASE("shape predicates evaluate as Python would on int64 and uint64 arguments", "[launcher][shapes]") {
  CHECK(holds("M <= 64", s(64)));
  CHECK_FALSE(holds("M <= 64", s(65)));
  CHECK(holds("M < 0", s(-1)));
  CHECK(holds("M > -5", s(0)));
  CHECK(holds("M >= 9223372036854775807", s(INT64_MAX)));
  CHECK(holds("N % 128 == 0", s(-256)));
  CHECK(holds("N % 4 == 3", s(-1)));   // Python: -1 % 4 == 3
  CHECK(holds("N % -4 == -1", s(3)));  // Python: 3 % -4 == -1
  CHECK(holds("N % -1 == 0", s(INT64_MIN)));
  // Unsigned values above INT64_MAX are above every int64 bound.
  CHECK(holds("M > 100", u(UINT64_MAX)));
  CHECK_FALSE(holds("M <= 100", u(UINT64_MAX)));
  CHECK(holds("M % 2 == 1", u(UINT64_MAX)));
  CHECK(holds("M != 5", u(UINT64_MAX)));
  // Pointers and floats never satisfy a predicate.
  CHECK_FALSE(holds("M >= 0", tle_launcher_arg_pointer(16)));
  CHECK_FALSE(holds("M >= 0", tle_launcher_arg_other()));
}

TEST_CASE("the explaining select names the chosen specialisation and each rejection", "[launcher][shapes]") {
  const tle_launcher_requirement any[] = {{"M", TLE_LAUNCHER_ANY, 0}, {nullptr, TLE_LAUNCHER_ANY, 0}};
  const tle_launcher_predicate small[] = {{"M <= 64", 0, TLE_LAUNCHER_LE, 64, 0}};
  const tle_launcher_spec specs[] = {{"spec 0 [small]", any, small, 1}, {"spec 1 [any]", any, nullptr, 0}};
  tle_launcher_arg args[] = {tle_launcher_arg_signed(100)};
  char why[512];
  CHECK(tle_launcher_explain_choice(why, sizeof why, "gemm", "gemm_kernel", specs, 2, args, 1) == 1);
  CHECK(std::string(why) == "gemm: spec 1 [any] chosen; spec 0 [small] rejected: 'M' (= 100) breaks M <= 64");
  args[0] = tle_launcher_arg_signed(8);
  CHECK(tle_launcher_explain_choice(why, sizeof why, "gemm", "gemm_kernel", specs, 2, args, 1) == 0);
  CHECK(std::string(why) == "gemm: spec 0 [small] chosen");
  CHECK(tle_launcher_explain_choice(why, 8, "gemm", "gemm_kernel", specs, 2, args, 1) == 0); // truncated
  CHECK(std::strlen(why) == 7);
}
