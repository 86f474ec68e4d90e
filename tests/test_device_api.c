/* tfmm_solver_compute_device: bodies and results in GPU memory, ordered on
 * the caller's stream, give what tfmm_solver_compute gives on the same
 * bodies, bit for bit (fmm, bh, direct; with and without the potential;
 * the default stream and a stream of the caller's; the gpu schedule, which
 * keeps the bodies on the device, and hybrid, which stages them; physical
 * units far from 1). A body that is not finite is named from the device.
 * Skips without a GPU. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#if TFMM_HAVE_CUDA
static void *on_device(const double *x, size_t count) {
  void *d = NULL;
  cr_assert_eq(cudaMalloc(&d, count * sizeof *x), cudaSuccess);
  if (x != NULL)
    cr_assert_eq(cudaMemcpy(d, x, count * sizeof *x, cudaMemcpyHostToDevice),
                 cudaSuccess);
  cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* the copy landed */
  return d;
}

static void to_host(double *x, const void *d, size_t count) {
  cr_assert_eq(cudaMemcpy(x, d, count * sizeof *x, cudaMemcpyDeviceToHost),
               cudaSuccess);
}

/* One configuration, both ways, compared bit for bit: N bodies of a
 * Plummer sphere, lengths times len and masses times mas. */
static void check_config(tfmm_config c, size_t N, double len, double mas,
                         int potential, int own_stream) {
  const tfmm_method m = c.method;
  double *pos = malloc(3 * N * sizeof *pos), *vel = malloc(3 * N * 8);
  double *mass = malloc(N * sizeof *mass);
  double *a_host = malloc(3 * N * 8), *p_host = malloc(N * 8);
  double *a_dev = malloc(3 * N * 8), *p_dev = malloc(N * 8);
  const uint64_t seed = test_fresh_seed();
  cr_assert_eq(tfmm_ic_plummer(N, seed, pos, vel, mass), TFMM_OK);
  for (size_t i = 0; i < N; i++) {
    for (int d = 0; d < 3; d++)
      pos[3 * i + d] *= len;
    mass[i] *= mas;
  }
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK, "%s",
               tfmm_solver_message(s));
  cr_assert_eq(
      tfmm_solver_compute(s, N, pos, mass, a_host, potential ? p_host : NULL),
      TFMM_OK, "%s", tfmm_solver_message(s));
  void *d_pos = on_device(pos, 3 * N), *d_mass = on_device(mass, N);
  void *d_acc = on_device(NULL, 3 * N), *d_pot = on_device(NULL, N);
  cudaStream_t stream = NULL;
  if (own_stream)
    cr_assert_eq(cudaStreamCreate(&stream), cudaSuccess);
  cr_assert_eq(tfmm_solver_compute_device(s, N, d_pos, d_mass, d_acc,
                                          potential ? d_pot : NULL, stream),
               TFMM_OK, "%s", tfmm_solver_message(s));
  const tfmm_stats *st = tfmm_solver_stats(s);
  if (m != TFMM_METHOD_DIRECT)
    cr_expect_eq(st->schedule,
                 c.schedule == TFMM_SCHEDULE_HYBRID ? TFMM_SCHEDULE_HYBRID
                                                    : TFMM_SCHEDULE_GPU,
                 "%s: schedule %s", tfmm_method_name(m),
                 tfmm_schedule_name(st->schedule));
  to_host(a_dev, d_acc, 3 * N);
  cr_expect(memcmp(a_dev, a_host, 3 * N * sizeof *a_dev) == 0,
            "seed %llu %s: accelerations differ from the host call",
            (unsigned long long)seed, tfmm_method_name(m));
  if (potential) {
    to_host(p_dev, d_pot, N);
    cr_expect(memcmp(p_dev, p_host, N * sizeof *p_dev) == 0,
              "seed %llu %s: potentials differ from the host call",
              (unsigned long long)seed, tfmm_method_name(m));
  }
  if (own_stream)
    cudaStreamDestroy(stream);
  cudaFree(d_pos), cudaFree(d_mass), cudaFree(d_acc), cudaFree(d_pot);
  tfmm_solver_destroy(s);
  free(pos), free(vel), free(mass), free(a_host), free(p_host), free(a_dev),
      free(p_dev);
}

static void check_method(tfmm_method m, int potential, int own_stream) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  /* Calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  c.method = m;
  c.device = TFMM_DEVICE_GPU;
  c.eps = 0.01;
  check_config(c, 5000, 1, 1, potential, own_stream);
}
#endif

/* The gpu schedule at a small N and in physical units (parsecs in metres,
 * solar masses in kg, G in SI), and hybrid, which stages through the
 * host. */
Test(device_api, schedules_and_units) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_config c;
  tfmm_config_defaults(&c);
  /* Calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.G = 6.674e-11;
  c.eps = 0.01 * 3.086e16;
  check_config(c, 700, 3.086e16, 1.989e30, 1, 0);
  c.method = TFMM_METHOD_BH;
  check_config(c, 3000, 3.086e16, 1.989e30, 0, 1);
  c.method = TFMM_METHOD_FMM;
  c.schedule = TFMM_SCHEDULE_HYBRID;
  check_config(c, 6000, 3.086e16, 1.989e30, 1, 1);
#endif
}

/* A body the device holds that is not finite, or of no mass: named. */
Test(device_api, bad_bodies_are_named) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  enum { N = 6000 };
  test_bodies b = test_bodies_make(N, TEST_UNIFORM, test_fresh_seed());
  tfmm_config c;
  tfmm_config_defaults(&c);
  /* Calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  c.device = TFMM_DEVICE_GPU;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  b.pos[3 * 4321 + 1] = NAN;
  b.mass[77] = 0;
  double *d_pos = on_device(b.pos, 3 * N), *d_mass = on_device(b.mass, N);
  double *d_acc = on_device(NULL, 3 * N);
  cr_assert_eq(
      tfmm_solver_compute_device(s, N, d_pos, d_mass, d_acc, NULL, NULL),
      TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_solver_message(s), "body 77: mass 0") != NULL, "%s",
            tfmm_solver_message(s));
  b.mass[77] = 1.0 / N;
  cudaFree(d_mass);
  d_mass = on_device(b.mass, N);
  cr_assert_eq(
      tfmm_solver_compute_device(s, N, d_pos, d_mass, d_acc, NULL, NULL),
      TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_solver_message(s), "body 4321: position") != NULL, "%s",
            tfmm_solver_message(s));
  cudaFree(d_pos), cudaFree(d_mass), cudaFree(d_acc);
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
#endif
}

Test(device_api, fmm_equals_the_host_call) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_method(TFMM_METHOD_FMM, 1, 0);
  check_method(TFMM_METHOD_FMM, 0, 1);
#endif
}

Test(device_api, bh_and_direct_equal_the_host_call) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_method(TFMM_METHOD_BH, 1, 1);
  check_method(TFMM_METHOD_DIRECT, 1, 0);
#endif
}

Test(device_api, bad_arguments_are_named) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_config c;
  tfmm_config_defaults(&c);
  /* Calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  c.device = TFMM_DEVICE_GPU;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double *d = on_device(NULL, 30);
  cr_expect_eq(tfmm_solver_compute_device(s, 0, d, d, d, NULL, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect_eq(tfmm_solver_compute_device(s, 10, NULL, d, d, NULL, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_solver_message(s), "NULL") != NULL, "%s",
            tfmm_solver_message(s));
  cudaFree(d);
  tfmm_solver_destroy(s);
#endif
}
