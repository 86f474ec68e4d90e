/* Written independently of interaction.h on purpose: it is the truth the
 * single-precision paths are tested against, so it shares no code with them. */
#include "nearfield/reference.h"

#include "team.h"

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

/* The cubic spline of support h (Springel 2005 eq. 4) from its density by
 * antiderivatives, written apart from interaction.h's polynomials: the
 * mass fraction inside u = r / h,
 *   q(u) = 32 (u^3/3 - 6u^5/5 + u^6)                 for u < 1/2,
 *   q(u) = q(1/2) + 64 [F(u) - F(1/2)],  F(t) = t^3/3 - 3t^4/4 + 3t^5/5
 *          - t^6/6                                   for 1/2 <= u < 1,
 * gives g = q / r^3; phi = -q / r - (1/h) int_u^1 4 pi t rho(t) dt, whose
 * integrand has antiderivatives 32 (t^2/2 - 3t^4/2 + 6t^5/5) and
 * 64 (t^2/2 - t^3 + 3t^4/4 - t^5/5) on the two pieces. Outside: Newton. */
static double q_inner(double u) {
  return 32 * (u * u * u / 3 - 6 * pow(u, 5) / 5 + pow(u, 6));
}
static double F_outer(double t) {
  return t * t * t / 3 - 3 * pow(t, 4) / 4 + 3 * pow(t, 5) / 5 - pow(t, 6) / 6;
}
static double P_inner(double t) {
  return 32 * (t * t / 2 - 3 * pow(t, 4) / 2 + 6 * pow(t, 5) / 5);
}
static double P_outer(double t) {
  return 64 * (t * t / 2 - t * t * t + 3 * pow(t, 4) / 4 - pow(t, 5) / 5);
}

/* g and phi of a unit mass at r under the spline of support h > 0. */
static void spline_at(double r, double h, double *g, double *phi) {
  double u = r / h;
  if (u >= 1) {
    *g = 1 / (r * r * r);
    *phi = -1 / r;
    return;
  }
  double q, tail; /* mass inside; int_u^1 4 pi t rho dt (h = 1) */
  if (u < 0.5) {
    q = q_inner(u);
    tail = (P_inner(0.5) - P_inner(u)) + (P_outer(1) - P_outer(0.5));
  } else {
    q = q_inner(0.5) + 64 * (F_outer(u) - F_outer(0.5));
    tail = P_outer(1) - P_outer(u);
  }
  /* q / u^3 tends to 32/3 at the centre; q / u to 0. */
  *g = (u > 0 ? q / (u * u * u) : 32.0 / 3) / (h * h * h);
  *phi = -((u > 0 ? q / u : 0) + tail) / h;
}

/* The sums on target i, written to acc[0..2] and *pot. */
static void sum_on(size_t i, size_t n, const double *pos, const double *mass,
                   double G, double eps, int spline, double *acc, double *pot) {
  const double eps2 = eps * eps, h = 2.8 * eps;
  compensated a[3] = {{0, 0}, {0, 0}, {0, 0}}, phi = {0, 0};
  const double *xi = pos + 3 * i;
  for (size_t j = 0; j < n; j++) {
    if (j == i)
      continue;
    const double *xj = pos + 3 * j;
    double dx = xj[0] - xi[0], dy = xj[1] - xi[1], dz = xj[2] - xi[2];
    double mr3, mphi;
    if (spline && h > 0) {
      double g, ph;
      spline_at(sqrt(dx * dx + dy * dy + dz * dz), h, &g, &ph);
      mr3 = mass[j] * g;
      mphi = mass[j] * ph;
    } else {
      double r2 = dx * dx + dy * dy + dz * dz + eps2;
      double rinv = 1.0 / sqrt(r2);
      mphi = -mass[j] * rinv;
      mr3 = mass[j] * rinv * rinv * rinv;
    }
    compensated_add(&a[0], dx * mr3);
    compensated_add(&a[1], dy * mr3);
    compensated_add(&a[2], dz * mr3);
    compensated_add(&phi, mphi);
  }
  for (int k = 0; k < 3; k++)
    acc[k] = G * compensated_value(&a[k]);
  if (pot != NULL)
    *pot = G * compensated_value(&phi);
}

void tfmm_reference_compute(size_t n, const double *pos, const double *mass,
                            double G, double eps, int spline, double *acc,
                            double *pot) {
  tfmm_reference_compute_active(n, pos, mass, G, eps, spline, NULL, acc, pot);
}

void tfmm_reference_compute_active(size_t n, const double *pos,
                                   const double *mass, double G, double eps,
                                   int spline, const unsigned char *active,
                                   double *acc, double *pot) {
  const int team = tfmm_team((double)n * n, TFMM_GRAIN_PAIRS);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
  for (size_t i = 0; i < n; i++)
    if (active == NULL || active[i])
      sum_on(i, n, pos, mass, G, eps, spline, acc + 3 * i,
             pot != NULL ? pot + i : NULL);
}

void tfmm_reference_at(size_t n, const double *pos, const double *mass,
                       double G, double eps, int spline, size_t k,
                       const size_t *targets, double *acc, double *pot) {
  const int team = tfmm_team((double)k * n, TFMM_GRAIN_PAIRS);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (size_t t = 0; t < k; t++)
    sum_on(targets[t], n, pos, mass, G, eps, spline, acc + 3 * t,
           pot != NULL ? pot + t : NULL);
}
