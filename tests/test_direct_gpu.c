/* The GPU all-pairs kernel against the double-precision reference, over
 * sizes, layouts, softening and every tunable. Skips without a GPU. */
#include "direct_check.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  test_require_gpu();
  check_sizes(TEST_UNIFORM, 0);
}
Test(direct_gpu, uniform_softened) {
  test_require_gpu();
  check_sizes(TEST_UNIFORM, 0.05);
}
Test(direct_gpu, clustered_no_softening) {
  test_require_gpu();
  check_sizes(TEST_CLUSTERED, 0);
}
Test(direct_gpu, clustered_softened) {
  test_require_gpu();
  check_sizes(TEST_CLUSTERED, 1e-3);
}

/* Every tile size around its edges (N = p - 1, p, p + 1, and many tiles),
 * with q, unroll and bodies per thread varied over every shape the kernel
 * accepts (tfmm_direct_shape_ok's rules; others must be refused). */
Test(direct_gpu, every_tunable) {
  test_require_gpu();
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
            /* Single precision: p^2 q bytes of tiles, within the GPU's. */
            if (threads > most || (long)p * p * q > test_gpu_max_shared())
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
  test_require_gpu();
  const size_t sizes[] = {3, 4096, 70000, 150000};
  for (size_t k = 0; k < 4; k++) {
    direct_case c = direct_case_make(sizes[k], TEST_UNIFORM, 1e-2);
    direct_case_check(&c, gpu_config(0, 0, 0, 0), 1);
    direct_case_free(&c);
  }
}

/* No atomics: the same input gives the same bits. */
Test(direct_gpu, deterministic) {
  test_require_gpu();
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
  test_require_gpu();
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
  test_require_gpu();
  double pos[9] = {0, 0, 0, 1, 1, 1, 1 + 1e-12, 1, 1}, mass[3] = {1, 1, 1};
  double acc[9];
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  /* Distinct in double, one point in float: summed in double (issue 29),
   * where bodies 1 and 2 pull each other with 1e24. */
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, NULL), TFMM_OK, "%s",
               tfmm_solver_message(s));
  cr_assert_not_null(strstr(tfmm_solver_stats(s)->plan, "in double"), "%s",
                     tfmm_solver_stats(s)->plan);
  cr_assert(fabs(acc[3] / 1e24 - 1) < 1e-3, "acc[3] %g", acc[3]);
  tfmm_solver_destroy(s);
}

/* Raw double positions: the rounding to float is bounded body by body. */
Test(direct_gpu, raw_positions_within_rounding_bound) {
  test_require_gpu();
  direct_case_check_raw(3000, TEST_CLUSTERED, 0, gpu_config(0, 0, 0, 0));
  direct_case_check_raw(3000, TEST_UNIFORM, 1e-4, gpu_config(0, 0, 0, 0));
}

/* ---- The cubic spline ---------------------------------------------------- */

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
  test_bodies_stack(&b, 7);
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
  test_require_gpu();
  check_spline(4097, TEST_UNIFORM, 0.05);
  check_spline(129, TEST_UNIFORM, 0.2);
}
Test(direct_gpu, spline_clustered) {
  test_require_gpu();
  check_spline(20000, TEST_CLUSTERED, 1e-2);
  check_spline(1000, TEST_CLUSTERED, 1e-3);
}

/* The spline with eps = 0 is Newton's law: the same as Plummer's. */
Test(direct_gpu, spline_without_softening_is_newton) {
  test_require_gpu();
  direct_case c = direct_case_make(4097, TEST_CLUSTERED, 0);
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  cfg.softening = TFMM_SOFTENING_SPLINE;
  direct_case_check(&c, cfg, 1);
  direct_case_free(&c);
}

/* ---- Double precision ------------------------------------------------ */

/* Runs cfg on the bodies (outputs poisoned first) and returns the status,
 * the message in msg. */
static tfmm_status try_compute(const tfmm_config *cfg, const test_bodies *b,
                               double *acc, double *pot, tfmm_stats *stats,
                               char *msg, size_t msg_size) {
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, cfg), TFMM_OK);
  test_poison(acc, 3 * b->n);
  if (pot != NULL)
    test_poison(pot, b->n);
  tfmm_status st = tfmm_solver_compute(s, b->n, b->pos, b->mass, acc, pot);
  snprintf(msg, msg_size, "%s", tfmm_solver_message(s));
  if (stats != NULL)
    *stats = *tfmm_solver_stats(s);
  tfmm_solver_destroy(s);
  return st;
}

static tfmm_config gpu_double(int p, int q, int unroll, int r, double eps,
                              tfmm_softening softening) {
  tfmm_config cfg = gpu_config(p, q, unroll, r);
  cfg.precision = TFMM_PRECISION_DOUBLE;
  cfg.eps = eps;
  cfg.softening = softening;
  return cfg;
}

/* The GPU's double-precision all pairs over launch shapes against the
 * reference method (compensated double sums) with the same softening:
 * relative 2-norm of accelerations and potentials, and momentum, below
 * 1e-12, the CPU double path's bound (test_direct_cpu.c). With eps > 0
 * every seventh body sits on the one before it: a pair at r = 0, inside
 * the spline's support. Shapes: automatic; one warp a row with 16 rows
 * (the 512 threads double allows); r = 2 with unroll 16 asked (double
 * runs 4 and says so); a 256 tile, whose two buffers a warp take 16 KB. */
static void check_double(size_t n, test_layout layout, double eps,
                         tfmm_softening softening) {
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(n, layout, seed);
  if (eps > 0)
    test_bodies_stack(&b, 7);
  double *ref = malloc(3 * n * 8), *pref = malloc(n * 8);
  double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
  cr_assert(ref && pref && acc && pot);
  cr_assert_eq(test_reference_softened(&b, eps, softening, ref, pref), 0);
  const int shapes[][4] = {{0, 0, 16, 0},
                           {32, 16, 4, 1},
                           {64, 4, 16, 2},
                           {128, 2, 4, 2},
                           {256, 1, 1, 1}};
  for (int k = 0; k < 5; k++) {
    const tfmm_config g = gpu_double(shapes[k][0], shapes[k][1], shapes[k][2],
                                     shapes[k][3], eps, softening);
    char what[200], msg[512];
    snprintf(what, sizeof what, "double %s n %zu eps %g seed %llu shape %d",
             tfmm_softening_name(softening), n, eps, (unsigned long long)seed,
             k);
    tfmm_stats st;
    cr_assert_eq(try_compute(&g, &b, acc, pot, &st, msg, sizeof msg), TFMM_OK,
                 "%s: %s", what, msg);
    cr_assert_eq(test_first_nonfinite(acc, 3 * n), 3 * n, "%s", what);
    cr_assert_eq(test_first_nonfinite(pot, n), n, "%s", what);
    cr_assert_eq(st.device, TFMM_DEVICE_GPU, "%s", what);
    cr_assert_eq(st.gpu_unroll, 4, "%s: unroll used %d", what, st.gpu_unroll);
    if (shapes[k][0] > 0) {
      cr_assert_eq(st.gpu_tile, shapes[k][0], "%s", what);
      cr_assert_eq(st.gpu_threads_per_body, shapes[k][1], "%s", what);
      cr_assert_eq(st.gpu_bodies_per_thread, shapes[k][3], "%s", what);
    }
    const double ea = test_rel_l2(acc, ref, 3 * n),
                 ep = test_rel_l2(pot, pref, n),
                 drift = n > 1 ? test_momentum_drift(b.mass, acc, n) : 0;
    cr_log_info("%s: acceleration %.3g, potential %.3g, momentum %.3g", what,
                ea, ep, drift);
    cr_assert_lt(ea, 1e-12, "%s: acceleration error %.3g", what, ea);
    cr_assert_lt(ep, 1e-12, "%s: potential error %.3g", what, ep);
    cr_assert_lt(drift, 1e-12, "%s: momentum drift %.3g", what, drift);
  }
  free(ref), free(pref), free(acc), free(pot);
  test_bodies_free(&b);
}

/* n = 1 (no pair at all), 31 (less than a warp), 1000 and 4097 (not
 * multiples of any tile). */
static const size_t double_sizes[] = {1, 31, 1000, 4097};

Test(direct_gpu, double_plummer) {
  test_require_gpu();
  for (size_t k = 0; k < 4; k++) {
    check_double(double_sizes[k], TEST_UNIFORM, 0.05, TFMM_SOFTENING_PLUMMER);
    check_double(double_sizes[k], TEST_CLUSTERED, 0, TFMM_SOFTENING_PLUMMER);
  }
}

/* eps such that many pairs fall inside h = 2.8 eps. */
Test(direct_gpu, double_spline) {
  test_require_gpu();
  for (size_t k = 0; k < 4; k++) {
    check_double(double_sizes[k], TEST_UNIFORM, 0.05, TFMM_SOFTENING_SPLINE);
    check_double(double_sizes[k], TEST_CLUSTERED, 1e-3, TFMM_SOFTENING_SPLINE);
  }
}

/* The automatic shape in double, where r = 2 and the block's limits
 * differ from single precision's: sizes that fill the GPU (at 512 threads
 * an SM) and sizes that don't, against the reference at 64 sampled
 * bodies; the same bits on a second run (no atomics). */
Test(direct_gpu, double_automatic_shape) {
  test_require_gpu();
  const size_t sizes[] = {3, 5000, 70000, 150000};
  for (size_t k = 0; k < 4; k++) {
    const size_t n = sizes[k], m = n < 64 ? n : 64;
    const uint64_t seed = test_fresh_seed();
    test_bodies b = test_bodies_make(n, TEST_CLUSTERED, seed);
    double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
    double *acc2 = malloc(3 * n * 8), *pot2 = malloc(n * 8);
    double ref[3 * 64], pref[64], got[3 * 64], pgot[64];
    size_t targets[64];
    cr_assert(acc && pot && acc2 && pot2);
    tfmm_config cfg = gpu_double(0, 0, 0, 0, 1e-3, TFMM_SOFTENING_PLUMMER);
    tfmm_solver *s = NULL;
    cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
    test_poison(acc, 3 * n);
    test_poison(pot, n);
    cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, pot), TFMM_OK,
                 "%s", tfmm_solver_message(s));
    const tfmm_stats *st = tfmm_solver_stats(s);
    char what[200];
    snprintf(what, sizeof what, "n %zu seed %llu p %d q %d r %d", n,
             (unsigned long long)seed, st->gpu_tile, st->gpu_threads_per_body,
             st->gpu_bodies_per_thread);
    cr_assert_lt(st->gpu_tile * st->gpu_threads_per_body, 513, "%s", what);
    cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc2, pot2), TFMM_OK);
    cr_assert_eq(memcmp(acc, acc2, 3 * n * 8), 0, "%s", what);
    cr_assert_eq(memcmp(pot, pot2, n * 8), 0, "%s", what);
    for (size_t t = 0; t < m; t++) {
      targets[t] = t * n / m;
      memcpy(got + 3 * t, acc + 3 * targets[t], 3 * sizeof(double));
      pgot[t] = pot[targets[t]];
    }
    cr_assert_eq(
        tfmm_solver_reference_at(s, n, b.pos, b.mass, m, targets, ref, pref),
        TFMM_OK);
    const double ea = test_rel_l2(got, ref, 3 * m),
                 ep = test_rel_l2(pgot, pref, m);
    cr_log_info("%s: acceleration %.3g, potential %.3g", what, ea, ep);
    cr_assert_lt(ea, 1e-12, "%s: acceleration error %.3g", what, ea);
    cr_assert_lt(ep, 1e-12, "%s: potential error %.3g", what, ep);
    tfmm_solver_destroy(s);
    free(acc), free(pot), free(acc2), free(pot2);
    test_bodies_free(&b);
  }
}

/* Shapes that single precision accepts but double cannot hold are refused
 * with a message that names double precision and the limit they break:
 * 1024 threads; 2 x 256^2 x 2 bytes of shared memory; r = 4. */
Test(direct_gpu, double_refuses_shapes_that_do_not_fit) {
  test_require_gpu();
  test_bodies b = test_bodies_make(300, TEST_UNIFORM, test_fresh_seed());
  double *acc = malloc(3 * b.n * 8);
  cr_assert(acc);
  const int shapes[][4] = {{32, 32, 4, 1}, {256, 2, 4, 1}, {64, 2, 4, 4}};
  const char *says[] = {"threads", "shared memory", "1 or 2"};
  for (int k = 0; k < 3; k++) {
    tfmm_config single =
        gpu_config(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3]);
    single.eps = 0.01;
    char msg[512];
    cr_assert_eq(try_compute(&single, &b, acc, NULL, NULL, msg, sizeof msg),
                 TFMM_OK, "shape %d in single precision: %s", k, msg);
    tfmm_config dbl = gpu_double(shapes[k][0], shapes[k][1], shapes[k][2],
                                 shapes[k][3], 0.01, TFMM_SOFTENING_PLUMMER);
    cr_assert_eq(try_compute(&dbl, &b, acc, NULL, NULL, msg, sizeof msg),
                 TFMM_ERR_INVALID_ARGUMENT, "shape %d: %s", k, msg);
    cr_assert_not_null(strstr(msg, "double"), "shape %d: %s", k, msg);
    cr_assert_not_null(strstr(msg, says[k]), "shape %d: %s", k, msg);
  }
  free(acc);
  test_bodies_free(&b);
}

/* With eps = 0, two bodies at one point are refused in double too. */
Test(direct_gpu, double_coincident_refused) {
  test_require_gpu();
  double pos[9] = {0, 0, 0, 1, 1, 1, 1, 1, 1}, mass[3] = {1, 1, 1};
  double acc[9];
  tfmm_config cfg = gpu_double(0, 0, 0, 0, 0, TFMM_SOFTENING_PLUMMER);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, NULL),
               TFMM_ERR_COINCIDENT, "%s", tfmm_solver_message(s));
  tfmm_solver_destroy(s);
}
