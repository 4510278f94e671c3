// Versioning loop bodies on index masks that are uniform in most iterations.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Rewrites `tl.where(c, a, b)` in a loop body when c is a comparison (<, <=, >, >=) of two
/// signed i32 index tiles whose every element lies in a range known as scalars: tiles built
/// from `tl.arange`, splats of scalars, broadcasts and expand_dims, additions, subtractions and
/// multiplications by constants. Triton's causal attention mask
/// `offs_m[:, None] >= start_n + offs_n[None, :]` and bounds masks such as `offs < n` are of this
/// form; in most iterations every element of them is true.
///
/// The select, the ops that compute its condition, and the elementwise ops around it that
/// leave as many values live after them (attention's `qk * qk_scale + tl.where(...)`) go into
/// an `if` on whether the smallest left-hand element compares true against the largest
/// right-hand one (for `>=`; the mirror for `<`, `<=`, `>`): its `then` branch computes the
/// ops with the select replaced by `a` and no compare, its `else` branch the ops as written.
/// The ranges are computed in i64 from the scalars' i32 values, and the `then` branch is taken
/// only when both ranges lie within i32, where the tiles' i32 arithmetic cannot have wrapped:
/// results are those of the ops as written, bit for bit.
///
/// Only selects of floating-point tiles in a `for` or `while` body are versioned (straight-line
/// code runs once; an integer select is index arithmetic, such as `tl.where(rm < M, rm, 0)`,
/// whose contiguity and divisibility facts an `if` result would not keep), and only when the
/// comparison moves into the `if` with them (it has no other use). Returns the number of
/// selects versioned.
unsigned versionUniformMasks(ir::Function &f);

} // namespace tle::transforms
