/* The planner: theta and order for the accuracy asked, chosen from the
 * error this input shows, not from the calibration's worst input alone.
 *
 * The calibration (accuracy_table.h) gives the settings there are and the
 * cost of each (the GPU's rows first when the near field runs there). The
 * error of a setting on a given input is modelled as f (c theta)^p
 * (TFMM_PLAN_RATIO c), with the factor f measured on this input
 * (pipeline/measure.h). The planner starts from f =
 * TFMM_PLAN_FIRST_FACTOR at the cheapest setting the model says meets
 * accuracy / TFMM_PLAN_MARGIN, measures, and takes f from the measurement.
 * A planning measurement (four tiles of the reference, about 1,000
 * bodies) decides by its bound on the 99th percentile at 95 %; a miss
 * evaluates again at the cheapest setting the new f says meets the target,
 * at most TFMM_PLAN_TRIES evaluations in one call, then one more at the
 * most accurate calibrated setting if all missed. The setting is kept on
 * the solver (tfmm_choice) and measured again once in TFMM_RECHECK_EVERY
 * evaluations (one tile, about 200 bodies: its 99th percentile decides),
 * and at once when the number of bodies or the leaf size changes. After
 * a setting meets the target, the next evaluation at every body tries the
 * cheapest of its tier that the model puts within TFMM_PLAN_PROBE times
 * the target, with a planning measurement; one that misses goes back to
 * the setting that met and bars every one as cheap until the choice
 * begins again. Evaluations at a subset of the bodies use the kept setting and
 * are not measured, so that they give the whole evaluation's forces.
 *
 * Active when theta or order is TFMM_FROM_ACCURACY, measure is not off,
 * the criterion is geometric or mass, and the method a tree method;
 * otherwise the settings are the caller's or the calibration's
 * (tfmm_accuracy_resolve), measured when asked. */
#ifndef TFMM_PLANNER_H
#define TFMM_PLANNER_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* c of the model f (c theta)^p. Under the geometric criterion a target
 * sees each accepted cell at a ratio between theta / 2 (its parent failed
 * the test) and theta, so the 99th percentile falls with the order about
 * as (c theta)^p with c between 1/2 and 1, not as the bound at the
 * criterion's limit, theta^(p+1) / (1 - theta)^2 (which grows 8x too
 * fast between theta 0.5 and 0.7). Fitted over theta 0.4-0.8 and p 3-8
 * on the GPU calibration's inputs at leaf 64 (CAL_BENCH=0 bash
 * bench/device.sh calibrate gpu, bench/results/calibration), c is 0.54 to
 * 0.63 on the Plummer, Hernquist and cluster families and 0.71 to 0.75 on
 * the uniform cube and the line + pile, each within 2-4x of its own fit:
 * the middle, 0.65, errs by at most (0.75 / 0.65)^p' over the p' orders
 * between two settings. The measurement catches what the model gets
 * wrong: a miss measures again, more accurately. */
#define TFMM_PLAN_RATIO 0.65

/* The first guess of f, before any measurement. On the calibration's
 * Plummer, Hernquist and cluster families at 50,000 bodies (the fits
 * above) f is 1.1-1.4; on the planner's bench at 10^6 bodies it is
 * about 0.08 (bench/results/planner): the error at a setting falls with
 * N at a fixed leaf size. 0.3, between them, starts a 10^6-body call at
 * the target 1e-3 from theta 0.7, p 8 or theta 0.6, p 7 rather than from
 * the costliest rows; a miss measures again. */
#define TFMM_PLAN_FIRST_FACTOR 0.3

/* The model must predict an error this many times under the target for a
 * setting to be tried: f is taken from a bound, so this covers only how
 * f varies between settings. */
#define TFMM_PLAN_MARGIN 1.25

/* After a setting met the target, a cheaper one is tried even where the
 * model says it misses, if by no more than this factor (next_cheaper in
 * planner.c); one that misses goes back to the setting that met. */
#define TFMM_PLAN_PROBE 2.0

/* Of the settings next_cheaper may try, the cheapest the model says meets
 * the target is tried first, unless one it puts within TFMM_PLAN_PROBE
 * of the target costs this many times less: a sure step down is one
 * evaluation, a probe that misses two (at 16M bodies the first guess,
 * order 8, went to a probe that missed, then to the order 6 between them,
 * and a second probe below order 6 missed again: two steps of two
 * evaluations; a sure step to order 6 leaves one). */
#define TFMM_PLAN_SURE_SAVING 2.0

/* A setting tried with a planning sample is judged by its bound in up to
 * two looks, where the second can take at least twice the bodies (on a
 * GPU below ~6M bodies; measure.h, tfmm_measure_sample_size's planning
 * 2): the first with the planning sample, its bound at the first
 * confidence; where its p99 meets the target and its bound does not, a
 * second at a fresh sample as large as TFMM_MEASURE_LOOK_PAIRS allows,
 * its bound at the second. At most one false acceptance in
 * 1 / (1 - first + 1 - second) = 20 settings whose true p99 misses, as
 * one look at 95 %. One look at 95 % over ~1,000 bodies (its bound the
 * ~99.5th percentile) turned down order 6 on 1M Plummer bodies (p99
 * 7-9e-4, bound 1.0-1.8e-3) where its true p99 meets 1e-3; the second
 * look's ~12,000 bodies put its bound near the 99.2nd. Where no larger
 * sample fits, one look at TFMM_MEASURE_CONFIDENCE. */
#define TFMM_PLAN_FIRST_LOOK_CONFIDENCE 0.96
#define TFMM_PLAN_SECOND_LOOK_CONFIDENCE 0.99

/* Evaluations one call may make while it chooses by the model (one more,
 * the most accurate calibrated setting, when they all missed). */
#define TFMM_PLAN_TRIES 4

/* The planner's state is the public tfmm_choice (tilefmm.h), so that a
 * simulation's checkpoint keeps it. */
typedef tfmm_choice tfmm_planner;

/* One evaluation, as the planner asks for it: run (theta and order set,
 * the measurement asked for in measure_k, its bound's confidence (0: the
 * measurement's own, TFMM_MEASURE_CONFIDENCE) and seed) into stats. */
typedef tfmm_status (*tfmm_planner_eval)(void *ctx, size_t measure_k,
                                         double confidence, uint64_t seed);

/* Whether the planner chooses theta and order for cfg (above), and under
 * the error criterion its epsilon with them, from the criterion's
 * calibrated rows (each a theta cap, an order and an epsilon; their model
 * is the calibrated error itself). */
int tfmm_planner_active(const tfmm_config *cfg);

/* Whether the planner chooses theta and order for cfg (whole: an
 * evaluation at every body), and if so its first guess for an evaluation
 * with the far field's kernel `kernel` (its rows: tfmm_accuracy_rows),
 * leaves of leaf and the near field on the GPU (near_gpu) in *theta and
 * *order, and under the error criterion *epsilon (NULL: not wanted; what
 * tfmm_plan_resolve reports). */
int tfmm_planner_first_guess(const tfmm_config *cfg, tfmm_far_kernel kernel,
                             int leaf, int near_gpu, double *theta, int *order,
                             double *epsilon);

/* With cfg->verify, TFMM_ERR_ACCURACY (a message naming the measured 99th
 * percentile and the setting) when s measured a 99th percentile above
 * cfg->accuracy; else TFMM_OK. */
tfmm_status tfmm_planner_verified(const tfmm_config *cfg, const tfmm_stats *s,
                                  tfmm_error *err);

/* Evaluates through eval, choosing theta and order into run (cfg: the
 * caller's configuration, run: what the evaluation uses) as above, from
 * the rows of the far field's kernel for n bodies (tfmm_plan_far_kernel,
 * eps relative to the bodies' size from run's internal units), or
 * once with measurement as cfg asks when the planner is not active. n
 * bodies, leaf and near_gpu: the evaluation's. On return stats is the
 * last evaluation's, with stats->plan saying what was chosen and why;
 * with cfg->verify, TFMM_ERR_ACCURACY when the measured 99th percentile
 * is above the target. */
tfmm_status tfmm_planner_run(tfmm_planner *p, const tfmm_config *cfg,
                             tfmm_config *run, size_t n, int leaf, int near_gpu,
                             int whole, tfmm_stats *stats, tfmm_error *err,
                             tfmm_planner_eval eval, void *ctx);

#endif
