/* The gpu schedule in a build without CUDA: never chosen (the solver has
 * no GPU), and refused if asked for. */
#include "pipeline_gpu.h"

#include <string.h>

static tfmm_status none(tfmm_error *err) {
  return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                        "schedule gpu: this tilefmm was built without CUDA");
}

tfmm_status tfmm_pipeline_gpu_upload(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                     size_t n, const double *pos,
                                     const double *mass, int on_device,
                                     void *after, tfmm_error *err) {
  (void)pl, (void)gpu, (void)n, (void)pos, (void)mass, (void)on_device,
      (void)after;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_tree(tfmm_pipeline_gpu *pl,
                                   const tfmm_tree_gpu_params *params,
                                   tfmm_error *err) {
  (void)pl, (void)params;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_refit(tfmm_pipeline_gpu *pl, int timed,
                                    tfmm_error *err) {
  (void)pl, (void)timed;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_maybe_coincident(tfmm_pipeline_gpu *pl,
                                               int64_t *count,
                                               tfmm_error *err) {
  (void)pl;
  *count = 0;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_copy_tree(tfmm_pipeline_gpu *pl,
                                        struct tfmm_octree *out,
                                        tfmm_error *err) {
  (void)pl, (void)out;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_targets(tfmm_pipeline_gpu *pl,
                                      const unsigned char *active,
                                      int on_device, tfmm_error *err) {
  (void)pl, (void)active, (void)on_device;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_count_targets(tfmm_pipeline_gpu *pl, size_t n,
                                            const unsigned char *d_active,
                                            size_t *count, tfmm_error *err) {
  (void)pl, (void)n, (void)d_active;
  *count = 0;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_upward(tfmm_pipeline_gpu *pl, int p,
                                     const tfmm_pipeline_gpu_kernel *kernel,
                                     tfmm_error *err) {
  (void)pl, (void)p, (void)kernel;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_lists(tfmm_pipeline_gpu *pl,
                                    const tfmm_traverse_gpu_params *params,
                                    tfmm_error *err) {
  (void)pl, (void)params;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_near(tfmm_pipeline_gpu *pl,
                                   const tfmm_pair_params *pair, int potential,
                                   int sm_count, tfmm_error *err) {
  (void)pl, (void)pair, (void)potential, (void)sm_count;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_far(tfmm_pipeline_gpu *pl, int p,
                                  const tfmm_pipeline_gpu_kernel *kernel,
                                  int fmm, int far, tfmm_precision precision,
                                  tfmm_error *err) {
  (void)pl, (void)p, (void)kernel, (void)fmm, (void)far, (void)precision;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_finish(tfmm_pipeline_gpu *pl,
                                     const tfmm_pipeline_gpu_output *out,
                                     tfmm_error *err) {
  (void)pl, (void)out;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_download(tfmm_pipeline_gpu *pl,
                                       tfmm_pipeline_gpu_times *times,
                                       tfmm_error *err) {
  (void)pl;
  if (times != NULL)
    memset(times, 0, sizeof *times);
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_measure(tfmm_pipeline_gpu *pl,
                                      const tfmm_pair_params *pair, int fast,
                                      size_t k, size_t each, uint64_t seed,
                                      const double *d_acc, void *h_block,
                                      tfmm_error *err) {
  (void)pl, (void)pair, (void)fast, (void)k, (void)each, (void)seed,
      (void)d_acc, (void)h_block;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_measure_both(tfmm_pipeline_gpu *pl,
                                           const tfmm_pair_params *pair,
                                           int fast, size_t k, size_t each,
                                           uint64_t seed, uint64_t group_seed,
                                           double f, const double *d_acc,
                                           void *h_block, void *h_group,
                                           size_t *worst, tfmm_error *err) {
  (void)pl, (void)pair, (void)fast, (void)k, (void)each, (void)seed,
      (void)group_seed, (void)f, (void)d_acc, (void)h_block, (void)h_group,
      (void)worst;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_measure_group(tfmm_pipeline_gpu *pl,
                                            const tfmm_pair_params *pair,
                                            int fast, size_t worst,
                                            uint64_t seed, const double *d_acc,
                                            void *h_block, tfmm_error *err) {
  (void)pl, (void)pair, (void)fast, (void)worst, (void)seed, (void)d_acc,
      (void)h_block;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_bounds(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                     size_t n, const double *d_pos,
                                     const double *d_mass, void *after,
                                     double bounds[7], tfmm_error *err) {
  (void)pl, (void)gpu, (void)n, (void)d_pos, (void)d_mass, (void)after,
      (void)bounds;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_put(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                  size_t n, const double *pos,
                                  const double *mass, const double **d_pos,
                                  const double **d_mass, tfmm_error *err) {
  (void)pl, (void)gpu, (void)n, (void)pos, (void)mass, (void)d_pos,
      (void)d_mass;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_reserve(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                      size_t n, tfmm_error *err) {
  (void)pl, (void)gpu, (void)n;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_scale(tfmm_pipeline_gpu *pl, size_t n,
                                    const double *d_pos, const double *d_mass,
                                    int length_exp, int mass_exp,
                                    const double **pos, const double **mass,
                                    tfmm_error *err) {
  (void)pl, (void)n, (void)d_pos, (void)d_mass, (void)length_exp,
      (void)mass_exp, (void)pos, (void)mass;
  return none(err);
}

tfmm_status tfmm_pipeline_gpu_items(tfmm_pipeline_gpu *pl,
                                    tfmm_gpu_near_size *sz,
                                    tfmm_gpu_near_item **item,
                                    tfmm_gpu_near_split **split,
                                    tfmm_error *err) {
  (void)pl, (void)sz;
  *item = NULL;
  *split = NULL;
  return none(err);
}

size_t tfmm_pipeline_gpu_bytes(const tfmm_pipeline_gpu *pl) {
  (void)pl;
  return 0;
}

void tfmm_pipeline_gpu_release(tfmm_pipeline_gpu *pl) {
  if (pl != NULL)
    memset(pl, 0, sizeof *pl);
}
