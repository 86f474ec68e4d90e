/* calibrate_accuracy: the measurements behind tfmm_config.accuracy.
 *
 * For every method (fmm, bh), opening criterion (geometric, mass), opening
 * angle and expansion order, it evaluates the forces on five calibration
 * inputs (Plummer, Hernquist, uniform sphere, two tight clusters on a
 * sparse background, a line of bodies plus a pile of coincident ones), each
 * without softening and with the spline at a moderate eps, and measures
 * against the double-precision reference (tfmm_solver_reference_at):
 *   - the 99th percentile (nearest rank) of the per-body relative
 *     acceleration error |a - a_ref| / |a_ref| over a sample of bodies:
 *     random ones plus the outermost (the sparse halo), or all bodies;
 *   - the same over the outer tenth of the sample by radius (the halo);
 *   - the wall-clock time of the evaluation (tfmm_stats.time_total, the
 *     least of --reps runs), and the cost: the same on the Plummer input
 *     with the default single-precision near field.
 * The near field is summed in double precision, so that the errors are the
 * far field's and not float rounding. The inputs' seeds are fixed (tests
 * must draw others).
 *
 * It writes every measurement to a CSV (--csv) and, from the leaf size
 * --leaf's first value, the table rows of src/accuracy_table.h (--table):
 * error = the worst p99 over inputs and softenings, cost = the time
 * relative to that of fmm, geometric, theta 0.5, order 4. At each theta
 * the orders rise until the error is below --floor or the cost above
 * --max-cost: higher orders there would only be slower.
 * docs/accuracy.md says how the table is used and how to redo it.
 *
 * Usage: calibrate_accuracy --help. */
#define _POSIX_C_SOURCE 200809L /* uname, sysconf */

#include "bench_common.h"
#include "calibrate_inputs.h"
#include "device_bodies.h"
#include "tilefmm.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

enum {
  NINPUTS = CAL_INPUTS,
  NSOFT = 2,
  NMAC = 3,
  MAXTHETA = 16,
  MAXEPS = 16,
  MAXORDER = 21
};

/* The spline's eps per input: a tenth to a fiftieth of the densest
 * structure's size (Plummer scale 0.59, Hernquist a = 1/3, sphere radius
 * 1.2, clusters of scale 0.01, a line with bodies ~1e-4 apart). */
static const double SPLINE_EPS[NINPUTS] = {0.01, 0.01, 0.02, 1e-3, 1e-3};

typedef struct options {
  size_t n;
  size_t sample; /* random bodies checked; 0: all */
  int leaves[4], nleaves;
  double thetas[MAXTHETA];
  int nthetas;
  double epsilons[MAXEPS]; /* mac_epsilon of the error criterion's rows */
  int nepsilons;
  int macs; /* bit k: tfmm_mac_kind k */
  int order_max;
  int threads, reps;
  int methods;            /* bit 0: fmm, bit 1: bh */
  double floor, max_cost; /* where the orders of one theta stop */
  size_t cost_n;      /* bodies of the Plummer sphere the cost is timed on; 0:
                         the calibration's own Plummer input */
  tfmm_device device; /* of the near field: its rows are for that device */
  const char *csv, *table;
} options;

/* The reference at the sample bodies of one input and softening. */
typedef struct truth {
  size_t k;
  size_t *idx;
  double *acc;
  int *outer; /* 1 for the outer tenth of the sample by radius */
} truth;

/* One measured point. */
typedef struct point {
  double p99, max, p99_outer, seconds;
  double near_interactions, m2l, m2p;
} point;

/* The table's accumulators: worst p99 and summed time per configuration. */
typedef struct cell {
  double error, seconds;
  int count;
} cell;

/* ------------------------------------------------------------------ */
/* The reference and the errors. */

static const double *sort_key;
static int cmp_by_key_desc(const void *a, const void *b) {
  double x = sort_key[*(const size_t *)a], y = sort_key[*(const size_t *)b];
  return (x < y) - (x > y);
}
static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* The sample: every body when want is 0 or >= n; else the want / 100
 * outermost bodies and random others up to want + want / 100 in all.
 * Ascending indices; the outer tenth by radius marked. */
static int truth_sample(truth *t, const input *in, size_t want) {
  size_t n = in->n;
  size_t *all = malloc(n * sizeof *all);
  if (!all)
    return -1;
  for (size_t i = 0; i < n; i++)
    all[i] = i;
  sort_key = in->radius;
  qsort(all, n, sizeof *all, cmp_by_key_desc);
  t->k = want == 0 || want >= n ? n : want + want / 100;
  t->idx = malloc(t->k * sizeof *t->idx);
  t->outer = calloc(t->k, sizeof *t->outer);
  t->acc = malloc(3 * t->k * sizeof *t->acc);
  if (!t->idx || !t->outer || !t->acc) {
    free(all);
    return -1;
  }
  if (t->k == n) {
    memcpy(t->idx, all, n * sizeof *all);
  } else {
    /* Outermost first, then a partial Fisher-Yates shuffle of the rest. */
    size_t far = want / 100;
    uint64_t s = CAL_SEED ^ 0x53414d504c45ULL;
    for (size_t i = far; i < t->k; i++) {
      size_t j = i + (size_t)(cal_splitmix64(&s) % (n - i));
      size_t x = all[i];
      all[i] = all[j];
      all[j] = x;
    }
    memcpy(t->idx, all, t->k * sizeof *all);
  }
  free(all);
  qsort(t->idx, t->k, sizeof *t->idx, cmp_size);
  /* The outer tenth of the sample: radius above its 90th percentile. */
  double *r = malloc(t->k * sizeof *r);
  if (!r)
    return -1;
  for (size_t i = 0; i < t->k; i++)
    r[i] = in->radius[t->idx[i]];
  qsort(r, t->k, sizeof *r, bench_cmp_double);
  double cut = r[(size_t)(0.9 * (double)t->k)];
  for (size_t i = 0; i < t->k; i++)
    t->outer[i] = in->radius[t->idx[i]] >= cut;
  free(r);
  return 0;
}

static void truth_free(truth *t) {
  free(t->idx);
  free(t->acc);
  free(t->outer);
}

static double p99_sorted(const double *v, size_t n) {
  size_t rank = (size_t)ceil(0.99 * (double)n);
  return n == 0 ? 0 : v[rank > 0 ? rank - 1 : 0];
}

/* p99 and maximum over the sample, and p99 over its outer tenth. */
static void errors(const truth *t, const double *acc, point *pt, double *e,
                   double *eo) {
  size_t ko = 0;
  for (size_t s = 0; s < t->k; s++) {
    const double *a = acc + 3 * t->idx[s], *r = t->acc + 3 * s;
    double num = 0, den = 0;
    for (int d = 0; d < 3; d++) {
      num += (a[d] - r[d]) * (a[d] - r[d]);
      den += r[d] * r[d];
    }
    e[s] = den > 0 ? sqrt(num / den) : sqrt(num);
    if (isnan(e[s]))
      e[s] = INFINITY;
    if (t->outer[s])
      eo[ko++] = e[s];
  }
  qsort(e, t->k, sizeof *e, bench_cmp_double);
  qsort(eo, ko, sizeof *eo, bench_cmp_double);
  pt->p99 = p99_sorted(e, t->k);
  pt->max = e[t->k - 1];
  pt->p99_outer = p99_sorted(eo, ko);
}

/* ------------------------------------------------------------------ */
/* Evaluations. */

static void base_config(tfmm_config *c, const options *o, double eps) {
  tfmm_config_defaults(c);
  c->eps = eps;
  c->softening = TFMM_SOFTENING_SPLINE; /* ignored when eps = 0 */
  c->precision = TFMM_PRECISION_DOUBLE;
  c->device = o->device;
  c->num_threads = o->threads;
}

static int reference(const options *o, const input *in, double eps, truth *t) {
  tfmm_config c;
  base_config(&c, o, eps);
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, &c);
  if (st == TFMM_OK)
    st = tfmm_solver_reference_at(s, in->n, in->pos, in->mass, t->k, t->idx,
                                  t->acc, NULL);
  if (st != TFMM_OK)
    fprintf(stderr, "calibrate_accuracy: reference of %s: %s: %s\n", in->name,
            tfmm_status_name(st), s ? tfmm_solver_message(s) : "");
  tfmm_solver_destroy(s);
  return st == TFMM_OK ? 0 : -1;
}

static int measure(const tfmm_config *c, const options *o, const input *in,
                   const truth *t, double *acc, double *e, double *eo,
                   point *pt) {
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, c);
  *pt = (point){.seconds = INFINITY};
  for (int r = 0; r < o->reps && st == TFMM_OK; r++) {
    st = tfmm_solver_compute(s, in->n, in->pos, in->mass, acc, NULL);
    if (st == TFMM_OK) {
      const tfmm_stats *x = tfmm_solver_stats(s);
      if (x->time_total < pt->seconds)
        pt->seconds = x->time_total;
      pt->near_interactions = x->interactions;
      pt->m2l = x->m2l;
      pt->m2p = x->m2p;
    }
  }
  if (st != TFMM_OK)
    fprintf(stderr, "calibrate_accuracy: %s on %s: %s: %s\n",
            tfmm_method_name(c->method), in->name, tfmm_status_name(st),
            s ? tfmm_solver_message(s) : "");
  tfmm_solver_destroy(s);
  if (st != TFMM_OK)
    return -1;
  errors(t, acc, pt, e, eo);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Output. */

typedef struct stamp {
  char date[64], cmd[2048], machine[512];
} stamp;

static void stamp_make(stamp *s, int argc, char **argv) {
  bench_run_stamp(argc, argv, s->date, sizeof s->date, s->cmd, sizeof s->cmd);
  char cpu[256];
  bench_cpu_model(cpu, sizeof cpu);
  struct utsname u;
  snprintf(s->machine, sizeof s->machine, "%s, %ld cores online, %s %s", cpu,
           sysconf(_SC_NPROCESSORS_ONLN),
           uname(&u) == 0 ? u.sysname : "unknown",
           uname(&u) == 0 ? u.machine : "");
}

static const char CSV_HEADER[] =
    "input,softening,eps,n,sample,leaf,method,mac,theta,mac_epsilon,order,"
    "precision,p99,"
    "max,"
    "p99_outer,seconds,seconds_single,cost_seconds,near_interactions,m2l,"
    "m2p";

static void csv_row(FILE *f, const input *in, double eps, const truth *t,
                    const tfmm_config *c, const point *pt, double single,
                    double cost) {
  fprintf(f,
          "%s,%s,%g,%zu,%zu,%d,%s,%s,%g,%g,%d,%s,%.4g,%.4g,%.4g,%.4g,%.4g,"
          "%.4g,"
          "%.6g,%.6g,%.6g\n",
          in->name, eps > 0 ? "spline" : "none", eps, in->n, t->k, c->leaf_size,
          tfmm_method_name(c->method), tfmm_mac_name(c->mac), c->theta,
          c->mac == TFMM_MAC_ERROR ? c->mac_epsilon : 0, c->order,
          tfmm_precision_name(c->precision), pt->p99, pt->max, pt->p99_outer,
          pt->seconds, single, cost, pt->near_interactions, pt->m2l, pt->m2p);
}

static const char *const METHOD_ENUM[] = {"", "", "TFMM_METHOD_FMM",
                                          "TFMM_METHOD_BH"};
static const char *const MAC_ENUM[NMAC] = {"TFMM_MAC_GEOMETRIC",
                                           "TFMM_MAC_MASS", "TFMM_MAC_ERROR"};

typedef cell table[2][NMAC][MAXTHETA][MAXEPS][MAXORDER];

static int table_write(const options *o, const stamp *s, table tab,
                       double base) {
  FILE *f = fopen(o->table, "w");
  if (!f) {
    fprintf(stderr, "calibrate_accuracy: cannot write %s\n", o->table);
    return -1;
  }
  fprintf(
      f,
      "/* The calibration behind tfmm_config.accuracy: for each method, "
      "opening\n"
      " * criterion, opening angle and order, the worst 99th-percentile "
      "relative\n"
      " * acceleration error measured over the calibration inputs, and the "
      "cost\n"
      " * of an evaluation relative to fmm at theta 0.5, order 4. How it was\n"
      " * measured, on what, and how to redo it: docs/accuracy.md. Written "
      "by\n"
      " * bench/calibrate_accuracy (do not edit by hand).\n"
      " *\n"
      " * Measured %s on %s,\n"
      " * N = %zu, leaf size %d, near field in double where the error is\n"
      " * below 3e-3 (else single), eps = 0 and\n"
      " * the spline. cost: time_total of one evaluation of a Plummer\n"
      " * sphere of %zu bodies, single-precision near field, %d thread(s).\n"
      " */\n"
      "#ifndef TFMM_ACCURACY_TABLE_H\n"
      "#define TFMM_ACCURACY_TABLE_H\n\n"
      "#include \"tilefmm.h\"\n\n"
      "typedef struct tfmm_accuracy_row {\n"
      "  tfmm_method method;\n"
      "  tfmm_mac_kind mac;\n"
      "  double theta;\n"
      "  int order;\n"
      "  double error; /* worst p99 over the calibration inputs */\n"
      "  double cost;  /* relative time of an evaluation */\n"
      "  int leaf;     /* the leaf size calibrated: valid for larger ones */\n"
      "  int near_gpu; /* 1: calibrated with the near field on the GPU */\n"
      "  double epsilon; /* TFMM_MAC_ERROR: mac_epsilon; else 0 */\n"
      "} tfmm_accuracy_row;\n\n"
      "static const tfmm_accuracy_row TFMM_ACCURACY_TABLE[] = {\n",
      s->date, s->machine, o->n, o->leaves[0], o->cost_n > 0 ? o->cost_n : o->n,
      o->threads);
  for (int m = 0; m < 2; m++)
    for (int mac = 0; mac < NMAC; mac++)
      for (int th = 0; th < o->nthetas; th++)
        for (int e = 0; e < MAXEPS; e++)
          for (int p = 0; p <= o->order_max; p++) {
            const cell *c = &tab[m][mac][th][e][p];
            if (c->count != NINPUTS * NSOFT)
              continue;
            fprintf(f, "    {%s, %s, %g, %d, %.2e, %.3g, %d, %d, %g},\n",
                    METHOD_ENUM[TFMM_METHOD_FMM + m], MAC_ENUM[mac],
                    o->thetas[th], p, c->error, c->seconds / base, o->leaves[0],
                    o->device == TFMM_DEVICE_GPU,
                    mac == TFMM_MAC_ERROR ? o->epsilons[e] : 0);
          }
  fprintf(f, "};\n\n#endif\n");
  return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Options. */

static void usage(FILE *f) {
  fprintf(f,
          "usage: calibrate_accuracy [options]\n"
          "  --n N            bodies per input (default 20000)\n"
          "  --sample K       random bodies checked, plus the K/100 outermost;"
          "\n                   0: all bodies (default 2000)\n"
          "  --leaf L,...     leaf sizes; the table is from the first "
          "(default 64)\n"
          "  --theta T,...    opening angles (default "
          "0.25,0.3,0.4,0.5,0.6,0.7,0.8)\n"
          "  --order-max P    orders 0 (bh) or 1 (fmm) to P (default 16)\n"
          "  --method M,...   fmm, bh (default both)\n"
          "  --mac K,...      geometric, mass, error (default geometric,mass)\n"
          "  --epsilon E,...  mac_epsilon of the error criterion's rows\n"
          "                   (default 1e-2,1e-3,...,1e-7)\n"
          "  --threads T      OpenMP threads (default 0: OpenMP's choice)\n"
          "  --reps R         evaluations per point, the least time kept "
          "(default 1)\n"
          "  --floor E        orders of a theta stop once its error is below E"
          "\n                   (default 5e-10)\n"
          "  --max-cost C     ... or its cost above C (default 30)\n"
          "  --csv PATH       every measurement (overwritten)\n"
          "  --table PATH     the rows of src/accuracy_table.h (overwritten)\n"
          "  --device D       cpu or gpu: where the near field runs; the rows\n"
          "                   are for that device (default cpu)\n");
}

static int parse(int argc, char **argv, options *o) {
  static const char *const known[] = {
      "--n",         "--sample", "--leaf",    "--theta",
      "--order-max", "--method", "--threads", "--reps",
      "--csv",       "--table",  "--floor",   "--max-cost",
      "--cost-n",    "--device", "--mac",     "--epsilon"};
  *o = (options){.n = 20000,
                 .sample = 2000,
                 .leaves = {64},
                 .nleaves = 1,
                 .thetas = {0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8},
                 .nthetas = 7,
                 .epsilons = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7},
                 .nepsilons = 6,
                 .macs = 3,
                 .order_max = 16,
                 .reps = 1,
                 .methods = 3,
                 .floor = 5e-10,
                 .max_cost = 30,
                 .device = TFMM_DEVICE_CPU};
  const char *prog = "calibrate_accuracy";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      exit(0);
    }
    char name[32], buf[512], *tok[BENCH_LIST_CAP];
    const char *v = NULL;
    long long x;
    if (bench_option_read(prog, argc, argv, &i, known,
                          sizeof known / sizeof *known, name, sizeof name,
                          &v) != 0)
      return -1;
    if (strcmp(name, "--n") == 0 && bench_parse_ll(v, 100, 1LL << 26, &x) == 0)
      o->n = (size_t)x;
    else if (strcmp(name, "--sample") == 0 &&
             bench_parse_ll(v, 0, 1LL << 26, &x) == 0)
      o->sample = (size_t)x;
    else if (strcmp(name, "--order-max") == 0 &&
             bench_parse_ll(v, 1, MAXORDER - 1, &x) == 0)
      o->order_max = (int)x;
    else if (strcmp(name, "--threads") == 0 &&
             bench_parse_ll(v, 0, 1024, &x) == 0)
      o->threads = (int)x;
    else if (strcmp(name, "--reps") == 0 && bench_parse_ll(v, 1, 100, &x) == 0)
      o->reps = (int)x;
    else if (strcmp(name, "--floor") == 0 &&
             bench_parse_double(v, 0, 1, &o->floor) == 0)
      ;
    else if (strcmp(name, "--max-cost") == 0 &&
             bench_parse_double(v, 0, 1e6, &o->max_cost) == 0)
      ;
    else if (strcmp(name, "--cost-n") == 0 &&
             bench_parse_ll(v, 0, 1LL << 26, &x) == 0)
      o->cost_n = (size_t)x;
    else if (strcmp(name, "--device") == 0 &&
             tfmm_device_parse(v, &o->device) == TFMM_OK &&
             o->device != TFMM_DEVICE_AUTO)
      ;
    else if (strcmp(name, "--csv") == 0)
      o->csv = v;
    else if (strcmp(name, "--table") == 0)
      o->table = v;
    else if (strcmp(name, "--leaf") == 0) {
      long long l[4];
      if (bench_parse_ilist(prog, name, v, 1, 1 << 20, 4, l, &o->nleaves))
        return -1;
      for (int k = 0; k < o->nleaves; k++)
        o->leaves[k] = (int)l[k];
    } else if (strcmp(name, "--theta") == 0) {
      int nt = bench_split_list(prog, name, v, buf, sizeof buf, tok, MAXTHETA);
      if (nt < 0)
        return -1;
      for (int k = 0; k < nt; k++)
        if (bench_parse_double(tok[k], 0.01, 0.95, &o->thetas[k]) != 0) {
          fprintf(stderr, "%s: --theta: bad value '%s'\n", prog, tok[k]);
          return -1;
        }
      o->nthetas = nt;
    } else if (strcmp(name, "--epsilon") == 0) {
      int nt = bench_split_list(prog, name, v, buf, sizeof buf, tok, MAXEPS);
      if (nt < 0)
        return -1;
      for (int k = 0; k < nt; k++)
        if (bench_parse_double(tok[k], 1e-12, 1, &o->epsilons[k]) != 0) {
          fprintf(stderr, "%s: --epsilon: bad value '%s'\n", prog, tok[k]);
          return -1;
        }
      o->nepsilons = nt;
    } else if (strcmp(name, "--mac") == 0) {
      int nt = bench_split_list(prog, name, v, buf, sizeof buf, tok, NMAC);
      if (nt < 0)
        return -1;
      o->macs = 0;
      for (int k = 0; k < nt; k++) {
        tfmm_mac_kind m;
        if (tfmm_mac_parse(tok[k], &m) != TFMM_OK) {
          fprintf(stderr, "%s: --mac: geometric, mass or error, not '%s'\n",
                  prog, tok[k]);
          return -1;
        }
        o->macs |= 1 << m;
      }
    } else if (strcmp(name, "--method") == 0) {
      int nt = bench_split_list(prog, name, v, buf, sizeof buf, tok, 2);
      if (nt < 0)
        return -1;
      o->methods = 0;
      for (int k = 0; k < nt; k++) {
        tfmm_method m;
        if (tfmm_method_parse(tok[k], &m) != TFMM_OK ||
            (m != TFMM_METHOD_FMM && m != TFMM_METHOD_BH)) {
          fprintf(stderr, "%s: --method: fmm or bh, not '%s'\n", prog, tok[k]);
          return -1;
        }
        o->methods |= 1 << (m - TFMM_METHOD_FMM);
      }
    } else {
      fprintf(stderr, "%s: %s: bad value '%s'\n", prog, name, v);
      return -1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ */

/* One input with one softening, its sample and their reference. */
typedef struct job {
  input in;
  truth t;
  double eps;
} job;

enum { NJOBS = NINPUTS * NSOFT };

/* What one row of the table took and gave. */
typedef struct row_result {
  double error;   /* worst p99 over the jobs */
  double seconds; /* time_total with the single-precision near field, on
                     jobs[0] (Plummer, eps = 0): the cost */
} row_result;

/* Configuration c (method, mac, theta, order, leaf) on every job, each
 * measurement written to csv. Each job runs first with the default
 * single-precision near field (on jobs[0] that time is the cost), and
 * again in double when its error is below DOUBLE_BELOW: the float floor
 * of these inputs reaches 1e-4 (the pile spread over 1e-6, eps = 0), which
 * moves an error above 3e-3 by at most 3%, and the single-precision run is
 * several times cheaper. */
static const double DOUBLE_BELOW = 3e-3;

/* The least time_total of o->reps evaluations of c on in, into *seconds,
 * after one not counted (the workspace's allocation). With the near field
 * on the GPU the bodies are resident there (tfmm_solver_compute_device),
 * as a simulation or a kept solver holds them: the copies of host arrays
 * would add the same time to every row and their noise to its order (at
 * 10^6 bodies the least of 7 host-array evaluations still varied 2-3x
 * between neighbouring orders on an H100). */
static int time_only(const tfmm_config *c, const options *o, const input *in,
                     double *acc, double *seconds) {
  void *d_pos = NULL, *d_mass = NULL, *d_acc = NULL;
  const int resident = c->device == TFMM_DEVICE_GPU;
  char msg[256];
  *seconds = INFINITY;
  if (resident && (bench_device_alloc(&d_pos, 3 * in->n * sizeof(double), msg,
                                      sizeof msg) != 0 ||
                   bench_device_alloc(&d_mass, in->n * sizeof(double), msg,
                                      sizeof msg) != 0 ||
                   bench_device_alloc(&d_acc, 3 * in->n * sizeof(double), msg,
                                      sizeof msg) != 0 ||
                   bench_device_copy(d_pos, in->pos, 3 * in->n * sizeof(double),
                                     1, msg, sizeof msg) != 0 ||
                   bench_device_copy(d_mass, in->mass, in->n * sizeof(double),
                                     1, msg, sizeof msg) != 0)) {
    fprintf(stderr, "calibrate_accuracy: %s\n", msg);
    bench_device_free(d_pos);
    bench_device_free(d_mass);
    bench_device_free(d_acc);
    return -1;
  }
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, c);
  for (int r = -1; r < o->reps && st == TFMM_OK; r++) {
    st = resident ? tfmm_solver_compute_device(s, in->n, d_pos, d_mass, d_acc,
                                               NULL, NULL)
                  : tfmm_solver_compute(s, in->n, in->pos, in->mass, acc, NULL);
    if (st == TFMM_OK && r >= 0 && tfmm_solver_stats(s)->time_total < *seconds)
      *seconds = tfmm_solver_stats(s)->time_total;
  }
  if (st != TFMM_OK && s != NULL)
    fprintf(stderr, "calibrate_accuracy: %s\n", tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  bench_device_free(d_pos);
  bench_device_free(d_mass);
  bench_device_free(d_acc);
  return st == TFMM_OK ? 0 : -1;
}

static int row_measure(const options *o, job *jobs, const input *cost_in,
                       const tfmm_config *c, FILE *csv, row_result *out,
                       double *acc, double *e, double *eo) {
  *out = (row_result){0, 0};
  if (cost_in != NULL) {
    tfmm_config cc = *c;
    cc.precision = TFMM_PRECISION_SINGLE;
    if (time_only(&cc, o, cost_in, acc, &out->seconds) != 0)
      return -1;
  }
  for (int j = 0; j < NJOBS; j++) {
    tfmm_config cj = *c;
    cj.eps = jobs[j].eps;
    cj.precision = TFMM_PRECISION_SINGLE;
    point pt, ps;
    if (measure(&cj, o, &jobs[j].in, &jobs[j].t, acc, e, eo, &ps) != 0)
      return -1;
    pt = ps;
    if (j == 0 && cost_in == NULL)
      out->seconds = ps.seconds;
    if (ps.p99 < DOUBLE_BELOW) {
      cj.precision = TFMM_PRECISION_DOUBLE;
      if (measure(&cj, o, &jobs[j].in, &jobs[j].t, acc, e, eo, &pt) != 0)
        return -1;
    }
    if (pt.p99 > out->error)
      out->error = pt.p99;
    if (csv)
      csv_row(csv, &jobs[j].in, jobs[j].eps, &jobs[j].t, &cj, &pt, ps.seconds,
              out->seconds);
  }
  if (csv)
    fflush(csv);
  return 0;
}

/* Every configuration at leaf size leaf. Orders rise at each theta until
 * the row's error is below o->floor or its cost above o->max_cost (both
 * only grow more expensive from there). Rows go to tab when tab is not
 * NULL. */
static int sweep(const options *o, job *jobs, const input *cost_in, int leaf,
                 FILE *csv, table tab, double *base) {
  size_t n = jobs[0].in.n, k = 0;
  if (cost_in != NULL && cost_in->n > n)
    n = cost_in->n;
  for (int j = 0; j < NJOBS; j++)
    k = jobs[j].t.k > k ? jobs[j].t.k : k;
  double *acc = malloc(3 * n * sizeof *acc);
  double *e = malloc(k * sizeof *e), *eo = malloc(k * sizeof *eo);
  int rc = acc && e && eo ? 0 : -1;
  tfmm_config c;
  base_config(&c, o, 0);
  c.leaf_size = leaf;
  row_result r;
  if (rc == 0 && *base <= 0) {
    c.theta = 0.5;
    c.order = 4;
    rc = row_measure(o, jobs, cost_in, &c, NULL, &r, acc, e, eo);
    *base = r.seconds;
  }
  for (int m = 0; m < 2 && rc == 0; m++) {
    if (!(o->methods & (1 << m)))
      continue;
    c.method = (tfmm_method)(TFMM_METHOD_FMM + m);
    for (int mac = 0; mac < NMAC && rc == 0; mac++) {
      if (!(o->macs & (1 << mac)))
        continue;
      const int neps = mac == TFMM_MAC_ERROR ? o->nepsilons : 1;
      for (int th = 0; th < o->nthetas && rc == 0; th++)
        for (int ep = 0; ep < neps && rc == 0; ep++)
          for (int p = m == 0 ? 1 : 0; p <= o->order_max; p++) {
            c.mac = (tfmm_mac_kind)mac;
            c.theta = o->thetas[th];
            c.mac_epsilon =
                mac == TFMM_MAC_ERROR ? o->epsilons[ep] : TFMM_FROM_ACCURACY;
            c.order = p;
            if ((rc = row_measure(o, jobs, cost_in, &c, csv, &r, acc, e, eo)) !=
                0)
              break;
            printf("leaf %d %s %-9s theta %.2f eps %-7.2g p %2d: error %.3g "
                   "cost %.3g\n",
                   leaf, tfmm_method_name(c.method), tfmm_mac_name(c.mac),
                   c.theta, mac == TFMM_MAC_ERROR ? c.mac_epsilon : 0, p,
                   r.error, r.seconds / *base);
            fflush(stdout);
            if (tab != NULL)
              tab[m][mac][th][ep][p] = (cell){r.error, r.seconds, NJOBS};
            if (r.error < o->floor || r.seconds > o->max_cost * *base)
              break;
          }
    }
  }
  free(acc);
  free(e);
  free(eo);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o) != 0) {
    usage(stderr);
    return 2;
  }
  stamp s;
  stamp_make(&s, argc, argv);
  FILE *csv = NULL;
  if (o.csv) {
    if (!(csv = fopen(o.csv, "w"))) {
      fprintf(stderr, "calibrate_accuracy: cannot write %s\n", o.csv);
      return 1;
    }
    fprintf(
        csv,
        "# calibrate_accuracy (tilefmm %s): per-body relative acceleration"
        " error\n# p99 (nearest rank) over the sample, its maximum, p99 "
        "over the sample's\n# outer tenth by radius, with the near field in "
        "`precision` (double where\n# single gave p99 < 3e-3); seconds: "
        "tfmm_stats.time_total of that run,\n# seconds_single: with the "
        "single-precision near field; cost_seconds: the row's cost (see "
        "--cost-n);\n# times: least of %d\n# date: %s\n# "
        "machine: %s\n# command: %s\n%s\n",
        tfmm_version(), o.reps, s.date, s.machine, s.cmd, CSV_HEADER);
  }
  static job jobs[NJOBS];
  int rc = 0;
  for (int j = 0; j < NJOBS && rc == 0; j++) {
    int w = j / NSOFT, soft = j % NSOFT;
    jobs[j].eps = soft ? SPLINE_EPS[w] : 0;
    rc = input_make(&jobs[j].in, w, o.n, soft);
    if (rc == 0)
      rc = truth_sample(&jobs[j].t, &jobs[j].in, o.sample);
    if (rc == 0)
      rc = reference(&o, &jobs[j].in, jobs[j].eps, &jobs[j].t);
  }
  input cost_in = {0};
  if (rc == 0 && o.cost_n > 0)
    rc = input_make(&cost_in, 0, o.cost_n, 0);
  static table tab;
  double base = 0;
  for (int l = 0; l < o.nleaves && rc == 0; l++)
    rc = sweep(&o, jobs, o.cost_n > 0 ? &cost_in : NULL, o.leaves[l], csv,
               l == 0 ? tab : NULL, &base);
  input_free(&cost_in);
  if (csv && fclose(csv) != 0)
    rc = -1;
  if (rc == 0 && o.table)
    rc = table_write(&o, &s, tab, base);
  for (int j = 0; j < NJOBS; j++) {
    truth_free(&jobs[j].t);
    input_free(&jobs[j].in);
  }
  return rc == 0 ? 0 : 1;
}
