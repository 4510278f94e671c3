// Internal to libtle_rt: recognising module images and reading module files, shared by Module,
// ModuleCache and the C ABI.
#pragma once

#include <cstddef>
#include <string>

namespace tle::rt::detail {

/// Whether `data` starts like a binary module: an ELF cubin (0x7f 'E' 'L' 'F') or a fatbinary
/// (magic 0xBA55ED50, little-endian); anything else is taken as PTX text.
bool isBinaryImage(const void *data, size_t size);

/// The largest module file readModuleFile reads (a cubin or PTX file of every kernel of a large
/// model is a few hundred megabytes at most).
inline constexpr size_t kMaxModuleFileBytes = size_t(1) << 30;

/// The bytes of the module file `path`. Throws Error naming the file when it cannot be opened or
/// read, is empty, is a directory or not a regular file, or is larger than kMaxModuleFileBytes.
std::string readModuleFile(const std::string &path);

} // namespace tle::rt::detail
