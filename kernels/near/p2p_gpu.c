#include "p2p_gpu.h"

#include "team.h"

#include "nearfield/near_frame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t tfmm_p2p_gpu_budget(double total, int sm_count) {
  return tfmm_near_budget(total, sm_count);
}

int tfmm_p2p_gpu_items(const tfmm_near_view *v, int64_t budget,
                       tfmm_gpu_near_size *sz, tfmm_gpu_near_item *item,
                       tfmm_gpu_near_split *split) {
  tfmm_near_span *span = malloc((size_t)(v->nleaves + 1) * sizeof *span);
  if (span == NULL)
    return -1;
  const tfmm_near_span zero = {0, 0, 0};
  const int team = tfmm_team(v->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
  for (int64_t k = 0; k < v->nleaves; k++)
    tfmm_near_leaf_items(v, k, budget, &zero, &span[k + 1], NULL, NULL);
  span[0] = zero;
  for (int64_t k = 0; k < v->nleaves; k++) {
    span[k + 1].items += span[k].items;
    span[k + 1].splits += span[k].splits;
    span[k + 1].slots += span[k].slots;
  }
  sz->nitems = span[v->nleaves].items;
  sz->nsplits = span[v->nleaves].splits;
  sz->nslots = span[v->nleaves].slots;
  if (item != NULL) {
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
    for (int64_t k = 0; k < v->nleaves; k++) {
      tfmm_near_span n;
      tfmm_near_leaf_items(v, k, budget, &span[k], &n, item, split);
    }
  }
  free(span);
  return 0;
}

/* Bodies relative to their leaf's origin, in the precision of the sums,
 * and the leaves' origins: in single precision the frames' (near_frame.h,
 * as the CPU's), in double 0, so that the kernel differences the
 * coordinates themselves, as the CPU's double does (p2p_cpu.c): relative to
 * the cell's centre each coordinate would also round by u |x - c|, which
 * loses a small group beside a far body in one leaf (issue 29). */
static void pack_bodies(const tfmm_octree *t, const tfmm_near_frame *frame,
                        tfmm_gpu_near_host *h) {
  float *b32 = h->precision == TFMM_PRECISION_DOUBLE ? NULL : h->body;
  double *b64 = h->precision == TFMM_PRECISION_DOUBLE ? h->body : NULL;
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *c = &t->cells[t->leaves[k]];
    static const double zero[3] = {0, 0, 0};
    const double *o = b64 != NULL ? zero : frame[t->leaves[k]].origin;
    for (int d = 0; d < 3; d++)
      h->centre[3 * k + d] = o[d];
    for (int64_t b = c->body_begin; b < c->body_end; b++) {
      for (int d = 0; d < 4; d++) {
        const double v = d < 3 ? t->pos[3 * b + d] - o[d] : t->mass[b];
        if (b64 != NULL)
          b64[4 * b + d] = v;
        else
          b32[4 * b + d] = (float)v;
      }
    }
  }
}

/* The leaves' extents (nleaves + 1 starts) and the lists with their
 * entries turned from cell indices into leaf positions (the kernel knows
 * leaves only). */
static int pack_lists(const tfmm_octree *t, const tfmm_csr *near,
                      int32_t *leaf_begin, int32_t *list_leaf) {
  int32_t *position = malloc((size_t)t->ncells * sizeof *position);
  if (position == NULL)
    return -1;
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel num_threads(team)
  {
#pragma omp for schedule(static)
    for (int64_t k = 0; k < t->nleaves; k++) {
      position[t->leaves[k]] = (int32_t)k;
      leaf_begin[k] = (int32_t)t->cells[t->leaves[k]].body_begin;
    }
#pragma omp for schedule(static)
    for (int64_t e = 0; e < near->offset[t->nleaves]; e++)
      list_leaf[e] = position[near->index[e]];
  }
  leaf_begin[t->nleaves] = (int32_t)t->n;
  free(position);
  return 0;
}

static tfmm_status too_many(const tfmm_gpu_near_size *sz, tfmm_error *err) {
  return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                        "near field: %lld list entries and %lld work items; "
                        "the GPU kernel takes at most 2^31 - 1 (use a "
                        "larger leaf size)",
                        (long long)sz->nentries, (long long)sz->nitems);
}

tfmm_status tfmm_p2p_gpu_pack(tfmm_gpu *gpu, const tfmm_octree *t,
                              const tfmm_csr *near, double total,
                              tfmm_precision precision, tfmm_p2p_gpu_run *run,
                              tfmm_error *err) {
  tfmm_gpu_near_size *sz = &run->size;
  sz->n = t->n;
  sz->nleaves = t->nleaves;
  sz->nentries = near->offset[t->nleaves];
  sz->precision = precision;
  if (sz->nentries > INT32_MAX)
    return too_many(sz, err);
  /* The items are counted from the packed leaves and lists before the
   * pinned buffers are sized for them; then copied there. */
  const size_t starts = (size_t)(t->nleaves + 1) * sizeof(int32_t);
  const size_t entries = (size_t)sz->nentries * sizeof(int32_t);
  int32_t *leaf_begin = malloc(starts);
  int32_t *list_leaf = malloc(entries > 0 ? entries : 1);
  const tfmm_near_view view = {t->nleaves, leaf_begin, near->offset, list_leaf,
                               NULL};
  const int64_t budget = tfmm_p2p_gpu_budget(total, tfmm_gpu_sm_count(gpu));
  tfmm_status st = TFMM_OK;
  if (leaf_begin == NULL || list_leaf == NULL ||
      pack_lists(t, near, leaf_begin, list_leaf) != 0 ||
      tfmm_p2p_gpu_items(&view, budget, sz, NULL, NULL) != 0)
    st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                        "no memory for the near-field lists of %lld cells",
                        (long long)t->ncells);
  else if (sz->nitems > INT32_MAX || sz->nslots > INT32_MAX)
    st = too_many(sz, err);
  if (st == TFMM_OK)
    st = tfmm_gpu_near_reserve(gpu, sz, &run->host, err);
  if (st == TFMM_OK) {
    memcpy(run->host.leaf_begin, leaf_begin, starts);
    memcpy(run->host.list_leaf, list_leaf, entries);
    tfmm_near_frame *frame = precision == TFMM_PRECISION_DOUBLE
                                 ? NULL
                                 : malloc((size_t)t->ncells * sizeof *frame);
    if (frame != NULL)
      tfmm_near_frames(t, near, 0, frame, NULL);
    if (frame == NULL && precision != TFMM_PRECISION_DOUBLE)
      st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the near field's frames");
    else
      pack_bodies(t, frame, &run->host);
    free(frame);
  }
  if (st == TFMM_OK) {
    if (tfmm_p2p_gpu_items(&view, budget, sz, run->host.item,
                           run->host.split) != 0)
      st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the near-field work items");
  }
  free(leaf_begin);
  free(list_leaf);
  return st;
}

tfmm_status tfmm_p2p_gpu_launch(tfmm_gpu *gpu, const tfmm_pair_params *pair,
                                int potential, tfmm_p2p_gpu_run *run,
                                tfmm_error *err) {
  const tfmm_gpu_near_size *sz = &run->size;
  run->launched = tfmm_wtime();
  tfmm_status st = tfmm_gpu_near_upload(gpu, sz, err);
  if (st == TFMM_OK)
    st = tfmm_gpu_near_run(gpu, sz, pair, potential, err);
  if (st == TFMM_OK)
    st = tfmm_gpu_near_download(gpu, sz, err);
  return st;
}

tfmm_status tfmm_p2p_gpu_wait(tfmm_gpu *gpu, tfmm_p2p_gpu_run *run,
                              tfmm_gpu_times *times, tfmm_error *err) {
  (void)run;
  return tfmm_gpu_near_wait(gpu, times, err);
}
