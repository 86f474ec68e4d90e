/* bench_tree: sweeps the tree methods (TFMM_METHOD_FMM, TFMM_METHOD_BH) on
 * Plummer spheres over N, leaf size, expansion order and opening angle, and
 * reports the median time of every phase and tree stage, the tree's shape,
 * the interaction counts and the accuracy.
 *
 * Accuracy: a sample of bodies, drawn once per N with a fixed seed, is
 * summed exactly (tfmm_solver_reference_at: double precision, compensated)
 * and each point's per-body relative errors are summarised by their median,
 * 99th percentile and maximum. The reference is paid once per N and shared
 * by every configuration.
 *
 * Usage: bench_tree --help. bench/sweep_tree.sh runs the sweeps behind the
 * plots of bench/plot_tree.sh. */
#include "bench_common.h"
#include "device_bodies.h"
#include "tilefmm.h"
#include "tree_options.h"
#include "tree_report.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The seed of the sample is derived from --seed, so that one sphere is
 * always checked at the same bodies. */
static const uint64_t SAMPLE_SEED_SALT = 0x53414d504c45ULL; /* "SAMPLE" */

/* The exact sums at the sample bodies of one sphere. */
typedef struct sample {
  size_t want;       /* bodies asked for (arrays hold this many); 0: none */
  size_t k;          /* bodies in the sample of this N: min(want, N) */
  size_t *idx;       /* their indices, ascending */
  double *acc, *pot; /* the reference: 3k and k */
  double *err;       /* scratch: k */
  size_t n;          /* the N decided on (0: none yet) ... */
  int ready;         /* ... and whether its reference was computed */
  double seconds;    /* what the reference took */
} sample;

/* The last measurement of one configuration, to predict the next N. */
typedef struct history {
  size_t n; /* 0: none yet */
  double per_call;
} history;

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of sorted v by nearest rank: the smallest value with at
 * least a fraction q of v at or below it. */
static double quantile_sorted(const double *v, size_t n, double q) {
  size_t rank = (size_t)ceil(q * (double)n);
  return v[rank > 0 ? rank - 1 : 0];
}

/* SplitMix64 (Steele, Lea & Flood 2014): a fixed, portable stream. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* k distinct indices in [0, n), ascending: all of them when k >= n, else
 * uniform draws with duplicates redrawn. */
static void sample_draw(sample *s, size_t n, uint64_t seed) {
  s->k = s->want < n ? s->want : n;
  if (s->k == n) {
    for (size_t i = 0; i < n; ++i)
      s->idx[i] = i;
    return;
  }
  uint64_t state = seed ^ SAMPLE_SEED_SALT;
  size_t have = 0;
  while (have < s->k) {
    while (have < s->k)
      s->idx[have++] = (size_t)(splitmix64(&state) % n);
    qsort(s->idx, have, sizeof *s->idx, cmp_size);
    size_t u = 0;
    for (size_t i = 0; i < have; ++i)
      if (u == 0 || s->idx[i] != s->idx[u - 1])
        s->idx[u++] = s->idx[i];
    have = u;
  }
}

static double wall_seconds(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The exact sums at the sample, with the sweep's eps and softening kernel
 * and G = 1. */
static tfmm_status sample_reference(sample *s, const tree_options *o, size_t n,
                                    const bench_bodies *b, char *msg,
                                    size_t cap) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.eps = o->eps;
  cfg.softening = o->softening;
  cfg.device = TFMM_DEVICE_CPU;
  cfg.num_threads = o->threads;
  tfmm_solver *sv = NULL;
  tfmm_status st = tfmm_solver_create(&sv, &cfg);
  if (st == TFMM_OK) {
    double t0 = wall_seconds();
    st = tfmm_solver_reference_at(sv, n, b->pos, b->mass, s->k, s->idx, s->acc,
                                  s->pot);
    s->seconds = wall_seconds() - t0;
  }
  if (st != TFMM_OK)
    snprintf(msg, cap,
             "tfmm_solver_reference_at(N = %zu, k = %zu) failed: %s: %s", n,
             s->k, tfmm_status_name(st),
             sv ? tfmm_solver_message(sv) : "(no solver)");
  tfmm_solver_destroy(sv);
  s->ready = st == TFMM_OK;
  return st;
}

/* Summarises the errors of acc and pot at the sample. Non-finite errors
 * stay in, so that a NaN shows as the maximum. */
static void sample_errors(sample *s, const double *acc, const double *pot,
                          tree_error *e) {
  size_t k = s->k;
  for (size_t t = 0; t < k; ++t) {
    const double *a = acc + 3 * s->idx[t], *r = s->acc + 3 * t;
    double d[3] = {a[0] - r[0], a[1] - r[1], a[2] - r[2]};
    double num = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    double den = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    s->err[t] = den > 0.0 ? num / den : num;
    if (isnan(s->err[t]))
      s->err[t] = INFINITY; /* sorts last */
  }
  qsort(s->err, k, sizeof *s->err, bench_cmp_double);
  e->have = 1;
  e->k = k;
  e->median = k % 2 ? s->err[k / 2] : 0.5 * (s->err[k / 2 - 1] + s->err[k / 2]);
  e->p99 = quantile_sorted(s->err, k, 0.99);
  e->max = s->err[k - 1];
  for (size_t t = 0; t < k; ++t) {
    double ref = s->pot[t];
    double d = fabs(pot[s->idx[t]] - ref) / (ref != 0.0 ? fabs(ref) : 1.0);
    s->err[t] = isnan(d) ? INFINITY : d;
  }
  qsort(s->err, k, sizeof *s->err, bench_cmp_double);
  e->pot_p99 = quantile_sorted(s->err, k, 0.99);
  e->pot_max = s->err[k - 1];
}

static int sample_alloc(sample *s, size_t k) {
  memset(s, 0, sizeof *s);
  s->want = k;
  if (k == 0)
    return 0;
  s->idx = malloc(k * sizeof *s->idx);
  s->acc = malloc(3 * k * sizeof *s->acc);
  s->pot = malloc(k * sizeof *s->pot);
  s->err = malloc(k * sizeof *s->err);
  return s->idx && s->acc && s->pot && s->err ? 0 : -1;
}

static void sample_free(sample *s) {
  free(s->idx);
  free(s->acc);
  free(s->pot);
  free(s->err);
}

/* The threads the solver used, from its device name "CPU (k threads)". */
static int threads_used(const tfmm_stats *s, int asked) {
  int k = 0;
  if (sscanf(s->device_name, "CPU (%d threads)", &k) == 1 && k > 0)
    return k;
  return asked;
}

/* Per-repetition timings, turned into medians by timings_medians. */
typedef struct timings {
  double *phase[TFMM_PHASE_COUNT];
  double *total, *keys, *sort, *permute, *build, *moments;
  double *block; /* one allocation behind all of them */
} timings;

static int timings_alloc(timings *t, int reps) {
  enum { SERIES = TFMM_PHASE_COUNT + 6 };
  t->block = malloc((size_t)SERIES * (size_t)reps * sizeof *t->block);
  if (!t->block)
    return -1;
  double *p = t->block;
  for (int k = 0; k < TFMM_PHASE_COUNT; ++k, p += reps)
    t->phase[k] = p;
  double **rest[] = {&t->total,   &t->keys,  &t->sort,
                     &t->permute, &t->build, &t->moments};
  for (size_t k = 0; k < sizeof rest / sizeof rest[0]; ++k, p += reps)
    *rest[k] = p;
  return 0;
}

static void timings_record(timings *t, int i, const tfmm_stats *s) {
  for (int k = 0; k < TFMM_PHASE_COUNT; ++k)
    t->phase[k][i] = s->time[k];
  t->total[i] = s->time_total;
  t->keys[i] = s->tree_time.keys;
  t->sort[i] = s->tree_time.sort;
  t->permute[i] = s->tree_time.permute;
  t->build[i] = s->tree_time.build;
  t->moments[i] = s->tree_time.moments;
}

static void timings_medians(timings *t, int done, tree_result *r) {
  for (int k = 0; k < TFMM_PHASE_COUNT; ++k)
    r->time[k] = bench_median(t->phase[k], done);
  r->total = bench_median(t->total, done); /* sorts total */
  r->total_min = t->total[0];
  r->total_max = t->total[done - 1];
  r->keys = bench_median(t->keys, done);
  r->sort = bench_median(t->sort, done);
  r->permute = bench_median(t->permute, done);
  r->build = bench_median(t->build, done);
  r->moments = bench_median(t->moments, done);
}

/* Measures one point: o->warmup untimed runs, then up to o->reps timed
 * ones (fewer once past --time-limit). Returns TFMM_OK or the failing
 * status, with a message in msg. */
static tfmm_status run_point(const tree_options *o, const tree_config *c,
                             size_t n, bench_bodies *b, tree_result *r,
                             char *msg, size_t cap) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.eps = o->eps;
  cfg.method = c->method;
  cfg.device = o->device; /* the near field's; the far field is the CPU's */
  cfg.schedule = o->schedule;
  cfg.tree_device = o->tree_device;
  cfg.far_device = o->far_device;
  cfg.theta = c->theta;
  cfg.order = c->order;
  cfg.accuracy = c->accuracy;
  cfg.softening = o->softening;
  cfg.far_kernel = o->far_kernel;
  cfg.precision = o->precision;
  cfg.mac = o->mac;
  cfg.mac_epsilon = o->mac_epsilon;
  cfg.leaf_size = c->leaf;
  cfg.max_depth = o->max_depth;
  cfg.num_threads = o->threads;
  memset(r, 0, sizeof *r);

  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, &cfg);
  if (st != TFMM_OK) {
    bench_fail_msg(msg, cap, "tfmm_solver_create", st, s);
    tfmm_solver_destroy(s);
    return st;
  }
  timings tm;
  if (timings_alloc(&tm, o->reps) != 0) {
    tfmm_solver_destroy(s);
    snprintf(msg, cap, "out of host memory for %d timings", o->reps);
    return TFMM_ERR_NO_MEMORY;
  }
  double elapsed = 0.0;
  int done = 0;
  /* --resident: the bodies uploaded once, the results downloaded after. */
  void *dev[4] = {NULL, NULL, NULL, NULL};
  const size_t bytes[4] = {3 * n * sizeof(double), n * sizeof(double),
                           3 * n * sizeof(double), n * sizeof(double)};
  int bad_dev = 0;
  for (int k = 0; o->resident && k < 4 && !bad_dev; k++)
    bad_dev = bench_device_alloc(&dev[k], bytes[k], msg, cap) != 0 ||
              (k < 2 && bench_device_copy(dev[k], k == 0 ? b->pos : b->mass,
                                          bytes[k], 1, msg, cap) != 0);
  if (bad_dev)
    st = TFMM_ERR_CUDA;
  for (int i = 0; !bad_dev && i < o->warmup + o->reps; ++i) {
    /* Poison the outputs: the check must see this run's values only. */
    memset(b->acc, 0xff, 3 * n * sizeof *b->acc);
    memset(b->pot, 0xff, n * sizeof *b->pot);
    if (o->resident) {
      st = tfmm_solver_compute_device(s, n, dev[0], dev[1], dev[2], dev[3],
                                      NULL);
      if (st == TFMM_OK &&
          (bench_device_copy(b->acc, dev[2], bytes[2], 0, msg, cap) != 0 ||
           bench_device_copy(b->pot, dev[3], bytes[3], 0, msg, cap) != 0)) {
        bad_dev = 1;
        st = TFMM_ERR_CUDA;
        break;
      }
    } else
      st = tfmm_solver_compute(s, n, b->pos, b->mass, b->acc, b->pot);
    if (st != TFMM_OK) {
      bench_fail_msg(msg, cap, "tfmm_solver_compute", st, s);
      break;
    }
    const tfmm_stats *ts = tfmm_solver_stats(s);
    elapsed += ts->time_total;
    if (i >= o->warmup)
      timings_record(&tm, done++, ts);
    if (done > 0 && elapsed > o->time_limit)
      break; /* capped by time */
  }
  if (st == TFMM_OK) {
    r->last = *tfmm_solver_stats(s);
    r->reps = done;
    r->threads = threads_used(&r->last, o->threads);
    timings_medians(&tm, done, r);
  }
  free(tm.block);
  for (int k = 0; k < 4; k++)
    bench_device_free(dev[k]);
  tfmm_solver_destroy(s);
  return st;
}

/* The configurations: every method x theta x order x leaf. */
static int make_configs(const tree_options *o, tree_config **out) {
  int nc = o->method.n * o->theta.n * o->order.n * o->leaf.n * o->accuracy.n;
  tree_config *cs = calloc((size_t)nc, sizeof *cs);
  *out = cs;
  if (!cs)
    return 0;
  int k = 0;
  for (int m = 0; m < o->method.n; ++m)
    for (int t = 0; t < o->theta.n; ++t)
      for (int p = 0; p < o->order.n; ++p)
        for (int l = 0; l < o->leaf.n; ++l)
          for (int a = 0; a < o->accuracy.n; ++a)
            cs[k++] =
                (tree_config){o->method.v[m], o->theta.v[t], (int)o->order.v[p],
                              (int)o->leaf.v[l], o->accuracy.v[a]};
  return nc;
}

/* Seconds a call at n is expected to take from one at h->n: the tree
 * methods scale as N log N. Zero when nothing is known. */
static double predict_call(const history *h, size_t n) {
  if (h->n == 0)
    return 0.0;
  double x = (double)n / (double)h->n;
  return h->per_call * x * log((double)n + 1) / log((double)h->n + 1);
}

/* Why configuration k is not run at n ("" to run it). */
static void skip_reason(const tree_options *o, size_t n, const history *h,
                        char *note, size_t cap) {
  note[0] = '\0';
  double pred = predict_call(h, n) * (o->warmup + o->reps);
  if (pred > o->time_limit)
    snprintf(note, cap, "predicted %.3g s > --time-limit %.3g s", pred,
             o->time_limit);
}

/* Once per N, before its first point: computes the sample's reference,
 * unless it is predicted past the time limit (then *note says so and the
 * points of this N run without errors). Returns the reference's status. */
static tfmm_status ensure_reference(const tree_options *o, size_t n,
                                    bench_bodies *b, sample *sm,
                                    double *ref_rate, char *note, size_t cap) {
  note[0] = '\0';
  if (sm->want == 0 || sm->n == n)
    return TFMM_OK;
  sm->n = n;
  sm->ready = 0;
  size_t k = sm->want < n ? sm->want : n;
  double pred = *ref_rate * (double)n * (double)k;
  if (pred > o->time_limit) {
    snprintf(note, cap,
             "no error sample at this N: reference predicted %.3g s > "
             "--time-limit",
             pred);
    return TFMM_OK;
  }
  sample_draw(sm, n, o->seed);
  tfmm_status st = sample_reference(sm, o, n, b, note, cap);
  if (st == TFMM_OK)
    *ref_rate = sm->seconds / ((double)n * (double)sm->k);
  return st;
}

/* A "#" line on the table and in the CSV: what the reference cost. */
static void report_reference(FILE *csv, const sample *sm) {
  printf("# reference at N = %zu: %zu bodies summed exactly in %.3g s\n", sm->n,
         sm->k, sm->seconds);
  fflush(stdout);
  if (csv) {
    fprintf(csv, "# reference n=%zu k=%zu seconds=%.6g\n", sm->n, sm->k,
            sm->seconds);
    fflush(csv);
  }
}

/* Runs every (N, configuration) point. Returns the number of failures. */
static int run_sweep(const tree_options *o, FILE *csv, const tree_config *cs,
                     int nc, history *hist, bench_bodies *b, sample *sm) {
  int failures = 0, named = 0;
  double ref_rate = 0.0; /* reference seconds per body pair */
  for (int in = 0; in < o->n.n; ++in) {
    size_t n = (size_t)o->n.v[in];
    tfmm_status st = tfmm_ic_plummer(n, o->seed, b->pos, b->vel, b->mass);
    if (st != TFMM_OK) {
      fprintf(stderr, "bench_tree: tfmm_ic_plummer(N = %zu) failed: %s\n", n,
              tfmm_status_name(st));
      return failures + 1;
    }
    for (int k = 0; k < nc; ++k) {
      const tree_config *c = &cs[k];
      char note[1024];
      skip_reason(o, n, &hist[k], note, sizeof note);
      if (note[0]) {
        tree_report_note(csv, n, c, "skipped", note);
        continue;
      }
      int had = sm->n == n;
      st = ensure_reference(o, n, b, sm, &ref_rate, note, sizeof note);
      if (st != TFMM_OK) {
        fprintf(stderr, "bench_tree: %s\n", note);
        return failures + 1;
      }
      if (note[0])
        tree_report_note(csv, n, c, "note", note);
      if (!had && sm->ready)
        report_reference(csv, sm);
      tree_result r;
      char msg[1024];
      st = run_point(o, c, n, b, &r, msg, sizeof msg);
      if (st != TFMM_OK) {
        fprintf(stderr, "bench_tree: N=%zu %s L=%d p=%d theta=%g: %s\n", n,
                tfmm_method_name(c->method), c->leaf, c->order, c->theta, msg);
        tree_report_note(csv, n, c, "failed", msg);
        ++failures;
        /* A refused configuration spoils one point; anything else (no
         * memory, a non-finite result) the rest too. */
        if (st != TFMM_ERR_INVALID_ARGUMENT && st != TFMM_ERR_UNSUPPORTED)
          return failures;
        continue;
      }
      int bad = 0;
      if (sm->ready) {
        sample_errors(sm, b->acc, b->pot, &r.err);
        bad = !isfinite(r.err.max) || !isfinite(r.err.pot_max);
        if (bad)
          fprintf(stderr,
                  "bench_tree: N=%zu %s L=%d p=%d theta=%g: non-finite "
                  "error at a sample body\n",
                  n, tfmm_method_name(c->method), c->leaf, c->order, c->theta);
      }
      if (csv && !named) {
        fprintf(csv, "# solver_device: %s\n", r.last.device_name);
        named = 1;
      }
      hist[k].n = n;
      hist[k].per_call = r.total;
      /* Reported with the theta and order used (chosen or given). */
      tree_config used = *c;
      used.theta = r.last.theta;
      used.order = r.last.order;
      tree_report_point(csv, o, n, &used, &r, bad);
      failures += bad;
    }
  }
  return failures;
}

int main(int argc, char **argv) {
  tree_options o;
  int pr = tree_options_parse(argc, argv, &o);
  if (pr != 0)
    return pr > 0 ? 0 : 2;
  tree_run_info ri;
  tree_run_describe(argc, argv, &ri);

  size_t nmax = bench_max_n(o.n.v, o.n.n);
  tree_config *cs = NULL;
  int nc = make_configs(&o, &cs);
  history *hist = calloc(nc > 0 ? (size_t)nc : 1, sizeof *hist);
  bench_bodies b = {0};
  sample sm;
  size_t k = o.tree_only ? 0 : (o.sample < nmax ? o.sample : nmax);
  if (nc == 0 || !hist || bench_bodies_alloc(&b, nmax) != 0 ||
      sample_alloc(&sm, k) != 0) {
    fprintf(stderr, "bench_tree: out of host memory for N = %zu\n", nmax);
    return 1;
  }
  FILE *csv = NULL;
  if (o.csv && !(csv = tree_csv_open(&o, &ri)))
    return 1;

  tree_print_header(&o, &ri);
  int failures = run_sweep(&o, csv, cs, nc, hist, &b, &sm);
  if (csv && fclose(csv) != 0) {
    fprintf(stderr, "bench_tree: writing %s failed\n", o.csv);
    ++failures;
  }
  free(cs);
  free(hist);
  bench_bodies_free(&b);
  sample_free(&sm);
  if (failures) {
    fprintf(stderr, "bench_tree: %d failure%s\n", failures,
            failures == 1 ? "" : "s");
    return 1;
  }
  return 0;
}
