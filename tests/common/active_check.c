#include "active_check.h"
#include "sample_quantile.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if TFMM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

double active_sentinel(void) {
  const uint64_t bits = 0x7ff4deadbeef1234ull; /* a signalling-range NaN */
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

static int is_sentinel(double x) {
  const double s = active_sentinel();
  return memcmp(&x, &s, sizeof x) == 0;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

unsigned char *active_mask(const test_bodies *b, active_kind kind,
                           double fraction, uint64_t seed, size_t *count) {
  const size_t n = b->n;
  unsigned char *m = calloc(n, 1);
  cr_assert(m != NULL);
  test_rng rng = {seed};
  if (kind == ACTIVE_RANDOM)
    for (size_t i = 0; i < n; i++)
      m[i] = test_uniform(&rng) < fraction;
  else if (kind == ACTIVE_ALL)
    memset(m, 1, n);
  else if (kind == ACTIVE_SINGLE)
    m[(size_t)(test_uniform(&rng) * (double)n) % n] = 1;
  else if (kind == ACTIVE_INNERMOST) {
    double c[3] = {0, 0, 0}, M = 0;
    for (size_t i = 0; i < n; i++) {
      for (int d = 0; d < 3; d++)
        c[d] += b->mass[i] * b->pos[3 * i + d];
      M += b->mass[i];
    }
    double *r2 = malloc(n * sizeof *r2), *sorted = malloc(n * sizeof *r2);
    cr_assert(r2 != NULL && sorted != NULL);
    for (size_t i = 0; i < n; i++) {
      r2[i] = 0;
      for (int d = 0; d < 3; d++) {
        const double x = b->pos[3 * i + d] - c[d] / M;
        r2[i] += x * x;
      }
      sorted[i] = r2[i];
    }
    qsort(sorted, n, sizeof *sorted, cmp_double);
    size_t k = (size_t)llround(fraction * (double)n);
    k = k < 1 ? 1 : k > n ? n : k;
    for (size_t i = 0; i < n; i++)
      m[i] = r2[i] <= sorted[k - 1];
    free(r2);
    free(sorted);
  }
  *count = 0;
  for (size_t i = 0; i < n; i++)
    *count += m[i] != 0;
  return m;
}

void active_result_free(active_result *r) {
  free(r->acc);
  free(r->pot);
  r->acc = r->pot = NULL;
}

#if TFMM_HAVE_CUDA
static void *device_copy(const void *x, size_t bytes) {
  void *d = NULL;
  cr_assert_eq(cudaMalloc(&d, bytes > 0 ? bytes : 1), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d, x, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* the copy landed */
  return d;
}

static void host_copy(void *x, const void *d, size_t bytes) {
  cr_assert_eq(cudaMemcpy(x, d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
}
#endif

/* The call under test, on the host or the device. */
static tfmm_status call_active(tfmm_solver *s, const test_bodies *b,
                               const unsigned char *active, double *acc,
                               double *pot, int device) {
  const size_t n = b->n;
  if (!device)
    return tfmm_solver_compute_active(s, n, b->pos, b->mass, active, acc, pot);
#if TFMM_HAVE_CUDA
  void *d_pos = device_copy(b->pos, 3 * n * sizeof(double));
  void *d_mass = device_copy(b->mass, n * sizeof(double));
  void *d_active = device_copy(active, n);
  void *d_acc = device_copy(acc, 3 * n * sizeof(double));
  void *d_pot = device_copy(pot, n * sizeof(double));
  tfmm_status st = tfmm_solver_compute_active_device(
      s, n, d_pos, d_mass, d_active, d_acc, d_pot, NULL);
  host_copy(acc, d_acc, 3 * n * sizeof(double));
  host_copy(pot, d_pot, n * sizeof(double));
  cudaFree(d_pos);
  cudaFree(d_mass);
  cudaFree(d_active);
  cudaFree(d_acc);
  cudaFree(d_pot);
  return st;
#else
  cr_assert_fail("device-resident bodies need a CUDA build");
  return TFMM_ERR_UNSUPPORTED;
#endif
}

static int close_enough(double x, double y, double tol, double scale) {
  if (tol == 0)
    return memcmp(&x, &y, sizeof x) == 0;
  return fabs(x - y) <= tol * (fabs(y) + scale);
}

static double norm3(const double *x) {
  return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}

/* The targets' results against the whole evaluation's: each body's
 * acceleration as a vector, |a - a_whole| <= tol (|a_whole| + scale) with
 * scale 1e-3 of the largest |a_whole| (tol 0: the same bits). Not
 * component by component: a component that nearly cancels (seed
 * 10966079859555142361, Barnes-Hut on the GPU: a_x = -1.2e-3 of |a| =
 * 4.5) differs between the two evaluations by the single-precision near
 * field's rounding of the whole vector, 4e-8 of |a|, and so by 1.5e-4 of
 * itself. */
static void against_whole(const active_result *r, const active_result *w,
                          size_t n, const unsigned char *active, double tol,
                          const char *label) {
  double scale = 0;
  for (size_t i = 0; i < n; i++)
    scale = fmax(scale, norm3(w->acc + 3 * i));
  scale *= 1e-3;
  for (size_t i = 0; i < n; i++) {
    if (!active[i]) {
      for (int d = 0; d < 3; d++)
        cr_assert(is_sentinel(r->acc[3 * i + d]),
                  "%s: inactive body %zu: acc[%d] was written (%g)", label, i,
                  d, r->acc[3 * i + d]);
      cr_assert(is_sentinel(r->pot[i]), "%s: inactive body %zu: pot written",
                label, i);
      continue;
    }
    const double *x = r->acc + 3 * i, *y = w->acc + 3 * i;
    if (tol == 0) {
      for (int d = 0; d < 3; d++)
        cr_assert(close_enough(x[d], y[d], 0, 0),
                  "%s: body %zu acc[%d] = %.17g, whole evaluation %.17g "
                  "(the same bits expected)",
                  label, i, d, x[d], y[d]);
    } else {
      const double diff[3] = {x[0] - y[0], x[1] - y[1], x[2] - y[2]};
      cr_assert(norm3(diff) <= tol * (norm3(y) + scale),
                "%s: body %zu acc = (%.17g, %.17g, %.17g), whole evaluation "
                "(%.17g, %.17g, %.17g): |difference| %g > %g (|a| + %g)",
                label, i, x[0], x[1], x[2], y[0], y[1], y[2], norm3(diff), tol,
                scale);
    }
    cr_assert(close_enough(r->pot[i], w->pot[i], tol, 0),
              "%s: body %zu pot = %.17g, whole evaluation %.17g (tol %g)",
              label, i, r->pot[i], w->pot[i], tol);
  }
}

/* The targets' accelerations against the reference at up to `sample` of
 * them: the relative errors, judged as a sample of the 99th percentile. */
static void against_reference(const tfmm_config *c, const test_bodies *b,
                              const unsigned char *active,
                              const active_result *r,
                              const active_expect *expect, const char *label) {
  const size_t n = b->n;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += active[i] != 0;
  if (k == 0)
    return;
  const size_t stride = k > expect->sample ? k / expect->sample + 1 : 1;
  size_t *targets = malloc(k * sizeof *targets), m = 0, seen = 0;
  cr_assert(targets != NULL);
  for (size_t i = 0; i < n; i++)
    if (active[i] && seen++ % stride == 0)
      targets[m++] = i;
  double *acc = malloc(3 * m * sizeof *acc), *err = malloc(m * sizeof *err);
  cr_assert(acc != NULL && err != NULL);
  tfmm_config rc = *c;
  rc.method = TFMM_METHOD_REFERENCE;
  rc.device = TFMM_DEVICE_CPU;
  rc.schedule = TFMM_SCHEDULE_AUTO;
  rc.tree_device = rc.far_device = TFMM_DEVICE_AUTO;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &rc), TFMM_OK, "%s: %s", label,
               tfmm_solver_message(s));
  cr_assert_eq(
      tfmm_solver_reference_at(s, n, b->pos, b->mass, m, targets, acc, NULL),
      TFMM_OK, "%s: %s", label, tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  for (size_t t = 0; t < m; t++) {
    const double *a = r->acc + 3 * targets[t], *x = acc + 3 * t;
    double d2 = 0, r2 = 0;
    for (int d = 0; d < 3; d++) {
      d2 += (a[d] - x[d]) * (a[d] - x[d]);
      r2 += x[d] * x[d];
    }
    err[t] = sqrt(d2 / r2);
  }
  qsort(err, m, sizeof *err, cmp_double);
  /* The promise is a 99th percentile over all n bodies; the m compared
   * are a sample of them (random for the random sets and, taken with a
   * stride, for all; the innermost sets are judged by the same rule, their
   * margin the one ref_p99 gives). At most `allowed` of m may lie above
   * ref_p99, so that a solver that keeps it fails by chance at most
   * SAMPLE_FALSE_FAILURE of the time (sample_quantile.h); a set too small
   * to show anything (one body) is held to the whole evaluation alone. */
  const size_t allowed = sample_allowed_above(n, m, 0.99, SAMPLE_FALSE_FAILURE);
  const double judged = sample_judged(err, n, m, 0.99, SAMPLE_FALSE_FAILURE);
  if (allowed < m)
    cr_assert(judged <= expect->ref_p99,
              "%s: more than %zu of %zu targets have |a - a_ref| / |a_ref| "
              "above %g (no. %zu from the top %g, max %g)",
              label, allowed, m, expect->ref_p99, allowed + 1, judged,
              err[m - 1]);
  free(targets);
  free(acc);
  free(err);
}

static active_result result_alloc(size_t n) {
  active_result r = {
      malloc(3 * n * sizeof(double)), malloc(n * sizeof(double)), {0}};
  cr_assert(r.acc != NULL && r.pot != NULL);
  const double s = active_sentinel();
  for (size_t i = 0; i < 3 * n; i++)
    r.acc[i] = s;
  for (size_t i = 0; i < n; i++)
    r.pot[i] = s;
  return r;
}

active_result active_check(const tfmm_config *c, const test_bodies *b,
                           const unsigned char *active,
                           const active_expect *expect, int device,
                           const char *label) {
  const size_t n = b->n;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += active[i] != 0;
  active_result w = result_alloc(n), r = result_alloc(n);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, c), TFMM_OK, "%s: %s", label,
               tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_compute(s, n, b->pos, b->mass, w.acc, w.pot),
               TFMM_OK, "%s: %s", label, tfmm_solver_message(s));
  w.stats = *tfmm_solver_stats(s);
  cr_assert_eq(w.stats.targets, n, "%s: a whole evaluation counts %zu targets",
               label, w.stats.targets);
  cr_assert_eq(call_active(s, b, active, r.acc, r.pot, device), TFMM_OK,
               "%s: %s", label, tfmm_solver_message(s));
  r.stats = *tfmm_solver_stats(s);
  tfmm_solver_destroy(s);
  double tol = expect->tol;
  if (tol == 0 && ((expect->bitwise_pairs > 0 &&
                    w.stats.interactions > expect->bitwise_pairs) ||
                   (expect->bitwise_cells > 0 &&
                    w.stats.tree_cells > expect->bitwise_cells)))
    tol = expect->rounding_tol;
  cr_assert_eq(r.stats.targets, k, "%s: %zu targets counted, %zu given", label,
               r.stats.targets, k);
  against_whole(&r, &w, n, active, tol, label);
  against_reference(c, b, active, &r, expect, label);
  if (k > 0 && k < n && r.stats.interactions > 0 && w.stats.interactions > 0)
    cr_assert(r.stats.interactions <= w.stats.interactions,
              "%s: %g near interactions at %zu targets, %g at all %zu", label,
              r.stats.interactions, k, w.stats.interactions, n);
  active_result_free(&w);
  return r;
}

test_bodies active_plummer(size_t n, uint64_t seed) {
  test_bodies b = {n, malloc(3 * n * sizeof(double)),
                   malloc(n * sizeof(double))};
  double *vel = malloc(3 * n * sizeof(double));
  cr_assert(b.pos != NULL && b.mass != NULL && vel != NULL);
  cr_assert_eq(tfmm_ic_plummer(n, seed, b.pos, vel, b.mass), TFMM_OK);
  free(vel);
  return b;
}
