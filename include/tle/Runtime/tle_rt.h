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
  TLE_RT_ERROR_OTHER = 5             /**< anything else (unreadable file, ...) */
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

/** Loads an in-memory cubin/fatbin image of `size` bytes, or NUL-terminated PTX text (size ignored
 * when it does not start with the ELF or fatbin magic). */
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
 * Launches `kernel` on grid (grid_x, grid_y, grid_z) on CUstream `stream` (NULL: the legacy
 * default stream) of the kernel's device. args[i] points to the value of parameter i: an 8-byte
 * CUdeviceptr for pointer parameters, a value of the parameter's natural size for scalars.
 * Checks num_args, the divisibility promises and the grid before launching (asynchronously).
 */
TLE_RT_C_API tle_rt_status tle_rt_launch(tle_rt_kernel kernel, unsigned grid_x, unsigned grid_y,
                                         unsigned grid_z, void *stream, void **args,
                                         size_t num_args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TLE_RT_H */
