/* The cells as the GPU traversal (traverse_gpu.cu) reads them, the
 * criterion's test on a pair of them (src/tree/mac_rule.h, the CPU's
 * arithmetic), and the kernels and functors of the criterion's per-cell
 * inputs: the mass criterion's theta, the error criterion's estimate of
 * |a|_A (src/tree/accel_estimate.c's walk) or its least previous |a| of a
 * cell's bodies (tfmm_accel_prior's). Included by traverse_gpu.cu alone,
 * built with --fmad=false (the CPU's roundings). */
#ifndef TFMM_TRAVERSE_GPU_CELLS_CUH
#define TFMM_TRAVERSE_GPU_CELLS_CUH

#include "tree/mac_rule.h"
#include "tree_gpu.h"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <stdint.h>

namespace {

/* The estimate walk's stack: at most 8 cells pushed a level. */
constexpr int STACK = 8 * (TFMM_TREE_GPU_LEVELS + 1);

/* The tree's cells as the traversal reads them. */
struct Cells {
  const double *center, *radius, *mass;
  const int32_t *child_begin, *child_count, *body_begin, *body_end;
  const int32_t *targets; /* per cell, or NULL: every body is a target */
  const double *theta;    /* per cell, or NULL: theta0 */
  const double *accel;    /* per cell, or NULL */
  double theta0;
};

__device__ int is_leaf(const Cells &c, int32_t k) {
  return c.child_count[k] == 0;
}

__device__ int accept(const Cells &c, const tfmm_mac_rule &rule, int32_t a,
                      int32_t b) {
  return tfmm_mac_rule_accept(&rule, c.center + 3 * (int64_t)a, c.radius[a],
                              c.accel != nullptr ? c.accel[a] : 0,
                              c.center + 3 * (int64_t)b, c.radius[b], c.mass[b],
                              c.theta != nullptr ? c.theta[b] : c.theta0);
}

/* ---- The criterion's per-cell inputs ------------------------------------ */

__global__ void mass_thetas(int64_t ncells, const double *mass, double theta0,
                            int p, double *theta) {
  int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (c < ncells)
    theta[c] = tfmm_mac_mass_theta(theta0, p, mass[c] / mass[0]);
}

/* accel_estimate.c's leaf_field, one thread a leaf, the same stack order. */
__global__ void leaf_fields(int64_t nleaves, const int32_t *leaves, Cells c,
                            double eps2, double *accel) {
  int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k >= nleaves)
    return;
  const int32_t leaf = leaves[k];
  const double x[3] = {c.center[3 * (int64_t)leaf],
                       c.center[3 * (int64_t)leaf + 1],
                       c.center[3 * (int64_t)leaf + 2]};
  double g[3] = {0, 0, 0};
  int32_t stack[STACK];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    int32_t b = stack[--top];
    if (b == leaf)
      continue;
    const double *cb = c.center + 3 * (int64_t)b;
    double dx = cb[0] - x[0], dy = cb[1] - x[1], dz = cb[2] - x[2];
    double d2 = dx * dx + dy * dy + dz * dz;
    if (!tfmm_estimate_whole(c.child_count[b] == 0, c.radius[b], d2)) {
      for (int32_t j = 0; j < c.child_count[b]; j++)
        stack[top++] = c.child_begin[b] + j;
      continue;
    }
    tfmm_estimate_add(g, c.mass[b], dx, dy, dz, d2, eps2);
  }
  accel[leaf] = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
}

/* Every parent of one level: the least over its children. */
__global__ void least_of_children(int64_t begin, int64_t end, Cells c,
                                  double *accel) {
  int64_t k = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k >= end || c.child_count[k] == 0)
    return;
  double m = INFINITY;
  for (int32_t j = 0; j < c.child_count[k]; j++)
    m = fmin(m, accel[c.child_begin[k] + j]);
  accel[k] = m;
}

/* The previous |a| of sorted body k (tfmm_mac_prior_accel), read through
 * the tree's order from the caller's input order. */
struct PriorAccel {
  const double *acc;
  const int32_t *order;
  double scale;
  __device__ double operator()(int64_t k) const {
    return tfmm_mac_prior_accel(acc + 3 * (int64_t)order[k], scale);
  }
};
using PriorIter =
    thrust::transform_iterator<PriorAccel, thrust::counting_iterator<int64_t>>;

/* The CPU's fmin (accel_estimate.c), so that the least is the same. */
struct Least {
  __device__ double operator()(double a, double b) const { return fmin(a, b); }
};

} // namespace

#endif
