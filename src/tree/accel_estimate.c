#include "tree/accel_estimate.h"

#include "team.h"

#include "tree/mac_rule.h"

#include <math.h>
#include <stdlib.h>

/* |field| at the centre of mass of `leaf` from every other body, by a
 * monopole walk (the opening angle TFMM_ESTIMATE_THETA: monopoles at 0.5
 * are within a few per cent, enough for an error budget), and from the
 * nsrc point masses src; stack holds at least 8 * (depth + 1) cells. */
static double leaf_field(const tfmm_octree *t, int32_t leaf, double eps2,
                         const double *src, size_t nsrc, int32_t *stack) {
  const double *x = t->cells[leaf].center;
  double g[3] = {0, 0, 0};
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    int32_t b = stack[--top];
    const tfmm_cell *B = &t->cells[b];
    if (b == leaf)
      continue;
    double dx = B->center[0] - x[0], dy = B->center[1] - x[1],
           dz = B->center[2] - x[2];
    double d2 = dx * dx + dy * dy + dz * dz;
    if (!tfmm_estimate_whole(B->child_count == 0, B->radius, d2)) {
      for (int32_t j = 0; j < B->child_count; j++)
        stack[top++] = B->child_begin + j;
      continue;
    }
    tfmm_estimate_add(g, B->mass, dx, dy, dz, d2, eps2);
  }
  for (size_t k = 0; k < nsrc; k++) {
    const double *b = src + 4 * k;
    double dx = b[0] - x[0], dy = b[1] - x[1], dz = b[2] - x[2];
    tfmm_estimate_add(g, b[3], dx, dy, dz, dx * dx + dy * dy + dz * dz, eps2);
  }
  return sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
}

/* Every parent the least over its children, levels from the deepest up. */
static void least_of_children(const tfmm_octree *t, double *a) {
  for (int l = t->depth; l >= 0; l--)
    for (int64_t c = t->level_begin[l]; c < t->level_begin[l + 1]; c++) {
      const tfmm_cell *C = &t->cells[c];
      if (C->child_count == 0)
        continue;
      double m = INFINITY;
      for (int32_t j = 0; j < C->child_count; j++)
        m = fmin(m, a[C->child_begin + j]);
      a[c] = m;
    }
}

double *tfmm_accel_estimate(const tfmm_octree *t, double eps) {
  return tfmm_accel_estimate_with(t, eps, NULL, 0);
}

double *tfmm_accel_estimate_with(const tfmm_octree *t, double eps,
                                 const double *src, size_t nsrc) {
  double *a = malloc((size_t)(t->ncells > 0 ? t->ncells : 1) * sizeof *a);
  if (a == NULL)
    return NULL;
  const size_t stack_cells = 8 * ((size_t)t->depth + 2);
  int bad = 0;
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel reduction(| : bad) num_threads(team)
  {
    int32_t *stack = malloc(stack_cells * sizeof *stack);
    bad |= stack == NULL;
#pragma omp for schedule(dynamic, 16)
    for (int64_t k = 0; k < t->nleaves; k++)
      if (stack != NULL)
        a[t->leaves[k]] =
            leaf_field(t, t->leaves[k], eps * eps, src, nsrc, stack);
    free(stack);
  }
  if (bad) {
    free(a);
    return NULL;
  }
  least_of_children(t, a);
  return a;
}

double *tfmm_accel_prior(const tfmm_octree *t, const double *acc,
                         double scale) {
  double *a = malloc((size_t)(t->ncells > 0 ? t->ncells : 1) * sizeof *a);
  if (a == NULL)
    return NULL;
  const int team = tfmm_team(t->n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *C = &t->cells[t->leaves[k]];
    double m = INFINITY;
    for (int64_t i = C->body_begin; i < C->body_end; i++)
      m = fmin(m, tfmm_mac_prior_accel(acc + 3 * t->order[i], scale));
    a[t->leaves[k]] = m;
  }
  least_of_children(t, a);
  return a;
}
