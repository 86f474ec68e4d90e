/* The near field's work items (tfmm_gpu_near_item, below), written once
 * for the CPU, which makes them for the hybrid schedule
 * (kernels/near/p2p_gpu.c), and the GPU, which makes them for the gpu schedule
 * (kernels/schedule/pipeline_gpu.cu) from the lists it built: the same items
 * from the same leaves and lists. The rule is p2p_gpu.h's (tfmm_p2p_gpu_items).
 * This header owns the item types, which the device layer's gpu.h takes from
 * it; it includes nothing of the library, so that it compiles alone in C and
 * CUDA. Everything is read from plain arrays: */
#ifndef TFMM_NEAR_ITEMS_H
#define TFMM_NEAR_ITEMS_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define TFMM_NEAR_FN static __host__ __device__ __forceinline__
#else
#define TFMM_NEAR_FN static inline
#endif

/* A warp's work: `count` <= TFMM_NEAR_ITEM_MAX target bodies of one leaf,
 * starting at sorted body `first`, held two per lane by width =
 * ceil(count / 2) lanes; the warp's floor(32 / width) lane groups split
 * every source tile between them (lanes past the last group idle), so that
 * a small leaf still keeps most lanes busy. The item takes the list
 * entries [entry_begin, entry_end) of its leaf. An item that holds the
 * whole list writes the results (slot = -1); a long list is cut into
 * several items, each writing its partial sums to slots
 * [slot, slot + count), added up in order afterwards
 * (tfmm_gpu_near_split): no single warp holds up the kernel with the list
 * of a large sparse leaf, and still no atomics. */
typedef struct tfmm_gpu_near_item {
  int32_t leaf, first, count, width;
  int32_t entry_begin, entry_end, slot, unused;
} tfmm_gpu_near_item;

/* A target chunk whose list was cut: the partial sums of its `parts`
 * items are at slots slot + p count + k, p = 0 .. parts - 1, for body
 * first + k. */
typedef struct tfmm_gpu_near_split {
  int32_t first, count, slot, parts;
} tfmm_gpu_near_split;

enum { TFMM_NEAR_ITEM_MAX = 64 };

typedef struct tfmm_near_view {
  int64_t nleaves;
  const int32_t *leaf_begin;   /* nleaves + 1: leaf k is bodies
                                  [leaf_begin[k], leaf_begin[k + 1]) */
  const int64_t *offset;       /* nleaves + 1: leaf k's entries */
  const int32_t *list_leaf;    /* the entries, as leaf positions */
  const int32_t *entry_bodies; /* the bodies of each entry's leaf, or NULL
                                  (then read through leaf_begin): one
                                  sequential read a step, for the GPU */
} tfmm_near_view;

/* Items, splits and partial-sum slots: of one leaf, or where its own
 * start. */
typedef struct tfmm_near_span {
  int64_t items, splits, slots;
} tfmm_near_span;

/* The most interactions one work item may take when the near field has
 * `total` on a GPU of sm_count multiprocessors (p2p_gpu.h,
 * tfmm_p2p_gpu_budget). */
TFMM_NEAR_FN int64_t tfmm_near_budget(double total, int sm_count) {
  const double items = 16384.0 * (sm_count > 0 ? sm_count : 132) / 132;
  double b = total / items;
  return b > 65536.0 ? (int64_t)b : 65536;
}

/* A chunk of count bodies is held two per lane by ceil(count / 2) lanes,
 * and the warp has floor(32 / width) such groups sharing the sources. */
TFMM_NEAR_FN int32_t tfmm_near_width(int64_t count) {
  return (int32_t)((count + 1) / 2);
}

/* The number of chunks to cut a leaf of n bodies into: the fewest that
 * minimise the time of streaming its list, chunks / groups (each chunk
 * streams every source; its groups share them). A leaf of 40 bodies: one
 * chunk of 40 has one group (cost 1), two of 20 have three each (2/3). */
TFMM_NEAR_FN int64_t tfmm_near_chunks(int64_t bodies) {
  const int64_t least = (bodies + TFMM_NEAR_ITEM_MAX - 1) / TFMM_NEAR_ITEM_MAX;
  int64_t best = least;
  double best_cost = INFINITY;
  for (int64_t k = least; k <= least + 4 && k <= bodies; k++) {
    const int64_t groups = 32 / tfmm_near_width((bodies + k - 1) / k);
    double cost = (double)k / (double)groups;
    if (cost < best_cost) {
      best = k;
      best_cost = cost;
    }
  }
  return best > 0 ? best : 1;
}

/* The bodies of entry e's source leaf. */
TFMM_NEAR_FN int64_t tfmm_near_entry_bodies(const tfmm_near_view *v,
                                            int64_t e) {
  if (v->entry_bodies != NULL)
    return v->entry_bodies[e];
  const int32_t s = v->list_leaf[e];
  return v->leaf_begin[s + 1] - v->leaf_begin[s];
}

/* Chunk j of a leaf of `bodies` bodies cut into `chunks`: its first body
 * (from the leaf's) in *lo, its bodies in *count. */
TFMM_NEAR_FN void tfmm_near_chunk(int64_t bodies, int64_t chunks, int64_t j,
                                  int64_t *lo, int64_t *count) {
  *lo = bodies * j / chunks;
  *count = bodies * (j + 1) / chunks - *lo;
}

/* The item of one run [begin, end) of a chunk's entries, `first` its first
 * body: slot -1 until the chunk's parts are known. */
TFMM_NEAR_FN tfmm_gpu_near_item tfmm_near_item_of(int64_t k, int64_t first,
                                                  int64_t count, int64_t begin,
                                                  int64_t end) {
  tfmm_gpu_near_item x;
  x.leaf = (int32_t)k;
  x.first = (int32_t)first;
  x.count = (int32_t)count;
  x.width = tfmm_near_width(count);
  x.entry_begin = (int32_t)begin;
  x.entry_end = (int32_t)end;
  x.slot = -1;
  x.unused = 0;
  return x;
}

/* The split of a chunk cut into parts > 1 runs, whose items' partial sums
 * are at slot, slot + count, ... */
TFMM_NEAR_FN tfmm_gpu_near_split tfmm_near_split_of(int64_t first,
                                                    int64_t count, int64_t slot,
                                                    int64_t parts) {
  tfmm_gpu_near_split s;
  s.first = (int32_t)first;
  s.count = (int32_t)count;
  s.slot = (int32_t)slot;
  s.parts = (int32_t)parts;
  return s;
}

/* The items of leaf k: counted into *n, and written from *at when item is
 * not NULL. */
TFMM_NEAR_FN void tfmm_near_leaf_items(const tfmm_near_view *v, int64_t k,
                                       int64_t budget, const tfmm_near_span *at,
                                       tfmm_near_span *n,
                                       tfmm_gpu_near_item *item,
                                       tfmm_gpu_near_split *split) {
  const int64_t begin = v->leaf_begin[k];
  const int64_t bodies = v->leaf_begin[k + 1] - begin;
  const int64_t chunks = tfmm_near_chunks(bodies);
  const int64_t e0 = v->offset[k], e1 = v->offset[k + 1];
  n->items = n->splits = n->slots = 0;
  for (int64_t j = 0; j < chunks; j++) {
    int64_t lo, count;
    tfmm_near_chunk(bodies, chunks, j, &lo, &count);
    const int64_t first_item = n->items;
    int64_t e = e0;
    do { /* one run of entries: at least one, at most budget interactions */
      int64_t run_begin = e, work = 0;
      while (e < e1) {
        const int64_t w = count * tfmm_near_entry_bodies(v, e);
        if (work > 0 && work + w > budget)
          break;
        work += w;
        e++;
      }
      if (item != NULL)
        item[at->items + n->items] =
            tfmm_near_item_of(k, begin + lo, count, run_begin, e);
      n->items++;
    } while (e < e1);
    const int64_t parts = n->items - first_item;
    if (parts > 1) {
      const int64_t slot = at->slots + n->slots;
      for (int64_t p = 0; item != NULL && p < parts; p++)
        item[at->items + first_item + p].slot = (int32_t)(slot + p * count);
      if (split != NULL)
        split[at->splits + n->splits] =
            tfmm_near_split_of(begin + lo, count, slot, parts);
      n->splits++;
      n->slots += parts * count;
    }
  }
}

#endif
