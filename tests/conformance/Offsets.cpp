// Family "offsets": 64-bit address arithmetic without 2 GB buffers. The kernel gets a pointer
// far before a small buffer (its address minus 2^31 .. 2^34 elements) and indexes back into the
// buffer with int64 offsets past 2^31 (scalar i64 arguments, program_id cast to int64 times an
// i64 stride, uint32 offsets that must be zero-extended); int32 index arithmetic that wraps;
// and wide int64 products.
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr int kB = 32;

void farPointer(Suite &s, DType t, int64_t shiftElems) {
  Rng rng(uint64_t(t) + uint64_t(shiftElems % 1000003));
  Buffer x = randomBuffer(t, kB, rng, 100, false);
  x.byteOffset = -shiftElems * int64_t(dsize(t));
  Buffer out(t, kB);
  out.byteOffset = -shiftElems * int64_t(dsize(t));
  Buffer want(t, kB);
  for (size_t i = 0; i < kB; ++i)
    want.setBits(i, x.bits(i));
  Run run;
  run.args = {Arg::buf(x), Arg::buf(out), Arg::i(DType::I64, shiftElems)};
  std::string nm = "offsets/far_i64/" + tag(t) + "/2^" + std::to_string(int(std::log2(double(shiftElems))));
  expect(run, 1, nm, want);
  Batch b;
  b.name = nm;
  b.source = module("@triton.jit\ndef k(x_ptr, o_ptr, off, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    v = tl.load(x_ptr + off + offs)\n    tl.store(o_ptr + (offs + off), v)\n");
  b.signature = ptrSig({t, t}, "i64, " + std::to_string(kB));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// program p reads row p at element p * stride (int64 stride): the base is shifted back so that
/// row p of the kernel's view is row p of the small buffer.
void pidStride(Suite &s) {
  const int64_t stride = (int64_t(1) << 31) + 16; // past int32
  const int P = 4;
  Buffer x(DType::F32, size_t(P * kB));
  for (size_t i = 0; i < x.size(); ++i)
    x.setF(i, (long double)i * 0.5L);
  // Kernel address of program p's row: base + p * stride; real row: p * kB. Shifting the base
  // works for one program only, so each program subtracts p * (stride - kB) again.
  Batch b;
  b.name = "offsets/pid_stride_i64";
  b.source = module("@triton.jit\ndef k(x_ptr, o_ptr, stride, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"
                    "    offs = tl.arange(0, BLOCK)\n    row = pid.to(tl.int64) * stride\n"
                    "    back = pid.to(tl.int64) * (stride - BLOCK)\n"
                    "    v = tl.load(x_ptr + row + offs - back)\n    tl.store(o_ptr + pid * BLOCK + offs, v * 2)\n"
                    "    tl.store(o_ptr + 4 * BLOCK + pid, (row >> 31).to(tl.float32))\n");
  b.signature = "*fp32, *fp32, i64, 32";
  Buffer want(DType::F32, size_t(P * kB + P));
  for (int p = 0; p < P; ++p) {
    for (int i = 0; i < kB; ++i)
      want.setF(size_t(p * kB + i), x.getF(size_t(p * kB + i)) * 2);
    want.setF(size_t(P * kB + p), (long double)((p * stride) >> 31));
  }
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(DType::F32, size_t(P * kB + P))), Arg::i(DType::I64, stride)};
  run.grid[0] = P;
  expect(run, 1, "offsets/pid_stride_i64", want);
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// A uint32 offset of 3e9 is zero-extended (not a negative int32).
void unsignedOffset(Suite &s) {
  const int64_t off = 3000000000LL;
  Buffer x(DType::I16, kB);
  for (size_t i = 0; i < kB; ++i)
    x.setI(i, uint64_t(i * 7 + 1));
  x.byteOffset = -off * 2;
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(DType::I16, kB)), Arg::i(DType::U32, off)};
  Buffer want(DType::I16, kB);
  for (size_t i = 0; i < kB; ++i)
    want.setI(i, uint64_t(i * 7 + 1));
  expect(run, 1, "offsets/u32_zero_extended", want);
  Batch b;
  b.name = "offsets/u32";
  b.source = module("@triton.jit\ndef k(x_ptr, o_ptr, off, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    tl.store(o_ptr + offs, tl.load(x_ptr + (off + offs.to(tl.uint32))))\n");
  b.signature = "*i16, *i16, u32, 32";
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// int32 arithmetic wraps; int64 arithmetic does not.
void wrap(Suite &s) {
  Batch b;
  b.name = "offsets/wrap";
  b.source = module("@triton.jit\ndef k(o32, o64, big, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    a = big + offs * 1000\n    tl.store(o32 + offs, a * 3)\n"
                    "    c = big.to(tl.int64) + offs * 1000\n    tl.store(o64 + offs, c * 3 * 100000)\n");
  b.signature = "*i32, *i64, i32, 32";
  for (int32_t big : {2147483000, -2147483000, 123}) {
    Buffer w32(DType::I32, kB), w64(DType::I64, kB);
    for (int i = 0; i < kB; ++i) {
      uint64_t a = wrapInt(uint64_t(int64_t(big)) + uint64_t(i * 1000), DType::I32);
      w32.setI(size_t(i), wrapInt(a * 3, DType::I32));
      int64_t c = int64_t(big) + i * 1000;
      w64.setI(size_t(i), uint64_t(c * 3 * 100000));
    }
    Run run;
    run.args = {Arg::buf(Buffer(DType::I32, kB)), Arg::buf(Buffer(DType::I64, kB)), Arg::i32(big)};
    expect(run, 0, "offsets/wrap_i32/" + std::to_string(big), w32);
    expect(run, 1, "offsets/no_wrap_i64/" + std::to_string(big), w64);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
}

} // namespace

void addOffsets(Suite &s) {
  for (DType t : {DType::F32, DType::I8, DType::F64, DType::F16, DType::I64})
    for (int e : {31, 32, 34})
      farPointer(s, t, (int64_t(1) << e) + 3);
  pidStride(s);
  unsignedOffset(s);
  wrap(s);
}

} // namespace tle::conformance
