/* bench_upward_gpu: the tree and its multipoles built on the GPU
 * (kernels/tree/tree_gpu.h, kernels/upward/upward_gpu.h), beside the CPU's
 * tfmm_octree_build and tfmm_upward_pass, on Plummer spheres. For each N
 * and order: a warm-up, then `reps` timed runs of build + upward pass
 * (CUDA events; the best printed), the CPU's likewise (best of cpu_reps;
 * skipped above --cpu-max bodies), the largest deviation of the GPU's
 * multipoles from the CPU's relative to mass * radius^n (0: bit for bit),
 * and the device bytes per body: bodies (32), the tree's workspace and
 * the multipoles.
 *
 *   bench_upward_gpu [--n 262144,1048576] [--order 4,8] [--leaf 64]
 *                    [--reps 10] [--cpu-reps 2] [--cpu-max 16777216]
 */
#include "farfield/expansion.h"
#include "farfield/passes.h"
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
      fprintf(stderr, "bench_upward_gpu: %s: %s\n", #call,                     \
              cudaGetErrorString(e_));                                         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

enum { MAX_LIST = 16 };

typedef struct options {
  size_t n[MAX_LIST];
  int order[MAX_LIST];
  int nn, norder, leaf, reps, cpu_reps;
  size_t cpu_max;
} options;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.leaf = 64, .reps = 10, .cpu_reps = 2, .cpu_max = 1 << 24};
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *f = argv[i];
    char *v = argv[i + 1];
    if (strcmp(f, "--n") == 0 || strcmp(f, "--order") == 0) {
      const int is_n = f[2] == 'n';
      for (char *s = strtok(v, ","); s; s = strtok(NULL, ",")) {
        if ((is_n ? o->nn : o->norder) == MAX_LIST)
          break;
        if (is_n)
          o->n[o->nn++] = (size_t)strtoull(s, NULL, 10);
        else
          o->order[o->norder++] = atoi(s);
      }
    } else if (strcmp(f, "--leaf") == 0) {
      o->leaf = atoi(v);
    } else if (strcmp(f, "--reps") == 0) {
      o->reps = atoi(v);
    } else if (strcmp(f, "--cpu-reps") == 0) {
      o->cpu_reps = atoi(v);
    } else if (strcmp(f, "--cpu-max") == 0) {
      o->cpu_max = (size_t)strtoull(v, NULL, 10);
    } else {
      fprintf(stderr, "bench_upward_gpu: unknown flag %s\n", f);
      return 2;
    }
  }
  if (o->nn == 0)
    o->n[o->nn++] = 1 << 20;
  if (o->norder == 0) {
    o->order[o->norder++] = 4;
    o->order[o->norder++] = 8;
  }
  return 0;
}

/* The largest |gpu - cpu| / (mass * radius^n) over every coefficient. */
static double deviation(const tfmm_octree *t, int p, const double *gpu,
                        const double *cpu) {
  const size_t size = tfmm_expansion_size(p);
  double worst = 0;
  for (int64_t c = 0; c < t->ncells; c++) {
    double scale = t->cells[c].mass;
    for (int n = 0; n <= p; n++, scale *= t->cells[c].radius)
      for (int m = 0; m <= n; m++)
        for (int part = 0; part < 2; part++) {
          size_t k = (size_t)c * size + 2 * (size_t)(n * (n + 1) / 2 + m) +
                     (size_t)part;
          double d = fabs(gpu[k] - cpu[k]);
          if (d > 0)
            worst = fmax(worst, scale > 0 ? d / scale : INFINITY);
        }
  }
  return worst;
}

typedef struct gpu_result {
  double tree_ms, upward_ms, total_ms;
  size_t work_bytes, M_bytes;
  void *ws; /* the tree's workspace: its arrays point into it */
} gpu_result;

/* Best of reps of build + upward on the device bodies. */
static int time_gpu(const options *o, size_t n, int p, const double *d_pos,
                    const double *d_mass, tfmm_tree_gpu *tree, double **d_M,
                    gpu_result *r) {
  tfmm_tree_gpu_params params = {.leaf_size = o->leaf, .max_depth = 21};
  tfmm_error err = {{0}};
  size_t bytes = 0;
  if (tfmm_tree_gpu_build(NULL, &bytes, n, d_pos, d_mass, &params, tree, NULL,
                          &err) != TFMM_OK) {
    fprintf(stderr, "bench_upward_gpu: %s\n", err.message);
    return 1;
  }
  void *ws = NULL;
  CHECK_CUDA(cudaMalloc(&ws, bytes));
  r->ws = ws;
  r->work_bytes = bytes;
  cudaEvent_t ev[3];
  for (int k = 0; k < 3; k++)
    CHECK_CUDA(cudaEventCreate(&ev[k]));
  r->tree_ms = r->upward_ms = r->total_ms = INFINITY;
  for (int rep = -1; rep < o->reps; rep++) { /* rep -1: the warm-up */
    CHECK_CUDA(cudaEventRecord(ev[0], NULL));
    if (tfmm_tree_gpu_build(ws, &bytes, n, d_pos, d_mass, &params, tree, NULL,
                            &err) != TFMM_OK) {
      fprintf(stderr, "bench_upward_gpu: %s\n", err.message);
      return 1;
    }
    CHECK_CUDA(cudaEventRecord(ev[1], NULL));
    if (*d_M == NULL) {
      r->M_bytes = (size_t)tree->ncells * tfmm_expansion_size(p) * 8;
      CHECK_CUDA(cudaMalloc((void **)d_M, r->M_bytes));
    }
    if (tfmm_upward_gpu(tree, p, *d_M, NULL, &err) != TFMM_OK) {
      fprintf(stderr, "bench_upward_gpu: %s\n", err.message);
      return 1;
    }
    CHECK_CUDA(cudaEventRecord(ev[2], NULL));
    CHECK_CUDA(cudaEventSynchronize(ev[2]));
    float a = 0, b = 0;
    CHECK_CUDA(cudaEventElapsedTime(&a, ev[0], ev[1]));
    CHECK_CUDA(cudaEventElapsedTime(&b, ev[1], ev[2]));
    if (rep >= 0) {
      r->tree_ms = fmin(r->tree_ms, a);
      r->upward_ms = fmin(r->upward_ms, b);
      r->total_ms = fmin(r->total_ms, (double)a + b);
    }
  }
  for (int k = 0; k < 3; k++)
    cudaEventDestroy(ev[k]);
  return 0;
}

static int run_point(const options *o, size_t n, const double *pos,
                     const double *mass, const double *d_pos,
                     const double *d_mass) {
  for (int k = 0; k < o->norder; k++) {
    const int p = o->order[k];
    tfmm_tree_gpu tree;
    double *d_M = NULL;
    gpu_result g = {0};
    if (time_gpu(o, n, p, d_pos, d_mass, &tree, &d_M, &g) != 0)
      return 1;
    double cpu_tree = NAN, cpu_up = NAN, dev = NAN;
    if (n <= o->cpu_max && o->cpu_reps > 0) {
      tfmm_octree t;
      tfmm_error err = {{0}};
      double *M = NULL;
      cpu_tree = cpu_up = INFINITY;
      for (int rep = 0; rep < o->cpu_reps; rep++) {
        if (rep > 0)
          tfmm_octree_free(&t);
        double t0 = now();
        if (tfmm_octree_build(&t, n, pos, mass, o->leaf, 21, &err) != TFMM_OK) {
          fprintf(stderr, "bench_upward_gpu: %s\n", err.message);
          return 1;
        }
        double t1 = now();
        if (M == NULL)
          M = malloc((size_t)t.ncells * tfmm_expansion_size(p) * sizeof *M);
        tfmm_upward_pass(&t, p, M);
        cpu_tree = fmin(cpu_tree, 1e3 * (t1 - t0));
        cpu_up = fmin(cpu_up, 1e3 * (now() - t1));
      }
      double *G = malloc(g.M_bytes);
      CHECK_CUDA(cudaMemcpy(G, d_M, g.M_bytes, cudaMemcpyDeviceToHost));
      dev = t.ncells == tree.ncells ? deviation(&t, p, G, M) : INFINITY;
      free(G);
      free(M);
      tfmm_octree_free(&t);
    }
    const double per_body =
        (double)(32 * n + g.work_bytes + g.M_bytes) / (double)n;
    printf("%10zu %5d %9.3f %9.3f %9.3f %10.2f %10.2f %10.3g %8.1f %8.1f\n", n,
           p, g.tree_ms, g.upward_ms, g.total_ms, cpu_tree, cpu_up, dev,
           (double)g.work_bytes / (double)n, per_body);
    fflush(stdout);
    cudaFree(d_M);
    cudaFree(g.ws);
  }
  return 0;
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o) != 0)
    return 2;
  printf("# bench_upward_gpu: Plummer, leaf %d; GPU ms best of %d (CUDA "
         "events), CPU ms best of %d (%s)\n",
         o.leaf, o.reps, o.cpu_reps, "tfmm_octree_build, tfmm_upward_pass");
  printf("# dev: largest |M_gpu - M_cpu| / (mass radius^n); tree B/body: "
         "the tree's workspace; all B/body: bodies + tree + multipoles\n");
  printf("%10s %5s %9s %9s %9s %10s %10s %10s %8s %8s\n", "N", "order",
         "gpu_tree", "gpu_up", "gpu_total", "cpu_tree", "cpu_up", "dev",
         "tree_B/b", "all_B/b");
  for (int k = 0; k < o.nn; k++) {
    const size_t n = o.n[k];
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * 8);
    double *mass = malloc(n * sizeof *mass);
    if (pos == NULL || vel == NULL || mass == NULL ||
        tfmm_ic_plummer(n, 42, pos, vel, mass) != TFMM_OK) {
      fprintf(stderr, "bench_upward_gpu: no bodies for N = %zu\n", n);
      return 1;
    }
    free(vel);
    double *d_pos = NULL, *d_mass = NULL;
    CHECK_CUDA(cudaMalloc((void **)&d_pos, 3 * n * sizeof *pos));
    CHECK_CUDA(cudaMalloc((void **)&d_mass, n * sizeof *mass));
    CHECK_CUDA(cudaMemcpy(d_pos, pos, 3 * n * 8, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_mass, mass, n * 8, cudaMemcpyHostToDevice));
    int rc = run_point(&o, n, pos, mass, d_pos, d_mass);
    cudaFree(d_pos);
    cudaFree(d_mass);
    free(pos);
    free(mass);
    if (rc != 0)
      return rc;
  }
  return 0;
}
