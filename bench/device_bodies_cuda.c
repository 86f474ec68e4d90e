#include "device_bodies.h"

#include <cuda_runtime.h>
#include <stdio.h>

static int failed(cudaError_t e, const char *what, char *msg, size_t cap) {
  snprintf(msg, cap, "%s: CUDA error %d (%s)", what, (int)e,
           cudaGetErrorString(e));
  return -1;
}

int bench_device_alloc(void **d, size_t bytes, char *msg, size_t cap) {
  cudaError_t e = cudaMalloc(d, bytes > 0 ? bytes : 1);
  return e == cudaSuccess ? 0 : failed(e, "cudaMalloc", msg, cap);
}

int bench_device_copy(void *dst, const void *src, size_t bytes, int to_device,
                      char *msg, size_t cap) {
  cudaError_t e =
      cudaMemcpy(dst, src, bytes,
                 to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? 0 : failed(e, "cudaMemcpy", msg, cap);
}

void bench_device_free(void *d) {
  if (d != NULL)
    cudaFree(d);
}
