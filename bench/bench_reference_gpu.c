/* bench_reference_gpu: the exact forces at a sample of targets on the GPU
 * (kernels/direct/reference_gpu.h, tfmm_gpu_reference_at), the cost an
 * evaluation pays to measure its own error. Bodies uniform in the unit
 * cube (the cost does not depend on where they are, bar the spline's
 * inner branch), targets drawn among them. For each N and k: a warm-up,
 * then `reps` timed runs (CUDA events on a stream of the benchmark's; the
 * best and the median printed), pair interactions per second, that rate
 * against the FP64 pipe's limit at the peak clock (19 FP64 instructions a
 * pair, reference_gpu.cu; 64 lanes an SM on sm_90), the workspace, and
 * the largest relative difference from the CPU's reference
 * (tfmm_allpairs_reference_at) at the first `check` targets.
 *
 *   bench_reference_gpu [--n 1048576,4194304] [--k 1000,2000,4000]
 *                       [--reps 10] [--eps 0.01] [--spline 0|1]
 *                       [--potential 0|1] [--check 8] [--fast 0|1]
 *                       [--upto U]
 *
 * --fast 1 times tfmm_gpu_reference_fast_at instead (FP32 pairs, no
 * potential): the rate is then against the FP32 pipe's limit (18 FP32
 * instructions a pair, 128 lanes an SM).
 *
 * --upto U > 0 sums only the first U of each k targets (the d_upto of
 * reference_gpu.h, as a measurement's worst group does); the rate counts
 * those.
 *
 * --leaves L > 0 adds what a measurement pays around the sums, each the
 * median host wall time of reps (a wait at the end of each): the sample
 * drawn on the device from L leaves over the largest N
 * (tfmm_gpu_measure_targets: its size query and launches, the watch's
 * third part from given keys of n bodies; the stage's gather of those
 * keys from the results, one more pass over n, is not in it; beside it
 * when its calls returned, before the wait: the host's share), the sums at
 * the first k targets with their size query and check (what the stage
 * pays, against the events' time above), and a copy of 14 KB (the
 * results of 256 targets) to pageable host memory.
 */
#include "measure_targets_gpu.h"
#include "pipeline/allpairs.h"
#include "reference_gpu.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>
#include <time.h>

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "bench_reference_gpu: %s: %s\n", #call,                  \
              cudaGetErrorString(e_));                                         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

enum {
  MAX_LIST = 16,
  FP64_PER_PAIR = 19,
  FP64_LANES_SM90 = 64,
  FP32_PER_PAIR = 18,
  FP32_LANES_SM90 = 128
};

typedef struct options {
  size_t n[MAX_LIST], k[MAX_LIST];
  int nn, nk, reps, spline, potential, check, fast, leaves;
  long long upto; /* > 0: only the first upto targets summed (d_upto) */
  double eps;
} options;

static int parse_list(char *v, size_t *out, int *count) {
  for (char *s = strtok(v, ","); s != NULL; s = strtok(NULL, ",")) {
    if (*count == MAX_LIST)
      return 1;
    out[(*count)++] = (size_t)strtoull(s, NULL, 10);
  }
  return 0;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.reps = 10, .potential = 1, .check = 8, .eps = 0.01};
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *f = argv[i];
    char *v = argv[i + 1];
    int bad = 0;
    if (strcmp(f, "--n") == 0)
      bad = parse_list(v, o->n, &o->nn);
    else if (strcmp(f, "--k") == 0)
      bad = parse_list(v, o->k, &o->nk);
    else if (strcmp(f, "--reps") == 0)
      o->reps = atoi(v);
    else if (strcmp(f, "--eps") == 0)
      o->eps = atof(v);
    else if (strcmp(f, "--spline") == 0)
      o->spline = atoi(v);
    else if (strcmp(f, "--potential") == 0)
      o->potential = atoi(v);
    else if (strcmp(f, "--check") == 0)
      o->check = atoi(v);
    else if (strcmp(f, "--fast") == 0)
      o->fast = atoi(v);
    else if (strcmp(f, "--leaves") == 0)
      o->leaves = atoi(v);
    else if (strcmp(f, "--upto") == 0)
      o->upto = atoll(v);
    else
      bad = 1;
    if (bad) {
      fprintf(stderr, "bench_reference_gpu: bad flag or list: %s %s\n", f, v);
      return 2;
    }
  }
  if ((argc - 1) % 2 != 0) {
    fprintf(stderr, "bench_reference_gpu: %s wants a value\n", argv[argc - 1]);
    return 2;
  }
  if (o->nn == 0) {
    o->n[o->nn++] = (size_t)1 << 20;
    o->n[o->nn++] = (size_t)1 << 22;
  }
  if (o->nk == 0) {
    o->k[o->nk++] = 1000;
    o->k[o->nk++] = 2000;
    o->k[o->nk++] = 4000;
  }
  if (o->reps < 1)
    o->reps = 1;
  return 0;
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *x) {
  return (double)(splitmix64(x) >> 11) * 0x1.0p-53;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The device arrays of the largest N and k. */
typedef struct arrays {
  double *pos, *mass, *acc, *pot;
  int64_t *targets, *upto; /* upto: NULL, or the count --upto gives */
  void *ws;
  size_t ws_bytes;
} arrays;

/* The largest |gpu - cpu| / |cpu| (acceleration as a vector) at the first
 * m targets, or -1 when the CPU refuses. */
static double check_cpu(const options *o, size_t n, const double *pos,
                        const double *mass, const int64_t *t64, const arrays *d,
                        size_t m) {
  tfmm_config run;
  tfmm_config_defaults(&run);
  run.G = 1;
  run.eps = o->eps;
  run.softening = o->spline ? TFMM_SOFTENING_SPLINE : TFMM_SOFTENING_PLUMMER;
  size_t *targets = malloc(m * sizeof *targets);
  double *ref = malloc(3 * m * sizeof *ref), *got = malloc(3 * m * sizeof *got);
  for (size_t t = 0; t < m; t++)
    targets[t] = (size_t)t64[t];
  tfmm_error err = {{0}};
  double worst = -1;
  if (tfmm_allpairs_reference_at(&run, n, pos, mass, m, targets, ref, NULL,
                                 &err) == TFMM_OK &&
      cudaMemcpy(got, d->acc, 3 * m * sizeof *got, cudaMemcpyDeviceToHost) ==
          cudaSuccess) {
    worst = 0;
    for (size_t t = 0; t < m; t++) {
      double d2 = 0, r2 = 0;
      for (int c = 0; c < 3; c++) {
        d2 += (got[3 * t + c] - ref[3 * t + c]) *
              (got[3 * t + c] - ref[3 * t + c]);
        r2 += ref[3 * t + c] * ref[3 * t + c];
      }
      worst = fmax(worst, sqrt(d2 / r2));
    }
  }
  free(targets);
  free(ref);
  free(got);
  return worst;
}

/* The FP64 sums, or with --fast the FP32 pairs'. */
static tfmm_status sums(const options *o, void *ws, size_t *bytes, size_t n,
                        arrays *d, size_t k, const tfmm_pair_params *pair,
                        double *d_pot, cudaStream_t s, tfmm_error *err) {
  if (o->fast)
    return tfmm_gpu_reference_fast_at(ws, bytes, n, d->pos, d->mass, k,
                                      d->targets, d->upto, pair, d->acc, s,
                                      err);
  return tfmm_gpu_reference_at(ws, bytes, n, d->pos, d->mass, k, d->targets,
                               d->upto, pair, d->acc, d_pot, s, err);
}

/* Times one N and k: best and median ms of reps runs. */
static int time_case(const options *o, size_t n, size_t k, arrays *d,
                     cudaStream_t s, double *best, double *median) {
  const tfmm_pair_params pair = {o->spline ? TFMM_SOFTENING_SPLINE
                                           : TFMM_SOFTENING_PLUMMER,
                                 o->eps, TFMM_PRECISION_DOUBLE};
  double *d_pot = o->potential && !o->fast ? d->pot : NULL;
  tfmm_error err = {{0}};
  size_t bytes = 0;
  if (sums(o, NULL, &bytes, n, d, k, &pair, d_pot, s, &err) != TFMM_OK) {
    fprintf(stderr, "bench_reference_gpu: %s\n", err.message);
    return 1;
  }
  if (bytes > d->ws_bytes) {
    CHECK_CUDA(cudaFree(d->ws));
    d->ws = NULL;
    CHECK_CUDA(cudaMalloc(&d->ws, bytes));
    d->ws_bytes = bytes;
  }
  cudaEvent_t ev[2];
  CHECK_CUDA(cudaEventCreate(&ev[0]));
  CHECK_CUDA(cudaEventCreate(&ev[1]));
  double *ms = malloc((size_t)o->reps * sizeof *ms);
  for (int rep = -1; rep < o->reps; rep++) { /* rep -1: the warm-up */
    CHECK_CUDA(cudaEventRecord(ev[0], s));
    tfmm_status st =
        sums(o, d->ws, &d->ws_bytes, n, d, k, &pair, d_pot, s, &err);
    CHECK_CUDA(cudaEventRecord(ev[1], s));
    if (st == TFMM_OK)
      st = tfmm_gpu_reference_check(d->ws, n, k, d->targets, s, &err);
    if (st != TFMM_OK) {
      fprintf(stderr, "bench_reference_gpu: %s\n", err.message);
      free(ms);
      return 1;
    }
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, ev[0], ev[1]));
    if (rep >= 0)
      ms[rep] = t;
  }
  qsort(ms, (size_t)o->reps, sizeof *ms, cmp_double);
  *best = ms[0];
  *median = ms[o->reps / 2];
  free(ms);
  CHECK_CUDA(cudaEventDestroy(ev[0]));
  CHECK_CUDA(cudaEventDestroy(ev[1]));
  return 0;
}

static double wall(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --leaves: the measurement's other costs, host wall ms (median of reps). */
static int overheads(const options *o, size_t n, size_t k, arrays *d,
                     cudaStream_t s) {
  const int64_t L = o->leaves;
  int64_t *begin = malloc((size_t)L * sizeof *begin);
  int32_t *count = malloc((size_t)L * sizeof *count);
  for (int64_t l = 0; l < L; l++) /* n / L bodies each, the last the rest */
    begin[l] = (int64_t)((double)l * (double)n / (double)L);
  for (int64_t l = 0; l < L; l++)
    count[l] = (int32_t)((l + 1 < L ? begin[l + 1] : (int64_t)n) - begin[l]);
  /* The third part's keys: |a|^2 of every sorted body, pseudo-random. */
  double *a2 = malloc(n * sizeof *a2), *d_a2 = NULL;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    a2[i] = (double)(x >> 11) * 0x1p-53;
  }
  int64_t *d_begin = NULL, *d_sorted = NULL;
  int32_t *d_count = NULL;
  void *scratch = NULL, *host = malloc(14336);
  const size_t each = 32, m = k + 3 * each;
  CHECK_CUDA(cudaMalloc((void **)&d_a2, n * sizeof *d_a2));
  CHECK_CUDA(cudaMemcpy(d_a2, a2, n * sizeof *a2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc((void **)&d_begin, (size_t)L * sizeof *d_begin));
  CHECK_CUDA(cudaMalloc((void **)&d_count, (size_t)L * sizeof *d_count));
  CHECK_CUDA(cudaMalloc((void **)&d_sorted, (m + 1) * sizeof *d_sorted));
  CHECK_CUDA(cudaMemcpy(d_begin, begin, (size_t)L * sizeof *begin,
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_count, count, (size_t)L * sizeof *count,
                        cudaMemcpyHostToDevice));
  const tfmm_pair_params pair = {o->spline ? TFMM_SOFTENING_SPLINE
                                           : TFMM_SOFTENING_PLUMMER,
                                 o->eps, TFMM_PRECISION_DOUBLE};
  tfmm_error err = {{0}};
  size_t bytes = 0;
  if (tfmm_gpu_measure_targets(NULL, &bytes, n, k, each, 7, L, NULL, NULL, NULL,
                               NULL, NULL, s, &err) != TFMM_OK) {
    fprintf(stderr, "bench_reference_gpu: %s\n", err.message);
    return 1;
  }
  CHECK_CUDA(cudaMalloc(&scratch, bytes));
  double *ms[4]; /* draw, sums, copy, the draw's enqueueing alone */
  for (int p = 0; p < 4; p++)
    ms[p] = malloc((size_t)o->reps * sizeof(double));
  for (int rep = -1; rep < o->reps; rep++) {
    double t0 = wall();
    size_t b = 0;
    tfmm_status st = tfmm_gpu_measure_targets(NULL, &b, n, k, each, 7, L, NULL,
                                              NULL, NULL, NULL, NULL, s, &err);
    if (st == TFMM_OK)
      st = tfmm_gpu_measure_targets(scratch, &b, n, k, each, 7, L, d_begin,
                                    d_count, d_a2, d_sorted, d_sorted + m, s,
                                    &err);
    const double t_enqueued = wall();
    CHECK_CUDA(cudaStreamSynchronize(s));
    const double t1 = wall();
    b = 0;
    if (st == TFMM_OK)
      st = sums(o, NULL, &b, n, d, k, &pair, NULL, s, &err);
    if (st == TFMM_OK && b > d->ws_bytes) { /* no potential: other chunks */
      CHECK_CUDA(cudaFree(d->ws));
      d->ws = NULL;
      CHECK_CUDA(cudaMalloc(&d->ws, b));
      d->ws_bytes = b;
    }
    if (st == TFMM_OK)
      st = sums(o, d->ws, &d->ws_bytes, n, d, k, &pair, NULL, s, &err);
    if (st == TFMM_OK)
      st = tfmm_gpu_reference_check(d->ws, n, k, d->targets, s, &err);
    const double t2 = wall();
    CHECK_CUDA(cudaMemcpyAsync(host, d->acc, 14336 < 24 * k ? 14336 : 24 * k,
                               cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    const double t3 = wall();
    if (st != TFMM_OK) {
      fprintf(stderr, "bench_reference_gpu: %s\n", err.message);
      return 1;
    }
    if (rep >= 0) {
      ms[3][rep] = 1e3 * (t_enqueued - t0);
      ms[0][rep] = 1e3 * (t1 - t0);
      ms[1][rep] = 1e3 * (t2 - t1);
      ms[2][rep] = 1e3 * (t3 - t2);
    }
  }
  for (int p = 0; p < 4; p++)
    qsort(ms[p], (size_t)o->reps, sizeof(double), cmp_double);
  printf("# around the sums, host wall, median of %d: n %zu, k %zu, %lld "
         "leaves\n  draw %.3f ms (its calls returned after %.3f ms), sums "
         "with queries and check %.3f ms, copy back %.3f ms\n",
         o->reps, n, k, (long long)L, ms[0][o->reps / 2], ms[3][o->reps / 2],
         ms[1][o->reps / 2], ms[2][o->reps / 2]);
  for (int p = 0; p < 4; p++)
    free(ms[p]);
  cudaFree(d_begin);
  cudaFree(d_a2);
  cudaFree(d_count);
  cudaFree(d_sorted);
  cudaFree(scratch);
  free(begin);
  free(a2);
  free(count);
  free(host);
  return 0;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse(argc, argv, &o);
  if (rc != 0)
    return rc;
  if (tfmm_gpu_count() == 0) {
    printf("bench_reference_gpu: skipped: no GPU\n");
    return 0;
  }
  size_t nmax = 0, kmax = 0;
  for (int i = 0; i < o.nn; i++)
    nmax = o.n[i] > nmax ? o.n[i] : nmax;
  for (int i = 0; i < o.nk; i++)
    kmax = o.k[i] > kmax ? o.k[i] : kmax;
  double *pos = malloc(3 * nmax * sizeof *pos);
  double *mass = malloc(nmax * sizeof *mass);
  int64_t *t64 = malloc(kmax * sizeof *t64);
  if (pos == NULL || mass == NULL || t64 == NULL) {
    fprintf(stderr, "bench_reference_gpu: no memory for %zu bodies\n", nmax);
    return 1;
  }
  uint64_t seed = 0x7e57ab1e;
  for (size_t i = 0; i < nmax; i++) {
    for (int c = 0; c < 3; c++)
      pos[3 * i + c] = uniform(&seed);
    mass[i] = 1.0 / (double)nmax;
  }
  int device = 0, sms = 0, clock_khz = 0;
  struct cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  CHECK_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  const double limit =
      o.fast ? (double)sms * FP32_LANES_SM90 * clock_khz * 1e3 / FP32_PER_PAIR
             : (double)sms * FP64_LANES_SM90 * clock_khz * 1e3 / FP64_PER_PAIR;
  arrays d = {0};
  CHECK_CUDA(cudaMalloc((void **)&d.pos, 3 * nmax * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void **)&d.mass, nmax * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void **)&d.acc, 3 * kmax * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void **)&d.pot, kmax * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void **)&d.targets, kmax * sizeof(int64_t)));
  if (o.upto > 0) {
    const int64_t upto = o.upto;
    CHECK_CUDA(cudaMalloc((void **)&d.upto, sizeof upto));
    CHECK_CUDA(cudaMemcpy(d.upto, &upto, sizeof upto, cudaMemcpyHostToDevice));
  }
  CHECK_CUDA(cudaMemcpy(d.pos, pos, 3 * nmax * sizeof(double),
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(
      cudaMemcpy(d.mass, mass, nmax * sizeof(double), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  printf("# %s, %d SMs, %.0f MHz peak clock; %s limit %.3g pairs/s "
         "(%d instructions a pair, %d lanes an SM)\n",
         prop.name, sms, clock_khz / 1e3, o.fast ? "FP32 (fast)" : "FP64",
         limit, o.fast ? FP32_PER_PAIR : FP64_PER_PAIR,
         o.fast ? FP32_LANES_SM90 : FP64_LANES_SM90);
  printf("# %s softening, eps %g, potential %s, best and median of %d\n",
         o.spline ? "spline" : "Plummer", o.eps, o.potential ? "on" : "off",
         o.reps);
  printf("%10s %6s %10s %10s %12s %8s %10s %12s\n", "n", "k", "best_ms",
         "median_ms", "pairs_per_s", "of_limit", "ws_MB", "max_rel_err");
  for (int in = 0; in < o.nn; in++)
    for (int ik = 0; ik < o.nk; ik++) {
      const size_t n = o.n[in], k = o.k[ik];
      for (size_t t = 0; t < k; t++)
        t64[t] = (int64_t)(uniform(&seed) * (double)n);
      CHECK_CUDA(
          cudaMemcpy(d.targets, t64, k * sizeof *t64, cudaMemcpyHostToDevice));
      double best = 0, median = 0;
      if (time_case(&o, n, k, &d, s, &best, &median) != 0)
        return 1;
      const size_t summed =
          o.upto > 0 && (size_t)o.upto < k ? (size_t)o.upto : k;
      const size_t m = (size_t)o.check < summed ? (size_t)o.check : summed;
      const double e = m > 0 ? check_cpu(&o, n, pos, mass, t64, &d, m) : 0;
      const double rate = (double)n * (double)summed / (best * 1e-3);
      printf("%10zu %6zu %10.3f %10.3f %12.4g %7.1f%% %10.1f %12.3g\n", n, k,
             best, median, rate, 100 * rate / limit, d.ws_bytes / 1048576.0, e);
      fflush(stdout);
    }
  if (o.leaves > 0 && overheads(&o, nmax, o.k[0], &d, s) != 0)
    return 1;
  cudaStreamDestroy(s);
  cudaFree(d.pos);
  cudaFree(d.mass);
  cudaFree(d.acc);
  cudaFree(d.pot);
  cudaFree(d.targets);
  cudaFree(d.upto);
  cudaFree(d.ws);
  free(pos);
  free(mass);
  free(t64);
  return 0;
}
