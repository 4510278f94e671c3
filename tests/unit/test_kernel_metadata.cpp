// Unit tests of the kernel metadata (tle/Target/NVPTX/KernelMetadata.h): the exact JSON document
// toJSON writes, what describeKernel takes from a function, and that the launcher reader accepts it.
#include "tle/Driver/Launcher.h"
#include "tle/IR/IR.h"
#include "tle/IR/Parser.h"
#include "tle/Target/NVPTX/KernelMetadata.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace tle;
using nvptx::KernelMetadata;

namespace {

/// A warp-specialised, clustered kernel with two tensor maps, every kind of constexpr and every
/// launch fact.
KernelMetadata fullKernel() {
  KernelMetadata k;
  k.target = "sm_90a";
  k.compiler = "tlec 9.9.9";
  k.name = "mm";
  k.params = {{"a_ptr", "*fp16", 16}, {"b_ptr", "*fp16", 16}, {"M", "i32", 1}, {"K", "i32", 16}};
  k.numWarps = 4;
  k.producerWarps = 4;
  k.sharedBytes = 98304;
  k.cluster = {2, 1, 1};
  k.maxRegisters = 232;
  // A by its params ("M", "K"), B by an i32 product with a constant and a 64-bit product.
  k.tensorMaps.push_back({"fp16", "a_ptr", {{{"M"}, 1, 64}, {{"K"}, 1, 64}}, {{{"K"}, 1, 64}, {{}, 1, 64}}, {64, 64}, 128});
  k.tensorMaps.push_back({"fp16", "b_ptr", {{{"M", "K"}, 2, 32}}, {{{"M", "K"}, 1, 64}}, {128}, 0});
  k.constexprs = {{"BLOCK_M", "128"}, {"EPS", "1e-5"}, {"FLAG", "True"}, {"OFF", "False"},
                  {"DTYPE", "fp16"},  {"NEG", "-3"},   {"HALF", "0.5"}};
  k.launch.numStages = 3;
  k.launch.grid = {"cdiv(M, 128)", "1", "1"};
  k.launch.equalToOne = {{"stride_k", "i32", 3}};
  return k;
}

} // namespace

TEST_CASE("kernel metadata: every key, in the order of Metadata.h", "[metadata]") {
  CHECK(nvptx::toJSON(fullKernel()) ==
        R"({"format":"tle-module","version":1,"target":"sm_90a","compiler":"tlec 9.9.9","kernels":[{)"
        R"("name":"mm","num_warps":8,"block":[256,1,1],"shared_bytes":98304,"cluster":[2,1,1],"cooperative":false,)"
        R"("params":[{"name":"a_ptr","type":"*fp16","divisibility":16},{"name":"b_ptr","type":"*fp16","divisibility":16},)"
        R"({"name":"M","type":"i32","divisibility":1},{"name":"K","type":"i32","divisibility":16}],)"
        R"("tensor_maps":[{"dtype":"fp16","base":"a_ptr","shape":["M","K"],"strides":["K",1],"box":[64,64],"swizzle":128},)"
        R"({"dtype":"fp16","base":"b_ptr","shape":[{"product":["M","K",2],"bits":32}],"strides":[["M","K"]],"box":[128],)"
        R"("swizzle":0}],)"
        R"("constexprs":{"BLOCK_M":128,"EPS":1e-05,"FLAG":true,"OFF":false,"DTYPE":"fp16","NEG":-3,"HALF":0.5},)"
        R"J("num_stages":3,"grid":["cdiv(M, 128)","1","1"],"equal_to_1":[{"name":"stride_k","type":"i32","index":3}]}]})J");
}

TEST_CASE("kernel metadata: optional keys are left out", "[metadata]") {
  KernelMetadata k;
  k.target = "sm_80";
  k.compiler = "tlec 9.9.9";
  k.name = "add";
  k.params = {{"x_ptr", "*fp32", 16}, {"n", "i32", 1}};
  CHECK(nvptx::toJSON(k) ==
        R"({"format":"tle-module","version":1,"target":"sm_80","compiler":"tlec 9.9.9","kernels":[{)"
        R"("name":"add","num_warps":4,"block":[128,1,1],"shared_bytes":0,"cluster":[1,1,1],"cooperative":false,)"
        R"("params":[{"name":"x_ptr","type":"*fp32","divisibility":16},{"name":"n","type":"i32","divisibility":1}],)"
        R"("constexprs":{}}]})");
}

TEST_CASE("kernel metadata: a name PTX does not accept gets a mangled symbol beside it", "[metadata]") {
  CHECK(nvptx::ptxSymbol("add_kernel") == "add_kernel");
  CHECK(nvptx::ptxSymbol("k\xc3\xa9rnel") == "k$c3$a9rnel");
  CHECK(nvptx::ptxSymbol("\xce\xbb_2") == "$ce$bb_2");
  KernelMetadata k;
  k.target = "sm_80";
  k.compiler = "tlec 9.9.9";
  k.name = "k\xc3\xa9rnel";
  k.symbol = nvptx::ptxSymbol(k.name);
  CHECK(nvptx::toJSON(k) ==
        R"({"format":"tle-module","version":1,"target":"sm_80","compiler":"tlec 9.9.9","kernels":[{)"
        "\"name\":\"k\xc3\xa9rnel\",\"symbol\":\"k$c3$a9rnel\","
        R"("num_warps":4,"block":[128,1,1],"shared_bytes":0,"cluster":[1,1,1],"cooperative":false,)"
        R"("params":[],"constexprs":{}}]})");
  k.name = k.symbol = "add";
  CHECK(nvptx::toJSON(k).find("symbol") == std::string::npos);
}

TEST_CASE("kernel metadata: describeKernel reads the function and the launch facts", "[metadata]") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile("k.tir", "func @k(%x_ptr.0: *fp32 {divisibility = 16}, %n.1: i32) attributes {num_warps = 8, "
                                      "BLOCK = 1024} {\n  return\n}\n");
  std::unique_ptr<ir::Function> f = ir::parseFunction(file, diags);
  REQUIRE(f);
  f->sharedBytes = 4096; // what the gpu stage decided
  f->producerWarps = 4;
  f->maxRegisters = 168;
  nvptx::LaunchFacts launch;
  launch.numStages = 2;
  KernelMetadata k = nvptx::describeKernel(*f, "sm_90a", launch);
  CHECK(k.compiler.rfind("tlec ", 0) == 0);
  CHECK(k.maxRegisters == 168);
  CHECK(k.launchWarps() == 12);
  k.compiler = "tlec 9.9.9";
  CHECK(nvptx::toJSON(k) ==
        R"({"format":"tle-module","version":1,"target":"sm_90a","compiler":"tlec 9.9.9","kernels":[{)"
        R"("name":"k","num_warps":12,"block":[384,1,1],"shared_bytes":4096,"cluster":[1,1,1],"cooperative":false,)"
        R"("params":[{"name":"x_ptr","type":"*fp32","divisibility":16},{"name":"n","type":"i32","divisibility":1}],)"
        R"("constexprs":{"BLOCK":1024},"num_stages":2}]})");
  // The driver's source hash: a key of the document, after the compiler.
  launch.sourceHash = std::string(64, 'c');
  k = nvptx::describeKernel(*f, "sm_90a", launch);
  k.compiler = "tlec 9.9.9";
  CHECK(nvptx::toJSON(k).rfind(R"({"format":"tle-module","version":1,"target":"sm_90a","compiler":"tlec 9.9.9",)"
                               R"("source_hash":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc","kernels":[{)",
                               0) == 0);
}

TEST_CASE("kernel metadata: the launcher reader takes the document back", "[metadata]") {
  driver::LaunchSpec spec;
  std::string error;
  REQUIRE(driver::specFromMetadata(nvptx::toJSON(fullKernel()), {}, spec, error));
  CHECK(spec.kernel == "mm");
  CHECK(spec.numWarps == 8);
  CHECK(spec.numStages == 3);
  CHECK(spec.grid == std::vector<std::string>{"cdiv(M, 128)", "1", "1"});
  REQUIRE(spec.args.size() == 5);
  CHECK(spec.args[3].name == "stride_k");
  CHECK(spec.args[3].equalToOne);
  CHECK(spec.args[4].name == "K");
  CHECK(spec.args[4].divisibility == 16);
}
