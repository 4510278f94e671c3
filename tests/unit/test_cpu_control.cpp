// CPU target: `break`, `continue` and early `return` in runtime and unrolled loops, runtime ifs
// and helpers, checked against values computed here.
#include "test_cpu_util.h"

#include <vector>

using namespace tle;
using namespace tle::cputest;
using cpu::ArgValue;

namespace {

const char *kHeader = "import triton\nimport triton.language as tl\n\n";

std::string kernel(const std::string &body) { return std::string(kHeader) + "@triton.jit\n" + body; }

/// Compiles kernel `name` of `source` (which also defines helpers) for the CPU.
Compiled compileNamed(const std::string &source, const std::string &name, const std::string &signature) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile(name + ".tle", source);
  driver::CompileOptions o;
  o.signature = signature;
  o.kernel = name;
  Compiled c;
  if (auto fn = driver::compileToTile(file, o, diags))
    c.kernel = cpu::Kernel::compile(*fn, diags);
  c.diagnostics = err.str();
  return c;
}

} // namespace

TEST_CASE("cpu control: break leaves a runtime for loop at the first match", "[cpu][control]") {
  Compiled k = compileSource(kernel(R"(def first_zero(x_ptr, out_ptr, n):
    pos = -1
    for i in range(n):
        v = tl.load(x_ptr + i)
        if v == 0:
            pos = i
            break
    tl.store(out_ptr, pos)
)"),
                             "*i32, *i32, i32");
  TLE_REQUIRE_COMPILED(k);
  for (int zero : {-1, 0, 3, 9}) {
    std::vector<int32_t> x(10);
    for (int i = 0; i < 10; ++i)
      x[size_t(i)] = i == zero ? 0 : i + 1;
    if (zero < 0)
      x[5] = 7;
    std::vector<int32_t> out(1, 99);
    k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(10)});
    INFO("zero at " << zero);
    REQUIRE(out[0] == zero);
  }
}

TEST_CASE("cpu control: break stops the loads (bounds-checked), continue skips the rest of an iteration",
          "[cpu][control]") {
  // The loop would read past the end of x after the sentinel; with bounds checking any such read
  // is an error, so the break must really leave the loop.
  Compiled k = compileSource(kernel(R"(def until_sentinel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = 0
    for i in tl.range(0, n):
        row = tl.load(x_ptr + i * BLOCK + offs)
        if tl.sum(row) < 0:
            break
        count += 1
        if tl.max(row) > 100.0:
            continue
        acc += row
    tl.store(out_ptr + offs, acc)
    tl.store(out_ptr + BLOCK, count.to(tl.float32))
)"),
                             "*fp32, *fp32, i32, 8", cpu::CompileOptions{true});
  TLE_REQUIRE_COMPILED(k);
  // Rows: 0 1 2 (row 1 has a big element: skipped), row 3 negative: stop. Only 4 rows exist.
  std::vector<float> x(4 * 8);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c)
      x[size_t(r * 8 + c)] = r == 3 ? -1.f : r == 1 && c == 2 ? 1000.f : float(r * 10 + c);
  std::vector<float> out(9, -5.f);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(100)});
  for (int c = 0; c < 8; ++c)
    REQUIRE(out[size_t(c)] == float(c) + float(20 + c));
  REQUIRE(out[8] == 3.f);
}

TEST_CASE("cpu control: while True with break, and continue in a while", "[cpu][control]") {
  Compiled k = compileSource(kernel(R"(def collatz(out_ptr, start):
    x = start
    steps = 0
    while True:
        if x == 1:
            break
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    # Sum of the odd numbers below start, with continue in a while.
    i = 0
    odd = 0
    while i < start:
        i += 1
        if i % 2 == 0:
            continue
        odd += i
    tl.store(out_ptr, steps)
    tl.store(out_ptr + 1, odd)
)"),
                             "*i32, i32");
  TLE_REQUIRE_COMPILED(k);
  auto collatz = [](int x) {
    int s = 0;
    while (x != 1) {
      x = x % 2 ? 3 * x + 1 : x / 2;
      ++s;
    }
    return s;
  };
  for (int start : {1, 6, 27, 97}) {
    std::vector<int32_t> out(2, -1);
    k->run({1}, {ArgValue::ptr(out), i32(start)});
    int odd = 0;
    for (int i = 1; i <= start; i += 2)
      odd += i;
    INFO("start " << start);
    REQUIRE(out[0] == collatz(start));
    REQUIRE(out[1] == odd);
  }
}

TEST_CASE("cpu control: early return in a runtime if skips the rest of the program", "[cpu][control]") {
  Compiled k = compileSource(kernel(R"(def early(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if pid == 1:
        tl.store(out_ptr + offs, x + 100.0, mask=offs < n)
        return
    else:
        y = x * 2.0
    tl.store(out_ptr + offs, y, mask=offs < n)
)"),
                             "*fp32, *fp32, i32, 4", cpu::CompileOptions{true});
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x(6);
  for (int i = 0; i < 6; ++i)
    x[size_t(i)] = float(i);
  std::vector<float> out(16, -1.f);
  // 4 programs: 0 doubles, 1 adds 100 (and returns), 2 and 3 return at once. Program 2 would
  // read x[8..11] out of bounds were the return not taken.
  k->run({4}, {ArgValue::ptr(x), ArgValue::ptr(out.data(), 6 * 4), i32(6)});
  std::vector<float> want = {0, 2, 4, 6, 104, 105};
  for (int i = 0; i < 6; ++i)
    REQUIRE(out[size_t(i)] == want[size_t(i)]);
}

TEST_CASE("cpu control: return inside runtime loops leaves every loop and skips the code after them",
          "[cpu][control]") {
  Compiled k = compileSource(kernel(R"(def find2d(x_ptr, out_ptr, rows, cols, target):
    tl.store(out_ptr, -1)
    for r in range(rows):
        c = 0
        while c < cols:
            if tl.load(x_ptr + r * cols + c) == target:
                tl.store(out_ptr, r * 1000 + c)
                return
            c += 1
    tl.store(out_ptr + 1, 7)
)"),
                             "*i32, *i32, i32, i32, i32");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> x(3 * 5);
  for (int i = 0; i < 15; ++i)
    x[size_t(i)] = i * 3;
  for (int target : {0, 21, 42, 5}) {
    std::vector<int32_t> out(2, 0);
    k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(3), i32(5), i32(target)});
    int at = target % 3 == 0 && target / 3 < 15 ? target / 3 : -1;
    INFO("target " << target);
    REQUIRE(out[0] == (at < 0 ? -1 : (at / 5) * 1000 + at % 5));
    REQUIRE(out[1] == (at < 0 ? 7 : 0));
  }
}

TEST_CASE("cpu control: nested loops, break leaves only the inner one", "[cpu][control]") {
  Compiled k = compileSource(kernel(R"(def tri(out_ptr, n):
    total = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            total += 1
    tl.store(out_ptr, total)
)"),
                             "*i32, i32");
  TLE_REQUIRE_COMPILED(k);
  for (int n : {0, 1, 5, 12}) {
    std::vector<int32_t> out(1, -1);
    k->run({1}, {ArgValue::ptr(out), i32(n)});
    REQUIRE(out[0] == n * (n + 1) / 2);
  }
}

TEST_CASE("cpu control: tl.static_range with compile-time and runtime break and continue", "[cpu][control]") {
  Compiled k = compileSource(kernel(R"(def unrolled(x_ptr, out_ptr):
    acc = 0.0
    for k in tl.static_range(8):
        if k == 5:
            break
        if k % 2 == 1:
            continue
        acc += tl.load(x_ptr + k)
    tl.store(out_ptr, acc)
    s = 0.0
    for k in tl.static_range(8):
        v = tl.load(x_ptr + k)
        if v < 0:
            break
        s += v
    tl.store(out_ptr + 1, s)
)"),
                             "*fp32, *fp32");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x = {1, 2, 4, 8, 16, -32, 64, 128};
  std::vector<float> out(2, 0.f);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(out)});
  REQUIRE(out[0] == 1.f + 4.f + 16.f);
  REQUIRE(out[1] == 31.f);
}

TEST_CASE("cpu control: helpers return on runtime conditions, tuples too", "[cpu][control]") {
  Compiled k = compileNamed(std::string(kHeader) + R"(@triton.jit
def pick(x):
    if x > 0:
        return x * 2, 1
    return -x, 0


@triton.jit
def clamp_idx(i, n):
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


@triton.jit
def helpers(x_ptr, out_ptr, n):
    for i in range(n):
        x = tl.load(x_ptr + i)
        v, pos = pick(x)
        tl.store(out_ptr + 2 * i, v)
        tl.store(out_ptr + 2 * i + 1, pos)
    tl.store(out_ptr + 2 * n, clamp_idx(n - 10, n))
    tl.store(out_ptr + 2 * n + 1, clamp_idx(n + 10, n))
    tl.store(out_ptr + 2 * n + 2, clamp_idx(n - 2, n))
)",
                             "helpers", "*i32, *i32, i32");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> x = {3, -4, 0, 7, -1};
  std::vector<int32_t> out(13, 99);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(5)});
  for (int i = 0; i < 5; ++i) {
    REQUIRE(out[size_t(2 * i)] == (x[size_t(i)] > 0 ? 2 * x[size_t(i)] : -x[size_t(i)]));
    REQUIRE(out[size_t(2 * i + 1)] == (x[size_t(i)] > 0 ? 1 : 0));
  }
  REQUIRE(out[10] == 0);
  REQUIRE(out[11] == 4);
  REQUIRE(out[12] == 3);
}

TEST_CASE("cpu: tensor descriptors load and store blocks, zero-padded and clipped at the edges",
          "[cpu][descriptor]") {
  Compiled k = compileSource(kernel(R"(def desc_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    t = xd.load([pid_m * BM, pid_n * BN])
    # Elements past the edge load as zero: the block sum counts only real elements.
    s = tl.sum(tl.sum(t, axis=1), axis=0)
    yd.store([pid_m * BM, pid_n * BN], t * 2.0 + s * 0.0 + tl.where(t == 0.0, 1000.0, 0.0))
)"),
                             "*fp32, *fp32, i32, i32, 4, 4", cpu::CompileOptions{true});
  TLE_REQUIRE_COMPILED(k);
  const int M = 5, N = 7;
  std::vector<float> x(M * N), y(M * N, -1.f);
  for (int i = 0; i < M * N; ++i)
    x[size_t(i)] = float(i + 1);
  // Bounds checking: a write or read outside x or y (the edge blocks overhang both) would fail.
  k->run({2, 2}, {ArgValue::ptr(x), ArgValue::ptr(y), i32(M), i32(N)});
  for (int i = 0; i < M * N; ++i)
    REQUIRE(y[size_t(i)] == 2.f * float(i + 1));
  // One row of blocks: row 4 is not written.
  std::fill(y.begin(), y.end(), -1.f);
  k->run({1, 2}, {ArgValue::ptr(x), ArgValue::ptr(y), i32(M), i32(N)});
  for (int i = 0; i < M * N; ++i) {
    INFO("element " << i);
    REQUIRE(y[size_t(i)] == (i / N < 4 ? 2.f * float(i + 1) : -1.f));
  }
}

TEST_CASE("cpu: tensor descriptor padding_option='nan', negative offsets, load_tensor_descriptor",
          "[cpu][descriptor]") {
  Compiled k = compileSource(kernel(R"(def desc_pad(x_ptr, out_ptr, n, off):
    d = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[8], padding_option="nan")
    v = tl.load_tensor_descriptor(d, [off])
    o = tl.make_tensor_descriptor(out_ptr, shape=[8], strides=[1], block_shape=[8])
    tl.store_tensor_descriptor(o, [0], v)
)"),
                             "*fp32, *fp32, i32, i32", cpu::CompileOptions{true});
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x = {1, 2, 3, 4, 5};
  std::vector<float> out(8, 0.f);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(out), i32(5), i32(-2)});
  for (int i = 0; i < 8; ++i) {
    int j = i - 2;
    INFO("i " << i);
    if (j < 0 || j >= 5)
      REQUIRE(std::isnan(out[size_t(i)]));
    else
      REQUIRE(out[size_t(i)] == x[size_t(j)]);
  }
}

TEST_CASE("cpu control: a for loop with break and a runtime step", "[cpu][control]") {
  Compiled k = compileSource(kernel(R"(def stepk(out_ptr, n, step):
    total = 0
    for i in range(0, n, step):
        if i > 20:
            break
        total += i
    tl.store(out_ptr, total)
)"),
                             "*i32, i32, i32");
  TLE_REQUIRE_COMPILED(k);
  for (auto [step, want] : std::vector<std::pair<int, int>>{{3, 63}, {7, 21}, {50, 0}, {0, 0}, {-1, 0}}) {
    std::vector<int32_t> out(1, -1);
    k->run({1}, {ArgValue::ptr(out), i32(100), i32(step)});
    INFO("step " << step);
    REQUIRE(out[0] == want);
  }
}
