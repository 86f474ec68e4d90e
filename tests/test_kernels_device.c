/* The pairwise kernels' entry points on device arrays (kernels/context/gpu.h:
 * tfmm_gpu_direct_device, tfmm_gpu_near_device_run), on a stream the test
 * creates, against the context's stages (upload, run, download, wait, on
 * its buffers and stream; the near field through tfmm_p2p_gpu_pack and
 * _launch): the same results bit for bit, in single and double
 * precision, with and without the potential, both softenings, across a
 * change of N in one set of buffers, and with cut lists (split items).
 * The host paths are checked against double direct sums in
 * test_direct_gpu and test_near_gpu; a sample here is checked again.
 * Skips without a GPU. */
#include "testutil.h"
#include "tree/lists.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include "gpu.h"
#include "p2p_gpu.h"

#include <cuda_runtime.h>

static void *device_copy(const void *x, size_t bytes) {
  void *d = NULL;
  cr_assert_eq(cudaMalloc(&d, bytes > 0 ? bytes : 1), cudaSuccess);
  if (bytes > 0)
    cr_assert_eq(cudaMemcpy(d, x, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* the copy landed */
  return d;
}

/* Bodies packed as the kernels take them: x, y, z, m in the precision. */
static void pack(const test_bodies *b, size_t n, int f64, void *out) {
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 4; d++) {
      const double v = d < 3 ? b->pos[3 * i + d] : b->mass[i];
      if (f64)
        ((double *)out)[4 * i + d] = v;
      else
        ((float *)out)[4 * i + d] = (float)v;
    }
}

/* Body i's acceleration from a double sum over all others (Plummer). */
static void direct_sum(const test_bodies *b, size_t n, size_t i, double eps,
                       double a[3]) {
  a[0] = a[1] = a[2] = 0;
  for (size_t j = 0; j < n; j++) {
    if (j == i)
      continue;
    double d[3], r2 = eps * eps;
    for (int k = 0; k < 3; k++) {
      d[k] = b->pos[3 * j + k] - b->pos[3 * i + k];
      r2 += d[k] * d[k];
    }
    const double w = b->mass[j] / (r2 * sqrt(r2));
    for (int k = 0; k < 3; k++)
      a[k] += w * d[k];
  }
}

static void direct_case(tfmm_gpu *g, cudaStream_t s, const test_bodies *b,
                        size_t n, tfmm_precision prec, tfmm_softening soft,
                        int potential) {
  tfmm_error err = {{0}};
  const int f64 = prec == TFMM_PRECISION_DOUBLE;
  const size_t bytes = 4 * n * (f64 ? sizeof(double) : sizeof(float));
  void *in = NULL, *out = NULL;
  cr_assert_eq(tfmm_gpu_reserve(g, n, prec, &in, &out, &err), TFMM_OK, "%s",
               err.message);
  pack(b, n, f64, in);
  tfmm_gpu_direct_params host = {0};
  host.unroll = 16;
  host.pair = (tfmm_pair_params){soft, 0.01, prec};
  host.potential = potential;
  tfmm_gpu_times times;
  cr_assert_eq(tfmm_gpu_direct_upload(g, n, prec, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(tfmm_gpu_direct_run(g, &host, n, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(tfmm_gpu_direct_download(g, n, prec, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(tfmm_gpu_direct_wait(g, &times, &err), TFMM_OK, "%s",
               err.message);
  void *want = malloc(bytes), *got = malloc(bytes);
  memcpy(want, out, bytes);
  /* The device path: its own arrays and stream. */
  void *d_in = device_copy(in, bytes), *d_out = NULL;
  cr_assert_eq(cudaMalloc(&d_out, bytes), cudaSuccess);
  cr_assert_eq(cudaMemset(d_out, 0xff, bytes), cudaSuccess); /* poisoned */
  tfmm_gpu_direct_params dev = {0};
  dev.unroll = 16;
  dev.pair = host.pair;
  dev.potential = potential;
  size_t ws_bytes = 99;
  cr_assert_eq(tfmm_gpu_direct_device(NULL, &ws_bytes, n, d_in, d_out, &dev,
                                      tfmm_gpu_sm_count(g), s, &err),
               TFMM_OK, "%s", err.message);
  cr_assert_eq(ws_bytes, 0, "the all-pairs kernel needs no scratch");
  char one;
  cr_assert_eq(tfmm_gpu_direct_device(&one, &ws_bytes, n, d_in, d_out, &dev,
                                      tfmm_gpu_sm_count(g), s, &err),
               TFMM_OK, "%s", err.message);
  cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
  cr_assert_eq(cudaMemcpy(got, d_out, bytes, cudaMemcpyDeviceToHost),
               cudaSuccess);
  cr_assert(dev.tile == host.tile &&
                dev.threads_per_body == host.threads_per_body &&
                dev.bodies_per_thread == host.bodies_per_thread,
            "shapes differ: p %d/%d q %d/%d r %d/%d", dev.tile, host.tile,
            dev.threads_per_body, host.threads_per_body, dev.bodies_per_thread,
            host.bodies_per_thread);
  cr_assert(memcmp(got, want, bytes) == 0,
            "n %zu %s %s potential %d: device and host results differ", n,
            f64 ? "double" : "single", tfmm_softening_name(soft), potential);
  /* An independent truth on a sample (Plummer only). */
  for (size_t i = 0; soft == TFMM_SOFTENING_PLUMMER && i < n; i += n / 7) {
    double a[3];
    direct_sum(b, n, i, 0.01, a);
    const double norm = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (int d = 0; d < 3; d++) {
      const double g_ =
          f64 ? ((double *)got)[4 * i + d] : (double)((float *)got)[4 * i + d];
      cr_assert(fabs(g_ - a[d]) <= (f64 ? 1e-10 : 1e-4) * norm,
                "body %zu: %.9g against the double sum's %.9g", i, g_, a[d]);
    }
  }
  cudaFree(d_in);
  cudaFree(d_out);
  free(want);
  free(got);
}
#endif

Test(kernels_device, all_pairs_equal_the_host_path) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_error err = {{0}};
  tfmm_gpu *g = NULL;
  cr_assert_eq(tfmm_gpu_create(&g, 0, &err), TFMM_OK, "%s", err.message);
  cudaStream_t s;
  cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
  test_bodies b = test_bodies_make(3000, TEST_CLUSTERED, test_fresh_seed());
  const size_t sizes[] = {3000, 1000, 3000};
  for (int k = 0; k < 3; k++)
    for (int f64 = 0; f64 < 2; f64++)
      for (int pot = 0; pot < 2; pot++)
        for (int spline = 0; spline < 2; spline++)
          direct_case(g, s, &b, sizes[k],
                      f64 ? TFMM_PRECISION_DOUBLE : TFMM_PRECISION_SINGLE,
                      spline ? TFMM_SOFTENING_SPLINE : TFMM_SOFTENING_PLUMMER,
                      pot);
  test_bodies_free(&b);
  cudaStreamDestroy(s);
  tfmm_gpu_destroy(g);
#endif
}

#if TFMM_HAVE_CUDA
/* The near field of t and lists by the host path, then by the device
 * path from the very arrays the host path packed; equal bit for bit. */
static void near_case(tfmm_gpu *g, cudaStream_t s, const tfmm_octree *t,
                      const tfmm_lists *l, tfmm_precision prec,
                      tfmm_softening soft, int potential, int want_splits,
                      const char *label) {
  tfmm_error err = {{0}};
  const tfmm_pair_params pair = {soft, 0.005, prec};
  tfmm_p2p_gpu_run run;
  cr_assert_eq(
      tfmm_p2p_gpu_pack(g, t, &l->near, l->near_interactions, prec, &run, &err),
      TFMM_OK, "%s", err.message);
  cr_assert_eq(tfmm_p2p_gpu_launch(g, &pair, potential, &run, &err), TFMM_OK,
               "%s", err.message);
  tfmm_gpu_times times;
  cr_assert_eq(tfmm_p2p_gpu_wait(g, &run, &times, &err), TFMM_OK, "%s",
               err.message);
  const tfmm_gpu_near_size *sz = &run.size;
  if (want_splits)
    cr_assert_gt(sz->nsplits, 0, "%s: the case must cut lists", label);
  const size_t four =
      4 * (prec == TFMM_PRECISION_DOUBLE ? sizeof(double) : sizeof(float));
  const tfmm_gpu_near_host *h = &run.host;
  tfmm_gpu_near_device d = {
      device_copy(h->body, sz->n * four),
      device_copy(h->centre, (size_t)sz->nleaves * 3 * sizeof(double)),
      device_copy(h->leaf_begin, (size_t)(sz->nleaves + 1) * sizeof(int32_t)),
      device_copy(h->list_leaf, (size_t)sz->nentries * sizeof(int32_t)),
      device_copy(h->item, (size_t)sz->nitems * sizeof(tfmm_gpu_near_item)),
      device_copy(h->split, (size_t)sz->nsplits * sizeof(tfmm_gpu_near_split)),
      NULL};
  cr_assert_eq(cudaMalloc(&d.out, sz->n * four), cudaSuccess);
  cr_assert_eq(cudaMemset(d.out, 0xff, sz->n * four), cudaSuccess);
  size_t bytes = 0;
  cr_assert_eq(
      tfmm_gpu_near_device_run(NULL, &bytes, sz, &d, &pair, potential, s, &err),
      TFMM_OK, "%s", err.message);
  cr_assert_eq(bytes, (size_t)sz->nslots * four, "%s: workspace", label);
  void *ws = NULL;
  cr_assert_eq(cudaMalloc(&ws, bytes + 64), cudaSuccess);
  if (bytes > 0) { /* too small a workspace is refused */
    size_t less = bytes - 1;
    cr_assert_eq(
        tfmm_gpu_near_device_run(ws, &less, sz, &d, &pair, potential, s, &err),
        TFMM_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "needed") != NULL, "%s", err.message);
  }
  size_t more = bytes + 64; /* larger than needed is fine */
  cr_assert_eq(
      tfmm_gpu_near_device_run(ws, &more, sz, &d, &pair, potential, s, &err),
      TFMM_OK, "%s", err.message);
  cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
  void *got = malloc(sz->n * four);
  cr_assert_eq(cudaMemcpy(got, d.out, sz->n * four, cudaMemcpyDeviceToHost),
               cudaSuccess);
  cr_assert(memcmp(got, h->out, sz->n * four) == 0,
            "%s (%s, %s, potential %d): device and host results differ", label,
            tfmm_precision_name(prec), tfmm_softening_name(soft), potential);
  free(got);
  cudaFree(ws);
  cudaFree((void *)d.body);
  cudaFree((void *)d.centre);
  cudaFree((void *)d.leaf_begin);
  cudaFree((void *)d.list_leaf);
  cudaFree((void *)d.item);
  cudaFree((void *)d.split);
  cudaFree(d.out);
}

static void near_input(tfmm_gpu *g, cudaStream_t s, const test_bodies *b,
                       int leaf, double theta, int want_splits,
                       const char *label) {
  tfmm_error err = {{0}};
  tfmm_octree t;
  cr_assert_eq(
      tfmm_octree_build(&t, b->n, b->pos, b->mass, leaf, TFMM_MAX_DEPTH, &err),
      TFMM_OK, "%s", err.message);
  const tfmm_mac mac = {theta, 0, NULL, NULL, 0, 4, 0};
  tfmm_lists l;
  cr_assert_eq(tfmm_lists_build_fmm(&t, &mac, 1, &l, &err), TFMM_OK, "%s",
               err.message);
  for (int f64 = 0; f64 < 2; f64++)
    for (int pot = 0; pot < 2; pot++)
      near_case(g, s, &t, &l,
                f64 ? TFMM_PRECISION_DOUBLE : TFMM_PRECISION_SINGLE,
                pot ? TFMM_SOFTENING_SPLINE : TFMM_SOFTENING_PLUMMER, pot,
                want_splits, label);
  tfmm_lists_free(&l);
  tfmm_octree_free(&t);
}
#endif

Test(kernels_device, near_field_equals_the_host_path) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_error err = {{0}};
  tfmm_gpu *g = NULL;
  cr_assert_eq(tfmm_gpu_create(&g, 0, &err), TFMM_OK, "%s", err.message);
  cudaStream_t s;
  cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
  uint64_t seed = test_fresh_seed();
  /* theta 0: every pair near, long lists cut into several items. */
  test_bodies b = test_bodies_make(20000, TEST_UNIFORM, seed);
  near_input(g, s, &b, 16, 0.0, 1, "uniform, all pairs near");
  test_bodies_free(&b);
  b = test_bodies_make(30000, TEST_CLUSTERED, seed);
  near_input(g, s, &b, 64, 0.5, 0, "clustered");
  test_bodies_free(&b);
  cudaStreamDestroy(s);
  tfmm_gpu_destroy(g);
#endif
}

Test(kernels_device, bad_arguments_are_named) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_error err = {{0}};
  tfmm_gpu_direct_params prm = {0};
  prm.unroll = 16;
  prm.pair.precision = TFMM_PRECISION_SINGLE;
  size_t bytes = 0;
  char one;
  cr_assert_eq(tfmm_gpu_direct_device(&one, &bytes, 0, &one, &one, &prm, 132,
                                      NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "0 bodies") != NULL, "%s", err.message);
  cr_assert_eq(
      tfmm_gpu_direct_device(NULL, NULL, 10, &one, &one, &prm, 132, NULL, &err),
      TFMM_ERR_INVALID_ARGUMENT);
  tfmm_gpu_near_size sz = {0};
  sz.precision = TFMM_PRECISION_DOUBLE;
  const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, 0,
                                 TFMM_PRECISION_SINGLE};
  tfmm_gpu_near_device d = {0};
  bytes = 8;
  cr_assert_eq(
      tfmm_gpu_near_device_run(&one, &bytes, &sz, &d, &pair, 0, NULL, &err),
      TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "precision") != NULL, "%s", err.message);
  /* The context's stages refuse more than was reserved. */
  tfmm_gpu *g = NULL;
  cr_assert_eq(tfmm_gpu_create(&g, 0, &err), TFMM_OK, "%s", err.message);
  void *in = NULL, *out = NULL;
  cr_assert_eq(tfmm_gpu_reserve(g, 100, TFMM_PRECISION_SINGLE, &in, &out, &err),
               TFMM_OK, "%s", err.message);
  cr_assert_eq(tfmm_gpu_direct_upload(g, 1000, TFMM_PRECISION_SINGLE, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "made room") != NULL, "%s", err.message);
  cr_assert_eq(tfmm_gpu_direct_run(g, &prm, 1000, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_gpu_direct_download(g, 100, TFMM_PRECISION_DOUBLE, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  tfmm_gpu_near_size none = {0};
  none.n = 10;
  none.nleaves = 1;
  cr_assert_eq(tfmm_gpu_near_upload(g, &none, &err), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "made room") != NULL, "%s", err.message);
  cr_assert_eq(tfmm_gpu_near_run(g, &sz, &pair, 0, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "reserved in double") != NULL, "%s",
            err.message);
  tfmm_gpu_destroy(g);
#endif
}
