#include "pipeline/schedule.h"

#include "pipeline/measure.h"
#include "pipeline/stages.h"

static const tfmm_stage HYBRID[] = {
    {"tree", tfmm_stage_tree, 0},
    {"lists", tfmm_stage_lists, 0},
    {"near_launch", tfmm_stage_near_launch, 0},
    {"upward", tfmm_stage_upward, 1},
    {"m2l", tfmm_stage_m2l, 1},
    {"downward", tfmm_stage_downward, 1},
    {"m2p", tfmm_stage_m2p, 1},
    {"near_finish", tfmm_stage_near_finish, 0},
    {"combine", tfmm_stage_combine, 0},
    {"measure", tfmm_stage_measure, 0},
};

const tfmm_schedule TFMM_STAGES_HYBRID = {
    "hybrid", HYBRID, (int)(sizeof HYBRID / sizeof HYBRID[0])};

/* The same with the tree and its multipoles built on the GPU, before the
 * lists: the stages after them are hybrid's. */
static const tfmm_stage HYBRID_GPU_TREE[] = {
    {"tree_gpu_upload", tfmm_stage_tree_gpu_upload, 0},
    {"tree_gpu", tfmm_stage_tree_gpu, 0},
    {"tree_gpu_download", tfmm_stage_tree_gpu_download, 0},
    {"upward_gpu", tfmm_stage_upward_gpu, 1},
    {"upward_gpu_download", tfmm_stage_upward_gpu_download, 1},
    {"lists", tfmm_stage_lists, 0},
    {"near_launch", tfmm_stage_near_launch, 0},
    {"m2l", tfmm_stage_m2l, 1},
    {"downward", tfmm_stage_downward, 1},
    {"m2p", tfmm_stage_m2p, 1},
    {"near_finish", tfmm_stage_near_finish, 0},
    {"combine", tfmm_stage_combine, 0},
    {"measure", tfmm_stage_measure, 0},
};

const tfmm_schedule TFMM_STAGES_HYBRID_GPU_TREE = {
    "hybrid", HYBRID_GPU_TREE,
    (int)(sizeof HYBRID_GPU_TREE / sizeof HYBRID_GPU_TREE[0])};

/* The tree, multipoles and far field on the GPU, the lists on the CPU
 * between them; the near field enqueued before the far field, both on the
 * GPU at once. */
static const tfmm_stage HYBRID_GPU_FAR[] = {
    {"tree_gpu_upload", tfmm_stage_tree_gpu_upload, 0},
    {"tree_gpu", tfmm_stage_tree_gpu, 0},
    {"tree_gpu_download", tfmm_stage_tree_gpu_download, 0},
    {"upward_gpu", tfmm_stage_upward_gpu, 1},
    {"lists", tfmm_stage_lists, 0},
    {"near_launch", tfmm_stage_near_launch, 0},
    {"far_gpu_upload", tfmm_stage_far_gpu_upload, 1},
    {"far_gpu", tfmm_stage_far_gpu, 1},
    {"far_gpu_download", tfmm_stage_far_gpu_download, 1},
    {"near_finish", tfmm_stage_near_finish, 0},
    {"combine", tfmm_stage_combine, 0},
    {"measure", tfmm_stage_measure, 0},
};

const tfmm_schedule TFMM_STAGES_HYBRID_GPU_FAR = {
    "hybrid", HYBRID_GPU_FAR,
    (int)(sizeof HYBRID_GPU_FAR / sizeof HYBRID_GPU_FAR[0])};

/* Every stage on the GPU (kernels/schedule/pipeline_gpu.h): the far field
 * enqueued before the near field on a stream of its own, the two at once.
 * The far stage stays when the far field is skipped (near_only): it then
 * zeroes the far field's sums. */
static const tfmm_stage GPU[] = {
    {"gpu_upload", tfmm_stage_gpu_upload, 0},
    {"gpu_tree", tfmm_stage_gpu_tree, 0},
    {"gpu_targets", tfmm_stage_gpu_targets, 0},
    {"gpu_upward", tfmm_stage_gpu_upward, 1},
    {"gpu_lists", tfmm_stage_gpu_lists, 0},
    {"gpu_far", tfmm_stage_gpu_far, 0},
    {"gpu_near", tfmm_stage_gpu_near, 0},
    {"gpu_finish", tfmm_stage_gpu_finish, 0},
    {"gpu_download", tfmm_stage_gpu_download, 0},
    {"gpu_measure", tfmm_stage_gpu_measure, 0},
};

const tfmm_schedule TFMM_STAGES_GPU = {"gpu", GPU,
                                       (int)(sizeof GPU / sizeof GPU[0])};

tfmm_status tfmm_schedule_run(const tfmm_schedule *s, tfmm_eval *e) {
  int in_far = 0;
  for (int k = 0; k < s->count; k++) {
    const tfmm_stage *st = &s->stages[k];
    if (st->far && e->cfg->near_only)
      continue;
    /* The far field's span: from its first stage to the end of its last. */
    if (st->far && !in_far) {
      e->far_begin = tfmm_wtime();
      in_far = 1;
    } else if (!st->far && in_far) {
      e->far_end = tfmm_wtime();
      in_far = 0;
    }
    tfmm_status status = st->run(e);
    if (status != TFMM_OK)
      return status;
  }
  return TFMM_OK;
}
