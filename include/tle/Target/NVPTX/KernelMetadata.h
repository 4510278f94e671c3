// A kernel's launch metadata, computed once from its gpu-stage function and the driver's launch
// facts, and serialised once into the `__tle_metadata` document of the module (the format is
// tle/Runtime/Metadata.h; libtle_rt, tle-link and the launchers read it back).
#pragma once

#include "tle/IR/IR.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tle::nvptx {

/// What tlec records for launchers beyond what code generation knows: -ns, -g and the parameters
/// `:1` hints specialised away (docs/aot.md). Collected by the driver (tle/Driver/LaunchFacts.h).
struct LaunchFacts {
  std::optional<int> numStages;  ///< -ns / --num-stages, when given
  std::vector<std::string> grid; ///< -g: the three dimension expressions, or empty
  /// A parameter a `:1` hint specialised to the constant 1: gone from the kernel's parameters,
  /// still an argument of its launchers (which check that it is 1).
  struct EqualToOne {
    std::string name;  ///< the parameter name
    std::string type;  ///< its type spelling, e.g. "i32"
    size_t index = 0;  ///< its position among the launcher's arguments (runtime + `:1` parameters)
  };
  std::vector<EqualToOne> equalToOne;
  /// The source hash of the compilation (driver::ModuleFiles::sourceHash: SHA-256 of the
  /// kernel's source text and every imported module's, 64 hex digits), or empty when unknown.
  std::string sourceHash;
};

/// One number of a TMA descriptor as the launcher computes it from the arguments:
/// `value` times the product of the parameters `params` (a constant when there are none),
/// modulo 2^bits and sign-extended (ir::TensorMapParam::Source, with parameter names).
struct TensorMapExtent {
  std::vector<std::string> params; ///< runtime parameter names
  int64_t value = 1;
  int bits = 64; ///< 64, or 32 for an i32 product (Triton's `Z * H * N_CTX`)
};

/// A TMA descriptor (CUtensorMap) the launcher builds and passes after the params, in order
/// (ir::TensorMapParam, with parameter names; docs/runtime.md, "tensor_maps").
struct TensorMapSpec {
  std::string dtype;                          ///< element type, e.g. "fp16"
  std::string base;                           ///< the pointer parameter holding element 0's address
  std::vector<TensorMapExtent> shape, strides; ///< in elements, outermost first; the last stride is 1
  std::vector<int64_t> box;                   ///< elements one copy moves per dim, outermost first
  int swizzle = 0;                            ///< shared-memory swizzle span in bytes: 0, 32, 64, 128
};

/// Everything a launcher needs to know about one specialised kernel. Every field but
/// maxRegisters is one key of the kernel's entry in the `__tle_metadata` document (JSON key in
/// brackets); target, compiler and sourceHash are keys of the document itself.
struct KernelMetadata {
  std::string target;   ///< ["target"] the architecture: "sm_80" or "sm_90a"
  std::string compiler; ///< ["compiler"] "tlec VERSION"
  /// ["source_hash"] LaunchFacts::sourceHash; written only when not empty.
  std::string sourceHash;
  std::string name;     ///< ["name"] the kernel's source name (what launchers look it up by)
  /// ["symbol"] the PTX entry symbol, ptxSymbol(name); written only when set and not name.
  std::string symbol;
  /// A runtime parameter, in ABI order (["params"]).
  struct Param {
    std::string name;         ///< ["name"]
    std::string type;         ///< ["type"] Triton's AOT spelling: "*fp16", "i32", ...
    int64_t divisibility = 1; ///< ["divisibility"] bytes for pointers, value for integers
  };
  std::vector<Param> params;
  /// Warps running the kernel's code (num_warps of the source); the document's ["num_warps"] and
  /// ["block"] count launchWarps().
  int numWarps = 4;
  /// Warps added for warp specialisation: a producer warpgroup issuing the TMA copies.
  int producerWarps = 0;
  int64_t sharedBytes = 0;            ///< ["shared_bytes"] dynamic shared memory per block
  std::array<int, 3> cluster = {1, 1, 1}; ///< ["cluster"] CTAs per cluster along x, y, z
  bool cooperative = false;           ///< ["cooperative"] needs a cooperative launch
  /// Registers per thread at launch of a warp-specialised kernel (`.maxnreg`), 0 when not
  /// specialised. Not in the document: the PTX carries it.
  int maxRegisters = 0;
  std::vector<TensorMapSpec> tensorMaps; ///< ["tensor_maps"] present when not empty
  /// ["constexprs"] the values the kernel was specialised with, as source text, in order:
  /// JSON numbers when they are numbers, true / false for True / False, else strings (a dtype).
  std::vector<std::pair<std::string, std::string>> constexprs;
  /// ["num_stages"], ["grid"], ["equal_to_1"], each present when given.
  LaunchFacts launch;

  /// Warps per block at launch: numWarps + producerWarps (the block is 32 times as many threads).
  int launchWarps() const { return numWarps + producerWarps; }
};

/// The PTX entry symbol of a kernel named `name`: PTX identifiers take only ASCII letters,
/// digits, '_' and '$' (PTX ISA, "Identifiers"), so every other byte of the UTF-8 name becomes
/// '$' and two lowercase hex digits ("kérnel" -> "k$c3$a9rnel"); an ASCII identifier is unchanged.
/// Deterministic, and one-to-one on source names, which cannot hold a '$'.
std::string ptxSymbol(const std::string &name);

/// The metadata of `f` compiled for `arch`, once its gpu stage has decided its resources (shared
/// bytes, producer warps, register cap, tensor maps), with the driver's launch facts.
KernelMetadata describeKernel(const ir::Function &f, const std::string &arch, const LaunchFacts &launch);

/// The `__tle_metadata` JSON document of a module holding the one kernel `k`, compact (no
/// spaces), keys in the order of tle/Runtime/Metadata.h.
std::string toJSON(const KernelMetadata &k);

} // namespace tle::nvptx
