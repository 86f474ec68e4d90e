/* The one resolver of settings (tfmm_plan_resolve): it refuses what
 * tfmm_solver_create refuses, with the same message, and the solver runs
 * what it says: the device, the leaf size, the stages, theta, order and
 * precision reported in tfmm_stats are the plan's. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

/* The plan of c for n bodies, and a solver of c run on n fresh bodies:
 * the two must agree on everything the statistics report. */
static void expect_solver_follows_plan(tfmm_config c, size_t n) {
  tfmm_plan p;
  char msg[512];
  cr_assert_eq(tfmm_plan_resolve(&c, n, &p, msg, sizeof msg), TFMM_OK, "%s",
               msg);
  cr_assert_str_eq(msg, "");
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK, "%s",
               tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_device(s), p.device);
  test_bodies b = test_bodies_make(n, TEST_CLUSTERED, test_fresh_seed());
  double *acc = malloc(3 * n * sizeof *acc);
  cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  const tfmm_stats *st = tfmm_solver_stats(s);
  cr_expect_eq(p.method, c.method);
  cr_expect_eq(st->device, p.device);
  if (c.method == TFMM_METHOD_FMM || c.method == TFMM_METHOD_BH) {
    cr_expect_eq(st->leaf_size, p.leaf_size);
    cr_expect_eq(st->theta, p.theta);
    cr_expect_eq(st->order, p.order);
    cr_expect_eq(st->precision, p.precision);
    cr_expect_eq(st->mac_epsilon, p.mac_epsilon);
    cr_expect_eq(st->schedule, p.schedule);
    cr_expect_eq(st->tree_device, p.tree_device);
    cr_expect_eq(st->far_device, p.far_device);
  }
  free(acc);
  test_bodies_free(&b);
  tfmm_solver_destroy(s);
}

Test(plan, solver_follows_plan) {
  const tfmm_method methods[] = {TFMM_METHOD_FMM, TFMM_METHOD_BH,
                                 TFMM_METHOD_DIRECT, TFMM_METHOD_REFERENCE};
  const int leaves[] = {64, 16, TFMM_LEAF_AUTO};
  const double targets[] = {1e-3, 1e-5};
  for (size_t m = 0; m < 4; m++)
    for (size_t l = 0; l < 3; l++)
      for (size_t t = 0; t < 2; t++) {
        tfmm_config c;
        tfmm_config_defaults(&c);
        c.method = methods[m];
        c.leaf_size = leaves[l];
        c.accuracy = targets[t];
        /* theta and order from the calibration alone: measured, the
         * planner may move them from the plan's first guess. */
        c.measure = TFMM_MEASURE_OFF;
        expect_solver_follows_plan(c, 3000);
      }
}

Test(plan, defaults) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  tfmm_plan p;
  cr_assert_eq(tfmm_plan_resolve(&c, 0, &p, NULL, 0), TFMM_OK);
  cr_expect_eq(p.device,
               tfmm_gpu_count() > 0 ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU);
  cr_expect_eq(p.leaf_size, c.leaf_size);
  cr_expect_eq(p.schedule, TFMM_SCHEDULE_HYBRID); /* small N */
  cr_expect_eq(p.precision, TFMM_PRECISION_SINGLE);
  cr_expect(p.theta > 0 && p.theta <= 1);
  cr_expect(p.order >= 1);
  /* What tfmm_config_resolve says is the plan's. */
  double theta, sep;
  int order;
  cr_assert_eq(tfmm_config_resolve(&c, &theta, &order, &sep, NULL, 0), TFMM_OK);
  cr_expect_eq(theta, p.theta);
  cr_expect_eq(order, p.order);
  cr_expect_eq(sep, p.separation);
  /* The reference always on the CPU, in double. */
  c.method = TFMM_METHOD_REFERENCE;
  cr_assert_eq(tfmm_plan_resolve(&c, 0, &p, NULL, 0), TFMM_OK);
  cr_expect_eq(p.device, TFMM_DEVICE_CPU);
  cr_expect_eq(p.precision, TFMM_PRECISION_DOUBLE);
  /* Direct: auto is single. */
  c.method = TFMM_METHOD_DIRECT;
  cr_assert_eq(tfmm_plan_resolve(&c, 0, &p, NULL, 0), TFMM_OK);
  cr_expect_eq(p.precision, TFMM_PRECISION_SINGLE);
}

/* One configuration that breaks one rule: the plan's status and message
 * are the solver's, and the message names the field. */
static void expect_refused(tfmm_config c, const char *field) {
  tfmm_plan p;
  memset(&p, 0x5a, sizeof p);
  const tfmm_plan poison = p;
  char msg[512];
  const tfmm_status st = tfmm_plan_resolve(&c, 100, &p, msg, sizeof msg);
  tfmm_solver *s = NULL;
  const tfmm_status want = tfmm_solver_create(&s, &c);
  cr_expect_eq(st, want, "%s: plan %d, solver %d", field, st, want);
  cr_expect_str_eq(msg, tfmm_solver_message(s));
  cr_expect_not_null(strstr(msg, field), "'%s' lacks '%s'", msg, field);
  if (st == TFMM_ERR_INVALID_ARGUMENT)
    cr_expect_eq(memcmp(&p, &poison, sizeof p), 0,
                 "%s: a refused configuration wrote the plan", field);
  tfmm_solver_destroy(s);
}

Test(plan, refuses_what_the_solver_refuses) {
  tfmm_config c, d;
  tfmm_config_defaults(&d);
#define BREAK(stmt, field)                                                     \
  do {                                                                         \
    c = d;                                                                     \
    stmt;                                                                      \
    expect_refused(c, field);                                                  \
  } while (0)
  BREAK(c.G = 0, "G =");
  BREAK(c.eps = -1, "eps =");
  BREAK(c.method = (tfmm_method)9, "method 9");
  BREAK(c.softening = (tfmm_softening)5, "softening 5");
  BREAK(c.precision = (tfmm_precision)5, "precision 5");
  BREAK(c.mac = (tfmm_mac_kind)5, "opening criterion 5");
  BREAK((c.mac = TFMM_MAC_ERROR, c.method = TFMM_METHOD_BH), "with bh");
  BREAK((c.mac = TFMM_MAC_ERROR, c.accuracy = 1e-7), "accuracy = 1e-07");
  BREAK(c.mac_epsilon = -3, "mac_epsilon");
  BREAK(c.accuracy = 0.5, "accuracy = 0.5");
  BREAK(c.theta = 2, "theta = 2");
  BREAK(c.order = 99, "order = 99");
  BREAK(c.order = 0, "order = 0 with method fmm");
  BREAK(c.box_size = -1, "box_size = -1");
  BREAK(c.leaf_size = -2, "leaf_size = -2");
  BREAK(c.max_depth = 0, "max_depth = 0: must be in [1, 21]");
  BREAK(c.device = (tfmm_device)7, "device 7");
  BREAK((c.method = TFMM_METHOD_REFERENCE, c.device = TFMM_DEVICE_GPU),
        "CPU only");
  BREAK(c.tree_device = (tfmm_device)7, "tree_device 7");
  BREAK((c.tree_device = TFMM_DEVICE_GPU, c.device = TFMM_DEVICE_CPU),
        "tree_device gpu");
  BREAK(c.far_device = (tfmm_device)7, "far_device 7");
  BREAK((c.far_device = TFMM_DEVICE_GPU, c.tree_device = TFMM_DEVICE_CPU),
        "far_device gpu");
  BREAK(c.schedule = (tfmm_schedule_kind)7, "schedule 7");
  BREAK((c.schedule = TFMM_SCHEDULE_GPU, c.device = TFMM_DEVICE_CPU),
        "schedule gpu");
  BREAK((c.schedule = TFMM_SCHEDULE_GPU, c.far_device = TFMM_DEVICE_CPU),
        "schedule hybrid");
  BREAK(c.near_only = 2, "near_only = 2: must be 0 or 1");
  BREAK(c.num_threads = -1, "num_threads = -1: must be in [0, 1024]");
  BREAK(c.gpu_id = -1, "gpu_id = -1");
  BREAK(c.gpu_tile = 33, "gpu_tile = 33");
  BREAK(c.gpu_bodies_per_thread = 3, "gpu_bodies_per_thread = 3");
  BREAK(c.gpu_threads_per_body = 3, "gpu_threads_per_body = 3");
  BREAK((c.gpu_tile = 256, c.gpu_threads_per_body = 1024),
        "gpu_threads_per_body = 1024 with gpu_tile = 256");
  BREAK(c.gpu_unroll = 3, "gpu_unroll = 3");
  /* Several broken: the first rule of the table is told. */
  BREAK((c.gpu_unroll = 3, c.G = -1), "G = -1");
  /* A GPU asked for where there is none: the solver's error too. */
  if (tfmm_gpu_count() == 0) {
    BREAK(c.device = TFMM_DEVICE_GPU, "device gpu");
    BREAK(c.schedule = TFMM_SCHEDULE_GPU, "schedule gpu");
  }
#undef BREAK
}
