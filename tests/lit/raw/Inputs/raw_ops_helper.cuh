// A header of raw_ops.cu: a dependency of the kernels that use it (--depfile).
static __device__ float bits_swap(float x) {
  float y;
  asm volatile("mov.b32 %0, %1; // tle-raw-marker" : "=f"(y) : "f"(x));
  return y;
}
