/* bench_active: forces at a subset of the bodies (individual time steps),
 * tfmm_solver_compute_active_device under the gpu schedule on Plummer
 * spheres resident on the GPU. For each N, the whole evaluation
 * (tfmm_solver_compute_device), then active fractions drawn at random and
 * taken from the bodies of largest acceleration (the smallest time-step
 * bins of a block-step scheme): time per evaluation (median of --reps,
 * after --warmup) and its phases, the near pairs and M2L translations
 * done, and whether the targets' results are the whole evaluation's bit
 * for bit (else the largest relative difference). One table a line:
 *   bench_active [--n 1048576,16777216] [--fractions 1,0.3,0.1,0.01,0.001]
 *                [--reps 5] [--warmup 1] [--seed 42] [--leaf 64]
 * Prints "skipped: no GPU" and exits 0 without one. */
#include "bench_common.h"
#include "device_bodies.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

enum { MAX_LIST = 16 };

typedef struct options {
  long long n[MAX_LIST];
  int nn;
  double fraction[MAX_LIST];
  int nfractions;
  int reps, warmup, leaf;
  uint64_t seed;
} options;

static int parse(int argc, char **argv, options *o) {
  static const char *const known[] = {"--n",      "--fractions", "--reps",
                                      "--warmup", "--seed",      "--leaf"};
  const char *prog = "bench_active";
  o->n[0] = 1048576;
  o->nn = 1;
  const double f[] = {1, 0.3, 0.1, 0.01, 0.001};
  o->nfractions = 5;
  memcpy(o->fraction, f, sizeof f);
  o->reps = 5;
  o->warmup = 1;
  o->leaf = 64;
  o->seed = 42;
  for (int i = 1; i < argc; i++) {
    char name[32];
    const char *val = NULL;
    if (bench_option_read(prog, argc, argv, &i, known,
                          sizeof known / sizeof *known, name, sizeof name,
                          &val) != 0)
      return -1;
    long long v = 0;
    if (strcmp(name, "--n") == 0) {
      if (bench_parse_ilist(prog, name, val, 2, INT32_MAX, MAX_LIST, o->n,
                            &o->nn) != 0)
        return -1;
    } else if (strcmp(name, "--fractions") == 0) {
      char buf[512], *tok[MAX_LIST];
      int k = bench_split_list(prog, name, val, buf, sizeof buf, tok, MAX_LIST);
      if (k < 0)
        return -1;
      for (int j = 0; j < k; j++)
        if (bench_parse_double(tok[j], 0, 1, &o->fraction[j]) != 0) {
          fprintf(stderr, "%s: --fractions: %s is not in [0, 1]\n", prog,
                  tok[j]);
          return -1;
        }
      o->nfractions = k;
    } else {
      if (bench_parse_ll(val, 0, INT32_MAX, &v) != 0) {
        fprintf(stderr, "%s: %s: %s is not a whole number\n", prog, name, val);
        return -1;
      }
      if (strcmp(name, "--reps") == 0)
        o->reps = v > 0 ? (int)v : 1;
      else if (strcmp(name, "--warmup") == 0)
        o->warmup = (int)v;
      else if (strcmp(name, "--seed") == 0)
        o->seed = (uint64_t)v;
      else
        o->leaf = v > 0 ? (int)v : 64;
    }
  }
  return 0;
}

/* SplitMix64: the random draws of the subsets. */
static double uniform(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1p-53;
}

typedef struct run {
  double median, phase[TFMM_PHASE_COUNT];
  tfmm_stats stats;
} run;

static int cmp_desc(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* reps timed calls (after warmup), active NULL: the whole evaluation. */
static int time_calls(tfmm_solver *s, size_t n, void *d_pos, void *d_mass,
                      void *d_active, void *d_acc, void *d_pot,
                      const options *o, run *r) {
  double t[64];
  const int reps = o->reps < 64 ? o->reps : 64;
  for (int k = -o->warmup; k < reps; k++) {
    tfmm_status st = tfmm_solver_compute_active_device(
        s, n, d_pos, d_mass, d_active, d_acc, d_pot, NULL);
    if (st != TFMM_OK) {
      fprintf(stderr, "bench_active: %s\n", tfmm_solver_message(s));
      return -1;
    }
    if (k >= 0)
      t[k] = tfmm_solver_stats(s)->time_total;
  }
  r->stats = *tfmm_solver_stats(s);
  for (int p = 0; p < TFMM_PHASE_COUNT; p++)
    r->phase[p] = r->stats.time[p];
  r->median = bench_median(t, reps);
  return 0;
}

static void print_row(const char *sel, double fraction, const run *r,
                      double whole, const char *same) {
  const double *p = r->phase;
  printf(
      "%-9s %7.4f %9zu %9.3f %6.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f "
      "%11.4g %10.4g  %s\n",
      sel, fraction, r->stats.targets, 1e3 * r->median,
      whole > 0 ? r->median / whole : 1, 1e3 * p[TFMM_PHASE_PREPARE],
      1e3 * p[TFMM_PHASE_TREE], 1e3 * p[TFMM_PHASE_UPWARD],
      1e3 * p[TFMM_PHASE_LISTS], 1e3 * p[TFMM_PHASE_NEAR],
      1e3 * p[TFMM_PHASE_FAR], 1e3 * p[TFMM_PHASE_FINISH],
      r->stats.interactions, r->stats.m2l, same);
  fflush(stdout);
}

/* The targets' results against the whole evaluation's: "bitwise", or the
 * largest relative difference of an acceleration. */
static void compare(size_t n, const unsigned char *m, const double *a,
                    const double *w, char *out, size_t cap) {
  double worst = 0;
  int same = 1;
  for (size_t i = 0; i < n; i++) {
    if (!m[i])
      continue;
    same &= memcmp(a + 3 * i, w + 3 * i, 3 * sizeof(double)) == 0;
    double d2 = 0, r2 = 0;
    for (int k = 0; k < 3; k++) {
      d2 += (a[3 * i + k] - w[3 * i + k]) * (a[3 * i + k] - w[3 * i + k]);
      r2 += w[3 * i + k] * w[3 * i + k];
    }
    worst = fmax(worst, sqrt(d2 / r2));
  }
  if (same)
    snprintf(out, cap, "bitwise");
  else
    snprintf(out, cap, "max rel diff %.2g", worst);
}

static int one_n(size_t n, const options *o) {
  char msg[256];
  double *pos = malloc(3 * n * 8), *vel = malloc(3 * n * 8);
  double *mass = malloc(n * 8), *whole = malloc(3 * n * 8);
  double *acc = malloc(3 * n * 8), *amag = malloc(n * 8);
  unsigned char *m = malloc(n);
  void *d_pos = NULL, *d_mass = NULL, *d_acc = NULL, *d_pot = NULL;
  void *d_active = NULL;
  int rc = -1;
  tfmm_solver *s = NULL;
  if (!pos || !vel || !mass || !whole || !acc || !amag || !m ||
      tfmm_ic_plummer(n, o->seed, pos, vel, mass) != TFMM_OK)
    goto done;
  if (bench_device_alloc(&d_pos, 3 * n * 8, msg, sizeof msg) ||
      bench_device_alloc(&d_mass, n * 8, msg, sizeof msg) ||
      bench_device_alloc(&d_acc, 3 * n * 8, msg, sizeof msg) ||
      bench_device_alloc(&d_pot, n * 8, msg, sizeof msg) ||
      bench_device_alloc(&d_active, n, msg, sizeof msg) ||
      bench_device_copy(d_pos, pos, 3 * n * 8, 1, msg, sizeof msg) ||
      bench_device_copy(d_mass, mass, n * 8, 1, msg, sizeof msg)) {
    fprintf(stderr, "bench_active: %s\n", msg);
    goto done;
  }
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.leaf_size = o->leaf;
  if (tfmm_solver_create(&s, &c) != TFMM_OK) {
    fprintf(stderr, "bench_active: %s\n", tfmm_solver_message(s));
    goto done;
  }
  run w;
  if (time_calls(s, n, d_pos, d_mass, NULL, d_acc, d_pot, o, &w) != 0 ||
      bench_device_copy(whole, d_acc, 3 * n * 8, 0, msg, sizeof msg))
    goto done;
  printf("# n %zu, %s, leaf %d, theta %g, order %d, accuracy %g\n", n,
         w.stats.device_name, w.stats.leaf_size, w.stats.theta, w.stats.order,
         c.accuracy);
  printf("%-9s %7s %9s %9s %6s %7s %7s %7s %7s %7s %7s %7s %11s %10s  %s\n",
         "subset", "frac", "targets", "ms", "ratio", "prep", "tree", "upward",
         "lists", "near", "far", "finish", "near_pairs", "m2l", "vs whole");
  print_row("whole", 1, &w, w.median, "-");
  /* The largest accelerations first: the block steps' smallest bins. */
  for (size_t i = 0; i < n; i++)
    amag[i] =
        sqrt(whole[3 * i] * whole[3 * i] + whole[3 * i + 1] * whole[3 * i + 1] +
             whole[3 * i + 2] * whole[3 * i + 2]);
  double *sorted = malloc(n * 8);
  if (sorted == NULL)
    goto done;
  memcpy(sorted, amag, n * 8);
  qsort(sorted, n, sizeof *sorted, cmp_desc);
  for (int sel = 0; sel < 2; sel++)
    for (int f = 0; f < o->nfractions; f++) {
      const double fr = o->fraction[f];
      uint64_t state = o->seed * 7919 + (uint64_t)f;
      size_t k = (size_t)llround(fr * (double)n);
      k = k < 1 ? 1 : k > n ? n : k;
      for (size_t i = 0; i < n; i++)
        m[i] = sel == 0 ? uniform(&state) < fr : amag[i] >= sorted[k - 1];
      run r;
      char same[64];
      if (bench_device_copy(d_active, m, n, 1, msg, sizeof msg) ||
          time_calls(s, n, d_pos, d_mass, d_active, d_acc, d_pot, o, &r) ||
          bench_device_copy(acc, d_acc, 3 * n * 8, 0, msg, sizeof msg)) {
        free(sorted);
        goto done;
      }
      compare(n, m, acc, whole, same, sizeof same);
      print_row(sel == 0 ? "random" : "largest", fr, &r, w.median, same);
    }
  free(sorted);
  rc = 0;
done:
  tfmm_solver_destroy(s);
  bench_device_free(d_pos);
  bench_device_free(d_mass);
  bench_device_free(d_acc);
  bench_device_free(d_pot);
  bench_device_free(d_active);
  free(pos);
  free(vel);
  free(mass);
  free(whole);
  free(acc);
  free(amag);
  free(m);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o) != 0)
    return 2;
  if (tfmm_gpu_count() < 1) {
    printf("bench_active: skipped: no GPU\n");
    return 0;
  }
  for (int k = 0; k < o.nn; k++)
    if (one_n((size_t)o.n[k], &o) != 0)
      return 1;
  return 0;
}
