/* The near field on the CPU: P2P over the leaf neighbour lists. */
#ifndef TFMM_P2P_CPU_H
#define TFMM_P2P_CPU_H

#include "internal.h"
#include "tree/lists.h"

/* For every target leaf of `near`, the softened pull of every body of its
 * source leaves, the self pair excluded: acc[3k..] = sum m r g(r) and
 * pot[k] = sum m phi(r) for sorted body k (no G; g and phi of the pair's
 * softening kernel, interaction.h). Written, not added. In the pair's
 * precision; in single precision, in the target leaf's own frame (the
 * centre of its bodies' box, near_frame.h): positions are differenced in
 * double and then rounded, so that close pairs keep their precision; a
 * leaf that no one origin serves (near_frame.h's rule) runs in double.
 * Each source leaf's sum is added to the total in double. OpenMP over
 * target leaves. */
tfmm_status tfmm_p2p_cpu(const tfmm_octree *t, const tfmm_csr *near,
                         const tfmm_pair_params *pair, double *acc, double *pot,
                         tfmm_error *err);

/* The leaves that near_frame.h's rule runs in double, computed so and
 * written over out: 4 floats per sorted body (acceleration, potential),
 * the GPU's single-precision results of the hybrid schedule. The other
 * bodies' values are left as they are. */
tfmm_status tfmm_p2p_cpu_exact(const tfmm_octree *t, const tfmm_csr *near,
                               const tfmm_pair_params *pair, float *out,
                               tfmm_error *err);

#endif
