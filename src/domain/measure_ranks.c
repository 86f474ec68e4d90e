/* The measured error of an evaluation over ranks (the planner's
 * measurements, measure always, verify; docs/accuracy.md): as one process
 * measures it (pipeline/measure.c), the relative acceleration error at a
 * sample of the bodies against exact sums over every body in double
 * precision with the same softening, the bodies being spread over the
 * ranks.
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
 * rank's tree. */
#include "domain/measure_ranks.h"

#include "base/clock.h"
#include "domain/domain.h"
#include "pipeline/allpairs.h"
#include "pipeline/measure.h"

#include <math.h>
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
    st = tfmm_allpairs_reference_at(&d->cfg, at, p2, m2, m, targets, exact,
                                    NULL, err);
  }
  st = tfmm_domain_agree(d, st, err);
  if (st == TFMM_OK)
    st = tfmm_domain_sum(d, exact, (int)(3 * m), err);
  free(p2), free(m2), free(targets);
  return st;
}

tfmm_status tfmm_domain_measure(tfmm_domain *d, size_t n, const double *pos,
                                const double *mass, const double *acc, size_t k,
                                uint64_t seed, tfmm_stats *stats,
                                tfmm_error *err) {
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
  if (st == TFMM_OK) {
    for (size_t j = 0; j < k; j++)
      err_of[j] = tfmm_measure_relative(got + 6 * j + 3, exact + 3 * j);
    tfmm_measure_judge(k, 0, N, err_of, sorted, stats);
    stats->error.time = tfmm_wtime() - t0;
  }
  free(sorted), free(mine), free(got), free(exact), free(err_of);
  return st;
}
