/* bench_farfield_gpu: the far field on the GPU (kernels/far/farfield_gpu.h:
 * M2L, L2L + L2P, M2P) beside the CPU's passes (src/farfield/passes.h) on
 * the same tree, lists and multipoles, on Plummer spheres. The tree and
 * the lists come from the CPU (tfmm_octree_build, tfmm_lists_build_fmm
 * with the geometric criterion); the GPU's tree is built from the same
 * bodies (it is the same tree). For each N, leaf and order: GPU ms of
 * each pass (CUDA events, best of reps), CPU ms (best of cpu_reps, all
 * cores), the M2L count, and whether every value equals the CPU's.
 *
 *   bench_farfield_gpu [--n 1048576] [--leaf 64,512] [--order 4,8]
 *                      [--theta 0.5] [--reps 5] [--cpu-reps 1]
 * On the GPU machine (bash bench/device.sh upward far):
 *   .devbin/bench/bench_farfield_gpu --n 262144,1048576,4194304
 */
#include "farfield/expansion.h"
#include "farfield/passes.h"
#include "farfield_gpu.h"
#include "tree/lists.h"
#include "tree/octree.h"
#include "tree_gpu.h"
#include "upward_gpu.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>
#include <time.h>

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "bench_farfield_gpu: %s: %s\n", #call,                   \
              cudaGetErrorString(e_));                                         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define CHECK_TFMM(call, err)                                                  \
  do {                                                                         \
    if ((call) != TFMM_OK) {                                                   \
      fprintf(stderr, "bench_farfield_gpu: %s\n", (err).message);              \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

enum { MAX_LIST = 16 };

typedef struct options {
  size_t n[MAX_LIST];
  int leaf[MAX_LIST], order[MAX_LIST];
  int nn, nleaf, norder, reps, cpu_reps;
  double theta;
} options;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void parse_list(char *v, long long *out, int *count) {
  for (char *s = strtok(v, ","); s && *count < MAX_LIST; s = strtok(NULL, ","))
    out[(*count)++] = strtoll(s, NULL, 10);
}

static void parse(int argc, char **argv, options *o) {
  *o = (options){.reps = 5, .cpu_reps = 1, .theta = 0.5};
  long long v[MAX_LIST];
  for (int i = 1; i + 1 < argc; i += 2) {
    int c = 0;
    if (strcmp(argv[i], "--n") == 0) {
      parse_list(argv[i + 1], v, &c);
      for (o->nn = 0; o->nn < c; o->nn++)
        o->n[o->nn] = (size_t)v[o->nn];
    } else if (strcmp(argv[i], "--leaf") == 0) {
      parse_list(argv[i + 1], v, &c);
      for (o->nleaf = 0; o->nleaf < c; o->nleaf++)
        o->leaf[o->nleaf] = (int)v[o->nleaf];
    } else if (strcmp(argv[i], "--order") == 0) {
      parse_list(argv[i + 1], v, &c);
      for (o->norder = 0; o->norder < c; o->norder++)
        o->order[o->norder] = (int)v[o->norder];
    } else if (strcmp(argv[i], "--theta") == 0) {
      o->theta = atof(argv[i + 1]);
    } else if (strcmp(argv[i], "--reps") == 0) {
      o->reps = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--cpu-reps") == 0) {
      o->cpu_reps = atoi(argv[i + 1]);
    } else {
      fprintf(stderr, "bench_farfield_gpu: unknown flag %s\n", argv[i]);
      exit(2);
    }
  }
  if (o->nn == 0)
    o->n[o->nn++] = 1 << 20;
  if (o->nleaf == 0) {
    o->leaf[o->nleaf++] = 64;
    o->leaf[o->nleaf++] = 512;
  }
  if (o->norder == 0) {
    o->order[o->norder++] = 4;
    o->order[o->norder++] = 8;
  }
}

static void *upload(const void *x, size_t bytes) {
  void *d = NULL;
  CHECK_CUDA(cudaMalloc(&d, bytes > 0 ? bytes : 1));
  if (bytes > 0)
    CHECK_CUDA(cudaMemcpy(d, x, bytes, cudaMemcpyHostToDevice));
  return d;
}

static int same(const double *d, const double *h, size_t count) {
  double *g = malloc(count * sizeof *g);
  CHECK_CUDA(cudaMemcpy(g, d, count * sizeof *g, cudaMemcpyDeviceToHost));
  int eq = memcmp(g, h, count * sizeof *g) == 0;
  free(g);
  return eq;
}

static float elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

/* One point: the CPU's passes, then the GPU's, compared. */
static void point(const options *o, const tfmm_octree *t,
                  const tfmm_tree_gpu *tree, int p) {
  tfmm_error err = {{0}};
  const tfmm_mac mac = {o->theta, 0, NULL, NULL, 0, p, 0};
  tfmm_lists lists;
  CHECK_TFMM(tfmm_lists_build_fmm(t, &mac, 1, &lists, &err), err);
  const size_t size = tfmm_expansion_size(p), n = t->n;
  const size_t ecount = (size_t)t->ncells * size;
  double *M = malloc(ecount * 8), *L = malloc(ecount * 8);
  double *phi = malloc(n * 8), *grad = malloc(3 * n * 8);
  tfmm_upward_pass(t, p, M);
  double cpu[3] = {INFINITY, INFINITY, INFINITY};
  for (int r = 0; r < o->cpu_reps; r++) {
    double t0 = now();
    tfmm_m2l_pass(t, &lists.m2l, p, M, L);
    double t1 = now();
    tfmm_downward_pass(t, p, L, phi, grad);
    double t2 = now();
    tfmm_m2p_pass(t, &lists.m2p, p, M, phi, grad);
    double t3 = now();
    cpu[0] = fmin(cpu[0], 1e3 * (t1 - t0));
    cpu[1] = fmin(cpu[1], 1e3 * (t2 - t1));
    cpu[2] = fmin(cpu[2], 1e3 * (t3 - t2));
  }
  double *d_M, *d_L, *d_phi, *d_grad;
  CHECK_CUDA(cudaMalloc((void **)&d_M, ecount * 8));
  CHECK_CUDA(cudaMalloc((void **)&d_L, ecount * 8));
  CHECK_CUDA(cudaMalloc((void **)&d_phi, n * 8));
  CHECK_CUDA(cudaMalloc((void **)&d_grad, 3 * n * 8));
  tfmm_csr_gpu m2l = {
      lists.m2l.ntargets,
      upload(lists.m2l.offset, (size_t)(lists.m2l.ntargets + 1) * 8),
      upload(lists.m2l.index,
             (size_t)lists.m2l.offset[lists.m2l.ntargets] * 4)};
  tfmm_csr_gpu m2p = {
      lists.m2p.ntargets,
      upload(lists.m2p.offset, (size_t)(lists.m2p.ntargets + 1) * 8),
      upload(lists.m2p.index,
             (size_t)lists.m2p.offset[lists.m2p.ntargets] * 4)};
  CHECK_TFMM(tfmm_upward_gpu(tree, p, d_M, NULL, &err), err);
  cudaEvent_t ev[4];
  for (int k = 0; k < 4; k++)
    CHECK_CUDA(cudaEventCreate(&ev[k]));
  double gpu[3] = {INFINITY, INFINITY, INFINITY};
  for (int r = -1; r < o->reps; r++) { /* -1: the warm-up */
    CHECK_CUDA(cudaEventRecord(ev[0], NULL));
    CHECK_TFMM(tfmm_farfield_gpu_m2l(tree, &m2l, p, d_M, d_L, NULL, &err), err);
    CHECK_CUDA(cudaEventRecord(ev[1], NULL));
    CHECK_TFMM(
        tfmm_farfield_gpu_downward(tree, p, d_L, d_phi, d_grad, NULL, &err),
        err);
    CHECK_CUDA(cudaEventRecord(ev[2], NULL));
    CHECK_TFMM(
        tfmm_farfield_gpu_m2p(tree, &m2p, p, d_M, d_phi, d_grad, NULL, &err),
        err);
    CHECK_CUDA(cudaEventRecord(ev[3], NULL));
    CHECK_CUDA(cudaEventSynchronize(ev[3]));
    if (r >= 0)
      for (int k = 0; k < 3; k++)
        gpu[k] = fmin(gpu[k], elapsed(ev[k], ev[k + 1]));
  }
  /* Compared only when the CPU ran (its results are the reference). */
  const char *eq =
      o->cpu_reps < 1 ? "-"
      : same(d_L, L, ecount) && same(d_phi, phi, n) && same(d_grad, grad, 3 * n)
          ? "yes"
          : "NO";
  printf("%9zu %5d %3d %5.2f %10.0f %9.3f %9.3f %9.3f %9.2f %9.2f %9.2f %5s\n",
         n, t->leaf_size, p, o->theta,
         (double)lists.m2l.offset[lists.m2l.ntargets], gpu[0], gpu[1], gpu[2],
         cpu[0], cpu[1], cpu[2], eq);
  fflush(stdout);
  for (int k = 0; k < 4; k++)
    cudaEventDestroy(ev[k]);
  cudaFree((void *)m2l.offset);
  cudaFree((void *)m2l.index);
  cudaFree((void *)m2p.offset);
  cudaFree((void *)m2p.index);
  cudaFree(d_M);
  cudaFree(d_L);
  cudaFree(d_phi);
  cudaFree(d_grad);
  free(M);
  free(L);
  free(phi);
  free(grad);
  tfmm_lists_free(&lists);
}

int main(int argc, char **argv) {
  options o;
  parse(argc, argv, &o);
  printf("# bench_farfield_gpu: Plummer, geometric criterion, M2P for single "
         "bodies; GPU ms best of %d (CUDA events), CPU ms best of %d "
         "(OpenMP, all cores); same: every value equals the CPU's\n",
         o.reps, o.cpu_reps);
  printf("%9s %5s %3s %5s %10s %9s %9s %9s %9s %9s %9s %5s\n", "N", "leaf", "p",
         "theta", "m2l", "gpu_m2l", "gpu_down", "gpu_m2p", "cpu_m2l",
         "cpu_down", "cpu_m2p", "same");
  for (int i = 0; i < o.nn; i++) {
    const size_t n = o.n[i];
    double *pos = malloc(3 * n * 8), *vel = malloc(3 * n * 8);
    double *mass = malloc(n * 8);
    if (tfmm_ic_plummer(n, 42, pos, vel, mass) != TFMM_OK) {
      fprintf(stderr, "bench_farfield_gpu: no bodies for N = %zu\n", n);
      return 1;
    }
    double *d_pos = upload(pos, 3 * n * 8), *d_mass = upload(mass, n * 8);
    for (int l = 0; l < o.nleaf; l++) {
      tfmm_error err = {{0}};
      tfmm_octree t;
      CHECK_TFMM(tfmm_octree_build(&t, n, pos, mass, o.leaf[l], 21, &err), err);
      tfmm_tree_gpu_params params = {.leaf_size = o.leaf[l], .max_depth = 21};
      tfmm_tree_gpu tree;
      size_t bytes = 0;
      CHECK_TFMM(tfmm_tree_gpu_build(NULL, &bytes, n, d_pos, d_mass, &params,
                                     &tree, NULL, &err),
                 err);
      void *ws = NULL;
      CHECK_CUDA(cudaMalloc(&ws, bytes));
      CHECK_TFMM(tfmm_tree_gpu_build(ws, &bytes, n, d_pos, d_mass, &params,
                                     &tree, NULL, &err),
                 err);
      for (int k = 0; k < o.norder; k++)
        point(&o, &t, &tree, o.order[k]);
      cudaFree(ws);
      tfmm_octree_free(&t);
    }
    cudaFree(d_pos);
    cudaFree(d_mass);
    free(pos);
    free(vel);
    free(mass);
  }
  return 0;
}
