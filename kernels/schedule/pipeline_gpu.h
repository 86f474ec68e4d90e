/* The gpu schedule (issue 13): a whole evaluation on one device, every
 * stage on one stream but the upward pass, the bodies uploaded once and
 * the forces copied back once:
 *
 *   upload   the bodies into the tree's buffer (none when they are there)
 *   tree     tfmm_tree_gpu_build (tree_gpu.h), kept on the device
 *   upward   tfmm_upward_gpu (upward_gpu.h), on a stream of its own
 *            (TFMM_STREAM_UPWARD) after the tree, beside the lists: they
 *            need only the tree's cells and wait on the host once a
 *            round, which leaves the device idle; the far field waits for
 *            it (as does the next evaluation's upload). Its time and the
 *            lists' (from the tree's end) overlap.
 *   lists    tfmm_traverse_gpu_run (traverse_gpu.h)
 *   near     the near field's inputs made from the tree and lists
 *            (bodies relative to their leaf, leaf extents, list entries as
 *            leaf positions, work items by src/nearfield/near_items.h, the
 *            hybrid schedule's rule), then the tiled kernel
 *            (tfmm_gpu_near_device_run)
 *   far      M2L, L2L, L2P and M2P (farfield_gpu.h)
 *   finish   far plus near times G, back to the input order
 *   download the results to the host (none when they are the caller's
 *            device arrays), the wait for the evaluation, its checks
 *
 * The host waits inside the tree build and the traversal (once a level or
 * round, for sizes), and once for the near field's item count; the rest is
 * enqueued. The device context (gpu_context.h, arena.h), given to the
 * first call (tfmm_pipeline_gpu_upload or tfmm_pipeline_gpu_bounds) and kept
 * in pl->base, owns the device, the stream (its SOLVE stream, the tree's)
 * and the memory: the tree's slots (tree_gpu_hybrid.h), the traversal's
 * and the SCHEDULE group for the other buffers, kept between evaluations,
 * grown when N grows and released when the context is destroyed. Stage
 * times are measured by CUDA events between the stages, which the state
 * owns. Plain C; the device is made current for each call and restored
 * after it. */
#ifndef TFMM_PIPELINE_GPU_H
#define TFMM_PIPELINE_GPU_H

#include "base/error.h"
#include "base/pair.h"
#include "gpu.h"
#include "traverse_gpu.h"
#include "tree_gpu_hybrid.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialise; release with tfmm_pipeline_gpu_release. */
typedef struct tfmm_pipeline_gpu {
  tfmm_tree_gpu_hybrid base; /* context, tree (bodies, multipoles) */
  tfmm_traverse_gpu lists;   /* the traversal and its lists */
  struct tfmm_pipeline_gpu_state *state; /* the other buffers and events */
  int64_t leaf_min, leaf_max;            /* bodies of a leaf, once the near
                                            field is enqueued */
  int64_t first_nonfinite;               /* after download: the lowest input
                                            index with a sum not finite, or
                                            -1 */
  int64_t first_beyond;                  /* ... with a result not finite
                                            once in the caller's units (the
                                            sums were), or -1 */
  int64_t last_n, last_cells;            /* the last tree's bodies and cells:
                                            the next tree of as many bodies
                                            is given room for 5/4 of them */
} tfmm_pipeline_gpu;

/* Milliseconds of each stage on the device (CUDA events). */
typedef struct tfmm_pipeline_gpu_times {
  double upload, tree, upward, lists, near, far, finish;
  double overlap; /* of near and far, which run at once */
} tfmm_pipeline_gpu_times;

/* The n bodies (checked by the caller) into the tree's buffer on gpu's
 * device; pl keeps gpu for the calls that follow. The bodies are host
 * arrays; or, when on_device, arrays on that device, ready once the
 * stream `after` (a cudaStream_t; NULL: the legacy default stream) is
 * idle; none are copied when they are that buffer already
 * (tfmm_pipeline_gpu_scale). Begins an evaluation: the stages below
 * follow in their order. */
tfmm_status tfmm_pipeline_gpu_upload(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                     size_t n, const double *pos,
                                     const double *mass, int on_device,
                                     void *after, tfmm_error *err);

/* The tree (params) of the uploaded bodies. With params->max_cells 0 the
 * tree's cell arrays get room for the cells a tree of n bodies usually
 * has (8 n / (L + 1), or 5/4 of the last tree of n bodies) instead of the
 * bound that always holds (1 + 21 min(n, 8 n / (L + 1)), 250 bytes a body
 * at leaf 64); a tree that needs more is built again with four times the
 * room, up to that bound. */
tfmm_status tfmm_pipeline_gpu_tree(tfmm_pipeline_gpu *pl,
                                   const tfmm_tree_gpu_params *params,
                                   tfmm_error *err);

/* The last tree refit to the uploaded bodies (tree_gpu.h,
 * tfmm_tree_gpu_refit) instead of built again: the same bodies, as many,
 * moved. The stages after it follow as after tfmm_pipeline_gpu_tree. */
tfmm_status tfmm_pipeline_gpu_refit(tfmm_pipeline_gpu *pl, int timed,
                                    tfmm_error *err);

/* Bodies that may share a point with another, counted on the device
 * from the sorted keys and positions (pipeline_gpu.cu, maybe_coincident):
 * 0 means none do; otherwise the CPU's search on a copy of the tree
 * decides and names the pair. */
tfmm_status tfmm_pipeline_gpu_maybe_coincident(tfmm_pipeline_gpu *pl,
                                               int64_t *count, tfmm_error *err);

/* The tree copied to the host (tree_gpu.h, tfmm_tree_gpu_copy): *out
 * zeroed first, released with tfmm_octree_free. */
tfmm_status tfmm_pipeline_gpu_copy_tree(tfmm_pipeline_gpu *pl,
                                        struct tfmm_octree *out,
                                        tfmm_error *err);

/* The targets of an evaluation at a subset of the bodies, after the tree:
 * active is n bytes in input order, nonzero for a target (a host array,
 * copied up, or one of the device when on_device, read until finish),
 * gathered through the tree's permutation, scanned (CUB) and counted per
 * cell into pl->base.tree.d_targets, which the traversal and the far
 * field read; finish then writes the targets' results only. NULL: every
 * body (d_targets NULL). */
tfmm_status tfmm_pipeline_gpu_targets(tfmm_pipeline_gpu *pl,
                                      const unsigned char *active,
                                      int on_device, tfmm_error *err);

/* The nonzero bytes among d_active[0..n) (the device's, after
 * tfmm_pipeline_gpu_bounds), counted on the device (CUB) into *count. */
tfmm_status tfmm_pipeline_gpu_count_targets(tfmm_pipeline_gpu *pl, size_t n,
                                            const unsigned char *d_active,
                                            size_t *count, tfmm_error *err);

/* The kernel the far field's expansions carry: Newton's (softened 0: the
 * solid harmonics of farfield_gpu.h) or Plummer's with softening eps > 0
 * (softened 1: the Cartesian Taylor expansions of soft_far_gpu.h). NULL
 * where one is asked for: Newton's. The upward pass and the far field of
 * one evaluation take the same. */
typedef struct tfmm_pipeline_gpu_kernel {
  int softened;
  double eps;
} tfmm_pipeline_gpu_kernel;

/* The multipoles of order p for `kernel`, enqueued on the upward stream
 * after the tree (the far field, and the next upload, wait for them). */
tfmm_status tfmm_pipeline_gpu_upward(tfmm_pipeline_gpu *pl, int p,
                                     const tfmm_pipeline_gpu_kernel *kernel,
                                     tfmm_error *err);

/* The interaction lists (pl->lists.lists once it returns). */
tfmm_status tfmm_pipeline_gpu_lists(tfmm_pipeline_gpu *pl,
                                    const tfmm_traverse_gpu_params *params,
                                    tfmm_error *err);

/* The near field enqueued: the pairs' softening and precision, whether to
 * sum the potential, and the GPU's multiprocessors (which size the work
 * items). */
tfmm_status tfmm_pipeline_gpu_near(tfmm_pipeline_gpu *pl,
                                   const tfmm_pair_params *pair, int potential,
                                   int sm_count, tfmm_error *err);

/* The far field of order p for `kernel` (the upward pass's) enqueued (fmm:
 * M2L and the downward pass, then M2P; else M2P only); far 0: none (near
 * field only). Enqueued after the lists and before the near field, on
 * the upward stream: the two run at once, in memory apart; precision is
 * the near field's to come (its M2L follows it). */
tfmm_status tfmm_pipeline_gpu_far(tfmm_pipeline_gpu *pl, int p,
                                  const tfmm_pipeline_gpu_kernel *kernel,
                                  int fmm, int far, tfmm_precision precision,
                                  tfmm_error *err);

/* Where the results go and in what units. */
typedef struct tfmm_pipeline_gpu_output {
  double *acc, *pot; /* 3n and n (pot NULL: none), input order: host
                        arrays, or arrays of the device when on_device */
  int on_device;
  double G;      /* the sums times G */
  int to_caller; /* then, as tfmm_units_unscale does, acc times
                    caller_G 2^acc_exp and pot times caller_G 2^pot_exp */
  double caller_G;
  int acc_exp, pot_exp;
} tfmm_pipeline_gpu_output;

/* acc = G (grad Phi_far + a_near) and pot = G (phi_near - Phi_far) into
 * out (see tfmm_pipeline_gpu_output), at the targets only when
 * tfmm_pipeline_gpu_targets gave some (the other entries of out are left
 * as they are on the device; a host out gets the whole arrays, the others'
 * entries undefined), enqueued: on the device, or in a buffer of the
 * device for a host out, until tfmm_pipeline_gpu_download. */
tfmm_status tfmm_pipeline_gpu_finish(tfmm_pipeline_gpu *pl,
                                     const tfmm_pipeline_gpu_output *out,
                                     tfmm_error *err);

/* The results of finish to a host out, then the wait for the evaluation:
 * fills *times (may be NULL), first_nonfinite and first_beyond. */
tfmm_status tfmm_pipeline_gpu_download(tfmm_pipeline_gpu *pl,
                                       tfmm_pipeline_gpu_times *times,
                                       tfmm_error *err);

/* Bodies that live on gpu's device (d_pos 3n, d_mass n), ready once the
 * stream `after` (a cudaStream_t; NULL: the legacy default stream) is
 * idle: checked as tfmm_bodies_check checks them (the same messages), and
 * their lowest and highest corners and largest mass reduced into
 * bounds[0..2], bounds[3..5] and bounds[6] (for tfmm_units_from_bounds). */
tfmm_status tfmm_pipeline_gpu_bounds(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                     size_t n, const double *d_pos,
                                     const double *d_mass, void *after,
                                     double bounds[7], tfmm_error *err);

/* Host bodies (pos 3n, mass n), as they are, into the buffer the tree
 * takes its bodies from (its BODIES slot): one DMA from pinned memory, or
 * staged through the context's pinned chunks (host_copy.h); *d_pos and
 * *d_mass point at them there, for tfmm_pipeline_gpu_bounds and
 * tfmm_pipeline_gpu_scale, which scales them in place. The bodies of
 * tfmm_solver_compute under the gpu schedule, which are then checked,
 * measured and scaled on the device rather than on the host. */
tfmm_status tfmm_pipeline_gpu_put(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                  size_t n, const double *pos,
                                  const double *mass, const double **d_pos,
                                  const double **d_mass, tfmm_error *err);

/* What the first evaluation of n host bodies (tfmm_pipeline_gpu_put,
 * then the stages) would allocate before it computes, taken now on gpu's
 * device: the state (its events and pinned words), the tree's BODIES slot
 * for n bodies, and the pinned chunks and OpenMP team that stage the
 * copies (host_copy.h). What depends on the tree (its cells, the lists,
 * the near and far fields' buffers) is still taken by the evaluation that
 * needs it: taking the traversal's fixed buffers here too moved 1-2 ms
 * into the set-up and took none off the first lists (bench/results/
 * host_transfer). pl keeps gpu, as tfmm_pipeline_gpu_put does. */
tfmm_status tfmm_pipeline_gpu_reserve(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu,
                                      size_t n, tfmm_error *err);

/* Those bodies scaled by 2^-length_exp and 2^-mass_exp (exactly, as
 * tfmm_units_scale) into the buffer the tree takes its bodies from
 * (its BODIES slot, tree_gpu_hybrid.h; then no copy); *pos and *mass point at
 * it: device arrays for tfmm_pipeline_gpu_tree, valid until the far field
 * writes its sums there. */
tfmm_status tfmm_pipeline_gpu_scale(tfmm_pipeline_gpu *pl, size_t n,
                                    const double *d_pos, const double *d_mass,
                                    int length_exp, int mass_exp,
                                    const double **pos, const double **mass,
                                    tfmm_error *err);

/* The measured error's sample (measure.h) at the tree just evaluated
 * (after tfmm_pipeline_gpu_download), drawn on the device: the estimate's
 * k sorted bodies (tfmm_measure_pick(n, k, seed)), then the watch's
 * (tfmm_measure_watch(leaves, each, ~seed, a2), a2 the keys of this
 * evaluation's results on the device), m = k + 3 each slots; the
 * exact accelerations there, summed over every body of the tree with
 * pair's softening (G = 1, the tree's units) in FP64
 * (tfmm_gpu_reference_at) or, with fast, in FP32 pairs
 * (tfmm_gpu_reference_fast_at; the FP64 sums where those overflow); to
 * the host in one copy, h_block of 7 m + 1 eight-byte words: int64
 * input[m] (the bodies' input indices), double exact[3 m], double got[3 m]
 * (with d_acc, the caller's device results in input order, 3n, at the
 * same bodies; else unset), int64 w (the watch's bodies: slots
 * [k + w, m) are to be ignored). Waits. */
tfmm_status tfmm_pipeline_gpu_measure(tfmm_pipeline_gpu *pl,
                                      const tfmm_pair_params *pair, int fast,
                                      size_t k, size_t each, uint64_t seed,
                                      const double *d_acc, void *h_block,
                                      tfmm_error *err);

/* The worst group of the sample tfmm_pipeline_gpu_measure just drew
 * (measure.h): the bodies of the leaf holding its slot worst, each up to
 * G = TFMM_MEASURE_GROUP_MAX, else G stratified along the leaf with that
 * body among them (seed); their exact accelerations as there, to h_block
 * of 7 G + 2 words: int64 input[G], double exact[3 G], double got[3 G],
 * int64 m (the slots that count: [0, m)), int64 the leaf's bodies. Waits. */
tfmm_status tfmm_pipeline_gpu_measure_group(tfmm_pipeline_gpu *pl,
                                            const tfmm_pair_params *pair,
                                            int fast, size_t worst,
                                            uint64_t seed, const double *d_acc,
                                            void *h_block, tfmm_error *err);

/* Both of the above where the results are on the device (d_acc, the
 * caller's device results in input order): the sample (h_block as
 * tfmm_pipeline_gpu_measure's), then on the device its slot of largest
 * error (measure.c's rule, errors of got against f exact: f takes the
 * sums to the results' units) into *worst, and that slot's group
 * (h_group as tfmm_pipeline_gpu_measure_group's, from group_seed), the
 * sums in one workspace, both blocks in one copy through pinned memory:
 * one wait, and no idle device while the host judges the sample. At
 * most TFMM_PIPELINE_GPU_BOTH_SLOTS slots (k + 3 each). A float 1/r^3
 * that overflowed (fast) is TFMM_ERR_NONFINITE, with nothing of use in
 * the blocks: measure again with the two calls above (the FP64 sums
 * take over there). Waits. */
enum { TFMM_PIPELINE_GPU_BOTH_SLOTS = 1024 };
tfmm_status tfmm_pipeline_gpu_measure_both(tfmm_pipeline_gpu *pl,
                                           const tfmm_pair_params *pair,
                                           int fast, size_t k, size_t each,
                                           uint64_t seed, uint64_t group_seed,
                                           double f, const double *d_acc,
                                           void *h_block, void *h_group,
                                           size_t *worst, tfmm_error *err);

/* The near field's work items and splits of the last evaluation, copied
 * to the host (malloc'd; free them) with their sizes in *sz: what the
 * tests compare with the CPU's rule (p2p_gpu.h). */
tfmm_status tfmm_pipeline_gpu_items(tfmm_pipeline_gpu *pl,
                                    tfmm_gpu_near_size *sz,
                                    tfmm_gpu_near_item **item,
                                    tfmm_gpu_near_split **split,
                                    tfmm_error *err);

/* Device bytes the pipeline holds: the bodies, the tree's workspace, the
 * expansions, the lists and every other buffer; with the traversal's
 * peak (traverse_gpu.h, tfmm_traverse_gpu_peak_bytes) in place of what it
 * holds now, the most it has held at once (an upper bound). */
size_t tfmm_pipeline_gpu_bytes(const tfmm_pipeline_gpu *pl);

/* Frees the state's events and forgets the context, whose arena keeps the
 * buffers until it is destroyed (before or after this call); pl is zeroed
 * and reusable. */
void tfmm_pipeline_gpu_release(tfmm_pipeline_gpu *pl);

#ifdef __cplusplus
}
#endif

#endif
