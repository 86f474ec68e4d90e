/* The traversal on the GPU (kernels/traversal/traverse_gpu.h) against the CPU's
 * (src/tree/lists.c) on the same tree: the GPU tree is copied to the host
 * (tfmm_tree_gpu_copy) and both traversals run on it, so every decision
 * sees the same cells. The M2L, near and M2P lists must hold the same
 * entries for every target (as sets: the orders differ, breadth first
 * against depth first), and the near-field pair counts must be equal.
 * The criterion's inputs made on the GPU are checked against the CPU's
 * first: the error criterion's accelerations bit for bit (the same sums),
 * the mass criterion's thetas to 1e-14 (the device's log may differ from
 * the C library's in the last place); the CPU traversal then takes the
 * GPU's, so that both decide on the same numbers. Geometric, mass and
 * error criteria, softening separations, M2P targets; Plummer, clustered,
 * uniform and degenerate inputs; FMM and Barnes-Hut; determinism and
 * reuse of the buffers. Skips without a GPU. */
#include "testutil.h"
#include "tree/accel_estimate.h"
#include "tree/lists.h"
#include "tree/mac.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include "gpu_tree.h"
#include "p2p_gpu.h"
#include "pipeline_gpu.h"
#include "traverse_gpu.h"

#include <cuda_runtime.h>

static void *to_host(const void *d, size_t bytes) {
  void *h = malloc(bytes > 0 ? bytes : 1);
  cr_assert_not_null(h);
  if (bytes > 0)
    cr_assert_eq(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

/* A device context (device 0): the traversal's memory is its arena's. */
static tfmm_gpu *new_context(void) {
  tfmm_gpu *gpu = NULL;
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_gpu_create(&gpu, 0, &err), TFMM_OK, "%s", err.message);
  return gpu;
}

static int by_value(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* A device list on the host, each target's entries sorted. */
static tfmm_csr sorted_host(const tfmm_csr_gpu *g) {
  tfmm_csr c = {g->ntargets, NULL, NULL};
  c.offset = to_host(g->offset, (size_t)(g->ntargets + 1) * sizeof(int64_t));
  c.index = to_host(g->index, (size_t)c.offset[g->ntargets] * sizeof(int32_t));
  for (int64_t t = 0; t < c.ntargets; t++)
    qsort(c.index + c.offset[t], (size_t)(c.offset[t + 1] - c.offset[t]),
          sizeof(int32_t), by_value);
  return c;
}

static void compare_lists(const tfmm_csr *cpu, const tfmm_csr_gpu *gpu,
                          int64_t gpu_count, const char *what,
                          const char *label) {
  cr_assert_eq(gpu->ntargets, cpu->ntargets, "%s: %s: targets %lld, CPU %lld",
               label, what, (long long)gpu->ntargets, (long long)cpu->ntargets);
  tfmm_csr g = sorted_host(gpu);
  cr_assert_eq(gpu_count, g.offset[g.ntargets], "%s: %s: count", label, what);
  cr_assert_eq(g.offset[g.ntargets], cpu->offset[cpu->ntargets],
               "%s: %s: %lld entries, CPU %lld", label, what,
               (long long)g.offset[g.ntargets],
               (long long)cpu->offset[cpu->ntargets]);
  for (int64_t t = 0; t < g.ntargets; t++) {
    const int64_t n = g.offset[t + 1] - g.offset[t];
    cr_assert_eq(n, cpu->offset[t + 1] - cpu->offset[t],
                 "%s: %s: target %lld has %lld entries, CPU %lld", label, what,
                 (long long)t, (long long)n,
                 (long long)(cpu->offset[t + 1] - cpu->offset[t]));
    int32_t *c = cpu->index + cpu->offset[t];
    qsort(c, (size_t)n, sizeof *c, by_value);
    for (int64_t k = 0; k < n; k++)
      cr_assert_eq(g.index[g.offset[t] + k], c[k],
                   "%s: %s: target %lld entry %lld: GPU cell %d, CPU %d", label,
                   what, (long long)t, (long long)k, g.index[g.offset[t] + k],
                   c[k]);
  }
  free(g.offset);
  free(g.index);
}

/* The criterion's per-cell inputs of the GPU, checked against the CPU's;
 * returned (malloc'd) for the CPU traversal, or NULL. */
static double *criterion_input(const tfmm_octree *t,
                               const tfmm_traverse_gpu_params *p,
                               const tfmm_traverse_gpu_lists *l,
                               const char *label) {
  const size_t bytes = (size_t)t->ncells * sizeof(double);
  if (p->mac == TFMM_MAC_MASS) {
    double *g = to_host(l->d_theta, bytes);
    double *c = tfmm_mac_mass_thetas(t, p->theta, p->order);
    cr_assert_not_null(c);
    for (int64_t k = 0; k < t->ncells; k++)
      cr_assert(fabs(g[k] - c[k]) <= 1e-14 * c[k],
                "%s: theta of cell %lld: GPU %.17g CPU %.17g", label,
                (long long)k, g[k], c[k]);
    free(c);
    return g;
  }
  if (p->mac == TFMM_MAC_ERROR) {
    double *g = to_host(l->d_accel, bytes);
    double *c = tfmm_accel_estimate(t, p->eps);
    cr_assert_not_null(c);
    for (int64_t k = 0; k < t->ncells; k++)
      cr_assert(g[k] == c[k], "%s: |a| of cell %lld: GPU %.17g CPU %.17g",
                label, (long long)k, g[k], c[k]);
    free(c);
    return g;
  }
  return NULL;
}

/* Both traversals of one tree under p; the GPU state and its device
 * context are the caller's. */
static void check_tree(tfmm_traverse_gpu *state, tfmm_gpu *gpu,
                       const test_gpu_tree *g,
                       const tfmm_traverse_gpu_params *p, const char *label) {
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_traverse_gpu_run(state, gpu, &g->tree, p, NULL, &err),
               TFMM_OK, "%s: %s", label, err.message);
  const tfmm_traverse_gpu_lists *l = &state->lists;
  tfmm_octree t;
  cr_assert_eq(tfmm_tree_gpu_copy(&g->tree, &t, NULL, &err), TFMM_OK, "%s",
               err.message);
  double *input = criterion_input(&t, p, l, label);
  const tfmm_mac mac = {p->theta,
                        p->separation,
                        p->mac == TFMM_MAC_MASS ? input : NULL,
                        p->mac == TFMM_MAC_ERROR ? input : NULL,
                        p->epsilon,
                        p->order,
                        p->soft_term};
  tfmm_lists cpu;
  cr_assert_eq(p->barnes_hut
                   ? tfmm_lists_build_bh(&t, &mac, &cpu, &err)
                   : tfmm_lists_build_fmm(&t, &mac, p->m2p_bodies, &cpu, &err),
               TFMM_OK, "%s", err.message);
  if (!p->barnes_hut)
    compare_lists(&cpu.m2l, &l->m2l, l->m2l_count, "M2L", label);
  else
    cr_assert_eq(l->m2l_count, 0, "%s: Barnes-Hut has no M2L", label);
  compare_lists(&cpu.near, &l->near, l->near_count, "near", label);
  compare_lists(&cpu.m2p, &l->m2p, l->m2p_count, "M2P", label);
  cr_assert_eq(l->near_interactions, cpu.near_interactions,
               "%s: near pairs GPU %.17g CPU %.17g", label,
               l->near_interactions, cpu.near_interactions);
  double evaluations = 0;
  for (int64_t c = 0; c < t.ncells; c++)
    evaluations += (double)(t.cells[c].body_end - t.cells[c].body_begin) *
                   (double)(cpu.m2p.offset[c + 1] - cpu.m2p.offset[c]);
  cr_assert_eq(l->m2p_evaluations, evaluations,
               "%s: M2P evaluations GPU %.17g CPU %.17g", label,
               l->m2p_evaluations, evaluations);
  cr_assert(l->rounds >= 1 && l->widest >= 1, "%s", label);
  tfmm_lists_free(&cpu);
  tfmm_octree_free(&t);
  free(input);
}

/* Every criterion on one input: the FMM, and Barnes-Hut. */
static void check_input_capped(size_t n, const double *pos, const double *mass,
                               int leaf_size, double theta, double separation,
                               int64_t m2p_bodies, int64_t frontier_cap,
                               const char *name) {
  const tfmm_tree_gpu_params tp = {.leaf_size = leaf_size,
                                   .max_depth = TFMM_MAX_DEPTH};
  test_gpu_tree g;
  test_gpu_tree_build(&g, n, pos, mass, &tp, name);
  tfmm_gpu *gpu = new_context();
  tfmm_traverse_gpu state = {0};
  const tfmm_mac_kind macs[] = {TFMM_MAC_GEOMETRIC, TFMM_MAC_MASS,
                                TFMM_MAC_ERROR};
  const int64_t narrows[] = {0, -1, 37};
  for (int bh = 0; bh <= 1; bh++)
    for (int k = 0; k < 3; k++) {
      const double eps = separation > 0 ? separation / 2 : 0;
      const tfmm_traverse_gpu_params p = {
          .barnes_hut = bh,
          .mac = macs[k],
          .theta = macs[k] == TFMM_MAC_ERROR ? 0.9 : theta,
          .separation = separation,
          .epsilon = 1e-4,
          .order = 4 + 2 * k,
          .soft_term = macs[k] == TFMM_MAC_ERROR ? 1.5 * eps * eps : 0,
          .eps = eps,
          .m2p_bodies = m2p_bodies,
          .frontier_cap = frontier_cap,
          /* rounds in one cooperative launch (the default's tile a block),
           * every round the host's, or both in turn */
          .narrow = narrows[(3 * bh + k) % 3]};
      char label[256];
      snprintf(label, sizeof label,
               "%s, n %zu, leaf %d, %s, %s, theta %g, s %g, cap %lld, narrow "
               "%lld",
               name, n, leaf_size, bh ? "bh" : "fmm", tfmm_mac_name(macs[k]),
               p.theta, separation, (long long)frontier_cap,
               (long long)p.narrow);
      check_tree(&state, gpu, &g, &p, label);
    }
  tfmm_traverse_gpu_release(&state);
  cr_assert_null(state.state);
  tfmm_gpu_destroy(gpu);
  test_gpu_tree_free(&g);
}

static void check_input(size_t n, const double *pos, const double *mass,
                        int leaf_size, double theta, double separation,
                        int64_t m2p_bodies, const char *name) {
  check_input_capped(n, pos, mass, leaf_size, theta, separation, m2p_bodies, 0,
                     name);
}
#endif

/* A small frontier cap: the sweep goes on by slices, depth first, through
 * many segments; the lists are the same sets. */
Test(traverse_gpu, frontier_by_slices) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(20000, TEST_CLUSTERED, seed);
  char name[64];
  snprintf(name, sizeof name, "clustered seed %llu", (unsigned long long)seed);
  check_input_capped(b.n, b.pos, b.mass, 8, 0.5, 0, 1, 64, name);
  check_input_capped(b.n, b.pos, b.mass, 16, 0.6, 0.01, 4, 5000, name);
  test_bodies_free(&b);
#endif
}

/* Every round in the cooperative launch, the wide ones too: a block then
 * scans several tiles of its chunk in turn (the default takes the wide
 * rounds on the host, so only this reaches that path); with the frontier
 * cap small as well, its stack holds many segments. */
Test(traverse_gpu, every_round_in_one_launch) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(150000, TEST_CLUSTERED, seed);
  const tfmm_tree_gpu_params tp = {.leaf_size = 4, .max_depth = TFMM_MAX_DEPTH};
  test_gpu_tree g;
  char name[96];
  snprintf(name, sizeof name, "clustered seed %llu", (unsigned long long)seed);
  test_gpu_tree_build(&g, b.n, b.pos, b.mass, &tp, name);
  tfmm_gpu *gpu = new_context();
  tfmm_traverse_gpu state = {0};
  int sms = 0; /* the launch's blocks: one an SM */
  cr_assert_eq(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
               cudaSuccess);
  const int64_t caps[] = {0, 20000};
  for (int bh = 0; bh <= 1; bh++)
    for (int k = 0; k < 2; k++) {
      const tfmm_traverse_gpu_params p = {.barnes_hut = bh,
                                          .mac = TFMM_MAC_GEOMETRIC,
                                          .theta = 0.6,
                                          .order = 4,
                                          .m2p_bodies = 2,
                                          .frontier_cap = caps[k],
                                          .narrow = INT32_MAX};
      char label[160];
      snprintf(label, sizeof label,
               "%s, %s, cap %lld, every round in one launch", name,
               bh ? "bh" : "fmm", (long long)caps[k]);
      check_tree(&state, gpu, &g, &p, label);
      if (caps[k] == 0) /* the premise: chunks of several tiles */
        cr_assert(state.lists.widest > (int64_t)sms * 1024,
                  "%s: the widest round (%lld pairs) gives each of %d "
                  "blocks one tile at most",
                  label, (long long)state.lists.widest, sms);
    }
  tfmm_traverse_gpu_release(&state);
  tfmm_gpu_destroy(gpu);
  test_gpu_tree_free(&g);
  test_bodies_free(&b);
#endif
}

Test(traverse_gpu, plummer) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const size_t n = 40000;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass);
  cr_assert(pos && vel && mass);
  uint64_t seed = test_fresh_seed();
  cr_assert_eq(tfmm_ic_plummer(n, seed, pos, vel, mass), TFMM_OK);
  char name[64];
  snprintf(name, sizeof name, "plummer seed %llu", (unsigned long long)seed);
  check_input(n, pos, mass, 16, 0.5, 0, 1, name);
  check_input(n, pos, mass, 64, 0.7, 0.02, 16, name);
  free(pos);
  free(vel);
  free(mass);
#endif
}

Test(traverse_gpu, clustered_and_uniform) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  uint64_t seed = test_fresh_seed();
  char name[64];
  test_bodies b = test_bodies_make(20000, TEST_CLUSTERED, seed);
  snprintf(name, sizeof name, "clustered seed %llu", (unsigned long long)seed);
  check_input(b.n, b.pos, b.mass, 8, 0.6, 0.01, 1, name);
  test_bodies_free(&b);
  b = test_bodies_make(20000, TEST_UNIFORM, seed);
  snprintf(name, sizeof name, "uniform seed %llu", (unsigned long long)seed);
  check_input(b.n, b.pos, b.mass, 1, 0.4, 0, 4, name);
  test_bodies_free(&b);
#endif
}

/* A coincident pile (cells of zero radius), a line, and small N. */
Test(traverse_gpu, degenerate) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  enum { N = 3000 };
  static double pos[3 * N], mass[N];
  for (size_t i = 0; i < N; i++) {
    const int pile = i % 4 == 0;
    for (int d = 0; d < 3; d++)
      pos[3 * i + d] = pile ? -0.3 : test_uniform(&rng) - 0.5;
    mass[i] = 0.5 + test_uniform(&rng);
  }
  char name[64];
  snprintf(name, sizeof name, "pile seed %llu", (unsigned long long)seed);
  check_input(N, pos, mass, 8, 0.6, 0.05, 1, name);
  for (size_t i = 0; i < N; i++) {
    pos[3 * i] = (double)i / N;
    pos[3 * i + 1] = pos[3 * i + 2] = 0.0;
  }
  snprintf(name, sizeof name, "line seed %llu", (unsigned long long)seed);
  check_input(N, pos, mass, 4, 0.6, 0, 1, name);
  for (size_t n = 1; n <= 40; n += 3) {
    for (size_t i = 0; i < 3 * n; i++)
      pos[i] = test_uniform(&rng) - 0.5;
    snprintf(name, sizeof name, "small seed %llu", (unsigned long long)seed);
    check_input(n, pos, mass, 1, 0.5, 0, 1, name);
  }
#endif
}

/* One state over trees of growing and shrinking size (the buffers grow
 * and are reused), and the same tree twice: the same lists, entry for
 * entry in the same order. */
Test(traverse_gpu, reuse_and_determinism) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  uint64_t seed = test_fresh_seed();
  tfmm_gpu *gpu = new_context();
  tfmm_traverse_gpu state = {0};
  const tfmm_traverse_gpu_params p = {
      .mac = TFMM_MAC_GEOMETRIC, .theta = 0.5, .order = 4, .m2p_bodies = 1};
  const size_t sizes[] = {500, 30000, 2000};
  for (int k = 0; k < 3; k++) {
    test_bodies b = test_bodies_make(sizes[k], TEST_CLUSTERED, seed + k);
    const tfmm_tree_gpu_params tp = {.leaf_size = 8,
                                     .max_depth = TFMM_MAX_DEPTH};
    test_gpu_tree g;
    char name[96];
    snprintf(name, sizeof name, "reuse %d, seed %llu", k,
             (unsigned long long)seed);
    test_gpu_tree_build(&g, b.n, b.pos, b.mass, &tp, name);
    check_tree(&state, gpu, &g, &p, name);
    const tfmm_csr_gpu lists[3] = {state.lists.m2l, state.lists.near,
                                   state.lists.m2p};
    tfmm_csr first[3];
    for (int o = 0; o < 3; o++) {
      first[o].offset = to_host(
          lists[o].offset, (size_t)(lists[o].ntargets + 1) * sizeof(int64_t));
      first[o].index = to_host(lists[o].index,
                               (size_t)first[o].offset[lists[o].ntargets] * 4);
    }
    tfmm_error err = {{0}};
    cr_assert_eq(tfmm_traverse_gpu_run(&state, gpu, &g.tree, &p, NULL, &err),
                 TFMM_OK, "%s", err.message);
    const tfmm_csr_gpu again[3] = {state.lists.m2l, state.lists.near,
                                   state.lists.m2p};
    for (int o = 0; o < 3; o++) {
      const int64_t nt = again[o].ntargets;
      int64_t *off = to_host(again[o].offset, (size_t)(nt + 1) * 8);
      int32_t *idx = to_host(again[o].index, (size_t)off[nt] * 4);
      cr_assert_eq(memcmp(off, first[o].offset, (size_t)(nt + 1) * 8), 0,
                   "%s: list %d offsets differ run to run", name, o);
      cr_assert_eq(memcmp(idx, first[o].index, (size_t)off[nt] * 4), 0,
                   "%s: list %d entries differ run to run", name, o);
      free(off);
      free(idx);
      free(first[o].offset);
      free(first[o].index);
    }
    test_gpu_tree_free(&g);
    test_bodies_free(&b);
  }
  tfmm_traverse_gpu_release(&state);
  tfmm_gpu_destroy(gpu);
#endif
}

Test(traverse_gpu, errors_are_reported) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_error err = {{0}};
  tfmm_gpu *gpu = new_context();
  tfmm_traverse_gpu state = {0};
  tfmm_tree_gpu empty;
  memset(&empty, 0, sizeof empty);
  tfmm_traverse_gpu_params p = {.mac = TFMM_MAC_GEOMETRIC, .theta = 0.5};
  cr_assert_eq(tfmm_traverse_gpu_run(&state, gpu, &empty, NULL, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "params") != NULL, "%s", err.message);
  cr_assert_eq(tfmm_traverse_gpu_run(&state, gpu, &empty, &p, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "no cells") != NULL, "%s", err.message);
  empty.ncells = empty.nleaves = 1;
  p.theta = -1;
  cr_assert_eq(tfmm_traverse_gpu_run(&state, gpu, &empty, &p, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "theta -1") != NULL, "%s", err.message);
  p.theta = 0.5;
  p.mac = TFMM_MAC_ERROR;
  cr_assert_eq(tfmm_traverse_gpu_run(&state, gpu, &empty, &p, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "epsilon") != NULL, "%s", err.message);
  tfmm_traverse_gpu_release(&state);
  tfmm_gpu_destroy(gpu);
#endif
}

/* The near field's work items the gpu schedule makes on the GPU
 * (kernels/schedule/pipeline_gpu.cu, a warp a leaf) are the CPU's rule's
 * (tfmm_p2p_gpu_items) on the same tree and lists, item for item, with
 * budgets small enough that many lists are cut into runs. */
Test(traverse_gpu, near_items_equal_the_cpu_rule) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(30000, TEST_CLUSTERED, seed);
  const int sms[] = {132, 4000, 100000};
  for (int q = 0; q < 3; q++) {
    tfmm_error err = {{0}};
    tfmm_gpu *gpu = new_context();
    tfmm_pipeline_gpu pl;
    memset(&pl, 0, sizeof pl);
    const tfmm_tree_gpu_params tp = {.leaf_size = 64,
                                     .max_depth = TFMM_MAX_DEPTH};
    cr_assert_eq(
        tfmm_pipeline_gpu_upload(&pl, gpu, b.n, b.pos, b.mass, 0, NULL, &err),
        TFMM_OK, "%s", err.message);
    cr_assert_eq(tfmm_pipeline_gpu_tree(&pl, &tp, &err), TFMM_OK, "%s",
                 err.message);
    const tfmm_traverse_gpu_params p = {
        .mac = TFMM_MAC_GEOMETRIC, .theta = 0.5, .order = 3, .m2p_bodies = 1};
    cr_assert_eq(tfmm_pipeline_gpu_upward(&pl, 3, NULL, &err), TFMM_OK, "%s",
                 err.message);
    cr_assert_eq(tfmm_pipeline_gpu_lists(&pl, &p, &err), TFMM_OK, "%s",
                 err.message);
    const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, 0,
                                   TFMM_PRECISION_SINGLE};
    /* More multiprocessors, a smaller budget, more cut lists. */
    cr_assert_eq(tfmm_pipeline_gpu_near(&pl, &pair, 1, sms[q], &err), TFMM_OK,
                 "%s", err.message);
    tfmm_gpu_near_size sz;
    tfmm_gpu_near_item *gi = NULL;
    tfmm_gpu_near_split *gs = NULL;
    cr_assert_eq(tfmm_pipeline_gpu_items(&pl, &sz, &gi, &gs, &err), TFMM_OK,
                 "%s", err.message);
    /* The CPU's rule on the same tree and lists. */
    tfmm_octree t;
    cr_assert_eq(tfmm_pipeline_gpu_copy_tree(&pl, &t, &err), TFMM_OK, "%s",
                 err.message);
    const tfmm_csr_gpu *near = &pl.lists.lists.near;
    int64_t *offset =
        to_host(near->offset, (size_t)(t.nleaves + 1) * sizeof(int64_t));
    int32_t *index = to_host(near->index, (size_t)offset[t.nleaves] * 4);
    int32_t *leaf_begin = malloc((size_t)(t.nleaves + 1) * sizeof *leaf_begin);
    int32_t *position = malloc((size_t)t.ncells * sizeof *position);
    int32_t *list_leaf = malloc((size_t)(offset[t.nleaves] + 1) * 4);
    for (int64_t k = 0; k < t.nleaves; k++) {
      leaf_begin[k] = (int32_t)t.cells[t.leaves[k]].body_begin;
      position[t.leaves[k]] = (int32_t)k;
    }
    leaf_begin[t.nleaves] = (int32_t)t.n;
    for (int64_t e = 0; e < offset[t.nleaves]; e++)
      list_leaf[e] = position[index[e]];
    const tfmm_near_view view = {t.nleaves, leaf_begin, offset, list_leaf,
                                 NULL};
    const int64_t budget =
        tfmm_p2p_gpu_budget(pl.lists.lists.near_interactions, sms[q]);
    tfmm_gpu_near_size cs = {0};
    cr_assert_eq(tfmm_p2p_gpu_items(&view, budget, &cs, NULL, NULL), 0);
    tfmm_gpu_near_item *ci = malloc((size_t)(cs.nitems + 1) * sizeof *ci);
    tfmm_gpu_near_split *cp = malloc((size_t)(cs.nsplits + 1) * sizeof *cp);
    cr_assert_eq(tfmm_p2p_gpu_items(&view, budget, &cs, ci, cp), 0);
    cr_assert(cs.nitems == sz.nitems && cs.nsplits == sz.nsplits &&
                  cs.nslots == sz.nslots,
              "seed %llu sm %d: items %lld/%lld, splits %lld/%lld, slots "
              "%lld/%lld (GPU/CPU)",
              (unsigned long long)seed, sms[q], (long long)sz.nitems,
              (long long)cs.nitems, (long long)sz.nsplits,
              (long long)cs.nsplits, (long long)sz.nslots,
              (long long)cs.nslots);
    cr_assert_gt(cs.nsplits, 0, "no list was cut (sm %d)", sms[q]);
    for (int64_t i = 0; i < cs.nitems; i++)
      cr_assert(memcmp(&gi[i], &ci[i], sizeof *gi) == 0,
                "seed %llu sm %d: item %lld differs: GPU leaf %d first %d "
                "count %d entries [%d, %d) slot %d; CPU leaf %d first %d "
                "count %d entries [%d, %d) slot %d",
                (unsigned long long)seed, sms[q], (long long)i, gi[i].leaf,
                gi[i].first, gi[i].count, gi[i].entry_begin, gi[i].entry_end,
                gi[i].slot, ci[i].leaf, ci[i].first, ci[i].count,
                ci[i].entry_begin, ci[i].entry_end, ci[i].slot);
    for (int64_t i = 0; i < cs.nsplits; i++)
      cr_assert(memcmp(&gs[i], &cp[i], sizeof *gs) == 0,
                "seed %llu sm %d: split %lld differs", (unsigned long long)seed,
                sms[q], (long long)i);
    free(gi), free(gs), free(ci), free(cp);
    free(offset), free(index), free(leaf_begin), free(position),
        free(list_leaf);
    tfmm_octree_free(&t);
    tfmm_pipeline_gpu_release(&pl);
    tfmm_gpu_destroy(gpu);
  }
  test_bodies_free(&b);
#endif
}
