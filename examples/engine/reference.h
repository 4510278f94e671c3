// CPU references (double precision) for the steps of block.h, and the check that compares a step's outputs with them.
//
// Each step is checked in isolation: its reference is computed from the buffers as they were
// just before the step ran on the device (`before`), and compared with what the step produced
// (`after`), so rounding differences do not accumulate from step to step. Header-only; used by
// the engine example and by its CPU test.
#pragma once

#include "block.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>

namespace tle_engine {

/// The values of every buffer (indexed by Buf), as floats; fp16 buffers hold fp16 values exactly.
using HostState = std::vector<std::vector<float>>;

/// The initial buffers of the block for `c`: random inputs and weights from `seed` (rounded to
/// fp16), the rotary tables, and zeros for everything a step produces.
inline HostState initialState(const BlockConfig &c, uint64_t seed) {
  std::vector<BufferSpec> specs = bufferSpecs(c);
  HostState st(specs.size());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const int half = c.headDim / 2;
  for (size_t b = 0; b < specs.size(); ++b) {
    const BufferSpec &s = specs[b];
    std::vector<float> &v = st[b];
    v.assign(s.elems, 0.f);
    for (size_t i = 0; i < s.elems; ++i) {
      double x = 0;
      switch (s.init) {
      case Init::Zero:
        break;
      case Init::Uniform:
        x = unit(rng) * s.scale;
        break;
      case Init::NormWeight:
        x = 1.0 + 0.5 * unit(rng);
        break;
      case Init::RopeCos:
      case Init::RopeSin: {
        double pos = double(i / size_t(half)), j = double(i % size_t(half));
        double angle = pos * std::pow(c.ropeBase, -2.0 * j / double(c.headDim));
        x = s.init == Init::RopeCos ? std::cos(angle) : std::sin(angle);
        break;
      }
      }
      v[i] = s.dtype == DType::F16 ? halfToFloat(floatToHalf(float(x))) : float(x);
    }
  }
  return st;
}

/// Accepted error of one element: |got - ref| <= atol + rtol * |ref|.
struct Tolerance {
  double atol, rtol;
};

/// The tolerance of a step's main (fp16) output. The device computes in fp32 (tensor cores with
/// fp32 accumulation, approximate exp2 in attention and SiLU) and rounds to fp16 (relative
/// half-ulp 2^-11 = 4.9e-4); attention also rounds P to fp16 before P @ V.
inline Tolerance toleranceFor(OpKind k) {
  switch (k) {
  case OpKind::Matmul:
    return {2e-3, 4e-3};
  case OpKind::Attention:
    return {5e-3, 1e-2};
  case OpKind::Add:
    return {1e-3, 2e-3};
  default: // RmsNorm, Rotary, SiluMul
    return {1e-3, 4e-3};
  }
}
/// The tolerance of RMSNorm's fp32 rstd output.
inline constexpr Tolerance kRstdTolerance{0.0, 1e-4};

/// The outcome of checking one step. The relative error of an element is
/// |got - ref| / max(|ref|, 0.01).
struct CheckResult {
  double maxAbs = 0;  ///< largest |got - ref|
  double maxRel = 0;  ///< largest relative error
  size_t checked = 0; ///< elements compared
  size_t bad = 0;     ///< elements outside the tolerance (or not finite)
  std::string firstBad; ///< the first element outside the tolerance, described

  /// Every compared element within its tolerance (and at least one compared).
  bool pass() const { return bad == 0 && checked > 0; }

  /// Compares one element; `where` describes it for the failure message.
  void compare(double got, double ref, Tolerance tol, const std::function<std::string()> &where) {
    ++checked;
    double err = std::fabs(got - ref);
    bool ok = std::isfinite(got) && err <= tol.atol + tol.rtol * std::fabs(ref);
    if (std::isfinite(err)) {
      maxAbs = std::max(maxAbs, err);
      maxRel = std::max(maxRel, err / std::max(std::fabs(ref), 0.01));
    } else {
      maxAbs = maxRel = INFINITY;
    }
    if (!ok && bad++ == 0) {
      char buf[160];
      std::snprintf(buf, sizeof buf, ": got %.6g, expected %.6g (tolerance %.3g + %.3g * |expected|)", got, ref,
                    tol.atol, tol.rtol);
      firstBad = where() + buf;
    }
  }
  /// Adds another partial result (from another thread).
  void merge(const CheckResult &o) {
    maxAbs = std::max(maxAbs, o.maxAbs);
    maxRel = std::max(maxRel, o.maxRel);
    checked += o.checked;
    if (o.bad && !bad)
      firstBad = o.firstBad;
    bad += o.bad;
  }
};

/// The rows to check out of `rows`: all of them when `maxRows` is 0 or at least `rows`,
/// otherwise `maxRows` rows spread evenly, the first and the last included.
inline std::vector<int64_t> sampleRows(int64_t rows, int64_t maxRows) {
  std::vector<int64_t> r;
  if (maxRows <= 0 || maxRows >= rows) {
    for (int64_t i = 0; i < rows; ++i)
      r.push_back(i);
    return r;
  }
  for (int64_t i = 0; i < maxRows; ++i)
    r.push_back(maxRows == 1 ? 0 : i * (rows - 1) / (maxRows - 1));
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

namespace detail {

/// Runs fn(row, result) for every row of `rows` on `threads` threads and merges the results.
inline CheckResult forRows(const std::vector<int64_t> &rows, unsigned threads,
                           const std::function<void(int64_t, CheckResult &)> &fn) {
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(rows.size())));
  std::vector<CheckResult> parts(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (size_t i = t; i < rows.size(); i += threads)
        fn(rows[i], parts[t]);
    });
  for (auto &th : pool)
    th.join();
  CheckResult all;
  for (auto &p : parts)
    all.merge(p);
  return all;
}

/// "buf[row, col]", for failure messages.
inline std::string at(const char *buf, int64_t row, int64_t col) {
  return std::string(buf) + "[" + std::to_string(row) + ", " + std::to_string(col) + "]";
}

} // namespace detail

/// Checks the outputs of step `s` of the block `c`: `before` holds every buffer as it was just
/// before the step, `after` as it is after it. Matmuls and attention compare `maxRows` sampled
/// rows (0: all; see sampleRows); the other steps compare every row. Also checks that the
/// columns a matmul or the rotary step must not write (the other half of gate_up, the v heads)
/// are unchanged. Uses `threads` threads.
inline CheckResult checkStep(const Step &s, const BlockConfig &c, const HostState &before, const HostState &after,
                             int64_t maxRows, unsigned threads) {
  const Op &op = s.op;
  const Tolerance tol = toleranceFor(op.kind);
  const std::vector<BufferSpec> specs = bufferSpecs(c);
  const char *out = specs[op.c].name;
  const bool sampled = op.kind == OpKind::Matmul || op.kind == OpKind::Attention;
  const std::vector<int64_t> rows = sampleRows(op.rows, sampled ? maxRows : 0);
  const auto &A = before[op.a], &B = before[op.b], &Cbefore = before[op.c], &C = after[op.c];

  switch (op.kind) {
  case OpKind::RmsNorm:
    return detail::forRows(rows, threads, [&](int64_t r, CheckResult &res) {
      const float *x = &A[size_t(r * op.cols)];
      double ss = 0;
      for (int64_t j = 0; j < op.cols; ++j)
        ss += double(x[j]) * double(x[j]);
      double rstd = 1.0 / std::sqrt(ss / double(op.cols) + double(c.eps));
      res.compare(after[op.d][size_t(r)], rstd, kRstdTolerance, [&] { return detail::at(specs[op.d].name, r, 0); });
      for (int64_t j = 0; j < op.cols; ++j)
        res.compare(C[size_t(r * op.cols + j)], double(x[j]) * rstd * double(B[size_t(j)]), tol,
                    [&] { return detail::at(out, r, j); });
    });
  case OpKind::Matmul:
    return detail::forRows(rows, threads, [&](int64_t r, CheckResult &res) {
      const int64_t N = op.cols, K = op.k;
      std::vector<double> acc(size_t(N), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        double a = A[size_t(r * K + k)];
        const float *b = &B[size_t(k * N)];
        for (int64_t n = 0; n < N; ++n)
          acc[size_t(n)] += a * double(b[n]);
      }
      for (int64_t j = 0; j < op.ldc; ++j) {
        size_t i = size_t(r * op.ldc + j);
        if (j >= op.cOffset && j < op.cOffset + N)
          res.compare(C[i], acc[size_t(j - op.cOffset)], tol, [&] { return detail::at(out, r, j); });
        else // outside the step's columns: untouched
          res.compare(C[i], Cbefore[i], {0, 0}, [&] { return detail::at(out, r, j) + " (not written by this step)"; });
      }
    });
  case OpKind::Rotary:
    return detail::forRows(rows, threads, [&](int64_t r, CheckResult &res) {
      const int64_t hid = op.cols, ld = 3 * hid, D = c.headDim, half = D / 2, pos = r % c.seq;
      const float *cs = &before[op.b][size_t(pos * half)], *sn = &before[op.c][size_t(pos * half)];
      const float *row = &A[size_t(r * ld)];
      for (int64_t j = 0; j < ld; ++j) {
        double ref = row[j];
        if (j < 2 * hid) { // q and k heads rotate; v stays
          int64_t i = j % D;
          int64_t base = j - i;
          double x1 = row[base + i % half], x2 = row[base + half + i % half];
          double co = cs[i % half], si = sn[i % half];
          ref = i < half ? x1 * co - x2 * si : x2 * co + x1 * si;
        }
        res.compare(after[op.a][size_t(r * ld + j)], ref, j < 2 * hid ? tol : Tolerance{0, 0},
                    [&] { return detail::at(specs[op.a].name, r, j); });
      }
    });
  case OpKind::Attention:
    return detail::forRows(rows, threads, [&](int64_t r, CheckResult &res) {
      const int64_t hid = op.cols, ld = 3 * hid, D = c.headDim, S = c.seq;
      const int64_t first = (r / S) * S; // first token of this sequence
      const double scale = 1.0 / std::sqrt(double(D));
      std::vector<double> p(static_cast<size_t>(r - first + 1)), o(static_cast<size_t>(D));
      for (int h = 0; h < c.heads; ++h) {
        const float *q = &A[size_t(r * ld + h * D)];
        double mx = -INFINITY;
        for (int64_t j = first; j <= r; ++j) {
          const float *k = &A[size_t(j * ld + hid + h * D)];
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += double(q[d]) * double(k[d]);
          p[size_t(j - first)] = dot * scale;
          mx = std::max(mx, dot * scale);
        }
        double sum = 0;
        for (double &v : p)
          sum += (v = std::exp(v - mx));
        std::fill(o.begin(), o.end(), 0.0);
        for (int64_t j = first; j <= r; ++j) {
          const float *v = &A[size_t(j * ld + 2 * hid + h * D)];
          for (int64_t d = 0; d < D; ++d)
            o[size_t(d)] += p[size_t(j - first)] * double(v[d]);
        }
        for (int64_t d = 0; d < D; ++d)
          res.compare(C[size_t(r * hid + h * D + d)], o[size_t(d)] / sum, tol,
                      [&] { return detail::at(out, r, h * D + d) + " (head " + std::to_string(h) + ")"; });
      }
    });
  case OpKind::SiluMul:
    return detail::forRows(rows, threads, [&](int64_t r, CheckResult &res) {
      const int64_t F = op.cols;
      for (int64_t j = 0; j < F; ++j) {
        double g = A[size_t(r * 2 * F + j)], u = A[size_t(r * 2 * F + F + j)];
        res.compare(C[size_t(r * F + j)], g / (1.0 + std::exp(-g)) * u, tol, [&] { return detail::at(out, r, j); });
      }
    });
  case OpKind::Add:
    return detail::forRows(rows, threads, [&](int64_t r, CheckResult &res) {
      for (int64_t j = 0; j < op.cols; ++j) {
        size_t i = size_t(r * op.cols + j);
        res.compare(C[i], double(A[i]) + double(B[i]), tol, [&] { return detail::at(out, r, j); });
      }
    });
  }
  return {};
}

} // namespace tle_engine
