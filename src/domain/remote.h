/* The multipoles received from other ranks, evaluated at this rank's
 * bodies (remote.c). */
#ifndef TFMM_DOMAIN_REMOTE_H
#define TFMM_DOMAIN_REMOTE_H

#include "domain/let.h"

/* The field of ncells received multipoles (tfmm_let_cell_width doubles
 * each, their child links as indices among all ncells) at the bodies of t
 * (internal units, sorted order): through M2L into the cells they are far
 * from, and M2P at the leaves they are not; then L2L and L2P. phi and grad
 * (t->n and 3 t->n, sorted order) are overwritten: Phi and grad Phi of
 * expansion.h. */
tfmm_status tfmm_remote_field(const tfmm_octree *t, const double *cells,
                              size_t ncells, const tfmm_let_params *lp,
                              double *phi, double *grad, tfmm_error *err);

#endif
