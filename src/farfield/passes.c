#include "farfield/passes.h"

#include "team.h"

#include "farfield/expansion.h"

#include <string.h>

/* Newton's M2L and M2P take no softening. */
static void newton_m2l(int p, double eps, const double *M,
                       const double c_src[3], const double c_tgt[3],
                       double *L) {
  (void)eps;
  tfmm_m2l(p, M, c_src, c_tgt, L);
}

static void newton_m2p(int p, double eps, const double *M, const double c[3],
                       size_t n, const double *pos, double *phi, double *grad) {
  (void)eps;
  tfmm_m2p(p, M, c, n, pos, phi, grad);
}

const tfmm_far_ops TFMM_FAR_OPS_NEWTON = {
    "newton", TFMM_ORDER_MAX, tfmm_expansion_size,
    tfmm_p2m, tfmm_m2m,       newton_m2l,
    tfmm_l2l, tfmm_l2p,       newton_m2p};

static size_t bodies(const tfmm_cell *c) {
  return (size_t)(c->body_end - c->body_begin);
}

/* Whether cell c holds a target (targets NULL: every body is one). */
static int has_targets(const int32_t *targets, int64_t c) {
  return targets == NULL || targets[c] > 0;
}

void tfmm_far_upward(const tfmm_far_ops *k, const tfmm_octree *t, int p,
                     double *M) {
  const size_t size = k->size(p);
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
        k->p2m(p, cell->center, bodies(cell), t->pos + 3 * cell->body_begin,
               t->mass + cell->body_begin, Mc);
        continue;
      }
      for (int32_t j = 0; j < cell->child_count; j++) {
        const int32_t child = cell->child_begin + j;
        k->m2m(p, M + (size_t)child * size, t->cells[child].center,
               cell->center, Mc);
      }
    }
  }
}

void tfmm_far_m2l(const tfmm_far_ops *k, const tfmm_octree *t,
                  const tfmm_csr *m2l, int p, double eps, const double *M,
                  double *L) {
  const size_t size = k->size(p);
  const int team = tfmm_team(t->ncells, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
  for (int64_t c = 0; c < t->ncells; c++) {
    double *Lc = L + (size_t)c * size;
    memset(Lc, 0, size * sizeof *Lc);
    for (int64_t e = m2l->offset[c]; e < m2l->offset[c + 1]; e++) {
      const int32_t src = m2l->index[e];
      k->m2l(p, eps, M + (size_t)src * size, t->cells[src].center,
             t->cells[c].center, Lc);
    }
  }
}

void tfmm_far_downward_at(const tfmm_far_ops *k, const tfmm_octree *t, int p,
                          const int32_t *targets, double *L, double *phi,
                          double *grad) {
  const size_t size = k->size(p);
  /* From level 1 down: a parent's local expansion is complete (its own M2L
   * plus everything above it) before its children take it. */
  for (int level = 1; level <= t->depth; level++) {
    const int64_t begin = t->level_begin[level],
                  end = t->level_begin[level + 1];
    const int team = tfmm_team(end - begin, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(static) num_threads(team)
    for (int64_t c = begin; c < end; c++) {
      const tfmm_cell *cell = &t->cells[c];
      if (!has_targets(targets, c))
        continue;
      k->l2l(p, L + (size_t)cell->parent * size, t->cells[cell->parent].center,
             cell->center, L + (size_t)c * size);
    }
  }
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
  for (int64_t j = 0; j < t->nleaves; j++) {
    const tfmm_cell *cell = &t->cells[t->leaves[j]];
    const int64_t b = cell->body_begin;
    if (!has_targets(targets, t->leaves[j]))
      continue;
    memset(phi + b, 0, bodies(cell) * sizeof *phi);
    memset(grad + 3 * b, 0, 3 * bodies(cell) * sizeof *grad);
    k->l2p(p, L + (size_t)t->leaves[j] * size, cell->center, bodies(cell),
           t->pos + 3 * b, phi + b, grad + 3 * b);
  }
}

void tfmm_far_m2p_at(const tfmm_far_ops *k, const tfmm_octree *t,
                     const tfmm_csr *m2p, int p, double eps,
                     const int32_t *targets, const double *M, double *phi,
                     double *grad) {
  const size_t size = k->size(p);
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 8) num_threads(team)
  for (int64_t j = 0; j < t->nleaves; j++) {
    const tfmm_cell *leaf = &t->cells[t->leaves[j]];
    const int64_t b = leaf->body_begin;
    if (!has_targets(targets, t->leaves[j]))
      continue;
    for (int32_t c = t->leaves[j]; c >= 0; c = t->cells[c].parent)
      for (int64_t e = m2p->offset[c]; e < m2p->offset[c + 1]; e++) {
        const int32_t src = m2p->index[e];
        k->m2p(p, eps, M + (size_t)src * size, t->cells[src].center,
               bodies(leaf), t->pos + 3 * b, phi + b, grad + 3 * b);
      }
  }
}

void tfmm_upward_pass(const tfmm_octree *t, int p, double *M) {
  tfmm_far_upward(&TFMM_FAR_OPS_NEWTON, t, p, M);
}

void tfmm_m2l_pass(const tfmm_octree *t, const tfmm_csr *m2l, int p,
                   const double *M, double *L) {
  tfmm_far_m2l(&TFMM_FAR_OPS_NEWTON, t, m2l, p, 0, M, L);
}

void tfmm_downward_pass(const tfmm_octree *t, int p, double *L, double *phi,
                        double *grad) {
  tfmm_far_downward_at(&TFMM_FAR_OPS_NEWTON, t, p, NULL, L, phi, grad);
}

void tfmm_downward_pass_at(const tfmm_octree *t, int p, const int32_t *targets,
                           double *L, double *phi, double *grad) {
  tfmm_far_downward_at(&TFMM_FAR_OPS_NEWTON, t, p, targets, L, phi, grad);
}

void tfmm_m2p_pass(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                   const double *M, double *phi, double *grad) {
  tfmm_far_m2p_at(&TFMM_FAR_OPS_NEWTON, t, m2p, p, 0, NULL, M, phi, grad);
}

void tfmm_m2p_pass_at(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                      const int32_t *targets, const double *M, double *phi,
                      double *grad) {
  tfmm_far_m2p_at(&TFMM_FAR_OPS_NEWTON, t, m2p, p, 0, targets, M, phi, grad);
}
