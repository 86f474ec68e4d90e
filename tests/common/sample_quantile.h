/* Judging a quantile of the per-body errors from a sample of the bodies.
 *
 * The accuracy the library promises is a quantile over every body: at most
 * a fraction 1 - q (1 % for the 99th percentile) of the n bodies may have
 * an error above the target T. A test that computes the reference at only
 * k of them cannot take the sample's own 99th percentile as that quantile:
 * with k = 64 it is the largest of the 64, and one body in a hundred may
 * exceed T, so it fails by chance on a solver that keeps its promise.
 *
 * The sound judgement counts. If the promise holds, each of k bodies drawn
 * at random is above T with probability at most p = 1 - q, so the number
 * above T is at most Binomial(k, p) (fewer still when drawn without
 * replacement). A test allows c of them, the least c with
 * P(Binomial(k, p) > c) <= alpha: a solver that keeps its promise fails
 * with probability at most alpha. Comparing the (c + 1)-th largest sampled
 * error with T says the same. When the sample is every body (k == n) there
 * is no chance: c is the nearest-rank count, n - ceil(q n).
 *
 * Header-only, plain C: used by the Criterion suites and the MPI tests. */
#ifndef TFMM_SAMPLE_QUANTILE_H
#define TFMM_SAMPLE_QUANTILE_H

#include <math.h>
#include <stddef.h>

/* The chance of a false failure allowed to one judgement of a sample. */
#define SAMPLE_FALSE_FAILURE 1e-6

/* P(Binomial(k, p) > c): the terms from c + 1 up, in logarithms (k up to
 * millions, p small), until past the mean they no longer count. */
static inline double sample_binomial_tail(size_t k, double p, size_t c) {
  const double lk = lgamma((double)k + 1), lp = log(p), lq = log1p(-p);
  double s = 0.0;
  for (size_t x = c + 1; x <= k; x++) {
    const double term =
        exp(lk - lgamma((double)x + 1) - lgamma((double)(k - x) + 1) +
            (double)x * lp + (double)(k - x) * lq);
    s += term;
    if ((double)x > (double)k * p && term <= 1e-17 * s)
      break;
  }
  return s;
}

/* How many of k errors may lie above the bound on the q-quantile of n
 * bodies: every body (k >= n), the nearest-rank count; a random sample, the
 * least c with P(Binomial(k, 1 - q) > c) <= alpha. c >= k means k bodies
 * cannot show a broken promise at this alpha. */
static inline size_t sample_allowed_above(size_t n, size_t k, double q,
                                          double alpha) {
  if (k >= n) {
    const size_t rank = (size_t)ceil(q * (double)n); /* nearest rank */
    return n - (rank < 1 ? 1 : rank);
  }
  size_t c = 0;
  while (c < k && sample_binomial_tail(k, 1.0 - q, c) > alpha)
    c++;
  return c;
}

/* The error to hold against the bound: the (c + 1)-th largest of the k
 * errors sorted ascending (c from sample_allowed_above), at most the bound
 * if and only if at most c errors are above it. 0 when c >= k: so few
 * bodies show nothing (callers say so rather than judge). */
static inline double sample_judged(const double *sorted, size_t n, size_t k,
                                   double q, double alpha) {
  const size_t c = sample_allowed_above(n, k, q, alpha);
  return c >= k ? 0.0 : sorted[k - 1 - c];
}

#endif
