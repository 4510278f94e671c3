// Generated launchers: reading specialisations back from tlec modules (cubin or PTX with their
// __tle_metadata) and writing typed C++ / C launcher code and dispatchers for them (docs/aot.md).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tle::driver {

/// One argument of a launcher, in the kernel's declaration order: a runtime parameter, or a
/// parameter a `:1` hint specialised to 1 (callers still pass it; the launcher checks it is 1).
struct LaunchArg {
  std::string name;          ///< the kernel's parameter name
  std::string type;          ///< Triton spelling: "*fp32", "i32", "fp16", ...
  int64_t divisibility = 1;  ///< the `:16` promise (bytes for pointers, value for integers)
  bool equalToOne = false;   ///< a `:1` parameter: not passed to the kernel, must equal 1
};

/// One compiled module of a specialisation.
struct LaunchImage {
  std::string arch;   ///< the metadata's "target", e.g. "sm_90a"
  bool ptx = false;   ///< PTX text (else a cubin)
  std::string bytes;  ///< the cubin, or the PTX text (without a trailing NUL)
  std::string origin; ///< where it came from (a path), for messages
};

/// One specialisation of a kernel: what its metadata says, plus its images (one per target).
struct LaunchSpec {
  std::string kernel;                 ///< the entry name
  int numWarps = 4;                   ///< block = 32 * numWarps threads
  int numStages = 0;                  ///< -ns as recorded (0: not given)
  std::vector<LaunchArg> args;        ///< the launcher's arguments, declaration order
  /// Constexpr values, each as its JSON text ("1024", "true", "\"fp16\"").
  std::vector<std::pair<std::string, std::string>> constexprs;
  std::vector<std::string> grid;      ///< -g: three expressions, or empty
  /// Shape predicates the dispatcher also requires (tle-link --when): "M <= 64", "N % 128 == 0".
  std::vector<std::string> when;
  std::vector<LaunchImage> images;    ///< one per target

  /// Everything but the images, as text: specialisations with equal keys are one specialisation
  /// compiled for several targets.
  std::string key() const;
  /// A one-line description: "*fp32:16 x_ptr, i32 n; BLOCK=1024; 4 warps; when n <= 4096".
  std::string describe() const;
};

/// Reads the `__tle_metadata` JSON text out of a cubin (the symbol's bytes in its ELF section)
/// or PTX text (the initializer of the .global byte array). Returns false with `error` set when
/// the image is neither or carries no metadata.
bool readImageMetadata(const std::string &image, std::string &json, bool &isPtx, std::string &error);

/// Builds a specialisation from metadata document `json` (tle/Runtime/Metadata.h, with the
/// launch keys tlec adds: "equal_to_1", "grid", "num_stages") and its `image`. The module must
/// describe exactly one kernel. Returns false with `error` set on a malformed document.
bool specFromMetadata(const std::string &json, LaunchImage image, LaunchSpec &spec, std::string &error);

/// Reads a tlec module file (cubin or PTX) into a one-image specialisation.
bool readSpecFile(const std::string &path, LaunchSpec &spec, std::string &error);

/// Reads one input of tle-link into `specs`: a tlec module file (cubin or PTX), or a launcher
/// header `X.h` tlec wrote (for Triton's `-o PREFIX`, the header Triton's link takes), whose
/// modules are embedded in `X.c` (or `X.cpp`) next to it. Returns false with `error` set otherwise
/// (a header Triton generated is named as such).
bool readSpecInput(const std::string &path, std::vector<LaunchSpec> &specs, std::string &error);

/// Merges specialisations with equal key() into one with several images, keeping the order of
/// first appearance. Returns false with `error` set when two images of one specialisation have
/// the same target.
bool groupSpecs(std::vector<LaunchSpec> &specs, std::string &error);

/// The language of a generated launcher.
enum class LauncherLanguage { Cxx, C };

/// What to generate.
struct LauncherOptions {
  std::string name;              ///< the launcher function; empty: the kernel name
  LauncherLanguage language = LauncherLanguage::Cxx;
  /// true: `header` declares and `source` defines (source includes `headerInclude`); false:
  /// `header` also holds the definitions, compiled where TLE_LAUNCHER_IMPLEMENTATION is defined.
  bool split = false;
  std::string headerInclude;     ///< the spelling `source` includes the header by (split only)
  std::string generator;         ///< "tlec 0.1.0" / "tle-link 0.1.0", for the header comment
};

/// Generated text.
struct LauncherFiles {
  std::string header; ///< the header
  std::string source; ///< the definitions (split only)
};

/// Generates the launcher for `specs` (one: a plain launcher; several: per-specialisation
/// launchers NAME_spec<i> and the dispatcher NAME that calls the first whose requirements the
/// arguments meet). Every specialisation must have the same launcher arguments (names and types);
/// grids (-g) must be given for all or none. Returns false with `error` set otherwise. Appends a
/// warning to `warnings` for each specialisation an earlier one always shadows.
bool generateLauncher(const std::vector<LaunchSpec> &specs, const LauncherOptions &options, LauncherFiles &out,
                      std::string &error, std::vector<std::string> &warnings);

/// True when `name` can name a generated launcher: a C identifier that is not a C/C++ keyword.
bool isValidLauncherName(const std::string &name);

} // namespace tle::driver
