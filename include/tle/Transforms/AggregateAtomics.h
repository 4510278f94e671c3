// aggregate-atomics: shared-memory atomic adds of a constant that a warp's lanes send to one
// address, combined into one atomic per address and warp.
#pragma once

#include "tle/IR/IR.h"

namespace tle::transforms {

/// Marks `warp_aggregate` (Op::warpAggregate) every atomic_rmw of `f` that:
///   - adds (AtomicKind::Add) to a 32- or 64-bit integer,
///   - through a tile of pointers into the CTA's shared memory or a cluster CTA's (AddrSpace
///     Shared or Cluster),
///   - a value that is a splat of an integer constant,
///   - with relaxed ordering (a leader's release could not stand for its peers' earlier writes),
///   - whose result (the old values) nothing reads.
/// The NVPTX backend then groups each register's lanes by address (PTX `match.any.sync`, ISA
/// §9.7.13.9; sm_70+), and the lowest lane of each group adds the constant times the group's
/// size (`popc`): one atomic per distinct address of a warp. A histogram whose values crowd a
/// few bins (the top bits of normally distributed floats: a radix select's first pass) otherwise
/// serialises the lanes that hit one bin in the shared-memory atomic unit. The counts are the
/// same; only the number of atomic instructions changes. Runs in the gpu stage (every thread of
/// the CTA, or of a warp partition, executes each tile op: the warp is converged there). Returns
/// the number of atomics marked.
unsigned aggregateAtomics(ir::Function &f);

} // namespace tle::transforms
