// The builtin registry of Sema (src/Sema/Registry.h): signatures parse, the name sets derived
// from the table are the language's, overloads pick their line, and signatures bind as written.
#include <catch2/catch.hpp>

#include "../../src/Sema/Registry.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace tle;
using namespace tle::sema;

namespace {

std::set<std::string> asSet(const std::vector<std::string> &v) { return {v.begin(), v.end()}; }

std::vector<std::string> paramNames(const Builtin &f) {
  std::vector<std::string> r;
  for (const BuiltinParam &p : f.params)
    r.push_back(p.name);
  return r;
}

CallArgs firstArgOfKind(SVal::Kind k) {
  CallArgs a;
  SVal v;
  v.kind = k;
  a.pos.push_back({SourceLoc{}, v});
  return a;
}

} // namespace

TEST_CASE("builtin registry: the tl functions are the language's", "[sema][registry]") {
  // The functions of triton.language that TLE supports (docs/language.md), as kernels name them.
  const std::set<std::string> expected = {
      "program_id", "num_programs", "arange", "zeros", "zeros_like", "full", "load", "store", "where", "exp",
      "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "abs", "maximum", "minimum", "sum", "max", "min",
      "cast", "cdiv", "expand_dims", "broadcast_to", "range", "static_range", "constexpr", "pointer_type",
      "multiple_of", "max_contiguous", "static_assert", "fdiv", "div_rn", "dot", "trans", "permute", "reshape",
      "view", "cat", "join", "split", "cumsum", "cumprod", "atomic_add", "atomic_max", "atomic_min", "atomic_and",
      "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas", "sin", "cos", "floor", "ceil", "erf", "tanh", "log1p",
      "pow", "trunc", "atan2", "fma", "sigmoid", "make_block_ptr", "advance", "device_print", "device_assert",
      "static_print", "make_tensor_descriptor", "load_tensor_descriptor", "store_tensor_descriptor", "argmax",
      "argmin", "clamp", "umulhi", "flip", "ravel", "interleave", "swizzle2d", "debug_barrier", "assume", "philox",
      "randint", "randint4x", "rand", "rand4x", "randn", "randn4x", "uint_to_uniform_float",
      "pair_uniform_to_normal", "softmax", "tensor", "tensor_descriptor", "dtype", "reduce", "associative_scan", "xor_sum", "sort",
      "histogram", "inline_asm_elementwise", "extern_elementwise", "gather", "topk", "bitonic_merge", "reduce_or", "max_constancy",
      "broadcast", "constexpr_function", "get_int_dtype", "add", "sub", "mul"};
  CHECK(asSet(builtinNames("tl")) == expected);
  CHECK(isModuleBuiltin("tl", "load"));
  CHECK_FALSE(isModuleBuiltin("tl", "foo"));
  CHECK_FALSE(isModuleBuiltin("tl", "gpu.alloc"));
}

TEST_CASE("builtin registry: Python builtins, triton, tl.extra.cuda and TLE names", "[sema][registry]") {
  CHECK(asSet(builtinNames("")) == std::set<std::string>{"range", "min", "max", "float", "int", "bool", "len", "abs",
                                                          "all", "any", "sum", "print", "isinstance", "hasattr", "str",
                                                          "repr", "tuple", "list"});
  // Python's math module on compile-time numbers.
  CHECK(isModuleBuiltin("math", "sqrt"));
  CHECK(isModuleBuiltin("math", "log2"));
  CHECK_FALSE(isModuleBuiltin("math", "pi")); // a constant, not a function
  CHECK(asSet(builtinNames("triton")) == std::set<std::string>{"cdiv", "next_power_of_2", "jit", "constexpr_function",
                                                               "autotune", "heuristics", "Config"});
  CHECK(asSet(builtinNames("torch")) == std::set<std::string>{"finfo", "iinfo"});
  CHECK(isModuleBuiltin("standard", "_log2"));
  CHECK(isModuleBuiltin("standard", "_argmax_combine_tie_break_left"));
  CHECK(asSet(builtinNames("cuda")) ==
        std::set<std::string>{"gdc_wait", "gdc_launch_dependents", "num_warps", "num_threads"});
  // In table order: the messages for unknown tle names list them so.
  CHECK(builtinNames("tle") == std::vector<std::string>{"load", "device_mesh", "MeshConfig", "shard_id", "remote",
                                                     "distributed_barrier", "my_pe", "n_pes", "signal", "signal_wait", "pipe", "extract_tile", "insert_tile",
                                                     "cumsum"});
  CHECK(builtinNames("tle.gpu") == std::vector<std::string>{"pipeline", "alloc", "local_ptr", "local_load",
                                                            "local_store", "alloc_barriers", "alloc_barrier",
                                                            "barrier_wait", "barrier_arrive", "copy", "memory_space",
                                                            "storage_kind", "set_layout", "BlockEncoding",
                                                            "MmaEncoding", "DotOperandEncoding", "SlicedEncoding",
                                                            "warp_specialize", "wgmma", "wgmma_wait"});
  CHECK(findBuiltin("libdevice.exp") != nullptr);
  CHECK(findBuiltin("libdevice.not_a_function") == nullptr);
}

TEST_CASE("builtin registry: methods", "[sema][registry]") {
  const std::vector<std::string> tensorMethods = {
      "to", "reshape", "view", "trans", "permute", "split", "sum", "max", "min", "expand_dims", "broadcast_to",
      "cumsum", "cumprod", "argmax", "argmin", "flip", "ravel", "reduce", "associative_scan", "xor_sum", "sort",
      "histogram", "cast", "gather", "softmax", "sigmoid", "topk", "reduce_or", "cdiv", "exp", "exp2", "log",
      "log2", "cos", "sin", "sqrt", "sqrt_rn", "rsqrt", "abs", "erf", "floor", "ceil", "fdiv", "div_rn", "fma",
      "umulhi"};
  for (const std::string &m : tensorMethods)
    CHECK(isBuiltinMethod("tensor", m));
  // Every tl function flagged as a tensor method is in the list above (x.load is not a method).
  for (const std::string &n : builtinNames("tl"))
    if (isBuiltinMethod("tensor", n))
      CHECK(std::find(tensorMethods.begin(), tensorMethods.end(), n) != tensorMethods.end());
  CHECK_FALSE(isBuiltinMethod("tensor", "load"));
  CHECK(isBuiltinMethod("tensor_descriptor", "load"));
  CHECK(isBuiltinMethod("tensor_descriptor", "store"));
  CHECK_FALSE(isBuiltinMethod("tensor_descriptor", "sum"));
  // tle.pipe's endpoints (Pipes.cpp): methods of the records a pipe and its endpoints are.
  CHECK(isBuiltinMethod("pipe", "writer"));
  CHECK(isBuiltinMethod("pipe", "reader"));
  for (const char *m : {"acquire", "commit", "close"})
    CHECK(isBuiltinMethod("pipe_writer", m));
  for (const char *m : {"wait", "release"})
    CHECK(isBuiltinMethod("pipe_reader", m));
  CHECK_FALSE(isBuiltinMethod("pipe_reader", "acquire"));
  CHECK(isBuiltinMethod("buffer", "slot"));
  CHECK(isBuiltinMethod("dtype", "is_fp8"));
  CHECK(isBuiltinMethod("dtype", "is_uint16"));
  CHECK_FALSE(isBuiltinMethod("dtype", "is_uint128"));
}

TEST_CASE("builtin registry: signatures and overloads", "[sema][registry]") {
  const Builtin *atomic = findBuiltin("tl.atomic_cas");
  REQUIRE(atomic);
  CHECK(atomic->fname == "atomic_cas");
  CHECK(paramNames(*atomic) == std::vector<std::string>{"pointer", "cmp", "val", "sem", "scope"});
  CHECK(atomic->params[2].required);
  CHECK_FALSE(atomic->params[3].required);
  CHECK(atomic->params[3].defaultText == "'acq_rel'");

  // tl.load's line is chosen by its first argument: a tensor descriptor, a block pointer, or pointers.
  CallArgs desc = firstArgOfKind(SVal::Kind::TensorDesc), bp = firstArgOfKind(SVal::Kind::BlockPtr),
           ptr = firstArgOfKind(SVal::Kind::Tensor), none;
  REQUIRE(findBuiltin("tl.load", &desc));
  CHECK(paramNames(*findBuiltin("tl.load", &desc)) ==
        std::vector<std::string>{"desc", "offsets", "cache_modifier", "eviction_policy"});
  REQUIRE(findBuiltin("tl.load", &bp));
  REQUIRE(findBuiltin("tl.load", &ptr));
  CHECK(findBuiltin("tl.load", &bp) != findBuiltin("tl.load", &ptr));
  CHECK(findBuiltin("tl.load", &none) == findBuiltin("tl.load", &ptr));
  CHECK(findBuiltin("tl.load", &ptr)->params[0].name == "pointer");

  // Variadic builtins and the loop iterables bind their own arguments; tl.range's keywords are
  // the ones after `/`.
  CHECK(findBuiltin("print")->bindsOwnArguments());
  CHECK(findBuiltin("tl.reshape")->bindsOwnArguments());
  CHECK_FALSE(findBuiltin("tl.arange")->bindsOwnArguments());
  CHECK(builtinKeywords("tl.range") == std::vector<std::string>{"num_stages", "loop_unroll_factor", "warp_specialize",
                                                                "disallow_acc_multi_buffer", "flatten",
                                                                "disable_licm"});
  // Names of the language that are not callable have no handler.
  REQUIRE(findBuiltin("tl.tensor"));
  CHECK(findBuiltin("tl.tensor")->spec.handler == nullptr);
}

TEST_CASE("builtin registry: joinNames", "[sema][registry]") {
  CHECK(joinNames({}) == "");
  CHECK(joinNames({"a"}) == "a");
  CHECK(joinNames({"a", "b"}) == "a and b");
  CHECK(joinNames({"a", "b", "c"}) == "a, b and c");
}
