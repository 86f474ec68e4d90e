/* A GPU tree of host bodies for the GPU suites (built only with CUDA): the
 * bodies uploaded, the workspace sized in two calls and poisoned, the
 * tree built by tfmm_tree_gpu_build on the legacy default stream; every
 * step asserted. */
#ifndef TFMM_TEST_GPU_TREE_H
#define TFMM_TEST_GPU_TREE_H

#include "tree_gpu.h"

#include <stddef.h>

typedef struct test_gpu_tree {
  tfmm_tree_gpu tree;
  double *d_pos, *d_mass; /* the bodies on the device, input order */
  void *ws;               /* the tree's workspace */
  size_t ws_bytes;
} test_gpu_tree;

/* Builds the tree of the n bodies with params; label names the case in
 * failure messages. Release with test_gpu_tree_free. */
void test_gpu_tree_build(test_gpu_tree *g, size_t n, const double *pos,
                         const double *mass, const tfmm_tree_gpu_params *params,
                         const char *label);

void test_gpu_tree_free(test_gpu_tree *g);

/* A device copy of count doubles (cudaFree it). */
double *test_gpu_copy(const double *x, size_t count);

#endif
