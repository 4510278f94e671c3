// The NVPTX target: gpu-stage tile IR to LLVM IR (per-thread code), PTX through LLVM's NVPTX
// backend after the O3 pipeline, and cubin through ptxas.
#pragma once

#include "tle/IR/IR.h"
#include "tle/IR/RawCode.h"
#include "tle/Target/NVPTX/KernelMetadata.h"
#include "tle/Support/Diagnostics.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tle::nvptx {

/// Supported targets: "sm_80" (PTX ISA 7.0+, Ampere) and "sm_90a" (Hopper with the
/// architecture-specific features: wgmma, setmaxnreg).
bool isSupportedArch(const std::string &arch);

/// Lowers a gpu-stage function (every tile value has a layout; see Transforms/LayoutAssignment.h)
/// to an LLVM module for nvptx64-nvidia-cuda: one `ptx_kernel` function whose block size
/// (32 * num_warps) is declared through `!nvvm.annotations` (reqntidx/maxntidx) so PTX carries
/// `.reqntid`, plus the `__tle_metadata` global (tle/Runtime/Metadata.h): the kernel's
/// KernelMetadata (describeKernel of `f` with the driver's `launch` facts), computed once after
/// the emitter has set f's resources (shared bytes, producer warps, register cap, tensor maps)
/// and serialised once (toJSON). User-visible resource errors are reported through `diags`.
std::unique_ptr<llvm::Module> emitLLVM(ir::Function &f, llvm::LLVMContext &ctx, const std::string &arch,
                                       const LaunchFacts &launch, DiagnosticEngine &diags);

/// Runs LLVM's O3 pipeline on `m` and the NVPTX backend; returns the PTX text. `fpFusion`
/// (Triton's enable_fp_fusion, default on; tlec --no-fp-fusion turns it off) lets the backend
/// and ptxas contract floating-point multiplies and adds into fma: plain `mul.f32`/`add.f32`
/// instead of the `.rn` forms that forbid contraction.
std::string emitPTX(llvm::Module &m, const std::string &arch, bool fpFusion = true);

/// Assembles PTX into a cubin with ptxas (`ptxasPath`, else $TLE_PTXAS, else the toolkit found
/// at build time, else $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas, or ptxas on PATH).
/// Returns false with `error` set (including ptxas's own log) on failure or when no ptxas exists.
bool assembleCubin(const std::string &ptx, const std::string &arch, const std::string &ptxasPath,
                   std::string &cubin, std::string &error);

/// Compiles a TLE-Raw function (tle.md §4) for `src.arch`: CUDA through clang-19's CUDA mode
/// ($TLE_CLANG, else the clang-19 found at build time or on PATH) against the CUDA toolkit's
/// headers ($CUDA_HOME, else the toolkit found at build time or /usr/local/cuda), or LLVM IR text
/// as it is. The entry is `src.externName` (symbol or C++ name) or the module's only function with
/// external linkage; it is renamed to a symbol unique to the source. Failures come back as
/// RawResult::error with clang's or the LLVM parser's log in `detail`; nothing throws.
ir::RawResult compileRaw(const ir::RawSource &src);

} // namespace tle::nvptx
