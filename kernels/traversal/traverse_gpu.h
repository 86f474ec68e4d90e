/* The traversal on the GPU (issue 13): the interaction lists of a tree
 * built by tfmm_tree_gpu_build, as src/tree/lists.c makes them on the CPU,
 * without the tree leaving the device.
 *
 * FMM: the dual-tree traversal breadth first over a frontier of cell
 * pairs, starting from (root, root). Each round applies the opening
 * criterion (src/tree/mac_rule.h, the CPU's arithmetic) to every pair of
 * the frontier and sorts it into accepted far-field pairs (M2L, or M2P for
 * targets of at most m2p_bodies bodies), near-field leaf pairs and pairs
 * to open; the opened pairs' children, placed by a CUB scan of their
 * counts, are the next frontier, and the finished pairs are appended to
 * their lists by CUB stream compaction (Horn, GPU Gems 2 ch. 36:
 * breadth-first traversal by filtering). The rule for a pair is the CPU's
 * dual_step: a cell with itself is a near pair if a leaf, else all pairs
 * of its children; an accepted pair is far; two leaves are near; else the
 * larger by radius (never a leaf) is opened.
 *
 * Barnes-Hut: the same sweep over (target leaf, source cell) pairs, from
 * (leaf, root) for every leaf: a source other than the leaf is taken whole
 * (M2P) when accepted, body by body when a leaf, else opened.
 *
 * Past a frontier of frontier_cap pairs the sweep goes on by slices, depth
 * first (the memory it holds is then bounded by the cap times the depth).
 *
 * The lists are then put in CSR form by target with a stable CUB radix
 * sort: the same lists as the CPU traversal's as sets of entries per
 * target (tests/test_traverse_gpu.c); the order of the entries within a
 * target differs (breadth first here, depth first there) and is fixed by
 * the tree alone, so that results are the same bits run after run.
 *
 * The criterion's per-cell inputs are made here too: the mass criterion's
 * theta of every cell (tfmm_mac_mass_theta), the error criterion's |a|_A
 * by the monopole walk of src/tree/accel_estimate.c, one thread a leaf,
 * in the CPU's order of summation (the same bits), then the least over
 * each cell's leaves, level by level; or, given the bodies' previous
 * accelerations (prior_acc), the least |a| of each leaf's bodies by one
 * CUB segmented reduction over the leaves' body ranges, then the parents
 * as before.
 *
 * Plain C. Work is enqueued on the caller's stream (a cudaStream_t as
 * void *; NULL: the legacy default stream) of the current device, the
 * device context's (gpu_context.h), which owns the memory: the buffers
 * are slots of its arena's TRAVERSE group and the pinned copies of the
 * sums TFMM_PINNED_TRAVERSE slots (arena.h), kept between calls, grown
 * when a traversal needs more and released when the context is destroyed
 * (one traversal state per context, since they share those slots). The
 * sweep waits on the stream once a round, for the size of the next
 * frontier (rounds: about twice the tree's depth). The lists point into
 * the buffers and live until the next call or the context's end.
 *
 * Memory (the sweep's output: 8 bytes an entry; the lists keep 4): each
 * list is sorted from two int32 arrays in a scratch shared by the lists
 * into the two halves of its own output buffer, the CSR index in the
 * first (16 bytes an entry at the peak, instead of 24). Once a run has
 * returned, the scratch, the frontier's buffers and the second halves are
 * dead until the next run: tfmm_traverse_gpu_spare lends them to the
 * stages that follow (the gpu schedule's near and far fields). */
#ifndef TFMM_TRAVERSE_GPU_H
#define TFMM_TRAVERSE_GPU_H

#include "arena.h"
#include "base/error.h"
#include "farfield_gpu.h"
#include "tilefmm.h"
#include "tree_gpu.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The default cap of a round's frontier: 8M pairs (about 200 MB with
 * their scan and flags). */
#define TFMM_TRAVERSE_GPU_FRONTIER_CAP ((int64_t)1 << 23)

typedef struct tfmm_traverse_gpu_params {
  int barnes_hut;          /* 0: the FMM's dual-tree traversal; 1: Barnes-Hut */
  tfmm_mac_kind mac;       /* geometric, mass or error (tfmm_config.mac) */
  double theta;            /* the root's (and, geometric, every cell's) */
  double separation;       /* the softening's s (mac.h); 0 without softening */
  double epsilon;          /* error criterion: per interaction, relative */
  int order;               /* p of the expansions */
  double soft_term;        /* error criterion: 3/2 eps^2 with Plummer, else 0 */
  double eps;              /* error criterion: the estimate's Plummer eps */
  const double *prior_acc; /* error criterion: the bodies' accelerations at
                              their previous evaluation (device, 3n, input
                              order: tree->d_order maps there), |a|_A the
                              least tfmm_mac_prior_accel of a cell's bodies
                              (accel_estimate.h, tfmm_accel_prior); NULL:
                              the estimate */
  double prior_scale;      /* their factor to internal units (mac_rule.h) */
  int64_t m2p_bodies;      /* FMM: accepted targets of at most this many bodies
                              take the source by M2P */
  int64_t frontier_cap;    /* the most pairs a round opens into (>= 64); 0:
                              TFMM_TRAVERSE_GPU_FRONTIER_CAP. Smaller: less
                              memory, more rounds; the lists are the same */
  int64_t narrow;          /* rounds of at most this many pairs run in one
                              cooperative launch, the rest one a host wait;
                              0: a tile a block, one block an SM (135,168
                              pairs on 132 SMs); < 0: every round the
                              host's. The lists are the same */
  int64_t list_cap;        /* the most entries a list may hold (<= 2^31 - 1,
                              the index's range); 0: 2^31 - 1. Smaller: for
                              tests of what the callers do past it */
} tfmm_traverse_gpu_params;

/* With tree->d_targets (an evaluation at a subset of the bodies), every
 * pair whose target cell holds no target is dropped with the pairs below
 * it, and only those: the other targets' entries are the whole sweep's,
 * in the same order, as long as the whole sweep's frontier would have
 * stayed within the cap (past it the slices, cut by the cap, differ).
 *
 * The lists (src/tree/lists.h) in device memory: m2l and m2p by target
 * cell (ncells targets; m2l empty for Barnes-Hut), near by target leaf
 * position (nleaves targets); entries are cell indices. */
typedef struct tfmm_traverse_gpu_lists {
  tfmm_csr_gpu m2l, near, m2p;
  int64_t m2l_count, near_count, m2p_count; /* entries of each */
  double near_interactions; /* body-body pairs of near (self excluded) */
  double m2p_evaluations;   /* target bodies summed over M2P entries */
  const double *d_theta;    /* mass criterion: theta of every cell */
  const double *d_accel;    /* error criterion: |a|_A of every cell */
  int rounds;               /* of the sweep */
  int64_t widest;           /* pairs in its widest frontier */
  int64_t too_many;         /* entries of the longest list when a list held more
                               than list_cap (the run then failed,
                               TFMM_ERR_UNSUPPORTED); 0 otherwise */
} tfmm_traverse_gpu_lists;

/* Zero-initialise; release with tfmm_traverse_gpu_release. */
typedef struct tfmm_traverse_gpu {
  struct tfmm_traverse_gpu_state *state; /* the context and its slots,
                                            made on first use */
  tfmm_traverse_gpu_lists lists;         /* of the last traversal */
  uint64_t runs; /* traversals started: memory lent after run k (see
                    tfmm_traverse_gpu_spare) is lent while runs is k */
} tfmm_traverse_gpu;

/* A region of device memory. */
typedef struct tfmm_traverse_gpu_region {
  void *p;
  size_t bytes;
} tfmm_traverse_gpu_region;

enum { TFMM_TRAVERSE_GPU_SPARES = 8 };

/* The lists of `tree` under `params` into t->lists, in the memory of gpu
 * (whose device is current; the same context at every run of t). Invalid
 * parameters are TFMM_ERR_INVALID_ARGUMENT, CUDA failures TFMM_ERR_CUDA
 * (out of device memory TFMM_ERR_NO_MEMORY), lists past 2^31 - 1 entries
 * TFMM_ERR_UNSUPPORTED; the message is in err. Returns with the stream
 * idle. */
tfmm_status tfmm_traverse_gpu_run(tfmm_traverse_gpu *t, tfmm_gpu *gpu,
                                  const tfmm_tree_gpu *tree,
                                  const tfmm_traverse_gpu_params *params,
                                  void *stream, tfmm_error *err);

/* Device bytes the state holds (its slots). */
size_t tfmm_traverse_gpu_bytes(const tfmm_traverse_gpu *t);

/* The most device bytes the state has held at once: what it holds, or
 * more while an output buffer grew (the old one copied into the new). */
size_t tfmm_traverse_gpu_peak_bytes(const tfmm_traverse_gpu *t);

/* Device memory the state holds but does not need from the return of a
 * successful tfmm_traverse_gpu_run to the start of the next run (the
 * lists' sort scratch, the frontier's buffers, the lists' spare halves):
 * at most TFMM_TRAVERSE_GPU_SPARES regions, 256-byte aligned, largest
 * first, into out; returns their count (0 before a run or after one that
 * failed). A caller may use them for work it enqueues on the stream the
 * lists were made on until it starts the traversal again (t->runs
 * counts the runs); the next run, on that stream, reuses or frees them
 * after that work. */
int tfmm_traverse_gpu_spare(const tfmm_traverse_gpu *t,
                            tfmm_traverse_gpu_region out[]);

/* Frees the state and forgets the context, whose arena keeps the buffers
 * until it is destroyed (before or after this call); t is zeroed and
 * reusable. */
void tfmm_traverse_gpu_release(tfmm_traverse_gpu *t);

#ifdef __cplusplus
}
#endif

#endif
