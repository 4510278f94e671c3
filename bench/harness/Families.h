// Kernel families of the benchmark suites: the buffers each needs and its independent float64 reference check.
#pragma once

#include "Suite.h"
#include "Tensor.h"

#include <string>
#include <vector>

namespace tle::bench {

/// The host copies of one case's buffers (in the suite's buffer order) and its evaluated vars.
struct CaseData {
  const ResolvedCase &rc;
  std::vector<HostTensor> &tensors;

  /// The buffer called `name` (the family's required names are checked when the suite loads).
  HostTensor &buf(const std::string &name) const;
  /// The value of variable `name` as a double; throws BenchError when the case lacks it.
  double var(const std::string &name) const;
};

/// How one output compares with its reference: an element is bad unless it is finite and
/// |got - want| <= atol + rtol * |want|.
struct OutputCheck {
  std::string name;
  size_t count = 0, bad = 0;
  double maxAbs = 0, maxRel = 0;
  double atol = 0, rtol = 0;
  int64_t firstBad = -1;      ///< flat index of the first bad element, -1 if none
  double gotAtFirstBad = 0, wantAtFirstBad = 0;
};

/// The outcome of a family's check.
struct CheckReport {
  bool pass = true;
  std::vector<OutputCheck> outputs;
};

/// A kernel family: required buffer names (inputs generated, outputs checked), required vars, a
/// hook that computes derived inputs (e.g. mean and rstd for layernorm backward) and the check.
struct Family {
  std::string name;
  std::string what;                  ///< one line: what the kernels compute
  std::vector<std::string> inputs;   ///< buffers the reference reads
  std::vector<std::string> outputs;  ///< buffers it checks
  std::vector<std::string> vars;     ///< variables it reads (e.g. eps)
  void (*prepare)(CaseData &);       ///< fills inputs whose init is "derived"; may be null
  CheckReport (*check)(CaseData &);
};

/// Every family: vector_add, softmax, layernorm_fwd, layernorm_bwd, rmsnorm_fwd, cross_entropy_fwd,
/// silu_and_mul, tensor_sum, cumsum, matmul.
const std::vector<Family> &families();
/// The family called `name`, or nullptr.
const Family *findFamily(const std::string &name);

/// Compares `got` with `want` element-wise (see OutputCheck); runs on workerThreads().
OutputCheck compareOutput(const std::string &name, const HostTensor &got, const std::vector<double> &want,
                          double atol, double rtol);

} // namespace tle::bench
