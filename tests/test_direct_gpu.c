/* The GPU all-pairs kernel against the double-precision reference, over
 * sizes, layouts, softening and every tunable. Skips without a GPU. */
#include "direct_check.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void require_gpu(void) {
  if (tfmm_gpu_count() == 0)
    cr_skip_test("no usable CUDA GPU on this machine: GPU test skipped");
}

static tfmm_config gpu_config(int p, int q, int unroll, int r) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_DIRECT;
  cfg.device = TFMM_DEVICE_GPU;
  if (p > 0) {
    cfg.gpu_tile = p;
    cfg.gpu_threads_per_body = q;
    cfg.gpu_unroll = unroll;
    cfg.gpu_bodies_per_thread = r;
  }
  return cfg;
}

static void check_sizes(test_layout layout, double eps) {
  for (size_t k = 0; k < direct_case_size_count; k++) {
    direct_case c = direct_case_make(direct_case_sizes[k], layout, eps);
    direct_case_check(&c, gpu_config(0, 0, 0, 0), 1);
    direct_case_free(&c);
  }
}

Test(direct_gpu, uniform_no_softening) {
  require_gpu();
  check_sizes(TEST_UNIFORM, 0);
}
Test(direct_gpu, uniform_softened) {
  require_gpu();
  check_sizes(TEST_UNIFORM, 0.05);
}
Test(direct_gpu, clustered_no_softening) {
  require_gpu();
  check_sizes(TEST_CLUSTERED, 0);
}
Test(direct_gpu, clustered_softened) {
  require_gpu();
  check_sizes(TEST_CLUSTERED, 1e-3);
}

/* Every tile size around its edges (N = p - 1, p, p + 1, and many tiles),
 * with q, unroll and bodies per thread varied over every shape the kernel
 * accepts (tfmm_direct_shape_ok's rules; others must be refused). */
Test(direct_gpu, every_tunable) {
  require_gpu();
  const int ps[] = {32, 64, 128, 256};
  const int qs[] = {0, 1, 2, 4, 8, 32};
  const int unrolls[] = {1, 2, 4, 8, 16, 32};
  const int rs[] = {0, 1, 2, 4};
  for (size_t ip = 0; ip < 4; ip++) {
    int p = ps[ip];
    size_t sizes[] = {(size_t)p - 1, (size_t)p, (size_t)p + 1,
                      (size_t)(5 * p + 3)};
    for (size_t is = 0; is < 4; is++) {
      direct_case c = direct_case_make(sizes[is], TEST_CLUSTERED, 1e-3);
      for (size_t iq = 0; iq < 6; iq++) {
        int q = qs[iq];
        for (size_t iu = 0; iu < 6; iu++)
          for (size_t ir = 0; ir < 4; ir++) {
            int r = rs[ir];
            long threads = (long)p * q, most = r == 4 ? 512 : 1024;
            if (threads > most || (long)p * p * q > 227 * 1024)
              continue;
            direct_case_check(&c, gpu_config(p, q, unrolls[iu], r),
                              (iu + ir) % 2);
          }
      }
      direct_case_free(&c);
    }
  }
}

/* Automatic shapes across sizes that fill the GPU and sizes that don't. */
Test(direct_gpu, automatic_shape) {
  require_gpu();
  const size_t sizes[] = {3, 4096, 70000, 150000};
  for (size_t k = 0; k < 4; k++) {
    direct_case c = direct_case_make(sizes[k], TEST_UNIFORM, 1e-2);
    direct_case_check(&c, gpu_config(0, 0, 0, 0), 1);
    direct_case_free(&c);
  }
}

/* No atomics: the same input gives the same bits. */
Test(direct_gpu, deterministic) {
  require_gpu();
  test_bodies b = test_bodies_make(50000, TEST_CLUSTERED, test_fresh_seed());
  double *a1 = malloc(3 * b.n * 8), *a2 = malloc(3 * b.n * 8);
  double *p1 = malloc(b.n * 8), *p2 = malloc(b.n * 8);
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  cfg.eps = 1e-3;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, a1, p1), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, a2, p2), TFMM_OK);
  cr_assert_eq(memcmp(a1, a2, 3 * b.n * 8), 0);
  cr_assert_eq(memcmp(p1, p2, b.n * 8), 0);
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
  free(a1), free(a2), free(p1), free(p2);
}

/* One solver, sizes up and down: buffers are reused and regrown. */
Test(direct_gpu, reuses_buffers_across_sizes) {
  require_gpu();
  const size_t sizes[] = {5000, 100, 20000, 7};
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  cfg.eps = 0.01;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  for (size_t k = 0; k < 4; k++) {
    direct_case c = direct_case_make(sizes[k], TEST_UNIFORM, 0.01);
    double *acc = malloc(3 * c.b.n * 8), *pot = malloc(c.b.n * 8);
    test_poison(acc, 3 * c.b.n);
    test_poison(pot, c.b.n);
    cr_assert_eq(tfmm_solver_compute(s, c.b.n, c.b.pos, c.b.mass, acc, pot),
                 TFMM_OK);
    cr_assert_lt(test_rel_l2(acc, c.acc_ref, 3 * c.b.n), 1e-5);
    cr_assert_lt(test_rel_l2(pot, c.pot_ref, c.b.n), 1e-5);
    const tfmm_stats *st = tfmm_solver_stats(s);
    cr_assert_eq(st->device, TFMM_DEVICE_GPU);
    cr_assert_geq(st->gpu_threads_per_body, 1, "q used is reported");
    cr_assert_gt(st->time[TFMM_PHASE_NEAR], 0);
    free(acc), free(pot);
    direct_case_free(&c);
  }
  tfmm_solver_destroy(s);
}

Test(direct_gpu, coincident_in_single_precision) {
  require_gpu();
  double pos[9] = {0, 0, 0, 1, 1, 1, 1 + 1e-12, 1, 1}, mass[3] = {1, 1, 1};
  double acc[9];
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, NULL),
               TFMM_ERR_COINCIDENT);
  tfmm_solver_destroy(s);
}

/* Raw double positions: the rounding to float is bounded body by body. */
Test(direct_gpu, raw_positions_within_rounding_bound) {
  require_gpu();
  direct_case_check_raw(3000, TEST_CLUSTERED, 0, gpu_config(0, 0, 0, 0));
  direct_case_check_raw(3000, TEST_UNIFORM, 1e-4, gpu_config(0, 0, 0, 0));
}

/* ---- The cubic spline; double precision ---------------------------------- */

/* Runs cfg on the bodies, outputs poisoned first; asserts success. */
static void compute(const tfmm_config *cfg, const test_bodies *b, double *acc,
                    double *pot) {
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, cfg), TFMM_OK);
  test_poison(acc, 3 * b->n);
  test_poison(pot, b->n);
  cr_assert_eq(tfmm_solver_compute(s, b->n, b->pos, b->mass, acc, pot), TFMM_OK,
               "%s", tfmm_solver_message(s));
  cr_assert_eq(test_first_nonfinite(acc, 3 * b->n), 3 * b->n);
  cr_assert_eq(test_first_nonfinite(pot, b->n), b->n);
  tfmm_solver_destroy(s);
}

/* The spline in single precision on the GPU, over launch shapes, against
 * the library's double-precision reference with the spline and against
 * the CPU's single-precision all pairs: relative 2-norm 1e-5 (the spline's
 * polynomials cancel towards the edge of the support, as Plummer's sums
 * do not), momentum 1e-5. Every seventh body sits on the one before it:
 * their pair, inside the support, pulls with zero force and a finite
 * potential. */
static void check_spline(size_t n, test_layout layout, double eps) {
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(n, layout, seed);
  for (size_t i = 7; i < n; i += 7)
    memcpy(b.pos + 3 * i, b.pos + 3 * (i - 1), 3 * sizeof(double));
  double *ref = malloc(3 * n * 8), *pref = malloc(n * 8);
  double *cpu = malloc(3 * n * 8), *pcpu = malloc(n * 8);
  double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_REFERENCE;
  cfg.eps = eps;
  cfg.softening = TFMM_SOFTENING_SPLINE;
  compute(&cfg, &b, ref, pref);
  cfg.method = TFMM_METHOD_DIRECT;
  cfg.device = TFMM_DEVICE_CPU;
  compute(&cfg, &b, cpu, pcpu);
  const int shapes[][4] = {
      {0, 0, 16, 0}, {32, 1, 4, 1}, {128, 4, 8, 2}, {64, 2, 1, 4}};
  for (int k = 0; k < 4; k++) {
    tfmm_config g =
        gpu_config(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3]);
    g.eps = eps;
    g.softening = TFMM_SOFTENING_SPLINE;
    compute(&g, &b, acc, pot);
    char what[160];
    snprintf(what, sizeof what, "spline n %zu eps %g seed %llu shape %d", n,
             eps, (unsigned long long)seed, k);
    const double ea = test_rel_l2(acc, ref, 3 * n),
                 ep = test_rel_l2(pot, pref, n),
                 ec = test_rel_l2(acc, cpu, 3 * n),
                 ecp = test_rel_l2(pot, pcpu, n),
                 drift = test_momentum_drift(b.mass, acc, n);
    cr_log_info("%s: vs reference %.3g (potential %.3g), vs cpu %.3g (%.3g), "
                "momentum %.3g",
                what, ea, ep, ec, ecp, drift);
    cr_assert_lt(ea, 1e-5, "%s: acceleration error %.3g", what, ea);
    cr_assert_lt(ep, 1e-5, "%s: potential error %.3g", what, ep);
    cr_assert_lt(ec, 1e-5, "%s: acceleration vs cpu %.3g", what, ec);
    cr_assert_lt(ecp, 1e-5, "%s: potential vs cpu %.3g", what, ecp);
    cr_assert_lt(drift, 1e-5, "%s: momentum drift %.3g", what, drift);
  }
  free(ref), free(pref), free(cpu), free(pcpu), free(acc), free(pot);
  test_bodies_free(&b);
}

/* eps chosen so that many pairs fall inside h = 2.8 eps: about 20
 * neighbours per body for uniform bodies at N = 4097. */
Test(direct_gpu, spline_uniform) {
  require_gpu();
  check_spline(4097, TEST_UNIFORM, 0.05);
  check_spline(129, TEST_UNIFORM, 0.2);
}
Test(direct_gpu, spline_clustered) {
  require_gpu();
  check_spline(20000, TEST_CLUSTERED, 1e-2);
  check_spline(1000, TEST_CLUSTERED, 1e-3);
}

/* The spline with eps = 0 is Newton's law: the same as Plummer's. */
Test(direct_gpu, spline_without_softening_is_newton) {
  require_gpu();
  direct_case c = direct_case_make(4097, TEST_CLUSTERED, 0);
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  cfg.softening = TFMM_SOFTENING_SPLINE;
  direct_case_check(&c, cfg, 1);
  direct_case_free(&c);
}

/* The all-pairs kernel sums in single precision: precision double on the
 * GPU is refused with a message naming the way out (the CPU). */
Test(direct_gpu, double_precision_is_refused) {
  require_gpu();
  double pos[6] = {0, 0, 0, 1, 0, 0}, mass[2] = {1, 1}, acc[6];
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  cfg.precision = TFMM_PRECISION_DOUBLE;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, 2, pos, mass, acc, NULL),
               TFMM_ERR_UNSUPPORTED);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "device cpu"), "%s",
                     tfmm_solver_message(s));
  tfmm_solver_destroy(s);
}
