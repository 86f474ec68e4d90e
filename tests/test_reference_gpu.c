/* The exact forces at a sample of targets on the GPU
 * (kernels/direct/reference_gpu.h, tfmm_gpu_reference_at) against the
 * library's truth, the CPU's compensated double sums at the same targets
 * (tfmm_allpairs_reference_at, written apart from interaction.h): both
 * layouts of testutil.h, Plummer and the spline, softened and not,
 * coincident pairs inside the softening, sizes around a tile (128) and
 * sizes cut into many source chunks, repeated targets, with and without
 * the potential; the same bits run to run; invalid arguments refused with
 * a message; a bad index and a non-finite result named by the check; and
 * a wrong softening caught (the comparison can fail). Fresh seeds, outputs
 * poisoned. Skips without a GPU.
 *
 * The bound, per target: |a_gpu - a_ref| <= 1e-12 |a_ref| (and the same
 * for the potential). Both sides form each pair's terms in double with a
 * relative error of at most about a dozen roundings (the differences, r^2,
 * a 1-ulp rsqrt() or 1 / sqrt, its cube, the mass; the spline's
 * polynomials cancel to at most some tens of ulps near the edge of its
 * support), and the GPU's plain sums, over a tile's 128 pairs, a chunk's
 * tiles and the chunks (at most about 500 on an H100), add at most about
 * 128 + (tiles a chunk) + (chunks) < 700 more in the worst case (the
 * CPU's compensated sums add 2): |a_gpu - a_ref| <= ~800 u sum_j |t_j| =
 * 9e-14 sum_j |t_j| (u = 2^-53), within the bound while the pulls on a
 * target cancel to no less than 1/11 of their sum of magnitudes. Rounding
 * errors do not add up coherently, so in fact the difference is nearer
 * u sqrt(n) of the largest terms: about 1e-15 of |a_ref|, the bound
 * keeping a factor 1000 for targets where the pulls cancel. The
 * potential's terms all have one sign: no cancellation. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include "pipeline/allpairs.h"
#include "reference_gpu.h"

#include <cuda_runtime.h>

static const double TOL = 1e-12;

#define CUDA_OK(call) cr_assert_eq((call), cudaSuccess, "%s", #call)

/* The bodies and targets on the device, and room for the results. */
typedef struct device_case {
  double *pos, *mass, *acc, *pot;
  int64_t *targets;
  void *workspace;
  size_t workspace_bytes;
} device_case;

static void *to_device(const void *x, size_t bytes) {
  void *d = NULL;
  CUDA_OK(cudaMalloc(&d, bytes));
  CUDA_OK(cudaMemcpy(d, x, bytes, cudaMemcpyHostToDevice));
  return d;
}

/* The bodies and k targets as the kernels take them (int64 indices,
 * taken as they are). */
static device_case device_make_raw(const test_bodies *b, size_t k,
                                   const int64_t *t64) {
  device_case d = {0};
  d.pos = to_device(b->pos, 3 * b->n * sizeof(double));
  d.mass = to_device(b->mass, b->n * sizeof(double));
  d.targets = to_device(t64, k * sizeof *t64);
  CUDA_OK(cudaMalloc((void **)&d.acc, 3 * k * sizeof(double)));
  CUDA_OK(cudaMalloc((void **)&d.pot, k * sizeof(double)));
  return d;
}

static device_case device_make(const test_bodies *b, size_t k,
                               const size_t *targets) {
  int64_t *t64 = malloc(k * sizeof *t64);
  for (size_t t = 0; t < k; t++)
    t64[t] = (int64_t)targets[t];
  device_case d = device_make_raw(b, k, t64);
  free(t64);
  return d;
}

static void device_free(device_case *d) {
  cudaFree(d->pos);
  cudaFree(d->mass);
  cudaFree(d->targets);
  cudaFree(d->acc);
  cudaFree(d->pot);
  cudaFree(d->workspace);
  *d = (device_case){0};
}

/* Sizes the workspace, poisons the results (all bits set: NaN), runs on a
 * stream of the test's and checks; acc (3k) and pot (k, or NULL: none
 * asked for) get the results. */
static void gpu_reference(device_case *d, const test_bodies *b, size_t k,
                          const tfmm_pair_params *pair, double *acc,
                          double *pot) {
  tfmm_error err = {{0}};
  size_t bytes = 0;
  double *d_pot = pot != NULL ? d->pot : NULL;
  cr_assert_eq(tfmm_gpu_reference_at(NULL, &bytes, b->n, NULL, NULL, k, NULL,
                                     NULL, pair, NULL, d_pot, NULL, &err),
               TFMM_OK, "%s", err.message);
  cr_assert_gt(bytes, 0, "the check's words live in the workspace");
  if (bytes > d->workspace_bytes) {
    cudaFree(d->workspace);
    CUDA_OK(cudaMalloc(&d->workspace, bytes));
    d->workspace_bytes = bytes;
  }
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  CUDA_OK(cudaMemsetAsync(d->acc, 0xff, 3 * k * sizeof(double), s));
  CUDA_OK(cudaMemsetAsync(d->pot, 0xff, k * sizeof(double), s));
  cr_assert_eq(tfmm_gpu_reference_at(d->workspace, &d->workspace_bytes, b->n,
                                     d->pos, d->mass, k, d->targets, NULL, pair,
                                     d->acc, d_pot, s, &err),
               TFMM_OK, "%s", err.message);
  cr_assert_eq(
      tfmm_gpu_reference_check(d->workspace, b->n, k, d->targets, s, &err),
      TFMM_OK, "%s", err.message);
  CUDA_OK(
      cudaMemcpy(acc, d->acc, 3 * k * sizeof(double), cudaMemcpyDeviceToHost));
  if (pot != NULL)
    CUDA_OK(
        cudaMemcpy(pot, d->pot, k * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaStreamDestroy(s));
}

static void cpu_reference(const test_bodies *b, size_t k, const size_t *targets,
                          const tfmm_pair_params *pair, double *acc,
                          double *pot) {
  tfmm_config run;
  tfmm_config_defaults(&run);
  run.G = 1;
  run.eps = pair->eps;
  run.softening = pair->softening;
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_allpairs_reference_at(&run, b->n, b->pos, b->mass, k,
                                          targets, acc, pot, &err),
               TFMM_OK, "%s", err.message);
}

/* The largest |gpu - cpu| / |cpu| over the targets (acceleration as a
 * vector); 0 / 0 counts as 0, NaN as infinite. */
static double worst_relative(size_t k, const double *got, const double *want,
                             int dim) {
  double worst = 0;
  for (size_t t = 0; t < k; t++) {
    double d2 = 0, w2 = 0;
    for (int c = 0; c < dim; c++) {
      const double d = got[dim * t + c] - want[dim * t + c];
      d2 += d * d;
      w2 += want[dim * t + c] * want[dim * t + c];
    }
    const double rel = d2 == 0 ? 0 : sqrt(d2) / sqrt(w2);
    if (!(rel <= worst))
      worst = isnan(rel) ? INFINITY : rel;
  }
  return worst;
}

/* k targets: the first and last body, then draws with repeats. */
static size_t *draw_targets(size_t n, size_t k, uint64_t seed) {
  size_t *t = malloc(k * sizeof *t);
  test_rng rng = {seed ^ 0x5eed};
  for (size_t i = 0; i < k; i++)
    t[i] = i == 0 ? 0 : i == 1 ? n - 1 : (size_t)(test_uniform(&rng) * n);
  return t;
}

/* One comparison at k drawn targets, with and (when both) without the
 * potential; what names the case in a failure. */
static void check_case(const test_bodies *b, size_t k, tfmm_softening soft,
                       double eps, int both, uint64_t seed, const char *what) {
  const tfmm_pair_params pair = {soft, eps, TFMM_PRECISION_DOUBLE};
  size_t *targets = draw_targets(b->n, k, seed);
  double *aref = malloc(3 * k * sizeof *aref), *pref = malloc(k * sizeof *pref);
  double *acc = malloc(3 * k * sizeof *acc), *pot = malloc(k * sizeof *pot);
  test_poison(aref, 3 * k);
  test_poison(pref, k);
  cpu_reference(b, k, targets, &pair, aref, pref);
  device_case d = device_make(b, k, targets);
  gpu_reference(&d, b, k, &pair, acc, pot);
  const double ea = worst_relative(k, acc, aref, 3);
  const double ep = worst_relative(k, pot, pref, 1);
  cr_assert(ea <= TOL && ep <= TOL,
            "%s (n %zu, k %zu, %s, eps %g, seed %#llx): worst relative "
            "error %.3g in a, %.3g in phi",
            what, b->n, k, tfmm_softening_name(soft), eps,
            (unsigned long long)seed, ea, ep);
  if (both) {
    double *acc2 = malloc(3 * k * sizeof *acc2);
    gpu_reference(&d, b, k, &pair, acc2, NULL);
    const double e2 = worst_relative(k, acc2, aref, 3);
    cr_assert(e2 <= TOL, "%s without the potential: %.3g (seed %#llx)", what,
              e2, (unsigned long long)seed);
    /* Run to run: the same bits. */
    gpu_reference(&d, b, k, &pair, acc2, NULL);
    double *acc3 = malloc(3 * k * sizeof *acc3);
    gpu_reference(&d, b, k, &pair, acc3, NULL);
    cr_assert(memcmp(acc2, acc3, 3 * k * sizeof *acc2) == 0,
              "%s: two runs differ (seed %#llx)", what,
              (unsigned long long)seed);
    free(acc2);
    free(acc3);
  }
  device_free(&d);
  free(targets);
  free(aref);
  free(pref);
  free(acc);
  free(pot);
}

static void check_layouts(size_t n, size_t k, tfmm_softening soft, double eps,
                          int both) {
  const test_layout layouts[] = {TEST_UNIFORM, TEST_CLUSTERED};
  for (int l = 0; l < 2; l++) {
    const uint64_t seed = test_fresh_seed();
    test_bodies b = test_bodies_make(n, layouts[l], seed);
    check_case(&b, k, soft, eps, both, seed, l == 0 ? "uniform" : "clustered");
    test_bodies_free(&b);
  }
}
#endif

/* 200,003 bodies: several tiles a chunk and a short last tile. */
Test(reference_gpu, plummer_softened_matches_the_cpu) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_layouts(200003, 300, TFMM_SOFTENING_PLUMMER, 0.01, 1);
  check_layouts(20011, 700, TFMM_SOFTENING_PLUMMER, 1e-3, 0);
#endif
}

/* eps 0.01 puts the clumps of radius 1e-3 to 0.02 inside the support
 * (2.8 eps): both branches of the spline, in one warp. */
Test(reference_gpu, spline_softened_matches_the_cpu) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_layouts(50021, 300, TFMM_SOFTENING_SPLINE, 0.01, 1);
  check_layouts(20011, 300, TFMM_SOFTENING_SPLINE, 1e-3, 0);
#endif
}

/* eps = 0: Newton under either kernel; the self pair must be skipped
 * (r = 0 would give 0 * inf). */
Test(reference_gpu, unsoftened_matches_the_cpu) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_layouts(30011, 300, TFMM_SOFTENING_PLUMMER, 0, 1);
  check_layouts(30011, 300, TFMM_SOFTENING_SPLINE, 0, 0);
#endif
}

/* Every 7th body on top of the one before: the pair adds nothing to a
 * (r = 0) and -m / eps (Plummer) or the spline's depth to phi, which the
 * potential's comparison sees; the targets include stacked bodies. */
Test(reference_gpu, coincident_pairs_inside_the_softening) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const tfmm_softening kinds[] = {TFMM_SOFTENING_PLUMMER,
                                  TFMM_SOFTENING_SPLINE};
  for (int s = 0; s < 2; s++) {
    const uint64_t seed = test_fresh_seed();
    test_bodies b = test_bodies_make(10007, TEST_CLUSTERED, seed);
    test_bodies_stack(&b, 7);
    check_case(&b, 400, kinds[s], 0.01, s == 0, seed, "stacked every 7th");
    test_bodies_free(&b);
  }
#endif
}

/* Around one tile of sources (128 a tile, 128 threads a block) and one
 * group of targets (256 a block): short tiles, more targets than bodies,
 * a single body (no pair at all: zeros). */
Test(reference_gpu, small_inputs) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const size_t sizes[] = {1, 2, 5, 127, 128, 129, 255, 257, 1000};
  const size_t ks[] = {1, 3, 257, 100, 256, 300, 512, 255, 513};
  for (int i = 0; i < 9; i++) {
    const uint64_t seed = test_fresh_seed();
    test_bodies b = test_bodies_make(sizes[i], TEST_UNIFORM, seed);
    check_case(&b, ks[i], TFMM_SOFTENING_PLUMMER, 0.05, 0, seed, "small");
    check_case(&b, ks[i], TFMM_SOFTENING_SPLINE, 0.05, 0, seed, "small");
    test_bodies_free(&b);
  }
#endif
}

/* The comparison can fail: the GPU under Plummer against the CPU under
 * the spline (same eps) differs by far more than the bound. */
Test(reference_gpu, a_wrong_softening_is_caught) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(5000, TEST_CLUSTERED, seed);
  const size_t k = 100;
  size_t *targets = draw_targets(b.n, k, seed);
  const tfmm_pair_params plummer = {TFMM_SOFTENING_PLUMMER, 0.01,
                                    TFMM_PRECISION_DOUBLE};
  const tfmm_pair_params spline = {TFMM_SOFTENING_SPLINE, 0.01,
                                   TFMM_PRECISION_DOUBLE};
  double *aref = malloc(3 * k * sizeof *aref);
  double *acc = malloc(3 * k * sizeof *acc);
  cpu_reference(&b, k, targets, &spline, aref, NULL);
  device_case d = device_make(&b, k, targets);
  gpu_reference(&d, &b, k, &plummer, acc, NULL);
  const double e = worst_relative(k, acc, aref, 3);
  cr_assert(e > 1e-3,
            "Plummer against the spline: only %.3g apart (seed "
            "%#llx)",
            e, (unsigned long long)seed);
  device_free(&d);
  free(targets);
  free(aref);
  free(acc);
  test_bodies_free(&b);
#endif
}

#if TFMM_HAVE_CUDA
/* A refused call: the status and a message containing `word`. */
static void refused(tfmm_status st, const tfmm_error *err, const char *word,
                    const char *what) {
  cr_assert_eq(st, TFMM_ERR_INVALID_ARGUMENT, "%s: status %d", what, (int)st);
  cr_assert(strstr(err->message, word) != NULL,
            "%s: the message \"%s\" does not say \"%s\"", what, err->message,
            word);
}
#endif

Test(reference_gpu, invalid_arguments_are_refused) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  test_bodies b = test_bodies_make(1000, TEST_UNIFORM, test_fresh_seed());
  const size_t k = 10, n = b.n;
  size_t *targets = draw_targets(n, k, 1);
  device_case d = device_make(&b, k, targets);
  const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, 0.01,
                                 TFMM_PRECISION_DOUBLE};
  tfmm_error err = {{0}};
  size_t bytes = 0;
  cr_assert_eq(tfmm_gpu_reference_at(NULL, &bytes, n, NULL, NULL, k, NULL, NULL,
                                     &pair, NULL, d.pot, NULL, &err),
               TFMM_OK, "%s", err.message);
  CUDA_OK(cudaMalloc(&d.workspace, bytes));
  d.workspace_bytes = bytes;
  void *ws = d.workspace;
#define CALL(N, POS, MASS, K, TG, PAIR, ACC, WSB)                              \
  tfmm_gpu_reference_at(ws, WSB, N, POS, MASS, K, TG, NULL, PAIR, ACC, d.pot,  \
                        NULL, &err)
  refused(CALL(n, d.pos, d.mass, 0, d.targets, &pair, d.acc, &bytes), &err,
          "targets", "k = 0");
  refused(CALL(0, d.pos, d.mass, k, d.targets, &pair, d.acc, &bytes), &err,
          "bodies", "n = 0");
  refused(CALL(n, NULL, d.mass, k, d.targets, &pair, d.acc, &bytes), &err,
          "d_pos", "no positions");
  refused(CALL(n, d.pos, NULL, k, d.targets, &pair, d.acc, &bytes), &err,
          "d_mass", "no masses");
  refused(CALL(n, d.pos, d.mass, k, NULL, &pair, d.acc, &bytes), &err,
          "d_targets", "no targets");
  refused(CALL(n, d.pos, d.mass, k, d.targets, &pair, NULL, &bytes), &err,
          "d_acc", "no results");
  refused(CALL(n, d.pos, d.mass, k, d.targets, NULL, d.acc, &bytes), &err,
          "pair", "no softening");
  refused(CALL(n, d.pos, d.mass, k, d.targets, &pair, d.acc, NULL), &err,
          "workspace_bytes", "no size");
  size_t small = bytes - 1;
  refused(CALL(n, d.pos, d.mass, k, d.targets, &pair, d.acc, &small), &err,
          "needed", "a small workspace");
  const tfmm_pair_params negative = {TFMM_SOFTENING_PLUMMER, -1,
                                     TFMM_PRECISION_DOUBLE};
  refused(CALL(n, d.pos, d.mass, k, d.targets, &negative, d.acc, &bytes), &err,
          "eps", "eps < 0");
  refused(
      CALL((size_t)1 << 31, d.pos, d.mass, k, d.targets, &pair, d.acc, &bytes),
      &err, "bodies", "n = 2^31");
#undef CALL
  /* The size query refuses what it cannot size. */
  refused(tfmm_gpu_reference_at(NULL, &bytes, n, NULL, NULL, 0, NULL, NULL,
                                &pair, NULL, NULL, NULL, &err),
          &err, "targets", "the query with k = 0");
  refused(tfmm_gpu_reference_check(NULL, n, k, d.targets, NULL, &err), &err,
          "workspace", "the check without a workspace");
  device_free(&d);
  free(targets);
  test_bodies_free(&b);
#endif
}

#if TFMM_HAVE_CUDA
/* Runs with the targets as given (no host check) and returns the check's
 * status; acc gets the results. */
static tfmm_status run_unchecked(const test_bodies *b, size_t k,
                                 const int64_t *t64, double eps, double *acc,
                                 tfmm_error *err) {
  const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, eps,
                                 TFMM_PRECISION_DOUBLE};
  device_case d = device_make_raw(b, k, t64);
  size_t bytes = 0;
  cr_assert_eq(tfmm_gpu_reference_at(NULL, &bytes, b->n, NULL, NULL, k, NULL,
                                     NULL, &pair, NULL, NULL, NULL, err),
               TFMM_OK, "%s", err->message);
  CUDA_OK(cudaMalloc(&d.workspace, bytes));
  cr_assert_eq(tfmm_gpu_reference_at(d.workspace, &bytes, b->n, d.pos, d.mass,
                                     k, d.targets, NULL, &pair, d.acc, NULL,
                                     NULL, err),
               TFMM_OK, "%s", err->message);
  tfmm_status st =
      tfmm_gpu_reference_check(d.workspace, b->n, k, d.targets, NULL, err);
  CUDA_OK(
      cudaMemcpy(acc, d.acc, 3 * k * sizeof(double), cudaMemcpyDeviceToHost));
  device_free(&d);
  return st;
}
#endif

/* The indices are on the device: one outside [0, n) is found by the
 * kernels, its results NaN, the others' right, and the check names the
 * first. With eps = 0, a target at the same point as another body has an
 * infinite force: the check says so (the CPU refuses it beforehand). */
Test(reference_gpu, the_check_names_bad_indices_and_nonfinite_forces) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(3000, TEST_UNIFORM, seed);
  const size_t k = 6;
  const int64_t t64[6] = {5, 2999, 3000, 7, -1, 12};
  double acc[18], aref[18];
  tfmm_error err = {{0}};
  tfmm_status st = run_unchecked(&b, k, t64, 0.01, acc, &err);
  refused(st, &err, "target 2: index 3000", "an index past n");
  const size_t good[4] = {5, 2999, 7, 12};
  const int at[4] = {0, 1, 3, 5};
  const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, 0.01,
                                 TFMM_PRECISION_DOUBLE};
  cpu_reference(&b, 4, good, &pair, aref, NULL);
  for (int i = 0; i < 4; i++) {
    const double e = worst_relative(1, acc + 3 * at[i], aref + 3 * i, 3);
    cr_assert(e <= TOL, "target %d beside the bad ones: %.3g", at[i], e);
  }
  cr_assert(isnan(acc[6]) && isnan(acc[12]), "bad targets get NaN");

  memcpy(b.pos + 3 * 100, b.pos + 3 * 99, 3 * sizeof(double));
  const int64_t pile[3] = {1, 100, 2};
  err.message[0] = '\0';
  st = run_unchecked(&b, 3, pile, 0, acc, &err);
  cr_assert_eq(st, TFMM_ERR_NONFINITE, "a coincident pair with eps = 0: %d",
               (int)st);
  cr_assert(strstr(err.message, "target 1") != NULL, "%s", err.message);
  test_bodies_free(&b);
#endif
}

#if TFMM_HAVE_CUDA
/* The sums at k targets (fast: the FP32 pairs) with d_upto (NULL: every
 * target) into acc; the check's status. */
static tfmm_status run_upto(device_case *d, const test_bodies *b, size_t k,
                            const int64_t *d_upto, int fast, double *acc,
                            tfmm_error *err) {
  const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, 1e-3,
                                 TFMM_PRECISION_DOUBLE};
  size_t bytes = 0;
  tfmm_status st =
      fast ? tfmm_gpu_reference_fast_at(NULL, &bytes, b->n, NULL, NULL, k, NULL,
                                        NULL, &pair, NULL, NULL, err)
           : tfmm_gpu_reference_at(NULL, &bytes, b->n, NULL, NULL, k, NULL,
                                   NULL, &pair, NULL, NULL, NULL, err);
  cr_assert_eq(st, TFMM_OK, "%s", err->message);
  if (bytes > d->workspace_bytes) {
    cudaFree(d->workspace);
    CUDA_OK(cudaMalloc(&d->workspace, bytes));
    d->workspace_bytes = bytes;
  }
  CUDA_OK(cudaMemset(d->acc, 0xff, 3 * k * sizeof(double))); /* NaN */
  st = fast ? tfmm_gpu_reference_fast_at(d->workspace, &d->workspace_bytes,
                                         b->n, d->pos, d->mass, k, d->targets,
                                         d_upto, &pair, d->acc, NULL, err)
            : tfmm_gpu_reference_at(d->workspace, &d->workspace_bytes, b->n,
                                    d->pos, d->mass, k, d->targets, d_upto,
                                    &pair, d->acc, NULL, NULL, err);
  cr_assert_eq(st, TFMM_OK, "%s", err->message);
  st = tfmm_gpu_reference_check(d->workspace, b->n, k, d->targets, NULL, err);
  CUDA_OK(
      cudaMemcpy(acc, d->acc, 3 * k * sizeof(double), cudaMemcpyDeviceToHost));
  return st;
}
#endif

/* d_upto, a count on the device: the first min(k, count) targets get the
 * very bits the sums at every target give them (the chunks are those of
 * k), the rest zeros; an index past n among the rest is not looked at,
 * one among the first is named. Counts at and around a warp's slots (64),
 * a block's (256), past k, 0 and negative; FP64 and FP32 pairs. */
Test(reference_gpu, sums_up_to_a_count_on_the_device) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(20011, TEST_CLUSTERED, seed);
  enum { K = 600 };
  size_t *targets = draw_targets(b.n, K, seed);
  device_case d = device_make(&b, K, targets);
  int64_t *d_upto = NULL;
  CUDA_OK(cudaMalloc((void **)&d_upto, sizeof *d_upto));
  double *all = malloc(3 * K * sizeof *all), *got = malloc(3 * K * sizeof *got);
  const int64_t counts[] = {1,   31,  33,  64,  65, 200, 256,
                            257, 599, 600, 900, 0,  -5};
  tfmm_error err = {{0}};
  for (int fast = 0; fast < 2; fast++) {
    cr_assert_eq(run_upto(&d, &b, K, NULL, fast, all, &err), TFMM_OK, "%s",
                 err.message);
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
      const int64_t u = counts[c];
      CUDA_OK(cudaMemcpy(d_upto, &u, sizeof u, cudaMemcpyHostToDevice));
      cr_assert_eq(run_upto(&d, &b, K, d_upto, fast, got, &err), TFMM_OK,
                   "upto %lld: %s", (long long)u, err.message);
      const size_t m = u < 0 ? 0 : u > K ? K : (size_t)u;
      cr_assert(memcmp(got, all, 3 * m * sizeof *got) == 0,
                "upto %lld (fast %d, seed %#llx): the first %zu differ from "
                "the sums at every target",
                (long long)u, fast, (unsigned long long)seed, m);
      for (size_t j = 3 * m; j < 3 * K; j++)
        cr_assert(got[j] == 0, "upto %lld (fast %d): slot %zu is %g, not 0",
                  (long long)u, fast, j / 3, got[j]);
    }
    /* A bad index past the count is not read; one before it is named. */
    const int64_t bad = (int64_t)b.n, good = (int64_t)targets[450];
    CUDA_OK(
        cudaMemcpy(d.targets + 450, &bad, sizeof bad, cudaMemcpyHostToDevice));
    const int64_t u = 400;
    CUDA_OK(cudaMemcpy(d_upto, &u, sizeof u, cudaMemcpyHostToDevice));
    cr_assert_eq(run_upto(&d, &b, K, d_upto, fast, got, &err), TFMM_OK,
                 "a bad index past the count: %s", err.message);
    const int64_t u2 = 451;
    CUDA_OK(cudaMemcpy(d_upto, &u2, sizeof u2, cudaMemcpyHostToDevice));
    refused(run_upto(&d, &b, K, d_upto, fast, got, &err), &err, "target 450",
            "a bad index before the count");
    CUDA_OK(cudaMemcpy(d.targets + 450, &good, sizeof good,
                       cudaMemcpyHostToDevice));
  }
  free(all);
  free(got);
  cudaFree(d_upto);
  device_free(&d);
  free(targets);
  test_bodies_free(&b);
#endif
}

/* The same sums from host arrays (tfmm_gpu_reference_host_at, what the
 * error measured over MPI ranks uses): against the CPU's compensated sums
 * at drawn targets, Plummer and the spline, with massless bodies among
 * the sources (a rank's copies of the other ranks' targets); the caller's
 * current device kept; an index past n and, with eps = 0, a target at the
 * same point as another body refused by name. */
Test(reference_gpu, host_arrays_match_the_cpu) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const tfmm_softening kinds[] = {TFMM_SOFTENING_PLUMMER,
                                  TFMM_SOFTENING_SPLINE};
  int before = -1, after = -2;
  CUDA_OK(cudaGetDevice(&before));
  for (int s = 0; s < 2; s++) {
    const uint64_t seed = test_fresh_seed();
    test_bodies b = test_bodies_make(30011, TEST_CLUSTERED, seed);
    for (size_t i = 3; i < b.n; i += 97)
      b.mass[i] = 0;
    const size_t k = 500;
    size_t *targets = draw_targets(b.n, k, seed);
    targets[2] = 3; /* a massless one */
    const tfmm_pair_params pair = {kinds[s], 0.01, TFMM_PRECISION_DOUBLE};
    double *aref = malloc(3 * k * sizeof *aref);
    double *acc = malloc(3 * k * sizeof *acc);
    test_poison(aref, 3 * k);
    test_poison(acc, 3 * k);
    cpu_reference(&b, k, targets, &pair, aref, NULL);
    tfmm_error err = {{0}};
    cr_assert_eq(tfmm_gpu_reference_host_at(0, b.n, b.pos, b.mass, k, targets,
                                            &pair, acc, &err),
                 TFMM_OK, "%s", err.message);
    const double e = worst_relative(k, acc, aref, 3);
    cr_assert(e <= TOL, "host arrays, %s (seed %#llx): worst relative %.3g",
              tfmm_softening_name(kinds[s]), (unsigned long long)seed, e);
    free(targets);
    free(aref);
    free(acc);
    test_bodies_free(&b);
  }
  CUDA_OK(cudaGetDevice(&after));
  cr_assert_eq(after, before, "the caller's device is kept");

  test_bodies b = test_bodies_make(2000, TEST_UNIFORM, test_fresh_seed());
  const tfmm_pair_params newton = {TFMM_SOFTENING_PLUMMER, 0,
                                   TFMM_PRECISION_DOUBLE};
  double acc[9];
  tfmm_error err = {{0}};
  const size_t past[3] = {4, 2000, 9};
  refused(tfmm_gpu_reference_host_at(0, b.n, b.pos, b.mass, 3, past, &newton,
                                     acc, &err),
          &err, "index 2000", "an index past n from the host");
  memcpy(b.pos + 3 * 50, b.pos + 3 * 49, 3 * sizeof(double));
  const size_t pile[2] = {1, 50};
  err.message[0] = '\0';
  cr_assert_eq(tfmm_gpu_reference_host_at(0, b.n, b.pos, b.mass, 2, pile,
                                          &newton, acc, &err),
               TFMM_ERR_NONFINITE, "%s", err.message);
  cr_assert(strstr(err.message, "target 1") != NULL, "%s", err.message);
  test_bodies_free(&b);
#endif
}
