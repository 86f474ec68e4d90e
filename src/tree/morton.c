/* Morton (Z-order) keys: 21 bits per axis interleaved into 63 bits, x in
 * the highest bit of every triple. Sorting by key orders the bodies along
 * the octree's depth-first walk: the top 3l bits of a key name the cell of
 * level l that holds the body. */
#include "octree.h"

#include "tree/keys.h"

uint64_t tfmm_morton_encode(const double x[3], const double lo[3],
                            double size) {
  return tfmm_key_encode(x, lo, size);
}
