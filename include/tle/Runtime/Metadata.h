// The self-describing cubin: how tlec records kernel metadata inside the module it emits, and
// how libtle_rt reads it back. This header is the contract between the two; it depends on nothing.
#pragma once

namespace tle::metadata {

/// Name of the module-scope `.global` byte array (NUL-terminated UTF-8 JSON) that every module
/// emitted by tlec carries. The runtime reads it with cuModuleGetGlobal + cuMemcpyDtoH.
inline constexpr const char *kSymbol = "__tle_metadata";

/// Value of the "format" key.
inline constexpr const char *kFormat = "tle-module";

/// Current value of the "version" key. Readers reject larger versions.
inline constexpr int kVersion = 1;

// The JSON document:
// {
//   "format": "tle-module", "version": 1,
//   "target": "sm_90a",                      // the architecture the module was compiled for
//   "compiler": "tlec 0.1.0",
//   "source_hash": "3f0c...",                // optional: SHA-256 (64 lowercase hex digits) of the
//                                            // kernel's source text and every module it imported,
//                                            // each as its decimal byte length, "\n", its text,
//                                            // in load order (the order of tlec's depfile)
//   "kernels": [{
//     "name": "softmax_kernel",              // the kernel's name (what kernel(name) looks up)
//     "symbol": "k$c3$a9rnel",               // optional: the entry symbol when it is not "name"
//                                            // (a name PTX does not accept, e.g. "kérnel")
//     "num_warps": 4,                        // block size is 32 * num_warps threads (x only)
//     "block": [128, 1, 1],
//     "shared_bytes": 1024,                  // dynamic shared memory to pass at launch
//     "cluster": [1, 1, 1], "cooperative": false,
//     "params": [                            // runtime parameters in ABI order
//       {"name": "y_ptr", "type": "*fp32", "divisibility": 16},
//       {"name": "n", "type": "i32", "divisibility": 1}
//     ],
//     "constexprs": {"BLOCK": 1024}          // values the kernel was specialised with
//     // Optional launch keys (tlec -ns, -g and `:1` hints; see docs/aot.md):
//     "num_stages": 3,                       // -ns, as given (pipelining depth)
//     "grid": ["cdiv(n, BLOCK)", "1", "1"],  // -g: grid expressions over parameter names
//     "equal_to_1": [                        // parameters a `:1` hint specialised to 1 (not in
//       {"name": "stride", "type": "i32", "index": 2}  // "params"); index = position among the
//     ]                                      // launcher's arguments (params + these)
//   }]
// }
// Parameter type spellings follow Triton's AOT signature: a leading '*' for a global pointer,
// then one of i1 i8 i16 i32 i64 u8 u16 u32 u64 fp16 bf16 fp32 fp64. Scalars are passed by
// value with their natural size (i1 as one byte); pointers as 8-byte device addresses.
// "divisibility" (bytes for pointers, value for integers) is a promise the caller must keep.

} // namespace tle::metadata
