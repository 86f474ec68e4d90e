#include "testutil.h"

#include <criterion/criterion.h>
#include <tilefmm.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef TFMM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t test_fresh_seed(void) {
  const char *fixed = getenv("TFMM_TEST_SEED");
  if (fixed != NULL)
    return strtoull(fixed, NULL, 0);
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
               (uint64_t)(uintptr_t)&ts;
  return splitmix64(&x);
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double test_relative_error(const double *a, const double *truth) {
  double num = 0, den = 0;
  for (int d = 0; d < 3; d++) {
    const double diff = a[d] - truth[d];
    num += diff * diff;
    den += truth[d] * truth[d];
  }
  return isfinite(num) ? sqrt(num / den) : INFINITY;
}

double test_p99_relative(size_t n, const double *acc, const double *truth) {
  double *e = malloc(n * sizeof *e);
  cr_assert_not_null(e);
  for (size_t i = 0; i < n; i++)
    e[i] = test_relative_error(acc + 3 * i, truth + 3 * i);
  qsort(e, n, sizeof *e, by_value);
  const double q = e[(size_t)ceil(0.99 * (double)n) - 1];
  free(e);
  return q;
}

double test_uniform(test_rng *rng) {
  return (double)(splitmix64(&rng->state) >> 11) * 0x1.0p-53;
}

static double gaussian(test_rng *rng) {
  double u = test_uniform(rng), v = test_uniform(rng);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

test_bodies test_bodies_make_raw(size_t n, test_layout layout, uint64_t seed) {
  test_bodies b = {n, malloc(3 * n * sizeof(double)),
                   malloc(n * sizeof(double))};
  test_rng rng = {seed};
  /* Clumps: centres in the unit cube, radii from 1e-3 to 0.1. */
  double centre[4][3], radius[4] = {0.1, 0.02, 5e-3, 1e-3};
  for (int c = 0; c < 4; c++)
    for (int k = 0; k < 3; k++)
      centre[c][k] = test_uniform(&rng);
  for (size_t i = 0; i < n; i++) {
    /* Masses spread over two decades. */
    b.mass[i] = pow(10.0, -2.0 * test_uniform(&rng)) / (double)n;
    if (layout == TEST_UNIFORM) {
      for (int k = 0; k < 3; k++)
        b.pos[3 * i + k] = test_uniform(&rng);
    } else {
      int c = (int)(4 * test_uniform(&rng));
      for (int k = 0; k < 3; k++)
        b.pos[3 * i + k] = centre[c][k] + radius[c] * gaussian(&rng);
    }
  }
  return b;
}

test_bodies test_bodies_make(size_t n, test_layout layout, uint64_t seed) {
  test_bodies b = test_bodies_make_raw(n, layout, seed);
  for (size_t k = 0; k < 3 * n; k++)
    b.pos[k] = ldexp(nearbyint(ldexp(b.pos[k], 22)), -22);
  return b;
}

void test_bodies_free(test_bodies *b) {
  free(b->pos);
  free(b->mass);
  b->pos = b->mass = NULL;
}

void test_poison(double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    x[i] = NAN;
}

size_t test_first_nonfinite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return i;
  return n;
}

double test_rel_l2(const double *x, const double *ref, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

double test_momentum_drift(const double *mass, const double *acc, size_t n) {
  double p[3] = {0, 0, 0}, scale = 0;
  for (size_t i = 0; i < n; i++) {
    const double *a = acc + 3 * i;
    for (int k = 0; k < 3; k++)
      p[k] += mass[i] * a[k];
    scale += mass[i] * sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  }
  double norm = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
  return scale > 0 ? norm / scale : norm;
}

int test_reference(const test_bodies *b, double eps, double *acc, double *pot) {
  return test_reference_softened(b, eps, TFMM_SOFTENING_PLUMMER, acc, pot);
}

int test_reference_softened(const test_bodies *b, double eps,
                            tfmm_softening softening, double *acc,
                            double *pot) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_REFERENCE;
  cfg.eps = eps;
  cfg.softening = softening;
  tfmm_solver *s = NULL;
  int rc = tfmm_solver_create(&s, &cfg) != TFMM_OK ||
           tfmm_solver_compute(s, b->n, b->pos, b->mass, acc, pot) != TFMM_OK;
  tfmm_solver_destroy(s);
  return rc;
}

void test_bodies_stack(test_bodies *b, size_t every) {
  for (size_t i = every; every > 0 && i < b->n; i += every)
    memcpy(b->pos + 3 * i, b->pos + 3 * (i - 1), 3 * sizeof(double));
}

void test_require_gpu(void) {
  if (tfmm_gpu_count() == 0)
    cr_skip_test("no usable CUDA GPU on this machine: GPU test skipped");
}

long test_gpu_max_shared(void) {
  int most = 48 * 1024;
#ifdef TFMM_HAVE_CUDA
  if (cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             0) != cudaSuccess) {
    cudaGetLastError();
    most = 48 * 1024;
  }
#endif
  return most;
}

void test_newton_long_double(const test_bodies *b, double *acc) {
  for (size_t i = 0; i < b->n; i++) {
    long double a[3] = {0, 0, 0};
    for (size_t j = 0; j < b->n; j++) {
      if (j == i)
        continue;
      long double d[3], r2 = 0;
      for (int c = 0; c < 3; c++) {
        d[c] = (long double)b->pos[3 * j + c] - b->pos[3 * i + c];
        r2 += d[c] * d[c];
      }
      const long double f = b->mass[j] / (r2 * sqrtl(r2));
      for (int c = 0; c < 3; c++)
        a[c] += f * d[c];
    }
    for (int c = 0; c < 3; c++)
      acc[3 * i + c] = (double)a[c];
  }
}
