/* A sub-step's forces summed directly at its few active bodies (sim_gpu.h,
 * tfmm_sim_gpu_direct): the active bodies' indices selected by CUB from
 * the mask that tfmm_sim_gpu_activate wrote, every body pulling each of
 * them through the CPU's double-precision pair formula
 * (reference_gpu.h, tfmm_gpu_reference_at: k n pairs, 19 FP64
 * instructions each), the results times G into their slots of acc and
 * pot. Nothing waits for the host but the check of the sums, which names
 * a force that is not finite. */
#include "sim_gpu.h"

#define CUDA_TRY_WHO "sim_gpu"
#include "cuda_try.cuh"
#include "reference_gpu.h"
#include "sim_gpu_state.cuh"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

namespace {

constexpr int THREADS = 256;

/* Target i's sums (G = 1) to its body's slots, times G. */
__global__ void scatter_direct(size_t k, const int64_t *targets,
                               const int64_t *count, double G,
                               const double *acc_k, const double *pot_k,
                               double *acc, double *pot) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= k || (int64_t)i >= *count)
    return;
  const int64_t t = targets[i];
  for (int d = 0; d < 3; d++)
    acc[3 * t + d] = G * acc_k[3 * i + d];
  pot[t] = G * pot_k[i];
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

} // namespace

extern "C" tfmm_status tfmm_sim_gpu_direct(tfmm_sim_gpu *g, size_t k, double G,
                                           const tfmm_pair_params *pair,
                                           tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  if (pair == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: direct: pair is NULL");
  if (k == 0)
    return TFMM_OK;
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  const thrust::counting_iterator<int64_t> index(0);
  size_t select_bytes = 0, reference_bytes = 0;
  TRY(cub::DeviceSelect::Flagged(nullptr, select_bytes, index, g->active,
                                 (int64_t *)nullptr, (int64_t *)nullptr,
                                 (int64_t)g->n, g->stream));
  CHECK(tfmm_gpu_reference_at(NULL, &reference_bytes, g->n, g->pos, g->mass, k,
                              NULL, NULL, pair, NULL, g->pot, g->stream, err));
  /* One slot: the reference's workspace (32-byte aligned, first), the
   * indices of every active body (n at most), their count, their sums. */
  const size_t at_targets = aligned(reference_bytes);
  const size_t at_count = at_targets + aligned(g->n * sizeof(int64_t));
  const size_t at_sums = at_count + 256;
  const size_t at_select = at_sums + aligned(4 * k * sizeof(double));
  void *slot = NULL;
  CHECK(tfmm_arena_reserve(g->gpu, TFMM_SIM_SLOT_DIRECT,
                           at_select + select_bytes, 0, &slot, err));
  char *base = (char *)slot;
  int64_t *targets = (int64_t *)(base + at_targets);
  int64_t *count = (int64_t *)(base + at_count);
  double *acc_k = (double *)(base + at_sums), *pot_k = acc_k + 3 * k;
  TRY(cub::DeviceSelect::Flagged(base + at_select, select_bytes, index,
                                 g->active, targets, count, (int64_t)g->n,
                                 g->stream));
  /* k is the caller's count of the active bodies; the kernels read the
   * selection's own (d_upto), so no more than it are summed. */
  CHECK(tfmm_gpu_reference_at(base, &reference_bytes, g->n, g->pos, g->mass, k,
                              targets, count, pair, acc_k, pot_k, g->stream,
                              err));
  scatter_direct<<<(unsigned)((k + THREADS - 1) / THREADS), THREADS, 0,
                   g->stream>>>(k, targets, count, G, acc_k, pot_k, g->acc,
                                g->pot);
  TRY(cudaGetLastError());
  return tfmm_gpu_reference_check(base, g->n, k, targets, g->stream, err);
}
