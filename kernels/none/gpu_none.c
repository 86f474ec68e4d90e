/* The GPU backend of a build without CUDA: there is no device, and every
 * request for one says so. */
#define _POSIX_C_SOURCE 200809L
#include "arena.h"
#include "gpu.h"
#include "gpu_probe.h"
#include "host_copy.h"
#include "reference_gpu.h"

#include <string.h>
#include <unistd.h>

static tfmm_status unsupported(tfmm_error *err) {
  return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                        "this tilefmm was built without CUDA "
                        "(configure with TILEFMM_CUDA=ON)");
}

int tfmm_gpu_device_count(void) { return 0; }

/* A build that looked for nvcc and found none (TILEFMM_CUDA=AUTO) on a
 * machine with an NVIDIA GPU is worth a word; one built without CUDA on
 * purpose (TILEFMM_CUDA=OFF, sanitizer builds) is not. */
void tfmm_gpu_probe_run(tfmm_gpu_probe *p) {
  memset(p, 0, sizeof *p);
  p->archs = "";
  p->list_fault = TFMM_GPU_FAULT_NO_DEVICE;
#ifdef TFMM_CUDA_FALLBACK
  p->gpu_node = access("/dev/nvidia0", F_OK) == 0;
#endif
}

tfmm_status tfmm_gpu_create(tfmm_gpu **out, int device, tfmm_error *err) {
  (void)device;
  *out = NULL;
  return unsupported(err);
}

void tfmm_gpu_destroy(tfmm_gpu *gpu) { (void)gpu; }

tfmm_status tfmm_gpu_copy(tfmm_gpu *gpu, void *dst, const void *src,
                          size_t bytes, int to_device, void *stream,
                          tfmm_error *err) {
  (void)gpu, (void)dst, (void)src, (void)bytes, (void)to_device, (void)stream;
  return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                        "device-resident bodies: this tilefmm was built "
                        "without CUDA");
}

int tfmm_gpu_sm_count(const tfmm_gpu *gpu) {
  (void)gpu;
  return 0;
}

const char *tfmm_gpu_name(const tfmm_gpu *gpu) {
  (void)gpu;
  return "none";
}

tfmm_status tfmm_gpu_reserve(tfmm_gpu *gpu, size_t n, tfmm_precision precision,
                             void **in, void **out, tfmm_error *err) {
  (void)gpu, (void)n, (void)precision, (void)in, (void)out;
  return unsupported(err);
}

tfmm_status tfmm_gpu_direct_upload(tfmm_gpu *gpu, size_t n,
                                   tfmm_precision precision, tfmm_error *err) {
  (void)gpu, (void)n, (void)precision;
  return unsupported(err);
}

tfmm_status tfmm_gpu_direct_run(tfmm_gpu *gpu, tfmm_gpu_direct_params *params,
                                size_t n, tfmm_error *err) {
  (void)gpu, (void)params, (void)n;
  return unsupported(err);
}

tfmm_status tfmm_gpu_direct_download(tfmm_gpu *gpu, size_t n,
                                     tfmm_precision precision,
                                     tfmm_error *err) {
  return tfmm_gpu_direct_upload(gpu, n, precision, err);
}

tfmm_status tfmm_gpu_direct_wait(tfmm_gpu *gpu, tfmm_gpu_times *times,
                                 tfmm_error *err) {
  (void)gpu, (void)times;
  return unsupported(err);
}

tfmm_status tfmm_gpu_near_reserve(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                                  tfmm_gpu_near_host *host, tfmm_error *err) {
  (void)gpu, (void)sz, (void)host;
  return unsupported(err);
}

tfmm_status tfmm_gpu_near_upload(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                                 tfmm_error *err) {
  (void)gpu, (void)sz;
  return unsupported(err);
}

tfmm_status tfmm_gpu_near_run(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                              const tfmm_pair_params *pair, int potential,
                              tfmm_error *err) {
  (void)gpu, (void)sz, (void)pair, (void)potential;
  return unsupported(err);
}

tfmm_status tfmm_gpu_near_download(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                                   tfmm_error *err) {
  return tfmm_gpu_near_upload(gpu, sz, err);
}

tfmm_status tfmm_gpu_near_wait(tfmm_gpu *gpu, tfmm_gpu_times *times,
                               tfmm_error *err) {
  (void)gpu, (void)times;
  return unsupported(err);
}

tfmm_status tfmm_gpu_direct_device(void *workspace, size_t *workspace_bytes,
                                   size_t n, const void *d_body, void *d_out,
                                   tfmm_gpu_direct_params *params, int sm_count,
                                   void *stream, tfmm_error *err) {
  (void)workspace, (void)workspace_bytes, (void)n, (void)d_body, (void)d_out,
      (void)params, (void)sm_count, (void)stream;
  return unsupported(err);
}

tfmm_status tfmm_gpu_near_device_run(void *workspace, size_t *workspace_bytes,
                                     const tfmm_gpu_near_size *sz,
                                     const tfmm_gpu_near_device *arrays,
                                     const tfmm_pair_params *pair,
                                     int potential, void *stream,
                                     tfmm_error *err) {
  (void)workspace, (void)workspace_bytes, (void)sz, (void)arrays, (void)pair,
      (void)potential, (void)stream;
  return unsupported(err);
}

tfmm_status
tfmm_gpu_reference_at(void *workspace, size_t *workspace_bytes, size_t n,
                      const double *d_pos, const double *d_mass, size_t k,
                      const int64_t *d_targets, const int64_t *d_upto,
                      const tfmm_pair_params *pair, double *d_acc,
                      double *d_pot, void *stream, tfmm_error *err) {
  (void)workspace, (void)workspace_bytes, (void)n, (void)d_pos, (void)d_mass,
      (void)k, (void)d_targets, (void)d_upto, (void)pair, (void)d_acc,
      (void)d_pot, (void)stream;
  return unsupported(err);
}

tfmm_status
tfmm_gpu_reference_fast_at(void *workspace, size_t *workspace_bytes, size_t n,
                           const double *d_pos, const double *d_mass, size_t k,
                           const int64_t *d_targets, const int64_t *d_upto,
                           const tfmm_pair_params *pair, double *d_acc,
                           void *stream, tfmm_error *err) {
  (void)workspace, (void)workspace_bytes, (void)n, (void)d_pos, (void)d_mass,
      (void)k, (void)d_targets, (void)d_upto, (void)pair, (void)d_acc,
      (void)stream;
  return unsupported(err);
}

tfmm_status tfmm_gpu_reference_host_at(int device, size_t n, const double *pos,
                                       const double *mass, size_t k,
                                       const size_t *targets,
                                       const tfmm_pair_params *pair,
                                       double *acc, tfmm_error *err) {
  (void)device, (void)n, (void)pos, (void)mass, (void)k, (void)targets,
      (void)pair, (void)acc;
  return unsupported(err);
}

tfmm_status tfmm_gpu_reference_check(const void *workspace, size_t n, size_t k,
                                     const int64_t *d_targets, void *stream,
                                     tfmm_error *err) {
  (void)workspace, (void)n, (void)k, (void)d_targets, (void)stream;
  return unsupported(err);
}

const void *tfmm_gpu_reference_found(const void *workspace) {
  return workspace;
}

tfmm_status tfmm_gpu_reference_judge(const void *found, size_t n, size_t k,
                                     const int64_t *d_targets, void *stream,
                                     tfmm_error *err) {
  (void)found, (void)n, (void)k, (void)d_targets, (void)stream;
  return unsupported(err);
}

/* The arena (arena.h): there is no context to ask. */
void *tfmm_gpu_stream(const tfmm_gpu *g, tfmm_stream_name name) {
  (void)g;
  (void)name;
  return NULL;
}

int tfmm_gpu_device(const tfmm_gpu *g) {
  (void)g;
  return -1;
}

void *tfmm_gpu_staging_event(const tfmm_gpu *g, int k) {
  (void)g;
  (void)k;
  return NULL;
}

/* Host memory (host_copy.h): none is pinned without CUDA. */
void *tfmm_gpu_host_alloc(size_t bytes) {
  (void)bytes;
  return NULL;
}

int tfmm_gpu_host_pinned(const void *p) {
  (void)p;
  return 0;
}

void tfmm_gpu_host_free(void *p) { (void)p; }

tfmm_status tfmm_gpu_copy_host(tfmm_gpu *g, void *dst, const void *src,
                               size_t bytes, int to_device, void *stream,
                               tfmm_error *err) {
  (void)g, (void)dst, (void)src, (void)bytes, (void)to_device, (void)stream;
  return unsupported(err);
}

tfmm_status tfmm_arena_reserve(tfmm_gpu *g, int slot, size_t bytes,
                               size_t slack, void **p, tfmm_error *err) {
  (void)g;
  (void)slot;
  (void)bytes;
  (void)slack;
  (void)p;
  return unsupported(err);
}

tfmm_status tfmm_arena_pinned(tfmm_gpu *g, int slot, size_t bytes, size_t slack,
                              void **p, tfmm_error *err) {
  return tfmm_arena_reserve(g, slot, bytes, slack, p, err);
}

void *tfmm_arena_at(const tfmm_gpu *g, int slot) {
  (void)g;
  (void)slot;
  return NULL;
}

size_t tfmm_arena_slot_bytes(const tfmm_gpu *g, int slot) {
  (void)g;
  (void)slot;
  return 0;
}

void *tfmm_arena_pinned_at(const tfmm_gpu *g, int slot) {
  return tfmm_arena_at(g, slot);
}

void tfmm_arena_free(tfmm_gpu *g, int first, int count) {
  (void)g;
  (void)first;
  (void)count;
}

void tfmm_arena_pinned_free(tfmm_gpu *g, int first, int count) {
  tfmm_arena_free(g, first, count);
}

size_t tfmm_arena_bytes(const tfmm_gpu *g, int first, int count) {
  (void)g;
  (void)first;
  (void)count;
  return 0;
}
