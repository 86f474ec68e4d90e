/* tfmm_solver_compute_active on the GPU: the gpu schedule (every stage on
 * the device, the traversal dropping the target cells without an active
 * body) with host arrays and with device-resident ones
 * (tfmm_solver_compute_active_device), the hybrid schedule with its near
 * field (and tree and far field) on the GPU, and the direct method on the
 * GPU. On Plummer spheres and clustered inputs from fresh seeds, with
 * target sets of 1%, 30%, all, one body, none and the innermost bodies:
 * the targets' results equal tfmm_solver_compute's bit for bit (the sizes
 * here keep the near field's work items at their floor: tilefmm.h), meet
 * the accuracy asked against the double-precision reference, and the
 * other entries, on the host or the device, keep their sentinel. The work
 * shrinks with the set. Skips without a GPU. */
#include "active_check.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* Bit for bit while the whole evaluation's near field is at most 2^30
 * pairs (times the SMs over 132) and its tree at most 4096 cells (a warp
 * an M2L target); to 1e-5 beyond (float near-field sums split otherwise;
 * see tilefmm.h). */
static active_expect expect_for(double ref_p99) {
  int sm = 132;
#if TFMM_HAVE_CUDA
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess)
    cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, device);
#endif
  const active_expect e = {0,    ref_p99, 300, 1073741824.0 * sm / 132,
                           4096, 1e-5};
  return e;
}

static tfmm_config gpu_config(tfmm_method method, tfmm_schedule_kind kind) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = method;
  c.device = TFMM_DEVICE_GPU;
  c.schedule = kind;
  c.eps = 1e-4;
  /* The table's setting, not the planner's: the planner promises the p99
   * over all bodies, and a subset chosen by place need not share it (the
   * innermost 1% of a clustered input, seed 13297337624778967076: whole
   * p99 7.4e-4 at theta 0.7, order 8, but 13 of 200 innermost targets
   * above 3e-3, max 6.3e-2, on both schedules). This suite is about
   * active sets; the planner's choices are test_schedule_gpu's. */
  c.measure = TFMM_MEASURE_OFF;
  return c;
}

static const active_subset SUBSETS[] = {
    {ACTIVE_RANDOM, 0.01, "random 1%"},
    {ACTIVE_RANDOM, 0.3, "random 30%"},
    {ACTIVE_ALL, 1, "all"},
    {ACTIVE_SINGLE, 0, "one body"},
    {ACTIVE_NONE, 0, "none"},
    {ACTIVE_INNERMOST, 0.01, "innermost 1%"},
};
enum { NSUBSETS = sizeof SUBSETS / sizeof SUBSETS[0] };

static void all_subsets(const tfmm_config *c, const test_bodies *b,
                        double ref_p99, int device, uint64_t seed,
                        const char *what) {
  const active_expect expect = expect_for(ref_p99);
  for (int k = 0; k < NSUBSETS; k++) {
    size_t count = 0;
    unsigned char *m = active_mask(b, SUBSETS[k].kind, SUBSETS[k].fraction,
                                   seed + 31 * (uint64_t)k, &count);
    char label[200];
    snprintf(label, sizeof label, "%s%s, %s (%zu of %zu), seed %llu", what,
             device ? " (device arrays)" : "", SUBSETS[k].name, count, b->n,
             (unsigned long long)seed);
    active_result r = active_check(c, b, m, &expect, device, label);
    active_result_free(&r);
    free(m);
  }
}

static void both_inputs(tfmm_config c, double ref_p99, int device,
                        const char *what) {
  const uint64_t seed = test_fresh_seed();
  char label[120];
  test_bodies p = active_plummer(60000, seed);
  snprintf(label, sizeof label, "%s plummer", what);
  all_subsets(&c, &p, ref_p99, device, seed, label);
  test_bodies_free(&p);
  test_bodies q = test_bodies_make(40000, TEST_CLUSTERED, seed + 1);
  snprintf(label, sizeof label, "%s clustered", what);
  all_subsets(&c, &q, ref_p99, device, seed, label);
  test_bodies_free(&q);
}

Test(active_gpu, gpu_schedule_fmm) {
  test_require_gpu();
  tfmm_config c = gpu_config(TFMM_METHOD_FMM, TFMM_SCHEDULE_GPU);
  both_inputs(c, 3e-3, 0, "gpu fmm");
  both_inputs(c, 3e-3, 1, "gpu fmm");
}

Test(active_gpu, gpu_schedule_bh) {
  test_require_gpu();
  tfmm_config c = gpu_config(TFMM_METHOD_BH, TFMM_SCHEDULE_GPU);
  both_inputs(c, 3e-3, 1, "gpu bh");
}

Test(active_gpu, gpu_schedule_criteria_and_double) {
  test_require_gpu();
  tfmm_config c = gpu_config(TFMM_METHOD_FMM, TFMM_SCHEDULE_GPU);
  c.mac = TFMM_MAC_ERROR;
  c.softening = TFMM_SOFTENING_SPLINE;
  c.eps = 1e-3;
  both_inputs(c, 3e-3, 1, "gpu fmm error criterion spline");
  c = gpu_config(TFMM_METHOD_FMM, TFMM_SCHEDULE_GPU);
  c.accuracy = 1e-5;
  c.mac = TFMM_MAC_MASS;
  both_inputs(c, 3e-5, 1, "gpu fmm mass criterion double");
}

Test(active_gpu, hybrid_and_direct) {
  test_require_gpu();
  tfmm_config c = gpu_config(TFMM_METHOD_FMM, TFMM_SCHEDULE_HYBRID);
  both_inputs(c, 3e-3, 0, "hybrid fmm (gpu tree and far field)");
  c.tree_device = TFMM_DEVICE_CPU;
  c.far_device = TFMM_DEVICE_CPU;
  both_inputs(c, 3e-3, 1, "hybrid fmm (cpu tree and far field)");
  c = gpu_config(TFMM_METHOD_BH, TFMM_SCHEDULE_HYBRID);
  both_inputs(c, 3e-3, 0, "hybrid bh");
  const uint64_t seed = test_fresh_seed();
  test_bodies p = active_plummer(6000, seed);
  c = gpu_config(TFMM_METHOD_DIRECT, TFMM_SCHEDULE_AUTO);
  all_subsets(&c, &p, 2e-4, 0, seed, "direct gpu single");
  all_subsets(&c, &p, 2e-4, 1, seed, "direct gpu single");
  c.precision = TFMM_PRECISION_DOUBLE;
  all_subsets(&c, &p, 1e-12, 0, seed, "direct gpu double");
  test_bodies_free(&p);
}

/* The gpu schedule's work shrinks with the set: near pairs, M2L; on a
 * tree past the sizes of bit-for-bit results (to rounding then). */
Test(active_gpu, gpu_schedule_work_shrinks) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  test_bodies p = active_plummer(200000, seed);
  tfmm_config c = gpu_config(TFMM_METHOD_FMM, TFMM_SCHEDULE_GPU);
  size_t count = 0;
  unsigned char *m = active_mask(&p, ACTIVE_INNERMOST, 0.01, seed, &count);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double *acc = malloc(3 * p.n * sizeof *acc);
  cr_assert(acc != NULL);
  cr_assert_eq(tfmm_solver_compute(s, p.n, p.pos, p.mass, acc, NULL), TFMM_OK);
  const tfmm_stats whole = *tfmm_solver_stats(s);
  tfmm_solver_destroy(s);
  const active_expect expect = expect_for(3e-3);
  char label[96];
  snprintf(label, sizeof label, "gpu fmm 200000 innermost 1%%, seed %llu",
           (unsigned long long)seed);
  active_result r = active_check(&c, &p, m, &expect, 1, label);
  const tfmm_stats part = r.stats;
  active_result_free(&r);
  cr_assert_eq(part.targets, count);
  cr_assert(part.interactions < 0.2 * whole.interactions,
            "%g near pairs at the innermost 1%%, %g at all (seed %llu)",
            part.interactions, whole.interactions, (unsigned long long)seed);
  cr_assert(part.m2l < 0.2 * whole.m2l, "%g M2L at 1%%, %g at all", part.m2l,
            whole.m2l);
  free(acc);
  free(m);
  test_bodies_free(&p);
}
