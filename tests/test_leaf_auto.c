/* The automatic leaf size (tfmm_config.leaf_size = TFMM_LEAF_AUTO): the
 * controller of src/leaf_auto.h against its rules (the square-root step
 * towards the balance of the near-field and far-field times, the factor-4
 * limit, the range, the dead band, non-finite times) and a model of the
 * times it balances; then a CPU solver that uses it. */
#include "leaf_auto.h"
#include "near_check.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <tilefmm.h>

Test(leaf_auto, balanced_times_keep_the_leaf_size) {
  const int leaves[] = {8, 9, 64, 100, 777, 8192};
  for (size_t k = 0; k < sizeof leaves / sizeof *leaves; k++) {
    int L = leaves[k];
    cr_assert_eq(tfmm_leaf_auto_next(L, 1.0, 1.0), L);
    cr_assert_eq(tfmm_leaf_auto_next(L, 3e-3, 3e-3), L);
    /* Within the dead band: timing noise must not move L. */
    cr_assert_eq(tfmm_leaf_auto_next(L, 1.0, 1.05), L);
    cr_assert_eq(tfmm_leaf_auto_next(L, 1.05, 1.0), L);
  }
}

/* near / far grows as L^2, so the balance is at L sqrt(far / near). */
Test(leaf_auto, square_root_rule) {
  cr_assert_eq(tfmm_leaf_auto_next(64, 4.0, 1.0), 32, "near 4x far halves L");
  cr_assert_eq(tfmm_leaf_auto_next(64, 1.0, 4.0), 128, "far 4x near doubles L");
  cr_assert_eq(tfmm_leaf_auto_next(100, 2.0, 1.0), 71); /* 100 / sqrt 2 */
  cr_assert_eq(tfmm_leaf_auto_next(100, 1.0, 2.0), 141);
  cr_assert_eq(tfmm_leaf_auto_next(64, 1.0, 1.5), 78); /* outside the band */
  cr_assert_eq(tfmm_leaf_auto_next(64, 1.5, 1.0), 52);
  /* Only the ratio counts, not the scale of the times. */
  cr_assert_eq(tfmm_leaf_auto_next(64, 4e-6, 1e-6), 32);
  cr_assert_eq(tfmm_leaf_auto_next(64, 4e3, 1e3), 32);
}

Test(leaf_auto, one_step_moves_at_most_four_times) {
  cr_assert_eq(tfmm_leaf_auto_next(64, 1.0, 16.0), 256); /* sqrt 16 = 4 */
  cr_assert_eq(tfmm_leaf_auto_next(64, 1.0, 1e6), 256);
  cr_assert_eq(tfmm_leaf_auto_next(64, 16.0, 1.0), 16);
  cr_assert_eq(tfmm_leaf_auto_next(64, 1e6, 1.0), 16);
  cr_assert_eq(tfmm_leaf_auto_next(1000, 1.0, 1e300), 4000);
  cr_assert_eq(tfmm_leaf_auto_next(1000, 1e300, 1.0), 250);
}

Test(leaf_auto, stays_within_its_range) {
  cr_assert_eq(tfmm_leaf_auto_next(10, 100.0, 1.0), TFMM_LEAF_AUTO_MIN);
  cr_assert_eq(tfmm_leaf_auto_next(TFMM_LEAF_AUTO_MIN, 100.0, 1.0),
               TFMM_LEAF_AUTO_MIN);
  cr_assert_eq(tfmm_leaf_auto_next(5000, 1.0, 100.0), TFMM_LEAF_AUTO_MAX);
  cr_assert_eq(tfmm_leaf_auto_next(TFMM_LEAF_AUTO_MAX, 1.0, 100.0),
               TFMM_LEAF_AUTO_MAX);
  cr_assert_leq(TFMM_LEAF_AUTO_MIN, TFMM_LEAF_AUTO_CPU);
  cr_assert_leq(TFMM_LEAF_AUTO_CPU, TFMM_LEAF_AUTO_MAX);
  cr_assert_leq(TFMM_LEAF_AUTO_MIN, TFMM_LEAF_AUTO_GPU);
  cr_assert_leq(TFMM_LEAF_AUTO_GPU, TFMM_LEAF_AUTO_MAX);
}

/* A failed or meaningless measurement leaves L alone. */
Test(leaf_auto, unusable_times_keep_the_leaf_size) {
  const double bad[] = {0.0, -1.0, NAN, INFINITY, -INFINITY};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    cr_assert_eq(tfmm_leaf_auto_next(64, bad[k], 1.0), 64, "near %g", bad[k]);
    cr_assert_eq(tfmm_leaf_auto_next(64, 1.0, bad[k]), 64, "far %g", bad[k]);
    cr_assert_eq(tfmm_leaf_auto_next(64, bad[k], bad[k]), 64, "both %g",
                 bad[k]);
  }
}

/* Random L and times against the rules: within the range, within a factor
 * 4 (before the clamp to the range), towards the balance, and the square
 * root rule to rounding where neither limit applies. */
Test(leaf_auto, random_steps_follow_the_rules) {
  test_rng rng = {test_fresh_seed()};
  const uint64_t seed = rng.state;
  for (int trial = 0; trial < 100000; trial++) {
    int L = TFMM_LEAF_AUTO_MIN +
            (int)(test_uniform(&rng) *
                  (TFMM_LEAF_AUTO_MAX - TFMM_LEAF_AUTO_MIN + 1));
    double near = pow(10.0, -6 + 8 * test_uniform(&rng));
    double far = pow(10.0, -6 + 8 * test_uniform(&rng));
    int next = tfmm_leaf_auto_next(L, near, far);
    double want = L * sqrt(far / near);
    cr_assert(next >= TFMM_LEAF_AUTO_MIN && next <= TFMM_LEAF_AUTO_MAX,
              "seed %llu: L %d near %g far %g -> %d", (unsigned long long)seed,
              L, near, far, next);
    cr_assert(next <= fmax(4.0 * L + 0.5, TFMM_LEAF_AUTO_MIN) &&
                  next >= fmin(0.25 * L - 0.5, TFMM_LEAF_AUTO_MAX),
              "seed %llu: L %d -> %d in one step", (unsigned long long)seed, L,
              next);
    if (far > 1.2 * near)
      cr_assert_geq(next, L, "seed %llu: far %g > near %g, L %d -> %d",
                    (unsigned long long)seed, far, near, L, next);
    if (near > 1.2 * far)
      cr_assert_leq(next, L, "seed %llu: near %g > far %g, L %d -> %d",
                    (unsigned long long)seed, near, far, L, next);
    int clamped = want < 0.25 * L || want > 4.0 * L ||
                  want < TFMM_LEAF_AUTO_MIN || want > TFMM_LEAF_AUTO_MAX;
    if (!clamped && (far > 1.2 * near || near > 1.2 * far))
      cr_assert_leq(fabs(next - want), 0.5 + 1e-9 * want,
                    "seed %llu: L %d near %g far %g -> %d, want %.2f",
                    (unsigned long long)seed, L, near, far, next, want);
  }
}

/* The model the rule is built on: near = a L (interactions per body), far
 * = b / L (cells per body); balanced at L* = sqrt(b / a). From L = 64 the
 * controller reaches L* (within its dead band and rounding: 15 %) in 20
 * evaluations, and rests at the range's ends when L* is outside it. */
Test(leaf_auto, converges_to_the_balance) {
  const double targets[] = {12, 20, 64, 100, 333, 1500, 6000};
  const double scales[] = {1e-9, 1e-3, 1.0};
  for (size_t k = 0; k < sizeof targets / sizeof *targets; k++)
    for (size_t s = 0; s < 3; s++) {
      double a = scales[s], b = a * targets[k] * targets[k];
      int L = 64;
      for (int it = 0; it < 20; it++)
        L = tfmm_leaf_auto_next(L, a * L, b / L);
      cr_assert_leq(fabs(L - targets[k]), 0.15 * targets[k],
                    "L* %g (a %g): ended at %d", targets[k], a, L);
      /* And stays there. */
      cr_assert_eq(tfmm_leaf_auto_next(L, a * L, b / L), L);
    }
  const double outside[] = {2, 30000};
  const int ends[] = {TFMM_LEAF_AUTO_MIN, TFMM_LEAF_AUTO_MAX};
  for (int k = 0; k < 2; k++) {
    double a = 1e-6, b = a * outside[k] * outside[k];
    int L = 64;
    for (int it = 0; it < 20; it++)
      L = tfmm_leaf_auto_next(L, a * L, b / L);
    cr_assert_eq(L, ends[k], "L* %g: ended at %d", outside[k], L);
  }
}

/* A CPU solver with leaf_size = TFMM_LEAF_AUTO: starts at
 * TFMM_LEAF_AUTO_CPU, moves by the controller's rule from the times it
 * measured, stays in range, and keeps the FMM's accuracy at every step
 * (tree_solver's Plummer bound at theta 0.5, p = 4: 3e-2 at the 99th
 * percentile). */
Test(leaf_auto, cpu_solver_chooses_its_leaf_size, .timeout = 600) {
  const uint64_t seed = test_fresh_seed();
  const size_t n = 12000;
  test_bodies b = {n, malloc(3 * n * 8), malloc(n * 8)};
  double *vel = malloc(3 * n * 8), *ref = malloc(3 * n * 8),
         *pref = malloc(n * 8);
  double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
  cr_assert_eq(tfmm_ic_plummer(n, seed, b.pos, vel, b.mass), TFMM_OK);
  cr_assert_eq(test_reference(&b, 0, ref, pref), 0);
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_FMM;
  cfg.device = TFMM_DEVICE_CPU;
  cfg.leaf_size = TFMM_LEAF_AUTO;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK, "%s",
               tfmm_solver_message(s));
  int want = TFMM_LEAF_AUTO_CPU;
  for (int it = 0; it < 5; it++) {
    test_poison(acc, 3 * n);
    test_poison(pot, n);
    cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, pot), TFMM_OK,
                 "%s", tfmm_solver_message(s));
    const tfmm_stats *st = tfmm_solver_stats(s);
    cr_log_info("evaluation %d: L %d, near %.3g s, far %.3g s", it,
                st->leaf_size, st->near_time, st->far_time);
    cr_assert_eq(st->leaf_size, want, "seed %llu evaluation %d",
                 (unsigned long long)seed, it);
    cr_assert(st->leaf_size >= TFMM_LEAF_AUTO_MIN &&
              st->leaf_size <= TFMM_LEAF_AUTO_MAX);
    cr_assert_leq(st->leaf_max, st->leaf_size, "the tree used that L");
    cr_assert_eq(st->near_device, TFMM_DEVICE_CPU);
    cr_assert_gt(st->near_time, 0);
    cr_assert_gt(st->far_time, 0);
    cr_assert_eq(test_first_nonfinite(acc, 3 * n), 3 * n);
    cr_assert_eq(test_first_nonfinite(pot, n), n);
    double e = near_acc_p99(n, acc, ref);
    cr_assert_lt(e, 3e-2, "seed %llu evaluation %d (L %d): p99 %.3g",
                 (unsigned long long)seed, it, st->leaf_size, e);
    cr_assert_lt(test_rel_l2(pot, pref, n), 1e-3);
    want = tfmm_leaf_auto_next(st->leaf_size, st->near_time, st->far_time);
  }
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
  free(vel), free(ref), free(pref), free(acc), free(pot);
}

/* A fixed leaf size is used as given, evaluation after evaluation. */
Test(leaf_auto, fixed_leaf_size_stays) {
  test_bodies b = test_bodies_make(3000, TEST_CLUSTERED, test_fresh_seed());
  double *acc = malloc(3 * b.n * 8);
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.device = TFMM_DEVICE_CPU;
  cfg.leaf_size = 13;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  for (int it = 0; it < 3; it++) {
    cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, NULL),
                 TFMM_OK);
    cr_assert_eq(tfmm_solver_stats(s)->leaf_size, 13);
  }
  tfmm_solver_destroy(s);
  free(acc);
  test_bodies_free(&b);
}
