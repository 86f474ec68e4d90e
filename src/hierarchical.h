/* The tree methods (FMM and Barnes-Hut) on the CPU: build the tree, build
 * the interaction lists, evaluate them (exafmm's three stages). */
#ifndef TFMM_HIERARCHICAL_H
#define TFMM_HIERARCHICAL_H

#include "internal.h"

/* Accelerations (3n) and potentials (n, or NULL) of n checked bodies by
 * cfg->method (FMM or BH), in input order, G applied. Fills the tree-method
 * fields and phase times of *stats. */
tfmm_status tfmm_hierarchical_compute(const tfmm_config *cfg, size_t n,
                                      const double *pos, const double *mass,
                                      double *acc, double *pot,
                                      tfmm_stats *stats, tfmm_error *err);

#endif
