/* The gpu schedule's evaluation (pipeline_gpu.h): the stages' glue on the
 * device, over the entry points of the stages' kernels (bodies_gpu.h,
 * targets_gpu.h, near_inputs_gpu.h, combine_gpu.h, and the tree's, the
 * upward pass's, the traversal's and the far field's), each taking a
 * stream, device arrays and scratch. The state and its memory are in
 * pipeline_gpu_state.cuh; the entry points on the caller's device bodies
 * in pipeline_gpu_bodies.cu. */
#include "pipeline_gpu.h"

#define CUDA_TRY_WHO "gpu schedule"
#include "cuda_try.cuh"

#include "base/clock.h"
#include "bodies_gpu.h"
#include "combine_gpu.h"
#include "farfield_gpu.h"
#include "host_copy.h"
#include "near_inputs_gpu.h"
#include "nearfield/near_items.h"
#include "pipeline_gpu_state.cuh"
#include "soft_far_gpu.h"
#include "targets_gpu.h"
#include "upward_gpu.h"

#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace {

tfmm_status mark_on(tfmm_pipeline_gpu *pl, int k, cudaStream_t stream,
                    tfmm_error *err) {
  State *s = pl->state;
  TRY(cudaEventRecord(s->ev[k], stream));
  s->recorded[k] = 1;
  return TFMM_OK;
}

tfmm_status mark(tfmm_pipeline_gpu *pl, int k, tfmm_error *err) {
  return mark_on(pl, k, stream_of(pl), err);
}

/* The upward pass runs on a stream of its own beside the lists (which
 * need only the tree's cells, and wait on the host once a round), and the
 * far field after it on the same stream beside the near field (which
 * waits on the host once too): the solve stream waits for the far field
 * before it combines the two, and for the whole stream before the next
 * evaluation replaces the tree they read. */
cudaStream_t upward_stream(tfmm_pipeline_gpu *pl) {
  return (cudaStream_t)tfmm_gpu_stream(pl->base.gpu, TFMM_STREAM_UPWARD);
}

/* The solve stream waits for everything enqueued on the upward stream
 * (the upward pass, and the far field beside the near field, which runs
 * without the upward pass when only the near field is asked: it then
 * zeroes the far sums there). */
tfmm_status join_upward(tfmm_pipeline_gpu *pl, tfmm_error *err) {
  State *s = pl->state;
  if (!s->recorded[State::EV_UPWARD] && !s->recorded[State::EV_FAR])
    return TFMM_OK;
  CHECK(mark_on(pl, State::EV_SIDE, upward_stream(pl), err));
  TRY(cudaStreamWaitEvent(stream_of(pl), s->ev[State::EV_SIDE], 0));
  return TFMM_OK;
}

/* The traversal's spare memory, handed out first fit in 256-byte steps. */
struct Lent {
  tfmm_traverse_gpu_region r[TFMM_TRAVERSE_GPU_SPARES];
  size_t used[TFMM_TRAVERSE_GPU_SPARES];
  int count;
};

/* Room for `bytes` from the lent memory, else in buffer k of the state. */
template <class T>
tfmm_status take(State *s, Lent *a, int k, size_t bytes, T **out,
                 tfmm_error *err) {
  const size_t need = bytes > 0 ? (bytes + 255) / 256 * 256 : 256;
  for (int i = 0; i < a->count; i++)
    if (a->r[i].bytes - a->used[i] >= need) {
      *out = (T *)((char *)a->r[i].p + a->used[i]);
      a->used[i] += need;
      return TFMM_OK;
    }
  CHECK(reserve(s, k, bytes, err));
  *out = (T *)s->buf[k].p;
  return TFMM_OK;
}

/* The lent memory of a stage: the traversal's spare after the near
 * field's results (s->near_out_bytes, placed there the same way by every
 * stage), whose place goes to *near_out. */
tfmm_status stage_lent(tfmm_pipeline_gpu *pl, Lent *a, void **near_out,
                       tfmm_error *err) {
  *a = Lent{};
  a->count = tfmm_traverse_gpu_spare(&pl->lists, a->r);
  return take(pl->state, a, State::NEAR_OUT, pl->state->near_out_bytes,
              near_out, err);
}

/* The near field's lent memory: what follows the far field's when the
 * far field was enqueued first for these lists (the two then run at
 * once, in memory apart), else the stage's own. */
tfmm_status near_lent(tfmm_pipeline_gpu *pl, Lent *a, tfmm_error *err) {
  State *s = pl->state;
  if (!s->far_taken || s->far_run != pl->lists.runs)
    return stage_lent(pl, a, &s->near_out, err);
  *a = Lent{};
  a->count = s->far_lent_count;
  for (int i = 0; i < a->count; i++) {
    a->r[i] = s->far_lent_r[i];
    a->used[i] = s->far_lent_used[i];
  }
  return TFMM_OK; /* s->near_out placed by the far field's stage_lent */
}

tfmm_status built(tfmm_pipeline_gpu *pl, tfmm_error *err) {
  if (pl == nullptr || pl->base.gpu == nullptr || pl->state == nullptr ||
      pl->base.tree.ncells < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no tree built");
  return TFMM_OK;
}

/* Room for the cells of a tree of n bodies, leaves of L, as usual: 8
 * n / (L + 1) (a Plummer sphere has about 4, a uniform cube about 2.3),
 * or 5/4 of the last tree's when it had as many bodies; 0 (the bound that
 * always holds, tree_gpu.h) when that is no smaller. */
int64_t cell_bound(int64_t n, int leaf, int max_depth) {
  const int64_t split = n / ((int64_t)leaf + 1);
  const int64_t level = 8 * split < n ? 8 * split : n;
  return 1 + (int64_t)max_depth * level;
}

int64_t usual_cells(const tfmm_pipeline_gpu *pl, int64_t n, int leaf,
                    int max_depth) {
  const int64_t split = n / ((int64_t)leaf + 1);
  const int64_t bound = cell_bound(n, leaf, max_depth);
  int64_t usual = 1 + 8 * (split + 1) + 8 * TFMM_TREE_GPU_LEVELS;
  if (pl->last_n == n && pl->last_cells + pl->last_cells / 4 > usual)
    usual = pl->last_cells + pl->last_cells / 4;
  return usual < bound ? usual : 0;
}

/* The bodies into the tree's buffer, unless they are there already (the
 * scaled device bodies of tfmm_pipeline_gpu_scale). */
tfmm_status upload(tfmm_pipeline_gpu *pl, size_t n, const double *pos,
                   const double *mass, int on_device, void *after,
                   tfmm_error *err) {
  State *s = pl->state;
  CHECK(join_upward(pl, err)); /* a last evaluation that stopped early */
  for (int k = 0; k < State::EVS; k++)
    s->recorded[k] = 0;
  s->active = nullptr; /* every body, unless targets says otherwise */
  s->uploaded = 0;
  s->finished = 0;
  if (on_device) /* the caller's work on the bodies comes first */
    TRY(cudaStreamSynchronize((cudaStream_t)after));
  CHECK(mark(pl, State::EV_START, err));
  const double t0 = tfmm_wtime();
  CHECK(
      tfmm_tree_gpu_hybrid_upload(&pl->base, pl->base.gpu, n, pos, mass, err));
  s->upload_ms = 1e3 * (tfmm_wtime() - t0);
  s->uploaded = n;
  return mark(pl, State::EV_UPLOADED, err);
}

tfmm_status tree(tfmm_pipeline_gpu *pl, const tfmm_tree_gpu_params *params,
                 tfmm_error *err) {
  State *s = pl->state;
  const size_t n = s->uploaded;
  if (n == 0)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no bodies uploaded");
  tfmm_tree_gpu_params p = *params;
  if (p.max_cells == 0)
    p.max_cells = usual_cells(pl, (int64_t)n, p.leaf_size, p.max_depth);
  tfmm_status st = tfmm_tree_gpu_hybrid_build(&pl->base, &p, err);
  while (st == TFMM_ERR_NO_MEMORY && p.max_cells != params->max_cells) {
    /* More cells than that room (or no memory for them): four times the
     * room, then the bound, so that the workspace (kept) grows no further
     * than the tree needs; the bound is 250 bytes a body at leaf 64. */
    const int64_t bound = cell_bound((int64_t)n, p.leaf_size, p.max_depth);
    p.max_cells = p.max_cells < bound / 4 ? 4 * p.max_cells : params->max_cells;
    st = tfmm_tree_gpu_hybrid_build(&pl->base, &p, err);
  }
  CHECK(st);
  pl->last_n = (int64_t)n;
  pl->last_cells = pl->base.tree.ncells;
  return mark(pl, State::EV_TREE, err);
}

tfmm_status near(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                 int potential, int sm_count, tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  const tfmm_traverse_gpu_lists *l = &pl->lists.lists;
  cudaStream_t st = stream_of(pl);
  const int64_t n = (int64_t)t->n, nleaves = t->nleaves;
  const int64_t nentries = l->near_count;
  const int f64 = pair->precision == TFMM_PRECISION_DOUBLE;
  const size_t real = f64 ? sizeof(double) : sizeof(float);
  if (s->far_taken && s->far_run == pl->lists.runs &&
      (s->precision != pair->precision || s->near_out_bytes != 4 * n * real))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the far field was enqueued for "
                          "another precision than the near field's");
  s->near_out_bytes = 4 * n * real;
  s->near_run = pl->lists.runs;
  Lent a;
  CHECK(near_lent(pl, &a, err));
  void *body = nullptr;
  double *centre = nullptr, *frame = nullptr;
  int32_t *leaf_begin = nullptr, *position = nullptr, *list_leaf = nullptr,
          *entry_bodies = nullptr;
  int64_t *counts = nullptr;
  CHECK(take(s, &a, State::BODY, 4 * n * real, &body, err));
  CHECK(take(s, &a, State::CENTRE, 3 * nleaves * sizeof(double), &centre, err));
  CHECK(take(s, &a, State::FRAME, 2 * nleaves * sizeof(double), &frame, err));
  CHECK(take(s, &a, State::LEAF_BEGIN, (nleaves + 1) * sizeof(int32_t),
             &leaf_begin, err));
  CHECK(take(s, &a, State::POSITION, t->ncells * sizeof(int32_t), &position,
             err));
  CHECK(take(s, &a, State::LIST_LEAF, nentries * sizeof(int32_t), &list_leaf,
             err));
  CHECK(take(s, &a, State::ENTRY_BODIES, nentries * sizeof(int32_t),
             &entry_bodies, err));
  CHECK(take(s, &a, State::ITEMS, 6 * (nleaves + 1) * sizeof(int64_t), &counts,
             err));
  const tfmm_near_inputs_tree tree = {n,
                                      t->ncells,
                                      nleaves,
                                      t->d_leaves,
                                      t->d_body_begin,
                                      t->d_body_end,
                                      (const double *)t->d_pos,
                                      (const double *)t->d_mass,
                                      nentries,
                                      l->near.index};
  const tfmm_near_inputs_packed packed = {
      body, centre, frame, leaf_begin, position, list_leaf, entry_bodies};
  CHECK(tfmm_near_inputs_gpu_pack(&tree, pair->precision, pair->eps, &packed,
                                  st, err));
  const tfmm_near_view view = {nleaves, leaf_begin, l->near.offset, list_leaf,
                               entry_bodies};
  const int64_t budget = tfmm_near_budget(l->near_interactions, sm_count);
  int64_t *starts = counts + 3 * (nleaves + 1);
  const int64_t m = nleaves + 1;
  CHECK(reserve(s, State::CHECKS,
                State::CHECK_VALUES * sizeof(unsigned long long), err));
  unsigned long long *occupancy = at<unsigned long long>(s, State::CHECKS) + 3;
  size_t bytes = 0;
  CHECK(tfmm_near_inputs_gpu_count(nullptr, &bytes, &view, budget, counts,
                                   starts, occupancy, st, err));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  CHECK(tfmm_near_inputs_gpu_count(s->buf[State::SCAN_TEMP].p, &bytes, &view,
                                   budget, counts, starts, occupancy, st, err));
  for (int k = 0; k < 3; k++)
    TRY(cudaMemcpyAsync(s->host_totals + k, starts + k * m + nleaves,
                        sizeof(int64_t), cudaMemcpyDeviceToHost, st));
  TRY(cudaMemcpyAsync(s->host + 3, occupancy, 2 * sizeof *occupancy,
                      cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  pl->leaf_min = (int64_t)s->host[3];
  pl->leaf_max = (int64_t)s->host[4];
  tfmm_gpu_near_size *sz = &s->near_size;
  *sz = tfmm_gpu_near_size{
      (size_t)n,         nleaves,           nentries,       s->host_totals[0],
      s->host_totals[1], s->host_totals[2], pair->precision};
  if (sz->nitems > INT32_MAX || sz->nslots > INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                          "near field: %lld list entries and %lld work items; "
                          "the GPU kernel takes at most 2^31 - 1 (use a "
                          "larger leaf size)",
                          (long long)nentries, (long long)sz->nitems);
  CHECK(reserve(s, State::ITEM, sz->nitems * sizeof(tfmm_gpu_near_item), err));
  CHECK(
      reserve(s, State::SPLIT, sz->nsplits * sizeof(tfmm_gpu_near_split), err));
  CHECK(tfmm_near_inputs_gpu_write(
      &view, budget, starts, at<tfmm_gpu_near_item>(s, State::ITEM),
      at<tfmm_gpu_near_split>(s, State::SPLIT), st, err));
  const tfmm_gpu_near_device arrays = {body,
                                       centre,
                                       leaf_begin,
                                       list_leaf,
                                       at<tfmm_gpu_near_item>(s, State::ITEM),
                                       at<tfmm_gpu_near_split>(s, State::SPLIT),
                                       s->near_out};
  bytes = 0;
  CHECK(tfmm_gpu_near_device_run(nullptr, &bytes, sz, &arrays, pair, potential,
                                 st, err));
  void *work = nullptr;
  CHECK(take(s, &a, State::NEAR_WORK, bytes, &work, err));
  CHECK(tfmm_gpu_near_device_run(work, &bytes, sz, &arrays, pair, potential, st,
                                 err));
  CHECK(tfmm_near_inputs_gpu_exact(&tree, &view, centre, frame, pair,
                                   s->near_out, st, err));
  s->precision = pair->precision;
  s->potential = potential;
  return mark(pl, State::EV_NEAR, err);
}

/* The far field's phi (n) and grad (3n) of the sorted bodies: where the
 * tree's bodies were uploaded (dead once it is built; the build made room
 * for 4n doubles there). */
tfmm_status far_bodies(tfmm_pipeline_gpu *pl, double **phi, double **grad,
                       tfmm_error *err) {
  const size_t n = pl->base.tree.n;
  void *bodies = tfmm_arena_at(pl->base.gpu, TFMM_TREE_GPU_HYBRID_BODIES);
  if (bodies == nullptr ||
      tfmm_arena_slot_bytes(pl->base.gpu, TFMM_TREE_GPU_HYBRID_BODIES) <
          4 * n * sizeof(double))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no room for the far field of %zu "
                          "bodies where they were uploaded",
                          n);
  *phi = (double *)bodies;
  *grad = *phi + n;
  return TFMM_OK;
}

/* The far field with Plummer's kernel in the expansions (soft_far_gpu.h):
 * its multipoles from the upward pass (SOFT_M), L in the lent memory a. */
tfmm_status far_softened(tfmm_pipeline_gpu *pl, Lent *a, int p, double eps,
                         int fmm, double *phi, double *grad, cudaStream_t st,
                         tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  const tfmm_traverse_gpu_lists *l = &pl->lists.lists;
  if (s->soft_order != p)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the softened far field of order %d "
                          "without its upward pass",
                          p);
  const double *M = at<double>(s, State::SOFT_M);
  TRY(cudaMemsetAsync(phi, 0, 4 * t->n * sizeof(double), st));
  if (fmm) {
    double *L = nullptr;
    CHECK(take(s, a, State::FAR_L,
               t->ncells * tfmm_soft_far_gpu_size(p) * sizeof(double), &L,
               err));
    CHECK(tfmm_soft_far_gpu_m2l(t, &l->m2l, p, eps, M, L, st, err));
    CHECK(tfmm_soft_far_gpu_downward(t, p, L, phi, grad, st, err));
  }
  return tfmm_soft_far_gpu_m2p(t, &l->m2p, p, eps, M, phi, grad, st, err);
}

/* The far field's kernels on the upward stream after the multipoles and
 * the lists, in lent memory of its own (the near field's results placed
 * first, as every stage places them; the near field then takes what
 * follows). */
tfmm_status far_kernels(tfmm_pipeline_gpu *pl, Lent *a, int p,
                        const tfmm_pipeline_gpu_kernel *kernel, int fmm,
                        int far_on, cudaStream_t st, tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  const tfmm_traverse_gpu_lists *l = &pl->lists.lists;
  const size_t n = t->n;
  double *phi = nullptr, *grad = nullptr;
  CHECK(far_bodies(pl, &phi, &grad, err));
  if (far_on && kernel != nullptr && kernel->softened)
    return far_softened(pl, a, p, kernel->eps, fmm, phi, grad, st, err);
  const double *M =
      (const double *)tfmm_arena_at(pl->base.gpu, TFMM_TREE_GPU_HYBRID_M);
  if (!far_on || !fmm) /* M2P adds; no far field is zero */
    TRY(cudaMemsetAsync(phi, 0, 4 * n * sizeof(double), st));
  if (far_on && fmm) {
    const size_t size = (size_t)(p + 1) * (size_t)(p + 2);
    double *L = nullptr;
    CHECK(take(s, a, State::FAR_L, t->ncells * size * sizeof(double), &L, err));
    /* At a subset, the lanes of the cells that hold a target: they alone
     * have M2L lists (0: the whole tree's). */
    const int lanes = s->active != nullptr
                          ? tfmm_farfield_gpu_m2l_lanes_for(
                                s->target_cells > 0 ? s->target_cells : 1)
                          : 0;
    /* M2L in float beside a single-precision near field (farfield_gpu.h
     * states its scaling and error), else in double. */
    if (s->precision == TFMM_PRECISION_SINGLE &&
        p <= TFMM_FARFIELD_GPU_FLOAT_ORDER_MAX) {
      float *Ms = nullptr;
      CHECK(take(s, a, State::FAR_MS,
                 tfmm_farfield_gpu_m2l_float_bytes(t->ncells, p), &Ms, err));
      CHECK(
          tfmm_farfield_gpu_m2l_float(t, &l->m2l, p, lanes, M, Ms, L, st, err));
    } else {
      CHECK(tfmm_farfield_gpu_m2l_lanes(t, &l->m2l, p, lanes, M, L, st, err));
    }
    CHECK(tfmm_farfield_gpu_l2l_fast(t, p, L, st, err));
    CHECK(tfmm_farfield_gpu_l2p_fast(t, p, L, phi, grad, st, err));
  }
  if (far_on)
    CHECK(tfmm_farfield_gpu_m2p_fast(t, &l->m2p, p, M, phi, grad, st, err));
  return TFMM_OK;
}

tfmm_status far(tfmm_pipeline_gpu *pl, int p,
                const tfmm_pipeline_gpu_kernel *kernel, int fmm, int far_on,
                tfmm_precision precision, tfmm_error *err) {
  State *s = pl->state;
  const size_t n = pl->base.tree.n;
  if (!s->recorded[State::EV_LISTS]) /* the upward pass: this stream's */
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the far field before the lists");
  cudaStream_t st = upward_stream(pl);
  TRY(cudaStreamWaitEvent(st, s->ev[State::EV_LISTS], 0));
  /* The near field's precision, which the M2L follows and which sizes the
   * near field's results placed first in the lent memory. */
  s->precision = precision;
  s->near_out_bytes =
      4 * n *
      (precision == TFMM_PRECISION_DOUBLE ? sizeof(double) : sizeof(float));
  s->far_taken = 0;
  Lent a;
  CHECK(stage_lent(pl, &a, &s->near_out, err));
  CHECK(far_kernels(pl, &a, p, kernel, fmm, far_on, st, err));
  s->far_lent_count = a.count;
  for (int i = 0; i < a.count; i++) {
    s->far_lent_r[i] = a.r[i];
    s->far_lent_used[i] = a.used[i];
  }
  s->far_run = pl->lists.runs;
  s->far_taken = 1;
  return mark_on(pl, State::EV_FAR, st, err);
}

double elapsed(State *s, int a, int b) {
  float ms = 0;
  if (!s->recorded[a] || !s->recorded[b] ||
      cudaEventElapsedTime(&ms, s->ev[a], s->ev[b]) != cudaSuccess)
    return 0;
  return ms;
}

tfmm_status finish(tfmm_pipeline_gpu *pl, const tfmm_pipeline_gpu_output *out,
                   tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const int64_t n = (int64_t)t->n;
  if (!s->recorded[State::EV_NEAR] || !s->recorded[State::EV_FAR])
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the near or far field was not run");
  if (s->near_run != pl->lists.runs)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the lists were made again after the "
                          "near field");
  /* The far field ran on the upward stream beside the near field. */
  TRY(cudaStreamWaitEvent(st, s->ev[State::EV_FAR], 0));
  Lent a;
  void *near_out = nullptr;
  CHECK(stage_lent(pl, &a, &near_out, err));
  double *d_acc = out->acc, *d_pot = out->pot;
  if (!out->on_device) {
    CHECK(take(s, &a, State::RESULT, 4 * n * sizeof(double), &d_acc, err));
    d_pot = out->pot != nullptr ? d_acc + 3 * n : nullptr;
  }
  if (!s->potential)
    d_pot = nullptr;
  double *phi = nullptr, *grad = nullptr;
  CHECK(far_bodies(pl, &phi, &grad, err));
  CHECK(reserve(s, State::CHECKS,
                State::CHECK_VALUES * sizeof(unsigned long long), err));
  unsigned long long *bad = at<unsigned long long>(s, State::CHECKS);
  const tfmm_combine_gpu_units units = {out->G, out->to_caller, out->caller_G,
                                        out->acc_exp, out->pot_exp};
  CHECK(tfmm_combine_gpu((size_t)n, t->d_order, s->active, phi, grad, near_out,
                         s->precision, &units, d_acc, d_pot, bad, st, err));
  TRY(cudaMemcpyAsync(s->host, bad, 2 * sizeof *bad, cudaMemcpyDeviceToHost,
                      st));
  CHECK(mark(pl, State::EV_END, err));
  s->out = *out;
  s->d_acc = d_acc;
  s->d_pot = d_pot;
  s->finished = 1;
  return TFMM_OK;
}

/* The results to the host (unless they are the caller's device arrays),
 * the wait for the evaluation, its checks and times. */
tfmm_status download(tfmm_pipeline_gpu *pl, tfmm_pipeline_gpu_times *times,
                     tfmm_error *err) {
  State *s = pl->state;
  if (!s->finished)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: download before finish");
  s->finished = 0;
  cudaStream_t st = stream_of(pl);
  const tfmm_pipeline_gpu_output *out = &s->out;
  const size_t n = pl->base.tree.n;
  if (!out->on_device) { /* pinned: one DMA; else staged (host_copy.h) */
    /* Their pages mapped while the device still computes them (a fresh
     * malloc's 32 MB at 1M bodies: 8,192 first-touch faults). */
    tfmm_host_touch(out->acc, 3 * n * sizeof(double));
    if (out->pot != nullptr && s->d_pot != nullptr)
      tfmm_host_touch(out->pot, n * sizeof(double));
    CHECK(tfmm_gpu_copy_host(pl->base.gpu, out->acc, s->d_acc,
                             3 * n * sizeof(double), 0, st, err));
    if (out->pot != nullptr && s->d_pot != nullptr)
      CHECK(tfmm_gpu_copy_host(pl->base.gpu, out->pot, s->d_pot,
                               n * sizeof(double), 0, st, err));
  }
  TRY(cudaStreamSynchronize(st));
  pl->first_nonfinite = s->host[0] == ~0ull ? -1 : (int64_t)s->host[0];
  pl->first_beyond = s->host[1] == ~0ull ? -1 : (int64_t)s->host[1];
  if (times != nullptr) {
    *times = tfmm_pipeline_gpu_times{};
    times->upload = s->upload_ms;
    times->tree = elapsed(s, State::EV_UPLOADED, State::EV_TREE);
    times->upward = elapsed(s, State::EV_TREE, State::EV_UPWARD);
    times->lists = elapsed(s, State::EV_TREE, State::EV_LISTS);
    /* The near and far fields both begin after the lists, on two
     * streams: each its span from there; the finish from the later. */
    times->near = elapsed(s, State::EV_LISTS, State::EV_NEAR);
    times->far = elapsed(s, State::EV_LISTS, State::EV_FAR);
    const double both = times->near > times->far ? times->near : times->far;
    times->finish = elapsed(s, State::EV_LISTS, State::EV_END) - both;
    if (times->finish < 0)
      times->finish = 0;
    times->overlap = times->near + times->far - both;
  }
  return TFMM_OK;
}

/* The targets of the tree just built (tfmm_pipeline_gpu_targets). */
tfmm_status targets(tfmm_pipeline_gpu *pl, const unsigned char *active,
                    int on_device, tfmm_error *err) {
  State *s = pl->state;
  tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const int64_t n = (int64_t)t->n;
  s->active = nullptr;
  t->d_targets = nullptr;
  if (active == nullptr)
    return TFMM_OK;
  if (!on_device) {
    CHECK(reserve(s, State::ACTIVE, (size_t)n, err));
    TRY(cudaMemcpyAsync(s->buf[State::ACTIVE].p, active, (size_t)n,
                        cudaMemcpyHostToDevice, st));
    active = at<unsigned char>(s, State::ACTIVE);
  }
  CHECK(reserve(s, State::BELOW, (n + 1) * sizeof(int32_t), err));
  CHECK(reserve(s, State::TARGETS, t->ncells * sizeof(int32_t), err));
  int32_t *below = at<int32_t>(s, State::BELOW);
  int32_t *count = at<int32_t>(s, State::TARGETS);
  size_t bytes = 0;
  CHECK(tfmm_targets_gpu_below(nullptr, &bytes, (size_t)n, active, t->d_order,
                               below, st, err));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  CHECK(tfmm_targets_gpu_below(s->buf[State::SCAN_TEMP].p, &bytes, (size_t)n,
                               active, t->d_order, below, st, err));
  CHECK(tfmm_targets_gpu_per_cell(t->ncells, t->d_body_begin, t->d_body_end,
                                  below, count, st, err));
  /* The cells holding one, for the M2L's lanes a target (far). */
  CHECK(reserve(s, State::TARGET_SUM, sizeof(int64_t), err));
  int64_t *sum = at<int64_t>(s, State::TARGET_SUM);
  bytes = 0;
  CHECK(
      tfmm_targets_gpu_cells(nullptr, &bytes, t->ncells, count, sum, st, err));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  CHECK(tfmm_targets_gpu_cells(s->buf[State::SCAN_TEMP].p, &bytes, t->ncells,
                               count, sum, st, err));
  TRY(cudaMemcpyAsync(&s->target_cells, sum, sizeof s->target_cells,
                      cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  s->active = active;
  t->d_targets = count;
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status
tfmm_pipeline_gpu_upload(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu, size_t n,
                         const double *pos, const double *mass, int on_device,
                         void *after, tfmm_error *err) {
  if (pl == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the state is NULL");
  return entered(pl, gpu, err, [&] {
    return upload(pl, n, pos, mass, on_device, after, err);
  });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_tree(tfmm_pipeline_gpu *pl,
                       const tfmm_tree_gpu_params *params, tfmm_error *err) {
  if (pl == nullptr || pl->state == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no bodies uploaded");
  return entered(pl, pl->base.gpu, err, [&] { return tree(pl, params, err); });
}

extern "C" tfmm_status tfmm_pipeline_gpu_refit(tfmm_pipeline_gpu *pl, int timed,
                                               tfmm_error *err) {
  if (pl == nullptr || pl->state == nullptr || pl->state->uploaded == 0)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no bodies uploaded");
  return entered(pl, pl->base.gpu, err, [&]() -> tfmm_status {
    CHECK(tfmm_tree_gpu_hybrid_refit(&pl->base, timed, err));
    return mark(pl, State::EV_TREE, err);
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_maybe_coincident(tfmm_pipeline_gpu *pl,
                                                          int64_t *count,
                                                          tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.gpu, err, [&]() -> tfmm_status {
    State *s = pl->state;
    cudaStream_t st = stream_of(pl);
    CHECK(reserve(s, State::CHECKS,
                  State::CHECK_VALUES * sizeof(unsigned long long), err));
    unsigned long long *c = at<unsigned long long>(s, State::CHECKS) + 2;
    CHECK(tfmm_bodies_gpu_maybe_coincident(pl->base.tree.n,
                                           pl->base.tree.d_keys,
                                           pl->base.tree.d_pos, c, st, err));
    TRY(cudaMemcpyAsync(s->host + 2, c, sizeof *c, cudaMemcpyDeviceToHost, st));
    TRY(cudaStreamSynchronize(st));
    *count = (int64_t)s->host[2];
    return TFMM_OK;
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_copy_tree(tfmm_pipeline_gpu *pl,
                                                   struct tfmm_octree *out,
                                                   tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.gpu, err, [&] {
    return tfmm_tree_gpu_copy(&pl->base.tree, out, stream_of(pl), err);
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_targets(tfmm_pipeline_gpu *pl,
                                                 const unsigned char *active,
                                                 int on_device,
                                                 tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.gpu, err,
                 [&] { return targets(pl, active, on_device, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_upward(tfmm_pipeline_gpu *pl, int p,
                         const tfmm_pipeline_gpu_kernel *kernel,
                         tfmm_error *err) {
  CHECK(built(pl, err));
  /* M stays on the device: to rounding will do (fast). On its own
   * stream, after the tree (upward_stream). */
  return entered(pl, pl->base.gpu, err, [&] {
    State *s = pl->state;
    cudaStream_t up = upward_stream(pl);
    if (!s->recorded[State::EV_TREE])
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                            "gpu schedule: the upward pass before the tree");
    TRY(cudaStreamWaitEvent(up, s->ev[State::EV_TREE], 0));
    s->soft_order = -1;
    if (kernel != nullptr && kernel->softened) {
      const tfmm_tree_gpu *t = &pl->base.tree;
      CHECK(reserve(s, State::SOFT_M,
                    t->ncells * tfmm_soft_far_gpu_size(p) * sizeof(double),
                    err));
      CHECK(tfmm_soft_far_gpu_upward(t, p, at<double>(s, State::SOFT_M), up,
                                     err));
      s->soft_order = p;
    } else {
      CHECK(tfmm_tree_gpu_hybrid_upward_on(&pl->base, p, 1, up, err));
    }
    return mark_on(pl, State::EV_UPWARD, up, err);
  });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_lists(tfmm_pipeline_gpu *pl,
                        const tfmm_traverse_gpu_params *params,
                        tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.gpu, err, [&] {
    tfmm_status st = tfmm_traverse_gpu_run(
        &pl->lists, pl->base.gpu, &pl->base.tree, params, stream_of(pl), err);
    return st == TFMM_OK ? mark(pl, State::EV_LISTS, err) : st;
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_near(tfmm_pipeline_gpu *pl,
                                              const tfmm_pair_params *pair,
                                              int potential, int sm_count,
                                              tfmm_error *err) {
  CHECK(built(pl, err));
  if (pair == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no pair parameters");
  return entered(pl, pl->base.gpu, err,
                 [&] { return near(pl, pair, potential, sm_count, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_far(tfmm_pipeline_gpu *pl, int p,
                      const tfmm_pipeline_gpu_kernel *kernel, int fmm,
                      int far_on, tfmm_precision precision, tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.gpu, err, [&] {
    return far(pl, p, kernel, fmm, far_on, precision, err);
  });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_finish(tfmm_pipeline_gpu *pl,
                         const tfmm_pipeline_gpu_output *out, tfmm_error *err) {
  CHECK(built(pl, err));
  if (out == nullptr || out->acc == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no output arrays");
  return entered(pl, pl->base.gpu, err, [&] { return finish(pl, out, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_download(tfmm_pipeline_gpu *pl,
                           tfmm_pipeline_gpu_times *times, tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.gpu, err,
                 [&] { return download(pl, times, err); });
}

extern "C" tfmm_status tfmm_pipeline_gpu_items(tfmm_pipeline_gpu *pl,
                                               tfmm_gpu_near_size *sz,
                                               tfmm_gpu_near_item **item,
                                               tfmm_gpu_near_split **split,
                                               tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.gpu, err, [&]() -> tfmm_status {
    State *s = pl->state;
    *sz = s->near_size;
    const size_t ib = sz->nitems * sizeof **item,
                 sb = sz->nsplits * sizeof **split;
    *item = (tfmm_gpu_near_item *)malloc(ib > 0 ? ib : 1);
    *split = (tfmm_gpu_near_split *)malloc(sb > 0 ? sb : 1);
    if (*item == nullptr || *split == nullptr)
      return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for the items");
    TRY(cudaStreamSynchronize(stream_of(pl)));
    if (ib > 0)
      TRY(cudaMemcpy(*item, s->buf[State::ITEM].p, ib, cudaMemcpyDeviceToHost));
    if (sb > 0)
      TRY(cudaMemcpy(*split, s->buf[State::SPLIT].p, sb,
                     cudaMemcpyDeviceToHost));
    return TFMM_OK;
  });
}

extern "C" size_t tfmm_pipeline_gpu_bytes(const tfmm_pipeline_gpu *pl) {
  if (pl == nullptr)
    return 0;
  /* The other buffers only grow (a larger one replaces a smaller after
   * it is freed): what they hold is the most they held. */
  const tfmm_gpu *g = pl->base.gpu;
  size_t sum = tfmm_traverse_gpu_peak_bytes(&pl->lists);
  if (g != nullptr)
    sum += tfmm_arena_bytes(g, TFMM_SLOTS_TREE, TFMM_TREE_GPU_HYBRID_SLOTS) +
           tfmm_arena_bytes(g, TFMM_SLOTS_SCHEDULE, State::BUFFERS);
  return sum;
}

/* The context keeps the buffers (it frees them when destroyed, maybe
 * before this): the state owns its events alone. */
extern "C" void tfmm_pipeline_gpu_release(tfmm_pipeline_gpu *pl) {
  if (pl == nullptr)
    return;
  State *s = pl->state;
  if (s != nullptr) {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess)
      previous = -1;
    cudaSetDevice(s->device);
    for (int k = 0; k < State::EVS; k++)
      if (s->ev[k] != nullptr)
        cudaEventDestroy(s->ev[k]);
    delete s;
    if (previous >= 0)
      cudaSetDevice(previous);
  }
  tfmm_traverse_gpu_release(&pl->lists);
  tfmm_tree_gpu_hybrid_release(&pl->base);
  memset(pl, 0, sizeof *pl);
}
