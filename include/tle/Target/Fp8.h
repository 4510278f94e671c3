// fp8 conversions as LLVM IR integer and fp32 code, shared by the CPU target and the NVPTX
// target (where the GPU has no fp8 instruction: before sm_89, and for round-toward-zero).
#pragma once

#include "tle/IR/Types.h"

#include <llvm/IR/IRBuilder.h>

namespace tle::target {

/// The fp8 value whose bits are `bits` (an i8) as an f32, exactly (fp8e4nv: S.1111.111 is NaN;
/// fp8e5: exponent 31 is infinity or NaN). `t` is DType::F8E4M3 or DType::F8E5M2.
llvm::Value *fp8ToF32(llvm::IRBuilderBase &B, llvm::Value *bits, ir::DType t);

/// The f32 `f` rounded to the fp8 dtype `t`, as i8 bits: to nearest even, or toward zero when
/// `towardZero`. Saturating like PTX `cvt.rn.satfinite` (PTX ISA §9.7.9.21, Triton's conversion
/// on sm_89+): NaN gives NaN (0x7F, sign kept), results beyond the largest finite value (448
/// for fp8e4nv, 57344 for fp8e5) and infinities give +-largest finite.
llvm::Value *f32ToFp8(llvm::IRBuilderBase &B, llvm::Value *f, ir::DType t, bool towardZero);

/// The f64 `d` as an f32 rounded to odd (truncate toward zero, then set the last mantissa bit
/// when inexact): a second rounding to nearest even into a format with at least two fewer
/// mantissa bits (fp16, bf16, fp8) is then the correctly rounded result of `d`.
llvm::Value *f64ToF32RoundToOdd(llvm::IRBuilderBase &B, llvm::Value *d);

} // namespace tle::target
