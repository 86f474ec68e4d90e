/* Written independently of interaction.h on purpose: it is the truth the
 * single-precision paths are tested against, so it shares no code with them. */
#include "nearfield/reference.h"

#include <math.h>

/* Neumaier's improved Kahan summation: sum + comp carries the exact sum of
 * the terms to within one rounding of the result, whatever their order. */
typedef struct compensated {
  double sum, comp;
} compensated;

static inline void compensated_add(compensated *s, double v) {
  double t = s->sum + v;
  if (fabs(s->sum) >= fabs(v))
    s->comp += (s->sum - t) + v;
  else
    s->comp += (v - t) + s->sum;
  s->sum = t;
}

static inline double compensated_value(const compensated *s) {
  return s->sum + s->comp;
}

/* The sums on target i, written to acc[0..2] and *pot. */
static void sum_on(size_t i, size_t n, const double *pos, const double *mass,
                   double G, double eps2, double *acc, double *pot) {
  compensated a[3] = {{0, 0}, {0, 0}, {0, 0}}, phi = {0, 0};
  const double *xi = pos + 3 * i;
  for (size_t j = 0; j < n; j++) {
    if (j == i)
      continue;
    const double *xj = pos + 3 * j;
    double dx = xj[0] - xi[0], dy = xj[1] - xi[1], dz = xj[2] - xi[2];
    double r2 = dx * dx + dy * dy + dz * dz + eps2;
    double rinv = 1.0 / sqrt(r2);
    double mr = mass[j] * rinv;
    double mr3 = mr * rinv * rinv;
    compensated_add(&a[0], dx * mr3);
    compensated_add(&a[1], dy * mr3);
    compensated_add(&a[2], dz * mr3);
    compensated_add(&phi, -mr);
  }
  for (int k = 0; k < 3; k++)
    acc[k] = G * compensated_value(&a[k]);
  if (pot != NULL)
    *pot = G * compensated_value(&phi);
}

void tfmm_reference_compute(size_t n, const double *pos, const double *mass,
                            double G, double eps, double *acc, double *pot) {
#pragma omp parallel for schedule(dynamic, 16)
  for (size_t i = 0; i < n; i++)
    sum_on(i, n, pos, mass, G, eps * eps, acc + 3 * i,
           pot != NULL ? pot + i : NULL);
}

void tfmm_reference_at(size_t n, const double *pos, const double *mass,
                       double G, double eps, size_t k, const size_t *targets,
                       double *acc, double *pot) {
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t t = 0; t < k; t++)
    sum_on(targets[t], n, pos, mass, G, eps * eps, acc + 3 * t,
           pot != NULL ? pot + t : NULL);
}
