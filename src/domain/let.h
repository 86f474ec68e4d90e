/* The locally essential trees a rank sends the others (let.c): what the
 * evaluation gives them, and the records sent. */
#ifndef TFMM_DOMAIN_LET_H
#define TFMM_DOMAIN_LET_H

#include "farfield/expansion.h"
#include "internal.h"
#include "tree/mac_rule.h"
#include "tree/octree.h"

#include <stddef.h>

/* What the locally essential trees need of the evaluation: the opening
 * criterion of one process (tree/mac.h, tree/mac_rule.h), the one the
 * configuration selects, taken by the sender (let.c) against the
 * destination's bodies and by the receiver (remote.c) between its cells
 * and the cells received. */
typedef struct tfmm_let_params {
  tfmm_mac_kind mac;   /* geometric, mass or error */
  double theta;        /* the evaluation's opening angle theta_0: a source's
                          theta_B is it, or the mass criterion's for the
                          source's mass (tfmm_let_theta) */
  double send_share;   /* the sender takes a cell whole at send_share
                          theta_B: 1/2, leaving the receiver's cells the other
                          half of theta d, so that a multipole reaches a few
                          cells of the receiver by M2L rather than many leaves
                          by M2P */
  tfmm_mac_rule rule;  /* the criterion's scalars: the softening's
                          separation (internal units), the error test, its
                          epsilon, p, the Plummer term */
  int order;           /* p of the multipoles */
  int multipoles;      /* 0: every body goes as a body (direct, reference) */
  double mass_total;   /* every rank's mass, internal units: the mass
                          criterion's M_root */
  const double *accel; /* the error criterion's |a|_A for every cell of the
                          receiver's tree (G = 1, internal units), else NULL */
} tfmm_let_params;

/* theta_B of a source of this mass (internal units). */
static inline double tfmm_let_theta(const tfmm_let_params *lp, double mass) {
  return lp->mac == TFMM_MAC_MASS
             ? tfmm_mac_mass_theta(lp->theta, lp->order, mass / lp->mass_total)
             : lp->theta;
}

/* A rank's bodies as boxes, internal units: the tight boxes of the bodies
 * of the cells of t cut at about t->n / pieces bodies each, with each
 * cell's centre of mass, mass and |a|_A (accel: per cell of t, the error
 * criterion's estimate, or NULL: 0). *out (malloc'd), *count boxes. */
enum {
  TFMM_LET_BOX_LO = 0,     /* lowest corner (3) */
  TFMM_LET_BOX_HI = 3,     /* highest corner (3) */
  TFMM_LET_BOX_COM = 6,    /* centre of mass (3) */
  TFMM_LET_BOX_MASS = 9,   /* mass */
  TFMM_LET_BOX_ACCEL = 10, /* least |a| estimated at its bodies */
  TFMM_LET_BOX_WIDTH = 11
};
tfmm_status tfmm_let_domain(const tfmm_octree *t, size_t pieces,
                            const double *accel, double **out, size_t *count,
                            tfmm_error *err);

/* A multipole sent: centre (3), radius, whether it is a root of the trees
 * sent, its children (count, then 8 record indices, -1 past the count:
 * among the records its rank sent here), its mass, then the expansion. A
 * cell without children was far from all of the destination's bodies. */
enum {
  TFMM_LET_RADIUS = 3,
  TFMM_LET_ROOT = 4,
  TFMM_LET_NCHILD = 5,
  TFMM_LET_CHILD = 6,
  TFMM_LET_MASS = 14,
  TFMM_LET_HEADER = 15
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
