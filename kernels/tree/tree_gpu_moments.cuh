/* The cells' moments (tree_gpu.cu's stage 5, also a refit's): each
 * cell's cube from its key, each leaf's mass, centre of mass and radius
 * from its bodies, the parents' mass and centre from their children, every
 * radius above the leaves as the largest distance of its bodies from its
 * centre; and a refit's growth (tree_gpu.h), (r / r0)^3 a leaf. octree.c's
 * formulas in octree.c's order of summation. Included by tree_gpu.cu
 * alone, after tree_gpu_levels.cuh (Cells). */
#ifndef TFMM_TREE_GPU_MOMENTS_CUH
#define TFMM_TREE_GPU_MOMENTS_CUH

#include "tree/keys.h"
#include "tree_gpu_levels.cuh"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <math.h>
#include <stdint.h>

namespace {

struct Moments {
  const double *pos, *mass; /* bodies in key order */
  double *center, *radius, *cmass, *box_center, *size;
};

/* octree.c's cell_box, from the same formula (src/tree/keys.h). */
__global__ void cell_box(Cells cells, Moments mo, const uint64_t *keys,
                         const double *d_box, int32_t ncells) {
  int32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncells)
    return;
  tfmm_key_cell_cube(keys[cells.body_begin[c]], cells.level[c], d_box, d_box[3],
                     mo.box_center + 3 * c, &mo.size[c]);
}

__device__ double distance(const double *a, const double *b) {
  double dx = __dsub_rn(a[0], b[0]), dy = __dsub_rn(a[1], b[1]),
         dz = __dsub_rn(a[2], b[2]);
  return sqrt(__dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)),
                        __dmul_rn(dz, dz)));
}

/* octree.c's set_center: relative to the cube, a massless cell at its
 * cube's centre. */
__device__ void set_center(Moments mo, int32_t c, double mass,
                           const double moment[3]) {
  mo.cmass[c] = mass;
  for (int k = 0; k < 3; k++)
    mo.center[3 * c + k] =
        __dadd_rn(mo.box_center[3 * c + k], mass > 0 ? moment[k] / mass : 0.0);
}

/* octree.c's leaf_moments. */
__global__ void leaf_moments(Cells cells, Moments mo, int32_t ncells) {
  int32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncells || cells.child_count[c] != 0)
    return;
  int32_t b = cells.body_begin[c], e = cells.body_end[c];
  const double *bc = mo.box_center + 3 * c;
  double mass = 0, moment[3] = {0, 0, 0};
  for (int32_t i = b; i < e; i++) {
    double m = mo.mass[i];
    mass = __dadd_rn(mass, m);
    for (int k = 0; k < 3; k++)
      moment[k] = __dadd_rn(moment[k],
                            __dmul_rn(m, __dsub_rn(mo.pos[3 * i + k], bc[k])));
  }
  set_center(mo, c, mass, moment);
  double *center = mo.center + 3 * c;
  if (e - b == 1)
    for (int k = 0; k < 3; k++)
      center[k] = mo.pos[3 * b + k];
  double radius = 0;
  for (int32_t i = b; i < e; i++)
    radius = fmax(radius, distance(center, mo.pos + 3 * i));
  mo.radius[c] = radius;
}

/* octree.c's parent_moments, mass and centre, for the cells [begin,
 * begin + m) of a level whose children are done; the radius is zeroed here
 * and raised by ancestor_radii once every centre is known. */
__global__ void parent_moments(Cells cells, Moments mo, int32_t begin,
                               int32_t m) {
  int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m)
    return;
  int32_t c = begin + j, count = cells.child_count[c];
  if (count == 0)
    return;
  const double *bc = mo.box_center + 3 * c;
  double mass = 0, moment[3] = {0, 0, 0};
  for (int32_t k = 0; k < count; k++) {
    int32_t ch = cells.child_begin[c] + k;
    double m_ch = mo.cmass[ch];
    mass = __dadd_rn(mass, m_ch);
    for (int i = 0; i < 3; i++)
      moment[i] = __dadd_rn(
          moment[i], __dmul_rn(m_ch, __dsub_rn(mo.center[3 * ch + i], bc[i])));
  }
  set_center(mo, c, mass, moment);
  if (count == 1)
    for (int i = 0; i < 3; i++)
      mo.center[3 * c + i] = mo.center[3 * cells.child_begin[c] + i];
  mo.radius[c] = 0;
}

constexpr int RADII_WARPS = 4; /* a block: one warp a leaf */

/* The radius of every cell above the leaves: the largest distance from its
 * centre to one of its bodies, as octree.c's farthest finds it (there by
 * branch and bound from the cell, one cell at a time; one thread doing so
 * for the root walked most of the tree alone: 1.6 ms of the 262,144-body
 * tree). Here one warp a leaf takes its bodies' largest distance to the
 * centre of each of its ancestors and raises the ancestor's radius to it
 * with an atomic maximum. A maximum is exact in any order, so the radii
 * are the CPU's bit for bit; non-negative doubles order as their bits.
 * (A block of 64 threads a leaf, with two barriers an ancestor, took
 * 4.3 ms at 16M bodies: leaves hold ~18 bodies, and the barriers made
 * every ancestor a round trip.) */
__global__ void __launch_bounds__(32 * RADII_WARPS)
    ancestor_radii(Cells cells, Moments mo, const int32_t *leaves,
                   int32_t nleaves) {
  const int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (w >= nleaves)
    return; /* the whole warp: nothing below waits on other warps */
  const int32_t leaf = leaves[w];
  const int32_t b = cells.body_begin[leaf], e = cells.body_end[leaf];
  for (int32_t a = cells.parent[leaf]; a >= 0; a = cells.parent[a]) {
    const double *center = mo.center + 3 * a;
    double r = 0;
    for (int32_t i = b + lane; i < e; i += 32)
      r = fmax(r, distance(center, mo.pos + 3 * i));
    for (int k = 16; k >= 1; k >>= 1)
      r = fmax(r, __shfl_xor_sync(0xffffffffu, r, k));
    if (lane == 0) {
      unsigned long long *bits = (unsigned long long *)(mo.radius + a);
      const unsigned long long mine =
          (unsigned long long)__double_as_longlong(r);
      if (*(volatile unsigned long long *)bits < mine)
        atomicMax(bits, mine);
    }
  }
}

/* A refit's growth (tree_gpu.h): (r / r0)^3 of leaf k, its radius now
 * against its radius at the build; 1 for a leaf whose radius was 0 then
 * (one body, or bodies at one point). The cube of the ratio because the
 * near field's work grows with the volume its pairs of leaves reach. */
struct LeafGrowth {
  const int32_t *leaves;
  const double *radius, *radius0;
  __host__ __device__ double operator()(int64_t k) const {
    const int32_t c = leaves[k];
    if (!(radius0[c] > 0))
      return 1.0;
    const double q = radius[c] / radius0[c];
    return q * q * q;
  }
};

using GrowthIter =
    thrust::transform_iterator<LeafGrowth, thrust::counting_iterator<int64_t>>;
} // namespace

#endif
