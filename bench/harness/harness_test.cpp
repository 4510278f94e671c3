// Unit tests of tle-bench's harness without a GPU: expressions, suite loading, launches, host tensors and references.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "Expr.h"
#include "Families.h"
#include "Launch.h"
#include "Report.h"
#include "Suite.h"
#include "Tensor.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace tle::bench;

namespace {

Value ev(const std::string &s, Env env = {}) { return evalExpr(s, env); }

std::string tempPath(const std::string &name) {
  return "/tmp/tle-bench-test-" + std::to_string(getpid()) + "-" + name;
}

/// Writes `text` as <tmp>/bench/suites/NAME.json with a kernel source at <tmp>/k.tle; returns the path.
std::string writeSuite(const std::string &name, const std::string &text) {
  std::string root = tempPath("root");
  std::string cmd = "mkdir -p " + root + "/bench/suites";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ofstream(root + "/k.tle") << "# Compile: tlec k.tle -n add_kernel -s \"*fp32:16, *fp32:16, *fp32:16, i32, 256\" -w 2\n";
  std::string path = root + "/bench/suites/" + name + ".json";
  std::ofstream(path) << text;
  return path;
}

const char *kGoodSuite = R"JSON({
  "comment": "test",
  "suite": "t", "reps": 5, "warmup": 1,
  "kernels": {"add": {"source": "k.tle"},
              "add8": {"source": "k.tle", "entry": "add_kernel", "signature": "*fp32:16, *fp32:16, *fp32:16, i32, 1024",
                       "include_dirs": ["lib", "third_party/kern"], "num_warps": 8}},
  "cases": [{"name": "va", "family": "vector_add", "vars": {"N": 1000, "H": "N // 2"},
             "buffers": {"x": {"dtype": "fp32", "shape": ["N"]},
                         "y": {"dtype": "fp32", "shape": ["N"], "init": "uniform(-1, 1)"},
                         "z": {"dtype": "fp32", "shape": ["N"], "role": "output"},
                         "s": {"dtype": "fp32", "shape": ["H"], "role": "scratch"}},
             "launches": [{"kernel": "add", "grid": ["cdiv(N, BLOCK)"], "args": ["x", "y", "z", "N"]}]}]
})JSON";

} // namespace

TEST_CASE("expressions follow Python semantics", "[expr]") {
  CHECK(ev("1 + 2 * 3").i == 7);
  CHECK(ev("-7 // 2").i == -4);
  CHECK(ev("-7 % 2").i == 1);
  CHECK(ev("7 % -2").i == -1);
  CHECK(ev("7 / 2").isFloat);
  CHECK(ev("7 / 2").f == 3.5);
  CHECK(ev("2 ** 10").i == 1024);
  CHECK(ev("-2 ** 2").i == -4);
  CHECK(ev("2 ** 3 ** 2").i == 512);
  CHECK(ev("cdiv(1000, 256)").i == 4);
  CHECK(ev("cdiv(1024, 256)").i == 4);
  CHECK(ev("min(3, 1, 2)").i == 1);
  CHECK(ev("max(3, 4.5)").f == 4.5);
  CHECK(ev("next_power_of_2(1000)").i == 1024);
  CHECK(ev("next_power_of_2(1024)").i == 1024);
  CHECK(ev("1e-5").f == 1e-5);
  CHECK(ev("int(7.9)").i == 7);
  CHECK(ev("2 * (M + 1)", {{"M", Value::ofInt(3)}}).i == 8);
  CHECK(ev("16_384").i == 16384);
  CHECK(ev("5.0 // 2").f == 2.0);
  CHECK(ev("-5.5 % 2").f == 0.5);
}

TEST_CASE("expression errors name the cause", "[expr]") {
  CHECK_THROWS_WITH(ev("1 // 0"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(ev("cdiv(1, 0)"), Catch::Contains("by zero"));
  CHECK_THROWS_WITH(ev("Q + 1"), Catch::Contains("unknown name 'Q'"));
  CHECK_THROWS_WITH(ev("foo(1)"), Catch::Contains("unknown function 'foo'"));
  CHECK_THROWS_WITH(ev("(1 + 2"), Catch::Contains("expected ')'"));
  CHECK_THROWS_WITH(ev("1 +"), Catch::Contains("unexpected end"));
  CHECK_THROWS_WITH(ev("9223372036854775807 + 1"), Catch::Contains("overflow"));
  CHECK_THROWS_WITH(ev("1 2"), Catch::Contains("column 3"));
  CHECK_THROWS_WITH(ev("2.5").asInt("x"), Catch::Contains("x must be an integer"));
}

TEST_CASE("suites load, take header fields and resolve", "[suite]") {
  Suite s = loadSuite(writeSuite("good", kGoodSuite));
  REQUIRE(s.kernels.size() == 2);
  const KernelSpec &k = s.kernel("add");
  CHECK(k.signature == "*fp32:16, *fp32:16, *fp32:16, i32, 256");
  CHECK(k.entry == "add_kernel");
  CHECK(k.numWarps == 2);
  CHECK(s.kernel("add8").numWarps == 8);
  CHECK(s.kernel("add8").signature.find("1024") != std::string::npos);
  CHECK(k.includeDirs.empty());
  CHECK(includeArgs(s.kernel("add8"), "/repo") ==
        std::vector<std::string>{"-I", "/repo/lib", "-I", "/repo/third_party/kern"});
  REQUIRE(s.cases.size() == 1);
  CHECK(s.cases[0].reps == 5);

  ResolvedCase rc = resolveCase(s.cases[0], {{"SMS", Value::ofInt(132)}}, {});
  CHECK(rc.env.at("H").i == 500);
  CHECK(rc.shapes[3] == std::vector<int64_t>{500});
  CHECK(rc.bytes == 3 * 1000 * 4);       // scratch excluded
  CHECK(rc.totalBufferBytes == 3 * 1000 * 4 + 500 * 4);
  CHECK(rc.inits[1].kind == InitSpec::Uniform);
  CHECK(rc.inits[1].a == -1);

  ResolvedCase small = resolveCase(s.cases[0], {{"SMS", Value::ofInt(132)}}, {{"N", "64"}});
  CHECK(small.shapes[0] == std::vector<int64_t>{64});
  CHECK(small.env.at("H").i == 32); // later vars see the override
}

TEST_CASE("suite errors name the case and the key", "[suite]") {
  std::string bad = kGoodSuite;
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string t = bad;
    size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  CHECK_THROWS_WITH(loadSuite(writeSuite("b1", replaced("\"vector_add\"", "\"nope\""))),
                    Catch::Contains("unknown family 'nope'"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b2", replaced("\"kernel\": \"add\"", "\"kernel\": \"missing\""))),
                    Catch::Contains("no kernel 'missing'"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b3", replaced("\"role\": \"output\"", "\"role\": \"input\""))),
                    Catch::Contains("its role must be output"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b4", replaced("\"y\": {", "\"yy\": {"))),
                    Catch::Contains("needs a buffer named 'y'"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b5", replaced("\"reps\": 5", "\"repz\": 5"))),
                    Catch::Contains("unknown key 'repz'"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b5i", replaced("[\"lib\", \"third_party/kern\"]", "\"lib\""))),
                    Catch::Contains("\"include_dirs\" must be an array of directories"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b6", replaced("\"fp32\", \"shape\": [\"H\"]", "\"f32\", \"shape\": [\"H\"]"))),
                    Catch::Contains("unknown dtype 'f32'"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b7", replaced("uniform(-1, 1)", "gauss(1)"))),
                    Catch::Contains("unknown init 'gauss'"));
  CHECK_THROWS_WITH(loadSuite(writeSuite("b8", "{ not json")), Catch::Contains("invalid JSON"));
  // "archs" on a kernel and "triton_launches" on a case (the Triton side's baseline) are known
  // keys; the baseline must name a kernel of the suite.
  const std::string baseline = "\"triton_launches\": [{\"kernel\": \"add8\", \"grid\": [\"1\"], "
                               "\"args\": [\"x\", \"y\", \"z\", \"N\"]}], \"launches\"";
  std::string withBaseline = replaced("\"launches\"", baseline);
  size_t at = withBaseline.find("\"num_warps\": 8}");
  REQUIRE(at != std::string::npos);
  withBaseline.replace(at, 15, "\"num_warps\": 8, \"archs\": [\"sm_90a\"]}");
  CHECK_NOTHROW(loadSuite(writeSuite("b9", withBaseline)));
  size_t k = withBaseline.find("\"kernel\": \"add8\"");
  CHECK_THROWS_WITH(loadSuite(writeSuite("b10", withBaseline.replace(k, 16, "\"kernel\": \"nope\""))),
                    Catch::Contains("no kernel 'nope'"));
}

TEST_CASE("launches are checked against the kernel's metadata", "[launch]") {
  Suite s = loadSuite(writeSuite("good", kGoodSuite));
  ResolvedCase rc = resolveCase(s.cases[0], {{"SMS", Value::ofInt(132)}}, {});
  tle::rt::ModuleInfo mi = tle::rt::parseModuleMetadata(
      R"({"format":"tle-module","version":1,"target":"sm_90a","kernels":[{"name":"add_kernel","num_warps":2,
          "block":[64,1,1],"shared_bytes":0,"params":[{"name":"x","type":"*fp32","divisibility":16},
          {"name":"y","type":"*fp32","divisibility":16},{"name":"z","type":"*fp32","divisibility":16},
          {"name":"n","type":"i32","divisibility":1}],"constexprs":{"BLOCK":256}}]})");
  KernelHandle h;
  h.spec = &s.kernel("add");
  h.info = mi.kernels[0];
  ResolvedLaunch rl = resolveLaunch(s.cases[0].launches[0], h, rc);
  CHECK(rl.grid[0] == 4); // cdiv(1000, BLOCK=256)
  REQUIRE(rl.args.size() == 4);
  CHECK(rl.args[2].pointer);
  CHECK(rl.args[2].buffer == 2);
  CHECK(rl.args[3].bits == 1000);
  CHECK(rl.args[3].text == "1000");

  LaunchSpec l = s.cases[0].launches[0];
  l.args.pop_back();
  CHECK_THROWS_WITH(resolveLaunch(l, h, rc), Catch::Contains("3 arguments given, the kernel takes 4"));
  l = s.cases[0].launches[0];
  l.args[3] = "x";
  CHECK_THROWS_WITH(resolveLaunch(l, h, rc), Catch::Contains("a buffer was given for a scalar"));
  l = s.cases[0].launches[0];
  l.args[0] = "N";
  CHECK_THROWS_WITH(resolveLaunch(l, h, rc), Catch::Contains("expected a buffer name"));
  l = s.cases[0].launches[0];
  l.args[3] = "2 ** 40";
  CHECK_THROWS_WITH(resolveLaunch(l, h, rc), Catch::Contains("does not fit i32"));
  h.info.params[3].divisibility = 16;
  CHECK_THROWS_WITH(resolveLaunch(s.cases[0].launches[0], h, rc), Catch::Contains("divisibility promise"));
  h.info.params[3].divisibility = 1;
  l = s.cases[0].launches[0];
  l.grid[0] = "0";
  CHECK_THROWS_WITH(resolveLaunch(l, h, rc), Catch::Contains("outside [1,"));
}

TEST_CASE("metadata is read from PTX and ELF-like files", "[launch]") {
  std::string json = R"({"format":"tle-module","version":1,"target":"sm_90a","kernels":[{"name":"k","num_warps":4,"block":[128,1,1],"shared_bytes":0,"params":[],"constexprs":{}}]})";
  std::string ptx = ".version 8.0\n.visible .global .align 1 .b8 __tle_metadata[" + std::to_string(json.size() + 1) + "] = {";
  for (char c : json)
    ptx += std::to_string(int(c)) + ", ";
  ptx += "0};\n";
  std::string p1 = tempPath("m.ptx"), p2 = tempPath("m.cubin");
  std::ofstream(p1) << ptx;
  std::string elf = std::string("\x7f" "ELF", 4) + std::string(20, '\0') + json + std::string(1, '\0') + "tail";
  std::ofstream(p2, std::ios::binary) << elf;
  CHECK(readMetadataFile(p1).kernels.at(0).name == "k");
  CHECK(readMetadataFile(p2).kernels.at(0).numWarps == 4);
  std::ofstream(p1) << "nothing here";
  CHECK_THROWS_WITH(readMetadataFile(p1), Catch::Contains("carries no __tle_metadata"));
}

TEST_CASE("host tensors round to fp16 and bf16 to nearest even", "[tensor]") {
  HostTensor h(DType::F16, {8});
  h.set(0, 1.0 + 1.0 / 2048);          // tie: to even (1.0)
  h.set(1, 1.0 + 3.0 / 2048);          // tie: to even (1 + 2/1024)
  h.set(2, 65519.0);                   // largest finite
  h.set(3, 65520.0);                   // overflow
  h.set(4, 5.960464477539063e-08);     // smallest subnormal
  h.set(5, -2.0);
  h.set(6, 1e-9);                      // underflow to zero
  h.set(7, 0.1);
  CHECK(h.get(0) == 1.0);
  CHECK(h.get(1) == 1.0 + 2.0 / 1024);
  CHECK(h.get(2) == 65504.0);
  CHECK(std::isinf(h.get(3)));
  CHECK(h.get(4) == 5.960464477539063e-08);
  CHECK(h.get(5) == -2.0);
  CHECK(h.get(6) == 0.0);
  CHECK(std::fabs(h.get(7) - 0.1) < 1e-4);
  HostTensor b(DType::BF16, {2});
  b.set(0, 1.0 + 1.0 / 256);           // tie: to even (1.0)
  b.set(1, 1.0 + 3.0 / 256);           // tie: up to 1 + 4/256
  CHECK(b.get(0) == 1.0);
  CHECK(b.get(1) == 1.0 + 4.0 / 256);
}

TEST_CASE("generators are deterministic and independent of threads", "[tensor]") {
  HostTensor a(DType::F32, {100000}), b(DType::F32, {100000});
  fillTensor(a, {InitSpec::Normal, 0, 1}, 42);
  setenv("TLE_BENCH_THREADS", "1", 1);
  fillTensor(b, {InitSpec::Normal, 0, 1}, 42);
  unsetenv("TLE_BENCH_THREADS");
  CHECK(std::memcmp(a.data(), b.data(), a.bytes()) == 0);
  double mean = 0, var = 0;
  for (size_t i = 0; i < a.numel(); ++i)
    mean += a.get(i);
  mean /= double(a.numel());
  for (size_t i = 0; i < a.numel(); ++i)
    var += (a.get(i) - mean) * (a.get(i) - mean);
  var /= double(a.numel());
  CHECK(std::fabs(mean) < 0.02);
  CHECK(std::fabs(var - 1) < 0.02);
  HostTensor t(DType::I64, {10000});
  fillTensor(t, {InitSpec::RandInt, 0, 7}, 1);
  double lo = 1e9, hi = -1e9;
  for (size_t i = 0; i < t.numel(); ++i) {
    lo = std::min(lo, t.get(i));
    hi = std::max(hi, t.get(i));
  }
  CHECK(lo == 0);
  CHECK(hi == 6);
}

TEST_CASE(".npy files round-trip", "[tensor]") {
  HostTensor a(DType::BF16, {3, 5}), b(DType::BF16, {3, 5});
  fillTensor(a, {InitSpec::Normal, 0, 1}, 3);
  std::string p = tempPath("a.npy");
  writeNpy(p, a);
  readNpyInto(p, b);
  CHECK(std::memcmp(a.data(), b.data(), a.bytes()) == 0);
  HostTensor c(DType::F32, {15});
  CHECK_THROWS_WITH(readNpyInto(p, c), Catch::Contains("expected '<f4'"));
  std::FILE *f = std::fopen(p.c_str(), "rb");
  char head[10];
  REQUIRE(std::fread(head, 1, 10, f) == 10);
  std::fclose(f);
  uint16_t hl;
  std::memcpy(&hl, head + 8, 2);
  CHECK((10 + hl) % 64 == 0);
}

namespace {

/// A case of `family` with the given buffers (name, dtype, shape, role) and vars.
struct MiniCase {
  CaseSpec spec;
  ResolvedCase rc;
  std::vector<HostTensor> tensors;
  MiniCase(const std::string &family, std::vector<std::tuple<std::string, DType, std::vector<int64_t>, std::string>> bufs,
           Env env = {}) {
    spec.name = "mini";
    spec.family = family;
    for (auto &[n, t, shape, role] : bufs) {
      BufferSpec b;
      b.name = n;
      b.dtype = t;
      b.role = role;
      spec.buffers.push_back(b);
      tensors.emplace_back(t, shape);
      rc.shapes.push_back(shape);
    }
    rc.spec = &spec;
    rc.env = env;
  }
  HostTensor &t(const std::string &n) { return tensors[size_t(bufferIndex(spec, n))]; }
  CheckReport check() {
    CaseData d{rc, tensors};
    return findFamily(spec.family)->check(d);
  }
};

void setAll(HostTensor &t, std::initializer_list<double> v) {
  size_t i = 0;
  for (double x : v)
    t.set(i++, x);
}

} // namespace

TEST_CASE("vector_add reference", "[family]") {
  MiniCase m("vector_add", {{"x", DType::F32, {3}, "input"}, {"y", DType::F32, {3}, "input"}, {"z", DType::F32, {3}, "output"}});
  setAll(m.t("x"), {1, 2, 3});
  setAll(m.t("y"), {0.5, -2, 1e-3});
  setAll(m.t("z"), {1.5, 0, 3.001});
  CHECK(m.check().pass);
  m.t("z").set(1, 1e-3);
  CheckReport r = m.check();
  CHECK(!r.pass);
  CHECK(r.outputs[0].bad == 1);
  CHECK(r.outputs[0].firstBad == 1);
  std::memset(m.t("z").data(), 0xff, 12); // NaN is never close
  CHECK(m.check().outputs[0].bad == 3);
}

TEST_CASE("softmax reference", "[family]") {
  MiniCase m("softmax", {{"x", DType::F32, {2, 3}, "input"}, {"y", DType::F32, {2, 3}, "output"}});
  setAll(m.t("x"), {0, 0, 0, 1000, 1000, 1000 - 1e9});
  setAll(m.t("y"), {1 / 3.0, 1 / 3.0, 1 / 3.0, 0.5, 0.5, 0});
  CheckReport r = m.check();
  CHECK(r.pass);
  CHECK(r.outputs[0].maxAbs < 1e-7);
}

TEST_CASE("layernorm and rmsnorm forward references", "[family]") {
  Env env = {{"eps", Value::ofFloat(0.0)}};
  MiniCase m("layernorm_fwd", {{"x", DType::F16, {1, 4}, "input"}, {"w", DType::F16, {4}, "input"},
                               {"b", DType::F16, {4}, "input"}, {"y", DType::F16, {1, 4}, "output"},
                               {"mean", DType::F32, {1}, "output"}, {"rstd", DType::F32, {1}, "output"}},
             env);
  // x = 1, 3, 5, 7: mean 4, var 5, rstd 1/sqrt(5).
  setAll(m.t("x"), {1, 3, 5, 7});
  setAll(m.t("w"), {1, 2, 1, 1});
  setAll(m.t("b"), {0, 0, 1, 0});
  double r5 = 1 / std::sqrt(5.0);
  setAll(m.t("y"), {-3 * r5, -2 * r5, 1 + r5, 3 * r5});
  setAll(m.t("mean"), {4});
  setAll(m.t("rstd"), {r5});
  CHECK(m.check().pass);
  m.t("mean").set(0, 4.001);
  CHECK(!m.check().pass);

  MiniCase r("rmsnorm_fwd", {{"x", DType::F16, {1, 2}, "input"}, {"w", DType::F16, {2}, "input"},
                             {"y", DType::F16, {1, 2}, "output"}, {"rstd", DType::F32, {1}, "output"}},
             env);
  // x = 3, 4: mean square 12.5.
  setAll(r.t("x"), {3, 4});
  setAll(r.t("w"), {1, 0.5});
  double rs = 1 / std::sqrt(12.5);
  setAll(r.t("y"), {3 * rs, 2 * rs});
  setAll(r.t("rstd"), {rs});
  CHECK(r.check().pass);
}

TEST_CASE("layernorm backward reference matches finite differences", "[family]") {
  // Rows of x, dy; loss = sum(dy * y) with y = layernorm(x) * w (+ b): dx by central differences.
  const int M = 3, N = 5;
  const double eps = 1e-5;
  Env env = {{"eps", Value::ofFloat(eps)}};
  MiniCase m("layernorm_bwd", {{"x", DType::F32, {M, N}, "input"}, {"dy", DType::F32, {M, N}, "input"},
                               {"w", DType::F32, {N}, "input"}, {"mean", DType::F32, {M}, "input"},
                               {"rstd", DType::F32, {M}, "input"}, {"dx", DType::F32, {M, N}, "output"},
                               {"dw", DType::F32, {N}, "output"}, {"db", DType::F32, {N}, "output"}},
             env);
  fillTensor(m.t("x"), {InitSpec::Normal, 0.3, 1.5}, 1);
  fillTensor(m.t("dy"), {InitSpec::Normal, 0, 1}, 2);
  fillTensor(m.t("w"), {InitSpec::Normal, 1, 0.3}, 3);
  CaseData d{m.rc, m.tensors};
  findFamily("layernorm_bwd")->prepare(d);
  auto loss = [&](const std::vector<double> &x, int row) {
    double mu = 0, var = 0, l = 0;
    for (int c = 0; c < N; ++c)
      mu += x[c];
    mu /= N;
    for (int c = 0; c < N; ++c)
      var += (x[c] - mu) * (x[c] - mu);
    double rs = 1 / std::sqrt(var / N + eps);
    for (int c = 0; c < N; ++c)
      l += m.t("dy").get(row * N + c) * (x[c] - mu) * rs * m.t("w").get(c);
    return l;
  };
  std::vector<double> dw(N, 0), db(N, 0);
  for (int r = 0; r < M; ++r) {
    std::vector<double> x(N);
    for (int c = 0; c < N; ++c)
      x[c] = m.t("x").get(r * N + c);
    double mu = m.t("mean").get(r), rs = m.t("rstd").get(r);
    for (int c = 0; c < N; ++c) {
      std::vector<double> xp = x, xm = x;
      xp[c] += 1e-4;
      xm[c] -= 1e-4;
      m.t("dx").set(r * N + c, (loss(xp, r) - loss(xm, r)) / 2e-4);
      dw[c] += m.t("dy").get(r * N + c) * (x[c] - mu) * rs;
      db[c] += m.t("dy").get(r * N + c);
    }
  }
  for (int c = 0; c < N; ++c) {
    m.t("dw").set(c, dw[c]);
    m.t("db").set(c, db[c]);
  }
  CheckReport r = m.check();
  CHECK(r.pass);
  CHECK(r.outputs[0].maxAbs < 1e-4);
}

TEST_CASE("cross-entropy reference", "[family]") {
  MiniCase m("cross_entropy_fwd", {{"logits", DType::F32, {2, 3}, "input"}, {"target", DType::I64, {2}, "input"},
                                   {"loss", DType::F32, {2}, "output"}});
  setAll(m.t("logits"), {0, 0, 0, 1, 2, 3});
  setAll(m.t("target"), {1, 2});
  double lse2 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  setAll(m.t("loss"), {std::log(3.0), lse2 - 3});
  CHECK(m.check().pass);
  m.t("target").set(0, 3);
  CHECK_THROWS_WITH(m.check(), Catch::Contains("outside [0, 3)"));
}

TEST_CASE("statistics and report rows", "[report]") {
  Stats s = computeStats({5, 1, 3, 2, 4});
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.p10 == Approx(1.4));
  ojson c = {{"name", "c"}, {"correct", true}, {"tle", {{"median_ms", 0.5}, {"min_ms", 0.4}, {"max_ms", 0.6}, {"gbps", 3000.0}}},
             {"copy", {{"gbps", 4000.0}}}, {"fraction_of_copy", 0.75}};
  std::string row = tableRow(c);
  CHECK(row.find("0.750") != std::string::npos);
  CHECK(row.find("3000") != std::string::npos);
  ojson doc = {{"suite", "s"}, {"device", {{"name", "GPU"}}}, {"method", {{"reps", 1}, {"warmup", 0}, {"l2_flush_bytes", 1 << 28}}},
               {"cases", ojson::array({c})}};
  std::string md = markdownSummary(doc);
  CHECK(md.find("| c | 0.5000") != std::string::npos);
  CHECK(md.find("Geometric mean of the fraction of copy bandwidth over 1 cases: 0.750") != std::string::npos);
}

TEST_CASE("the committed suites load", "[suite]") {
  Suite s = loadSuite(std::string(TLE_BENCH_SOURCE_DIR) + "/suites/memory_bound.json");
  CHECK(s.cases.size() >= 15);
  for (const CaseSpec &c : s.cases) {
    ResolvedCase rc = resolveCase(c, {{"SMS", Value::ofInt(132)}}, {});
    CHECK(rc.totalBufferBytes < (size_t(3) << 30)); // a few GB at most per case
    CHECK(rc.bytes > 0);
  }
}
