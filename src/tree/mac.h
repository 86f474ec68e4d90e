/* The opening criterion (multipole acceptance criterion) of the
 * traversals: source cell B acts on target cell A through its expansion
 * when
 *   r_A + r_B < theta_B d   and   d - r_A - r_B >= s,   d = |c_A - c_B|,
 * with r the radius enclosing a cell's bodies about its expansion centre c.
 *
 * The first condition is Dehnen 2002 (J. Comput. Phys. 179, 27) eq. 13:
 * the expansions about c_A and c_B then converge with ratio below theta.
 * theta_B is one theta for every cell (TFMM_MAC_GEOMETRIC), or depends on
 * the source's mass (TFMM_MAC_MASS): the error bound of B's expansion at A
 * is proportional to M_B theta^(p+2) / (1 - theta)^2 / d^2 (Dehnen 2002
 * eq. 13 and the bound before it), so holding M^(1/3) theta^(p+2) /
 * (1 - theta)^2 fixed, with the root at the given theta, spends accuracy
 * where the mass is.
 *
 * With TFMM_MAC_ERROR the first condition is only a cap on theta (the
 * expansions converge), and the pair must also pass the error-based test
 * of Dehnen 2014 (Comput. Astrophys. Cosmol. 1, 1; SWIFT's "adaptive"
 * criterion): the error that the interaction may bring to the force on A,
 *   E = M_B q^(p+1) / (d - r_A - r_B)^2,  q = (r_A + r_B) / d  (the series)
 *     + (3/2) M_B eps^2 / (d - r_A - r_B)^4      (Plummer: Newton's 1/r
 *                                                 instead of the softened)
 * must be below epsilon |a|_A, |a|_A the least acceleration estimated for
 * A's bodies (accel_estimate.h). The error is spent relative to each
 * target's own force: sparse halos and cancelling pulls open more cells,
 * dense regions fewer.
 *
 * The second is the softening's: no two bodies of an accepted pair come
 * closer than s, the distance beyond which the softened force is Newton's
 * (the spline's support h) or within the accuracy target of it (Plummer).
 * The expansions carry 1/r, so without it they would give the unsoftened
 * force between cells that overlap the softening. */
#ifndef TFMM_MAC_H
#define TFMM_MAC_H

#include "tree/mac_rule.h"
#include "tree/octree.h"

typedef struct tfmm_mac {
  double theta;            /* the root's (and, geometric, every cell's) */
  double separation;       /* s above; 0 without softening */
  const double *theta_src; /* per cell theta_B (mass criterion), or NULL */
  /* The error criterion (TFMM_MAC_ERROR): */
  const double *accel; /* per cell: |a|_A, or NULL (criterion off) */
  double epsilon;      /* error allowed per interaction, relative to |a|_A */
  int order;           /* p of the expansions */
  double soft_term;    /* 3/2 eps^2 with Plummer softening, else 0 */
} tfmm_mac;

/* The rule's scalars of m. */
static inline tfmm_mac_rule tfmm_mac_rule_of(const tfmm_mac *m) {
  const tfmm_mac_rule r = {.separation = m->separation,
                           .error = m->accel != NULL,
                           .epsilon = m->epsilon,
                           .order = m->order,
                           .soft_term = m->soft_term};
  return r;
}

static inline int tfmm_mac_accept(const tfmm_mac *m, const tfmm_cell *a,
                                  int32_t a_index, const tfmm_cell *b,
                                  int32_t b_index) {
  const tfmm_mac_rule rule = tfmm_mac_rule_of(m);
  return tfmm_mac_rule_accept(
      &rule, a->center, a->radius, m->accel != NULL ? m->accel[a_index] : 0,
      b->center, b->radius, b->mass,
      m->theta_src != NULL ? m->theta_src[b_index] : m->theta);
}

/* theta_B of the mass criterion for every cell of t: theta(M) >= theta0
 * solving (p + 2) ln theta - 2 ln(1 - theta) = that of theta0 -
 * ln(M / M_root) / 3, capped at 0.95 (Newton's method in ln). Returns a
 * malloc'd array of t->ncells, or NULL for no memory. */
double *tfmm_mac_mass_thetas(const tfmm_octree *t, double theta0, int p);

#endif
