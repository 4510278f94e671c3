// CPU target: tl.device_print / print lines in Triton's format, and tl.device_assert / assert
// (device asserts in debug builds only) failing the run with the message.
#include "test_cpu_util.h"

#include <vector>

using namespace tle;
using namespace tle::cputest;
using cpu::ArgValue;

namespace {

/// Compiles `source` for the CPU, as a debug build when `debug`.
Compiled compileDebug(const std::string &source, const std::string &signature, bool debug) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile("dbg.tle", source);
  driver::CompileOptions o;
  o.signature = signature;
  o.debug = debug;
  Compiled c;
  if (auto fn = driver::compileToTile(file, o, diags))
    c.kernel = cpu::Kernel::compile(*fn, diags);
  c.diagnostics = err.str();
  return c;
}

/// Runs `k` on one thread and returns the printed lines.
std::vector<std::string> runPrinting(const Compiled &k, const cpu::Grid &grid, const std::vector<ArgValue> &args) {
  std::vector<std::string> lines;
  cpu::RunOptions ro;
  ro.threads = 1;
  ro.printSink = [&](const std::string &l) { lines.push_back(l); };
  k->run(grid, args, ro);
  return lines;
}

const char *kPrint = R"(import triton
import triton.language as tl


@triton.jit
def show(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.device_print("x", x)
    print("pid n", pid, n)
    tl.device_print("hello")
    tl.device_print("bits", x.to(tl.int32, bitcast=True), hex=True)
    m = tl.reshape(offs, (2, 2)).to(tl.int8) - 2
    tl.device_print("m: ", m)
    tl.device_print("h", x.to(tl.float16))
)";

} // namespace

TEST_CASE("cpu debug: device_print lines in Triton's format", "[cpu][debug]") {
  Compiled k = compileDebug(kPrint, "*fp32, i32, 4", false);
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x = {1.5f, -2.f, 3.f, 150.f, 5.f, 6.25f};
  std::vector<std::string> lines = runPrinting(k, {2}, {ArgValue::ptr(x), i32(6)});
  std::vector<std::string> want = {
      "pid (0, 0, 0) idx (0) x: 1.500000",
      "pid (0, 0, 0) idx (1) x: -2.000000",
      "pid (0, 0, 0) idx (2) x: 3.000000",
      "pid (0, 0, 0) idx (3) x: 150.000000",
      "pid (0, 0, 0) idx () pid n: (operand 0) 0",
      "pid (0, 0, 0) idx () pid n: (operand 1) 6",
      "pid (0, 0, 0) hello",
      "pid (0, 0, 0) idx (0) bits: 0x3fc00000",
      "pid (0, 0, 0) idx (1) bits: 0xc0000000",
      "pid (0, 0, 0) idx (2) bits: 0x40400000",
      "pid (0, 0, 0) idx (3) bits: 0x43160000",
      "pid (0, 0, 0) idx (0, 0) m: -2",
      "pid (0, 0, 0) idx (0, 1) m: -1",
      "pid (0, 0, 0) idx (1, 0) m: 0",
      "pid (0, 0, 0) idx (1, 1) m: 1",
      "pid (0, 0, 0) idx (0) h: 1.500000",
      "pid (0, 0, 0) idx (1) h: -2.000000",
      "pid (0, 0, 0) idx (2) h: 3.000000",
      "pid (0, 0, 0) idx (3) h: 150.000000",
  };
  REQUIRE(lines.size() == 2 * want.size());
  for (size_t i = 0; i < want.size(); ++i)
    REQUIRE(lines[i] == want[i]);
  // Program 1: masked-off elements load as zero; indices are local to the tile.
  REQUIRE(lines[want.size()] == "pid (1, 0, 0) idx (0) x: 5.000000");
  REQUIRE(lines[want.size() + 3] == "pid (1, 0, 0) idx (3) x: 0.000000");
  REQUIRE(lines[want.size() + 4] == "pid (1, 0, 0) idx () pid n: (operand 0) 1");
  REQUIRE(lines[want.size() + 11] == "pid (1, 0, 0) idx (0, 0) m: 2");
}

TEST_CASE("cpu debug: indices are padded to the digits of their dimension", "[cpu][debug]") {
  Compiled k = compileDebug(R"(import triton
import triton.language as tl


@triton.jit
def wide(out_ptr):
    i = tl.arange(0, 16)
    tl.device_print("i", i)
    tl.store(out_ptr + i, i)
)",
                            "*i32", false);
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> out(16);
  std::vector<std::string> lines = runPrinting(k, {1}, {ArgValue::ptr(out)});
  REQUIRE(lines.size() == 16);
  REQUIRE(lines[3] == "pid (0, 0, 0) idx ( 3) i: 3");
  REQUIRE(lines[12] == "pid (0, 0, 0) idx (12) i: 12");
}

namespace {

const char *kAssert = R"(import triton
import triton.language as tl


@triton.jit
def checked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    assert n > 0, "n must be positive"
    tl.device_assert(x < 100.0, "x too big", mask=offs < n)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)
)";

} // namespace

TEST_CASE("cpu debug: asserts are compiled out unless debug", "[cpu][debug]") {
  Compiled k = compileDebug(kAssert, "*fp32, *fp32, i32, 4", false);
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x = {1, 2, 300, 4, 5, 6}, out(8, 0.f);
  k->run({2}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(6)});
  REQUIRE(out[2] == 301.f);
}

TEST_CASE("cpu debug: a failing device_assert stops the program and fails the run with its message",
          "[cpu][debug]") {
  Compiled k = compileDebug(kAssert, "*fp32, *fp32, i32, 4", true);
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, out(8, 0.f);
  cpu::RunOptions one;
  one.threads = 1;
  // Passing: masked-off elements (offs >= n) are not checked.
  k->run({2}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(6)}, one);
  REQUIRE(out[5] == 7.f);
  // Element 1 of program 1 fails: that program stores nothing.
  x[5] = 500.f;
  std::fill(out.begin(), out.end(), 0.f);
  try {
    k->run({2}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(6)}, one);
    FAIL("the assert did not fire");
  } catch (const cpu::Error &e) {
    REQUIRE(std::string(e.what()) ==
            "kernel 'checked': device assertion failed at dbg.tle:10:5 (program id 1, 0, 0, element (1)): x too big");
  }
  REQUIRE(out[0] == 2.f);
  REQUIRE(out[4] == 0.f);
  // The scalar assert statement, with its message.
  try {
    k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(0)}, one);
    FAIL("the assert did not fire");
  } catch (const cpu::Error &e) {
    REQUIRE(std::string(e.what()) ==
            "kernel 'checked': device assertion failed at dbg.tle:9:5 (program id 0, 0, 0): n must be positive");
  }
}

TEST_CASE("cpu debug: @triton.jit(debug=True) makes a debug build", "[cpu][debug]") {
  Compiled k = compileDebug(R"(import triton
import triton.language as tl


@triton.jit(debug=True)
def kernel(x_ptr):
    x = tl.load(x_ptr)
    assert x != 0
)",
                            "*i32", false);
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> x = {0};
  REQUIRE_THROWS_WITH(k->run({1}, {ArgValue::ptr(x)}),
                      "kernel 'kernel': device assertion failed at dbg.tle:8:5 (program id 0, 0, 0)");
  x[0] = 3;
  k->run({1}, {ArgValue::ptr(x)});
}

TEST_CASE("cpu debug: integer +, -, * are checked for overflow in debug builds (Triton's sanitize_overflow)",
          "[cpu][debug]") {
  const char *src = R"(import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, u_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x * n + 1)
    u = tl.load(u_ptr + offs)
    tl.store(u_ptr + offs, u - 1)
)";
  std::vector<int32_t> x(16, 100000), y(16, 0);
  std::vector<uint32_t> u(16, 5);
  // Without debug: wraps around, no check.
  Compiled plain = compileDebug(src, "*i32, *i32, *u32, i32", false);
  TLE_REQUIRE_COMPILED(plain);
  plain->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(u), i32(100000)});
  REQUIRE(y[0] == int32_t(uint32_t(100000) * 100000u + 1u));
  Compiled dbg = compileDebug(src, "*i32, *i32, *u32, i32", true);
  TLE_REQUIRE_COMPILED(dbg);
  REQUIRE_THROWS_WITH(dbg->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(u), i32(100000)}),
                      "kernel 'scale': device assertion failed at dbg.tle:9:30 (program id 0, 0, 0, element (0)): "
                      "int32 overflow detected for operation mul");
  dbg->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(u), i32(3)});
  REQUIRE(y[5] == 300001);
  REQUIRE(u[0] == 3u); // 5, less one without and one with debug
  // Unsigned results below zero are overflows too.
  std::fill(u.begin(), u.end(), 0u);
  REQUIRE_THROWS_WITH(dbg->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(u), i32(3)}),
                      "kernel 'scale': device assertion failed at dbg.tle:11:30 (program id 0, 0, 0, element (0)): "
                      "int32 overflow detected for operation sub");
}
