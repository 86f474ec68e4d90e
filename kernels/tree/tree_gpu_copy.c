/* The GPU tree copied into a host tfmm_octree, for the CPU stages and for
 * the tests that compare it with tfmm_octree_build's. The one file of
 * kernels/ that includes src/tree/octree.h: it converts the device's
 * structure of arrays into tfmm_cell's layout. */
#include "tree_gpu.h"

#include "tree/octree.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

/* Copies `bytes` from the device to newly allocated host memory. */
static tfmm_status fetch(void **out, const void *dev, size_t bytes,
                         cudaStream_t s, tfmm_error *err) {
  *out = malloc(bytes > 0 ? bytes : 1);
  if (*out == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "tree_gpu: out of memory for a copy of %zu bytes",
                          bytes);
  cudaError_t e = cudaMemcpyAsync(*out, dev, bytes, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return tfmm_error_set(err, TFMM_ERR_CUDA,
                          "tree_gpu: copy to the host failed: CUDA error %d "
                          "(%s)",
                          (int)e, cudaGetErrorString(e));
  }
  return TFMM_OK;
}

enum { F_CENTER, F_RADIUS, F_MASS, F_BOX_CENTER, F_SIZE, F_DOUBLES };
enum {
  I_LEVEL,
  I_PARENT,
  I_CHILD_BEGIN,
  I_CHILD_COUNT,
  I_BODY_BEGIN,
  I_BODY_END,
  I_ORDER,
  I_INTS
};

static void fill_cells(tfmm_octree *t, double *const f[F_DOUBLES],
                       int32_t *const k[I_INTS]) {
  for (int64_t c = 0; c < t->ncells; c++) {
    tfmm_cell *cell = &t->cells[c];
    memset(cell, 0, sizeof *cell);
    for (int j = 0; j < 3; j++) {
      cell->center[j] = f[F_CENTER][3 * c + j];
      cell->box_center[j] = f[F_BOX_CENTER][3 * c + j];
    }
    cell->radius = f[F_RADIUS][c];
    cell->mass = f[F_MASS][c];
    cell->size = f[F_SIZE][c];
    cell->level = k[I_LEVEL][c];
    cell->parent = k[I_PARENT][c];
    cell->child_begin = k[I_CHILD_BEGIN][c];
    cell->child_count = k[I_CHILD_COUNT][c];
    cell->body_begin = k[I_BODY_BEGIN][c];
    cell->body_end = k[I_BODY_END][c];
  }
}

static tfmm_status copy_cells(const tfmm_tree_gpu *g, tfmm_octree *t,
                              cudaStream_t s, tfmm_error *err) {
  size_t nc = (size_t)g->ncells;
  const double *fd[F_DOUBLES] = {g->d_center, g->d_radius, g->d_cmass,
                                 g->d_box_center, g->d_size};
  const size_t fn[F_DOUBLES] = {3 * nc, nc, nc, 3 * nc, nc};
  const int32_t *kd[I_INTS] = {
      g->d_level,      g->d_parent,   g->d_child_begin, g->d_child_count,
      g->d_body_begin, g->d_body_end, g->d_order};
  double *f[F_DOUBLES] = {0};
  int32_t *k[I_INTS] = {0};
  tfmm_status st = TFMM_OK;
  for (int j = 0; j < F_DOUBLES && st == TFMM_OK; j++)
    st = fetch((void **)&f[j], fd[j], fn[j] * sizeof(double), s, err);
  for (int j = 0; j < I_INTS && st == TFMM_OK; j++)
    st = fetch((void **)&k[j], kd[j],
               (j == I_ORDER ? g->n : nc) * sizeof(int32_t), s, err);
  t->cells = malloc(nc * sizeof *t->cells);
  t->order = malloc(g->n * sizeof *t->order);
  if (st == TFMM_OK && (t->cells == NULL || t->order == NULL))
    st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                        "tree_gpu: out of memory for %zu cells", nc);
  if (st == TFMM_OK) {
    fill_cells(t, f, k);
    for (size_t i = 0; i < g->n; i++)
      t->order[i] = k[I_ORDER][i];
  }
  for (int j = 0; j < F_DOUBLES; j++)
    free(f[j]);
  for (int j = 0; j < I_INTS; j++)
    free(k[j]);
  return st;
}

tfmm_status tfmm_tree_gpu_copy(const tfmm_tree_gpu *g, tfmm_octree *t,
                               void *stream, tfmm_error *err) {
  if (t == NULL || g == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "tree_gpu: %s is NULL",
                          t == NULL ? "the octree" : "the GPU tree");
  memset(t, 0, sizeof *t);
  cudaStream_t s = (cudaStream_t)stream;
  t->n = g->n;
  memcpy(t->box_min, g->box_min, sizeof t->box_min);
  t->box_size = g->box_size;
  t->ncells = g->ncells;
  t->nleaves = g->nleaves;
  t->depth = g->depth;
  t->leaf_size = g->leaf_size;
  t->max_depth = g->max_depth;
  t->level_begin = malloc((size_t)(g->max_depth + 2) * sizeof(int64_t));
  if (t->level_begin == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "tree_gpu: out of memory for the levels");
  memcpy(t->level_begin, g->level_begin,
         (size_t)(g->depth + 2) * sizeof(int64_t));
  tfmm_status st;
  if ((st = fetch((void **)&t->pos, g->d_pos, 3 * g->n * sizeof(double), s,
                  err)) != TFMM_OK ||
      (st = fetch((void **)&t->mass, g->d_mass, g->n * sizeof(double), s,
                  err)) != TFMM_OK ||
      (st = fetch((void **)&t->keys, g->d_keys, g->n * sizeof(uint64_t), s,
                  err)) != TFMM_OK ||
      (st = fetch((void **)&t->leaves, g->d_leaves,
                  (size_t)g->nleaves * sizeof(int32_t), s, err)) != TFMM_OK)
    return st;
  return copy_cells(g, t, s, err);
}
