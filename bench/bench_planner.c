/* bench_planner: the accuracy planner on inputs it was never tuned on
 * (held_out_inputs.h, fresh seeds), against an independent truth and a
 * grid of fixed settings.
 *
 * For each input, N and target TOL:
 *   planner  a kept solver at the defaults (theta and order chosen by
 *            measurement): the first call's time (it chooses), then
 *            --calls calls: the median time of those that did not measure,
 *            of those that did, and the mean over all (the cost a long run
 *            pays, the rechecks included); the setting it kept;
 *   sample   at the planner's setting, measure always against off: what
 *            the measurement adds to one evaluation;
 *   grid     (with --grid-theta and --grid-order) each fixed setting's
 *            median time and true p99 (a line each), and the cheapest
 *            that meets TOL against the planner's mean and kept times
 *            (issue 28: within 1.3x);
 *   fixed    (with --fixed THETA:ORDER,...) instead of the planner and
 *            the grid: at each setting, measure always against off, the
 *            median times and the median time of the measurement itself
 *            (tfmm_stats.error.time): the sample's cost alone.
 * The truth is the double-precision reference of the CPU
 * (tfmm_solver_reference_at, not the GPU's sums the planner measures
 * with) at --truth bodies drawn at random; the true p99 and max of each
 * setting are over those bodies.
 *
 * Bodies live on the GPU (tfmm_solver_compute_device) when the device is
 * a GPU: the "resident" figures of issue 28. One line per result on
 * stdout, a CSV with --csv.
 *
 * Usage: bench_planner [--n 262144,1048576] [--tol 1e-3] [--inputs 0,1,2]
 *   [--calls 32] [--reps 5] [--truth 4000] [--seed S] [--device gpu|cpu]
 *   [--grid-theta 0.5,0.6] [--grid-order 4,5,6] [--fixed 0.7:6,0.5:5]
 *   [--eps E] [--kernel plummer|spline] [--far-kernel auto|newton|softened]
 *   [--csv FILE] [--trace 0|1]
 * --eps sets every input's softening (the line + pile needs E > 0);
 * --kernel its kernel (default Plummer): the softened families of issue
 * 28, and the cost of opening cells that softening brings (the same
 * input at eps 0 beside it); --far-kernel the far field's kernel
 * (tfmm_config.far_kernel, default auto), which the CSV's last column
 * names for the planner's rows; --trace 1 prints each measured call's
 * figures and the planner's account of its choice (tfmm_stats.plan). */
#include "bench_common.h"
#include "device_bodies.h"
#include "held_out_inputs.h"
#include "tilefmm.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct opts {
  long long n[BENCH_LIST_CAP];
  int nn;
  double tol[BENCH_LIST_CAP];
  int ntol;
  long long inputs[BENCH_LIST_CAP];
  int ninputs;
  double theta[BENCH_LIST_CAP];
  int ntheta;
  long long order[BENCH_LIST_CAP];
  int norder;
  double fixed_theta[BENCH_LIST_CAP];
  int fixed_order[BENCH_LIST_CAP], nfixed;
  int calls, reps;
  int trace; /* 1: each measured call's choice (tfmm_stats.plan) printed */
  size_t truth;
  uint64_t seed;
  tfmm_device device;
  double eps; /* < 0: each input's own (HELD_OUT_EPS) */
  tfmm_softening kernel;
  tfmm_far_kernel far_kernel;
  const char *csv;
} opts;

/* The bodies of one input on the host (and the device when resident),
 * the truth at its sample. */
typedef struct problem {
  int w;
  size_t n;
  double eps;
  tfmm_softening kernel;
  double *pos, *mass, *acc;
  void *d_pos, *d_mass, *d_acc;
  size_t k;
  size_t *idx;
  double *truth; /* 3k */
} problem;

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  if (n <= 0)
    return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* THETA:ORDER,... */
static int parse_fixed(const char *s, opts *o) {
  char buf[1024], *tok[BENCH_LIST_CAP];
  int m = bench_split_list("bench_planner", "--fixed", s, buf, sizeof buf, tok,
                           BENCH_LIST_CAP);
  if (m < 0)
    return -1;
  for (int j = 0; j < m; j++) {
    char *colon = strchr(tok[j], ':');
    long long order = 0;
    if (colon == NULL)
      return -1;
    *colon = 0;
    if (bench_parse_double(tok[j], 0, 1, &o->fixed_theta[j]) != 0 ||
        bench_parse_ll(colon + 1, 1, TFMM_MAX_ORDER, &order) != 0)
      return -1;
    o->fixed_order[j] = (int)order;
  }
  o->nfixed = m;
  return 0;
}

static int parse(int argc, char **argv, opts *o) {
  static const char *const known[] = {
      "--n",    "--tol",    "--inputs",     "--calls",      "--reps", "--truth",
      "--seed", "--device", "--grid-theta", "--grid-order", "--csv",  "--fixed",
      "--eps",  "--kernel", "--far-kernel", "--trace"};
  o->n[0] = 1 << 20;
  o->nn = 1;
  o->tol[0] = 1e-3;
  o->ntol = 1;
  o->ninputs = HELD_OUT_INPUTS;
  for (int w = 0; w < HELD_OUT_INPUTS; w++)
    o->inputs[w] = w;
  o->calls = 32;
  o->reps = 5;
  o->truth = 4000;
  o->seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull;
  o->device = TFMM_DEVICE_GPU;
  o->eps = -1;
  o->kernel = TFMM_SOFTENING_PLUMMER;
  o->far_kernel = TFMM_FAR_KERNEL_AUTO;
  for (int i = 1; i < argc; i++) {
    char name[32];
    const char *v = NULL;
    if (bench_option_read("bench_planner", argc, argv, &i, known,
                          sizeof known / sizeof *known, name, sizeof name,
                          &v) != 0)
      return -1;
    long long x = 0;
    int bad = 0;
    if (strcmp(name, "--n") == 0)
      bad = bench_parse_ilist("bench_planner", name, v, 1, 1LL << 31, 64, o->n,
                              &o->nn);
    else if (strcmp(name, "--tol") == 0)
      bad = bench_parse_dlist("bench_planner", name, v, 0, 1e30, BENCH_LIST_CAP,
                              o->tol, &o->ntol);
    else if (strcmp(name, "--inputs") == 0)
      bad = bench_parse_ilist("bench_planner", name, v, 0, HELD_OUT_INPUTS - 1,
                              64, o->inputs, &o->ninputs);
    else if (strcmp(name, "--grid-theta") == 0)
      bad = bench_parse_dlist("bench_planner", name, v, 0, 1e30, BENCH_LIST_CAP,
                              o->theta, &o->ntheta);
    else if (strcmp(name, "--grid-order") == 0)
      bad = bench_parse_ilist("bench_planner", name, v, 1, TFMM_MAX_ORDER, 64,
                              o->order, &o->norder);
    else if (strcmp(name, "--calls") == 0 || strcmp(name, "--reps") == 0 ||
             strcmp(name, "--truth") == 0) {
      bad = bench_parse_ll(v, 1, 1 << 24, &x);
      if (name[2] == 'c')
        o->calls = (int)x;
      else if (name[2] == 'r')
        o->reps = (int)x;
      else
        o->truth = (size_t)x;
    } else if (strcmp(name, "--seed") == 0) {
      bad = bench_parse_ll(v, 0, (1LL << 62), &x);
      o->seed = (uint64_t)x;
    } else if (strcmp(name, "--device") == 0)
      bad = tfmm_device_parse(v, &o->device) != TFMM_OK;
    else if (strcmp(name, "--csv") == 0)
      o->csv = v;
    else if (strcmp(name, "--trace") == 0) {
      bad = bench_parse_ll(v, 0, 1, &x);
      o->trace = (int)x;
    } else if (strcmp(name, "--fixed") == 0)
      bad = parse_fixed(v, o);
    else if (strcmp(name, "--eps") == 0) {
      char *end = NULL;
      o->eps = strtod(v, &end);
      bad = end == v || *end != '\0' || !(o->eps >= 0) || !isfinite(o->eps);
    } else if (strcmp(name, "--kernel") == 0)
      bad = tfmm_softening_parse(v, &o->kernel) != TFMM_OK;
    else if (strcmp(name, "--far-kernel") == 0)
      bad = tfmm_far_kernel_parse(v, &o->far_kernel) != TFMM_OK;
    if (bad) {
      fprintf(stderr, "bench_planner: %s %s: not understood\n", name, v);
      return -1;
    }
  }
  return 0;
}

static int problem_make(problem *p, const opts *o, int w, size_t n,
                        uint64_t seed, size_t truth, int resident) {
  memset(p, 0, sizeof *p);
  p->w = w;
  p->n = n;
  p->eps = o->eps >= 0 ? o->eps : HELD_OUT_EPS[w];
  p->kernel = o->kernel;
  if (p->eps == 0 && HELD_OUT_EPS[w] > 0) {
    fprintf(stderr, "bench_planner: input %s needs --eps > 0\n",
            HELD_OUT_NAMES[w]);
    return -1;
  }
  p->pos = malloc(3 * n * sizeof *p->pos);
  p->mass = malloc(n * sizeof *p->mass);
  p->acc = malloc(3 * n * sizeof *p->acc);
  p->k = truth < n ? truth : n;
  p->idx = malloc(p->k * sizeof *p->idx);
  p->truth = malloc(3 * p->k * sizeof *p->truth);
  if (!p->pos || !p->mass || !p->acc || !p->idx || !p->truth)
    return -1;
  held_out_make(w, n, seed, p->pos, p->mass);
  uint64_t s = seed ^ 0x7275746875ull;
  for (size_t j = 0; j < p->k; j++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p->idx[j] = p->k == n ? j : (size_t)((s >> 11) % n);
  }
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_REFERENCE;
  c.device = TFMM_DEVICE_CPU;
  c.eps = p->eps;
  c.softening = p->kernel;
  tfmm_solver *r = NULL;
  if (tfmm_solver_create(&r, &c) != TFMM_OK ||
      tfmm_solver_reference_at(r, n, p->pos, p->mass, p->k, p->idx, p->truth,
                               NULL) != TFMM_OK) {
    fprintf(stderr, "bench_planner: reference: %s\n", tfmm_solver_message(r));
    tfmm_solver_destroy(r);
    return -1;
  }
  tfmm_solver_destroy(r);
  if (!resident)
    return 0;
  char msg[256];
  if (bench_device_alloc(&p->d_pos, 3 * n * 8, msg, sizeof msg) ||
      bench_device_alloc(&p->d_mass, n * 8, msg, sizeof msg) ||
      bench_device_alloc(&p->d_acc, 3 * n * 8, msg, sizeof msg) ||
      bench_device_copy(p->d_pos, p->pos, 3 * n * 8, 1, msg, sizeof msg) ||
      bench_device_copy(p->d_mass, p->mass, n * 8, 1, msg, sizeof msg)) {
    fprintf(stderr, "bench_planner: %s\n", msg);
    return -1;
  }
  return 0;
}

static void problem_free(problem *p) {
  free(p->pos);
  free(p->mass);
  free(p->acc);
  free(p->idx);
  free(p->truth);
  bench_device_free(p->d_pos);
  bench_device_free(p->d_mass);
  bench_device_free(p->d_acc);
}

/* One evaluation; its acc on the host when fetch. */
static int evaluate(tfmm_solver *s, problem *p, int fetch) {
  tfmm_status st;
  if (p->d_pos != NULL)
    st = tfmm_solver_compute_device(s, p->n, p->d_pos, p->d_mass, p->d_acc,
                                    NULL, NULL);
  else
    st = tfmm_solver_compute(s, p->n, p->pos, p->mass, p->acc, NULL);
  if (st != TFMM_OK && st != TFMM_ERR_ACCURACY) {
    fprintf(stderr, "bench_planner: %s\n", tfmm_solver_message(s));
    return -1;
  }
  if (fetch && p->d_pos != NULL) {
    char msg[256];
    if (bench_device_copy(p->acc, p->d_acc, 3 * p->n * 8, 0, msg, sizeof msg)) {
      fprintf(stderr, "bench_planner: %s\n", msg);
      return -1;
    }
  }
  return 0;
}

/* The true p99 and max of the last evaluation at the truth's bodies. */
static void true_error(const problem *p, double *p99, double *max) {
  double *e = malloc(p->k * sizeof *e);
  for (size_t j = 0; j < p->k; j++) {
    double d2 = 0, r2 = 0;
    for (int d = 0; d < 3; d++) {
      const double x = p->acc[3 * p->idx[j] + d] - p->truth[3 * j + d];
      d2 += x * x;
      r2 += p->truth[3 * j + d] * p->truth[3 * j + d];
    }
    e[j] = sqrt(d2 / r2);
  }
  qsort(e, p->k, sizeof *e, cmp_double);
  *p99 = e[(size_t)ceil(0.99 * (double)p->k) - 1];
  *max = e[p->k - 1];
  free(e);
}

static tfmm_solver *solver(const opts *o, const problem *p, double tol,
                           double theta, int order, tfmm_measure measure) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = o->device;
  c.eps = p->eps;
  c.softening = p->kernel;
  c.far_kernel = o->far_kernel;
  c.accuracy = tol;
  c.theta = theta;
  c.order = order;
  c.measure = measure;
  tfmm_solver *s = NULL;
  if (tfmm_solver_create(&s, &c) != TFMM_OK) {
    fprintf(stderr, "bench_planner: %s\n", tfmm_solver_message(s));
    tfmm_solver_destroy(s);
    return NULL;
  }
  return s;
}

/* The median time of reps evaluations at a fixed setting (after one to
 * warm up), the true error of the last; with sample non-NULL the median
 * time of their measurements (tfmm_stats.error.time), and in *samples
 * the bodies the last sampled. */
static int fixed_at(const opts *o, problem *p, double tol, double theta,
                    int order, tfmm_measure measure, double *t, double *p99,
                    double *max, double *sample, size_t *samples) {
  tfmm_solver *s = solver(o, p, tol, theta, order, measure);
  double v[BENCH_LIST_CAP], m[BENCH_LIST_CAP];
  int reps = o->reps < BENCH_LIST_CAP ? o->reps : BENCH_LIST_CAP;
  if (s == NULL || evaluate(s, p, 0) != 0)
    return -1;
  for (int r = 0; r < reps; r++) {
    if (evaluate(s, p, r == reps - 1) != 0)
      return -1;
    v[r] = tfmm_solver_stats(s)->time_total;
    m[r] = tfmm_solver_stats(s)->error.time;
  }
  *t = median(v, reps);
  if (sample != NULL) {
    *sample = median(m, reps);
    *samples = tfmm_solver_stats(s)->error.samples;
  }
  true_error(p, p99, max);
  tfmm_solver_destroy(s);
  return 0;
}

static int fixed(const opts *o, problem *p, double tol, double theta, int order,
                 tfmm_measure measure, double *t, double *p99, double *max) {
  return fixed_at(o, p, tol, theta, order, measure, t, p99, max, NULL, NULL);
}

static FILE *csv_open(const opts *o, int argc, char **argv) {
  static const char *const header =
      "input,n,tol,row,theta,order,time_ms,first_ms,kept_ms,measured_ms,"
      "sample_pct,true_p99,true_max,measured_p99,measured_bound,samples,"
      "sample_ms,eps,kernel,near_pairs,far_kernel";
  if (o->csv == NULL)
    return NULL;
  int existing = 0;
  FILE *f = bench_csv_open("bench_planner", o->csv, header, &existing);
  if (f == NULL)
    return NULL;
  char date[64], cmd[2048];
  bench_run_stamp(argc, argv, date, sizeof date, cmd, sizeof cmd);
  bench_csv_write_stamp(f, date, cmd);
  fprintf(f, "# seed %llu\n", (unsigned long long)o->seed);
  bench_csv_end_comments(f, header, existing);
  return f;
}

/* The planner's run on p at tol: one line and one CSV row. */
static int planner(const opts *o, problem *p, double tol, FILE *csv,
                   double *time_out, double *kept_out) {
  tfmm_solver *s = solver(o, p, tol, TFMM_FROM_ACCURACY, TFMM_FROM_ACCURACY,
                          TFMM_MEASURE_AUTO);
  if (s == NULL || evaluate(s, p, 0) != 0)
    return -1;
  const tfmm_stats *st = tfmm_solver_stats(s);
  const double first = st->time_total;
  /* The last measurement's figures (the setting kept is the last one
   * measured). */
  double mp99 = st->error.p99, mbound = st->error.p99_bound;
  size_t samples = st->error.samples;
  if (o->trace)
    printf("  call 0: %.3f ms, p99 %.3g bound %.3g (%zu): %s\n",
           1e3 * st->time_total, mp99, mbound, samples, st->plan);
  double kept[1024], meas[1024], sum = 0;
  int nk = 0, nm = 0, calls = o->calls < 1024 ? o->calls : 1024;
  for (int c = 0; c < calls; c++) {
    if (evaluate(s, p, c == calls - 1) != 0)
      return -1;
    sum += st->time_total;
    if (st->error.measured) {
      meas[nm++] = st->time_total;
      mp99 = st->error.p99;
      mbound = st->error.p99_bound;
      samples = st->error.samples;
      if (o->trace)
        printf("  call %d: %.3f ms, p99 %.3g bound %.3g (%zu): %s\n", c + 1,
               1e3 * st->time_total, mp99, mbound, samples, st->plan);
    } else
      kept[nk++] = st->time_total;
  }
  double p99 = 0, max = 0;
  true_error(p, &p99, &max);
  const double theta = st->theta;
  const int order = st->order;
  const double interactions = st->interactions;
  const tfmm_far_kernel far_kernel = st->far_kernel;
  printf("%-15s n %9zu tol %.0e planner: theta %.2f order %2d  mean %8.3f ms "
         "(kept %8.3f, measured %8.3f, first %8.3f)  true p99 %.3g max %.3g  "
         "measured p99 %.3g bound %.3g (%zu)  eps %g %s, separation %.3g, "
         "near pairs %.4g\n  %s\n",
         HELD_OUT_NAMES[p->w], p->n, tol, theta, order, 1e3 * sum / calls,
         1e3 * median(kept, nk), 1e3 * median(meas, nm), 1e3 * first, p99, max,
         mp99, mbound, samples, p->eps, tfmm_softening_name(p->kernel),
         st->softening_separation, st->interactions, st->plan);
  /* What a measurement adds at this setting. */
  double t_on = 0, t_off = 0, q, m;
  /* With the kernel the planner ran: auto with theta and order given
   * resolves without the planner (to newton). */
  opts same = *o;
  same.far_kernel = far_kernel;
  if (fixed(&same, p, tol, theta, order, TFMM_MEASURE_ALWAYS, &t_on, &q, &m) ||
      fixed(&same, p, tol, theta, order, TFMM_MEASURE_OFF, &t_off, &q, &m))
    return -1;
  const double pct = 100 * (t_on - t_off) / t_off;
  printf(
      "  sample at every evaluation: %.3f ms against %.3f ms off: %+.1f %%\n",
      1e3 * t_on, 1e3 * t_off, pct);
  if (csv != NULL)
    fprintf(csv,
            "%s,%zu,%g,planner,%g,%d,%.6f,%.6f,%.6f,%.6f,%.2f,%.4g,%.4g,"
            "%.4g,%.4g,%zu,,%g,%s,%.6g,%s\n",
            HELD_OUT_NAMES[p->w], p->n, tol, theta, order, 1e3 * sum / calls,
            1e3 * first, 1e3 * median(kept, nk), 1e3 * median(meas, nm), pct,
            p99, max, mp99, mbound, samples, p->eps,
            tfmm_softening_name(p->kernel), interactions,
            tfmm_far_kernel_name(far_kernel));
  if (csv != NULL)
    fflush(csv); /* kept when a time limit ends the run */
  *time_out = sum / calls;
  *kept_out = nk > 0 ? median(kept, nk) : NAN;
  tfmm_solver_destroy(s);
  return 0;
}

/* At each --fixed setting: measure always against off (time_ms off,
 * measured_ms on), and the measurement's own median time. */
static int sample_rows(const opts *o, problem *p, double tol, FILE *csv) {
  for (int j = 0; j < o->nfixed; j++) {
    const double theta = o->fixed_theta[j];
    const int order = o->fixed_order[j];
    double t_on = 0, t_off = 0, ms = 0, q, m;
    size_t k = 0;
    if (fixed_at(o, p, tol, theta, order, TFMM_MEASURE_ALWAYS, &t_on, &q, &m,
                 &ms, &k) ||
        fixed(o, p, tol, theta, order, TFMM_MEASURE_OFF, &t_off, &q, &m))
      return -1;
    const double pct = 100 * (t_on - t_off) / t_off;
    printf("%-15s n %9zu tol %.0e theta %.2f order %2d: %.3f ms measured, "
           "%.3f ms off: %+.1f %%; the sample (%zu bodies) %.3f ms = %.1f %% "
           "of off\n",
           HELD_OUT_NAMES[p->w], p->n, tol, theta, order, 1e3 * t_on,
           1e3 * t_off, pct, k, 1e3 * ms, 100 * ms / t_off);
    if (csv != NULL) {
      fprintf(
          csv, "%s,%zu,%g,fixed,%g,%d,%.6f,,,%.6f,%.2f,,,,,%zu,%.6f,%g,%s,,\n",
          HELD_OUT_NAMES[p->w], p->n, tol, theta, order, 1e3 * t_off,
          1e3 * t_on, pct, k, 1e3 * ms, p->eps, tfmm_softening_name(p->kernel));
      fflush(csv);
    }
  }
  return 0;
}

/* Every grid setting (a line each); the cheapest meeting tol against the
 * planner's mean and kept times. */
static int grid(const opts *o, problem *p, double tol, double t_planner,
                double t_kept, FILE *csv) {
  double best = INFINITY, best_theta = 0;
  int best_order = 0;
  for (int a = 0; a < o->ntheta; a++)
    for (int b = 0; b < o->norder; b++) {
      double t = 0, p99 = 0, max = 0;
      if (fixed(o, p, tol, o->theta[a], (int)o->order[b], TFMM_MEASURE_OFF, &t,
                &p99, &max))
        return -1;
      if (csv != NULL)
        fprintf(csv, "%s,%zu,%g,grid,%g,%lld,%.6f,,,,,%.4g,%.4g,,,,,%g,%s,,\n",
                HELD_OUT_NAMES[p->w], p->n, tol, o->theta[a], o->order[b],
                1e3 * t, p99, max, p->eps, tfmm_softening_name(p->kernel));
      if (csv != NULL)
        fflush(csv);
      printf("  grid: theta %.2f order %2lld: %8.3f ms, true p99 %.3g max "
             "%.3g%s\n",
             o->theta[a], o->order[b], 1e3 * t, p99, max,
             p99 <= tol ? "" : " (misses)");
      if (p99 <= tol && t < best) {
        best = t;
        best_theta = o->theta[a];
        best_order = (int)o->order[b];
      }
    }
  if (isfinite(best))
    printf("  grid: cheapest meeting %.0e: theta %.2f order %d, %.3f ms; "
           "planner / grid = %.2f (mean), %.2f (kept)\n",
           tol, best_theta, best_order, 1e3 * best, t_planner / best,
           t_kept / best);
  else
    printf("  grid: no setting meets %.0e\n", tol);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* lines kept when a time limit ends it */
  opts o;
  memset(&o, 0, sizeof o);
  if (parse(argc, argv, &o) != 0)
    return 2;
  FILE *csv = csv_open(&o, argc, argv);
  printf("# bench_planner seed %llu\n", (unsigned long long)o.seed);
  int rc = 0;
  for (int a = 0; a < o.ninputs && rc == 0; a++)
    for (int b = 0; b < o.nn && rc == 0; b++) {
      problem p;
      if (problem_make(&p, &o, (int)o.inputs[a], (size_t)o.n[b],
                       o.seed + 17 * a, o.truth,
                       o.device == TFMM_DEVICE_GPU) != 0) {
        rc = 1;
        problem_free(&p);
        break;
      }
      for (int t = 0; t < o.ntol && rc == 0; t++) {
        double tp = 0, tk = 0;
        if (o.nfixed > 0) {
          rc = sample_rows(&o, &p, o.tol[t], csv) != 0;
          fflush(stdout);
          continue;
        }
        rc = planner(&o, &p, o.tol[t], csv, &tp, &tk) != 0;
        if (rc == 0 && o.ntheta > 0 && o.norder > 0)
          rc = grid(&o, &p, o.tol[t], tp, tk, csv) != 0;
        fflush(stdout);
      }
      problem_free(&p);
    }
  if (csv != NULL)
    fclose(csv);
  return rc;
}
