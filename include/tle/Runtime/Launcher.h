// Support code for generated C++ launchers (tlec --emit-header, tle-link): pointer arguments, lazily loaded per-device kernels, grid and dispatch checks.
//
// Header-only on top of libtle_rt (Runtime.h) and the C helpers of tle_launcher.h; see docs/aot.md
// for the launcher ABI and the dispatch rules.
#pragma once

#include "tle/Runtime/ModuleCache.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_launcher.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>

namespace tle::launcher {

/// A pointer argument of a generated launcher: a tle::rt::DevicePtr, a tle::rt::DeviceBuffer
/// (its first byte), a raw device pointer (`void *`, `const void *`, or any `T *` that converts
/// to them, as cudaMalloc returns), a CUdeviceptr (`unsigned long long`) or nullptr.
struct Pointer {
  uint64_t address = 0; ///< the device address (a CUdeviceptr)
  /// A raw device address.
  Pointer(rt::DevicePtr p) : address(p.address) {}
  /// A raw device pointer (the CUDA runtime's).
  Pointer(const void *p) : address(reinterpret_cast<uintptr_t>(p)) {}
  /// A CUdeviceptr (cuda.h: unsigned long long). Only that exact type converts, so that an
  /// integer meant for a scalar parameter is not taken for an address.
  template <class T, std::enable_if_t<std::is_same_v<T, unsigned long long>, int> = 0>
  Pointer(T cuDevicePtr) : address(cuDevicePtr) {}
  /// The first byte of `buffer`.
  Pointer(const rt::DeviceBuffer &buffer) : address(buffer.address()) {}
  /// The null device address.
  Pointer(std::nullptr_t) {}
  /// As the runtime's pointer argument.
  rt::DevicePtr ptr() const { return rt::DevicePtr{address}; }
};

/// The dispatcher's view of argument `p`.
inline tle_launcher_arg dispatchArg(const Pointer &p) { return tle_launcher_arg_pointer(p.address); }
/// The dispatcher's view of bool argument `v`.
inline tle_launcher_arg dispatchArg(bool v) { return tle_launcher_arg_unsigned(v ? 1 : 0); }
/// The dispatcher's view of floating-point argument `v` (never decides the dispatch).
inline tle_launcher_arg dispatchArg(float) { return tle_launcher_arg_other(); }
/// The dispatcher's view of floating-point argument `v` (never decides the dispatch).
inline tle_launcher_arg dispatchArg(double) { return tle_launcher_arg_other(); }
/// The dispatcher's view of an fp16 argument (never decides the dispatch).
inline tle_launcher_arg dispatchArg(rt::Half) { return tle_launcher_arg_other(); }
/// The dispatcher's view of a bf16 argument (never decides the dispatch).
inline tle_launcher_arg dispatchArg(rt::BFloat16) { return tle_launcher_arg_other(); }
/// The dispatcher's view of integer argument `v`.
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
inline tle_launcher_arg dispatchArg(T v) {
  if constexpr (std::is_signed_v<T>)
    return tle_launcher_arg_signed(static_cast<int64_t>(v));
  else
    return tle_launcher_arg_unsigned(static_cast<uint64_t>(v));
}

/// Throws tle::rt::ArgumentError unless the arguments meet every requirement of `spec`:
/// "add_kernel: argument 'n' (= 1000) is not a multiple of 16 (required by spec 0 (...))".
inline void requireSpec(const char *launcher, const tle_launcher_spec &spec, const tle_launcher_arg *args,
                        size_t nargs) {
  if (tle_launcher_accepts(&spec, args, nargs))
    return;
  char why[256] = "";
  tle_launcher_describe_rejection(why, sizeof why, &spec, args, nargs);
  throw rt::ArgumentError(std::string(launcher) + ": argument " + why + " (required by " + spec.label + ")");
}

/// The index of the first specialisation that accepts the arguments; throws tle::rt::ArgumentError
/// naming the launcher, the kernel and, per specialisation, the argument it rejects, when none does.
inline int selectOrThrow(const char *launcher, const char *kernel, const tle_launcher_spec *specs, size_t nspecs,
                         const tle_launcher_arg *args, size_t nargs) {
  int s = tle_launcher_select(specs, nspecs, args, nargs);
  if (s >= 0)
    return s;
  char why[1024];
  tle_launcher_explain(why, sizeof why, launcher, kernel, specs, nspecs, args, nargs);
  throw rt::ArgumentError(why);
}

/// Which specialisation the dispatcher launches for these arguments and why (every earlier one's
/// reason for rejecting them), as tle_launcher_explain_choice writes it; `*chosen` its index or -1.
inline std::string explainChoice(const char *launcher, const char *kernel, const tle_launcher_spec *specs,
                                 size_t nspecs, const tle_launcher_arg *args, size_t nargs, int *chosen) {
  char why[2048];
  int s = tle_launcher_explain_choice(why, sizeof why, launcher, kernel, specs, nspecs, args, nargs);
  if (chosen)
    *chosen = s;
  return why;
}

/// The grid computed by a launcher's grid expressions: throws tle::rt::ArgumentError when an
/// expression divided by zero or overflowed int64, or a dimension is negative or above the CUDA limits. A zero
/// dimension is returned as is (the launcher then launches nothing).
inline rt::Grid makeGrid(const char *launcher, const char *gridText, const tle_launcher_grid_ctx &ctx, int64_t x,
                         int64_t y, int64_t z) {
  const int64_t dims[3] = {x, y, z};
  char why[512];
  if (!tle_launcher_check_grid(&ctx, dims, launcher, gridText, why, sizeof why))
    throw rt::ArgumentError(why);
  rt::Grid g;
  g.x = static_cast<unsigned>(x);
  g.y = static_cast<unsigned>(y);
  g.z = static_cast<unsigned>(z);
  return g;
}

/// True when the grid has no blocks (some dimension is 0): launchers then launch nothing, as
/// Triton's AOT launchers do.
inline bool emptyGrid(const rt::Grid &g) { return g.x == 0 || g.y == 0 || g.z == 0; }

/// A kernel loaded on first use, once per device, from the embedded image that best fits the
/// device (tle_launcher_choose_image). Thread-safe: concurrent first launches on one device load
/// once; later launches take a lock-free path. Constant-initialised, so launchers may be called
/// during static initialisation. Loaded kernels live until unload() or process exit (they are not
/// unloaded during static destruction). Images are loaded through the process-wide
/// rt::ModuleCache::global(), so launchers embedding the same image share one module per device.
class LazyKernel {
public:
  /// `launcher` names the launcher in messages; `kernel` is the entry name in the images;
  /// `loadFunction` the generated function that loads it ahead of a graph capture.
  constexpr LazyKernel(const char *launcher, const char *kernel, const tle_launcher_image *images, size_t numImages,
                       const char *loadFunction = nullptr)
      : launcher_(launcher), kernel_(kernel), images_(images), numImages_(numImages), loadFunction_(loadFunction) {}
  LazyKernel(const LazyKernel &) = delete;
  LazyKernel &operator=(const LazyKernel &) = delete;

  /// The kernel for a launch on `stream`: as get(stream.device()), but when the kernel is not
  /// loaded yet and the stream is being captured into a CUDA graph (where a module load is not
  /// allowed) throws tle::rt::Error naming the NAME_load function to call before the capture.
  const rt::Kernel &get(const rt::Stream &stream) {
    const rt::Device &device = stream.device();
    int ordinal = device.ordinal();
    if (ordinal >= 0 && ordinal < TLE_LAUNCHER_MAX_DEVICES)
      if (const rt::Kernel *k = slots_[ordinal].load(std::memory_order_acquire))
        return *k;
    if (stream.isCapturing())
      throw rt::Error(std::string(launcher_) + ": kernel " + kernel_ + " is not loaded on device " +
                      std::to_string(ordinal) + " and the stream is being captured into a CUDA graph, where loading a "
                      "module is not allowed; call " + (loadFunction_ ? loadFunction_ : "the launcher's _load") +
                      "(device) before the capture");
    return get(device);
  }

  /// The kernel on `device` for a graph node (NAME_node): never loads it, since adding a node must
  /// not load a module (not allowed while any stream capture runs; it would also stall the
  /// device). Throws tle::rt::Error naming the NAME_load function to call first when the kernel is
  /// not loaded on `device` yet.
  const rt::Kernel &loaded(const rt::Device &device) const {
    int ordinal = device.ordinal();
    if (ordinal >= 0 && ordinal < TLE_LAUNCHER_MAX_DEVICES)
      if (const rt::Kernel *k = slots_[ordinal].load(std::memory_order_acquire))
        return *k;
    throw rt::Error(std::string(launcher_) + ": kernel " + kernel_ + " is not loaded on device " +
                    std::to_string(ordinal) + "; call " + (loadFunction_ ? loadFunction_ : "the launcher's _load") +
                    "(device) before adding it to a graph (adding a graph node never loads a module)");
  }

  /// The kernel on `device`, loaded now if needed. Throws tle::rt::Error when no embedded image
  /// runs on the device (the message lists the targets the launcher has), and what
  /// ModuleCache::get (Module::fromImage / fromPtx) and kernel() throw.
  const rt::Kernel &get(const rt::Device &device) {
    int ordinal = device.ordinal();
    if (ordinal >= 0 && ordinal < TLE_LAUNCHER_MAX_DEVICES)
      if (const rt::Kernel *k = slots_[ordinal].load(std::memory_order_acquire))
        return *k;
    std::lock_guard<std::mutex> lock(mutex_);
    if (ordinal < 0 || ordinal >= TLE_LAUNCHER_MAX_DEVICES)
      throw rt::Error(std::string(launcher_) + ": device ordinal " + std::to_string(ordinal) +
                      " is outside the range generated launchers cache kernels for");
    if (const rt::Kernel *k = slots_[ordinal].load(std::memory_order_acquire))
      return *k;
    int best = tle_launcher_choose_image(images_, numImages_, device.computeMajor(), device.computeMinor());
    if (best < 0) {
      std::string have;
      for (size_t i = 0; i < numImages_; ++i)
        have += std::string(i ? ", " : "") + images_[i].arch + (images_[i].is_ptx ? " PTX" : " cubin");
      throw rt::Error(std::string(launcher_) + ": no embedded image of kernel " + kernel_ + " runs on " +
                      device.name() + " (" + device.arch() + "); the launcher has " + have +
                      " (compile it for this architecture too)");
    }
    const tle_launcher_image &img = images_[best];
    std::string label = std::string(launcher_) + " (" + img.arch + (img.is_ptx ? " PTX)" : " cubin)");
    rt::ImageKind kind = img.is_ptx ? rt::ImageKind::Ptx : rt::ImageKind::Binary;
    rt::Module module = rt::ModuleCache::global().get(device, kind, img.data, img.size, label);
    const rt::Kernel *k = nullptr;
    try {
      k = new rt::Kernel(module.kernel(kernel_));
    } catch (...) {
      rt::ModuleCache::global().evict(device, kind, img.data, img.size); // cache nothing on failure
      throw;
    }
    images_loaded_[ordinal] = best;
    slots_[ordinal].store(k, std::memory_order_release);
    return *k;
  }

  /// Releases the loaded kernels and drops their images from the process-wide module cache
  /// (their modules unload when nothing else refers to them). Must not run while another thread
  /// launches through this kernel.
  void unload() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t d = 0; d < TLE_LAUNCHER_MAX_DEVICES; ++d) {
      const rt::Kernel *k = slots_[d].exchange(nullptr, std::memory_order_acq_rel);
      if (!k)
        continue;
      const tle_launcher_image &img = images_[images_loaded_[d]];
      rt::ModuleCache::global().evict(k->device(), img.is_ptx ? rt::ImageKind::Ptx : rt::ImageKind::Binary,
                                      img.data, img.size);
      delete k;
    }
  }

private:
  const char *launcher_;
  const char *kernel_;
  const tle_launcher_image *images_;
  size_t numImages_;
  const char *loadFunction_;
  std::mutex mutex_;
  std::atomic<const rt::Kernel *> slots_[TLE_LAUNCHER_MAX_DEVICES] = {};
  int images_loaded_[TLE_LAUNCHER_MAX_DEVICES] = {}; // per device: the image index loaded
};

} // namespace tle::launcher
