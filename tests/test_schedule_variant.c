/* A variant of the gpu schedule is one table entry: a table of the
 * library's stages (pipeline/stages.h), run by the pipeline as it runs
 * its own (tfmm_hierarchical_compute_with). The variant here is the gpu
 * schedule with its upload and download as stages of their own, as they
 * are, and the far field enqueued before the near field: every stage
 * writes only its own buffers, so the forces are the library's schedule's
 * bit for bit, in single and double precision, FMM and Barnes-Hut, the
 * geometric and the error criterion, with Plummer and spline softening,
 * near_only, at a subset of targets, and evaluation after evaluation on
 * one solver. A variant that needs new device work adds one kernel file
 * under kernels/<stage>/ whose entry point takes a stream, device arrays
 * and scratch (docs/architecture.md). Skips without a GPU. */
#include "testutil.h"

#include "hierarchical.h"
#include "pipeline/schedule.h"
#include "pipeline/stages.h"
#include "solver_handle.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

static const tfmm_stage FAR_FIRST[] = {
    {"gpu_upload", tfmm_stage_gpu_upload, 0},
    {"gpu_tree", tfmm_stage_gpu_tree, 0},
    {"gpu_targets", tfmm_stage_gpu_targets, 0},
    {"gpu_upward", tfmm_stage_gpu_upward, 1},
    {"gpu_lists", tfmm_stage_gpu_lists, 0},
    {"gpu_far", tfmm_stage_gpu_far, 0},
    {"gpu_near", tfmm_stage_gpu_near, 0},
    {"gpu_finish", tfmm_stage_gpu_finish, 0},
    {"gpu_download", tfmm_stage_gpu_download, 0},
};

static const tfmm_schedule VARIANT = {
    "gpu_far_first", FAR_FIRST, (int)(sizeof FAR_FIRST / sizeof FAR_FIRST[0])};

/* One evaluation of the solver's scaled bodies under a schedule. */
static tfmm_status run(tfmm_solver *s, const tfmm_schedule *schedule, size_t n,
                       const unsigned char *active, double *acc, double *pot) {
  return tfmm_hierarchical_compute_with(
      schedule, &s->run, s->leaf, s->gpu, &s->work, n, s->scaled_pos,
      s->scaled_mass, active, acc, pot, &s->stats, &s->err);
}

/* The variant against the library's gpu schedule on one configuration:
 * the same bits at every target, three evaluations in turn on one
 * solver. */
static void check(tfmm_config c, const test_bodies *b, int subset,
                  const char *label) {
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  const size_t n = b->n;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK, "%s: %s", label,
               tfmm_solver_message(s));
  double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
  double *acc2 = malloc(3 * n * sizeof *acc2), *pot2 = malloc(n * sizeof *pot2);
  unsigned char *active = NULL;
  cr_assert(acc && pot && acc2 && pot2);
  /* The solver's own evaluation scales the bodies into s->scaled_pos. */
  cr_assert_eq(tfmm_solver_compute(s, n, b->pos, b->mass, acc, pot), TFMM_OK,
               "%s: %s", label, tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_stats(s)->schedule, TFMM_SCHEDULE_GPU, "%s", label);
  if (subset) {
    active = calloc(n, 1);
    cr_assert(active);
    for (size_t i = 0; i < n; i += 7)
      active[i] = 1;
  }
  const tfmm_schedule *order[3] = {&TFMM_STAGES_GPU, &VARIANT,
                                   &TFMM_STAGES_GPU};
  for (int k = 0; k < 3; k++) {
    double *a = k == 1 ? acc2 : acc, *p = k == 1 ? pot2 : pot;
    test_poison(a, 3 * n);
    test_poison(p, n);
    cr_assert_eq(run(s, order[k], n, active, a, p), TFMM_OK, "%s (%s): %s",
                 label, order[k]->name, tfmm_solver_message(s));
    if (k == 0)
      continue;
    for (size_t i = 0; i < n; i++) {
      if (active != NULL && !active[i])
        continue;
      cr_assert(memcmp(acc + 3 * i, acc2 + 3 * i, 3 * sizeof *acc) == 0 &&
                    memcmp(pot + i, pot2 + i, sizeof *pot) == 0,
                "%s: body %zu differs between the gpu schedule and the "
                "variant: a (%.17g %.17g %.17g) / (%.17g %.17g %.17g), "
                "phi %.17g / %.17g",
                label, i, acc[3 * i], acc[3 * i + 1], acc[3 * i + 2],
                acc2[3 * i], acc2[3 * i + 1], acc2[3 * i + 2], pot[i], pot2[i]);
    }
  }
  free(active);
  free(acc), free(pot), free(acc2), free(pot2);
  tfmm_solver_destroy(s);
}

Test(schedule_variant, far_first_equals_gpu_schedule) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  cr_log_info("seed %llu", (unsigned long long)seed);
  test_bodies b = test_bodies_make(40000, TEST_CLUSTERED, seed);
  tfmm_config c;
  tfmm_config_defaults(&c);
  check(c, &b, 0, "fmm defaults");
  c.precision = TFMM_PRECISION_DOUBLE;
  check(c, &b, 0, "fmm double");
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_BH;
  c.eps = 0.01;
  check(c, &b, 0, "bh plummer");
  tfmm_config_defaults(&c);
  c.mac = TFMM_MAC_ERROR;
  c.softening = TFMM_SOFTENING_SPLINE;
  c.eps = 0.02;
  check(c, &b, 1, "error criterion, spline, a subset");
  tfmm_config_defaults(&c);
  c.near_only = 1;
  check(c, &b, 0, "near only");
  test_bodies_free(&b);
}
