#include "nearfield/p2p_gpu.h"

#include <stdlib.h>

static int32_t width_for(int32_t count) {
  int32_t w = 1;
  while (2 * w < count)
    w *= 2;
  return w;
}

static int64_t chunks_of(int64_t bodies) {
  return (bodies + TFMM_NEAR_ITEM_MAX - 1) / TFMM_NEAR_ITEM_MAX;
}

int64_t tfmm_p2p_gpu_items(const tfmm_octree *t, tfmm_gpu_near_item *item) {
  int64_t n = 0;
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *c = &t->cells[t->leaves[k]];
    const int64_t bodies = c->body_end - c->body_begin,
                  chunks = chunks_of(bodies);
    for (int64_t j = 0; j < chunks && item != NULL; j++) {
      int64_t lo = bodies * j / chunks, hi = bodies * (j + 1) / chunks;
      item[n + j] = (tfmm_gpu_near_item){
          (int32_t)k, (int32_t)(c->body_begin + lo), (int32_t)(hi - lo),
          width_for((int32_t)(hi - lo))};
    }
    n += chunks;
  }
  return n;
}

/* Bodies relative to their leaf's centre, and the leaves' extents. */
static void pack_bodies(const tfmm_octree *t, tfmm_gpu_near_host *h) {
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *c = &t->cells[t->leaves[k]];
    for (int d = 0; d < 3; d++)
      h->centre[3 * k + d] = c->center[d];
    h->leaf_begin[k] = (int32_t)c->body_begin;
    for (int64_t b = c->body_begin; b < c->body_end; b++) {
      for (int d = 0; d < 3; d++)
        h->body[4 * b + d] = (float)(t->pos[3 * b + d] - c->center[d]);
      h->body[4 * b + 3] = (float)t->mass[b];
    }
  }
  h->leaf_begin[t->nleaves] = (int32_t)t->n;
}

/* The lists with their entries turned from cell indices into leaf
 * positions (the kernel knows leaves only). */
static int pack_lists(const tfmm_octree *t, const tfmm_csr *near,
                      tfmm_gpu_near_host *h) {
  int32_t *position = malloc((size_t)t->ncells * sizeof *position);
  if (position == NULL)
    return -1;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t k = 0; k < t->nleaves; k++)
      position[t->leaves[k]] = (int32_t)k;
#pragma omp for schedule(static)
    for (int64_t k = 0; k <= t->nleaves; k++)
      h->list_offset[k] = (int32_t)near->offset[k];
#pragma omp for schedule(static)
    for (int64_t e = 0; e < near->offset[t->nleaves]; e++)
      h->list_leaf[e] = position[near->index[e]];
  }
  free(position);
  return 0;
}

tfmm_status tfmm_p2p_gpu_launch(tfmm_gpu *gpu, const tfmm_octree *t,
                                const tfmm_csr *near, double eps, int potential,
                                tfmm_p2p_gpu_run *run, tfmm_error *err) {
  tfmm_gpu_near_size *sz = &run->size;
  sz->n = t->n;
  sz->nleaves = t->nleaves;
  sz->nentries = near->offset[t->nleaves];
  sz->nitems = tfmm_p2p_gpu_items(t, NULL);
  if (sz->nentries > INT32_MAX || sz->nitems > INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                          "near field: %lld list entries and %lld work items; "
                          "the GPU kernel takes at most 2^31 - 1 (use a "
                          "larger leaf size)",
                          (long long)sz->nentries, (long long)sz->nitems);
  tfmm_status st = tfmm_gpu_near_reserve(gpu, sz, &run->host, err);
  if (st != TFMM_OK)
    return st;
  pack_bodies(t, &run->host);
  if (pack_lists(t, near, &run->host) != 0)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the near-field lists of %lld cells",
                          (long long)t->ncells);
  tfmm_p2p_gpu_items(t, run->host.item);
  run->launched = tfmm_wtime();
  return tfmm_gpu_near_launch(gpu, sz, (float)(eps * eps), potential, err);
}

tfmm_status tfmm_p2p_gpu_wait(tfmm_gpu *gpu, tfmm_p2p_gpu_run *run,
                              tfmm_gpu_times *times, tfmm_error *err) {
  (void)run;
  return tfmm_gpu_near_wait(gpu, times, err);
}
