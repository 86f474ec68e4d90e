/* The traversal's sweep (traverse_gpu.cu): a round classifies the pairs
 * of the frontier's top segment, scans their tallies and places every
 * finished and opened pair. Wide rounds are the host's, one at a time
 * (CUB's scan of the tallies, classified as it reads them; cut_prefix,
 * emit_pairs, a wait for the round's sizes); narrow ones, at the top and the
 * bottom of the tree, run in one cooperative launch (sweep_rounds) that keeps
 * the frontier's stack of segments on the device and waits on the grid twice a
 * round (after the tallies, after the placement), not on the host. It returns
 * at the first wide round, or where a buffer is too small for the next
 * (the host grows it and launches again), its state kept.
 *
 * Its scan is CUB's block scan over each block's chunk after the blocks'
 * aggregates (a block reduction); the tallies are integers summed with
 * saturation, so every scan is the same and the lists are the CPU's
 * (traverse_gpu.h). Its grid is one block an SM: the upward pass runs
 * beside the lists on another stream, and a grid of four an SM had
 * crowded it out (1M bodies: the upward pass 0.9 -> 5 ms on an H200).
 * Included by traverse_gpu.cu alone (--fmad=false: the criterion rounds
 * as the CPU's). */
#ifndef TFMM_TRAVERSE_GPU_SWEEP_CUH
#define TFMM_TRAVERSE_GPU_SWEEP_CUH

#include "traverse_gpu_cells.cuh"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <stdint.h>

namespace {

enum { OUT_M2L = 0, OUT_NEAR = 1, OUT_M2P = 2, OUTPUTS = 3 };

/* Segments the stack holds at most (each a level deeper, or the rest of
 * one below): well past 2 x 21 levels. */
constexpr int STACK_SEGMENTS = 256;

struct Rule {
  Cells c;
  tfmm_mac_rule mac;
  int64_t m2p_bodies;
  int64_t frontier_cap;
  int64_t narrow; /* tfmm_traverse_gpu_params.narrow */
  int barnes_hut;
};

/* A pair's tally: the pairs it opens into, and 1 in the output it
 * joins. Their exclusive scan gives every pair its place in the next
 * segment and in its output. The opened count saturates at INT32_MAX:
 * only the prefix within the cap (at most 2^31 - 1) is ever placed, and
 * a saturating sum of counts >= 0 is associative and commutative. */
struct alignas(16) Tally {
  int32_t opens;
  int32_t out[OUTPUTS];
};

struct AddTally {
  __host__ __device__ Tally operator()(const Tally &a, const Tally &b) const {
    Tally t;
    const int64_t opens = (int64_t)a.opens + b.opens;
    t.opens = opens > INT32_MAX ? INT32_MAX : (int32_t)opens;
    for (int o = 0; o < OUTPUTS; o++)
      t.out[o] = a.out[o] + b.out[o];
    return t;
  }
};

/* The pair's fate as its tally: the output it goes to, or the pairs it
 * opens into (0 when finished). */
__device__ Tally classify(const Rule &r, int32_t a, int32_t b) {
  const Cells &c = r.c;
  int out = -1;
  int32_t opens = 0;
  if (c.targets != nullptr && c.targets[a] == 0) {
    /* A target without targets: dropped with every pair below it, and
     * only it; the others' entries keep the whole sweep's order. */
  } else if (r.barnes_hut) {
    if (b != a && accept(c, r.mac, a, b))
      out = OUT_M2P;
    else if (is_leaf(c, b))
      out = OUT_NEAR;
    else
      opens = c.child_count[b];
  } else if (a == b) {
    if (is_leaf(c, a))
      out = OUT_NEAR;
    else
      opens = c.child_count[a] * c.child_count[a];
  } else if (accept(c, r.mac, a, b)) {
    out = c.body_end[a] - c.body_begin[a] <= r.m2p_bodies ? OUT_M2P : OUT_M2L;
  } else if (is_leaf(c, a) && is_leaf(c, b)) {
    out = OUT_NEAR;
  } else if (is_leaf(c, b) || (!is_leaf(c, a) && c.radius[a] >= c.radius[b])) {
    opens = c.child_count[a];
  } else {
    opens = c.child_count[b];
  }
  Tally t;
  t.opens = opens;
  for (int o = 0; o < OUTPUTS; o++)
    t.out[o] = out == o;
  return t;
}

/* A taken pair to its place, p and q its exclusive and inclusive scan: a
 * finished one appended to its output in the segment's order, an opened
 * one's children in the new segment in the CPU's order: the self pair's
 * children i-major, one side's in octant order. */
__device__ void emit(const Rule &r, int32_t a, int32_t b, const Tally &p,
                     const Tally &q, int2 *const outs[OUTPUTS], int2 *next) {
  for (int o = 0; o < OUTPUTS; o++)
    if (q.out[o] != p.out[o])
      outs[o][p.out[o]] = make_int2(a, b);
  if (q.opens == p.opens)
    return;
  const Cells &c = r.c;
  int2 *out = next + p.opens;
  if (!r.barnes_hut && a == b) {
    const int32_t k = c.child_count[a], first = c.child_begin[a];
    for (int32_t x = 0; x < k; x++)
      for (int32_t y = 0; y < k; y++)
        out[x * k + y] = make_int2(first + x, first + y);
  } else if (!r.barnes_hut && (is_leaf(c, b) || (!is_leaf(c, a) &&
                                                 c.radius[a] >= c.radius[b]))) {
    for (int32_t x = 0; x < c.child_count[a]; x++)
      out[x] = make_int2(c.child_begin[a] + x, b);
  } else {
    for (int32_t y = 0; y < c.child_count[b]; y++)
      out[y] = make_int2(a, c.child_begin[b] + y);
  }
}

/* ---- A round driven by the host: wide frontiers ------------------------ */

/* Pair i's tally, and 0 for i = n: the scan's input, classified as the
 * scan reads it (no tallies stored). */
struct ClassifyPair {
  const int2 *pairs;
  Rule r;
  int64_t n;
  __device__ Tally operator()(int64_t i) const {
    return i < n ? classify(r, pairs[i].x, pairs[i].y) : Tally{};
  }
};
using TallyIter =
    thrust::transform_iterator<ClassifyPair,
                               thrust::counting_iterator<int64_t>>;

/* Whether pair i is in the prefix taken this round: its children end
 * within cap (at[i + 1].opens <= cap), or it is the first (whose
 * children are at most 64). The rest of the segment comes back later. */
__device__ bool taken(int64_t i, const Tally &inclusive, int64_t cap) {
  return i == 0 || inclusive.opens <= cap;
}

/* The round's sizes (SweepState::sums) from its prefix taken, one
 * thread: every pair when the last is taken (the usual case: the
 * children fit the cap), else the first pair not taken, found by
 * bisection (taken is true, then false). */
__global__ void cut_prefix(int64_t n, const Tally *at, int64_t cap,
                           int64_t *sums) {
  int64_t took = n;
  if (!taken(n - 1, at[n], cap)) {
    int64_t lo = 1, hi = n - 1; /* pair 0 is always taken */
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (taken(mid, at[mid + 1], cap))
        lo = mid + 1;
      else
        hi = mid;
    }
    took = lo;
  }
  sums[0] = at[took].opens;
  for (int o = 0; o < OUTPUTS; o++)
    sums[1 + o] = at[took].out[o];
  sums[OUTPUTS + 1] = took;
}

/* The outputs' next free entries. */
struct Outputs {
  int2 *at[OUTPUTS];
};

/* Every taken pair to its place (at: the tallies' exclusive scan). */
__global__ void emit_pairs(int64_t n, const int2 *pairs, Rule r,
                           const Tally *at, int64_t cap, Outputs outs,
                           int2 *next) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n && taken(i, at[i + 1], cap))
    emit(r, pairs[i].x, pairs[i].y, at[i], at[i + 1], outs.at, next);
}

/* ---- Rounds in one cooperative launch: narrow frontiers ----------------- */

/* Why a launch of the sweep returned. */
enum {
  SWEEP_DONE = 0,    /* no segment left */
  SWEEP_GROW = 1,    /* a buffer is too small for the next round */
  SWEEP_WIDE = 2,    /* the next round is wider than the launch takes */
  SWEEP_TOO_DEEP = 3 /* more than STACK_SEGMENTS segments */
};

/* Segment [begin, begin + n) of the stack buffer. */
struct Segment {
  int64_t begin, n;
};

/* The sweep's state between launches, in device memory (and a pinned
 * copy): the frontier's segments, the outputs' counts, and the round's
 * sizes from its last pair taken (sums[0] its children, sums[1 + o] its
 * pairs of output o, sums[OUTPUTS + 1] its pairs). */
struct SweepState {
  Segment stack[STACK_SEGMENTS];
  int64_t out_n[OUTPUTS];
  int64_t sums[OUTPUTS + 2];
  int64_t widest;
  int32_t top, rounds, status, pad;
};

/* What a launch may use: the buffers and their room (entries). */
struct SweepRoom {
  SweepState *state;
  int2 *stack; /* the segments' pairs */
  int2 *out[OUTPUTS];
  Tally *tally;     /* one a pair of the round */
  Tally *aggregate; /* one a block */
  int64_t stack_room, out_room[OUTPUTS], tally_room;
  int64_t cap;    /* the most pairs a round opens into */
  int64_t narrow; /* the widest round the launch takes (a tile a
                     block) */
};

constexpr int SWEEP_THREADS = 256;
constexpr int SWEEP_ITEMS = 4;
constexpr int SWEEP_TILE = SWEEP_THREADS * SWEEP_ITEMS;

using SweepScan = cub::BlockScan<Tally, SWEEP_THREADS>;
using SweepReduce = cub::BlockReduce<Tally, SWEEP_THREADS>;

/* The running prefix of a block's tiles. */
struct RunningPrefix {
  Tally total;
  __device__ Tally operator()(const Tally &tile) {
    const Tally before = total;
    total = AddTally{}(total, tile);
    return before;
  }
};

/* A pair written by another block in an earlier round: read past L1. */
__device__ int2 load_pair(const int2 *p) { return __ldcg(p); }

__device__ Tally load_tally(const Tally *p) {
  const int4 v = __ldcg((const int4 *)p);
  return Tally{v.x, {v.y, v.z, v.w}};
}

__global__ void __launch_bounds__(SWEEP_THREADS)
    sweep_rounds(Rule r, SweepRoom room) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  __shared__ SweepState st;
  __shared__ union {
    typename SweepScan::TempStorage scan;
    typename SweepReduce::TempStorage reduce;
  } temp;
  __shared__ Tally block_total;
  __shared__ int go;      /* SWEEP_GROW..: stop; -1: go on */
  if (threadIdx.x == 0) { /* written before the launch: its live part */
    const SweepState *in = room.state;
    st.top = in->top;
    st.rounds = in->rounds;
    st.widest = in->widest;
    for (int o = 0; o < OUTPUTS; o++)
      st.out_n[o] = in->out_n[o];
    for (int k = 0; k < st.top; k++)
      st.stack[k] = in->stack[k];
  }
  __syncthreads();
  const int64_t blocks = gridDim.x;
  for (;;) {
    __syncthreads(); /* every thread has read the last round's go */
    /* Every block takes the same decisions from the same state. */
    if (threadIdx.x == 0) {
      go = -1;
      if (st.top == 0) {
        go = SWEEP_DONE;
      } else {
        const Segment seg = st.stack[st.top - 1];
        const int64_t end = seg.begin + seg.n;
        if (seg.n > room.narrow)
          go = SWEEP_WIDE;
        else if (seg.n > room.tally_room || end + room.cap > room.stack_room)
          go = SWEEP_GROW;
        for (int o = 0; o < OUTPUTS; o++)
          if (go < 0 && st.out_n[o] + seg.n > room.out_room[o])
            go = SWEEP_GROW;
        if (go < 0) {
          st.rounds++;
          st.widest = seg.n > st.widest ? seg.n : st.widest;
        }
      }
    }
    __syncthreads();
    if (go >= 0)
      break;
    const Segment seg = st.stack[st.top - 1];
    const int64_t n = seg.n;
    const int2 *pairs = room.stack + seg.begin;
    int2 *next = room.stack + seg.begin + n;
    int64_t chunk = (n + blocks - 1) / blocks;
    chunk = (chunk + SWEEP_TILE - 1) / SWEEP_TILE * SWEEP_TILE;
    const int64_t lo = blockIdx.x * chunk;
    const int64_t hi = lo + chunk < n ? lo + chunk : n;
    /* The tallies of the block's chunk, and their sum. */
    Tally sum{};
    for (int64_t base = lo; base < hi; base += SWEEP_TILE) {
      Tally mine{};
      for (int k = 0; k < SWEEP_ITEMS; k++) {
        const int64_t i = base + threadIdx.x * SWEEP_ITEMS + k;
        if (i < hi) {
          const int2 ab = load_pair(pairs + i);
          const Tally t = classify(r, ab.x, ab.y);
          room.tally[i] = t;
          mine = AddTally{}(mine, t);
        }
      }
      const Tally tile = SweepReduce(temp.reduce).Reduce(mine, AddTally{});
      __syncthreads();
      if (threadIdx.x == 0)
        sum = AddTally{}(sum, tile);
    }
    if (threadIdx.x == 0)
      room.aggregate[blockIdx.x] = sum;
    grid.sync();
    /* The blocks before this one, then the chunk's scan, tile by tile. */
    Tally before{};
    for (int64_t b = threadIdx.x; b < blockIdx.x; b += SWEEP_THREADS)
      before = AddTally{}(before, load_tally(room.aggregate + b));
    before = SweepReduce(temp.reduce).Reduce(before, AddTally{});
    if (threadIdx.x == 0)
      block_total = before;
    __syncthreads();
    RunningPrefix prefix{block_total};
    for (int64_t base = lo; base < hi; base += SWEEP_TILE) {
      Tally in[SWEEP_ITEMS], ex[SWEEP_ITEMS];
      for (int k = 0; k < SWEEP_ITEMS; k++) {
        const int64_t i = base + threadIdx.x * SWEEP_ITEMS + k;
        in[k] = i < hi ? room.tally[i] : Tally{};
      }
      __syncthreads(); /* temp's last use is done */
      SweepScan(temp.scan).ExclusiveScan(in, ex, AddTally{}, prefix);
      for (int k = 0; k < SWEEP_ITEMS; k++) {
        const int64_t i = base + threadIdx.x * SWEEP_ITEMS + k;
        if (i >= hi)
          break;
        const Tally q = AddTally{}(ex[k], in[k]);
        const bool here = taken(i, q, room.cap);
        /* The round's sizes, from the first pair not taken (the one
         * before it is) or from the last pair when all are. */
        if (!here && taken(i - 1, ex[k], room.cap)) {
          room.state->sums[0] = ex[k].opens;
          for (int o = 0; o < OUTPUTS; o++)
            room.state->sums[1 + o] = ex[k].out[o];
          room.state->sums[OUTPUTS + 1] = i;
        } else if (here && i == n - 1) {
          room.state->sums[0] = q.opens;
          for (int o = 0; o < OUTPUTS; o++)
            room.state->sums[1 + o] = q.out[o];
          room.state->sums[OUTPUTS + 1] = n;
        }
        if (here) {
          int2 *outs[OUTPUTS];
          for (int o = 0; o < OUTPUTS; o++)
            outs[o] = room.out[o] + st.out_n[o];
          const int2 ab = load_pair(pairs + i);
          emit(r, ab.x, ab.y, ex[k], q, outs, next);
        }
      }
    }
    grid.sync();
    /* The round's sizes: the segment's rest stays, its children on top. */
    if (threadIdx.x == 0) {
      const volatile int64_t *sums = room.state->sums;
      const int64_t children = sums[0], took = sums[OUTPUTS + 1];
      for (int o = 0; o < OUTPUTS; o++)
        st.out_n[o] += sums[1 + o];
      st.top--;
      if (took < n)
        st.stack[st.top++] = Segment{seg.begin + took, n - took};
      if (children > 0) {
        if (st.top == STACK_SEGMENTS)
          go = SWEEP_TOO_DEEP;
        else
          st.stack[st.top++] = Segment{seg.begin + n, children};
      }
    }
    __syncthreads();
    if (go >= 0)
      break;
    /* No block writes the sums again before every block has read them:
     * the next round's first grid.sync lies between. */
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    st.status = go;
    SweepState *out = room.state;
    for (int k = 0; k < st.top; k++)
      out->stack[k] = st.stack[k];
    for (int o = 0; o < OUTPUTS; o++)
      out->out_n[o] = st.out_n[o];
    out->widest = st.widest;
    out->top = st.top;
    out->rounds = st.rounds;
    out->status = st.status;
  }
}

} // namespace

#endif
