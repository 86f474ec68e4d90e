/* A GPU tree refit to its bodies moved (kernels/tree/tree_gpu.h,
 * tfmm_tree_gpu_refit; issue 31's tree kept between steps): the build's
 * structure kept (body order, cells, cubes, leaves, levels), the sorted
 * bodies the moved ones gathered through the build's order, and every
 * cell's mass, centre of mass and radius those of its moved bodies, summed
 * here in double independently of the tree's kernels, within
 * TFMM_TREE_GPU_MOMENT_TOL; the growth the mean over the leaves of
 * (r / r0)^3. Bodies that leave their cells' cubes and the root's are
 * moved too. Skips without a GPU. */
#include "testutil.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if TFMM_HAVE_CUDA
#include "gpu_tree.h"

#include <cuda_runtime.h>

/* The structure of a refit tree against its build's. */
static void expect_same_structure(const tfmm_octree *a, const tfmm_octree *b,
                                  const char *label) {
  const size_t n = b->n;
  cr_assert(a->n == n && a->ncells == b->ncells && a->nleaves == b->nleaves &&
                a->depth == b->depth,
            "%s: sizes changed", label);
  cr_assert(memcmp(a->order, b->order, n * sizeof *a->order) == 0,
            "%s: body order changed", label);
  cr_assert(memcmp(a->leaves, b->leaves, b->nleaves * sizeof *a->leaves) == 0,
            "%s: leaves changed", label);
  for (int64_t c = 0; c < b->ncells; c++) {
    const tfmm_cell *x = &a->cells[c], *y = &b->cells[c];
    cr_assert(x->level == y->level && x->parent == y->parent &&
                  x->child_begin == y->child_begin &&
                  x->child_count == y->child_count &&
                  x->body_begin == y->body_begin &&
                  x->body_end == y->body_end && x->size == y->size &&
                  memcmp(x->box_center, y->box_center, sizeof x->box_center) ==
                      0,
              "%s: cell %lld changed", label, (long long)c);
  }
}

/* Cell c's moments from the moved bodies (input order, through the
 * build's order), in double, against the refit's. */
static void expect_moments(const tfmm_octree *t, int64_t c, const double *pos,
                           const double *mass, const char *label) {
  const tfmm_cell *cell = &t->cells[c];
  double m = 0, x[3] = {0, 0, 0};
  for (int64_t j = cell->body_begin; j < cell->body_end; j++) {
    const int64_t i = t->order[j];
    m += mass[i];
    for (int k = 0; k < 3; k++)
      x[k] += mass[i] * pos[3 * i + k];
  }
  for (int k = 0; k < 3; k++)
    x[k] /= m;
  double r = 0;
  for (int64_t j = cell->body_begin; j < cell->body_end; j++) {
    const int64_t i = t->order[j];
    double d2 = 0;
    for (int k = 0; k < 3; k++)
      d2 += (pos[3 * i + k] - x[k]) * (pos[3 * i + k] - x[k]);
    r = fmax(r, sqrt(d2));
  }
  /* Relative to the coordinates' size: the two sums of the centre differ
   * in their order, and a moved body may lie far outside its cell's cube,
   * so the cube's side is no scale here. */
  const double tol = TFMM_TREE_GPU_MOMENT_TOL;
  const double scale =
      fmax(fmax(fabs(x[0]), fabs(x[1])), fabs(x[2])) + r + cell->size;
  cr_assert(fabs(cell->mass - m) <= tol * m, "%s: cell %lld mass %.17g, %.17g",
            label, (long long)c, cell->mass, m);
  for (int k = 0; k < 3; k++)
    cr_assert(fabs(cell->center[k] - x[k]) <= tol * scale,
              "%s: cell %lld centre[%d] %.17g, %.17g", label, (long long)c, k,
              cell->center[k], x[k]);
  cr_assert(fabs(cell->radius - r) <= tol * scale,
            "%s: cell %lld radius %.17g, %.17g", label, (long long)c,
            cell->radius, r);
}

/* Builds the tree of b, moves every body by up to `step` of the root's
 * side in each coordinate (and a few far past the root's cube), refits,
 * and checks the refit tree. */
static void check_refit(test_layout layout, int leaf, double step) {
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(20000, layout, seed);
  const size_t n = b.n;
  char label[160];
  snprintf(label, sizeof label, "layout %d leaf %d step %g seed %llu",
           (int)layout, leaf, step, (unsigned long long)seed);
  const tfmm_tree_gpu_params params = {
      .leaf_size = leaf, .max_depth = TFMM_MAX_DEPTH, .timed = 1};
  test_gpu_tree g;
  test_gpu_tree_build(&g, n, b.pos, b.mass, &params, label);
  tfmm_error err = {{0}};
  tfmm_octree built, refit;
  cr_assert_eq(tfmm_tree_gpu_copy(&g.tree, &built, NULL, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(g.tree.growth, 1.0, "%s: a build's growth", label);

  double *moved = malloc(3 * n * sizeof *moved);
  test_rng rng = {seed ^ 0x9e3779b97f4a7c15ull};
  for (size_t i = 0; i < 3 * n; i++)
    moved[i] = b.pos[i] + step * built.box_size * (2 * test_uniform(&rng) - 1);
  for (size_t i = 0; i < n; i += n / 7) /* out of the root's cube */
    moved[3 * i] = built.box_min[0] + 1.5 * built.box_size;
  cr_assert_eq(
      cudaMemcpy(g.d_pos, moved, 3 * n * sizeof *moved, cudaMemcpyHostToDevice),
      cudaSuccess);
  cr_assert_eq(tfmm_tree_gpu_refit(g.ws, g.ws_bytes, g.d_pos, g.d_mass, 1,
                                   &g.tree, NULL, &err),
               TFMM_OK, "%s: %s", label, err.message);
  cr_assert_eq(tfmm_tree_gpu_copy(&g.tree, &refit, NULL, &err), TFMM_OK, "%s",
               err.message);
  expect_same_structure(&refit, &built, label);
  for (size_t j = 0; j < n; j++) {
    const int64_t i = built.order[j];
    cr_assert(memcmp(refit.pos + 3 * j, moved + 3 * i, 3 * sizeof *moved) == 0,
              "%s: sorted body %zu is not moved body %lld", label, j,
              (long long)i);
  }
  for (int64_t c = 0; c < refit.ncells; c++)
    expect_moments(&refit, c, moved, b.mass, label);
  double sum = 0;
  for (int64_t k = 0; k < refit.nleaves; k++) {
    const int64_t c = refit.leaves[k];
    const double r0 = built.cells[c].radius, r = refit.cells[c].radius;
    sum += r0 > 0 ? (r / r0) * (r / r0) * (r / r0) : 1.0;
  }
  const double growth = sum / (double)refit.nleaves;
  cr_expect(fabs(g.tree.growth - growth) <= 1e-12 * growth,
            "%s: growth %.17g, %.17g from the radii", label, g.tree.growth,
            growth);
  cr_expect(step == 0 ? growth == 1.0 : growth > 1.0,
            "%s: growth %.17g for moves of %g", label, growth, step);
  tfmm_octree_free(&built);
  tfmm_octree_free(&refit);
  free(moved);
  test_gpu_tree_free(&g);
  test_bodies_free(&b);
}

#endif /* TFMM_HAVE_CUDA */

Test(tree_refit_gpu, moved_bodies_clustered) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_refit(TEST_CLUSTERED, 16, 1e-3);
  check_refit(TEST_CLUSTERED, 64, 1e-2);
#endif
}

Test(tree_refit_gpu, moved_bodies_uniform) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_refit(TEST_UNIFORM, 64, 3e-3);
#endif
}

/* Bodies that did not move: the build's moments and a growth of 1. The
 * bodies that check_refit sends out of the root still move, so the step
 * here is 0 only for the others. */
Test(tree_refit_gpu, unmoved_bodies_keep_the_moments) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  test_bodies b = test_bodies_make(20000, TEST_CLUSTERED, test_fresh_seed());
  const tfmm_tree_gpu_params params = {
      .leaf_size = 32, .max_depth = TFMM_MAX_DEPTH, .timed = 0};
  test_gpu_tree g;
  test_gpu_tree_build(&g, b.n, b.pos, b.mass, &params, "unmoved");
  tfmm_error err = {{0}};
  tfmm_octree built, refit;
  cr_assert_eq(tfmm_tree_gpu_copy(&g.tree, &built, NULL, &err), TFMM_OK);
  cr_assert_eq(tfmm_tree_gpu_refit(g.ws, g.ws_bytes, g.d_pos, g.d_mass, 0,
                                   &g.tree, NULL, &err),
               TFMM_OK, "%s", err.message);
  cr_assert_eq(tfmm_tree_gpu_copy(&g.tree, &refit, NULL, &err), TFMM_OK);
  expect_same_structure(&refit, &built, "unmoved");
  for (int64_t c = 0; c < built.ncells; c++) {
    const tfmm_cell *x = &refit.cells[c], *y = &built.cells[c];
    cr_assert(x->mass == y->mass && x->radius == y->radius &&
                  memcmp(x->center, y->center, sizeof x->center) == 0,
              "unmoved: cell %lld's moments changed", (long long)c);
  }
  cr_expect_eq(g.tree.growth, 1.0);
  tfmm_octree_free(&built);
  tfmm_octree_free(&refit);
  test_gpu_tree_free(&g);
  test_bodies_free(&b);
#endif
}

/* A refit needs a built tree and the build's workspace. */
Test(tree_refit_gpu, refit_without_a_build_is_refused) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_error err = {{0}};
  tfmm_tree_gpu none;
  memset(&none, 0, sizeof none);
  double *d = NULL;
  cr_assert_eq(cudaMalloc((void **)&d, 64), cudaSuccess);
  cr_expect_eq(tfmm_tree_gpu_refit(d, 64, d, d, 0, &none, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(err.message, "built tree") != NULL, "%s", err.message);
  test_bodies b = test_bodies_make(5000, TEST_UNIFORM, test_fresh_seed());
  const tfmm_tree_gpu_params params = {
      .leaf_size = 16, .max_depth = TFMM_MAX_DEPTH, .timed = 0};
  test_gpu_tree g;
  test_gpu_tree_build(&g, b.n, b.pos, b.mass, &params, "small workspace");
  cr_expect_eq(tfmm_tree_gpu_refit(g.ws, g.ws_bytes / 2, g.d_pos, g.d_mass, 0,
                                   &g.tree, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(err.message, "workspace") != NULL, "%s", err.message);
  cudaFree(d);
  test_gpu_tree_free(&g);
  test_bodies_free(&b);
#endif
}

#if TFMM_HAVE_CUDA
#include "internal.h" /* tfmm_solver_keep_tree */

typedef tfmm_status (*model_fn)(size_t, uint64_t, double *, double *, double *);

/* Bodies of a clustered layout (a few Plummer-like clumps of very
 * different sizes) with random velocities of about 0.3. */
static tfmm_status clustered(size_t n, uint64_t seed, double *pos, double *vel,
                             double *mass) {
  test_bodies b = test_bodies_make(n, TEST_CLUSTERED, seed);
  memcpy(pos, b.pos, 3 * n * sizeof *pos);
  memcpy(mass, b.mass, n * sizeof *mass);
  test_rng rng = {seed + 1};
  for (size_t i = 0; i < 3 * n; i++)
    vel[i] = 0.6 * (test_uniform(&rng) - 0.5);
  test_bodies_free(&b);
  return TFMM_OK;
}

/* The p99 of the solver's forces at the device positions against the
 * double direct sum at the same positions. */
static double p99_against_truth(size_t n, const double *pos, const double *mass,
                                const double *d_acc, const tfmm_config *c) {
  test_bodies t = {n, malloc(3 * n * sizeof(double)),
                   malloc(n * sizeof(double))};
  memcpy(t.pos, pos, 3 * n * sizeof(double));
  memcpy(t.mass, mass, n * sizeof(double));
  double *acc = malloc(3 * n * sizeof *acc), *ref = malloc(3 * n * sizeof *ref);
  cr_assert_eq(
      cudaMemcpy(acc, d_acc, 3 * n * sizeof *acc, cudaMemcpyDeviceToHost),
      cudaSuccess);
  cr_assert_eq(test_reference_softened(&t, c->eps, c->softening, ref, NULL), 0);
  const double p99 = test_p99_relative(n, acc, ref);
  free(acc);
  free(ref);
  test_bodies_free(&t);
  return p99;
}

/* A solver told that its bodies are the last evaluation's moved
 * (tfmm_solver_keep_tree), stepping by leapfrog at dt with every body
 * marked active (an evaluation at a subset, which the rule lets refit, of
 * which every force is compared): the first evaluation builds, the second
 * refits, later ones refit or build as the growth says. At the second and
 * the last, the p99 of the relative error against the double direct sum
 * at the same positions is within the accuracy asked, as at a tree built
 * afresh there. */
static void check_kept_forces(const char *name, model_fn model, double dt) {
  enum { N = 16384, STEPS = 5 };
  const uint64_t seed = test_fresh_seed();
  double *pos = malloc(3 * N * sizeof *pos), *vel = malloc(3 * N * sizeof *vel),
         *mass = malloc(N * sizeof *mass), *acc = malloc(3 * N * sizeof *acc);
  cr_assert_eq(model(N, seed, pos, vel, mass), TFMM_OK);
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_GPU;
  c.schedule = TFMM_SCHEDULE_GPU;
  c.softening = TFMM_SOFTENING_SPLINE;
  c.eps = 0.01;
  c.leaf_size = 32;
  tfmm_solver *kept = NULL, *fresh = NULL;
  cr_assert_eq(tfmm_solver_create(&kept, &c), TFMM_OK);
  cr_assert_eq(tfmm_solver_create(&fresh, &c), TFMM_OK);
  double *d_pos, *d_mass, *d_acc;
  unsigned char *d_all;
  cr_assert_eq(cudaMalloc((void **)&d_pos, 3 * N * sizeof(double)),
               cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_mass, N * sizeof(double)), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_acc, 3 * N * sizeof(double)),
               cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_all, N), cudaSuccess);
  cr_assert_eq(cudaMemset(d_all, 1, N), cudaSuccess);
  cr_assert_eq(
      cudaMemcpy(d_mass, mass, N * sizeof(double), cudaMemcpyHostToDevice),
      cudaSuccess);
  for (int k = 0; k <= STEPS; k++) {
    if (k > 0)
      for (size_t i = 0; i < 3 * N; i++) { /* kick, drift */
        vel[i] += 0.5 * dt * acc[i];
        pos[i] += dt * vel[i];
      }
    cr_assert_eq(
        cudaMemcpy(d_pos, pos, 3 * N * sizeof(double), cudaMemcpyHostToDevice),
        cudaSuccess);
    tfmm_solver_keep_tree(kept, 1);
    cr_assert_eq(tfmm_solver_compute_active_device(kept, N, d_pos, d_mass,
                                                   k == 0 ? NULL : d_all, d_acc,
                                                   NULL, NULL),
                 TFMM_OK, "%s: %s", name, tfmm_solver_message(kept));
    const tfmm_stats *x = tfmm_solver_stats(kept);
    cr_assert_eq(
        cudaMemcpy(acc, d_acc, 3 * N * sizeof(double), cudaMemcpyDeviceToHost),
        cudaSuccess);
    /* (The planner may evaluate more than once in a call.) */
    if (k == 0)
      cr_assert_eq(x->tree_refits, 0, "%s: the first evaluation refit", name);
    if (k == 1)
      cr_assert_geq(x->tree_refits, 1, "%s: the second evaluation built", name);
    if (k > 0)
      for (size_t i = 0; i < 3 * N; i++) /* kick */
        vel[i] += 0.5 * dt * acc[i];
    if (k != 1 && k != STEPS)
      continue;
    const int64_t refits = x->tree_refits;
    const double growth = x->tree_growth;
    const double p_kept = p99_against_truth(N, pos, mass, d_acc, &c);
    cr_assert_eq(
        tfmm_solver_compute_device(fresh, N, d_pos, d_mass, d_acc, NULL, NULL),
        TFMM_OK, "%s", tfmm_solver_message(fresh));
    const double p_fresh = p99_against_truth(N, pos, mass, d_acc, &c);
    cr_log_info("%s seed %llu evaluation %d: %lld refits, growth %.4g: p99 "
                "%.3g kept, %.3g fresh",
                name, (unsigned long long)seed, k, (long long)refits, growth,
                p_kept, p_fresh);
    cr_expect_leq(p_kept, c.accuracy,
                  "%s seed %llu evaluation %d (%lld refits, growth %.4g): p99 "
                  "%.3g (a fresh tree: %.3g)",
                  name, (unsigned long long)seed, k, (long long)refits, growth,
                  p_kept, p_fresh);
    cr_expect_leq(p_fresh, c.accuracy, "%s: a fresh tree's p99 %.3g", name,
                  p_fresh);
  }
  tfmm_solver_destroy(kept);
  tfmm_solver_destroy(fresh);
  cudaFree(d_pos);
  cudaFree(d_mass);
  cudaFree(d_acc);
  cudaFree(d_all);
  free(pos);
  free(vel);
  free(mass);
  free(acc);
}
#endif

Test(tree_refit_gpu, kept_tree_forces_meet_the_accuracy, .timeout = 600) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_kept_forces("hernquist", tfmm_ic_hernquist, 1.0 / 64);
  check_kept_forces("merger", tfmm_ic_merger, 1.0 / 64);
  check_kept_forces("cold collapse", tfmm_ic_cold, 1.0 / 32);
  check_kept_forces("clustered", clustered, 1.0 / 64);
#endif
}
