/* bench_oneshot: where the first evaluation of a fresh process goes
 * (issue 28, "host arrays at the speed of the bus"; bench/results/
 * host_transfer). `tilefmm forces` evaluates once: its call pays what a
 * kept solver paid before (device and pinned allocations, the OpenMP
 * team's start, the first touch of fresh result arrays). This program
 * takes those apart, one fresh process per mode:
 *
 *   bench_oneshot prims [--n N]     the CUDA and host primitives alone:
 *                                   context, cudaMalloc, cudaMallocHost,
 *                                   first touch of malloc'd memory
 *   bench_oneshot solve [--n N] [--reserve]
 *                                   Plummer bodies, then: a fresh solver's
 *                                   one-shot, a kept call into fresh
 *                                   result arrays, a kept call into the
 *                                   same arrays, a new solver in the warm
 *                                   process (its stages and totals)
 *
 * The GPU modes print "skipped: no GPU" without one. */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <tilefmm.h>
#include <time.h>

#if TFMM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void touch(char *p, size_t bytes, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (size_t i = 0; i < bytes; i += 4096)
    p[i] = 1;
}

/* Milliseconds to first-touch `bytes` of fresh malloc'd memory with
 * `threads`, with transparent huge pages asked for (huge) or not. */
static double first_touch_ms(size_t bytes, int threads, int huge) {
  char *p = NULL;
  if (huge) {
    if (posix_memalign((void **)&p, (size_t)2 << 20, bytes) != 0)
      return -1;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
  } else if ((p = malloc(bytes)) == NULL) {
    return -1;
  }
  const double t0 = now();
  touch(p, bytes, threads);
  const double ms = 1e3 * (now() - t0);
  free(p);
  return ms;
}

#if TFMM_HAVE_CUDA
#define CU(call)                                                               \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));              \
      return 1;                                                                \
    }                                                                          \
  } while (0)

static int prims(size_t n) {
  const size_t bodies = 4 * n * sizeof(double), chunk = (size_t)4 << 20;
  double t0 = now();
  if (cudaFree(0) != cudaSuccess) {
    printf("skipped: no GPU\n");
    return 0;
  }
  printf("prim context_init_ms %.3f\n", 1e3 * (now() - t0));
  void *d[3], *h[3];
  for (int k = 0; k < 3; k++) {
    t0 = now();
    CU(cudaMalloc(&d[k], bodies));
    printf("prim cudaMalloc_%zuMB_%d_ms %.3f\n", bodies >> 20, k,
           1e3 * (now() - t0));
  }
  void *small = NULL;
  t0 = now();
  CU(cudaMalloc(&small, 256)); /* a small one after large ones */
  printf("prim cudaMalloc_small_ms %.3f\n", 1e3 * (now() - t0));
  for (int k = 0; k < 3; k++) {
    t0 = now();
    CU(cudaMallocHost(&h[k], chunk));
    printf("prim cudaMallocHost_4MiB_%d_ms %.3f\n", k, 1e3 * (now() - t0));
  }
  void *tiny[2];
  for (int k = 0; k < 2; k++) {
    t0 = now();
    CU(cudaMallocHost(&tiny[k], 64));
    printf("prim cudaMallocHost_64B_%d_ms %.3f\n", k, 1e3 * (now() - t0));
  }
  t0 = now();
  void *big = NULL;
  CU(cudaMallocHost(&big, bodies));
  printf("prim cudaMallocHost_%zuMB_ms %.3f\n", bodies >> 20,
         1e3 * (now() - t0));
  t0 = now();
  CU(cudaFreeHost(big));
  printf("prim cudaFreeHost_%zuMB_ms %.3f\n", bodies >> 20, 1e3 * (now() - t0));
  const int most = omp_get_max_threads();
  t0 = now();
#pragma omp parallel num_threads(most)
  {}
  printf("prim omp_team_start_%d_ms %.3f\n", most, 1e3 * (now() - t0));
  printf("prim touch_%zuMB_1thread_ms %.3f\n", bodies >> 20,
         first_touch_ms(bodies, 1, 0));
  printf("prim touch_%zuMB_%dthreads_ms %.3f\n", bodies >> 20, most,
         first_touch_ms(bodies, most, 0));
  printf("prim touch_%zuMB_1thread_huge_ms %.3f\n", bodies >> 20,
         first_touch_ms(bodies, 1, 1));
  printf("prim touch_%zuMB_%dthreads_huge_ms %.3f\n", bodies >> 20, most,
         first_touch_ms(bodies, most, 1));
  for (int k = 0; k < 3; k++) {
    CU(cudaFree(d[k]));
    CU(cudaFreeHost(h[k]));
  }
  CU(cudaFree(small));
  CU(cudaFreeHost(tiny[0]));
  CU(cudaFreeHost(tiny[1]));
  return 0;
}
#endif

/* One evaluation into acc/pot, its line: wall, the solver's stages. */
static int evaluate(tfmm_solver *s, const char *what, size_t n,
                    const double *pos, const double *mass, double *acc,
                    double *pot) {
  const double t0 = now();
  const tfmm_status st = tfmm_solver_compute(s, n, pos, mass, acc, pot);
  const double wall = 1e3 * (now() - t0);
  if (st != TFMM_OK) {
    fprintf(stderr, "%s: %s\n", what, tfmm_solver_message(s));
    return 1;
  }
  const tfmm_stats *x = tfmm_solver_stats(s);
  printf("call %-14s wall %7.2f total %7.2f prepare %6.2f upload %6.2f "
         "tree %6.2f lists %6.2f near %6.2f far %6.2f download %6.2f "
         "measure %6.2f theta %.2f order %d\n",
         what, wall, 1e3 * x->time_total, 1e3 * x->time[TFMM_PHASE_PREPARE],
         1e3 * x->time[TFMM_PHASE_UPLOAD], 1e3 * x->time[TFMM_PHASE_TREE],
         1e3 * x->time[TFMM_PHASE_LISTS], 1e3 * x->time[TFMM_PHASE_NEAR],
         1e3 * x->time[TFMM_PHASE_FAR], 1e3 * x->time[TFMM_PHASE_DOWNLOAD],
         1e3 * x->error.time, x->theta, x->order);
  return 0;
}

static int solve(size_t n, int reserve) {
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * 8);
  double *mass = malloc(n * sizeof *mass);
  double *acc[2] = {malloc(3 * n * 8), malloc(3 * n * 8)};
  double *pot[2] = {malloc(n * 8), malloc(n * 8)};
  if (!pos || !vel || !mass || !acc[0] || !acc[1] || !pot[0] || !pot[1] ||
      tfmm_ic_plummer(n, 1, pos, vel, mass) != TFMM_OK)
    return 1;
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_GPU;
  tfmm_solver *s = NULL;
  double t0 = now();
  if (tfmm_solver_create(&s, &c) != TFMM_OK) {
    fprintf(stderr, "%s\n", s ? tfmm_solver_message(s) : "no memory");
    return 1;
  }
  printf("setup create_ms %.3f\n", 1e3 * (now() - t0));
  if (reserve) {
    t0 = now();
    if (tfmm_solver_reserve(s, n) != TFMM_OK) {
      fprintf(stderr, "reserve: %s\n", tfmm_solver_message(s));
      return 1;
    }
    printf("setup reserve_ms %.3f\n", 1e3 * (now() - t0));
  }
  int bad = evaluate(s, "one-shot", n, pos, mass, acc[0], pot[0]);
  bad = bad || evaluate(s, "kept,fresh-out", n, pos, mass, acc[1], pot[1]);
  bad = bad || evaluate(s, "kept", n, pos, mass, acc[1], pot[1]);
  bad = bad || evaluate(s, "kept", n, pos, mass, acc[1], pot[1]);
  tfmm_solver_destroy(s);
  s = NULL;
  if (!bad && tfmm_solver_create(&s, &c) != TFMM_OK)
    bad = 1;
  bad = bad || evaluate(s, "new-solver", n, pos, mass, acc[1], pot[1]);
  tfmm_solver_destroy(s);
  free(pos), free(vel), free(mass);
  free(acc[0]), free(acc[1]), free(pot[0]), free(pot[1]);
  return bad;
}

int main(int argc, char **argv) {
  size_t n = (size_t)1 << 20;
  int reserve = 0;
  const char *mode = argc > 1 ? argv[1] : "";
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
      n = (size_t)strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--reserve") == 0)
      reserve = 1;
    else {
      fprintf(stderr, "bench_oneshot: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (strcmp(mode, "prims") != 0 && strcmp(mode, "solve") != 0) {
    fprintf(stderr, "usage: bench_oneshot prims|solve [--n N] [--reserve]\n");
    return 2;
  }
  if (n == 0) {
    fprintf(stderr, "bench_oneshot: --n must be at least 1\n");
    return 2;
  }
#if TFMM_HAVE_CUDA
  if (strcmp(mode, "prims") == 0)
    return prims(n);
#endif
  if (!tfmm_has_cuda() || tfmm_gpu_count() == 0) {
    printf("skipped: no GPU\n");
    return 0;
  }
  return solve(n, reserve);
}
