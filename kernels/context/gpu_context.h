/* The device context behind tfmm_gpu, shared by the .cu files. */
#ifndef TFMM_GPU_CONTEXT_H
#define TFMM_GPU_CONTEXT_H

#include "arena.h"
#include "device_buffer.cuh"
#include "gpu.h"

#include <cuda_runtime.h>

struct tfmm_gpu {
  int device;
  int sm_count;
  int max_shared; /* dynamic shared memory a block may opt into (bytes) */
  char name[256];
  cudaStream_t streams[TFMM_STREAMS]; /* arena.h: named for their work */
  cudaEvent_t events[4];
  cudaEvent_t staging[2]; /* the chunks of a staged copy (host_copy.h) */
  /* The arena (arena.h): every device and pinned buffer kept between
   * calls. */
  tfmm_device_buffer slot[TFMM_SLOTS];
  tfmm_device_buffer pinned[TFMM_PINNED];
};

/* A device slot of g's arena, for the owners that grow it themselves
 * (device_buffer.cuh). */
static inline tfmm_device_buffer *tfmm_arena_slot(tfmm_gpu *g, int slot) {
  return &g->slot[slot];
}

/* Dynamic shared memory (bytes) a block of `kernel` may opt into on the
 * current device: the device's opt-in limit (227 KB on sm_90 and sm_100,
 * 163 KB on sm_80 and sm_87, 99 KB on sm_86, sm_89 and sm_120) less the
 * kernel's static shared memory; 48 KB when the device cannot be asked.
 * kernel NULL: the device's limit alone. */
int tfmm_gpu_shared_limit(const void *kernel);

/* Records a failed CUDA call in err and returns TFMM_ERR_CUDA (or
 * TFMM_ERR_NO_MEMORY for an allocation failure). */
tfmm_status tfmm_cuda_fail(tfmm_error *err, cudaError_t code, const char *call,
                           const char *file, int line);

/* Waits for events[3], then reads the upload (events 0-1), kernel (1-2)
 * and download (2-3) times: the upload stages of all pairs and the near
 * field record events 0 and 1 around their copies, the download stages 2
 * and 3, so the kernel's time is what lies between the two on the NEAR
 * stream. */
tfmm_status tfmm_gpu_elapsed(tfmm_gpu *g, tfmm_gpu_times *times,
                             tfmm_error *err);

/* Returns from the enclosing function when a CUDA call fails. Callers free
 * what they hold before returning, or keep it owned by the context so that
 * tfmm_gpu_destroy releases it. */
#define TFMM_CUDA_TRY(call, err)                                               \
  do {                                                                         \
    cudaError_t tfmm_code_ = (call);                                           \
    if (tfmm_code_ != cudaSuccess)                                             \
      return tfmm_cuda_fail((err), tfmm_code_, #call, __FILE__, __LINE__);     \
  } while (0)

/* Makes gpu->device current for a scope and restores the caller's device
 * afterwards, so that the library does not change the application's
 * current device. */
struct tfmm_device_scope {
  int previous;
  cudaError_t status;
  explicit tfmm_device_scope(int device) : previous(-1) {
    if (cudaGetDevice(&previous) != cudaSuccess)
      previous = -1;
    status = cudaSetDevice(device);
  }
  ~tfmm_device_scope() {
    if (previous >= 0)
      cudaSetDevice(previous);
  }
};

#endif
