#include "nearfield/p2p_cpu.h"

#include "team.h"

#include "nearfield/near_frame.h"
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

/* Bodies of cell c relative to origin o, in the sums' precision T. One
 * target leaf against its list, all in the target's frame (origin o):
 * tgt and src hold 4 * stride values. */
#define NEAR_LEAF(T, SUFFIX)                                                   \
  static void load_frame_##SUFFIX(const tfmm_octree *t, const tfmm_cell *c,    \
                                  const double o[3], T *buf, int64_t stride) { \
    int64_t n = c->body_end - c->body_begin;                                   \
    for (int64_t k = 0; k < n; k++) {                                          \
      const double *x = t->pos + 3 * (c->body_begin + k);                      \
      buf[k] = (T)(x[0] - o[0]);                                               \
      buf[stride + k] = (T)(x[1] - o[1]);                                      \
      buf[2 * stride + k] = (T)(x[2] - o[2]);                                  \
      buf[3 * stride + k] = (T)t->mass[c->body_begin + k];                     \
    }                                                                          \
  }                                                                            \
                                                                               \
  static void near_leaf_##SUFFIX(                                              \
      const tfmm_octree *t, const tfmm_csr *near, int64_t leaf,                \
      const double o[3], const tfmm_soft_##SUFFIX *kern, T *tgt, T *src,       \
      int64_t stride, double *acc, double *pot) {                              \
    const int32_t tc = t->leaves[leaf];                                        \
    const tfmm_cell *C = &t->cells[tc];                                        \
    const int64_t nt = C->body_end - C->body_begin;                            \
    load_frame_##SUFFIX(t, C, o, tgt, stride);                                 \
    for (int64_t i = 0; i < nt; i++) {                                         \
      int64_t k = C->body_begin + i;                                           \
      acc[3 * k] = acc[3 * k + 1] = acc[3 * k + 2] = pot[k] = 0;               \
    }                                                                          \
    for (int64_t e = near->offset[leaf]; e < near->offset[leaf + 1]; e++) {    \
      const tfmm_cell *S = &t->cells[near->index[e]];                          \
      const int64_t ns = S->body_end - S->body_begin;                          \
      load_frame_##SUFFIX(t, S, o, src, stride);                               \
      tfmm_sources_##SUFFIX s = {src, src + stride, src + 2 * stride,          \
                                 src + 3 * stride};                            \
      const int self = near->index[e] == tc;                                   \
      for (int64_t i = 0; i < nt; i++) {                                       \
        T xi = tgt[i], yi = tgt[stride + i], zi = tgt[2 * stride + i];         \
        tfmm_acc_##SUFFIX part = {0, 0, 0, 0};                                 \
        if (self) {                                                            \
          tfmm_p2p_sum_##SUFFIX(&s, 0, (size_t)i, xi, yi, zi, kern, &part);    \
          tfmm_p2p_sum_##SUFFIX(&s, (size_t)i + 1, (size_t)ns, xi, yi, zi,     \
                                kern, &part);                                  \
        } else {                                                               \
          tfmm_p2p_sum_##SUFFIX(&s, 0, (size_t)ns, xi, yi, zi, kern, &part);   \
        }                                                                      \
        int64_t k = C->body_begin + i;                                         \
        acc[3 * k] += part.x;                                                  \
        acc[3 * k + 1] += part.y;                                              \
        acc[3 * k + 2] += part.z;                                              \
        pot[k] += part.w;                                                      \
      }                                                                        \
    }                                                                          \
  }

NEAR_LEAF(float, f32)
NEAR_LEAF(double, f64)

/* The leaves of t against their lists: in double, relative to nothing,
 * where precision is double (frame NULL) or exact[k] is set, else in float
 * in their frames; with only set, the exact leaves alone. Double once took
 * each leaf relative to its centre of mass, which octree.c sums relative to
 * the cell's cube and so knows only to u times the cube's centre: a group
 * of size 1e-39 in a cube centred at 0.25 (a coordinate of 3e38 beside
 * bodies of size 1, in internal units) had its bodies all at one point
 * (issue 29). */
static tfmm_status run_leaves(const tfmm_octree *t, const tfmm_csr *near,
                              const tfmm_pair_params *pair,
                              const tfmm_near_frame *frame,
                              const unsigned char *exact, int only, double *acc,
                              double *pot, tfmm_error *err) {
  const int64_t stride = largest_leaf(t);
  const int spline = pair->softening == TFMM_SOFTENING_SPLINE;
  const tfmm_soft_f32 k32 = tfmm_soft_make_f32(spline, pair->eps);
  const tfmm_soft_f64 k64 = tfmm_soft_make_f64(spline, pair->eps);
  const double zero[3] = {0, 0, 0};
  int bad = 0;
  /* Leaves of up to `stride` bodies, each against its list: its pairs. */
  const double pairs = (double)t->n * (double)stride;
  const int team = tfmm_team(pairs, TFMM_GRAIN_PAIRS);
#pragma omp parallel reduction(| : bad) num_threads(team)
  {
    void *tgt = malloc(4 * (size_t)stride * sizeof(double));
    void *src = malloc(4 * (size_t)stride * sizeof(double));
    bad = tgt == NULL || src == NULL;
#pragma omp for schedule(dynamic, 4)
    for (int64_t leaf = 0; leaf < t->nleaves; leaf++) {
      const int dbl = frame == NULL || exact[leaf];
      if (bad || (only && !dbl))
        continue;
      /* Double differences the positions themselves: one rounding of r,
       * where an origin's would add u |x - o| (1e-3 at 1e13). */
      if (dbl)
        near_leaf_f64(t, near, leaf, zero, &k64, tgt, src, stride, acc, pot);
      else
        near_leaf_f32(t, near, leaf, frame[t->leaves[leaf]].origin, &k32, tgt,
                      src, stride, acc, pot);
    }
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

/* The frames and exact leaves of t (near_frame.h), allocated; NULL and
 * NULL when out of memory. */
static int64_t frames_of(const tfmm_octree *t, const tfmm_csr *near, double eps,
                         tfmm_near_frame **frame, unsigned char **exact) {
  *frame = malloc((size_t)t->ncells * sizeof **frame);
  *exact = malloc((size_t)t->nleaves + 1);
  if (*frame == NULL || *exact == NULL) {
    free(*frame);
    free(*exact);
    *frame = NULL;
    *exact = NULL;
    return -1;
  }
  return tfmm_near_frames(t, near, eps, *frame, *exact);
}

static tfmm_status no_frames(const tfmm_octree *t, tfmm_error *err) {
  return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                        "no memory for the near field's frames (%lld cells)",
                        (long long)t->ncells);
}

tfmm_status tfmm_p2p_cpu(const tfmm_octree *t, const tfmm_csr *near,
                         const tfmm_pair_params *pair, double *acc, double *pot,
                         tfmm_error *err) {
  if (pair->precision == TFMM_PRECISION_DOUBLE)
    return run_leaves(t, near, pair, NULL, NULL, 0, acc, pot, err);
  tfmm_near_frame *frame;
  unsigned char *exact;
  if (frames_of(t, near, pair->eps, &frame, &exact) < 0)
    return no_frames(t, err);
  tfmm_status st = run_leaves(t, near, pair, frame, exact, 0, acc, pot, err);
  free(frame);
  free(exact);
  return st;
}

tfmm_status tfmm_p2p_cpu_exact(const tfmm_octree *t, const tfmm_csr *near,
                               const tfmm_pair_params *pair, float *out,
                               tfmm_error *err) {
  tfmm_near_frame *frame;
  unsigned char *exact;
  const int64_t count = frames_of(t, near, pair->eps, &frame, &exact);
  if (count < 0)
    return no_frames(t, err);
  double *acc = count > 0 ? malloc(4 * t->n * sizeof *acc) : NULL;
  tfmm_status st = TFMM_OK;
  if (count > 0 && acc == NULL)
    st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                        "no memory for the near field of %lld leaves in "
                        "double",
                        (long long)count);
  else if (count > 0)
    st = run_leaves(t, near, pair, frame, exact, 1, acc, acc + 3 * t->n, err);
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
  for (int64_t k = 0; k < (st == TFMM_OK && count > 0 ? t->nleaves : 0); k++) {
    const tfmm_cell *c = &t->cells[t->leaves[k]];
    for (int64_t b = c->body_begin; exact[k] && b < c->body_end; b++) {
      for (int d = 0; d < 3; d++)
        out[4 * b + d] = (float)acc[3 * b + d];
      out[4 * b + 3] = (float)acc[3 * t->n + b];
    }
  }
  free(acc);
  free(frame);
  free(exact);
  return st;
}
