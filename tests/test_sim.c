/* Time integration and diagnostics: the leapfrog against an analytic
 * Kepler orbit, its time reversibility, energy conservation of a Plummer
 * sphere under the tree solver, and the diagnostics against sums written
 * out here. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#define PI 3.14159265358979323846

static tfmm_solver *make_solver(tfmm_method method, double eps, double theta,
                                int order, int leaf) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = method;
  c.device = TFMM_DEVICE_CPU;
  c.eps = eps;
  c.theta = theta;
  c.order = order;
  c.leaf_size = leaf;
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, &c);
  cr_assert_eq(st, TFMM_OK, "solver: %s", tfmm_solver_message(s));
  return s;
}

/* One KDK step; acc holds the accelerations at pos on entry and exit. */
static void kdk(tfmm_solver *s, size_t n, double *pos, double *vel,
                const double *mass, double *acc, double *pot, double dt) {
  tfmm_leapfrog_kick(n, vel, acc, 0.5 * dt);
  tfmm_leapfrog_drift(n, pos, vel, dt);
  tfmm_status st = tfmm_solver_compute(s, n, pos, mass, acc, pot);
  cr_assert_eq(st, TFMM_OK, "compute: %s", tfmm_solver_message(s));
  tfmm_leapfrog_kick(n, vel, acc, 0.5 * dt);
}

static double energy(size_t n, const double *pos, const double *vel,
                     const double *mass, const double *pot) {
  tfmm_diagnostics d;
  cr_assert_eq(tfmm_diagnostics_compute(n, pos, vel, mass, pot, &d), TFMM_OK);
  return d.total;
}

Test(leapfrog, kick_and_drift_are_exact_updates) {
  double v[6] = {1, 2, 3, 4, 5, 6}, a[6] = {0.5, -1, 2, 0, 0.25, -8};
  tfmm_leapfrog_kick(2, v, a, 0.5);
  const double want_v[6] = {1.25, 1.5, 4, 4, 5.125, 2};
  for (int k = 0; k < 6; k++)
    cr_assert_eq(v[k], want_v[k], "v[%d] = %g", k, v[k]);
  double x[6] = {0, 0, 0, 1, 1, 1};
  tfmm_leapfrog_drift(2, x, v, 2.0);
  const double want_x[6] = {2.5, 3, 8, 9, 11.25, 5};
  for (int k = 0; k < 6; k++)
    cr_assert_eq(x[k], want_x[k], "x[%d] = %g", k, x[k]);
}

/* Two equal masses on a circular orbit: separation d, angular velocity
 * w = sqrt(G M / d^3). After one period, the position error of a
 * second-order method falls four times when the step is halved; the
 * energy and the radius stay within O(dt^2) of their start. Returns the
 * position error of body 1 after one period of the given number of steps,
 * asserting on the invariants along the way. */
static double kepler_period_error(int steps) {
  const double d = 1.0, M = 1.0, w = sqrt(M / (d * d * d));
  const double period = 2.0 * PI / w;
  double pos[6] = {-0.5 * d, 0, 0, 0.5 * d, 0, 0};
  double vel[6] = {0, -0.5 * d * w, 0, 0, 0.5 * d * w, 0};
  const double mass[2] = {0.5 * M, 0.5 * M};
  double acc[6], pot[2];
  tfmm_solver *s = make_solver(TFMM_METHOD_REFERENCE, 0.0, 0.5, 4, 64);
  cr_assert_eq(tfmm_solver_compute(s, 2, pos, mass, acc, pot), TFMM_OK);
  const double e0 = energy(2, pos, vel, mass, pot);
  cr_assert_float_eq(e0, -0.5 * 0.5 * 0.5 / d, 1e-15, "E0 = %.17g", e0);
  const double dt = period / steps;
  double worst_de = 0.0;
  for (int k = 0; k < steps; k++) {
    kdk(s, 2, pos, vel, mass, acc, pot, dt);
    const double e = energy(2, pos, vel, mass, pot);
    worst_de = fmax(worst_de, fabs((e - e0) / e0));
  }
  const double h2 = (w * dt) * (w * dt);
  const double radius = hypot(pos[3] - pos[0], pos[4] - pos[1]);
  cr_expect_lt(fabs(radius - d), h2 * d, "%d steps: radius %.17g", steps,
               radius);
  cr_expect_lt(worst_de, h2, "%d steps: worst |dE/E| %.3g", steps, worst_de);
  /* Momentum is conserved to rounding: the forces are equal and opposite;
   * the angular momentum too, since they are central. */
  tfmm_diagnostics g;
  cr_assert_eq(tfmm_diagnostics_compute(2, pos, vel, mass, pot, &g), TFMM_OK);
  cr_expect_lt(fabs(g.momentum[0]) + fabs(g.momentum[1]), 1e-14);
  cr_expect_float_eq(g.angular_momentum[2], 2 * 0.5 * 0.25 * w, 1e-12,
                     "Lz %.17g", g.angular_momentum[2]);
  tfmm_solver_destroy(s);
  return hypot(pos[3] - 0.5 * d, pos[4]); /* body 1 started at (d/2, 0) */
}

Test(leapfrog, kepler_orbit_converges_at_second_order) {
  const double coarse = kepler_period_error(1000);
  const double fine = kepler_period_error(2000);
  cr_expect_gt(fine, 0.0, "an integrator cannot be exact here");
  cr_expect_lt(fine, 2e-5, "error after one period %.3g", fine);
  cr_expect(coarse / fine > 3.8 && coarse / fine < 4.2,
            "error ratio %.4f for a halved step, not 4", coarse / fine);
}

/* The leapfrog is time reversible: N steps forward, velocities reversed,
 * N steps more return every body to its start up to rounding (amplified
 * a little by the system's instability over so short a time). */
Test(leapfrog, time_reversible_under_tree_forces) {
  const size_t n = 2048;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass), *acc = malloc(3 * n * sizeof *acc);
  double *pos0 = malloc(3 * n * sizeof *pos0);
  cr_assert_eq(tfmm_ic_plummer(n, test_fresh_seed(), pos, vel, mass), TFMM_OK);
  memcpy(pos0, pos, 3 * n * sizeof *pos);
  tfmm_solver *s = make_solver(TFMM_METHOD_FMM, 0.01, 0.5, 4, 32);
  cr_assert_eq(tfmm_solver_compute(s, n, pos, mass, acc, NULL), TFMM_OK);
  for (int k = 0; k < 20; k++)
    kdk(s, n, pos, vel, mass, acc, NULL, 1e-3);
  double moved = 0.0;
  for (size_t k = 0; k < 3 * n; k++)
    moved = fmax(moved, fabs(pos[k] - pos0[k]));
  cr_assert_gt(moved, 1e-4, "the bodies must have moved (%.3g)", moved);
  for (size_t k = 0; k < 3 * n; k++)
    vel[k] = -vel[k];
  for (int k = 0; k < 20; k++)
    kdk(s, n, pos, vel, mass, acc, NULL, 1e-3);
  double back = 0.0;
  for (size_t k = 0; k < 3 * n; k++)
    back = fmax(back, fabs(pos[k] - pos0[k]));
  cr_expect_lt(back, 1e-12, "returned within %.3g of the start", back);
  tfmm_solver_destroy(s);
  free(pos);
  free(vel);
  free(mass);
  free(acc);
  free(pos0);
}

/* The criterion: a 4,096-body Plummer sphere in equilibrium keeps
 * |dE/E| < 1e-4 over 100 small steps with an accurate solver setting. A
 * wrong kick (sign, factor 1/2, order) or a wrong force breaks it. */
Test(leapfrog, plummer_energy_conserved_over_100_steps) {
  const size_t n = 4096;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass), *acc = malloc(3 * n * sizeof *acc);
  double *pot = malloc(n * sizeof *pot);
  const uint64_t seed = test_fresh_seed();
  cr_assert_eq(tfmm_ic_plummer(n, seed, pos, vel, mass), TFMM_OK);
  tfmm_solver *s = make_solver(TFMM_METHOD_FMM, 0.01, 0.4, 8, 32);
  cr_assert_eq(tfmm_solver_compute(s, n, pos, mass, acc, pot), TFMM_OK);
  const double e0 = energy(n, pos, vel, mass, pot);
  /* The model's E = -1/4, less the softening's and sampling's shift. */
  cr_assert(e0 < -0.2 && e0 > -0.3, "E0 = %g", e0);
  double worst = 0.0;
  for (int k = 0; k < 100; k++) {
    kdk(s, n, pos, vel, mass, acc, pot, 1e-3);
    worst = fmax(worst, fabs((energy(n, pos, vel, mass, pot) - e0) / e0));
  }
  cr_expect_lt(worst, 1e-4, "seed %llu: worst |dE/E| = %.3g",
               (unsigned long long)seed, worst);
  tfmm_solver_destroy(s);
  free(pos);
  free(vel);
  free(mass);
  free(acc);
  free(pot);
}

/* Diagnostics against the definitions, summed here in long double. */
Test(diagnostics, match_definitions_on_random_bodies) {
  const size_t n = 10007;
  test_rng rng = {test_fresh_seed()};
  double *x = malloc(3 * n * sizeof *x), *v = malloc(3 * n * sizeof *v);
  double *m = malloc(n * sizeof *m), *phi = malloc(n * sizeof *phi);
  for (size_t i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++) {
      x[3 * i + d] = 2 * test_uniform(&rng) - 1;
      v[3 * i + d] = 2 * test_uniform(&rng) - 1;
    }
    m[i] = 0.5 + test_uniform(&rng);
    phi[i] = -test_uniform(&rng);
  }
  long double M = 0, K = 0, W = 0, P[3] = {0}, L[3] = {0}, X[3] = {0};
  for (size_t i = 0; i < n; i++) {
    const double *a = x + 3 * i, *b = v + 3 * i;
    M += m[i];
    K += 0.5L * m[i] *
         ((long double)b[0] * b[0] + (long double)b[1] * b[1] +
          (long double)b[2] * b[2]);
    W += 0.5L * m[i] * phi[i];
    for (int d = 0; d < 3; d++) {
      P[d] += (long double)m[i] * b[d];
      X[d] += (long double)m[i] * a[d];
    }
    L[0] += (long double)m[i] *
            ((long double)a[1] * b[2] - (long double)a[2] * b[1]);
    L[1] += (long double)m[i] *
            ((long double)a[2] * b[0] - (long double)a[0] * b[2]);
    L[2] += (long double)m[i] *
            ((long double)a[0] * b[1] - (long double)a[1] * b[0]);
  }
  tfmm_diagnostics g;
  cr_assert_eq(tfmm_diagnostics_compute(n, x, v, m, phi, &g), TFMM_OK);
  const double tol = 1e-14;
  cr_expect_float_eq(g.mass, (double)M, tol * (double)M);
  cr_expect_float_eq(g.kinetic, (double)K, tol * (double)K);
  cr_expect_float_eq(g.potential, (double)W, tol * fabs((double)W));
  cr_expect_float_eq(g.total, (double)(K + W), tol * (double)K);
  cr_expect_float_eq(g.virial_ratio, (double)(2 * K / -W), 1e-13);
  for (int d = 0; d < 3; d++) {
    /* Components are sums of random signs: compare with the mass scale. */
    cr_expect_float_eq(g.momentum[d], (double)P[d], tol * (double)M);
    cr_expect_float_eq(g.angular_momentum[d], (double)L[d], tol * (double)M);
    cr_expect_float_eq(g.centre_of_mass[d], (double)(X[d] / M), tol);
  }
  free(x);
  free(v);
  free(m);
  free(phi);
}

Test(diagnostics, same_bits_for_any_thread_count) {
  const size_t n = 50000;
  double *x = malloc(3 * n * sizeof *x), *v = malloc(3 * n * sizeof *v);
  double *m = malloc(n * sizeof *m), *phi = malloc(n * sizeof *phi);
  cr_assert_eq(tfmm_ic_plummer(n, test_fresh_seed(), x, v, m), TFMM_OK);
  for (size_t i = 0; i < n; i++)
    phi[i] = -1.0 / (1.0 + x[3 * i] * x[3 * i]);
  tfmm_diagnostics a, b;
  omp_set_num_threads(1);
  cr_assert_eq(tfmm_diagnostics_compute(n, x, v, m, phi, &a), TFMM_OK);
  omp_set_num_threads(3);
  cr_assert_eq(tfmm_diagnostics_compute(n, x, v, m, phi, &b), TFMM_OK);
  cr_expect(memcmp(&a, &b, sizeof a) == 0, "diagnostics differ by threads");
  free(x);
  free(v);
  free(m);
  free(phi);
}

Test(diagnostics, bad_arguments) {
  double x[3] = {0}, v[3] = {0}, m[1] = {1}, p[1] = {0};
  tfmm_diagnostics g;
  cr_expect_eq(tfmm_diagnostics_compute(0, x, v, m, p, &g),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect_eq(tfmm_diagnostics_compute(1, NULL, v, m, p, &g),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect_eq(tfmm_diagnostics_compute(1, x, v, m, NULL, &g),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect_eq(tfmm_diagnostics_compute(1, x, v, m, p, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect_eq(tfmm_diagnostics_compute(1, x, v, m, p, &g), TFMM_OK);
  cr_expect_eq(g.virial_ratio, 0.0, "W = 0 gives a ratio of 0");
}
