// Kernel artifacts of a suite (cubin/PTX files and their embedded metadata) and launches resolved against them.
#pragma once

#include "Suite.h"

#include "tle/Runtime/Runtime.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tle::bench {

/// Reads the `__tle_metadata` document embedded in a tlec cubin (the NUL-terminated JSON in its
/// initialised data) or PTX file (the `.b8 __tle_metadata[N] = {...}` array) without a GPU.
/// Throws BenchError when the file cannot be read or carries no metadata; MetadataError from
/// libtle_rt when it is malformed.
rt::ModuleInfo readMetadataFile(const std::string &path);

/// The directory of the running executable (from /proc/self/exe), "." when it cannot be read;
/// the benchmarks find their kernels and the compiler relative to it.
std::string executableDirectory();

/// The file of kernel `name` in `dir`: <name>.<arch>.cubin, then .ptx, for each arch in order;
/// empty when none exists.
std::string findKernelFile(const std::string &dir, const std::string &name, const std::vector<std::string> &archs);

/// A suite kernel as built: its file, the metadata of its entry, and (on the GPU) the loaded kernel.
struct KernelHandle {
  const KernelSpec *spec = nullptr;
  std::string path;
  rt::KernelInfo info;
  std::string compiler;                 ///< the module's "compiler" string
  std::optional<rt::Kernel> kernel;     ///< loaded on the GPU
  int registers = -1, localBytes = -1;  ///< from the driver once loaded
};

/// A launch argument: a buffer (by index in the case) or a scalar in the parameter's ABI form.
struct ResolvedArg {
  bool pointer = false;
  int buffer = -1;     ///< pointers: the case's buffer index
  uint64_t bits = 0;   ///< scalars: the value's bytes (argBytes() of the parameter type)
  std::string text;    ///< scalars: the value as text (for tle-run)
};

/// One launch with its grid and arguments evaluated.
struct ResolvedLaunch {
  const KernelHandle *kernel = nullptr;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::vector<ResolvedArg> args; ///< one per runtime parameter, in ABI order
};

/// The environment of a launch: the case's and the kernel's constexprs (which take precedence).
Env launchEnv(const ResolvedCase &rc, const rt::KernelInfo &info);

/// Evaluates a launch of case `rc`: checks the argument count against the kernel's runtime
/// parameters, that pointer parameters get a buffer of the pointee's dtype and scalars an
/// expression in range of their type, and that the grid is valid. Throws BenchError naming the
/// case, kernel and parameter.
ResolvedLaunch resolveLaunch(const LaunchSpec &l, const KernelHandle &k, const ResolvedCase &rc);

} // namespace tle::bench
