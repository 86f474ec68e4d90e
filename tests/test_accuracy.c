/* tfmm_config.accuracy keeps its promise: on fresh inputs (seeds drawn
 * now, not the calibration's; replay one with TFMM_TEST_SEED), the 99th
 * percentile of the per-body relative acceleration error against the
 * double-precision reference is at most the target, for both tree methods,
 * both softening kernels and eps from 0 to a tenth of the densest
 * structure's size. Also: with theta and order fixed the error falls with
 * the order down to the precision floor; and the far field's softening
 * separation is what keeps softened inputs accurate (without it the same
 * check fails).
 *
 * Built twice: test_accuracy runs the solver on the CPU; test_accuracy_gpu
 * (TFMM_ACCURACY_GPU) runs the same checks with the solver on the GPU
 * under the gpu schedule (every stage there), and skips without a GPU;
 * the checks that assemble the CPU's stages by hand run in the first
 * only. */
#include "farfield/expansion.h"
#include "farfield/passes.h"
#include "nearfield/p2p_cpu.h"
#include "sample_quantile.h"
#include "testutil.h"
#include "tree/accel_estimate.h"
#include "tree/lists.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

/* The calibration's inputs (bench/calibrate_accuracy.c), drawn afresh. */
typedef enum input_kind {
  IN_PLUMMER,
  IN_HERNQUIST,
  IN_UNIFORM,
  IN_CLUSTERS, /* two tight clusters on a sparse background */
  IN_LINE_PILE /* a line of bodies and a pile of coincident ones */
} input_kind;

static const char *const INPUT_NAME[] = {"plummer", "hernquist", "uniform",
                                         "clusters", "line+pile"};

/* A tenth of each input's densest structure: Plummer's scale length
 * 3 pi / 16, Hernquist's a = 1/3, the sphere's radius 6/5 over its 10
 * bodies per radius at these N, the clusters' scale 0.01, the pile's
 * distance from the line (0.1) over 10. */
static const double EPS_MAX[] = {0.059, 0.033, 0.012, 1e-3, 1e-3};

typedef struct problem {
  input_kind kind;
  uint64_t seed;
  size_t n;
  double *pos, *mass;
  double eps;
  tfmm_softening softening;
  size_t k;       /* bodies checked: all, or a sample */
  size_t *idx;    /* their indices */
  double *truth;  /* 3k reference accelerations */
  double *acc;    /* 3n: the method's */
  double *errors; /* k: scratch */
} problem;

static double gaussian(test_rng *r) {
  double u = test_uniform(r), v = test_uniform(r);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

static void make_bodies(problem *p) {
  size_t n = p->n;
  p->pos = malloc(3 * n * sizeof *p->pos);
  p->mass = malloc(n * sizeof *p->mass);
  double *vel = malloc(3 * n * sizeof *vel);
  test_rng r = {p->seed};
  tfmm_status st = TFMM_OK;
  if (p->kind == IN_PLUMMER)
    st = tfmm_ic_plummer(n, p->seed, p->pos, vel, p->mass);
  else if (p->kind == IN_HERNQUIST)
    st = tfmm_ic_hernquist(n, p->seed, p->pos, vel, p->mass);
  else if (p->kind == IN_UNIFORM)
    st = tfmm_ic_uniform(n, p->seed, p->pos, vel, p->mass);
  else if (p->kind == IN_CLUSTERS) {
    /* 40% in each cluster (Gaussian, scale 0.01) 1 apart, 20% uniform in
     * a cube of side 10. */
    for (size_t i = 0; i < n; i++) {
      p->mass[i] = 1.0 / (double)n;
      double u = test_uniform(&r);
      for (int d = 0; d < 3; d++)
        p->pos[3 * i + d] = u < 0.2 ? 10 * (test_uniform(&r) - 0.5)
                                    : (d == 0 ? (u < 0.6 ? -0.5 : 0.5) : 0) +
                                          0.01 * gaussian(&r);
    }
  } else {
    /* 90% at random x in [-1, 1] on the x axis; 10% at (0.25, 0.1, 0),
     * coincident when softened, else spread over 1e-6. */
    double spread = p->eps > 0 ? 0 : 1e-6;
    for (size_t i = 0; i < n; i++) {
      p->mass[i] = 1.0 / (double)n;
      int pile = i >= n - n / 10;
      p->pos[3 * i] =
          pile ? 0.25 + spread * gaussian(&r) : 2 * test_uniform(&r) - 1;
      p->pos[3 * i + 1] = pile ? 0.1 + spread * gaussian(&r) : 0;
      p->pos[3 * i + 2] = pile ? spread * gaussian(&r) : 0;
    }
  }
  free(vel);
  cr_assert_eq(st, TFMM_OK);
}

/* Every body when n <= 5000, else `sample` random ones and the n / 1000
 * farthest from the origin (the sparse outskirts). */
static void choose_sample(problem *p, size_t sample) {
  size_t n = p->n;
  p->k = n <= 5000 ? n : sample + n / 1000;
  p->idx = malloc(p->k * sizeof *p->idx);
  if (p->k == n) {
    for (size_t i = 0; i < n; i++)
      p->idx[i] = i;
    return;
  }
  size_t far = n / 1000, have = 0;
  /* Squared radii; a chosen body's is set to -1. Repeated maxima are
   * O(n far), and far is small. */
  double *sorted = malloc(n * sizeof *sorted);
  for (size_t i = 0; i < n; i++) {
    const double *x = p->pos + 3 * i;
    sorted[i] = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
  }
  for (size_t f = 0; f < far; f++) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
      if (sorted[i] > sorted[best])
        best = i;
    p->idx[have++] = best;
    sorted[best] = -1;
  }
  test_rng g = {p->seed ^ 0x5A4D504C45ull};
  while (have < p->k) {
    size_t i = (size_t)(test_uniform(&g) * (double)n);
    if (sorted[i] >= 0) {
      p->idx[have++] = i;
      sorted[i] = -1;
    }
  }
  free(sorted);
}

#if TFMM_ACCURACY_GPU
#define BEGIN() test_require_gpu()
#else
#define BEGIN() ((void)0)
#endif

static tfmm_config config(tfmm_method m, const problem *p, double tol,
                          tfmm_precision prec) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = m;
  c.device = TFMM_DEVICE_CPU;
#if TFMM_ACCURACY_GPU
  if (m != TFMM_METHOD_REFERENCE) {
    c.device = TFMM_DEVICE_GPU;
    c.schedule = TFMM_SCHEDULE_GPU;
  }
#endif
  c.eps = p->eps;
  c.softening = p->softening;
  c.accuracy = tol;
  c.precision = prec;
  return c;
}

/* The reference at the checked bodies, with p's eps and kernel. */
static void compute_truth(problem *p) {
  tfmm_config c = config(TFMM_METHOD_REFERENCE, p, 1e-3, TFMM_PRECISION_DOUBLE);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  cr_assert_eq(tfmm_solver_reference_at(s, p->n, p->pos, p->mass, p->k, p->idx,
                                        p->truth, NULL),
               TFMM_OK, "seed %llu: %s", (unsigned long long)p->seed,
               tfmm_solver_message(s));
  tfmm_solver_destroy(s);
}

static problem make_problem(input_kind kind, size_t n, double eps,
                            tfmm_softening soft, uint64_t seed) {
  problem p = {
      .kind = kind, .seed = seed, .n = n, .eps = eps, .softening = soft};
  make_bodies(&p);
  choose_sample(&p, 1500);
  p.truth = malloc(3 * p.k * sizeof *p.truth);
  p.acc = malloc(3 * n * sizeof *p.acc);
  p.errors = malloc(p.k * sizeof *p.errors);
  compute_truth(&p);
  return p;
}

static void free_problem(problem *p) {
  free(p->pos);
  free(p->mass);
  free(p->idx);
  free(p->truth);
  free(p->acc);
  free(p->errors);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* |a - a_true| / |a_true| of p->acc at the checked bodies, in their order
 * (NaN as the worst). */
static void errors_of(problem *p) {
  for (size_t s = 0; s < p->k; s++) {
    const double *a = p->acc + 3 * p->idx[s], *t = p->truth + 3 * s;
    double num = 0, den = 0;
    for (int d = 0; d < 3; d++) {
      num += (a[d] - t[d]) * (a[d] - t[d]);
      den += t[d] * t[d];
    }
    p->errors[s] = den > 0 ? sqrt(num / den) : sqrt(num);
    if (isnan(p->errors[s]))
      p->errors[s] = INFINITY;
  }
}

/* The 99th percentile (nearest rank) of |a - a_true| / |a_true| over the
 * checked bodies, of p->acc: over all n bodies a fact, over a sample an
 * estimate that the checks against a target do not use (judged()). */
static double p99(problem *p) {
  errors_of(p);
  qsort(p->errors, p->k, sizeof *p->errors, cmp_double);
  return p->errors[(size_t)ceil(0.99 * (double)p->k) - 1];
}

/* The error to hold against tol, the target for the 99th percentile over
 * all n bodies (at most n / 100 above it). Every body checked: the p99.
 * A sample (choose_sample): the n / 1000 outskirts, all checked, account
 * for f_out of those n / 100; the rest of the sample, drawn at random from
 * the other bodies, may then have at most the count that a fraction
 * (n / 100 - f_out) / (n - n / 1000) above tol gives but for a chance of
 * SAMPLE_FALSE_FAILURE (sample_quantile.h): the sampled errors' own 99th
 * percentile would fail a solver that keeps its promise by chance. The
 * (allowed + 1)-th largest of them is returned: <= tol if and only if the
 * sample is within the allowance. */
static double judged(problem *p, double tol) {
  if (p->k == p->n)
    return p99(p);
  errors_of(p);
  const size_t far = p->n / 1000, k = p->k - far;
  size_t out = 0;
  for (size_t s = 0; s < far; s++)
    out += p->errors[s] > tol;
  /* > 0: the outskirts are a tenth of the n / 100. */
  const double above =
      (0.01 * (double)p->n - (double)out) / (double)(p->n - far);
  double *rest = p->errors + far;
  qsort(rest, k, sizeof *rest, cmp_double);
  const size_t allowed =
      sample_allowed_above(p->n - far, k, 1 - above, SAMPLE_FALSE_FAILURE);
  cr_assert_lt(allowed, k, "%zu sampled bodies cannot judge a p99", k);
  return sample_judged(rest, p->n - far, k, 1 - above, SAMPLE_FALSE_FAILURE);
}

/* Runs c on p (outputs poisoned first) and returns the p99; the settings
 * used in *theta, *order. */
/* The solver's own account of its choice, for the log. */
static char last_plan[sizeof(((tfmm_stats *)0)->plan)];

static double run(problem *p, const tfmm_config *c, double *theta, int *order) {
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, c), TFMM_OK, "%s",
               tfmm_solver_message(s));
  test_poison(p->acc, 3 * p->n);
  cr_assert_eq(tfmm_solver_compute(s, p->n, p->pos, p->mass, p->acc, NULL),
               TFMM_OK, "seed %llu: %s", (unsigned long long)p->seed,
               tfmm_solver_message(s));
  cr_assert_eq(test_first_nonfinite(p->acc, 3 * p->n), 3 * p->n);
#if TFMM_ACCURACY_GPU
  cr_assert_eq(tfmm_solver_stats(s)->schedule, TFMM_SCHEDULE_GPU);
  cr_assert_eq(tfmm_solver_stats(s)->lists_device, TFMM_DEVICE_GPU);
#endif
  *theta = tfmm_solver_stats(s)->theta;
  *order = tfmm_solver_stats(s)->order;
  snprintf(last_plan, sizeof last_plan, "%s", tfmm_solver_stats(s)->plan);
  tfmm_solver_destroy(s);
  return p99(p);
}

/* The targets: 1e-8 in double, the rest at the default precision. */
static const double TOLS[] = {1e-2, 1e-3, 1e-4, 1e-6, 1e-8};

/* Every target, both methods, on p; each case is checked (cr_expect: all
 * cases run and every miss is reported) and logged. */
static void check_targets(problem *p, int ntols) {
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++)
    for (int t = 0; t < ntols; t++) {
      /* What a user gets: auto (single down to 3e-4, double below), and
       * double asked for explicitly at 1e-8. */
      tfmm_precision prec =
          TOLS[t] < 1e-6 ? TFMM_PRECISION_DOUBLE : TFMM_PRECISION_AUTO;
      tfmm_config c = config((tfmm_method)m, p, TOLS[t], prec);
      double theta;
      int order;
      const double sample_p99 = run(p, &c, &theta, &order);
      const double e = judged(p, TOLS[t]);
      char what[256];
      snprintf(what, sizeof what,
               "seed %llu %s n=%zu eps=%g %s %s TOL %g (%s): theta %.2f p %d",
               (unsigned long long)p->seed, INPUT_NAME[p->kind], p->n, p->eps,
               p->eps > 0 ? tfmm_softening_name(p->softening) : "newton",
               tfmm_method_name((tfmm_method)m), TOLS[t],
               tfmm_precision_name(prec), theta, order);
      cr_log_info("%s: p99 %.3g over %zu bodies, judged %.3g; plan: %s", what,
                  sample_p99, p->k, e, last_plan);
      cr_expect_leq(e, TOLS[t],
                    "%s: judged %.3g > TOL (%zu of %zu bodies); plan: %s", what,
                    e, p->k, p->n, last_plan);
    }
}

/* One input at n bodies: without softening, and with each kernel at eps
 * a tenth of the densest structure, and the spline at a hundredth. */
static void check_input(input_kind kind, size_t n, int ntols) {
  uint64_t seed = test_fresh_seed();
  const struct {
    double eps;
    tfmm_softening soft;
  } cases[] = {{0, TFMM_SOFTENING_SPLINE},
               {EPS_MAX[kind], TFMM_SOFTENING_PLUMMER},
               {EPS_MAX[kind], TFMM_SOFTENING_SPLINE},
               {EPS_MAX[kind] / 10, TFMM_SOFTENING_SPLINE}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    problem p = make_problem(kind, n, cases[k].eps, cases[k].soft, seed + k);
    check_targets(&p, ntols);
    free_problem(&p);
  }
}

Test(accuracy, plummer_1000, .timeout = 300) {
  BEGIN();
  check_input(IN_PLUMMER, 1000, 5);
}
Test(accuracy, hernquist_3000, .timeout = 300) {
  BEGIN();
  check_input(IN_HERNQUIST, 3000, 5);
}
Test(accuracy, uniform_2000, .timeout = 300) {
  BEGIN();
  check_input(IN_UNIFORM, 2000, 5);
}
Test(accuracy, clusters_4000, .timeout = 300) {
  BEGIN();
  check_input(IN_CLUSTERS, 4000, 5);
}
Test(accuracy, line_pile_3000, .timeout = 300) {
  BEGIN();
  check_input(IN_LINE_PILE, 3000, 5);
}

/* Larger N with a sampled reference: the halo and the clusters, targets
 * down to 1e-4. */
Test(accuracy, hernquist_30000_sampled, .timeout = 300) {
  BEGIN();
  problem p = make_problem(IN_HERNQUIST, 30000, 0, TFMM_SOFTENING_SPLINE,
                           test_fresh_seed());
  check_targets(&p, 3);
  free_problem(&p);
}
Test(accuracy, clusters_30000_spline_sampled, .timeout = 300) {
  BEGIN();
  problem p = make_problem(IN_CLUSTERS, 30000, EPS_MAX[IN_CLUSTERS],
                           TFMM_SOFTENING_SPLINE, test_fresh_seed());
  check_targets(&p, 3);
  free_problem(&p);
}
/* The largest N: the default target only. */
/* A guard against a hang, not a speed test: about 70 s alone on 2 cores,
 * 220-300 s when the 2 cores are shared (CI's ctest -j2 beside the Python
 * suites' pip installs), where 300 s cut it off. ASan/UBSan builds
 * (scripts/sanitize) run it about three times slower. */
#ifdef __SANITIZE_ADDRESS__
#define SLOW_TIMEOUT 1800
#else
#define SLOW_TIMEOUT 900
#endif
Test(accuracy, plummer_200000_sampled, .timeout = SLOW_TIMEOUT) {
  BEGIN();
  problem p = make_problem(IN_PLUMMER, 200000, 0, TFMM_SOFTENING_SPLINE,
                           test_fresh_seed());
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
    tfmm_config c = config((tfmm_method)m, &p, 1e-3, TFMM_PRECISION_SINGLE);
    double theta;
    int order;
    const double sample_p99 = run(&p, &c, &theta, &order);
    const double e = judged(&p, 1e-3);
    cr_log_info("seed %llu plummer n=200000 %s TOL 1e-3: theta %.2f p %d: "
                "p99 %.3g over the %zu sampled, judged %.3g",
                (unsigned long long)p.seed, tfmm_method_name((tfmm_method)m),
                theta, order, sample_p99, p.k, e);
    cr_expect_leq(e, 1e-3, "seed %llu plummer n=200000 %s: judged %.3g > 1e-3",
                  (unsigned long long)p.seed, tfmm_method_name((tfmm_method)m),
                  e);
  }
  free_problem(&p);
}

/* theta and order fixed: the error falls with the order (never rising by
 * more than RISE from one order to the next: Barnes-Hut's odd orders gain
 * little over the even ones below them) until the precision's floor, and
 * falls by more than 1e4 in all. */
static void check_falls(tfmm_method m, tfmm_precision prec, double floor) {
  const double RISE = 1.5;
  problem p = make_problem(IN_PLUMMER, 4000, 0, TFMM_SOFTENING_SPLINE,
                           test_fresh_seed());
  double first = 0, last = INFINITY;
  for (int order = 1; order <= 14; order++) {
    tfmm_config c = config(m, &p, 1e-3, prec);
    c.theta = 0.5;
    c.order = order;
    double theta;
    int used;
    double e = run(&p, &c, &theta, &used);
    cr_log_info("seed %llu %s %s p %d: p99 %.3g", (unsigned long long)p.seed,
                tfmm_method_name(m), tfmm_precision_name(prec), order, e);
    if (order == 1)
      first = e;
    if (last > floor)
      cr_expect_leq(e, RISE * last, "seed %llu %s p %d: p99 %.3g after %.3g",
                    (unsigned long long)p.seed, tfmm_method_name(m), order, e,
                    last);
    last = e < last ? e : last;
  }
  cr_expect_lt(last, first * 1e-4, "seed %llu %s: p99 %.3g at p 1, %.3g best",
               (unsigned long long)p.seed, tfmm_method_name(m), first, last);
  free_problem(&p);
}

Test(accuracy, error_falls_with_order_double, .timeout = 300) {
  BEGIN();
  check_falls(TFMM_METHOD_FMM, TFMM_PRECISION_DOUBLE, 1e-12);
  check_falls(TFMM_METHOD_BH, TFMM_PRECISION_DOUBLE, 1e-12);
}
Test(accuracy, error_falls_with_order_single, .timeout = 300) {
  BEGIN();
  check_falls(TFMM_METHOD_FMM, TFMM_PRECISION_SINGLE, 1e-6);
}

#if !TFMM_ACCURACY_GPU
/* The tree method's stages assembled by hand (as src/hierarchical.c does
 * on the CPU), with the opening criterion given (with the error
 * criterion's accelerations estimated here when mac.epsilon > 0):
 * accelerations of p's bodies into p->acc. */
static void staged_forces(problem *p, tfmm_method m, int order, tfmm_mac mac) {
  tfmm_error err = {{0}};
  tfmm_octree t;
  memset(&t, 0, sizeof t);
  cr_assert_eq(tfmm_octree_build(&t, p->n, p->pos, p->mass, 64, 21, &err),
               TFMM_OK, "%s", err.message);
  double *accel = NULL;
  if (mac.epsilon > 0) {
    cr_assert_not_null(accel = tfmm_accel_estimate(&t, p->eps));
    mac.accel = accel;
    mac.order = order;
  }
  tfmm_lists l;
  cr_assert_eq(m == TFMM_METHOD_FMM
                   ? tfmm_lists_build_fmm(&t, &mac, 1, &l, &err)
                   : tfmm_lists_build_bh(&t, &mac, &l, &err),
               TFMM_OK, "%s", err.message);
  size_t size = tfmm_expansion_size(order), cells = (size_t)t.ncells;
  double *M = malloc(cells * size * sizeof *M);
  double *L = malloc(cells * size * sizeof *L);
  double *phi = calloc(p->n, sizeof *phi), *g = calloc(3 * p->n, sizeof *g);
  double *na = malloc(3 * p->n * sizeof *na), *np = malloc(p->n * sizeof *np);
  tfmm_upward_pass(&t, order, M);
  if (m == TFMM_METHOD_FMM) {
    tfmm_m2l_pass(&t, &l.m2l, order, M, L);
    tfmm_downward_pass(&t, order, L, phi, g);
  }
  tfmm_m2p_pass(&t, &l.m2p, order, M, phi, g);
  const tfmm_pair_params pair = {p->softening, p->eps, TFMM_PRECISION_DOUBLE};
  cr_assert_eq(tfmm_p2p_cpu(&t, &l.near, &pair, na, np, &err), TFMM_OK);
  for (size_t k = 0; k < p->n; k++)
    for (int d = 0; d < 3; d++)
      p->acc[3 * t.order[k] + d] = g[3 * k + d] + na[3 * k + d];
  free(M), free(L), free(phi), free(g), free(na), free(np), free(accel);
  tfmm_lists_free(&l);
  tfmm_octree_free(&t);
}

/* Clusters softened at their own scale (0.01, as a simulation resolving
 * them no further would): with the separation the settings for TOL meet
 * it; with the separation set to 0 (cells within the softening's reach
 * taken by the Newtonian expansions) the same settings miss it: the
 * accuracy check can fail, and the separation is what passes it. (At a
 * tenth of that eps the opening angle alone keeps most such pairs apart.) */
static void check_separation_matters(tfmm_softening soft) {
  /* 1e-4: at 1e-3 Barnes-Hut's chosen theta (0.25) keeps all but a few
   * pairs within the spline's reach apart by itself (p99 5e-4 at s = 0). */
  const double tol = 1e-4;
  /* INPUTS fresh inputs: each must meet tol with the separation; without
   * it the worst of them must miss it. (One input alone does not always
   * show it: over 17 seeds Barnes-Hut with the spline missed tol by 2.4-13x
   * at s = 0, and one seed, 6879623529255777656, met it at 5.2e-5; two were
   * not enough either: seeds 3995526081502111559 and ...560 both met it,
   * at 3.3e-5 and 6.8e-5.) */
  enum { INPUTS = 4 };
  const uint64_t seed = test_fresh_seed();
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_BH; m++) {
    double broken = 0;
    for (int k = 0; k < INPUTS; k++) {
      problem p = make_problem(IN_CLUSTERS, 4000, 0.01, soft, seed + k);
      tfmm_config c = config((tfmm_method)m, &p, tol, TFMM_PRECISION_DOUBLE);
      /* The calibration's setting (made for its worst input), not the
       * planner's first guess, which only a measurement confirms: these
       * stages are assembled by hand, unmeasured. */
      c.measure = TFMM_MEASURE_OFF;
      double theta, s;
      int order;
      cr_assert_eq(tfmm_config_resolve(&c, &theta, &order, &s, NULL, 0),
                   TFMM_OK);
      cr_assert_gt(s, 0);
      staged_forces(&p, (tfmm_method)m, order,
                    (tfmm_mac){.theta = theta, .separation = s});
      double good = p99(&p);
      staged_forces(&p, (tfmm_method)m, order, (tfmm_mac){.theta = theta});
      double without = p99(&p);
      cr_log_info("seed %llu clusters %s %s theta %.2f p %d s %.3g: p99 "
                  "%.3g, %.3g with s = 0",
                  (unsigned long long)p.seed, tfmm_softening_name(soft),
                  tfmm_method_name((tfmm_method)m), theta, order, s, good,
                  without);
      cr_expect_leq(good, tol, "seed %llu %s: p99 %.3g with the separation",
                    (unsigned long long)p.seed,
                    tfmm_method_name((tfmm_method)m), good);
      broken = without > broken ? without : broken;
      free_problem(&p);
    }
    cr_expect_gt(broken, tol,
                 "seeds %llu to %llu %s: p99 %.3g at most without the "
                 "separation: the check cannot see the softening",
                 (unsigned long long)seed,
                 (unsigned long long)seed + INPUTS - 1,
                 tfmm_method_name((tfmm_method)m), broken);
  }
}

Test(accuracy, separation_matters_spline, .timeout = 300) {
  BEGIN();
  check_separation_matters(TFMM_SOFTENING_SPLINE);
}
Test(accuracy, separation_matters_plummer, .timeout = 300) {
  BEGIN();
  check_separation_matters(TFMM_SOFTENING_PLUMMER);
}

#endif

/* ---- The error-based criterion (TFMM_MAC_ERROR) ------------------------ */

/* Targets to 1e-4 with mac = error (calibrated for fmm), on the inputs
 * where the geometric criterion is least and most accurate; its epsilon
 * chosen by the planner with theta and order, and measured. */
static void check_error_mac(input_kind kind, size_t n, double eps,
                            tfmm_softening soft) {
  problem p = make_problem(kind, n, eps, soft, test_fresh_seed());
  for (int m = TFMM_METHOD_FMM; m <= TFMM_METHOD_FMM; m++)
    for (int t = 0; t < 3; t++) {
      tfmm_config c = config((tfmm_method)m, &p, TOLS[t], TFMM_PRECISION_AUTO);
      c.mac = TFMM_MAC_ERROR;
      double theta;
      int order;
      double e = run(&p, &c, &theta, &order);
      char what[256];
      snprintf(what, sizeof what,
               "seed %llu %s n=%zu eps=%g %s %s mac error TOL %g: theta %.2f "
               "p %d",
               (unsigned long long)p.seed, INPUT_NAME[kind], n, eps,
               eps > 0 ? tfmm_softening_name(soft) : "newton",
               tfmm_method_name((tfmm_method)m), TOLS[t], theta, order);
      cr_log_info("%s: p99 %.3g; plan: %s", what, e, last_plan);
      cr_expect_leq(e, TOLS[t], "%s: p99 %.3g > TOL; plan: %s", what, e,
                    last_plan);
      /* epsilon chosen with theta and order, and measured. */
      cr_expect(strstr(last_plan, ", epsilon ") != NULL &&
                    strstr(last_plan, "measured p99") != NULL,
                "%s: the plan does not say a measured epsilon: %s", what,
                last_plan);
    }
  free_problem(&p);
}

Test(accuracy, error_mac_hernquist, .timeout = 300) {
  BEGIN();
  check_error_mac(IN_HERNQUIST, 3000, 0, TFMM_SOFTENING_SPLINE);
}
Test(accuracy, error_mac_clusters_plummer_softened, .timeout = 300) {
  BEGIN();
  check_error_mac(IN_CLUSTERS, 4000, EPS_MAX[IN_CLUSTERS],
                  TFMM_SOFTENING_PLUMMER);
}
Test(accuracy, error_mac_line_pile_spline, .timeout = 300) {
  BEGIN();
  check_error_mac(IN_LINE_PILE, 3000, EPS_MAX[IN_LINE_PILE],
                  TFMM_SOFTENING_SPLINE);
}

#if !TFMM_ACCURACY_GPU
/* With theta and order fixed, the error falls as mac_epsilon falls (by
 * 10x a step, never rising by more than 1.5x) and by more than 100x over
 * four decades. */
Test(accuracy, error_mac_falls_with_epsilon, .timeout = 300) {
  BEGIN();
  problem p = make_problem(IN_HERNQUIST, 3000, 0, TFMM_SOFTENING_SPLINE,
                           test_fresh_seed());
  double first = 0, last = 0, prev = INFINITY;
  for (double eps_mac = 1e-2; eps_mac > 1e-7; eps_mac /= 10) {
    staged_forces(&p, TFMM_METHOD_FMM, 6,
                  (tfmm_mac){.theta = 0.7, .epsilon = eps_mac});
    double e = p99(&p);
    cr_log_info("seed %llu hernquist theta 0.7 p 6 mac_epsilon %g: p99 %.3g",
                (unsigned long long)p.seed, eps_mac, e);
    cr_expect_leq(e, 1.5 * prev, "mac_epsilon %g: p99 %.3g rose from %.3g",
                  eps_mac, e, prev);
    if (first == 0)
      first = e;
    last = prev = e;
  }
  cr_expect_gt(first / last, 100, "p99 %.3g at 1e-2, %.3g at 1e-6", first,
               last);
  free_problem(&p);
}

/* Plummer softening under the error criterion has no separation: the
 * term 3 M eps^2 / (2 gap^4) in the error is what keeps the far field
 * right. Without it (soft_term 0) clusters softened at their own scale
 * miss 1e-4; with it they meet it. */
Test(accuracy, error_mac_softening_term_matters, .timeout = 300) {
  BEGIN();
  const double tol = 1e-4;
  problem p = make_problem(IN_CLUSTERS, 4000, 0.01, TFMM_SOFTENING_PLUMMER,
                           test_fresh_seed());
  tfmm_config c = config(TFMM_METHOD_FMM, &p, tol, TFMM_PRECISION_DOUBLE);
  c.mac = TFMM_MAC_ERROR;
  double theta, s;
  int order;
  cr_assert_eq(tfmm_config_resolve(&c, &theta, &order, &s, NULL, 0), TFMM_OK);
  cr_assert_eq(s, 0, "no separation under the error criterion");
  tfmm_solver *solver = NULL;
  cr_assert_eq(tfmm_solver_create(&solver, &c), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(solver, p.n, p.pos, p.mass, p.acc, NULL),
               TFMM_OK);
  /* The setting the evaluation used (its epsilon is chosen with theta
   * and order: the planner's, not tfmm_config_resolve's first guess). */
  const double eps_mac = tfmm_solver_stats(solver)->mac_epsilon;
  theta = tfmm_solver_stats(solver)->theta;
  order = tfmm_solver_stats(solver)->order;
  tfmm_solver_destroy(solver);
  cr_assert_gt(eps_mac, 0);
  const tfmm_mac with = {
      .theta = theta, .epsilon = eps_mac, .soft_term = 1.5 * p.eps * p.eps};
  tfmm_mac without = with;
  without.soft_term = 0;
  staged_forces(&p, TFMM_METHOD_FMM, order, with);
  double good = p99(&p);
  staged_forces(&p, TFMM_METHOD_FMM, order, without);
  double broken = p99(&p);
  cr_log_info("seed %llu clusters plummer eps 0.01 theta %.2f p %d "
              "mac_epsilon %g: p99 %.3g, %.3g without the softening term",
              (unsigned long long)p.seed, theta, order, eps_mac, good, broken);
  cr_expect_leq(good, tol, "p99 %.3g with the softening term", good);
  cr_expect_gt(broken, tol, "p99 %.3g without it: the check cannot see it",
               broken);
  free_problem(&p);
}
#endif
