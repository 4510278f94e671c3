// libtle_rt C++ API: load tlec-emitted (self-describing) cubins through the CUDA driver and launch their kernels.
//
// The runtime depends only on libc, libdl and libstdc++: the CUDA driver (libcuda.so.1) is opened
// with dlopen the first time a device is touched, so programs linked against libtle_rt start on
// machines without a GPU and fail with a tle::rt::Error naming the cause. See docs/runtime.md.
//
// Typical use:
//   tle::rt::Device dev(0);
//   tle::rt::Module mod = tle::rt::Module::fromFile(dev, "softmax.sm_90a.cubin");
//   tle::rt::Kernel k = mod.kernel("softmax_kernel");
//   tle::rt::Stream stream(dev);
//   k.launch(grid, stream, out, in, int32_t(stride), int32_t(stride), int32_t(rows), int32_t(cols));
//
// Thread-safety: the lazy driver initialisation is guarded by std::call_once; every call that
// needs a CUDA context makes the device's primary context current on the calling thread for its
// duration and restores the caller's current context before returning (docs/runtime.md).
// Distinct objects may be used from distinct threads; one object must not be used concurrently
// from several threads unless its documentation says so.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

/// Marks the declarations libtle_rt exports (everything else in the library is hidden).
#define TLE_RT_API __attribute__((visibility("default")))

/// The CUDA stream object: cuda.h declares `typedef struct CUstream_st *CUstream` and the CUDA
/// runtime `typedef struct CUstream_st *cudaStream_t`, so both handle types are `CUstream_st *`
/// and pass to the raw-stream overloads below without casts or CUDA headers.
struct CUstream_st;
/// The CUDA graph object: CUgraph (cuda.h) and cudaGraph_t (the CUDA runtime) are `CUgraph_st *`.
struct CUgraph_st;
/// A node of a CUDA graph: CUgraphNode (cuda.h) and cudaGraphNode_t are `CUgraphNode_st *`.
struct CUgraphNode_st;

namespace tle::rt {

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

/// Base class of every exception libtle_rt throws. what() is a complete, user-readable sentence.
class TLE_RT_API Error : public std::runtime_error {
public:
  /// Creates an error with message `message`.
  explicit Error(const std::string &message);
};

/// The CUDA driver cannot be used: libcuda.so.1 cannot be loaded, lacks a required entry point,
/// or cuInit fails (e.g. no device). Programs that can run without a GPU catch this one.
class TLE_RT_API NoDriverError : public Error {
public:
  /// Creates an error with message `message`.
  explicit NoDriverError(const std::string &message);
};

/// A CUDA driver call failed. what() reads "<call> failed: <CUresult name> (<CUresult string>)",
/// followed by any detail (e.g. the JIT error log of a PTX module).
class TLE_RT_API DriverError : public Error {
public:
  /// Creates an error for driver call `call` that returned CUresult `result`.
  DriverError(std::string call, int result, const std::string &message);
  /// The name of the failing driver entry point, e.g. "cuModuleLoadDataEx".
  const std::string &call() const { return call_; }
  /// The CUresult value the call returned (see cuda.h; e.g. 200 = CUDA_ERROR_INVALID_IMAGE).
  int result() const { return result_; }

private:
  std::string call_;
  int result_;
};

/// The `__tle_metadata` document of a module is missing, malformed, of an unknown format, or of
/// a newer version than this libtle_rt reads.
class TLE_RT_API MetadataError : public Error {
public:
  /// Creates an error with message `message`.
  explicit MetadataError(const std::string &message);
};

/// A launch was refused before reaching the driver: wrong argument count, an argument whose C++
/// type does not match the parameter type, a broken divisibility promise, a bad grid.
class TLE_RT_API ArgumentError : public Error {
public:
  /// Creates an error with message `message`.
  explicit ArgumentError(const std::string &message);
};

// ------------------------------------------------------------------------------------------------
// Kernel metadata (the contract is include/tle/Runtime/Metadata.h)
// ------------------------------------------------------------------------------------------------

/// The element kind of a parameter or argument type.
enum class ScalarKind : uint8_t {
  Bool,    ///< i1 (passed as one byte)
  Int,     ///< i8 i16 i32 i64
  UInt,    ///< u8 u16 u32 u64
  Float,   ///< fp16 fp32 fp64
  BFloat,  ///< bf16
  /// fp8e4nv (OCP e4m3fn) and fp8e5 (e5m2): one byte each. Only as a pointer's element: tlec
  /// rejects fp8 scalar parameters.
  Float8E4M3,
  Float8E5M2,
  /// "nvTmaDesc": a 128-byte CUtensorMap (TMA descriptor) passed by value, as a
  /// `__grid_constant__` kernel parameter (PTX `.param .align 64 .b8 name[128]`). bits = 1024.
  /// Never a pointer's element. tlec does not emit such parameters yet; kernels described by a
  /// KernelInfo, or metadata written by other tools, may use them (see TensorMap.h).
  TensorMap,
};

/// A kernel parameter type in Triton's AOT spelling: "*fp32" (global pointer to fp32), "i32",
/// "fp32", "i1", ..., and "nvTmaDesc" (a TMA descriptor, see ScalarKind::TensorMap). Pointers are
/// passed as 8-byte device addresses, scalars by value with their natural size (i1 as one byte),
/// TMA descriptors by value as 128 bytes.
struct TLE_RT_API ParamType {
  bool pointer = false;             ///< true for "*T"; kind/bits then describe T
  ScalarKind kind = ScalarKind::Int; ///< the (element) kind
  unsigned bits = 32;               ///< the (element) width: 1, 8, 16, 32 or 64

  /// Parses a spelling such as "*fp32", "i32", "bf16". Throws MetadataError on anything else.
  static ParamType parse(std::string_view spelling);
  /// The scalar (element) spelling, e.g. "fp32" for both "fp32" and "*fp32".
  std::string elementName() const;
  /// The full spelling, e.g. "*fp32".
  std::string str() const;
  /// Number of bytes the argument occupies in the launch parameter buffer (8 for pointers, 128
  /// for "nvTmaDesc").
  size_t argBytes() const;
  /// The C++ type a scalar argument of this type must have, e.g. "float", "int32_t", or for a
  /// pointer "tle::rt::DeviceBuffer or tle::rt::DevicePtr".
  std::string cppName() const;

  /// Same spelling.
  friend bool operator==(const ParamType &a, const ParamType &b) {
    return a.pointer == b.pointer && a.kind == b.kind && a.bits == b.bits;
  }
  /// Different spelling.
  friend bool operator!=(const ParamType &a, const ParamType &b) { return !(a == b); }
};

/// One runtime parameter of a kernel, in ABI order.
struct ParamInfo {
  std::string name;         ///< the source-level parameter name
  ParamType type;
  /// The caller's promise: for pointers the address is a multiple of this many bytes, for
  /// integers the value is a multiple of it. 1 = no promise. Checked at every launch.
  int64_t divisibility = 1;
};

/// A TMA descriptor (CUtensorMap) that every launch builds from the kernel's arguments and
/// passes by value after them: tlec emits one for a tensor descriptor (tl.make_tensor_descriptor)
/// whose base, shape and strides are kernel parameters or constants and whose tiles it copies
/// with TMA (metadata key "tensor_maps"). Callers pass only the kernel's `params`.
struct TensorMapArgInfo {
  /// One number of the descriptor: `value` times the arguments of the integer parameters
  /// `params` (a constant when there are none), computed modulo 2^bits and sign-extended as the
  /// kernel computes it (bits 32 for an i32 product).
  struct Source {
    std::vector<int> params;
    int64_t value = 1;
    int bits = 64;
  };
  std::string dtype;                  ///< element type name ("fp16", "bf16", "fp8e4nv", ...)
  size_t base = 0;                    ///< the pointer parameter holding element (0, ..., 0)
  std::vector<Source> shape, strides; ///< elements, outermost first; the last stride is 1
  std::vector<int64_t> box;           ///< elements one copy moves per dimension, outermost first
  int swizzle = 0;                    ///< shared-memory swizzle span: 0, 32, 64 or 128 bytes
};

/// Everything needed to launch one kernel, as recorded by tlec in `__tle_metadata`.
struct TLE_RT_API KernelInfo {
  std::string name;                          ///< the kernel's name (as in its source)
  /// The entry symbol when it differs from name (a name PTX does not accept, mangled by tlec);
  /// empty: the symbol is name.
  std::string symbol;
  int numWarps = 4;                          ///< block = 32 * numWarps threads (x only)
  std::array<unsigned, 3> block{128, 1, 1};  ///< threads per block
  unsigned sharedBytes = 0;                  ///< dynamic shared memory per block, bytes
  std::array<unsigned, 3> cluster{1, 1, 1};  ///< thread-block cluster dims (sm_90+)
  bool cooperative = false;                  ///< needs a cooperative launch
  std::vector<ParamInfo> params;             ///< runtime parameters in ABI order
  /// TMA descriptors the launch builds from the arguments and appends after them.
  std::vector<TensorMapArgInfo> tensorMaps;
  /// Values the kernel was specialised with, each as its JSON text ("1024", "true", "\"x\"").
  std::map<std::string, std::string> constexprs;
  std::string target;                        ///< the module's target, e.g. "sm_90a"

  /// The integer value of constexpr `name`, or nullopt when absent or not an integer.
  std::optional<int64_t> constexprInt(std::string_view name) const;
  /// The parameter types as a Triton signature fragment, e.g. "*fp32:16, i32:16, i32".
  std::string signature() const;
  /// Threads per block (block[0] * block[1] * block[2]).
  unsigned threadsPerBlock() const { return block[0] * block[1] * block[2]; }
};

/// The whole `__tle_metadata` document of a module.
struct TLE_RT_API ModuleInfo {
  std::string format;              ///< always "tle-module"
  int version = 0;                 ///< <= tle::metadata::kVersion
  std::string target;              ///< e.g. "sm_90a"
  std::string compiler;            ///< e.g. "tlec 0.1.0" (may be empty)
  /// SHA-256 of the kernel's source text and its imported modules' (64 lowercase hex digits);
  /// empty when the module does not record it (tlec before the "source_hash" key).
  std::string sourceHash;
  std::vector<KernelInfo> kernels; ///< every kernel of the module
  std::string json;                ///< the document as read

  /// The kernel called `name`, or nullptr.
  const KernelInfo *find(std::string_view name) const;
};

/// Parses and validates a `__tle_metadata` JSON document (see Metadata.h): checks the format
/// string, rejects versions newer than tle::metadata::kVersion, validates every kernel (name,
/// num_warps in 1..32, block consistent with num_warps, parameter names and type spellings,
/// divisibility >= 1). Unknown keys are ignored. Throws MetadataError naming the offending key,
/// e.g. "invalid __tle_metadata: kernels[0].params[2].type: unknown type 'f32'".
TLE_RT_API ModuleInfo parseModuleMetadata(std::string_view json);

// ------------------------------------------------------------------------------------------------
// Argument types and checks
// ------------------------------------------------------------------------------------------------

/// An IEEE binary16 scalar argument (for "fp16" parameters), stored as its bit pattern.
struct TLE_RT_API Half {
  uint16_t bits = 0; ///< the binary16 bit pattern
  /// Rounds `value` to the nearest binary16 (ties to even; overflow gives infinity).
  static Half fromFloat(float value);
  /// The exact float value.
  float toFloat() const;
};

/// A bfloat16 scalar argument (for "bf16" parameters), stored as its bit pattern.
struct TLE_RT_API BFloat16 {
  uint16_t bits = 0; ///< the bfloat16 bit pattern (the top half of a float)
  /// Rounds `value` to the nearest bfloat16 (ties to even).
  static BFloat16 fromFloat(float value);
  /// The exact float value.
  float toFloat() const;
};

/// A raw device address (a CUdeviceptr) to pass for a pointer parameter. Wrap integer addresses
/// in this type: a bare uint64_t is a u64 scalar and is refused for pointer parameters. A raw
/// `void *` / `const void *` device pointer (cudaMalloc's) may be passed as it is.
struct DevicePtr {
  uint64_t address = 0; ///< the CUdeviceptr value
};

/// A TMA descriptor: the CUDA driver's CUtensorMap, 128 opaque bytes that must sit at a 64-byte
/// aligned address when the driver writes them (cuTensorMapEncodeTiled, CUDA driver API). Build
/// one with tle::rt::encodeTensorMapTiled (TensorMap.h) and pass it by value for a "nvTmaDesc"
/// parameter; the launch copies the 128 bytes into the kernel's parameter space. Layout-compatible
/// with CUtensorMap (memcpy between them is fine).
struct alignas(64) TensorMap {
  uint64_t opaque[16] = {}; ///< the descriptor bytes, as the driver wrote them
};
static_assert(sizeof(TensorMap) == 128 && alignof(TensorMap) == 64,
              "TensorMap mirrors CUtensorMap: 128 bytes, 64-byte aligned");

/// What a C++ launch argument is, for checking against a ParamType.
struct ArgDesc {
  bool pointer = false;              ///< DeviceBuffer or DevicePtr
  ScalarKind kind = ScalarKind::Int; ///< scalar kind (unused for pointers)
  unsigned bits = 0;                 ///< scalar width in bits
  const char *cppType = "";          ///< the C++ spelling, for messages
};

class DeviceBuffer;

/// The ArgDesc of C++ argument type T: bool -> i1, intN_t -> iN, uintN_t -> uN, float -> fp32,
/// double -> fp64, Half -> fp16, BFloat16 -> bf16, DeviceBuffer / DevicePtr / `void *` /
/// `const void *` (a raw device pointer, as cuBLASLt takes them) -> pointer, TensorMap ->
/// nvTmaDesc. Typed pointers (`float *`, ...) are a compile-time error, so that a host array's
/// data() is not passed by mistake: cast a device pointer to `void *` or wrap it in DevicePtr.
template <class T> constexpr ArgDesc argDescOf() {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  static_assert(!std::is_pointer_v<U> || std::is_void_v<std::remove_pointer_t<U>>,
                "tle::rt: pass device memory (tle::rt::DeviceBuffer, tle::rt::DevicePtr or a raw "
                "void * device pointer), not a typed pointer, for pointer parameters");
  if constexpr (std::is_pointer_v<U>) {
    return {true, ScalarKind::Int, 64, "void *"};
  } else if constexpr (std::is_same_v<U, DeviceBuffer>) {
    return {true, ScalarKind::Int, 64, "tle::rt::DeviceBuffer"};
  } else if constexpr (std::is_same_v<U, DevicePtr>) {
    return {true, ScalarKind::Int, 64, "tle::rt::DevicePtr"};
  } else if constexpr (std::is_same_v<U, TensorMap>) {
    return {false, ScalarKind::TensorMap, 1024, "tle::rt::TensorMap"};
  } else if constexpr (std::is_same_v<U, bool>) {
    return {false, ScalarKind::Bool, 1, "bool"};
  } else if constexpr (std::is_same_v<U, Half>) {
    return {false, ScalarKind::Float, 16, "tle::rt::Half"};
  } else if constexpr (std::is_same_v<U, BFloat16>) {
    return {false, ScalarKind::BFloat, 16, "tle::rt::BFloat16"};
  } else if constexpr (std::is_same_v<U, float>) {
    return {false, ScalarKind::Float, 32, "float"};
  } else if constexpr (std::is_same_v<U, double>) {
    return {false, ScalarKind::Float, 64, "double"};
  } else if constexpr (std::is_integral_v<U>) {
    constexpr bool s = std::is_signed_v<U>;
    constexpr unsigned b = 8 * sizeof(U);
    constexpr const char *names[2][4] = {{"uint8_t", "uint16_t", "uint32_t", "uint64_t"},
                                         {"int8_t", "int16_t", "int32_t", "int64_t"}};
    constexpr int idx = b == 8 ? 0 : b == 16 ? 1 : b == 32 ? 2 : 3;
    return {false, s ? ScalarKind::Int : ScalarKind::UInt, b, names[s ? 1 : 0][idx]};
  } else {
    static_assert(sizeof(U) == 0,
                  "tle::rt: unsupported launch argument type; use DeviceBuffer, DevicePtr, bool, "
                  "(u)intN_t, float, double, Half, BFloat16 or TensorMap");
    return {};
  }
}

/// The type spelling of an argument, e.g. "i32" for int32_t, "pointer" for DeviceBuffer,
/// "nvTmaDesc" for TensorMap.
TLE_RT_API std::string argTypeName(const ArgDesc &arg);

/// Throws ArgumentError unless `given` equals the number of runtime parameters of `kernel`:
/// "softmax_kernel expects 6 arguments (output_ptr, ...) but was given 5".
TLE_RT_API void checkArgCount(const KernelInfo &kernel, size_t given);

/// Throws ArgumentError unless argument `index` (0-based) may be passed for that parameter:
/// pointer parameters take pointers; scalar parameters take exactly the C++ type of their kind
/// and width (fp32 takes float, not double; i32 takes int32_t, not int64_t or uint32_t). The
/// message names the kernel, the parameter and both types.
TLE_RT_API void checkArgType(const KernelInfo &kernel, size_t index, const ArgDesc &given);

/// Throws ArgumentError unless the argument bytes at `value` (argBytes() of the parameter type)
/// keep the parameter's divisibility promise (pointer address or integer value multiple of it).
TLE_RT_API void checkArgValue(const KernelInfo &kernel, size_t index, const void *value);

/// The value of an integer argument of type `t` (Int or UInt, 8 to 64 bits) stored at `value`,
/// sign-extended (`sv`) and zero-extended (`uv`) to 64 bits.
TLE_RT_API void argInteger(const ParamType &t, const void *value, int64_t &sv, uint64_t &uv);

/// TMA descriptor `k` of `kernel` (KernelInfo::tensorMaps) built from the launch's arguments
/// (`args[i]` points to the value of parameter i) with cuTensorMapEncodeTiled. A tensor with a
/// dimension of 0 has no element in bounds: its descriptor then describes one zero element at
/// `zeros` (16 zero bytes on the kernel's device), so that every copy through it reads zeros as
/// the kernel's bounds checks would; without `zeros` that is refused. Throws ArgumentError
/// naming the kernel and the tensor when the arguments break TMA's rules (a base not 16-byte
/// aligned, a stride not a multiple of 16 bytes: the rules of encodeTensorMapTiled,
/// TensorMap.h), and the errors of encodeTensorMapTiled otherwise.
TLE_RT_API TensorMap launchTensorMap(const KernelInfo &kernel, size_t k, void *const *args, DevicePtr zeros = {});

// ------------------------------------------------------------------------------------------------
// Devices, streams, events, memory
// ------------------------------------------------------------------------------------------------

namespace detail {
struct DeviceState;
struct ModuleState;
struct StreamState;
} // namespace detail

/// True when the CUDA driver loads and at least one device is present; otherwise false with the
/// reason (the NoDriverError message, or "no CUDA device") in `*reason` when non-null.
TLE_RT_API bool gpuAvailable(std::string *reason = nullptr);

/// The CUDA version the driver supports (cuDriverGetVersion), e.g. 13000. Throws NoDriverError.
TLE_RT_API int driverVersion();

/// A CUDA device and its primary context (retained while any object refers to it). Copies are
/// cheap and share the context.
class TLE_RT_API Device {
public:
  /// The number of CUDA devices. Throws NoDriverError when the driver cannot be used.
  static int count();
  /// Opens device `ordinal` and retains its primary context. Throws NoDriverError, or Error
  /// when the ordinal is out of range.
  explicit Device(int ordinal = 0);

  /// The device ordinal.
  int ordinal() const;
  /// The marketing name, e.g. "NVIDIA H200".
  const std::string &name() const;
  /// Compute capability major version (9 on Hopper).
  int computeMajor() const;
  /// Compute capability minor version.
  int computeMinor() const;
  /// The number of streaming multiprocessors.
  int smCount() const;
  /// Global memory, bytes.
  size_t totalMemoryBytes() const;
  /// L2 cache size, bytes.
  size_t l2CacheBytes() const;
  /// The largest dynamic + static shared memory one block may opt in to, bytes.
  size_t maxSharedBytesPerBlockOptin() const;
  /// The architecture name tlec uses for this device: "sm_90a" for 9.0, else "sm_<major><minor>".
  std::string arch() const;
  /// Waits for all work on the device's primary context (cuCtxSynchronize).
  void synchronize() const;
  /// Makes the primary context current on the calling thread (cuCtxSetCurrent) if it is not, and
  /// leaves it current. No other call needs it: every libtle_rt call makes the primary context
  /// current for its own duration and restores the caller's context before returning.
  void makeCurrent() const;

  /// The device whose primary context `stream` (a CUstream or cudaStream_t) belongs to
  /// (cuStreamGetCtx); for the default streams (nullptr, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD)
  /// the device of the calling thread's current context, device 0 when none is current. Throws
  /// ArgumentError when the context is not the primary context of any device (libtle_rt loads
  /// modules into primary contexts, those the CUDA runtime uses), DriverError when the driver
  /// rejects the handle. Cheap after the first call for a context (cached per thread).
  static Device ofStream(CUstream_st *stream);
  /// The device of the calling thread's current context (device 0 when none is current), under
  /// the rule of ofStream.
  static Device current();
  /// The primary context (a CUcontext).
  void *context() const;

  /// The same device (and so the same primary context).
  friend bool operator==(const Device &a, const Device &b) { return a.state_ == b.state_; }
  /// Different devices.
  friend bool operator!=(const Device &a, const Device &b) { return !(a == b); }

private:
  friend class Stream;
  friend class Event;
  friend class Graph;
  friend class DeviceBuffer;
  friend class Module;
  friend class Kernel;
  explicit Device(std::shared_ptr<detail::DeviceState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::DeviceState> state_;
};

/// A CUDA stream of one device. Owning streams are created with CU_STREAM_DEFAULT flags, so they
/// synchronise with the legacy default stream (and thus with DeviceBuffer's blocking copies).
class TLE_RT_API Stream {
public:
  /// Creates a new stream on `device` (cuStreamCreate).
  explicit Stream(const Device &device);
  /// Wraps an existing CUstream `handle` of `device` without owning it (nullptr = the legacy
  /// default stream). The caller keeps it alive while the wrapper is used.
  static Stream wrap(const Device &device, void *handle);
  /// Wraps an existing CUstream / cudaStream_t without owning it; its device is
  /// Device::ofStream(handle) (throws as that does).
  static Stream wrap(CUstream_st *handle);
  /// Destroys the stream if owned (without waiting for its work; the driver finishes it).
  ~Stream();
  /// Moves the stream; the source becomes the legacy default stream, not owned.
  Stream(Stream &&) noexcept;
  /// Destroys the current stream if owned, then moves.
  Stream &operator=(Stream &&) noexcept;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  /// Waits until all work queued on the stream has finished (cuStreamSynchronize).
  void synchronize();
  /// True while the stream is being captured into a CUDA graph (cuStreamIsCapturing: active, or
  /// invalidated by an illegal call). Loading a module then is not allowed: load kernels first.
  bool isCapturing() const;
  /// The CUstream handle (nullptr for the legacy default stream).
  void *handle() const;
  /// The device the stream belongs to.
  const Device &device() const { return device_; }

private:
  Stream(const Device &device, void *handle, bool owned);
  Device device_;
  void *handle_ = nullptr;
  bool owned_ = false;
};

/// A CUDA event for timing work on a stream (created with CU_EVENT_DEFAULT, so timing works).
class TLE_RT_API Event {
public:
  /// Creates an event on `device`.
  explicit Event(const Device &device);
  /// Destroys the event.
  ~Event();
  /// Moves the event; the source becomes empty.
  Event(Event &&) noexcept;
  /// Destroys the current event, then moves.
  Event &operator=(Event &&) noexcept;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  /// Records the event on `stream` (cuEventRecord).
  void record(Stream &stream);
  /// Waits until the event has completed (cuEventSynchronize).
  void synchronize();
  /// Milliseconds between two recorded events (cuEventElapsedTime); waits for `end` first.
  /// Resolution is about half a microsecond.
  static float elapsedMs(const Event &start, const Event &end);
  /// The CUevent handle.
  void *handle() const { return handle_; }

private:
  Device device_;
  void *handle_ = nullptr;
};

/// A node of a CUDA graph (a CUgraphNode / cudaGraphNode_t), as Kernel::addNode returns it.
using GraphNode = CUgraphNode_st *;

/// The nodes a new graph node depends on (the dependencies of cuGraphAddKernelNode): none (`{}`),
/// one node, a braced list `{a, b}`, a std::vector, or a pointer and a count. It refers to the
/// caller's nodes, so it is meant to be passed straight to the call that adds the node.
class GraphDeps {
public:
  /// No dependencies: the node is a root of the graph.
  GraphDeps() = default;
  /// One dependency.
  GraphDeps(GraphNode node) : one_(node), count_(1), form_(Form::One) {}
  /// The listed dependencies (the list lives until the end of the caller's full expression).
  GraphDeps(std::initializer_list<GraphNode> nodes) : list_(nodes), count_(nodes.size()), form_(Form::List) {}
  /// The dependencies in `nodes`.
  GraphDeps(const std::vector<GraphNode> &nodes) : nodes_(nodes.data()), count_(nodes.size()) {}
  /// `count` dependencies at `nodes`.
  GraphDeps(const GraphNode *nodes, size_t count) : nodes_(nodes), count_(count) {}
  /// The dependencies, count() of them.
  const GraphNode *data() const {
    return form_ == Form::One ? &one_ : form_ == Form::List ? list_.begin() : nodes_;
  }
  /// How many dependencies.
  size_t count() const { return count_; }

private:
  enum class Form : uint8_t { Array, One, List };
  std::initializer_list<GraphNode> list_;
  const GraphNode *nodes_ = nullptr;
  GraphNode one_ = nullptr; // the one-node form's dependency (each copy points at its own)
  size_t count_ = 0;
  Form form_ = Form::Array;
};

/// Adds an empty node (cuGraphAddEmptyNode) after `deps` to CUDA graph `graph` (a CUgraph /
/// cudaGraph_t) and returns it: what a generated launcher adds for an empty grid, so that nodes
/// depending on it keep their order. Throws ArgumentError for a null graph or dependency, Error
/// when the driver lacks cuGraphAddEmptyNode, DriverError when the driver refuses the node.
TLE_RT_API GraphNode addEmptyGraphNode(CUgraph_st *graph, GraphDeps deps);

/// An executable CUDA graph, made in one of two ways. Stream capture: launches of kernels, copies
/// and memsets queued on a stream between beginCapture and endCapture are recorded instead of
/// run, and every launch() replays them. Explicit nodes: Graph::create makes an empty graph,
/// Kernel::addNode (or a generated launcher's NAME_node) adds kernel nodes with their
/// dependencies, instantiate() makes it executable. Kernels must be loaded before either (a
/// module load inside a capture is refused; generated launchers refuse to add a node of a kernel
/// not loaded yet): call the generated launcher's NAME_load(device) or Module::kernel first.
/// Move-only; destroys the graph on destruction.
class TLE_RT_API Graph {
public:
  /// An empty graph on `device` to add nodes to (cuGraphCreate); instantiate() it before
  /// launch(). Throws Error when the driver lacks the graph-building entry points
  /// (cuGraphCreate, cuGraphAddKernelNode_v2, cuGraphAddEmptyNode: CUDA 12.0+).
  static Graph create(const Device &device);
  /// Starts capturing `stream` (cuStreamBeginCapture, CU_STREAM_CAPTURE_MODE_GLOBAL: a call that
  /// is not allowed during a capture, from any thread, fails instead of silently running).
  /// Throws Error when the driver lacks graph support, DriverError when the capture cannot start.
  static void beginCapture(Stream &stream);
  /// Ends the capture of `stream` (cuStreamEndCapture) and instantiates the captured graph
  /// (cuGraphInstantiateWithFlags). Throws DriverError when the capture was invalidated (e.g. by
  /// a synchronous call during it) or instantiation fails.
  static Graph endCapture(Stream &stream);
  /// An empty graph (launch() throws).
  Graph() = default;
  /// Destroys the executable and the captured graph.
  ~Graph();
  /// Moves the graph; the source becomes empty.
  Graph(Graph &&) noexcept;
  /// Destroys the current graph, then moves.
  Graph &operator=(Graph &&) noexcept;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  /// Instantiates the graph as it is now (cuGraphInstantiateWithFlags), replacing the executable
  /// of an earlier instantiate() or endCapture (nodes added since are in the new one only).
  /// Throws ArgumentError for an empty Graph, DriverError when the driver refuses it.
  void instantiate();
  /// Replays the graph on `stream` of the same device (cuGraphLaunch); asynchronous. Throws
  /// ArgumentError when the graph is empty or not instantiated, or the stream is of another device.
  void launch(Stream &stream);
  /// The CUgraphExec handle (nullptr when empty or not instantiated).
  void *handle() const { return exec_; }
  /// The CUgraph (cudaGraph_t) itself, to add nodes to (nullptr when empty). The Graph keeps
  /// ownership.
  CUgraph_st *graph() const { return static_cast<CUgraph_st *>(graph_); }
  /// The device the graph was created or captured on. Throws ArgumentError for an empty Graph.
  Device device() const;

private:
  friend class Kernel;
  std::shared_ptr<detail::DeviceState> device_;
  void *graph_ = nullptr;
  void *exec_ = nullptr;
};

/// Device memory allocated with cuMemAlloc (256-byte aligned), freed on destruction. Move-only.
/// The blocking copies below use the legacy default stream: they wait for prior work on
/// streams created by Stream(Device) and finish before returning.
class TLE_RT_API DeviceBuffer {
public:
  /// An empty buffer (address 0, size 0).
  DeviceBuffer() = default;
  /// Allocates `bytes` bytes on `device` (no allocation, address 0, when bytes == 0).
  DeviceBuffer(const Device &device, size_t bytes);
  /// Allocates a buffer holding a copy of `host`.
  template <class T> static DeviceBuffer fromHost(const Device &device, const std::vector<T> &host) {
    static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds trivially copyable data");
    DeviceBuffer b(device, host.size() * sizeof(T));
    b.copyFromHost(host.data(), host.size() * sizeof(T));
    return b;
  }
  /// Frees the memory (cuMemFree, which synchronises with work still pending on the device).
  ~DeviceBuffer();
  /// Moves the allocation; the source becomes empty.
  DeviceBuffer(DeviceBuffer &&) noexcept;
  /// Frees the current allocation, then moves.
  DeviceBuffer &operator=(DeviceBuffer &&) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  /// Size in bytes.
  size_t bytes() const { return bytes_; }
  /// The device address of byte 0 (a CUdeviceptr).
  uint64_t address() const { return address_; }
  /// A pointer argument for byte `byteOffset` of the buffer. Throws ArgumentError past the end.
  DevicePtr ptr(size_t byteOffset = 0) const;
  /// The ordinal of the owning device, -1 for an empty buffer.
  int deviceOrdinal() const;

  /// Copies `bytes` bytes from host `src` to the buffer at `dstOffset` (blocking).
  void copyFromHost(const void *src, size_t bytes, size_t dstOffset = 0);
  /// Copies `bytes` bytes from the buffer at `srcOffset` to host `dst` (blocking).
  void copyToHost(void *dst, size_t bytes, size_t srcOffset = 0) const;
  /// Copies `bytes` bytes from `src` at `srcOffset` to this buffer at `dstOffset` (blocking).
  void copyFromDevice(const DeviceBuffer &src, size_t bytes, size_t dstOffset = 0,
                      size_t srcOffset = 0);
  /// Queues a device-to-device copy on `stream` (cuMemcpyDtoDAsync).
  void copyFromDeviceAsync(const DeviceBuffer &src, size_t bytes, Stream &stream,
                           size_t dstOffset = 0, size_t srcOffset = 0);
  /// Sets every byte to `value` (blocking, cuMemsetD8).
  void fillBytes(uint8_t value);
  /// Sets every 32-bit word to `value` (blocking, cuMemsetD32); bytes() must be a multiple of 4.
  void fill32(uint32_t value);
  /// Queues a memset of every byte to `value` on `stream` (cuMemsetD8Async).
  void fillBytesAsync(uint8_t value, Stream &stream);
  /// Queues a memset of every 32-bit word on `stream` (cuMemsetD32Async).
  void fill32Async(uint32_t value, Stream &stream);

  /// Copies `host` into the start of the buffer (blocking). Throws Error when it does not fit.
  template <class T> void copyFromHost(const std::vector<T> &host) {
    static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds trivially copyable data");
    copyFromHost(host.data(), host.size() * sizeof(T));
  }
  /// Fills `host` (host.size() elements) from the start of the buffer (blocking).
  template <class T> void copyToHost(std::vector<T> &host) const {
    static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds trivially copyable data");
    copyToHost(host.data(), host.size() * sizeof(T));
  }
  /// The whole buffer as bytes() / sizeof(T) elements (blocking).
  template <class T> std::vector<T> toHost() const {
    std::vector<T> host(bytes_ / sizeof(T));
    copyToHost(host);
    return host;
  }

private:
  void release() noexcept;
  std::shared_ptr<detail::DeviceState> device_;
  uint64_t address_ = 0;
  size_t bytes_ = 0;
};

// ------------------------------------------------------------------------------------------------
// Modules and kernels
// ------------------------------------------------------------------------------------------------

/// A launch grid in blocks (CTAs): x up to 2^31-1, y and z up to 65535, each at least 1.
struct Grid {
  unsigned x = 1, y = 1, z = 1; ///< blocks per dimension
  /// A single block.
  Grid() = default;
  /// A one-dimensional grid; implicit so that `k.launch(128, stream, ...)` works.
  Grid(unsigned x_) : x(x_) {}
  /// A 2-D or 3-D grid.
  Grid(unsigned x_, unsigned y_, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

class Kernel;
class Communicator;

/// A loaded CUDA module (cuModuleLoadDataEx) and its parsed `__tle_metadata`. Copies share the
/// module, which is unloaded when the last Module or Kernel referring to it goes away.
class TLE_RT_API Module {
public:
  /// Loads a cubin, fatbin or PTX file (chosen by content: ELF or fatbin magic, else PTX text).
  /// Throws Error when the file cannot be read, DriverError when the driver rejects it (with the
  /// JIT log for PTX), MetadataError when it carries a malformed `__tle_metadata`.
  static Module fromFile(const Device &device, const std::string &path);
  /// Loads a cubin or fatbin image of `size` bytes. `label` names it in messages.
  static Module fromImage(const Device &device, const void *image, size_t size,
                          std::string label = "<memory image>");
  /// JIT-compiles and loads PTX text; a failure's DriverError message ends with the JIT log.
  static Module fromPtx(const Device &device, std::string_view ptx,
                        std::string label = "<ptx text>");

  /// True when the module carries a `__tle_metadata` document.
  bool hasMetadata() const;
  /// The parsed metadata. Throws MetadataError when the module has none.
  const ModuleInfo &info() const;
  /// The kernel `name`, described by the module's metadata. Throws MetadataError when the module
  /// has no metadata or does not describe `name` (the message lists the kernels it has), and
  /// DriverError when the entry symbol is missing. Sets the dynamic shared memory limit
  /// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) when sharedBytes exceeds 48 KiB.
  Kernel kernel(std::string_view name) const;
  /// The kernel `name` described by the caller instead (for modules not built by tlec).
  Kernel kernel(std::string_view name, KernelInfo info) const;
  /// The name given at load time (the path for fromFile).
  const std::string &label() const;
  /// The JIT info log of the load (empty for cubins).
  const std::string &jitLog() const;
  /// The device the module is loaded on.
  const Device &device() const;
  /// The CUmodule handle (valid while any Module or Kernel refers to this module).
  void *handle() const;

  /// The same loaded module (e.g. two results of one ModuleCache entry).
  friend bool operator==(const Module &a, const Module &b) { return a.state_ == b.state_; }
  /// Different loaded modules (even when loaded from the same bytes).
  friend bool operator!=(const Module &a, const Module &b) { return !(a == b); }

private:
  explicit Module(std::shared_ptr<detail::ModuleState> state) : state_(std::move(state)) {}
  static Module load(const Device &device, const void *data, std::string label, bool isPtx);
  std::shared_ptr<detail::ModuleState> state_;
};

/// One kernel of a loaded module, with the KernelInfo used to check and launch it. Copyable;
/// keeps its module loaded.
class TLE_RT_API Kernel {
public:
  /// The metadata the kernel is launched with.
  const KernelInfo &info() const { return info_; }
  /// The device the kernel's module is loaded on.
  const Device &device() const;

  /// Checks and launches the kernel on `stream`: the argument count and each argument's C++ type
  /// against the parameter types (see checkArgType), DeviceBuffer arguments' device, the
  /// divisibility promises and the grid; then launches with block = info().block and
  /// info().sharedBytes of dynamic shared memory (cuLaunchKernel, or cuLaunchKernelEx when the
  /// kernel needs a cluster or a cooperative launch). Throws ArgumentError or DriverError.
  /// The launch is asynchronous; execution errors surface at the next synchronising call.
  template <class... Args> void launch(Grid grid, Stream &stream, Args &&...args) const {
    constexpr size_t n = sizeof...(Args);
    checkArgCount(info_, n);
    std::array<uint64_t, n ? n : 1> slots{};
    std::array<void *, n ? n : 1> ptrs{};
    size_t i = 0;
    (pack(i++, slots.data(), ptrs.data(), args), ...);
    launchChecked(grid, stream, ptrs.data(), n);
  }

  /// The launch above on a raw CUstream / cudaStream_t (nullptr: the legacy default stream), with
  /// the same checks, and that the stream belongs to the kernel's device (Device::ofStream).
  template <class... Args> void launch(Grid grid, CUstream_st *stream, Args &&...args) const {
    constexpr size_t n = sizeof...(Args);
    checkArgCount(info_, n);
    std::array<uint64_t, n ? n : 1> slots{};
    std::array<void *, n ? n : 1> ptrs{};
    size_t i = 0;
    (pack(i++, slots.data(), ptrs.data(), args), ...);
    launchOnRawStream(grid, stream, ptrs.data(), n);
  }

  /// Launches with pre-packed arguments: `args[i]` points to the value of parameter i (the
  /// parameter's argBytes() are read). Checks the count, the divisibility promises and the grid,
  /// not the C++ types.
  void launchRaw(Grid grid, Stream &stream, void **args, size_t numArgs) const;
  /// launchRaw on a raw CUstream / cudaStream_t of the kernel's device (checked as launch does).
  void launchRaw(Grid grid, CUstream_st *stream, void **args, size_t numArgs) const;

  /// Adds the launch that launch(grid, stream, args...) would make as a kernel node of CUDA graph
  /// `graph` (a CUgraph / cudaGraph_t: Graph::graph(), or a graph the engine builds with the CUDA
  /// runtime), after the nodes `deps` (cuGraphAddKernelNode_v2; a cluster or cooperative kernel's
  /// node gets those launch attributes, cuGraphKernelNodeSetAttribute). The checks are launch's:
  /// argument count and C++ types, divisibility promises, grid, cluster multiple, co-residency.
  /// The driver copies the argument values (and the TMA descriptors built from them) into the
  /// node, so they may change after the call; the memory pointer arguments address must stay
  /// allocated while the graph may run. Nothing is loaded (the kernel is). Returns the new node.
  /// Throws ArgumentError (a failed check, a null graph or dependency), Error when the driver
  /// lacks the graph-building entry points, DriverError when the driver refuses the node (e.g. a
  /// dependency that is not a node of `graph`).
  template <class... Args> GraphNode addNode(Grid grid, CUgraph_st *graph, GraphDeps deps, Args &&...args) const {
    constexpr size_t n = sizeof...(Args);
    checkArgCount(info_, n);
    std::array<uint64_t, n ? n : 1> slots{};
    std::array<void *, n ? n : 1> ptrs{};
    size_t i = 0;
    (pack(i++, slots.data(), ptrs.data(), args), ...);
    return addNodeChecked(grid, graph, deps, ptrs.data(), n);
  }
  /// addNode on a Graph (from Graph::create, or a capture), which must be of the kernel's device
  /// (ArgumentError otherwise).
  template <class... Args> GraphNode addNode(Grid grid, Graph &graph, GraphDeps deps, Args &&...args) const {
    checkGraphDevice(graph);
    return addNode(grid, graph.graph(), deps, std::forward<Args>(args)...);
  }
  /// addNode with pre-packed arguments (`args[i]` points to the value of parameter i), checked as
  /// launchRaw checks them (count, null pointers, divisibility, grid).
  GraphNode addNodeRaw(Grid grid, CUgraph_st *graph, GraphDeps deps, void **args, size_t numArgs) const;
  /// addNodeRaw on a Graph of the kernel's device.
  GraphNode addNodeRaw(Grid grid, Graph &graph, GraphDeps deps, void **args, size_t numArgs) const;

  /// Registers per thread (CU_FUNC_ATTRIBUTE_NUM_REGS).
  int numRegisters() const;
  /// The largest block the kernel can be launched with (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).
  int maxThreadsPerBlock() const;
  /// Static shared memory, bytes (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES).
  int staticSharedBytes() const;
  /// Local (spill) memory per thread, bytes (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES).
  int localBytes() const;
  /// The CUfunction handle.
  void *function() const { return function_; }
  /// The most CTAs of this kernel that can be resident on its device at once, with its block and
  /// dynamic shared memory: cuOccupancyMaxActiveBlocksPerMultiprocessor times the SM count (what
  /// a cooperative launch's grid may hold); -1 when the driver lacks the occupancy call.
  long long maxCoResidentBlocks() const;

private:
  friend class Module;
  friend class Communicator; // Communicator::launchAll checks every rank's launch before any
  Kernel(std::shared_ptr<detail::ModuleState> module, void *function, KernelInfo info)
      : module_(std::move(module)), function_(function), info_(std::move(info)) {}

  template <class T> void pack(size_t i, uint64_t *slots, void **ptrs, const T &arg) const {
    constexpr ArgDesc desc = argDescOf<T>();
    checkArgType(info_, i, desc);
    using U = std::remove_cv_t<std::remove_reference_t<T>>;
    if constexpr (std::is_same_v<U, DeviceBuffer>) {
      checkBuffer(i, arg);
      slots[i] = arg.address();
    } else if constexpr (std::is_same_v<U, DevicePtr>) {
      slots[i] = arg.address;
    } else if constexpr (std::is_pointer_v<U>) {
      slots[i] = reinterpret_cast<uintptr_t>(arg);
    } else if constexpr (std::is_same_v<U, TensorMap>) {
      // 128 bytes: the driver copies them from the caller's object, alive for the whole call.
      ptrs[i] = const_cast<TensorMap *>(&arg);
      return;
    } else {
      std::memcpy(&slots[i], &arg, sizeof(U));
    }
    ptrs[i] = &slots[i];
  }
  void checkBuffer(size_t index, const DeviceBuffer &buffer) const;
  /// Throws ArgumentError unless `args` holds numArgs non-null argument pointers.
  void checkRawArgs(void **args, size_t numArgs) const;
  /// Throws ArgumentError unless `graph` is a graph of the kernel's device.
  void checkGraphDevice(const Graph &graph) const;
  /// The checks every launch and graph node makes after the C++ types: the divisibility
  /// promises, then (the device's context current) the TMA descriptors built into `maps` and
  /// appended to the arguments in `withMaps` (the argument array to pass is returned), the grid,
  /// the cluster multiple and a cooperative grid's co-residency.
  void **prepareLaunch(Grid grid, void **args, size_t numArgs, std::vector<TensorMap> &maps,
                       std::vector<void *> &withMaps) const;
  GraphNode addNodeChecked(Grid grid, CUgraph_st *graph, GraphDeps deps, void **args, size_t numArgs) const;
  void launchChecked(Grid grid, Stream &stream, void **args, size_t numArgs) const;
  void launchOnRawStream(Grid grid, CUstream_st *stream, void **args, size_t numArgs) const;
  void launchOnHandle(Grid grid, void *stream, void **args, size_t numArgs) const;
  /// Throws ArgumentError when a cooperative launch of `grid` would need more CTAs at once than
  /// maxCoResidentBlocks() (its grid barriers would wait forever).
  void checkCoResident(Grid grid) const;
  int attribute(int attr) const;

  std::shared_ptr<detail::ModuleState> module_;
  void *function_ = nullptr;
  KernelInfo info_;
};

} // namespace tle::rt
