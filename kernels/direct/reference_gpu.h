/* The exact forces at a sample of targets, on the GPU: every source pulls
 * every target through the pair formula of nearfield/interaction.h
 * (tfmm_soft_pair_f64, the one the CPU's double-precision direct sums
 * use), positions, arithmetic and sums in double, G = 1, a target's own
 * body excluded by its index as the CPU reference excludes it
 * (nearfield/reference.c). What an evaluation measures its error
 * against where the bodies live on the device; it agrees with
 * tfmm_allpairs_reference_at at the same targets to about 1e-13 of |a|
 * (the summation order differs: tests/test_reference_gpu.c).
 *
 * Cost: k n pairs of 19 FP64 instructions each (Plummer, with the
 * potential; reference_gpu.cu counts them), on the FP64 pipe: at most
 * 132 SMs x 64 lanes x 1.98 GHz / 19 = 8.8e11 pairs a second on an H100
 * SXM, so 2,000 targets among 10^6 bodies (2e9 pairs) take at least
 * 2.3 ms; the sources are read once for every 256 targets (32 bytes a
 * body, from L2 at 10^6 bodies).
 *
 * Plain C; enqueued on the caller's stream (a cudaStream_t of the current
 * device; NULL: the legacy default stream) over device arrays, without
 * allocating or waiting. Not thread-safe on one workspace. */
#ifndef TFMM_REFERENCE_GPU_H
#define TFMM_REFERENCE_GPU_H

#include "base/error.h"
#include "base/pair.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Accelerations d_acc (3k) and potentials d_pot (k, or NULL: none) at
 * the k bodies d_targets[0..k) (indices into [0, n), repeats allowed) of
 * the n bodies at d_pos (3n: x, y, z) with masses d_mass (n), in the
 * order of d_targets, under pair's softening and eps (its precision is
 * ignored: always double). Scratch is sized in two calls, CUB's way: with
 * workspace NULL only *workspace_bytes is set (it depends on n, k, the
 * softening, whether d_pot is NULL and the current device: ask again when
 * one changes); else workspace (device memory, 32-byte aligned, as
 * cudaMalloc gives) must hold at least that. It holds the partial sums of
 * the source chunks and the two words that tfmm_gpu_reference_check
 * reads. 1 <= n, k <= 2^31 - 257.
 *
 * The indices are on the device, so an index outside [0, n) is found by
 * the kernels, not here: that target's results are NaN and the check
 * below names it. So are non-finite results (with eps = 0, a target at
 * the same point as another body: the CPU reference refuses those).
 *
 * d_upto (NULL: every target) is a count on the device, read by the
 * kernels: only the first min(k, *d_upto) targets are summed and
 * checked, the rest get zeros at almost no cost (a warp wholly past it
 * skips the pairs). For a caller that sizes k before it knows how many
 * targets it has (the worst group of a measurement, its count written by
 * a kernel). */
tfmm_status tfmm_gpu_reference_at(void *workspace, size_t *workspace_bytes,
                                  size_t n, const double *d_pos,
                                  const double *d_mass, size_t k,
                                  const int64_t *d_targets,
                                  const int64_t *d_upto,
                                  const tfmm_pair_params *pair, double *d_acc,
                                  double *d_pot, void *stream, tfmm_error *err);

/* The same accelerations (no potential) in under half the time (0.26
 * against 0.61 ms for 256 targets among 10^6 bodies on an H100),
 * for samples that measure errors well above 1e-5 (the measured error
 * with tfmm_config.accuracy >= 1e-4: measure.h). Each pair in FP32
 * (tfmm_interaction_f32 / tfmm_soft_pair_f32 of interaction.h), on a
 * separation formed in double-single: every coordinate taken relative to
 * the target group's first target c (in double) and split into a float hi
 * and the float lo of what hi lost, r = (s_hi - t_hi) + (s_lo - t_lo).
 * Then r has a relative error of at most about 2 u + 2^-47 D / |r|
 * (u = 2^-24 = 6e-8; D the bodies' largest distance from c, at most
 * their extent), whatever their distance from the origin (a cluster of
 * extent 0.3 at 10^4: float positions alone would give pairs 1e-4 apart
 * an error of 10 %); the 2 u holds for pairs farther apart than about
 * 1e-7 D, closer than every pair of a sane input. Runs of 16 pairs
 * summed in float, added to double sums; chunks and the finish in double
 * as above.
 *
 * Its error on a target: each pair's term has a relative error of at
 * most about 24 u = 1.4e-6 (r: 3 roundings; r^2 + eps^2: 3 more, doubled
 * in the term; rsqrtf: 2 ulp, halved error of r^2 plus its own; its
 * cube: 3; m and the product: 2; the spline inside its support up to
 * about 60 u = 3.6e-6, its polynomials cancelling near the edge), and a
 * run's float sum of 16 terms at most 15 u = 9e-7 of their magnitudes;
 * the double sums add nothing of note. So
 *   |a_fast - a| <= 2.5e-6 sum_j |t_j|   (4.5e-6 with the spline inside
 *                                         its support),
 * 2.5e-6 kappa of |a| where kappa = sum_j |t_j| / |a| (the pulls'
 * cancellation; the FP64 sums' bound scales with it too). A measured
 * relative error e = |a_fmm - a| / |a| then moves by at most
 * 2.5e-6 kappa (1 + e): at most 2.5 % of a 1e-4 target where kappa <= 1
 * and 25 % where kappa = 10, in the worst case of every rounding aligned;
 * independent roundings add as a random walk, so in fact the error is
 * nearer u sqrt(sum_j t_j^2) (about 1e-7 of |a|: tests/
 * test_reference_fast_gpu.c). Below 1e-4 the FP64 sums are the measure.
 * With eps = 0 a pair closer than about 1e-13 of the tree's units
 * overflows the float 1/r^3 to infinity: the check below reports it
 * non-finite, and the caller falls back to tfmm_gpu_reference_at.
 *
 * Cost per pair (Plummer, sm_90): 9 FADD (r in double-single), 3 FFMA
 * (r^2 + eps^2), MUFU.RSQ, 3 FMUL (1/r^3 m), 3 FFMA (a): 18 FP32
 * instructions on a pipe of 128 lanes an SM, 132 x 128 x 1.98 GHz / 18 =
 * 1.9e12 pairs a second on an H100 SXM (2.1 times the FP64 kernel's
 * limit); two LDS.128 a source (shared by two targets); a run's 3 F2F and
 * 3 DADD per 16 pairs on other pipes. Memory: as above (the sources are
 * read in double and split once a target group). Same arguments (d_upto
 * too) and workspace sizing as tfmm_gpu_reference_at without d_pot
 * (pair's precision ignored); the same check. */
tfmm_status
tfmm_gpu_reference_fast_at(void *workspace, size_t *workspace_bytes, size_t n,
                           const double *d_pos, const double *d_mass, size_t k,
                           const int64_t *d_targets, const int64_t *d_upto,
                           const tfmm_pair_params *pair, double *d_acc,
                           void *stream, tfmm_error *err);

/* Waits for `stream`, then says what the kernels of the last
 * tfmm_gpu_reference_at or _fast_at on this workspace (with these n, k and
 * d_targets) found: TFMM_ERR_INVALID_ARGUMENT for a target index outside [0,
 * n), TFMM_ERR_NONFINITE for a non-finite result, each naming the first such
 * target; else TFMM_OK. */
tfmm_status tfmm_gpu_reference_check(const void *workspace, size_t n, size_t k,
                                     const int64_t *d_targets, void *stream,
                                     tfmm_error *err);

/* For a caller that brings what the kernels found back with its own
 * results, in one copy and one wait: the device address of the
 * TFMM_GPU_REFERENCE_FOUND bytes in the workspace where they note it
 * (valid once the last call's kernels ran, until the next call on the
 * workspace), and the judgement of a host copy of those bytes, as
 * tfmm_gpu_reference_check's (which copies them and waits). Only for a
 * bad index does the judgement read d_targets (a copy and a wait). */
enum { TFMM_GPU_REFERENCE_FOUND = 16 };
const void *tfmm_gpu_reference_found(const void *workspace);
tfmm_status tfmm_gpu_reference_judge(const void *found, size_t n, size_t k,
                                     const int64_t *d_targets, void *stream,
                                     tfmm_error *err);

/* The FP64 sums above at k targets of n bodies held on the host, on GPU
 * `device` (its ordinal), with G = 1: the bodies (pos: 3n, mass: n) and
 * the targets (k indices into [0, n)) uploaded into memory of the call's
 * own, the sums made on a stream of its own and the accelerations acc (3k,
 * host, in the order of targets) downloaded; everything is released and
 * the caller's current device kept. For a caller whose bodies are on the
 * host while a GPU is there: the measured error over MPI ranks
 * (src/domain/measure_ranks.c), whose k n pairs (10^9 at 10^6 bodies
 * while planning) take the CPU seconds and these kernels about a
 * millisecond (the upload of 32 bytes a body besides). An index outside
 * [0, n) is TFMM_ERR_INVALID_ARGUMENT, a non-finite result (eps = 0 and
 * two bodies at one point) TFMM_ERR_NONFINITE, each naming the target. */
tfmm_status tfmm_gpu_reference_host_at(int device, size_t n, const double *pos,
                                       const double *mass, size_t k,
                                       const size_t *targets,
                                       const tfmm_pair_params *pair,
                                       double *acc, tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
