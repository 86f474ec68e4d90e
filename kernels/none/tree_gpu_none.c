/* The GPU tree of the hybrid schedule in a build without CUDA: never
 * chosen (the solver has no GPU), and refused if asked for. */
#include "tree_gpu_hybrid.h"

#include <string.h>

static tfmm_status no_tree(tfmm_error *err) {
  return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                        "the tree on the GPU: this tilefmm was built without "
                        "CUDA");
}

tfmm_status tfmm_tree_gpu_hybrid_upload(tfmm_tree_gpu_hybrid *h, tfmm_gpu *gpu,
                                        size_t n, const double *pos,
                                        const double *mass, tfmm_error *err) {
  (void)h, (void)gpu, (void)n, (void)pos, (void)mass;
  return no_tree(err);
}

tfmm_status tfmm_tree_gpu_hybrid_build(tfmm_tree_gpu_hybrid *h,
                                       const tfmm_tree_gpu_params *params,
                                       tfmm_error *err) {
  (void)h, (void)params;
  return no_tree(err);
}

tfmm_status tfmm_tree_gpu_hybrid_refit(tfmm_tree_gpu_hybrid *h, int timed,
                                       tfmm_error *err) {
  (void)h, (void)timed;
  return no_tree(err);
}

tfmm_status tfmm_tree_gpu_hybrid_download(tfmm_tree_gpu_hybrid *h,
                                          struct tfmm_octree *out,
                                          tfmm_error *err) {
  (void)h, (void)out;
  return no_tree(err);
}

tfmm_status tfmm_tree_gpu_hybrid_upward(tfmm_tree_gpu_hybrid *h, int p,
                                        int fast, tfmm_error *err) {
  (void)h, (void)p, (void)fast;
  return no_tree(err);
}

tfmm_status tfmm_tree_gpu_hybrid_upward_download(tfmm_tree_gpu_hybrid *h,
                                                 double *M, tfmm_error *err) {
  (void)h, (void)M;
  return no_tree(err);
}

void tfmm_tree_gpu_hybrid_release(tfmm_tree_gpu_hybrid *h) {
  memset(h, 0, sizeof *h);
}

tfmm_status tfmm_tree_gpu_hybrid_far_upload(
    tfmm_tree_gpu_hybrid *h, const tfmm_tree_gpu_hybrid_list *m2l,
    const tfmm_tree_gpu_hybrid_list *m2p, tfmm_error *err) {
  (void)h, (void)m2l, (void)m2p;
  return no_tree(err);
}

tfmm_status tfmm_tree_gpu_hybrid_far(tfmm_tree_gpu_hybrid *h, tfmm_error *err) {
  (void)h;
  return no_tree(err);
}

tfmm_status tfmm_tree_gpu_hybrid_far_download(tfmm_tree_gpu_hybrid *h,
                                              double *phi, double *grad,
                                              tfmm_error *err) {
  (void)h, (void)phi, (void)grad;
  return no_tree(err);
}
