/* Individual time steps of the simulation (tilefmm.h, "The simulation"):
 * an eccentric Kepler orbit (e = 0.9) against Kepler's equation, second
 * order in the step as eta shrinks; a Hernquist sphere whose energy error
 * at equal work (body updates) is smaller with block steps than with the
 * fixed step; time reversibility where the bins stay fixed; a restart in
 * the middle of a hierarchy bit-identical to the run straight through; the
 * bins, the clock and the criterion against hand computations; and bad
 * settings refused with a message. */
#include "kepler.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#define PI 3.14159265358979323846

/* Individual steps on the CPU, exact forces, spline softening (Newtonian
 * beyond 2.8 eps, so that a Kepler orbit that keeps outside it is
 * Kepler's). */
static tfmm_sim_config block_config(double eta, double eps, double dt_max,
                                    double dt_min) {
  tfmm_sim_config c;
  tfmm_sim_config_defaults(&c);
  c.solver.method = TFMM_METHOD_REFERENCE;
  c.solver.device = TFMM_DEVICE_CPU;
  c.solver.softening = TFMM_SOFTENING_SPLINE;
  c.solver.eps = eps;
  c.eta = eta;
  c.dt_max = dt_max;
  c.dt_min = dt_min;
  return c;
}

static tfmm_sim *make_sim(const tfmm_sim_config *c, size_t n, const double *pos,
                          const double *vel, const double *mass) {
  tfmm_sim *sim = NULL;
  const tfmm_status st = tfmm_sim_create(&sim, c, n, pos, vel, mass, NULL);
  cr_assert_eq(st, TFMM_OK, "create: %s", tfmm_sim_message(sim));
  return sim;
}

/* ---- Kepler at e = 0.9 ------------------------------------------------ */

/* One period (to the first synchronisation point after it) of a Kepler
 * orbit of eccentricity 0.9, masses 3/4 and 1/4, with individual steps
 * for eta. Pericentre 0.1 against the spline's support 0.028: Newtonian.
 * Returns the position error of the relative orbit against Kepler's
 * equation; *de the |dE/E| there; *bins_used the distinct bins seen. */
static double kepler_block_error(double eta, double *de, int *bins_used) {
  const double e = 0.9, m0 = 0.75;
  double pos[6], vel[6];
  const double mass[2] = {m0, 1 - m0};
  kepler_bodies(e, m0, 0.0, pos, vel);
  const tfmm_sim_config c = block_config(eta, 0.01, 1.0 / 16, 1.0 / 65536);
  tfmm_sim *sim = make_sim(&c, 2, pos, vel, mass);
  int64_t seen[64] = {0}, counts[64];
  /* Step by step to the first synchronisation point (multiple of dt_max)
   * at or after the period, recording the bins the bodies passed
   * through. */
  const double end = ceil(2 * PI * 16) / 16;
  while (tfmm_sim_time(sim) < end) {
    cr_assert_eq(tfmm_sim_step(sim, 1), TFMM_OK, "%s", tfmm_sim_message(sim));
    const int k = tfmm_sim_bins(sim, counts, 64);
    for (int b = 0; b <= k; b++)
      seen[b] += counts[b];
  }
  cr_assert_eq(tfmm_sim_time(sim), end);
  cr_assert(tfmm_sim_synchronised(sim));
  *bins_used = 0;
  for (int b = 0; b < 64; b++)
    *bins_used += seen[b] > 0;
  tfmm_sim_state s;
  cr_assert_eq(tfmm_sim_save(sim, &s), TFMM_OK);
  double want[6], want_vel[6];
  kepler_bodies(e, m0, tfmm_sim_time(sim), want, want_vel);
  double err = 0;
  for (int d = 0; d < 3; d++) {
    const double r = s.pos[3 + d] - s.pos[d], r0 = want[3 + d] - want[d];
    err = fmax(err, fabs(r - r0));
  }
  tfmm_diagnostics dg;
  cr_assert_eq(tfmm_sim_diagnostics(sim, &dg, de), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  *de = fabs(*de);
  tfmm_sim_destroy(sim);
  return err;
}

Test(timesteps, kepler_e09_converges_at_second_order) {
  double de[3];
  int bins[3];
  const double etas[3] = {1e-3, 2.5e-4, 6.25e-5};
  double err[3];
  for (int k = 0; k < 3; k++)
    err[k] = kepler_block_error(etas[k], &de[k], &bins[k]);
  /* dt_i is sqrt(2 eta eps / |a|): eta / 4 halves every step, so a second
   * order scheme's error falls 4 times (a first order one's, 2 times). */
  for (int k = 0; k < 2; k++) {
    cr_expect(bins[k] >= 4,
              "eta %g: %d bins used: the hierarchy is not "
              "exercised",
              etas[k], bins[k]);
    const double r = err[k] / err[k + 1];
    cr_expect(r > 3.0 && r < 5.3,
              "position error %.3g at eta %g, %.3g at eta %g: ratio %.3f, not "
              "4",
              err[k], etas[k], err[k + 1], etas[k + 1], r);
    const double q = de[k] / de[k + 1];
    cr_expect(q > 3.0 && q < 5.3,
              "|dE/E| %.3g at eta %g, %.3g at eta %g: ratio %.3f, not 4", de[k],
              etas[k], de[k + 1], etas[k + 1], q);
  }
  cr_expect_lt(err[2], 1e-3, "position error %.3g at eta %g", err[2], etas[2]);
}

/* ---- Hernquist: block steps against the fixed step -------------------- */

/* The largest |dE/E| at t = 1/16, 2/16, ..., 1 of a 2048-body Hernquist
 * sphere (eps 0.01), and the body updates (forces computed at one body)
 * it took. eta > 0: block steps with dt_max 1/16; eta = 0: the fixed step
 * dt. (The energy error of a leapfrog oscillates along the orbits; its
 * largest value over the run is the fair measure, not its value at one
 * time.) */
static double hernquist_error(double eta, double dt, int64_t *updates) {
  const size_t n = 2048;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel),
         *mass = malloc(n * sizeof *mass);
  cr_assert_eq(tfmm_ic_hernquist(n, 424242, pos, vel, mass), TFMM_OK);
  tfmm_sim_config c = block_config(eta, 0.01, 1.0 / 16, 1.0 / 65536);
  c.solver.method = TFMM_METHOD_DIRECT;
  c.solver.precision = TFMM_PRECISION_DOUBLE;
  c.dt = dt;
  tfmm_sim *sim = make_sim(&c, n, pos, vel, mass);
  *updates = 0;
  double worst = 0;
  cr_assert_eq(tfmm_sim_start(sim), TFMM_OK);
  for (int k = 1; k <= 16; k++) {
    cr_assert_eq(tfmm_sim_advance_to(sim, k / 16.0), TFMM_OK, "%s",
                 tfmm_sim_message(sim));
    *updates += tfmm_sim_stats(sim)->updates;
    tfmm_diagnostics d;
    double de;
    cr_assert_eq(tfmm_sim_diagnostics(sim, &d, &de), TFMM_OK, "%s",
                 tfmm_sim_message(sim));
    worst = fmax(worst, fabs(de));
  }
  tfmm_sim_destroy(sim);
  free(pos);
  free(vel);
  free(mass);
  return worst;
}

Test(timesteps, hernquist_block_steps_beat_the_fixed_step_at_equal_work,
     .timeout = 600) {
  int64_t block_updates, fixed_updates;
  const double block = hernquist_error(0.025, 1.0 / 16, &block_updates);
  /* The fixed step that costs at least as much (n updates a step) and
   * lands on the same times. */
  const double steps = 16 * ceil((double)block_updates / 2048.0 / 16);
  const double fixed = hernquist_error(0.0, 1.0 / steps, &fixed_updates);
  cr_expect(fixed_updates >= block_updates,
            "the fixed step took fewer updates (%lld) than the block steps "
            "(%lld)",
            (long long)fixed_updates, (long long)block_updates);
  cr_expect_lt(block, fixed,
               "largest |dE/E| %.3g with block steps (%lld updates), %.3g "
               "with the fixed step 1/%g (%lld updates)",
               block, (long long)block_updates, fixed, steps,
               (long long)fixed_updates);
}

/* ---- reversibility ----------------------------------------------------- */

/* A heavy body and three light ones on circular orbits at radii 1, 3, 9:
 * their accelerations, and so their bins (5, 7, 9 and the top, 10), stay
 * fixed, and each dt_max of the hierarchy is a symmetric composition of
 * kicks and drifts: reversing the velocities at a synchronisation point
 * and running as long brings the bodies back to rounding. */
Test(timesteps, fixed_bins_are_time_reversible) {
  const size_t n = 4;
  double pos[12] = {0}, vel[12] = {0}, mass[4] = {1, 1e-6, 1e-6, 1e-6};
  const double radius[3] = {1, 3, 9}, angle[3] = {0.3, 2.1, 4.4};
  for (int k = 0; k < 3; k++) {
    const double v = sqrt(1 / radius[k]);
    pos[3 * (k + 1)] = radius[k] * cos(angle[k]);
    pos[3 * (k + 1) + 1] = radius[k] * sin(angle[k]);
    vel[3 * (k + 1)] = -v * sin(angle[k]);
    vel[3 * (k + 1) + 1] = v * cos(angle[k]);
  }
  const tfmm_sim_config c = block_config(0.01, 0.01, 0.25, 0.25 / 1024);
  tfmm_sim *sim = make_sim(&c, n, pos, vel, mass);
  cr_assert_eq(tfmm_sim_advance_to(sim, 2.0), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  int64_t counts[11];
  cr_assert_eq(tfmm_sim_bins(sim, counts, 11), 10);
  for (int b = 5; b <= 9; b += 2)
    cr_expect_eq(counts[b], 1, "bin %d holds %lld bodies", b,
                 (long long)counts[b]);
  cr_expect_eq(counts[10], 1);
  tfmm_sim_state s;
  cr_assert_eq(tfmm_sim_save(sim, &s), TFMM_OK);
  double back_pos[12], back_vel[12];
  memcpy(back_pos, s.pos, sizeof back_pos);
  for (int k = 0; k < 12; k++)
    back_vel[k] = -s.vel[k];
  tfmm_sim *rev = make_sim(&c, n, back_pos, back_vel, mass);
  cr_assert_eq(tfmm_sim_advance_to(rev, 2.0), TFMM_OK, "%s",
               tfmm_sim_message(rev));
  cr_expect_eq(tfmm_sim_steps(rev), tfmm_sim_steps(sim));
  tfmm_sim_state r;
  cr_assert_eq(tfmm_sim_save(rev, &r), TFMM_OK);
  for (size_t k = 0; k < 3 * n; k++) {
    cr_expect(fabs(r.pos[k] - pos[k]) < 1e-12,
              "position %zu: %.17g back at %.17g", k, pos[k], r.pos[k]);
    cr_expect(fabs(-r.vel[k] - vel[k]) < 1e-12,
              "velocity %zu: %.17g back at %.17g", k, vel[k], -r.vel[k]);
  }
  /* The two runs moved the bodies (the orbit at radius 1 by 2 radians). */
  cr_expect_gt(fabs(s.pos[3] - pos[3]), 0.1);
  tfmm_sim_destroy(sim);
  tfmm_sim_destroy(rev);
}

/* ---- restart in the middle of a hierarchy ------------------------------ */

static void restart_mid_hierarchy(tfmm_method method) {
  const size_t n = 600;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel),
         *mass = malloc(n * sizeof *mass);
  cr_assert_eq(tfmm_ic_hernquist(n, 777, pos, vel, mass), TFMM_OK);
  tfmm_sim_config c = block_config(0.025, 0.02, 1.0 / 8, 1.0 / 2048);
  c.solver.method = method;
  tfmm_sim *straight = make_sim(&c, n, pos, vel, mass);
  tfmm_sim *first = make_sim(&c, n, pos, vel, mass);
  /* Find a stop that is not a synchronisation point. */
  int64_t k = 0;
  do {
    cr_assert_eq(tfmm_sim_step(first, 1), TFMM_OK, "%s",
                 tfmm_sim_message(first));
    k++;
  } while (tfmm_sim_synchronised(first) || k < 5);
  cr_assert_lt(k, 1000);
  tfmm_sim_state half;
  cr_assert_eq(tfmm_sim_save(first, &half), TFMM_OK);
  tfmm_diagnostics d;
  cr_expect_eq(tfmm_sim_diagnostics(first, &d, NULL), TFMM_ERR_INVALID_ARGUMENT,
               "diagnostics between synchronisation points");
  cr_expect(strstr(tfmm_sim_message(first), "synchronised") != NULL, "%s",
            tfmm_sim_message(first));
  tfmm_sim *second = NULL;
  cr_assert_eq(tfmm_sim_restore(&second, &c, &half), TFMM_OK, "%s",
               tfmm_sim_message(second));
  tfmm_sim_destroy(first);
  cr_assert_eq(tfmm_sim_step(straight, 2 * k), TFMM_OK);
  cr_assert_eq(tfmm_sim_step(second, k), TFMM_OK, "%s",
               tfmm_sim_message(second));
  tfmm_sim_state a, b;
  cr_assert_eq(tfmm_sim_save(straight, &a), TFMM_OK);
  cr_assert_eq(tfmm_sim_save(second, &b), TFMM_OK);
  cr_expect_eq(a.ticks, b.ticks);
  cr_expect_eq(a.step, b.step);
  cr_expect(memcmp(a.pos, b.pos, 3 * n * sizeof *a.pos) == 0);
  cr_expect(memcmp(a.vel, b.vel, 3 * n * sizeof *a.vel) == 0);
  cr_expect(memcmp(a.acc, b.acc, 3 * n * sizeof *a.acc) == 0);
  cr_expect(memcmp(a.pot, b.pot, n * sizeof *a.pot) == 0);
  cr_expect(memcmp(a.bins, b.bins, n) == 0);
  cr_expect_eq(tfmm_sim_time(straight), tfmm_sim_time(second));
  tfmm_sim_destroy(straight);
  tfmm_sim_destroy(second);
  free(pos);
  free(vel);
  free(mass);
}

Test(timesteps, restart_mid_hierarchy_is_bit_identical_fmm) {
  restart_mid_hierarchy(TFMM_METHOD_FMM);
}

Test(timesteps, restart_mid_hierarchy_is_bit_identical_direct) {
  restart_mid_hierarchy(TFMM_METHOD_DIRECT);
}

/* ---- the bins, the clock and the criterion by hand ----------------------- */

/* Bodies far apart with known accelerations: each bin is the largest b with
 * 2^b tick <= sqrt(2 eta eps / |a|), capped at K, and the opening kick
 * uses it; the clock's tick is dt_max / 2^K, K = floor(log2(dt_max /
 * dt_min)). */
Test(timesteps, bins_and_clock_match_hand_computation) {
  /* A heavy body and light ones at radii r: |a| = 1 / r^2 (G = 1). */
  const size_t n = 6;
  const double radius[5] = {0.05, 0.2, 0.7, 3, 40};
  double pos[18] = {0}, vel[18] = {0},
         mass[6] = {1, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9};
  for (int k = 0; k < 5; k++)
    pos[3 * (k + 1) + (k % 3)] = radius[k];
  const double eta = 0.02, eps = 0.001, dt_max = 0.5, dt_min = 0.5 / 1000;
  const tfmm_sim_config c = block_config(eta, eps, dt_max, dt_min);
  tfmm_sim *sim = make_sim(&c, n, pos, vel, mass);
  cr_assert_eq(tfmm_sim_step(sim, 1), TFMM_OK, "%s", tfmm_sim_message(sim));
  tfmm_sim_state s;
  cr_assert_eq(tfmm_sim_save(sim, &s), TFMM_OK);
  const int K = 9; /* 2^9 = 512 <= 1000 < 1024 */
  cr_expect_eq(s.tick, dt_max / 512);
  int64_t counts[16] = {0};
  cr_expect_eq(tfmm_sim_bins(sim, counts, 16), K);
  for (int k = 0; k < 5; k++) {
    const double a = 1 / (radius[k] * radius[k]);
    const double dt = sqrt(2 * eta * eps / a);
    int want = 0;
    while (want < K && ldexp(s.tick, want + 1) <= dt)
      want++;
    cr_expect_eq(s.bins[k + 1], want, "radius %g: dt %g: bin %d, not %d",
                 radius[k], dt, s.bins[k + 1], want);
  }
  cr_expect_eq(s.bins[0], K, "the heavy body barely moves: the top bin");
  /* The first step went to the end of the smallest bin's step. */
  int smallest = K;
  for (size_t i = 0; i < n; i++)
    smallest = s.bins[i] < smallest ? s.bins[i] : smallest;
  cr_expect_eq(s.ticks, (int64_t)1 << smallest);
  cr_expect_eq(tfmm_sim_time(sim), ldexp(s.tick, smallest));
  cr_expect_eq(tfmm_sim_synchronised(sim), 0);
  /* Updates: the forces at step 0 (every body), then those whose step
   * ended (the smallest bin's). */
  int64_t ended = 0;
  for (size_t i = 0; i < n; i++)
    ended += s.bins[i] == smallest;
  cr_expect_eq(tfmm_sim_stats(sim)->updates, (int64_t)n + ended);
  /* The criterion at these accelerations: the innermost body's. */
  double shortest;
  size_t longer;
  cr_assert_eq(tfmm_sim_step_criterion(sim, eta, &shortest, &longer), TFMM_OK,
               "%s", tfmm_sim_message(sim));
  const double a_in = 1 / (radius[0] * radius[0]);
  cr_expect(fabs(shortest / sqrt(2 * eta * eps / a_in) - 1) < 0.05,
            "shortest %g", shortest);
  cr_expect_geq(longer, 3);
  tfmm_sim_destroy(sim);
}

/* With eta = 0 the clock is the fixed step's: tick dt, one bin, every
 * step synchronised, and the state's ticks are its steps. */
Test(timesteps, one_global_step_is_one_bin) {
  double pos[6], vel[6];
  const double mass[2] = {0.5, 0.5};
  kepler_bodies(0.3, 0.5, 0.0, pos, vel);
  tfmm_sim_config c = block_config(0.0, 0.01, 0.0, 0.0);
  c.dt = 1.0 / 64;
  tfmm_sim *sim = make_sim(&c, 2, pos, vel, mass);
  cr_assert_eq(tfmm_sim_step(sim, 7), TFMM_OK);
  tfmm_sim_state s;
  cr_assert_eq(tfmm_sim_save(sim, &s), TFMM_OK);
  cr_expect_eq(s.tick, 1.0 / 64);
  cr_expect_eq(s.ticks, 7);
  cr_expect_eq(s.bins[0] + s.bins[1], 0);
  cr_expect_eq(tfmm_sim_syncs(sim), 7);
  cr_expect(tfmm_sim_synchronised(sim));
  cr_expect_eq(tfmm_sim_bins(sim, NULL, 0), 0);
  tfmm_sim_destroy(sim);
}

/* ---- bad settings -------------------------------------------------------- */

static void expect_refused(const tfmm_sim_config *c, const char *needle) {
  double pos[6], vel[6];
  const double mass[2] = {0.5, 0.5};
  kepler_bodies(0.3, 0.5, 0.0, pos, vel);
  tfmm_sim *sim = NULL;
  cr_expect_eq(tfmm_sim_create(&sim, c, 2, pos, vel, mass, NULL),
               TFMM_ERR_INVALID_ARGUMENT, "expected a refusal naming %s",
               needle);
  cr_expect(strstr(tfmm_sim_message(sim), needle) != NULL,
            "message '%s' does not name %s", tfmm_sim_message(sim), needle);
  tfmm_sim_destroy(sim);
}

Test(timesteps, bad_settings_are_refused_with_a_message) {
  tfmm_sim_config c = block_config(0.025, 0.0, 0.0, 0.0);
  expect_refused(&c, "eps > 0");
  c = block_config(-1, 0.01, 0.0, 0.0);
  expect_refused(&c, "eta");
  c = block_config(NAN, 0.01, 0.0, 0.0);
  expect_refused(&c, "eta");
  c = block_config(0.025, 0.01, 0.1, 0.2);
  expect_refused(&c, "dt_min");
  c = block_config(0.025, 0.01, -0.1, 0.0);
  expect_refused(&c, "dt_max");
  c = block_config(0.025, 0.01, 1.0, 1e-13);
  expect_refused(&c, "2^40");
  c = block_config(0.025, 0.01, INFINITY, 0.0);
  expect_refused(&c, "dt_max");
  c = block_config(0.025, 0.01, 0.0, 0.0);
  c.keep_tree = 2;
  expect_refused(&c, "keep_tree");
}

/* A state whose clock is not the configuration's is refused, as are bins
 * out of range. */
Test(timesteps, state_with_another_clock_is_refused) {
  double pos[6], vel[6];
  const double mass[2] = {0.5, 0.5};
  kepler_bodies(0.3, 0.5, 0.0, pos, vel);
  const tfmm_sim_config c = block_config(0.01, 0.01, 1.0 / 16, 1.0 / 1024);
  tfmm_sim *sim = make_sim(&c, 2, pos, vel, mass);
  cr_assert_eq(tfmm_sim_step(sim, 3), TFMM_OK);
  tfmm_sim_state s;
  cr_assert_eq(tfmm_sim_save(sim, &s), TFMM_OK);
  tfmm_sim_config other = c;
  other.dt_min = 1.0 / 4096;
  tfmm_sim *back = NULL;
  cr_expect_eq(tfmm_sim_restore(&back, &other, &s), TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_sim_message(back), "tick") != NULL, "%s",
            tfmm_sim_message(back));
  tfmm_sim_destroy(back);
  signed char bad_bins[2] = {3, 11};
  tfmm_sim_state t = s;
  t.bins = bad_bins;
  back = NULL;
  cr_expect_eq(tfmm_sim_restore(&back, &c, &t), TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_sim_message(back), "body 1: bin 11") != NULL, "%s",
            tfmm_sim_message(back));
  tfmm_sim_destroy(back);
  tfmm_sim_destroy(sim);
}

/* ---- a state saved in two halves ------------------------------------------
 */

/* tfmm_sim_save_begin, steps, then tfmm_sim_save_end: the state of the
 * begin, bit for bit, whatever the steps changed since; and its views
 * stay that state through the next begin and end (two states held). */
Test(timesteps, save_in_two_halves_keeps_the_state_of_the_begin) {
  const size_t n = 300;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel),
         *mass = malloc(n * sizeof *mass);
  cr_assert_eq(tfmm_ic_hernquist(n, 4242, pos, vel, mass), TFMM_OK);
  const tfmm_sim_config c = block_config(0.025, 0.02, 1.0 / 8, 1.0 / 2048);
  tfmm_sim *sim = make_sim(&c, n, pos, vel, mass);
  tfmm_sim_state none;
  cr_expect_eq(tfmm_sim_save_end(sim, &none), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_sim_step(sim, 5), TFMM_OK, "%s", tfmm_sim_message(sim));
  tfmm_sim_state now;
  cr_assert_eq(tfmm_sim_save(sim, &now), TFMM_OK);
  double *want = malloc(10 * n * sizeof *want);
  signed char *bins = malloc(n);
  memcpy(want, now.pos, 3 * n * sizeof *want);
  memcpy(want + 3 * n, now.vel, 3 * n * sizeof *want);
  memcpy(want + 6 * n, now.acc, 3 * n * sizeof *want);
  memcpy(want + 9 * n, now.pot, n * sizeof *want);
  memcpy(bins, now.bins, n);
  const int64_t ticks = now.ticks, step = now.step;
  cr_assert_eq(tfmm_sim_save_begin(sim), TFMM_OK, "%s", tfmm_sim_message(sim));
  cr_assert_eq(tfmm_sim_step(sim, 4), TFMM_OK, "%s", tfmm_sim_message(sim));
  tfmm_sim_state got;
  cr_assert_eq(tfmm_sim_save_end(sim, &got), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  cr_expect_eq(got.ticks, ticks);
  cr_expect_eq(got.step, step);
  cr_expect_neq(tfmm_sim_steps(sim), step, "the sim went on");
  cr_expect(memcmp(got.pos, want, 3 * n * sizeof *want) == 0);
  cr_expect(memcmp(got.vel, want + 3 * n, 3 * n * sizeof *want) == 0);
  cr_expect(memcmp(got.acc, want + 6 * n, 3 * n * sizeof *want) == 0);
  cr_expect(memcmp(got.pot, want + 9 * n, n * sizeof *want) == 0);
  cr_expect(memcmp(got.bins, bins, n) == 0);
  cr_assert_eq(tfmm_sim_save_begin(sim), TFMM_OK, "%s", tfmm_sim_message(sim));
  cr_assert_eq(tfmm_sim_step(sim, 2), TFMM_OK, "%s", tfmm_sim_message(sim));
  tfmm_sim_state later;
  cr_assert_eq(tfmm_sim_save_end(sim, &later), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  cr_expect_eq(later.step, step + 4);
  cr_expect(later.pos != got.pos, "the second state in the first's buffer");
  cr_expect(memcmp(got.pos, want, 3 * n * sizeof *want) == 0,
            "the first state's views changed at the second begin");
  cr_expect(memcmp(got.vel, want + 3 * n, 3 * n * sizeof *want) == 0);
  cr_expect(memcmp(got.acc, want + 6 * n, 3 * n * sizeof *want) == 0);
  cr_expect(memcmp(got.pot, want + 9 * n, n * sizeof *want) == 0);
  cr_expect(memcmp(got.bins, bins, n) == 0);
  free(want);
  free(bins);
  tfmm_sim_destroy(sim);
  free(pos);
  free(vel);
  free(mass);
}
