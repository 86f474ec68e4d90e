/* tfmm_solver_compute_active on the CPU: forces at a subset of the bodies
 * (individual time steps). For every method (reference, direct in single
 * and double precision, fmm, bh; geometric, mass and error criteria;
 * Plummer and spline softening), on Plummer spheres and clustered inputs
 * from fresh seeds, target sets of 1%, 30%, all, one body, none and the
 * innermost bodies: the targets' results equal tfmm_solver_compute's bit
 * for bit, meet the accuracy asked against the double-precision
 * reference, and the other entries keep the sentinel they were given.
 * The work shrinks with the set (near pairs, M2L translations); an empty
 * set writes nothing; bad input is refused with a message. */
#include "active_check.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

static tfmm_config cpu_config(tfmm_method method) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = method;
  c.device = TFMM_DEVICE_CPU;
  c.eps = 1e-4;
  return c;
}

static const active_subset SUBSETS[] = {
    {ACTIVE_RANDOM, 0.01, "random 1%"},
    {ACTIVE_RANDOM, 0.3, "random 30%"},
    {ACTIVE_ALL, 1, "all"},
    {ACTIVE_SINGLE, 0, "one body"},
    {ACTIVE_INNERMOST, 0.01, "innermost 1%"},
    {ACTIVE_INNERMOST, 0.1, "innermost 10%"},
};
enum { NSUBSETS = sizeof SUBSETS / sizeof SUBSETS[0] };

/* Every subset of SUBSETS on b under c, bit for bit against the whole. */
static void all_subsets(const tfmm_config *c, const test_bodies *b,
                        double ref_p99, uint64_t seed, const char *what) {
  const active_expect expect = {0, ref_p99, 300, 0, 0, 0};
  for (int k = 0; k < NSUBSETS; k++) {
    size_t count = 0;
    unsigned char *m = active_mask(b, SUBSETS[k].kind, SUBSETS[k].fraction,
                                   seed + 17 * (uint64_t)k, &count);
    char label[160];
    snprintf(label, sizeof label, "%s, %s (%zu of %zu), seed %llu", what,
             SUBSETS[k].name, count, b->n, (unsigned long long)seed);
    active_result r = active_check(c, b, m, &expect, 0, label);
    active_result_free(&r);
    free(m);
  }
}

Test(active, fmm_plummer_and_clustered) {
  const uint64_t seed = test_fresh_seed();
  tfmm_config c = cpu_config(TFMM_METHOD_FMM);
  test_bodies p = active_plummer(12000, seed);
  all_subsets(&c, &p, 3e-3, seed, "fmm plummer");
  test_bodies_free(&p);
  test_bodies q = test_bodies_make(10000, TEST_CLUSTERED, seed + 1);
  all_subsets(&c, &q, 3e-3, seed, "fmm clustered");
  test_bodies_free(&q);
}

Test(active, bh_plummer_and_clustered) {
  const uint64_t seed = test_fresh_seed();
  tfmm_config c = cpu_config(TFMM_METHOD_BH);
  test_bodies p = active_plummer(12000, seed);
  all_subsets(&c, &p, 3e-3, seed, "bh plummer");
  test_bodies_free(&p);
  test_bodies q = test_bodies_make(10000, TEST_CLUSTERED, seed + 1);
  all_subsets(&c, &q, 3e-3, seed, "bh clustered");
  test_bodies_free(&q);
}

Test(active, fmm_criteria_softening_and_leaves) {
  const uint64_t seed = test_fresh_seed();
  test_bodies p = active_plummer(12000, seed);
  tfmm_config c = cpu_config(TFMM_METHOD_FMM);
  c.mac = TFMM_MAC_MASS;
  c.leaf_size = 16;
  all_subsets(&c, &p, 3e-3, seed, "fmm mass criterion leaf 16");
  c = cpu_config(TFMM_METHOD_FMM);
  c.mac = TFMM_MAC_ERROR;
  c.softening = TFMM_SOFTENING_SPLINE;
  c.eps = 1e-3;
  all_subsets(&c, &p, 3e-3, seed, "fmm error criterion spline");
  c = cpu_config(TFMM_METHOD_FMM);
  c.accuracy = 1e-5; /* double-precision near field */
  all_subsets(&c, &p, 3e-5, seed, "fmm accuracy 1e-5");
  test_bodies_free(&p);
}

Test(active, reference_and_direct) {
  const uint64_t seed = test_fresh_seed();
  test_bodies p = active_plummer(3000, seed);
  tfmm_config c = cpu_config(TFMM_METHOD_REFERENCE);
  all_subsets(&c, &p, 1e-13, seed, "reference");
  c = cpu_config(TFMM_METHOD_DIRECT);
  all_subsets(&c, &p, 2e-4, seed, "direct single");
  c.precision = TFMM_PRECISION_DOUBLE;
  all_subsets(&c, &p, 1e-12, seed, "direct double");
  test_bodies_free(&p);
}

/* The work of the tree methods shrinks with the set: a leaf with one
 * target computes all its bodies, so 1% drawn at random touch about a
 * quarter of the leaves of ~30 bodies (1 - 0.99^30), and the innermost 1%
 * few of them. */
Test(active, work_shrinks) {
  const uint64_t seed = test_fresh_seed();
  test_bodies p = active_plummer(50000, seed);
  const tfmm_method methods[] = {TFMM_METHOD_FMM, TFMM_METHOD_BH};
  for (int k = 0; k < 2; k++) {
    tfmm_config c = cpu_config(methods[k]);
    size_t count = 0;
    unsigned char *m = active_mask(&p, ACTIVE_INNERMOST, 0.01, seed, &count);
    const active_expect expect = {0, 3e-3, 200, 0, 0, 0};
    tfmm_solver *s = NULL;
    cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
    double *acc = malloc(3 * p.n * sizeof *acc);
    cr_assert(acc != NULL);
    cr_assert_eq(tfmm_solver_compute(s, p.n, p.pos, p.mass, acc, NULL),
                 TFMM_OK);
    const tfmm_stats whole = *tfmm_solver_stats(s);
    tfmm_solver_destroy(s);
    free(acc);
    active_result r = active_check(&c, &p, m, &expect, 0, "work");
    cr_assert(r.stats.interactions < 0.1 * whole.interactions,
              "%s: %g near pairs at the innermost 1%%, %g at all",
              tfmm_method_name(methods[k]), r.stats.interactions,
              whole.interactions);
    cr_assert(r.stats.m2l + r.stats.m2p < 0.2 * (whole.m2l + whole.m2p),
              "%s: %g M2L and %g M2P at 1%%, %g and %g at all",
              tfmm_method_name(methods[k]), r.stats.m2l, r.stats.m2p, whole.m2l,
              whole.m2p);
    active_result_free(&r);
    free(m);
    m = active_mask(&p, ACTIVE_RANDOM, 0.01, seed, &count);
    r = active_check(&c, &p, m, &expect, 0, "work");
    cr_assert(r.stats.interactions < 0.5 * whole.interactions,
              "%s: %g near pairs at 1%% drawn, %g at all",
              tfmm_method_name(methods[k]), r.stats.interactions,
              whole.interactions);
    active_result_free(&r);
    free(m);
  }
  test_bodies_free(&p);
}

/* No target: TFMM_OK and nothing written, for every method. */
Test(active, empty_set_writes_nothing) {
  const uint64_t seed = test_fresh_seed();
  test_bodies p = active_plummer(2000, seed);
  unsigned char *none = calloc(p.n, 1);
  double *acc = malloc(3 * p.n * sizeof *acc), *pot = malloc(p.n * 8);
  cr_assert(none != NULL && acc != NULL && pot != NULL);
  const double s0 = active_sentinel();
  for (tfmm_method m = TFMM_METHOD_REFERENCE; m <= TFMM_METHOD_BH; m++) {
    for (size_t i = 0; i < 3 * p.n; i++)
      acc[i] = s0;
    for (size_t i = 0; i < p.n; i++)
      pot[i] = s0;
    tfmm_config c = cpu_config(m);
    tfmm_solver *s = NULL;
    cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
    cr_assert_eq(
        tfmm_solver_compute_active(s, p.n, p.pos, p.mass, none, acc, pot),
        TFMM_OK, "%s: %s", tfmm_method_name(m), tfmm_solver_message(s));
    cr_assert_eq(tfmm_solver_stats(s)->targets, 0);
    cr_assert_eq(memcmp(acc + 0, &s0, sizeof s0), 0);
    for (size_t i = 0; i < 3 * p.n; i++)
      cr_assert_eq(memcmp(acc + i, &s0, sizeof s0), 0, "%s: acc %zu written",
                   tfmm_method_name(m), i);
    for (size_t i = 0; i < p.n; i++)
      cr_assert_eq(memcmp(pot + i, &s0, sizeof s0), 0, "%s: pot %zu written",
                   tfmm_method_name(m), i);
    tfmm_solver_destroy(s);
  }
  free(none);
  free(acc);
  free(pot);
  test_bodies_free(&p);
}

/* NULL for active is tfmm_solver_compute; pot NULL is allowed. */
Test(active, null_mask_is_the_whole_evaluation) {
  const uint64_t seed = test_fresh_seed();
  test_bodies p = active_plummer(8000, seed);
  tfmm_config c = cpu_config(TFMM_METHOD_FMM);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double *a = malloc(3 * p.n * 8), *b = malloc(3 * p.n * 8);
  cr_assert(a != NULL && b != NULL);
  cr_assert_eq(tfmm_solver_compute(s, p.n, p.pos, p.mass, a, NULL), TFMM_OK);
  /* A second solver's first evaluation: the first solver's planner may
   * try a cheaper setting at its next whole evaluation (planner.h). */
  tfmm_solver *s2 = NULL;
  cr_assert_eq(tfmm_solver_create(&s2, &c), TFMM_OK);
  cr_assert_eq(
      tfmm_solver_compute_active(s2, p.n, p.pos, p.mass, NULL, b, NULL),
      TFMM_OK);
  tfmm_solver_destroy(s2);
  cr_assert_eq(memcmp(a, b, 3 * p.n * 8), 0, "seed %llu",
               (unsigned long long)seed);
  /* And a subset without the potential. */
  size_t count = 0;
  unsigned char *m = active_mask(&p, ACTIVE_RANDOM, 0.05, seed, &count);
  const double s0 = active_sentinel();
  for (size_t i = 0; i < 3 * p.n; i++)
    b[i] = s0;
  cr_assert_eq(tfmm_solver_compute_active(s, p.n, p.pos, p.mass, m, b, NULL),
               TFMM_OK, "%s", tfmm_solver_message(s));
  for (size_t i = 0; i < p.n; i++)
    cr_assert_eq(memcmp(b + 3 * i, m[i] ? a + 3 * i : (double[]){s0, s0, s0},
                        3 * sizeof(double)),
                 0, "body %zu (active %d), seed %llu", i, m[i],
                 (unsigned long long)seed);
  tfmm_solver_destroy(s);
  free(a);
  free(b);
  free(m);
  test_bodies_free(&p);
}

Test(active, bad_input_is_named) {
  test_bodies p = active_plummer(100, test_fresh_seed());
  unsigned char *m = calloc(p.n, 1);
  double *acc = malloc(3 * p.n * 8);
  cr_assert(m != NULL && acc != NULL);
  m[3] = 1;
  tfmm_config c = cpu_config(TFMM_METHOD_FMM);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  cr_assert_eq(
      tfmm_solver_compute_active(NULL, p.n, p.pos, p.mass, m, acc, NULL),
      TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_solver_compute_active(s, p.n, NULL, p.mass, m, acc, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "NULL"), "%s",
                     tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_compute_active(s, p.n, p.pos, p.mass, m, NULL, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_solver_compute_active(s, 0, p.pos, p.mass, m, acc, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "no bodies"));
  /* Bad bodies are refused even with no target. */
  memset(m, 0, p.n);
  p.mass[5] = -1;
  cr_assert_eq(tfmm_solver_compute_active(s, p.n, p.pos, p.mass, m, acc, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "5"), "%s",
                     tfmm_solver_message(s));
  /* Without a GPU build or solver, the device entry point says so. */
  cr_assert_neq(tfmm_solver_compute_active_device(s, p.n, p.pos, p.mass, m, acc,
                                                  NULL, NULL),
                TFMM_OK);
  cr_assert(strlen(tfmm_solver_message(s)) > 0);
  tfmm_solver_destroy(s);
  free(m);
  free(acc);
  test_bodies_free(&p);
}
