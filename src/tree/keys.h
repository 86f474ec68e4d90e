/* The key formulas of the octree, written once for the CPU (octree.c,
 * morton.c) and the GPU (kernels/tree/tree_gpu.cu), so that both build the
 * same tree: Morton (Z-order) keys of 21 bits per axis interleaved into
 * 63 bits, x in the highest bit of every triple, and the split of a cell's
 * sorted keys into its eight octants. */
#ifndef TFMM_KEYS_H
#define TFMM_KEYS_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define TFMM_KEYS_FN static __host__ __device__ __forceinline__
#else
#define TFMM_KEYS_FN static inline
#endif

/* Bits per axis, and the deepest level a key names. */
enum { TFMM_KEY_BITS = 21, TFMM_KEY_LEVELS = 21 };

/* Spreads the low 21 bits of v so that bit i moves to bit 3i (the
 * "magic numbers" method: each step halves the width of the groups). */
TFMM_KEYS_FN uint64_t tfmm_key_spread(uint64_t v) {
  v &= 0x1fffffull;
  v = (v | v << 32) & 0x1f00000000ffffull;
  v = (v | v << 16) & 0x1f0000ff0000ffull;
  v = (v | v << 8) & 0x100f00f00f00f00full;
  v = (v | v << 4) & 0x10c30c30c30c30c3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

/* The cell index along one axis: floor(u) for u = (x - lo) scale, scale =
 * 2^21 / size, clamped so that a body on the upper face (or pushed past it
 * by rounding) lands in the last cell. The comparison form also sends NaN
 * to 0. Rounded as written on both sides (no fused multiply-add). */
TFMM_KEYS_FN uint64_t tfmm_key_grid(double x, double lo, double scale) {
  const double top = (double)((1u << TFMM_KEY_BITS) - 1);
#if defined(__CUDA_ARCH__)
  double u = __dmul_rn(__dsub_rn(x, lo), scale);
#else
  double u = (x - lo) * scale;
#endif
  if (!(u > 0))
    return 0;
  if (u > top)
    u = top;
  return (uint64_t)u;
}

/* The key of the point x in the cube of lowest corner lo and side size. */
TFMM_KEYS_FN uint64_t tfmm_key_encode(const double x[3], const double lo[3],
                                      double size) {
  const double scale = (double)(1u << TFMM_KEY_BITS) / size;
  return tfmm_key_spread(tfmm_key_grid(x[0], lo[0], scale)) << 2 |
         tfmm_key_spread(tfmm_key_grid(x[1], lo[1], scale)) << 1 |
         tfmm_key_spread(tfmm_key_grid(x[2], lo[2], scale));
}

/* Inverse of tfmm_key_spread: bits 0, 3, 6, ... of v, packed. */
TFMM_KEYS_FN uint64_t tfmm_key_compact(uint64_t v) {
  v &= 0x1249249249249249ull;
  v = (v ^ (v >> 2)) & 0x10c30c30c30c30c3ull;
  v = (v ^ (v >> 4)) & 0x100f00f00f00f00full;
  v = (v ^ (v >> 8)) & 0x1f0000ff0000ffull;
  v = (v ^ (v >> 16)) & 0x1f00000000ffffull;
  v = (v ^ (v >> 32)) & 0x1fffffull;
  return v;
}

/* The cube of the cell of `level` holding the body of `key`, named by the
 * key's top 3 level bits (level bits of the grid index along each axis), in
 * the tree's cube (lowest corner box_min, side box_size): its centre and
 * side. Rounded as written on both sides (no fused multiply-add). */
TFMM_KEYS_FN void tfmm_key_cell_cube(uint64_t key, int level,
                                     const double box_min[3], double box_size,
                                     double center[3], double *size) {
  const uint64_t prefix = key >> 3 * (TFMM_KEY_LEVELS - level);
  const uint64_t index[3] = {tfmm_key_compact(prefix >> 2),
                             tfmm_key_compact(prefix >> 1),
                             tfmm_key_compact(prefix)};
  const double side = ldexp(box_size, -level);
  *size = side;
  for (int k = 0; k < 3; k++)
#if defined(__CUDA_ARCH__)
    center[k] = __dadd_rn(box_min[k], __dmul_rn((double)index[k] + 0.5, side));
#else
    center[k] = box_min[k] + ((double)index[k] + 0.5) * side;
#endif
}

/* The first of the sorted keys [lo, end) whose top bits (the key shifted
 * right by `shift`) reach `top`, by binary search: end when none does. */
TFMM_KEYS_FN int64_t tfmm_key_first_at(const uint64_t *keys, int64_t lo,
                                       int64_t end, int shift, uint64_t top) {
  int64_t hi = end;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if ((keys[mid] >> shift) < top)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Where octant o (1..7) of level + 1 starts among the sorted keys
 * [begin, end) of a cell of level `level`: the keys share their top 3
 * level bits, so the next 3 bits rise through the range. */
TFMM_KEYS_FN int64_t tfmm_key_octant_start(const uint64_t *keys, int64_t begin,
                                           int64_t end, int level, int o) {
  const int shift = 3 * (TFMM_KEY_LEVELS - level - 1);
  const uint64_t prefix = (keys[begin] >> shift) & ~(uint64_t)7;
  return tfmm_key_first_at(keys, begin, end, shift, prefix | (uint64_t)o);
}

/* Splits the sorted keys [begin, end) of a cell of level `level` into the
 * eight octants of level + 1: octant o holds [b[o], b[o + 1]); each
 * boundary is a binary search from the one before (the same boundaries as
 * tfmm_key_octant_start's, which the GPU takes one a lane). */
TFMM_KEYS_FN void tfmm_key_octants(const uint64_t *keys, int64_t begin,
                                   int64_t end, int level, int64_t b[9]) {
  const int shift = 3 * (TFMM_KEY_LEVELS - level - 1);
  const uint64_t prefix = (keys[begin] >> shift) & ~(uint64_t)7;
  int64_t lo = begin;
  b[0] = begin;
  b[8] = end;
  for (uint64_t o = 1; o < 8; o++)
    b[o] = lo = tfmm_key_first_at(keys, lo, end, shift, prefix | o);
}

#endif
