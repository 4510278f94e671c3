// Tensor maps for tensor-descriptor accesses (tl.make_tensor_descriptor) that the NVPTX backend
// copies with TMA (PTX ISA §9.7.9.25.5, cp.async.bulk.tensor): which accesses qualify and the
// CUtensorMap the launcher builds for them (ir::TensorMapParam, listed in the module metadata).
#pragma once

#include "tle/IR/IR.h"

#include <optional>

namespace tle::transforms {

/// The tensor map of a rank-2 tensor-descriptor load or store (`access`: ir::OpKind::Load or
/// Store with the descriptor's base, shape, strides and offsets as operands 3..), copied in boxes
/// of all the block's rows and one swizzle span (`swizzle` bytes: 32, 64 or 128) of columns.
/// Requires: the base a kernel param promised 16-byte aligned; every shape and stride a product
/// of integer params and constants (so the launcher can compute it); the last stride the
/// constant 1 and the others whole 16-byte units; at most 256 rows (a box dim's limit) and the
/// block's row a whole number of swizzle spans. Otherwise nullopt (the access stays ordinary
/// loads or stores).
std::optional<ir::TensorMapParam> tensorMapFor(const ir::Function &f, const ir::Op &access, int swizzle);

/// Whether `op` itself (not the ops in its regions) may write global memory: a store, an
/// atomic, or inline asm with side effects. TMA reads global memory through the async proxy,
/// which sees such generic writes only after a proxy fence (PTX ISA, membar/fence:
/// fence.proxy.async).
bool writesGlobalMemory(const ir::Op &op);

/// Whether `op` or an op in its regions may write global memory (writesGlobalMemory).
bool writesGlobalMemoryIn(const ir::Op &op);

/// The swizzle span (bytes) of a TMA store's staging tile and boxes: a row of the block, at most
/// 128 (the widest swizzle).
int tmaStoreSwizzle(const ir::Op &store);

/// Whether the NVPTX backend writes the tensor-descriptor store `store` with TMA
/// (cp.async.bulk.tensor from a swizzled staging tile in shared memory): on sm_90a, a rank-2
/// store of at least 32 bytes per row and at most kMaxTmaStoreTileBytes in all, whose tensor map
/// tensorMapFor builds with min(128, row bytes) swizzle, at the kernel's top level or in `for`
/// loops (a persistent kernel's epilogue; not under an `if` or `while`: inForLoopsOnly), after
/// which nothing reads or writes global memory.
/// For a store in a loop, "after" includes the whole top-level loop (its next iterations), where
/// loads through another pointer param (tensor-descriptor loads of another base, pointer loads
/// whose pointers pointerParam traces to another param: a fused epilogue's bias) are allowed:
/// two params are assumed not to overlap, as Triton's TMA stores do. Layout assignment then lets
/// the stored value keep its own layout (the staging tile takes any).
bool tmaStore(const ir::Function &f, const ir::Op &store);

/// The largest block (bytes) a descriptor store is written with TMA for: its staging tile may
/// take the whole block in shared memory.
constexpr int64_t kMaxTmaStoreTileBytes = 128 * 1024;

/// The pointer param that the pointers `ptr` (a pointer or a tile of pointers) are offsets of,
/// found through addptr, splat, broadcast, expand_dims and layout conversions; null when they come
/// from anything else (a select, a load, an integer cast).
const ir::Value *pointerParam(const ir::Function &f, const ir::Value *ptr);

/// Whether `op` sits at the function's top level or in `for` loops only (no `if` or `while`
/// around it): every thread of the block reaches it, so it may use block-wide barriers.
bool inForLoopsOnly(const ir::Function &f, const ir::Op &op);

/// The top-level loop around a store (an op of the function's body), or null for a top-level one.
const ir::Op *tmaStoreLoop(const ir::Function &f, const ir::Op &store);

/// Marks every store tmaStore accepts as written with TMA (ir::Op::axis = 1, printed "tma") and
/// replaces its pointer and mask tiles by splats of the descriptor's base and of true, which it
/// no longer reads: their index arithmetic becomes dead code, and the tile takes any layout for
/// free. The pass `mark-tma-stores`, run first thing, before layout assignment (canonicalize then
/// removes the arithmetic); the NVPTX backend writes marked stores with TMA. Returns how many it
/// marked.
unsigned markTmaStores(ir::Function &f);

} // namespace tle::transforms
