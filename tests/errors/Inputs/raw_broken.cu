// A CUDA function with a type error, for raw_cuda_errors.tle.
extern "C" __device__ void broken(float *out) {
  out[0] = undeclared_name;
}
