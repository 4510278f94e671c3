// The conformance harness: kernels generated from templates, grouped in batches (one compile,
// one or more runs), each run checked by named cases against values computed by the independent
// references of the families (Reference.h). The same batches run on the CPU target (ORC JIT) or
// on the GPU (cubin through libtle_rt). docs/conformance.md describes the suite.
#pragma once

#include "Reference.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tle::conformance {

/// How a checked element may differ from the expected one. NaN matches any NaN in every mode.
struct Tol {
  enum Kind { Exact, Ulp, Abs } kind = Exact;
  /// Ulp: the largest allowed distance in units in the last place of the dtype.
  double ulps = 0;
  /// Abs: |got - want| <= abs + rel * |want|.
  double abs = 0, rel = 0;
  /// Exact and Ulp: whether +0 and -0 must match.
  bool zeroSign = true;
  static Tol exact() { return {}; }
  static Tol ulp(double n) { Tol t; t.kind = Ulp; t.ulps = n; return t; }
  static Tol close(double rel, double abs = 0) { Tol t; t.kind = Abs; t.rel = rel; t.abs = abs; return t; }
  /// Same as this tolerance, but +0 and -0 are equal.
  Tol anyZero() const { Tol t = *this; t.zeroSign = false; return t; }
};

/// A host buffer of `dtype` elements (16-bit floats as bits, i1 as a byte).
struct Buffer {
  DType dtype = DType::F32;
  std::vector<unsigned char> bytes;
  /// Bytes added to the buffer's address when it is passed (int64 offset cases pass a pointer
  /// far outside the buffer and index back into it); a multiple of the element size.
  int64_t byteOffset = 0;

  Buffer() = default;
  /// `n` zero elements of dtype `t`.
  Buffer(DType t, size_t n) : dtype(t), bytes(n * dsize(t)) {}
  /// Number of elements.
  size_t size() const { return bytes.size() / dsize(dtype); }
  /// Stores the real `v` rounded to nearest even (floats) or as an integer, wrapped (integers,
  /// i1: v != 0).
  void setF(size_t i, long double v);
  /// Stores the integer bits `v` (two's complement), wrapped to the dtype; floats get the value.
  void setI(size_t i, uint64_t v);
  /// Stores raw bits (16-bit floats: the pattern).
  void setBits(size_t i, uint64_t bits);
  /// The exact value of element `i` (integers as their value; 16-bit floats decoded).
  long double getF(size_t i) const;
  /// Integers: the two's-complement bits, sign- or zero-extended. Floats: the raw bits.
  uint64_t getI(size_t i) const;
  /// Raw bits of element `i`.
  uint64_t bits(size_t i) const;
  /// Element `i` as text for messages.
  std::string str(size_t i) const;
};

/// A typed buffer of `n` elements filled by `f(i)` (a real value, rounded with setF).
Buffer makeBuffer(DType t, size_t n, const std::function<long double(size_t)> &f);

/// One kernel argument: a buffer or a scalar of an exact dtype.
struct Arg {
  bool isBuffer = false;
  Buffer buffer;
  DType dtype = DType::I32; ///< scalar dtype
  uint64_t bits = 0;        ///< scalar bits (i1: 0/1; fp16/bf16: the pattern)
  /// A buffer argument.
  static Arg buf(Buffer b) { Arg a; a.isBuffer = true; a.buffer = std::move(b); return a; }
  /// An integer scalar of dtype `t`.
  static Arg i(DType t, int64_t v) { Arg a; a.dtype = t; a.bits = wrapInt(uint64_t(v), t) & (dbits(t) == 64 ? ~0ull : ((1ull << dbits(t)) - 1)); return a; }
  /// An i32 scalar.
  static Arg i32(int32_t v) { return i(DType::I32, v); }
  /// A float scalar of dtype `t` (rounded to it).
  static Arg f(DType t, long double v);
};

/// One conformance case: elements [begin, begin + expected.size()) of buffer argument `arg`
/// after the run must equal `expected` within the target's tolerance.
struct Check {
  std::string name; ///< unique, "family/op/detail"
  int arg = 0;
  size_t begin = 0;
  Buffer expected;
  Tol cpu, gpu;     ///< tolerances per target (gpu: approximate math, reduction order)
  bool cpuOnly = false; ///< behaviour TLE defines on the CPU but the GPU leaves open
  /// For results with several valid outcomes (atomics racing): when set, decides the case
  /// instead of `expected`, from every argument after the run; returns "" or what is wrong.
  std::function<std::string(const std::vector<Arg> &)> validate;
};

/// One launch of a batch's kernel with its arguments and the cases it checks.
struct Run {
  std::vector<Arg> args;
  uint32_t grid[3] = {1, 1, 1};
  std::vector<Check> checks;
  /// CPU worker threads for this run (1 unless the run tests concurrency).
  unsigned threads = 1;
};

/// One kernel: generated source, compiled once, run once per element of `runs`. A batch with
/// `expectError` is one case: compilation must fail with a message containing it.
struct Batch {
  std::string name;      ///< unique, "family/..."
  std::string source;    ///< full module text
  std::string kernel = "k"; ///< kernel to compile (-n)
  std::string signature; ///< Triton AOT signature (-s)
  int numWarps = 4;
  std::vector<Run> runs;
  std::string expectError;
};

/// The suite: batches by family, in registration order.
struct Suite {
  std::vector<Batch> batches;
  /// Adds a batch and returns it.
  Batch &add(Batch b) { batches.push_back(std::move(b)); return batches.back(); }
};

/// Adds a check of the whole buffer argument `arg` to `run`.
Check &expect(Run &run, int arg, std::string name, Buffer expected, Tol cpu = Tol::exact());
/// As expect, with separate GPU tolerance.
Check &expect(Run &run, int arg, std::string name, Buffer expected, Tol cpu, Tol gpu);

/// "import triton\nimport triton.language as tl\n..." followed by `body`.
std::string module(const std::string &body);
/// Replaces every "{KEY}" in `text` by its value.
std::string subst(std::string text, const std::map<std::string, std::string> &vars);

/// A known failure: cases whose name starts with `prefix` fail on `target` ("cpu", "gpu" or
/// "any") for `reason`. They count as expected failures, not passes, and are listed in
/// docs/conformance.md.
struct KnownFailure {
  const char *prefix, *target, *reason;
};
/// The list (KnownFailures.cpp).
const std::vector<KnownFailure> &knownFailures();

// The families (one file each); every function appends its batches.
void addArithmetic(Suite &);
void addBitwise(Suite &);
void addCompare(Suite &);
void addMath(Suite &);
void addCasts(Suite &);
void addWhereBroadcast(Suite &);
void addReductions(Suite &);
void addScans(Suite &);
void addCombine(Suite &);
void addSort(Suite &);
void addFp8(Suite &);
void addMemory(Suite &);
void addAtomics(Suite &);
void addDot(Suite &);
void addShapes(Suite &);
void addFrontend(Suite &);
void addOffsets(Suite &);
void addArgReduce(Suite &);
void addStandard(Suite &);
void addRandom(Suite &);
void addTleLite(Suite &); // TleLite.cpp: tle.extract_tile, tle.insert_tile, tle.cumsum, tle.load

} // namespace tle::conformance
