// CPU target errors: bounds checking, refused arguments and grids, ops the target cannot run,
// and failures detected while running; none of them may crash the process.
#include "test_cpu_util.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <vector>

using namespace tle;
using namespace tle::cputest;
using cpu::ArgValue;
using Catch::Matchers::Contains;

namespace {

const char *kVectorAddSig = "*fp32:16, *fp32:16, *fp32:16, i32, 64";

std::string errorOf(const cpu::Kernel &k, const cpu::Grid &g, const std::vector<ArgValue> &args, unsigned threads = 0) {
  try {
    k.run(g, args, {threads});
  } catch (const cpu::Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("cpu: --check-bounds reports the first out-of-bounds access", "[cpu][errors]") {
  cpu::CompileOptions co;
  co.checkBounds = true;
  Compiled k = compileExample("vector_add.tle", kVectorAddSig, co);
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x(200, 1.f), y(200, 2.f), z(100, 0.f), big(256);
  SECTION("a store past the end of z") {
    std::string e = errorOf(*k.kernel, {4}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(z), i32(200)}, 1);
    CHECK_THAT(e, Contains("out-of-bounds store in kernel 'add_kernel'"));
    CHECK_THAT(e, Contains("vector_add.tle:"));
    CHECK_THAT(e, Contains("nearest is 'z_ptr' (100 x fp32), of which it is element 100"));
    CHECK_THAT(e, Contains("program id 1, 0, 0"));
    // The accesses past z were not made: the buffer after z is intact and z[0..99] holds x + y.
    for (float v : z)
      REQUIRE(v == 3.f);
  }
  SECTION("a load past the end of x") {
    std::string e = errorOf(*k.kernel, {4}, {ArgValue::ptr(x.data(), 150 * 4), ArgValue::ptr(y), ArgValue::ptr(big),
                                             i32(256)}, 1);
    CHECK_THAT(e, Contains("out-of-bounds load in kernel 'add_kernel'"));
    CHECK_THAT(e, Contains("'x_ptr' (150 x fp32), of which it is element 150"));
  }
  SECTION("in bounds: no error, same result as unchecked") {
    std::vector<float> zz(256);
    REQUIRE(errorOf(*k.kernel, {4}, {ArgValue::ptr(big), ArgValue::ptr(big), ArgValue::ptr(zz), i32(256)}).empty());
  }
  SECTION("every pointer needs a size") {
    std::string e = errorOf(*k.kernel, {1}, {ArgValue::ptr(x.data()), ArgValue::ptr(y), ArgValue::ptr(z), i32(10)});
    CHECK_THAT(e, Contains("bounds checking needs the size of every pointer argument"));
  }
}

TEST_CASE("cpu: launches with bad arguments or grids are refused", "[cpu][errors]") {
  Compiled k = compileExample("vector_add.tle", kVectorAddSig);
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x(64), y(64), z(64);
  auto good = [&] { return std::vector<ArgValue>{ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(z), i32(64)}; };
  REQUIRE(errorOf(*k.kernel, {1}, good()).empty());
  auto args = good();
  args.pop_back();
  CHECK_THAT(errorOf(*k.kernel, {1}, args), Contains("expects 4 arguments (x_ptr, y_ptr, z_ptr, n_elements) but was given 3"));
  args = good();
  args[3] = ArgValue::of<int64_t>(64);
  CHECK_THAT(errorOf(*k.kernel, {1}, args), Contains("'n_elements', i32) needs an i32 scalar, got i64"));
  args = good();
  args[0] = i32(1);
  CHECK_THAT(errorOf(*k.kernel, {1}, args), Contains("'x_ptr', *fp32) needs a pointer"));
  args = good();
  args[3] = ArgValue::ptr(x);
  CHECK_THAT(errorOf(*k.kernel, {1}, args), Contains("needs a scalar"));
  args = good();
  args[1] = ArgValue::ptr(y.data() + 1, 4); // breaks the :16 promise
  CHECK_THAT(errorOf(*k.kernel, {1}, args), Contains("promises 16-byte alignment"));
  CHECK_THAT(errorOf(*k.kernel, {0}, good()), Contains("bad grid"));
  CHECK_THAT(errorOf(*k.kernel, {1, 70000}, good()), Contains("bad grid"));
}

TEST_CASE("cpu: integer divisibility promises are checked", "[cpu][errors]") {
  Compiled k = compileExample("vector_add.tle", "*fp32, *fp32, *fp32, i32:16, 64");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x(64), y(64), z(64);
  CHECK_THAT(errorOf(*k.kernel, {1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(z), i32(60)}),
             Contains("promises a multiple of 16, got 60"));
  REQUIRE(errorOf(*k.kernel, {1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(z), i32(48)}).empty());
}

TEST_CASE("cpu: a for loop with a non-positive step fails cleanly", "[cpu][errors]") {
  std::string src = R"(import triton
import triton.language as tl

@triton.jit
def stepper(o_ptr, n, s):
    acc = tl.zeros([8], dtype=tl.int32)
    for i in range(0, n, s):
        acc += 1
    tl.store(o_ptr + tl.arange(0, 8), acc)
)";
  Compiled k = compileSource(src, "*i32, i32, i32");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> o(8);
  REQUIRE(errorOf(*k.kernel, {1}, {ArgValue::ptr(o), i32(10), i32(3)}).empty());
  REQUIRE(o[0] == 4);
  std::string e = errorOf(*k.kernel, {1}, {ArgValue::ptr(o), i32(10), i32(0)});
  CHECK_THAT(e, Contains("kernel 'stepper': for loop at test.tle:7:5 has a non-positive step (0)"));
}

TEST_CASE("cpu: ops the target cannot run are diagnosed, not crashed on", "[cpu][errors]") {
  // Hand-built tile IR with a bitwise not on fp32 (Sema never produces it, the verifier rejects it;
  // the backend still diagnoses it when handed unverified IR).
  ir::Function f;
  f.name = "bad";
  f.params.push_back({"p", ir::ScalarType::ptrTo(ir::DType::F32), 1, {}});
  f.body.addArg(ir::Type(ir::ScalarType::ptrTo(ir::DType::F32)), "p");
  ir::Builder b(&f.body);
  ir::Value *c = b.constFloat({}, ir::DType::F32, 1.0);
  ir::Value *n = b.unary(ir::OpKind::Not, {}, c);
  b.create(ir::OpKind::Store, {}, {f.body.args[0].get(), n}, {});
  b.create(ir::OpKind::Return, {}, {}, {});
  CHECK(ir::verify(f) == "'not': expects an integer operand, got fp32");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  REQUIRE_FALSE(cpu::Kernel::compile(f, diags));
  CHECK_THAT(err.str(), Contains("'not' on fp32 is not supported on the cpu target"));
  llvm::LLVMContext ctx;
  REQUIRE_FALSE(cpu::emitLLVM(f, ctx, diags));
}

TEST_CASE("cpu: emitLLVM gives the kernel the GPU ABI plus program id and grid size", "[cpu][errors]") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::string ioErr;
  uint32_t file = sm.loadFile(std::string(TLE_SOURCE_DIR) + "/examples/vector_add.tle", ioErr);
  driver::CompileOptions o;
  o.signature = kVectorAddSig;
  auto fn = driver::compileToTile(file, o, diags);
  REQUIRE(fn);
  llvm::LLVMContext ctx;
  auto m = cpu::emitLLVM(*fn, ctx, diags);
  REQUIRE(m);
  llvm::Function *k = m->getFunction("add_kernel");
  REQUIRE(k);
  REQUIRE(k->arg_size() == 4 + 6);
  REQUIRE(k->getArg(0)->getType()->isPointerTy());
  REQUIRE(k->getArg(3)->getType()->isIntegerTy(32));
  REQUIRE(k->getArg(4)->getName() == "pid_x");
  REQUIRE(k->getArg(9)->getName() == "nprog_z");
  REQUIRE(m->getFunction("__tle_cpu_entry_add_kernel"));
}

TEST_CASE("cpu: a kernel named like a C library function does not capture LLVM's calls", "[cpu][errors]") {
  std::string src = R"(import triton
import triton.language as tl

@triton.jit
def expf(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.exp(tl.load(x_ptr + offs)))
)";
  Compiled k = compileSource(src, "*fp32, *fp32, 4");
  TLE_REQUIRE_COMPILED(k);
  REQUIRE(k->name() == "expf");
  std::vector<float> x{0.f, 1.f, -1.f, 2.f}, o(4);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(o)});
  for (size_t i = 0; i < 4; ++i)
    REQUIRE(o[i] == std::exp(x[i]));
}
