/* tfmm_host_alloc, tfmm_host_free, tfmm_host_pinned (issue 28): memory
 * that holds what is written to it, whether or not it could be pinned;
 * and tfmm_solver_compute on the GPU gives the same bits from pinned
 * arrays (one DMA each way), from pageable ones (staged through the
 * solver's pinned chunks, several chunks at the larger N), from a mix of
 * both, and from the device's arrays (tfmm_solver_compute_device); a bad
 * body is named as the host's check names it. The GPU tests skip without a
 * GPU. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* Every byte written can be read back: the memory is the caller's. */
static void check_holds(size_t bytes) {
  unsigned char *p = tfmm_host_alloc(bytes);
  cr_assert_not_null(p, "tfmm_host_alloc(%zu)", bytes);
  for (size_t i = 0; i < bytes; i++)
    p[i] = (unsigned char)(i * 131u + 7u);
  for (size_t i = 0; i < bytes; i++)
    cr_assert_eq(p[i], (unsigned char)(i * 131u + 7u), "byte %zu of %zu", i,
                 bytes);
  cr_expect_eq((uintptr_t)p % sizeof(double), 0, "aligned for doubles");
  tfmm_host_free(p);
}

Test(host_memory, holds_what_is_written) {
  check_holds(1);
  check_holds(4097);
  check_holds((size_t)3 << 20);
  void *z = tfmm_host_alloc(0); /* 0 counts as 1 */
  cr_expect_not_null(z);
  tfmm_host_free(z);
  tfmm_host_free(NULL);
}

Test(host_memory, plain_memory_is_not_pinned) {
  cr_expect_eq(tfmm_host_pinned(NULL), 0);
  double *m = malloc(1000 * sizeof *m);
  cr_assert_not_null(m);
  cr_expect_eq(tfmm_host_pinned(m), 0, "malloc's memory is pageable");
  free(m);
  /* Without CUDA or a GPU, tfmm_host_alloc is malloc's. */
  if (!tfmm_has_cuda() || tfmm_gpu_count() == 0) {
    void *p = tfmm_host_alloc(1 << 16);
    cr_expect_eq(tfmm_host_pinned(p), 0, "nothing is pinned without a GPU");
    tfmm_host_free(p);
  }
}

/* A CPU solver takes the allocator's arrays as any others: the same
 * results from them as from malloc's. */
Test(host_memory, cpu_solver_takes_them) {
  enum { N = 3000 };
  test_bodies b = test_bodies_make(N, TEST_CLUSTERED, test_fresh_seed());
  tfmm_config c;
  tfmm_config_defaults(&c);
  /* Calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  c.device = TFMM_DEVICE_CPU;
  c.eps = 0.01;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double *acc = malloc(4 * N * sizeof *acc), *pot = acc + 3 * N;
  double *h = tfmm_host_alloc(8 * N * sizeof *h);
  cr_assert(acc != NULL && h != NULL);
  double *hpos = h, *hmass = h + 3 * N, *hacc = h + 4 * N, *hpot = h + 7 * N;
  memcpy(hpos, b.pos, 3 * N * sizeof *hpos);
  memcpy(hmass, b.mass, N * sizeof *hmass);
  test_poison(hacc, 4 * N);
  cr_assert_eq(tfmm_solver_compute(s, N, b.pos, b.mass, acc, pot), TFMM_OK,
               "%s", tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_compute(s, N, hpos, hmass, hacc, hpot), TFMM_OK,
               "%s", tfmm_solver_message(s));
  cr_expect(memcmp(acc, hacc, 4 * N * sizeof *acc) == 0,
            "the allocator's arrays give other results");
  tfmm_host_free(h);
  free(acc);
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
}

#if TFMM_HAVE_CUDA
/* One evaluation of bodies pos, mass (host or device arrays) into acc,
 * pot (host arrays), poisoned first. */
static void run(tfmm_solver *s, size_t n, const double *pos, const double *mass,
                double *acc, double *pot, int device) {
  test_poison(acc, 3 * n);
  if (pot != NULL)
    test_poison(pot, n);
  if (!device) {
    cr_assert_eq(tfmm_solver_compute(s, n, pos, mass, acc, pot), TFMM_OK, "%s",
                 tfmm_solver_message(s));
    cr_expect_eq(tfmm_solver_stats(s)->schedule, TFMM_SCHEDULE_GPU);
    return;
  }
  double *d = NULL;
  cr_assert_eq(cudaMalloc((void **)&d, 8 * n * sizeof *d), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d, pos, 3 * n * sizeof *d, cudaMemcpyHostToDevice),
               cudaSuccess);
  cr_assert_eq(
      cudaMemcpy(d + 3 * n, mass, n * sizeof *d, cudaMemcpyHostToDevice),
      cudaSuccess);
  cr_assert_eq(tfmm_solver_compute_device(s, n, d, d + 3 * n, d + 4 * n,
                                          pot != NULL ? d + 7 * n : NULL, NULL),
               TFMM_OK, "%s", tfmm_solver_message(s));
  cr_assert_eq(
      cudaMemcpy(acc, d + 4 * n, 3 * n * sizeof *d, cudaMemcpyDeviceToHost),
      cudaSuccess);
  if (pot != NULL)
    cr_assert_eq(
        cudaMemcpy(pot, d + 7 * n, n * sizeof *d, cudaMemcpyDeviceToHost),
        cudaSuccess);
  cudaFree(d);
}

/* N bodies of a Plummer sphere, lengths times len and masses times mas:
 * pageable, pinned, mixed and device arrays give the same bits. */
static void check_same_bits(tfmm_config c, size_t n, double len, double mas,
                            int potential) {
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * 8);
  double *mass = malloc(n * sizeof *mass);
  double *ref = malloc(4 * n * sizeof *ref), *acc = malloc(4 * n * 8);
  double *pin = tfmm_host_alloc(8 * n * sizeof *pin);
  cr_assert(pos && vel && mass && ref && acc && pin);
  cr_assert(tfmm_host_pinned(pin), "tfmm_host_alloc pins with a GPU");
  const uint64_t seed = test_fresh_seed();
  cr_assert_eq(tfmm_ic_plummer(n, seed, pos, vel, mass), TFMM_OK);
  for (size_t i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++)
      pos[3 * i + d] *= len;
    mass[i] *= mas;
  }
  double *ppos = pin, *pmass = pin + 3 * n, *pacc = pin + 4 * n,
         *ppot = potential ? pin + 7 * n : NULL;
  memcpy(ppos, pos, 3 * n * sizeof *pos);
  memcpy(pmass, mass, n * sizeof *mass);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK, "%s",
               tfmm_solver_message(s));
  double *rpot = potential ? ref + 3 * n : NULL;
  double *apot = potential ? acc + 3 * n : NULL;
  run(s, n, pos, mass, ref, rpot, 1); /* the device's arrays */
  struct {
    const char *what;
    const double *pos, *mass;
    double *acc, *pot;
  } ways[] = {{"pageable", pos, mass, acc, apot},
              {"pinned", ppos, pmass, pacc, ppot},
              {"pinned in, pageable out", ppos, pmass, acc, apot},
              {"pageable in, pinned out", pos, mass, pacc, ppot}};
  for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
    run(s, n, ways[w].pos, ways[w].mass, ways[w].acc, ways[w].pot, 0);
    cr_expect(
        memcmp(ways[w].acc, ref, 3 * n * sizeof *acc) == 0 &&
            (!potential || memcmp(ways[w].pot, rpot, n * sizeof *acc) == 0),
        "seed %llu n %zu %s: not the device arrays' bits",
        (unsigned long long)seed, n, ways[w].what);
  }
  tfmm_solver_destroy(s);
  tfmm_host_free(pin);
  free(pos), free(vel), free(mass), free(ref), free(acc);
}
#endif

Test(host_memory, gpu_same_bits_pinned_and_pageable) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_config c;
  tfmm_config_defaults(&c);
  /* Calls compared bit for bit: the planner off (it may move between
   * calls, planner.h). */
  c.measure = TFMM_MEASURE_OFF;
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.eps = 0.01;
  check_same_bits(c, 5000, 1, 1, 1);
  c.method = TFMM_METHOD_BH;
  check_same_bits(c, 7001, 1, 1, 0);
  /* Physical units (parsecs in metres, solar masses in kg, G in SI), and
   * 400,003 bodies: 9.6 MB of positions, three chunks of 4 MiB each way. */
  c.method = TFMM_METHOD_FMM;
  c.G = 6.674e-11;
  c.eps = 0.01 * 3.086e16;
  check_same_bits(c, 400003, 3.086e16, 1.989e30, 1);
#endif
}

/* A bad body of host arrays is checked on the device under the gpu
 * schedule, and named as the host's check names it. */
Test(host_memory, gpu_bad_bodies_are_named) {
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
  c.schedule = TFMM_SCHEDULE_GPU;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  double *acc = malloc(3 * N * sizeof *acc);
  b.pos[3 * 4321 + 1] = NAN;
  b.mass[77] = 0;
  cr_assert_eq(tfmm_solver_compute(s, N, b.pos, b.mass, acc, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_solver_message(s), "body 77: mass 0") != NULL, "%s",
            tfmm_solver_message(s));
  b.mass[77] = 1.0 / N;
  cr_assert_eq(tfmm_solver_compute(s, N, b.pos, b.mass, acc, NULL),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_solver_message(s), "body 4321: position") != NULL, "%s",
            tfmm_solver_message(s));
  b.pos[3 * 4321 + 1] = 0.5;
  cr_expect_eq(tfmm_solver_compute(s, N, b.pos, b.mass, acc, NULL), TFMM_OK,
               "%s", tfmm_solver_message(s));
  free(acc);
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
#endif
}
