// Axis info: per-dimension contiguity, divisibility and constancy of integer and pointer values,
// the facts that decide vector width and mask granularity of global loads and stores.
#pragma once

#include "tle/IR/IR.h"

#include <map>
#include <optional>
#include <vector>

namespace tle::transforms {

/// Facts about a value, one entry per tile dim (scalars have one entry):
///  - contiguity[d]: elements come in runs of this length along d whose values increase by 1
///    (pointers: by one element), each run starting at a multiple of the length;
///  - divisibility[d]: the first element of every run is a multiple of this (pointers: the
///    address, in bytes); for contiguity 1, every element;
///  - constancy[d]: elements come in aligned runs of this length along d holding one value.
/// All three are powers of two (Triton's AxisInfo lattice, with the same meaning).
struct AxisInfo {
  std::vector<int64_t> contiguity, divisibility, constancy;
  /// The value of every element, when it is a known integer constant.
  std::optional<int64_t> constant;
};

/// Computes AxisInfo for every value of `f` in one forward pass (loop-carried values are
/// taken conservatively).
class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(const ir::Function &f);
  /// The facts for `v`; conservative (all 1) for values the analysis did not see.
  const AxisInfo &get(const ir::Value *v) const;
  /// Elements one access through the pointer tile `ptr` under `mask` (nullptr: none) may move
  /// as a vector along the last dim: the least of 16 bytes' worth, the pointers' contiguity and
  /// alignment and the mask's constancy (Triton's rule for vectorised loads and stores). The
  /// layout may allow fewer (its contiguous registers). 1 for a scalar pointer.
  int64_t accessVector(const ir::Value *ptr, const ir::Value *mask) const;

private:
  void visit(const ir::Block &b);
  void visit(const ir::Op &op);
  AxisInfo unknown(const ir::Type &t) const;
  std::map<const ir::Value *, AxisInfo> info_;
  AxisInfo none_;
};

} // namespace tle::transforms
