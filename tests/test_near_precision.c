/* The single-precision near field where a leaf's bodies span far more than
 * their separations (issue 28, "no group left behind"): a group of 16
 * bodies of size 1 with one body at x = 1e6, 1e8, 1e10 and 1e14 (one leaf
 * holds them all); a leaf holding two tight groups 1e7 apart; a 30-body
 * cluster of size 1 among 5,000 bodies spread over +-1e7. At the default
 * precision (auto: single for these targets), on the CPU and on the GPU
 * (gpu and hybrid schedules), every body's acceleration must lie within
 * the accuracy target of the double-precision reference (1e-3, the
 * default, and 3e-4, the tightest target still run in single): a p99 that
 * passes while a group is wrong is what the issue is about. Fresh seeds;
 * the GPU cases skip without a GPU. And the rule's cost: at most one
 * leaf in 50 of a Plummer sphere runs in double (near_frame.h), each
 * for a pair of its own closer than its reach / K or a neighbour's; the
 * two groups' leaf does. */
#include "testutil.h"

#include "nearfield/near_frame.h"
#include "tree/lists.h"
#include "tree/mac.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <tilefmm.h>

typedef struct bodies {
  size_t n;
  double *pos, *mass;
} bodies;

static bodies bodies_alloc(size_t n) {
  bodies b = {n, malloc(3 * n * sizeof(double)), malloc(n * sizeof(double))};
  cr_assert(b.pos && b.mass);
  return b;
}

static void bodies_free(bodies *b) {
  free(b->pos);
  free(b->mass);
}

/* count bodies uniform in a cube of side `side` at corner (x, y, z), unit
 * masses, from index `first`. */
static void fill_cube(bodies *b, size_t first, size_t count, double x, double y,
                      double z, double side, test_rng *rng) {
  for (size_t i = first; i < first + count; i++) {
    b->pos[3 * i] = x + side * test_uniform(rng);
    b->pos[3 * i + 1] = y + side * test_uniform(rng);
    b->pos[3 * i + 2] = z + side * test_uniform(rng);
    b->mass[i] = 1;
  }
}

static double norm3(const double *a) {
  return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

/* The solver's accelerations under c. */
static double *accelerations(const tfmm_config *c, const bodies *b,
                             const char *label) {
  double *acc = malloc(3 * b->n * sizeof(double));
  cr_assert(acc);
  test_poison(acc, 3 * b->n);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, c), TFMM_OK, "%s: %s", label,
               tfmm_solver_message(s));
  cr_assert_eq(tfmm_solver_compute(s, b->n, b->pos, b->mass, acc, NULL),
               TFMM_OK, "%s: %s", label, tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  return acc;
}

/* Every body of [first, first + count) within tol of the double-precision
 * reference, relative to its own acceleration, under the solver's default
 * precision with accuracy tol on device (schedule for the GPU). */
static void check(const bodies *b, double eps, double tol, tfmm_device device,
                  tfmm_schedule_kind schedule, size_t first, size_t count,
                  const char *label) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.eps = eps;
  c.method = TFMM_METHOD_REFERENCE;
  c.device = TFMM_DEVICE_CPU;
  double *ref = accelerations(&c, b, label);
  tfmm_config_defaults(&c);
  c.eps = eps;
  c.accuracy = tol;
  c.device = device;
  c.schedule = schedule;
  double *acc = accelerations(&c, b, label);
  double worst = 0;
  size_t at = first;
  for (size_t i = first; i < first + count; i++) {
    double d[3];
    for (int k = 0; k < 3; k++)
      d[k] = acc[3 * i + k] - ref[3 * i + k];
    const double e = norm3(d) / norm3(ref + 3 * i);
    if (!(e <= worst)) {
      worst = e;
      at = i;
    }
  }
  cr_assert(worst <= tol,
            "%s (target %g): body %zu has a relative acceleration error "
            "%.3g (|a| %.3g)",
            label, tol, at, worst, norm3(ref + 3 * at));
  free(ref);
  free(acc);
}

/* check at the default target and the tightest one run in single. */
static void check_targets(const bodies *b, double eps, tfmm_device device,
                          tfmm_schedule_kind schedule, size_t first,
                          size_t count, const char *label) {
  check(b, eps, 1e-3, device, schedule, first, count, label);
  check(b, eps, 3e-4, device, schedule, first, count, label);
}

/* 16 bodies in the unit cube, one at (far, 0, 0). */
static bodies group_and_far(double far, uint64_t seed) {
  test_rng rng = {seed};
  bodies b = bodies_alloc(17);
  fill_cube(&b, 0, 16, 0, 0, 0, 1, &rng);
  b.pos[48] = far;
  b.pos[49] = b.pos[50] = 0;
  b.mass[16] = 1;
  return b;
}

/* Two groups of 10 in unit cubes 1e7 apart, 20 bodies: one leaf. */
static bodies two_groups(uint64_t seed) {
  test_rng rng = {seed};
  bodies b = bodies_alloc(20);
  fill_cube(&b, 0, 10, 0, 0, 0, 1, &rng);
  fill_cube(&b, 10, 10, 1e7, 3e6, -2e6, 1, &rng);
  return b;
}

/* 5,000 bodies uniform in +-1e7, then 30 in a unit cube at a random place
 * inside: the last 30. */
static bodies cluster_in_spread(uint64_t seed) {
  test_rng rng = {seed};
  bodies b = bodies_alloc(5030);
  fill_cube(&b, 0, 5000, -1e7, -1e7, -1e7, 2e7, &rng);
  const double x = -9e6 + 1.8e7 * test_uniform(&rng),
               y = -9e6 + 1.8e7 * test_uniform(&rng),
               z = -9e6 + 1.8e7 * test_uniform(&rng);
  fill_cube(&b, 5000, 30, x, y, z, 1, &rng);
  return b;
}

static void group_cases(tfmm_device device, tfmm_schedule_kind schedule,
                        const char *where) {
  const uint64_t seed = test_fresh_seed();
  const double far[] = {1e6, 1e8, 1e10, 1e14};
  for (int k = 0; k < 4; k++) {
    bodies b = group_and_far(far[k], seed + (uint64_t)k);
    char label[128];
    snprintf(label, sizeof label, "%s, group and a body at %g, seed %llu",
             where, far[k], (unsigned long long)seed);
    check_targets(&b, 0.01, device, schedule, 0, 17, label);
    bodies_free(&b);
  }
  bodies b = two_groups(seed);
  char label[128];
  snprintf(label, sizeof label, "%s, two groups 1e7 apart, seed %llu", where,
           (unsigned long long)seed);
  check_targets(&b, 0.01, device, schedule, 0, 20, label);
  /* eps = 0: only the groups' own separations set the scale. */
  check_targets(&b, 0, device, schedule, 0, 20, label);
  bodies_free(&b);
}

static void cluster_case(tfmm_device device, tfmm_schedule_kind schedule,
                         const char *where) {
  const uint64_t seed = test_fresh_seed();
  bodies b = cluster_in_spread(seed);
  char label[128];
  snprintf(label, sizeof label, "%s, 30-body cluster among 5,000, seed %llu",
           where, (unsigned long long)seed);
  check_targets(&b, 0.01, device, schedule, 5000, 30, label);
  bodies_free(&b);
}

Test(near_precision, group_alone_cpu) {
  group_cases(TFMM_DEVICE_CPU, TFMM_SCHEDULE_AUTO, "cpu");
}

Test(near_precision, cluster_cpu) {
  cluster_case(TFMM_DEVICE_CPU, TFMM_SCHEDULE_AUTO, "cpu");
}

Test(near_precision, group_alone_gpu) {
  test_require_gpu();
  group_cases(TFMM_DEVICE_GPU, TFMM_SCHEDULE_GPU, "gpu schedule");
  group_cases(TFMM_DEVICE_GPU, TFMM_SCHEDULE_HYBRID, "hybrid");
}

Test(near_precision, cluster_gpu) {
  test_require_gpu();
  cluster_case(TFMM_DEVICE_GPU, TFMM_SCHEDULE_GPU, "gpu schedule");
  cluster_case(TFMM_DEVICE_GPU, TFMM_SCHEDULE_HYBRID, "hybrid");
}

/* Half the longest side of the tight box of a leaf's bodies (its reach)
 * and the smallest separation of its bodies, in double, from the bodies
 * alone (not from near_frame.h). */
static void leaf_shape(const tfmm_octree *t, const tfmm_cell *c, double *reach,
                       double *spacing) {
  double lo[3], hi[3];
  for (int d = 0; d < 3; d++)
    lo[d] = hi[d] = t->pos[3 * c->body_begin + d];
  double s2 = INFINITY;
  for (int64_t i = c->body_begin; i < c->body_end; i++) {
    for (int d = 0; d < 3; d++) {
      lo[d] = fmin(lo[d], t->pos[3 * i + d]);
      hi[d] = fmax(hi[d], t->pos[3 * i + d]);
    }
    for (int64_t j = c->body_begin; j < i; j++) {
      double r2 = 0;
      for (int d = 0; d < 3; d++) {
        const double x = t->pos[3 * i + d] - t->pos[3 * j + d];
        r2 += x * x;
      }
      s2 = fmin(s2, r2);
    }
  }
  *reach = 0;
  for (int d = 0; d < 3; d++)
    *reach = fmax(*reach, 0.5 * (hi[d] - lo[d]));
  *spacing = sqrt(s2);
}

/* Leaves of b under near_frame.h's rule, in double: their count, and in
 * *unexplained those of them with no cause the test can see (eps 0): a
 * leaf's own pair closer than its reach / K, or a neighbour of its list
 * that has one. *nleaves: the leaves. */
static int64_t exact_leaves(const bodies *b, int leaf, double theta, double eps,
                            int64_t *nleaves, int64_t *unexplained) {
  tfmm_octree t;
  tfmm_lists l;
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_octree_build(&t, b->n, b->pos, b->mass, leaf, 21, &err),
               TFMM_OK, "%s", err.message);
  const tfmm_mac mac = {.theta = theta};
  cr_assert_eq(tfmm_lists_build_fmm(&t, &mac, 1, &l, &err), TFMM_OK, "%s",
               err.message);
  tfmm_near_frame *frame = malloc((size_t)t.ncells * sizeof *frame);
  unsigned char *exact = malloc((size_t)t.nleaves);
  unsigned char *close = calloc((size_t)t.ncells, 1);
  cr_assert(frame && exact && close);
  const int64_t count = tfmm_near_frames(&t, &l.near, eps, frame, exact);
  int64_t again = 0;
  for (int64_t k = 0; k < t.nleaves; k++) {
    again += exact[k] != 0;
    if (exact[k]) {
      double reach, spacing;
      leaf_shape(&t, &t.cells[t.leaves[k]], &reach, &spacing);
      close[t.leaves[k]] = TFMM_NEAR_FRAME_RATIO * spacing < reach;
    }
  }
  cr_assert_eq(count, again);
  *unexplained = 0;
  for (int64_t k = 0; k < t.nleaves; k++) {
    if (!exact[k] || close[t.leaves[k]])
      continue;
    int cause = 0;
    for (int64_t e = l.near.offset[k]; e < l.near.offset[k + 1]; e++)
      cause |= close[l.near.index[e]];
    *unexplained += !cause;
  }
  *nleaves = t.nleaves;
  free(close);
  free(frame);
  free(exact);
  tfmm_lists_free(&l);
  tfmm_octree_free(&t);
  return count;
}

Test(near_precision, rule_spares_ordinary_leaves) {
  const uint64_t seed = test_fresh_seed();
  const size_t n = 100000;
  bodies b = bodies_alloc(n);
  double *vel = malloc(3 * n * sizeof *vel);
  cr_assert(vel);
  cr_assert_eq(tfmm_ic_plummer(n, seed, b.pos, vel, b.mass), TFMM_OK);
  const int leaf[] = {16, 64, 512};
  int64_t nleaves, unexplained;
  for (int k = 0; k < 3; k++) {
    /* At eps 0 a random pair closer than a leaf's reach / K sends its leaf
     * to double, as the rule means it to (about 1 run in 80 at leaves of
     * 512): such leaves must be rare and each must have that cause. */
    const int64_t count =
        exact_leaves(&b, leaf[k], 0.5, 0, &nleaves, &unexplained);
    cr_assert(count * 50 <= nleaves && unexplained == 0,
              "Plummer, %zu bodies, leaves of %d, eps 0, seed %llu: %lld of "
              "%lld leaves in double, %lld without a close pair",
              n, leaf[k], (unsigned long long)seed, (long long)count,
              (long long)nleaves, (long long)unexplained);
  }
  free(vel);
  bodies_free(&b);
  b = two_groups(seed);
  cr_assert_eq(exact_leaves(&b, 64, 0.5, 0, &nleaves, &unexplained), 1,
               "two groups, seed %llu", (unsigned long long)seed);
  bodies_free(&b);
  b = group_and_far(1e6, seed);
  cr_assert_eq(exact_leaves(&b, 64, 0.5, 0.01, &nleaves, &unexplained), 1,
               "group, seed %llu", (unsigned long long)seed);
  bodies_free(&b);
}
