/* The targets of an evaluation at a subset, on the device
 * (targets_gpu.h). */
#include "targets_gpu.h"

#define CUDA_TRY_WHO "targets"
#include "cuda_try.cuh"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

namespace {

constexpr int THREADS = 256;

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

/* Whether body i (input order) is a target. */
struct IsTarget {
  const unsigned char *active;
  __host__ __device__ int64_t operator()(int64_t i) const {
    return active[i] != 0;
  }
};

/* Whether sorted body k is a target: the mask through the permutation. */
struct SortedTarget {
  const unsigned char *active;
  const int32_t *order;
  __host__ __device__ int32_t operator()(int64_t k) const {
    return active[order[k]] != 0;
  }
};

/* Whether cell c holds a target. */
struct CellHolds {
  const int32_t *count;
  __host__ __device__ int64_t operator()(int64_t c) const {
    return count[c] > 0;
  }
};

using HoldsTarget =
    thrust::transform_iterator<CellHolds, thrust::counting_iterator<int64_t>>;
using TargetIter =
    thrust::transform_iterator<IsTarget, thrust::counting_iterator<int64_t>>;
using SortedTargetIter =
    thrust::transform_iterator<SortedTarget,
                               thrust::counting_iterator<int64_t>>;

/* count[c] = the targets among cell c's bodies, from below[k] = those
 * among sorted bodies [0, k) (a cell's bodies are a range of them). */
__global__ void targets_per_cell(int64_t ncells, const int32_t *body_begin,
                                 const int32_t *body_end, const int32_t *below,
                                 int32_t *count) {
  int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (c < ncells)
    count[c] = below[body_end[c]] - below[body_begin[c]];
}

} // namespace

extern "C" tfmm_status
tfmm_targets_gpu_below(void *scratch, size_t *scratch_bytes, size_t n,
                       const unsigned char *active, const int32_t *order,
                       int32_t *below, void *stream, tfmm_error *err) {
  cudaStream_t st = (cudaStream_t)stream;
  const SortedTargetIter flag(thrust::counting_iterator<int64_t>(0),
                              SortedTarget{active, order});
  if (scratch == nullptr) {
    *scratch_bytes = 0;
    TRY(cub::DeviceScan::InclusiveSum(nullptr, *scratch_bytes, flag, below + 1,
                                      (int)n, st));
    return TFMM_OK;
  }
  TRY(cudaMemsetAsync(below, 0, sizeof *below, st));
  TRY(cub::DeviceScan::InclusiveSum(scratch, *scratch_bytes, flag, below + 1,
                                    (int)n, st));
  return TFMM_OK;
}

extern "C" tfmm_status
tfmm_targets_gpu_per_cell(int64_t ncells, const int32_t *body_begin,
                          const int32_t *body_end, const int32_t *below,
                          int32_t *count, void *stream, tfmm_error *err) {
  targets_per_cell<<<blocks(ncells), THREADS, 0, (cudaStream_t)stream>>>(
      ncells, body_begin, body_end, below, count);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

extern "C" tfmm_status
tfmm_targets_gpu_cells(void *scratch, size_t *scratch_bytes, int64_t ncells,
                       const int32_t *count, int64_t *sum, void *stream,
                       tfmm_error *err) {
  const HoldsTarget holds(thrust::counting_iterator<int64_t>(0),
                          CellHolds{count});
  if (scratch == nullptr)
    *scratch_bytes = 0;
  TRY(cub::DeviceReduce::Sum(scratch, *scratch_bytes, holds, sum, (int)ncells,
                             (cudaStream_t)stream));
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_targets_gpu_count(void *scratch,
                                              size_t *scratch_bytes, size_t n,
                                              const unsigned char *active,
                                              int64_t *sum, void *stream,
                                              tfmm_error *err) {
  const TargetIter flag(thrust::counting_iterator<int64_t>(0),
                        IsTarget{active});
  if (scratch == nullptr)
    *scratch_bytes = 0;
  TRY(cub::DeviceReduce::Sum(scratch, *scratch_bytes, flag, sum, (int)n,
                             (cudaStream_t)stream));
  return TFMM_OK;
}
