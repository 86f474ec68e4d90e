/* The near field of the tree methods on the GPU (kernels/near/near_tiled.cu):
 * against the same sums over the same leaf lists in double precision
 * (near_check.h, body by body), against the CPU near field, against the
 * all-pairs reference when every pair is near (theta = 0), and inside the
 * full methods. Skips without a GPU. */
#include "direct_check.h"
#include "leaf_auto.h"
#include "near_check.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

static tfmm_config tree_config(tfmm_method m, tfmm_device d, int leaf,
                               double theta, double eps, int near_only) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  /* Calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  c.method = m;
  c.device = d;
  c.leaf_size = leaf;
  c.theta = theta;
  c.eps = eps;
  c.near_only = near_only;
  /* This suite is the hybrid schedule's near field (the GPU beside the
   * far field); the gpu schedule's is test_schedule_gpu's. */
  if (d != TFMM_DEVICE_CPU)
    c.schedule = TFMM_SCHEDULE_HYBRID;
  return c;
}

/* Runs cfg on a fresh solver, outputs poisoned first (pot may be NULL);
 * asserts success and every output written. Returns the stats. */
static tfmm_stats run(const tfmm_config *cfg, const test_bodies *b, double *acc,
                      double *pot) {
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, cfg), TFMM_OK, "%s",
               tfmm_solver_message(s));
  test_poison(acc, 3 * b->n);
  if (pot != NULL)
    test_poison(pot, b->n);
  cr_assert_eq(tfmm_solver_compute(s, b->n, b->pos, b->mass, acc, pot), TFMM_OK,
               "%s", tfmm_solver_message(s));
  cr_assert_eq(test_first_nonfinite(acc, 3 * b->n), 3 * b->n,
               "acceleration of body %zu not written",
               test_first_nonfinite(acc, 3 * b->n) / 3);
  if (pot != NULL)
    cr_assert_eq(test_first_nonfinite(pot, b->n), b->n,
                 "potential of body %zu not written",
                 test_first_nonfinite(pot, b->n));
  tfmm_stats st = *tfmm_solver_stats(s);
  tfmm_solver_destroy(s);
  return st;
}

static void log_diff(const char *label, const char *what, const near_diff *d) {
  cr_log_info("%s %s: p99 %.3g max %.3g (bound ratio %.3g), potential p99 "
              "%.3g (%.3g)",
              label, what, d->acc_p99, d->acc_max, d->acc_ratio, d->pot_p99,
              d->pot_ratio);
}

/* ---- The near field alone: GPU, CPU and the list sums -------------------- */

/* The softening and precision of a case (Plummer, single: the default). */
typedef struct pair_kind {
  tfmm_softening softening;
  tfmm_precision precision;
} pair_kind;

static const pair_kind PLUMMER_SINGLE = {TFMM_SOFTENING_PLUMMER,
                                         TFMM_PRECISION_SINGLE};

/* The 99th percentiles asked of kind k (near_check.h): in double those of
 * single scaled by the roundoff; the single-precision spline 1e-5, as its
 * polynomials cancel towards the edge of the support (the GPU's
 * approximate square root and reciprocal, 2 ulp, then differ from the
 * CPU's by up to 50 ulp of the pair there). */
static double p99_truth(pair_kind k) {
  return k.precision == TFMM_PRECISION_DOUBLE   ? NEAR_P99_TRUTH_F64
         : k.softening == TFMM_SOFTENING_SPLINE ? 1e-5
                                                : NEAR_P99_TRUTH;
}

static double p99_between(pair_kind k) {
  return k.precision == TFMM_PRECISION_DOUBLE   ? NEAR_P99_BETWEEN_F64
         : k.softening == TFMM_SOFTENING_SPLINE ? 1e-5
                                                : NEAR_P99_BETWEEN;
}

/* near_only = 1, one configuration on both devices: each near field within
 * its bound of the list sums, and the two within twice the bound of each
 * other and 1e-6 relative at the 99th percentile (near_check.h), of the
 * kind's softening and precision. With `coincident`, every fifth body is
 * moved onto the one before it (eps > 0 only). */
static void check_near_kind(tfmm_method m, int plummer, size_t n, int leaf,
                            double theta, double eps, uint64_t seed,
                            pair_kind kind, int coincident) {
  test_bodies b = near_bodies_make(n, plummer, seed);
  if (coincident)
    test_bodies_stack(&b, 5);
  double *ag = malloc(3 * n * 8), *pg = malloc(n * 8);
  double *ac = malloc(3 * n * 8), *pc = malloc(n * 8);
  cr_assert(ag && pg && ac && pc);
  tfmm_config cpu = tree_config(m, TFMM_DEVICE_CPU, leaf, theta, eps, 1);
  cpu.G = eps > 0 ? 0.5 : 1; /* G applied on the GPU's path too */
  cpu.softening = kind.softening;
  cpu.precision = kind.precision;
  tfmm_config gpu = cpu;
  gpu.device = TFMM_DEVICE_GPU;
  char what[240];
  snprintf(what, sizeof what,
           "%s %s n %zu leaf %d theta %g eps %g %s %s%s seed %llu",
           tfmm_method_name(m), plummer ? "plummer" : "uniform", n, leaf, theta,
           eps, tfmm_softening_name(kind.softening),
           tfmm_precision_name(kind.precision), coincident ? " coincident" : "",
           (unsigned long long)seed);
  near_truth nt = near_truth_make(&b, &cpu);
  tfmm_stats sc = run(&cpu, &b, ac, pc), sg = run(&gpu, &b, ag, pg);
  cr_assert_eq(sg.near_device, TFMM_DEVICE_GPU, "%s", what);
  cr_assert_eq(sc.near_device, TFMM_DEVICE_CPU, "%s", what);
  cr_assert_eq(sg.interactions, nt.interactions, "%s: not the same lists",
               what);
  cr_assert_eq(sc.interactions, nt.interactions, "%s", what);
  cr_assert_eq(sg.tree_leaves, nt.leaves, "%s", what);
  near_diff dg =
      near_diff_of(n, ag, pg, nt.acc, nt.pot, nt.bound_acc, nt.bound_pot, 1);
  near_diff dc =
      near_diff_of(n, ac, pc, nt.acc, nt.pot, nt.bound_acc, nt.bound_pot, 1);
  near_diff dgc =
      near_diff_of(n, ag, pg, ac, pc, nt.bound_acc, nt.bound_pot, 2);
  log_diff("gpu vs sums", what, &dg);
  log_diff("cpu vs sums", what, &dc);
  log_diff("gpu vs cpu ", what, &dgc);
  near_diff_assert(&dg, p99_truth(kind), what);
  near_diff_assert(&dc, p99_truth(kind), what);
  near_diff_assert(&dgc, p99_between(kind), what);
  near_truth_free(&nt);
  free(ag), free(pg), free(ac), free(pc);
  test_bodies_free(&b);
}

static void check_near(tfmm_method m, int plummer, size_t n, int leaf,
                       double theta, double eps, uint64_t seed) {
  check_near_kind(m, plummer, n, leaf, theta, eps, seed, PLUMMER_SINGLE, 0);
}

/* Leaf sizes from one body to leaves much larger than the 64-body work
 * item; N drawn in [5000, 20000]. Leaf size 1 at theta 0.5 is the
 * degenerate case of lists holding only the leaf itself (a one-body cell
 * has radius 0 and is accepted at any theta > 0): the near field is zero;
 * it is also run at theta = 0, where its lists hold every leaf. */
static void check_near_sizes(tfmm_method m, int plummer) {
  const int leaves[] = {1, 7, 16, 64, 200, 1000};
  const double eps[] = {0, plummer ? 1e-2 : 1e-3};
  for (size_t k = 0; k < sizeof leaves / sizeof *leaves; k++)
    for (int e = 0; e < 2; e++) {
      uint64_t seed = test_fresh_seed();
      check_near(m, plummer, 5000 + (size_t)(seed % 15001), leaves[k], 0.5,
                 eps[e], seed);
    }
  uint64_t seed = test_fresh_seed();
  check_near(m, plummer, 2000 + (size_t)(seed % 1001), 1, 0, eps[1], seed);
}

Test(near_gpu, fmm_plummer_matches_cpu, .timeout = 600) {
  test_require_gpu();
  check_near_sizes(TFMM_METHOD_FMM, 1);
}
Test(near_gpu, fmm_uniform_matches_cpu, .timeout = 600) {
  test_require_gpu();
  check_near_sizes(TFMM_METHOD_FMM, 0);
}
Test(near_gpu, bh_plummer_matches_cpu, .timeout = 600) {
  test_require_gpu();
  check_near_sizes(TFMM_METHOD_BH, 1);
}
Test(near_gpu, bh_uniform_matches_cpu, .timeout = 600) {
  test_require_gpu();
  check_near_sizes(TFMM_METHOD_BH, 0);
}

/* ---- The spline kernel and double precision ------------------------------ */

/* A Plummer sphere (eps = 1e-2: h = 0.028, inside which the core's
 * neighbours fall) and uniform bodies (eps = 2e-2: h = 0.056, about the
 * spacing of 10^4 bodies), leaves from a few bodies to larger than the
 * work item; N in [5000, 20000]. */
static void check_kind_sizes(pair_kind kind) {
  const int leaves[] = {7, 64, 1000};
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++)
    for (size_t k = 0; k < sizeof leaves / sizeof *leaves; k++)
      for (int plummer = 0; plummer <= 1; plummer++) {
        uint64_t seed = test_fresh_seed();
        check_near_kind((tfmm_method)m, plummer, 5000 + (size_t)(seed % 15001),
                        leaves[k], 0.5, plummer ? 1e-2 : 2e-2, seed, kind, 0);
      }
}

Test(near_gpu, spline_matches_cpu, .timeout = 600) {
  test_require_gpu();
  check_kind_sizes((pair_kind){TFMM_SOFTENING_SPLINE, TFMM_PRECISION_SINGLE});
}
Test(near_gpu, double_plummer_matches_cpu, .timeout = 600) {
  test_require_gpu();
  check_kind_sizes((pair_kind){TFMM_SOFTENING_PLUMMER, TFMM_PRECISION_DOUBLE});
  uint64_t seed = test_fresh_seed(); /* and unsoftened */
  check_near_kind(TFMM_METHOD_FMM, 1, 20000, 64, 0.5, 0, seed,
                  (pair_kind){TFMM_SOFTENING_PLUMMER, TFMM_PRECISION_DOUBLE},
                  0);
}
Test(near_gpu, double_spline_matches_cpu, .timeout = 600) {
  test_require_gpu();
  check_kind_sizes((pair_kind){TFMM_SOFTENING_SPLINE, TFMM_PRECISION_DOUBLE});
}

/* Bodies at one point (every fifth on the one before): with eps > 0 their
 * pair is finite, zero pull and the potential's depth, in every kernel
 * and precision; the self pair is still skipped. */
Test(near_gpu, coincident_bodies_softened, .timeout = 600) {
  test_require_gpu();
  for (int sp = 0; sp <= 1; sp++)
    for (int dbl = 0; dbl <= 1; dbl++) {
      const pair_kind kind = {
          sp ? TFMM_SOFTENING_SPLINE : TFMM_SOFTENING_PLUMMER,
          dbl ? TFMM_PRECISION_DOUBLE : TFMM_PRECISION_SINGLE};
      for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
        uint64_t seed = test_fresh_seed();
        check_near_kind((tfmm_method)m, (int)(seed % 2), 8000,
                        m == TFMM_METHOD_FMM ? 16 : 64, 0.5, 1e-2, seed, kind,
                        1);
      }
    }
}

/* The whole method at theta = 0 (every pair near) with the kind's
 * softening and precision against the library's reference with the same
 * softening, in double: body by body within near_check.h's bound. */
static void check_theta0_kind(pair_kind kind, test_layout layout, double eps) {
  const size_t sizes[] = {31, 1000, 4097};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    const uint64_t seed = test_fresh_seed();
    const size_t n = sizes[k];
    test_bodies b = test_bodies_make(n, layout, seed);
    double *ref = malloc(3 * n * 8), *pref = malloc(n * 8);
    double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
    tfmm_config cfg;
    tfmm_config_defaults(&cfg);
    /* Calls compared bit for bit: the planner off (it may move between
     * calls, planner.h). */
    cfg.measure = TFMM_MEASURE_OFF;
    cfg.method = TFMM_METHOD_REFERENCE;
    cfg.eps = eps;
    cfg.softening = kind.softening;
    tfmm_solver *s = NULL;
    cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
    cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, ref, pref), TFMM_OK,
                 "%s", tfmm_solver_message(s));
    tfmm_solver_destroy(s);
    for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
      const int leaf = (int)(seed % 3) * 30 + 7 + m;
      cfg = tree_config((tfmm_method)m, TFMM_DEVICE_GPU, leaf, 0, eps, 0);
      cfg.softening = kind.softening;
      cfg.precision = kind.precision;
      char what[200];
      snprintf(what, sizeof what, "%s n %zu leaf %d eps %g %s %s seed %llu",
               tfmm_method_name((tfmm_method)m), n, leaf, eps,
               tfmm_softening_name(kind.softening),
               tfmm_precision_name(kind.precision), (unsigned long long)seed);
      near_truth nt = near_truth_make(&b, &cfg);
      tfmm_stats st = run(&cfg, &b, acc, pot);
      cr_assert_eq(st.near_device, TFMM_DEVICE_GPU, "%s", what);
      near_diff d =
          near_diff_of(n, acc, pot, ref, pref, nt.bound_acc, nt.bound_pot, 1);
      log_diff("theta 0 vs reference", what, &d);
      near_diff_assert(&d, n >= 1000 ? p99_truth(kind) : 1e-4, what);
      near_truth_free(&nt);
    }
    free(ref), free(pref), free(acc), free(pot);
    test_bodies_free(&b);
  }
}

Test(near_gpu, theta0_spline_and_double, .timeout = 600) {
  test_require_gpu();
  const pair_kind kinds[] = {{TFMM_SOFTENING_SPLINE, TFMM_PRECISION_SINGLE},
                             {TFMM_SOFTENING_SPLINE, TFMM_PRECISION_DOUBLE},
                             {TFMM_SOFTENING_PLUMMER, TFMM_PRECISION_DOUBLE}};
  for (int k = 0; k < 3; k++) {
    check_theta0_kind(kinds[k], TEST_CLUSTERED, 1e-2);
    check_theta0_kind(kinds[k], TEST_UNIFORM, 5e-2);
  }
}

/* ---- theta = 0: every pair near, against the reference ------------------- */

/* The whole method (not near_only) at theta = 0 on the GPU is the
 * all-pairs sum: held to the all-pairs GPU kernel's bounds (direct_check:
 * relative 2-norm 1e-5, momentum; half the cases without the potential,
 * which must then stay unwritten), and body by body to near_check.h's
 * bound, against the reference. */
static void check_theta0(test_layout layout, double eps) {
  for (size_t s = 0; s < direct_case_size_count; s++) {
    direct_case c = direct_case_make(direct_case_sizes[s], layout, eps);
    const size_t n = c.b.n;
    double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
    for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
      /* Leaves of one body make N^2 list entries: small N only. */
      const int small[] = {1, 7, 16, 64}, large[] = {64, 200};
      const size_t pick = s + (size_t)m;
      const int leaf = n <= 5000 ? small[pick % 4] : large[pick % 2];
      tfmm_config cfg =
          tree_config((tfmm_method)m, TFMM_DEVICE_GPU, leaf, 0, eps, 0);
      char what[200];
      snprintf(what, sizeof what, "%s n %zu leaf %d eps %g seed %llu",
               tfmm_method_name((tfmm_method)m), n, leaf, eps,
               (unsigned long long)c.seed);
      direct_case_check(&c, cfg, (int)(pick % 2));
      near_truth nt = near_truth_make(&c.b, &cfg);
      cr_assert_eq(nt.interactions, (double)n * (double)(n - 1), "%s", what);
      tfmm_stats st = run(&cfg, &c.b, acc, pot);
      cr_assert_eq(st.near_device, TFMM_DEVICE_GPU);
      cr_assert_eq(st.interactions, nt.interactions, "%s", what);
      near_diff d = near_diff_of(n, acc, pot, c.acc_ref, c.pot_ref,
                                 nt.bound_acc, nt.bound_pot, 1);
      log_diff("theta 0 vs reference", what, &d);
      /* Below 1000 bodies the 99th percentile is the worst body, whose sum
       * may cancel: the bound holds it. */
      near_diff_assert(&d, n >= 1000 ? 1e-6 : 1e-4, what);
      near_truth_free(&nt);
    }
    free(acc), free(pot);
    direct_case_free(&c);
  }
}

Test(near_gpu, theta0_uniform_no_softening, .timeout = 600) {
  test_require_gpu();
  check_theta0(TEST_UNIFORM, 0);
}
Test(near_gpu, theta0_uniform_softened, .timeout = 600) {
  test_require_gpu();
  check_theta0(TEST_UNIFORM, 0.05);
}
Test(near_gpu, theta0_clustered_no_softening, .timeout = 600) {
  test_require_gpu();
  check_theta0(TEST_CLUSTERED, 0);
}
Test(near_gpu, theta0_clustered_softened, .timeout = 600) {
  test_require_gpu();
  check_theta0(TEST_CLUSTERED, 1e-3);
}

/* ---- The full methods ---------------------------------------------------- */

/* fmm and bh at theta 0.5 with the near field on the GPU and on the CPU:
 * the far field is the same double-precision CPU code (same bits), so the
 * results differ by the near fields' difference alone: 1e-5 relative at
 * the 99th percentile, and body by body within twice the near field's
 * bound (plus the rounding of far + near in double). */
static void check_full(tfmm_method m, int plummer, int leaf, double eps,
                       int with_potential) {
  uint64_t seed = test_fresh_seed();
  size_t n = 5000 + (size_t)(seed % 15001);
  test_bodies b = near_bodies_make(n, plummer, seed);
  double *ag = malloc(3 * n * 8), *pg = malloc(n * 8);
  double *ac = malloc(3 * n * 8), *pc = malloc(n * 8);
  tfmm_config cpu = tree_config(m, TFMM_DEVICE_CPU, leaf, 0.5, eps, 0);
  tfmm_config gpu = cpu;
  gpu.device = TFMM_DEVICE_GPU;
  char what[200];
  snprintf(what, sizeof what, "full %s %s n %zu leaf %d eps %g seed %llu%s",
           tfmm_method_name(m), plummer ? "plummer" : "uniform", n, leaf, eps,
           (unsigned long long)seed, with_potential ? "" : " (no potential)");
  tfmm_stats sc = run(&cpu, &b, ac, pc);
  tfmm_stats sg = run(&gpu, &b, ag, with_potential ? pg : NULL);
  cr_assert_eq(sg.near_device, TFMM_DEVICE_GPU, "%s", what);
  cr_assert_eq(sg.interactions, sc.interactions, "%s", what);
  cr_assert_eq(sg.m2l, sc.m2l, "%s: not the same far field", what);
  cr_assert_eq(sg.m2p, sc.m2p, "%s", what);
  near_truth nt = near_truth_make(&b, &cpu);
  /* Twice the near bound, plus 1e-12 of the whole for far + near. */
  double *ba = malloc(n * 8), *bp = malloc(n * 8);
  for (size_t i = 0; i < n; i++) {
    const double *a = ac + 3 * i;
    ba[i] = 2 * nt.bound_acc[i] +
            1e-12 * sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    bp[i] = 2 * nt.bound_pot[i] + 1e-12 * fabs(pc[i]);
  }
  near_diff d =
      near_diff_of(n, ag, with_potential ? pg : NULL, ac, pc, ba, bp, 1);
  log_diff("gpu vs cpu", what, &d);
  near_diff_assert(&d, 1e-5, what);
  near_truth_free(&nt);
  free(ba), free(bp), free(ag), free(pg), free(ac), free(pc);
  test_bodies_free(&b);
}

Test(near_gpu, full_methods_match_cpu_near_field, .timeout = 600) {
  test_require_gpu();
  const int leaves[] = {16, 64, 512};
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++)
    for (int k = 0; k < 3; k++) {
      check_full((tfmm_method)m, 1, leaves[k], 0, 1);
      check_full((tfmm_method)m, 0, leaves[k], 1e-3, 1);
    }
}

/* pot = NULL takes the kernel without the potential: the accelerations
 * are still right, near field alone and whole. */
Test(near_gpu, without_the_potential, .timeout = 600) {
  test_require_gpu();
  uint64_t seed = test_fresh_seed();
  const size_t n = 15000;
  test_bodies b = near_bodies_make(n, 1, seed);
  double *acc = malloc(3 * n * 8);
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
    tfmm_config cfg =
        tree_config((tfmm_method)m, TFMM_DEVICE_GPU, 100, 0.5, 1e-3, 1);
    char what[160];
    snprintf(what, sizeof what, "%s near only, no potential, seed %llu",
             tfmm_method_name((tfmm_method)m), (unsigned long long)seed);
    near_truth nt = near_truth_make(&b, &cfg);
    run(&cfg, &b, acc, NULL);
    near_diff d = near_diff_of(n, acc, NULL, nt.acc, nt.pot, nt.bound_acc,
                               nt.bound_pot, 1);
    log_diff("gpu vs sums", what, &d);
    near_diff_assert(&d, NEAR_P99_TRUTH, what);
    near_truth_free(&nt);
    check_full((tfmm_method)m, m == TFMM_METHOD_FMM, 64, 0, 0);
  }
  free(acc);
  test_bodies_free(&b);
}

/* ---- One solver, many evaluations ---------------------------------------- */

/* No atomics: the same input gives the same bits, evaluation after
 * evaluation and solver after solver; with leaves of 1000 bodies, lists
 * are cut into several items whose partial sums are added afterwards. */
Test(near_gpu, same_bits_every_evaluation, .timeout = 600) {
  test_require_gpu();
  test_bodies b = test_bodies_make(50000, TEST_CLUSTERED, test_fresh_seed());
  const size_t n = b.n;
  double *a1 = malloc(3 * n * 8), *a2 = malloc(3 * n * 8),
         *a3 = malloc(3 * n * 8);
  double *p1 = malloc(n * 8), *p2 = malloc(n * 8), *p3 = malloc(n * 8);
  const int leaves[] = {64, 1000};
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++)
    for (int k = 0; k < 2; k++)
      for (int near_only = 0; near_only <= 1; near_only++) {
        tfmm_config cfg = tree_config((tfmm_method)m, TFMM_DEVICE_GPU,
                                      leaves[k], 0.6, 1e-4, near_only);
        tfmm_solver *s = NULL;
        cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
        test_poison(a1, 3 * n);
        test_poison(a2, 3 * n);
        cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, a1, p1), TFMM_OK);
        cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, a2, p2), TFMM_OK);
        tfmm_solver_destroy(s);
        run(&cfg, &b, a3, p3);
        const char *name = tfmm_method_name((tfmm_method)m);
        cr_assert_eq(memcmp(a1, a2, 3 * n * 8), 0,
                     "%s leaf %d near_only %d: accelerations differ", name,
                     leaves[k], near_only);
        cr_assert_eq(memcmp(p1, p2, n * 8), 0, "%s: potentials differ", name);
        cr_assert_eq(memcmp(a1, a3, 3 * n * 8), 0,
                     "%s leaf %d near_only %d: a new solver differs", name,
                     leaves[k], near_only);
        cr_assert_eq(memcmp(p1, p3, n * 8), 0, "%s: a new solver differs",
                     name);
      }
  free(a1), free(a2), free(a3), free(p1), free(p2), free(p3);
  test_bodies_free(&b);
}

/* One GPU solver over sizes up and down (leaf counts, list lengths and
 * work items all change; buffers grow, then are reused larger than
 * needed), checked each time against the list sums and a CPU solver. */
Test(near_gpu, reuses_buffers_across_sizes, .timeout = 600) {
  test_require_gpu();
  const size_t sizes[] = {1000, 50000, 3000, 120, 20000};
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
    tfmm_config cfg =
        tree_config((tfmm_method)m, TFMM_DEVICE_CPU, 64, 0.5, 1e-3, 1);
    tfmm_solver *cpu = NULL, *gpu = NULL;
    cr_assert_eq(tfmm_solver_create(&cpu, &cfg), TFMM_OK);
    cfg.device = TFMM_DEVICE_GPU;
    cr_assert_eq(tfmm_solver_create(&gpu, &cfg), TFMM_OK);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
      const uint64_t seed = test_fresh_seed();
      const size_t n = sizes[k];
      test_bodies b = near_bodies_make(n, (int)(k % 2), seed);
      double *ag = malloc(3 * n * 8), *pg = malloc(n * 8);
      double *ac = malloc(3 * n * 8), *pc = malloc(n * 8);
      test_poison(ag, 3 * n), test_poison(pg, n);
      test_poison(ac, 3 * n), test_poison(pc, n);
      cr_assert_eq(tfmm_solver_compute(gpu, n, b.pos, b.mass, ag, pg), TFMM_OK,
                   "%s", tfmm_solver_message(gpu));
      cr_assert_eq(tfmm_solver_compute(cpu, n, b.pos, b.mass, ac, pc), TFMM_OK,
                   "%s", tfmm_solver_message(cpu));
      cr_assert_eq(tfmm_solver_stats(gpu)->near_device, TFMM_DEVICE_GPU);
      char what[160];
      snprintf(what, sizeof what, "%s evaluation %zu (n %zu) seed %llu",
               tfmm_method_name((tfmm_method)m), k, n,
               (unsigned long long)seed);
      near_truth nt = near_truth_make(&b, &cfg);
      near_diff dg = near_diff_of(n, ag, pg, nt.acc, nt.pot, nt.bound_acc,
                                  nt.bound_pot, 1);
      near_diff dgc =
          near_diff_of(n, ag, pg, ac, pc, nt.bound_acc, nt.bound_pot, 2);
      log_diff("gpu vs sums", what, &dg);
      /* At 120 bodies the 99th percentile is the worst body. */
      near_diff_assert(&dg, n >= 1000 ? NEAR_P99_TRUTH : 1e-4, what);
      near_diff_assert(&dgc, n >= 1000 ? NEAR_P99_BETWEEN : 1e-4, what);
      near_truth_free(&nt);
      free(ag), free(pg), free(ac), free(pc);
      test_bodies_free(&b);
    }
    tfmm_solver_destroy(cpu);
    tfmm_solver_destroy(gpu);
  }
}

/* Outputs full of NaN before the call are all overwritten: the results
 * equal those written over zeros. */
Test(near_gpu, poisoned_outputs_are_overwritten) {
  test_require_gpu();
  test_bodies b = test_bodies_make(20000, TEST_CLUSTERED, test_fresh_seed());
  const size_t n = b.n;
  double *a1 = malloc(3 * n * 8), *a2 = calloc(3 * n, 8);
  double *p1 = malloc(n * 8), *p2 = calloc(n, 8);
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++)
    for (int near_only = 0; near_only <= 1; near_only++) {
      tfmm_config cfg = tree_config((tfmm_method)m, TFMM_DEVICE_GPU, 300, 0.5,
                                    1e-3, near_only);
      tfmm_solver *s = NULL;
      cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
      test_poison(a1, 3 * n);
      test_poison(p1, n);
      cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, a1, p1), TFMM_OK);
      cr_assert_eq(test_first_nonfinite(a1, 3 * n), 3 * n);
      cr_assert_eq(test_first_nonfinite(p1, n), n);
      memset(a2, 0, 3 * n * 8);
      memset(p2, 0, n * 8);
      cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, a2, p2), TFMM_OK);
      cr_assert_eq(memcmp(a1, a2, 3 * n * 8), 0);
      cr_assert_eq(memcmp(p1, p2, n * 8), 0);
      tfmm_solver_destroy(s);
    }
  free(a1), free(a2), free(p1), free(p2);
  test_bodies_free(&b);
}

/* ---- Statistics ---------------------------------------------------------- */

/* The near field on the GPU runs during the far field: both timed, their
 * overlap within each, the rate from the kernel's time. */
static void check_stats(const tfmm_stats *st, int leaf, int near_only,
                        const char *what) {
  cr_assert_eq(st->device, TFMM_DEVICE_GPU, "%s", what);
  cr_assert_eq(st->near_device, TFMM_DEVICE_GPU, "%s", what);
  cr_assert_eq(st->leaf_size, leaf, "%s", what);
  cr_assert_gt(st->interactions, 0, "%s", what);
  cr_assert_gt(st->near_time, 0, "%s", what);
  cr_assert_gt(st->near_kernel_time, 0, "%s", what);
  cr_assert_leq(st->near_kernel_time, st->near_time, "%s", what);
  cr_assert_float_eq(st->time[TFMM_PHASE_NEAR], st->near_kernel_time, 1e-12,
                     "%s", what);
  cr_assert_float_eq(st->time[TFMM_PHASE_UPLOAD] + st->time[TFMM_PHASE_NEAR] +
                         st->time[TFMM_PHASE_DOWNLOAD],
                     st->near_time, 1e-9, "%s", what);
  if (!near_only)
    cr_assert_gt(st->far_time, 0, "%s", what);
  cr_assert_geq(st->far_time, 0, "%s", what);
  cr_assert_geq(st->overlap, 0, "%s", what);
  const double shorter =
      st->near_time < st->far_time ? st->near_time : st->far_time;
  cr_assert_leq(st->overlap, shorter + 1e-9, "%s: overlap %g of %g and %g",
                what, st->overlap, st->near_time, st->far_time);
  cr_assert_float_eq(st->near_rate, st->interactions / st->near_kernel_time,
                     1e-12 * st->near_rate, "%s", what);
  cr_assert_neq(st->device_name[0], '\0', "%s", what);
}

Test(near_gpu, stats_time_the_overlap) {
  test_require_gpu();
  test_bodies b = near_bodies_make(30000, 1, test_fresh_seed());
  double *acc = malloc(3 * b.n * 8), *pot = malloc(b.n * 8);
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++)
    for (int near_only = 0; near_only <= 1; near_only++) {
      tfmm_config cfg =
          tree_config((tfmm_method)m, TFMM_DEVICE_GPU, 96, 0.5, 0, near_only);
      tfmm_stats st = run(&cfg, &b, acc, pot);
      char what[80];
      snprintf(what, sizeof what, "%s near_only %d",
               tfmm_method_name((tfmm_method)m), near_only);
      cr_log_info("%s: near %.3g s (kernel %.3g), far %.3g s, overlap %.3g",
                  what, st.near_time, st.near_kernel_time, st.far_time,
                  st.overlap);
      check_stats(&st, 96, near_only, what);
    }
  free(acc), free(pot);
  test_bodies_free(&b);
}

/* leaf_size = TFMM_LEAF_AUTO with the near field on the GPU: starts at
 * TFMM_LEAF_AUTO_GPU, moves by the controller's rule from the measured
 * times, and keeps the FMM's accuracy (tree_solver's Plummer bound at
 * theta 0.5, p = 4: 3e-2 at the 99th percentile). */
Test(near_gpu, auto_leaf_size_starts_at_the_gpu_default, .timeout = 600) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  test_bodies b = near_bodies_make(20000, 1, seed);
  const size_t n = b.n;
  double *ref = malloc(3 * n * 8), *pref = malloc(n * 8);
  double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
  cr_assert_eq(test_reference(&b, 0, ref, pref), 0);
  tfmm_config cfg =
      tree_config(TFMM_METHOD_FMM, TFMM_DEVICE_GPU, TFMM_LEAF_AUTO, 0.5, 0, 0);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  int want = TFMM_LEAF_AUTO_GPU;
  for (int it = 0; it < 4; it++) {
    test_poison(acc, 3 * n);
    test_poison(pot, n);
    cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, pot), TFMM_OK,
                 "%s", tfmm_solver_message(s));
    const tfmm_stats *st = tfmm_solver_stats(s);
    char what[80];
    snprintf(what, sizeof what, "seed %llu evaluation %d",
             (unsigned long long)seed, it);
    cr_log_info("%s: L %d, near %.3g s, far %.3g s", what, st->leaf_size,
                st->near_time, st->far_time);
    check_stats(st, want, 0, what);
    cr_assert_leq(st->leaf_max, st->leaf_size, "%s", what);
    cr_assert_eq(test_first_nonfinite(acc, 3 * n), 3 * n);
    cr_assert_eq(test_first_nonfinite(pot, n), n);
    const double p99 = near_acc_p99(n, acc, ref);
    cr_assert_lt(p99, 3e-2, "%s: p99 %.3g", what, p99);
    cr_assert_lt(test_rel_l2(pot, pref, n), 1e-3, "%s", what);
    want = tfmm_leaf_auto_next(st->leaf_size, st->near_time, st->far_time);
  }
  tfmm_solver_destroy(s);
  free(ref), free(pref), free(acc), free(pot);
  test_bodies_free(&b);
}
