/* The sample's bodies on the device (measure_targets_gpu.h). */
#include "measure_targets_gpu.h"

#define CUDA_TRY_WHO "measure targets"
#include "cuda_try.cuh"

#include "pipeline/measure_pick.h"

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
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
 * the leaves selected at each end and their numbers, then CUB's. */
struct layout {
  size_t clamped, hist, prefix, cuts, low, high, nsel, cub, bytes;
};

layout lay_out(int64_t m, size_t cub_bytes) {
  layout l;
  size_t at = 0;
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
  l.cub = at;
  l.bytes = at + up(cub_bytes);
  return l;
}

/* The estimate's k bodies, and (m > 0) the histogram's sample of each
 * of m leaves: its count in [0, CAP]; one launch for both. */
__global__ void pick(size_t n, size_t k, uint64_t seed, int64_t *sorted,
                     int64_t m, const int32_t *count, int *clamped) {
  const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (j < k)
    sorted[j] = tfmm_measure_stratum(n, k, seed, j);
  if ((int64_t)j < m)
    clamped[j] = count[j] < 1 ? 0 : count[j] > CAP ? CAP : count[j];
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
 * tfmm_measure_watch with ~seed draws them). */
__global__ void watch(int64_t k, int each, uint64_t seed, const int *low,
                      const int *high, const int *nsel, const int64_t *begin,
                      const int32_t *count, int64_t *sorted, int64_t *watched) {
  const int j = threadIdx.x;
  const int nlow = min(nsel[0], each), nhigh = min(nsel[1], each);
  for (int s = j; s < 2 * each; s += blockDim.x) {
    int64_t body = 0;
    if (s < nlow) {
      const int l = low[s];
      body = tfmm_measure_in_leaf(begin[l], count[l], ~seed, l);
    } else if (s < nlow + nhigh) {
      const int l = high[s - nlow];
      body = tfmm_measure_in_leaf(begin[l], count[l], seed, l);
    }
    sorted[k + s] = body;
  }
  if (j == 0)
    *watched = nlow + nhigh;
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
  *bytes = b[0] > b[1] ? b[0] : b[1];
  *bytes = b[2] > *bytes ? b[2] : *bytes;
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status
tfmm_gpu_measure_targets(void *scratch, size_t *scratch_bytes, size_t n,
                         size_t k, size_t each, uint64_t seed, int64_t nleaves,
                         const int64_t *d_begin, const int32_t *d_count,
                         int64_t *d_sorted, int64_t *d_watched, void *stream,
                         tfmm_error *err) {
  if (scratch_bytes == nullptr || k < 1 || k > n || nleaves < 0 ||
      nleaves > (1 << 30) || each > (1u << 20))
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
  const layout l = lay_out(m, cub_bytes);
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
  const int64_t most = watching && m > (int64_t)k ? m : (int64_t)k;
  pick<<<blocks(most), THREADS, 0, st>>>(n, k, seed, d_sorted, watching ? m : 0,
                                         d_count, clamped);
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
                          d_count, d_sorted, d_watched);
  TRY(cudaGetLastError());
  return TFMM_OK;
}
