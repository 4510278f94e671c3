// The C ABI (tle_rt.h) over the C++ runtime: handles wrap C++ objects, exceptions become status codes.
#include "tle/Runtime/tle_rt.h"
#include "ModuleImage.h"

#include "tle/Runtime/Communicator.h"
#include "tle/Runtime/ModuleCache.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/TensorMap.h"

#include <cstring>
#include <map>
#include <mutex>

using namespace tle::rt;

struct tle_rt_module_st {
  Module module;
};

struct tle_rt_module_cache_st {
  ModuleCache cache;
  explicit tle_rt_module_cache_st(size_t capacity) : cache(capacity) {}
};

struct tle_rt_comm_st {
  Communicator comm;
};

struct tle_rt_symmetric_st {
  SymmetricBuffer buffer;
};

struct tle_rt_kernel_st {
  Kernel kernel;
  std::vector<std::string> typeNames;
};

namespace {

thread_local std::string lastError;

tle_rt_status fail(tle_rt_status status, const char *message) {
  lastError = message;
  return status;
}

// Runs `body`, mapping each exception type to its status.
template <class F> tle_rt_status guarded(F &&body) {
  try {
    body();
    return TLE_RT_SUCCESS;
  } catch (const NoNcclError &e) {
    return fail(TLE_RT_ERROR_NO_NCCL, e.what());
  } catch (const NcclError &e) {
    return fail(TLE_RT_ERROR_NCCL, e.what());
  } catch (const NoDriverError &e) {
    return fail(TLE_RT_ERROR_NO_DRIVER, e.what());
  } catch (const DriverError &e) {
    return fail(TLE_RT_ERROR_DRIVER, e.what());
  } catch (const MetadataError &e) {
    return fail(TLE_RT_ERROR_METADATA, e.what());
  } catch (const ArgumentError &e) {
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::exception &e) {
    return fail(TLE_RT_ERROR_OTHER, e.what());
  } catch (...) {
    return fail(TLE_RT_ERROR_OTHER, "libtle_rt: unknown exception");
  }
}

// The C API keeps one Device (and so one retained primary context) per ordinal for the process.
Device &deviceFor(int ordinal) {
  static std::mutex mutex;
  static std::map<int, Device> devices;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = devices.find(ordinal);
  if (it == devices.end())
    it = devices.emplace(ordinal, Device(ordinal)).first;
  return it->second;
}

} // namespace

extern "C" {

const char *tle_rt_last_error(void) { return lastError.c_str(); }

tle_rt_status tle_rt_device_count(int *count) {
  if (!count)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_device_count: count is NULL");
  return guarded([&] { *count = Device::count(); });
}

tle_rt_status tle_rt_device_synchronize(int device) {
  return guarded([&] { deviceFor(device).synchronize(); });
}

tle_rt_status tle_rt_device_context(int device, void **context) {
  if (!context)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_device_context: context is NULL");
  return guarded([&] { *context = deviceFor(device).context(); });
}

tle_rt_status tle_rt_module_load_file(int device, const char *path, tle_rt_module *out) {
  if (!path || !out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_module_load_file: path or out is NULL");
  *out = nullptr;
  return guarded([&] { *out = new tle_rt_module_st{Module::fromFile(deviceFor(device), path)}; });
}

namespace {
// The kind and byte range of a C image argument. PTX: the text up to its NUL, read no further
// than `size` bytes when size is not 0 (a text of exactly `size` bytes needs no NUL).
std::pair<ImageKind, size_t> imageOf(const void *data, size_t size) {
  if (detail::isBinaryImage(data, size))
    return {ImageKind::Binary, size};
  const char *text = static_cast<const char *>(data);
  return {ImageKind::Ptx, size ? strnlen(text, size) : std::strlen(text)};
}
} // namespace

tle_rt_status tle_rt_module_load_data(int device, const void *data, size_t size, tle_rt_module *out) {
  if (!data || !out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_module_load_data: data or out is NULL");
  *out = nullptr;
  return guarded([&] {
    Device &d = deviceFor(device);
    auto [kind, bytes] = imageOf(data, size);
    if (kind == ImageKind::Binary)
      *out = new tle_rt_module_st{Module::fromImage(d, data, bytes)};
    else
      *out = new tle_rt_module_st{Module::fromPtx(d, std::string_view(static_cast<const char *>(data), bytes))};
  });
}

void tle_rt_module_unload(tle_rt_module module) { delete module; }

const char *tle_rt_module_metadata(tle_rt_module module) {
  if (!module || !module->module.hasMetadata())
    return nullptr;
  return module->module.info().json.c_str();
}

tle_rt_status tle_rt_module_get_kernel(tle_rt_module module, const char *name, tle_rt_kernel *out) {
  if (!module || !name || !out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_module_get_kernel: module, name or out is NULL");
  *out = nullptr;
  return guarded([&] {
    Kernel k = module->module.kernel(name);
    std::vector<std::string> types;
    for (const ParamInfo &p : k.info().params)
      types.push_back(p.type.str());
    *out = new tle_rt_kernel_st{std::move(k), std::move(types)};
  });
}

void tle_rt_kernel_release(tle_rt_kernel kernel) { delete kernel; }

size_t tle_rt_kernel_num_params(tle_rt_kernel kernel) {
  return kernel ? kernel->kernel.info().params.size() : 0;
}

const char *tle_rt_kernel_param_name(tle_rt_kernel kernel, size_t index) {
  if (!kernel || index >= kernel->kernel.info().params.size())
    return nullptr;
  return kernel->kernel.info().params[index].name.c_str();
}

const char *tle_rt_kernel_param_type(tle_rt_kernel kernel, size_t index) {
  if (!kernel || index >= kernel->typeNames.size())
    return nullptr;
  return kernel->typeNames[index].c_str();
}

unsigned tle_rt_kernel_block_threads(tle_rt_kernel kernel) {
  return kernel ? kernel->kernel.info().threadsPerBlock() : 0;
}

unsigned tle_rt_kernel_shared_bytes(tle_rt_kernel kernel) {
  return kernel ? kernel->kernel.info().sharedBytes : 0;
}

tle_rt_status tle_rt_launch(tle_rt_kernel kernel, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                            void *stream, void **args, size_t num_args) {
  if (!kernel)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_launch: kernel is NULL");
  return guarded([&] {
    kernel->kernel.launchRaw(Grid(grid_x, grid_y, grid_z), static_cast<CUstream_st *>(stream), args,
                             num_args);
  });
}

tle_rt_status tle_rt_stream_device(void *stream, int *device) {
  if (!device)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_stream_device: device is NULL");
  return guarded([&] { *device = Device::ofStream(static_cast<CUstream_st *>(stream)).ordinal(); });
}

tle_rt_status tle_rt_stream_is_capturing(void *stream, int *capturing) {
  if (!capturing)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_stream_is_capturing: capturing is NULL");
  return guarded([&] { *capturing = Stream::wrap(static_cast<CUstream_st *>(stream)).isCapturing() ? 1 : 0; });
}

tle_rt_status tle_rt_graph_add_kernel_node(tle_rt_kernel kernel, void *graph, void *const *deps, size_t num_deps,
                                           unsigned grid_x, unsigned grid_y, unsigned grid_z, void **args,
                                           size_t num_args, void **node) {
  if (!kernel || !node)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_graph_add_kernel_node: kernel or node is NULL");
  *node = nullptr;
  return guarded([&] {
    GraphDeps d(reinterpret_cast<const GraphNode *>(deps), num_deps);
    *node = kernel->kernel.addNodeRaw(Grid(grid_x, grid_y, grid_z), static_cast<CUgraph_st *>(graph), d, args,
                                      num_args);
  });
}

tle_rt_status tle_rt_graph_add_empty_node(void *graph, void *const *deps, size_t num_deps, void **node) {
  if (!node)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_graph_add_empty_node: node is NULL");
  *node = nullptr;
  return guarded([&] {
    *node = addEmptyGraphNode(static_cast<CUgraph_st *>(graph),
                              GraphDeps(reinterpret_cast<const GraphNode *>(deps), num_deps));
  });
}

namespace {
ModuleCache &cacheOf(tle_rt_module_cache cache) { return cache ? cache->cache : ModuleCache::global(); }

} // namespace

tle_rt_status tle_rt_module_cache_create(size_t capacity, tle_rt_module_cache *out) {
  if (!out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_module_cache_create: out is NULL");
  *out = nullptr;
  return guarded([&] { *out = new tle_rt_module_cache_st(capacity); });
}

void tle_rt_module_cache_destroy(tle_rt_module_cache cache) { delete cache; }

tle_rt_status tle_rt_module_cache_get(tle_rt_module_cache cache, int device, const void *data,
                                      size_t size, tle_rt_module *out) {
  if (!data || !out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_module_cache_get: data or out is NULL");
  *out = nullptr;
  return guarded([&] {
    auto [kind, bytes] = imageOf(data, size);
    *out = new tle_rt_module_st{cacheOf(cache).get(deviceFor(device), kind, data, bytes)};
  });
}

tle_rt_status tle_rt_module_cache_evict(tle_rt_module_cache cache, int device, const void *data,
                                        size_t size, int *evicted) {
  if (evicted)
    *evicted = 0;
  if (!data)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_module_cache_evict: data is NULL");
  return guarded([&] {
    auto [kind, bytes] = imageOf(data, size);
    bool dropped = cacheOf(cache).evict(deviceFor(device), kind, data, bytes);
    if (evicted)
      *evicted = dropped ? 1 : 0;
  });
}

size_t tle_rt_module_cache_clear(tle_rt_module_cache cache) { return cacheOf(cache).clear(); }

tle_rt_status tle_rt_module_cache_get_stats(tle_rt_module_cache cache, tle_rt_module_cache_stats *out) {
  if (!out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_module_cache_get_stats: out is NULL");
  ModuleCacheStats s = cacheOf(cache).stats();
  *out = tle_rt_module_cache_stats{s.hits, s.joins, s.misses, s.failures, s.evictions, s.entries,
                                   s.loading};
  return TLE_RT_SUCCESS;
}

tle_rt_status tle_rt_tensor_map_encode_tiled(void *tensor_map, const char *dtype, unsigned rank,
                                             uint64_t global_address, const int64_t *shape,
                                             const int64_t *strides, const int64_t *box,
                                             const int64_t *element_strides, int interleave,
                                             int swizzle, int l2_promotion, int oob_fill) {
  if (!tensor_map || !dtype || !shape || !strides || !box)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT,
                "tle_rt_tensor_map_encode_tiled: tensor_map, dtype, shape, strides or box is NULL");
  if (reinterpret_cast<uintptr_t>(tensor_map) % 64)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT,
                "tle_rt_tensor_map_encode_tiled: tensor_map is not 64-byte aligned");
  if (rank > 5)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT,
                ("encodeTensorMapTiled: rank " + std::to_string(rank) +
                 " is not in 1..5 (the ranks cuTensorMapEncodeTiled supports)").c_str());
  return guarded([&] {
    TensorMapDesc d;
    d.base = DevicePtr{global_address};
    d.dtype = dtype;
    d.shape.assign(shape, shape + rank);
    d.strides.assign(strides, strides + rank);
    d.box.assign(box, box + rank);
    if (element_strides)
      d.elementStrides.assign(element_strides, element_strides + rank);
    d.interleave = TensorMapInterleave(interleave);
    d.swizzle = TensorMapSwizzle(swizzle);
    d.l2Promotion = TensorMapL2Promotion(l2_promotion);
    d.oobFill = TensorMapOobFill(oob_fill);
    TensorMap map = encodeTensorMapTiled(d);
    std::memcpy(tensor_map, &map, sizeof(map));
  });
}

// ---- Communicators ----

tle_rt_status tle_rt_comm_unique_id_get(tle_rt_comm_unique_id *id) {
  if (!id)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_comm_unique_id_get: id is NULL");
  return guarded([&] {
    UniqueId u = Communicator::uniqueId();
    std::memcpy(id->internal, u.bytes.data(), sizeof id->internal);
  });
}

tle_rt_status tle_rt_comm_init_rank(const tle_rt_comm_unique_id *id, int nranks, int rank, int device,
                                    tle_rt_comm *out) {
  if (!id || !out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_comm_init_rank: id or out is NULL");
  *out = nullptr;
  return guarded([&] {
    UniqueId u;
    std::memcpy(u.bytes.data(), id->internal, sizeof id->internal);
    *out = new tle_rt_comm_st{Communicator(u, nranks, rank, deviceFor(device))};
  });
}

tle_rt_status tle_rt_comm_init_all(const int *devices, int ndev, tle_rt_comm *out) {
  if (!devices || !out || ndev < 1)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_comm_init_all: devices or out is NULL, or ndev < 1");
  return guarded([&] {
    std::vector<Device> devs;
    for (int i = 0; i < ndev; ++i)
      devs.push_back(deviceFor(devices[i]));
    std::vector<Communicator> comms = Communicator::initAll(devs);
    for (int i = 0; i < ndev; ++i)
      out[i] = new tle_rt_comm_st{std::move(comms[size_t(i)])};
  });
}

void tle_rt_comm_destroy(tle_rt_comm comm) { delete comm; }
int tle_rt_comm_rank(tle_rt_comm comm) { return comm ? comm->comm.rank() : -1; }
int tle_rt_comm_size(tle_rt_comm comm) { return comm ? comm->comm.size() : 0; }
uint64_t tle_rt_comm_device_comm(tle_rt_comm comm) { return comm ? comm->comm.deviceComm() : 0; }

tle_rt_status tle_rt_comm_alloc_symmetric(tle_rt_comm comm, size_t bytes, tle_rt_symmetric *out) {
  if (!comm || !out)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_comm_alloc_symmetric: comm or out is NULL");
  *out = nullptr;
  return guarded([&] { *out = new tle_rt_symmetric_st{comm->comm.allocSymmetric(bytes)}; });
}

tle_rt_status tle_rt_comm_alloc_symmetric_all(tle_rt_comm *comms, int n, size_t bytes, tle_rt_symmetric *out) {
  if (!comms || !out || n < 1)
    return fail(TLE_RT_ERROR_INVALID_ARGUMENT,
                "tle_rt_comm_alloc_symmetric_all: comms or out is NULL, or n < 1");
  for (int i = 0; i < n; ++i)
    if (!comms[i])
      return fail(TLE_RT_ERROR_INVALID_ARGUMENT, "tle_rt_comm_alloc_symmetric_all: a communicator is NULL");
  // The group call needs the communicators side by side: they are moved out and back.
  std::vector<Communicator> group;
  group.reserve(size_t(n));
  for (int i = 0; i < n; ++i)
    group.push_back(std::move(comms[i]->comm));
  tle_rt_status status = guarded([&] {
    std::vector<SymmetricBuffer> bufs = Communicator::allocSymmetric(group, bytes);
    for (int i = 0; i < n; ++i)
      out[i] = new tle_rt_symmetric_st{std::move(bufs[size_t(i)])};
  });
  for (int i = 0; i < n; ++i)
    comms[i]->comm = std::move(group[size_t(i)]);
  return status;
}

void tle_rt_symmetric_free(tle_rt_symmetric buffer) { delete buffer; }
uint64_t tle_rt_symmetric_address(tle_rt_symmetric buffer) { return buffer ? buffer->buffer.address() : 0; }
uint64_t tle_rt_symmetric_window(tle_rt_symmetric buffer) { return buffer ? buffer->buffer.window() : 0; }
size_t tle_rt_symmetric_bytes(tle_rt_symmetric buffer) { return buffer ? buffer->buffer.bytes() : 0; }

} // extern "C"
