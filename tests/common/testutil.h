/* Helpers shared by the tests: reproducible random bodies, poisoning and
 * error norms. Every test draws fresh inputs from its own seed. */
#ifndef TFMM_TESTUTIL_H
#define TFMM_TESTUTIL_H

#include <tilefmm.h>

#include <stddef.h>
#include <stdint.h>

typedef struct test_rng {
  uint64_t state;
} test_rng;

/* A seed that differs between runs (time and address), printed by callers
 * that fail so the case can be replayed with TFMM_TEST_SEED. */
uint64_t test_fresh_seed(void);
double test_uniform(test_rng *rng); /* in [0, 1) */

/* |a - truth| / |truth| of one body's 3-vectors; a non-finite error is
 * infinite. */
double test_relative_error(const double *a, const double *truth);

/* The 99th percentile (nearest rank) over n bodies of the relative
 * acceleration error |acc - truth| / |truth| (3n doubles each); a
 * non-finite error counts as infinite. */
double test_p99_relative(size_t n, const double *acc, const double *truth);

typedef enum test_layout {
  TEST_UNIFORM,  /* uniform in the unit cube */
  TEST_CLUSTERED /* a few Plummer-like clumps of very different sizes */
} test_layout;

typedef struct test_bodies {
  size_t n;
  double *pos, *mass; /* 3n, n */
} test_bodies;

/* Random bodies whose coordinates lie on a grid of 2^-22: after the
 * single-precision methods subtract the bounding-box centre (a multiple of
 * 2^-23) they are exactly representable in float, so those methods see the
 * same points as the double reference and a comparison measures their
 * arithmetic alone. test_bodies_make_raw skips the snapping: the effect of
 * rounding positions to float is tested on its own (direct_check.h). */
test_bodies test_bodies_make(size_t n, test_layout layout, uint64_t seed);
test_bodies test_bodies_make_raw(size_t n, test_layout layout, uint64_t seed);
void test_bodies_free(test_bodies *b);

/* Fills x[0..n) with NaN so unwritten outputs are caught. */
void test_poison(double *x, size_t n);
/* Index of the first non-finite element, or n. */
size_t test_first_nonfinite(const double *x, size_t n);

/* Skips the calling test (Criterion) when no usable GPU is present: always
 * in a build without CUDA. */
void test_require_gpu(void);

/* Dynamic shared memory a block may opt into on GPU 0 (bytes): 227 KB on
 * an H100, 99 KB on an RTX 4090; 48 KB without CUDA. */
long test_gpu_max_shared(void);

/* ||x - ref||_2 / ||ref||_2 */
double test_rel_l2(const double *x, const double *ref, size_t n);

/* Newton's accelerations (G = 1, eps = 0) at each of b's bodies, summed
 * in long double over every other body: a truth apart from the library's
 * reference (3n doubles into acc). */
void test_newton_long_double(const test_bodies *b, double *acc);

/* |sum_i m_i a_i| / sum_i m_i |a_i|: zero for exact pairwise forces. */
double test_momentum_drift(const double *mass, const double *acc, size_t n);

/* Reference accelerations and potentials (the library's reference method
 * on the CPU, Plummer softening). Returns 0 on success. */
int test_reference(const test_bodies *b, double eps, double *acc, double *pot);

/* The same under the given softening kernel. Returns 0 on success. */
int test_reference_softened(const test_bodies *b, double eps,
                            tfmm_softening softening, double *acc, double *pot);

/* Moves every `every`-th body onto the one before it: coincident pairs,
 * inside any softening kernel's core. */
void test_bodies_stack(test_bodies *b, size_t every);

#endif
