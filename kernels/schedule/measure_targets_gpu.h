/* The bodies a measurement samples (measure.h: the estimate and the
 * watch), drawn on the device from the leaves of a tree that lives there:
 * the same bodies as tfmm_measure_pick and tfmm_measure_watch draw on the
 * host from the same spans and seed (both use measure_pick.h), without
 * the leaves' spans travelling to the host.
 *
 * The watch's thresholds come from a histogram of the leaves' counts
 * (cub::DeviceHistogram, then cub::DeviceScan over its bins), the leaves
 * at each end in key order from cub::DeviceSelect, then one body of each
 * of the first `each`. Its third part, the leaves of least |a|: each
 * leaf's least key (a warp a leaf, cub::WarpReduce, the first body on
 * ties: one launch where cub::DeviceSegmentedReduce::ArgMin took a block
 * a leaf), the `each` leaves of least key in order (rounds of
 * cub::BlockRadixSort over 2,048 leaves a block, stable: ties in leaf
 * order, keeping the first `each` of each block until one block is left:
 * two launches at 55,000 leaves where a device-wide radix sort of every
 * leaf took about twelve), the first `each` whose key is finite and whose
 * body the ends did not take. Cost: a few passes over nleaves integers in
 * about ten small kernels (CUB's included), tens of microseconds at 10^5
 * leaves, then one pass over the n keys (8 n bytes) and the rounds; no
 * wait on the host.
 *
 * Plain C; enqueued on the caller's stream, scratch sized in two calls
 * (CUB's way). Not thread-safe on one scratch. */
#ifndef TFMM_MEASURE_TARGETS_GPU_H
#define TFMM_MEASURE_TARGETS_GPU_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_sorted[0, k): tfmm_measure_pick(n, k, seed); then the watch of
 * tfmm_measure_watch(nleaves, begin, count, each, ~seed, a2), w sorted
 * indices (low end, high end, then the leaves of least key), in
 * d_sorted[k, k + w); the slots [k + w, k + 3 each) get index 0 (a valid
 * body, to be ignored); w to *d_watched (device). d_begin, d_count: leaf l
 * holds sorted bodies [d_begin[l], d_begin[l] + d_count[l]) (device,
 * nleaves each; NULL when nleaves is 0); d_a2: the sorted bodies' keys
 * (tfmm_measure_a2 of their accelerations, device, n; NULL: no third
 * part). With scratch NULL only *scratch_bytes is set (it depends on
 * nleaves and each); else scratch (256-byte aligned device memory) must hold
 * that much. 1 <= k <= n; nleaves >= 0; each <= 1024. */
tfmm_status tfmm_gpu_measure_targets(void *scratch, size_t *scratch_bytes,
                                     size_t n, size_t k, size_t each,
                                     uint64_t seed, int64_t nleaves,
                                     const int64_t *d_begin,
                                     const int32_t *d_count, const double *d_a2,
                                     int64_t *d_sorted, int64_t *d_watched,
                                     void *stream, tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
