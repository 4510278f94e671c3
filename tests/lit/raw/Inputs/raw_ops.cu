// CUDA device functions for tests/lit/raw: inline PTX, a C++ helper, a libdevice call.
#include <stdint.h>

#include "raw_ops_helper.cuh"

// Each thread's fragment: x -> expf(x) through inline PTX and libdevice.
extern "C" __device__ void exp_fragment(float *alloc, float *frag, int64_t off, int64_t n, int64_t stride) {
#pragma unroll
  for (int64_t i = 0; i < n; ++i)
    frag[off + i * stride] = expf(bits_swap(frag[off + i * stride]));
}

// A C++ entry (a mangled name) found by its extern_func_name.
__device__ void store_tid(float *out) { out[threadIdx.x] = static_cast<float>(threadIdx.x); }
