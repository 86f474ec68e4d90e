/* bench_tree_gpu: the octree built on the GPU (kernels/tree/tree_gpu.h) beside
 * the CPU's tfmm_octree_build, on Plummer spheres. For each N: one warm-up
 * build, then `reps` timed builds (CUDA events per stage, and the wall
 * time of the call, which includes the per-level waits), the best of each
 * printed; the CPU build timed likewise (best of cpu_reps); and whether
 * the two trees are identical (structure, body order, keys exact).
 *
 *   bench_tree_gpu [--n 262144,1048576] [--leaf 64] [--reps 10]
 *                  [--cpu-reps 2] [--cells-per-body 0.5] [--host-levels 1]
 *
 * --host-levels 1 builds the cells level by level from the host (a wait a
 * level) instead of in one cooperative launch (tfmm_tree_gpu_params).
 * --cells-per-body sizes the GPU's room for cells (max_cells = factor * N;
 * 0 takes the bound that always holds). */
#include "tree/octree.h"
#include "tree_gpu.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "bench_tree_gpu: %s: %s\n", #call,                       \
              cudaGetErrorString(e_));                                         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

typedef struct options {
  size_t n[16];
  int nn, leaf, reps, cpu_reps, host_levels;
  double cells_per_body;
} options;

static int parse(int argc, char **argv, options *o) {
  o->nn = 0;
  o->leaf = 64;
  o->reps = 10;
  o->cpu_reps = 2;
  o->cells_per_body = 0.5;
  o->host_levels = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--n") == 0) {
      for (char *s = strtok(argv[i + 1], ","); s && o->nn < 16;
           s = strtok(NULL, ","))
        o->n[o->nn++] = (size_t)strtoull(s, NULL, 10);
    } else if (strcmp(argv[i], "--leaf") == 0) {
      o->leaf = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--reps") == 0) {
      o->reps = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--cpu-reps") == 0) {
      o->cpu_reps = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--cells-per-body") == 0) {
      o->cells_per_body = atof(argv[i + 1]);
    } else if (strcmp(argv[i], "--host-levels") == 0) {
      o->host_levels = atoi(argv[i + 1]);
    } else {
      fprintf(stderr, "bench_tree_gpu: unknown option %s\n", argv[i]);
      return 0;
    }
  }
  if (o->nn == 0) {
    o->n[0] = 262144;
    o->nn = 1;
  }
  return o->leaf >= 1 && o->reps >= 1;
}

/* Whether the GPU tree is the CPU's: every exact field. */
static int same_tree(const tfmm_octree *g, const tfmm_octree *t) {
  if (g->ncells != t->ncells || g->nleaves != t->nleaves ||
      g->depth != t->depth ||
      memcmp(g->keys, t->keys, t->n * sizeof *t->keys) ||
      memcmp(g->order, t->order, t->n * sizeof *t->order) ||
      memcmp(g->leaves, t->leaves, (size_t)t->nleaves * sizeof *t->leaves))
    return 0;
  for (int64_t c = 0; c < t->ncells; c++) {
    const tfmm_cell *a = &g->cells[c], *b = &t->cells[c];
    if (a->parent != b->parent || a->child_begin != b->child_begin ||
        a->child_count != b->child_count || a->body_begin != b->body_begin ||
        a->body_end != b->body_end || a->level != b->level)
      return 0;
  }
  return 1;
}

/* The largest relative deviation of the moments (mass to mass, centre
 * and radius to the cell's side). */
static double moment_deviation(const tfmm_octree *g, const tfmm_octree *t) {
  double worst = 0;
  for (int64_t c = 0; c < t->ncells; c++) {
    const tfmm_cell *a = &g->cells[c], *b = &t->cells[c];
    double d = fabs(a->mass - b->mass) / b->mass;
    worst = d > worst ? d : worst;
    d = fabs(a->radius - b->radius) / b->size;
    worst = d > worst ? d : worst;
    for (int k = 0; k < 3; k++) {
      d = fabs(a->center[k] - b->center[k]) / b->size;
      worst = d > worst ? d : worst;
    }
  }
  return worst;
}

static int bench_one(size_t n, const options *o) {
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass);
  if (!pos || !vel || !mass || tfmm_ic_plummer(n, 42, pos, vel, mass)) {
    fprintf(stderr, "bench_tree_gpu: no memory for %zu bodies\n", n);
    return 1;
  }
  double *d_pos, *d_mass;
  void *ws;
  CHECK_CUDA(cudaMalloc((void **)&d_pos, 3 * n * sizeof *pos));
  CHECK_CUDA(cudaMalloc((void **)&d_mass, n * sizeof *mass));
  CHECK_CUDA(cudaMemcpy(d_pos, pos, 3 * n * sizeof *pos, cudaMemcpyDefault));
  CHECK_CUDA(cudaMemcpy(d_mass, mass, n * sizeof *mass, cudaMemcpyDefault));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  tfmm_tree_gpu_params p = {.leaf_size = o->leaf,
                            .max_depth = TFMM_MAX_DEPTH,
                            .max_cells =
                                (int64_t)(o->cells_per_body * (double)n),
                            .timed = 1,
                            .host_levels = o->host_levels};
  tfmm_tree_gpu g;
  tfmm_error err;
  size_t bytes = 0;
  if (tfmm_tree_gpu_build(NULL, &bytes, n, d_pos, d_mass, &p, &g, s, &err)) {
    fprintf(stderr, "bench_tree_gpu: %s\n", err.message);
    return 1;
  }
  CHECK_CUDA(cudaMalloc(&ws, bytes));
  tfmm_tree_gpu_times best = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
  double wall = 1e30;
  for (int r = 0; r <= o->reps; r++) {
    double t0 = now();
    if (tfmm_tree_gpu_build(ws, &bytes, n, d_pos, d_mass, &p, &g, s, &err)) {
      fprintf(stderr, "bench_tree_gpu: %s\n", err.message);
      return 1;
    }
    double w = 1e3 * (now() - t0);
    if (r == 0)
      continue; /* warm-up */
    wall = w < wall ? w : wall;
    const double *a = &g.times.keys;
    double *b = &best.keys;
    for (int k = 0; k < 6; k++)
      b[k] = a[k] < b[k] ? a[k] : b[k];
  }
  tfmm_octree cpu, copy;
  double cpu_ms = 1e30;
  for (int r = 0; r < o->cpu_reps; r++) {
    double t0 = now();
    if (tfmm_octree_build(&cpu, n, pos, mass, o->leaf, TFMM_MAX_DEPTH, &err)) {
      fprintf(stderr, "bench_tree_gpu: %s\n", err.message);
      return 1;
    }
    double w = 1e3 * (now() - t0);
    cpu_ms = w < cpu_ms ? w : cpu_ms;
    if (r + 1 < o->cpu_reps)
      tfmm_octree_free(&cpu);
  }
  if (tfmm_tree_gpu_copy(&g, &copy, s, &err)) {
    fprintf(stderr, "bench_tree_gpu: %s\n", err.message);
    return 1;
  }
  printf("%10zu %5d %8lld %6.3f %6.3f %6.3f %6.3f %7.3f %7.3f %7.3f %9.2f "
         "%8.1f %5s %8.1e %7.1f\n",
         n, o->leaf, (long long)g.ncells, best.keys, best.sort, best.gather,
         best.cells, best.moments, best.total, wall, cpu_ms, cpu_ms / wall,
         same_tree(&copy, &cpu) ? "yes" : "NO", moment_deviation(&copy, &cpu),
         (double)bytes / (double)n);
  fflush(stdout);
  tfmm_octree_free(&copy);
  tfmm_octree_free(&cpu);
  cudaFree(ws);
  cudaFree(d_pos);
  cudaFree(d_mass);
  cudaStreamDestroy(s);
  free(pos);
  free(vel);
  free(mass);
  return 0;
}

int main(int argc, char **argv) {
  options o;
  if (!parse(argc, argv, &o))
    return 2;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("skipped: no GPU\n");
    return 0;
  }
  struct cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("# device: %s; GPU times in ms, best of %d warm builds (CUDA "
         "events); wall: the call; cpu: tfmm_octree_build, best of %d\n",
         prop.name, o.reps, o.cpu_reps);
  printf("%10s %5s %8s %6s %6s %6s %6s %7s %7s %7s %9s %8s %5s %8s %7s\n", "n",
         "leaf", "cells", "keys", "sort", "gather", "cells", "moments", "total",
         "wall", "cpu_ms", "speedup", "same", "mom_dev", "B/body");
  for (int k = 0; k < o.nn; k++)
    if (bench_one(o.n[k], &o))
      return 1;
  return 0;
}
