/* The softened FMM's passes (soft_passes.h): passes.c's schedule, the
 * operators of soft_taylor.h. */
#include "farfield/soft_passes.h"

#include "team.h"

#include "farfield/soft_taylor.h"

#include <string.h>

static size_t bodies(const tfmm_cell *c) {
  return (size_t)(c->body_end - c->body_begin);
}

void tfmm_soft_upward_pass(const tfmm_octree *t, int p, double *M) {
  const size_t size = tfmm_soft_taylor_size(p);
  /* From the deepest level up: a level's children are complete before
   * their parents gather them. */
  for (int level = t->depth; level >= 0; level--) {
    const int64_t begin = t->level_begin[level],
                  end = t->level_begin[level + 1];
    const int team = tfmm_team(end - begin, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
    for (int64_t c = begin; c < end; c++) {
      const tfmm_cell *cell = &t->cells[c];
      double *Mc = M + (size_t)c * size;
      memset(Mc, 0, size * sizeof *Mc);
      if (cell->child_count == 0) {
        tfmm_soft_taylor_p2m(p, cell->center, bodies(cell),
                             t->pos + 3 * cell->body_begin,
                             t->mass + cell->body_begin, Mc);
        continue;
      }
      for (int32_t k = 0; k < cell->child_count; k++) {
        const int32_t child = cell->child_begin + k;
        tfmm_soft_taylor_m2m(p, M + (size_t)child * size,
                             t->cells[child].center, cell->center, Mc);
      }
    }
  }
}

void tfmm_soft_m2l_pass(const tfmm_octree *t, const tfmm_csr *m2l, int p,
                        double eps, const double *M, double *L) {
  const size_t size = tfmm_soft_taylor_size(p);
  const int team = tfmm_team(t->ncells, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
  for (int64_t c = 0; c < t->ncells; c++) {
    double *Lc = L + (size_t)c * size;
    memset(Lc, 0, size * sizeof *Lc);
    for (int64_t e = m2l->offset[c]; e < m2l->offset[c + 1]; e++) {
      const int32_t src = m2l->index[e];
      tfmm_soft_taylor_m2l(p, eps, M + (size_t)src * size, t->cells[src].center,
                           t->cells[c].center, Lc);
    }
  }
}

void tfmm_soft_downward_pass(const tfmm_octree *t, int p, double *L,
                             double *phi, double *grad) {
  const size_t size = tfmm_soft_taylor_size(p);
  /* From level 1 down: a parent's local expansion is complete before its
   * children take it. */
  for (int level = 1; level <= t->depth; level++) {
    const int64_t begin = t->level_begin[level],
                  end = t->level_begin[level + 1];
    const int team = tfmm_team(end - begin, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(static) num_threads(team)
    for (int64_t c = begin; c < end; c++) {
      const tfmm_cell *cell = &t->cells[c];
      tfmm_soft_taylor_l2l(p, L + (size_t)cell->parent * size,
                           t->cells[cell->parent].center, cell->center,
                           L + (size_t)c * size);
    }
  }
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *cell = &t->cells[t->leaves[k]];
    const int64_t b = cell->body_begin;
    memset(phi + b, 0, bodies(cell) * sizeof *phi);
    memset(grad + 3 * b, 0, 3 * bodies(cell) * sizeof *grad);
    tfmm_soft_taylor_l2p(p, L + (size_t)t->leaves[k] * size, cell->center,
                         bodies(cell), t->pos + 3 * b, phi + b, grad + 3 * b);
  }
}

void tfmm_soft_m2p_pass(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                        double eps, const double *M, double *phi,
                        double *grad) {
  const size_t size = tfmm_soft_taylor_size(p);
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 8) num_threads(team)
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *leaf = &t->cells[t->leaves[k]];
    const int64_t b = leaf->body_begin;
    for (int32_t c = t->leaves[k]; c >= 0; c = t->cells[c].parent)
      for (int64_t e = m2p->offset[c]; e < m2p->offset[c + 1]; e++) {
        const int32_t src = m2p->index[e];
        tfmm_soft_taylor_m2p(p, eps, M + (size_t)src * size,
                             t->cells[src].center, bodies(leaf), t->pos + 3 * b,
                             phi + b, grad + 3 * b);
      }
  }
}
