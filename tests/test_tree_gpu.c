/* The octree built on the GPU (kernels/tree/tree_gpu.h) against the CPU's
 * (tfmm_octree_build) for the same input: every array equal (keys, body
 * order, sorted bodies, cells' structure and cubes, leaves, levels), the
 * moments within TFMM_TREE_GPU_MOMENT_TOL. Uniform, Plummer, clustered and
 * degenerate inputs, leaf sizes 1 to 4096. Skips without a GPU. */
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
#endif

#if TFMM_HAVE_CUDA

static const int leaf_sizes[] = {1, 16, 64, 512, 4096};
enum { NLEAF = sizeof leaf_sizes / sizeof leaf_sizes[0] };

/* The largest moment deviation seen, relative as the bound states. */
static double worst;

static void check_rel(double gpu, double cpu, double scale, const char *what,
                      int64_t c, const char *label) {
  double dev = fabs(gpu - cpu) / (scale > 0 ? scale : 1);
  worst = dev > worst ? dev : worst;
  cr_assert(dev <= TFMM_TREE_GPU_MOMENT_TOL,
            "%s: cell %lld %s: GPU %.17g CPU %.17g (relative %g)", label,
            (long long)c, what, gpu, cpu, dev);
}

static void compare_cells(const tfmm_octree *g, const tfmm_octree *t,
                          const char *label) {
  for (int64_t c = 0; c < t->ncells; c++) {
    const tfmm_cell *a = &g->cells[c], *b = &t->cells[c];
    cr_assert(a->level == b->level && a->parent == b->parent &&
                  a->child_begin == b->child_begin &&
                  a->child_count == b->child_count &&
                  a->body_begin == b->body_begin && a->body_end == b->body_end,
              "%s: cell %lld differs: level %d/%d parent %d/%d child %d+%d / "
              "%d+%d bodies [%lld, %lld) / [%lld, %lld)",
              label, (long long)c, a->level, b->level, a->parent, b->parent,
              a->child_begin, a->child_count, b->child_begin, b->child_count,
              (long long)a->body_begin, (long long)a->body_end,
              (long long)b->body_begin, (long long)b->body_end);
    cr_assert(a->size == b->size && memcmp(a->box_center, b->box_center,
                                           sizeof a->box_center) == 0,
              "%s: cell %lld: cube differs", label, (long long)c);
    check_rel(a->mass, b->mass, b->mass, "mass", c, label);
    for (int k = 0; k < 3; k++)
      check_rel(a->center[k], b->center[k], b->size, "centre", c, label);
    check_rel(a->radius, b->radius, b->size, "radius", c, label);
  }
}

static void compare_trees(const tfmm_octree *g, const tfmm_octree *t,
                          const char *label) {
  cr_assert_eq(g->n, t->n, "%s: n", label);
  cr_assert(memcmp(g->box_min, t->box_min, sizeof g->box_min) == 0 &&
                g->box_size == t->box_size,
            "%s: cube differs: size %.17g / %.17g", label, g->box_size,
            t->box_size);
  size_t n = t->n;
  cr_assert(memcmp(g->keys, t->keys, n * sizeof *t->keys) == 0,
            "%s: keys differ", label);
  cr_assert(memcmp(g->order, t->order, n * sizeof *t->order) == 0,
            "%s: body order differs", label);
  cr_assert(memcmp(g->pos, t->pos, 3 * n * sizeof *t->pos) == 0 &&
                memcmp(g->mass, t->mass, n * sizeof *t->mass) == 0,
            "%s: sorted bodies differ", label);
  cr_assert(g->ncells == t->ncells && g->nleaves == t->nleaves &&
                g->depth == t->depth,
            "%s: %lld cells %lld leaves depth %d on the GPU, %lld %lld %d on "
            "the CPU",
            label, (long long)g->ncells, (long long)g->nleaves, g->depth,
            (long long)t->ncells, (long long)t->nleaves, t->depth);
  cr_assert(memcmp(g->level_begin, t->level_begin,
                   (size_t)(t->depth + 2) * sizeof *t->level_begin) == 0,
            "%s: level_begin differs", label);
  cr_assert(
      memcmp(g->leaves, t->leaves, (size_t)t->nleaves * sizeof *t->leaves) == 0,
      "%s: leaves differ", label);
  compare_cells(g, t, label);
}

/* Builds both trees of the bodies and compares them. */
static void check_case(size_t n, const double *pos, const double *mass,
                       int leaf_size, int max_depth, const char *label) {
  char full[256];
  snprintf(full, sizeof full, "%s, n %zu, leaf %d, depth %d", label, n,
           leaf_size, max_depth);
  tfmm_error err = {{0}};
  tfmm_octree cpu, gpu;
  cr_assert_eq(
      tfmm_octree_build(&cpu, n, pos, mass, leaf_size, max_depth, &err),
      TFMM_OK, "%s: %s", full, err.message);
  /* The cells built in one cooperative launch (the default) and level by
   * level from the host: both the CPU's tree. */
  for (int host_levels = 0; host_levels <= 1; host_levels++) {
    const tfmm_tree_gpu_params params = {.leaf_size = leaf_size,
                                         .max_depth = max_depth,
                                         .timed = 1,
                                         .host_levels = host_levels};
    char which[300];
    snprintf(which, sizeof which, "%s, %s", full,
             host_levels ? "levels from the host" : "levels in one launch");
    test_gpu_tree g; /* its workspace poisoned before the build */
    test_gpu_tree_build(&g, n, pos, mass, &params, which);
    cr_assert_eq(tfmm_tree_gpu_copy(&g.tree, &gpu, NULL, &err), TFMM_OK,
                 "%s: %s", which, err.message);
    compare_trees(&gpu, &cpu, which);
    tfmm_octree_free(&gpu);
    test_gpu_tree_free(&g);
  }
  tfmm_octree_free(&cpu);
}

static void check_leaf_sizes(size_t n, const double *pos, const double *mass,
                             const char *label) {
  for (int k = 0; k < NLEAF; k++)
    check_case(n, pos, mass, leaf_sizes[k], TFMM_MAX_DEPTH, label);
}

static void check_layout(size_t n, test_layout layout, const char *label) {
  uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(n, layout, seed);
  char full[128];
  snprintf(full, sizeof full, "%s seed %llu", label, (unsigned long long)seed);
  check_leaf_sizes(n, b.pos, b.mass, full);
  test_bodies_free(&b);
}

#endif /* TFMM_HAVE_CUDA */

Test(tree_gpu, uniform) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_layout(30000, TEST_UNIFORM, "uniform");
  cr_log_info("largest moment deviation, relative: %g", worst);
#endif
}

Test(tree_gpu, clustered) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  check_layout(30000, TEST_CLUSTERED, "clustered");
#endif
}

Test(tree_gpu, plummer) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  size_t n = 50000;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass);
  uint64_t seed = test_fresh_seed();
  cr_assert_eq(tfmm_ic_plummer(n, seed, pos, vel, mass), TFMM_OK);
  char label[64];
  snprintf(label, sizeof label, "plummer seed %llu", (unsigned long long)seed);
  check_leaf_sizes(n, pos, mass, label);
  free(pos);
  free(vel);
  free(mass);
#endif
}

Test(tree_gpu, small_n) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  double pos[300], mass[100];
  for (size_t n = 1; n <= 100; n++) {
    for (size_t i = 0; i < 3 * n; i++)
      pos[i] = test_uniform(&rng) - 0.5;
    for (size_t i = 0; i < n; i++)
      mass[i] = 0.5 + test_uniform(&rng);
    char label[64];
    snprintf(label, sizeof label, "small seed %llu", (unsigned long long)seed);
    check_case(n, pos, mass, 1, TFMM_MAX_DEPTH, label);
    check_case(n, pos, mass, 16, TFMM_MAX_DEPTH, label);
  }
#endif
}

/* Coincident bodies share a key: a leaf past leaf_size. Two piles closer
 * than a few key cells separate only near the deepest level; with a
 * shallower max_depth they stop there. */
Test(tree_gpu, coincident_and_deepest) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  enum { N = 3000 };
  static double pos[3 * N], mass[N];
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  for (size_t i = 0; i < N; i++) {
    mass[i] = 1.0 / N;
    int pile = i % 3 == 0, far = i % 3 == 1;
    for (int k = 0; k < 3; k++)
      pos[3 * i + k] =
          far ? test_uniform(&rng) : 0.25 + (pile ? 0 : 3.0 * ldexp(1.0, -21));
  }
  check_leaf_sizes(N, pos, mass, "two piles");
  for (int depth = 0; depth <= 6; depth += 3)
    check_case(N, pos, mass, 1, depth, "two piles, shallow");
  for (size_t i = 0; i < 3 * N; i++)
    pos[i] = -7.5;
  check_leaf_sizes(N, pos, mass, "one pile");
#endif
}

Test(tree_gpu, line_and_one_body) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  enum { N = 5000 };
  static double pos[3 * N], mass[N];
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  for (size_t i = 0; i < N; i++) {
    pos[3 * i] = 1e3 + test_uniform(&rng);
    pos[3 * i + 1] = pos[3 * i + 2] = -2.0;
    mass[i] = test_uniform(&rng) + 1e-3;
  }
  check_leaf_sizes(N, pos, mass, "line");
  check_leaf_sizes(1, pos, mass, "one body");
#endif
}

Test(tree_gpu, errors_are_reported) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  enum { N = 4096 };
  test_bodies b = test_bodies_make(N, TEST_UNIFORM, test_fresh_seed());
  double *d_pos = test_gpu_copy(b.pos, 3 * N),
         *d_mass = test_gpu_copy(b.mass, N);
  tfmm_error err = {{0}};
  tfmm_tree_gpu tree;
  size_t bytes = 0;
  tfmm_tree_gpu_params bad = {.leaf_size = 0, .max_depth = TFMM_MAX_DEPTH};
  cr_assert_eq(tfmm_tree_gpu_build(NULL, &bytes, N, d_pos, d_mass, &bad, &tree,
                                   NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "leaf_size") != NULL, "%s", err.message);
  tfmm_tree_gpu_params tight = {
      .leaf_size = 1, .max_depth = TFMM_MAX_DEPTH, .max_cells = 100};
  cr_assert_eq(tfmm_tree_gpu_build(NULL, &bytes, 0, d_pos, d_mass, &tight,
                                   &tree, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_tree_gpu_build(NULL, &bytes, N, d_pos, d_mass, &tight,
                                   &tree, NULL, &err),
               TFMM_OK, "%s", err.message);
  void *ws = NULL;
  cr_assert_eq(cudaMalloc(&ws, bytes), cudaSuccess);
  size_t less = bytes - 1;
  cr_assert_eq(tfmm_tree_gpu_build(ws, &less, N, d_pos, d_mass, &tight, &tree,
                                   NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  /* 100 cells cannot hold a tree of 4096 bodies in leaves of one. */
  cr_assert_eq(tfmm_tree_gpu_build(ws, &bytes, N, d_pos, d_mass, &tight, &tree,
                                   NULL, &err),
               TFMM_ERR_NO_MEMORY);
  cr_assert(strstr(err.message, "max_cells") != NULL, "%s", err.message);
  /* The host's level loop stops at the same level, with the same words. */
  char once[sizeof err.message];
  snprintf(once, sizeof once, "%s", err.message);
  tight.host_levels = 1;
  cr_assert_eq(tfmm_tree_gpu_build(ws, &bytes, N, d_pos, d_mass, &tight, &tree,
                                   NULL, &err),
               TFMM_ERR_NO_MEMORY);
  cr_assert_str_eq(err.message, once);
  cudaFree(ws);
  cudaFree(d_pos);
  cudaFree(d_mass);
  test_bodies_free(&b);
#endif
}

/* One workspace and one pair of body arrays, sized once for the largest N,
 * reused for builds of other sizes and inputs (as a simulation whose N
 * changes would): every build still equals the CPU's tree. */
Test(tree_gpu, workspace_reuse_across_n) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  enum { NMAX = 40000 };
  const size_t ns[] = {NMAX, 7000, 1, 25000, 300};
  const test_layout layouts[] = {TEST_CLUSTERED, TEST_UNIFORM, TEST_UNIFORM,
                                 TEST_UNIFORM, TEST_CLUSTERED};
  const uint64_t seed = test_fresh_seed();
  double *d_pos = NULL, *d_mass = NULL;
  cr_assert_eq(cudaMalloc((void **)&d_pos, 3 * NMAX * sizeof(double)),
               cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_mass, NMAX * sizeof(double)),
               cudaSuccess);
  tfmm_tree_gpu_params params = {.leaf_size = 16, .max_depth = TFMM_MAX_DEPTH};
  tfmm_tree_gpu tree;
  tfmm_error err = {{0}};
  size_t bytes = 0;
  cr_assert_eq(tfmm_tree_gpu_build(NULL, &bytes, NMAX, d_pos, d_mass, &params,
                                   &tree, NULL, &err),
               TFMM_OK, "%s", err.message);
  void *ws = NULL;
  cr_assert_eq(cudaMalloc(&ws, bytes), cudaSuccess);
  for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
    const size_t n = ns[k];
    test_bodies b = test_bodies_make(n, layouts[k], seed + k);
    char label[128];
    snprintf(label, sizeof label, "reuse seed %llu n %zu",
             (unsigned long long)(seed + k), n);
    cr_assert_eq(cudaMemcpy(d_pos, b.pos, 3 * n * sizeof(double),
                            cudaMemcpyHostToDevice),
                 cudaSuccess);
    cr_assert_eq(
        cudaMemcpy(d_mass, b.mass, n * sizeof(double), cudaMemcpyHostToDevice),
        cudaSuccess);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* the copy landed */
    size_t have = bytes;
    cr_assert_eq(tfmm_tree_gpu_build(ws, &have, n, d_pos, d_mass, &params,
                                     &tree, NULL, &err),
                 TFMM_OK, "%s: %s", label, err.message);
    tfmm_octree cpu, gpu;
    cr_assert_eq(
        tfmm_octree_build(&cpu, n, b.pos, b.mass, 16, TFMM_MAX_DEPTH, &err),
        TFMM_OK, "%s: %s", label, err.message);
    cr_assert_eq(tfmm_tree_gpu_copy(&tree, &gpu, NULL, &err), TFMM_OK, "%s: %s",
                 label, err.message);
    compare_trees(&gpu, &cpu, label);
    tfmm_octree_free(&gpu);
    tfmm_octree_free(&cpu);
    test_bodies_free(&b);
  }
  cudaFree(ws);
  cudaFree(d_pos);
  cudaFree(d_mass);
#endif
}

/* A cube given by the caller (params.box, as tfmm_octree_build_in takes
 * it): the same tree as the CPU's in that cube; a body outside it named,
 * as the CPU names it; a cube that is not one refused. */
Test(tree_gpu, given_cube) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(20000, TEST_CLUSTERED, seed);
  const size_t n = b.n;
  const double box[4] = {-1.75, -2.0, -1.5, 4.25};
  tfmm_error err = {{0}};
  tfmm_octree cpu, gpu;
  cr_assert_eq(tfmm_octree_build_in(&cpu, n, b.pos, b.mass, 32, TFMM_MAX_DEPTH,
                                    box, &err),
               TFMM_OK, "%s", err.message);
  double *d_pos = test_gpu_copy(b.pos, 3 * n),
         *d_mass = test_gpu_copy(b.mass, n);
  tfmm_tree_gpu_params params = {.leaf_size = 32,
                                 .max_depth = TFMM_MAX_DEPTH,
                                 .box = {box[0], box[1], box[2], box[3]}};
  tfmm_tree_gpu tree;
  size_t bytes = 0;
  cr_assert_eq(tfmm_tree_gpu_build(NULL, &bytes, n, d_pos, d_mass, &params,
                                   &tree, NULL, &err),
               TFMM_OK, "%s", err.message);
  void *ws = NULL;
  cr_assert_eq(cudaMalloc(&ws, bytes), cudaSuccess);
  cr_assert_eq(tfmm_tree_gpu_build(ws, &bytes, n, d_pos, d_mass, &params, &tree,
                                   NULL, &err),
               TFMM_OK, "%s", err.message);
  cr_assert_eq(tfmm_tree_gpu_copy(&tree, &gpu, NULL, &err), TFMM_OK, "%s",
               err.message);
  char label[64];
  snprintf(label, sizeof label, "given cube seed %llu",
           (unsigned long long)seed);
  compare_trees(&gpu, &cpu, label);
  tfmm_octree_free(&gpu);
  tfmm_octree_free(&cpu);
  /* Bodies 4321 and 9876 outside: the first is named by both trees. */
  b.pos[3 * 9876 + 1] = 2.5;
  b.pos[3 * 4321] = -1.8;
  cr_assert_eq(
      cudaMemcpy(d_pos, b.pos, 3 * n * sizeof(double), cudaMemcpyHostToDevice),
      cudaSuccess);
  cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* the copy landed */
  cr_assert_eq(tfmm_octree_build_in(&cpu, n, b.pos, b.mass, 32, TFMM_MAX_DEPTH,
                                    box, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  char want[512];
  snprintf(want, sizeof want, "%s", err.message);
  tfmm_octree_free(&cpu);
  cr_assert_eq(tfmm_tree_gpu_build(ws, &bytes, n, d_pos, d_mass, &params, &tree,
                                   NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "body 4321:") != NULL &&
                strcmp(err.message, want) == 0,
            "GPU: %s / CPU: %s", err.message, want);
  params.box[3] = -1;
  cr_assert_eq(tfmm_tree_gpu_build(NULL, &bytes, n, d_pos, d_mass, &params,
                                   &tree, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "given cube") != NULL, "%s", err.message);
  cudaFree(ws);
  cudaFree(d_pos);
  cudaFree(d_mass);
  test_bodies_free(&b);
#endif
}
