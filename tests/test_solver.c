/* The solver's contract: configuration checks, device choice, bad input,
 * statistics. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

static tfmm_status create_with(tfmm_config cfg, const char *expect) {
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, &cfg);
  if (expect != NULL)
    cr_expect_not_null(strstr(tfmm_solver_message(s), expect),
                       "message \"%s\" lacks \"%s\"", tfmm_solver_message(s),
                       expect);
  tfmm_solver_destroy(s);
  return st;
}

Test(solver, defaults_are_documented_values) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  cr_assert_eq(c.G, 1.0);
  cr_assert_eq(c.eps, 0.0);
  cr_assert_eq(c.method, TFMM_METHOD_FMM);
  cr_assert_eq(c.theta, TFMM_FROM_ACCURACY);
  cr_assert_eq(c.order, TFMM_FROM_ACCURACY);
  cr_assert_eq(c.accuracy, 1e-3);
  cr_assert_eq(c.softening, TFMM_SOFTENING_PLUMMER);
  cr_assert_eq(c.precision, TFMM_PRECISION_AUTO);
  cr_assert_eq(c.mac, TFMM_MAC_GEOMETRIC);
  cr_assert_eq(c.mac_epsilon, TFMM_FROM_ACCURACY);
  cr_assert_eq(c.leaf_size, 64);
  cr_assert_eq(c.max_depth, 21);
  cr_assert_eq(c.device, TFMM_DEVICE_AUTO);
  cr_assert_eq(c.tree_device, TFMM_DEVICE_AUTO);
  cr_assert_eq(c.far_device, TFMM_DEVICE_AUTO);
  cr_assert_eq(c.gpu_tile, 0);
  cr_assert_eq(c.gpu_threads_per_body, 0);
  cr_assert_eq(c.gpu_unroll, 16);
  cr_assert_eq(c.gpu_bodies_per_thread, 0);
}

Test(solver, bad_configuration_is_named) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.eps = -1;
  cr_assert_eq(create_with(c, "eps"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.G = 0;
  cr_assert_eq(create_with(c, "G"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.num_threads = TFMM_MAX_THREADS + 1;
  cr_assert_eq(create_with(c, "num_threads"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.accuracy = 0;
  cr_assert_eq(create_with(c, "accuracy"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.softening = (tfmm_softening)7;
  cr_assert_eq(create_with(c, "softening"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.precision = (tfmm_precision)7;
  cr_assert_eq(create_with(c, "precision"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.mac = (tfmm_mac_kind)7;
  cr_assert_eq(create_with(c, "criterion"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.mac = TFMM_MAC_ERROR;
  c.mac_epsilon = 0;
  cr_assert_eq(create_with(c, "mac_epsilon"), TFMM_ERR_INVALID_ARGUMENT);
  c.mac_epsilon = NAN;
  cr_assert_eq(create_with(c, "mac_epsilon"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.mac = TFMM_MAC_ERROR; /* no calibration for bh: all three given */
  c.method = TFMM_METHOD_BH;
  cr_assert_eq(create_with(c, "fmm only"), TFMM_ERR_INVALID_ARGUMENT);
  c.theta = 0.7;
  c.order = 4;
  c.mac_epsilon = 1e-4;
  cr_assert_eq(create_with(c, NULL), TFMM_OK);
  tfmm_config_defaults(&c);
  c.mac = TFMM_MAC_ERROR; /* past its calibration */
  c.accuracy = 1e-6;
  cr_assert_eq(create_with(c, "calibrated down to"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.theta = -0.5;
  cr_assert_eq(create_with(c, "theta"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.gpu_tile = 100;
  cr_assert_eq(create_with(c, "gpu_tile"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.gpu_threads_per_body = 3;
  cr_assert_eq(create_with(c, "gpu_threads_per_body"),
               TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.gpu_tile = 512;
  cr_assert_eq(create_with(c, "gpu_tile"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.gpu_tile = 256; /* 256 * 256 * 4 bytes of shared memory: too many */
  c.gpu_threads_per_body = 4;
  cr_assert_eq(create_with(c, "shared memory"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.gpu_tile = 256; /* 1024 threads, but r = 4 allows 512 */
  c.gpu_threads_per_body = 4;
  c.gpu_bodies_per_thread = 4;
  cr_assert_eq(create_with(c, "<= 512 threads"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.gpu_tile = 128;
  c.gpu_threads_per_body = 8;
  cr_assert_eq(create_with(c, NULL), TFMM_OK);
  tfmm_config_defaults(&c);
  c.gpu_unroll = 3;
  cr_assert_eq(create_with(c, "gpu_unroll"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.gpu_bodies_per_thread = 3;
  cr_assert_eq(create_with(c, "gpu_bodies_per_thread"),
               TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_REFERENCE;
  c.device = TFMM_DEVICE_GPU;
  cr_assert_eq(create_with(c, "CPU only"), TFMM_ERR_INVALID_ARGUMENT);
}

Test(solver, device_choice) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_DIRECT;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  tfmm_device expect = tfmm_gpu_count() > 0 ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
  cr_assert_eq(tfmm_solver_device(s), expect);
  tfmm_solver_destroy(s);
  if (tfmm_gpu_count() == 0) {
    c.device = TFMM_DEVICE_GPU;
    cr_assert_eq(create_with(c, "device gpu"), TFMM_ERR_NO_DEVICE);
  }
}

/* Where the tree is built: the choice is checked before any body is seen,
 * each refusal naming the field and why. */
Test(solver, tree_device_choice) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.tree_device = (tfmm_device)7;
  cr_assert_eq(create_with(c, "tree_device 7"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.tree_device = TFMM_DEVICE_GPU;
  c.device = TFMM_DEVICE_CPU;
  cr_assert_eq(create_with(c, "needs the solver on the GPU"),
               TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.tree_device = TFMM_DEVICE_GPU;
  if (tfmm_gpu_count() == 0)
    cr_assert_eq(create_with(c, "no GPU"), TFMM_ERR_NO_DEVICE);
  else
    cr_assert_eq(create_with(c, NULL), TFMM_OK);
  tfmm_config_defaults(&c);
  c.far_device = (tfmm_device)9;
  cr_assert_eq(create_with(c, "far_device 9"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.far_device = TFMM_DEVICE_GPU;
  c.tree_device = TFMM_DEVICE_CPU;
  cr_assert_eq(create_with(c, "the tree on the GPU"),
               TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.far_device = TFMM_DEVICE_GPU;
  if (tfmm_gpu_count() == 0)
    cr_assert_eq(create_with(c, "no GPU"), TFMM_ERR_NO_DEVICE);
  /* The CPU tree whatever the device: always possible. */
  tfmm_config_defaults(&c);
  c.tree_device = TFMM_DEVICE_CPU;
  cr_assert_eq(create_with(c, NULL), TFMM_OK);
}

Test(solver, bad_bodies_are_named) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_CPU;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double pos[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2}, mass[3] = {1, 1, 1};
  double acc[9], pot[3];
  cr_assert_eq(tfmm_solver_compute(s, 0, pos, mass, acc, pot),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "no bodies"));
  pos[4] = NAN;
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, pot),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "body 1"));
  pos[4] = INFINITY;
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, pot),
               TFMM_ERR_INVALID_ARGUMENT);
  pos[4] = 1;
  mass[2] = 0;
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, pot),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "body 2"));
  mass[2] = -1;
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, pot),
               TFMM_ERR_INVALID_ARGUMENT);
  mass[2] = 1;
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, NULL), TFMM_OK);
  cr_assert_str_empty(tfmm_solver_message(s));
  tfmm_solver_destroy(s);
}

Test(solver, stats_describe_the_run) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_DIRECT;
  c.device = TFMM_DEVICE_CPU;
  c.num_threads = 1;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  test_bodies b = test_bodies_make(300, TEST_UNIFORM, test_fresh_seed());
  double acc[900];
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, NULL), TFMM_OK);
  const tfmm_stats *st = tfmm_solver_stats(s);
  cr_assert_eq(st->n, 300);
  cr_assert_eq(st->interactions, 300.0 * 299.0);
  cr_assert_eq(st->device, TFMM_DEVICE_CPU);
  cr_assert_eq(st->method, TFMM_METHOD_DIRECT);
  cr_assert_not_null(strstr(st->device_name, "CPU (1 threads)"), "%s",
                     st->device_name);
  cr_assert_gt(st->time_total, 0);
  for (int p = 0; p < TFMM_PHASE_COUNT; p++)
    cr_assert_geq(st->time[p], 0);
  test_bodies_free(&b);
  tfmm_solver_destroy(s);
}

Test(solver, names_round_trip) {
  tfmm_method m;
  tfmm_device d;
  cr_assert_eq(tfmm_method_parse("reference", &m), TFMM_OK);
  cr_assert_eq(m, TFMM_METHOD_REFERENCE);
  cr_assert_str_eq(tfmm_method_name(TFMM_METHOD_DIRECT), "direct");
  cr_assert_eq(tfmm_device_parse("gpu", &d), TFMM_OK);
  cr_assert_eq(d, TFMM_DEVICE_GPU);
  cr_assert_eq(tfmm_device_parse("tpu", &d), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_method_parse(NULL, &m), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tfmm_phase_name(TFMM_PHASE_NEAR), "near");
}

/* The tree methods keep their buffers between evaluations (the solver's
 * workspace): one solver through N = 3000, 6000 and 1500, and back to
 * 3000, gives bit for bit what a fresh solver gives for each. */
static void evaluate(tfmm_solver *s, size_t n, const double *pos,
                     const double *mass, double *acc, double *pot) {
  cr_assert_eq(tfmm_solver_compute(s, n, pos, mass, acc, pot), TFMM_OK, "%s",
               tfmm_solver_message(s));
}

Test(solver, workspace_reuse_is_exact_across_n) {
  enum { NMAX = 6000 };
  double *pos = malloc(3 * NMAX * sizeof *pos);
  double *vel = malloc(3 * NMAX * sizeof *vel);
  double *mass = malloc(NMAX * sizeof *mass);
  double *a1 = malloc(3 * NMAX * sizeof *a1), *p1 = malloc(NMAX * 8);
  double *a2 = malloc(3 * NMAX * sizeof *a2), *p2 = malloc(NMAX * 8);
  cr_assert_eq(tfmm_ic_hernquist(NMAX, test_fresh_seed(), pos, vel, mass),
               TFMM_OK);
  const size_t ns[] = {3000, 6000, 1500, 3000};
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
    tfmm_config c;
    tfmm_config_defaults(&c);
    c.method = (tfmm_method)m;
    c.device = TFMM_DEVICE_CPU;
    c.eps = 0.01;
    /* The planner keeps what it measured between calls (on purpose): the
     * workspace alone is under test. */
    c.measure = TFMM_MEASURE_OFF;
    tfmm_solver *kept = NULL;
    cr_assert_eq(tfmm_solver_create(&kept, &c), TFMM_OK);
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
      tfmm_solver *fresh = NULL;
      cr_assert_eq(tfmm_solver_create(&fresh, &c), TFMM_OK);
      evaluate(kept, ns[k], pos, mass, a1, p1);
      evaluate(fresh, ns[k], pos, mass, a2, p2);
      cr_expect(memcmp(a1, a2, 3 * ns[k] * sizeof *a1) == 0 &&
                    memcmp(p1, p2, ns[k] * sizeof *p1) == 0,
                "%s, n = %zu: the kept solver differs from a fresh one",
                tfmm_method_name((tfmm_method)m), ns[k]);
      tfmm_solver_destroy(fresh);
    }
    tfmm_solver_destroy(kept);
  }
  free(pos), free(vel), free(mass), free(a1), free(p1), free(a2), free(p2);
}

/* A cube given by the caller (tfmm_config.box_min, box_size): the tree
 * takes its keys there and the forces still meet the target against the
 * reference; a body outside it is refused by index; a bad cube is named. */
Test(solver, caller_given_cube) {
  enum { N = 3000 };
  double *pos = malloc(3 * N * sizeof *pos), *vel = malloc(3 * N * 8);
  double *mass = malloc(N * sizeof *mass), *acc = malloc(3 * N * 8);
  double *ref = malloc(3 * N * sizeof *ref);
  const uint64_t seed = test_fresh_seed();
  cr_assert_eq(tfmm_ic_plummer(N, seed, pos, vel, mass), TFMM_OK);
  double reach = 0;
  for (size_t k = 0; k < 3 * N; k++)
    reach = fmax(reach, fabs(pos[k]));
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_REFERENCE;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  evaluate(s, N, pos, mass, ref, NULL);
  tfmm_solver_destroy(s);
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
    tfmm_config_defaults(&c);
    c.method = (tfmm_method)m;
    c.device = TFMM_DEVICE_CPU;
    /* Off-centre and three times the bodies' reach. */
    c.box_min[0] = c.box_min[1] = c.box_min[2] = -2 * reach;
    c.box_size = 3 * reach + reach;
    cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
    evaluate(s, N, pos, mass, acc, NULL);
    const double e = test_p99_relative(N, acc, ref);
    cr_expect_leq(e, 1e-3, "seed %llu %s in a given cube: p99 %.3g",
                  (unsigned long long)seed, tfmm_method_name((tfmm_method)m),
                  e);
    /* Body 7 moved out of the cube: refused, named. */
    const double keep = pos[21];
    pos[21] = 2.5 * reach;
    cr_expect_eq(tfmm_solver_compute(s, N, pos, mass, acc, NULL),
                 TFMM_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tfmm_solver_message(s), "body 7") != NULL, "%s",
              tfmm_solver_message(s));
    pos[21] = keep;
    tfmm_solver_destroy(s);
  }
  tfmm_config_defaults(&c);
  c.box_size = -1;
  cr_assert_eq(create_with(c, "box_size"), TFMM_ERR_INVALID_ARGUMENT);
  tfmm_config_defaults(&c);
  c.box_min[1] = NAN;
  c.box_size = 1;
  cr_assert_eq(create_with(c, "box_min"), TFMM_ERR_INVALID_ARGUMENT);
  free(pos), free(vel), free(mass), free(acc), free(ref);
}

/* Device-resident bodies need a solver on the GPU: a CPU solver refuses
 * them (no pointer is touched), naming why; a build without CUDA says so. */
Test(solver, device_resident_bodies_need_a_gpu_solver) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_CPU;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double dummy[3] = {0, 0, 0};
  const tfmm_status want =
      tfmm_has_cuda() ? TFMM_ERR_NO_DEVICE : TFMM_ERR_UNSUPPORTED;
  cr_expect_eq(
      tfmm_solver_compute_device(s, 1, dummy, dummy, dummy, NULL, NULL), want,
      "%s", tfmm_solver_message(s));
  cr_expect(strstr(tfmm_solver_message(s), tfmm_has_cuda() ? "GPU" : "CUDA") !=
                NULL,
            "%s", tfmm_solver_message(s));
  cr_expect_eq(
      tfmm_solver_compute_device(NULL, 1, dummy, dummy, dummy, NULL, NULL),
      TFMM_ERR_INVALID_ARGUMENT);
  tfmm_solver_destroy(s);
}

/* near_only with leaves of one body at theta 0.5: each leaf's list holds
 * only itself, so every sum is 0 by design, not an underflow (issue 29's
 * range check once refused it as "below the range of double"). */
Test(solver, near_only_zero_sums_are_not_an_underflow) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_FMM;
  c.device = TFMM_DEVICE_CPU;
  c.measure = TFMM_MEASURE_OFF;
  c.leaf_size = 1;
  c.theta = 0.5;
  c.eps = 0; /* no softening separation: one-body cells are accepted */
  c.near_only = 1;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  test_bodies b = test_bodies_make(2000, TEST_UNIFORM, test_fresh_seed());
  double *acc = malloc(3 * b.n * sizeof *acc);
  cr_assert_not_null(acc);
  for (size_t i = 0; i < 3 * b.n; i++)
    acc[i] = NAN;
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  for (size_t i = 0; i < 3 * b.n; i++)
    cr_assert_eq(acc[i], 0, "acc[%zu] = %g", i, acc[i]);
  free(acc);
  test_bodies_free(&b);
  tfmm_solver_destroy(s);
}
