#include "nearfield/p2p_gpu.h"

#include "team.h"

#include <math.h>
#include <stdlib.h>

/* A chunk of count bodies is held two per lane by ceil(count / 2) lanes,
 * and the warp has floor(32 / width) such groups sharing the sources. */
static int32_t width_for(int64_t count) { return (int32_t)((count + 1) / 2); }

static int64_t groups_for(int64_t count) { return 32 / width_for(count); }

/* The number of chunks to cut a leaf of n bodies into: the fewest that
 * minimise the time of streaming its list, chunks / groups (each chunk
 * streams every source; its groups share them). A leaf of 40 bodies: one
 * chunk of 40 has one group (cost 1), two of 20 have three each (2/3). */
static int64_t chunks_of(int64_t bodies) {
  const int64_t least = (bodies + TFMM_NEAR_ITEM_MAX - 1) / TFMM_NEAR_ITEM_MAX;
  int64_t best = least;
  double best_cost = INFINITY;
  for (int64_t k = least; k <= least + 4 && k <= bodies; k++) {
    double cost = (double)k / (double)groups_for((bodies + k - 1) / k);
    if (cost < best_cost) {
      best = k;
      best_cost = cost;
    }
  }
  return best > 0 ? best : 1;
}

int64_t tfmm_p2p_gpu_budget(double total, int sm_count) {
  const double items = 16384.0 * (sm_count > 0 ? sm_count : 132) / 132;
  double b = total / items;
  return b > 65536.0 ? (int64_t)b : 65536;
}

/* Where one leaf's items, splits and slots start, and how many it has. */
typedef struct leaf_span {
  int64_t items, splits, slots;
} leaf_span;

/* The items of leaf k: counted into *n, and written from *at when item is
 * not NULL. */
static void leaf_items(const tfmm_octree *t, const tfmm_csr *near, int64_t k,
                       int64_t budget, const leaf_span *at, leaf_span *n,
                       tfmm_gpu_near_item *item, tfmm_gpu_near_split *split) {
  const tfmm_cell *c = &t->cells[t->leaves[k]];
  const int64_t bodies = c->body_end - c->body_begin,
                chunks = chunks_of(bodies);
  const int64_t e0 = near->offset[k], e1 = near->offset[k + 1];
  *n = (leaf_span){0, 0, 0};
  for (int64_t j = 0; j < chunks; j++) {
    const int64_t lo = bodies * j / chunks, hi = bodies * (j + 1) / chunks;
    const int64_t count = hi - lo, first_item = n->items;
    int64_t e = e0;
    do { /* one run of entries: at least one, at most budget interactions */
      int64_t begin = e, work = 0;
      while (e < e1) {
        const tfmm_cell *src = &t->cells[near->index[e]];
        int64_t w = count * (src->body_end - src->body_begin);
        if (work > 0 && work + w > budget)
          break;
        work += w;
        e++;
      }
      if (item != NULL)
        item[at->items + n->items] =
            (tfmm_gpu_near_item){(int32_t)k,
                                 (int32_t)(c->body_begin + lo),
                                 (int32_t)count,
                                 width_for(count),
                                 (int32_t)begin,
                                 (int32_t)e,
                                 -1,
                                 0};
      n->items++;
    } while (e < e1);
    const int64_t parts = n->items - first_item;
    if (parts > 1) {
      const int64_t slot = at->slots + n->slots;
      for (int64_t p = 0; item != NULL && p < parts; p++)
        item[at->items + first_item + p].slot = (int32_t)(slot + p * count);
      if (split != NULL)
        split[at->splits + n->splits] =
            (tfmm_gpu_near_split){(int32_t)(c->body_begin + lo), (int32_t)count,
                                  (int32_t)slot, (int32_t)parts};
      n->splits++;
      n->slots += parts * count;
    }
  }
}

int tfmm_p2p_gpu_items(const tfmm_octree *t, const tfmm_csr *near,
                       int64_t budget, tfmm_gpu_near_size *sz,
                       tfmm_gpu_near_item *item, tfmm_gpu_near_split *split) {
  leaf_span *span = malloc((size_t)(t->nleaves + 1) * sizeof *span);
  if (span == NULL)
    return -1;
  const leaf_span zero = {0, 0, 0};
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
  for (int64_t k = 0; k < t->nleaves; k++)
    leaf_items(t, near, k, budget, &zero, &span[k + 1], NULL, NULL);
  span[0] = zero;
  for (int64_t k = 0; k < t->nleaves; k++) {
    span[k + 1].items += span[k].items;
    span[k + 1].splits += span[k].splits;
    span[k + 1].slots += span[k].slots;
  }
  sz->nitems = span[t->nleaves].items;
  sz->nsplits = span[t->nleaves].splits;
  sz->nslots = span[t->nleaves].slots;
  if (item != NULL) {
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
    for (int64_t k = 0; k < t->nleaves; k++) {
      leaf_span n;
      leaf_items(t, near, k, budget, &span[k], &n, item, split);
    }
  }
  free(span);
  return 0;
}

/* Bodies relative to their leaf's centre, in the precision of the sums,
 * and the leaves' extents. */
static void pack_bodies(const tfmm_octree *t, tfmm_gpu_near_host *h) {
  float *b32 = h->precision == TFMM_PRECISION_DOUBLE ? NULL : h->body;
  double *b64 = h->precision == TFMM_PRECISION_DOUBLE ? h->body : NULL;
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *c = &t->cells[t->leaves[k]];
    for (int d = 0; d < 3; d++)
      h->centre[3 * k + d] = c->center[d];
    h->leaf_begin[k] = (int32_t)c->body_begin;
    for (int64_t b = c->body_begin; b < c->body_end; b++) {
      for (int d = 0; d < 4; d++) {
        const double v = d < 3 ? t->pos[3 * b + d] - c->center[d] : t->mass[b];
        if (b64 != NULL)
          b64[4 * b + d] = v;
        else
          b32[4 * b + d] = (float)v;
      }
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
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel num_threads(team)
  {
#pragma omp for schedule(static)
    for (int64_t k = 0; k < t->nleaves; k++)
      position[t->leaves[k]] = (int32_t)k;
#pragma omp for schedule(static)
    for (int64_t e = 0; e < near->offset[t->nleaves]; e++)
      h->list_leaf[e] = position[near->index[e]];
  }
  free(position);
  return 0;
}

tfmm_status tfmm_p2p_gpu_launch(tfmm_gpu *gpu, const tfmm_octree *t,
                                const tfmm_csr *near, double total,
                                const tfmm_pair_params *pair, int potential,
                                tfmm_p2p_gpu_run *run, tfmm_error *err) {
  tfmm_gpu_near_size *sz = &run->size;
  sz->n = t->n;
  sz->nleaves = t->nleaves;
  sz->nentries = near->offset[t->nleaves];
  sz->precision = pair->precision;
  const int64_t budget = tfmm_p2p_gpu_budget(total, tfmm_gpu_sm_count(gpu));
  if (tfmm_p2p_gpu_items(t, near, budget, sz, NULL, NULL) != 0)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the near-field work items");
  if (sz->nentries > INT32_MAX || sz->nitems > INT32_MAX ||
      sz->nslots > INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                          "near field: %lld list entries and %lld work items; "
                          "the GPU kernel takes at most 2^31 - 1 (use a "
                          "larger leaf size)",
                          (long long)sz->nentries, (long long)sz->nitems);
  tfmm_status st = tfmm_gpu_near_reserve(gpu, sz, &run->host, err);
  if (st != TFMM_OK)
    return st;
  pack_bodies(t, &run->host);
  if (pack_lists(t, near, &run->host) != 0 ||
      tfmm_p2p_gpu_items(t, near, budget, sz, run->host.item,
                         run->host.split) != 0)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the near-field lists of %lld cells",
                          (long long)t->ncells);
  run->launched = tfmm_wtime();
  return tfmm_gpu_near_launch(gpu, sz, pair, potential, err);
}

tfmm_status tfmm_p2p_gpu_wait(tfmm_gpu *gpu, tfmm_p2p_gpu_run *run,
                              tfmm_gpu_times *times, tfmm_error *err) {
  (void)run;
  return tfmm_gpu_near_wait(gpu, times, err);
}
