/* The planner's search (src/planner.c) against error functions known in
 * closed form: each evaluation "measures" err = f (c theta)^p, the law the
 * planner's model assumes, with c and f unlike its own (c 0.45-0.9, f
 * 0.05-2), so that its first guesses and steps are wrong as on a real
 * input. The planner must settle (only its rechecks measured after a few
 * calls), on a setting that meets the target, among the rows of the tier
 * that runs (the GPU's with the near field there), close to the cheapest
 * such row; regression: a setting held by both tiers took the CPU row's
 * cost and the planner alternated between two settings, measuring every
 * call. */
#include "accuracy_table.h"
#include "pipeline/measure.h"
#include "planner.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct synthetic {
  tfmm_config *run;
  tfmm_stats *stats;
  double c, f;
  int measured; /* evaluations that measured */
  double cost;  /* the evaluated rows' costs, summed */
} synthetic;

static double truth(const synthetic *x, double theta, int order) {
  return x->f * pow(x->c * theta, order);
}

/* The row of a setting in a tier, or NULL. */
static const tfmm_accuracy_row *row_of(double theta, int order, int gpu) {
  for (size_t j = 0; j < COUNT(TFMM_ACCURACY_TABLE); j++) {
    const tfmm_accuracy_row *r = &TFMM_ACCURACY_TABLE[j];
    if (r->method == TFMM_METHOD_FMM && r->mac == TFMM_MAC_GEOMETRIC &&
        r->near_gpu == gpu && r->epsilon == 0 &&
        fabs(r->theta - theta) < 1e-9 && r->order == order)
      return r;
  }
  return NULL;
}

/* The bound a sample of k bodies gives at `confidence` on the 99th
 * percentile of errors with a power-law tail (the fraction above x falls
 * as x^-2: Plummer spheres' measured 99.5th percentiles lie ~1.4x their
 * 99th, bench/results/planner): the (c + 1)-th largest of k, c the largest
 * with P(Binomial(k, 0.01) > c) >= confidence, lies near the quantile
 * 1 - (c + 1) / k, which is (0.01 k / (c + 1))^(1/2) times the p99: 1.43x
 * over 1,024 bodies at 95 % (and at 96 %), 1.12x over ~12,000 at 99 %;
 * 1.6x over 256 at 95 % (c 0: the largest). Summed here independently of
 * the measurement's own (pipeline/measure.c). */
static double bound_factor(size_t k, double confidence) {
  const double p = 0.01;
  double term = pow(1 - p, (double)k), below = term; /* P(X <= c) */
  size_t c = 0;
  for (;;) {
    const double next = term * (double)(k - c) / (double)(c + 1) * p / (1 - p);
    if (1 - (below + next) < confidence)
      break;
    term = next;
    below += next;
    c++;
  }
  /* P(X > 0) below the confidence: the largest sampled, its quantile
   * 1 - 1 / k taken as the bound */
  return sqrt(p * (double)k / (double)(c + 1));
}

/* A measurement: the p99 itself, its bound bound_factor times it. */
static tfmm_status evaluate(void *ctx, size_t k, double confidence,
                            uint64_t seed) {
  (void)seed;
  const double gamma = confidence > 0 ? confidence : TFMM_MEASURE_CONFIDENCE;
  synthetic *x = ctx;
  const double e = truth(x, x->run->theta, x->run->order);
  memset(&x->stats->error, 0, sizeof x->stats->error);
  x->stats->theta = x->run->theta;
  x->stats->order = x->run->order;
  x->stats->error.measured = k > 0;
  x->stats->error.samples = k;
  x->stats->error.p99 = e;
  x->stats->error.p99_bound = k > 0 ? e * bound_factor(k, gamma) : 0;
  x->stats->error.confidence = gamma;
  x->measured += k > 0;
  const tfmm_accuracy_row *r = row_of(x->run->theta, x->run->order, 1);
  x->cost += r != NULL ? r->cost : 0;
  return TFMM_OK;
}

/* The least factor a bound that accepted a setting can carry here: the
 * larger sample's at 99 % (1.12x over ~12,000 bodies), where a planning
 * sample at 95 % carries 1.43x. */
static double least_margin(void) {
  return bound_factor(tfmm_measure_sample_size(1 << 20, 0, 2, 1),
                      TFMM_PLAN_SECOND_LOOK_CONFIDENCE);
}

/* The cheapest row of the tier whose bound (least_margin) meets tol. */
static const tfmm_accuracy_row *cheapest_meeting(const synthetic *x, int gpu,
                                                 double tol) {
  const tfmm_accuracy_row *best = NULL;
  for (size_t j = 0; j < COUNT(TFMM_ACCURACY_TABLE); j++) {
    const tfmm_accuracy_row *r = &TFMM_ACCURACY_TABLE[j];
    if (r->method != TFMM_METHOD_FMM || r->mac != TFMM_MAC_GEOMETRIC ||
        r->near_gpu != gpu || r->epsilon != 0)
      continue;
    if (least_margin() * truth(x, r->theta, r->order) <= tol &&
        (best == NULL || r->cost < best->cost))
      best = r;
  }
  return best;
}

/* A planner on the synthetic input (c, f) at target tol, called as an
 * evaluation at every body of 2^20 would call it. */
typedef struct trial {
  tfmm_config cfg, run;
  tfmm_planner p;
  tfmm_stats stats;
  tfmm_error err;
  synthetic x;
} trial;

static void trial_begin(trial *t, double c, double f, double tol) {
  memset(t, 0, sizeof *t);
  tfmm_config_defaults(&t->cfg);
  t->cfg.accuracy = tol;
  t->run = t->cfg;
  t->x = (synthetic){&t->run, &t->stats, c, f, 0, 0};
}

static void trial_call(trial *t) {
  memset(&t->stats, 0, sizeof t->stats);
  t->run = t->cfg;
  cr_assert_eq(tfmm_planner_run(&t->p, &t->cfg, &t->run, 1 << 20, 64, 1, 1,
                                &t->stats, &t->err, evaluate, &t->x),
               TFMM_OK);
}

static void settles(double c, double f, double tol) {
  trial t;
  trial_begin(&t, c, f, tol);
  const tfmm_planner *pl = &t.p;
  const synthetic *xs = &t.x;
  enum { CALLS = 40, SETTLED = 10 };
  int measured_late = 0;
  for (int call = 0; call < CALLS; call++) {
    const int before = t.x.measured;
    trial_call(&t);
    if (call >= SETTLED)
      measured_late += t.x.measured - before;
  }
  const char *what = t.stats.plan;
  /* After SETTLED calls only the rechecks, one in TFMM_RECHECK_EVERY. */
  cr_expect_leq(measured_late, (CALLS - SETTLED) / TFMM_RECHECK_EVERY + 1,
                "c %g f %g: %d of the last %d calls measured (%s)", c, f,
                measured_late, CALLS - SETTLED, what);
  cr_expect_leq(least_margin() * truth(xs, pl->theta, pl->order), tol,
                "c %g f %g: theta %g order %d misses %g", c, f, pl->theta,
                pl->order, tol);
  const tfmm_accuracy_row *kept = row_of(pl->theta, pl->order, 1);
  cr_assert_not_null(kept, "c %g f %g: theta %g order %d is not a GPU row", c,
                     f, pl->theta, pl->order);
  const tfmm_accuracy_row *best = cheapest_meeting(xs, 1, tol);
  cr_assert_not_null(best);
  /* Close to the cheapest: the descent stops at the first miss below a
   * setting that met, and the model is only a model. With one look at
   * 95 % 15 of these 40 points kept a dearer setting (the mean 1.059x the
   * cheapest); with two looks none. */
  cr_expect_leq(kept->cost, 1.1 * best->cost,
                "c %g f %g tol %g: kept theta %g p %d (cost %g), cheapest "
                "meeting theta %g p %d (cost %g)",
                c, f, tol, pl->theta, pl->order, kept->cost, best->theta,
                best->order, best->cost);
}

Test(planner, settles_near_the_cheapest_gpu_row) {
  const double cs[] = {0.45, 0.55, 0.65, 0.8, 0.9};
  const double fs[] = {0.05, 0.3, 1, 2};
  for (size_t i = 0; i < COUNT(cs); i++)
    for (size_t j = 0; j < COUNT(fs); j++) {
      settles(cs[i], fs[j], 1e-3);
      settles(cs[i], fs[j], 1e-2);
    }
}

/* What the calls after the first guess cost while the planner settles:
 * the rows' costs of every evaluation in calls 1 to EARLY - 1, against as
 * many evaluations at the setting finally kept. */
static double early_cost(double c, double f, double tol) {
  enum { EARLY = 4, CALLS = 30 };
  trial t;
  trial_begin(&t, c, f, tol);
  double early = 0, first = 0;
  for (int call = 0; call < CALLS; call++) {
    trial_call(&t);
    if (call == 0)
      first = t.x.cost;
    if (call == EARLY - 1)
      early = t.x.cost - first;
  }
  const tfmm_accuracy_row *kept = row_of(t.p.theta, t.p.order, 1);
  cr_assert_not_null(kept);
  return early / ((EARLY - 1) * kept->cost);
}

/* On inputs whose error is a third of the calibration's or less (f <=
 * 0.3: smooth spheres, against the calibration's worst clustered set),
 * the first guess overshoots and the planner descends. A probe that
 * missed used to send the call back to the dear setting kept before it,
 * once per probe: calls 1 to 3 cost up to 2.81 times three calls at the
 * setting finally kept over this grid (and the 16M Plummer run evaluated
 * order 8 again at two steps). A call then tried the setting between
 * them first: at most 2.04. Then a step down the model is sure of came
 * before a probe (TFMM_PLAN_SURE_SAVING): at most 1.94, and the bound
 * 2.0 lay between. A setting whose bound misses the target where a
 * larger sample's would meet it is now looked at again
 * (TFMM_PLAN_SECOND_LOOK_CONFIDENCE: one more evaluation in a call that
 * chooses), and a return to the setting kept is judged as a recheck: at
 * most 1.97, the early calls costing 1 % less in all than one look's
 * over this grid, whose kept settings cost 4.3 % more a call. Inputs
 * harder than the calibration start below their target and descend
 * less, so are not held to it. */
Test(planner, first_calls_settle_without_going_back) {
  const double cs[] = {0.45, 0.55, 0.65, 0.8, 0.9};
  const double fs[] = {0.05, 0.1, 0.3};
  for (size_t i = 0; i < COUNT(cs); i++)
    for (size_t j = 0; j < COUNT(fs); j++)
      for (int t = 0; t < 2; t++) {
        const double tol = t ? 1e-2 : 1e-3;
        const double r = early_cost(cs[i], fs[j], tol);
        cr_expect_leq(r, 2.0,
                      "c %g f %g tol %g: the first calls cost %.2f times "
                      "as many at the setting kept",
                      cs[i], fs[j], tol, r);
      }
}

/* The plan's account names each setting a call tried and left ("; before,
 * theta T, order P: p99 X (<= B at C %, K bodies) missed", or "looked at
 * again" for a probe's first look), and only those its measurement turned
 * down: each missed setting's bound lies above the target, each looked
 * at again has its p99 within it and its bound above it (at the probe's
 * confidence), and its p99 is the one the measurement gave. Over the grid
 * of inputs some calls name one of each. */
Test(planner, the_plan_names_the_settings_it_left) {
  const double cs[] = {0.45, 0.55, 0.65, 0.8, 0.9};
  const double fs[] = {0.05, 0.3, 1};
  int named[2] = {0, 0};
  for (size_t i = 0; i < COUNT(cs); i++)
    for (size_t j = 0; j < COUNT(fs); j++) {
      trial t;
      trial_begin(&t, cs[i], fs[j], 1e-3);
      for (int call = 0; call < 24; call++) {
        trial_call(&t);
        for (const char *at = strstr(t.stats.plan, "; before, theta ");
             at != NULL; at = strstr(at + 1, "; before, theta ")) {
          double theta = 0, p99 = 0, bound = 0, conf = 0;
          int order = 0, used = 0;
          size_t k = 0;
          cr_assert_eq(sscanf(at,
                              "; before, theta %lf, order %d: p99 %lf (<= %lf "
                              "at %lf %%, %zu bodies) %n",
                              &theta, &order, &p99, &bound, &conf, &k, &used),
                       6, "c %g f %g call %d: \"%s\"", cs[i], fs[j], call,
                       t.stats.plan);
          const int again = strncmp(at + used, "looked at again", 15) == 0;
          cr_assert(again || strncmp(at + used, "missed", 6) == 0, "\"%s\"",
                    at);
          const double e = truth(&t.x, theta, order);
          cr_expect(fabs(p99 - e) <= 5e-3 * e, /* printed to 3 digits */
                    "c %g f %g: theta %g p %d named with p99 %g, its error "
                    "%g",
                    cs[i], fs[j], theta, order, p99, e);
          cr_expect_gt(bound, 1e-3, "c %g f %g: theta %g p %d left at %g",
                       cs[i], fs[j], theta, order, bound);
          if (again) {
            cr_expect_leq(p99, 1e-3, "c %g f %g: theta %g p %d", cs[i], fs[j],
                          theta, order);
            cr_expect_eq(conf, 100 * TFMM_PLAN_FIRST_LOOK_CONFIDENCE);
          }
          named[again]++;
        }
      }
    }
  cr_expect_gt(named[0], 0, "no call named a setting it left");
  cr_expect_gt(named[1], 0, "no setting was looked at again");
}

/* The planner against sampled errors: each evaluation draws its k
 * errors from a population whose 99th percentile is the setting's true
 * error e = f (c theta)^p, with a power-law tail (P(X > x) = 0.01
 * (x / e)^-2 above e / 10, as on Plummer spheres: 99.5th percentile
 * 1.41 e), and the measurement's own judge bounds it (pipeline/measure.c,
 * at the confidence the planner asks). */
typedef struct sampled {
  synthetic x;
  uint64_t state;
} sampled;

static double uniform01(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static tfmm_status evaluate_sampled(void *ctx, size_t k, double confidence,
                                    uint64_t seed) {
  (void)seed;
  sampled *sx = ctx;
  synthetic *x = &sx->x;
  const double e = truth(x, x->run->theta, x->run->order);
  memset(&x->stats->error, 0, sizeof x->stats->error);
  x->stats->theta = x->run->theta;
  x->stats->order = x->run->order;
  x->measured += k > 0;
  const tfmm_accuracy_row *r = row_of(x->run->theta, x->run->order, 1);
  x->cost += r != NULL ? r->cost : 0;
  if (k == 0)
    return TFMM_OK;
  double *err = malloc(k * sizeof *err);
  int64_t *index = calloc(k, sizeof *index);
  cr_assert(err != NULL && index != NULL);
  for (size_t j = 0; j < k; j++)
    err[j] = e * sqrt(0.01 / uniform01(&sx->state));
  tfmm_measure_judge(k, 0, 1 << 20, confidence, err, index, x->stats);
  free(err);
  free(index);
  return TFMM_OK;
}

/* Over 6,000 runs (c 0.5-0.9, f 0.03-0.6 on a log grid of 40, 30 seeds
 * each, 12 calls at 1e-3), the setting kept after the choosing: its true
 * p99 above the target in at most 1 % of the runs and never above 1.25x
 * it, and within 5 % of the cheapest meeting setting on average. Two
 * looks: 5 runs (0.08 %), the worst 1.08x, 1.024x the cheapest; one look
 * at 95 % (the same code with two_looks off): 29 runs (0.5 %), the worst
 * 1.254x, 1.062x; accepting by the p99 alone: 551 runs (9 %), 1.41x. */
Test(planner, sampled_errors_keep_a_miss_rarely) {
  const double cs[] = {0.5, 0.6, 0.7, 0.8, 0.9}, tol = 1e-3;
  int runs = 0, misses = 0;
  double ratio = 0, worst = 0;
  for (size_t i = 0; i < COUNT(cs); i++)
    for (int q = 0; q < 40; q++)
      for (int s = 0; s < 30; s++) {
        const double f = 0.03 * pow(20.0, q / 39.0);
        trial t;
        trial_begin(&t, cs[i], f, tol);
        sampled sx = {t.x,
                      0x9e3779b9ull * (uint64_t)(1 + s + 30 * (q + 40 * i))};
        for (int call = 0; call < 12; call++) {
          memset(&t.stats, 0, sizeof t.stats);
          t.run = t.cfg;
          cr_assert_eq(tfmm_planner_run(&t.p, &t.cfg, &t.run, 1 << 20, 64, 1, 1,
                                        &t.stats, &t.err, evaluate_sampled,
                                        &sx),
                       TFMM_OK);
        }
        const double e = truth(&sx.x, t.p.theta, t.p.order);
        runs++;
        misses += e > tol;
        worst = fmax(worst, e / tol);
        const tfmm_accuracy_row *kept = row_of(t.p.theta, t.p.order, 1);
        const tfmm_accuracy_row *best = cheapest_meeting(&sx.x, 1, tol);
        cr_assert(kept != NULL && best != NULL);
        ratio += kept->cost / best->cost;
      }
  cr_expect_leq(misses, runs / 100, "%d of %d runs kept a setting that misses",
                misses, runs);
  cr_expect_leq(worst, 1.25, "a kept setting's error %.3g times the target",
                worst);
  cr_expect_leq(ratio / runs, 1.05,
                "kept settings cost %.3f times the cheapest on average",
                ratio / runs);
}
