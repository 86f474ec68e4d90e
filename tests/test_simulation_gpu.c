/* The simulation with its state on the GPU (the gpu schedule): a restart
 * bit-identical to the run straight through with one global step, and to
 * the run that saved the state in the middle of a hierarchy of individual
 * steps; the kept tree refit at the sub-steps and built again when its
 * leaves grow (its forces: test_tree_refit_gpu.c); the device's
 * diagnostics against the host's compensated sums of the same state; the
 * GPU's steps against the CPU's from the same bodies, within what their
 * forces' difference allows. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

typedef struct bodies {
  size_t n;
  double *pos, *vel, *mass;
} bodies;

static bodies hernquist(size_t n, uint64_t seed) {
  bodies b = {n, malloc(3 * n * sizeof(double)), malloc(3 * n * sizeof(double)),
              malloc(n * sizeof(double))};
  cr_assert_eq(tfmm_ic_hernquist(n, seed, b.pos, b.vel, b.mass), TFMM_OK);
  return b;
}

static void bodies_free(bodies *b) {
  free(b->pos);
  free(b->vel);
  free(b->mass);
}

static tfmm_sim_config gpu_config(double eta) {
  tfmm_sim_config c;
  tfmm_sim_config_defaults(&c);
  c.solver.device = TFMM_DEVICE_GPU;
  c.solver.schedule = TFMM_SCHEDULE_GPU;
  c.solver.softening = TFMM_SOFTENING_SPLINE;
  c.solver.eps = 0.01;
  c.solver.leaf_size = 32;
  c.eta = eta;
  c.dt = 1.0 / 32;
  c.dt_min = 1.0 / 32768;
  return c;
}

static tfmm_sim *make_sim(const tfmm_sim_config *c, const bodies *b) {
  tfmm_sim *sim = NULL;
  const tfmm_status st =
      tfmm_sim_create(&sim, c, b->n, b->pos, b->vel, b->mass, NULL);
  cr_assert_eq(st, TFMM_OK, "create: %s", tfmm_sim_message(sim));
  return sim;
}

static void expect_same_state(const tfmm_sim_state *a,
                              const tfmm_sim_state *b) {
  const size_t n = a->n;
  cr_expect_eq(a->ticks, b->ticks);
  cr_expect_eq(a->step, b->step);
  cr_expect(memcmp(a->pos, b->pos, 3 * n * sizeof(double)) == 0, "positions");
  cr_expect(memcmp(a->vel, b->vel, 3 * n * sizeof(double)) == 0, "velocities");
  cr_expect(memcmp(a->acc, b->acc, 3 * n * sizeof(double)) == 0,
            "accelerations");
  cr_expect(memcmp(a->pot, b->pot, n * sizeof(double)) == 0, "potentials");
  cr_expect(memcmp(a->bins, b->bins, n) == 0, "bins");
}

/* k steps, saved, restored into a new sim (a fresh upload, a fresh tree)
 * and k more. With one global step every evaluation builds its tree, and
 * the restart equals the run straight through 2k steps, never saved. With
 * individual steps the sub-steps refit the kept tree (pipeline/tree_life.h),
 * and a save makes the saving sim's next evaluation build afresh, as the
 * restart's first does: the restart equals the saving sim going on k
 * more. */
static void restart_bit_identical(double eta) {
  test_require_gpu();
  /* With individual steps, enough bodies that sub-steps use the tree (a
   * sub-step of k active bodies with k n <= 2^30 sums them directly). */
  bodies b = hernquist(eta > 0 ? 150000 : 30000, 5150);
  const tfmm_sim_config c = gpu_config(eta);
  tfmm_sim *straight = make_sim(&c, &b);
  tfmm_sim *first = make_sim(&c, &b);
  int64_t k = 0, refits = 0;
  do {
    cr_assert_eq(tfmm_sim_step(first, 1), TFMM_OK, "%s",
                 tfmm_sim_message(first));
    refits += tfmm_solver_stats(tfmm_sim_solver(first))->tree_refits > 0;
    k++;
  } while (k < 3 || (eta > 0 && tfmm_sim_synchronised(first)));
  if (eta > 0)
    cr_expect_gt(refits, 0, "the tree was never refit before the save");
  else
    cr_expect_eq(refits, 0, "a global step refit its tree");
  tfmm_sim_state half;
  cr_assert_eq(tfmm_sim_save(first, &half), TFMM_OK, "%s",
               tfmm_sim_message(first));
  tfmm_sim *second = NULL;
  cr_assert_eq(tfmm_sim_restore(&second, &c, &half), TFMM_OK, "%s",
               tfmm_sim_message(second));
  tfmm_sim *against = first;
  if (eta > 0) {
    cr_assert_eq(tfmm_sim_step(first, k), TFMM_OK, "%s",
                 tfmm_sim_message(first));
  } else {
    tfmm_sim_destroy(first);
    first = NULL;
    cr_assert_eq(tfmm_sim_step(straight, 2 * k), TFMM_OK, "%s",
                 tfmm_sim_message(straight));
    against = straight;
  }
  cr_assert_eq(tfmm_sim_step(second, k), TFMM_OK, "%s",
               tfmm_sim_message(second));
  cr_expect_eq(tfmm_solver_stats(tfmm_sim_solver(second))->schedule,
               TFMM_SCHEDULE_GPU);
  tfmm_sim_state a, s;
  cr_assert_eq(tfmm_sim_save(against, &a), TFMM_OK);
  cr_assert_eq(tfmm_sim_save(second, &s), TFMM_OK);
  expect_same_state(&a, &s);
  tfmm_sim_destroy(straight);
  tfmm_sim_destroy(first);
  tfmm_sim_destroy(second);
  bodies_free(&b);
}

Test(simulation_gpu, restart_is_bit_identical_fixed_step) {
  restart_bit_identical(0.0);
}

Test(simulation_gpu, restart_mid_hierarchy_is_bit_identical) {
  restart_bit_identical(0.025);
}

/* The device's diagnostics of a stepped state against the host's
 * compensated sums (tfmm_diagnostics_compute) of the same state, saved:
 * within 1e-13 of the sums of magnitudes, far above both's rounding. */
Test(simulation_gpu, device_diagnostics_match_the_host_sums) {
  test_require_gpu();
  bodies b = hernquist(50000, 77);
  const tfmm_sim_config c = gpu_config(0.025);
  tfmm_sim *sim = make_sim(&c, &b);
  cr_assert_eq(tfmm_sim_advance_to(sim, 2.0 / 32), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  tfmm_diagnostics dev, host;
  double err;
  cr_assert_eq(tfmm_sim_diagnostics(sim, &dev, &err), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  tfmm_sim_state s;
  cr_assert_eq(tfmm_sim_save(sim, &s), TFMM_OK);
  cr_assert_eq(
      tfmm_diagnostics_compute(s.n, s.pos, s.vel, s.mass, s.pot, &host),
      TFMM_OK);
  const double scale = fabs(host.kinetic) + fabs(host.potential);
  cr_expect(fabs(dev.total - host.total) <= 1e-13 * scale,
            "E: device %.17g, host %.17g", dev.total, host.total);
  cr_expect(fabs(dev.kinetic - host.kinetic) <= 1e-13 * scale);
  cr_expect(fabs(dev.mass - host.mass) <= 1e-15 * host.mass);
  for (int d = 0; d < 3; d++) {
    cr_expect(fabs(dev.momentum[d] - host.momentum[d]) <= 1e-13,
              "P[%d]: %.17g against %.17g", d, dev.momentum[d],
              host.momentum[d]);
    cr_expect(fabs(dev.centre_of_mass[d] - host.centre_of_mass[d]) <= 1e-13);
  }
  cr_expect(fabs(err) < 1e-3, "|dE/E| %.3g after two steps", err);
  tfmm_sim_destroy(sim);
  bodies_free(&b);
}

/* The same bodies stepped on the GPU and on the CPU (the same solver
 * settings): after a few steps the states differ only through the
 * forces' difference (each within the accuracy asked, 1e-3), so the
 * positions by far less than a step's motion; and the bodies' bins agree
 * to within one (the two sides' accelerations may straddle a power of
 * two). */
Test(simulation_gpu, gpu_steps_follow_the_cpu_steps) {
  test_require_gpu();
  bodies b = hernquist(20000, 31337);
  tfmm_sim_config c = gpu_config(0.025);
  tfmm_sim *gpu = make_sim(&c, &b);
  c.solver.device = TFMM_DEVICE_CPU;
  c.solver.schedule = TFMM_SCHEDULE_AUTO;
  tfmm_sim *cpu = make_sim(&c, &b);
  cr_assert_eq(tfmm_sim_advance_to(gpu, 1.0 / 32), TFMM_OK, "%s",
               tfmm_sim_message(gpu));
  cr_assert_eq(tfmm_sim_advance_to(cpu, 1.0 / 32), TFMM_OK, "%s",
               tfmm_sim_message(cpu));
  tfmm_sim_state g, h;
  cr_assert_eq(tfmm_sim_save(gpu, &g), TFMM_OK);
  cr_assert_eq(tfmm_sim_save(cpu, &h), TFMM_OK);
  cr_expect_eq(g.ticks, h.ticks);
  double worst = 0, moved = 0;
  size_t bins_off = 0;
  for (size_t i = 0; i < b.n; i++) {
    for (int d = 0; d < 3; d++) {
      worst = fmax(worst, fabs(g.pos[3 * i + d] - h.pos[3 * i + d]));
      moved = fmax(moved, fabs(g.pos[3 * i + d] - b.pos[3 * i + d]));
    }
    bins_off += abs(g.bins[i] - h.bins[i]) > 1;
  }
  cr_expect_lt(worst, 1e-3 * moved,
               "positions differ by %.3g after moving up to %.3g", worst,
               moved);
  cr_expect_eq(bins_off, 0, "%zu bodies' bins differ by more than one",
               bins_off);
  tfmm_sim_destroy(gpu);
  tfmm_sim_destroy(cpu);
  bodies_free(&b);
}

/* The state saved in two halves on the GPU (the copy out runs on its own
 * stream while the steps go on) is the state of the begin, bit for bit:
 * that of a twin sim stepped as far; its views stay that state through
 * the next begin and end (two host buffers in turn). */
Test(simulation_gpu, save_in_two_halves_keeps_the_state_of_the_begin) {
  test_require_gpu();
  bodies b = hernquist(40000, 99);
  const tfmm_sim_config c = gpu_config(0.025);
  tfmm_sim *sim = make_sim(&c, &b);
  cr_assert_eq(tfmm_sim_step(sim, 6), TFMM_OK, "%s", tfmm_sim_message(sim));
  /* The device is ahead of the host copy: the begin copies from it. */
  cr_assert_eq(tfmm_sim_save_begin(sim), TFMM_OK, "%s", tfmm_sim_message(sim));
  cr_assert_eq(tfmm_sim_step(sim, 3), TFMM_OK, "%s", tfmm_sim_message(sim));
  tfmm_sim_state mid;
  cr_assert_eq(tfmm_sim_save_end(sim, &mid), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  tfmm_sim *twin = make_sim(&c, &b);
  cr_assert_eq(tfmm_sim_step(twin, 6), TFMM_OK);
  tfmm_sim_state t;
  cr_assert_eq(tfmm_sim_save(twin, &t), TFMM_OK);
  const size_t n = b.n;
  cr_expect_eq(mid.step, 6);
  cr_expect_eq(mid.ticks, t.ticks);
  cr_expect(memcmp(mid.pos, t.pos, 3 * n * sizeof(double)) == 0);
  cr_expect(memcmp(mid.vel, t.vel, 3 * n * sizeof(double)) == 0);
  cr_expect(memcmp(mid.acc, t.acc, 3 * n * sizeof(double)) == 0);
  cr_expect(memcmp(mid.pot, t.pot, n * sizeof(double)) == 0);
  cr_expect(memcmp(mid.bins, t.bins, n) == 0);
  cr_assert_eq(tfmm_sim_save_begin(sim), TFMM_OK, "%s", tfmm_sim_message(sim));
  cr_assert_eq(tfmm_sim_step(sim, 2), TFMM_OK, "%s", tfmm_sim_message(sim));
  tfmm_sim_state later;
  cr_assert_eq(tfmm_sim_save_end(sim, &later), TFMM_OK, "%s",
               tfmm_sim_message(sim));
  cr_expect_eq(later.step, 9);
  cr_expect(later.pos != mid.pos, "the second state in the first's buffer");
  cr_expect(memcmp(mid.pos, t.pos, 3 * n * sizeof(double)) == 0,
            "the first state's views changed at the second begin");
  cr_expect(memcmp(mid.acc, t.acc, 3 * n * sizeof(double)) == 0);
  cr_expect(memcmp(mid.bins, t.bins, n) == 0);
  tfmm_sim_destroy(twin);
  tfmm_sim_destroy(sim);
  bodies_free(&b);
}

/* One evaluation a step with individual steps: whether it was at every
 * body, and its tree's refits since the build (0: built). */
typedef struct tree_tally {
  int full_built, full_refit;     /* evaluations of every body */
  int subset_built, subset_refit; /* at a subset */
  double growth;                  /* the largest growth of a refit */
} tree_tally;

static tree_tally run_and_tally(tfmm_sim *sim, size_t n, int steps) {
  tree_tally t = {0, 0, 0, 0, 1.0};
  for (int k = 0; k < steps; k++) {
    cr_assert_eq(tfmm_sim_step(sim, 1), TFMM_OK, "%s", tfmm_sim_message(sim));
    const tfmm_stats *x = tfmm_solver_stats(tfmm_sim_solver(sim));
    const int full = tfmm_sim_stats(sim)->updates == (int64_t)n;
    if (tfmm_sim_stats(sim)->direct_substeps > 0)
      continue; /* summed directly: no tree */
    const int refit = x->tree_refits > 0;
    t.full_built += full && !refit;
    t.full_refit += full && refit;
    t.subset_built += !full && !refit;
    t.subset_refit += !full && refit;
    if (refit)
      t.growth = fmax(t.growth, x->tree_growth);
  }
  return t;
}

/* The kept tree's rule in a run (pipeline/tree_life.h): every evaluation
 * of every body builds, the sub-steps refit, and bodies ten times too fast
 * for their sphere spread the leaves until a sub-step builds again. */
Test(simulation_gpu, sub_steps_refit_the_tree_until_it_grows, .timeout = 300) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  const tfmm_sim_config c = gpu_config(0.025);
  /* Enough bodies that most sub-steps use the tree (k n > 2^30). */
  bodies b = hernquist(150000, seed);
  tfmm_sim *sim = make_sim(&c, &b);
  tree_tally t = run_and_tally(sim, b.n, 24);
  cr_expect_gt(t.full_built, 0, "seed %llu: no evaluation of every body",
               (unsigned long long)seed);
  cr_expect_eq(t.full_refit, 0, "seed %llu: %d evaluations of every body refit",
               (unsigned long long)seed, t.full_refit);
  cr_expect_gt(t.subset_refit, 0, "seed %llu: no sub-step refit",
               (unsigned long long)seed);
  tfmm_sim_destroy(sim);
  for (size_t k = 0; k < 3 * b.n; k++)
    b.vel[k] *= 10;
  sim = make_sim(&c, &b);
  t = run_and_tally(sim, b.n, 24);
  cr_expect_eq(t.full_refit, 0, "seed %llu: hot: a full evaluation refit",
               (unsigned long long)seed);
  cr_expect_gt(t.subset_built, 0,
               "seed %llu: hot bodies: no sub-step built afresh (%d refit, "
               "largest growth %.3g)",
               (unsigned long long)seed, t.subset_refit, t.growth);
  tfmm_sim_destroy(sim);
  bodies_free(&b);
}

/* A sub-step of few active bodies (k n <= 2^30) summed directly on the
 * GPU: the bodies whose forces changed are the step's active ones, and
 * theirs equal the CPU's double-precision reference at the same
 * positions to 1e-12; every other body's are untouched, bit for bit. */
Test(simulation_gpu, sparse_sub_steps_are_summed_directly, .timeout = 300) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  bodies b = hernquist(20000, seed);
  const tfmm_sim_config c = gpu_config(0.025);
  tfmm_sim *sim = make_sim(&c, &b);
  /* The forces at step 0 first, so that each step below is one
   * evaluation. */
  cr_assert_eq(tfmm_sim_start(sim), TFMM_OK, "%s", tfmm_sim_message(sim));
  tfmm_sim_state before = {0}, after = {0};
  double *old = malloc(3 * b.n * sizeof *old);
  int checked = 0;
  for (int k = 0; k < 40 && checked < 3; k++) {
    /* (A saved state's arrays are the sim's own: the forces copied.) */
    cr_assert_eq(tfmm_sim_save(sim, &before), TFMM_OK);
    memcpy(old, before.acc, 3 * b.n * sizeof *old);
    cr_assert_eq(tfmm_sim_step(sim, 1), TFMM_OK, "%s", tfmm_sim_message(sim));
    const tfmm_step_stats *st = tfmm_sim_stats(sim);
    if (st->direct_substeps == 0)
      continue;
    cr_assert_eq(st->direct_substeps, 1);
    cr_assert_eq(st->evaluations, 1);
    cr_assert_lt(st->updates, (int64_t)b.n, "a direct evaluation of all");
    cr_assert_eq(tfmm_sim_save(sim, &after), TFMM_OK);
    const size_t n = after.n;
    size_t *changed = malloc(n * sizeof *changed), m = 0;
    for (size_t i = 0; i < n; i++)
      if (memcmp(old + 3 * i, after.acc + 3 * i, 3 * sizeof(double)))
        changed[m++] = i;
    cr_expect_eq((int64_t)m, st->updates,
                 "seed %llu: %zu forces changed, %lld bodies active",
                 (unsigned long long)seed, m, (long long)st->updates);
    tfmm_config rc = c.solver;
    rc.method = TFMM_METHOD_REFERENCE;
    rc.device = TFMM_DEVICE_CPU;
    tfmm_solver *ref = NULL;
    cr_assert_eq(tfmm_solver_create(&ref, &rc), TFMM_OK);
    double *acc = malloc(3 * (m + 1) * sizeof *acc);
    cr_assert_eq(tfmm_solver_reference_at(ref, n, after.pos, after.mass, m,
                                          changed, acc, NULL),
                 TFMM_OK, "%s", tfmm_solver_message(ref));
    for (size_t j = 0; j < m; j++) {
      const double *a = after.acc + 3 * changed[j], *r = acc + 3 * j;
      const double e = test_relative_error(a, r);
      cr_assert_leq(e, 1e-12, "seed %llu: body %zu: %.3g from the reference",
                    (unsigned long long)seed, changed[j], e);
    }
    free(acc);
    free(changed);
    tfmm_solver_destroy(ref);
    checked++;
  }
  cr_expect_gt(checked, 0, "seed %llu: no sub-step was summed directly",
               (unsigned long long)seed);
  free(old);
  tfmm_sim_destroy(sim);
  bodies_free(&b);
}
