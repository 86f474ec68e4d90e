/* The GPU backend as seen from C. Implemented by the .cu files in kernels/, or
 * by kernels/none/gpu_none.c in a build without CUDA. Every function reports
 * failures through err and releases what it allocated on every path. */
#ifndef TFMM_GPU_H
#define TFMM_GPU_H

#include "base/error.h"
#include "base/pair.h"
#include "nearfield/near_items.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfmm_gpu tfmm_gpu;

/* Parameters of the tiled all-pairs kernel (GPU Gems 3, section 31.4). */
typedef struct tfmm_gpu_direct_params {
  int tile;              /* p, or 0 to choose; set to the value used */
  int threads_per_body;  /* q, or 0 to choose; set to the value used */
  int unroll;            /* inner-loop unroll factor; in double precision
                            always 4 (set to the value used) */
  int bodies_per_thread; /* r, or 0 to choose; set to the value used */
  tfmm_pair_params pair; /* softening and precision */
  int potential;         /* whether to accumulate the potential */
} tfmm_gpu_direct_params;

/* Limits of the all-pairs kernel's launch shape. A block has p * q threads
 * (r = 4 holds more in registers and runs in blocks of at most 512, as
 * does every double-precision kernel, whose targets and sums take twice
 * the registers); each of its (p / 32) q warps double-buffers tiles of p
 * bodies in shared memory: p * p * q bytes for 16-byte bodies (single
 * precision), twice that for 32-byte ones (double), within the 227 KB a
 * Hopper block may have. The double-precision kernel is built for r = 1
 * and 2 only (direct_tiled.cu). */
enum { TFMM_DIRECT_MAX_TILE = 256, TFMM_DIRECT_MAX_SHARED = 227 * 1024 };

/* Bytes of one body (x, y, z, m) or result (a, phi) in a precision. */
static inline int tfmm_direct_body_bytes(tfmm_precision precision) {
  return precision == TFMM_PRECISION_DOUBLE ? 32 : 16;
}

static inline int tfmm_direct_max_threads_for(int bodies_per_thread,
                                              tfmm_precision precision) {
  return bodies_per_thread >= 4 || precision == TFMM_PRECISION_DOUBLE ? 512
                                                                      : 1024;
}

static inline long tfmm_direct_shared_bytes_for(int p, int q,
                                                tfmm_precision precision) {
  return (long)p * p * q / 16 * tfmm_direct_body_bytes(precision);
}

/* Whether (p, q, r) is a launch shape the kernel of a precision accepts. */
static inline int tfmm_direct_shape_ok_for(int p, int q, int r,
                                           tfmm_precision precision) {
  const int f64 = precision == TFMM_PRECISION_DOUBLE;
  return p >= 32 && p <= TFMM_DIRECT_MAX_TILE && p % 32 == 0 && q >= 1 &&
         (q & (q - 1)) == 0 &&
         p * q <= tfmm_direct_max_threads_for(r, precision) &&
         tfmm_direct_shared_bytes_for(p, q, precision) <=
             TFMM_DIRECT_MAX_SHARED &&
         (r == 1 || r == 2 || (r == 4 && !f64));
}

/* The same in single precision. */
static inline int tfmm_direct_max_threads(int bodies_per_thread) {
  return tfmm_direct_max_threads_for(bodies_per_thread, TFMM_PRECISION_SINGLE);
}

static inline long tfmm_direct_shared_bytes(int p, int q) {
  return tfmm_direct_shared_bytes_for(p, q, TFMM_PRECISION_SINGLE);
}

static inline int tfmm_direct_shape_ok(int p, int q, int r) {
  return tfmm_direct_shape_ok_for(p, q, r, TFMM_PRECISION_SINGLE);
}

/* Seconds, measured with CUDA events on the context's NEAR stream. */
typedef struct tfmm_gpu_times {
  double upload, kernel, download;
} tfmm_gpu_times;

/* Devices on which the kernels can run (0 without a driver or device). */
int tfmm_gpu_device_count(void);

/* Opens the device: its named streams (arena.h), events, its properties. */
tfmm_status tfmm_gpu_create(tfmm_gpu **out, int device, tfmm_error *err);
void tfmm_gpu_destroy(tfmm_gpu *gpu);
const char *tfmm_gpu_name(const tfmm_gpu *gpu);

/* Its multiprocessor count (0 for none), which sizes the work. */
int tfmm_gpu_sm_count(const tfmm_gpu *gpu);

/* Copies bytes between the host and memory of gpu's device (to_device: host
 * src into device dst; else device src into host dst), ordered on the
 * caller's stream (a cudaStream_t, NULL: the default stream), and waits for
 * it. */
tfmm_status tfmm_gpu_copy(tfmm_gpu *gpu, void *dst, const void *src,
                          size_t bytes, int to_device, void *stream,
                          tfmm_error *err);

/* Makes room for n bodies of a precision on the device and in pinned host
 * buffers, which are kept and reused: no allocation per call once large
 * enough. *in and *out receive the pinned host buffers of 4n values of
 * that precision (floats or doubles): xyzm in, acc+phi out. They are
 * slots of the context's arena (TFMM_SLOTS_DIRECT, TFMM_PINNED_DIRECT),
 * grown by a quarter more than asked. */
tfmm_status tfmm_gpu_reserve(tfmm_gpu *gpu, size_t n, tfmm_precision precision,
                             void **in, void **out, tfmm_error *err);

/* All pairs over the n bodies in the reserved input buffer, results to the
 * reserved output buffer, both in one precision (reserved for it), as
 * three stages enqueued in this order on the context's NEAR stream, each
 * returning at once, and a wait:
 *   upload    the pinned input to the device (between events 0 and 1);
 *   run       the kernel, tfmm_gpu_direct_device on the context's
 *             buffers, in params->pair.precision: the launch shape left
 *             at 0 in params is chosen and set to the values used;
 *   download  the results to the pinned output (between events 2 and 3);
 *   wait      waits for the download; times: upload, kernel (from the
 *             upload's end to the download's start) and download seconds.
 * n is at most what tfmm_gpu_reserve made room for in that precision. */
tfmm_status tfmm_gpu_direct_upload(tfmm_gpu *gpu, size_t n,
                                   tfmm_precision precision, tfmm_error *err);
tfmm_status tfmm_gpu_direct_run(tfmm_gpu *gpu, tfmm_gpu_direct_params *params,
                                size_t n, tfmm_error *err);
tfmm_status tfmm_gpu_direct_download(tfmm_gpu *gpu, size_t n,
                                     tfmm_precision precision, tfmm_error *err);
tfmm_status tfmm_gpu_direct_wait(tfmm_gpu *gpu, tfmm_gpu_times *times,
                                 tfmm_error *err);

/* The all-pairs kernel alone on device arrays, CUB's way: the n bodies
 * at d_body (4n values of params->pair.precision: x, y, z, mass) into
 * d_out (4n: acceleration and potential, G = 1), enqueued on `stream` (a
 * cudaStream_t of the current device; NULL: the legacy default stream),
 * without copying, allocating or waiting. The launch shape left at 0 in
 * params is chosen for n and sm_count (and set to the values used).
 * Scratch is sized in two calls: with workspace NULL only
 * *workspace_bytes is set (0: none is needed; pass any non-NULL pointer
 * then). 1 <= n <= 2^31 - 1. */
tfmm_status tfmm_gpu_direct_device(void *workspace, size_t *workspace_bytes,
                                   size_t n, const void *d_body, void *d_out,
                                   tfmm_gpu_direct_params *params, int sm_count,
                                   void *stream, tfmm_error *err);

/* The near field of a tree method (GPU Gems 3, section 31.6): target leaves
 * against the source leaves of their neighbour lists, through the tiled
 * kernel of kernels/near/near_tiled.cu. Sizes of one evaluation: */
typedef struct tfmm_gpu_near_size {
  size_t n;         /* bodies */
  int64_t nleaves;  /* leaves, in key order, covering the bodies in order */
  int64_t nentries; /* entries of all the neighbour lists */
  int64_t nitems;   /* work items (tfmm_gpu_near_item) */
  int64_t nsplits;  /* target chunks whose list is cut into several items */
  int64_t nslots;   /* partial sums those items write (4 values each) */
  tfmm_precision precision; /* of the bodies, the sums and the results */
} tfmm_gpu_near_size;

/* Pinned host arrays of one evaluation, filled by the caller before
 * tfmm_gpu_near_upload. Positions are relative to the centre of the body's
 * own leaf; the kernel moves the sources of leaf S into the frame of
 * target leaf T by c_S - c_T (taken in double, then rounded), so that
 * every pair is computed at the precision of its own separation, as on
 * the CPU. Bodies and results are in the precision of the sums: 4 floats
 * a body in single precision, 4 doubles in double. */
typedef struct tfmm_gpu_near_host {
  tfmm_precision precision; /* of body and out (the size's) */
  void *body;          /* 4 n: x, y, z relative to the leaf's origin, mass */
  double *centre;      /* 3 nleaves: each leaf's origin */
  int32_t *leaf_begin; /* nleaves + 1: leaf k is bodies
                          [leaf_begin[k], leaf_begin[k + 1]) */
  int32_t *list_leaf;  /* nentries: source leaves (positions), in
                          CSR order by target leaf */
  tfmm_gpu_near_item *item;   /* nitems */
  tfmm_gpu_near_split *split; /* nsplits */
  void *out;                  /* 4 n results after tfmm_gpu_near_wait:
                                 acceleration and potential, G = 1 (the
                                 hybrid schedule writes its exact leaves
                                 over them: tfmm_p2p_cpu_exact) */
} tfmm_gpu_near_host;

/* Makes room for an evaluation of these sizes (kept and reused: no
 * allocation once large enough) and points *host at the pinned arrays.
 * The arrays are slots of the context's arena (TFMM_SLOTS_NEAR, pinned
 * halves TFMM_PINNED_NEAR), grown by a quarter more than asked, and so is
 * the kernels' scratch, sized by tfmm_gpu_near_device_run's query. */
tfmm_status tfmm_gpu_near_reserve(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                                  tfmm_gpu_near_host *host, tfmm_error *err);

/* The near field of the reserved arrays as three stages enqueued in this
 * order on the context's NEAR stream, each returning at once (the caller
 * works on the CPU meanwhile), and a wait:
 *   upload    the pinned arrays but out to the device (between events 0
 *             and 1);
 *   run       the kernels, tfmm_gpu_near_device_run on the context's
 *             arrays and scratch, with pair's softening (its precision
 *             the size's);
 *   download  the results to host->out (between events 2 and 3);
 *   wait      waits for the download: host->out then holds the results;
 *             times: upload, kernel (from the upload's end to the
 *             download's start) and download seconds. */
tfmm_status tfmm_gpu_near_upload(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                                 tfmm_error *err);
tfmm_status tfmm_gpu_near_run(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                              const tfmm_pair_params *pair, int potential,
                              tfmm_error *err);
tfmm_status tfmm_gpu_near_download(tfmm_gpu *gpu, const tfmm_gpu_near_size *sz,
                                   tfmm_error *err);
tfmm_status tfmm_gpu_near_wait(tfmm_gpu *gpu, tfmm_gpu_times *times,
                               tfmm_error *err);

/* The arrays of tfmm_gpu_near_host in device memory (the same layouts),
 * for the near field on device arrays. */
typedef struct tfmm_gpu_near_device {
  const void *body;
  const double *centre;
  const int32_t *leaf_begin;
  const int32_t *list_leaf;
  const tfmm_gpu_near_item *item;
  const tfmm_gpu_near_split *split;
  void *out; /* 4 n results */
} tfmm_gpu_near_device;

/* The near field's kernels alone on device arrays, CUB's way: enqueued on
 * `stream` (a cudaStream_t of the current device; NULL: the legacy default
 * stream) without copying, allocating or waiting (tfmm_gpu_near_run calls
 * it on the context's arrays). The workspace holds the partial sums of cut
 * lists (4 sz->nslots values of the precision): with workspace NULL only
 * *workspace_bytes is set; else it must be at least that (pass any
 * non-NULL pointer when it is 0). */
tfmm_status tfmm_gpu_near_device_run(void *workspace, size_t *workspace_bytes,
                                     const tfmm_gpu_near_size *sz,
                                     const tfmm_gpu_near_device *arrays,
                                     const tfmm_pair_params *pair,
                                     int potential, void *stream,
                                     tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
