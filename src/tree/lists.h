/* Interaction lists: what the traversals produce, as plain arrays.
 *
 * Every list is in CSR form by target: the entries of target k are
 * index[offset[k] .. offset[k + 1]). Targets are cells for M2L and leaves
 * (positions in tree->leaves) for the near field and Barnes-Hut; entries
 * are cell indices. The order of entries is fixed by the tree alone, not by
 * the number of threads, so results are reproducible bit for bit. */
#ifndef TFMM_LISTS_H
#define TFMM_LISTS_H

#include "tree/mac.h"
#include "tree/octree.h"

typedef struct tfmm_csr {
  int64_t ntargets;
  int64_t *offset; /* ntargets + 1 */
  int32_t *index;  /* offset[ntargets] entries */
} tfmm_csr;

typedef struct tfmm_lists {
  /* M2L source cells of every target cell (FMM; ntargets = ncells). */
  tfmm_csr m2l;
  /* Near-field source leaves of every target leaf (ntargets = nleaves). */
  tfmm_csr near;
  /* M2P source cells of every target cell (ntargets = ncells): evaluated
   * directly at the target's bodies. Barnes-Hut's far field (targets are
   * leaves), and the FMM's for accepted targets of few bodies. */
  tfmm_csr m2p;
  double near_interactions; /* body-body pairs in `near` (self excluded) */
} tfmm_lists;

/* Dual-tree traversal (Dehnen 2002, section 3.2): a pair of cells meets
 * through expansions when tfmm_mac_accept says so, by P2P when both are
 * leaves, else the larger (by radius) is split. Starts from (root, root).
 * An accepted pair whose target holds at most m2p_bodies bodies goes to the
 * M2P list instead of M2L: evaluating the source's multipole at those few
 * bodies is cheaper than M2L + L2P (n p^2 against p^4 operations) and
 * converges with r_B / (d - r_A) instead of (r_A + r_B) / d, which matters
 * for sparse cells of large radius (a halo). OpenMP over a frontier of cell
 * pairs. *l is zeroed first; free with tfmm_lists_free. */
tfmm_status tfmm_lists_build_fmm(const tfmm_octree *t, const tfmm_mac *mac,
                                 int64_t m2p_bodies, tfmm_lists *l,
                                 tfmm_error *err);

/* The same traversal for the targets of an evaluation at a subset of the
 * bodies: targets[c] counts those of cell c (tree/targets.h), NULL: every
 * body. Every pair whose target cell holds none is dropped (with the
 * pairs below it), and only those: each other target's entries are the
 * whole traversal's, in the same order, whatever the subset. */
tfmm_status tfmm_lists_build_fmm_at(const tfmm_octree *t, const tfmm_mac *mac,
                                    int64_t m2p_bodies, const int32_t *targets,
                                    tfmm_lists *l, tfmm_error *err);

/* Barnes-Hut, one target leaf at a time (Barnes & Hut 1986, with the
 * leaf's radius in the criterion): a source cell is used whole (M2P) when
 * tfmm_mac_accept(leaf, cell), met body by body when it is a leaf, else
 * opened. OpenMP over target leaves. */
tfmm_status tfmm_lists_build_bh(const tfmm_octree *t, const tfmm_mac *mac,
                                tfmm_lists *l, tfmm_error *err);

/* The same for the targets of a subset (as tfmm_lists_build_fmm_at): a
 * leaf that holds none has empty lists, the others their whole lists. */
tfmm_status tfmm_lists_build_bh_at(const tfmm_octree *t, const tfmm_mac *mac,
                                   const int32_t *targets, tfmm_lists *l,
                                   tfmm_error *err);

void tfmm_lists_free(tfmm_lists *l);

#endif
