/* The Hernquist, homogeneous, cold and merger initial conditions against
 * analytic truths: energies from the reference solver's direct sums, the
 * cumulative radial mass against the models' (Kolmogorov-Smirnov) and the
 * Kepler orbit of the merger's two halves.
 *
 * Statistical tolerances are 5 sigma, sigma being the spread measured over
 * 40 seeds (1000..1039) at the same N (and, for the homogeneous spheres, the
 * U-statistic estimate: W fluctuates by 0.218 |W| / sqrt(N), the spread of
 * the potential 3/(2R) - r^2/(2R^3) over the sphere). Each test uses one
 * fixed seed, so it is deterministic; a 5 sigma band still catches a wrong
 * scale length, radius, speed law or velocity scale. */
#include "ic_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The 1% critical Kolmogorov-Smirnov distance is 1.63 / sqrt(n); it is
 * doubled, as for the Plummer test, for the centre-of-mass shift. */
static double ks_limit(size_t n) { return 2 * 1.63 / sqrt((double)n); }

/* ---- Hernquist ------------------------------------------------------------
 */

/* Scale length and the mass fraction kept by the cut. */
static const double hq_a = 1.0 / 3.0, hq_cut = 0.999;

/* M(<r) = r^2 / (r + a)^2 (Hernquist 1990, eq. 3), renormalised to the
 * 0.999 of the mass the sample holds. */
static double hernquist_cdf(double r) {
  const double s = r / (r + hq_a);
  return fmin(s * s / hq_cut, 1.0);
}

/* Expected energies of the cut sample. With s = r / (r + a), M = s^2 and
 * 1/r = (1 - s) / (a s), the model's mass inside s_c = sqrt(0.999) has
 * W_c = -int M dM / r = -(2/a)(s_c^3/3 - s_c^4/4) (-1/(6a) = -1/2 uncut).
 * The sample gives that mass 1: W scales by 1/0.999^2, K by 1/0.999 (K
 * beyond the cut, 0.3 a / r_c^2 < 1e-6, is neglected), and N bodies see
 * N - 1 others: W by (1 - 1/N). So E = -0.25069 and 2K/|W| = 0.99912 at
 * N = 8000 rather than -1/4 and 1. Measured over 40 seeds at N = 8000:
 * sigma(E) = 0.0059, sigma(2K/|W|) = 0.013 (mean -0.2498, 1.0029). */
Test(ic_models, hernquist_energy) {
  const size_t n = 8000;
  model m = make_with(tfmm_ic_hernquist, n, 2024);
  const energy e = energies(&m, 0, n);
  const double sc = sqrt(hq_cut);
  const double W_cut = -(2 / hq_a) * (sc * sc * sc / 3 - sc * sc * sc * sc / 4);
  const double W = W_cut / (hq_cut * hq_cut) * (1 - 1.0 / (double)n);
  const double K = 0.25 / hq_cut;
  const double E = e.K + e.W, ratio = 2 * e.K / fabs(e.W);
  cr_log_info("hernquist: E = %.5f (want %.5f), 2K/|W| = %.5f (want %.5f)", E,
              K + W, ratio, 2 * K / fabs(W));
  cr_assert(fabs(E - (K + W)) < 5 * 0.0059, "E = %.5f, want %.5f", E, K + W);
  cr_assert(fabs(ratio - 2 * K / fabs(W)) < 5 * 0.013,
            "2K/|W| = %.5f, want %.5f", ratio, 2 * K / fabs(W));
  release(&m);
}

/* K = 1/4 for the whole model (virial theorem), 0.25 / 0.999 for the
 * cut sample (see above). K needs no potential, so it is checked at a
 * larger N, where a 1% error in the speeds is 6 sigma: measured over 40
 * seeds at N = 200000, mean 0.25023, sigma(K) = 0.00069. */
Test(ic_models, hernquist_kinetic_energy) {
  const size_t n = 200000;
  model m = make_with(tfmm_ic_hernquist, n, 99);
  double *e = malloc(n * sizeof(double));
  cr_assert(e != NULL);
  for (size_t i = 0; i < n; i++) {
    const double *v = m.vel + 3 * i;
    e[i] = 0.5 * m.mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  }
  const double K = sum(e, n, 1);
  cr_log_info("hernquist: K = %.5f (want %.5f)", K, 0.25 / hq_cut);
  cr_assert(fabs(K - 0.25 / hq_cut) < 5 * 0.00069, "K = %.5f", K);
  free(e);
  release(&m);
}

/* The density centre by the shrinking-sphere method (Power et al. 2003,
 * MNRAS 338, 14): the mean position of the bodies within a sphere about
 * the last centre, the radius cut by 10% a step, down to 1000 bodies. */
static void density_centre(const model *m, double c[3]) {
  c[0] = c[1] = c[2] = 0;
  double radius = 0;
  for (size_t i = 0; i < m->n; i++) {
    const double *x = m->pos + 3 * i;
    radius = fmax(radius, sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
  }
  for (size_t count = m->n; count > 1000; radius *= 0.9) {
    double s[3] = {0, 0, 0};
    count = 0;
    for (size_t i = 0; i < m->n; i++) {
      const double *x = m->pos + 3 * i;
      const double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
      if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= radius * radius) {
        for (int k = 0; k < 3; k++)
          s[k] += x[k];
        count++;
      }
    }
    cr_assert_gt(count, 0);
    for (int k = 0; k < 3; k++)
      c[k] = s[k] / (double)count;
  }
}

/* Moving the centre of mass to the origin moves the cusp off it: the
 * cut model's <r^2> = 440 (its r^-4 tail reaches r_c = 666), so the mean
 * of n positions scatters by sqrt(440 / (3 n)) = 0.039 a coordinate at
 * n = 100000, 0.2 a, which distorts radii about the origin (a KS distance
 * up to 0.027 over 20 seeds, against 0.003 about the true centre). Radii
 * are taken about the density centre, found to ~1e-3; it must lie within
 * 5 sigma of the origin. Nothing lies beyond the cut radius
 * r_c = a s_c / (1 - s_c) = 666, and the shell beyond r(0.99) = 66.2
 * holds 0.9% of the bodies (900 +- 30). */
Test(ic_models, hernquist_mass_profile) {
  const size_t n = 100000;
  model m = make_with(tfmm_ic_hernquist, n, 777);
  double c[3];
  density_centre(&m, c);
  const double offset = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  cr_assert_lt(offset, 5 * sqrt(3 * 440.0 / (3.0 * (double)n)),
               "density centre %.4f from the origin", offset);
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++)
      m.pos[3 * i + d] -= c[d];
  double *r = sorted_radii(n, m.pos);
  const double d = ks_distance(n, r, hernquist_cdf);
  cr_log_info("hernquist: centre offset %.4f, KS %.5f (limit %.5f)", offset, d,
              ks_limit(n));
  cr_assert_lt(d, ks_limit(n), "KS distance %.5f", d);
  const double sc = sqrt(hq_cut), s99 = sqrt(0.99);
  const double r_cut = hq_a * sc / (1 - sc), r99 = hq_a * s99 / (1 - s99);
  cr_assert_lt(r[n - 1], r_cut + 1, "r_max %.3f, cut %.3f", r[n - 1], r_cut);
  size_t outer = 0;
  for (size_t i = 0; i < n; i++)
    outer += r[i] > r99;
  cr_assert(outer > 750 && outer < 1050, "%zu bodies beyond r(0.99)", outer);
  free(r);
  release(&m);
}

/* ---- homogeneous spheres -------------------------------------------------
 */

static const double hot_R = 6.0 / 5.0, cold_R = 12.0 / 5.0;

/* (r/R)^3, and 1 beyond R, where the centre-of-mass shift puts a few. */
static double hot_cdf(double r) { return pow(fmin(r / hot_R, 1.0), 3); }
static double cold_cdf(double r) { return pow(fmin(r / cold_R, 1.0), 3); }

/* Radii follow (r/R)^3 and none lies beyond R, up to the centre-of-mass
 * shift (each coordinate's spread R / sqrt(5n)): 5 sigma in each of the
 * three coordinates bounds it by 5 R sqrt(3 / (5 n)). */
static void check_ball(ic_fn fn, double R, double (*cdf)(double),
                       uint64_t seed) {
  const size_t n = 100000;
  model m = make_with(fn, n, seed);
  double *r = sorted_radii(n, m.pos);
  const double d = ks_distance(n, r, cdf);
  cr_log_info("ball R = %.1f: KS %.5f (limit %.5f), r_max %.5f", R, d,
              ks_limit(n), r[n - 1]);
  cr_assert_lt(d, ks_limit(n), "KS distance %.5f", d);
  const double shift = 5 * R * sqrt(3.0 / (5.0 * (double)n));
  cr_assert_leq(r[n - 1], R + shift, "r_max %.5f, R %.3f", r[n - 1], R);
  cr_assert_geq(r[n - 1], R - shift, "r_max %.5f, R %.3f", r[n - 1], R);
  free(r);
  release(&m);
}

Test(ic_models, uniform_mass_profile) {
  check_ball(tfmm_ic_uniform, hot_R, hot_cdf, 31);
}

Test(ic_models, cold_mass_profile) {
  check_ball(tfmm_ic_cold, cold_R, cold_cdf, 32);
}

/* W = -3/(5R) (1 - 1/N) = -1/2 for R = 6/5; K is scaled to exactly 1/4.
 * sigma(W) = 0.218 * 0.5 / sqrt(N) = 0.0012 (measured 0.0013 for E,
 * 0.0026 for 2K/|W|, at N = 8000). */
Test(ic_models, uniform_energy) {
  const size_t n = 8000;
  model m = make_with(tfmm_ic_uniform, n, 2024);
  const energy e = energies(&m, 0, n);
  const double W = -3.0 / (5.0 * hot_R) * (1 - 1.0 / (double)n);
  cr_log_info("uniform: K = %.17g, W = %.5f (want %.5f), 2K/|W| = %.5f", e.K,
              e.W, W, 2 * e.K / fabs(e.W));
  cr_assert(fabs(e.K - 0.25) < 1e-13, "K = %.17g", e.K);
  cr_assert(fabs(e.K + e.W - (0.25 + W)) < 5 * 0.0013, "E = %.5f", e.K + e.W);
  const double ratio = 2 * e.K / fabs(e.W);
  cr_assert(fabs(ratio - 0.5 / fabs(W)) < 5 * 0.0026, "2K/|W| = %.5f", ratio);
  release(&m);
}

/* Isotropic and Gaussian: each component holds a third of K (the variance
 * estimate's relative sigma is sqrt(2/n) = 0.016), and the kurtosis is the
 * Irwin-Hall law's 3 - 1.2/12 = 2.9 (sigma sqrt(24 / 3n) = 0.032 pooled),
 * far from the 1.8 of a uniform law or of one speed in random directions. */
Test(ic_models, uniform_velocities_gaussian) {
  const size_t n = 8000;
  model m = make_with(tfmm_ic_uniform, n, 5);
  double m2[3] = {0, 0, 0}, m4 = 0;
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      const double v2 = m.vel[3 * i + d] * m.vel[3 * i + d];
      m2[d] += v2 / (double)n;
      m4 += v2 * v2 / (3.0 * (double)n);
    }
  const double var = (m2[0] + m2[1] + m2[2]) / 3;
  for (int d = 0; d < 3; d++)
    cr_assert(fabs(m2[d] / (1.0 / 6.0) - 1) < 5 * 0.016, "<v%d^2> = %.5f", d,
              m2[d]);
  cr_log_info("uniform: <v^2> = %.5f %.5f %.5f, kurtosis %.4f", m2[0], m2[1],
              m2[2], m4 / (var * var));
  cr_assert(fabs(m4 / (var * var) - 2.9) < 5 * 0.032, "kurtosis %.4f",
            m4 / (var * var));
  release(&m);
}

/* At rest (K exactly 0), E = W = -3/(5R) (1 - 1/N) = -1/4 for R = 12/5;
 * sigma(W) = 0.218 * 0.25 / sqrt(N) = 0.00061 (measured 0.00064). */
Test(ic_models, cold_energy) {
  const size_t n = 8000;
  model m = make_with(tfmm_ic_cold, n, 2025);
  for (size_t i = 0; i < 3 * n; i++)
    cr_assert_eq(m.vel[i], 0.0);
  const energy e = energies(&m, 0, n);
  cr_assert_eq(e.K, 0.0);
  const double W = -3.0 / (5.0 * cold_R) * (1 - 1.0 / (double)n);
  cr_log_info("cold: W = %.5f (want %.5f)", e.W, W);
  cr_assert(fabs(e.W - W) < 5 * 0.00064, "W = %.5f, want %.5f", e.W, W);
  release(&m);
}

/* ---- merger ---------------------------------------------------------------
 */

static const double ra = 4.0, rp = 0.5;

/* Mean position and velocity of bodies [first, first + k): with equal
 * masses, the centre of mass of that half and its velocity. */
static void half_centre(const model *m, size_t first, size_t k, double x[3],
                        double v[3]) {
  for (int d = 0; d < 3; d++) {
    x[d] = sum(m->pos + 3 * first + d, k, 3) / (double)k;
    v[d] = sum(m->vel + 3 * first + d, k, 3) / (double)k;
  }
}

/* The halves (the first with the odd body) are at apocentre: separated by
 * r_a = 4 along x, moving apart along y at the vis-viva speed
 * sqrt(G M (2/r_a - 1/a)), a = (r_a + r_p)/2, each centre at its share of
 * the distance from the origin (m_1 x_1 + m_2 x_2 = 0). Independently of
 * that formula, the orbit the state implies (energy, angular momentum,
 * eccentricity) has apocentre 4 and pericentre 1/2. */
Test(ic_models, merger_kepler_orbit) {
  const size_t n = 20001, n1 = 10001, n2 = 10000;
  model m = make_with(tfmm_ic_merger, n, 11);
  double x1[3], v1[3], x2[3], v2[3], dx[3], dv[3];
  half_centre(&m, 0, n1, x1, v1);
  half_centre(&m, n1, n2, x2, v2);
  const double m1 = (double)n1 / (double)n, m2 = (double)n2 / (double)n;
  const double v_apo = sqrt(1.0 * (2 / ra - 1 / (0.5 * (ra + rp))));
  const double want_dx[3] = {ra, 0, 0}, want_dv[3] = {0, v_apo, 0};
  for (int d = 0; d < 3; d++) {
    dx[d] = x1[d] - x2[d];
    dv[d] = v1[d] - v2[d];
    cr_assert(fabs(dx[d] - want_dx[d]) < 1e-12, "dx[%d] = %.17g", d, dx[d]);
    cr_assert(fabs(dv[d] - want_dv[d]) < 1e-12, "dv[%d] = %.17g", d, dv[d]);
    cr_assert(fabs(x1[d] - m2 * want_dx[d]) < 1e-12, "x1[%d]", d);
    cr_assert(fabs(x2[d] + m1 * want_dx[d]) < 1e-12, "x2[%d]", d);
  }
  cr_assert(fabs(dx[0] * dv[0] + dx[1] * dv[1] + dx[2] * dv[2]) < 1e-12,
            "velocity not perpendicular to the separation");

  /* Two-body orbit from the state: specific energy and angular momentum
   * of the relative motion (G M = 1), a = -1/(2 eps),
   * e = sqrt(1 + 2 eps h^2), apsides a (1 -+ e). */
  const double r = sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
  const double eps =
      0.5 * (dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]) - 1 / r;
  const double h[3] = {dx[1] * dv[2] - dx[2] * dv[1],
                       dx[2] * dv[0] - dx[0] * dv[2],
                       dx[0] * dv[1] - dx[1] * dv[0]};
  const double h2 = h[0] * h[0] + h[1] * h[1] + h[2] * h[2];
  const double a = -1 / (2 * eps), e = sqrt(1 + 2 * eps * h2);
  cr_log_info("merger: apocentre %.15f, pericentre %.15f", a * (1 + e),
              a * (1 - e));
  cr_assert(fabs(a * (1 + e) - ra) < 1e-12, "apocentre %.15f", a * (1 + e));
  cr_assert(fabs(a * (1 - e) - rp) < 1e-12, "pericentre %.15f", a * (1 - e));
  cr_assert_gt(h[2], 0, "orbit in the x-y plane, counter-clockwise");

  /* Distinct streams: the second sphere is not the first one moved. */
  int same = 1;
  for (int d = 0; d < 3; d++)
    same &= m.pos[d] - x1[d] == m.pos[3 * n1 + d] - x2[d];
  cr_assert(!same);
  release(&m);
}

/* Two bodies: the point-mass orbit itself, at (+-2, 0, 0) moving along
 * +-y at half the apocentre speed sqrt(1/18). */
Test(ic_models, merger_two_bodies) {
  model m = make_with(tfmm_ic_merger, 2, 3);
  const double v = 0.5 * sqrt(1.0 / 18.0);
  const double want_pos[6] = {2, 0, 0, -2, 0, 0},
               want_vel[6] = {0, v, 0, 0, -v, 0};
  for (int k = 0; k < 6; k++) {
    cr_assert(fabs(m.pos[k] - want_pos[k]) < 1e-15, "pos[%d] %.17g", k,
              m.pos[k]);
    cr_assert(fabs(m.vel[k] - want_vel[k]) < 1e-15, "vel[%d] %.17g", k,
              m.vel[k]);
  }
  cr_assert_eq(m.mass[0], 0.5);
  cr_assert_eq(m.mass[1], 0.5);
  release(&m);
}

/* Each half is a Plummer sphere of mass 1/2 in equilibrium: a mass-m
 * Plummer model of the N-body scale length with velocities scaled by
 * sqrt(m) has E = -m^2 / 4 = -1/16 and 2K/|W| = 1 (the 0.999 cut changes
 * both by < 0.1%). Measured over 40 seeds with 4000 bodies a half:
 * sigma(E) = 0.0016, sigma(2K/|W|) = 0.014. Velocities left unscaled
 * would give 2K/|W| = 2. */
Test(ic_models, merger_halves_in_equilibrium) {
  const size_t n = 8000, half = 4000;
  model m = make_with(tfmm_ic_merger, n, 2024);
  for (size_t k = 0; k < 2; k++) {
    const energy e = energies(&m, k * half, half);
    const double E = e.K + e.W, ratio = 2 * e.K / fabs(e.W);
    cr_log_info("merger half %zu: E = %.5f, 2K/|W| = %.4f", k, E, ratio);
    cr_assert(fabs(E + 1.0 / 16.0) < 5 * 0.0016, "half %zu: E = %.5f", k, E);
    cr_assert(fabs(ratio - 1) < 5 * 0.014, "half %zu: 2K/|W| = %.4f", k, ratio);
  }
  release(&m);
}
