/* The stages of the tree methods, each a function of the evaluation
 * (eval.h), in the order a schedule (schedule.h) runs them:
 *
 *   tree         octree of the bodies (keys, sort, cells, moments' centres)
 *   tree_gpu_upload, tree_gpu, tree_gpu_download
 *                the same, the bodies up, built on the GPU and copied back
 *                (stages_gpu.c)
 *   upward_gpu   P2M and M2M on the GPU, kept there (stages_gpu.c)
 *   upward_gpu_download   the multipoles copied back
 *   far_gpu_upload, far_gpu, far_gpu_download
 *                the lists up, M2L, L2L, L2P and M2P on the GPU, the
 *                results copied back (stages_gpu.c)
 *   lists        opening criterion and traversal: M2L, M2P and near lists
 *                (at a subset: the targets of each cell first, and the
 *                pairs of cells without one dropped)
 *
 * and the gpu schedule's, every one on the GPU on one stream
 * (kernels/schedule/pipeline_gpu.h; stages_gpu.c):
 *
 *   gpu_upload   the bodies into the tree's buffer on the device
 *   gpu_tree     the octree (and the coincidence check)
 *   gpu_targets  an evaluation at a subset: the targets of each cell
 *   gpu_upward   P2M and M2M
 *   gpu_lists    the opening criterion's inputs and the traversal
 *   gpu_near     the near field's inputs and kernel
 *   gpu_far      M2L, L2L, L2P and M2P (nothing with near_only)
 *   gpu_finish   G, far plus near, input order
 *   gpu_download the results to the host, the wait, the checks and times
 *
 * and the hybrid schedule's:
 *
 *   near_launch  the near field enqueued on the GPU (nothing on the CPU)
 *   upward       P2M and M2M
 *   m2l          M2L over the lists (FMM)
 *   downward     L2L and L2P (FMM)
 *   m2p          M2P over the lists
 *   near_finish  the GPU near field waited for, or the CPU near field
 *   combine      G, far plus near, back to input order
 *
 * Each returns TFMM_OK or a status with a message in eval->err, and fills
 * its own times in eval->stats. */
#ifndef TFMM_STAGES_H
#define TFMM_STAGES_H

#include "pipeline/eval.h"

tfmm_status tfmm_stage_tree(tfmm_eval *e);
tfmm_status tfmm_stage_tree_gpu_upload(tfmm_eval *e);
tfmm_status tfmm_stage_tree_gpu(tfmm_eval *e);
tfmm_status tfmm_stage_tree_gpu_download(tfmm_eval *e);
tfmm_status tfmm_stage_upward_gpu(tfmm_eval *e);
tfmm_status tfmm_stage_upward_gpu_download(tfmm_eval *e);
tfmm_status tfmm_stage_far_gpu_upload(tfmm_eval *e);
tfmm_status tfmm_stage_far_gpu(tfmm_eval *e);
tfmm_status tfmm_stage_far_gpu_download(tfmm_eval *e);
tfmm_status tfmm_stage_lists(tfmm_eval *e);
tfmm_status tfmm_stage_near_launch(tfmm_eval *e);
tfmm_status tfmm_stage_upward(tfmm_eval *e);
tfmm_status tfmm_stage_m2l(tfmm_eval *e);
tfmm_status tfmm_stage_downward(tfmm_eval *e);
tfmm_status tfmm_stage_m2p(tfmm_eval *e);
tfmm_status tfmm_stage_near_finish(tfmm_eval *e);
tfmm_status tfmm_stage_combine(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_upload(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_tree(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_targets(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_upward(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_lists(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_near(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_far(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_finish(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_download(tfmm_eval *e);

/* Targets of at most this many bodies take accepted sources by M2P rather
 * than M2L (stages.c says why). */
extern const int64_t TFMM_M2P_BODIES;

/* What both tree stages do once the tree is built (st its status): the
 * statistics, and with eps = 0 the refusal of coincident bodies. */
tfmm_status tfmm_stage_tree_built(tfmm_eval *e, tfmm_status st);

#endif
