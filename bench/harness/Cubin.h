// Resource usage of a kernel read from a cubin's ELF sections (registers, local memory, static shared memory), without a GPU.
#pragma once

#include <cstdint>
#include <string>

namespace tle::bench {

/// What ptxas allotted one kernel of a cubin, as the driver would report it after loading.
struct CubinResources {
  int registers = -1;           ///< registers per thread (EIATTR_REGCOUNT); -1 when absent
  int64_t localBytes = 0;       ///< local memory per thread: the stack frame (EIATTR_FRAME_SIZE), i.e. spills and local arrays
  int64_t staticSharedBytes = 0; ///< size of the kernel's `.nv.shared.<kernel>` section (static shared memory per CTA)
  int maxThreads = 0;           ///< EIATTR_MAX_THREADS (.reqntid product / .maxntid), 0 when absent
  std::string codeHash;         ///< FNV-1a of the kernel's `.text.<kernel>` section: equal for identical machine code
};

/// Reads the resources of kernel `kernel` (its entry symbol) from the cubin image `elf` (an ELF64
/// relocatable file as produced by ptxas). The attributes come from the `.nv.info` section (format:
/// records of {u8 format, u8 attribute, u16 value-or-size [, size bytes]}; EIATTR_REGCOUNT 0x2f and
/// EIATTR_FRAME_SIZE 0x11 hold {u32 symbol index, u32 value}) and `.nv.info.<kernel>`
/// (EIATTR_MAX_THREADS 0x05: three u32). Throws BenchError when `elf` is not an ELF64 image or has
/// no symbol called `kernel`.
CubinResources readCubinResources(const std::string &elf, const std::string &kernel);

/// The same for a cubin file on disk; throws BenchError when it cannot be read.
CubinResources readCubinResourcesFile(const std::string &path, const std::string &kernel);

} // namespace tle::bench
