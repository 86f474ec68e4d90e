/* The gpu schedule's measured error (pipeline_gpu.h,
 * tfmm_pipeline_gpu_measure): the exact forces at a sample of the sorted
 * bodies of the tree just evaluated, where the bodies already are. The
 * sample is drawn on the device from the tree's leaves
 * (measure_targets_gpu.h: nothing about the leaves travels to the host);
 * the sums are tfmm_gpu_reference_at's (k n pairs in FP64: 0.61 ms for
 * 256 targets among 10^6 bodies on an H100) or, where the caller allows,
 * tfmm_gpu_reference_fast_at's (FP32 pairs on double-single separations:
 * 0.235 ms on an H200); the draw took 0.09 ms before the watch's third
 * part (bench/results/sample_cost), which adds a pass over the n results
 * (spans_and_keys: 28 bytes a body, the rows gathered), a warp a leaf for
 * each leaf's least key (8 n bytes) and rounds of a block sort of the
 * leaves' (double, int) pairs: the whole draw 0.13 ms at 10^6 bodies
 * (55,000 leaves) on an H200 (0.25 with CUB's segmented argmin, a block a
 * leaf, and device-wide radix sort); the gather below moves 48 bytes a
 * target, and one copy brings the results back: one wait in all. Then
 * the worst group (measure_group): the sums at its own bodies only (0.10
 * ms for 52 at 10^6), a second wait. With
 * the results on the device (measure_both), the sample's worst slot is
 * found there (worst_slot) and the group follows it on the stream: one
 * copy into pinned memory and one wait for both, the device never idle
 * while the host judges the sample. */
#include "pipeline_gpu.h"

#define CUDA_TRY_WHO "gpu schedule"
#include "cuda_try.cuh"

#include "measure_targets_gpu.h"
#include "pipeline/measure.h"
#include "pipeline/measure_pick.h"
#include "pipeline_gpu_state.cuh"
#include "reference_gpu.h"

#include <string.h>

namespace {

constexpr size_t ALIGN = 256;

size_t up(size_t bytes) { return (bytes + ALIGN - 1) / ALIGN * ALIGN; }

/* input[j] = order[sorted[j]]; with acc, got[3 j + d] = acc[3 input[j] + d]. */
__global__ void gather_sample(int64_t k, const int64_t *sorted,
                              const int32_t *order, const double *acc,
                              int64_t *input, double *got) {
  const int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (j >= k)
    return;
  const int64_t i = order[sorted[j]];
  input[j] = i;
  if (acc != nullptr)
    for (int d = 0; d < 3; d++)
      got[3 * j + d] = acc[3 * i + d];
}

/* Thread i: begin[i] and count[i] of leaf i's sorted bodies (i <
 * nleaves), and (a2 not NULL, i < n) the watch's key (measure_pick.h) of
 * sorted body i, a2[i] = |acc[order[i]]|^2 (input order: 4 + 24 bytes a
 * body, the rows gathered). One launch for both. */
__global__ void spans_and_keys(int64_t nleaves, const int32_t *leaves,
                               const int32_t *body_begin,
                               const int32_t *body_end, int64_t *begin,
                               int32_t *count, int64_t n, const int32_t *order,
                               const double *acc, double *a2) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < nleaves) {
    const int32_t c = leaves[i];
    begin[i] = body_begin[c];
    count[i] = body_end[c] - body_begin[c];
  }
  if (a2 != nullptr && i < n)
    a2[i] = tfmm_measure_a2(acc + 3 * (int64_t)order[i]);
}

/* MEASURE_OUT (bytes): the sample's block (7 m + 1 words,
 * pipeline_gpu.h) and what its sums found, then the group's block
 * (7 G + 2 words) and what its sums found, the worst slot, then the
 * group's G targets; [0, group) comes back in one copy. */
struct out_layout {
  size_t block, found, gblock, gfound, worst, group, bytes;
};

out_layout out_lay_out(size_t m) {
  const size_t G = TFMM_MEASURE_GROUP_MAX;
  out_layout o;
  size_t at = 0;
  o.block = at;
  at += (7 * m + 1) * sizeof(int64_t);
  o.found = at;
  at += TFMM_GPU_REFERENCE_FOUND;
  o.gblock = at;
  at += (7 * G + 2) * sizeof(int64_t);
  o.gfound = at;
  at += TFMM_GPU_REFERENCE_FOUND;
  o.worst = at;
  at += sizeof(int64_t);
  o.group = at;
  at += G * sizeof(int64_t);
  o.bytes = at;
  return o;
}

/* Sizes (work NULL: *bytes) or enqueues the exact sums at the m targets
 * d_sorted into d_exact, FP32 pairs with fast. */
tfmm_status enqueue_sums(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                         int fast, size_t m, const int64_t *d_sorted,
                         const int64_t *d_upto, double *d_exact, void *work,
                         size_t *bytes, tfmm_error *err) {
  const tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  if (fast)
    return tfmm_gpu_reference_fast_at(work, bytes, t->n, t->d_pos, t->d_mass, m,
                                      d_sorted, d_upto, pair, d_exact, st, err);
  return tfmm_gpu_reference_at(work, bytes, t->n, t->d_pos, t->d_mass, m,
                               d_sorted, d_upto, pair, d_exact, nullptr, st,
                               err);
}

/* The exact sums at the m targets d_sorted into d_exact, FP32 pairs with
 * fast, then the results to the host block and the check. */
tfmm_status sums(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair, int fast,
                 size_t m, const int64_t *d_sorted, const int64_t *d_upto,
                 double *d_exact, const void *d_block, void *h_block,
                 size_t block_bytes, tfmm_error *err) {
  State *s = pl->state;
  cudaStream_t st = stream_of(pl);
  size_t bytes = 0;
  CHECK(enqueue_sums(pl, pair, fast, m, d_sorted, d_upto, d_exact, nullptr,
                     &bytes, err));
  CHECK(reserve(s, State::MEASURE_WORK, bytes, err));
  void *work = s->buf[State::MEASURE_WORK].p;
  CHECK(enqueue_sums(pl, pair, fast, m, d_sorted, d_upto, d_exact, work, &bytes,
                     err));
  TRY(cudaMemcpyAsync(h_block, d_block, block_bytes, cudaMemcpyDeviceToHost,
                      st));
  return tfmm_gpu_reference_check(work, pl->base.tree.n, m, d_sorted, st, err);
}

/* The evaluation's results at the m targets d_sorted (sorted indices)
 * gathered beside their input indices, then the exact sums there
 * (sums; with d_upto, a count on the device, only at the first
 * *d_upto); a float 1/r^3 can overflow where the double one does not
 * (eps = 0, two bodies closer than about 1e-13): then the FP64 sums. */
tfmm_status gathered_sums(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                          int fast, size_t m, const int64_t *d_sorted,
                          const int64_t *d_upto, const double *d_acc,
                          int64_t *d_input, double *d_got, double *d_exact,
                          void *h_block, size_t block_bytes, tfmm_error *err) {
  const int threads = 128;
  gather_sample<<<(unsigned)((m + threads - 1) / threads), threads, 0,
                  stream_of(pl)>>>((int64_t)m, d_sorted, pl->base.tree.d_order,
                                   d_acc, d_input, d_got);
  TRY(cudaGetLastError());
  tfmm_status status = sums(pl, pair, fast, m, d_sorted, d_upto, d_exact,
                            d_input, h_block, block_bytes, err);
  if (status == TFMM_ERR_NONFINITE && fast)
    status = sums(pl, pair, 0, m, d_sorted, d_upto, d_exact, d_input, h_block,
                  block_bytes, err);
  return status;
}

/* The sample's m = k + 3 each sorted indices drawn into MEASURE_TARGETS
 * (its layout: measure_group reads it again), MEASURE_OUT reserved
 * (out_lay_out); *d_sorted and the block's arrays on the device. */
struct drawn {
  int64_t *sorted, *input, *watched;
  double *exact, *got;
  size_t m;
};

tfmm_status draw(tfmm_pipeline_gpu *pl, size_t k, size_t each, uint64_t seed,
                 drawn *dr, tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const size_t n = t->n;
  if (n == 0 || t->d_pos == nullptr || k > n)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: measure before a tree was built");
  const size_t m = k + TFMM_MEASURE_WATCH_PARTS * each;
  s->measure_slots = m; /* the layout measure_group reads again */
  const int64_t nleaves = t->nleaves;
  /* The results of the evaluation just made (finish: the caller's device
   * arrays or the RESULT buffer, input order) give the watch's keys. */
  const double *d_results = s->d_acc;
  /* MEASURE_TARGETS: the sorted indices, the leaves' spans, the bodies'
   * keys, the draw's scratch. */
  size_t scratch = 0;
  CHECK(tfmm_gpu_measure_targets(nullptr, &scratch, n, k, each, seed, nleaves,
                                 nullptr, nullptr, nullptr, nullptr, nullptr,
                                 st, err));
  const size_t at_begin = up(m * sizeof(int64_t));
  const size_t at_count = at_begin + up((size_t)nleaves * sizeof(int64_t));
  const size_t at_a2 = at_count + up((size_t)nleaves * sizeof(int32_t));
  const size_t at_draw =
      at_a2 + (d_results != nullptr ? up(n * sizeof(double)) : 0);
  CHECK(reserve(s, State::MEASURE_TARGETS, at_draw + scratch, err));
  char *base = (char *)s->buf[State::MEASURE_TARGETS].p;
  int64_t *d_sorted = (int64_t *)base;
  int64_t *d_begin = (int64_t *)(base + at_begin);
  int32_t *d_count = (int32_t *)(base + at_count);
  double *d_a2 = d_results != nullptr ? (double *)(base + at_a2) : nullptr;
  /* MEASURE_OUT, the host block's layout (pipeline_gpu.h) first. */
  CHECK(reserve(s, State::MEASURE_OUT, out_lay_out(m).bytes, err));
  int64_t *d_input = at<int64_t>(s, State::MEASURE_OUT);
  double *d_exact = (double *)(d_input + m), *d_got = d_exact + 3 * m;
  int64_t *d_watched = (int64_t *)(d_got + 3 * m);
  const int64_t most =
      d_a2 != nullptr && (int64_t)n > nleaves ? (int64_t)n : nleaves;
  if (most > 0) {
    const int threads = 256;
    spans_and_keys<<<(unsigned)((most + threads - 1) / threads), threads, 0,
                     st>>>(nleaves, t->d_leaves, t->d_body_begin, t->d_body_end,
                           d_begin, d_count, (int64_t)n, t->d_order, d_results,
                           d_a2);
    TRY(cudaGetLastError());
  }
  CHECK(tfmm_gpu_measure_targets(base + at_draw, &scratch, n, k, each, seed,
                                 nleaves, d_begin, d_count, d_a2, d_sorted,
                                 d_watched, st, err));
  *dr = drawn{d_sorted, d_input, d_watched, d_exact, d_got, m};
  return TFMM_OK;
}

tfmm_status measure(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                    int fast, size_t k, size_t each, uint64_t seed,
                    const double *d_acc, void *h_block, tfmm_error *err) {
  drawn dr = {};
  CHECK(draw(pl, k, each, seed, &dr, err));
  return gathered_sums(pl, pair, fast, dr.m, dr.sorted, nullptr, d_acc,
                       dr.input, dr.got, dr.exact, h_block,
                       (7 * dr.m + 1) * sizeof(int64_t), err);
}

/* The worst group's targets (measure.h, TFMM_MEASURE_GROUP_MAX = G of
 * them, one block of G threads): the leaf of sorted body sorted[worst]
 * (worst: *d_worst, or with d_worst NULL the host's; the leaves' spans
 * begin and count, begin increasing), its bodies each up to G, else G
 * stratified along it with the worst body in place of its stratum's; the
 * G - m slots left repeat the worst body, and the sums skip them (mb[0]
 * their d_upto). *mb: m, then the leaf's bodies. */
__global__ void group_targets(const int64_t *sorted, int64_t worst,
                              const int64_t *d_worst, int64_t nleaves,
                              const int64_t *begin, const int32_t *count,
                              uint64_t seed, int64_t *group, int64_t *mb) {
  __shared__ int64_t leaf;
  const int64_t body = sorted[d_worst != nullptr ? *d_worst : worst];
  if (threadIdx.x == 0) {
    int64_t lo = 0, hi = nleaves - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (begin[mid] <= body)
        lo = mid;
      else
        hi = mid - 1;
    }
    leaf = lo;
  }
  __syncthreads();
  const size_t c = (size_t)count[leaf];
  const size_t G = TFMM_MEASURE_GROUP_MAX, m = c < G ? c : G;
  const int64_t mine = body - begin[leaf];
  const size_t j = threadIdx.x;
  if (j == 0) {
    mb[0] = (int64_t)m;
    mb[1] = (int64_t)c;
  }
  int64_t pick = mine;
  if (j < m) {
    pick = tfmm_measure_stratum(c, m, seed, j);
    const int64_t lo = (int64_t)((double)j * (double)c / (double)m);
    const int64_t hi = (int64_t)((double)(j + 1) * (double)c / (double)m);
    if (lo <= mine && mine < hi)
      pick = mine;
  }
  group[j] = begin[leaf] + pick;
}

/* The sample's slot of largest error (measure.c's finish: the first
 * largest, as `if (!(err[j] <= err[worst])) worst = j` walks them, so
 * that a NaN is taken as the host takes it), its errors those of got
 * against f exact (tfmm_measure_relative_scaled, rounded as the host
 * rounds), k + *watched slots of at most BLOCK: a thread a slot, then
 * the host's walk over them by one thread (~250 compares). */
constexpr int WORST_BLOCK = TFMM_PIPELINE_GPU_BOTH_SLOTS;

__global__ void __launch_bounds__(WORST_BLOCK)
    worst_slot(int64_t k, const int64_t *watched, const double *exact,
               const double *got, double f, int64_t *worst) {
  __shared__ double e[WORST_BLOCK];
  const int64_t m = k + *watched;
  const int j = threadIdx.x;
  if (j < m)
    e[j] = tfmm_measure_relative_scaled(got + 3 * j, exact + 3 * j, f);
  __syncthreads();
  if (j != 0)
    return;
  int64_t w = 0;
  for (int64_t i = 1; i < m; i++)
    if (!(e[i] <= e[w]))
      w = i;
  *worst = w;
}

/* The sample's m = s->measure_slots and what of MEASURE_TARGETS and
 * MEASURE_OUT the group reads and writes (their layouts). */
struct group_arrays {
  const int64_t *sorted, *begin;
  const int32_t *count;
  int64_t *input, *mb, *group, *worst;
  double *exact, *got;
  char *out;
  out_layout o;
};

tfmm_status group_arrays_of(State *s, int64_t nleaves, group_arrays *g,
                            tfmm_error *err) {
  const size_t G = TFMM_MEASURE_GROUP_MAX;
  if (nleaves < 1 || s->buf[State::MEASURE_TARGETS].p == nullptr ||
      s->buf[State::MEASURE_OUT].p == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the group measured before its sample");
  char *base = (char *)s->buf[State::MEASURE_TARGETS].p;
  const size_t m = s->measure_slots;
  g->sorted = (const int64_t *)base;
  g->begin = (const int64_t *)(base + up(m * sizeof(int64_t)));
  g->count = (const int32_t *)(base + up(m * sizeof(int64_t)) +
                               up((size_t)nleaves * sizeof(int64_t)));
  g->o = out_lay_out(m);
  g->out = (char *)s->buf[State::MEASURE_OUT].p; /* reserved by draw */
  g->input = (int64_t *)(g->out + g->o.gblock);
  g->exact = (double *)(g->input + G);
  g->got = g->exact + 3 * G;
  g->mb = (int64_t *)(g->got + 3 * G);
  g->group = (int64_t *)(g->out + g->o.group);
  g->worst = (int64_t *)(g->out + g->o.worst);
  return TFMM_OK;
}

tfmm_status measure_group(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                          int fast, size_t worst, uint64_t seed,
                          const double *d_acc, void *h_block, tfmm_error *err) {
  const size_t G = TFMM_MEASURE_GROUP_MAX;
  group_arrays g = {};
  CHECK(group_arrays_of(pl->state, pl->base.tree.nleaves, &g, err));
  group_targets<<<1, (unsigned)G, 0, stream_of(pl)>>>(
      g.sorted, (int64_t)worst, nullptr, pl->base.tree.nleaves, g.begin,
      g.count, seed, g.group, g.mb);
  TRY(cudaGetLastError());
  /* Only the group's m distinct bodies are summed (mb[0]): at leaf 64
   * a quarter of the tile or less. */
  return gathered_sums(pl, pair, fast, G, g.group, g.mb, d_acc, g.input, g.got,
                       g.exact, h_block, (7 * G + 2) * sizeof(int64_t), err);
}

/* The sample, its worst slot and its group with the results on the
 * device (d_acc), enqueued one after the other; one copy into pinned
 * memory and one wait. TFMM_ERR_NONFINITE where a float 1/r^3 overflowed
 * (the caller then measures again the other way, whose FP64 sums take
 * over); *worst the device's worst slot. */
tfmm_status measure_both(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                         int fast, size_t k, size_t each, uint64_t seed,
                         uint64_t group_seed, double f, const double *d_acc,
                         void *h_block, void *h_group, size_t *worst,
                         tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const size_t G = TFMM_MEASURE_GROUP_MAX;
  drawn dr = {};
  CHECK(draw(pl, k, each, seed, &dr, err));
  group_arrays g = {};
  CHECK(group_arrays_of(s, t->nleaves, &g, err));
  /* One workspace for both sums, as large as either asks. */
  size_t bytes = 0, group_bytes = 0;
  CHECK(enqueue_sums(pl, pair, fast, dr.m, dr.sorted, nullptr, dr.exact,
                     nullptr, &bytes, err));
  CHECK(enqueue_sums(pl, pair, fast, G, g.group, g.mb, g.exact, nullptr,
                     &group_bytes, err));
  bytes = bytes > group_bytes ? bytes : group_bytes;
  CHECK(reserve(s, State::MEASURE_WORK, bytes, err));
  void *work = s->buf[State::MEASURE_WORK].p;
  const int threads = 128;
  gather_sample<<<(unsigned)((dr.m + threads - 1) / threads), threads, 0, st>>>(
      (int64_t)dr.m, dr.sorted, t->d_order, d_acc, dr.input, dr.got);
  TRY(cudaGetLastError());
  CHECK(enqueue_sums(pl, pair, fast, dr.m, dr.sorted, nullptr, dr.exact, work,
                     &bytes, err));
  TRY(cudaMemcpyAsync(g.out + g.o.found, tfmm_gpu_reference_found(work),
                      TFMM_GPU_REFERENCE_FOUND, cudaMemcpyDeviceToDevice, st));
  worst_slot<<<1, WORST_BLOCK, 0, st>>>((int64_t)k, dr.watched, dr.exact,
                                        dr.got, f, g.worst);
  TRY(cudaGetLastError());
  group_targets<<<1, (unsigned)G, 0, st>>>(dr.sorted, 0, g.worst, t->nleaves,
                                           g.begin, g.count, group_seed,
                                           g.group, g.mb);
  TRY(cudaGetLastError());
  gather_sample<<<(unsigned)((G + threads - 1) / threads), threads, 0, st>>>(
      (int64_t)G, g.group, t->d_order, d_acc, g.input, g.got);
  TRY(cudaGetLastError());
  CHECK(enqueue_sums(pl, pair, fast, G, g.group, g.mb, g.exact, work, &bytes,
                     err));
  TRY(cudaMemcpyAsync(g.out + g.o.gfound, tfmm_gpu_reference_found(work),
                      TFMM_GPU_REFERENCE_FOUND, cudaMemcpyDeviceToDevice, st));
  void *pinned = nullptr;
  CHECK(tfmm_arena_pinned(pl->base.gpu, TFMM_PINNED_SCHEDULE + 2, g.o.group, 0,
                          &pinned, err));
  TRY(cudaMemcpyAsync(pinned, g.out, g.o.group, cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  const char *h = (const char *)pinned;
  memcpy(h_block, h + g.o.block, (7 * dr.m + 1) * sizeof(int64_t));
  memcpy(h_group, h + g.o.gblock, (7 * G + 2) * sizeof(int64_t));
  int64_t w = 0;
  memcpy(&w, h + g.o.worst, sizeof w);
  *worst = (size_t)w;
  CHECK(
      tfmm_gpu_reference_judge(h + g.o.found, t->n, dr.m, dr.sorted, st, err));
  return tfmm_gpu_reference_judge(h + g.o.gfound, t->n, G, g.group, st, err);
}

} // namespace

extern "C" tfmm_status tfmm_pipeline_gpu_measure_group(
    tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair, int fast, size_t worst,
    uint64_t seed, const double *d_acc, void *h_block, tfmm_error *err) {
  return entered(pl, pl->base.gpu, err, [&] {
    return measure_group(pl, pair, fast, worst, seed, d_acc, h_block, err);
  });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_measure_both(tfmm_pipeline_gpu *pl,
                               const tfmm_pair_params *pair, int fast, size_t k,
                               size_t each, uint64_t seed, uint64_t group_seed,
                               double f, const double *d_acc, void *h_block,
                               void *h_group, size_t *worst, tfmm_error *err) {
  if (k == 0 || d_acc == nullptr || worst == nullptr ||
      k + TFMM_MEASURE_WATCH_PARTS * each > (size_t)WORST_BLOCK)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the sample and its group on the "
                          "device need results there and at most %d slots",
                          WORST_BLOCK);
  return entered(pl, pl->base.gpu, err, [&] {
    return measure_both(pl, pair, fast, k, each, seed, group_seed, f, d_acc,
                        h_block, h_group, worst, err);
  });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_measure(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                          int fast, size_t k, size_t each, uint64_t seed,
                          const double *d_acc, void *h_block, tfmm_error *err) {
  if (k == 0)
    return TFMM_OK;
  return entered(pl, pl->base.gpu, err, [&] {
    return measure(pl, pair, fast, k, each, seed, d_acc, h_block, err);
  });
}
