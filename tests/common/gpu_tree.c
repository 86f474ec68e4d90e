#include "gpu_tree.h"

#include <criterion/criterion.h>
#include <cuda_runtime.h>
#include <string.h>

double *test_gpu_copy(const double *x, size_t count) {
  double *d = NULL;
  cr_assert_eq(cudaMalloc((void **)&d, (count > 0 ? count : 1) * sizeof *x),
               cudaSuccess);
  if (count > 0)
    cr_assert_eq(cudaMemcpy(d, x, count * sizeof *x, cudaMemcpyHostToDevice),
                 cudaSuccess);
  cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* the copy landed */
  return d;
}

void test_gpu_tree_build(test_gpu_tree *g, size_t n, const double *pos,
                         const double *mass, const tfmm_tree_gpu_params *params,
                         const char *label) {
  memset(g, 0, sizeof *g);
  tfmm_error err = {{0}};
  g->d_pos = test_gpu_copy(pos, 3 * n);
  g->d_mass = test_gpu_copy(mass, n);
  cr_assert_eq(tfmm_tree_gpu_build(NULL, &g->ws_bytes, n, g->d_pos, g->d_mass,
                                   params, &g->tree, NULL, &err),
               TFMM_OK, "%s: %s", label, err.message);
  cr_assert_eq(cudaMalloc(&g->ws, g->ws_bytes), cudaSuccess);
  /* Poisoned: the build must write everything that is read. */
  cr_assert_eq(cudaMemset(g->ws, 0xff, g->ws_bytes), cudaSuccess);
  cr_assert_eq(tfmm_tree_gpu_build(g->ws, &g->ws_bytes, n, g->d_pos, g->d_mass,
                                   params, &g->tree, NULL, &err),
               TFMM_OK, "%s: %s", label, err.message);
}

void test_gpu_tree_free(test_gpu_tree *g) {
  cudaFree(g->ws);
  cudaFree(g->d_pos);
  cudaFree(g->d_mass);
  memset(g, 0, sizeof *g);
}
