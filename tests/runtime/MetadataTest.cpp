// Tests of __tle_metadata parsing and validation (parseModuleMetadata, ParamType, KernelInfo).
#include "tle/Runtime/Metadata.h"
#include "tle/Runtime/Runtime.h"

#include <catch2/catch.hpp>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

// The softmax example as tlec describes it.
const char *kSoftmax = R"({
  "format": "tle-module", "version": 1, "target": "sm_90a", "compiler": "tlec 0.1.0",
  "source_hash": "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab",
  "kernels": [{
    "name": "softmax_kernel", "num_warps": 4, "block": [128, 1, 1], "shared_bytes": 1024,
    "cluster": [1, 1, 1], "cooperative": false,
    "params": [
      {"name": "output_ptr", "type": "*fp32", "divisibility": 16},
      {"name": "input_ptr", "type": "*fp32", "divisibility": 16},
      {"name": "input_row_stride", "type": "i32", "divisibility": 16},
      {"name": "output_row_stride", "type": "i32", "divisibility": 16},
      {"name": "n_rows", "type": "i32", "divisibility": 1},
      {"name": "n_cols", "type": "i32"}
    ],
    "constexprs": {"BLOCK_SIZE": 1024, "FLAG": true}
  }]
})";

// A one-kernel document whose kernel object is `kernel`.
std::string withKernel(const std::string &kernel) {
  return R"({"format": "tle-module", "version": 1, "target": "sm_80", "kernels": [)" + kernel + "]}";
}

} // namespace

TEST_CASE("parse a complete metadata document", "[metadata]") {
  ModuleInfo m = parseModuleMetadata(kSoftmax);
  CHECK(m.format == "tle-module");
  CHECK(m.version == 1);
  CHECK(m.target == "sm_90a");
  CHECK(m.compiler == "tlec 0.1.0");
  CHECK(m.sourceHash == "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab");
  REQUIRE(m.kernels.size() == 1);
  const KernelInfo &k = m.kernels[0];
  CHECK(k.name == "softmax_kernel");
  CHECK(k.numWarps == 4);
  CHECK(k.block == std::array<unsigned, 3>{128, 1, 1});
  CHECK(k.threadsPerBlock() == 128);
  CHECK(k.sharedBytes == 1024);
  CHECK(k.cluster == std::array<unsigned, 3>{1, 1, 1});
  CHECK_FALSE(k.cooperative);
  CHECK(k.target == "sm_90a");
  REQUIRE(k.params.size() == 6);
  CHECK(k.params[0].name == "output_ptr");
  CHECK(k.params[0].type.pointer);
  CHECK(k.params[0].type.str() == "*fp32");
  CHECK(k.params[0].divisibility == 16);
  CHECK(k.params[5].divisibility == 1);
  CHECK(k.signature() == "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32");
  CHECK(k.constexprInt("BLOCK_SIZE") == 1024);
  CHECK_FALSE(k.constexprInt("FLAG").has_value());
  CHECK(k.constexprs.at("FLAG") == "true");
  CHECK_FALSE(k.constexprInt("MISSING").has_value());
  CHECK(m.find("softmax_kernel") == &m.kernels[0]);
  CHECK(m.find("other") == nullptr);
  CHECK(m.json == kSoftmax);
}

TEST_CASE("optional keys take their defaults", "[metadata]") {
  ModuleInfo m = parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": 8, "params": []})"));
  const KernelInfo &k = m.kernels.at(0);
  CHECK(k.block == std::array<unsigned, 3>{256, 1, 1});
  CHECK(k.sharedBytes == 0);
  CHECK(k.cluster == std::array<unsigned, 3>{1, 1, 1});
  CHECK_FALSE(k.cooperative);
  CHECK(k.params.empty());
  CHECK(m.compiler.empty());
  CHECK(m.sourceHash.empty()); // a module of a tlec that did not record it
}

TEST_CASE("a source_hash that is not a string is refused", "[metadata]") {
  std::string doc = R"({"format": "tle-module", "version": 1, "target": "sm_80", "source_hash": 7, "kernels": []})";
  CHECK_THROWS_WITH(parseModuleMetadata(doc), Contains("source_hash"));
}

TEST_CASE("unknown keys are ignored", "[metadata]") {
  ModuleInfo m = parseModuleMetadata(withKernel(
      R"({"name": "k", "num_warps": 1, "params": [], "tma": [], "future": {"x": 1}})"));
  CHECK(m.kernels.at(0).numWarps == 1);
}

TEST_CASE("malformed documents are rejected with the offending key", "[metadata]") {
  CHECK_THROWS_AS(parseModuleMetadata("{\"format\": "), MetadataError);
  CHECK_THROWS_WITH(parseModuleMetadata("{\"format\": "), Contains("not valid JSON"));
  CHECK_THROWS_WITH(parseModuleMetadata("[1, 2]"), Contains("not a JSON object"));
  CHECK_THROWS_WITH(parseModuleMetadata(R"({"format": "triton", "version": 1})"),
                    Contains("format: \"triton\" is not \"tle-module\""));
  CHECK_THROWS_WITH(parseModuleMetadata(R"({"version": 1})"), Contains("missing key \"format\""));
  CHECK_THROWS_WITH(parseModuleMetadata(R"({"format": "tle-module", "version": 1, "target": "sm_90a"})"),
                    Contains("missing key \"kernels\""));
  CHECK_THROWS_WITH(parseModuleMetadata(withKernel(R"({"num_warps": 4, "params": []})")),
                    Contains("kernels[0]: missing key \"name\""));
  CHECK_THROWS_WITH(parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": 0, "params": []})")),
                    Contains("kernels[0].num_warps: 0 is out of range [1, 32]"));
  CHECK_THROWS_WITH(parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": "4", "params": []})")),
                    Contains("kernels[0].num_warps: expected an integer"));
  CHECK_THROWS_WITH(
      parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": 4, "block": [64, 1, 1], "params": []})")),
      Contains("kernels[0].block: [64, 1, 1] disagrees with num_warps 4"));
  CHECK_THROWS_WITH(
      parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": 4, "shared_bytes": -1, "params": []})")),
      Contains("kernels[0].shared_bytes: -1 is out of range"));
  CHECK_THROWS_WITH(
      parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": 4, "params": [{"name": "x", "type": "f32"}]})")),
      Contains("kernels[0].params[0].type: unknown type 'f32'"));
  CHECK_THROWS_WITH(
      parseModuleMetadata(withKernel(
          R"({"name": "k", "num_warps": 4, "params": [{"name": "x", "type": "i32"}, {"name": "x", "type": "i32"}]})")),
      Contains("kernels[0].params[1].name: duplicate parameter name 'x'"));
  CHECK_THROWS_WITH(
      parseModuleMetadata(withKernel(
          R"({"name": "k", "num_warps": 4, "params": [{"name": "x", "type": "i32", "divisibility": 0}]})")),
      Contains("kernels[0].params[0].divisibility: 0 is out of range"));
  CHECK_THROWS_WITH(
      parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": 4, "cooperative": 1, "params": []})")),
      Contains("kernels[0].cooperative: expected true or false"));
  CHECK_THROWS_WITH(
      parseModuleMetadata(withKernel(R"({"name": "k", "num_warps": 4, "cluster": [2, 1], "params": []})")),
      Contains("kernels[0].cluster: expected an array of 3 integers"));
}

TEST_CASE("two kernels of a module cannot share an entry symbol", "[metadata]") {
  // Found by tle-fuzz-runtime: a kernel whose "symbol" is another kernel's name was accepted, and
  // its launch passed that entry function an argument buffer of a different layout (the mock
  // driver read past it).
  auto doc = [](const std::string &a, const std::string &b) {
    return R"({"format": "tle-module", "version": 1, "target": "sm_80", "kernels": [)" + a + ", " + b + "]}";
  };
  const std::string one = R"({"name": "other", "symbol": "k", "num_warps": 4, "params": [{"name": "x", "type": "i32"}]})";
  const std::string two = R"({"name": "k", "num_warps": 4, "params": [{"name": "x", "type": "*fp32"}, {"name": "n", "type": "i32"}]})";
  CHECK_THROWS_WITH(parseModuleMetadata(doc(one, two)),
                    Contains("kernels[1]: entry symbol 'k' is also the entry symbol of kernels[0] ('other')"));
  CHECK_THROWS_WITH(parseModuleMetadata(doc(two, one)),
                    Contains("kernels[1]: entry symbol 'k' is also the entry symbol of kernels[0] ('k')"));
  const std::string three = R"({"name": "third", "symbol": "k", "num_warps": 4, "params": []})";
  CHECK_THROWS_WITH(parseModuleMetadata(doc(one, three)),
                    Contains("kernels[1]: entry symbol 'k' is also the entry symbol of kernels[0] ('other')"));
  // Distinct symbols are fine, even when one is another kernel's name spelled differently.
  ModuleInfo m = parseModuleMetadata(doc(R"({"name": "a", "symbol": "s_a", "num_warps": 4, "params": []})",
                                         R"({"name": "s_b", "num_warps": 4, "params": []})"));
  CHECK(m.kernels.size() == 2);
}

TEST_CASE("metadata versions newer than the runtime are refused", "[metadata]") {
  std::string v2 = R"({"format": "tle-module", "version": 2, "target": "sm_90a", "kernels": []})";
  CHECK_THROWS_AS(parseModuleMetadata(v2), MetadataError);
  CHECK_THROWS_WITH(parseModuleMetadata(v2), Contains("version 2 is newer than this libtle_rt reads (version 1)"));
  std::string v0 = R"({"format": "tle-module", "version": 0, "target": "sm_90a", "kernels": []})";
  CHECK_THROWS_WITH(parseModuleMetadata(v0), Contains("version: 0 is out of range [1, 1]"));
  std::string vs = R"({"format": "tle-module", "version": "1", "target": "sm_90a", "kernels": []})";
  CHECK_THROWS_WITH(parseModuleMetadata(vs), Contains("version: expected an integer"));
}

TEST_CASE("every Triton type spelling parses and prints back", "[metadata]") {
  struct Case {
    const char *spelling;
    ScalarKind kind;
    unsigned bits;
    size_t bytes;
    const char *cpp;
  };
  const Case cases[] = {
      {"i1", ScalarKind::Bool, 1, 1, "bool"},          {"i8", ScalarKind::Int, 8, 1, "int8_t"},
      {"i16", ScalarKind::Int, 16, 2, "int16_t"},      {"i32", ScalarKind::Int, 32, 4, "int32_t"},
      {"i64", ScalarKind::Int, 64, 8, "int64_t"},      {"u8", ScalarKind::UInt, 8, 1, "uint8_t"},
      {"u16", ScalarKind::UInt, 16, 2, "uint16_t"},    {"u32", ScalarKind::UInt, 32, 4, "uint32_t"},
      {"u64", ScalarKind::UInt, 64, 8, "uint64_t"},    {"fp16", ScalarKind::Float, 16, 2, "tle::rt::Half"},
      {"bf16", ScalarKind::BFloat, 16, 2, "tle::rt::BFloat16"},
      {"fp32", ScalarKind::Float, 32, 4, "float"},     {"fp64", ScalarKind::Float, 64, 8, "double"},
      {"fp8e4nv", ScalarKind::Float8E4M3, 8, 1, "uint8_t (the fp8 bits)"},
      {"fp8e5", ScalarKind::Float8E5M2, 8, 1, "uint8_t (the fp8 bits)"},
  };
  for (const Case &c : cases) {
    INFO(c.spelling);
    ParamType t = ParamType::parse(c.spelling);
    CHECK_FALSE(t.pointer);
    CHECK(t.kind == c.kind);
    CHECK(t.bits == c.bits);
    CHECK(t.argBytes() == c.bytes);
    CHECK(t.str() == c.spelling);
    CHECK(t.cppName() == c.cpp);
    ParamType p = ParamType::parse(std::string("*") + c.spelling);
    CHECK(p.pointer);
    CHECK(p.argBytes() == 8);
    CHECK(p.str() == std::string("*") + c.spelling);
    CHECK(p.elementName() == c.spelling);
    CHECK(p != t);
  }
  CHECK_THROWS_AS(ParamType::parse(""), MetadataError);
  CHECK_THROWS_AS(ParamType::parse("*"), MetadataError);
  CHECK_THROWS_AS(ParamType::parse("**fp32"), MetadataError);
  CHECK_THROWS_AS(ParamType::parse("float32"), MetadataError);
  CHECK_THROWS_AS(ParamType::parse("i32 "), MetadataError);
}

TEST_CASE("the metadata contract constants", "[metadata]") {
  CHECK(std::string(tle::metadata::kSymbol) == "__tle_metadata");
  CHECK(std::string(tle::metadata::kFormat) == "tle-module");
  CHECK(tle::metadata::kVersion == 1);
}
