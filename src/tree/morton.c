/* Morton (Z-order) keys: 21 bits per axis interleaved into 63 bits, x in
 * the highest bit of every triple. Sorting by key orders the bodies along
 * the octree's depth-first walk: the top 3l bits of a key name the cell of
 * level l that holds the body. */
#include "octree.h"

/* Spreads the low 21 bits of v so that bit i moves to bit 3i (the
 * "magic numbers" method: each step halves the width of the groups). */
static uint64_t spread_bits(uint64_t v) {
  v &= 0x1fffffull;
  v = (v | v << 32) & 0x1f00000000ffffull;
  v = (v | v << 16) & 0x1f0000ff0000ffull;
  v = (v | v << 8) & 0x100f00f00f00f00full;
  v = (v | v << 4) & 0x10c30c30c30c30c3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

/* The cell index along one axis: floor(u) for u = (x - lo) 2^21 / size,
 * clamped so that a body on the upper face (or pushed past it by rounding)
 * lands in the last cell. The comparison form also sends NaN to 0. */
static uint64_t grid_index(double x, double lo, double scale) {
  const double top = (double)((1u << TFMM_MORTON_BITS) - 1);
  double u = (x - lo) * scale;
  if (!(u > 0))
    return 0;
  if (u > top)
    u = top;
  return (uint64_t)u;
}

uint64_t tfmm_morton_encode(const double x[3], const double lo[3],
                            double size) {
  double scale = (double)(1u << TFMM_MORTON_BITS) / size;
  return spread_bits(grid_index(x[0], lo[0], scale)) << 2 |
         spread_bits(grid_index(x[1], lo[1], scale)) << 1 |
         spread_bits(grid_index(x[2], lo[2], scale));
}
