#include "planner.h"

#include "accuracy.h"
#include "accuracy_table.h"
#include "config.h"
#include "pipeline/measure.h"
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAX_ROWS = 1024 };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The rows the planner may choose among, in two tiers: with the near
 * field on the GPU, first the rows calibrated there (their costs are the
 * GPU's: 4.6 between theta 0.4, p 8 and theta 0.6, p 5, as issue 28
 * measured 41 against 9 ms at 10^6 bodies), whatever their leaf size,
 * since the planner measures the error and needs of a row only its cost
 * and how its error compares with the others'; then the CPU's, which
 * reach further (smaller theta, higher orders) at costs of their own.
 * Held to the caller's theta, order or (the error criterion) epsilon when
 * one is given. *tier: how many rows the first tier holds. */
static size_t candidates(const tfmm_config *cfg, tfmm_far_kernel kernel,
                         int near_gpu, const tfmm_accuracy_row **rows,
                         size_t *tier) {
  size_t m = 0, count = 0;
  const tfmm_accuracy_row *table = tfmm_accuracy_rows(kernel, &count);
  /* The error criterion's rows carry their epsilon (> 0), the others 0. */
  const int error_rows = cfg->mac == TFMM_MAC_ERROR;
  *tier = 0;
  for (int pass = near_gpu ? 1 : 0; pass >= 0; pass--) {
    for (size_t k = 0; k < count && m < MAX_ROWS; k++) {
      const tfmm_accuracy_row *r = &table[k];
      if (r->method != cfg->method || r->mac != cfg->mac ||
          r->near_gpu != pass || (r->epsilon > 0) != error_rows)
        continue;
      if (error_rows && cfg->mac_epsilon >= 0 &&
          fabs(r->epsilon - cfg->mac_epsilon) > 1e-12 * cfg->mac_epsilon)
        continue;
      if (cfg->theta >= 0 && fabs(r->theta - cfg->theta) > 1e-9)
        continue;
      if (cfg->order >= 0 && r->order != cfg->order)
        continue;
      rows[m++] = r;
    }
    if (pass == 1)
      *tier = m;
  }
  return m;
}

/* The error model of a row, up to the input's factor: (c theta)^p
 * (planner.h, TFMM_PLAN_RATIO). The calibration's own errors are its
 * worst input's, whose ratios between rows jump (at theta 0.6 on the GPU,
 * p 4 and 5 both 0.25): smooth ratios transfer better between settings. */
static double model(const tfmm_accuracy_row *r) {
  /* The error criterion's rows: their calibrated error (its epsilon and
   * theta, a cap, act together; no smooth law in both was fitted). */
  if (r->epsilon > 0)
    return r->error;
  return pow(TFMM_PLAN_RATIO * r->theta, r->order);
}

/* The cheapest row whose modelled error f r.error is at most limit, among
 * those with a model below below (INFINITY: any) and a cost above above
 * (-1: any), from the first tier if one there qualifies; NULL if none. */
static const tfmm_accuracy_row *cheapest(const tfmm_accuracy_row **rows,
                                         size_t m, size_t tier, double f,
                                         double limit, double below,
                                         double above) {
  const tfmm_accuracy_row *best = NULL;
  for (size_t j = 0; j < m; j++) {
    if (j == tier && best != NULL)
      break;
    const tfmm_accuracy_row *r = rows[j];
    if (!(model(r) < below) || f * model(r) > limit || r->cost <= above)
      continue;
    if (best == NULL || r->cost < best->cost ||
        (r->cost == best->cost && model(r) < model(best)))
      best = r;
  }
  return best;
}

/* The most accurate row by the model, below below; NULL if none. */
static const tfmm_accuracy_row *most_accurate(const tfmm_accuracy_row **rows,
                                              size_t m, double below) {
  const tfmm_accuracy_row *best = NULL;
  for (size_t j = 0; j < m; j++)
    if (model(rows[j]) < below &&
        (best == NULL || model(rows[j]) < model(best)))
      best = rows[j];
  return best;
}

/* The setting a measured evaluation tries after one that met the target
 * with factor f (from): the cheapest row, dearer than failed, that the
 * model puts within TFMM_PLAN_PROBE times the target. The model is a fit
 * to within 2-4x (planner.h), so the measurement, not the model, decides
 * between neighbouring settings; a miss goes back to from and bars every
 * setting as cheap (failed). Only rows of from's tier: the tiers' costs
 * are of different devices. NULL: none cheaper. */
static const tfmm_accuracy_row *cheaper_within(const tfmm_accuracy_row **rows,
                                               size_t m, double f, double limit,
                                               const tfmm_accuracy_row *from,
                                               double failed) {
  const tfmm_accuracy_row *probe = NULL;
  for (size_t j = 0; j < m; j++) {
    const tfmm_accuracy_row *c = rows[j];
    if (c->near_gpu != from->near_gpu || c->cost >= from->cost ||
        c->cost <= failed || f * model(c) > limit)
      continue;
    if (probe == NULL || c->cost < probe->cost ||
        (c->cost == probe->cost && model(c) < model(probe)))
      probe = c;
  }
  return probe;
}

static const tfmm_accuracy_row *next_cheaper(const tfmm_accuracy_row **rows,
                                             size_t m, double f, double tol,
                                             const tfmm_accuracy_row *from,
                                             double failed) {
  const tfmm_accuracy_row *sure = cheaper_within(rows, m, f, tol, from, failed),
                          *maybe = cheaper_within(
                              rows, m, f, TFMM_PLAN_PROBE * tol, from, failed);
  return sure != NULL && maybe != NULL &&
                 maybe->cost * TFMM_PLAN_SURE_SAVING >= sure->cost
             ? sure
             : maybe;
}

/* Whether row r is the setting (theta, order, epsilon); epsilon 0 for
 * the criteria without one. */
static int same_setting(const tfmm_accuracy_row *r, double theta, int order,
                        double epsilon) {
  return r->theta == theta && r->order == order && r->epsilon == epsilon;
}

/* The evaluation's settings from row r: theta and order, and the error
 * criterion's epsilon with its row. */
static void set_run(tfmm_config *run, const tfmm_accuracy_row *r) {
  run->theta = r->theta;
  run->order = r->order;
  if (r->epsilon > 0)
    run->mac_epsilon = r->epsilon;
}

int tfmm_planner_active(const tfmm_config *cfg) {
  const int open = cfg->theta < 0 || cfg->order < 0 ||
                   (cfg->mac == TFMM_MAC_ERROR && cfg->mac_epsilon < 0);
  return open && cfg->measure != TFMM_MEASURE_OFF &&
         tfmm_method_is_tree(cfg->method) && !cfg->near_only;
}

int tfmm_planner_first_guess(const tfmm_config *cfg, tfmm_far_kernel kernel,
                             int leaf, int near_gpu, double *theta, int *order,
                             double *epsilon) {
  (void)leaf; /* the rows of every leaf size apply (candidates) */
  const tfmm_accuracy_row *rows[MAX_ROWS];
  size_t tier = 0;
  const size_t m = tfmm_planner_active(cfg)
                       ? candidates(cfg, kernel, near_gpu, rows, &tier)
                       : 0;
  if (m == 0)
    return 0;
  const tfmm_accuracy_row *r =
      cheapest(rows, m, tier, TFMM_PLAN_FIRST_FACTOR,
               cfg->accuracy / TFMM_PLAN_MARGIN, INFINITY, -1);
  if (r == NULL)
    r = most_accurate(rows, m, INFINITY);
  *theta = r->theta;
  *order = r->order;
  if (epsilon != NULL && r->epsilon > 0)
    *epsilon = r->epsilon;
  return 1;
}

/* With verify: the measured 99th percentile against the target. */
tfmm_status tfmm_planner_verified(const tfmm_config *cfg, const tfmm_stats *s,
                                  tfmm_error *err) {
  if (!cfg->verify || !s->error.measured || s->error.p99 <= cfg->accuracy)
    return TFMM_OK;
  return tfmm_error_set(
      err, TFMM_ERR_ACCURACY,
      "verify: the measured 99th percentile of the relative acceleration "
      "error is %.3g (largest %.3g at body %lld; %zu bodies sampled), above "
      "the target %g, at theta %g, order %d, leaf %d, %s precision",
      s->error.p99, s->error.max, (long long)s->error.worst_body,
      s->error.samples, cfg->accuracy, s->theta, s->order, s->leaf_size,
      s->precision == TFMM_PRECISION_DOUBLE ? "double" : "single");
}

/* Evaluations not planned: the caller's or the calibration's settings,
 * measured when asked. */
static tfmm_status unplanned(tfmm_planner *p, const tfmm_config *cfg, size_t n,
                             int gpu, tfmm_stats *stats, tfmm_error *err,
                             tfmm_planner_eval eval, void *ctx) {
  const int measure = tfmm_method_is_tree(cfg->method) &&
                      (cfg->measure == TFMM_MEASURE_ALWAYS || cfg->verify);
  const size_t k =
      measure ? tfmm_measure_sample_size(n, cfg->error_sample, 0, gpu) : 0;
  tfmm_status st = eval(ctx, k, 0, p->evaluations++);
  if (st != TFMM_OK)
    return st;
  if (tfmm_method_is_tree(cfg->method))
    snprintf(stats->plan, sizeof stats->plan, "theta %g, order %d: %s",
             stats->theta, stats->order,
             cfg->theta >= 0 && cfg->order >= 0 ? "as given"
             : cfg->mac == TFMM_MAC_ERROR
                 ? "from the calibration (the error criterion)"
                 : "from the calibration (measure off)");
  return tfmm_planner_verified(cfg, stats, err);
}

static void describe(const tfmm_planner *p, const tfmm_stats *s, int tries,
                     int met, const char *next, const char *missed, char *out,
                     size_t size) {
  /* The error criterion's epsilon, with the setting it belongs to. */
  char eps[48] = "";
  if (p->epsilon > 0)
    snprintf(eps, sizeof eps, ", epsilon %g", p->epsilon);
  if (!s->error.measured) {
    snprintf(out, size,
             "theta %g, order %d%s: kept (measured %d evaluations ago, the "
             "input's error %.3g of the calibration's)",
             p->theta, p->order, eps, p->since, p->factor);
    return;
  }
  /* Every body measured: the p99 itself, no bound. */
  char seen[96];
  if (s->error.confidence >= 1)
    snprintf(seen, sizeof seen, "every body, %zu", s->error.samples);
  else
    snprintf(seen, sizeof seen, "<= %.3g at %.3g %%, %zu bodies",
             s->error.p99_bound, 100 * s->error.confidence, s->error.samples);
  const int len = snprintf(
      out, size,
      "theta %g, order %d%s: measured p99 %.3g (%s) %s %g after %d "
      "evaluation%s; this input's error is %.3g of the calibration's",
      s->theta, s->order, eps, s->error.p99, seen, met ? "meets" : "MISSES",
      p->accuracy, tries, tries == 1 ? "" : "s", p->factor);
  if (len > 0 && (size_t)len < size)
    snprintf(out + len, size - (size_t)len, "%s%s", missed, next);
}

/* What a second look's bound would be (its k2 bodies at
 * TFMM_PLAN_SECOND_LOOK_CONFIDENCE), from the first's (k1 at
 * TFMM_PLAN_FIRST_LOOK_CONFIDENCE): the errors' tail taken as a power
 * law through the first look's p99 and bound (the bound is the sample's
 * quantile 1 - r / k1 for its rank r, tfmm_measure_bound_rank), the
 * second's bound at its own quantile on it. Only whether to look again
 * rests on this: a look whose bound could not meet costs an evaluation
 * and its sums (~20 ms at 1M bodies) for nothing. */
static double second_bound(const tfmm_stats *s, size_t k1, size_t k2) {
  const double p99 = s->error.p99, bound = s->error.p99_bound;
  const double r1 = 0.01 * (double)k1 /
                    (double)tfmm_measure_bound_rank(
                        k1, TFMM_PLAN_FIRST_LOOK_CONFIDENCE, NULL);
  const double r2 = 0.01 * (double)k2 /
                    (double)tfmm_measure_bound_rank(
                        k2, TFMM_PLAN_SECOND_LOOK_CONFIDENCE, NULL);
  if (!(p99 > 0) || !(bound > p99) || !(r1 > 1) || !(r2 > 1))
    return bound;
  return p99 * pow(r2, log(bound / p99) / log(r1));
}

/* The settings this call tried and left, for describe: "; before, theta
 * T, order P: p99 X (<= B at 95 %), missed" each (`what`: "missed", or
 * "looked at again" for a first look of two), as long as room lasts. */
static void note_missed(const tfmm_stats *s, const char *what, char *missed,
                        size_t size) {
  const size_t used = strlen(missed);
  if (used + 1 >= size)
    return;
  char seen[64];
  if (s->error.confidence >= 1)
    snprintf(seen, sizeof seen, "every body");
  else
    snprintf(seen, sizeof seen, "<= %.3g at %.3g %%", s->error.p99_bound,
             100 * s->error.confidence);
  snprintf(missed + used, size - used,
           "; before, theta %g, order %d: p99 %.3g (%s, %zu bodies) %s",
           s->theta, s->order, s->error.p99, seen, s->error.samples, what);
}

tfmm_status tfmm_planner_run(tfmm_planner *p, const tfmm_config *cfg,
                             tfmm_config *run, size_t n, int leaf, int near_gpu,
                             int whole, tfmm_stats *stats, tfmm_error *err,
                             tfmm_planner_eval eval, void *ctx) {
  /* The kernel resolved once, for the evaluations below (run's theta and
   * order are set, so run would resolve auto differently). */
  const tfmm_far_kernel kernel =
      tfmm_plan_far_kernel(cfg, near_gpu, n, run->eps);
  run->far_kernel = kernel;
  const tfmm_accuracy_row *rows[MAX_ROWS];
  size_t tier = 0;
  const size_t m = tfmm_planner_active(cfg)
                       ? candidates(cfg, kernel, near_gpu, rows, &tier)
                       : 0;
  if (m == 0)
    return unplanned(p, cfg, n, near_gpu, stats, err, eval, ctx);
  const double tol = cfg->accuracy;
  /* A kept setting is of the kernel it was chosen for (the kernel follows
   * n: tfmm_plan_far_kernel). */
  if (p->chosen &&
      (p->accuracy != tol || p->near_gpu != near_gpu ||
       p->precision != cfg->precision ||
       (p->epsilon > 0) != (cfg->mac == TFMM_MAC_ERROR) ||
       tfmm_plan_far_kernel(cfg, p->near_gpu, p->n, run->eps) != kernel))
    p->chosen = 0;
  /* A setting's row: the first tier's where both tiers hold it (its cost
   * is what runs; taking the second's CPU cost made the kept setting look
   * dearer than it is, and the planner alternated between two settings,
   * measuring at every call). */
  const tfmm_accuracy_row *pick = NULL;
  for (size_t j = 0; p->chosen && pick == NULL && j < m; j++)
    if (same_setting(rows[j], p->theta, p->order, p->epsilon))
      pick = rows[j];
  if (pick == NULL) {
    double theta = 0, epsilon = 0;
    int order = 0;
    p->chosen = 0;
    p->factor = TFMM_PLAN_FIRST_FACTOR;
    tfmm_planner_first_guess(cfg, kernel, leaf, near_gpu, &theta, &order,
                             &epsilon);
    for (size_t j = 0; pick == NULL && j < m; j++)
      if (same_setting(rows[j], theta, order, epsilon))
        pick = rows[j];
  }
  if (!whole) {
    /* A subset's evaluation, neither measured nor counted: the kept
     * setting, so that it gives what the whole evaluation gives at its
     * targets; before any choice, the calibration's (made for its worst
     * input: safe unmeasured). */
    if (p->chosen)
      set_run(run, pick);
    tfmm_status st = eval(ctx, 0, 0, p->evaluations);
    if (st == TFMM_OK)
      snprintf(stats->plan, sizeof stats->plan,
               "theta %g, order %d: %s (a subset: not measured)", stats->theta,
               stats->order,
               p->chosen ? "kept" : "the calibration's, nothing chosen yet");
    return st;
  }
  const tfmm_stats fresh = *stats;
  /* Other bodies (a count that changed) or leaves: measured at once. */
  int measure = !p->chosen || p->since + 1 >= TFMM_RECHECK_EVERY || p->n != n ||
                p->leaf != leaf || cfg->measure == TFMM_MEASURE_ALWAYS ||
                cfg->verify;
  int planning = !p->chosen || p->n != n || p->leaf != leaf;
  /* A measured evaluation after a choice tries a cheaper setting first
   * (next_cheaper: of the kept one's tier, dearer than any that missed
   * since the choice began); a miss goes back to the kept one. */
  const tfmm_accuracy_row *kept = p->chosen ? pick : NULL;
  if (p->chosen && measure) {
    const tfmm_accuracy_row *cheaper =
        next_cheaper(rows, m, p->factor, tol, pick, p->failed_cost);
    if (cheaper != NULL) {
      pick = cheaper;
      planning = 1;
    }
  }
  if (!p->chosen)
    p->failed_cost = -1;
  const char *next = "";
  char missed[256] = "";
  int met = 0, tries = 0, look = 1;
  /* Back at the setting kept after a cheaper one missed: the last
   * planning measurement passed it, so this one is a recheck. */
  int returned = 0;
  for (;;) {
    set_run(run, pick);
    /* A planning sample is judged in up to two looks where the second can
     * take at least twice the bodies (TFMM_PLAN_FIRST_LOOK_CONFIDENCE,
     * TFMM_PLAN_SECOND_LOOK_CONFIDENCE); else in one look at the
     * measurement's own. */
    const size_t k_plan =
        measure
            ? tfmm_measure_sample_size(n, cfg->error_sample, planning, near_gpu)
            : 0;
    const size_t k_more =
        planning ? tfmm_measure_sample_size(n, cfg->error_sample, 2, near_gpu)
                 : 0;
    const int two_looks = !returned && k_plan > 0 && k_more >= 2 * k_plan;
    const size_t k = two_looks && look == 2 ? k_more : k_plan;
    *stats = fresh;
    tfmm_status st = eval(ctx, k,
                          !two_looks  ? 0
                          : look == 1 ? TFMM_PLAN_FIRST_LOOK_CONFIDENCE
                                      : TFMM_PLAN_SECOND_LOOK_CONFIDENCE,
                          p->evaluations++);
    if (st != TFMM_OK)
      return st;
    tries++;
    p->chosen = 1;
    p->theta = pick->theta;
    p->order = pick->order;
    p->epsilon = pick->epsilon;
    p->accuracy = tol;
    p->leaf = leaf;
    p->near_gpu = near_gpu;
    p->precision = cfg->precision;
    p->n = n;
    if (!stats->error.measured) {
      p->since++;
      break;
    }
    p->since = 0;
    /* A planning sample decides by its bound; a routine recheck (one
     * tile: its bound is the largest error, at 87 % or so) and a return
     * to the setting kept by its 99th percentile, a miss then choosing
     * again with a planning sample. Judged by its bound, the setting kept
     * went through a second look again at each return (~20 ms at 1M
     * bodies) or was left for a dearer one by a sample's chance. */
    const double seen = planning ? stats->error.p99_bound : stats->error.p99;
    met = (returned ? stats->error.p99 : seen) <= tol;
    returned = 0;
    if (planning || !met)
      p->factor = fmax(seen, 1e-16) / model(pick);
    /* A first look whose bound misses the target where a second's, at
     * the larger sample, would meet it by the first's tail: the second
     * (TFMM_PLAN_SECOND_LOOK_CONFIDENCE). */
    if (!met && two_looks && look == 1 && stats->error.confidence < 1 &&
        second_bound(stats, k_plan, k_more) <= tol && tries < TFMM_PLAN_TRIES) {
      note_missed(stats, "looked at again", missed, sizeof missed);
      look = 2;
      continue;
    }
    look = 1;
    if (met) {
      const tfmm_accuracy_row *cheaper =
          next_cheaper(rows, m, p->factor, tol, pick, p->failed_cost);
      if (cheaper != NULL) {
        p->since = TFMM_RECHECK_EVERY; /* the next one tries it */
        next = "; the next evaluation tries a cheaper setting";
      }
      break;
    }
    note_missed(stats, "missed", missed, sizeof missed);
    /* A cheaper setting tried after one that met bars every setting as
     * cheap as it; a miss while no setting has met bars nothing (costs are
     * not monotone in accuracy: p 9 and 10 cost 4-8x p 8). */
    if (kept != NULL && pick->cost < kept->cost && pick->cost > p->failed_cost)
      p->failed_cost = pick->cost;
    /* A cheaper setting tried after the kept one met: the cheapest
     * setting between the two that the new f says meets the target with
     * the margin, when one costs less than the kept one (failed_cost bars
     * the one that missed and every cheaper one), else back to the kept
     * one, which the last measurement passed. Trying the one between
     * first settles in one call what going back settled in one call per
     * setting: at 16M bodies a probe missed, the kept order 8 was
     * evaluated again (305 ms against 97 at the order 6 finally kept) and
     * the next call probed again. Without a kept one: the cheapest the
     * new f says meets the target, or the most accurate. */
    const int back =
        kept != NULL && kept->cost > pick->cost && model(kept) < model(pick);
    const tfmm_accuracy_row *between =
        back ? cheapest(rows, m, tier, p->factor, tol / TFMM_PLAN_MARGIN,
                        model(pick), p->failed_cost)
             : NULL;
    const tfmm_accuracy_row *better =
        !back ? cheapest(rows, m, tier, p->factor, tol / TFMM_PLAN_MARGIN,
                         model(pick), -1)
        : between != NULL && between->cost < kept->cost &&
                between->near_gpu == kept->near_gpu &&
                tries + 1 < TFMM_PLAN_TRIES
            ? between
            : kept;
    if (better == NULL)
      better = most_accurate(rows, m, model(pick));
    p->since = TFMM_RECHECK_EVERY; /* measured again next time */
    /* The model missed at every try: the last takes the most accurate
     * calibrated setting, so that a call ends within the target where any
     * calibrated setting reaches it (a 4,000-body clustered input measured
     * 20x the calibration's error and missed 1e-4 by 12 % after 4 tries;
     * later rechecks try cheaper settings again). */
    if (better != NULL && tries == TFMM_PLAN_TRIES)
      better = most_accurate(rows, m, model(pick));
    if (better == NULL || tries > TFMM_PLAN_TRIES) {
      next = better == NULL ? "; no calibrated setting is more accurate"
                            : "; stopped choosing (too many evaluations)";
      break;
    }
    returned = better == kept;
    pick = better;
    measure = 1;
    planning = 1;
  }
  describe(p, stats, tries, met, next, missed, stats->plan, sizeof stats->plan);
  return tfmm_planner_verified(cfg, stats, err);
}
