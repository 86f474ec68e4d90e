/* Per-body errors of a force method against a reference, their summary
 * by percentiles, and the random sample of bodies they are measured on.
 *
 * Percentiles are nearest-rank: the p-th percentile of n values is the
 * ceil(p n / 100)-th smallest (1-based), so it is always one of the values,
 * never an interpolation. The median is the 50th percentile: for even n the
 * lower of the two middle values. The 100th is the maximum. */
#ifndef TFMM_ERROR_STATS_H
#define TFMM_ERROR_STATS_H

#include <stddef.h>
#include <stdint.h>

/* |x - ref| / |ref| over dim components (Euclidean norms). When |ref| = 0
 * the relative error is undefined: returns the absolute error |x - ref|
 * and sets *absolute to 1 (else 0). */
double error_stats_relative(const double *x, const double *ref, int dim,
                            int *absolute);

/* Sorts x[0 .. n) in ascending order; NaNs go last. */
void error_stats_sort(double *x, size_t n);

/* The nearest-rank percentile p in [0, 100] of sorted[0 .. n), n >= 1;
 * p = 0 gives the smallest. */
double error_stats_percentile(const double *sorted, size_t n, unsigned p);

typedef struct error_summary {
  double median, p99, max;
} error_summary;

/* Sorts x[0 .. n), n >= 1, and returns its 50th, 99th and 100th
 * percentiles. */
error_summary error_stats_summarize(double *x, size_t n);

/* Writes k <= n distinct indices of [0, n) to out, in ascending order,
 * each k-subset equally likely. The generator is local (SplitMix64), so a
 * seed gives the same sample on every machine. */
void error_stats_sample(size_t n, size_t k, uint64_t seed, size_t *out);

#endif
