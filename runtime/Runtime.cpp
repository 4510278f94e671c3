// Devices, streams, events, device memory, modules and kernel launches over the dlopen'ed CUDA driver.
#include "tle/Runtime/Runtime.h"

#include "CudaDriver.h"
#include "ModuleImage.h"
#include "RuntimeState.h"
#include "tle/Runtime/Metadata.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <new>

namespace tle::rt {

using namespace cu;

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

Error::Error(const std::string &message) : std::runtime_error(message) {}
NoDriverError::NoDriverError(const std::string &message) : Error(message) {}
DriverError::DriverError(std::string call, int result, const std::string &message)
    : Error(message), call_(std::move(call)), result_(result) {}
MetadataError::MetadataError(const std::string &message) : Error(message) {}
ArgumentError::ArgumentError(const std::string &message) : Error(message) {}

// ---------------------------------------------------------------------------------------------
// Device
// ---------------------------------------------------------------------------------------------

namespace {

std::shared_ptr<detail::DeviceState> openDevice(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<detail::DeviceState>> open;
  const Api &a = api();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto existing = open[ordinal].lock())
    return existing;
  int count = 0;
  check(a.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw Error(fmt::format("libtle_rt: device ordinal {} is out of range ({} CUDA device{})",
                            ordinal, count, count == 1 ? "" : "s"));
  auto s = std::make_shared<detail::DeviceState>();
  s->ordinal = ordinal;
  check(a.cuDeviceGet(&s->device, ordinal), "cuDeviceGet");
  char name[256] = {};
  check(a.cuDeviceGetName(name, sizeof(name) - 1, s->device), "cuDeviceGetName");
  s->name = name;
  auto attr = [&](int which, const char *what) {
    int v = 0;
    check(a.cuDeviceGetAttribute(&v, which, s->device), fmt::format("cuDeviceGetAttribute({})", what));
    return v;
  };
  s->ccMajor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR");
  s->ccMinor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR");
  s->smCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT");
  s->l2Bytes = size_t(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE"));
  s->sharedOptin = size_t(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                               "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"));
  check(a.cuDeviceTotalMem(&s->totalMem, s->device), "cuDeviceTotalMem");
  check(a.cuDevicePrimaryCtxRetain(&s->context, s->device), "cuDevicePrimaryCtxRetain");
  open[ordinal] = s;
  return s;
}

} // namespace

bool gpuAvailable(std::string *reason) {
  try {
    if (Device::count() > 0)
      return true;
    if (reason)
      *reason = "no CUDA device is present";
  } catch (const Error &e) {
    if (reason)
      *reason = e.what();
  }
  return false;
}

int driverVersion() {
  int v = 0;
  check(api().cuDriverGetVersion(&v), "cuDriverGetVersion");
  return v;
}

int Device::count() {
  int n = 0;
  check(api().cuDeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

Device::Device(int ordinal) : state_(openDevice(ordinal)) {}
int Device::ordinal() const { return state_->ordinal; }
const std::string &Device::name() const { return state_->name; }
int Device::computeMajor() const { return state_->ccMajor; }
int Device::computeMinor() const { return state_->ccMinor; }
int Device::smCount() const { return state_->smCount; }
size_t Device::totalMemoryBytes() const { return state_->totalMem; }
size_t Device::l2CacheBytes() const { return state_->l2Bytes; }
size_t Device::maxSharedBytesPerBlockOptin() const { return state_->sharedOptin; }
void *Device::context() const { return state_->context; }
void Device::makeCurrent() const { state_->makeCurrent(); }

namespace {

/// The ordinal of the device of context `ctx` (cuCtxGetDevice with `ctx` current for the call).
int ordinalOfContext(CUcontext ctx) {
  const Api &a = api();
  CUdevice dev = 0;
  {
    detail::ScopedContext scope(ctx);
    check(a.cuCtxGetDevice(&dev), "cuCtxGetDevice");
  }
  int count = Device::count();
  for (int i = 0; i < count; ++i) {
    CUdevice d = 0;
    if (a.cuDeviceGet(&d, i) == CUDA_SUCCESS && d == dev)
      return i;
  }
  throw Error(fmt::format("libtle_rt: the device of a stream's context ({}) has no ordinal", dev));
}

/// The device whose primary context is `ctx`; the last answer is cached per thread (a primary
/// context keeps its handle while retained, and the cache retains it).
Device deviceOfContext(CUcontext ctx, const char *what) {
  thread_local CUcontext lastContext = nullptr;
  thread_local std::optional<Device> lastDevice;
  if (ctx && ctx == lastContext)
    return *lastDevice;
  Device dev(ordinalOfContext(ctx));
  if (static_cast<CUcontext>(dev.context()) != ctx)
    throw ArgumentError(fmt::format(
        "libtle_rt: {} belongs to a CUDA context that is not the primary context of device {}; "
        "libtle_rt loads modules into primary contexts (those the CUDA runtime uses), so create "
        "the stream there",
        what, dev.ordinal()));
  lastContext = ctx;
  lastDevice = dev;
  return dev;
}

} // namespace

Device Device::current() {
  CUcontext ctx = nullptr;
  check(api().cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  return ctx ? deviceOfContext(ctx, "the calling thread's current context") : Device(0);
}

Device Device::ofStream(CUstream_st *stream) {
  auto s = reinterpret_cast<CUstream>(stream);
  if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
    return current();
  // One cuStreamGetCtx per call (a field read in the driver): a stream handle is not cached, since
  // a destroyed stream's address may come back as a stream of another context.
  CUcontext ctx = nullptr;
  check(api().cuStreamGetCtx(s, &ctx), "cuStreamGetCtx");
  return deviceOfContext(ctx, "the stream");
}

std::string Device::arch() const {
  if (state_->ccMajor == 9 && state_->ccMinor == 0)
    return "sm_90a";
  return fmt::format("sm_{}{}", state_->ccMajor, state_->ccMinor);
}

void Device::synchronize() const {
  detail::ScopedContext scope(state_->context);
  check(api().cuCtxSynchronize(), "cuCtxSynchronize");
}

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

Stream::Stream(const Device &device) : device_(device) {
  detail::ScopedContext scope(device_.state_->context);
  CUstream s = nullptr;
  check(api().cuStreamCreate(&s, CU_STREAM_DEFAULT), "cuStreamCreate");
  handle_ = s;
  owned_ = true;
}

Stream::Stream(const Device &device, void *handle, bool owned)
    : device_(device), handle_(handle), owned_(owned) {}

Stream Stream::wrap(const Device &device, void *handle) { return Stream(device, handle, false); }

Stream Stream::wrap(CUstream_st *handle) { return Stream(Device::ofStream(handle), handle, false); }

bool Stream::isCapturing() const {
  detail::ScopedContext scope(device_.state_->context);
  int status = CU_STREAM_CAPTURE_STATUS_NONE;
  check(api().cuStreamIsCapturing(static_cast<CUstream>(handle_), &status), "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

Stream::~Stream() {
  if (!owned_ || !handle_)
    return;
  detail::ScopedContext scope(device_.state_->context, std::nothrow);
  if (scope.ok())
    api().cuStreamDestroy(static_cast<CUstream>(handle_));
}

Stream::Stream(Stream &&o) noexcept : device_(o.device_), handle_(o.handle_), owned_(o.owned_) {
  o.handle_ = nullptr;
  o.owned_ = false;
}

Stream &Stream::operator=(Stream &&o) noexcept {
  if (this != &o) {
    Stream tmp(std::move(*this));
    device_ = o.device_;
    handle_ = o.handle_;
    owned_ = o.owned_;
    o.handle_ = nullptr;
    o.owned_ = false;
  }
  return *this;
}

void Stream::synchronize() {
  detail::ScopedContext scope(device_.state_->context);
  check(api().cuStreamSynchronize(static_cast<CUstream>(handle_)), "cuStreamSynchronize");
}

void *Stream::handle() const { return handle_; }

// ---------------------------------------------------------------------------------------------
// Event
// ---------------------------------------------------------------------------------------------

Event::Event(const Device &device) : device_(device) {
  detail::ScopedContext scope(device_.state_->context);
  CUevent e = nullptr;
  check(api().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  handle_ = e;
}

Event::~Event() {
  if (!handle_)
    return;
  detail::ScopedContext scope(device_.state_->context, std::nothrow);
  if (scope.ok())
    api().cuEventDestroy(static_cast<CUevent>(handle_));
}

Event::Event(Event &&o) noexcept : device_(o.device_), handle_(o.handle_) { o.handle_ = nullptr; }

Event &Event::operator=(Event &&o) noexcept {
  if (this != &o) {
    Event tmp(std::move(*this));
    device_ = o.device_;
    handle_ = o.handle_;
    o.handle_ = nullptr;
  }
  return *this;
}

void Event::record(Stream &stream) {
  if (stream.device() != device_)
    throw ArgumentError("Event::record: the stream belongs to another device");
  detail::ScopedContext scope(device_.state_->context);
  check(api().cuEventRecord(static_cast<CUevent>(handle_), static_cast<CUstream>(stream.handle())),
        "cuEventRecord");
}

void Event::synchronize() {
  detail::ScopedContext scope(device_.state_->context);
  check(api().cuEventSynchronize(static_cast<CUevent>(handle_)), "cuEventSynchronize");
}

float Event::elapsedMs(const Event &start, const Event &end) {
  detail::ScopedContext scope(end.device_.state_->context);
  check(api().cuEventSynchronize(static_cast<CUevent>(end.handle_)), "cuEventSynchronize");
  float ms = 0;
  check(api().cuEventElapsedTime(&ms, static_cast<CUevent>(start.handle_),
                                 static_cast<CUevent>(end.handle_)),
        "cuEventElapsedTime");
  return ms;
}

// ---------------------------------------------------------------------------------------------
// DeviceBuffer
// ---------------------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(const Device &device, size_t bytes)
    : device_(device.state_), bytes_(bytes) {
  if (bytes == 0)
    return;
  detail::ScopedContext scope(device_->context);
  CUdeviceptr p = 0;
  CUresult r = api().cuMemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS)
    fail("cuMemAlloc", r, fmt::format("allocating {} bytes on device {}", bytes, device.ordinal()));
  address_ = p;
}

void DeviceBuffer::release() noexcept {
  if (address_) {
    detail::ScopedContext scope(device_->context, std::nothrow);
    if (scope.ok())
      api().cuMemFree(address_);
  }
  address_ = 0;
  bytes_ = 0;
  device_.reset();
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : device_(std::move(o.device_)), address_(o.address_), bytes_(o.bytes_) {
  o.address_ = 0;
  o.bytes_ = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    release();
    device_ = std::move(o.device_);
    address_ = o.address_;
    bytes_ = o.bytes_;
    o.address_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}

DevicePtr DeviceBuffer::ptr(size_t byteOffset) const {
  if (byteOffset > bytes_)
    throw ArgumentError(fmt::format("DeviceBuffer::ptr: offset {} is past the end of a {}-byte buffer",
                                    byteOffset, bytes_));
  return DevicePtr{address_ + byteOffset};
}

int DeviceBuffer::deviceOrdinal() const { return device_ ? device_->ordinal : -1; }

namespace {
void checkRange(const char *what, size_t offset, size_t bytes, size_t size) {
  if (offset > size || bytes > size - offset)
    throw ArgumentError(fmt::format("DeviceBuffer::{}: bytes [{}, {}) are outside the {}-byte buffer",
                                    what, offset, offset + bytes, size));
}
} // namespace

void DeviceBuffer::copyFromHost(const void *src, size_t bytes, size_t dstOffset) {
  checkRange("copyFromHost", dstOffset, bytes, bytes_);
  if (bytes == 0)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemcpyHtoD(address_ + dstOffset, src, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::copyToHost(void *dst, size_t bytes, size_t srcOffset) const {
  checkRange("copyToHost", srcOffset, bytes, bytes_);
  if (bytes == 0)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemcpyDtoH(dst, address_ + srcOffset, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::copyFromDevice(const DeviceBuffer &src, size_t bytes, size_t dstOffset,
                                  size_t srcOffset) {
  checkRange("copyFromDevice (destination)", dstOffset, bytes, bytes_);
  checkRange("copyFromDevice (source)", srcOffset, bytes, src.bytes_);
  if (bytes == 0)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemcpyDtoD(address_ + dstOffset, src.address_ + srcOffset, bytes), "cuMemcpyDtoD");
}

void DeviceBuffer::copyFromDeviceAsync(const DeviceBuffer &src, size_t bytes, Stream &stream,
                                       size_t dstOffset, size_t srcOffset) {
  checkRange("copyFromDeviceAsync (destination)", dstOffset, bytes, bytes_);
  checkRange("copyFromDeviceAsync (source)", srcOffset, bytes, src.bytes_);
  if (bytes == 0)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemcpyDtoDAsync(address_ + dstOffset, src.address_ + srcOffset, bytes,
                                static_cast<CUstream>(stream.handle())),
        "cuMemcpyDtoDAsync");
}

void DeviceBuffer::fillBytes(uint8_t value) {
  if (!bytes_)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemsetD8(address_, value, bytes_), "cuMemsetD8");
}

void DeviceBuffer::fill32(uint32_t value) {
  if (bytes_ % 4)
    throw ArgumentError(fmt::format("DeviceBuffer::fill32: size {} is not a multiple of 4", bytes_));
  if (!bytes_)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemsetD32(address_, value, bytes_ / 4), "cuMemsetD32");
}

void DeviceBuffer::fillBytesAsync(uint8_t value, Stream &stream) {
  if (!bytes_)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemsetD8Async(address_, value, bytes_, static_cast<CUstream>(stream.handle())),
        "cuMemsetD8Async");
}

void DeviceBuffer::fill32Async(uint32_t value, Stream &stream) {
  if (bytes_ % 4)
    throw ArgumentError(fmt::format("DeviceBuffer::fill32Async: size {} is not a multiple of 4", bytes_));
  if (!bytes_)
    return;
  detail::ScopedContext scope(device_->context);
  check(api().cuMemsetD32Async(address_, value, bytes_ / 4, static_cast<CUstream>(stream.handle())),
        "cuMemsetD32Async");
}

// ---------------------------------------------------------------------------------------------
// Module
// ---------------------------------------------------------------------------------------------

namespace {

bool isBinaryImage(const std::string &bytes) { return detail::isBinaryImage(bytes.data(), bytes.size()); }

std::string trimLog(const std::vector<char> &log) {
  std::string s(log.data(), strnlen(log.data(), log.size()));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

} // namespace

Module Module::load(const Device &device, const void *data, std::string label, bool isPtx) {
  const Api &a = api();
  detail::ScopedContext scope(device.state_->context);
  auto state = std::make_shared<detail::ModuleState>(device);
  state->label = std::move(label);

  std::vector<char> errorLog(16384, 0), infoLog(16384, 0);
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(uintptr_t(errorLog.size() - 1)),
                    infoLog.data(), reinterpret_cast<void *>(uintptr_t(infoLog.size() - 1))};
  CUmodule mod = nullptr;
  CUresult r = a.cuModuleLoadDataEx(&mod, data, 4, options, values);
  if (r != CUDA_SUCCESS) {
    std::string detail = "loading " + state->label;
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU)
      detail += fmt::format(" (the device is {} {}; compile for that architecture)", device.name(),
                            device.arch());
    std::string log = trimLog(errorLog);
    if (!log.empty())
      detail += (isPtx ? "\nJIT error log:\n" : "\nerror log:\n") + log;
    fail("cuModuleLoadDataEx", r, detail);
  }
  state->module = mod;
  state->jitLog = trimLog(infoLog);

  // The self-describing part: read __tle_metadata back from device memory.
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  r = a.cuModuleGetGlobal(&ptr, &bytes, mod, metadata::kSymbol);
  if (r == CUDA_ERROR_NOT_FOUND)
    return Module(std::move(state));
  if (r != CUDA_SUCCESS)
    fail(fmt::format("cuModuleGetGlobal({})", metadata::kSymbol), r, "in " + state->label);
  std::string text(bytes, '\0');
  if (bytes) {
    r = a.cuMemcpyDtoH(text.data(), ptr, bytes);
    if (r != CUDA_SUCCESS)
      fail("cuMemcpyDtoH", r, fmt::format("reading the {} of {}", metadata::kSymbol, state->label));
  }
  size_t nul = text.find('\0');
  if (nul == std::string::npos)
    throw MetadataError(fmt::format("{}: {} ({} bytes) is not NUL-terminated", state->label,
                                    metadata::kSymbol, bytes));
  text.resize(nul);
  try {
    state->info = parseModuleMetadata(text);
  } catch (const MetadataError &e) {
    throw MetadataError(state->label + ": " + e.what());
  }
  return Module(std::move(state));
}

bool detail::isBinaryImage(const void *data, size_t size) {
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
  static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba}; // 0xBA55ED50, little-endian
  return size >= 4 && (std::memcmp(data, elf, 4) == 0 || std::memcmp(data, fatbin, 4) == 0);
}

std::string detail::readModuleFile(const std::string &path) {
  // A regular file of bounded size only: a directory gave an error without the path, and a device
  // such as /dev/zero was read without end.
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status))
    throw Error(fmt::format("libtle_rt: module file '{}' is a directory", path));
  if (!ec && !std::filesystem::is_regular_file(status))
    throw Error(fmt::format("libtle_rt: module file '{}' is not a regular file", path));
  if (!ec) {
    auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxModuleFileBytes)
      throw Error(fmt::format("libtle_rt: module file '{}' is {} bytes, more than the limit of {}", path, size,
                              kMaxModuleFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("libtle_rt: cannot open module file '{}': {}", path, std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    throw Error(fmt::format("libtle_rt: cannot read module file '{}'", path));
  if (bytes.empty())
    throw Error(fmt::format("libtle_rt: module file '{}' is empty", path));
  return bytes;
}

Module Module::fromFile(const Device &device, const std::string &path) {
  std::string bytes = detail::readModuleFile(path);
  if (isBinaryImage(bytes))
    return load(device, bytes.data(), path, false);
  return load(device, bytes.c_str(), path, true); // PTX text, NUL-terminated by c_str()
}

Module Module::fromImage(const Device &device, const void *image, size_t size, std::string label) {
  if (!image || size < 4)
    throw ArgumentError(fmt::format("Module::fromImage: {} is not a cubin or fatbin image", label));
  std::string bytes(static_cast<const char *>(image), size);
  if (!isBinaryImage(bytes))
    throw ArgumentError(fmt::format(
        "Module::fromImage: {} has neither the ELF nor the fatbin magic (use fromPtx for PTX)", label));
  return load(device, image, std::move(label), false);
}

Module Module::fromPtx(const Device &device, std::string_view ptx, std::string label) {
  std::string text(ptx); // NUL-terminated copy
  return load(device, text.c_str(), std::move(label), true);
}

bool Module::hasMetadata() const { return state_->info.has_value(); }

const ModuleInfo &Module::info() const {
  if (!state_->info)
    throw MetadataError(fmt::format(
        "{}: the module has no {} (was it compiled by tlec?); describe its kernels with "
        "Module::kernel(name, KernelInfo)",
        state_->label, metadata::kSymbol));
  return *state_->info;
}

const std::string &Module::label() const { return state_->label; }
const std::string &Module::jitLog() const { return state_->jitLog; }

const Device &Module::device() const { return state_->device; }
void *Module::handle() const { return state_->module; }

Kernel Module::kernel(std::string_view name) const {
  const ModuleInfo &mi = info();
  const KernelInfo *k = mi.find(name);
  if (!k) {
    std::string names;
    for (const KernelInfo &ki : mi.kernels)
      names += (names.empty() ? "" : ", ") + ki.name;
    throw MetadataError(fmt::format("{}: no kernel '{}' in the module's metadata (it has: {})",
                                    state_->label, name, names.empty() ? "none" : names));
  }
  return kernel(name, *k);
}

namespace {
uint64_t zeroBytes(const Device &dev);

/// Checks the parameters `info` describes (each argBytes(), then 128 bytes per launch-time TMA
/// descriptor) against entry function `fn`'s own, as the driver reports them
/// (cuFuncGetParamInfo, CUDA 12.4+; not checked with an older driver). A module whose metadata
/// disagrees with its code (a damaged or spliced module file) would otherwise be launched with an
/// argument buffer of another layout: the driver reads past it, the kernel reads garbage.
void checkParamLayout(const Api &a, CUfunction fn, const KernelInfo &info, const std::string &label) {
  if (!a.cuFuncGetParamInfo)
    return;
  std::vector<std::pair<size_t, std::string>> expected; // bytes, what
  for (const ParamInfo &p : info.params)
    expected.push_back({p.type.argBytes(), fmt::format("parameter '{}' ({})", p.name, p.type.str())});
  for (size_t m = 0; m < info.tensorMaps.size(); ++m)
    expected.push_back({sizeof(TensorMap), fmt::format("TMA descriptor {}", m)});
  size_t offset = 0, bytes = 0;
  for (size_t i = 0; i <= expected.size(); ++i) {
    CUresult r = a.cuFuncGetParamInfo(fn, i, &offset, &bytes);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE)
      return; // the driver cannot tell (not a finding about the module)
    bool exists = r == CUDA_SUCCESS;
    if (i == expected.size() && !exists)
      return;
    if (i == expected.size() || !exists)
      throw MetadataError(fmt::format(
          "{}: kernel {}: the metadata describes {} launch parameter{} but the entry function has {}{}",
          label, info.name, expected.size(), expected.size() == 1 ? "" : "s", exists ? "more" : std::to_string(i),
          exists ? "" : " (the module's code and its __tle_metadata disagree)"));
    if (bytes != expected[i].first)
      throw MetadataError(fmt::format(
          "{}: kernel {}: launch parameter {} is {} of {} bytes in the metadata but {} bytes in the entry "
          "function (the module's code and its __tle_metadata disagree)",
          label, info.name, i, expected[i].second, expected[i].first, bytes));
  }
}
} // namespace

Kernel Module::kernel(std::string_view name, KernelInfo info) const {
  const Api &a = api();
  const Device &dev = state_->device;
  detail::ScopedContext scope(dev.state_->context);
  std::string n(name);
  const std::string &sym = info.symbol.empty() ? n : info.symbol; // the metadata's entry symbol
  CUfunction fn = nullptr;
  CUresult r = a.cuModuleGetFunction(&fn, state_->module, sym.c_str());
  if (r != CUDA_SUCCESS)
    fail(fmt::format("cuModuleGetFunction({})", sym), r, "in " + state_->label);
  if (info.name.empty())
    info.name = n;
  checkParamLayout(a, fn, info, state_->label);
  if (info.threadsPerBlock() == 0 || info.threadsPerBlock() > 1024)
    throw MetadataError(fmt::format("{}: block of {} threads is not in [1, 1024]", n,
                                    info.threadsPerBlock()));
  int staticShared = 0;
  check(a.cuFuncGetAttribute(&staticShared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn),
        "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  if (size_t(info.sharedBytes) + size_t(staticShared) > dev.maxSharedBytesPerBlockOptin())
    throw Error(fmt::format(
        "{}: needs {} bytes of dynamic + {} bytes of static shared memory per block, but {} allows "
        "at most {}",
        n, info.sharedBytes, staticShared, dev.name(), dev.maxSharedBytesPerBlockOptin()));
  if (info.sharedBytes > 48 * 1024)
    check(a.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               int(info.sharedBytes)),
          fmt::format("cuFuncSetAttribute({}, MAX_DYNAMIC_SHARED_SIZE_BYTES={})", n,
                      info.sharedBytes));
  // Clusters of more than 8 CTAs (the portable size) run only once the kernel opts in (H100 and
  // H200 allow 16); a GPU that refuses fails here, with the call named.
  if (info.cluster[0] * info.cluster[1] * info.cluster[2] > 8)
    check(a.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
          fmt::format("cuFuncSetAttribute({}, NON_PORTABLE_CLUSTER_SIZE_ALLOWED=1) for clusters of {} CTAs", n,
                      info.cluster[0] * info.cluster[1] * info.cluster[2]));
  int maxThreads = 0;
  check(a.cuFuncGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn),
        "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
  if (unsigned(maxThreads) < info.threadsPerBlock()) {
    int regs = 0;
    a.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
    throw Error(fmt::format(
        "{}: cannot launch {} threads per block (num_warps {}): with {} registers per thread the "
        "kernel allows at most {}",
        n, info.threadsPerBlock(), info.numWarps, regs, maxThreads));
  }
  // The zero bytes that descriptors of empty tensors point at are allocated now, not at a launch
  // that may be captured into a CUDA graph (where the blocking memset is not allowed).
  if (!info.tensorMaps.empty())
    zeroBytes(dev);
  return Kernel(state_, fn, std::move(info));
}

// ---------------------------------------------------------------------------------------------
// Kernel
// ---------------------------------------------------------------------------------------------

const Device &Kernel::device() const { return module_->device; }

int Kernel::attribute(int attr) const {
  detail::ScopedContext scope(module_->device.state_->context);
  int v = 0;
  check(api().cuFuncGetAttribute(&v, attr, static_cast<CUfunction>(function_)),
        "cuFuncGetAttribute");
  return v;
}

int Kernel::numRegisters() const { return attribute(CU_FUNC_ATTRIBUTE_NUM_REGS); }
int Kernel::maxThreadsPerBlock() const { return attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK); }
int Kernel::staticSharedBytes() const { return attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES); }
int Kernel::localBytes() const { return attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES); }

void Kernel::checkBuffer(size_t index, const DeviceBuffer &buffer) const {
  if (buffer.deviceOrdinal() >= 0 && buffer.deviceOrdinal() != module_->device.ordinal())
    throw ArgumentError(fmt::format("{}: argument {} ('{}') is a buffer on device {}, but the "
                                    "kernel is loaded on device {}",
                                    info_.name, index, info_.params[index].name,
                                    buffer.deviceOrdinal(), module_->device.ordinal()));
}

void Kernel::checkRawArgs(void **args, size_t numArgs) const {
  checkArgCount(info_, numArgs);
  if (numArgs && !args)
    throw ArgumentError(fmt::format("{}: the argument array is null", info_.name));
  for (size_t i = 0; i < numArgs; ++i)
    if (!args[i])
      throw ArgumentError(fmt::format("{}: argument {} ('{}') is a null pointer", info_.name, i,
                                      info_.params[i].name));
}

void Kernel::launchRaw(Grid grid, Stream &stream, void **args, size_t numArgs) const {
  checkRawArgs(args, numArgs);
  launchChecked(grid, stream, args, numArgs);
}

namespace {

/// 256 zero bytes on `dev`, allocated once per device and kept for the process (the element
/// that descriptors of empty tensors point at).
uint64_t zeroBytes(const Device &dev) {
  static std::mutex mutex;
  // Never destroyed: freeing device memory during static destruction could follow the driver's
  // own teardown.
  static auto *buffers = new std::map<int, DeviceBuffer>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = buffers->find(dev.ordinal());
  if (it == buffers->end()) {
    DeviceBuffer b(dev, 256);
    b.fillBytes(0);
    it = buffers->emplace(dev.ordinal(), std::move(b)).first;
  }
  return it->second.address();
}

} // namespace

void Kernel::launchRaw(Grid grid, CUstream_st *stream, void **args, size_t numArgs) const {
  Stream s = Stream::wrap(stream);
  launchRaw(grid, s, args, numArgs);
}

void Kernel::launchOnRawStream(Grid grid, CUstream_st *stream, void **args, size_t numArgs) const {
  Stream s = Stream::wrap(stream);
  launchChecked(grid, s, args, numArgs);
}

void Kernel::launchChecked(Grid grid, Stream &stream, void **args, size_t numArgs) const {
  if (stream.device() != module_->device)
    throw ArgumentError(fmt::format("{}: the stream belongs to device {}, the kernel to device {}",
                                    info_.name, stream.device().ordinal(), module_->device.ordinal()));
  launchOnHandle(grid, stream.handle(), args, numArgs);
}

long long Kernel::maxCoResidentBlocks() const {
  const Api &a = api();
  if (!a.cuOccupancyMaxActiveBlocksPerMultiprocessor)
    return -1;
  detail::ScopedContext scope(module_->device.state_->context);
  int perSm = 0;
  int threads = int(info_.block[0] * info_.block[1] * info_.block[2]);
  CUresult r = a.cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, static_cast<CUfunction>(function_), threads,
                                                              info_.sharedBytes);
  if (r != CUDA_SUCCESS)
    fail(fmt::format("cuOccupancyMaxActiveBlocksPerMultiprocessor({})", info_.name), r,
         fmt::format("{} threads, {} bytes of dynamic shared memory", threads, info_.sharedBytes));
  return static_cast<long long>(perSm) * module_->device.smCount();
}

void Kernel::checkCoResident(Grid grid) const {
  long long most = maxCoResidentBlocks();
  long long ctas = static_cast<long long>(grid.x) * grid.y * grid.z;
  if (most >= 0 && ctas > most)
    throw ArgumentError(fmt::format(
        "{}: a cooperative launch (the kernel has a grid-wide barrier, so every CTA must be resident at once) "
        "of grid ({}, {}, {}) = {} CTAs exceeds the {} that fit on {} at once ({} per SM x {} SMs with {} threads "
        "and {} bytes of dynamic shared memory per CTA); launch at most {} CTAs",
        info_.name, grid.x, grid.y, grid.z, ctas, most, module_->device.name(), most / module_->device.smCount(),
        module_->device.smCount(), info_.block[0] * info_.block[1] * info_.block[2], info_.sharedBytes, most));
}

void **Kernel::prepareLaunch(Grid grid, void **args, size_t numArgs, std::vector<TensorMap> &maps,
                             std::vector<void *> &withMaps) const {
  for (size_t i = 0; i < numArgs; ++i)
    checkArgValue(info_, i, args[i]);
  // TMA descriptors built from the arguments go after them (KernelInfo::tensorMaps).
  if (!info_.tensorMaps.empty()) {
    maps.reserve(info_.tensorMaps.size());
    DevicePtr zeros{zeroBytes(module_->device)};
    for (size_t k = 0; k < info_.tensorMaps.size(); ++k)
      maps.push_back(launchTensorMap(info_, k, args, zeros));
    withMaps.assign(args, args + numArgs);
    for (TensorMap &m : maps)
      withMaps.push_back(&m);
    args = withMaps.data();
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
      grid.z > 65535)
    throw ArgumentError(fmt::format("{}: grid ({}, {}, {}) is invalid: each dimension must be at "
                                    "least 1, x at most 2^31-1, y and z at most 65535",
                                    info_.name, grid.x, grid.y, grid.z));
  bool clustered = info_.cluster != std::array<unsigned, 3>{1, 1, 1};
  if (clustered && (grid.x % info_.cluster[0] || grid.y % info_.cluster[1] || grid.z % info_.cluster[2]))
    throw ArgumentError(fmt::format("{}: grid ({}, {}, {}) is not a multiple of the cluster ({}, {}, {})",
                                    info_.name, grid.x, grid.y, grid.z, info_.cluster[0],
                                    info_.cluster[1], info_.cluster[2]));
  if (info_.cooperative)
    checkCoResident(grid);
  return args;
}

void Kernel::launchOnHandle(Grid grid, void *stream, void **args, size_t numArgs) const {
  // The device's context is current from here: cuTensorMapEncodeTiled needs one too (without
  // it the driver answers CUDA_ERROR_INVALID_CONTEXT to a caller with no context of its own).
  detail::ScopedContext scope(module_->device.state_->context);
  std::vector<TensorMap> maps;
  std::vector<void *> withMaps;
  args = prepareLaunch(grid, args, numArgs, maps, withMaps);
  const Api &a = api();
  auto fn = static_cast<CUfunction>(function_);
  auto s = static_cast<CUstream>(stream);
  bool clustered = info_.cluster != std::array<unsigned, 3>{1, 1, 1};
  if (!clustered && !info_.cooperative) {
    CUresult r = a.cuLaunchKernel(fn, grid.x, grid.y, grid.z, info_.block[0], info_.block[1],
                                  info_.block[2], info_.sharedBytes, s, args, nullptr);
    if (r != CUDA_SUCCESS)
      fail(fmt::format("cuLaunchKernel({})", info_.name), r,
           fmt::format("grid ({}, {}, {}), block ({}, {}, {}), {} bytes of dynamic shared memory",
                       grid.x, grid.y, grid.z, info_.block[0], info_.block[1], info_.block[2],
                       info_.sharedBytes));
    return;
  }
  if (!a.cuLaunchKernelEx)
    throw Error(fmt::format("{}: needs cuLaunchKernelEx (cluster or cooperative launch), which "
                            "the CUDA driver lacks",
                            info_.name));
  CUlaunchAttribute attrs[2];
  std::memset(attrs, 0, sizeof(attrs));
  unsigned n = 0;
  if (clustered) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim = {info_.cluster[0], info_.cluster[1], info_.cluster[2]};
    ++n;
  }
  if (info_.cooperative) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n].value.cooperative = 1;
    ++n;
  }
  CUlaunchConfig cfg{};
  cfg.gridDimX = grid.x;
  cfg.gridDimY = grid.y;
  cfg.gridDimZ = grid.z;
  cfg.blockDimX = info_.block[0];
  cfg.blockDimY = info_.block[1];
  cfg.blockDimZ = info_.block[2];
  cfg.sharedMemBytes = info_.sharedBytes;
  cfg.hStream = s;
  cfg.attrs = attrs;
  cfg.numAttrs = n;
  CUresult r = a.cuLaunchKernelEx(&cfg, fn, args, nullptr);
  if (r != CUDA_SUCCESS)
    fail(fmt::format("cuLaunchKernelEx({})", info_.name), r,
         fmt::format("grid ({}, {}, {}), cluster ({}, {}, {}), cooperative {}", grid.x, grid.y,
                     grid.z, info_.cluster[0], info_.cluster[1], info_.cluster[2],
                     info_.cooperative));
}

} // namespace tle::rt
