/* Device buffers kept between calls and grown when a call needs more: the
 * state of the GPU stages whose sizes are known only as they run
 * (traverse_gpu.cu, pipeline_gpu.cu). */
#ifndef TFMM_DEVICE_BUFFER_CUH
#define TFMM_DEVICE_BUFFER_CUH

#include <cuda_runtime.h>
#include <stddef.h>

struct tfmm_device_buffer {
  void *p = nullptr;
  size_t bytes = 0;
};

/* At least `bytes` in b, with 1/slack more room when it grows (slack 0:
 * none; the contents are not kept then). */
static inline cudaError_t
tfmm_device_buffer_reserve_slack(tfmm_device_buffer *b, size_t bytes,
                                 size_t slack) {
  if (bytes <= b->bytes && b->p != nullptr)
    return cudaSuccess;
  if (b->p != nullptr) {
    cudaError_t e = cudaFree(b->p);
    if (e != cudaSuccess)
      return e;
  }
  b->p = nullptr;
  b->bytes = 0;
  const size_t want = bytes + (slack > 0 ? bytes / slack : 0) + 256;
  cudaError_t e = cudaMalloc(&b->p, want);
  if (e == cudaSuccess)
    b->bytes = want;
  return e;
}

/* ... with a quarter more room: slowly growing inputs reallocate rarely. */
static inline cudaError_t tfmm_device_buffer_reserve(tfmm_device_buffer *b,
                                                     size_t bytes) {
  return tfmm_device_buffer_reserve_slack(b, bytes, 4);
}

static inline void tfmm_device_buffer_free(tfmm_device_buffer *b) {
  if (b->p != nullptr)
    cudaFree(b->p);
  b->p = nullptr;
  b->bytes = 0;
}

#endif
