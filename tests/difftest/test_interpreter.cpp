// Unit tests of the reference interpreter and the generator: float encodings against the CPU
// target's independent conversions, small kernels with values worked out by hand, errors for
// unsupported ops and out-of-bounds accesses, and the generator's determinism.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "Generator.h"
#include "Interpreter.h"

#include "tle/Driver/Compiler.h"
#include "tle/IR/IR.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/CPU/HostArray.h"

#include <cmath>
#include <cstring>
#include <sstream>

using namespace tle;
using namespace tle::difftest;
using ir::DType;

namespace {

/// Compiles `src` to the tile stage with signature `sig`; fails the test on errors.
std::unique_ptr<ir::Function> compile(const std::string &src, const std::string &sig) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile("test.tle", src);
  driver::CompileOptions o;
  o.signature = sig;
  auto fn = driver::compileToTile(file, o, diags);
  INFO(err.str());
  REQUIRE(fn);
  return fn;
}

const char *kHeader = "import triton\nimport triton.language as tl\n\n@triton.jit\n";

} // namespace

TEST_CASE("fp16 and bf16 encodings agree with the CPU target's conversions", "[difftest]") {
  for (uint32_t b = 0; b < 65536; ++b) {
    long double h = floatFromBits(b, DType::F16), bf = floatFromBits(b, DType::BF16);
    float ch = cpu::halfToFloat(uint16_t(b)), cb = cpu::bf16ToFloat(uint16_t(b));
    if (std::isnan(ch)) {
      REQUIRE(std::isnan(h));
    } else {
      REQUIRE(h == ch);
      REQUIRE(floatToBits(h, DType::F16) == b);
    }
    if (std::isnan(cb)) {
      REQUIRE(std::isnan(bf));
    } else {
      REQUIRE(bf == cb);
      REQUIRE(floatToBits(bf, DType::BF16) == b);
    }
  }
}

TEST_CASE("rounding to fp16, bf16 and fp32 is to nearest even, or toward zero", "[difftest]") {
  // 1 + 2^-11 is halfway between 1 and the next fp16 (1 + 2^-10): ties to even gives 1.
  CHECK(roundToFloat(1.0L + std::ldexp(1.0L, -11), DType::F16) == 1.0L);
  CHECK(roundToFloat(1.0L + 3 * std::ldexp(1.0L, -11), DType::F16) == 1.0L + std::ldexp(1.0L, -9));
  CHECK(roundToFloat(65519.0L, DType::F16) == 65504.0L);
  CHECK(std::isinf(roundToFloat(65520.0L, DType::F16)));
  CHECK(roundToFloat(70000.0L, DType::F16, true) == 65504.0L);
  CHECK(roundToFloat(-1.99L, DType::F16, true) == -2037.0L / 1024); // 2037.76 quanta of 2^-10
  CHECK(roundToFloat(std::ldexp(1.0L, -25), DType::F16) == 0.0L);                          // tie to even zero
  CHECK(roundToFloat(std::ldexp(3.0L, -26), DType::F16) == std::ldexp(1.0L, -24));         // smallest subnormal
  CHECK(roundToFloat(0.1L, DType::F32) == static_cast<long double>(0.1f));
  CHECK(roundToFloat(16777217.0L, DType::F32) == 16777216.0L);
  for (double x : {0.1, 1.0 / 3, 3.14159, 1e-7, 6e-8, 123456.789, -2.5e-5, 65519.99})
    CHECK(floatToBits(roundToFloat(x, DType::F16), DType::F16) == cpu::halfFromDouble(x));
  for (double x : {0.1, 1.0 / 3, 3.14159, 1e-40, 3.4e38, -2.5e-5})
    CHECK(floatToBits(roundToFloat(x, DType::BF16), DType::BF16) == cpu::bf16FromDouble(x));
}

TEST_CASE("the interpreter runs a masked elementwise kernel", "[difftest]") {
  auto fn = compile(std::string(kHeader) +
                        "def k(x_ptr, y_ptr, out_ptr, n, B: tl.constexpr):\n"
                        "    offs = tl.program_id(0) * B + tl.arange(0, B)\n"
                        "    m = offs < n\n"
                        "    x = tl.load(x_ptr + offs, mask=m)\n"
                        "    y = tl.load(y_ptr + offs, mask=m, other=7)\n"
                        "    tl.store(out_ptr + offs, tl.where(x > y, x * 3 - y, (x // 2) % 3), mask=m)\n",
                    "*i32, *i32, *i32, i32, 4");
  std::vector<int32_t> x = {5, -7, 0, 9, -1, 4, 100}, y = {1, 2, 3, 4, 5, 6, 0}, out(7, -99);
  interpret(*fn, {2, 1, 1},
            {InterpArg::buffer(x.data(), 28), InterpArg::buffer(y.data(), 28), InterpArg::buffer(out.data(), 28),
             InterpArg::scalar(6)});
  // x > y: 3x - y; else C division and remainder: (-7 // 2) % 3 = -3 % 3 = 0, (0 // 2) % 3 = 0,
  // (-1 // 2) % 3 = 0, (4 // 2) % 3 = 2. Element 6 is masked off.
  CHECK(out == std::vector<int32_t>{14, 0, 0, 23, 0, 2, -99});
}

TEST_CASE("the interpreter runs reductions, scans, loops and fp16 arithmetic", "[difftest]") {
  auto fn = compile(std::string(kHeader) +
                        "def k(x_ptr, s_ptr, c_ptr, h_ptr, n):\n"
                        "    offs = tl.arange(0, 8)\n"
                        "    x = tl.load(x_ptr + offs)\n"
                        "    acc = tl.zeros([8], tl.int32)\n"
                        "    for i in range(1, n, 2):\n"
                        "        acc = acc + x * i\n"
                        "    tl.store(s_ptr, tl.sum(acc, axis=0))\n"
                        "    tl.store(c_ptr + offs, tl.cumsum(x, axis=0, reverse=True))\n"
                        "    h = x.to(tl.float16) * 0.1\n"
                        "    tl.store(h_ptr + offs, h)\n",
                    "*i32, *i32, *i32, *fp16, i32");
  std::vector<int32_t> x = {1, 2, 3, 4, 5, 6, 7, 8}, s(1), c(8);
  std::vector<uint16_t> h(8);
  interpret(*fn, {1, 1, 1},
            {InterpArg::buffer(x.data(), 32), InterpArg::buffer(s.data(), 4), InterpArg::buffer(c.data(), 32),
             InterpArg::buffer(h.data(), 16), InterpArg::scalar(6)});
  CHECK(s[0] == 36 * (1 + 3 + 5)); // i = 1, 3, 5
  CHECK(c == std::vector<int32_t>{36, 35, 33, 30, 26, 21, 15, 8});
  // fp16 product of the fp16 values of k and 0.1 (rounded to fp16 first: Triton's scalar rule
  // makes the literal an fp16 operand), rounded once.
  for (int k = 0; k < 8; ++k) {
    double tenth = cpu::halfToFloat(cpu::halfFromDouble(0.1));
    CHECK(h[size_t(k)] == cpu::halfFromDouble(double(x[size_t(k)]) * tenth));
  }
}

TEST_CASE("the interpreter reports unsupported ops and out-of-bounds accesses", "[difftest]") {
  auto dot = compile(std::string(kHeader) +
                         "def k(a_ptr, c_ptr):\n"
                         "    r = tl.arange(0, 16)\n"
                         "    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])\n"
                         "    tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, a))\n",
                     "*fp16, *fp32");
  CHECK(unsupportedOp(*dot).find("'dot' at line") != std::string::npos);
  std::vector<uint16_t> a(256);
  std::vector<float> c(256);
  CHECK_THROWS_WITH(interpret(*dot, {1, 1, 1}, {InterpArg::buffer(a.data(), 512), InterpArg::buffer(c.data(), 1024)}),
                    Catch::Contains("not supported by the reference interpreter"));

  auto oob = compile(std::string(kHeader) +
                         "def k(x_ptr, out_ptr):\n"
                         "    offs = tl.arange(0, 8)\n"
                         "    tl.store(out_ptr + offs, tl.load(x_ptr + offs))\n",
                     "*fp32, *fp32");
  std::vector<float> x(4), out(8);
  CHECK_THROWS_WITH(interpret(*oob, {1, 1, 1}, {InterpArg::buffer(x.data(), 16), InterpArg::buffer(out.data(), 32)}),
                    Catch::Contains("load of 4 bytes outside every buffer"));
}

TEST_CASE("the generator is deterministic", "[difftest]") {
  for (uint64_t seed : {0u, 1u, 77u}) {
    GeneratedKernel a = generateKernel(seed), b = generateKernel(seed);
    CHECK(a.source == b.source);
    CHECK(a.signature == b.signature);
    REQUIRE(a.args.size() == b.args.size());
    for (size_t k = 0; k < a.args.size(); ++k) {
      CHECK(a.args[k].bytes == b.args[k].bytes);
      CHECK(a.args[k].bits == b.args[k].bits);
    }
  }
  CHECK(generateKernel(1).source != generateKernel(2).source);
}

TEST_CASE("a tape of choices gives one valid kernel, and each byte is a choice", "[difftest]") {
  // Rng's tape: byte b is returned as b * 0x0101010101010101, then splitmix64 past the end.
  const uint8_t bytes[] = {0, 1, 255};
  Rng r(bytes, 3);
  CHECK(r.next() == 0);
  CHECK(r.next() == 0x0101010101010101ull);
  CHECK(r.range(0, 9) == int64_t(0xffffffffffffffffull % 10));
  CHECK(r.next() == Rng(3).next()); // past the end: seeded with the tape's size
  // The first choice is the rank: unit() below 0.5 (byte 0) is rank 1, above (byte 255) rank 2.
  std::vector<uint8_t> tape(256, 7);
  tape[0] = 0;
  GeneratedKernel rank1 = generateKernelFromChoices(tape.data(), tape.size());
  tape[0] = 255;
  GeneratedKernel rank2 = generateKernelFromChoices(tape.data(), tape.size());
  CHECK(rank1.source.find("B: tl.constexpr") != std::string::npos);
  CHECK(rank2.source.find("BM: tl.constexpr") != std::string::npos);
  CHECK(rank1.kernelName == "difftest_0");
  CHECK(generateKernelFromChoices(tape.data(), tape.size()).source == rank2.source);
  compile(rank1.source, rank1.signature);
  compile(rank2.source, rank2.signature);
}
