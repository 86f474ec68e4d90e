/* The locally essential trees a rank sends the others (let.c): what the
 * evaluation gives them, and the records sent. */
#ifndef TFMM_DOMAIN_LET_H
#define TFMM_DOMAIN_LET_H

#include "farfield/expansion.h"
#include "internal.h"
#include "tree/octree.h"

#include <stddef.h>

/* What the locally essential trees need of the evaluation. */
typedef struct tfmm_let_params {
  double theta;      /* the evaluation's opening angle, for the receiver's
                        M2L: r_A + r_B < theta d */
  double send_theta; /* a cell goes as a multipole when its radius is under
                        send_theta times its distance to every body of the
                        destination; theta / 2, leaving the receiver's cells
                        the other half of theta d, so that a multipole
                        reaches a few cells of the receiver by M2L rather
                        than many leaves by M2P */
  double separation; /* and when no body of the destination comes closer
                        than its radius plus this (the softening's reach);
                        internal units */
  int order;         /* p of the multipoles */
  int multipoles;    /* 0: every body goes as a body (direct, reference) */
} tfmm_let_params;

/* A rank's bodies as boxes (lowest and highest corner: 6 doubles each,
 * internal units): the tight boxes of the bodies of the cells of t cut at
 * about t->n / pieces bodies each. *out (malloc'd), *count boxes. */
enum { TFMM_LET_BOX_WIDTH = 6 };
tfmm_status tfmm_let_domain(const tfmm_octree *t, size_t pieces, double **out,
                            size_t *count, tfmm_error *err);

/* A multipole sent: centre (3), radius, whether it is a root of the trees
 * sent, its children (count, then 8 record indices, -1 past the count:
 * among the records its rank sent here), then the expansion. A cell
 * without children was far from all of the destination's bodies. */
enum {
  TFMM_LET_RADIUS = 3,
  TFMM_LET_ROOT = 4,
  TFMM_LET_NCHILD = 5,
  TFMM_LET_CHILD = 6,
  TFMM_LET_HEADER = 14
};
static inline int tfmm_let_cell_width(int order);

/* Body records sent: x, y, z, m in the caller's units. */
enum { TFMM_LET_BODY_WIDTH = 4 };

/* The locally essential tree of t (multipoles M of order p, internal
 * units) for one destination described by its boxes: cells into *cells
 * (tfmm_let_cell_width doubles each), bodies (from the caller's pos and
 * mass in the tree's sorted order: pos_sorted, mass_sorted) into *bodies.
 * Both are growable arrays the caller frees. */
typedef struct tfmm_let_buffer {
  double *v;
  size_t count, capacity; /* records */
} tfmm_let_buffer;
tfmm_status tfmm_let_build(const tfmm_octree *t, const double *M,
                           const tfmm_let_params *lp, const double *boxes,
                           size_t nboxes, const double *pos_sorted,
                           const double *mass_sorted, tfmm_let_buffer *cells,
                           tfmm_let_buffer *bodies, tfmm_error *err);

static inline int tfmm_let_cell_width(int order) {
  return TFMM_LET_HEADER + (int)tfmm_expansion_size(order);
}

#endif
