/* The opening criterion (multipole acceptance criterion) of the
 * traversals: cells A and B are well separated when
 *   r_A + r_B < theta * d,   d = |c_A - c_B|,
 * with r the radius enclosing a cell's bodies about its expansion centre c
 * (Dehnen 2002, J. Comput. Phys. 179, 27, eq. 13 with alpha = theta). The
 * expansions about c_A and c_B then converge with ratio below theta. */
#ifndef TFMM_MAC_H
#define TFMM_MAC_H

#include "tree/octree.h"

static inline int tfmm_mac_accept(const tfmm_cell *a, const tfmm_cell *b,
                                  double theta) {
  double dx = a->center[0] - b->center[0];
  double dy = a->center[1] - b->center[1];
  double dz = a->center[2] - b->center[2];
  double r = a->radius + b->radius;
  /* Squared, so that no square root is taken per test; r < theta d with
   * both sides non-negative. */
  return r * r < theta * theta * (dx * dx + dy * dy + dz * dz);
}

#endif
