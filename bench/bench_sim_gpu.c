/* bench_sim_gpu: the element-wise parts of a step on the GPU
 * (kernels/sim/sim_gpu.h) at a simulation's sizes. For each N: the upload,
 * then the best of `reps` wall-clock times (each call waited for) of the
 * opening kick with new bins for every body, the drift, activate, the
 * closing kick, the diagnostics and a snapshot (begin and wait), with the
 * bytes each moves per body and the rate that gives.
 *
 *   bench_sim_gpu [--n 1048576,16777216,100000000] [--reps 10]
 */
#include "gpu.h"
#include "sim_gpu.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Values in [-1, 1) from a 64-bit LCG (Knuth's MMIX constants). */
static double next(uint64_t *x) {
  *x = *x * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*x >> 11) * 0x1.0p-52 - 1.0;
}

enum { OPEN, DRIFT, ACTIVATE, CLOSE, DIAG, SNAPSHOT, OPS };
static const char *names[OPS] = {"open",  "drift",       "activate",
                                 "close", "diagnostics", "snapshot"};
/* Device bytes a body moves in each (reads + writes). */
static const double bytes[OPS] = {1 + 24 + 48 + 1, 72, 2,
                                  1 + 24 + 48,     64, 2 * (80 + 1) + 80 + 1};

static tfmm_status run(tfmm_sim_gpu *g, int op, tfmm_error *err) {
  int min_bin;
  int64_t shorts;
  size_t count;
  const double *p;
  switch (op) {
  case OPEN:
    return tfmm_sim_gpu_open(g, 40, 1, 1e-4, 1e-6, 20, &min_bin, &shorts, err);
  case DRIFT:
    return tfmm_sim_gpu_drift(g, 1e-6, err);
  case ACTIVATE:
    return tfmm_sim_gpu_activate(g, 10, &count, err);
  case CLOSE:
    return tfmm_sim_gpu_close(g, 40, 1e-6, err);
  case DIAG: {
    tfmm_diagnostics d;
    return tfmm_sim_gpu_diagnostics(g, &d, err);
  }
  default: {
    const tfmm_status st = tfmm_sim_gpu_snapshot_begin(g, err);
    return st != TFMM_OK
               ? st
               : tfmm_sim_gpu_snapshot_wait(g, &p, NULL, NULL, NULL, NULL, err);
  }
  }
}

static int bench(size_t n, int reps) {
  double *x = malloc(3 * n * sizeof *x), *v = malloc(3 * n * sizeof *v);
  double *a = malloc(3 * n * sizeof *a), *m = malloc(n * sizeof *m);
  double *phi = malloc(n * sizeof *phi);
  if (x == NULL || v == NULL || a == NULL || m == NULL || phi == NULL) {
    fprintf(stderr, "bench_sim_gpu: no memory for %zu bodies\n", n);
    return 1;
  }
  uint64_t s = 12345;
  for (size_t k = 0; k < 3 * n; k++) {
    x[k] = next(&s);
    v[k] = next(&s);
    a[k] = 100.0 * next(&s);
  }
  for (size_t i = 0; i < n; i++) {
    m[i] = 1.0 / (double)n;
    phi[i] = -1.0 + 0.5 * next(&s);
  }
  tfmm_error err = {{0}};
  tfmm_gpu *ctx = NULL;
  tfmm_sim_gpu *g = NULL;
  tfmm_status st = tfmm_gpu_create(&ctx, 0, &err);
  if (st == TFMM_OK)
    st = tfmm_sim_gpu_create(&g, ctx, n, &err);
  double t0 = now();
  if (st == TFMM_OK)
    st = tfmm_sim_gpu_upload(g, x, v, m, a, phi, NULL, &err);
  printf("n %zu: upload %.1f ms\n", n, 1e3 * (now() - t0));
  cudaStream_t stream = (cudaStream_t)tfmm_sim_gpu_stream(g);
  for (int op = 0; op < OPS && st == TFMM_OK; op++) {
    double best = 1e30;
    for (int r = 0; r <= reps && st == TFMM_OK; r++) { /* r = 0: warm-up */
      t0 = now();
      st = run(g, op, &err);
      if (st == TFMM_OK && cudaStreamSynchronize(stream) != cudaSuccess)
        st = TFMM_ERR_CUDA;
      const double t = now() - t0;
      if (r > 0 && t < best)
        best = t;
    }
    printf("  %-12s %9.3f ms  %6.0f GB/s (%g bytes a body)\n", names[op],
           1e3 * best, bytes[op] * (double)n / best * 1e-9, bytes[op]);
  }
  if (st != TFMM_OK)
    fprintf(stderr, "bench_sim_gpu: %s\n", err.message);
  tfmm_sim_gpu_destroy(g);
  tfmm_gpu_destroy(ctx);
  free(x), free(v), free(a), free(m), free(phi);
  return st != TFMM_OK;
}

int main(int argc, char **argv) {
  size_t n[16] = {1u << 20, 1u << 24, 100000000};
  int nn = 3, reps = 10;
  for (int k = 1; k + 1 < argc; k += 2) {
    if (strcmp(argv[k], "--reps") == 0) {
      reps = atoi(argv[k + 1]);
    } else if (strcmp(argv[k], "--n") == 0) {
      nn = 0;
      for (char *p = strtok(argv[k + 1], ","); p != NULL && nn < 16;
           p = strtok(NULL, ","))
        n[nn++] = (size_t)strtod(p, NULL);
    } else {
      fprintf(stderr, "usage: bench_sim_gpu [--n N,...] [--reps R]\n");
      return 2;
    }
  }
  int bad = 0;
  for (int k = 0; k < nn; k++)
    bad |= bench(n[k], reps);
  return bad;
}
