/* Checked CUDA calls for the kernels' host code: TRY(call) returns the
 * failure as a status with the message in `err` (the function's
 * tfmm_error *), naming the call, the file and line, and the unit
 * (CUDA_TRY_WHO, defined by the file before including this); CHECK(call)
 * returns a failed status as it is. Out of device memory is
 * TFMM_ERR_NO_MEMORY, any other error TFMM_ERR_CUDA. */
#ifndef TFMM_CUDA_TRY_CUH
#define TFMM_CUDA_TRY_CUH

#include "base/error.h"

#include <cuda_runtime.h>

static inline tfmm_status tfmm_cuda_try_fail(tfmm_error *err, cudaError_t code,
                                             const char *who, const char *call,
                                             const char *file, int line) {
  cudaGetLastError(); /* clear a non-sticky error */
  tfmm_status st =
      code == cudaErrorMemoryAllocation ? TFMM_ERR_NO_MEMORY : TFMM_ERR_CUDA;
  return tfmm_error_set(err, st, "%s: CUDA error %d (%s) in %s at %s:%d", who,
                        (int)code, cudaGetErrorString(code), call, file, line);
}

#define TRY(call)                                                              \
  do {                                                                         \
    cudaError_t code_ = (call);                                                \
    if (code_ != cudaSuccess)                                                  \
      return tfmm_cuda_try_fail(err, code_, CUDA_TRY_WHO, #call, __FILE__,     \
                                __LINE__);                                     \
  } while (0)

#define CHECK(call)                                                            \
  do {                                                                         \
    tfmm_status st_ = (call);                                                  \
    if (st_ != TFMM_OK)                                                        \
      return st_;                                                              \
  } while (0)

#endif
