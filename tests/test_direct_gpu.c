/* The GPU all-pairs kernel against the double-precision reference, over
 * sizes, layouts, softening and every tunable. Skips without a GPU. */
#include "direct_check.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static void require_gpu(void) {
  if (tfmm_gpu_count() == 0)
    cr_skip_test("no usable CUDA GPU on this machine: GPU test skipped");
}

static tfmm_config gpu_config(int p, int q, int unroll, int r) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_DIRECT;
  cfg.device = TFMM_DEVICE_GPU;
  if (p > 0) {
    cfg.gpu_tile = p;
    cfg.gpu_threads_per_body = q;
    cfg.gpu_unroll = unroll;
    cfg.gpu_bodies_per_thread = r;
  }
  return cfg;
}

static void check_sizes(test_layout layout, double eps) {
  for (size_t k = 0; k < direct_case_size_count; k++) {
    direct_case c = direct_case_make(direct_case_sizes[k], layout, eps);
    direct_case_check(&c, gpu_config(0, 0, 0, 0), 1);
    direct_case_free(&c);
  }
}

Test(direct_gpu, uniform_no_softening) {
  require_gpu();
  check_sizes(TEST_UNIFORM, 0);
}
Test(direct_gpu, uniform_softened) {
  require_gpu();
  check_sizes(TEST_UNIFORM, 0.05);
}
Test(direct_gpu, clustered_no_softening) {
  require_gpu();
  check_sizes(TEST_CLUSTERED, 0);
}
Test(direct_gpu, clustered_softened) {
  require_gpu();
  check_sizes(TEST_CLUSTERED, 1e-3);
}

/* Every tile size around its edges (N = p - 1, p, p + 1, and many tiles),
 * with q, unroll and bodies per thread varied over every shape the kernel
 * accepts (tfmm_direct_shape_ok's rules; others must be refused). */
Test(direct_gpu, every_tunable) {
  require_gpu();
  const int ps[] = {32, 64, 128, 256};
  const int qs[] = {0, 1, 2, 4, 8, 32};
  const int unrolls[] = {1, 2, 4, 8, 16, 32};
  const int rs[] = {0, 1, 2, 4};
  for (size_t ip = 0; ip < 4; ip++) {
    int p = ps[ip];
    size_t sizes[] = {(size_t)p - 1, (size_t)p, (size_t)p + 1,
                      (size_t)(5 * p + 3)};
    for (size_t is = 0; is < 4; is++) {
      direct_case c = direct_case_make(sizes[is], TEST_CLUSTERED, 1e-3);
      for (size_t iq = 0; iq < 6; iq++) {
        int q = qs[iq];
        for (size_t iu = 0; iu < 6; iu++)
          for (size_t ir = 0; ir < 4; ir++) {
            int r = rs[ir];
            long threads = (long)p * q, most = r == 4 ? 512 : 1024;
            if (threads > most || (long)p * p * q > 227 * 1024)
              continue;
            direct_case_check(&c, gpu_config(p, q, unrolls[iu], r),
                              (iu + ir) % 2);
          }
      }
      direct_case_free(&c);
    }
  }
}

/* Automatic shapes across sizes that fill the GPU and sizes that don't. */
Test(direct_gpu, automatic_shape) {
  require_gpu();
  const size_t sizes[] = {3, 4096, 70000, 150000};
  for (size_t k = 0; k < 4; k++) {
    direct_case c = direct_case_make(sizes[k], TEST_UNIFORM, 1e-2);
    direct_case_check(&c, gpu_config(0, 0, 0, 0), 1);
    direct_case_free(&c);
  }
}

/* No atomics: the same input gives the same bits. */
Test(direct_gpu, deterministic) {
  require_gpu();
  test_bodies b = test_bodies_make(50000, TEST_CLUSTERED, test_fresh_seed());
  double *a1 = malloc(3 * b.n * 8), *a2 = malloc(3 * b.n * 8);
  double *p1 = malloc(b.n * 8), *p2 = malloc(b.n * 8);
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  cfg.eps = 1e-3;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, a1, p1), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, a2, p2), TFMM_OK);
  cr_assert_eq(memcmp(a1, a2, 3 * b.n * 8), 0);
  cr_assert_eq(memcmp(p1, p2, b.n * 8), 0);
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
  free(a1), free(a2), free(p1), free(p2);
}

/* One solver, sizes up and down: buffers are reused and regrown. */
Test(direct_gpu, reuses_buffers_across_sizes) {
  require_gpu();
  const size_t sizes[] = {5000, 100, 20000, 7};
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  cfg.eps = 0.01;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  for (size_t k = 0; k < 4; k++) {
    direct_case c = direct_case_make(sizes[k], TEST_UNIFORM, 0.01);
    double *acc = malloc(3 * c.b.n * 8), *pot = malloc(c.b.n * 8);
    test_poison(acc, 3 * c.b.n);
    test_poison(pot, c.b.n);
    cr_assert_eq(tfmm_solver_compute(s, c.b.n, c.b.pos, c.b.mass, acc, pot),
                 TFMM_OK);
    cr_assert_lt(test_rel_l2(acc, c.acc_ref, 3 * c.b.n), 1e-5);
    cr_assert_lt(test_rel_l2(pot, c.pot_ref, c.b.n), 1e-5);
    const tfmm_stats *st = tfmm_solver_stats(s);
    cr_assert_eq(st->device, TFMM_DEVICE_GPU);
    cr_assert_geq(st->gpu_threads_per_body, 1, "q used is reported");
    cr_assert_gt(st->time[TFMM_PHASE_NEAR], 0);
    free(acc), free(pot);
    direct_case_free(&c);
  }
  tfmm_solver_destroy(s);
}

Test(direct_gpu, coincident_in_single_precision) {
  require_gpu();
  double pos[9] = {0, 0, 0, 1, 1, 1, 1 + 1e-12, 1, 1}, mass[3] = {1, 1, 1};
  double acc[9];
  tfmm_config cfg = gpu_config(0, 0, 0, 0);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, NULL),
               TFMM_ERR_COINCIDENT);
  tfmm_solver_destroy(s);
}

/* Raw double positions: the rounding to float is bounded body by body. */
Test(direct_gpu, raw_positions_within_rounding_bound) {
  require_gpu();
  direct_case_check_raw(3000, TEST_CLUSTERED, 0, gpu_config(0, 0, 0, 0));
  direct_case_check_raw(3000, TEST_UNIFORM, 1e-4, gpu_config(0, 0, 0, 0));
}
