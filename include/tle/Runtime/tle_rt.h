/* libtle_rt C ABI: load tlec-emitted modules, look up kernels and launch them with void** arguments. */
/*
 * A minimal C interface over the C++ API in Runtime.h, for engines written in C or binding from
 * other languages. Every function that can fail returns a tle_rt_status; on failure the message
 * (the same sentence the C++ exception carries) is available from tle_rt_last_error() on the
 * calling thread until the next failing call on that thread. Device memory and streams are the
 * caller's (e.g. from the CUDA runtime): pass CUdeviceptr values and CUstream handles.
 */
#ifndef TLE_RT_H
#define TLE_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TLE_RT_C_API __attribute__((visibility("default")))

/** Result of every fallible call. */
typedef enum tle_rt_status {
  TLE_RT_SUCCESS = 0,
  TLE_RT_ERROR_NO_DRIVER = 1,        /**< libcuda.so.1 cannot be loaded or cuInit failed */
  TLE_RT_ERROR_DRIVER = 2,           /**< a CUDA driver call failed */
  TLE_RT_ERROR_METADATA = 3,         /**< missing or malformed __tle_metadata, unknown kernel */
  TLE_RT_ERROR_INVALID_ARGUMENT = 4, /**< bad argument count, divisibility, grid, null handle */
  TLE_RT_ERROR_OTHER = 5,            /**< anything else (unreadable file, ...) */
  TLE_RT_ERROR_NO_NCCL = 6,          /**< libnccl.so.2 cannot be loaded or is older than 2.27 */
  TLE_RT_ERROR_NCCL = 7              /**< an NCCL call failed */
} tle_rt_status;

/** A loaded module (owns the CUmodule). */
typedef struct tle_rt_module_st *tle_rt_module;
/** A kernel of a module; keeps its module loaded until released. */
typedef struct tle_rt_kernel_st *tle_rt_kernel;

/** The message of the last failure on this thread ("" when none). Valid until the next failure. */
TLE_RT_C_API const char *tle_rt_last_error(void);

/** Number of CUDA devices into *count. TLE_RT_ERROR_NO_DRIVER when the driver cannot be used. */
TLE_RT_C_API tle_rt_status tle_rt_device_count(int *count);

/** Waits for all work on device `device`'s primary context. */
TLE_RT_C_API tle_rt_status tle_rt_device_synchronize(int device);

/** The primary CUcontext of device `device` (retained by libtle_rt) into *context. */
TLE_RT_C_API tle_rt_status tle_rt_device_context(int device, void **context);

/** Loads a cubin, fatbin or PTX file on device `device` (its primary context). */
TLE_RT_C_API tle_rt_status tle_rt_module_load_file(int device, const char *path, tle_rt_module *out);

/** Loads an in-memory cubin/fatbin image of `size` bytes, or PTX text when it does not start with
 * the ELF or fatbin magic: NUL-terminated when `size` is 0, else read up to its NUL but no further
 * than `size` bytes. */
TLE_RT_C_API tle_rt_status tle_rt_module_load_data(int device, const void *data, size_t size,
                                                   tle_rt_module *out);

/** Releases the module handle (the CUmodule is unloaded once no kernel refers to it). NULL is ok. */
TLE_RT_C_API void tle_rt_module_unload(tle_rt_module module);

/** The module's __tle_metadata JSON text, or NULL when it has none. Owned by the module. */
TLE_RT_C_API const char *tle_rt_module_metadata(tle_rt_module module);

/** Looks up kernel `name` in the module's metadata and resolves its entry point. */
TLE_RT_C_API tle_rt_status tle_rt_module_get_kernel(tle_rt_module module, const char *name,
                                                    tle_rt_kernel *out);

/** Releases a kernel handle. NULL is ok. */
TLE_RT_C_API void tle_rt_kernel_release(tle_rt_kernel kernel);

/** Number of runtime parameters (the length of the args array tle_rt_launch expects). */
TLE_RT_C_API size_t tle_rt_kernel_num_params(tle_rt_kernel kernel);

/** Name of parameter `index`, or NULL when out of range. Owned by the kernel. */
TLE_RT_C_API const char *tle_rt_kernel_param_name(tle_rt_kernel kernel, size_t index);

/** Type spelling of parameter `index` ("*fp32", "i32", ...), or NULL. Owned by the kernel. */
TLE_RT_C_API const char *tle_rt_kernel_param_type(tle_rt_kernel kernel, size_t index);

/** Threads per block the kernel is launched with (32 * num_warps). */
TLE_RT_C_API unsigned tle_rt_kernel_block_threads(tle_rt_kernel kernel);

/** Dynamic shared memory per block, bytes, the kernel is launched with. */
TLE_RT_C_API unsigned tle_rt_kernel_shared_bytes(tle_rt_kernel kernel);

/**
 * Launches `kernel` on grid (grid_x, grid_y, grid_z) on CUstream / cudaStream_t `stream` (NULL:
 * the legacy default stream), which must belong to the kernel's device's primary context (checked).
 * args[i] points to the value of parameter i: an 8-byte CUdeviceptr for pointer parameters, a value of the parameter's natural size for scalars.
 * Checks num_args, the divisibility promises and the grid before launching (asynchronously).
 */
TLE_RT_C_API tle_rt_status tle_rt_launch(tle_rt_kernel kernel, unsigned grid_x, unsigned grid_y,
                                         unsigned grid_z, void *stream, void **args,
                                         size_t num_args);

/** The ordinal of the device whose primary context CUstream `stream` belongs to into *device
 * (NULL and the CU_STREAM_LEGACY / CU_STREAM_PER_THREAD handles: the device of the calling
 * thread's current context, 0 when none). TLE_RT_ERROR_INVALID_ARGUMENT when the stream's context
 * is not a primary context. */
TLE_RT_C_API tle_rt_status tle_rt_stream_device(void *stream, int *device);

/** *capturing = 1 while CUstream `stream` is being captured into a CUDA graph (where loading a
 * module is not allowed), else 0. */
TLE_RT_C_API tle_rt_status tle_rt_stream_is_capturing(void *stream, int *capturing);

/* ---- CUDA graphs built node by node (C++: tle::rt::Kernel::addNode, docs/runtime.md) ---- */

/**
 * Adds the launch tle_rt_launch would make as a kernel node of CUDA graph `graph` (a CUgraph /
 * cudaGraph_t the caller built) after the `num_deps` nodes at `deps` (CUgraphNode /
 * cudaGraphNode_t values; NULL when num_deps is 0), with the same checks (num_args, null
 * arguments, divisibility promises, grid); the new CUgraphNode into *node. The driver copies the
 * argument values into the node; the memory they address must stay allocated while the graph
 * may run. TLE_RT_ERROR_INVALID_ARGUMENT for a failed check or a NULL graph, dependency or node;
 * TLE_RT_ERROR_OTHER when the driver lacks cuGraphAddKernelNode_v2 (CUDA 12.0+);
 * TLE_RT_ERROR_DRIVER when the driver refuses the node.
 */
TLE_RT_C_API tle_rt_status tle_rt_graph_add_kernel_node(tle_rt_kernel kernel, void *graph, void *const *deps,
                                                        size_t num_deps, unsigned grid_x, unsigned grid_y,
                                                        unsigned grid_z, void **args, size_t num_args, void **node);

/** Adds an empty node (cuGraphAddEmptyNode) after the `num_deps` nodes at `deps` to CUDA graph
 * `graph`; the new CUgraphNode into *node. Errors as tle_rt_graph_add_kernel_node. */
TLE_RT_C_API tle_rt_status tle_rt_graph_add_empty_node(void *graph, void *const *deps, size_t num_deps, void **node);

/* ---- Content-keyed module cache (C++: tle::rt::ModuleCache, include/tle/Runtime/ModuleCache.h) ---- */

/** A thread-safe cache of loaded modules keyed by (device, image kind, SHA-256 of the bytes). */
typedef struct tle_rt_module_cache_st *tle_rt_module_cache;

/** Counters of a module cache (see tle::rt::ModuleCacheStats). */
typedef struct tle_rt_module_cache_stats {
  uint64_t hits;      /**< gets answered from a loaded entry */
  uint64_t joins;     /**< gets that waited for another thread's load of the same key */
  uint64_t misses;    /**< gets that loaded the image (one driver module load each) */
  uint64_t failures;  /**< of those loads, the ones that failed (nothing cached) */
  uint64_t evictions; /**< loaded entries dropped by evict, clear or the capacity */
  size_t entries;     /**< loaded entries held now */
  size_t loading;     /**< loads in flight now */
} tle_rt_module_cache_stats;

/** Creates an empty cache holding at most `capacity` loaded modules (0 = unbounded; beyond the
 * capacity the least recently used entries are dropped). */
TLE_RT_C_API tle_rt_status tle_rt_module_cache_create(size_t capacity, tle_rt_module_cache *out);

/** Destroys a cache made by tle_rt_module_cache_create (no get may be in flight). Modules
 * obtained from it stay loaded until their handles are unloaded. NULL is ok. */
TLE_RT_C_API void tle_rt_module_cache_destroy(tle_rt_module_cache cache);

/**
 * The module for image `data` on device `device`, loaded on the first request and shared after:
 * a cubin/fatbin image of `size` bytes, or PTX text: NUL-terminated when `size` is 0, else read
 * up to its NUL but no further than `size` bytes. `cache` NULL means the process-wide cache. Concurrent calls for the
 * same image load it once. A failed load is not cached. Release *out with tle_rt_module_unload
 * (the cached module itself stays loaded while the cache holds it).
 */
TLE_RT_C_API tle_rt_status tle_rt_module_cache_get(tle_rt_module_cache cache, int device,
                                                   const void *data, size_t size,
                                                   tle_rt_module *out);

/** Drops the entry for image `data` (as in tle_rt_module_cache_get) on `device`; *evicted (may
 * be NULL) is set to 1 when there was one, else 0. */
TLE_RT_C_API tle_rt_status tle_rt_module_cache_evict(tle_rt_module_cache cache, int device,
                                                     const void *data, size_t size, int *evicted);

/** Drops every entry of `cache` (NULL: the process-wide cache); returns how many. */
TLE_RT_C_API size_t tle_rt_module_cache_clear(tle_rt_module_cache cache);

/** The counters of `cache` (NULL: the process-wide cache) into *out. */
TLE_RT_C_API tle_rt_status tle_rt_module_cache_get_stats(tle_rt_module_cache cache,
                                                         tle_rt_module_cache_stats *out);

/* ---- TMA descriptors (C++: tle::rt::encodeTensorMapTiled, include/tle/Runtime/TensorMap.h) ---- */

/**
 * Encodes a tiled TMA descriptor (CUtensorMap, 128 bytes) into `tensor_map`, which must be
 * 64-byte aligned, with cuTensorMapEncodeTiled after checking every rule the CUDA driver API
 * reference states for it. `dtype` is a runtime type name ("fp16", "bf16", "fp32", "i8", ...);
 * `shape`, `strides` (elements; strides[rank-1] must be 1), `box` and `element_strides` (NULL:
 * all 1) have `rank` entries, outermost dimension first. `interleave` (0 none, 1 16B, 2 32B),
 * `swizzle` (0 none, 1 32B, 2 64B, 3 128B), `l2_promotion` (0 none, 1 64B, 2 128B, 3 256B) and
 * `oob_fill` (0 zeros, 1 NaN request zero FMA) are the driver's enum values.
 * TLE_RT_ERROR_INVALID_ARGUMENT names the broken rule; pass the result for a "nvTmaDesc"
 * parameter (args[i] = tensor_map).
 */
TLE_RT_C_API tle_rt_status tle_rt_tensor_map_encode_tiled(
    void *tensor_map, const char *dtype, unsigned rank, uint64_t global_address,
    const int64_t *shape, const int64_t *strides, const int64_t *box,
    const int64_t *element_strides, int interleave, int swizzle, int l2_promotion, int oob_fill);

/* ---- Communicators (C++: tle::rt::Communicator, include/tle/Runtime/Communicator.h) ---- */

/** One GPU's NCCL communicator, its signal area and its device record. */
typedef struct tle_rt_comm_st *tle_rt_comm;
/** A symmetric buffer (every rank's copy, one NCCL window) of a communicator. */
typedef struct tle_rt_symmetric_st *tle_rt_symmetric;
/** The 128-byte NCCL unique id that names a communicator group. */
typedef struct tle_rt_comm_unique_id {
  char internal[128];
} tle_rt_comm_unique_id;

/** A fresh group name (ncclGetUniqueId) into *id, to send to the other ranks.
 * TLE_RT_ERROR_NO_NCCL when NCCL cannot be loaded, TLE_RT_ERROR_NCCL when the call fails. */
TLE_RT_C_API tle_rt_status tle_rt_comm_unique_id_get(tle_rt_comm_unique_id *id);

/** Joins group *id as rank `rank` of `nranks` on device `device`; collective (returns once every
 * rank has joined). Release *out with tle_rt_comm_destroy. */
TLE_RT_C_API tle_rt_status tle_rt_comm_init_rank(const tle_rt_comm_unique_id *id, int nranks, int rank,
                                                 int device, tle_rt_comm *out);

/** One communicator per device of devices[0..ndev) (ncclCommInitAll; rank i on devices[i]) into
 * out[0..ndev), for one thread driving every GPU. */
TLE_RT_C_API tle_rt_status tle_rt_comm_init_all(const int *devices, int ndev, tle_rt_comm *out);

/** Destroys the communicator handle (the NCCL communicator goes once its symmetric buffers are
 * freed too). NULL is ok. */
TLE_RT_C_API void tle_rt_comm_destroy(tle_rt_comm comm);

/** The communicator's rank, -1 for NULL. */
TLE_RT_C_API int tle_rt_comm_rank(tle_rt_comm comm);

/** The number of ranks, 0 for NULL. */
TLE_RT_C_API int tle_rt_comm_size(tle_rt_comm comm);

/** The device address of the 32-byte device record (the `device_dptr` kernel argument; layout in
 * docs/runtime.md), 0 for NULL. */
TLE_RT_C_API uint64_t tle_rt_comm_device_comm(tle_rt_comm comm);

/** Allocates `bytes` zero-filled bytes on every rank as one symmetric window; collective (every
 * rank calls it with the same size, each from its own thread or process). */
TLE_RT_C_API tle_rt_status tle_rt_comm_alloc_symmetric(tle_rt_comm comm, size_t bytes, tle_rt_symmetric *out);

/** tle_rt_comm_alloc_symmetric for the `n` communicators comms[0..n) of one group from one
 * thread (the registrations grouped); buffer i into out[i]. */
TLE_RT_C_API tle_rt_status tle_rt_comm_alloc_symmetric_all(tle_rt_comm *comms, int n, size_t bytes,
                                                           tle_rt_symmetric *out);

/** Deregisters and frees a symmetric buffer. NULL is ok. */
TLE_RT_C_API void tle_rt_symmetric_free(tle_rt_symmetric buffer);

/** This rank's copy (a CUdeviceptr), 0 for NULL. */
TLE_RT_C_API uint64_t tle_rt_symmetric_address(tle_rt_symmetric buffer);

/** The device address of the buffer's window record (ncclWindow_t), 0 for NULL. */
TLE_RT_C_API uint64_t tle_rt_symmetric_window(tle_rt_symmetric buffer);

/** The size of each rank's copy in bytes, 0 for NULL. */
TLE_RT_C_API size_t tle_rt_symmetric_bytes(tle_rt_symmetric buffer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TLE_RT_H */
