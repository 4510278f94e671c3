// Structure-aware fuzz target for tlec: the input is a tape of choices for tests/difftest's kernel generator, so every input is a valid kernel.
//
// Each input byte is one choice of the random-kernel generator (dtypes, block sizes, expression
// trees, loops, branches, reductions, outputs; difftest::generateKernelFromChoices), so that
// libFuzzer's mutations change a kernel's structure while it stays valid and reaches Sema, the
// tile-IR passes and the NVPTX backend. The kernel is compiled to PTX for sm_90a or sm_80 with
// 1, 2, 4 or 8 warps (chosen by a hash of the input). Every generated kernel is valid, so any exit
// status but 0 is a finding (a generator bug or a compiler bug), as are the findings of tle-fuzz
// (a crash, an internal error, a sanitizer report). TLE_FUZZ_GEN_PRINT=1 prints each kernel.
#include "FuzzCompile.h"
#include "Generator.h"

#include <cstdio>
#include <cstdlib>

namespace {

uint32_t fnv1a(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 16777619u;
  return h;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) // a kernel takes a few hundred choices; the rest would be ignored
    return -1;
  tle::difftest::GeneratedKernel k = tle::difftest::generateKernelFromChoices(data, size);
  static const bool print = std::getenv("TLE_FUZZ_GEN_PRINT") != nullptr;
  if (print)
    std::fprintf(stderr, "tle-fuzz-gen: -s \"%s\"\n%s\n", k.signature.c_str(), k.source.c_str());
  if (!tle::fuzz::writeScratch(reinterpret_cast<const uint8_t *>(k.source.data()), k.source.size()))
    return 0;
  uint32_t h = fnv1a(data, size);
  tle::driver::CompileOptions o;
  o.input = tle::fuzz::scratchPath();
  o.output = "-";
  o.emit = tle::driver::Emit::PTX;
  o.kernel = k.kernelName;
  o.signature = k.signature;
  o.arch = (h & 1) ? "sm_80" : "sm_90a";
  o.numWarps = 1 << ((h >> 1) & 3);
  std::string diagnostics;
  if (tle::fuzz::compileChecked(o, diagnostics) != 0) {
    std::fprintf(stderr, "tle-fuzz-gen: tlec rejects a generated kernel (%s, %d warps, -s \"%s\"):\n%s\n%s\n",
                 o.arch.c_str(), o.numWarps, k.signature.c_str(), diagnostics.c_str(), k.source.c_str());
    std::abort();
  }
  return 0;
}
