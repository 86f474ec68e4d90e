/* The interaction lists on the GPU (traverse_gpu.h): the criterion's
 * per-cell inputs, the breadth-first sweep over a frontier of pairs, and
 * the lists in CSR form. Scans, sorts and sums are CUB's (the sweep's
 * scans its block scan, traverse_gpu_sweep.cuh).
 * Built with --fmad=false: the criterion's arithmetic (mac_rule.h) and the
 * acceleration estimate then round as on the CPU.
 *
 * Cost: a wide round (the host's) reads its frontier (8 bytes a pair)
 * and the two cells of each pair (~100 bytes, mostly cached) as CUB's
 * scan classifies them, writes the scan (16 bytes a pair) and reads it
 * back to place the pairs, then waits for the host; the narrow rounds at
 * the top of the tree run in one cooperative launch. The sort moves each
 * list entry a few times. The estimate walk is O(leaves log N), one thread a
 * leaf; the previous |a| instead reads 24 bytes a body, gathered through the
 * tree's order, in one CUB segmented reduction over the leaves (memory-bound),
 * the parents 8 doubles a cell: the lists of 1M bodies on an H100 took
 * 4.3 ms so against 5.3 ms with the estimate (bench/results/criterion_sim). */
#include "traverse_gpu.h"

#define CUDA_TRY_WHO "traverse_gpu"
#include "cuda_try.cuh"

#include "gpu_context.h"
#include "traverse_gpu_sweep.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <new>
#include <stdint.h>

namespace {

constexpr int THREADS = 256;

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

/* ---- The sweep (traverse_gpu_sweep.cuh) ------------------------------- */

__global__ void start_leaves(int64_t nleaves, const int32_t *leaves,
                             int2 *pairs) {
  int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k < nleaves)
    pairs[k] = make_int2(leaves[k], 0);
}

/* ---- The lists in CSR form ---------------------------------------------- */

__global__ void leaf_positions(int64_t nleaves, const int32_t *leaves,
                               int32_t *position) {
  int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k < nleaves)
    position[leaves[k]] = (int32_t)k;
}

/* Keys (the target, as a leaf position when position is given) and
 * values (the source) of every pair. */
__global__ void split_pairs(int64_t n, const int2 *pairs,
                            const int32_t *position, int32_t *key,
                            int32_t *value) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  key[i] = position != nullptr ? position[pairs[i].x] : pairs[i].x;
  value[i] = pairs[i].y;
}

/* offset[t] = the first entry of target t in the sorted keys. */
__global__ void csr_offsets(int64_t ntargets, int64_t n, const int32_t *key,
                            int64_t *offset) {
  int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (t > ntargets)
    return;
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if (key[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  offset[t] = lo;
}

/* Body-body pairs of near pair i (self excluded), as lists.c counts; or,
 * for M2P pairs (m2p), the target's bodies (evaluations). Read by the sum
 * as it goes (an iterator), not stored: 8 bytes a pair saved. */
struct PairWork {
  const int2 *pairs;
  Cells c;
  int m2p;
  __host__ __device__ double operator()(int64_t i) const {
    const int32_t a = pairs[i].x, b = pairs[i].y;
    double na = (double)(c.body_end[a] - c.body_begin[a]);
    double nb = (double)(c.body_end[b] - c.body_begin[b]);
    return m2p ? na : a == b ? na * (nb - 1) : na * nb;
  }
};

using WorkIter =
    thrust::transform_iterator<PairWork, thrust::counting_iterator<int64_t>>;

} // namespace

/* ---- The state: buffers kept between calls, in the context's arena ------ */

struct tfmm_traverse_gpu_state {
  using Buffer = tfmm_device_buffer;
  enum {
    STACK, /* the frontier's segments */
    COUNT, /* the tallies of the cooperative launch's rounds */
    AT,    /* their exclusive scan; or their sum over each block of
              the cooperative launch */
    OUT0,  /* OUT0 + o: the finished pairs of output o; then its
              CSR index, and the sort's second keys after it */
    PAIRS = OUT0 + OUTPUTS, /* the sort's keys and values: the scratch */
    OFFSET0,                /* OFFSET0 + o: the CSR offsets of output o */
    THETA = OFFSET0 + OUTPUTS,
    ACCEL,
    POSITION,
    WORK, /* the two sums of count_work */
    SUMS, /* the sweep's state between launches (SweepState) */
    TEMP,
    BUFFERS
  };
  tfmm_gpu *gpu = nullptr;     /* the context of the first run */
  Buffer *buf = nullptr;       /* its TRAVERSE slots */
  SweepState *host = nullptr;  /* pinned (TFMM_PINNED_TRAVERSE): SUMS */
  double *host_work = nullptr; /* pinned: the two sums */
  size_t peak = 0;             /* the most bytes held at once */
  int64_t count[OUTPUTS] = {}; /* entries of each list of the last run */
  int lent = 0;                /* whether the last run succeeded */
  int blocks = 0;              /* of the sweep's launch, once known */
};

namespace {

using State = tfmm_traverse_gpu_state;
static_assert((int)State::BUFFERS <= (int)TFMM_SLOTS_TRAVERSE_COUNT,
              "the traversal's buffers fit the TRAVERSE group of the arena");

/* The peak raised to what is held now plus `extra` (a buffer on its way
 * out). */
void note(State *s, size_t extra) {
  size_t now = extra;
  for (int k = 0; k < State::BUFFERS; k++)
    now += s->buf[k].bytes;
  s->peak = now > s->peak ? now : s->peak;
}

/* Buffer k of at least `bytes` (contents kept only when large enough),
 * at least doubled when it grows: the sweep's grow round by round, each
 * growth a cudaFree (a wait) and a cudaMalloc. */
tfmm_status reserve(State *s, int k, size_t bytes, tfmm_error *err) {
  const State::Buffer &b = s->buf[k];
  if (b.p != nullptr && bytes > b.bytes && bytes < 2 * b.bytes)
    bytes = 2 * b.bytes;
  TRY(tfmm_device_buffer_reserve(&s->buf[k], bytes));
  note(s, 0);
  return TFMM_OK;
}

constexpr size_t ALIGN = 256;

size_t aligned(size_t bytes) { return (bytes + ALIGN - 1) / ALIGN * ALIGN; }

/* Buffer k of at least `need` bytes, its first `keep` kept: a larger one
 * is made and the old one copied into it and freed. The sort's scratch
 * (PAIRS), dead until the lists are sorted, is freed first, so that the
 * copy is paid with memory that the sort makes again later. */
tfmm_status grow_keeping(State *s, int k, size_t need, size_t keep,
                         cudaStream_t stream, tfmm_error *err) {
  State::Buffer &b = s->buf[k];
  if (need <= b.bytes && b.p != nullptr)
    return TFMM_OK;
  if (k != State::PAIRS) {
    TRY(cudaStreamSynchronize(stream)); /* whoever borrowed it is done */
    tfmm_device_buffer_free(&s->buf[State::PAIRS]);
  }
  State::Buffer old = b;
  b = State::Buffer{};
  const size_t want = /* doubled, as reserve grows (old is out of b) */
      old.p != nullptr && need < 2 * old.bytes ? 2 * old.bytes : need;
  tfmm_status st = reserve(s, k, want, err);
  if (st != TFMM_OK) {
    tfmm_device_buffer_free(&old);
    return st;
  }
  if (old.p != nullptr) {
    note(s, old.bytes);
    cudaError_t e = keep > 0 ? cudaMemcpyAsync(b.p, old.p, keep,
                                               cudaMemcpyDeviceToDevice, stream)
                             : cudaSuccess;
    if (e == cudaSuccess)
      e = cudaStreamSynchronize(stream);
    tfmm_device_buffer_free(&old);
    TRY(e);
  }
  return TFMM_OK;
}

template <class T> T *at(State *s, int k) { return (T *)s->buf[k].p; }

/* CUB's scratch of `bytes`, grown when a call needs more. */
tfmm_status temp(State *s, size_t bytes, tfmm_error *err) {
  return reserve(s, State::TEMP, bytes, err);
}

tfmm_status check(const tfmm_tree_gpu *tree, const tfmm_traverse_gpu_params *p,
                  tfmm_error *err) {
  if (tree == nullptr || p == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "traverse_gpu: %s is NULL",
                          tree == nullptr ? "tree" : "params");
  if (tree->ncells < 1 || tree->nleaves < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "traverse_gpu: the tree has no cells");
  if (!(p->theta >= 0) || !(p->separation >= 0) || p->order < 0 ||
      p->m2p_bodies < 0 || !(p->soft_term >= 0) || !(p->eps >= 0) ||
      (p->frontier_cap != 0 && p->frontier_cap < 64) ||
      (p->mac == TFMM_MAC_ERROR && !(p->epsilon > 0)))
    return tfmm_error_set(
        err, TFMM_ERR_INVALID_ARGUMENT,
        "traverse_gpu: theta %g, separation %g, order %d, m2p_bodies %lld, "
        "soft_term %g, eps %g, epsilon %g: each must be >= 0 (epsilon > 0 "
        "with the error criterion; frontier_cap 0 or >= 64)",
        p->theta, p->separation, p->order, (long long)p->m2p_bodies,
        p->soft_term, p->eps, p->epsilon);
  if (p->mac != TFMM_MAC_GEOMETRIC && p->mac != TFMM_MAC_MASS &&
      p->mac != TFMM_MAC_ERROR)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "traverse_gpu: unknown criterion %d", (int)p->mac);
  return TFMM_OK;
}

/* The error criterion's |a|_A of every leaf from the bodies' previous
 * accelerations: the least over its bodies [body_begin, body_end), one
 * CUB segmented reduction over the leaves (short segments, contiguous in
 * key order); the parents then as the estimate's, level by level. */
tfmm_status prior_leaves(State *s, const tfmm_tree_gpu *tree,
                         const tfmm_traverse_gpu_params *p, double *accel,
                         cudaStream_t stream, tfmm_error *err) {
  const PriorIter in(thrust::counting_iterator<int64_t>(0),
                     PriorAccel{p->prior_acc, tree->d_order, p->prior_scale});
  const auto begin =
      thrust::make_permutation_iterator(tree->d_body_begin, tree->d_leaves);
  const auto end =
      thrust::make_permutation_iterator(tree->d_body_end, tree->d_leaves);
  const auto out = thrust::make_permutation_iterator(accel, tree->d_leaves);
  const int leaves = (int)tree->nleaves;
  size_t bytes = 0;
  TRY(cub::DeviceSegmentedReduce::Reduce(nullptr, bytes, in, out, leaves, begin,
                                         end, Least{}, (double)INFINITY,
                                         stream));
  CHECK(temp(s, bytes, err));
  TRY(cub::DeviceSegmentedReduce::Reduce(s->buf[State::TEMP].p, bytes, in, out,
                                         leaves, begin, end, Least{},
                                         (double)INFINITY, stream));
  return TFMM_OK;
}

/* The criterion's per-cell inputs into THETA or ACCEL; c is updated. */
tfmm_status criterion_inputs(State *s, const tfmm_tree_gpu *tree,
                             const tfmm_traverse_gpu_params *p, Cells *c,
                             cudaStream_t stream, tfmm_error *err) {
  const int64_t ncells = tree->ncells;
  if (p->mac == TFMM_MAC_MASS) {
    CHECK(reserve(s, State::THETA, ncells * sizeof(double), err));
    double *theta = at<double>(s, State::THETA);
    mass_thetas<<<blocks(ncells), THREADS, 0, stream>>>(
        ncells, tree->d_cmass, p->theta, p->order, theta);
    TRY(cudaGetLastError());
    c->theta = theta;
  }
  if (p->mac == TFMM_MAC_ERROR) {
    CHECK(reserve(s, State::ACCEL, ncells * sizeof(double), err));
    double *accel = at<double>(s, State::ACCEL);
    c->accel = accel;
    if (p->prior_acc != nullptr) {
      CHECK(prior_leaves(s, tree, p, accel, stream, err));
    } else {
      leaf_fields<<<blocks(tree->nleaves), THREADS, 0, stream>>>(
          tree->nleaves, tree->d_leaves, *c, p->eps * p->eps, accel);
      TRY(cudaGetLastError());
    }
    for (int l = tree->depth; l >= 0; l--) {
      const int64_t b = tree->level_begin[l], e = tree->level_begin[l + 1];
      if (e > b)
        least_of_children<<<blocks(e - b), THREADS, 0, stream>>>(b, e, *c,
                                                                 accel);
      TRY(cudaGetLastError());
    }
  }
  return TFMM_OK;
}

/* An output buffer for `count` pairs: the pairs (8 bytes each), later
 * the CSR index and the sorted keys (4 bytes each, the keys aligned). */
size_t list_bytes(int64_t count) {
  return (size_t)count * sizeof(int2) + ALIGN;
}

/* The pairs an output buffer of `bytes` has room for (list_bytes'
 * inverse). */
int64_t list_room(size_t bytes) {
  return bytes < ALIGN ? 0 : (int64_t)((bytes - ALIGN) / sizeof(int2));
}

/* Blocks of the sweep's cooperative launch: one an SM, so that the
 * upward pass beside it keeps most of every SM; -1 where the device
 * cannot launch one (every round is then the host's). */
tfmm_status sweep_blocks(State *s, tfmm_error *err) {
  if (s->blocks != 0)
    return TFMM_OK;
  int cooperative = 0, per_sm = 0;
  TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch,
                             s->gpu->device));
  if (cooperative)
    TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sweep_rounds,
                                                      SWEEP_THREADS, 0));
  s->blocks = cooperative && per_sm >= 1 ? s->gpu->sm_count : -1;
  return TFMM_OK;
}

/* Room for a round of n pairs from segment end `end`: the outputs and
 * the stack grown keeping what they hold (the pairs found so far, the
 * segments below). */
tfmm_status make_room(State *s, const SweepState *h, int64_t n, int64_t end,
                      int64_t cap, cudaStream_t stream, tfmm_error *err) {
  for (int k = 0; k <= OUTPUTS; k++) {
    const int id = k < OUTPUTS ? State::OUT0 + k : State::STACK;
    const size_t keep =
        k < OUTPUTS ? h->out_n[k] * sizeof(int2) : end * sizeof(int2);
    const size_t need =
        k < OUTPUTS ? list_bytes(h->out_n[k] + n) : (end + cap) * sizeof(int2);
    CHECK(grow_keeping(s, id, need, keep, stream, err));
  }
  return TFMM_OK;
}

/* One round of the top segment (n pairs, at most 2^31 - 1) driven by the
 * host: CUB's scan over the tallies, the round's sizes waited for. */
tfmm_status host_round(State *s, const Rule &rule, SweepState *h, int64_t cap,
                       cudaStream_t stream, tfmm_error *err) {
  const Segment seg = h->stack[h->top - 1];
  const int64_t n = seg.n, end = seg.begin + seg.n;
  CHECK(make_room(s, h, n, end, cap, stream, err));
  CHECK(reserve(s, State::AT, (n + 1) * sizeof(Tally), err));
  const int2 *pairs = at<int2>(s, State::STACK) + seg.begin;
  Tally *place = at<Tally>(s, State::AT);
  SweepState *d = at<SweepState>(s, State::SUMS);
  const TallyIter tally(thrust::counting_iterator<int64_t>(0),
                        ClassifyPair{pairs, rule, n});
  size_t bytes = 0;
  TRY(cub::DeviceScan::ExclusiveScan(nullptr, bytes, tally, place, AddTally{},
                                     Tally{}, (int)(n + 1), stream));
  CHECK(temp(s, bytes, err));
  TRY(cub::DeviceScan::ExclusiveScan(s->buf[State::TEMP].p, bytes, tally, place,
                                     AddTally{}, Tally{}, (int)(n + 1),
                                     stream));
  cut_prefix<<<1, 1, 0, stream>>>(n, place, cap, d->sums);
  TRY(cudaGetLastError());
  Outputs outs;
  for (int o = 0; o < OUTPUTS; o++)
    outs.at[o] = at<int2>(s, State::OUT0 + o) + h->out_n[o];
  emit_pairs<<<blocks(n), THREADS, 0, stream>>>(
      n, pairs, rule, place, cap, outs, at<int2>(s, State::STACK) + end);
  TRY(cudaGetLastError());
  TRY(cudaMemcpyAsync(h->sums, d->sums, sizeof h->sums, cudaMemcpyDeviceToHost,
                      stream));
  TRY(cudaStreamSynchronize(stream));
  const int64_t children = h->sums[0], took = h->sums[OUTPUTS + 1];
  for (int o = 0; o < OUTPUTS; o++)
    h->out_n[o] += h->sums[1 + o];
  h->rounds++;
  h->widest = n > h->widest ? n : h->widest;
  h->top--;
  if (took < n) /* the rest of the segment, later */
    h->stack[h->top++] = Segment{seg.begin + took, n - took};
  if (children > 0) {
    if (h->top == STACK_SEGMENTS)
      return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                            "traverse_gpu: more than %d frontier segments",
                            STACK_SEGMENTS);
    h->stack[h->top++] = Segment{end, children};
  }
  return TFMM_OK;
}

/* Rounds in one cooperative launch while the top segment is narrow
 * (at most a tile a block), growing buffers between launches; the state
 * goes to the device and back. A launch the device refuses as too large
 * (fewer SMs than it counts, as under an MPS share) leaves the state as
 * it was and sets s->blocks to -1: the host takes every round after. */
tfmm_status narrow_rounds(State *s, const Rule &rule, SweepState *h,
                          int64_t cap, int64_t narrow, cudaStream_t stream,
                          tfmm_error *err) {
  SweepState *d = at<SweepState>(s, State::SUMS);
  TRY(cudaMemcpyAsync(d, h, sizeof *h, cudaMemcpyHostToDevice, stream));
  for (;;) {
    SweepRoom room{};
    room.state = d;
    room.stack = at<int2>(s, State::STACK);
    room.stack_room = (int64_t)(s->buf[State::STACK].bytes / sizeof(int2));
    for (int o = 0; o < OUTPUTS; o++) {
      room.out[o] = at<int2>(s, State::OUT0 + o);
      room.out_room[o] = list_room(s->buf[State::OUT0 + o].bytes);
    }
    room.tally = at<Tally>(s, State::COUNT);
    room.tally_room = (int64_t)(s->buf[State::COUNT].bytes / sizeof(Tally));
    room.aggregate = at<Tally>(s, State::AT);
    room.cap = cap;
    room.narrow = narrow;
    Rule r = rule;
    void *args[] = {&r, &room};
    const cudaError_t launched = cudaLaunchCooperativeKernel(
        (const void *)sweep_rounds, s->blocks, SWEEP_THREADS, args, 0, stream);
    if (launched == cudaErrorCooperativeLaunchTooLarge) {
      /* Fewer SMs than the device has (an MPS share, say): every round
       * the host's from here on; the state is as it was. */
      (void)cudaGetLastError();
      s->blocks = -1;
      return TFMM_OK;
    }
    TRY(launched);
    TRY(cudaMemcpyAsync(h, d, sizeof *h, cudaMemcpyDeviceToHost, stream));
    TRY(cudaStreamSynchronize(stream));
    if (h->status == SWEEP_TOO_DEEP)
      return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                            "traverse_gpu: more than %d frontier segments",
                            STACK_SEGMENTS);
    if (h->status != SWEEP_GROW)
      return TFMM_OK; /* done, or the next round is the host's */
    const Segment seg = h->stack[h->top - 1];
    CHECK(reserve(s, State::COUNT, seg.n * sizeof(Tally), err));
    CHECK(make_room(s, h, seg.n, seg.begin + seg.n, cap, stream, err));
  }
}

/* The outputs' sizes for a fresh state: per cell (M2L) and per leaf (the
 * near list) about c / theta^3 for the root's theta, from the counts of an
 * octree's dual traversal (Plummer, 1M bodies, leaf 64, theta 0.7: 133
 * M2L a cell and ~50 near entries a leaf), at most 2^28 entries (2 GB) a
 * list; the error criterion, whose theta says nothing, as at theta 0.7. */
void first_guess(const tfmm_tree_gpu *tree, const Rule &rule,
                 int64_t guess[OUTPUTS]) {
  double theta = rule.mac.error ? 0.7 : rule.c.theta0;
  theta = theta < 0.3 ? 0.3 : theta > 1.0 ? 1.0 : theta;
  const double per = 1.0 / (theta * theta * theta);
  const double most = (double)((int64_t)1 << 28);
  const double m2l = fmin(48 * per * (double)tree->ncells, most);
  const double near = fmin(24 * per * (double)tree->nleaves, most);
  guess[OUT_M2L] =
      rule.barnes_hut ? 0 : (int64_t)fmax(m2l, 16.0 * tree->ncells);
  guess[OUT_NEAR] = (int64_t)fmax(near, 16.0 * tree->nleaves);
  guess[OUT_M2P] = rule.barnes_hut ? 32 * tree->nleaves : tree->nleaves;
}

/* The sweep: every output's pairs in OUT0 + o, their counts in out_n.
 * The frontier is a stack of segments in one buffer (STACK): the top one
 * is classified; the longest prefix whose children fit in FRONTIER_CAP
 * pairs gives its outputs and opens into a new segment pushed on top, the
 * rest stays below for later. Breadth first while the frontier is
 * narrower than the cap, depth first by slices past it: memory is bounded
 * by the cap times the depth, whatever N. Narrow rounds (the top and the
 * bottom of the tree) run in one cooperative launch
 * (traverse_gpu_sweep.cuh), a wait for the host each launch; wide ones
 * one at a time, a wait each. */
tfmm_status sweep(State *s, const tfmm_tree_gpu *tree, const Rule &rule,
                  int64_t out_n[OUTPUTS], tfmm_traverse_gpu_lists *lists,
                  cudaStream_t stream, tfmm_error *err) {
  const int64_t first = rule.barnes_hut ? tree->nleaves : 1;
  const int64_t asked = rule.frontier_cap > 0 ? rule.frontier_cap
                                              : TFMM_TRAVERSE_GPU_FRONTIER_CAP;
  /* Below INT32_MAX, the saturated tally of a pair past the cap. */
  const int64_t wanted = asked > first ? asked : first;
  const int64_t cap = wanted < INT32_MAX - 1 ? wanted : INT32_MAX - 1;
  CHECK(sweep_blocks(s, err));
  CHECK(reserve(s, State::STACK, (first + cap) * sizeof(int2), err));
  CHECK(reserve(s, State::SUMS, sizeof(SweepState), err));
  if (s->blocks > 0)
    CHECK(reserve(s, State::AT, s->blocks * sizeof(Tally), err));
  if (rule.barnes_hut) {
    start_leaves<<<blocks(first), THREADS, 0, stream>>>(
        first, tree->d_leaves, at<int2>(s, State::STACK));
    TRY(cudaGetLastError());
  } else {
    TRY(cudaMemsetAsync(at<int2>(s, State::STACK), 0, sizeof(int2), stream));
  }
  /* A fresh state (a one-shot call): outputs at sizes the tree and theta
   * suggest, so that the first sweep does not grow them round by round
   * (each growth a wait, a cudaFree and a copy: ~3 ms of a one-shot
   * call's lists at 1M when they were guessed at 16 a cell). */
  int64_t guess[OUTPUTS];
  first_guess(tree, rule, guess);
  for (int o = 0; o < OUTPUTS; o++)
    if (s->buf[State::OUT0 + o].p == nullptr && guess[o] > 0)
      CHECK(reserve(s, State::OUT0 + o, list_bytes(guess[o]), err));
  SweepState *h = s->host;
  *h = SweepState{};
  h->stack[0] = Segment{0, first};
  h->top = 1;
  while (h->top > 0) {
    const int64_t narrow = s->blocks <= 0 || rule.narrow < 0 ? 0
                           : rule.narrow > 0                 ? rule.narrow
                                             : (int64_t)s->blocks * SWEEP_TILE;
    const int64_t n = h->stack[h->top - 1].n;
    if (n > INT32_MAX)
      return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                            "traverse_gpu: a frontier of %lld pairs; the "
                            "sweep takes at most 2^31 - 1 (use a larger leaf "
                            "size)",
                            (long long)n);
    if (n <= narrow)
      CHECK(narrow_rounds(s, rule, h, cap, narrow, stream, err));
    else
      CHECK(host_round(s, rule, h, cap, stream, err));
  }
  for (int o = 0; o < OUTPUTS; o++)
    out_n[o] = h->out_n[o];
  lists->rounds = h->rounds;
  lists->widest = h->widest;
  return TFMM_OK;
}

/* Output o's pairs as CSR by target (position: leaf positions for the
 * near list), stable: each target's entries keep the sweep's order. The
 * pairs are split into keys and values in the scratch (PAIRS, sized by
 * the caller for the longest list) and sorted back into their own buffer,
 * the values (the CSR index) in its first half, the keys after them. */
tfmm_status to_csr(State *s, int o, int64_t count, int64_t ntargets,
                   const int32_t *position, tfmm_csr_gpu *csr,
                   cudaStream_t stream, tfmm_error *err) {
  CHECK(reserve(s, State::OFFSET0 + o, (ntargets + 1) * sizeof(int64_t), err));
  const State::Buffer &out = s->buf[State::OUT0 + o];
  const size_t half = aligned((size_t)count * sizeof(int32_t));
  if (out.p == nullptr || out.bytes < list_bytes(count) ||
      s->buf[State::PAIRS].bytes < 2 * half)
    return tfmm_error_set(err, TFMM_ERR_CUDA,
                          "traverse_gpu: list %d of %lld entries has no room "
                          "(%zu and %zu bytes)",
                          o, (long long)count, out.bytes,
                          s->buf[State::PAIRS].bytes);
  int32_t *index = (int32_t *)out.p;
  int32_t *sorted = (int32_t *)((char *)out.p + half);
  int32_t *key = at<int32_t>(s, State::PAIRS);
  int32_t *value = (int32_t *)((char *)s->buf[State::PAIRS].p + half);
  int64_t *offset = at<int64_t>(s, State::OFFSET0 + o);
  if (count > 0) {
    split_pairs<<<blocks(count), THREADS, 0, stream>>>(
        count, (const int2 *)out.p, position, key, value);
    TRY(cudaGetLastError());
    int bits = 1;
    while (bits < 31 && (int64_t{1} << bits) <= ntargets)
      bits++;
    /* The double-buffer form: CUB sorts between the two buffers it is
     * given instead of allocating its own pair of them in its scratch;
     * the pairs, split, are no longer needed, so their buffer is the
     * second pair. The result is in whichever buffer holds it last. */
    cub::DoubleBuffer<int32_t> keys(key, sorted), values(value, index);
    size_t bytes = 0;
    TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values,
                                        (int)count, 0, bits, stream));
    CHECK(temp(s, bytes, err));
    TRY(cub::DeviceRadixSort::SortPairs(s->buf[State::TEMP].p, bytes, keys,
                                        values, (int)count, 0, bits, stream));
    sorted = keys.Current();
    if (values.Current() != index)
      TRY(cudaMemcpyAsync(index, values.Current(), count * sizeof(int32_t),
                          cudaMemcpyDeviceToDevice, stream));
  }
  csr_offsets<<<blocks(ntargets + 1), THREADS, 0, stream>>>(ntargets, count,
                                                            sorted, offset);
  TRY(cudaGetLastError());
  *csr = tfmm_csr_gpu{ntargets, offset, index};
  return TFMM_OK;
}

/* The near field's body pairs and the M2P evaluations, summed from the
 * pairs (before to_csr overwrites them); whole numbers below 2^53: exact
 * in any order. */
tfmm_status count_work(State *s, const Cells &c, const int64_t out_n[OUTPUTS],
                       tfmm_traverse_gpu_lists *l, cudaStream_t stream,
                       tfmm_error *err) {
  const int which[2] = {OUT_NEAR, OUT_M2P};
  CHECK(reserve(s, State::WORK, 2 * sizeof(double), err));
  double *sum = at<double>(s, State::WORK);
  for (int k = 0; k < 2; k++) {
    const int64_t count = out_n[which[k]];
    if (count == 0) {
      s->host_work[k] = 0;
      continue;
    }
    const WorkIter work(
        thrust::counting_iterator<int64_t>(0),
        PairWork{at<int2>(s, State::OUT0 + which[k]), c, which[k] == OUT_M2P});
    size_t bytes = 0;
    TRY(cub::DeviceReduce::Sum(nullptr, bytes, work, sum + k, (int)count,
                               stream));
    CHECK(temp(s, bytes, err));
    TRY(cub::DeviceReduce::Sum(s->buf[State::TEMP].p, bytes, work, sum + k,
                               (int)count, stream));
    TRY(cudaMemcpyAsync(s->host_work + k, sum + k, sizeof(double),
                        cudaMemcpyDeviceToHost, stream));
  }
  TRY(cudaStreamSynchronize(stream));
  l->near_interactions = s->host_work[0];
  l->m2p_evaluations = s->host_work[1];
  return TFMM_OK;
}

/* The state of t's first run, in gpu's arena; later runs in the same. */
tfmm_status make_state(tfmm_traverse_gpu *t, tfmm_gpu *gpu, tfmm_error *err) {
  if (t->state != nullptr) {
    if (t->state->gpu != gpu)
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                            "traverse_gpu: buffers in another device context");
    return TFMM_OK;
  }
  State *s = new (std::nothrow) State();
  if (s == nullptr)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the GPU traversal's state");
  t->state = s;
  s->gpu = gpu;
  s->buf = tfmm_arena_slot(gpu, TFMM_SLOTS_TRAVERSE);
  void *host = nullptr, *work = nullptr;
  CHECK(tfmm_arena_pinned(gpu, TFMM_PINNED_TRAVERSE, sizeof(SweepState), 0,
                          &host, err));
  CHECK(tfmm_arena_pinned(gpu, TFMM_PINNED_TRAVERSE + 1, 2 * sizeof(double), 0,
                          &work, err));
  s->host = (SweepState *)host;
  s->host_work = (double *)work;
  return TFMM_OK;
}

tfmm_status run(tfmm_traverse_gpu *t, tfmm_gpu *gpu, const tfmm_tree_gpu *tree,
                const tfmm_traverse_gpu_params *p, cudaStream_t stream,
                tfmm_error *err) {
  CHECK(check(tree, p, err));
  CHECK(make_state(t, gpu, err));
  State *s = t->state;
  tfmm_traverse_gpu_lists *l = &t->lists;
  *l = tfmm_traverse_gpu_lists{};
  t->runs++;
  s->lent = 0;
  Rule rule{};
  rule.c = Cells{tree->d_center,
                 tree->d_radius,
                 tree->d_cmass,
                 tree->d_child_begin,
                 tree->d_child_count,
                 tree->d_body_begin,
                 tree->d_body_end,
                 tree->d_targets,
                 nullptr,
                 nullptr,
                 p->theta};
  rule.mac = tfmm_mac_rule{p->separation, p->mac == TFMM_MAC_ERROR, p->epsilon,
                           p->order, p->soft_term};
  rule.m2p_bodies = p->m2p_bodies;
  rule.frontier_cap = p->frontier_cap;
  rule.narrow = p->narrow;
  rule.barnes_hut = p->barnes_hut != 0;
  CHECK(criterion_inputs(s, tree, p, &rule.c, stream, err));
  l->d_theta = rule.c.theta;
  l->d_accel = rule.c.accel;
  int64_t out_n[OUTPUTS];
  CHECK(sweep(s, tree, rule, out_n, l, stream, err));
  int64_t most = 0;
  const int64_t cap =
      p->list_cap > 0 && p->list_cap < INT32_MAX ? p->list_cap : INT32_MAX;
  for (int o = 0; o < OUTPUTS; o++) {
    if (out_n[o] > cap) {
      l->too_many = out_n[o];
      return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                            "traverse_gpu: %lld list entries; the lists take "
                            "at most %lld (use a larger leaf size)",
                            (long long)out_n[o], (long long)cap);
    }
    most = out_n[o] > most ? out_n[o] : most;
  }
  CHECK(count_work(s, rule.c, out_n, l, stream, err));
  CHECK(reserve(s, State::POSITION, tree->ncells * sizeof(int32_t), err));
  /* The scratch is the largest buffer but holds nothing between runs
   * (growing it copies nothing): 1/16 more room, not 1/4. */
  TRY(tfmm_device_buffer_reserve_slack(
      &s->buf[State::PAIRS], 2 * aligned((size_t)most * sizeof(int32_t)), 16));
  note(s, 0);
  int32_t *position = at<int32_t>(s, State::POSITION);
  leaf_positions<<<blocks(tree->nleaves), THREADS, 0, stream>>>(
      tree->nleaves, tree->d_leaves, position);
  TRY(cudaGetLastError());
  CHECK(to_csr(s, OUT_M2L, out_n[OUT_M2L], tree->ncells, nullptr, &l->m2l,
               stream, err));
  CHECK(to_csr(s, OUT_NEAR, out_n[OUT_NEAR], tree->nleaves, position, &l->near,
               stream, err));
  CHECK(to_csr(s, OUT_M2P, out_n[OUT_M2P], tree->ncells, nullptr, &l->m2p,
               stream, err));
  l->m2l_count = out_n[OUT_M2L];
  l->near_count = out_n[OUT_NEAR];
  l->m2p_count = out_n[OUT_M2P];
  for (int o = 0; o < OUTPUTS; o++)
    s->count[o] = out_n[o];
  s->lent = 1;
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_traverse_gpu_run(
    tfmm_traverse_gpu *t, tfmm_gpu *gpu, const tfmm_tree_gpu *tree,
    const tfmm_traverse_gpu_params *params, void *stream, tfmm_error *err) {
  if (t == nullptr || gpu == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "traverse_gpu: the %s is NULL",
                          t == nullptr ? "state" : "device context");
  return run(t, gpu, tree, params, (cudaStream_t)stream, err);
}

extern "C" size_t tfmm_traverse_gpu_bytes(const tfmm_traverse_gpu *t) {
  size_t sum = 0;
  if (t != nullptr && t->state != nullptr)
    for (int k = 0; k < State::BUFFERS; k++)
      sum += t->state->buf[k].bytes;
  return sum;
}

extern "C" size_t tfmm_traverse_gpu_peak_bytes(const tfmm_traverse_gpu *t) {
  return t != nullptr && t->state != nullptr ? t->state->peak : 0;
}

extern "C" int tfmm_traverse_gpu_spare(const tfmm_traverse_gpu *t,
                                       tfmm_traverse_gpu_region out[]) {
  if (t == nullptr || t->state == nullptr || !t->state->lent)
    return 0;
  const State *s = t->state;
  tfmm_traverse_gpu_region r[TFMM_TRAVERSE_GPU_SPARES];
  int m = 0;
  const int whole[] = {State::PAIRS, State::STACK, State::COUNT, State::AT};
  for (int k : whole)
    r[m++] = {s->buf[k].p, s->buf[k].bytes};
  for (int o = 0; o < OUTPUTS; o++) { /* after the index: the sorted keys */
    const State::Buffer &b = s->buf[State::OUT0 + o];
    const size_t used = aligned((size_t)s->count[o] * sizeof(int32_t));
    r[m++] = {b.p != nullptr ? (char *)b.p + used : nullptr,
              b.bytes > used ? b.bytes - used : 0};
  }
  int count = 0;
  for (int k = 0; k < m; k++) { /* largest first */
    int best = -1;
    for (int j = 0; j < m; j++)
      if (r[j].p != nullptr && r[j].bytes >= ALIGN &&
          (best < 0 || r[j].bytes > r[best].bytes))
        best = j;
    if (best < 0)
      break;
    out[count++] = r[best];
    r[best].p = nullptr;
  }
  return count;
}

extern "C" void tfmm_traverse_gpu_release(tfmm_traverse_gpu *t) {
  if (t == nullptr || t->state == nullptr)
    return;
  delete t->state; /* the buffers are the context's */
  *t = tfmm_traverse_gpu{};
}
