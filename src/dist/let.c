/* The locally essential tree (Salmon 1991; Warren and Salmon 1993) that a
 * rank sends another: walking its own octree from the root, a cell whose
 * every body is far from every body of the destination goes as its
 * multipole; a leaf that is not goes as its bodies; any other cell is
 * opened. Every body of the sender is thus in exactly one item sent.
 *
 * "Far" is the opening criterion of the evaluation taken against the
 * destination's bodies themselves, which the destination describes by
 * spheres (tfmm_let_domain): a cell of centre c and radius r goes as a
 * multipole when, for every sphere (c', r'), the nearest body the sphere
 * may hold is at distance d = |c - c'| - r' with r < theta d and
 * d >= r + s (s the softening's reach). Then at every destination body
 * the series converges as it does for an accepted pair of one process,
 * (r / d)^(p+1) <= theta^(p+1), and the softening acts on no pair so
 * treated. */
#include "dist/dist_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tfmm_status grow(tfmm_let_buffer *b, int width, tfmm_error *err) {
  if (b->count < b->capacity)
    return TFMM_OK;
  const size_t cap = b->capacity > 0 ? 2 * b->capacity : 256;
  double *v = realloc(b->v, cap * (size_t)width * sizeof *v);
  if (v == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the locally essential tree");
  b->v = v;
  b->capacity = cap;
  return TFMM_OK;
}

tfmm_status tfmm_let_domain(const tfmm_octree *t, size_t pieces, double **out,
                            size_t *count, tfmm_error *err) {
  *out = NULL;
  *count = 0;
  if (t->n == 0)
    return TFMM_OK;
  const int64_t most = (int64_t)(t->n / (pieces > 0 ? pieces : 1)) + 1;
  tfmm_let_buffer b = {0};
  int32_t *stack = malloc((size_t)t->ncells * sizeof *stack);
  if (stack == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for the domain");
  int64_t top = 0;
  stack[top++] = 0;
  tfmm_status st = TFMM_OK;
  while (top > 0 && st == TFMM_OK) {
    const tfmm_cell *c = &t->cells[stack[--top]];
    if (c->child_count > 0 && c->body_end - c->body_begin > most) {
      for (int k = 0; k < c->child_count; k++)
        stack[top++] = c->child_begin + k;
      continue;
    }
    st = grow(&b, 4, err);
    if (st == TFMM_OK) {
      double *s = b.v + 4 * b.count++;
      memcpy(s, c->center, 3 * sizeof *s);
      s[3] = c->radius;
    }
  }
  free(stack);
  if (st != TFMM_OK) {
    free(b.v);
    return st;
  }
  *out = b.v;
  *count = b.count;
  return TFMM_OK;
}

/* Whether cell c is far from every sphere of the destination. */
static int far_from_all(const tfmm_cell *c, const tfmm_let_params *lp,
                        const double *spheres, size_t nspheres) {
  if (!lp->multipoles)
    return 0;
  for (size_t k = 0; k < nspheres; k++) {
    const double *s = spheres + 4 * k;
    const double dx = c->center[0] - s[0], dy = c->center[1] - s[1],
                 dz = c->center[2] - s[2];
    const double d = sqrt(dx * dx + dy * dy + dz * dz) - s[3];
    if (!(d > 0) || !(c->radius < lp->theta * d) ||
        !(d >= c->radius + lp->separation))
      return 0;
  }
  return 1;
}

tfmm_status tfmm_let_build(const tfmm_octree *t, const double *M,
                           const tfmm_let_params *lp, const double *spheres,
                           size_t nspheres, const double *pos_sorted,
                           const double *mass_sorted, tfmm_let_buffer *cells,
                           tfmm_let_buffer *bodies, tfmm_error *err) {
  cells->count = bodies->count = 0;
  if (t->n == 0 || nspheres == 0)
    return TFMM_OK;
  const int width = tfmm_let_cell_width(lp->order);
  const size_t esize = tfmm_expansion_size(lp->order);
  int32_t *stack = malloc((size_t)t->ncells * sizeof *stack);
  if (stack == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the locally essential tree");
  int64_t top = 0;
  stack[top++] = 0;
  tfmm_status st = TFMM_OK;
  while (top > 0 && st == TFMM_OK) {
    const int32_t ci = stack[--top];
    const tfmm_cell *c = &t->cells[ci];
    if (far_from_all(c, lp, spheres, nspheres)) {
      st = grow(cells, width, err);
      if (st != TFMM_OK)
        break;
      double *v = cells->v + (size_t)width * cells->count++;
      memcpy(v, c->center, 3 * sizeof *v);
      v[3] = c->radius;
      memcpy(v + 4, M + (size_t)ci * esize, esize * sizeof *v);
    } else if (c->child_count == 0) {
      for (int64_t i = c->body_begin; i < c->body_end && st == TFMM_OK; i++) {
        st = grow(bodies, TFMM_LET_BODY_WIDTH, err);
        if (st != TFMM_OK)
          break;
        double *v = bodies->v + TFMM_LET_BODY_WIDTH * bodies->count++;
        memcpy(v, pos_sorted + 3 * i, 3 * sizeof *v);
        v[3] = mass_sorted[i];
      }
    } else {
      for (int k = 0; k < c->child_count; k++)
        stack[top++] = c->child_begin + k;
    }
  }
  free(stack);
  return st;
}
