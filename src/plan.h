/* One resolver of settings: what a configuration becomes on this machine
 * for n bodies (tfmm_plan, include/tilefmm.h). The solver creates itself
 * from tfmm_plan_device and tfmm_plan_leaf, the pipeline takes its stages
 * from tfmm_plan_stages, and the CLI, tune and Python read the whole plan
 * (tfmm_plan_resolve): the choices are made here and nowhere else. */
#ifndef TFMM_PLAN_H
#define TFMM_PLAN_H

#include "internal.h"

/* Where a solver of the checked cfg runs: *out = TFMM_DEVICE_GPU or
 * TFMM_DEVICE_CPU. auto takes the GPU when device cfg->gpu_id can run the
 * kernels (the probe, gpu_probe.h); reference runs on the CPU. When the
 * GPU that cfg asks for (device, schedule, tree_device or far_device gpu)
 * cannot be had, TFMM_ERR_NO_DEVICE with the reason in err (*out is set
 * either way). */
tfmm_status tfmm_plan_device(const tfmm_config *cfg, tfmm_device *out,
                             tfmm_error *err);

/* The leaf size of the first evaluation on device: cfg->leaf_size, or for
 * TFMM_LEAF_AUTO the controller's first L there (leaf_auto.h). */
int tfmm_plan_leaf(const tfmm_config *cfg, tfmm_device device);

/* For a tree method of n bodies with the near field on the GPU (near_gpu)
 * or not: the schedule (gpu or hybrid) and where the tree and the far
 * field run. */
void tfmm_plan_stages(const tfmm_config *cfg, int near_gpu, size_t n,
                      tfmm_schedule_kind *schedule, tfmm_device *tree_device,
                      tfmm_device *far_device);

/* The far field's kernel for cfg (checked), n bodies, the near field on
 * the GPU (near_gpu) or the CPU and eps_rel, eps relative to the bodies'
 * size (the solver's internal units, units.h: eps over the side of their
 * cube rounded up to a power of two; tfmm_plan_eps_rel without bodies):
 * tfmm_config.far_kernel, auto resolved as tilefmm.h documents
 * (TFMM_FAR_KERNEL_NEWTON or _SOFTENED; newton without Plummer softening
 * or with eps 0). */
tfmm_far_kernel tfmm_plan_far_kernel(const tfmm_config *cfg, int near_gpu,
                                     size_t n, double eps_rel);

/* eps_rel before the bodies are seen: eps over box_size rounded up to a
 * power of two when the cube is given, else eps itself (a system of size
 * about 1, as N-body units make it). */
double tfmm_plan_eps_rel(const tfmm_config *cfg);

/* Appends to out (a string of size bytes) "; far field KERNEL (why)" when
 * cfg softens with Plummer's kernel: the choice above and its reason. */
void tfmm_plan_far_kernel_note(const tfmm_config *cfg, int near_gpu, size_t n,
                               double eps_rel, char *out, size_t size);

#endif
