/* The sample's bodies on the device (measure_targets_gpu.h). */
#include "measure_targets_gpu.h"

#define CUDA_TRY_WHO "measure targets"
#include "cuda_try.cuh"

#include "pipeline/measure_pick.h"

#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <thrust/iterator/counting_iterator.h>

namespace {

constexpr int THREADS = 256;
constexpr int CAP = TFMM_MEASURE_CAP;
constexpr size_t ALIGN = 256;

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

size_t up(size_t bytes) { return (bytes + ALIGN - 1) / ALIGN * ALIGN; }

/* The scratch: clamped counts, histogram, its scan, the two thresholds,
 * the leaves selected at each end and their numbers; for the third part
 * the body the ends took of each leaf, their least keys
 * and where, those keys and leaves before and after the sort; then
 * CUB's. */
using Least = cub::KeyValuePair<int, double>;

struct layout {
  size_t clamped, hist, prefix, cuts, low, high, nsel, taken, least, key_in,
      key_out, leaf_in, leaf_out, cub, bytes;
};

layout lay_out(int64_t m, size_t each, size_t cub_bytes) {
  layout l;
  size_t at = 0;
  /* The selection's rounds write each of a block: at most max(m, each). */
  const size_t cap = (size_t)m > each ? (size_t)m : each;
  l.clamped = at;
  at += up((size_t)m * sizeof(int));
  l.hist = at;
  at += up((CAP + 1) * sizeof(int));
  l.prefix = at;
  at += up(CAP * sizeof(int));
  l.cuts = at;
  at += up(2 * sizeof(int));
  l.low = at;
  at += up((size_t)m * sizeof(int));
  l.high = at;
  at += up((size_t)m * sizeof(int));
  l.nsel = at;
  at += up(2 * sizeof(int));
  l.taken = at;
  at += up((size_t)m * sizeof(int64_t));
  l.least = at;
  at += up((size_t)m * sizeof(Least));
  l.key_in = at;
  at += up(cap * sizeof(double));
  l.key_out = at;
  at += up(cap * sizeof(double));
  l.leaf_in = at;
  at += up(cap * sizeof(int));
  l.leaf_out = at;
  at += up(cap * sizeof(int));
  l.cub = at;
  l.bytes = at + up(cub_bytes);
  return l;
}

/* The estimate's k bodies, and (m > 0) of each of m leaves the
 * histogram's sample, its count in [0, CAP] and no body taken
 * yet; one launch for all. */
__global__ void pick(size_t n, size_t k, uint64_t seed, int64_t *sorted,
                     int64_t m, const int64_t *begin, const int32_t *count,
                     int *clamped, int64_t *taken) {
  const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (j < k)
    sorted[j] = tfmm_measure_stratum(n, k, seed, j);
  if ((int64_t)j < m) {
    clamped[j] = count[j] < 1 ? 0 : count[j] > CAP ? CAP : count[j];
    taken[j] = -1;
  }
}

/* The thresholds of tfmm_measure_watch from prefix[c - 1] = leaves of
 * counts 1..c: low, the least c whose prefix holds `each` (else CAP);
 * high, the largest c with `each` leaves of counts c..CAP (else 1). One
 * thread a count; at most one of them writes each threshold. */
__global__ void thresholds(const int *prefix, int each, int *cuts) {
  const int c = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (c > CAP)
    return;
  const int total = prefix[CAP - 1];
  if (total < each) {
    if (c == 1) {
      cuts[0] = CAP;
      cuts[1] = 1;
    }
    return;
  }
  const int below = c > 1 ? prefix[c - 2] : 0; /* counts 1..c-1 */
  if (prefix[c - 1] >= each && below < each)
    cuts[0] = c;
  const int from = total - below;          /* counts c..CAP */
  const int after = total - prefix[c - 1]; /* counts c+1..CAP */
  if (from >= each && after < each)
    cuts[1] = c;
}

/* A leaf at the low (count <= cut) or high (count >= cut) end. */
struct AtEnd {
  const int *clamped, *cuts;
  int high;
  __device__ bool operator()(int l) const {
    const int c = clamped[l];
    return c >= 1 && (high ? c >= cuts[1] : c <= cuts[0]);
  }
};

/* The first `each` leaves of each end, in key order, low then high: one
 * body of each (the low end's from ~seed, the high end's from seed, as
 * tfmm_measure_watch with ~seed draws them), noted in taken (with taken:
 * the high end's after the low end's, as on the host); index 0 in the
 * slots up to k + 3 each. One block. */
__global__ void watch(int64_t k, int each, uint64_t seed, const int *low,
                      const int *high, const int *nsel, const int64_t *begin,
                      const int32_t *count, int64_t *sorted, int64_t *taken,
                      int64_t *watched) {
  const int j = threadIdx.x;
  const int nlow = min(nsel[0], each), nhigh = min(nsel[1], each);
  for (int s = j; s < nlow; s += blockDim.x) {
    const int l = low[s];
    sorted[k + s] = tfmm_measure_in_leaf(begin[l], count[l], ~seed, l);
    if (taken != nullptr)
      taken[l] = sorted[k + s];
  }
  __syncthreads(); /* the high end's body wins a leaf both took */
  for (int s = nlow + j; s < 3 * each; s += blockDim.x) {
    int64_t body = 0;
    if (s < nlow + nhigh) {
      const int l = high[s - nlow];
      body = tfmm_measure_in_leaf(begin[l], count[l], seed, l);
      if (taken != nullptr)
        taken[l] = body;
    }
    sorted[k + s] = body;
  }
  if (j == 0)
    *watched = nlow + nhigh;
}

/* Of a and b (a leaf's least key and where), the less, the first body
 * on ties (the host's order). */
struct LeastOf {
  __device__ Least operator()(const Least &a, const Least &b) const {
    return b.value < a.value || (b.value == a.value && b.key < a.key) ? b : a;
  }
};

/* The third part's sort keys of m leaves, a warp a leaf: each leaf's
 * least key and its first body of that key (least; each lane keeps the
 * first least of its bodies l, l + 32, ..., then cub::WarpReduce), +inf
 * where the leaf is empty, its least is not finite or the ends took that
 * body; and the leaves in order. One launch where the segmented argmin
 * of CUB took a block a leaf (~55,000 blocks at 10^6 bodies). */
__global__ void least_keys(int64_t m, const double *a2, const int64_t *begin,
                           const int32_t *count, const int64_t *taken,
                           Least *least, double *key, int *leaf) {
  using Reduce = cub::WarpReduce<Least>;
  __shared__ typename Reduce::TempStorage temp[THREADS / 32];
  const int64_t l = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = (int)threadIdx.x % 32;
  if (l >= m)
    return; /* the whole warp: l is the warp's */
  const int c = count[l];
  const int64_t b = begin[l];
  Least best;
  best.key = INT_MAX;
  best.value = INFINITY;
  for (int j = lane; j < c; j += 32) {
    const double v = a2[b + j];
    if (v < best.value) {
      best.key = j;
      best.value = v;
    }
  }
  best = Reduce(temp[threadIdx.x / 32]).Reduce(best, LeastOf{});
  if (lane != 0)
    return;
  const bool out =
      c < 1 || !(best.value < INFINITY) || taken[l] == b + best.key;
  least[l] = best;
  key[l] = out ? INFINITY : best.value;
  leaf[l] = (int)l;
}

/* A round of the third part's selection of the `each` least keys (with
 * their leaves) among count: ROUND_ITEMS a block sorted by
 * cub::BlockRadixSort (stable: ties in the order given, leaf order), the
 * first `each` of each block kept in order (+inf past count). The first
 * `each` of all are among those kept, in the same order; rounds until
 * one block is left give them, where CUB's device-wide radix sort of
 * every leaf took about twelve launches (its 8 passes of 8 bits). */
constexpr int ROUND_THREADS = 256, ROUND_PER_THREAD = 8;
constexpr int ROUND_ITEMS = ROUND_THREADS * ROUND_PER_THREAD;

__global__ void __launch_bounds__(ROUND_THREADS)
    least_round(int64_t count, int each, const double *key_in,
                const int *leaf_in, double *key_out, int *leaf_out) {
  using Sort =
      cub::BlockRadixSort<double, ROUND_THREADS, ROUND_PER_THREAD, int>;
  __shared__ typename Sort::TempStorage temp;
  double key[ROUND_PER_THREAD];
  int leaf[ROUND_PER_THREAD];
  const int64_t first = (int64_t)blockIdx.x * ROUND_ITEMS;
#pragma unroll
  for (int i = 0; i < ROUND_PER_THREAD; i++) { /* blocked: in order */
    const int64_t j = first + threadIdx.x * ROUND_PER_THREAD + i;
    key[i] = j < count ? key_in[j] : INFINITY;
    leaf[i] = j < count ? leaf_in[j] : INT_MAX;
  }
  Sort(temp).Sort(key, leaf);
#pragma unroll
  for (int i = 0; i < ROUND_PER_THREAD; i++) {
    const int r = (int)threadIdx.x * ROUND_PER_THREAD + i;
    if (r < each) {
      key_out[(int64_t)blockIdx.x * each + r] = key[i];
      leaf_out[(int64_t)blockIdx.x * each + r] = leaf[i];
    }
  }
}

/* The first `each` of the m sorted leaves whose key is finite (a prefix):
 * the least body of each after the ends' bodies, their count added to
 * *watched. One block. */
__global__ void least_bodies(int64_t k, int each, int64_t m, const int *nsel,
                             const double *key, const int *leaf,
                             const int64_t *begin, const Least *least,
                             int64_t *sorted, int64_t *watched) {
  __shared__ int found;
  if (threadIdx.x == 0)
    found = 0;
  __syncthreads();
  const int at = min(nsel[0], each) + min(nsel[1], each);
  for (int s = threadIdx.x; s < each && s < m; s += blockDim.x)
    if (key[s] < INFINITY) {
      const int l = leaf[s];
      sorted[k + at + s] = begin[l] + least[l].key;
      atomicAdd(&found, 1);
    }
  __syncthreads();
  if (threadIdx.x == 0)
    *watched += found;
}

/* The most scratch CUB asks for the histogram, the scan and the
 * selections over m leaves. */
tfmm_status cub_bytes_for(int m, size_t *bytes, cudaStream_t st,
                          tfmm_error *err) {
  size_t b[3] = {0, 0, 0};
  const thrust::counting_iterator<int> leaves(0);
  TRY(cub::DeviceHistogram::HistogramEven(nullptr, b[0], (const int *)nullptr,
                                          (int *)nullptr, CAP + 2, 0, CAP + 1,
                                          m, st));
  TRY(cub::DeviceScan::InclusiveSum(nullptr, b[1], (const int *)nullptr,
                                    (int *)nullptr, CAP, st));
  TRY(cub::DeviceSelect::If(nullptr, b[2], leaves, (int *)nullptr,
                            (int *)nullptr, m, AtEnd{nullptr, nullptr, 0}, st));
  *bytes = 0;
  for (int i = 0; i < 3; i++)
    *bytes = b[i] > *bytes ? b[i] : *bytes;
  return TFMM_OK;
}

/* The third part (the leaves of least key) after the ends' bodies. */
tfmm_status least_part(char *base, const layout &l, int m, int64_t k, int each,
                       const double *a2, const int64_t *begin,
                       const int32_t *count, const int *nsel, int64_t *sorted,
                       int64_t *watched, cudaStream_t st, tfmm_error *err) {
  const int64_t *taken = (const int64_t *)(base + l.taken);
  Least *least = (Least *)(base + l.least);
  double *key_in = (double *)(base + l.key_in);
  double *key_out = (double *)(base + l.key_out);
  int *leaf_in = (int *)(base + l.leaf_in),
      *leaf_out = (int *)(base + l.leaf_out);
  least_keys<<<blocks(32 * (int64_t)m), THREADS, 0, st>>>(
      m, a2, begin, count, taken, least, key_in, leaf_in);
  TRY(cudaGetLastError());
  /* Rounds from key_in to key_out and back, until one block is left. */
  double *keys[2] = {key_out, key_in};
  int *leaves[2] = {leaf_out, leaf_in};
  const double *kin = key_in;
  const int *lin = leaf_in;
  int64_t c = m;
  for (int r = 0;; r++) {
    const int64_t nb = (c + ROUND_ITEMS - 1) / ROUND_ITEMS;
    least_round<<<(unsigned)nb, ROUND_THREADS, 0, st>>>(
        c, each, kin, lin, keys[r % 2], leaves[r % 2]);
    TRY(cudaGetLastError());
    kin = keys[r % 2];
    lin = leaves[r % 2];
    if (nb == 1)
      break;
    c = nb * each; /* fewer: each <= ROUND_ITEMS / 2 */
  }
  least_bodies<<<1, 64, 0, st>>>(k, each, m, nsel, kin, lin, begin, least,
                                 sorted, watched);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status
tfmm_gpu_measure_targets(void *scratch, size_t *scratch_bytes, size_t n,
                         size_t k, size_t each, uint64_t seed, int64_t nleaves,
                         const int64_t *d_begin, const int32_t *d_count,
                         const double *d_a2, int64_t *d_sorted,
                         int64_t *d_watched, void *stream, tfmm_error *err) {
  if (scratch_bytes == nullptr || k < 1 || k > n || nleaves < 0 ||
      nleaves > (1 << 30) || each > (size_t)ROUND_ITEMS / 2)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "measure targets on the GPU: k %zu of n %zu, %lld "
                          "leaves, %zu a side",
                          k, n, (long long)nleaves, each);
  const int m = (int)nleaves;
  const int watching = m > 0 && each > 0;
  cudaStream_t st = (cudaStream_t)stream;
  size_t cub_bytes = 0;
  if (watching)
    CHECK(cub_bytes_for(m, &cub_bytes, st, err));
  const layout l = lay_out(m, each, cub_bytes);
  if (scratch == nullptr) {
    *scratch_bytes = l.bytes;
    return TFMM_OK;
  }
  if (*scratch_bytes < l.bytes || d_sorted == nullptr || d_watched == nullptr ||
      (watching && (d_begin == nullptr || d_count == nullptr)))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "measure targets on the GPU: scratch of %zu bytes "
                          "(%zu needed) or an array NULL",
                          *scratch_bytes, l.bytes);
  char *base = (char *)scratch;
  int *clamped = (int *)(base + l.clamped), *hist = (int *)(base + l.hist);
  int *prefix = (int *)(base + l.prefix), *cuts = (int *)(base + l.cuts);
  int *low = (int *)(base + l.low), *high = (int *)(base + l.high);
  int *nsel = (int *)(base + l.nsel);
  int64_t *taken = (int64_t *)(base + l.taken);
  const int64_t most = watching && m > (int64_t)k ? m : (int64_t)k;
  pick<<<blocks(most), THREADS, 0, st>>>(n, k, seed, d_sorted, watching ? m : 0,
                                         d_begin, d_count, clamped, taken);
  TRY(cudaGetLastError());
  if (!watching) {
    TRY(cudaMemsetAsync(nsel, 0, 2 * sizeof(int), st));
  } else {
    size_t temp_bytes = cub_bytes;
    TRY(cub::DeviceHistogram::HistogramEven(base + l.cub, temp_bytes, clamped,
                                            hist, CAP + 2, 0, CAP + 1, m, st));
    temp_bytes = cub_bytes;
    TRY(cub::DeviceScan::InclusiveSum(base + l.cub, temp_bytes, hist + 1,
                                      prefix, CAP, st));
    thresholds<<<blocks(CAP), THREADS, 0, st>>>(prefix, (int)each, cuts);
    TRY(cudaGetLastError());
    const thrust::counting_iterator<int> leaves(0);
    temp_bytes = cub_bytes;
    TRY(cub::DeviceSelect::If(base + l.cub, temp_bytes, leaves, low, nsel, m,
                              AtEnd{clamped, cuts, 0}, st));
    temp_bytes = cub_bytes;
    TRY(cub::DeviceSelect::If(base + l.cub, temp_bytes, leaves, high, nsel + 1,
                              m, AtEnd{clamped, cuts, 1}, st));
  }
  watch<<<1, 64, 0, st>>>((int64_t)k, (int)each, seed, low, high, nsel, d_begin,
                          d_count, d_sorted, watching ? taken : nullptr,
                          d_watched);
  TRY(cudaGetLastError());
  if (watching && d_a2 != nullptr)
    CHECK(least_part(base, l, m, (int64_t)k, (int)each, d_a2, d_begin, d_count,
                     nsel, d_sorted, d_watched, st, err));
  return TFMM_OK;
}
