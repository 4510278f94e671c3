// tle-inspect's reader: what a cubin or PTX module says about its kernels, from the module's own
// bytes (the `__tle_metadata` document, the cubin's ELF sections and .nv.info attributes, or the
// PTX directives), with no CUDA toolkit or driver (docs/aot.md, "Inspecting a module").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tle::driver {

/// What the assembler recorded about one kernel entry of a cubin (its `.nv.info` attributes and
/// sections), or what the PTX directives of an `.entry` fix before assembly. Unknown values are empty.
struct KernelResources {
  std::string symbol;                        ///< the entry symbol
  std::optional<int> registers;              ///< EIATTR_REGCOUNT: registers per thread
  std::optional<int> maxRegisters;           ///< EIATTR_MAXREG_COUNT, or PTX `.maxnreg`: the cap
  std::optional<int64_t> frameBytes;         ///< EIATTR_FRAME_SIZE: stack frame per thread (spills, local arrays)
  std::optional<int64_t> minStackBytes;      ///< EIATTR_MIN_STACK_SIZE
  std::optional<int64_t> maxStackBytes;      ///< EIATTR_MAX_STACK_SIZE
  std::optional<int64_t> staticSharedBytes;  ///< size of `.nv.shared.<symbol>` (static shared memory per CTA)
  std::optional<int64_t> codeBytes;          ///< size of `.text.<symbol>`
  std::optional<int64_t> paramBytes;         ///< EIATTR_CBANK_PARAM_SIZE: bytes of the parameter block
  int paramCount = 0;                        ///< EIATTR_KPARAM_INFO entries, or PTX `.param`s
  std::optional<std::array<int64_t, 3>> requiredBlock; ///< EIATTR_REQNTID, or PTX `.reqntid`
  std::optional<std::array<int64_t, 3>> cluster;       ///< EIATTR_CTA_PER_CLUSTER, or `.reqnctapercluster`
  bool explicitCluster = false;              ///< EIATTR_EXPLICIT_CLUSTER, or `.explicitcluster`
};

/// What the module holds beyond its kernels' metadata.
struct ModuleFacts {
  bool ptx = false;           ///< PTX text, else a cubin
  std::string arch;           ///< the ELF header's (e_flags) or PTX `.target`'s architecture, e.g. "sm_90"
  int elfAbiVersion = 0;      ///< the cubin's ELF ABI version (e_ident)
  std::string ptxVersion;     ///< PTX `.version`
  std::string assembler;      ///< `.note.nv.tkinfo`: the tool and its release, e.g. "ptxas: Cuda ... V13.0.88"
  std::string assemblerOptions; ///< `.note.nv.tkinfo`: the assembler's options, e.g. "-O 3 -arch sm_90a"
  std::vector<KernelResources> kernels; ///< every entry, in symbol-table or source order
};

/// One module as tle-inspect shows it: the facts above and the `__tle_metadata` document (empty
/// when the module carries none, e.g. a cubin nvcc wrote).
struct InspectReport {
  std::string origin;   ///< the file, for messages
  ModuleFacts facts;
  std::string metadata; ///< the `__tle_metadata` JSON text, or empty
  std::string metadataError; ///< why the metadata was not read (no symbol, or malformed)
};

/// Reads the facts of a cubin (64-bit little-endian ELF of machine EM_CUDA) or PTX text. Any input
/// is safe: a file that is neither, or truncated or malformed anywhere, returns false with `error`
/// naming what is wrong.
bool readModuleFacts(const std::string &bytes, ModuleFacts &facts, std::string &error);

/// Reads `bytes` (the contents of `origin`) into `report`: its facts, and its metadata when present
/// and well-formed (metadataError says why not otherwise). Returns false with `error` set when the
/// input is not a module.
bool inspectModule(const std::string &bytes, const std::string &origin, InspectReport &report, std::string &error);

/// The report as a JSON document: {"file", "kind", "target", "compiler", "source_hash",
/// "elf"/"ptx", "kernels": [...]} (docs/aot.md lists the keys), indented by two spaces.
std::string inspectJSON(const InspectReport &report);

/// The report as text for a reader: one block per kernel.
std::string inspectText(const InspectReport &report);

} // namespace tle::driver
