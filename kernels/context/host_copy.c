/* Pinned host memory and the copies between the host and a device that
 * use it (host_copy.h). */
#include "host_copy.h"

#include "arena.h"
#include "team.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static tfmm_status failed(tfmm_error *err, cudaError_t code, const char *what) {
  cudaGetLastError(); /* clear a non-sticky error */
  return tfmm_error_set(err,
                        code == cudaErrorMemoryAllocation ? TFMM_ERR_NO_MEMORY
                                                          : TFMM_ERR_CUDA,
                        "host copy: %s failed: CUDA error %d (%s)", what,
                        (int)code, cudaGetErrorString(code));
}

void *tfmm_gpu_host_alloc(size_t bytes) {
  void *p = NULL;
  if (cudaHostAlloc(&p, bytes > 0 ? bytes : 1, cudaHostAllocPortable) !=
      cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return p;
}

int tfmm_gpu_host_pinned(const void *p) {
  if (p == NULL)
    return 0;
  struct cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return a.type == cudaMemoryTypeHost;
}

void tfmm_gpu_host_free(void *p) {
  if (p != NULL && cudaFreeHost(p) != cudaSuccess)
    cudaGetLastError(); /* a release path: nobody to tell */
}

/* memcpy by the OpenMP team, each thread a slice of 256 KiB or more: one
 * core copies 32 MB at 5-10 GB/s, below what the bus moves. */
static void copy_team(char *dst, const char *src, size_t bytes) {
  const int team = tfmm_team((double)bytes, 256.0 * 1024);
  if (team <= 1) {
    memcpy(dst, src, bytes);
    return;
  }
  const size_t slice = tfmm_team_slice(bytes, team);
#pragma omp parallel for schedule(static) num_threads(team)
  for (int t = 0; t < team; t++) {
    const size_t begin = (size_t)t * slice;
    if (begin < bytes)
      memcpy(dst + begin, src + begin,
             bytes - begin < slice ? bytes - begin : slice);
  }
}

/* Host to device through the two pinned chunks: chunk i is copied into
 * slot i % 2 once the DMA of chunk i - 2 out of it is done, then its DMA
 * is enqueued, so that the host copies chunk i + 1 while it runs. */
static tfmm_status stage_up(tfmm_gpu *g, char *dst, const char *src,
                            size_t bytes, size_t chunk, char *buf[2],
                            cudaStream_t s, tfmm_error *err) {
  cudaEvent_t ev[2] = {(cudaEvent_t)tfmm_gpu_staging_event(g, 0),
                       (cudaEvent_t)tfmm_gpu_staging_event(g, 1)};
  cudaError_t e = cudaSuccess;
  for (size_t off = 0, i = 0; off < bytes && e == cudaSuccess;
       off += chunk, i++) {
    const int k = (int)(i & 1);
    const size_t len = bytes - off < chunk ? bytes - off : chunk;
    if (i >= 2 && (e = cudaEventSynchronize(ev[k])) != cudaSuccess)
      break;
    copy_team(buf[k], src + off, len);
    e = cudaMemcpyAsync(dst + off, buf[k], len, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
      e = cudaEventRecord(ev[k], s);
  }
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? TFMM_OK : failed(err, e, "staging to the device");
}

/* Device to host the same way: the DMA of chunks i and i + 1 run ahead;
 * once chunk i has landed it is copied out and its slot takes chunk
 * i + 2. */
static tfmm_status stage_down(tfmm_gpu *g, char *dst, const char *src,
                              size_t bytes, size_t chunk, char *buf[2],
                              cudaStream_t s, tfmm_error *err) {
  cudaEvent_t ev[2] = {(cudaEvent_t)tfmm_gpu_staging_event(g, 0),
                       (cudaEvent_t)tfmm_gpu_staging_event(g, 1)};
  const size_t chunks = (bytes + chunk - 1) / chunk;
  cudaError_t e = cudaSuccess;
  for (size_t i = 0; i < chunks && i < 2 && e == cudaSuccess; i++) {
    const size_t off = i * chunk;
    const size_t len = bytes - off < chunk ? bytes - off : chunk;
    e = cudaMemcpyAsync(buf[i], src + off, len, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
      e = cudaEventRecord(ev[i], s);
  }
  for (size_t i = 0; i < chunks && e == cudaSuccess; i++) {
    const int k = (int)(i & 1);
    const size_t off = i * chunk;
    const size_t len = bytes - off < chunk ? bytes - off : chunk;
    if ((e = cudaEventSynchronize(ev[k])) != cudaSuccess)
      break;
    copy_team(dst + off, buf[k], len);
    if (i + 2 < chunks) {
      const size_t next = off + 2 * chunk;
      const size_t n2 = bytes - next < chunk ? bytes - next : chunk;
      e = cudaMemcpyAsync(buf[k], src + next, n2, cudaMemcpyDeviceToHost, s);
      if (e == cudaSuccess)
        e = cudaEventRecord(ev[k], s);
    }
  }
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? TFMM_OK : failed(err, e, "staging from the device");
}

/* The two pinned slots of a staged copy of `bytes` (a chunk each). */
static tfmm_status staging_slots(tfmm_gpu *g, size_t bytes, char *buf[2],
                                 tfmm_error *err) {
  const size_t chunk = bytes < TFMM_HOST_CHUNK ? bytes : TFMM_HOST_CHUNK;
  for (int k = 0; k < 2; k++) {
    void *p = NULL;
    tfmm_status st =
        tfmm_arena_pinned(g, TFMM_PINNED_HOST + k, chunk, 0, &p, err);
    if (st != TFMM_OK)
      return st;
    buf[k] = p;
  }
  return TFMM_OK;
}

tfmm_status tfmm_gpu_copy_host(tfmm_gpu *g, void *dst, const void *src,
                               size_t bytes, int to_device, void *stream,
                               tfmm_error *err) {
  cudaStream_t s = (cudaStream_t)stream;
  if (bytes == 0)
    return TFMM_OK;
  const void *host = to_device ? src : dst;
  if (tfmm_gpu_host_pinned(host)) {
    cudaError_t e = cudaMemcpyAsync(
        dst, src, bytes,
        to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
      e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? TFMM_OK : failed(err, e, "copying");
  }
  const size_t chunk = bytes < TFMM_HOST_CHUNK ? bytes : TFMM_HOST_CHUNK;
  char *buf[2];
  tfmm_status st = staging_slots(g, bytes, buf, err);
  if (st != TFMM_OK)
    return st;
  return to_device ? stage_up(g, dst, src, bytes, chunk, buf, s, err)
                   : stage_down(g, dst, src, bytes, chunk, buf, s, err);
}

tfmm_status tfmm_gpu_copy_host_reserve(tfmm_gpu *g, size_t bytes,
                                       tfmm_error *err) {
  char *buf[2];
  tfmm_status st = staging_slots(g, bytes > 0 ? bytes : 1, buf, err);
  if (st != TFMM_OK)
    return st;
  /* The team copy_team starts for a chunk, started once (its threads are
   * kept by the OpenMP runtime for the regions that follow). */
  const size_t chunk = bytes < TFMM_HOST_CHUNK ? bytes : TFMM_HOST_CHUNK;
  const int team = tfmm_team((double)chunk, 256.0 * 1024);
  if (team > 1) {
#pragma omp parallel num_threads(team)
    { /* nothing: the threads' start is what is paid here */
    }
  }
  return TFMM_OK;
}

void tfmm_host_touch(void *p, size_t bytes) {
  if (p == NULL || bytes == 0)
    return;
  const long got = sysconf(_SC_PAGESIZE);
  const size_t page = got > 0 ? (size_t)got : 4096;
  /* p's own page, then every page that begins inside the range. */
  *(volatile char *)p = 0;
  const uintptr_t begin = (uintptr_t)p, end = begin + bytes;
  const uintptr_t first = (begin / page + 1) * page;
  const size_t pages = first < end ? (end - first + page - 1) / page : 0;
  /* One fault costs about a microsecond (map and zero a page): the team's
   * grain is 64 pages. */
  const int team = tfmm_team((double)pages, 64.0);
#pragma omp parallel for schedule(static) num_threads(team)
  for (size_t i = 0; i < pages; i++)
    *(volatile char *)(first + i * page) = 0;
}
