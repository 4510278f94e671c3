// Independent float64 references of the benchmark kernel families and their tolerances (see Families.h).
#include "Families.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

namespace tle::bench {

HostTensor &CaseData::buf(const std::string &name) const {
  int i = bufferIndex(*rc.spec, name);
  if (i < 0)
    throw BenchError(fmt::format("case '{}' has no buffer '{}'", rc.spec->name, name));
  return tensors[size_t(i)];
}

double CaseData::var(const std::string &name) const {
  auto it = rc.env.find(name);
  if (it == rc.env.end())
    throw BenchError(fmt::format("case '{}' (family {}) needs the variable '{}'", rc.spec->name,
                                 rc.spec->family, name));
  return it->second.asDouble();
}

OutputCheck compareOutput(const std::string &name, const HostTensor &got, const std::vector<double> &want,
                          double atol, double rtol) {
  OutputCheck oc;
  oc.name = name;
  oc.count = want.size();
  oc.atol = atol;
  oc.rtol = rtol;
  if (got.numel() != want.size())
    throw BenchError(fmt::format("internal: output '{}' has {} elements, its reference {}", name, got.numel(),
                                 want.size()));
  std::mutex m;
  parallelFor(want.size(), [&](size_t b, size_t e) {
    OutputCheck part;
    for (size_t i = b; i < e; ++i) {
      double g = got.get(i), w = want[i];
      double err = std::isfinite(g) ? std::fabs(g - w) : std::numeric_limits<double>::infinity();
      part.maxAbs = std::max(part.maxAbs, err);
      if (w != 0)
        part.maxRel = std::max(part.maxRel, err / std::fabs(w));
      if (!(err <= atol + rtol * std::fabs(w))) {
        if (part.bad++ == 0) {
          part.firstBad = int64_t(i);
          part.gotAtFirstBad = g;
          part.wantAtFirstBad = w;
        }
      }
    }
    std::lock_guard<std::mutex> lock(m);
    oc.maxAbs = std::max(oc.maxAbs, part.maxAbs);
    oc.maxRel = std::max(oc.maxRel, part.maxRel);
    if (part.bad && (oc.firstBad < 0 || part.firstBad < oc.firstBad)) {
      oc.firstBad = part.firstBad;
      oc.gotAtFirstBad = part.gotAtFirstBad;
      oc.wantAtFirstBad = part.wantAtFirstBad;
    }
    oc.bad += part.bad;
  });
  return oc;
}

namespace {

/// Relative tolerance that covers rounding a float64 result to `t` (plus math in fp32).
double rtolFor(DType t, double fp32Rtol) {
  switch (t) {
  case DType::F16: return 2e-3;  // 2^-11 rounding, doubled
  case DType::BF16: return 1.6e-2;
  case DType::F64: return std::min(fp32Rtol, 1e-9);
  default: return fp32Rtol;
  }
}

/// Rows and row length of a row-major [.., N] tensor.
std::pair<size_t, size_t> rowsCols(const HostTensor &t) {
  size_t n = size_t(t.shape().back());
  return {t.numel() / n, n};
}

void requireCols(const HostTensor &t, size_t n, const char *what) {
  if (t.numel() != n)
    throw BenchError(fmt::format("{} must have {} elements (one per column), has {}", what, n, t.numel()));
}

CheckReport finish(std::vector<OutputCheck> outs) {
  CheckReport r;
  r.outputs = std::move(outs);
  for (const OutputCheck &o : r.outputs)
    r.pass &= o.bad == 0;
  return r;
}

// ---- vector_add: z = x + y ----
CheckReport checkVectorAdd(CaseData &d) {
  HostTensor &x = d.buf("x"), &y = d.buf("y"), &z = d.buf("z");
  if (x.numel() != z.numel() || y.numel() != z.numel())
    throw BenchError("vector_add: x, y and z must have the same number of elements");
  std::vector<double> want(z.numel());
  parallelFor(want.size(), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i)
      want[i] = x.get(i) + y.get(i);
  });
  return finish({compareOutput("z", z, want, 1e-7, rtolFor(z.dtype(), 1e-6))});
}

// ---- softmax along the last axis ----
CheckReport checkSoftmax(CaseData &d) {
  HostTensor &x = d.buf("x"), &y = d.buf("y");
  auto [rows, n] = rowsCols(x);
  std::vector<double> want(x.numel());
  parallelFor(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      size_t o = r * n;
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (size_t c = 0; c < n; ++c)
        m = std::max(m, x.get(o + c));
      for (size_t c = 0; c < n; ++c)
        s += std::exp(x.get(o + c) - m);
      for (size_t c = 0; c < n; ++c)
        want[o + c] = std::exp(x.get(o + c) - m) / s;
    }
  });
  return finish({compareOutput("y", y, want, 1e-8, rtolFor(y.dtype(), 1e-4))});
}

// ---- layernorm forward: y = (x - mean) * rstd * w + b ----
CheckReport checkLayernormFwd(CaseData &d) {
  HostTensor &x = d.buf("x"), &w = d.buf("w"), &bias = d.buf("b"), &y = d.buf("y");
  HostTensor &mean = d.buf("mean"), &rstd = d.buf("rstd");
  const double eps = d.var("eps");
  auto [rows, n] = rowsCols(x);
  requireCols(w, n, "layernorm_fwd: w");
  requireCols(bias, n, "layernorm_fwd: b");
  std::vector<double> wy(x.numel()), wm(rows), wr(rows);
  parallelFor(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      size_t o = r * n;
      double s = 0, v = 0;
      for (size_t c = 0; c < n; ++c)
        s += x.get(o + c);
      double mu = s / double(n);
      for (size_t c = 0; c < n; ++c)
        v += (x.get(o + c) - mu) * (x.get(o + c) - mu);
      double rs = 1.0 / std::sqrt(v / double(n) + eps);
      for (size_t c = 0; c < n; ++c)
        wy[o + c] = (x.get(o + c) - mu) * rs * w.get(c) + bias.get(c);
      wm[r] = mu;
      wr[r] = rs;
    }
  });
  return finish({compareOutput("y", y, wy, 2e-3, rtolFor(y.dtype(), 1e-4)),
                 compareOutput("mean", mean, wm, 1e-5, rtolFor(mean.dtype(), 1e-4)),
                 compareOutput("rstd", rstd, wr, 1e-6, rtolFor(rstd.dtype(), 1e-4))});
}

// ---- rmsnorm forward: y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) ----
CheckReport checkRmsnormFwd(CaseData &d) {
  HostTensor &x = d.buf("x"), &w = d.buf("w"), &y = d.buf("y"), &rstd = d.buf("rstd");
  const double eps = d.var("eps");
  auto [rows, n] = rowsCols(x);
  requireCols(w, n, "rmsnorm_fwd: w");
  std::vector<double> wy(x.numel()), wr(rows);
  parallelFor(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      size_t o = r * n;
      double ss = 0;
      for (size_t c = 0; c < n; ++c)
        ss += x.get(o + c) * x.get(o + c);
      double rs = 1.0 / std::sqrt(ss / double(n) + eps);
      for (size_t c = 0; c < n; ++c)
        wy[o + c] = x.get(o + c) * rs * w.get(c);
      wr[r] = rs;
    }
  });
  return finish({compareOutput("y", y, wy, 2e-3, rtolFor(y.dtype(), 1e-4)),
                 compareOutput("rstd", rstd, wr, 1e-6, rtolFor(rstd.dtype(), 1e-4))});
}

// ---- layernorm backward ----
// Derived inputs: mean and rstd of each row of x (as the forward pass would have stored them).
void prepareLayernormBwd(CaseData &d) {
  HostTensor &x = d.buf("x"), &mean = d.buf("mean"), &rstd = d.buf("rstd");
  const double eps = d.var("eps");
  auto [rows, n] = rowsCols(x);
  if (mean.numel() != rows || rstd.numel() != rows)
    throw BenchError("layernorm_bwd: mean and rstd need one element per row of x");
  parallelFor(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      size_t o = r * n;
      double s = 0, v = 0;
      for (size_t c = 0; c < n; ++c)
        s += x.get(o + c);
      double mu = s / double(n);
      for (size_t c = 0; c < n; ++c)
        v += (x.get(o + c) - mu) * (x.get(o + c) - mu);
      mean.set(r, mu);
      rstd.set(r, 1.0 / std::sqrt(v / double(n) + eps));
    }
  });
}

// dx = (w*dy - (xhat * c1 + c2)) * rstd, c1 = mean(xhat * w*dy), c2 = mean(w*dy) per row, with
// xhat = (x - mean) * rstd from the stored mean and rstd; dw = sum_rows(dy * xhat), db = sum_rows(dy).
CheckReport checkLayernormBwd(CaseData &d) {
  HostTensor &x = d.buf("x"), &dy = d.buf("dy"), &w = d.buf("w"), &mean = d.buf("mean"), &rstd = d.buf("rstd");
  HostTensor &dx = d.buf("dx"), &dw = d.buf("dw"), &db = d.buf("db");
  auto [rows, n] = rowsCols(x);
  requireCols(w, n, "layernorm_bwd: w");
  requireCols(dw, n, "layernorm_bwd: dw");
  requireCols(db, n, "layernorm_bwd: db");
  std::vector<double> wdx(x.numel()), wdw(n, 0.0), wdb(n, 0.0);
  std::mutex m;
  parallelFor(rows, [&](size_t b, size_t e) {
    std::vector<double> pdw(n, 0.0), pdb(n, 0.0), xhat(n), wdy(n);
    for (size_t r = b; r < e; ++r) {
      size_t o = r * n;
      double mu = mean.get(r), rs = rstd.get(r), c1 = 0, c2 = 0;
      for (size_t c = 0; c < n; ++c) {
        xhat[c] = (x.get(o + c) - mu) * rs;
        wdy[c] = w.get(c) * dy.get(o + c);
        c1 += xhat[c] * wdy[c];
        c2 += wdy[c];
        pdw[c] += dy.get(o + c) * xhat[c];
        pdb[c] += dy.get(o + c);
      }
      c1 /= double(n);
      c2 /= double(n);
      for (size_t c = 0; c < n; ++c)
        wdx[o + c] = (wdy[c] - (xhat[c] * c1 + c2)) * rs;
    }
    std::lock_guard<std::mutex> lock(m);
    for (size_t c = 0; c < n; ++c) {
      wdw[c] += pdw[c];
      wdb[c] += pdb[c];
    }
  });
  auto scale = [](const std::vector<double> &v) {
    double mx = 0;
    for (double a : v)
      mx = std::max(mx, std::fabs(a));
    return mx;
  };
  // dw and db are sums over all rows: allow 1e-3 of their largest magnitude besides rounding.
  return finish({compareOutput("dx", dx, wdx, 5e-3, rtolFor(dx.dtype(), 1e-4)),
                 compareOutput("dw", dw, wdw, 1e-2 + 1e-3 * scale(wdw), rtolFor(dw.dtype(), 1e-4)),
                 compareOutput("db", db, wdb, 1e-2 + 1e-3 * scale(wdb), rtolFor(db.dtype(), 1e-4))});
}

// ---- cross-entropy forward: loss = logsumexp(logits[row]) - logits[row, target[row]] ----
CheckReport checkCrossEntropyFwd(CaseData &d) {
  HostTensor &logits = d.buf("logits"), &target = d.buf("target"), &loss = d.buf("loss");
  auto [rows, v] = rowsCols(logits);
  if (target.numel() != rows || loss.numel() != rows)
    throw BenchError("cross_entropy_fwd: target and loss need one element per row of logits");
  std::vector<double> want(rows);
  parallelFor(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      size_t o = r * v;
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (size_t c = 0; c < v; ++c)
        m = std::max(m, logits.get(o + c));
      for (size_t c = 0; c < v; ++c)
        s += std::exp(logits.get(o + c) - m);
      double t = target.get(r);
      if (t < 0 || t >= double(v))
        throw BenchError(fmt::format("cross_entropy_fwd: target[{}] = {} is outside [0, {})", r, t, v));
      want[r] = m + std::log(s) - logits.get(o + size_t(t));
    }
  });
  return finish({compareOutput("loss", loss, want, 1e-4, rtolFor(loss.dtype(), 1e-5))});
}

// ---- silu_and_mul: y = silu(x[:, :H]) * x[:, H:] ----
CheckReport checkSiluAndMul(CaseData &d) {
  HostTensor &x = d.buf("x"), &y = d.buf("y");
  auto [rows, h2] = rowsCols(x);
  auto [yrows, h] = rowsCols(y);
  if (yrows != rows || h2 != 2 * h)
    throw BenchError(fmt::format("silu_and_mul: x must be [M, 2H] and y [M, H]; got {} x {} and {} x {}", rows, h2,
                                 yrows, h));
  std::vector<double> want(y.numel());
  parallelFor(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r)
      for (size_t c = 0; c < h; ++c) {
        double g = x.get(r * h2 + c), u = x.get(r * h2 + h + c);
        want[r * h + c] = g / (1.0 + std::exp(-g)) * u;
      }
  });
  return finish({compareOutput("y", y, want, 2e-3, rtolFor(y.dtype(), 1e-4))});
}

// ---- tensor_sum: out[0] = sum of every element of x ----
CheckReport checkTensorSum(CaseData &d) {
  HostTensor &x = d.buf("x"), &out = d.buf("out");
  if (out.numel() != 1)
    throw BenchError("tensor_sum: out must have one element");
  std::mutex m;
  double sum = 0, abs = 0;
  parallelFor(x.numel(), [&](size_t b, size_t e) {
    double s = 0, a = 0;
    for (size_t i = b; i < e; ++i) {
      s += x.get(i);
      a += std::fabs(x.get(i));
    }
    std::lock_guard<std::mutex> g(m);
    sum += s;
    abs += a;
  });
  // fp32 partial sums in any order: a few roundings of the running magnitude per element at
  // most, far below the change one missing or repeated block of a uniform(0, 1) input makes.
  return finish({compareOutput("out", out, {sum}, 2e-6 * abs, 0)});
}

// ---- cumsum: y = inclusive prefix sum of x along its rows ----
CheckReport checkCumsum(CaseData &d) {
  HostTensor &x = d.buf("x"), &y = d.buf("y");
  auto [rows, n] = rowsCols(x);
  if (y.numel() != x.numel())
    throw BenchError("cumsum: x and y must have the same shape");
  std::vector<double> want(x.numel());
  parallelFor(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      double s = 0;
      for (size_t c = 0; c < n; ++c)
        want[r * n + c] = s += x.get(r * n + c);
    }
  });
  return finish({compareOutput("y", y, want, 2e-3, rtolFor(y.dtype(), 1e-4))});
}

// ---- matmul: c = a @ b, a [M, K], b [K, N], c [M, N] (row-major), accumulated in float64 ----
// The reference is computed for a sample of rows (every row when M <= 64; otherwise 64 rows
// spread evenly, the first and the last included), so that large shapes check in well under a
// second. Tolerance: fp16/bf16 outputs get their rounding rtol plus an atol that grows with
// sqrt(K) (fp32 accumulation order differs from the reference's).
CheckReport checkMatmul(CaseData &d) {
  HostTensor &a = d.buf("a"), &b = d.buf("b"), &c = d.buf("c");
  if (a.shape().size() != 2 || b.shape().size() != 2 || c.shape().size() != 2)
    throw BenchError("matmul: a, b and c must be 2-D");
  const size_t m = size_t(a.shape()[0]), k = size_t(a.shape()[1]), n = size_t(b.shape()[1]);
  if (size_t(b.shape()[0]) != k || size_t(c.shape()[0]) != m || size_t(c.shape()[1]) != n)
    throw BenchError("matmul: shapes must be a [M, K], b [K, N], c [M, N]");
  std::vector<size_t> rows;
  const size_t samples = std::min<size_t>(m, 64);
  for (size_t i = 0; i < samples; ++i)
    rows.push_back(samples == 1 ? 0 : i * (m - 1) / (samples - 1));
  HostTensor got(c.dtype(), {int64_t(rows.size()), int64_t(n)});
  std::vector<double> want(rows.size() * n);
  parallelFor(rows.size(), [&](size_t lo, size_t hi) {
    std::vector<double> acc(n);
    for (size_t r = lo; r < hi; ++r) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (size_t kk = 0; kk < k; ++kk) {
        double av = a.get(rows[r] * k + kk);
        if (av == 0)
          continue;
        size_t bo = kk * n;
        for (size_t j = 0; j < n; ++j)
          acc[j] += av * b.get(bo + j);
      }
      for (size_t j = 0; j < n; ++j) {
        want[r * n + j] = acc[j];
        got.set(r * n + j, c.get(rows[r] * n + j));
      }
    }
  });
  double atol = 1e-3 * std::sqrt(double(k));
  return finish({compareOutput("c", got, want, atol, rtolFor(c.dtype(), 1e-4))});
}

} // namespace

const std::vector<Family> &families() {
  static const std::vector<Family> all = {
      {"vector_add", "z = x + y", {"x", "y"}, {"z"}, {}, nullptr, checkVectorAdd},
      {"softmax", "y = softmax(x) along the last axis of [M, N]", {"x"}, {"y"}, {}, nullptr, checkSoftmax},
      {"layernorm_fwd", "y = (x - mean) * rstd * w + b per row; mean, rstd stored",
       {"x", "w", "b"}, {"y", "mean", "rstd"}, {"eps"}, nullptr, checkLayernormFwd},
      {"layernorm_bwd", "dx, dw, db of layernorm from x, dy, w and the stored mean, rstd",
       {"x", "dy", "w", "mean", "rstd"}, {"dx", "dw", "db"}, {"eps"}, prepareLayernormBwd, checkLayernormBwd},
      {"rmsnorm_fwd", "y = x * rstd * w per row, rstd = 1 / sqrt(mean(x^2) + eps) stored",
       {"x", "w"}, {"y", "rstd"}, {"eps"}, nullptr, checkRmsnormFwd},
      {"cross_entropy_fwd", "loss = logsumexp(logits[row]) - logits[row, target[row]]",
       {"logits", "target"}, {"loss"}, {}, nullptr, checkCrossEntropyFwd},
      {"silu_and_mul", "y = silu(x[:, :H]) * x[:, H:] (SwiGLU), x [M, 2H], y [M, H]", {"x"}, {"y"}, {}, nullptr,
       checkSiluAndMul},
      {"tensor_sum", "out[0] = sum of all elements of x", {"x"}, {"out"}, {}, nullptr, checkTensorSum},
      {"cumsum", "y = inclusive prefix sum of x along the last axis", {"x"}, {"y"}, {}, nullptr, checkCumsum},
      {"matmul", "c = a @ b for a [M, K], b [K, N] (checked on up to 64 sampled rows)",
       {"a", "b"}, {"c"}, {}, nullptr, checkMatmul},
  };
  return all;
}

const Family *findFamily(const std::string &name) {
  for (const Family &f : families())
    if (f.name == name)
      return &f;
  return nullptr;
}

} // namespace tle::bench
