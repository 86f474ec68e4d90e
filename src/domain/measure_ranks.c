/* The measured error of an evaluation over ranks (the planner's
 * measurements, measure always, verify; docs/accuracy.md): as one process
 * measures it (pipeline/measure.c), the relative acceleration error at a
 * sample of the bodies against exact sums over every body in double
 * precision with the same softening, the bodies being spread over the
 * ranks; then at the worst group.
 *
 * The sample is stratified over the bodies in rank order (rank 0's in its
 * order, then rank 1's, ...), drawn alike on every rank from the
 * evaluation's count. Each rank gives the positions and forces of the
 * sampled bodies it holds (a sum over ranks: the others give zeros), sums
 * the pulls of its own bodies on every sampled one, and the partial sums
 * are added over the ranks (tfmm_domain_sum: the same bits on every rank).
 * Every rank then judges the same errors (tfmm_measure_judge) and reports
 * the same figures; the worst body is its index in rank order. No watch:
 * which leaves are smallest or least pulled is known only within each
 * rank's tree.
 *
 * The worst group: the bodies of the leaf that holds the sample's largest
 * error, in the octree of every rank's bodies in the common cube with
 * leaves of d->leaf bodies (octree.c's rule: a cell is a leaf when it
 * holds at most that many, is at the deepest level, or all its bodies
 * share one key). Every rank knows the worst body's position (it was
 * summed with the sample), so every rank finds its key; each rank counts
 * its bodies sharing each number of leading levels with that key, and the
 * counts summed over the ranks give every rank the leaf's level, the same
 * on all. So the group does not depend on how the bodies are split over
 * the ranks (a rank's own tree would cut a leaf at its key range's edge).
 * Its bodies are taken in rank order, each up to TFMM_MEASURE_GROUP_MAX,
 * else that many stratified along it with the worst body in place of its
 * stratum's (as one process takes them along the leaf's key order); their
 * exact forces are summed as the sample's, and tfmm_measure_group_judge
 * gives the figures. */
#include "domain/measure_ranks.h"

#include "base/clock.h"
#include "domain/domain.h"
#include "pipeline/allpairs.h"
#include "pipeline/measure.h"
#include "reference_gpu.h"
#include "tree/keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where this rank's bodies start in rank order (*first), and how many
 * bodies count[] there are over the ranks (*total). */
static tfmm_status in_rank_order(tfmm_domain *d, size_t count, int64_t *first,
                                 int64_t *total, tfmm_error *err) {
  int64_t *counts = calloc((size_t)d->size, sizeof *counts);
  if (counts == NULL)
    return tfmm_domain_agree(
        d, tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory"), err);
  counts[d->rank] = (int64_t)count;
  tfmm_status st = tfmm_domain_sum_i64(d, counts, d->size, err);
  *first = *total = 0;
  for (int r = 0; r < d->size; r++) {
    *first += r < d->rank ? counts[r] : 0;
    *total += counts[r];
  }
  free(counts);
  return st;
}

/* The exact accelerations at k targets of this rank's n (+ massless)
 * bodies on its GPU, when every rank's near field runs on one: the same
 * pair formula in FP64 as tfmm_allpairs_reference_at (reference_gpu.h,
 * agreeing to about 1e-13 of |a|), G applied after, and the same refusal
 * of two bodies at one point with eps = 0 (a non-finite sum there). On
 * the CPU the 10^9 pairs of a planning measurement at 10^6 bodies took
 * 2-6 s a step on the H200's host (a 52 ms step), rechecks one in
 * TFMM_RECHECK_EVERY evaluations. */
static tfmm_status reference_on_gpu(tfmm_domain *d, size_t n, const double *pos,
                                    const double *mass, size_t k,
                                    const size_t *targets, double *acc,
                                    tfmm_error *err) {
  const tfmm_pair_params pair = {d->cfg.softening, d->cfg.eps,
                                 TFMM_PRECISION_DOUBLE};
  tfmm_status st = tfmm_gpu_reference_host_at(d->gpu_id, n, pos, mass, k,
                                              targets, &pair, acc, err);
  if (st == TFMM_ERR_NONFINITE && tfmm_eps_vanishes(d->cfg.eps, 0)) {
    char why[TFMM_MESSAGE_SIZE];
    snprintf(why, sizeof why, "%s", err != NULL ? err->message : "");
    return tfmm_error_set(err, TFMM_ERR_COINCIDENT,
                          "the measured error's exact sums: %s (bodies at "
                          "one point and eps = 0: their force is infinite; "
                          "set eps > 0)",
                          why);
  }
  for (size_t j = 0; st == TFMM_OK && j < 3 * k; j++)
    acc[j] *= d->cfg.G;
  return st;
}

/* The exact accelerations (3 a body, summed over the ranks) at m bodies
 * whose positions every rank holds (got: 6 a body, the position first);
 * mine[j] is this rank's index of body j, or -1 when another rank holds
 * it. Each rank sums its own bodies' pulls: the others' targets enter as
 * massless bodies, which pull nothing; a body of its own is its own
 * index, which the sum skips. */
static tfmm_status exact_at(tfmm_domain *d, size_t n, const double *pos,
                            const double *mass, size_t m, const double *got,
                            const int64_t *mine, double *exact,
                            tfmm_error *err) {
  double *p2 = malloc(3 * (n + m) * sizeof *p2),
         *m2 = malloc((n + m) * sizeof *m2);
  size_t *targets = malloc(m * sizeof *targets);
  tfmm_status st = p2 && m2 && targets
                       ? TFMM_OK
                       : tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                                        "no memory to measure the error at "
                                        "%zu bodies",
                                        m);
  if (st == TFMM_OK) {
    if (n > 0) { /* a rank may hold no bodies (pos NULL) */
      memcpy(p2, pos, 3 * n * sizeof *p2);
      memcpy(m2, mass, n * sizeof *m2);
    }
    size_t at = n;
    for (size_t j = 0; j < m; j++) {
      if (mine[j] >= 0) {
        targets[j] = (size_t)mine[j];
      } else {
        memcpy(p2 + 3 * at, got + 6 * j, 3 * sizeof *p2);
        m2[at] = 0.0;
        targets[j] = at++;
      }
    }
    st = d->near_gpu ? reference_on_gpu(d, at, p2, m2, m, targets, exact, err)
                     : tfmm_allpairs_reference_at(&d->cfg, at, p2, m2, m,
                                                  targets, exact, NULL, err);
  }
  st = tfmm_domain_agree(d, st, err);
  if (st == TFMM_OK)
    st = tfmm_domain_sum(d, exact, (int)(3 * m), err);
  free(p2), free(m2), free(targets);
  return st;
}

/* The leading levels two keys share (0 to TFMM_KEY_LEVELS): the depth of
 * the deepest cell that holds both. Keys are 63 bits, level 1 the top
 * three. */
static int shared_levels(uint64_t a, uint64_t b) {
  const uint64_t x = a ^ b;
  if (x == 0)
    return TFMM_KEY_LEVELS;
  int top = 62; /* the highest bit where they differ */
  while (!(x >> top & 1))
    top--;
  return (62 - top) / 3;
}

/* The level of the leaf that holds the body of key `worst`: the first
 * cell on its path from the root that holds at most leaf bodies of every
 * rank, or whose bodies all share its key (the deepest level's do). *in
 * gets this rank's bodies in it; *level_of each body's shared levels. */
static tfmm_status group_level(tfmm_domain *d, size_t n, const double *pos,
                               uint64_t worst, int *level_of, int *level,
                               size_t *in, tfmm_error *err) {
  int64_t below[TFMM_KEY_LEVELS + 1] = {0}; /* bodies sharing >= l levels */
  for (size_t i = 0; i < n; i++) {
    level_of[i] =
        shared_levels(tfmm_key_encode(pos + 3 * i, d->cube, d->cube[3]), worst);
    below[level_of[i]]++;
  }
  int64_t mine[TFMM_KEY_LEVELS + 1];
  for (int l = TFMM_KEY_LEVELS - 1; l >= 0; l--)
    below[l] += below[l + 1];
  memcpy(mine, below, sizeof mine);
  tfmm_status st = tfmm_domain_sum_i64(d, below, TFMM_KEY_LEVELS + 1, err);
  if (st != TFMM_OK)
    return st;
  int l = 0;
  while (below[l] > d->leaf && below[l] != below[TFMM_KEY_LEVELS])
    l++;
  *level = l;
  *in = (size_t)mine[l];
  return TFMM_OK;
}

/* The worst group (above) of the body whose position got_worst every
 * rank holds, and which is this rank's body worst_here (-1: another
 * rank's), into stats->error.group_*. */
static tfmm_status measure_group(tfmm_domain *d, size_t n, const double *pos,
                                 const double *mass, const double *acc,
                                 const double *got_worst, int64_t worst_here,
                                 uint64_t seed, tfmm_stats *stats,
                                 tfmm_error *err) {
  enum { G = TFMM_MEASURE_GROUP_MAX };
  int *level_of = malloc((n > 0 ? n : 1) * sizeof *level_of);
  size_t *member = malloc((n > 0 ? n : 1) * sizeof *member);
  /* The worst body's place in the group, plus 1, from the rank that holds
   * it (0 from the others: a sum over the ranks gives it). */
  int64_t pick[G], mine[G], where = 0;
  double *got = calloc(6 * G, sizeof *got),
         *exact = malloc(3 * G * sizeof *exact);
  double err_of[G];
  tfmm_status st = level_of && member && got && exact
                       ? TFMM_OK
                       : tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                                        "no memory to measure the worst group");
  st = tfmm_domain_agree(d, st, err);
  int level = 0;
  size_t in = 0;
  if (st == TFMM_OK)
    st = group_level(d, n, pos, tfmm_key_encode(got_worst, d->cube, d->cube[3]),
                     level_of, &level, &in, err);
  int64_t first = 0, count = 0;
  if (st == TFMM_OK)
    st = in_rank_order(d, in, &first, &count, err);
  size_t m = 0;
  if (st == TFMM_OK) {
    size_t g = 0;
    for (size_t i = 0; i < n; i++)
      if (level_of[i] >= level) {
        if ((int64_t)i == worst_here)
          where = first + (int64_t)g + 1;
        member[g++] = i;
      }
    st = tfmm_domain_sum_i64(d, &where, 1, err);
    m = count < G ? (size_t)count : G;
  }
  if (st == TFMM_OK) {
    where--;
    tfmm_measure_pick((size_t)count, m, ~seed ^ 0x9e3779b97f4a7c15ull, pick);
    for (size_t j = 0; j < m; j++) {
      if ((int64_t)(j * (size_t)count / m) <= where &&
          where < (int64_t)((j + 1) * (size_t)count / m))
        pick[j] = where;
      const int64_t g = pick[j] - first;
      mine[j] = g >= 0 && g < (int64_t)in ? (int64_t)member[g] : -1;
      if (mine[j] >= 0) {
        memcpy(got + 6 * j, pos + 3 * mine[j], 3 * sizeof *got);
        memcpy(got + 6 * j + 3, acc + 3 * mine[j], 3 * sizeof *got);
      }
    }
    st = tfmm_domain_sum(d, got, (int)(6 * m), err);
  }
  if (st == TFMM_OK)
    st = exact_at(d, n, pos, mass, m, got, mine, exact, err);
  if (st == TFMM_OK) {
    for (size_t j = 0; j < m; j++)
      err_of[j] = tfmm_measure_relative(got + 6 * j + 3, exact + 3 * j);
    tfmm_measure_group_judge(m, (size_t)count, err_of, stats);
  }
  free(level_of), free(member), free(got), free(exact);
  return st;
}

tfmm_status tfmm_domain_measure(tfmm_domain *d, size_t n, const double *pos,
                                const double *mass, const double *acc, size_t k,
                                double confidence, uint64_t seed,
                                tfmm_stats *stats, tfmm_error *err) {
  const double t0 = tfmm_wtime();
  int64_t first = 0, total = 0;
  tfmm_status st = in_rank_order(d, n, &first, &total, err);
  if (st != TFMM_OK)
    return st;
  const size_t N = (size_t)total;
  k = k < N ? k : N;
  if (k == 0)
    return TFMM_OK;
  int64_t *sorted = malloc(k * sizeof *sorted),
          *mine = malloc(k * sizeof *mine);
  /* The sampled bodies' positions and computed forces (6 a body), then
   * the exact sums (3 a body), each a sum over the ranks. */
  double *got = calloc(6 * k, sizeof *got),
         *exact = calloc(3 * k, sizeof *exact);
  double *err_of = malloc(k * sizeof *err_of);
  st = sorted && mine && got && exact && err_of
           ? TFMM_OK
           : tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                            "no memory to measure the error at %zu bodies", k);
  st = tfmm_domain_agree(d, st, err);
  if (st == TFMM_OK) {
    tfmm_measure_pick(N, k, seed, sorted);
    for (size_t j = 0; j < k; j++) {
      const int64_t i = sorted[j] - first;
      mine[j] = i >= 0 && i < (int64_t)n ? i : -1;
      if (mine[j] >= 0) {
        memcpy(got + 6 * j, pos + 3 * i, 3 * sizeof *got);
        memcpy(got + 6 * j + 3, acc + 3 * i, 3 * sizeof *got);
      }
    }
    st = tfmm_domain_sum(d, got, (int)(6 * k), err);
  }
  if (st == TFMM_OK)
    st = exact_at(d, n, pos, mass, k, got, mine, exact, err);
  size_t worst = 0; /* the first largest, NaN the largest (as judged) */
  if (st == TFMM_OK) {
    for (size_t j = 0; j < k; j++) {
      err_of[j] = tfmm_measure_relative(got + 6 * j + 3, exact + 3 * j);
      if (!(err_of[j] <= err_of[worst]))
        worst = j;
    }
    tfmm_measure_judge(k, 0, N, confidence, err_of, sorted, stats);
    st = measure_group(d, n, pos, mass, acc, got + 6 * worst, mine[worst], seed,
                       stats, err);
    stats->error.time = tfmm_wtime() - t0;
  }
  free(sorted), free(mine), free(got), free(exact), free(err_of);
  return st;
}
