/* Checks that tle_rt.h is valid C (C11, -pedantic) and that its declarations can be used from C code. */
#include "tle/Runtime/tle_rt.h"

/* Returns the number of C ABI entry points referenced through typed function pointers (36). */
int tle_rt_c_header_check(void) {
  const char *(*last_error)(void) = tle_rt_last_error;
  tle_rt_status (*device_count)(int *) = tle_rt_device_count;
  tle_rt_status (*device_synchronize)(int) = tle_rt_device_synchronize;
  tle_rt_status (*device_context)(int, void **) = tle_rt_device_context;
  tle_rt_status (*load_file)(int, const char *, tle_rt_module *) = tle_rt_module_load_file;
  tle_rt_status (*load_data)(int, const void *, size_t, tle_rt_module *) = tle_rt_module_load_data;
  void (*unload)(tle_rt_module) = tle_rt_module_unload;
  const char *(*metadata)(tle_rt_module) = tle_rt_module_metadata;
  tle_rt_status (*get_kernel)(tle_rt_module, const char *, tle_rt_kernel *) = tle_rt_module_get_kernel;
  void (*release)(tle_rt_kernel) = tle_rt_kernel_release;
  size_t (*num_params)(tle_rt_kernel) = tle_rt_kernel_num_params;
  const char *(*param_name)(tle_rt_kernel, size_t) = tle_rt_kernel_param_name;
  const char *(*param_type)(tle_rt_kernel, size_t) = tle_rt_kernel_param_type;
  unsigned (*block_threads)(tle_rt_kernel) = tle_rt_kernel_block_threads;
  unsigned (*shared_bytes)(tle_rt_kernel) = tle_rt_kernel_shared_bytes;
  tle_rt_status (*launch)(tle_rt_kernel, unsigned, unsigned, unsigned, void *, void **, size_t) = tle_rt_launch;
  tle_rt_status (*cache_create)(size_t, tle_rt_module_cache *) = tle_rt_module_cache_create;
  void (*cache_destroy)(tle_rt_module_cache) = tle_rt_module_cache_destroy;
  tle_rt_status (*cache_get)(tle_rt_module_cache, int, const void *, size_t, tle_rt_module *) =
      tle_rt_module_cache_get;
  tle_rt_status (*cache_evict)(tle_rt_module_cache, int, const void *, size_t, int *) =
      tle_rt_module_cache_evict;
  size_t (*cache_clear)(tle_rt_module_cache) = tle_rt_module_cache_clear;
  tle_rt_status (*cache_stats)(tle_rt_module_cache, tle_rt_module_cache_stats *) =
      tle_rt_module_cache_get_stats;
  tle_rt_status (*encode_tiled)(void *, const char *, unsigned, uint64_t, const int64_t *,
                                const int64_t *, const int64_t *, const int64_t *, int, int, int,
                                int) = tle_rt_tensor_map_encode_tiled;
  tle_rt_status (*comm_id)(tle_rt_comm_unique_id *) = tle_rt_comm_unique_id_get;
  tle_rt_status (*comm_init_rank)(const tle_rt_comm_unique_id *, int, int, int, tle_rt_comm *) =
      tle_rt_comm_init_rank;
  tle_rt_status (*comm_init_all)(const int *, int, tle_rt_comm *) = tle_rt_comm_init_all;
  void (*comm_destroy)(tle_rt_comm) = tle_rt_comm_destroy;
  int (*comm_rank)(tle_rt_comm) = tle_rt_comm_rank;
  int (*comm_size)(tle_rt_comm) = tle_rt_comm_size;
  uint64_t (*comm_device_comm)(tle_rt_comm) = tle_rt_comm_device_comm;
  tle_rt_status (*comm_alloc)(tle_rt_comm, size_t, tle_rt_symmetric *) = tle_rt_comm_alloc_symmetric;
  tle_rt_status (*comm_alloc_all)(tle_rt_comm *, int, size_t, tle_rt_symmetric *) =
      tle_rt_comm_alloc_symmetric_all;
  void (*sym_free)(tle_rt_symmetric) = tle_rt_symmetric_free;
  uint64_t (*sym_address)(tle_rt_symmetric) = tle_rt_symmetric_address;
  uint64_t (*sym_window)(tle_rt_symmetric) = tle_rt_symmetric_window;
  size_t (*sym_bytes)(tle_rt_symmetric) = tle_rt_symmetric_bytes;
  int comm_entries = !!comm_id + !!comm_init_rank + !!comm_init_all + !!comm_destroy + !!comm_rank +
                     !!comm_size + !!comm_device_comm + !!comm_alloc + !!comm_alloc_all + !!sym_free +
                     !!sym_address + !!sym_window + !!sym_bytes;
  return comm_entries + !!cache_create + !!cache_destroy + !!cache_get + !!cache_evict + !!cache_clear +
         !!cache_stats + !!encode_tiled + !!last_error + !!device_count + !!device_synchronize + !!device_context + !!load_file +
         !!load_data + !!unload + !!metadata + !!get_kernel + !!release + !!num_params +
         !!param_name + !!param_type + !!block_threads + !!shared_bytes + !!launch;
}
