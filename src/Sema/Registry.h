// Internal to Sema: the builtin registry, one table line per function of the language (its
// qualified name, Python-style signature and handler), from which calls are bound and dispatched
// and the known-name sets are derived.
#pragma once

#include "Sema.h"

#include <optional>
#include <string>
#include <vector>

namespace tle::sema {

class Binder;
struct Builtin;

/// One call of a builtin as its handler sees it.
struct BuiltinCall {
  const Builtin &fn;
  /// The call's arguments as written; a tensor method's receiver is the first positional one.
  CallArgs &args;
  /// The arguments bound to fn's parameters (unbound when fn binds its own arguments).
  const Binder &p;
  /// The receiver of a receiver method (x.to, dtype.is_fp8, buf.slot); null otherwise.
  const SVal *self;
  /// The call's location (the caret of call-level errors).
  SourceLoc loc;
  /// The qualified name ("tl.load") and the one messages use ("load").
  const std::string &name;
  const std::string &fname;
};

/// Builds the call's tile IR (or compile-time value) from its bound arguments; reports user
/// errors through Specializer::fail.
using BuiltinHandler = SVal (*)(Specializer &S, const BuiltinCall &c);

/// Flags of a table line.
enum BuiltinFlags : unsigned {
  /// x.f(args) calls this builtin as tl.f(x, args) on a tensor x (Triton's tensor member functions).
  kTensorMethod = 1u << 0,
  /// desc.f(args) calls it as tl.f(desc, args) on a tensor descriptor.
  kDescriptorMethod = 1u << 1,
  /// The handler reads the call's arguments itself (variadic builtins, and builtins whose
  /// argument errors have their own wording or order); the signature documents them.
  kBindsOwnArguments = 1u << 2,
};

/// One line of a builtin table.
struct BuiltinSpec {
  /// The name a kernel calls it by once aliases are resolved: `tl.load`, `triton.cdiv`,
  /// `libdevice.exp`, `tle.gpu.alloc`, a Python builtin (`min`), or `RECEIVER.METHOD` for a
  /// method of a receiver kind (`tensor.to`, `dtype.is_fp8`, `buffer.slot`: the receiver is not
  /// an argument).
  const char *name;
  /// Python-style parameter list: `"pointer, mask=None, other=None"`. Parameters without a
  /// default are required; `/` ends the positional-only ones, `*` starts the keyword-only ones,
  /// `*args` collects extra positional arguments (such builtins bind their own arguments).
  /// Defaults are the documented values; an argument left out is absent for the handler.
  const char *signature;
  /// Null for a name of the language that is not callable in a kernel (`tl.tensor`, `triton.jit`).
  BuiltinHandler handler;
  unsigned flags = 0;
  /// For an overload (several lines of one name): this line applies only where `when` holds;
  /// the first applicable line of the name is taken.
  bool (*when)(const CallArgs &) = nullptr;
};

/// A parameter of a builtin's signature.
struct BuiltinParam {
  std::string name;
  std::string defaultText; ///< empty for a required parameter
  bool required = true;
  bool positional = true; ///< may be given positionally (not after `*`)
  bool keyword = true;    ///< may be given by keyword (not before `/`)
};

/// A table line with its signature parsed.
struct Builtin {
  BuiltinSpec spec;
  std::string name;  ///< spec.name
  std::string fname; ///< the name in messages: the last component of `name`
  std::vector<BuiltinParam> params;
  bool variadic = false;
  bool bindsOwnArguments() const { return variadic || (spec.flags & kBindsOwnArguments); }
};

/// The builtin named `name` whose overload applies to `args` (any overload when `args` is null),
/// or null when the language has no such name.
const Builtin *findBuiltin(const std::string &name, const CallArgs *args = nullptr);

/// The short names of the builtins directly under `module` ("tl", "tle", "tle.gpu", "cuda",
/// "triton", "" for Python's builtins), in table order.
std::vector<std::string> builtinNames(const std::string &module);

/// Whether `module.name` is a builtin (`name` alone for module "").
bool isModuleBuiltin(const std::string &module, const std::string &name);

/// Whether `receiver.name(...)` is a method call the language has, for receiver "tensor",
/// "tensor_descriptor", "dtype" or "buffer".
bool isBuiltinMethod(const std::string &receiver, const std::string &name);

/// The keyword names `name` accepts by keyword (for builtins bound outside the registry, such as
/// the `for` iterables).
std::vector<std::string> builtinKeywords(const std::string &name);

/// "a, b and c".
std::string joinNames(const std::vector<std::string> &names);

// Builtin families (one file each): the table lines of their builtins.
std::vector<BuiltinSpec> coreBuiltins();    // Core.cpp: Python builtins, triton.*, program geometry
std::vector<BuiltinSpec> debugBuiltins();   // Debug.cpp: printing, assertions, barriers, hints
std::vector<BuiltinSpec> memoryBuiltins();  // Memory.cpp: loads, stores, block pointers, descriptors
std::vector<BuiltinSpec> atomicBuiltins();  // Atomics.cpp
std::vector<BuiltinSpec> mathBuiltins();    // Math.cpp: elementwise math, casts, libdevice
std::vector<BuiltinSpec> externBuiltins();  // Extern.cpp: extern_elementwise (@core.extern functions)
std::vector<BuiltinSpec> shapeBuiltins();   // Shape.cpp: creation, broadcasting, reshaping, gather
std::vector<BuiltinSpec> reduceBuiltins();  // Reductions.cpp: reductions and scans
std::vector<BuiltinSpec> sortBuiltins();    // Sort.cpp: sort, topk, bitonic_merge
std::vector<BuiltinSpec> dotBuiltins();     // Dot.cpp
std::vector<BuiltinSpec> randomBuiltins();  // Random.cpp
std::vector<BuiltinSpec> tleBuiltins();     // Distributed.cpp: clusters, shared buffers
std::vector<BuiltinSpec> deviceBuiltins();  // Devices.cpp: tle.signal, tle.signal_wait (across GPUs)
/// Distributed.cpp's builtins along mesh axes that span GPUs, and with space="device"
/// (Devices.cpp). shard_id of GPU axis `axis` of launch mesh `mesh` (device_dptr= required).
SVal deviceShardId(Specializer &S, const Binder &p, const SVal &mesh, size_t axis);
/// remote(window, shard_id, scope=, space="device", dtype=, offset=): global pointers.
SVal deviceRemote(Specializer &S, const Binder &p, SourceLoc loc);
/// distributed_barrier(space="device", device_dptr=): a DeviceBarrier.
SVal deviceBarrier(Specializer &S, const Binder &p, SourceLoc loc);
std::vector<BuiltinSpec> pipeBuiltins();    // Pipes.cpp: tle.pipe and its endpoints
std::vector<BuiltinSpec> barrierBuiltins(); // Barriers.cpp: tle.gpu.alloc_barriers, barrier_wait, barrier_arrive
std::vector<BuiltinSpec> copyBuiltins();    // Copies.cpp: tle.gpu.copy
std::vector<BuiltinSpec> partitionBuiltins(); // Partitions.cpp: tle.gpu.warp_specialize
std::vector<BuiltinSpec> wgmmaBuiltins();   // Wgmma.cpp: tle.gpu.wgmma, wgmma_wait
std::vector<BuiltinSpec> rawBuiltins();     // Raw.cpp: tle.raw.dialect, call, call_smem
std::vector<BuiltinSpec> pathBuiltins();    // Raw.cpp: pathlib.Path, os.path helpers
std::vector<BuiltinSpec> pyMathBuiltins();  // PyMath.cpp: Python's math module on compile-time numbers
/// Python's math.pi, math.e, math.tau, math.inf and math.nan (PyMath.cpp); nullopt for other names.
std::optional<SVal> pyMathConstant(const std::string &name);
std::vector<BuiltinSpec> meshBuiltins();    // Meshes.cpp: device meshes
std::vector<BuiltinSpec> tileBuiltins();    // Tiles.cpp: tle.extract_tile, tle.insert_tile, tle.cumsum
std::vector<BuiltinSpec> torchBuiltins();   // Torch.cpp: torch.finfo / torch.iinfo, tl.dtype(name)
std::vector<BuiltinSpec> stringBuiltins();  // Strings.cpp: str(), repr()
std::vector<BuiltinSpec> standardBuiltins(); // Standard.cpp: triton.language.standard's underscore helpers

/// torch's dtype `torch.NAME` (float16, half, bfloat16, int32, float8_e4m3fn, ...) as the
/// language's dtype; nullopt for a name torch has no dtype of (or TLE has no type for).
std::optional<ir::ScalarType> torchDType(const std::string &name);

} // namespace tle::sema
