/* The gpu schedule's measured error (pipeline_gpu.h,
 * tfmm_pipeline_gpu_measure): the exact forces at a sample of the sorted
 * bodies of the tree just evaluated, where the bodies already are. The
 * sums are tfmm_gpu_reference_at's (k n pairs in FP64: about 0.4 ms for
 * 220 targets among 10^6 bodies on an H100); the gather below moves 48
 * bytes a target. */
#include "pipeline_gpu.h"

#define CUDA_TRY_WHO "gpu schedule"
#include "cuda_try.cuh"

#include "pipeline_gpu_state.cuh"
#include "reference_gpu.h"

#include <stdlib.h>

namespace {

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

/* begin[l] and count[l] of leaf l's sorted bodies. */
__global__ void leaf_spans(int64_t nleaves, const int32_t *leaves,
                           const int32_t *body_begin, const int32_t *body_end,
                           int64_t *begin, int32_t *count) {
  const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (l >= nleaves)
    return;
  const int32_t c = leaves[l];
  begin[l] = body_begin[c];
  count[l] = body_end[c] - body_begin[c];
}

tfmm_status leaves(tfmm_pipeline_gpu *pl, int64_t *nleaves, int64_t **begin,
                   int32_t **count, tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const int64_t m = t->nleaves;
  *begin = (int64_t *)malloc((size_t)(m > 0 ? m : 1) * sizeof **begin);
  *count = (int32_t *)malloc((size_t)(m > 0 ? m : 1) * sizeof **count);
  if (*begin == nullptr || *count == nullptr)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the spans of %lld leaves",
                          (long long)m);
  if (m == 0)
    return TFMM_OK;
  CHECK(reserve(s, State::MEASURE_OUT, (size_t)m * 12, err));
  int64_t *d_begin = at<int64_t>(s, State::MEASURE_OUT);
  int32_t *d_count = (int32_t *)(d_begin + m);
  const int threads = 256;
  leaf_spans<<<(unsigned)((m + threads - 1) / threads), threads, 0, st>>>(
      m, t->d_leaves, t->d_body_begin, t->d_body_end, d_begin, d_count);
  TRY(cudaGetLastError());
  TRY(cudaMemcpyAsync(*begin, d_begin, (size_t)m * sizeof(int64_t),
                      cudaMemcpyDeviceToHost, st));
  TRY(cudaMemcpyAsync(*count, d_count, (size_t)m * sizeof(int32_t),
                      cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  *nleaves = m;
  return TFMM_OK;
}

tfmm_status measure(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                    size_t k, const int64_t *h_sorted, int64_t *h_input,
                    double *h_exact, const double *d_acc, double *h_acc,
                    tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const size_t n = t->n;
  if (n == 0 || t->d_pos == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: measure before a tree was built");
  CHECK(reserve(s, State::MEASURE_TARGETS, k * sizeof(int64_t), err));
  int64_t *d_sorted = at<int64_t>(s, State::MEASURE_TARGETS);
  /* The outputs: input indices (k), exact (3k), the caller's (3k). */
  CHECK(reserve(s, State::MEASURE_OUT, 7 * k * sizeof(double), err));
  int64_t *d_input = at<int64_t>(s, State::MEASURE_OUT);
  double *d_exact = (double *)(d_input + k), *d_got = d_exact + 3 * k;
  size_t bytes = 0;
  CHECK(tfmm_gpu_reference_at(nullptr, &bytes, n, t->d_pos, t->d_mass, k,
                              d_sorted, pair, d_exact, nullptr, st, err));
  CHECK(reserve(s, State::MEASURE_WORK, bytes, err));
  void *work = s->buf[State::MEASURE_WORK].p;
  TRY(cudaMemcpyAsync(d_sorted, h_sorted, k * sizeof(int64_t),
                      cudaMemcpyHostToDevice, st));
  CHECK(tfmm_gpu_reference_at(work, &bytes, n, t->d_pos, t->d_mass, k, d_sorted,
                              pair, d_exact, nullptr, st, err));
  const int threads = 128;
  const unsigned blocks = (unsigned)((k + threads - 1) / threads);
  gather_sample<<<blocks, threads, 0, st>>>((int64_t)k, d_sorted, t->d_order,
                                            d_acc, d_input, d_got);
  TRY(cudaGetLastError());
  TRY(cudaMemcpyAsync(h_input, d_input, k * sizeof(int64_t),
                      cudaMemcpyDeviceToHost, st));
  TRY(cudaMemcpyAsync(h_exact, d_exact, 3 * k * sizeof(double),
                      cudaMemcpyDeviceToHost, st));
  if (d_acc != nullptr)
    TRY(cudaMemcpyAsync(h_acc, d_got, 3 * k * sizeof(double),
                        cudaMemcpyDeviceToHost, st));
  return tfmm_gpu_reference_check(work, n, k, d_sorted, st, err);
}

} // namespace

extern "C" tfmm_status
tfmm_pipeline_gpu_leaves(tfmm_pipeline_gpu *pl, int64_t *nleaves,
                         int64_t **begin, int32_t **count, tfmm_error *err) {
  *nleaves = 0;
  *begin = nullptr;
  *count = nullptr;
  return entered(pl, pl->base.gpu, err,
                 [&] { return leaves(pl, nleaves, begin, count, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_measure(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                          size_t k, const int64_t *h_sorted, int64_t *h_input,
                          double *h_exact, const double *d_acc, double *h_acc,
                          tfmm_error *err) {
  if (k == 0)
    return TFMM_OK;
  return entered(pl, pl->base.gpu, err, [&] {
    return measure(pl, pair, k, h_sorted, h_input, h_exact, d_acc, h_acc, err);
  });
}
