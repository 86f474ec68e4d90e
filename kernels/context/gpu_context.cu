/* Opening a device, its streams and events, and the arena of buffers kept
 * on it between evaluations (arena.h). */
#include "gpu_context.h"

#include "gpu_probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tfmm_status tfmm_cuda_fail(tfmm_error *err, cudaError_t code, const char *call,
                           const char *file, int line) {
  tfmm_status st =
      code == cudaErrorMemoryAllocation ? TFMM_ERR_NO_MEMORY : TFMM_ERR_CUDA;
  return tfmm_error_set(err, st, "CUDA error %d (%s) in %s at %s:%d", (int)code,
                        cudaGetErrorString(code), call, file, line);
}

/* An empty kernel built for the same targets as the real ones: if it has no
 * image for a device (too old for the build), no kernel of ours runs there. */
__global__ void tfmm_probe_kernel() {}

static tfmm_gpu_fault fault_of(cudaError_t e) {
  switch (e) {
  case cudaSuccess:
    return TFMM_GPU_FAULT_NONE;
  case cudaErrorNoDevice:
    return TFMM_GPU_FAULT_NO_DEVICE;
  case cudaErrorInsufficientDriver:
    return TFMM_GPU_FAULT_DRIVER;
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorInvalidDeviceFunction:
    return TFMM_GPU_FAULT_NO_IMAGE;
  case cudaErrorUnsupportedPtxVersion:
    return TFMM_GPU_FAULT_PTX;
  default:
    return TFMM_GPU_FAULT_OTHER;
  }
}

static void describe_error(char *out, size_t size, const char *call,
                           cudaError_t e) {
  snprintf(out, size, "%s: %s (CUDA error %d)", call, cudaGetErrorString(e),
           (int)e);
}

/* Whether our kernels can run on device d, and if not why. */
static void probe_device(int d, tfmm_gpu_probe_device *out) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) {
    snprintf(out->name, sizeof out->name, "%.95s", prop.name);
    out->major = prop.major;
    out->minor = prop.minor;
  }
  cudaGetLastError();
  tfmm_device_scope scope(d);
  cudaError_t e = scope.status;
  const char *call = "cudaSetDevice";
  if (e == cudaSuccess) {
    cudaFuncAttributes attr;
    e = cudaFuncGetAttributes(&attr, tfmm_probe_kernel);
    call = "loading the kernels";
  }
  cudaGetLastError(); /* clear a non-sticky error */
  out->fault = fault_of(e);
  if (out->fault != TFMM_GPU_FAULT_NONE)
    describe_error(out->error, sizeof out->error, call, e);
}

extern "C" void tfmm_gpu_probe_run(tfmm_gpu_probe *p) {
  memset(p, 0, sizeof *p);
  p->cuda_built = 1;
  p->archs = TFMM_CUDA_ARCHITECTURES;
  p->runtime_version = CUDART_VERSION;
  if (cudaDriverGetVersion(&p->driver_version) != cudaSuccess)
    p->driver_version = 0;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  cudaGetLastError();
  p->list_fault = fault_of(e);
  if (e != cudaSuccess) {
    describe_error(p->list_error, sizeof p->list_error, "cudaGetDeviceCount",
                   e);
    return;
  }
  p->ndevices = count < TFMM_GPU_PROBE_DEVICES ? count : TFMM_GPU_PROBE_DEVICES;
  for (int d = 0; d < p->ndevices; d++)
    probe_device(d, &p->device[d]);
}

extern "C" int tfmm_gpu_device_count(void) {
  tfmm_gpu_probe p;
  tfmm_gpu_probe_run(&p);
  return tfmm_gpu_probe_explain(&p, NULL, 0);
}

int tfmm_gpu_shared_limit(const void *kernel) {
  int device = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             device) != cudaSuccess) {
    cudaGetLastError();
    return 48 * 1024;
  }
  cudaFuncAttributes attr;
  if (kernel != NULL) {
    if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
      cudaGetLastError();
      return 48 * 1024;
    }
    optin -= (int)attr.sharedSizeBytes;
  }
  return optin;
}

static tfmm_status open_context(tfmm_gpu *g, tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaDeviceProp prop;
  TFMM_CUDA_TRY(cudaGetDeviceProperties(&prop, g->device), err);
  snprintf(g->name, sizeof g->name, "%.200s (sm_%d%d, %d SMs)", prop.name,
           prop.major, prop.minor, prop.multiProcessorCount);
  g->sm_count = prop.multiProcessorCount;
  g->max_shared = tfmm_gpu_shared_limit(NULL);
  for (int k = 0; k < TFMM_STREAMS; k++)
    TFMM_CUDA_TRY(
        cudaStreamCreateWithFlags(&g->streams[k], cudaStreamNonBlocking), err);
  for (int k = 0; k < 4; k++)
    TFMM_CUDA_TRY(cudaEventCreate(&g->events[k]), err);
  for (int k = 0; k < 2; k++)
    TFMM_CUDA_TRY(
        cudaEventCreateWithFlags(&g->staging[k], cudaEventDisableTiming), err);
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_create(tfmm_gpu **out, int device,
                                       tfmm_error *err) {
  *out = NULL;
  tfmm_gpu *g = (tfmm_gpu *)calloc(1, sizeof *g);
  if (g == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for the GPU");
  g->device = device;
  tfmm_status st = open_context(g, err);
  if (st != TFMM_OK) {
    tfmm_gpu_destroy(g);
    return st;
  }
  *out = g;
  return TFMM_OK;
}

/* Release paths: their CUDA results are deliberately not reported (there is
 * nobody left to report to, and a device already in error still has to give
 * back what it can); the error state they may leave is cleared below so that
 * it does not surface in the application's next CUDA call. */
extern "C" void tfmm_gpu_destroy(tfmm_gpu *g) {
  if (g == NULL)
    return;
  {
    tfmm_device_scope scope(g->device);
    for (int k = 0; k < 4; k++)
      if (g->events[k] != NULL)
        cudaEventDestroy(g->events[k]);
    for (int k = 0; k < 2; k++)
      if (g->staging[k] != NULL)
        cudaEventDestroy(g->staging[k]);
    for (int k = 0; k < TFMM_STREAMS; k++)
      if (g->streams[k] != NULL)
        cudaStreamSynchronize(g->streams[k]);
    tfmm_arena_free(g, 0, TFMM_SLOTS);
    tfmm_arena_pinned_free(g, 0, TFMM_PINNED);
    for (int k = 0; k < TFMM_STREAMS; k++)
      if (g->streams[k] != NULL)
        cudaStreamDestroy(g->streams[k]);
    cudaGetLastError();
  }
  free(g);
}

extern "C" const char *tfmm_gpu_name(const tfmm_gpu *g) { return g->name; }

extern "C" tfmm_status tfmm_gpu_copy(tfmm_gpu *g, void *dst, const void *src,
                                     size_t bytes, int to_device, void *stream,
                                     tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaStream_t s = (cudaStream_t)stream;
  TFMM_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes,
                                to_device ? cudaMemcpyHostToDevice
                                          : cudaMemcpyDeviceToHost,
                                s),
                err);
  TFMM_CUDA_TRY(cudaStreamSynchronize(s), err);
  return TFMM_OK;
}

extern "C" int tfmm_gpu_sm_count(const tfmm_gpu *g) {
  return g != NULL ? g->sm_count : 0;
}

tfmm_status tfmm_gpu_elapsed(tfmm_gpu *g, tfmm_gpu_times *times,
                             tfmm_error *err) {
  TFMM_CUDA_TRY(cudaEventSynchronize(g->events[3]), err);
  float ms[3];
  for (int k = 0; k < 3; k++)
    TFMM_CUDA_TRY(cudaEventElapsedTime(&ms[k], g->events[k], g->events[k + 1]),
                  err);
  times->upload = 1e-3 * ms[0];
  times->kernel = 1e-3 * ms[1];
  times->download = 1e-3 * ms[2];
  return TFMM_OK;
}

/* ---- The arena (arena.h) ------------------------------------------------ */

extern "C" void *tfmm_gpu_stream(const tfmm_gpu *g, tfmm_stream_name name) {
  return (void *)g->streams[name];
}

extern "C" int tfmm_gpu_device(const tfmm_gpu *g) { return g->device; }

extern "C" void *tfmm_gpu_staging_event(const tfmm_gpu *g, int k) {
  return (void *)g->staging[k & 1];
}

static int slot_ok(int slot, int count) { return slot >= 0 && slot < count; }

extern "C" tfmm_status tfmm_arena_reserve(tfmm_gpu *g, int slot, size_t bytes,
                                          size_t slack, void **p,
                                          tfmm_error *err) {
  if (!slot_ok(slot, TFMM_SLOTS))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "arena: device slot %d of %d", slot, TFMM_SLOTS);
  tfmm_device_buffer *b = &g->slot[slot];
  if (bytes == 0)
    bytes = 1;
  if (b->p == nullptr || bytes > b->bytes) {
    tfmm_device_scope scope(g->device);
    TFMM_CUDA_TRY(scope.status, err);
    const cudaError_t e = tfmm_device_buffer_reserve_slack(b, bytes, slack);
    if (e != cudaSuccess) {
      cudaGetLastError(); /* an allocation's failure is not sticky: the
                             caller may retry with less */
      return tfmm_cuda_fail(err, e, "cudaMalloc", __FILE__, __LINE__);
    }
  }
  if (p != NULL)
    *p = b->p;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_arena_pinned(tfmm_gpu *g, int slot, size_t bytes,
                                         size_t slack, void **p,
                                         tfmm_error *err) {
  if (!slot_ok(slot, TFMM_PINNED))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "arena: pinned slot %d of %d", slot, TFMM_PINNED);
  tfmm_device_buffer *b = &g->pinned[slot];
  if (bytes == 0)
    bytes = 1;
  if (b->p == nullptr || bytes > b->bytes) {
    if (b->p != nullptr)
      TFMM_CUDA_TRY(cudaFreeHost(b->p), err);
    b->p = nullptr;
    b->bytes = 0;
    const size_t want = bytes + (slack > 0 ? bytes / slack : 0);
    const cudaError_t e = cudaMallocHost(&b->p, want);
    if (e != cudaSuccess) {
      b->p = nullptr;
      cudaGetLastError();
      return tfmm_cuda_fail(err, e, "cudaMallocHost", __FILE__, __LINE__);
    }
    b->bytes = want;
  }
  if (p != NULL)
    *p = b->p;
  return TFMM_OK;
}

extern "C" void *tfmm_arena_at(const tfmm_gpu *g, int slot) {
  return slot_ok(slot, TFMM_SLOTS) ? g->slot[slot].p : NULL;
}

extern "C" size_t tfmm_arena_slot_bytes(const tfmm_gpu *g, int slot) {
  return slot_ok(slot, TFMM_SLOTS) ? g->slot[slot].bytes : 0;
}

extern "C" void *tfmm_arena_pinned_at(const tfmm_gpu *g, int slot) {
  return slot_ok(slot, TFMM_PINNED) ? g->pinned[slot].p : NULL;
}

/* Release path: results not reported (see tfmm_gpu_destroy). */
extern "C" void tfmm_arena_free(tfmm_gpu *g, int first, int count) {
  tfmm_device_scope scope(g->device);
  for (int k = first; k < first + count && k < TFMM_SLOTS; k++)
    if (k >= 0)
      tfmm_device_buffer_free(&g->slot[k]);
  cudaGetLastError();
}

extern "C" void tfmm_arena_pinned_free(tfmm_gpu *g, int first, int count) {
  for (int k = first; k < first + count && k < TFMM_PINNED; k++)
    if (k >= 0 && g->pinned[k].p != nullptr) {
      cudaFreeHost(g->pinned[k].p);
      g->pinned[k].p = nullptr;
      g->pinned[k].bytes = 0;
    }
  cudaGetLastError();
}

extern "C" size_t tfmm_arena_bytes(const tfmm_gpu *g, int first, int count) {
  size_t sum = 0;
  for (int k = first; k < first + count && k < TFMM_SLOTS; k++)
    if (k >= 0)
      sum += g->slot[k].bytes;
  return sum;
}
