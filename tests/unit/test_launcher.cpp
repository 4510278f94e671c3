// Unit tests of ahead-of-time launchers: grid expressions (tle/Driver/GridExpr.h), the dispatch and
// image-choice rules of tle/Runtime/tle_launcher.h, metadata read back from PTX and ELF images,
// and the launcher generator's checks (tle/Driver/Launcher.h).
#include "tle/Driver/Compiler.h"
#include "tle/Driver/GridExpr.h"
#include "tle/Driver/Launcher.h"
#include "tle/Runtime/tle_launcher.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <sstream>

using namespace tle::driver;

namespace {

/// Evaluates one-dimension grid `text` with `values`; fails the test on a parse error.
int64_t eval(const std::string &text, const std::map<std::string, int64_t> &values = {}) {
  GridError err;
  auto g = parseGrid(text, &err);
  INFO(text << ": " << err.message);
  REQUIRE(g);
  REQUIRE(g->dims.size() == 1);
  auto v = evaluateGrid(*g->dims[0], values, &err);
  INFO(err.message);
  REQUIRE(v);
  return *v;
}

/// The parse error of `text` (message and column); fails the test when it parses.
GridError parseError(const std::string &text) {
  GridError err;
  auto g = parseGrid(text, &err);
  INFO(text);
  REQUIRE_FALSE(g);
  return err;
}

/// PTX for examples/vector_add.tle with signature `sig` and grid `grid`, through the real pipeline.
std::string vectorAddPtx(const std::string &sig, const std::string &grid = "") {
  CompileOptions o;
  o.input = std::string(TLE_SOURCE_DIR) + "/examples/vector_add.tle";
  o.output = "-";
  o.emit = Emit::PTX;
  o.signature = sig;
  o.grid = grid;
  std::ostringstream out, err;
  INFO(err.str());
  REQUIRE(compile(o, out, err) == 0);
  return out.str();
}

LaunchSpec specOf(const std::string &image, const std::string &origin) {
  LaunchImage img;
  img.bytes = image;
  img.origin = origin;
  std::string json, error;
  INFO(error);
  REQUIRE(readImageMetadata(image, json, img.ptx, error));
  LaunchSpec spec;
  REQUIRE(specFromMetadata(json, img, spec, error));
  return spec;
}

template <class T> void put(std::string &b, size_t off, T v) {
  if (b.size() < off + sizeof(T))
    b.resize(off + sizeof(T));
  std::memcpy(&b[off], &v, sizeof(T));
}

/// A minimal ELF64 image whose symbol `symbol` (in a PROGBITS section, 8 bytes in) holds `payload`.
std::string tinyElf(const std::string &symbol, const std::string &payload) {
  std::string strtab = std::string(1, '\0') + symbol + '\0';
  std::string data = "padding!" + payload + '\0';
  const size_t strOff = 64, symOff = strOff + strtab.size() + (8 - strtab.size() % 8) % 8;
  const size_t dataOff = symOff + 48, shOff = dataOff + data.size() + (8 - data.size() % 8) % 8;
  std::string b(64, '\0');
  std::memcpy(&b[0], "\x7f" "ELF", 4);
  b[4] = 2; // ELFCLASS64
  b[5] = 1; // little-endian
  b[6] = 1;
  put<uint64_t>(b, 0x28, shOff);
  put<uint16_t>(b, 0x3A, 64);
  put<uint16_t>(b, 0x3C, 4);
  b.resize(shOff + 4 * 64, '\0');
  std::memcpy(&b[strOff], strtab.data(), strtab.size());
  // Symbol 1: name at 1, section 3, value 8, size payload + NUL.
  put<uint32_t>(b, symOff + 24, 1);
  put<uint16_t>(b, symOff + 24 + 6, 3);
  put<uint64_t>(b, symOff + 24 + 8, 8);
  put<uint64_t>(b, symOff + 24 + 16, payload.size() + 1);
  std::memcpy(&b[dataOff], data.data(), data.size());
  auto section = [&](int i, uint32_t type, uint64_t off, uint64_t size, uint32_t link, uint64_t entsize) {
    size_t h = shOff + i * 64;
    put<uint32_t>(b, h + 4, type);
    put<uint64_t>(b, h + 0x18, off);
    put<uint64_t>(b, h + 0x20, size);
    put<uint32_t>(b, h + 0x28, link);
    put<uint64_t>(b, h + 0x38, entsize);
  };
  section(1, 3 /*STRTAB*/, strOff, strtab.size(), 0, 0);
  section(2, 2 /*SYMTAB*/, symOff, 48, 1, 24);
  section(3, 1 /*PROGBITS*/, dataOff, data.size(), 0, 0);
  return b;
}

tle_launcher_requirement req(const char *name, int kind, int64_t divisor) { return {name, kind, divisor}; }

} // namespace

TEST_CASE("grid expressions: precedence, Python integer semantics, functions", "[launcher][grid]") {
  std::map<std::string, int64_t> v = {{"n", 1000}, {"BLOCK", 256}, {"m", -7}};
  CHECK(eval("cdiv(n, BLOCK)", v) == 4);
  CHECK(eval("triton.cdiv(n, 1024)", v) == 1);
  CHECK(eval("1 + 2 * 3", v) == 7);
  CHECK(eval("(1 + 2) * 3", v) == 9);
  CHECK(eval("10 - 4 - 3", v) == 3);     // left-associative
  CHECK(eval("100 // 7 // 2", v) == 7);  // (100 // 7) // 2
  CHECK(eval("m // 2", v) == -4);        // floor, as Python
  CHECK(eval("m % 2", v) == 1);          // sign of the divisor
  CHECK(eval("7 % -2", v) == -1);
  CHECK(eval("-n + 1", v) == -999);
  CHECK(eval("--n", v) == 1000);
  CHECK(eval("+n", v) == 1000);
  CHECK(eval("max(1, n // 4096)", v) == 1);
  CHECK(eval("min(n, BLOCK, 3, 500)", v) == 3);
  CHECK(eval("max(n, BLOCK, 3, 5000)", v) == 5000);
  CHECK(eval("cdiv(0, BLOCK)", v) == 0);

  GridError err;
  auto g = parseGrid("cdiv(n, BLOCK), 4,", &err); // a trailing comma, as in Python's (x, y,)
  REQUIRE(g);
  CHECK(g->dims.size() == 2);
  CHECK(g->dimText(0) == "cdiv(n, BLOCK)");
  CHECK(g->dimText(1) == "4");
  CHECK(g->dimText(2) == "1");
  auto z = parseGrid("n // 0", &err);
  REQUIRE(z);
  CHECK_FALSE(evaluateGrid(*z->dims[0], v, &err));
  CHECK(err.message == "division by zero in grid expression");
}

TEST_CASE("grid expressions: errors name the problem and its column", "[launcher][grid]") {
  CHECK(parseError("n / 2").column == 2);
  CHECK(parseError("n / 2").message == "'/' is true division; grid expressions use '//' (floor division) or cdiv(a, b)");
  CHECK(parseError("n ** 2").message == "'**' (power) is not supported in grid expressions");
  CHECK(parseError("foo(n)").message == "unknown function 'foo' in grid expression (available: cdiv, min, max)");
  CHECK(parseError("cdiv(n)").message == "cdiv(...) takes 2 arguments, got 1");
  CHECK(parseError("max(n)").message == "max(...) takes 2 or more arguments, got 1");
  CHECK(parseError("1, 2, 3, 4").column == 7);
  CHECK(parseError("(n + 1").message == "expected ')' to close the '(' here");
  CHECK(parseError("n + ").message == "expected a grid expression at the end");
  CHECK(parseError("").message == "empty grid expression");
  CHECK(parseError("2.5").message == "'2.5' is not an integer: grid expressions are integer-valued");
  CHECK(parseError("n[0]").column == 1);
  CHECK(parseError("x.y").message == "'x.y' is not a parameter name");
  CHECK(parseError("99999999999999999999").message == "integer '99999999999999999999' does not fit in 64 bits");

  GridError err;
  auto g = parseGrid("cdiv(n, BLOCK) + x_ptr", &err);
  REQUIRE(g);
  std::map<std::string, GridBinding> names = {{"n", {false, 0, ""}}, {"BLOCK", {true, 256, ""}}};
  auto bad = checkGridNames(*g, names, "n, BLOCK", {{"x_ptr", "parameter 'x_ptr' has type *fp32"}});
  REQUIRE(bad);
  CHECK(bad->column == 17);
  CHECK(bad->message == "parameter 'x_ptr' has type *fp32; grid expressions use integer parameters and integer constexprs");
  auto unknown = checkGridNames(*parseGrid("m", &err), names, "n, BLOCK");
  REQUIRE(unknown);
  CHECK(unknown->message == "unknown name 'm' in grid expression (usable names: n, BLOCK)");
}

TEST_CASE("grid expressions: C code folds constants and calls the runtime helpers", "[launcher][grid]") {
  GridError err;
  auto g = parseGrid("max(cdiv(n, BLOCK) % 3, -stride, 2) - grid", &err);
  REQUIRE(g);
  std::map<std::string, GridBinding> names = {
      {"n", {false, 0, ""}}, {"BLOCK", {true, 128, ""}}, {"stride", {true, 1, ""}}, {"grid", {false, 0, "grid_"}}};
  CHECK(gridToC(*g->dims[0], names, "&ctx") ==
        "tle_launcher_sub(&ctx, tle_launcher_max(tle_launcher_max(tle_launcher_floormod(&ctx, tle_launcher_cdiv(&ctx, "
        "(int64_t)n, INT64_C(128)), INT64_C(3)), tle_launcher_neg(&ctx, INT64_C(1))), INT64_C(2)), (int64_t)grid_)");
}

TEST_CASE("grid expressions: the launchers' C helpers agree with the compiler's evaluator", "[launcher][grid]") {
  for (int64_t a = -9; a <= 9; ++a)
    for (int64_t b = -4; b <= 4; ++b) {
      if (b == 0)
        continue;
      std::map<std::string, int64_t> v = {{"a", a}, {"b", b}};
      tle_launcher_grid_ctx ctx = {0};
      INFO("a = " << a << ", b = " << b);
      CHECK(tle_launcher_floordiv(&ctx, a, b) == eval("a // b", v));
      CHECK(tle_launcher_floormod(&ctx, a, b) == eval("a % b", v));
      CHECK(tle_launcher_cdiv(&ctx, a, b) == eval("cdiv(a, b)", v));
      CHECK(tle_launcher_min(a, b) == eval("min(a, b)", v));
      CHECK(tle_launcher_max(a, b) == eval("max(a, b)", v));
      CHECK(ctx.divided_by_zero == 0);
    }
  tle_launcher_grid_ctx ctx = {0};
  CHECK(tle_launcher_cdiv(&ctx, 5, 0) == 0);
  CHECK(ctx.divided_by_zero == 1);

  char why[256];
  int64_t ok[3] = {4, 1, 1}, negative[3] = {-1, 1, 1}, tooTall[3] = {1, 70000, 1}, zero[3] = {0, 1, 1};
  tle_launcher_grid_ctx clean = {0};
  CHECK(tle_launcher_check_grid(&clean, ok, "k", "g", why, sizeof why));
  CHECK(tle_launcher_check_grid(&clean, zero, "k", "g", why, sizeof why)); // launches nothing
  CHECK_FALSE(tle_launcher_check_grid(&clean, negative, "k", "cdiv(n, 4)", why, sizeof why));
  CHECK(std::string(why) == "k: the grid expression (cdiv(n, 4)) gives x = -1, outside [0, 2147483647] for these arguments");
  CHECK_FALSE(tle_launcher_check_grid(&clean, tooTall, "k", "g", why, sizeof why));
  CHECK_FALSE(tle_launcher_check_grid(&ctx, ok, "k", "n // d", why, sizeof why));
  CHECK(std::string(why) == "k: the grid expression (n // d) divides by zero for these arguments");
}

TEST_CASE("grid expressions: int64 overflow is an error at compile time and at launch, never a trap", "[launcher][grid]") {
  const int64_t min = INT64_MIN, max = INT64_MAX;
  // The compiler's evaluator: overflow of any part is an error at the operator's column.
  std::map<std::string, int64_t> v = {{"a", min}, {"b", -1}, {"c", max}};
  GridError err;
  auto g = parseGrid("a // b", &err);
  REQUIRE(g);
  CHECK_FALSE(evaluateGrid(*g->dims[0], v, &err));
  CHECK(err.message == "integer overflow in grid expression: the result does not fit in 64 bits");
  CHECK(err.column == 2);
  for (const char *text : {"c + 1", "a - 1", "-a", "c * 2", "cdiv(a, b)", "a * b", "(c + 1) - 2"}) {
    INFO(text);
    auto e = parseGrid(text, &err);
    REQUIRE(e);
    CHECK_FALSE(evaluateGrid(*e->dims[0], v, &err));
    CHECK(err.message.find("overflow") != std::string::npos);
  }
  CHECK(eval("a % b", v) == 0); // Python: -2**63 % -1 == 0
  CHECK(eval("c + a", v) == -1);
  CHECK(eval("cdiv(c, 2)", v) == max / 2 + 1); // (a + b - 1) // b, exact although a + b - 1 > max
  CHECK(eval("cdiv(a, 2)", v) == min / 2);

  // tlec: the constant parts of a grid, constexprs included, are checked when it compiles.
  std::map<std::string, GridBinding> names = {{"n", {false, 0, ""}}, {"BIG", {true, max, ""}}};
  auto bad = checkGridConstants(*parseGrid("n // 2, (-9223372036854775807 - 1) // -1, 1", &err), names);
  REQUIRE(bad);
  CHECK(bad->message == "integer overflow in grid expression: the result does not fit in 64 bits");
  CHECK(bad->column == 35);
  bad = checkGridConstants(*parseGrid("cdiv(n, 4) + BIG * 2", &err), names);
  REQUIRE(bad);
  CHECK(bad->column == 17);
  bad = checkGridConstants(*parseGrid("max(n, 8 // (BIG - BIG))", &err), names);
  REQUIRE(bad);
  CHECK(bad->message == "division by zero in grid expression");
  CHECK_FALSE(checkGridConstants(*parseGrid("n * BIG, n + BIG, n // 0", &err), names)); // runtime parts: at launch

  // The launcher helpers: 0 and the overflow flag, and the grid check names it.
  tle_launcher_grid_ctx ctx = {0, 0};
  volatile int64_t vmin = min, vmax = max; // no constant folding of the traps being tested
  CHECK(tle_launcher_floordiv(&ctx, vmin, -1) == 0);
  CHECK(ctx.overflowed == 1);
  CHECK(ctx.divided_by_zero == 0);
  ctx = {0, 0};
  CHECK(tle_launcher_floormod(&ctx, vmin, -1) == 0);
  CHECK(tle_launcher_floordiv(&ctx, vmin, 1) == min);
  CHECK(tle_launcher_cdiv(&ctx, vmax, 2) == max / 2 + 1);
  CHECK(tle_launcher_cdiv(&ctx, vmin, 2) == min / 2);
  CHECK(tle_launcher_cdiv(&ctx, vmax, 1) == max);
  CHECK(tle_launcher_add(&ctx, vmax, vmin) == -1);
  CHECK(tle_launcher_mul(&ctx, vmin, 1) == min);
  CHECK(tle_launcher_mul(&ctx, -3, 5) == -15);
  CHECK(tle_launcher_neg(&ctx, vmax) == -max);
  CHECK(ctx.overflowed == 0);
  auto overflows = [](auto fn) { // the flag is what counts; the value is meaningless then
    tle_launcher_grid_ctx c = {0, 0};
    fn(&c);
    return c.overflowed == 1 && c.divided_by_zero == 0;
  };
  using Ctx = tle_launcher_grid_ctx *;
  CHECK(overflows([&](Ctx c) { return tle_launcher_add(c, vmax, 1); }));
  CHECK(overflows([&](Ctx c) { return tle_launcher_sub(c, vmin, 1); }));
  CHECK(overflows([&](Ctx c) { return tle_launcher_neg(c, vmin); }));
  CHECK(overflows([&](Ctx c) { return tle_launcher_mul(c, vmin, -1); }));
  CHECK(overflows([&](Ctx c) { return tle_launcher_mul(c, vmax, vmax); }));
  CHECK(overflows([&](Ctx c) { return tle_launcher_mul(c, -vmax, 2); }));
  CHECK(overflows([&](Ctx c) { return tle_launcher_cdiv(c, vmin, -1); }));
  ctx = {0, 0};
  tle_launcher_mul(&ctx, 4611686018427387904, 2);
  CHECK(ctx.overflowed == 1);
  char why[256];
  int64_t dims[3] = {0, 1, 1};
  CHECK_FALSE(tle_launcher_check_grid(&ctx, dims, "k", "n * 2", why, sizeof why));
  CHECK(std::string(why) == "k: the grid expression (n * 2) overflows int64 for these arguments");
}

TEST_CASE("grid expressions: nesting is limited instead of overflowing the stack", "[launcher][grid]") {
  std::string deep = std::string(20000, '(') + "n" + std::string(20000, ')');
  GridError err = parseError(deep);
  CHECK(err.message == "grid expression nested too deeply (more than 64 levels of parentheses, operators or calls)");
  CHECK(err.column == 64); // the 65th level: top-level expression and 64 parentheses
  CHECK(parseError(std::string(20000, '-') + "n").message.find("nested too deeply") != std::string::npos);
  std::string chain = "n";
  for (int i = 0; i < 20000; ++i)
    chain += " + n";
  CHECK(parseError(chain).message.find("nested too deeply") != std::string::npos);
  std::string manyArgs = "max(n";
  for (int i = 0; i < 100; ++i)
    manyArgs += ", n";
  CHECK(parseError(manyArgs + ")").message.find("nested too deeply") != std::string::npos);
  // The limit itself still parses: 63 parentheses, and 64 levels of operators.
  std::map<std::string, int64_t> v = {{"n", 5}};
  CHECK(eval(std::string(63, '(') + "n" + std::string(63, ')'), v) == 5);
  std::string sum = "n";
  for (int i = 1; i < 64; ++i)
    sum += " + n";
  CHECK(eval(sum, v) == 5 * 64);
}

TEST_CASE("dispatch: the first specialisation whose requirements hold", "[launcher][dispatch]") {
  // spec 0: 16-byte aligned pointer, n % 16 == 0, stride == 1; spec 1: aligned pointer; spec 2: nothing.
  tle_launcher_requirement r0[] = {req("x", TLE_LAUNCHER_MULTIPLE_OF, 16), req("n", TLE_LAUNCHER_MULTIPLE_OF, 16),
                                   req("stride", TLE_LAUNCHER_EQUAL_TO_ONE, 1), req("alpha", TLE_LAUNCHER_ANY, 1)};
  tle_launcher_requirement r1[] = {req("x", TLE_LAUNCHER_MULTIPLE_OF, 16), req("n", TLE_LAUNCHER_ANY, 1),
                                   req("stride", TLE_LAUNCHER_ANY, 1), req("alpha", TLE_LAUNCHER_ANY, 1)};
  tle_launcher_requirement r2[] = {req("x", TLE_LAUNCHER_ANY, 1), req("n", TLE_LAUNCHER_ANY, 1),
                                   req("stride", TLE_LAUNCHER_ANY, 1), req("alpha", TLE_LAUNCHER_ANY, 1)};
  tle_launcher_spec specs[] = {{"spec 0", r0}, {"spec 1", r1}, {"spec 2", r2}};
  auto pick = [&](uint64_t x, int32_t n, int32_t stride, size_t nspecs = 3) {
    tle_launcher_arg args[] = {tle_launcher_arg_pointer(x), tle_launcher_arg_signed(n), tle_launcher_arg_signed(stride),
                               tle_launcher_arg_float(2.5)};
    return tle_launcher_select(specs, nspecs, args, 4);
  };
  CHECK(pick(0x1000, 4096, 1) == 0);
  CHECK(pick(0x1000, -32, 1) == 0);   // negative multiples count
  CHECK(pick(0x1000, 4096, 2) == 1);  // stride != 1
  CHECK(pick(0x1000, 1000, 1) == 1);  // n not a multiple of 16
  CHECK(pick(0x1008, 4096, 1) == 2);  // 8-byte aligned only
  CHECK(pick(0x1008, 4096, 1, 2) == -1);
  CHECK(pick(0, 0, 1) == 0);          // null and zero are multiples of everything

  tle_launcher_requirement u[] = {req("m", TLE_LAUNCHER_MULTIPLE_OF, 16)};
  tle_launcher_arg big = tle_launcher_arg_unsigned(0xFFFFFFFFFFFFFFF0ull), odd = tle_launcher_arg_unsigned(17);
  CHECK(tle_launcher_meets(&u[0], &big));
  CHECK_FALSE(tle_launcher_meets(&u[0], &odd));
  tle_launcher_arg f = tle_launcher_arg_float(16.0);
  CHECK_FALSE(tle_launcher_meets(&u[0], &f)); // a requirement on a float is never met
}

TEST_CASE("dispatch: a failed dispatch names the launcher, kernel, each specialisation and argument",
          "[launcher][dispatch]") {
  tle_launcher_requirement r0[] = {req("x_ptr", TLE_LAUNCHER_MULTIPLE_OF, 16), req("n", TLE_LAUNCHER_MULTIPLE_OF, 16)};
  tle_launcher_requirement r1[] = {req("x_ptr", TLE_LAUNCHER_ANY, 1), req("n", TLE_LAUNCHER_EQUAL_TO_ONE, 1)};
  tle_launcher_spec specs[] = {{"spec 0 [*fp32:16 x_ptr, i32:16 n]", r0}, {"spec 1 [*fp32 x_ptr, i32:1 n]", r1}};
  tle_launcher_arg args[] = {tle_launcher_arg_pointer(0x7f0004), tle_launcher_arg_signed(-1000)};
  char why[512];
  tle_launcher_explain(why, sizeof why, "add", "add_kernel", specs, 2, args, 2);
  CHECK(std::string(why) == "add (kernel add_kernel): no specialisation accepts these arguments: spec 0 [*fp32:16 x_ptr, "
                            "i32:16 n]: 'x_ptr' (= 0x7f0004) is not 16-byte aligned; spec 1 [*fp32 x_ptr, i32:1 n]: "
                            "'n' (= -1000) is not 1");
  // A small buffer truncates, never overflows.
  char tiny[16];
  tle_launcher_explain(tiny, sizeof tiny, "add", "add_kernel", specs, 2, args, 2);
  CHECK(std::strlen(tiny) == 15);
}

TEST_CASE("images: the best embedded module for a device", "[launcher][images]") {
  static const unsigned char bytes[1] = {0};
  tle_launcher_image both[] = {{"sm_80", bytes, 1, 0}, {"sm_90a", bytes, 1, 0}};
  CHECK(tle_launcher_choose_image(both, 2, 9, 0) == 1);  // exact sm_90a
  CHECK(tle_launcher_choose_image(both, 2, 8, 6) == 0);  // sm_80 cubin runs on 8.6
  CHECK(tle_launcher_choose_image(both, 2, 8, 0) == 0);
  CHECK(tle_launcher_choose_image(both, 2, 7, 5) == -1); // too old
  CHECK(tle_launcher_choose_image(both, 2, 10, 0) == -1); // cubins do not cross majors; sm_90a is 9.0 only
  tle_launcher_image withPtx[] = {{"sm_80", bytes, 1, 1}, {"sm_90a", bytes, 1, 1}, {"sm_86", bytes, 1, 0}};
  CHECK(tle_launcher_choose_image(withPtx, 3, 10, 0) == 0); // sm_80 PTX JIT-compiles for newer devices
  CHECK(tle_launcher_choose_image(withPtx, 3, 9, 0) == 1);  // newest PTX that runs
  CHECK(tle_launcher_choose_image(withPtx, 3, 8, 9) == 2);  // a cubin beats PTX
  CHECK(tle_launcher_choose_image(withPtx, 3, 8, 0) == 0);
  tle_launcher_image bad[] = {{"compute_90", bytes, 1, 0}};
  CHECK(tle_launcher_choose_image(bad, 1, 9, 0) == -1);
  int major = 0, minor = 0, specific = 0;
  CHECK(tle_launcher_parse_arch("sm_100a", &major, &minor, &specific));
  CHECK((major == 10 && minor == 0 && specific == 1));
  CHECK_FALSE(tle_launcher_parse_arch("sm_9", &major, &minor, &specific));
  CHECK_FALSE(tle_launcher_parse_arch("sm_90x", &major, &minor, &specific));
}

TEST_CASE("metadata: read back from tlec's PTX, with the launch keys", "[launcher][metadata]") {
  std::string ptx = vectorAddPtx("*fp32:16, *fp32:16, *fp32:16, i32:1, 1024", "cdiv(n_elements, BLOCK)");
  LaunchSpec s = specOf(ptx, "va.ptx");
  CHECK(s.kernel == "add_kernel");
  CHECK(s.numWarps == 4);
  REQUIRE(s.args.size() == 4);
  CHECK((s.args[0].name == "x_ptr" && s.args[0].type == "*fp32" && s.args[0].divisibility == 16));
  CHECK((s.args[3].name == "n_elements" && s.args[3].type == "i32" && s.args[3].equalToOne));
  REQUIRE(s.constexprs.size() == 1);
  CHECK((s.constexprs[0].first == "BLOCK" && s.constexprs[0].second == "1024"));
  CHECK(s.grid == std::vector<std::string>{"cdiv(n_elements, BLOCK)", "1", "1"});
  REQUIRE(s.images.size() == 1);
  CHECK(s.images[0].ptx);
  CHECK(s.images[0].arch == "sm_90a");
  CHECK(s.describe() == "*fp32:16 x_ptr, *fp32:16 y_ptr, *fp32:16 z_ptr, i32:1 n_elements; BLOCK=1024; 4 warps");
}

TEST_CASE("metadata: read back from an ELF symbol; damaged images are errors", "[launcher][metadata]") {
  std::string json = R"({"format":"tle-module","version":1,"target":"sm_80","kernels":[{"name":"k","num_warps":2,)"
                     R"("params":[{"name":"p","type":"*fp16","divisibility":16}],"constexprs":{}}]})";
  std::string elf = tinyElf("__tle_metadata", json), got, error;
  bool isPtx = true;
  REQUIRE(readImageMetadata(elf, got, isPtx, error));
  CHECK_FALSE(isPtx);
  CHECK(got == json);
  LaunchSpec s = specOf(elf, "k.cubin");
  CHECK((s.kernel == "k" && s.numWarps == 2 && s.images[0].arch == "sm_80" && !s.images[0].ptx));

  CHECK_FALSE(readImageMetadata(elf.substr(0, 100), got, isPtx, error));
  CHECK(error == "truncated ELF section table");
  CHECK_FALSE(readImageMetadata(tinyElf("other_symbol", json), got, isPtx, error));
  CHECK(error == "no symbol __tle_metadata (was it compiled by tlec?)");

  LaunchSpec spec;
  CHECK_FALSE(specFromMetadata(R"({"format":"tle-module","version":99})", {}, spec, error));
  CHECK(error == "invalid __tle_metadata: unsupported \"version\"");
  CHECK_FALSE(specFromMetadata("not json", {}, spec, error));
  CHECK(error == "invalid __tle_metadata: not a JSON object");
}

TEST_CASE("launchers: grouping, signature and grid checks, shadowed specialisations, identifiers",
          "[launcher][generate]") {
  LaunchSpec hinted = specOf(vectorAddPtx("*fp32:16, *fp32:16, *fp32:16, i32:16, 1024", "cdiv(n_elements, BLOCK)"), "a");
  LaunchSpec plain = specOf(vectorAddPtx("*fp32, *fp32, *fp32, i32, 1024", "cdiv(n_elements, BLOCK)"), "b");
  LaunchSpec hintedOther = hinted;
  hintedOther.images[0].arch = "sm_80";
  hintedOther.images[0].origin = "c";

  std::vector<LaunchSpec> specs = {hinted, plain, hintedOther};
  std::string error;
  REQUIRE(groupSpecs(specs, error));
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].images.size() == 2);
  std::vector<LaunchSpec> dup = {hinted, hinted};
  CHECK_FALSE(groupSpecs(dup, error));

  LauncherOptions o;
  o.name = "add";
  LauncherFiles files;
  std::vector<std::string> warnings;
  REQUIRE(generateLauncher(specs, o, files, error, warnings));
  CHECK(warnings.empty());
  CHECK(files.header.find("int add_select(") != std::string::npos);
  REQUIRE(generateLauncher({plain, hinted}, o, files, error, warnings));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("specialisation 1 (") == 0);

  LaunchSpec noGrid = plain;
  noGrid.grid.clear();
  CHECK_FALSE(generateLauncher({hinted, noGrid}, o, files, error, warnings));
  CHECK(error == "give every specialisation a grid (-g) or none: 1 of 2 have one");

  LaunchSpec renamed = plain;
  renamed.args[3].name = "grid";
  renamed.grid = {"cdiv(grid, BLOCK)", "1", "1"};
  CHECK_FALSE(generateLauncher({hinted, renamed}, o, files, error, warnings));
  CHECK(error.find("do not share one launcher signature") != std::string::npos);
  // A parameter named like the launcher's own arguments (or a C++ keyword) gets a '_'.
  renamed.args[0].name = "new";
  o.name = "";
  REQUIRE(generateLauncher({renamed}, o, files, error, warnings));
  CHECK(files.header.find("void add_kernel(tle::rt::Stream &stream, tle::launcher::Pointer new_, "
                          "tle::launcher::Pointer y_ptr, tle::launcher::Pointer z_ptr, int32_t grid_);") !=
        std::string::npos);
  CHECK(files.header.find("tle_launcher_cdiv(&tle_ctx, (int64_t)grid_, INT64_C(1024))") != std::string::npos);

  o.name = "class";
  CHECK_FALSE(generateLauncher({plain}, o, files, error, warnings));
  CHECK(isValidLauncherName("add_f16"));
  CHECK_FALSE(isValidLauncherName("2add"));
  CHECK_FALSE(isValidLauncherName("add-f16"));
}
