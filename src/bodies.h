/* Input checks and packing of bodies, shared by every method. */
#ifndef TFMM_BODIES_H
#define TFMM_BODIES_H

#include "internal.h"

#include <stdint.h>

/* Every coordinate finite, every mass finite and > 0; names the first bad
 * body. */
tfmm_status tfmm_bodies_check(size_t n, const double *pos, const double *mass,
                              tfmm_error *err);

/* The centre of the bodies' bounding box. Positions are shifted by it
 * before they are rounded to single precision, so that a system far from
 * the origin keeps its relative precision. */
void tfmm_bodies_center(size_t n, const double *pos, double center[3]);

/* xyzm[4i..4i+3] = (x - c, y - c, z - c, m) in single precision. */
void tfmm_bodies_pack_f32(size_t n, const double *pos, const double *mass,
                          const double center[3], float *xyzm);

/* The same in double precision: the layout of the GPU's double-precision
 * all-pairs kernel. */
void tfmm_bodies_pack_f64(size_t n, const double *pos, const double *mass,
                          const double center[3], double *xyzm);

/* A point and the input index of its body, ordered lexicographically on
 * (x, y, z) and then by index, so that equal points sit together in index
 * order. */
typedef struct tfmm_point_key {
  double x, y, z;
  int64_t index;
} tfmm_point_key;

/* qsort comparator of tfmm_point_key. */
int tfmm_point_key_compare(const void *a, const void *b);

/* Looks for two bodies at one point. xyz holds n points with the given
 * stride in doubles (3 for positions, 4 for packed xyzm converted back).
 * Returns 1 and the two smallest indices of such a pair, else 0. Sorting:
 * O(n log n). On allocation failure returns -1. */
int tfmm_bodies_find_coincident(size_t n, const double *xyz, size_t stride,
                                size_t *i, size_t *j);

/* The active bodies among active[0..n) (nonzero bytes, input order). */
size_t tfmm_bodies_count_active(size_t n, const unsigned char *active);

/* The first body (among the active ones, active not NULL) whose results
 * (acc: 3n, pot: n or NULL) are not finite, or n. */
size_t tfmm_bodies_first_nonfinite(size_t n, const unsigned char *active,
                                   const double *acc, const double *pot);

#endif
