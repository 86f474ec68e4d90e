#include "nearfield/p2p_cpu.h"

#include "nearfield/p2p_sum.h"

#include <stdlib.h>

static int64_t largest_leaf(const tfmm_octree *t) {
  int64_t most = 0;
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *c = &t->cells[t->leaves[k]];
    int64_t n = c->body_end - c->body_begin;
    most = n > most ? n : most;
  }
  return most;
}

/* Bodies of cell c relative to origin o, in float. */
static void load_frame(const tfmm_octree *t, const tfmm_cell *c,
                       const double o[3], float *buf, int64_t stride) {
  int64_t n = c->body_end - c->body_begin;
  for (int64_t k = 0; k < n; k++) {
    const double *x = t->pos + 3 * (c->body_begin + k);
    buf[k] = (float)(x[0] - o[0]);
    buf[stride + k] = (float)(x[1] - o[1]);
    buf[2 * stride + k] = (float)(x[2] - o[2]);
    buf[3 * stride + k] = (float)t->mass[c->body_begin + k];
  }
}

/* One target leaf against its list. tgt and src: 4 * stride floats. */
static void near_leaf(const tfmm_octree *t, const tfmm_csr *near, int64_t leaf,
                      float eps2, float *tgt, float *src, int64_t stride,
                      double *acc, double *pot) {
  const int32_t tc = t->leaves[leaf];
  const tfmm_cell *T = &t->cells[tc];
  const int64_t nt = T->body_end - T->body_begin;
  load_frame(t, T, T->center, tgt, stride);
  for (int64_t i = 0; i < nt; i++) {
    int64_t k = T->body_begin + i;
    acc[3 * k] = acc[3 * k + 1] = acc[3 * k + 2] = pot[k] = 0;
  }
  for (int64_t e = near->offset[leaf]; e < near->offset[leaf + 1]; e++) {
    const tfmm_cell *S = &t->cells[near->index[e]];
    const int64_t ns = S->body_end - S->body_begin;
    load_frame(t, S, T->center, src, stride);
    tfmm_sources_f32 s = {src, src + stride, src + 2 * stride,
                          src + 3 * stride};
    const int self = near->index[e] == tc;
    for (int64_t i = 0; i < nt; i++) {
      float xi = tgt[i], yi = tgt[stride + i], zi = tgt[2 * stride + i];
      tfmm_acc_f32 part = {0, 0, 0, 0};
      if (self) {
        tfmm_p2p_sum_f32(&s, 0, (size_t)i, xi, yi, zi, eps2, &part);
        tfmm_p2p_sum_f32(&s, (size_t)i + 1, (size_t)ns, xi, yi, zi, eps2,
                         &part);
      } else {
        tfmm_p2p_sum_f32(&s, 0, (size_t)ns, xi, yi, zi, eps2, &part);
      }
      int64_t k = T->body_begin + i;
      acc[3 * k] += part.x;
      acc[3 * k + 1] += part.y;
      acc[3 * k + 2] += part.z;
      pot[k] += part.w;
    }
  }
}

tfmm_status tfmm_p2p_cpu(const tfmm_octree *t, const tfmm_csr *near, double eps,
                         double *acc, double *pot, tfmm_error *err) {
  const int64_t stride = largest_leaf(t);
  const float eps2 = (float)(eps * eps);
  int bad = 0;
#pragma omp parallel reduction(| : bad)
  {
    float *tgt = malloc(4 * (size_t)stride * sizeof *tgt);
    float *src = malloc(4 * (size_t)stride * sizeof *src);
    bad = tgt == NULL || src == NULL;
#pragma omp for schedule(dynamic, 4)
    for (int64_t leaf = 0; leaf < t->nleaves; leaf++)
      if (!bad)
        near_leaf(t, near, leaf, eps2, tgt, src, stride, acc, pot);
    free(tgt);
    free(src);
  }
  if (bad)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the near field (leaves of %lld "
                          "bodies)",
                          (long long)stride);
  return TFMM_OK;
}
