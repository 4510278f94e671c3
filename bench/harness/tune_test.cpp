// Unit tests of tle-bench --tune without a GPU: decorator parsing, generated spaces, the cost model, the cubin reader, the cache and dispatch tables.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "CostModel.h"
#include "Cubin.h"
#include "Suite.h"
#include "TuneCache.h"
#include "TuneSelect.h"
#include "TuneSpace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace tle::bench;

namespace {

std::string readFile(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string tempPath(const std::string &name) {
  return "/tmp/tle-tune-test-" + std::to_string(getpid()) + "-" + name;
}

const char *kAutotuned = R"PY(import triton
import triton.language as tl

# A comment between imports and the kernel.
@triton.autotune(
    configs=[
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64, 'GROUP_M': 8}, num_stages=3,
                      num_warps=8),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 256, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=4, num_warps=4),
        # a config with the defaults
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 1}),
        triton.Config(kwargs={'BLOCK_M': 16, 'BLOCK_N': 16, 'BLOCK_K': 16, 'GROUP_M': 1}, num_warps=2, num_ctas=1,
                      pre_hook=None),
    ],
    key=['M', 'N', 'K'],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak,  # strides
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.dot(a, b)


@triton.jit
def other_kernel(x_ptr, BLOCK: tl.constexpr):
    pass
)PY";

} // namespace

// ------------------------------------------------------------------------------------------------
// Decorators and parameters
// ------------------------------------------------------------------------------------------------

TEST_CASE("parsePyLiteral reads dicts, lists, calls and keywords", "[tune][space]") {
  auto j = parsePyLiteral("triton.Config({'A': 1, \"B\": -2, 'C': 1.5, 'D': True}, num_warps=4, [1, (2, 3)], None)");
  REQUIRE(j["call"] == "triton.Config");
  REQUIRE(j["args"][0]["A"] == 1);
  REQUIRE(j["args"][0]["B"] == -2);
  REQUIRE(j["args"][0]["C"] == 1.5);
  REQUIRE(j["args"][0]["D"] == true);
  REQUIRE(j["args"][1][1][1] == 3);
  REQUIRE(j["args"][2].is_null());
  REQUIRE(j["kwargs"]["num_warps"] == 4);
  REQUIRE(parsePyLiteral("tl.float16")["name"] == "tl.float16");
  REQUIRE_THROWS_AS(parsePyLiteral("{'a': 1"), BenchError);
  REQUIRE_THROWS_WITH(parsePyLiteral("[1, 2] x"), Catch::Contains("after the expression"));
}

TEST_CASE("parseAutotune reads configs, warps, stages and key", "[tune][space]") {
  auto d = parseAutotune(kAutotuned, "matmul_kernel");
  REQUIRE(d);
  REQUIRE(d->line == 5);
  REQUIRE(d->configs.size() == 4);
  REQUIRE(d->key == std::vector<std::string>{"M", "N", "K"});
  const Candidate &c0 = d->configs[0];
  REQUIRE(c0.constexprs == std::vector<std::pair<std::string, int64_t>>{{"BLOCK_M", 128}, {"BLOCK_N", 256},
                                                                           {"BLOCK_K", 64}, {"GROUP_M", 8}});
  REQUIRE(c0.numWarps == 8);
  REQUIRE(c0.numStages == 3);
  REQUIRE(d->configs[1].numStages == 4);
  REQUIRE(d->configs[1].numWarps == 4);
  REQUIRE(d->configs[2].numWarps == 4); // Triton's defaults
  REQUIRE(d->configs[2].numStages == 3);
  REQUIRE(d->configs[3].constexprs[0].second == 16); // kwargs= spelling
  REQUIRE(d->configs[3].numWarps == 2);
  REQUIRE(d->configs[0].id() == "BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 GROUP_M=8 w8 s3");
  // The other kernel has no decorator; the first def is the autotuned one.
  REQUIRE_FALSE(parseAutotune(kAutotuned, "other_kernel"));
  REQUIRE(parseAutotune(kAutotuned, "")->configs.size() == 4);
  REQUIRE_FALSE(parseAutotune(kAutotuned, "missing"));
}

TEST_CASE("parseAutotune rejects configs it cannot read", "[tune][space]") {
  std::string src = "@triton.autotune(configs=make_configs(), key=['n'])\n@triton.jit\ndef k(x, B: tl.constexpr):\n  pass\n";
  REQUIRE_THROWS_WITH(parseAutotune(src, "k"), Catch::Contains("line 1") && Catch::Contains("written out"));
  std::string bad = "@triton.autotune(configs=[triton.Config({'B': 'x'})], key=[])\n@triton.jit\ndef k(x, B: tl.constexpr):\n  pass\n";
  REQUIRE_THROWS_WITH(parseAutotune(bad, "k"), Catch::Contains("must be an integer"));
  // A plain @triton.jit kernel has none.
  REQUIRE_FALSE(parseAutotune("@triton.jit\ndef k(x):\n  y = a @ b\n", "k"));
}

TEST_CASE("kernelParams and kernelBody of the examples", "[tune][space]") {
  std::string mm = readFile(std::string(TLE_SOURCE_DIR) + "/examples/matmul.tle");
  auto ps = kernelParams(mm, "matmul_kernel");
  REQUIRE(ps.size() == 16);
  REQUIRE(ps[0].name == "a_ptr");
  REQUIRE_FALSE(ps[0].constexpr_);
  REQUIRE(ps[12].name == "BLOCK_M");
  REQUIRE(ps[12].constexpr_);
  REQUIRE(ps[15].name == "GROUP_M");
  REQUIRE(kernelBody(mm, "matmul_kernel").find("tl.dot(") != std::string::npos);
  std::string sm = readFile(std::string(TLE_SOURCE_DIR) + "/examples/softmax.tle");
  REQUIRE(kernelBody(sm, "softmax_kernel").find("dot(") == std::string::npos);
  auto sp = kernelParams(kAutotuned, "matmul_kernel");
  REQUIRE(sp.size() == 12); // the comment inside the list is skipped
  REQUIRE_THROWS_AS(kernelParams(mm, "nope"), BenchError);
}

// ------------------------------------------------------------------------------------------------
// Generated spaces
// ------------------------------------------------------------------------------------------------

TEST_CASE("powersOfTwo", "[tune][space]") {
  REQUIRE(powersOfTwo(16, 256) == std::vector<int64_t>{16, 32, 64, 128, 256});
  REQUIRE(powersOfTwo(3, 8) == std::vector<int64_t>{4, 8});
  REQUIRE(powersOfTwo(5, 4).empty());
  REQUIRE_THROWS_AS(powersOfTwo(0, 4), BenchError);
}

TEST_CASE("generated spaces of the matmul and softmax tune specs have >= 200 candidates", "[tune][space]") {
  Env env = {{"SMS", Value::ofInt(132)}};
  {
    Suite s = loadSuite(std::string(TLE_SOURCE_DIR) + "/bench/tune/matmul.json");
    std::string src = readFile(std::string(TLE_SOURCE_DIR) + "/examples/matmul.tle");
    auto params = kernelParams(src, "matmul_kernel");
    SpaceSpec sp = makeSpaceSpec(params, {}, s.tune["space"], true);
    REQUIRE(sp.dims.size() == 6);
    auto cs = expandSpace(sp, env);
    REQUIRE(cs.size() == 3 * 3 * 3 * 1 * 2 * 4); // BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages
    REQUIRE(cs.size() >= 200);
    REQUIRE(cs.front().id() == "BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 GROUP_M=8 w4 s2");
    REQUIRE(cs.back().id() == "BLOCK_M=256 BLOCK_N=256 BLOCK_K=128 GROUP_M=8 w8 s5");
    // Without a spec: pow2(16, 256) per block size, GROUP_M {1,4,8,16}, warps {2,4,8}, stages 1..5.
    auto all = expandSpace(makeSpaceSpec(params, {}, nullptr, true), env);
    REQUIRE(all.size() == size_t(5 * 5 * 5 * 4 * 3 * 5));
    // Constexprs fixed by the signature are not tuned.
    auto fixed = expandSpace(makeSpaceSpec(params, {"BLOCK_K", "GROUP_M"}, nullptr, true), env);
    REQUIRE(fixed.size() == size_t(5 * 5 * 3 * 5));
    REQUIRE(fixed[0].constexprs.size() == 2);
  }
  {
    Suite s = loadSuite(std::string(TLE_SOURCE_DIR) + "/bench/tune/softmax.json");
    std::string src = readFile(std::string(TLE_SOURCE_DIR) + "/examples/softmax.tle");
    auto params = kernelParams(src, "softmax_kernel");
    Env e = env;
    e["M"] = Value::ofInt(4096);
    e["N"] = Value::ofInt(4096);
    SpaceSpec sp = makeSpaceSpec(params, {}, s.tune["space"], false);
    auto cs = expandSpace(sp, e);
    // BLOCK_SIZE {4096, 8192} x 18 distinct program counts x warps {1, 2, 4, 8, 16, 32}; one stage value.
    REQUIRE(cs.size() == 2 * 18 * 6);
    REQUIRE(cs.size() >= 200);
    REQUIRE(cs[0].launchVars == std::vector<std::pair<std::string, int64_t>>{{"PROGRAMS", 132}});
    REQUIRE(cs[0].numStages == 3);
    REQUIRE(cs[0].id() == "BLOCK_SIZE=4096 PROGRAMS=132 w1 s3");
  }
}

TEST_CASE("makeSpaceSpec rejects bad specs", "[tune][space]") {
  std::vector<KernelParam> ps = {{"x", false}, {"BLOCK", true}};
  REQUIRE_THROWS_WITH(makeSpaceSpec(ps, {"BLOCK"}, nlohmann::ordered_json{{"BLOCK", {64}}}, false),
                      Catch::Contains("fixed"));
  REQUIRE_THROWS_AS(makeSpaceSpec(ps, {}, nlohmann::ordered_json{{"BLOCK", "64"}}, false), BenchError);
  auto sp = makeSpaceSpec(ps, {}, nlohmann::ordered_json{{"BLOCK", {0}}}, false);
  REQUIRE_THROWS_WITH(expandSpace(sp, {}), Catch::Contains("not positive"));
}

TEST_CASE("Candidate JSON round trip", "[tune][space]") {
  Candidate c;
  c.constexprs = {{"BLOCK", 128}};
  c.launchVars = {{"P", 264}};
  c.numWarps = 8;
  c.numStages = 2;
  Candidate d = Candidate::fromJson(c.toJson());
  REQUIRE(d.id() == c.id());
  REQUIRE(d.id() == "BLOCK=128 P=264 w8 s2");
  REQUIRE_THROWS_AS(Candidate::fromJson(nlohmann::ordered_json{{"num_warps", 4}}), BenchError);
}

// ------------------------------------------------------------------------------------------------
// Cost model
// ------------------------------------------------------------------------------------------------

TEST_CASE("hard limits reject what cannot launch or spills too much", "[tune][model]") {
  DeviceModel h200 = DeviceModel::forArch("sm_90a", 132);
  REQUIRE(h200.smemPerBlockOptin == 232448);
  Workload w;
  w.ctas = 1024;
  w.dramBytes = 1e9;
  ResourceUsage ok{256, 64, 48 * 1024, 0};
  REQUIRE(estimateCandidate(h200, ok, w).valid);

  ResourceUsage smem = ok;
  smem.sharedBytes = 232449; // one byte over the opt-in limit
  Estimate e = estimateCandidate(h200, smem, w);
  REQUIRE_FALSE(e.valid);
  REQUIRE_THAT(e.reason, Catch::Contains("shared memory") && Catch::Contains("232448"));
  smem.sharedBytes = 232448;
  REQUIRE(estimateCandidate(h200, smem, w).valid);
  // The same kernel on an A100 (163 KiB opt-in) is rejected.
  REQUIRE_FALSE(estimateCandidate(DeviceModel::forArch("sm_80"), smem, w).valid);

  ResourceUsage regs{1024, 72, 0, 0}; // 72 x 1024 = 73728 > 65536
  e = estimateCandidate(h200, regs, w);
  REQUIRE_FALSE(e.valid);
  REQUIRE_THAT(e.reason, Catch::Contains("73728"));
  regs.registers = 64;
  REQUIRE(estimateCandidate(h200, regs, w).valid);

  ResourceUsage block{2048, 32, 0, 0};
  REQUIRE_THAT(estimateCandidate(h200, block, w).reason, Catch::Contains("2048 threads"));

  ResourceUsage spill = ok;
  spill.localBytes = 768;
  REQUIRE_THAT(estimateCandidate(h200, spill, w).reason, Catch::Contains("local memory"));
  ModelOptions lax;
  lax.maxLocalBytes = 1024;
  REQUIRE(estimateCandidate(h200, spill, w, lax).valid);
  // Smaller spills are allowed but cost: 128 B per thread -> x1.5.
  spill.localBytes = 128;
  Estimate clean = estimateCandidate(h200, ok, w), spilled = estimateCandidate(h200, spill, w);
  REQUIRE(spilled.valid);
  REQUIRE(spilled.seconds > clean.seconds * 1.4);
}

TEST_CASE("occupancy: the limiting resource and the resident CTAs", "[tune][model]") {
  DeviceModel d = DeviceModel::forArch("sm_90a", 132);
  Workload w;
  w.ctas = 100000;
  w.dramBytes = 1e9;
  // 128 threads x 128 registers: 4 warps x 4096 registers = 16384 per CTA -> 4 CTAs.
  Estimate e = estimateCandidate(d, {128, 128, 0, 0}, w);
  REQUIRE(e.ctasPerSM == 4);
  REQUIRE(e.limitedBy == "registers");
  REQUIRE(e.occupancy == Approx(0.25));
  // 256 threads x 32 registers: threads limit 2048 / 256 = 8.
  e = estimateCandidate(d, {256, 32, 0, 0}, w);
  REQUIRE(e.ctasPerSM == 8);
  REQUIRE(e.limitedBy == "threads");
  // Shared memory: 100 KiB + 1 KiB reserved per CTA in 228 KiB -> 2.
  e = estimateCandidate(d, {128, 32, 100 * 1024, 0}, w);
  REQUIRE(e.ctasPerSM == 2);
  REQUIRE(e.limitedBy == "shared");
  // Register allocation rounds per warp to 256: 33 registers x 32 = 1056 -> 1280 per warp.
  e = estimateCandidate(d, {1024, 33, 0, 0}, w);
  REQUIRE(e.ctasPerSM == 1);
  // Small blocks: the 32-CTA limit.
  e = estimateCandidate(d, {32, 16, 0, 0}, w);
  REQUIRE(e.ctasPerSM == 32);
  REQUIRE(e.limitedBy == "ctas");
}

TEST_CASE("waves: quantization over the grid", "[tune][model]") {
  DeviceModel d = DeviceModel::forArch("sm_90a", 132);
  Workload w;
  w.dramBytes = 1e9;
  ResourceUsage r{128, 200, 150 * 1024, 0}; // one CTA per SM
  w.ctas = 264;
  Estimate full = estimateCandidate(d, r, w);
  REQUIRE(full.waves == 2);
  REQUIRE(full.waveEfficiency == Approx(1.0));
  w.ctas = 265; // one CTA spills into a third wave
  Estimate tail = estimateCandidate(d, r, w);
  REQUIRE(tail.waves == 3);
  REQUIRE(tail.waveEfficiency == Approx(265.0 / 396.0));
  REQUIRE(tail.seconds > full.seconds * 1.4);
  w.ctas = 66; // half the SMs idle
  REQUIRE(estimateCandidate(d, r, w).waveEfficiency == Approx(0.5));
}

TEST_CASE("the model ranks bigger MMA tiles and pipelining first", "[tune][model]") {
  DeviceModel d = DeviceModel::forArch("sm_90a", 132);
  auto est = [&](int64_t bm, int64_t bn, int64_t bk, int warps, int stages, int regs, int64_t smem) {
    Workload w;
    const double M = 4096, N = 4096, K = 4096;
    w.ctas = int64_t(M / bm) * int64_t(N / bn);
    w.flops = 2 * M * N * K;
    w.tensorCores = true;
    w.dramBytes = 2 * (M * K + K * N + M * N);
    w.l2Bytes = 2 * M * N * K * (1.0 / bn + 1.0 / bm);
    w.numWarps = warps;
    w.numStages = stages;
    w.tileM = bm;
    w.tileN = bn;
    w.tileK = bk;
    return estimateCandidate(d, {32 * warps, regs, smem, 0}, w);
  };
  Estimate big = est(128, 256, 64, 8, 3, 224, 145 * 1024);
  Estimate mid = est(128, 128, 64, 4, 3, 246, 96 * 1024);
  Estimate small = est(64, 64, 32, 4, 3, 90, 24 * 1024);
  Estimate unpipelined = est(128, 256, 64, 8, 1, 224, 48 * 1024);
  REQUIRE(big.seconds < mid.seconds);
  REQUIRE(mid.seconds < small.seconds);
  REQUIRE(big.seconds < unpipelined.seconds);
  // In the right range: 137 GFLOP at 989 TFLOP/s is 0.139 ms; the estimate stays within 2x of it.
  REQUIRE(big.seconds > 0.139e-3);
  REQUIRE(big.seconds < 0.28e-3);

  std::vector<Estimate> all = {small, big, Estimate{}, mid};
  all[2].valid = false;
  all[2].seconds = 0; // invalid ones are never chosen, however cheap
  REQUIRE(topK(all, 2) == std::vector<size_t>{1, 3});
  REQUIRE(topK(all, 10) == std::vector<size_t>{1, 3, 0});
}

TEST_CASE("scheduleGrid: in-order dispatch of a grid-stride loop", "[tune][model]") {
  using Segs = std::vector<std::pair<int64_t, int64_t>>;
  // One item per program: 7 full rounds of 528 and a last round of 400.
  GridSchedule g = scheduleGrid(4096, 0, 528);
  REQUIRE(g.segments == Segs{{7, 528}, {1, 400}});
  REQUIRE(g.makespan == 8);
  REQUIRE(g.maxItems == 1);
  REQUIRE(g.totalItems == 4096);
  // 4096 rows over 528 persistent programs: 400 of them take 8 rows, 128 take 7.
  g = scheduleGrid(528, 4096, 528);
  REQUIRE(g.segments == Segs{{7, 528}, {1, 400}});
  REQUIRE(g.maxItems == 8);
  // 660 programs of 6 or 7 rows on 528 slots: the last 132 start only when the first 6-row
  // programs end, so the grid takes 12 row steps, the last 5 with a quarter of the slots busy.
  g = scheduleGrid(660, 4096, 528);
  REQUIRE(g.segments == Segs{{6, 528}, {1, 268}, {5, 132}});
  REQUIRE(g.makespan == 12);
  REQUIRE(g.maxItems == 7);
  // More programs than items: the idle ones take no step.
  g = scheduleGrid(10, 4, 100);
  REQUIRE(g.segments == Segs{{1, 4}});
  REQUIRE(g.makespan == 1);
  // Very large grids: full rounds and a partial one.
  g = scheduleGrid(1 << 20, 0, 1000);
  REQUIRE(g.segments == Segs{{1048, 1000}, {1, 576}});
  REQUIRE(g.makespan == 1049);
  REQUIRE(scheduleGrid(0, 0, 10).segments.empty());
}

TEST_CASE("persistent loops: rows run one after another, the hardware balances programs", "[tune][model]") {
  // The softmax of 4096 rows of 4096 fp32 (16 KiB per row in flight), 4 warps and 124 registers:
  // 4 CTAs per SM, 528 slots.
  DeviceModel d = DeviceModel::forArch("sm_90a", 132);
  auto est = [&](int64_t programs) {
    Workload w;
    w.ctas = programs;
    w.items = 4096;
    w.dramBytes = 8.0 * 4096 * 4096;
    w.inflightBytes = 4 * 4096;
    return estimateCandidate(d, {128, 124, 1040, 0}, w);
  };
  Estimate one = est(4096), persistent = est(528), uneven = est(660), few = est(132);
  REQUIRE(persistent.ctasPerSM == 4);
  REQUIRE(persistent.maxItemsPerProgram == 8);
  // The same bytes at the same occupancy: only the imbalance differs, a whole program's share of
  // the time for one wave against one row's for one row per program.
  REQUIRE(one.memoryS == Approx(persistent.memoryS));
  REQUIRE(persistent.imbalanceS == Approx(d.smThroughputSpread * persistent.memoryS));
  REQUIRE(one.imbalanceS == Approx(persistent.imbalanceS / 8));
  REQUIRE(one.seconds < persistent.seconds);
  // 660 programs: a second round of 132 programs with 6 rows each, at a quarter of the slots.
  REQUIRE(uneven.seconds > persistent.seconds * 1.1);
  // One program per SM keeps 16 KiB in flight per SM, under bandwidth x latency.
  REQUIRE(few.seconds > persistent.seconds * 2);
  // Other resident CTAs keep enough loads in flight while one starts: no start-up cost.
  REQUIRE(one.startupS == 0);
  REQUIRE(one.waves == 8);
  // Alone on its SM (150 KiB of shared memory), every start is exposed.
  Workload w;
  w.ctas = 264;
  w.dramBytes = 1e9;
  REQUIRE(estimateCandidate(d, {128, 64, 150 * 1024, 0}, w).startupS == Approx(2 * d.ctaStartS));
}

TEST_CASE("selectForTiming: the best of each class, then the model's order", "[tune][select]") {
  auto mk = [](double s) {
    Estimate e;
    e.seconds = s;
    return e;
  };
  // Class A holds the model's first five; B's best is sixth, C's is beyond the slack.
  std::vector<Estimate> es = {mk(1.0), mk(1.1), mk(1.2), mk(1.3), mk(1.35), mk(1.4), mk(1.5), mk(1.6), mk(2.0), mk(0.5)};
  std::vector<std::string> cls = {"A", "A", "A", "A", "A", "B", "B", "A", "C", "D"};
  es[9].valid = false; // invalid: never chosen, however cheap
  SelectionOptions opt;
  opt.k = 4;
  // The model's order alone times only class A.
  REQUIRE(topK(es, 4) == std::vector<size_t>{0, 1, 2, 3});
  // Half the budget covers classes: A's best and B's best; the rest follows the model.
  REQUIRE(selectForTiming(es, cls, opt) == std::vector<size_t>{0, 1, 2, 5});
  // A share of 0 is the model's order.
  opt.classShare = 0;
  REQUIRE(selectForTiming(es, cls, opt) == topK(es, 4));
  // C (2.0 against a best of 1.0) is covered only with a slack of 2 or more.
  opt.classShare = 1;
  REQUIRE(selectForTiming(es, cls, opt) == std::vector<size_t>{0, 1, 2, 5});
  opt.classSlack = 2;
  REQUIRE(selectForTiming(es, cls, opt) == std::vector<size_t>{0, 1, 5, 8});
  // The class budget is floor(share x k): with k = 3 and share 0.5 only A's best is forced, and
  // the model's next two follow.
  opt.k = 3;
  opt.classShare = 0.5;
  REQUIRE(selectForTiming(es, cls, opt) == std::vector<size_t>{0, 1, 2});
  // More budget than valid candidates: every valid one, best first.
  opt.k = 20;
  REQUIRE(selectForTiming(es, cls, opt) == std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  REQUIRE(selectForTiming(es, cls, SelectionOptions{0}).empty());
  REQUIRE_THROWS(selectForTiming(es, {"A"}, opt));
}

TEST_CASE("structuralClass: warps and one wave or several", "[tune][select]") {
  Estimate e;
  e.waves = 1;
  REQUIRE(structuralClass(4, e) == "w4 one wave");
  e.waves = 3;
  REQUIRE(structuralClass(8, e) == "w8 waves");
}

TEST_CASE("replaying the recorded H200 tunings keeps a config within 3 % of the exhaustive best", "[tune][select]") {
  const std::string root = TLE_SOURCE_DIR;
  for (const char *fixture : {"matmul_h200", "softmax_h200", "softmax_h200_2"}) {
    INFO(fixture);
    const std::string kernel = std::string(fixture).substr(0, std::string(fixture).find('_'));
    Suite spec = loadSuite(root + "/bench/tune/" + kernel + ".json");
    std::ifstream f(root + "/bench/tune/replay/" + fixture + ".json");
    REQUIRE(f);
    ojson run = ojson::parse(f);
    ReplayResult r = replayTune(spec, run, "", SelectionOptions{});
    // 12 in the first round and 3 more of its fastest class in the second.
    REQUIRE(r.selected == 15);
    REQUIRE(r.refined == 3);
    REQUIRE(r.winner >= 0);
    REQUIRE(r.gapPct <= 3.0);
    // The exhaustive best itself is in the timed set on every run.
    REQUIRE(r.candidates[size_t(r.best)].selected);
    // The resources and times came through: every recorded candidate that compiled is there.
    REQUIRE(r.candidates.size() == (kernel == "matmul" ? 160u : 216u));
  }
  // Without the second round, the second softmax run misses the best by 3.7 %.
  Suite spec = loadSuite(root + "/bench/tune/softmax.json");
  std::ifstream f(root + "/bench/tune/replay/softmax_h200_2.json");
  SelectionOptions oneRound;
  oneRound.refine = 0;
  ReplayResult r = replayTune(spec, ojson::parse(f), "", oneRound);
  REQUIRE(r.selected == 12);
  CHECK(r.gapPct == Approx(3.73).margin(0.01));
}

// ------------------------------------------------------------------------------------------------
// Cubin resources
// ------------------------------------------------------------------------------------------------

namespace {

/// A minimal ELF64 cubin: .shstrtab, .strtab, .symtab (the kernel at index 1), .nv.info with
/// REGCOUNT and FRAME_SIZE, .nv.info.<k> with MAX_THREADS, .nv.shared.<k> of `smem` bytes.
std::string fakeCubin(const std::string &k, uint32_t regs, uint32_t frame, uint64_t smem) {
  std::string shstr = std::string("\0.shstrtab\0.strtab\0.symtab\0.nv.info\0", 36) + ".nv.info." + k + '\0' +
                      ".nv.shared." + k + '\0';
  auto nameOff = [&](const std::string &n) { return uint32_t(shstr.find(n + '\0')); };
  std::string strtab = std::string("\0", 1) + k + '\0';
  std::string symtab(48, '\0'); // null symbol + the kernel
  uint32_t kn = 1;
  std::memcpy(&symtab[24], &kn, 4);
  std::string info;
  auto rec = [&](uint8_t attr, uint32_t a, uint32_t b) {
    info += char(0x04);
    info += char(attr);
    uint16_t sz = 8;
    info.append(reinterpret_cast<char *>(&sz), 2);
    info.append(reinterpret_cast<char *>(&a), 4);
    info.append(reinterpret_cast<char *>(&b), 4);
  };
  info += std::string("\x01\x0a\x00\x00", 4); // an NVAL record to skip
  rec(0x2f, 1, regs);
  rec(0x11, 1, frame);
  rec(0x2f, 7, 99); // another symbol's count
  std::string kinfo = std::string("\x04\x05\x0c\x00", 4);
  uint32_t block[3] = {256, 1, 1};
  kinfo.append(reinterpret_cast<char *>(block), 12);

  std::string elf(64, '\0');
  elf[0] = 0x7f;
  elf[1] = 'E';
  elf[2] = 'L';
  elf[3] = 'F';
  elf[4] = 2;
  struct Sec {
    uint32_t name, type, link;
    std::string data;
    uint64_t size;
  };
  std::vector<Sec> secs = {{0, 0, 0, "", 0},
                           {nameOff(".shstrtab"), 3, 0, shstr, shstr.size()},
                           {nameOff(".strtab"), 3, 0, strtab, strtab.size()},
                           {nameOff(".symtab"), 2, 2, symtab, symtab.size()},
                           {nameOff(".nv.info"), 0x70000000, 3, info, info.size()},
                           {nameOff(".nv.info." + k), 0x70000000, 3, kinfo, kinfo.size()},
                           {nameOff(".nv.shared." + k), 8, 0, "", smem}};
  std::vector<uint64_t> offs;
  for (const Sec &s : secs) {
    offs.push_back(elf.size());
    elf += s.data;
  }
  uint64_t shoff = elf.size();
  for (size_t i = 0; i < secs.size(); ++i) {
    std::string h(64, '\0');
    std::memcpy(&h[0], &secs[i].name, 4);
    std::memcpy(&h[4], &secs[i].type, 4);
    std::memcpy(&h[24], &offs[i], 8);
    std::memcpy(&h[32], &secs[i].size, 8);
    std::memcpy(&h[40], &secs[i].link, 4);
    elf += h;
  }
  uint16_t entsize = 64, num = uint16_t(secs.size()), strndx = 1;
  std::memcpy(&elf[0x28], &shoff, 8);
  std::memcpy(&elf[0x3a], &entsize, 2);
  std::memcpy(&elf[0x3c], &num, 2);
  std::memcpy(&elf[0x3e], &strndx, 2);
  return elf;
}

} // namespace

TEST_CASE("readCubinResources reads registers, frame and static shared memory", "[tune][cubin]") {
  CubinResources r = readCubinResources(fakeCubin("my_kernel", 168, 24, 1024), "my_kernel");
  REQUIRE(r.registers == 168);
  REQUIRE(r.localBytes == 24);
  REQUIRE(r.staticSharedBytes == 1024);
  REQUIRE(r.maxThreads == 256);
  REQUIRE_THROWS_WITH(readCubinResources(fakeCubin("my_kernel", 1, 0, 0), "other"), Catch::Contains("no symbol"));
  REQUIRE_THROWS_WITH(readCubinResources("not an elf at all, clearly not one....................................",
                                         "k"),
                      Catch::Contains("not an ELF64"));
  std::string cut = fakeCubin("k", 1, 0, 0);
  cut.resize(100);
  REQUIRE_THROWS_AS(readCubinResources(cut, "k"), BenchError);
}

TEST_CASE("readCubinResources on a cubin built by tlec", "[tune][cubin]") {
  // The build compiles the suite kernels with ptxas when the CUDA toolkit is present.
  std::string path = std::string(TLE_BENCH_KERNEL_DIR) + "/vector_add.sm_90a.cubin";
  if (access(path.c_str(), R_OK) != 0) {
    WARN("no " << path << " (built without the CUDA toolkit): skipped");
    return;
  }
  CubinResources r = readCubinResourcesFile(path, "add_kernel");
  REQUIRE(r.registers > 4);
  REQUIRE(r.registers <= 64);
  REQUIRE(r.localBytes == 0);
  REQUIRE(r.codeHash.size() == 16);
}

// ------------------------------------------------------------------------------------------------
// Cache and dispatch tables
// ------------------------------------------------------------------------------------------------

namespace {
CacheEntry entry(const std::string &key, int64_t m, int64_t n, int bm, double ms) {
  CacheEntry e;
  e.kernelKey = key;
  e.kernel = "matmul";
  e.entry = "matmul_kernel";
  e.source = "examples/matmul.tle";
  e.signature = "*fp16:16, i32";
  e.bucket.dims = {{"M", m}, {"N", n}};
  e.device = {"NVIDIA H200", "sm_90a", 13000};
  e.best.constexprs = {{"BLOCK_M", bm}, {"BLOCK_N", 128}};
  e.best.numWarps = 8;
  e.medianMs = ms;
  e.caseName = "c";
  return e;
}
} // namespace

TEST_CASE("shape buckets and keys", "[tune][cache]") {
  Env env = {{"M", Value::ofInt(3000)}, {"N", Value::ofInt(4096)}, {"K", Value::ofInt(1)}};
  ShapeBucket b = bucketOf({"M", "N", "K"}, env);
  REQUIRE(b.str() == "M=4096,N=4096,K=1");
  REQUIRE(bucketOf({"M"}, {{"M", Value::ofInt(4097)}}).str() == "M=8192");
  REQUIRE_THROWS_WITH(bucketOf({"Q"}, env), Catch::Contains("'Q'"));
  REQUIRE_THROWS_AS(bucketOf({"M"}, {{"M", Value::ofInt(0)}}), BenchError);
  REQUIRE(fnv1aHex("") == "cbf29ce484222325");
  REQUIRE(fnv1aHex("a") == "af63dc4c8601ec8c");
  std::string k1 = kernelKey("src", "e", "sig", {}, "tlec 0.1.0");
  REQUIRE(k1.size() == 16);
  REQUIRE(kernelKey("src ", "e", "sig", {}, "tlec 0.1.0") != k1);
  REQUIRE(kernelKey("src", "e", "sig", {}, "tlec 0.2.0") != k1);
  REQUIRE(kernelKey("src", "e", "sig", {{"X", "1"}}, "tlec 0.1.0") != k1);
  REQUIRE(DeviceKey{"NVIDIA H200", "sm_90a", 13000}.str() == "NVIDIA H200|sm_90a|13000");
}

TEST_CASE("the tune cache round-trips through its file", "[tune][cache]") {
  std::string path = tempPath("dir") + "/sub/cache.json";
  TuneCache c = TuneCache::load(path); // missing: empty
  REQUIRE(c.entries().empty());
  c.store(entry("k1", 4096, 4096, 128, 0.25));
  c.store(entry("k1", 1024, 4096, 64, 0.05));
  c.store(entry("k1", 4096, 4096, 256, 0.20)); // same key: replaces
  REQUIRE(c.entries().size() == 2);
  c.save(path);
  TuneCache d = TuneCache::load(path);
  REQUIRE(d.entries().size() == 2);
  ShapeBucket b;
  b.dims = {{"M", 4096}, {"N", 4096}};
  DeviceKey dev{"NVIDIA H200", "sm_90a", 13000};
  auto hit = d.lookup("k1", b, dev);
  REQUIRE(hit);
  REQUIRE(hit->best.id() == "BLOCK_M=256 BLOCK_N=128 w8 s3");
  REQUIRE(hit->medianMs == 0.20);
  REQUIRE_FALSE(d.lookup("k2", b, dev));                                   // another source
  REQUIRE_FALSE(d.lookup("k1", b, DeviceKey{"NVIDIA H100", "sm_90a", 13000})); // another GPU
  REQUIRE_FALSE(d.lookup("k1", b, DeviceKey{"NVIDIA H200", "sm_90a", 12080})); // another driver
  b.dims[0].second = 2048;
  REQUIRE_FALSE(d.lookup("k1", b, dev)); // another bucket
  std::ofstream(path) << "{\"format\": \"something else\"}";
  REQUIRE_THROWS_WITH(TuneCache::load(path), Catch::Contains("not a tle-tune-cache"));
  std::ofstream(path) << "{oops";
  REQUIRE_THROWS_WITH(TuneCache::load(path), Catch::Contains("invalid JSON"));
  std::system(("rm -rf " + tempPath("dir")).c_str());
}

TEST_CASE("defaultCachePath: flag, then TLE_TUNE_CACHE, then XDG_CACHE_HOME, then HOME", "[tune][cache]") {
  setenv("TLE_TUNE_CACHE", "/x/env.json", 1);
  REQUIRE(defaultCachePath("/x/flag.json") == "/x/flag.json");
  REQUIRE(defaultCachePath("") == "/x/env.json");
  unsetenv("TLE_TUNE_CACHE");
  setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  REQUIRE(defaultCachePath("") == "/x/xdg/tle/tune-cache.json");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/x/home", 1);
  REQUIRE(defaultCachePath("") == "/x/home/.cache/tle/tune-cache.json");
}

TEST_CASE("dispatch tables map buckets to distinct specs", "[tune][dispatch]") {
  std::vector<CacheEntry> es = {entry("k1", 4096, 4096, 128, 0.25), entry("k1", 1024, 4096, 64, 0.05),
                                entry("k1", 8192, 8192, 128, 1.9)};
  auto t = dispatchTable(es);
  REQUIRE(t["format"] == "tle-dispatch");
  REQUIRE(t["dims"] == nlohmann::ordered_json::array({"M", "N"}));
  REQUIRE(t["specs"].size() == 2); // buckets 0 and 2 share BLOCK_M=128
  REQUIRE(t["buckets"].size() == 3);
  REQUIRE(t["buckets"][0]["spec"] == 0);
  REQUIRE(t["buckets"][1]["spec"] == 1);
  REQUIRE(t["buckets"][2]["spec"] == 0);
  REQUIRE(t["buckets"][1]["bucket"]["M"] == 1024);
  REQUIRE(t["specs"][1]["module"] == "matmul.spec1.sm_90a.cubin");
  REQUIRE(t["specs"][1]["tlec"] ==
          "tlec examples/matmul.tle -n matmul_kernel -s \"*fp16:16, i32\" -D BLOCK_M=64 -D BLOCK_N=128 -w 8 -ns 3 "
          "--arch sm_90a -o matmul.spec1.sm_90a.cubin");
  REQUIRE(t["tle_link"] == "tle-link -n matmul_tuned matmul.spec0.sm_90a.cubin matmul.spec1.sm_90a.cubin -o "
                           "matmul_tuned.h --source matmul_tuned.cpp");
  std::string h = dispatchHeader(t, "matmul_tuned");
  REQUIRE_THAT(h, Catch::Contains("inline int matmul_tuned_dispatch_spec(int64_t M, int64_t N)"));
  REQUIRE_THAT(h, Catch::Contains("{12, 12, 0}") && Catch::Contains("{10, 12, 1}") && Catch::Contains("{13, 13, 0}"));
  auto other = entry("k2", 4096, 4096, 128, 0.25);
  REQUIRE_THROWS_AS(dispatchTable({es[0], other}), BenchError);
  REQUIRE_THROWS_AS(dispatchTable({}), BenchError);
}

TEST_CASE("refineForTiming: more of the first round's fastest class, in the model's order", "[tune][select]") {
  auto mk = [](double s) {
    Estimate e;
    e.seconds = s;
    return e;
  };
  std::vector<Estimate> es = {mk(1.0), mk(1.1), mk(1.2), mk(1.3), mk(1.4), mk(1.5), mk(1.6), mk(0.1)};
  std::vector<std::string> cls = {"A", "B", "A", "B", "B", "A", "B", "B"};
  es[7].valid = false; // invalid: never chosen
  SelectionOptions opt;
  // B won the first round {0, 1}: its next three in the model's order, skipping what was timed.
  REQUIRE(refineForTiming(es, cls, "B", {0, 1}, opt) == std::vector<size_t>{3, 4, 6});
  opt.refine = 2;
  REQUIRE(refineForTiming(es, cls, "B", {0, 1, 3}, opt) == std::vector<size_t>{4, 6});
  REQUIRE(refineForTiming(es, cls, "A", {0, 1}, opt) == std::vector<size_t>{2, 5});
  // Fewer left than asked for; none with refine 0.
  REQUIRE(refineForTiming(es, cls, "A", {0, 2}, opt) == std::vector<size_t>{5});
  opt.refine = 0;
  REQUIRE(refineForTiming(es, cls, "B", {0}, opt).empty());
  REQUIRE_THROWS_AS(refineForTiming(es, {"A"}, "A", {}, opt), std::invalid_argument);
}
