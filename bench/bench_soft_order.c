/* bench_soft_order: the error and the cost of fmm at fixed theta and order
 * under softening (issue 28), through the public API. For each family, eps,
 * theta and order: the p99 and the largest of |a - a_ref| / |a_ref| against
 * the double-precision reference (tfmm_solver_reference_at) at every body
 * (n <= sample) or `sample` random ones, the near field summed in double so
 * that float does not floor it; the softening's separation, the near-field
 * pairs over n^2, the M2L count and the time of one evaluation. One CSV row
 * each on stdout (bench/results/soft_order).
 *
 *   bench_soft_order [--n 20000] [--seed 31] [--family plummer,clusters,
 *                    line_pile] [--eps 0.01,0.001] [--theta 0.4,0.6]
 *                    [--order 4,6,8,10,12] [--softening plummer|spline]
 *                    [--sample 2000] [--leaf 64]
 *
 * Families: a Plummer sphere (tfmm_ic_plummer); four Plummer spheres of
 * scale length 0.012 at fixed centres 0.8 to 1.2 apart; 90 % of the bodies
 * on the x axis in [-1, 1] and 10 % coincident at (0.25, 0.1, 0). */
#include "bench_common.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

enum { MAX_LIST = 16 };

typedef struct list {
  int count;
  double v[MAX_LIST];
} list;

static const char *const FAMILY[] = {"plummer", "clusters", "line_pile"};

typedef struct options {
  size_t n, sample;
  uint64_t seed;
  int leaf, nfamily, family[3];
  list eps, theta, order;
  tfmm_softening softening;
} options;

static int parse_list(const char *s, list *out) {
  return bench_parse_dlist("bench_soft_order", "list", s, -1e300, 1e300,
                           MAX_LIST, out->v, &out->count) != 0;
}

static int parse_families(const char *s, options *o) {
  o->nfamily = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
    int k = 0;
    while (k < 3 && strcmp(t, FAMILY[k]) != 0)
      k++;
    if (k == 3 || o->nfamily == 3)
      return 1;
    o->family[o->nfamily++] = k;
  }
  return o->nfamily == 0;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.n = 20000,
                 .sample = 2000,
                 .seed = 31,
                 .leaf = 64,
                 .softening = TFMM_SOFTENING_PLUMMER};
  parse_families("plummer,clusters,line_pile", o);
  parse_list("0.01,0.001", &o->eps);
  parse_list("0.4,0.6", &o->theta);
  parse_list("4,6,8,10,12", &o->order);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL)
      return 1;
    i++;
    int bad = 0;
    if (!strcmp(a, "--n"))
      o->n = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--sample"))
      o->sample = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--seed"))
      o->seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--leaf"))
      o->leaf = atoi(v);
    else if (!strcmp(a, "--family"))
      bad = parse_families(v, o);
    else if (!strcmp(a, "--eps"))
      bad = parse_list(v, &o->eps);
    else if (!strcmp(a, "--theta"))
      bad = parse_list(v, &o->theta);
    else if (!strcmp(a, "--order"))
      bad = parse_list(v, &o->order);
    else if (!strcmp(a, "--softening"))
      bad = tfmm_softening_parse(v, &o->softening) != TFMM_OK;
    else
      bad = 1;
    if (bad)
      return 1;
  }
  return o->n < 8 || o->sample < 1 || o->leaf < 1;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) {
  return (double)(splitmix(s) >> 11) * 0x1.0p-53;
}

static int make_bodies(int family, size_t n, uint64_t seed, double *pos,
                       double *mass, double *vel) {
  if (family == 0)
    return tfmm_ic_plummer(n, seed, pos, vel, mass) != TFMM_OK;
  if (family == 1) {
    static const double centre[4][3] = {
        {0, 0, 0}, {1, 0, 0}, {0.2, 0.8, 0}, {0.4, 0.3, 0.9}};
    const size_t m = n / 4;
    for (size_t c = 0; c < 4; c++) {
      const size_t nc = c < 3 ? m : n - 3 * m;
      double *x = pos + 3 * m * c;
      if (tfmm_ic_plummer(nc, seed + c, x, vel, mass + m * c) != TFMM_OK)
        return 1;
      for (size_t i = 0; i < 3 * nc; i++)
        x[i] = centre[c][i % 3] + 0.02 * x[i];
    }
  } else {
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
      const int pile = i >= n - n / 10;
      pos[3 * i] = pile ? 0.25 : 2 * uniform(&s) - 1;
      pos[3 * i + 1] = pile ? 0.1 : 0;
      pos[3 * i + 2] = 0;
    }
  }
  for (size_t i = 0; i < n; i++)
    mass[i] = 1.0 / (double)n;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static tfmm_config config(const options *o, tfmm_method m, double eps) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = m;
  c.device = TFMM_DEVICE_CPU;
  c.eps = eps;
  c.softening = o->softening;
  c.precision = TFMM_PRECISION_DOUBLE;
  c.leaf_size = o->leaf;
  return c;
}

/* One family at one eps: the reference at the sample, then every theta and
 * order. */
static int run_case(const options *o, int family, double eps, double *pos,
                    double *mass, double *vel, double *acc, double *truth,
                    size_t *idx, double *err) {
  const size_t n = o->n, k = n <= o->sample ? n : o->sample;
  if (make_bodies(family, n, o->seed, pos, mass, vel))
    return 1;
  uint64_t s = o->seed ^ 0x50F7;
  for (size_t i = 0; i < k; i++)
    idx[i] = k == n ? i : (size_t)(uniform(&s) * (double)n);
  tfmm_config rc = config(o, TFMM_METHOD_REFERENCE, eps);
  tfmm_solver *ref = NULL;
  if (tfmm_solver_create(&ref, &rc) != TFMM_OK ||
      tfmm_solver_reference_at(ref, n, pos, mass, k, idx, truth, NULL) !=
          TFMM_OK) {
    fprintf(stderr, "bench_soft_order: reference: %s\n",
            tfmm_solver_message(ref));
    tfmm_solver_destroy(ref);
    return 1;
  }
  tfmm_solver_destroy(ref);
  for (int t = 0; t < o->theta.count; t++)
    for (int q = 0; q < o->order.count; q++) {
      tfmm_config c = config(o, TFMM_METHOD_FMM, eps);
      c.theta = o->theta.v[t];
      c.order = (int)o->order.v[q];
      tfmm_solver *sv = NULL;
      if (tfmm_solver_create(&sv, &c) != TFMM_OK ||
          tfmm_solver_compute(sv, n, pos, mass, acc, NULL) != TFMM_OK) {
        fprintf(stderr, "bench_soft_order: %s\n", tfmm_solver_message(sv));
        tfmm_solver_destroy(sv);
        return 1;
      }
      const tfmm_stats st = *tfmm_solver_stats(sv);
      tfmm_solver_destroy(sv);
      for (size_t j = 0; j < k; j++) {
        double num = 0, den = 0;
        for (int d = 0; d < 3; d++) {
          const double e = acc[3 * idx[j] + d] - truth[3 * j + d];
          num += e * e;
          den += truth[3 * j + d] * truth[3 * j + d];
        }
        err[j] = isfinite(num) && den > 0 ? sqrt(num / den) : INFINITY;
      }
      qsort(err, k, sizeof *err, cmp_double);
      printf("%s,%zu,%g,%llu,%s,%.2f,%d,%.6g,%.4e,%.4e,%.4f,%.0f,%.4f\n",
             FAMILY[family], n, eps, (unsigned long long)o->seed,
             tfmm_softening_name(o->softening), st.theta, st.order,
             st.softening_separation, err[(size_t)ceil(0.99 * (double)k) - 1],
             err[k - 1], st.interactions / ((double)n * (double)n), st.m2l,
             st.time_total);
      fflush(stdout);
    }
  return 0;
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o)) {
    fprintf(stderr, "usage: bench_soft_order [--n N] [--seed S] [--family "
                    "plummer,clusters,line_pile] [--eps LIST] [--theta LIST] "
                    "[--order LIST] [--softening plummer|spline] [--sample K] "
                    "[--leaf L]\n");
    return 2;
  }
  const size_t n = o.n;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass), *acc = malloc(3 * n * sizeof *acc);
  double *truth = malloc(3 * n * sizeof *truth), *err = malloc(n * sizeof *err);
  size_t *idx = malloc(n * sizeof *idx);
  int rc = pos && vel && mass && acc && truth && err && idx ? 0 : 1;
  if (rc == 0)
    printf("family,n,eps,seed,softening,theta,order,separation,p99,max,"
           "near_fraction,m2l,time_total\n");
  for (int f = 0; rc == 0 && f < o.nfamily; f++)
    for (int e = 0; rc == 0 && e < o.eps.count; e++)
      rc = run_case(&o, o.family[f], o.eps.v[e], pos, mass, vel, acc, truth,
                    idx, err);
  free(pos), free(vel), free(mass), free(acc), free(truth), free(err);
  free(idx);
  return rc;
}
