/* The GPU tree for the hybrid schedule: see tree_gpu_hybrid.h. */
#include "tree_gpu_hybrid.h"

#include "base/clock.h"
#include "farfield_gpu.h"
#include "host_copy.h"
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

_Static_assert((int)TFMM_TREE_GPU_HYBRID_SLOTS <= (int)TFMM_SLOTS_TREE_COUNT,
               "the tree's slots fit its group of the arena");

/* At least `bytes` of device memory in the tree's slot, no slack (it
 * grows to what is asked and the arena's pad; the contents are not kept
 * then); *p its pointer. */
static tfmm_status grow(tfmm_tree_gpu_hybrid *h, int slot, size_t bytes,
                        void **p, tfmm_error *err) {
  tfmm_status st = tfmm_arena_reserve(h->gpu, slot, bytes, 0, p, err);
  if (st != TFMM_OK)
    cudaGetLastError(); /* clear a non-sticky error */
  return st;
}

static cudaStream_t stream_of(const tfmm_tree_gpu_hybrid *h) {
  return (cudaStream_t)tfmm_gpu_stream(h->gpu, TFMM_STREAM_SOLVE);
}

void *tfmm_tree_gpu_hybrid_stream(const tfmm_tree_gpu_hybrid *h) {
  return h->gpu != NULL ? (void *)stream_of(h) : NULL;
}

tfmm_status tfmm_tree_gpu_hybrid_enter(tfmm_tree_gpu_hybrid *h, tfmm_gpu *gpu,
                                       int *previous, tfmm_error *err) {
  if (cudaGetDevice(previous) != cudaSuccess)
    *previous = -1;
  if (gpu == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: no device context");
  if (h->gpu != NULL && h->gpu != gpu)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: buffers in the context of device %d, "
                          "asked for another (device %d)",
                          tfmm_gpu_device(h->gpu), tfmm_gpu_device(gpu));
  cudaError_t e = cudaSetDevice(tfmm_gpu_device(gpu));
  if (e != cudaSuccess)
    return cuda_failed(err, e, "selecting the device");
  h->gpu = gpu;
  return TFMM_OK;
}

tfmm_status tfmm_tree_gpu_hybrid_leave(int previous, tfmm_status st) {
  if (previous >= 0)
    cudaSetDevice(previous);
  return st;
}

/* Whether p is device memory (or managed), which the DMA reads as it is;
 * host memory goes through tfmm_gpu_copy_host (pinned or staged). */
static int device_memory(const void *p) {
  struct cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError(); /* clear a non-sticky error */
    return 0;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* The bodies into the BODIES slot (tfmm_tree_gpu_hybrid_upload). */
static tfmm_status upload(tfmm_tree_gpu_hybrid *h, size_t n, const double *pos,
                          const double *mass, tfmm_error *err) {
  cudaStream_t s = stream_of(h);
  const size_t bytes = 4 * n * sizeof(double);
  /* Already in place (tfmm_tree_gpu_hybrid_bodies): nothing to copy. */
  const void *held = tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_BODIES);
  const int in_place =
      held != NULL && pos == held && mass == pos + 3 * n &&
      tfmm_arena_slot_bytes(h->gpu, TFMM_TREE_GPU_HYBRID_BODIES) >= bytes;
  void *bodies = NULL;
  tfmm_status st = grow(h, TFMM_TREE_GPU_HYBRID_BODIES, bytes, &bodies, err);
  if (st != TFMM_OK)
    return st;
  double *d_pos = bodies, *d_mass = d_pos + 3 * n;
  if (!in_place && !device_memory(pos)) {
    st = tfmm_gpu_copy_host(h->gpu, d_pos, pos, 3 * n * sizeof *pos, 1, s, err);
    if (st == TFMM_OK)
      st =
          tfmm_gpu_copy_host(h->gpu, d_mass, mass, n * sizeof *mass, 1, s, err);
    h->n = st == TFMM_OK ? n : 0;
    return st;
  }
  cudaError_t e = cudaSuccess;
  if (!in_place)
    e = cudaMemcpyAsync(d_pos, pos, 3 * n * sizeof *pos, cudaMemcpyDefault, s);
  if (e == cudaSuccess && !in_place)
    e = cudaMemcpyAsync(d_mass, mass, n * sizeof *mass, cudaMemcpyDefault, s);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  if (e != cudaSuccess)
    return cuda_failed(err, e, "uploading the bodies");
  h->n = n;
  return TFMM_OK;
}

/* The tree of the uploaded bodies (tfmm_tree_gpu_hybrid_build). */
static tfmm_status build(tfmm_tree_gpu_hybrid *h,
                         const tfmm_tree_gpu_params *params, tfmm_error *err) {
  cudaStream_t s = stream_of(h);
  const size_t n = h->n;
  double *d_pos = tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_BODIES),
         *d_mass = d_pos + 3 * n;
  size_t bytes = 0;
  tfmm_status st = tfmm_tree_gpu_build(NULL, &bytes, n, d_pos, d_mass, params,
                                       &h->tree, s, err);
  if (st != TFMM_OK)
    return st;
  void *work = NULL;
  st = grow(h, TFMM_TREE_GPU_HYBRID_WORK, bytes, &work, err);
  if (st != TFMM_OK)
    return st;
  bytes = tfmm_arena_slot_bytes(h->gpu, TFMM_TREE_GPU_HYBRID_WORK);
  return tfmm_tree_gpu_build(work, &bytes, n, d_pos, d_mass, params, &h->tree,
                             s, err);
}

tfmm_status tfmm_tree_gpu_hybrid_upload(tfmm_tree_gpu_hybrid *h, tfmm_gpu *gpu,
                                        size_t n, const double *pos,
                                        const double *mass, tfmm_error *err) {
  h->n = 0;
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, gpu, &previous, err);
  if (st == TFMM_OK)
    st = upload(h, n, pos, mass, err);
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status tfmm_tree_gpu_hybrid_build(tfmm_tree_gpu_hybrid *h,
                                       const tfmm_tree_gpu_params *params,
                                       tfmm_error *err) {
  memset(&h->tree, 0, sizeof h->tree);
  h->order = -1; /* a new tree: no multipoles, no lists yet */
  h->far_ready = 0;
  if (h->gpu == NULL || h->n == 0)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: no bodies uploaded");
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, h->gpu, &previous, err);
  if (st == TFMM_OK)
    st = build(h, params, err);
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status tfmm_tree_gpu_hybrid_refit(tfmm_tree_gpu_hybrid *h, int timed,
                                       tfmm_error *err) {
  if (h->gpu == NULL || h->n == 0 || h->tree.nleaves < 1 || h->tree.n != h->n)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: a refit needs a tree of the %zu bodies "
                          "uploaded",
                          h->n);
  h->order = -1; /* new moments: no multipoles, no lists yet */
  h->far_ready = 0;
  h->tree.d_targets = NULL;
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, h->gpu, &previous, err);
  if (st == TFMM_OK) {
    double *d_pos = tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_BODIES);
    st = tfmm_tree_gpu_refit(
        tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_WORK),
        tfmm_arena_slot_bytes(h->gpu, TFMM_TREE_GPU_HYBRID_WORK), d_pos,
        d_pos + 3 * h->n, timed, &h->tree, stream_of(h), err);
  }
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status tfmm_tree_gpu_hybrid_download(tfmm_tree_gpu_hybrid *h,
                                          struct tfmm_octree *out,
                                          tfmm_error *err) {
  if (h->gpu == NULL || h->tree.ncells < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: no tree built");
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, h->gpu, &previous, err);
  if (st == TFMM_OK)
    st = tfmm_tree_gpu_copy(&h->tree, out, stream_of(h), err);
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status tfmm_tree_gpu_hybrid_bodies(tfmm_tree_gpu_hybrid *h, size_t n,
                                        double **bodies, tfmm_error *err) {
  void *p = NULL;
  tfmm_status st =
      grow(h, TFMM_TREE_GPU_HYBRID_BODIES, 4 * n * sizeof(double), &p, err);
  *bodies = p;
  return st;
}

static size_t multipole_bytes(const tfmm_tree_gpu_hybrid *h, int p) {
  return (size_t)h->tree.ncells * (size_t)(p + 1) * (size_t)(p + 2) *
         sizeof(double);
}

/* The upward pass on stream s, waited for when wait is nonzero. */
static tfmm_status upward(tfmm_tree_gpu_hybrid *h, int p, int fast,
                          cudaStream_t s, int wait, tfmm_error *err) {
  void *d_M = NULL;
  tfmm_status st =
      grow(h, TFMM_TREE_GPU_HYBRID_M, multipole_bytes(h, p), &d_M, err);
  if (st != TFMM_OK)
    return st;
  st = fast ? tfmm_upward_gpu_fast(&h->tree, p, d_M, s, err)
            : tfmm_upward_gpu(&h->tree, p, d_M, s, err);
  if (st != TFMM_OK)
    return st;
  const cudaError_t e = wait ? cudaStreamSynchronize(s) : cudaSuccess;
  if (e != cudaSuccess)
    return cuda_failed(err, e, "the upward pass");
  h->order = p;
  return TFMM_OK;
}

static tfmm_status upward_download(tfmm_tree_gpu_hybrid *h, double *M,
                                   tfmm_error *err) {
  cudaStream_t s = stream_of(h);
  cudaError_t e =
      cudaMemcpyAsync(M, tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_M),
                      multipole_bytes(h, h->order), cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? TFMM_OK
                          : cuda_failed(err, e, "copying the multipoles");
}

static tfmm_status tree_built(const tfmm_tree_gpu_hybrid *h, tfmm_error *err) {
  if (h->gpu == NULL || h->tree.ncells < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU tree: no tree built");
  return TFMM_OK;
}

/* The upward pass on stream s in h's device, waited for when wait is
 * nonzero: the two entries below. */
static tfmm_status upward_entered(tfmm_tree_gpu_hybrid *h, int p, int fast,
                                  cudaStream_t s, int wait, tfmm_error *err) {
  h->order = -1;
  tfmm_status st = tree_built(h, err);
  if (st != TFMM_OK)
    return st;
  int previous = -1;
  st = tfmm_tree_gpu_hybrid_enter(h, h->gpu, &previous, err);
  if (st == TFMM_OK)
    st = upward(h, p, fast, s, wait, err);
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status tfmm_tree_gpu_hybrid_upward(tfmm_tree_gpu_hybrid *h, int p,
                                        int fast, tfmm_error *err) {
  return upward_entered(h, p, fast, h->gpu != NULL ? stream_of(h) : NULL, 1,
                        err);
}

tfmm_status tfmm_tree_gpu_hybrid_upward_on(tfmm_tree_gpu_hybrid *h, int p,
                                           int fast, void *stream,
                                           tfmm_error *err) {
  return upward_entered(h, p, fast, (cudaStream_t)stream, 0, err);
}

tfmm_status tfmm_tree_gpu_hybrid_upward_download(tfmm_tree_gpu_hybrid *h,
                                                 double *M, tfmm_error *err) {
  tfmm_status st = tree_built(h, err);
  if (st == TFMM_OK && h->order < 0)
    st = tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "GPU tree: no multipoles made");
  if (st != TFMM_OK)
    return st;
  int previous = -1;
  st = tfmm_tree_gpu_hybrid_enter(h, h->gpu, &previous, err);
  if (st == TFMM_OK)
    st = upward_download(h, M, err);
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

/* Where the far field's arrays are in its slot: the local expansions,
 * then phi (n) and grad (3n), then the lists. */
static size_t local_bytes(const tfmm_tree_gpu_hybrid *h) {
  return aligned((size_t)h->tree.ncells * (size_t)(h->order + 1) *
                 (size_t)(h->order + 2) * sizeof(double));
}

static tfmm_status far_upload(tfmm_tree_gpu_hybrid *h,
                              const tfmm_tree_gpu_hybrid_list *m2l,
                              const tfmm_tree_gpu_hybrid_list *m2p,
                              tfmm_error *err) {
  const size_t n = h->tree.n;
  const size_t L = local_bytes(h);
  const size_t bodies = aligned(4 * n * sizeof(double));
  void *d_far = NULL;
  tfmm_status st =
      grow(h, TFMM_TREE_GPU_HYBRID_FAR,
           L + bodies + list_bytes(m2l) + list_bytes(m2p), &d_far, err);
  if (st != TFMM_OK)
    return st;
  cudaStream_t s = stream_of(h);
  char *base = d_far;
  double *d_phi = (double *)(base + L);
  size_t at = L + bodies;
  tfmm_csr_gpu g_m2l = {0, NULL, NULL}, g_m2p = {0, NULL, NULL};
  cudaError_t e = cudaSuccess;
  if (m2l != NULL)
    e = put_list(m2l, base, &at, &g_m2l, s);
  if (e == cudaSuccess)
    e = put_list(m2p, base, &at, &g_m2p, s);
  if (e == cudaSuccess && m2l == NULL) /* M2P adds: start from zero */
    e = cudaMemsetAsync(d_phi, 0, 4 * n * sizeof(double), s);
  if (e != cudaSuccess)
    return cuda_failed(err, e, "uploading the lists");
  h->far_fmm = m2l != NULL;
  h->far_m2l =
      (tfmm_tree_gpu_hybrid_list){g_m2l.ntargets, g_m2l.offset, g_m2l.index};
  h->far_m2p =
      (tfmm_tree_gpu_hybrid_list){g_m2p.ntargets, g_m2p.offset, g_m2p.index};
  return TFMM_OK;
}

static tfmm_status far(tfmm_tree_gpu_hybrid *h, tfmm_error *err) {
  const size_t n = h->tree.n;
  const int p = h->order;
  cudaStream_t s = stream_of(h);
  const double *d_M = tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_M);
  char *base = tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_FAR);
  double *d_L = (double *)base, *d_phi = (double *)(base + local_bytes(h)),
         *d_grad = d_phi + n;
  const tfmm_csr_gpu g_m2l = {h->far_m2l.ntargets, h->far_m2l.offset,
                              h->far_m2l.index},
                     g_m2p = {h->far_m2p.ntargets, h->far_m2p.offset,
                              h->far_m2p.index};
  tfmm_status st = TFMM_OK;
  if (h->far_fmm) {
    st = tfmm_farfield_gpu_m2l(&h->tree, &g_m2l, p, d_M, d_L, s, err);
    if (st == TFMM_OK)
      st = tfmm_farfield_gpu_downward(&h->tree, p, d_L, d_phi, d_grad, s, err);
  }
  if (st == TFMM_OK)
    st = tfmm_farfield_gpu_m2p(&h->tree, &g_m2p, p, d_M, d_phi, d_grad, s, err);
  return st;
}

static tfmm_status far_download(tfmm_tree_gpu_hybrid *h, double *phi,
                                double *grad, tfmm_error *err) {
  const size_t n = h->tree.n;
  cudaStream_t s = stream_of(h);
  const char *base = tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_FAR);
  const double *d_phi = (const double *)(base + local_bytes(h)),
               *d_grad = d_phi + n;
  cudaError_t e =
      cudaMemcpyAsync(phi, d_phi, n * sizeof *phi, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(grad, d_grad, 3 * n * sizeof *grad,
                        cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? TFMM_OK
                          : cuda_failed(err, e, "the far field or its copy");
}

/* The far field's three steps, each with the tree and its multipoles
 * (and after the first, the lists) in place, on h's device. */
typedef enum { FAR_UPLOAD, FAR_RUN, FAR_DOWNLOAD } far_step;

typedef struct far_args {
  const tfmm_tree_gpu_hybrid_list *m2l, *m2p; /* FAR_UPLOAD */
  double *phi, *grad;                         /* FAR_DOWNLOAD */
} far_args;

static tfmm_status far_call(tfmm_tree_gpu_hybrid *h, far_step step,
                            const far_args *a, tfmm_error *err) {
  if (h->gpu == NULL || h->tree.ncells < 1 || h->order < 0 ||
      tfmm_arena_at(h->gpu, TFMM_TREE_GPU_HYBRID_M) == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU far field: no tree or multipoles");
  if (step == FAR_UPLOAD && a->m2p == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU far field: no M2P list");
  if (step != FAR_UPLOAD && !h->far_ready)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "GPU far field: no lists uploaded");
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(h, h->gpu, &previous, err);
  if (st == TFMM_OK)
    switch (step) {
    case FAR_UPLOAD:
      st = far_upload(h, a->m2l, a->m2p, err);
      h->far_ready = st == TFMM_OK;
      break;
    case FAR_RUN:
      st = far(h, err);
      break;
    case FAR_DOWNLOAD:
      st = far_download(h, a->phi, a->grad, err);
      break;
    }
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status tfmm_tree_gpu_hybrid_far_upload(
    tfmm_tree_gpu_hybrid *h, const tfmm_tree_gpu_hybrid_list *m2l,
    const tfmm_tree_gpu_hybrid_list *m2p, tfmm_error *err) {
  h->far_ready = 0;
  const far_args a = {.m2l = m2l, .m2p = m2p};
  return far_call(h, FAR_UPLOAD, &a, err);
}

tfmm_status tfmm_tree_gpu_hybrid_far(tfmm_tree_gpu_hybrid *h, tfmm_error *err) {
  const far_args a = {0};
  return far_call(h, FAR_RUN, &a, err);
}

tfmm_status tfmm_tree_gpu_hybrid_far_download(tfmm_tree_gpu_hybrid *h,
                                              double *phi, double *grad,
                                              tfmm_error *err) {
  const far_args a = {.phi = phi, .grad = grad};
  return far_call(h, FAR_DOWNLOAD, &a, err);
}

void tfmm_tree_gpu_hybrid_release(tfmm_tree_gpu_hybrid *h) {
  /* The slots stay with the context, which frees them: h may be released
   * after it. */
  memset(h, 0, sizeof *h);
}
