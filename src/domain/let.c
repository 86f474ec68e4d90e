/* The locally essential tree (Salmon 1991; Warren and Salmon 1993) that a
 * rank sends another: walking its own octree from the root, a cell whose
 * every body is far from every body of the destination goes as its
 * multipole; a leaf that is not goes as its bodies; any other cell is
 * opened. Every body of the sender is thus in exactly one item sent.
 *
 * "Far" is the opening criterion of one process (tree/mac_rule.h, the one
 * the configuration selects) taken against the destination's bodies
 * themselves, which the destination describes by boxes (tfmm_let_domain:
 * the tight boxes of the bodies of its tree's cells, cut at about n/256
 * bodies each, with their mass and least |a|): a cell of centre c, radius
 * r and mass M goes as a multipole when the criterion accepts it as a
 * source acting on a point target (radius 0) at every box's point nearest
 * to c, at half the opening angle theta_B (theta, or the mass criterion's
 * for M). With d that distance: r < theta_B d / 2, d >= r + s (s the
 * softening's reach), and under the error criterion the series' error
 * bound and the softening's term below epsilon |a| of the box. Then at
 * every destination body the series converges as it does for an accepted
 * pair of one process, within the same error bound, and the softening
 * acts on no pair so treated.
 *
 * The multipoles go as one tree (visit() below): every opened cell with
 * bodies sent as multipoles goes too, holding those bodies' multipole and
 * links to its children's records, so that the receiver takes the
 * coarsest cell far enough from each of its cells (remote.c), as one
 * process's dual traversal does, rather than every small cell sent for its
 * nearest bodies. */
#include "domain/let.h"

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

tfmm_status tfmm_let_domain(const tfmm_octree *t, size_t pieces,
                            const double *accel, double **out, size_t *count,
                            tfmm_error *err) {
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
    const int32_t ci = stack[--top];
    const tfmm_cell *c = &t->cells[ci];
    if (c->child_count > 0 && c->body_end - c->body_begin > most) {
      for (int k = 0; k < c->child_count; k++)
        stack[top++] = c->child_begin + k;
      continue;
    }
    st = grow(&b, TFMM_LET_BOX_WIDTH, err);
    if (st != TFMM_OK)
      break;
    /* The tight box of the cell's bodies. */
    double *box = b.v + TFMM_LET_BOX_WIDTH * b.count++;
    for (int k = 0; k < 3; k++)
      box[k] = box[3 + k] = t->pos[3 * c->body_begin + k];
    for (int64_t i = c->body_begin; i < c->body_end; i++)
      for (int k = 0; k < 3; k++) {
        const double x = t->pos[3 * i + k];
        box[k] = x < box[k] ? x : box[k];
        box[3 + k] = x > box[3 + k] ? x : box[3 + k];
      }
    for (int k = 0; k < 3; k++)
      box[TFMM_LET_BOX_COM + k] = c->center[k];
    box[TFMM_LET_BOX_MASS] = c->mass;
    box[TFMM_LET_BOX_ACCEL] = accel != NULL ? accel[ci] : 0.0;
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

/* Whether cell c is far from every body of the destination: whether the
 * opening criterion of one process (mac_rule.h) accepts it, at
 * send_share theta_B, as a source acting on a point target at each box's
 * point nearest to its centre, with the box's |a| (the error criterion's;
 * the criterion's error falls with the distance, so the nearest point is
 * the worst of the box's bodies). */
static int far_from_all(const tfmm_cell *c, const tfmm_let_params *lp,
                        const double *boxes, size_t nboxes) {
  if (!lp->multipoles)
    return 0;
  const double theta = lp->send_share * tfmm_let_theta(lp, c->mass);
  for (size_t k = 0; k < nboxes; k++) {
    const double *b = boxes + TFMM_LET_BOX_WIDTH * k;
    double near[3];
    for (int q = 0; q < 3; q++) {
      const double x = c->center[q], lo = b[TFMM_LET_BOX_LO + q],
                   hi = b[TFMM_LET_BOX_HI + q];
      near[q] = x < lo ? lo : x > hi ? hi : x;
    }
    if (!tfmm_mac_rule_accept(&lp->rule, near, 0.0, b[TFMM_LET_BOX_ACCEL],
                              c->center, c->radius, c->mass, theta))
      return 0;
  }
  return 1;
}

/* The walk of tfmm_let_build: cell ci of t for one destination. Returns
 * the index of the cell's record, or -1 when none of its bodies goes as a
 * multipole, -2 on failure (err set). A far cell's record has no children
 * and its own multipole. An opened cell some of whose bodies go as
 * multipoles gets a record linking its children's records, with the
 * multipole of just those bodies (its children's shifted to its centre by
 * M2M, or its own when every body goes so): the receiver can then take the
 * coarse cell for its distant cells, and the bodies sent as bodies are
 * not in it (they are the receiver's own solver's). Children's records are
 * written before their parent's. */
typedef struct walk {
  const tfmm_octree *t;
  const double *M;
  const tfmm_let_params *lp;
  const double *boxes;
  size_t nboxes;
  const double *pos, *mass;
  tfmm_let_buffer *cells, *bodies;
  int width;
  size_t esize;
  tfmm_error *err;
} walk;

/* The record of cell ci: children child[0..nchild) (record indices); the
 * cell's own multipole when whole, else the children's shifted. */
static int64_t emit_cell(walk *w, int32_t ci, const int64_t *child, int nchild,
                         int whole) {
  if (grow(w->cells, w->width, w->err) != TFMM_OK)
    return -2;
  const tfmm_cell *c = &w->t->cells[ci];
  const int64_t at = (int64_t)w->cells->count++;
  double *v = w->cells->v + (size_t)w->width * (size_t)at;
  memcpy(v, c->center, 3 * sizeof *v);
  v[TFMM_LET_RADIUS] = c->radius;
  v[TFMM_LET_ROOT] = 0.0;
  v[TFMM_LET_NCHILD] = nchild;
  for (int k = 0; k < 8; k++)
    v[TFMM_LET_CHILD + k] = k < nchild ? (double)child[k] : -1.0;
  if (whole) {
    v[TFMM_LET_MASS] = c->mass;
    memcpy(v + TFMM_LET_HEADER, w->M + (size_t)ci * w->esize,
           w->esize * sizeof *v);
    return at;
  }
  v[TFMM_LET_MASS] = 0.0;
  memset(v + TFMM_LET_HEADER, 0, w->esize * sizeof *v);
  for (int k = 0; k < nchild; k++) {
    const double *u = w->cells->v + (size_t)w->width * (size_t)child[k];
    v[TFMM_LET_MASS] += u[TFMM_LET_MASS];
    tfmm_m2m(w->lp->order, u + TFMM_LET_HEADER, u, c->center,
             v + TFMM_LET_HEADER);
  }
  return at;
}

static int64_t visit(walk *w, int32_t ci) {
  const tfmm_cell *c = &w->t->cells[ci];
  if (far_from_all(c, w->lp, w->boxes, w->nboxes))
    return emit_cell(w, ci, NULL, 0, 1);
  if (c->child_count == 0) {
    for (int64_t i = c->body_begin; i < c->body_end; i++) {
      if (grow(w->bodies, TFMM_LET_BODY_WIDTH, w->err) != TFMM_OK)
        return -2;
      double *v = w->bodies->v + TFMM_LET_BODY_WIDTH * w->bodies->count++;
      memcpy(v, w->pos + 3 * i, 3 * sizeof *v);
      v[3] = w->mass[i];
    }
    return -1;
  }
  int64_t child[8];
  int n = 0, whole = 1;
  for (int k = 0; k < c->child_count; k++) {
    const int64_t r = visit(w, c->child_begin + k);
    if (r == -2)
      return -2;
    if (r >= 0)
      child[n++] = r;
    /* whole: every child far, or itself whole (no body of it sent) */
    whole &= r >= 0 &&
             w->cells->v[(size_t)w->width * (size_t)r + TFMM_LET_ROOT] == 0.0;
  }
  if (n == 0)
    return -1;
  const int64_t at = emit_cell(w, ci, child, n, whole);
  /* The ROOT slot holds, until the walk ends, whether the record's cell
   * sent any body as a body (then its parent is not whole either). */
  if (at >= 0 && !whole)
    w->cells->v[(size_t)w->width * (size_t)at + TFMM_LET_ROOT] = 2.0;
  return at;
}

tfmm_status tfmm_let_build(const tfmm_octree *t, const double *M,
                           const tfmm_let_params *lp, const double *boxes,
                           size_t nboxes, const double *pos_sorted,
                           const double *mass_sorted, tfmm_let_buffer *cells,
                           tfmm_let_buffer *bodies, tfmm_error *err) {
  cells->count = bodies->count = 0;
  if (t->n == 0 || nboxes == 0)
    return TFMM_OK;
  walk w = {.t = t,
            .M = M,
            .lp = lp,
            .boxes = boxes,
            .nboxes = nboxes,
            .pos = pos_sorted,
            .mass = mass_sorted,
            .cells = cells,
            .bodies = bodies,
            .width = tfmm_let_cell_width(lp->order),
            .esize = tfmm_expansion_size(lp->order),
            .err = err};
  const int64_t root = visit(&w, 0);
  if (root == -2)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the locally essential tree");
  for (size_t k = 0; k < cells->count; k++)
    cells->v[(size_t)w.width * k + TFMM_LET_ROOT] = (int64_t)k == root;
  return TFMM_OK;
}
