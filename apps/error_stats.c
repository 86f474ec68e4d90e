/* Per-body errors, nearest-rank percentiles and the sample of bodies they
 * are measured on (see error_stats.h). */
#include "error_stats.h"

#include <math.h>
#include <stdlib.h>

/* SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): a local generator, so
 * that a seed picks the same sample on every machine. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* A uniform integer in [0, range), range >= 1: draws below 2^64 mod range
 * are rejected, so that every residue is equally likely. */
static uint64_t uniform_below(uint64_t *state, uint64_t range) {
  const uint64_t reject_below = (0 - range) % range;
  uint64_t x;
  do
    x = splitmix64(state);
  while (x < reject_below);
  return x % range;
}

/* Selection sampling, Knuth TAOCP vol. 2, section 3.4.2, Algorithm S:
 * index t is taken with probability (k - taken) / (n - t), in integers, so
 * that the last indices are surely taken when they must be. */
void error_stats_sample(size_t n, size_t k, uint64_t seed, size_t *out) {
  uint64_t state = seed;
  size_t taken = 0;
  for (size_t t = 0; t < n && taken < k; t++)
    if (uniform_below(&state, n - t) < k - taken)
      out[taken++] = t;
}

double error_stats_relative(const double *x, const double *ref, int dim,
                            int *absolute) {
  double diff2 = 0, ref2 = 0;
  for (int c = 0; c < dim; c++) {
    const double d = x[c] - ref[c];
    diff2 += d * d;
    ref2 += ref[c] * ref[c];
  }
  *absolute = ref2 == 0;
  return *absolute ? sqrt(diff2) : sqrt(diff2 / ref2);
}

static int compare(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  if (isnan(x) || isnan(y))
    return isnan(x) - isnan(y);
  return (x > y) - (x < y);
}

void error_stats_sort(double *x, size_t n) { qsort(x, n, sizeof *x, compare); }

double error_stats_percentile(const double *sorted, size_t n, unsigned p) {
  if (p > 100)
    p = 100;
  /* The rank ceil(p n / 100) in integers: the fraction p / 100 times n in
   * floating point can land just above a whole number (0.07 * 100 gives
   * 7.000000000000001, whose ceiling is 8). */
  const size_t rank = (p * n + 99) / 100;
  return sorted[rank == 0 ? 0 : rank - 1];
}

error_summary error_stats_summarize(double *x, size_t n) {
  error_stats_sort(x, n);
  return (error_summary){error_stats_percentile(x, n, 50),
                         error_stats_percentile(x, n, 99),
                         error_stats_percentile(x, n, 100)};
}
