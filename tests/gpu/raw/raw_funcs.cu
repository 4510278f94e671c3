// Native CUDA device functions called from raw_kernels.tle (TLE-Raw's GPU tests). Each follows
// FlagTree's calling convention: pointers and scalars as they are, a tile or buffer as a memref
// (allocated pointer, aligned pointer, offset, sizes, strides) in shared memory.
#include <cuda_fp16.h>
#include <stdint.h>

#define SHARED __attribute__((address_space(3)))
#define GLOBAL __attribute__((address_space(1)))

struct Memref2f {
  SHARED float *allocated;
  SHARED float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
};

// out[i] = a[i] + b[i] over a grid-stride loop of 16-byte vectors (the pointers 16-byte aligned),
// then the elements past the last whole vector: pointers (plain C++ ones: the kernel's global
// pointers arrive as generic pointers), a scalar, no result.
extern "C" __device__ void vector_add(float *out, const float *a, const float *b, int n) {
  const int stride = blockDim.x * gridDim.x, first = blockIdx.x * blockDim.x + threadIdx.x;
  for (int v = first; v < n / 4; v += stride) {
    float4 x = reinterpret_cast<const float4 *>(a)[v], y = reinterpret_cast<const float4 *>(b)[v];
    reinterpret_cast<float4 *>(out)[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  for (int i = n / 4 * 4 + first; i < n; i += stride)
    out[i] = a[i] + b[i];
}

// GELU (tanh form), tanh(u) computed as 2 / (1 + e^(-2u)) - 1 with the fast exponential and
// division (what tile_gelu's tl.exp and `/` compile to, so that the two are timed doing the same
// arithmetic; CUDA's `/` is the IEEE division).
static __device__ float gelu(float x) {
  const float k = 0.7978845608028654f; // sqrt(2 / pi)
  const float u = k * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + (__fdividef(2.0f, 1.0f + __expf(-2.0f * u)) - 1.0f));
}

// Four floats as one 16-byte value (clang's vector type: CUDA's float4 has no shared-memory
// (address space 3) copy).
typedef float Float4 __attribute__((ext_vector_type(4)));

// GELU in place on a [rows, cols] fp32 tile; returns the tile. A row-major tile whose rows are
// whole 16-byte vectors (the compiler's staging buffer is one) is taken four elements at a time,
// with the CTA-stride loop unrolled, so that each thread has several independent elements in
// flight; any other tile element by element.
extern "C" __device__ Memref2f gelu_tile(SHARED float *alloc, SHARED float *x, int64_t off, int64_t rows, int64_t cols,
                                         int64_t s0, int64_t s1) {
  SHARED float *base = x + off;
  if (s1 == 1 && cols % 4 == 0 && s0 % 4 == 0 && reinterpret_cast<uintptr_t>(base) % 16 == 0) {
    const int64_t vectors = rows * cols / 4, perRow = cols / 4;
#pragma unroll 8
    for (int64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
      SHARED Float4 *at = reinterpret_cast<SHARED Float4 *>(base + (v / perRow) * s0 + (v % perRow) * 4);
      Float4 e = *at;
      *at = Float4{gelu(e.x), gelu(e.y), gelu(e.z), gelu(e.w)};
    }
  } else {
    for (int64_t i = threadIdx.x; i < rows * cols; i += blockDim.x) {
      int64_t r = i / cols, c = i % cols;
      base[r * s0 + c * s1] = gelu(base[r * s0 + c * s1]);
    }
  }
  return {alloc, x, off, {rows, cols}, {s0, s1}};
}

// acc[m, n] += sum_k a[m, k] * b[k, n] (fp16 inputs, fp32 accumulator), every thread of the
// CTA taking elements of acc in turn; returns acc. fp16 elements are read as their bits (a
// __half in address space 3 does not convert in clang's CUDA mode).
extern "C" __device__ Memref2f mma_tile(SHARED float *acc_alloc, SHARED float *acc, int64_t acc_off, int64_t M,
                                        int64_t N, int64_t acc_s0, int64_t acc_s1, SHARED uint16_t *a_alloc,
                                        SHARED uint16_t *a, int64_t a_off, int64_t a_m, int64_t K, int64_t a_s0,
                                        int64_t a_s1, SHARED uint16_t *b_alloc, SHARED uint16_t *b, int64_t b_off,
                                        int64_t b_k, int64_t b_n, int64_t b_s0, int64_t b_s1) {
  for (int64_t i = threadIdx.x; i < M * N; i += blockDim.x) {
    int64_t m = i / N, n = i % N;
    float sum = 0.0f;
    for (int64_t k = 0; k < K; ++k)
      sum += __half2float(__ushort_as_half(a[a_off + m * a_s0 + k * a_s1])) *
             __half2float(__ushort_as_half(b[b_off + k * b_s0 + n * b_s1]));
    acc[acc_off + m * acc_s0 + n * acc_s1] += sum;
  }
  return {acc_alloc, acc, acc_off, {M, N}, {acc_s0, acc_s1}};
}

// Row sums of a [rows, cols] buffer: L lanes per row (8, or fewer for shorter rows), so a warp
// takes 32 / L rows at a time. Each lane adds every L-th element of its row, starting at a block
// of columns rotated by the row's place in the warp, so that the warp's rows read different banks
// (rows of 32 floats would otherwise put all of them on the same 8); then log2(L) butterfly
// shuffles in inline PTX add over the row's lanes, and its first lane writes out[row0 + r].
extern "C" __device__ void row_sums(SHARED float *alloc, SHARED float *x, int64_t off, int64_t rows, int64_t cols,
                                    int64_t s0, int64_t s1, GLOBAL float *out, int row0) {
  const int lanes = cols >= 8 ? 8 : cols >= 4 ? 4 : cols >= 2 ? 2 : 1, per = 32 / lanes;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int g = lane / lanes, j = lane % lanes, blocks = static_cast<int>((cols + lanes - 1) / lanes);
  for (int64_t r0 = static_cast<int64_t>(warp) * per; r0 < rows; r0 += static_cast<int64_t>(warps) * per) {
    const int64_t r = r0 + g;
    float v = 0.0f;
    if (r < rows)
      for (int k = 0, b = g % blocks; k < blocks; ++k, b = b + 1 == blocks ? 0 : b + 1) {
        const int64_t c = j + static_cast<int64_t>(lanes) * b;
        if (c < cols)
          v += x[off + r * s0 + c * s1];
      }
    for (int d = lanes / 2; d > 0; d >>= 1) {
      float o;
      asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 31, 0xffffffff;" : "=f"(o) : "f"(v), "r"(d));
      v += o;
    }
    if (j == 0 && r < rows)
      out[row0 + r] = v;
  }
}

// Row sums of a [rows, cols] tile passed as contiguous fragments (layout="contiguous": thread t
// holds elements t * n .. t * n + n - 1, so cols / n consecutive threads hold one row): each thread
// adds its n elements, then butterfly shuffles in inline PTX add over the row's threads, and the
// row's first thread writes out[row0 + row]. No shared memory.
extern "C" __device__ void row_sums_fragment(float *alloc, float *frag, int64_t off, int64_t n, int64_t stride,
                                             GLOBAL float *out, int row0, int cols) {
  float v = 0.0f;
#pragma unroll
  for (int64_t i = 0; i < n; ++i)
    v += frag[off + i * stride];
  const int lanes = cols / static_cast<int>(n);
  for (int d = lanes / 2; d > 0; d >>= 1) {
    float o;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 31, 0xffffffff;" : "=f"(o) : "f"(v), "r"(d));
    v += o;
  }
  if (threadIdx.x % lanes == 0)
    out[row0 + threadIdx.x / lanes] = v;
}

struct Memref2h {
  SHARED uint16_t *allocated;
  SHARED uint16_t *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
};

// Fills a [rows, cols] fp16 buffer from global memory (row stride `ld` elements) with cp.async
// 16-byte copies issued in inline PTX and waits for its own copies; returns the buffer. No
// __syncthreads: the compiler puts a barrier after a call that is given buffers. The loop counts
// a thread's copies, a number that is constant once the call is inlined (blockDim.x is the
// kernel's thread count there), so that it unrolls whole: a loop with inline PTX, convergent,
// is never unrolled with a remainder.
extern "C" __device__ Memref2h load_async(SHARED uint16_t *alloc, SHARED uint16_t *buf, int64_t off, int64_t rows,
                                          int64_t cols, int64_t s0, int64_t s1, GLOBAL const uint16_t *src,
                                          int ld) {
  const int chunks = static_cast<int>(rows * cols / 8), perRow = static_cast<int>(cols / 8); // 16-byte chunks
  const uint32_t base = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(buf + off));
#pragma unroll
  for (int k = 0; k < (chunks + blockDim.x - 1) / blockDim.x; ++k) {
    const int c = k * blockDim.x + threadIdx.x;
    if (c >= chunks)
      break;
    const int r = c / perRow, col = (c % perRow) * 8;
    const uint32_t dst = base + 2u * static_cast<uint32_t>(r * s0 + col);
    const GLOBAL uint16_t *from = src + r * ld + col;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(from) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  return {alloc, buf, off, {rows, cols}, {s0, s1}};
}

// Sixteen bytes as one value (clang's vector type, which loads and stores in any address space).
typedef uint32_t U32x4 __attribute__((ext_vector_type(4)));

// The same fill through registers: each thread loads up to 8 of its 16-byte chunks from global
// memory, all of them before it stores any into the buffer, so that their latencies overlap (the
// loops unroll whole once the call is inlined: blockDim.x is the kernel's thread count there).
// For a buffer read at once this is what tle.gpu.copy from pointers does: a cp.async's trip
// through the copy engine and its wait add latency that nothing overlaps here.
extern "C" __device__ Memref2h load_rows(SHARED uint16_t *alloc, SHARED uint16_t *buf, int64_t off, int64_t rows,
                                         int64_t cols, int64_t s0, int64_t s1, GLOBAL const uint16_t *src, int ld) {
  const int chunks = static_cast<int>(rows * cols / 8), perRow = static_cast<int>(cols / 8); // 16-byte chunks
  constexpr int kBatch = 8;
  for (int first = 0; first < chunks; first += kBatch * blockDim.x) {
    U32x4 v[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int c = first + k * blockDim.x + threadIdx.x;
      if (c < chunks)
        v[k] = *reinterpret_cast<const GLOBAL U32x4 *>(src + (c / perRow) * ld + (c % perRow) * 8);
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int c = first + k * blockDim.x + threadIdx.x;
      if (c < chunks)
        *reinterpret_cast<SHARED U32x4 *>(buf + off + (c / perRow) * s0 + (c % perRow) * 8) = v[k];
    }
  }
  return {alloc, buf, off, {rows, cols}, {s0, s1}};
}

// GELU on each thread's fragment (declared fragment=True): the n elements the thread holds, in
// registers once inlined, so the call adds no shared-memory traffic. n is a constant once the
// call is inlined; `#pragma unroll` asks for the loop to be unrolled then, which keeps the
// fragment in registers.
extern "C" __device__ void gelu_fragment(float *alloc, float *frag, int64_t off, int64_t n, int64_t stride) {
#pragma unroll
  for (int64_t i = 0; i < n; ++i)
    frag[off + i * stride] = gelu(frag[off + i * stride]);
}

// Each thread's fragment in the contiguous layout (layout="contiguous"): adds to element e
// (thread t holds e = t * n .. t * n + n - 1) its own index, showing which elements it holds.
extern "C" __device__ void add_index(int *alloc, int *frag, int64_t off, int64_t n, int64_t stride) {
#pragma unroll
  for (int64_t i = 0; i < n; ++i)
    frag[off + i * stride] += static_cast<int>(threadIdx.x * n + i);
}

// A cp.async pipeline a kernel drives from tile code (FlagTree's raw pipeline-producer pattern):
// stage_rows issues the copies of one block of rows into slot `slot` of a [slots, rows, cols]
// fp16 ring and commits them as one group, without waiting; wait_stages waits until at most
// `pending` (0 or 1) groups of this thread are in flight. Tile code reads a slot after the wait
// (the compiler puts a barrier after a call given buffers, so every thread's copies are in).
extern "C" __device__ void stage_rows(SHARED uint16_t *alloc, SHARED uint16_t *ring, int64_t off, int64_t slots,
                                      int64_t rows, int64_t cols, int64_t s0, int64_t s1, int64_t s2,
                                      GLOBAL const uint16_t *src, int ld, int slot) {
  const int chunks = static_cast<int>(rows * cols / 8), perRow = static_cast<int>(cols / 8); // 16-byte chunks
  const uint32_t base = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ring + off + slot * s0));
#pragma unroll
  for (int k = 0; k < (chunks + blockDim.x - 1) / blockDim.x; ++k) {
    const int c = k * blockDim.x + threadIdx.x;
    if (c >= chunks)
      break;
    const int r = c / perRow, col = (c % perRow) * 8;
    const uint32_t dst = base + 2u * static_cast<uint32_t>(r * s1 + col * s2);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + r * ld + col) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

extern "C" __device__ void wait_stages(SHARED uint16_t *alloc, SHARED uint16_t *ring, int64_t off, int64_t slots,
                                       int64_t rows, int64_t cols, int64_t s0, int64_t s1, int64_t s2, int pending) {
  if (pending > 0)
    asm volatile("cp.async.wait_group 1;" ::: "memory");
  else
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}
