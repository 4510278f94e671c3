// Unit tests of launch specs and shape dispatch tables without a GPU: loading examples/tune/add_rmsnorm.json, argument mapping, templates, heuristics (their expressions and runtime values), and the range predicates of tuned sizes.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "LaunchSpecFile.h"
#include "ShapeDispatch.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

using namespace tle::bench;
using Catch::Matchers::Contains;

namespace {

Candidate cfg(int64_t rows, int warps) {
  Candidate c;
  c.constexprs = {{"ROWS", rows}};
  c.numWarps = warps;
  return c;
}

TunedSize tuned(std::vector<std::pair<std::string, int64_t>> sizes, Candidate c, double ms) {
  std::string name;
  for (const auto &[n, v] : sizes)
    name += (name.empty() ? "" : ",") + n + "=" + std::to_string(v);
  return {sizes, c, ms, name};
}

/// A directory of its own under /tmp with `files` written into it; removed by the destructor.
struct TempDir {
  std::string path;
  std::vector<std::string> names;
  explicit TempDir(const std::vector<std::pair<std::string, std::string>> &files) {
    char t[] = "/tmp/tle-launch-spec-test-XXXXXX";
    path = mkdtemp(t);
    for (const auto &[n, text] : files) {
      std::ofstream(path + "/" + n) << text;
      names.push_back(n);
    }
  }
  ~TempDir() {
    for (const std::string &n : names)
      std::remove((path + "/" + n).c_str());
    rmdir(path.c_str());
  }
};

const char *kRowKernel = R"PY(import triton
import triton.language as tl

@triton.heuristics({'BLOCK': lambda args: triton.next_power_of_2(args['N']), "EVEN": lambda args: True})
@triton.jit
def scale_rows(x_ptr, y_ptr, n_rows, scale, N: tl.constexpr, BLOCK: tl.constexpr, EVEN: tl.constexpr, R: tl.constexpr):
    pass

@triton.jit
def other(a):
    pass
)PY";

} // namespace

TEST_CASE("the example launch spec loads into one case per size", "[launch-spec]") {
  LaunchSpecFile ls = loadLaunchSpec(std::string(TLE_SOURCE_DIR) + "/examples/tune/add_rmsnorm.json");
  REQUIRE(ls.sizeNames == std::vector<std::string>{"M", "N"});
  REQUIRE(ls.dispatchOn == std::vector<std::pair<std::string, std::string>>{{"M", "M"}}); // N is a constexpr
  REQUIRE(ls.heuristics == std::vector<std::string>{"BLOCK_N"});
  REQUIRE(ls.configs.empty()); // the decorator's
  const Suite &s = ls.suite;
  REQUIRE(s.root == std::string(TLE_SOURCE_DIR) + "/examples/tune");
  REQUIRE(s.kernels.size() == 2);
  CHECK(s.kernels[0].name == "add_rmsnorm_kernel");
  CHECK(s.kernels[0].source == "add_rmsnorm.tle");
  CHECK(s.kernels[0].signature == "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp16:16, i32, fp32");
  CHECK(s.kernels[1].entry == "add_rmsnorm_ref");
  CHECK(s.kernels[1].signature == s.kernels[0].signature);
  REQUIRE(s.cases.size() == 6);
  const CaseSpec &c = s.cases[2];
  CHECK(c.name == "M=64,N=4096");
  CHECK(c.vars == std::vector<std::pair<std::string, std::string>>{{"M", "64"}, {"N", "4096"}, {"eps", "1e-06"}});
  CHECK(c.defines == std::vector<std::pair<std::string, std::string>>{{"N", "4096"}});
  REQUIRE(c.launches.size() == 1);
  CHECK(c.launches[0].grid == std::vector<std::string>{"cdiv(M, ROWS)"});
  CHECK(c.launches[0].args == std::vector<std::string>{"x_ptr", "res_ptr", "w_ptr", "y_ptr", "h_ptr", "M", "eps"});
  REQUIRE(ls.check.referenceLaunch);
  CHECK(ls.check.referenceLaunch->grid == std::vector<std::string>{"M"});
  CHECK(ls.check.referenceDefines == std::vector<std::string>{"N"});
  CHECK(ls.check.rtol == 1e-2);
  CHECK(s.tune["bucket"] == nlohmann::ordered_json({"M", "N"}));
}

TEST_CASE("a launch spec maps parameters by name or through args, and types them", "[launch-spec]") {
  TempDir d({{"k.tle", kRowKernel},
             {"spec.json", R"J({"source": "k.tle", "kernel": "scale_rows",
                "sizes": [{"rows": 3, "N": 100}, {"rows": 70000, "N": 100}],
                "buffers": {"x": {"dtype": "bf16", "shape": ["rows", "N"]},
                            "y_ptr": {"dtype": "fp32", "shape": ["rows", "N"], "role": "output"}},
                "scalars": {"scale": 0.5},
                "args": {"x_ptr": "x", "n_rows": "rows"},
                "grid": ["cdiv(rows, R)", 1],
                "configs": [{"R": 1, "num_warps": 4}, {"R": 8, "num_warps": 8, "num_stages": 2}]})J"}});
  LaunchSpecFile ls = loadLaunchSpec(d.path + "/spec.json");
  CHECK(ls.suite.kernels[0].signature == "*bf16:16, *fp32:16, i32, fp32");
  CHECK(ls.suite.cases[0].launches[0].args == std::vector<std::string>{"x", "y_ptr", "rows", "scale"});
  CHECK(ls.suite.cases[1].defines == std::vector<std::pair<std::string, std::string>>{{"N", "100"}});
  // The size reaches the launcher as the kernel's parameter n_rows: the predicates name that.
  CHECK(ls.dispatchOn == std::vector<std::pair<std::string, std::string>>{{"rows", "n_rows"}});
  CHECK(ls.heuristics == std::vector<std::string>{"BLOCK", "EVEN"});
  REQUIRE(ls.configs.size() == 2);
  CHECK(ls.configs[1].id() == "R=8 w8 s2");
  CHECK(ls.configs[0].numStages == 3); // Triton's default
}

TEST_CASE("launch spec errors name the file and the field", "[launch-spec]") {
  auto errorOf = [](const std::string &spec) {
    TempDir d({{"k.tle", kRowKernel}, {"spec.json", spec}});
    try {
      loadLaunchSpec(d.path + "/spec.json");
    } catch (const BenchError &e) {
      std::string m = e.what();
      return m.substr(m.find("spec.json") == std::string::npos ? 0 : m.find("spec.json"));
    }
    return std::string("no error");
  };
  const std::string head = R"J("source": "k.tle", "kernel": "scale_rows", "sizes": [{"n_rows": 4, "N": 8}], )J";
  const std::string buffers = R"J("buffers": {"x_ptr": {"dtype": "fp32", "shape": ["n_rows", "N"]},
                                             "y_ptr": {"dtype": "fp32", "shape": ["n_rows", "N"], "role": "output"}}, )J";
  CHECK(errorOf("{" + head + buffers + R"J("scalars": {"scale": 1.0}})J") ==
        "spec.json: grid: missing (expressions over the sizes, scalars and the config's constexprs, e.g. "
        "\"cdiv(M, BLOCK_M)\")");
  CHECK(errorOf("{" + head + buffers + R"J("grid": "n_rows"})J") ==
        "spec.json: args: the kernel's parameter 'scale' gets no value: name a buffer, scalar or size 'scale', or "
        "map it in \"args\"");
  CHECK(errorOf("{" + head + buffers + R"J("scalars": {"scale": {"dtype": "f33", "value": 1}}, "grid": "n_rows"})J") ==
        "spec.json: scalars.scale.dtype: unknown dtype 'f33' (known: i1 i8 i16 i32 i64 u8 u16 u32 u64 fp16 bf16 fp32 "
        "fp64)");
  CHECK(errorOf("{" + head + buffers + R"J("scalars": {"scale": 1.0}, "grid": "n_rows", "args": {"BLOCK": 4}})J") ==
        "spec.json: args.BLOCK: not a runtime parameter of the kernel (constexprs take \"defines\", configs or sizes)");
  CHECK(errorOf("{" + head + buffers + R"J("scalars": {"scale": 1.0}, "grid": "n_rows", "dispatch_on": ["N"]})J") ==
        "spec.json: dispatch_on: 'N' is not a size passed as an integer argument of the kernel (tle-link's "
        "predicates test the launcher's integer arguments)");
  CHECK(errorOf("{" + head + buffers + R"J("scalars": {"scale": 1.0}, "grid": "n_rows", "configs": [{"R": 1, "num_warps": 3}]})J") ==
        "spec.json: configs[0].num_warps: must be a power of two in 1..32");
  CHECK(errorOf(R"J({"source": "k.tle", "kernel": "nope", "sizes": [{"n": 1}], "buffers": {}, "grid": "1"})J") ==
        "spec.json: kernel: the source has no `def nope` in k.tle");
  CHECK(errorOf("{" + head + R"J("buffers": {"x_ptr": {"dtype": "fp32", "shape": ["n_rows", "N"], "role": "inout"}},
                                "grid": "1"})J") == "spec.json: buffers.x_ptr.role: must be input, output or scratch, not 'inout'");
  CHECK(errorOf(R"J({"source": "k.tle", "kernel": "scale_rows", "sizes": [{"n_rows": 4}, {"M": 4}]})J") ==
        "spec.json: sizes[1]: names other sizes than sizes[0] (every size gives the same names)");
}

TEST_CASE("templates and heuristics", "[launch-spec]") {
  Env env = {{"M", Value::ofInt(64)}, {"eps", Value::ofFloat(1e-6)}};
  CHECK(expandTemplate("ref/y_{M}.npy", env, "w") == "ref/y_64.npy");
  CHECK(expandTemplate("{M}x{M}", env, "w") == "64x64");
  CHECK_THROWS_WITH(expandTemplate("y_{K}.npy", env, "check.expect.y"),
                    "check.expect.y: '{K}' in 'y_{K}.npy' names no size or scalar");
  CHECK_THROWS_WITH(expandTemplate("y_{M.npy", env, "w"), "w: unmatched '{' in 'y_{M.npy'");
  CHECK(heuristicParams(kRowKernel, "scale_rows") == std::vector<std::string>{"BLOCK", "EVEN"});
  CHECK(heuristicParams(kRowKernel, "other").empty()); // the decorator belongs to the def above
}

TEST_CASE("shape dispatch over one size: ranges between tuned values, merged winners", "[dispatch]") {
  std::vector<TunedSize> t = {tuned({{"M", 1}, {"N", 4096}}, cfg(1, 2), 0.0031),
                              tuned({{"M", 8}, {"N", 4096}}, cfg(1, 2), 0.0033),
                              tuned({{"M", 64}, {"N", 4096}}, cfg(1, 4), 0.0042),
                              tuned({{"M", 512}, {"N", 4096}}, cfg(1, 8), 0.0121),
                              tuned({{"M", 4096}, {"N", 4096}}, cfg(2, 8), 0.0702),
                              tuned({{"M", 16384}, {"N", 4096}}, cfg(2, 8), 0.2650)};
  std::vector<DispatchVariant> v = shapeDispatch(t, {{"M", "M"}});
  REQUIRE(v.size() == 4);
  CHECK(v[0].when == std::vector<std::string>{"M <= 8"});
  CHECK(v[0].covers == "M <= 8");
  CHECK(v[0].why == "fastest at M=1,N=4096 (0.0031 ms), M=8,N=4096 (0.0033 ms)");
  CHECK(v[1].when == std::vector<std::string>{"M <= 64"});
  CHECK(v[1].covers == "8 < M <= 64");
  CHECK(v[2].covers == "64 < M <= 512");
  CHECK(v[3].when.empty()); // the last catches every larger shape
  CHECK(v[3].covers == "M > 512");
  CHECK(v[3].config.id() == "ROWS=2 w8 s3");
  CHECK(v[3].module == 3);
  // Unsorted input gives the same table.
  std::swap(t[0], t[5]);
  CHECK(shapeDispatch(t, {{"M", "M"}}).size() == 4);
}

TEST_CASE("shape dispatch over two sizes nests them, the first outermost", "[dispatch]") {
  // M in {16, 256} x K in {1024, 8192}; for M = 16 one config wins both K, so that bucket merges.
  std::vector<TunedSize> t = {tuned({{"M", 16}, {"K", 1024}}, cfg(1, 4), 1), tuned({{"M", 16}, {"K", 8192}}, cfg(1, 4), 2),
                              tuned({{"M", 256}, {"K", 1024}}, cfg(2, 8), 3), tuned({{"M", 256}, {"K", 8192}}, cfg(4, 8), 4)};
  std::vector<DispatchVariant> v = shapeDispatch(t, {{"M", "m"}, {"K", "k"}});
  REQUIRE(v.size() == 3);
  CHECK(v[0].when == std::vector<std::string>{"m <= 16"});
  CHECK(v[0].covers == "m <= 16, any k");
  CHECK(v[0].why == "fastest at M=16,K=1024 (1.0000 ms), M=16,K=8192 (2.0000 ms)");
  CHECK(v[1].when == std::vector<std::string>{"k <= 1024"});
  CHECK(v[1].covers == "m > 16, k <= 1024");
  CHECK(v[2].when.empty());
  CHECK(v[2].config.id() == "ROWS=4 w8 s3");
  CHECK(v[0].module == 0);
  CHECK(v[2].module == 2);
}

TEST_CASE("shape dispatch errors and the table without dimensions", "[dispatch]") {
  std::vector<TunedSize> gap = {tuned({{"M", 16}, {"K", 1}}, cfg(1, 4), 1), tuned({{"M", 32}, {"K", 2}}, cfg(1, 4), 1)};
  CHECK_THROWS_WITH(shapeDispatch(gap, {{"M", "M"}, {"K", "K"}}),
                    "the tuned sizes do not form a grid over the dispatch sizes: none is M=16,K=2");
  CHECK_THROWS_WITH(shapeDispatch(gap, {{"M", "M"}}),
                    Contains("size 'K' is 1 in M=16,K=1 but 2 in M=32,K=2, and the dispatcher does not test it"));
  CHECK_THROWS_WITH(shapeDispatch({}, {{"M", "M"}}), "no tuned size has a winner: nothing to dispatch");
  std::vector<TunedSize> flat = {tuned({{"N", 64}}, cfg(1, 4), 1), tuned({{"N", 64}}, cfg(2, 4), 2),
                                 tuned({{"N", 64}}, cfg(2, 4), 3)};
  std::vector<DispatchVariant> one = shapeDispatch(flat, {});
  REQUIRE(one.size() == 1);
  CHECK(one[0].config.id() == "ROWS=2 w4 s3");
  CHECK(one[0].when.empty());
  CHECK_THAT(one[0].why, Contains("wins 2 of 3 sizes"));
}

TEST_CASE("tuned sizes from a results document", "[dispatch]") {
  std::ifstream f(std::string(TLE_SOURCE_DIR) + "/tests/tune/add_rmsnorm_results.json");
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(f);
  std::vector<TunedSize> t = tunedSizesOf(doc, "r.json");
  REQUIRE(t.size() == 6);
  CHECK(t[2].caseName == "M=64,N=4096");
  CHECK(t[2].sizes == std::vector<std::pair<std::string, int64_t>>{{"M", 64}, {"N", 4096}});
  CHECK(t[2].config.id() == "ROWS=1 w4 s3");
  CHECK(t[2].medianMs == 0.0042);
  CHECK_THROWS_WITH(tunedSizesOf(nlohmann::ordered_json::object(), "r.json"),
                    "r.json: not a tle-bench --tune results document (no \"cases\" list)");
  doc["cases"][0].erase("sizes");
  CHECK_THROWS_WITH(tunedSizesOf(doc, "r.json"),
                    "r.json: case 'M=1,N=4096' has no \"sizes\" (results of a launch spec have them)");
}

TEST_CASE("expressions of heuristics: comparisons, boolean operators, module-qualified functions", "[launch-spec]") {
  Env env = {{"K", Value::ofInt(1000)}, {"BLOCK_K", Value::ofInt(64)}, {"x", Value::ofFloat(0.5)}};
  CHECK(evalExpr("K % BLOCK_K == 0", env).i == 0);
  CHECK(evalExpr("4096 % BLOCK_K == 0", env).i == 1);
  CHECK(evalExpr("1 < 2 <= 2 < 3", env).i == 1); // chained as Python
  CHECK(evalExpr("1 < 3 < 2", env).i == 0);
  CHECK(evalExpr("K > 512 and BLOCK_K != 64", env).i == 0);
  CHECK(evalExpr("K > 512 or BLOCK_K != 64", env).i == 1);
  CHECK(evalExpr("not K", env).i == 0);
  CHECK(evalExpr("0 or 7", env).i == 7); // the deciding operand, as Python
  CHECK(evalExpr("x >= 0.5", env).i == 1);
  CHECK(evalExpr("triton.next_power_of_2(K) + tl.cdiv(K, BLOCK_K)", env).i == 1024 + 16);
  CHECK(evalExpr("True + True", env).i == 2);
  CHECK(evalExpr("K < 2 * BLOCK_K or K == 1000", env).i == 1);
  CHECK_THROWS_WITH(evalExpr("K <", env), Contains("unexpected end of expression"));
}

TEST_CASE("heuristic rules: bodies, the parameters they read, runtime values per size", "[launch-spec]") {
  std::vector<HeuristicRule> rules = heuristicRules(kRowKernel, "scale_rows");
  REQUIRE(rules.size() == 2);
  CHECK(rules[0].name == "BLOCK");
  CHECK(rules[0].expr == "triton.next_power_of_2(N)");
  CHECK(rules[0].reads == std::vector<std::string>{"N"});
  CHECK(rules[1].expr == "True");
  LaunchSpecFile ls = loadLaunchSpec(std::string(TLE_SOURCE_DIR) + "/tests/tune/even_k/scale.json");
  REQUIRE(ls.heuristicRules.size() == 1);
  CHECK(ls.heuristicRules[0].expr == "K % BLOCK_K == 0");
  CHECK(ls.heuristicRules[0].runtime); // K is a runtime parameter
  CHECK(ls.dispatchOn == std::vector<std::pair<std::string, std::string>>{{"M", "M"}, {"K", "K"}});
  Candidate c;
  c.constexprs = {{"BLOCK_K", 256}};
  Env k4096 = {{"M", Value::ofInt(16)}, {"K", Value::ofInt(4096)}, {"scale", Value::ofFloat(0.5)}};
  Env k1000 = {{"M", Value::ofInt(16)}, {"K", Value::ofInt(1000)}, {"scale", Value::ofFloat(0.5)}};
  using Defs = std::vector<std::pair<std::string, std::string>>;
  CHECK(runtimeHeuristicDefines(ls, k4096, c, "M=16,K=4096") == Defs{{"EVEN_K", "1"}});
  CHECK(runtimeHeuristicDefines(ls, k1000, c, "M=16,K=1000") == Defs{{"EVEN_K", "0"}});
  c.constexprs.push_back({"EVEN_K", 0}); // a config that sets it wins, as -D does in tlec
  CHECK(runtimeHeuristicDefines(ls, k4096, c, "M=16,K=4096").empty());
  // The example's heuristic reads only the constexpr N: tlec computes it.
  LaunchSpecFile ex = loadLaunchSpec(std::string(TLE_SOURCE_DIR) + "/examples/tune/add_rmsnorm.json");
  REQUIRE(ex.heuristicRules.size() == 1);
  CHECK_FALSE(ex.heuristicRules[0].runtime);
  CHECK(runtimeHeuristicDefines(ex, k4096, c, "x").empty());
}
