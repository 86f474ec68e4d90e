#define _POSIX_C_SOURCE 200809L
/* The simulation's speed (issue 14): tfmm_sim with its state where the
 * solver runs (on the GPU under the gpu schedule), timed by the wall
 * clock around tfmm_sim_step / tfmm_sim_advance_to.
 *
 *   bench_sim fixed N STEPS [LEAF [THETA ORDER]]
 *     a Plummer sphere of N bodies, the fixed step 1/128, spline eps 0.01,
 *     accuracy 1e-3 (theta and order chosen from it unless given): steps
 *     per second over STEPS steps after step 0, the
 *     time of a step split into tree, lists, near, far, integrate and the
 *     rest, and one diagnostics call.
 *   bench_sim hernquist|cold|merger N T_END ETA [LEAF [THETA ORDER [EPS
 *             [DT_MAX [block]]]]]
 *     a Hernquist sphere of N bodies (or the cold collapse, which falls in
 *     t = 4.13, or the merger, first pericentre t = 10.6: systems with close
 *     encounters), spline eps 0.01 (or EPS), to T_END:
 *     block
 *     steps (ETA, dt_max DT_MAX, default 1/16, dt_min 2^-16; "block":
 *     them alone) against the fixed steps 2^-k,
 *     each with its largest |dE/E| at the multiples of 1/16 and its wall
 *     time; the fixed step that reaches the block steps' error, and the
 *     ratio of the times.
 *   bench_sim criterion N INPUT [STEPS [SAMPLE]]
 *     the opening criteria in a simulation (issue 28) on held-out INPUT 0
 *     (Plummer) or 1 (two tight clusters on a background), N bodies at
 *     rest, Plummer eps of held_out_inputs.h, accuracy 1e-3, the fixed
 *     step 1/128: the geometric criterion at the planner's setting, the
 *     error criterion with |a|_A estimated and with it from the previous
 *     step's forces. Each: two warm-up steps, then STEPS (default 4)
 *     timed; the force time per step, and the 99th percentile of the
 *     relative error over SAMPLE (default 1000) bodies against the
 *     double-precision direct sums at the last step's positions.
 *
 * Every line of results starts with "sim:" so that a device log can be
 * grepped. */
#include "held_out_inputs.h"
#include "sim/sim.h"
#include "tilefmm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wtime(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(const char *what, const tfmm_sim *sim) {
  fprintf(stderr, "bench_sim: %s: %s\n", what, tfmm_sim_message(sim));
  return 1;
}

/* theta, order: < 0 for the library's choice from the accuracy. The
 * environment's BENCH_SIM_PRECISION (single or double) sets the pairwise
 * sums' precision, else the library's choice. */
static tfmm_sim_config config(int leaf, double theta, int order, double eps) {
  tfmm_sim_config c;
  tfmm_sim_config_defaults(&c);
  const char *precision = getenv("BENCH_SIM_PRECISION");
  if (precision != NULL && strcmp(precision, "double") == 0)
    c.solver.precision = TFMM_PRECISION_DOUBLE;
  if (precision != NULL && strcmp(precision, "single") == 0)
    c.solver.precision = TFMM_PRECISION_SINGLE;
  c.solver.softening = TFMM_SOFTENING_SPLINE;
  c.solver.eps = eps;
  c.solver.leaf_size = leaf;
  /* BENCH_SIM_KEEP_TREE=0: every evaluation builds its tree (the A/B of
   * the kept tree in one binary). */
  const char *keep = getenv("BENCH_SIM_KEEP_TREE");
  if (keep != NULL)
    c.keep_tree = atoi(keep) != 0;
  if (theta > 0)
    c.solver.theta = theta;
  if (order >= 0)
    c.solver.order = order;
  return c;
}

typedef struct bodies {
  size_t n;
  double *pos, *vel, *mass;
} bodies;

/* The models of the block-step runs, by name; NULL: the fixed runs'
 * Plummer sphere. */
typedef tfmm_status (*model_fn)(size_t, uint64_t, double *, double *, double *);

static model_fn model_named(const char *name) {
  if (name == NULL)
    return tfmm_ic_plummer;
  if (strcmp(name, "hernquist") == 0)
    return tfmm_ic_hernquist;
  if (strcmp(name, "cold") == 0)
    return tfmm_ic_cold;
  if (strcmp(name, "merger") == 0)
    return tfmm_ic_merger;
  return NULL;
}

static int make_bodies(bodies *b, size_t n, model_fn model) {
  b->n = n;
  b->pos = malloc(3 * n * sizeof(double));
  b->vel = malloc(3 * n * sizeof(double));
  b->mass = malloc(n * sizeof(double));
  if (b->pos == NULL || b->vel == NULL || b->mass == NULL)
    return 0;
  return model(n, 2026, b->pos, b->vel, b->mass) == TFMM_OK;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void free_bodies(bodies *b) {
  free(b->pos);
  free(b->vel);
  free(b->mass);
}

static int fixed(size_t n, int steps, int leaf, double theta, int order) {
  bodies b;
  if (!make_bodies(&b, n, tfmm_ic_plummer)) {
    fprintf(stderr, "bench_sim: no memory for %zu bodies\n", n);
    return 1;
  }
  tfmm_sim_config c = config(leaf, theta, order, 0.01);
  c.dt = 1.0 / 128;
  tfmm_sim *sim = NULL;
  if (tfmm_sim_create(&sim, &c, n, b.pos, b.vel, b.mass, NULL) != TFMM_OK)
    return fail("create", sim);
  free_bodies(&b);
  if (tfmm_sim_start(sim) != TFMM_OK)
    return fail("start", sim);
  /* One step to warm the solver's workspace, then the timed ones. */
  if (tfmm_sim_step(sim, 1) != TFMM_OK)
    return fail("warm-up step", sim);
  if (tfmm_sim_step(sim, steps) != TFMM_OK)
    return fail("steps", sim);
  const tfmm_step_stats s = *tfmm_sim_stats(sim);
  const double t0 = wtime();
  tfmm_diagnostics d;
  double de;
  if (tfmm_sim_diagnostics(sim, &d, &de) != TFMM_OK)
    return fail("diagnostics", sim);
  const double diag = wtime() - t0;
  const tfmm_stats *x = tfmm_solver_stats(tfmm_sim_solver(sim));
  const double per = 1e3 / steps;
  printf("sim: fixed n %zu steps %d leaf %d theta %g order %d schedule %s "
         "device %s\n",
         n, steps, leaf, x->theta, x->order, tfmm_schedule_name(x->schedule),
         x->device_name);
  printf("sim: steps/s %.2f  ms/step %.3f  tree %.3f lists %.3f near %.3f "
         "far %.3f integrate %.3f other %.3f  diagnostics %.3f ms  dE/E "
         "%.3e\n",
         steps / s.time_total, s.time_total * per, s.time_tree * per,
         s.time_lists * per, s.time_near * per, s.time_far * per,
         s.time_integrate * per,
         (s.time_total - s.time_forces - s.time_integrate) * per +
             (s.time_forces - s.time_tree - s.time_lists - s.time_near -
              s.time_far) *
                 per,
         diag * 1e3, de);
  tfmm_sim_destroy(sim);
  return 0;
}

/* One run of the Hernquist sphere to t_end: its largest |dE/E| at the
 * multiples of 1/16, its wall time, evaluations and body updates. */
typedef struct outcome {
  double worst, seconds, forces, tree, lists, near, far;
  int64_t evaluations, updates, refits, direct;
} outcome;

/* The solver settings of the Hernquist runs. */
typedef struct settings {
  int leaf, order;
  double theta, eps;
  double dt_max;  /* the block steps' longest step */
  int block_only; /* no fixed steps after them */
} settings;

static int hernquist_run(const bodies *b, const settings *x, double eta,
                         double dt, double t_end, outcome *o) {
  tfmm_sim_config c = config(x->leaf, x->theta, x->order, x->eps);
  c.eta = eta;
  c.dt = dt;
  c.dt_min = eta > 0 ? ldexp(1.0, -16) : 0.0;
  tfmm_sim *sim = NULL;
  if (tfmm_sim_create(&sim, &c, b->n, b->pos, b->vel, b->mass, NULL) != TFMM_OK)
    return fail("create", sim);
  memset(o, 0, sizeof *o);
  const double t0 = wtime();
  if (tfmm_sim_start(sim) != TFMM_OK)
    return fail("start", sim);
  for (int k = 1; k <= (int)llround(t_end * 16); k++) {
    if (tfmm_sim_advance_to(sim, k / 16.0) != TFMM_OK)
      return fail("advance", sim);
    const tfmm_step_stats *s = tfmm_sim_stats(sim);
    o->evaluations += s->evaluations;
    o->updates += s->updates;
    o->forces += s->time_forces;
    o->tree += s->time_tree;
    o->lists += s->time_lists;
    o->near += s->time_near;
    o->far += s->time_far;
    o->refits += s->tree_refits;
    o->direct += s->direct_substeps;
    tfmm_diagnostics d;
    double de;
    if (tfmm_sim_diagnostics(sim, &d, &de) != TFMM_OK)
      return fail("diagnostics", sim);
    o->worst = fmax(o->worst, fabs(de));
  }
  o->seconds = wtime() - t0;
  tfmm_sim_destroy(sim);
  return 0;
}

static int hernquist(const char *name, size_t n, double t_end, double eta,
                     const settings *x) {
  bodies b;
  if (!make_bodies(&b, n, model_named(name))) {
    fprintf(stderr, "bench_sim: no memory for %zu bodies\n", n);
    return 1;
  }
  outcome warm, block;
  /* A short run first, so that neither side pays the GPU's start. */
  if (hernquist_run(&b, x, 0.0, 1.0 / 16, 1.0 / 16, &warm) != 0 ||
      hernquist_run(&b, x, eta, x->dt_max, t_end, &block) != 0)
    return 1;
  printf("sim: %s n %zu t_end %g leaf %d theta %g order %d eps %g\n", name, n,
         t_end, x->leaf, x->theta, x->order, x->eps);
  printf("sim: block eta %g dt_max %g: worst |dE/E| %.3e  %.3f s (forces "
         "%.3f s, tree %.3f s)  evaluations %lld (tree refit %lld, direct "
         "%lld)  "
         "updates/body %.1f\n",
         eta, x->dt_max, block.worst, block.seconds, block.forces, block.tree,
         (long long)block.evaluations, (long long)block.refits,
         (long long)block.direct, (double)block.updates / (double)n);
  /* Near and far run at once: their sum may pass the forces' time. */
  printf("sim: block parts a evaluation: tree %.3f lists %.3f near %.3f far "
         "%.3f ms, forces %.3f ms\n",
         1e3 * block.tree / block.evaluations,
         1e3 * block.lists / block.evaluations,
         1e3 * block.near / block.evaluations,
         1e3 * block.far / block.evaluations,
         1e3 * block.forces / block.evaluations);
  for (int k = 5; k <= 14 && !x->block_only; k++) {
    outcome f;
    if (hernquist_run(&b, x, 0.0, ldexp(1.0, -k), t_end, &f) != 0)
      return 1;
    printf("sim: fixed dt 2^-%d: worst |dE/E| %.3e  %.3f s (forces %.3f s)  "
           "evaluations %lld\n",
           k, f.worst, f.seconds, f.forces, (long long)f.evaluations);
    printf("sim: fixed parts a evaluation: tree %.3f lists %.3f near %.3f "
           "far %.3f ms, forces %.3f ms\n",
           1e3 * f.tree / f.evaluations, 1e3 * f.lists / f.evaluations,
           1e3 * f.near / f.evaluations, 1e3 * f.far / f.evaluations,
           1e3 * f.forces / f.evaluations);
    if (f.worst <= block.worst) {
      printf("sim: the fixed step 2^-%d reaches the block steps' error: "
             "%.3f s against %.3f s, block steps %.2fx faster\n",
             k, f.seconds, block.seconds, f.seconds / block.seconds);
      break;
    }
  }
  free_bodies(&b);
  return 0;
}

/* The criteria compared: the opening criterion and where the error
 * criterion's |a|_A comes from (previous: the last step's forces). */
typedef struct criterion {
  const char *name;
  tfmm_mac_kind mac;
  int previous;
} criterion;

static const criterion CRITERIA[] = {
    {"geometric", TFMM_MAC_GEOMETRIC, 1},
    {"error-estimate", TFMM_MAC_ERROR, 0},
    {"error-previous", TFMM_MAC_ERROR, 1},
};

/* The 99th percentile (nearest rank) of |a - a_ref| / |a_ref| over the
 * sample of the sim's bodies, the reference's double sums on the CPU. */
static int sample_p99(tfmm_sim *sim, const tfmm_config *solver, size_t k,
                      double *p99) {
  tfmm_sim_state st;
  if (tfmm_sim_save(sim, &st) != TFMM_OK)
    return fail("save", sim);
  tfmm_config c = *solver;
  c.method = TFMM_METHOD_REFERENCE;
  c.device = TFMM_DEVICE_CPU;
  tfmm_solver *ref = NULL;
  size_t *idx = malloc(k * sizeof *idx);
  double *acc = malloc(3 * k * sizeof *acc), *e = malloc(k * sizeof *e);
  uint64_t x = 88172645463325252ull;
  for (size_t j = 0; j < k; j++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    idx[j] = (size_t)(x % st.n);
  }
  if (tfmm_solver_create(&ref, &c) != TFMM_OK ||
      tfmm_solver_reference_at(ref, st.n, st.pos, st.mass, k, idx, acc, NULL) !=
          TFMM_OK) {
    fprintf(stderr, "bench_sim: reference: %s\n", tfmm_solver_message(ref));
    return 1;
  }
  for (size_t j = 0; j < k; j++) {
    const double *a = st.acc + 3 * idx[j], *r = acc + 3 * j;
    const double dx = a[0] - r[0], dy = a[1] - r[1], dz = a[2] - r[2];
    e[j] = sqrt(dx * dx + dy * dy + dz * dz) /
           sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  }
  qsort(e, k, sizeof *e, cmp_double);
  *p99 = e[(size_t)ceil(0.99 * (double)k) - 1];
  tfmm_solver_destroy(ref);
  free(idx);
  free(acc);
  free(e);
  return 0;
}

static int criterion_run(const bodies *b, int input, const criterion *m,
                         int steps, size_t sample) {
  tfmm_sim_config c;
  tfmm_sim_config_defaults(&c);
  c.solver.eps = HELD_OUT_EPS[input];
  c.solver.mac = m->mac;
  c.dt = 1.0 / 128;
  tfmm_sim *sim = NULL;
  if (tfmm_sim_create(&sim, &c, b->n, b->pos, b->vel, b->mass, NULL) != TFMM_OK)
    return fail("create", sim);
  tfmm_sim_set_prior_accel(sim, m->previous);
  if (tfmm_sim_step(sim, 2) != TFMM_OK)
    return fail("warm-up steps", sim);
  const double t0 = wtime();
  if (tfmm_sim_step(sim, steps) != TFMM_OK)
    return fail("steps", sim);
  const double wall = wtime() - t0;
  const tfmm_step_stats s = *tfmm_sim_stats(sim);
  const tfmm_stats *x = tfmm_solver_stats(tfmm_sim_solver(sim));
  const double theta = x->theta, mac_eps = x->mac_epsilon,
               near = x->interactions, m2l = x->m2l;
  const int order = x->order;
  double p99;
  if (sample_p99(sim, &c.solver, sample, &p99) != 0)
    return 1;
  printf("sim: criterion,%s,%zu,%s,%d,%.4g,%d,%.3g,%.3f,%.3f,%.3f,%.3f,%.3g,"
         "%.3g,%.3g,%s\n",
         HELD_OUT_NAMES[input], b->n, m->name, steps, theta, order, mac_eps,
         1e3 * wall / steps, 1e3 * s.time_forces / s.evaluations,
         1e3 * s.time_lists / s.evaluations, 1e3 * s.time_near / s.evaluations,
         near, m2l, p99, x->device_name);
  fflush(stdout);
  tfmm_sim_destroy(sim);
  return 0;
}

static int criteria(size_t n, int input, int steps, size_t sample) {
  if (input < 0 || input >= HELD_OUT_INPUTS || steps < 1 || sample < 100) {
    fprintf(stderr,
            "bench_sim: criterion: INPUT in [0, %d), STEPS >= 1, "
            "SAMPLE >= 100\n",
            HELD_OUT_INPUTS);
    return 2;
  }
  bodies b = {n, malloc(3 * n * sizeof(double)), calloc(3 * n, sizeof(double)),
              malloc(n * sizeof(double))};
  if (b.pos == NULL || b.vel == NULL || b.mass == NULL) {
    fprintf(stderr, "bench_sim: no memory for %zu bodies\n", n);
    return 1;
  }
  held_out_make(input, n, 2026, b.pos, b.mass);
  printf("sim: criterion,input,n,criterion,steps,theta,order,mac_epsilon,"
         "ms_per_step,forces_ms,lists_ms,near_ms,near_interactions,m2l,p99,"
         "device\n");
  for (size_t k = 0; k < sizeof CRITERIA / sizeof *CRITERIA; k++)
    if (criterion_run(&b, input, &CRITERIA[k], steps, sample) != 0)
      return 1;
  free_bodies(&b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && strcmp(argv[1], "criterion") == 0)
    return criteria((size_t)atoll(argv[2]), atoi(argv[3]),
                    argc > 4 ? atoi(argv[4]) : 4,
                    argc > 5 ? (size_t)atoll(argv[5]) : 1000);
  if (argc >= 4 && strcmp(argv[1], "fixed") == 0)
    return fixed((size_t)atoll(argv[2]), atoi(argv[3]),
                 argc > 4 ? atoi(argv[4]) : 64, argc > 6 ? atof(argv[5]) : -1,
                 argc > 6 ? atoi(argv[6]) : -1);
  if (argc >= 5 && model_named(argv[1]) != NULL) {
    const settings x = {argc > 5 ? atoi(argv[5]) : 64,
                        argc > 7 ? atoi(argv[7]) : -1,
                        argc > 7 ? atof(argv[6]) : -1,
                        argc > 8 ? atof(argv[8]) : 0.01,
                        argc > 9 ? atof(argv[9]) : 1.0 / 16,
                        argc > 10 && strcmp(argv[10], "block") == 0};
    return hernquist(argv[1], (size_t)atoll(argv[2]), atof(argv[3]),
                     atof(argv[4]), &x);
  }
  fprintf(stderr, "usage: bench_sim fixed N STEPS [LEAF [THETA ORDER]]\n"
                  "       bench_sim hernquist|cold|merger N T_END ETA [LEAF "
                  "[THETA ORDER [EPS [DT_MAX [block]]]]]\n"
                  "       bench_sim criterion N INPUT [STEPS [SAMPLE]]\n");
  return 2;
}
