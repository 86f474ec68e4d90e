/* The GPU tree for the hybrid schedule: see tree_gpu_hybrid.h. */
#include "tree_gpu_hybrid.h"

#include "base/clock.h"
#include "farfield_gpu.h"
#include "upward_gpu.h"

#include <cuda_runtime.h>
#include <string.h>

static tfmm_status cuda_failed(tfmm_error *err, cudaError_t code,
                               const char *what) {
  cudaGetLastError(); /* clear a non-sticky error */
  return tfmm_error_set(err,
                        code == cudaErrorMemoryAllocation ? TFMM_ERR_NO_MEMORY
                                                          : TFMM_ERR_CUDA,
                        "GPU tree: %s failed: CUDA error %d (%s)", what,
                        (int)code, cudaGetErrorString(code));
}

/* At least `bytes` of device memory in *buf (contents not kept). */
static cudaError_t grow(void **buf, size_t *cap, size_t bytes) {
  if (*cap >= bytes && *buf != NULL)
    return cudaSuccess;
  cudaFree(*buf);
  *buf = NULL;
  *cap = 0;
  cudaError_t e = cudaMalloc(buf, bytes > 0 ? bytes : 1);
  if (e == cudaSuccess)
    *cap = bytes;
  return e;
}

tfmm_status tfmm_tree_gpu_hybrid_enter(tfmm_tree_gpu_hybrid *h, int device,
                                       int *previous, tfmm_error *err) {
  if (cudaGetDevice(previous) != cudaSuccess)
    *previous = -1;
  if (h->stream != NULL && h->device != device)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: buffers on device %d, asked for %d",
                          h->device, device);
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return cuda_failed(err, e, "selecting the device");
  if (h->stream == NULL) {
    cudaStream_t s;
    e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess)
      return cuda_failed(err, e, "creating a stream");
    h->stream = s;
    h->device = device;
  }
  return TFMM_OK;
}

tfmm_status tfmm_tree_gpu_hybrid_leave(int previous, tfmm_status st) {
  if (previous >= 0)
    cudaSetDevice(previous);
  return st;
}

static tfmm_status build(tfmm_tree_gpu_hybrid *h, size_t n, const double *pos,
                         const double *mass, const tfmm_tree_gpu_params *params,
                         struct tfmm_octree *out,
                         tfmm_tree_gpu_hybrid_times *times, tfmm_error *err) {
  cudaStream_t s = (cudaStream_t)h->stream;
  double t0 = tfmm_wtime();
  /* Already in place (tfmm_tree_gpu_hybrid_bodies): nothing to copy. */
  const int in_place = h->d_bodies != NULL && pos == h->d_bodies &&
                       mass == pos + 3 * n &&
                       h->bodies_bytes >= 4 * n * sizeof(double);
  cudaError_t e = grow(&h->d_bodies, &h->bodies_bytes, 4 * n * sizeof(double));
  if (e != cudaSuccess)
    return cuda_failed(err, e, "allocating the bodies");
  double *d_pos = h->d_bodies, *d_mass = d_pos + 3 * n;
  /* Host or device arrays (unified addressing tells which). */
  if (!in_place)
    e = cudaMemcpyAsync(d_pos, pos, 3 * n * sizeof *pos, cudaMemcpyDefault, s);
  if (e == cudaSuccess && !in_place)
    e = cudaMemcpyAsync(d_mass, mass, n * sizeof *mass, cudaMemcpyDefault, s);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  if (e != cudaSuccess)
    return cuda_failed(err, e, "uploading the bodies");
  double t1 = tfmm_wtime();
  size_t bytes = 0;
  tfmm_status st = tfmm_tree_gpu_build(NULL, &bytes, n, d_pos, d_mass, params,
                                       &h->tree, s, err);
  if (st != TFMM_OK)
    return st;
  e = grow(&h->d_work, &h->work_bytes, bytes);
  if (e != cudaSuccess)
    return cuda_failed(err, e, "allocating the tree's workspace");
  bytes = h->work_bytes;
  st = tfmm_tree_gpu_build(h->d_work, &bytes, n, d_pos, d_mass, params,
                           &h->tree, s, err);
  if (st != TFMM_OK)
    return st;
  double t2 = tfmm_wtime();
  if (out != NULL)
    st = tfmm_tree_gpu_copy(&h->tree, out, s, err);
  times->upload = t1 - t0;
  times->build = t2 - t1;
  times->download = tfmm_wtime() - t2;
  return st;
}

tfmm_status tfmm_tree_gpu_hybrid_build(tfmm_tree_gpu_hybrid *h, int device,
                                       size_t n, const double *pos,
                                       const double *mass,
                                       const tfmm_tree_gpu_params *params,
                                       struct tfmm_octree *out,
                                       tfmm_tree_gpu_hybrid_times *times,
                                       tfmm_error *err) {
  memset(times, 0, sizeof *times);
  memset(&h->tree, 0, sizeof h->tree);
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, device, &previous, err);
  if (st == TFMM_OK)
    st = build(h, n, pos, mass, params, out, times, err);
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status tfmm_tree_gpu_hybrid_bodies(tfmm_tree_gpu_hybrid *h, size_t n,
                                        tfmm_error *err) {
  cudaError_t e = grow(&h->d_bodies, &h->bodies_bytes, 4 * n * sizeof(double));
  return e == cudaSuccess ? TFMM_OK
                          : cuda_failed(err, e, "allocating the bodies");
}

static tfmm_status upward(tfmm_tree_gpu_hybrid *h, int p, double *M,
                          tfmm_error *err) {
  const size_t bytes = (size_t)h->tree.ncells * (size_t)(p + 1) *
                       (size_t)(p + 2) * sizeof(double);
  void *d_M = h->d_M;
  cudaError_t e = grow(&d_M, &h->M_bytes, bytes);
  h->d_M = d_M;
  if (e != cudaSuccess)
    return cuda_failed(err, e, "allocating the multipoles");
  cudaStream_t s = (cudaStream_t)h->stream;
  tfmm_status st = h->fast_upward
                       ? tfmm_upward_gpu_fast(&h->tree, p, h->d_M, s, err)
                       : tfmm_upward_gpu(&h->tree, p, h->d_M, s, err);
  if (st != TFMM_OK)
    return st;
  if (M != NULL)
    e = cudaMemcpyAsync(M, h->d_M, bytes, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? TFMM_OK
                          : cuda_failed(err, e, "the upward pass or its copy");
}

tfmm_status tfmm_tree_gpu_hybrid_upward(tfmm_tree_gpu_hybrid *h, int p,
                                        double *M, double *seconds,
                                        tfmm_error *err) {
  double t0 = tfmm_wtime();
  if (h->stream == NULL || h->tree.ncells < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: no tree built");
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, h->device, &previous, err);
  if (st == TFMM_OK)
    st = upward(h, p, M, err);
  *seconds = tfmm_wtime() - t0;
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

/* Bytes rounded up so that the next array stays aligned. */
static size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* The list uploaded into the far field's buffer at *at. */
static cudaError_t put_list(const tfmm_tree_gpu_hybrid_list *l, char *base,
                            size_t *at, tfmm_csr_gpu *out, cudaStream_t s) {
  const size_t offsets = (size_t)(l->ntargets + 1) * sizeof *l->offset;
  const size_t entries = (size_t)l->offset[l->ntargets] * sizeof *l->index;
  out->ntargets = l->ntargets;
  out->offset = (const int64_t *)(base + *at);
  cudaError_t e = cudaMemcpyAsync(base + *at, l->offset, offsets,
                                  cudaMemcpyHostToDevice, s);
  *at += aligned(offsets);
  out->index = (const int32_t *)(base + *at);
  if (e == cudaSuccess && entries > 0)
    e = cudaMemcpyAsync(base + *at, l->index, entries, cudaMemcpyHostToDevice,
                        s);
  *at += aligned(entries);
  return e;
}

static size_t list_bytes(const tfmm_tree_gpu_hybrid_list *l) {
  if (l == NULL)
    return 0;
  return aligned((size_t)(l->ntargets + 1) * sizeof *l->offset) +
         aligned((size_t)l->offset[l->ntargets] * sizeof *l->index);
}

static tfmm_status far(tfmm_tree_gpu_hybrid *h, int p,
                       const tfmm_tree_gpu_hybrid_list *m2l,
                       const tfmm_tree_gpu_hybrid_list *m2p, double *phi,
                       double *grad, tfmm_error *err) {
  const size_t n = h->tree.n;
  const size_t L = aligned((size_t)h->tree.ncells * (size_t)(p + 1) *
                           (size_t)(p + 2) * sizeof(double));
  const size_t bodies = aligned(4 * n * sizeof(double));
  cudaError_t e = grow(&h->d_far, &h->far_bytes,
                       L + bodies + list_bytes(m2l) + list_bytes(m2p));
  if (e != cudaSuccess)
    return cuda_failed(err, e, "allocating the far field");
  cudaStream_t s = (cudaStream_t)h->stream;
  char *base = h->d_far;
  double *d_L = (double *)base, *d_phi = (double *)(base + L),
         *d_grad = d_phi + n;
  size_t at = L + bodies;
  tfmm_csr_gpu g_m2l = {0, NULL, NULL}, g_m2p = {0, NULL, NULL};
  if (m2l != NULL)
    e = put_list(m2l, base, &at, &g_m2l, s);
  if (e == cudaSuccess)
    e = put_list(m2p, base, &at, &g_m2p, s);
  if (e == cudaSuccess && m2l == NULL) /* M2P adds: start from zero */
    e = cudaMemsetAsync(d_phi, 0, 4 * n * sizeof(double), s);
  if (e != cudaSuccess)
    return cuda_failed(err, e, "uploading the lists");
  tfmm_status st = TFMM_OK;
  if (m2l != NULL) {
    st = tfmm_farfield_gpu_m2l(&h->tree, &g_m2l, p, h->d_M, d_L, s, err);
    if (st == TFMM_OK)
      st = tfmm_farfield_gpu_downward(&h->tree, p, d_L, d_phi, d_grad, s, err);
  }
  if (st == TFMM_OK)
    st = tfmm_farfield_gpu_m2p(&h->tree, &g_m2p, p, h->d_M, d_phi, d_grad, s,
                               err);
  if (st != TFMM_OK)
    return st;
  e = cudaMemcpyAsync(phi, d_phi, n * sizeof *phi, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(grad, d_grad, 3 * n * sizeof *grad,
                        cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? TFMM_OK
                          : cuda_failed(err, e, "the far field or its copy");
}

tfmm_status tfmm_tree_gpu_hybrid_far(tfmm_tree_gpu_hybrid *h, int p,
                                     const tfmm_tree_gpu_hybrid_list *m2l,
                                     const tfmm_tree_gpu_hybrid_list *m2p,
                                     double *phi, double *grad, double *seconds,
                                     tfmm_error *err) {
  double t0 = tfmm_wtime();
  if (h->stream == NULL || h->tree.ncells < 1 || h->d_M == NULL || m2p == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU far field: no tree, multipoles or M2P list");
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, h->device, &previous, err);
  if (st == TFMM_OK)
    st = far(h, p, m2l, m2p, phi, grad, err);
  *seconds = tfmm_wtime() - t0;
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

void tfmm_tree_gpu_hybrid_release(tfmm_tree_gpu_hybrid *h) {
  /* Buffers exist only once the stream does (enter comes first). Release
   * failures are not reported: nothing is left to do about them. */
  if (h->stream != NULL) {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess)
      previous = -1;
    cudaSetDevice(h->device);
    cudaFree(h->d_bodies);
    cudaFree(h->d_work);
    cudaFree(h->d_M);
    cudaFree(h->d_far);
    cudaStreamDestroy((cudaStream_t)h->stream);
    if (previous >= 0)
      cudaSetDevice(previous);
  }
  memset(h, 0, sizeof *h);
}
