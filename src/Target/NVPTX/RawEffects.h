// What a TLE-Raw native function does to shared memory, read from its LLVM IR.
#pragma once

namespace llvm {
class Function;
}

namespace tle::nvptx {

/// The ir::RawSharedEffects bits of `entry` and every function it calls that the module defines:
/// loads, stores, atomics and memory intrinsics through pointers that may be shared (address
/// space 3, 7 or generic); inline PTX classified instruction by instruction (cp.async and its
/// commit_group: an async copy; cp.async.wait_group / wait_all: its wait; ld, st, atom, red,
/// bar, barrier, mbarrier, fence, membar, wgmma, ldmatrix, stmatrix, tensormap and any other
/// cp. form: an access; register-only PTX (arithmetic, mov, cvt, shfl, ...): nothing); calls of
/// intrinsics and declarations LLVM marks as not touching memory, PTX special registers and
/// libdevice's math (`__nv_*`): nothing. Anything else (an indirect call, an unknown
/// declaration) makes the result kRawSharedUnknown.
int rawSharedEffects(llvm::Function &entry);

} // namespace tle::nvptx
