/* The error an evaluation measures of itself (tfmm_config.measure,
 * tfmm_stats.error): exact forces at a sample of the bodies, summed in
 * double over every body with the evaluation's softening, compared with
 * the evaluation's own.
 *
 * The sample has two parts. The estimate: k bodies stratified along the
 * tree's key order (stratum j holds sorted bodies [j n / k, (j + 1) n / k)
 * and gives one at random), so that every region of space is seen in
 * proportion to its bodies and the median and 99th percentile are those
 * of a random sample (stratification only narrows their spread). The
 * watch: one body of each of the k / 8 (at most TFMM_MEASURE_WATCH_MAX)
 * smallest and as many largest leaves (the sparsest and the densest
 * places, where a small group alone in a large leaf or a crowd of near
 * neighbours lives), then the body of least |a| (this evaluation's own
 * acceleration) of each of as many leaves whose least |a| is smallest
 * (passing over a leaf where the ends took that very body). The
 * relative error |da| / |a| is largest where |a| is small beside the
 * pulls that make it: where they cancel (the centre of a sphere, a
 * saddle between clusters) and far out (presumably where a large leaf
 * meets the whole system at the opening angle's edge; on 20,000-body
 * Plummer spheres at theta 0.8, order 12 the worst body lies 7 to 22
 * scale radii out, and the watch takes it in six draws of ten:
 * bench/results/watch).
 * Ranked by |a| itself, not by |a| over its leaf's typical one: a body
 * alone far out has no neighbours to compare with, and |a|'s order needs
 * no bound computed beside the evaluation; ties go to the lower body and
 * leaf, so that the CPU and the GPU take the same bodies from the same
 * accelerations. The watch counts in the largest error reported, not in
 * the percentiles, which it would bias.
 *
 * The bound on the 99th percentile over every body: if a fraction 1 % of
 * the bodies have an error above x99, the number of the k sampled above
 * it is Binomial(k, 0.01) (fewer when drawn without replacement), so the
 * (c + 1)-th largest sampled error is at least x99 with probability
 * P(Binomial(k, 0.01) > c); the largest c for which that is >= 0.95 gives
 * the bound. */
#ifndef TFMM_MEASURE_H
#define TFMM_MEASURE_H

#include "pipeline/eval.h"

#include <stddef.h>
#include <stdint.h>

/* The confidence the bound on the 99th percentile is stated at. */
#define TFMM_MEASURE_CONFIDENCE 0.95

/* The reference sums targets a tile at a time (reference_gpu.cu reads the
 * sources once for each 256 targets): a sample of 257 costs what one of
 * 512 does. */
#define TFMM_MEASURE_TILE 256

/* The gpu schedule sums the sample's exact forces in FP32 pairs on
 * double-single separations (reference_gpu.h, tfmm_gpu_reference_fast_at:
 * at most 2.5e-6 kappa of |a|, kappa the pulls' summed magnitudes over
 * |a|; nearer 1e-7 of |a| in fact) where tfmm_config.accuracy is at least
 * this, in FP64 below: errors at such a target are 40 / kappa times the
 * fast sums' worst case or more, and a measured p99 moves by at most
 * 2.5 % of the target where kappa <= 1 (tests/test_measure_fast_gpu.c
 * compares the two), and never when every body is measured (the p99 is
 * then the population's, with no bound to absorb their error). */
#define TFMM_MEASURE_FAST_ACCURACY 1e-4

/* The bodies a measurement samples for the estimate: `requested` if > 0,
 * else what leaves room for the watch in whole tiles: on a GPU the tiles
 * of 2.2e8 / n pairs (one tile, 256 targets, at >= 860,000 bodies: the
 * whole measurement 0.4 to 0.5 ms at 10^6 on an H100 with the fast sums,
 * 0.73 ms with FP64 ones, bench/results/sample_cost; up to 16 at small N),
 * on the CPU one tile; four times as many tiles while the settings are
 * being chosen (planning 1: a bound at 95 %), and on a GPU for a second
 * look at a setting (planning 2, planner.h) up to TFMM_MEASURE_LOOK_TILES
 * times, as many as TFMM_MEASURE_LOOK_PAIRS pairs allow (48 tiles at 10^6,
 * 144 at 262,144, 12 at 4M, the planning's 4 from 6.3M on): a setting's
 * p99 may lie near the target, where a bound at 95 % from ~900 bodies
 * (about their 99.5th percentile) turned down settings whose true p99
 * met it (order 6 at 1M Plummer bodies, measured p99 7.2e-4 and 8.8e-4,
 * bounds 1.02e-3 and 1.53e-3, bench/results/planner); 1.3e10 pairs take
 * ~9 ms of the fast sums on an H200, once while choosing. Every body
 * while planning up to TFMM_MEASURE_EVERY_BODY bodies (no more pairs
 * than 4 tiles at 16,384 bodies: the choice then meets the target
 * exactly, where a bound at 95 % let 1 choice in 20 miss it); never more
 * than n. */
#define TFMM_MEASURE_EVERY_BODY 4096
#define TFMM_MEASURE_LOOK_PAIRS 1.3e10
#define TFMM_MEASURE_LOOK_TILES 48
size_t tfmm_measure_sample_size(size_t n, int requested, int planning, int gpu);

/* The worst group's bodies measured at most (tfmm_stats.error.group_*):
 * one tile of the reference. */
#define TFMM_MEASURE_GROUP_MAX TFMM_MEASURE_TILE

/* The statistics of the m errors err[] (sorted in place) of a group of
 * `bodies` into stats->error.group_*. */
void tfmm_measure_group_judge(size_t m, size_t bodies, double *err,
                              tfmm_stats *stats);

/* The watch's leaves in each of its parts (the smallest, the largest,
 * those of least |a|): at most this many. */
#define TFMM_MEASURE_WATCH_MAX 32
#define TFMM_MEASURE_WATCH_PARTS 3

/* The estimate's k sorted indices in [0, n), stratified, from seed. */
void tfmm_measure_pick(size_t n, size_t k, uint64_t seed, int64_t *sorted);

/* The watch's sorted indices: one body (chosen from seed) of each of the
 * `each` smallest and `each` largest of nleaves leaves (leaf l holds
 * sorted bodies [begin[l], begin[l] + count[l]); the first in key order
 * at each end), then, with a2 (the sorted bodies' tfmm_measure_a2 keys,
 * n; NULL: none), the body of least key (the first on ties) of each of
 * the `each` leaves whose least key is smallest and finite (ties: the
 * lower leaf; a leaf is passed over where the body the ends took of it,
 * the high end's if both did, is that body), in that order; writes at
 * most 3 * each, returns how many (fewer when there are fewer leaves). */
size_t tfmm_measure_watch(int64_t nleaves, const int64_t *begin,
                          const int32_t *count, size_t each, uint64_t seed,
                          const double *a2, int64_t *sorted);

/* |a - b| / |b| of 3-vectors (a measured error); 0 when both are 0,
 * infinite when b is 0 and a is not. */
double tfmm_measure_relative(const double *a, const double *b);

/* The rank from the top, c + 1, of the sampled error that bounds the
 * 99th percentile at `confidence` among k: c the largest below k with
 * P(Binomial(k, 0.01) > c) >= confidence, or 0 when none is (the
 * largest error then); that probability in *achieved (if not NULL). */
size_t tfmm_measure_bound_rank(size_t k, double confidence, double *achieved);

/* The statistics of k errors of the estimate and w more of the watch
 * (err[0..k) then err[k..k+w); index[] their input indices) into
 * stats->error, of n bodies in all, the bound on the p99 at `confidence`
 * (0: TFMM_MEASURE_CONFIDENCE); sorts err[0..k) in place. When k is n
 * (every body) the p99 is the population's and its bound is itself, at
 * confidence 1. */
void tfmm_measure_judge(size_t k, size_t w, size_t n, double confidence,
                        double *err, const int64_t *index, tfmm_stats *stats);

/* The stages (schedule.h): the measurement of the evaluation just made,
 * when e->measure_k > 0 and it is at every body. measure: the tree on the
 * host (the hybrid schedules), the reference summed on the CPU; gpu_measure:
 * the gpu schedule's tree, the reference summed on the GPU. */
tfmm_status tfmm_stage_measure(tfmm_eval *e);
tfmm_status tfmm_stage_gpu_measure(tfmm_eval *e);

#endif
