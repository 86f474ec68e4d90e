/* The planner: theta and order for the accuracy asked, chosen from the
 * error this input shows, not from the calibration's worst input alone.
 *
 * The calibration (accuracy_table.h) gives, for each setting, its cost
 * and its error on the worst of adversarial families. On a given input
 * the error of every setting is about a fixed fraction f of that (from
 * 1/300 on a Plummer sphere to 5 on a softened pile at 10^6 bodies,
 * issue 28's table): the model is error(s) = f table(s). The planner
 * starts from f = TFMM_PLAN_FIRST_FACTOR, evaluates at the cheapest
 * setting the model says meets accuracy / TFMM_PLAN_MARGIN, measures
 * (pipeline/measure.h), and takes f from the measurement; when the
 * measured bound on the 99th percentile is above the target it evaluates
 * again at the cheapest setting the new f says meets it (a more accurate
 * one), at most TFMM_PLAN_TRIES times. The setting is kept on the solver
 * and measured again once in TFMM_RECHECK_EVERY evaluations and whenever
 * the number of bodies changes: a miss chooses again at once; a setting
 * more than 10 times more accurate than asked is measured again at the
 * next evaluation, from the cheapest setting the model says meets the
 * target. Evaluations at a subset of the bodies use the kept setting and
 * are not measured, so that they give the whole evaluation's forces.
 *
 * Active when theta or order is TFMM_FROM_ACCURACY, measure is not off,
 * the criterion is geometric or mass, and the evaluation is at every
 * body; otherwise the settings are the caller's or the calibration's
 * (tfmm_accuracy_resolve), measured when asked. */
#ifndef TFMM_PLANNER_H
#define TFMM_PLANNER_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* The first guess of f, before any measurement: clustered inputs showed
 * 0.015, smooth ones 0.003 to 0.005 (issue 28); a larger f would start
 * from a costlier setting every time. */
#define TFMM_PLAN_FIRST_FACTOR 0.02

/* The model must predict an error this many times under the target for a
 * setting to be tried (its fraction f varies between settings). */
#define TFMM_PLAN_MARGIN 2.0

/* Evaluations one call may make while it chooses. */
#define TFMM_PLAN_TRIES 4

/* The planner's state is the public tfmm_choice (tilefmm.h), so that a
 * simulation's checkpoint keeps it. */
typedef tfmm_choice tfmm_planner;

/* One evaluation, as the planner asks for it: run (theta and order set,
 * the measurement asked for in measure_k and seed) into stats. */
typedef tfmm_status (*tfmm_planner_eval)(void *ctx, size_t measure_k,
                                         uint64_t seed);

/* Whether the planner chooses theta and order for cfg (whole: an
 * evaluation at every body), and if so its first guess for an evaluation
 * with leaves of leaf and the near field on the GPU (near_gpu) in *theta
 * and *order (what tfmm_plan_resolve reports). */
int tfmm_planner_first_guess(const tfmm_config *cfg, int leaf, int near_gpu,
                             double *theta, int *order);

/* Evaluates through eval, choosing theta and order into run (cfg: the
 * caller's configuration, run: what the evaluation uses) as above, or
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
