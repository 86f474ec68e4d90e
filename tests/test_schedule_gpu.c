/* The gpu schedule (every stage on the GPU: kernels/schedule/pipeline_gpu.h)
 * against the hybrid schedule on the same GPU, and against itself. Both
 * build the same tree and the same lists as sets (test_traverse_gpu), so
 * in double precision they differ only in the order of the sums: every
 * body's acceleration and potential within 1e-10 of hybrid's relative to
 * its own (plus 1e-13 of the largest), and the same counts (near pairs,
 * M2L translations, M2P evaluations, cells, leaves). FMM and Barnes-Hut;
 * geometric, mass and error criteria; Plummer and spline softening;
 * near_only. Then: the same bits run after run; one solver over growing
 * and shrinking N gives a fresh solver's bits (buffers reused); where the
 * stages ran is reported; coincident bodies with eps = 0 are named; the
 * gpu schedule without a GPU is refused; lists past their cap raise the
 * leaf size, say so, and give what that leaf size gives.
 * Accuracy against the reference is test_accuracy_gpu's. Skips without a
 * GPU. */
#include "internal.h" /* tfmm_solver_set_list_cap */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

typedef struct result {
  double *acc, *pot;
  tfmm_stats stats;
} result;

static result compute(const tfmm_config *c, size_t n, const double *pos,
                      const double *mass, const char *label) {
  result r = {malloc(3 * n * sizeof(double)), malloc(n * sizeof(double)), {0}};
  cr_assert(r.acc && r.pot);
  test_poison(r.acc, 3 * n);
  test_poison(r.pot, n);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, c), TFMM_OK, "%s: %s", label,
               tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_compute(s, n, pos, mass, r.acc, r.pot), TFMM_OK,
               "%s: %s", label, tfmm_solver_message(s));
  r.stats = *tfmm_solver_stats(s);
  tfmm_solver_destroy(s);
  return r;
}

static void result_free(result *r) {
  free(r->acc);
  free(r->pot);
}

static double norm3(const double *a) {
  return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

/* gpu against hybrid for one configuration (double precision). */
static void check_config(tfmm_config c, size_t n, const double *pos,
                         const double *mass, const char *label) {
  c.device = TFMM_DEVICE_GPU;
  c.precision = TFMM_PRECISION_DOUBLE;
  c.schedule = TFMM_SCHEDULE_GPU;
  result g = compute(&c, n, pos, mass, label);
  c.schedule = TFMM_SCHEDULE_HYBRID;
  result h = compute(&c, n, pos, mass, label);
  cr_assert_eq(g.stats.schedule, TFMM_SCHEDULE_GPU, "%s", label);
  cr_assert_eq(h.stats.schedule, TFMM_SCHEDULE_HYBRID, "%s", label);
  cr_assert(g.stats.tree_device == TFMM_DEVICE_GPU &&
                g.stats.lists_device == TFMM_DEVICE_GPU &&
                g.stats.near_device == TFMM_DEVICE_GPU &&
                g.stats.far_device == TFMM_DEVICE_GPU,
            "%s: a gpu stage not reported on the gpu", label);
  cr_assert_eq(h.stats.lists_device, TFMM_DEVICE_CPU, "%s", label);
  cr_assert(g.stats.tree_cells == h.stats.tree_cells &&
                g.stats.tree_leaves == h.stats.tree_leaves &&
                g.stats.tree_depth == h.stats.tree_depth &&
                g.stats.leaf_min == h.stats.leaf_min &&
                g.stats.leaf_max == h.stats.leaf_max,
            "%s: trees differ: %lld/%lld cells, %lld/%lld leaves, leaves of "
            "%lld-%lld / %lld-%lld",
            label, (long long)g.stats.tree_cells, (long long)h.stats.tree_cells,
            (long long)g.stats.tree_leaves, (long long)h.stats.tree_leaves,
            (long long)g.stats.leaf_min, (long long)g.stats.leaf_max,
            (long long)h.stats.leaf_min, (long long)h.stats.leaf_max);
  cr_assert_eq(g.stats.interactions, h.stats.interactions,
               "%s: near pairs %.17g, hybrid %.17g", label,
               g.stats.interactions, h.stats.interactions);
  cr_assert_eq(g.stats.m2l, h.stats.m2l, "%s: M2L %.17g, hybrid %.17g", label,
               g.stats.m2l, h.stats.m2l);
  cr_assert_eq(g.stats.m2p, h.stats.m2p, "%s: M2P %.17g, hybrid %.17g", label,
               g.stats.m2p, h.stats.m2p);
  double amax = 0, pmax = 0;
  for (size_t i = 0; i < n; i++) {
    amax = fmax(amax, norm3(h.acc + 3 * i));
    pmax = fmax(pmax, fabs(h.pot[i]));
  }
  for (size_t i = 0; i < n; i++) {
    double d[3];
    for (int k = 0; k < 3; k++)
      d[k] = g.acc[3 * i + k] - h.acc[3 * i + k];
    const double an = norm3(h.acc + 3 * i);
    cr_assert(norm3(d) <= 1e-10 * an + 1e-13 * amax,
              "%s: body %zu: |a_gpu - a_hybrid| %.3g, |a| %.3g", label, i,
              norm3(d), an);
    cr_assert(fabs(g.pot[i] - h.pot[i]) <=
                  1e-10 * fabs(h.pot[i]) + 1e-13 * pmax,
              "%s: body %zu: potential %.17g, hybrid %.17g", label, i, g.pot[i],
              h.pot[i]);
  }
  result_free(&g);
  result_free(&h);
}

Test(schedule_gpu, matches_hybrid) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  const size_t n = 20000;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass);
  cr_assert(pos && vel && mass);
  cr_assert_eq(tfmm_ic_plummer(n, seed, pos, vel, mass), TFMM_OK);
  test_bodies cl = test_bodies_make(12000, TEST_CLUSTERED, seed + 1);
  const struct {
    tfmm_method method;
    tfmm_mac_kind mac;
    double eps;
    tfmm_softening soft;
    int near_only;
  } cases[] = {
      {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0, TFMM_SOFTENING_SPLINE, 0},
      {TFMM_METHOD_FMM, TFMM_MAC_MASS, 0.01, TFMM_SOFTENING_PLUMMER, 0},
      {TFMM_METHOD_FMM, TFMM_MAC_ERROR, 0.01, TFMM_SOFTENING_PLUMMER, 0},
      {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.02, TFMM_SOFTENING_SPLINE, 1},
      {TFMM_METHOD_BH, TFMM_MAC_GEOMETRIC, 0, TFMM_SOFTENING_SPLINE, 0},
      {TFMM_METHOD_BH, TFMM_MAC_ERROR, 0.005, TFMM_SOFTENING_SPLINE, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (int input = 0; input < 2; input++) {
      tfmm_config c;
      tfmm_config_defaults(&c);
      c.method = cases[k].method;
      c.mac = cases[k].mac;
      c.eps = cases[k].eps;
      c.softening = cases[k].soft;
      c.near_only = cases[k].near_only;
      c.accuracy = 1e-5;
      if (c.method == TFMM_METHOD_BH && c.mac == TFMM_MAC_ERROR) {
        /* Calibrated for the FMM only: given by hand. */
        c.theta = 0.6;
        c.order = 4;
        c.mac_epsilon = 1e-4;
      }
      c.leaf_size = input == 0 ? 64 : 16;
      char label[160];
      snprintf(label, sizeof label, "seed %llu %s %s %s eps %g%s leaf %d",
               (unsigned long long)seed, input == 0 ? "plummer" : "clustered",
               tfmm_method_name(c.method), tfmm_mac_name(c.mac), c.eps,
               c.near_only ? " near_only" : "", c.leaf_size);
      if (input == 0)
        check_config(c, n, pos, mass, label);
      else
        check_config(c, cl.n, cl.pos, cl.mass, label);
    }
  test_bodies_free(&cl);
  free(pos);
  free(vel);
  free(mass);
}

/* The same input twice: the same bits. One solver over N = 30000, 3000,
 * 60000, 3000: each result the bits of a fresh solver's. */
Test(schedule_gpu, deterministic_and_reused) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  /* Two calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  tfmm_solver *kept = NULL;
  cr_assert_eq(tfmm_solver_create(&kept, &c), TFMM_OK);
  const size_t sizes[] = {30000, 3000, 60000, 3000};
  for (int k = 0; k < 4; k++) {
    const size_t n = sizes[k];
    test_bodies b = test_bodies_make(n, k % 2 ? TEST_UNIFORM : TEST_CLUSTERED,
                                     seed + (uint64_t)k);
    double *a1 = malloc(3 * n * sizeof *a1), *p1 = malloc(n * sizeof *p1);
    double *a2 = malloc(3 * n * sizeof *a2), *p2 = malloc(n * sizeof *p2);
    cr_assert(a1 && p1 && a2 && p2);
    cr_assert_eq(tfmm_solver_compute(kept, n, b.pos, b.mass, a1, p1), TFMM_OK,
                 "%s", tfmm_solver_message(kept));
    cr_assert_eq(tfmm_solver_stats(kept)->schedule, TFMM_SCHEDULE_GPU);
    cr_assert_eq(tfmm_solver_compute(kept, n, b.pos, b.mass, a2, p2), TFMM_OK);
    cr_assert(memcmp(a1, a2, 3 * n * sizeof *a1) == 0 &&
                  memcmp(p1, p2, n * sizeof *p1) == 0,
              "seed %llu n %zu: two runs differ", (unsigned long long)seed, n);
    result fresh = compute(&c, n, b.pos, b.mass, "fresh");
    cr_assert(memcmp(a1, fresh.acc, 3 * n * sizeof *a1) == 0 &&
                  memcmp(p1, fresh.pot, n * sizeof *p1) == 0,
              "seed %llu n %zu: the reused solver differs from a fresh one",
              (unsigned long long)seed, n);
    result_free(&fresh);
    free(a1), free(p1), free(a2), free(p2);
    test_bodies_free(&b);
  }
  tfmm_solver_destroy(kept);
}

/* eps = 0 with two bodies at one point: an error naming both, as the
 * hybrid schedule names them; and the results of a clean input after it. */
Test(schedule_gpu, coincident_bodies_named) {
  test_require_gpu();
  test_bodies b = test_bodies_make(9000, TEST_UNIFORM, test_fresh_seed());
  for (int d = 0; d < 3; d++)
    b.pos[3 * 7001 + d] = b.pos[3 * 123 + d];
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.eps = 0;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double *acc = malloc(3 * b.n * sizeof *acc);
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, NULL),
               TFMM_ERR_COINCIDENT, "%s", tfmm_solver_message(s));
  cr_assert(strstr(tfmm_solver_message(s), "bodies 123 and 7001") != NULL, "%s",
            tfmm_solver_message(s));
  b.pos[3 * 7001] += 1e-3;
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  cr_assert_eq(test_first_nonfinite(acc, 3 * b.n), 3 * b.n);
  free(acc);
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
}

/* A tree with far more cells than the gpu schedule gives room for at
 * first (pairs of bodies 1e-6 apart, leaves of one body: a chain of
 * single-child cells down to each pair's split) is built again with the
 * bound that always holds, and its forces are hybrid's. */
Test(schedule_gpu, deep_tree_beyond_the_usual_room) {
  test_require_gpu();
  enum { PAIRS = 4096, N = 2 * PAIRS, LEAF = 1 };
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  static double pos[3 * N], mass[N];
  for (size_t k = 0; k < PAIRS; k++)
    for (int d = 0; d < 3; d++) {
      pos[6 * k + d] = test_uniform(&rng) - 0.5;
      pos[6 * k + 3 + d] = pos[6 * k + d] + (d == 0 ? 1e-6 : 0.0);
    }
  for (size_t i = 0; i < N; i++)
    mass[i] = 0.5 + test_uniform(&rng);
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.leaf_size = LEAF;
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.theta = 0.5;
  c.order = 4;
  char label[96];
  snprintf(label, sizeof label, "pairs 1e-6 apart, seed %llu",
           (unsigned long long)seed);
  result g = compute(&c, N, pos, mass, label);
  const long long usual = 1 + 8 * (N / (LEAF + 1) + 1) + 8 * 22;
  cr_assert(g.stats.tree_cells > usual,
            "%s: %lld cells, within the usual room of %lld: the test does "
            "not reach the rebuild",
            label, (long long)g.stats.tree_cells, usual);
  result_free(&g);
  check_config(c, N, pos, mass, label);
}

/* Bodies that share the finest key without sharing a point are computed
 * (the device decides so, without the CPU's search); a pair at one point
 * among them is named, found by the device within its look-back or left
 * to the CPU's search past it (a run of 100 equal keys). */
Test(schedule_gpu, shared_keys_apart_computed_together_named) {
  test_require_gpu();
  test_bodies b = test_bodies_make(9000, TEST_UNIFORM, test_fresh_seed());
  enum { FIRST = 200, RUN = 100 };
  for (int k = 1; k < RUN; k++)
    for (int d = 0; d < 3; d++)
      b.pos[3 * (FIRST + k) + d] =
          b.pos[3 * FIRST + d] + (d == 0 ? 1e-11 * k : 0.0);
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.eps = 0;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double *acc = malloc(3 * b.n * sizeof *acc);
  test_poison(acc, 3 * b.n);
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  cr_assert_eq(test_first_nonfinite(acc, 3 * b.n), 3 * b.n);
  const int partner[] = {FIRST + 10, FIRST + RUN - 1};
  for (int k = 0; k < 2; k++) {
    double saved[3];
    for (int d = 0; d < 3; d++) {
      saved[d] = b.pos[3 * partner[k] + d];
      b.pos[3 * partner[k] + d] = b.pos[3 * FIRST + d];
    }
    cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, NULL),
                 TFMM_ERR_COINCIDENT, "%s", tfmm_solver_message(s));
    char want[64];
    snprintf(want, sizeof want, "bodies %d and %d", FIRST, partner[k]);
    cr_assert(strstr(tfmm_solver_message(s), want) != NULL, "%s: %s", want,
              tfmm_solver_message(s));
    for (int d = 0; d < 3; d++)
      b.pos[3 * partner[k] + d] = saved[d];
  }
  free(acc);
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
}

/* Lists of more entries than a list may hold (at 10^6 bodies Plummer
 * softening at the system's scale makes 2.9e9, past 2^31 - 1; here the cap
 * is lowered to a third of the M2L list's entries at leaf 16 to reach it
 * at 20,000): the evaluation raises its leaf size until the lists fit,
 * says so in stats.plan, keeps it for the next evaluation, and computes
 * the very bits a solver given that leaf size computes. A cap no leaf
 * size can meet is an error naming the entries. */
Test(schedule_gpu, lists_past_their_cap_raise_the_leaf) {
  test_require_gpu();
  const size_t n = 20000;
  test_bodies b = test_bodies_make(n, TEST_UNIFORM, 29);
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.eps = 0;
  c.theta = 0.5;
  c.order = 6;
  c.leaf_size = 16;
  double *acc = malloc(3 * n * sizeof *acc),
         *fresh = malloc(3 * n * sizeof *fresh);
  cr_assert(acc && fresh);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  const double m2l = tfmm_solver_stats(s)->m2l;
  cr_assert_eq(tfmm_solver_stats(s)->leaf_size, 16);
  cr_assert_gt(m2l, 3000);
  tfmm_solver_set_list_cap(s, (int64_t)(m2l / 3));
  test_poison(acc, 3 * n);
  cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  const tfmm_stats *st = tfmm_solver_stats(s);
  const int raised = st->leaf_size;
  cr_assert_gt(raised, 16);
  cr_assert_leq(st->m2l, m2l / 3);
  cr_assert(strstr(st->plan, "leaf size raised from 16") != NULL, "%s",
            st->plan);
  /* A solver given that leaf size: the same bits. */
  c.leaf_size = raised;
  tfmm_solver *f = NULL;
  cr_assert_eq(tfmm_solver_create(&f, &c), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(f, n, b.pos, b.mass, fresh, NULL), TFMM_OK,
               "%s", tfmm_solver_message(f));
  cr_assert_eq(memcmp(acc, fresh, 3 * n * sizeof *acc), 0,
               "leaf %d raised differs from leaf %d given", raised, raised);
  tfmm_solver_destroy(f);
  /* The next evaluation starts from the raised leaf size. */
  cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_stats(s)->leaf_size, raised);
  /* No leaf size holds a list of one entry. */
  tfmm_solver_set_list_cap(s, 1);
  cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, NULL),
               TFMM_ERR_UNSUPPORTED);
  cr_assert(strstr(tfmm_solver_message(s), "list entries") != NULL, "%s",
            tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  free(acc);
  free(fresh);
  test_bodies_free(&b);
}

/* Refusals that need no GPU run anyway: schedule gpu with the solver on
 * the CPU, or with the tree or far field put on the CPU. */
Test(schedule_gpu, refused_where_it_cannot_run) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.schedule = TFMM_SCHEDULE_GPU;
  c.device = TFMM_DEVICE_CPU;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tfmm_solver_message(s), "schedule gpu needs") != NULL, "%s",
            tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  c.device = TFMM_DEVICE_AUTO;
  c.tree_device = TFMM_DEVICE_CPU;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tfmm_solver_message(s), "tree_device") != NULL, "%s",
            tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  c.tree_device = TFMM_DEVICE_AUTO;
  c.schedule = (tfmm_schedule_kind)7;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tfmm_solver_message(s), "schedule 7") != NULL, "%s",
            tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  tfmm_schedule_kind k;
  cr_assert_eq(tfmm_schedule_parse("gpu", &k), TFMM_OK);
  cr_assert_eq(k, TFMM_SCHEDULE_GPU);
  cr_assert_str_eq(tfmm_schedule_name(TFMM_SCHEDULE_HYBRID), "hybrid");
  cr_assert_eq(tfmm_schedule_parse("cpu", &k), TFMM_ERR_INVALID_ARGUMENT);
  if (tfmm_gpu_count() == 0) {
    c.schedule = TFMM_SCHEDULE_GPU;
    c.device = TFMM_DEVICE_AUTO;
    s = NULL;
    tfmm_status st = tfmm_solver_create(&s, &c);
    cr_assert_eq(st, TFMM_ERR_NO_DEVICE, "%s", tfmm_status_name(st));
    tfmm_solver_destroy(s);
  }
}
