/* The far field on the GPU (kernels/far/farfield_gpu.h) against the CPU's
 * passes (src/farfield/passes.h) on the same tree, lists and multipoles:
 * the local expansions after M2L and after L2L, and the potentials and
 * gradients after L2P and M2P, each within TFMM_FARFIELD_GPU_TOL of the
 * CPU's relative to the cell's largest coefficient or the body's own
 * value. Plummer, clustered and degenerate inputs, orders 0 to 20, with
 * M2P lists for targets of up to 1 and 16 bodies. The CPU's passes are
 * themselves checked against direct sums in test_farfield and
 * test_accuracy. Skips without a GPU. */
#include "farfield/expansion.h"
#include "farfield/passes.h"
#include "testutil.h"
#include "tree/lists.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include "farfield_gpu.h"
#include "gpu_tree.h"
#include "upward_gpu.h"

#include <cuda_runtime.h>

static long long unequal, compared;

static void *to_device(const void *x, size_t bytes) {
  void *d = NULL;
  cr_assert_eq(cudaMalloc(&d, bytes > 0 ? bytes : 1), cudaSuccess);
  if (bytes > 0)
    cr_assert_eq(cudaMemcpy(d, x, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* the copy landed */
  return d;
}

static double *to_host(const double *d, size_t count) {
  double *h = malloc(count * sizeof *h);
  cr_assert_not_null(h);
  cr_assert_eq(cudaMemcpy(h, d, count * sizeof *h, cudaMemcpyDeviceToHost),
               cudaSuccess);
  return h;
}

/* The float M2L (lengths scaled per translation, farfield_gpu.h), judged
 * where it acts: at the bodies. Its L goes through the CPU's downward pass
 * (L2L, L2P in double) beside the double M2L's, and each body's potential
 * and gradient differences are measured against the sums of magnitudes
 * of what acts on it, sum_j m_j / r_ij and sum_j m_j / r_ij^2 over all
 * other bodies (direct, in double): float's rounding (6e-8) times the
 * ratio of the translations' terms to those sums. A coefficient that no
 * body can feel (order 4 of a cell whose bodies all sit at its centre)
 * may then differ. Measured on the H100 over these inputs (Plummer,
 * clustered, uniform, pile, line, small N, tight clusters, six decades)
 * at orders 0-8: at most 1.3e-6. Bound: 1e-5; the worst seen at every
 * order is logged (--verbose). */
#define TFMM_FARFIELD_GPU_FLOAT_TOL 1e-5
static double float_worst[TFMM_ORDER_MAX + 1];

/* sum_j m_j / r_ij and sum_j m_j / r_ij^2 over the bodies j not at x_i. */
static void magnitude_sums(const tfmm_octree *t, double *pot, double *grad) {
  const size_t n = t->n;
  for (size_t i = 0; i < n; i++) {
    double sp = 0, sg = 0;
    for (size_t j = 0; j < n; j++) {
      const double dx = t->pos[3 * j] - t->pos[3 * i],
                   dy = t->pos[3 * j + 1] - t->pos[3 * i + 1],
                   dz = t->pos[3 * j + 2] - t->pos[3 * i + 2];
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 > 0) {
        sp += t->mass[j] / sqrt(r2);
        sg += t->mass[j] / r2;
      }
    }
    pot[i] = sp;
    grad[i] = sg;
  }
}

static void compare_float_m2l(const tfmm_octree *t, const double *sum, int p,
                              const double *gpu, const double *cpu,
                              const char *what, const char *label) {
  const size_t n = t->n, count = (size_t)t->ncells * tfmm_expansion_size(p);
  double *Lf = malloc(count * sizeof *Lf), *Ld = malloc(count * sizeof *Ld);
  double *pf = malloc(4 * n * sizeof *pf), *pd = malloc(4 * n * sizeof *pd);
  cr_assert(Lf && Ld && pf && pd);
  memcpy(Lf, gpu, count * sizeof *Lf);
  memcpy(Ld, cpu, count * sizeof *Ld);
  tfmm_downward_pass(t, p, Lf, pf, pf + n);
  tfmm_downward_pass(t, p, Ld, pd, pd + n);
  for (size_t i = 0; i < n; i++) {
    const double *gf = pf + n + 3 * i, *gd = pd + n + 3 * i;
    const double ep = fabs(pf[i] - pd[i]),
                 eg = sqrt((gf[0] - gd[0]) * (gf[0] - gd[0]) +
                           (gf[1] - gd[1]) * (gf[1] - gd[1]) +
                           (gf[2] - gd[2]) * (gf[2] - gd[2]));
    compared += 4;
    if (sum[i] > 0)
      float_worst[p] = fmax(float_worst[p], fmax(ep / sum[i], eg / sum[n + i]));
    cr_assert(ep <= TFMM_FARFIELD_GPU_FLOAT_TOL * sum[i] &&
                  eg <= TFMM_FARFIELD_GPU_FLOAT_TOL * sum[n + i],
              "%s: %s: body %zu: potential %.17g against %.17g (sum %.6g), "
              "gradient off by %.6g (sum %.6g)",
              label, what, i, pf[i], pd[i], sum[i], eg, sum[n + i]);
  }
  free(Lf);
  free(Ld);
  free(pf);
  free(pd);
}

/* Every cell's coefficients within TOL of the CPU's largest one there. */
static void compare_expansions_to(const tfmm_octree *t, size_t size,
                                  const double *gpu, const double *cpu,
                                  double tol, const char *what,
                                  const char *label) {
  for (int64_t c = 0; c < t->ncells; c++) {
    double scale = 0;
    for (size_t k = 0; k < size; k++)
      scale = fmax(scale, fabs(cpu[(size_t)c * size + k]));
    for (size_t k = 0; k < size; k++) {
      const double g = gpu[(size_t)c * size + k], h = cpu[(size_t)c * size + k];
      unequal += g != h;
      compared++;
      cr_assert(fabs(g - h) <= tol * scale,
                "%s: %s of cell %lld, entry %zu: GPU %.17g CPU %.17g", label,
                what, (long long)c, k, g, h);
    }
  }
}

static void compare_expansions(const tfmm_octree *t, size_t size,
                               const double *gpu, const double *cpu,
                               const char *what, const char *label) {
  compare_expansions_to(t, size, gpu, cpu, TFMM_FARFIELD_GPU_TOL, what, label);
}

/* Every body's potential and gradient within TOL of the CPU's. */
static void compare_bodies_to(size_t n, const double *gphi, const double *cphi,
                              const double *ggrad, const double *cgrad,
                              double tol, const char *what, const char *label) {
  for (size_t i = 0; i < n; i++) {
    const double norm =
        sqrt(cgrad[3 * i] * cgrad[3 * i] + cgrad[3 * i + 1] * cgrad[3 * i + 1] +
             cgrad[3 * i + 2] * cgrad[3 * i + 2]);
    unequal += gphi[i] != cphi[i];
    compared += 4;
    cr_assert(fabs(gphi[i] - cphi[i]) <= tol * fabs(cphi[i]),
              "%s: %s: body %zu potential GPU %.17g CPU %.17g", label, what, i,
              gphi[i], cphi[i]);
    for (int d = 0; d < 3; d++) {
      unequal += ggrad[3 * i + d] != cgrad[3 * i + d];
      cr_assert(fabs(ggrad[3 * i + d] - cgrad[3 * i + d]) <= tol * norm,
                "%s: %s: body %zu gradient %d GPU %.17g CPU %.17g", label, what,
                i, d, ggrad[3 * i + d], cgrad[3 * i + d]);
    }
  }
}

static tfmm_csr_gpu csr_to_device(const tfmm_csr *c) {
  tfmm_csr_gpu g = {c->ntargets, NULL, NULL};
  g.offset = to_device(c->offset, (size_t)(c->ntargets + 1) * sizeof(int64_t));
  g.index = to_device(c->index, (size_t)c->offset[c->ntargets] * 4);
  return g;
}

static void csr_free(tfmm_csr_gpu *g) {
  cudaFree((void *)g->offset);
  cudaFree((void *)g->index);
}

static void compare_bodies(size_t n, const double *gphi, const double *cphi,
                           const double *ggrad, const double *cgrad,
                           const char *what, const char *label) {
  compare_bodies_to(n, gphi, cphi, ggrad, cgrad, TFMM_FARFIELD_GPU_TOL, what,
                    label);
}

/* One input at one order: both pipelines, compared stage by stage. */
/* sums: magnitude_sums of the tree's bodies (2n). */
static void check_order(const tfmm_octree *t, const tfmm_lists *lists,
                        const tfmm_tree_gpu *tree, const double *sums, int p,
                        const char *label) {
  tfmm_error err = {{0}};
  const size_t size = tfmm_expansion_size(p), n = t->n;
  const size_t ecount = (size_t)t->ncells * size;
  double *M = malloc(ecount * sizeof *M), *L = malloc(ecount * sizeof *L);
  double *phi = malloc(n * sizeof *phi), *grad = malloc(3 * n * sizeof *grad);
  cr_assert(M && L && phi && grad);
  tfmm_upward_pass(t, p, M);
  tfmm_m2l_pass(t, &lists->m2l, p, M, L);
  double *d_M, *d_L, *d_phi, *d_grad;
  cr_assert_eq(cudaMalloc((void **)&d_M, ecount * sizeof *d_M), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_L, ecount * sizeof *d_L), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_phi, n * sizeof *d_phi), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_grad, 3 * n * 8), cudaSuccess);
  /* Poisoned: every output must be written. */
  cr_assert_eq(cudaMemset(d_L, 0xff, ecount * sizeof *d_L), cudaSuccess);
  cr_assert_eq(cudaMemset(d_phi, 0xff, n * sizeof *d_phi), cudaSuccess);
  cr_assert_eq(cudaMemset(d_grad, 0xff, 3 * n * 8), cudaSuccess);
  tfmm_csr_gpu m2l = csr_to_device(&lists->m2l),
               m2p = csr_to_device(&lists->m2p);
  cr_assert_eq(tfmm_upward_gpu(tree, p, d_M, NULL, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(tfmm_farfield_gpu_m2l(tree, &m2l, p, d_M, d_L, NULL, &err),
               TFMM_OK, "%s", err.message);
  double *g = to_host(d_L, ecount);
  compare_expansions(t, size, g, L, "M2L", label);
  free(g);
  /* The gpu schedule's M2L (regrouped, fused): to rounding, at its own
   * choice of lanes a target (0) and at every group size. */
  double *d_L2;
  cr_assert_eq(cudaMalloc((void **)&d_L2, ecount * sizeof *d_L2), cudaSuccess);
  for (int lanes = 0; lanes <= 32; lanes = lanes ? 2 * lanes : 1) {
    cr_assert_eq(cudaMemset(d_L2, 0xff, ecount * sizeof *d_L2), cudaSuccess);
    cr_assert_eq(tfmm_farfield_gpu_m2l_lanes(tree, &m2l, p, lanes, d_M, d_L2,
                                             NULL, &err),
                 TFMM_OK, "%s", err.message);
    g = to_host(d_L2, ecount);
    char what[48];
    snprintf(what, sizeof what, "fast M2L, %d lanes a cell", lanes);
    compare_expansions_to(t, size, g, L, TFMM_FARFIELD_GPU_FAST_TOL, what,
                          label);
    free(g);
  }
  cr_assert_eq(
      tfmm_farfield_gpu_m2l_lanes(tree, &m2l, p, 3, d_M, d_L2, NULL, &err),
      TFMM_ERR_INVALID_ARGUMENT, "3 lanes a cell was accepted");
  /* The float M2L (lengths scaled per translation): at the bodies within
   * TFMM_FARFIELD_GPU_FLOAT_TOL of the double M2L's, at its own lane
   * count and at one lane a cell. */
  float *d_Ms;
  cr_assert_eq(cudaMalloc((void **)&d_Ms,
                          tfmm_farfield_gpu_m2l_float_bytes(t->ncells, p)),
               cudaSuccess);
  for (int lanes = 0; lanes <= 1; lanes++) {
    cr_assert_eq(cudaMemset(d_L2, 0xff, ecount * sizeof *d_L2), cudaSuccess);
    cr_assert_eq(tfmm_farfield_gpu_m2l_float(tree, &m2l, p, lanes, d_M, d_Ms,
                                             d_L2, NULL, &err),
                 TFMM_OK, "%s", err.message);
    g = to_host(d_L2, ecount);
    compare_float_m2l(t, sums, p, g, L,
                      lanes ? "float M2L, 1 lane a cell" : "float M2L", label);
    free(g);
  }
  cudaFree(d_Ms);
  cudaFree(d_L2);
  /* The gpu schedule's L2L (a thread a cell, fused) on a copy of the
   * M2L's expansions. */
  double *d_L3;
  cr_assert_eq(cudaMalloc((void **)&d_L3, ecount * sizeof *d_L3), cudaSuccess);
  cr_assert_eq(
      cudaMemcpy(d_L3, d_L, ecount * sizeof *d_L3, cudaMemcpyDeviceToDevice),
      cudaSuccess);
  cr_assert_eq(tfmm_farfield_gpu_l2l_fast(tree, p, d_L3, NULL, &err), TFMM_OK,
               "%s", err.message);
  tfmm_downward_pass(t, p, L, phi, grad);
  cr_assert_eq(
      tfmm_farfield_gpu_downward(tree, p, d_L, d_phi, d_grad, NULL, &err),
      TFMM_OK, "%s", err.message);
  g = to_host(d_L, ecount);
  compare_expansions(t, size, g, L, "L2L", label);
  free(g);
  g = to_host(d_L3, ecount);
  compare_expansions_to(t, size, g, L, TFMM_FARFIELD_GPU_FAST_TOL, "fast L2L",
                        label);
  free(g);
  cudaFree(d_L3);
  double *gp = to_host(d_phi, n), *gg = to_host(d_grad, 3 * n);
  compare_bodies(n, gp, phi, gg, grad, "L2P", label);
  free(gp);
  free(gg);
  /* The gpu schedule's L2P (a warp a leaf, fused) from the same L. */
  double *d_phi3, *d_grad3;
  cr_assert_eq(cudaMalloc((void **)&d_phi3, n * 8), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_grad3, 3 * n * 8), cudaSuccess);
  cr_assert_eq(cudaMemset(d_phi3, 0xff, n * 8), cudaSuccess);
  cr_assert_eq(cudaMemset(d_grad3, 0xff, 3 * n * 8), cudaSuccess);
  cr_assert_eq(
      tfmm_farfield_gpu_l2p_fast(tree, p, d_L, d_phi3, d_grad3, NULL, &err),
      TFMM_OK, "%s", err.message);
  gp = to_host(d_phi3, n);
  gg = to_host(d_grad3, 3 * n);
  compare_bodies_to(n, gp, phi, gg, grad, TFMM_FARFIELD_GPU_FAST_TOL,
                    "fast L2P", label);
  free(gp);
  free(gg);
  cudaFree(d_phi3);
  cudaFree(d_grad3);
  /* The gpu schedule's M2P (a warp a leaf, regrouped, fused) adds to a
   * copy of the L2P results. */
  double *d_phi2, *d_grad2;
  cr_assert_eq(cudaMalloc((void **)&d_phi2, n * 8), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&d_grad2, 3 * n * 8), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d_phi2, d_phi, n * 8, cudaMemcpyDeviceToDevice),
               cudaSuccess);
  cr_assert_eq(cudaMemcpy(d_grad2, d_grad, 3 * n * 8, cudaMemcpyDeviceToDevice),
               cudaSuccess);
  tfmm_m2p_pass(t, &lists->m2p, p, M, phi, grad);
  cr_assert_eq(
      tfmm_farfield_gpu_m2p(tree, &m2p, p, d_M, d_phi, d_grad, NULL, &err),
      TFMM_OK, "%s", err.message);
  gp = to_host(d_phi, n);
  gg = to_host(d_grad, 3 * n);
  compare_bodies(n, gp, phi, gg, grad, "M2P", label);
  free(gp);
  free(gg);
  cr_assert_eq(tfmm_farfield_gpu_m2p_fast(tree, &m2p, p, d_M, d_phi2, d_grad2,
                                          NULL, &err),
               TFMM_OK, "%s", err.message);
  gp = to_host(d_phi2, n);
  gg = to_host(d_grad2, 3 * n);
  compare_bodies_to(n, gp, phi, gg, grad, TFMM_FARFIELD_GPU_FAST_TOL,
                    "fast M2P", label);
  free(gp);
  free(gg);
  cudaFree(d_phi2);
  cudaFree(d_grad2);
  csr_free(&m2l);
  csr_free(&m2p);
  cudaFree(d_M);
  cudaFree(d_L);
  cudaFree(d_phi);
  cudaFree(d_grad);
  free(M);
  free(L);
  free(phi);
  free(grad);
}

static void check_case(size_t n, const double *pos, const double *mass,
                       int leaf_size, double theta, int64_t m2p_bodies,
                       const int *orders, int norders, const char *name) {
  tfmm_error err = {{0}};
  tfmm_octree t;
  cr_assert_eq(
      tfmm_octree_build(&t, n, pos, mass, leaf_size, TFMM_MAX_DEPTH, &err),
      TFMM_OK, "%s", err.message);
  const tfmm_tree_gpu_params params = {.leaf_size = leaf_size,
                                       .max_depth = TFMM_MAX_DEPTH};
  test_gpu_tree g;
  test_gpu_tree_build(&g, n, pos, mass, &params, name);
  const tfmm_tree_gpu tree = g.tree;
  cr_assert_eq(tree.ncells, t.ncells, "%s: the trees differ", name);
  double *sums = malloc(2 * n * sizeof *sums);
  cr_assert_not_null(sums);
  magnitude_sums(&t, sums, sums + n);
  for (int k = 0; k < norders; k++) {
    const int p = orders[k];
    const tfmm_mac mac = {theta, 0, NULL, NULL, 0, p, 0};
    tfmm_lists lists;
    cr_assert_eq(tfmm_lists_build_fmm(&t, &mac, m2p_bodies, &lists, &err),
                 TFMM_OK, "%s", err.message);
    char label[256];
    snprintf(label, sizeof label, "%s, n %zu, leaf %d, theta %g, order %d",
             name, n, leaf_size, theta, p);
    check_order(&t, &lists, &tree, sums, p, label);
    tfmm_lists_free(&lists);
  }
  free(sums);
  tfmm_octree_free(&t);
  test_gpu_tree_free(&g);
}

static void report(void) {
  cr_log_info("values compared %lld, not bit-equal %lld", compared, unequal);
  for (int p = 0; p <= TFMM_ORDER_MAX; p++)
    if (float_worst[p] > 0)
      cr_log_info("float M2L, order %d: worst %.3g of a body's sum of "
                  "magnitudes",
                  p, float_worst[p]);
}
#endif

Test(farfield_gpu, plummer_orders) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const size_t n = 30000;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass);
  uint64_t seed = test_fresh_seed();
  cr_assert_eq(tfmm_ic_plummer(n, seed, pos, vel, mass), TFMM_OK);
  char name[64];
  snprintf(name, sizeof name, "plummer seed %llu", (unsigned long long)seed);
  const int orders[] = {0, 1, 4, 5, 8, 12, 20};
  check_case(n, pos, mass, 64, 0.5, 1, orders, 7, name);
  free(pos);
  free(vel);
  free(mass);
  report();
#endif
}

Test(farfield_gpu, clustered_and_uniform_m2p_targets) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  const int orders[] = {3, 6};
  uint64_t seed = test_fresh_seed();
  char name[64];
  test_bodies b = test_bodies_make(20000, TEST_CLUSTERED, seed);
  snprintf(name, sizeof name, "clustered seed %llu", (unsigned long long)seed);
  check_case(b.n, b.pos, b.mass, 16, 0.7, 16, orders, 2, name);
  test_bodies_free(&b);
  b = test_bodies_make(20000, TEST_UNIFORM, seed);
  snprintf(name, sizeof name, "uniform seed %llu", (unsigned long long)seed);
  check_case(b.n, b.pos, b.mass, 1, 0.4, 1, orders, 2, name);
  test_bodies_free(&b);
  report();
#endif
}

/* A coincident pile (cells of zero radius), a line, and small N. */
Test(farfield_gpu, degenerate) {
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
  const int orders[] = {2, 7};
  char name[64];
  snprintf(name, sizeof name, "pile seed %llu", (unsigned long long)seed);
  check_case(N, pos, mass, 8, 0.6, 1, orders, 2, name);
  for (size_t i = 0; i < N; i++) {
    pos[3 * i] = (double)i / N;
    pos[3 * i + 1] = pos[3 * i + 2] = 0.0;
  }
  snprintf(name, sizeof name, "line seed %llu", (unsigned long long)seed);
  check_case(N, pos, mass, 4, 0.6, 1, orders, 2, name);
  for (size_t n = 2; n <= 40; n += 3) {
    for (size_t i = 0; i < 3 * n; i++)
      pos[i] = test_uniform(&rng) - 0.5;
    snprintf(name, sizeof name, "small seed %llu", (unsigned long long)seed);
    check_case(n, pos, mass, 1, 0.5, 1, orders, 2, name);
  }
  report();
#endif
}

/* Inputs that put the float M2L's factors far from 1 (farfield_gpu.h):
 * two tight clusters 2e-6 apart across the root's middle inside a unit
 * box of sparse bodies (cells of radius ~1e-9 beside cells ~1e6 times
 * larger), and bodies spread in radius over six decades (pairs of cells
 * up to ~20 levels apart, lone bodies beside crowded cells). */
Test(farfield_gpu, float_m2l_extreme_scales) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  enum { N = 4000 };
  static double pos[3 * N], mass[N];
  for (size_t i = 0; i < N; i++) {
    const int cluster = i % 3; /* 0: sparse, 1 and 2: the two clusters */
    for (int d = 0; d < 3; d++) {
      const double u = test_uniform(&rng);
      pos[3 * i + d] = cluster == 0 ? u : 0.5 + 1e-9 * (u - 0.5);
    }
    if (cluster)
      pos[3 * i] += cluster == 1 ? -1e-6 : 1e-6;
    mass[i] = 0.5 + test_uniform(&rng);
  }
  const int orders[] = {4, 8};
  char name[64];
  snprintf(name, sizeof name, "tight pair seed %llu", (unsigned long long)seed);
  check_case(N, pos, mass, 8, 0.6, 1, orders, 2, name);
  for (size_t i = 0; i < N; i++) {
    const double r = pow(10.0, -6.0 * test_uniform(&rng));
    const double z = 2 * test_uniform(&rng) - 1,
                 phi = 6.283185307179586 * test_uniform(&rng);
    const double s = sqrt(1 - z * z);
    pos[3 * i] = r * s * cos(phi);
    pos[3 * i + 1] = r * s * sin(phi);
    pos[3 * i + 2] = r * z;
  }
  snprintf(name, sizeof name, "six decades seed %llu",
           (unsigned long long)seed);
  const int orders2[] = {5, 8};
  check_case(N, pos, mass, 4, 0.5, 1, orders2, 2, name);
  report();
#endif
}

Test(farfield_gpu, errors_are_reported) {
  test_require_gpu();
#if TFMM_HAVE_CUDA
  tfmm_error err = {{0}};
  tfmm_tree_gpu empty;
  memset(&empty, 0, sizeof empty);
  double *d = NULL;
  cr_assert_eq(cudaMalloc((void **)&d, 64), cudaSuccess);
  tfmm_csr_gpu list = {0, NULL, NULL};
  cr_assert_eq(tfmm_farfield_gpu_m2l(&empty, &list, -1, d, d, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "order -1") != NULL, "%s", err.message);
  cr_assert_eq(tfmm_farfield_gpu_m2l(&empty, &list, 4, d, d, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(err.message, "not built") != NULL, "%s", err.message);
  cr_assert_eq(tfmm_farfield_gpu_downward(NULL, 4, d, d, d, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_farfield_gpu_m2p(&empty, NULL, 4, d, d, d, NULL, &err),
               TFMM_ERR_INVALID_ARGUMENT);
  cudaFree(d);
#endif
}
