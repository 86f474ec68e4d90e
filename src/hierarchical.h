/* The tree methods (FMM and Barnes-Hut): build the tree, build the
 * interaction lists, evaluate them (exafmm's three stages). The tree, the
 * lists and the far field are the CPU's; the near field is the GPU's when
 * there is one, running while the CPU does the far field. */
#ifndef TFMM_HIERARCHICAL_H
#define TFMM_HIERARCHICAL_H

#include "gpu.h"
#include "internal.h"
#include "pipeline/workspace.h"

/* Whether an evaluation of n bodies runs the gpu schedule. */
int tfmm_hierarchical_gpu_schedule(const tfmm_config *cfg, const tfmm_gpu *gpu,
                                   size_t n);

/* Accelerations (3n) and potentials (n, or NULL) of n checked bodies by
 * cfg->method (FMM or BH) with leaves of at most leaf_size bodies, in input
 * order, G applied, at the bodies whose byte of `active` is nonzero (the
 * others' entries are left as they are; NULL: every body); the near field on
 * gpu, or on the CPU when gpu is NULL: the gpu or the hybrid schedule
 * (pipeline/schedule.h) over the workspace w, whose buffers are kept for the
 * next evaluation. Fills the tree-method fields and phase times of *stats. */
tfmm_status tfmm_hierarchical_compute(const tfmm_config *cfg, int leaf_size,
                                      tfmm_gpu *gpu, tfmm_workspace *w,
                                      size_t n, const double *pos,
                                      const double *mass,
                                      const unsigned char *active, double *acc,
                                      double *pot, tfmm_stats *stats,
                                      tfmm_error *err);

struct tfmm_schedule;

/* The same under a schedule the caller names (pipeline/schedule.h): one
 * of the library's or a variant made of its stages, such as the one
 * tests/test_schedule_variant.c runs. */
tfmm_status tfmm_hierarchical_compute_with(
    const struct tfmm_schedule *schedule, const tfmm_config *cfg, int leaf_size,
    tfmm_gpu *gpu, tfmm_workspace *w, size_t n, const double *pos,
    const double *mass, const unsigned char *active, double *acc, double *pot,
    tfmm_stats *stats, tfmm_error *err);

/* Where the device path's results go: after the caller's stream, in the
 * caller's units (acc times caller_G 2^acc_exp, pot times caller_G
 * 2^pot_exp: tfmm_units_unscale's). */
typedef struct tfmm_hierarchical_device_out {
  void *stream;
  int host_results; /* d_acc and d_pot are host arrays (pinned: one DMA,
                       else staged; kernels/context/host_copy.h) */
  double caller_G;
  int acc_exp, pot_exp;
} tfmm_hierarchical_device_out;

/* The same for bodies that live on the GPU, under the gpu schedule only
 * (TFMM_ERR_UNSUPPORTED otherwise): d_pos, d_mass (checked, in internal
 * units), d_active (or NULL), d_acc and d_pot (or NULL) are device arrays
 * of gpu's device (d_acc and d_pot host arrays with out->host_results). */
tfmm_status tfmm_hierarchical_compute_device(
    const tfmm_config *cfg, int leaf_size, tfmm_gpu *gpu, tfmm_workspace *w,
    size_t n, const double *d_pos, const double *d_mass,
    const unsigned char *d_active, double *d_acc, double *d_pot,
    const tfmm_hierarchical_device_out *out, tfmm_stats *stats,
    tfmm_error *err);

#endif
