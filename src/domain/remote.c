/* The multipoles another rank sent (let.c), evaluated at this rank's
 * bodies through this rank's octree: each received tree and this rank's
 * tree are traversed together from their roots; a pair far apart by the
 * opening criterion of one process (mac_rule.h, the one the configuration
 * selects: r_A + r_B < theta_B d and d >= r_A + r_B + s, and under the
 * error criterion the error bound against |a|_A) goes by M2L; a leaf and a
 * received cell without children go by M2P at the leaf's bodies, which the
 * sender's test already put beyond the series' reach (let.c); otherwise the
 * larger cell is opened. Then L2L and L2P carry the local expansions down
 * (passes.c). The pairs are collected per received cell, in parallel, then
 * sorted by tree cell so that each cell's sums are made by one thread in
 * a fixed order: the result does not depend on the thread count. */
#include "domain/remote.h"

#include "farfield/passes.h"
#include "team.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair {
  int32_t cell;   /* tree cell */
  int32_t m2p;    /* 1: M2P at its bodies (a leaf), 0: M2L into it */
  int64_t source; /* received cell */
} pair;

typedef struct pair_list {
  pair *v;
  size_t count, capacity;
} pair_list;

static int push(pair_list *l, int32_t cell, int m2p, int64_t source) {
  if (l->count == l->capacity) {
    const size_t cap = l->capacity > 0 ? 2 * l->capacity : 1024;
    pair *v = realloc(l->v, cap * sizeof *v);
    if (v == NULL)
      return -1;
    l->v = v;
    l->capacity = cap;
  }
  l->v[l->count++] = (pair){cell, m2p, source};
  return 0;
}

/* Whether received cell src acts on tree cell a (index ai) through M2L:
 * the opening criterion of one process (mac_rule.h) as the configuration
 * selects it, with the received cell's theta_B and |a|_A of tree cell a. */
static int accept(const tfmm_cell *a, int32_t ai, const double *src,
                  const tfmm_let_params *lp) {
  return tfmm_mac_rule_accept(&lp->rule, a->center, a->radius,
                              lp->accel != NULL ? lp->accel[ai] : 0.0, src,
                              src[TFMM_LET_RADIUS], src[TFMM_LET_MASS],
                              tfmm_let_theta(lp, src[TFMM_LET_MASS]));
}

/* A growable stack of (tree cell, received cell) pairs. */
typedef struct frame {
  int32_t cell;
  int64_t source;
} frame;

typedef struct stack {
  frame *v;
  size_t count, capacity;
} stack;

static int push_frame(stack *s, int32_t cell, int64_t source) {
  if (s->count == s->capacity) {
    const size_t cap = s->capacity > 0 ? 2 * s->capacity : 256;
    frame *v = realloc(s->v, cap * sizeof *v);
    if (v == NULL)
      return -1;
    s->v = v;
    s->capacity = cap;
  }
  s->v[s->count++] = (frame){cell, source};
  return 0;
}

/* The pairs of the received tree rooted at record j, by a dual traversal
 * as one process's: a pair far enough goes by M2L; otherwise the larger of
 * the two opens (a received cell only when it has children, a tree cell
 * only when it is not a leaf); a tree leaf and a received cell without
 * children (far from every body here, let.c) go by M2P. */
static int descend(const tfmm_octree *t, const double *cells, int width,
                   int64_t j, const tfmm_let_params *lp, stack *st,
                   pair_list *out) {
  st->count = 0;
  if (push_frame(st, 0, j) != 0)
    return -1;
  while (st->count > 0) {
    const frame f = st->v[--st->count];
    const tfmm_cell *c = &t->cells[f.cell];
    const double *src = cells + (size_t)f.source * width;
    const int nchild = (int)src[TFMM_LET_NCHILD];
    int fail = 0;
    if (accept(c, f.cell, src, lp))
      fail = push(out, f.cell, 0, f.source);
    else if (nchild > 0 &&
             (c->child_count == 0 || src[TFMM_LET_RADIUS] >= c->radius))
      for (int k = 0; k < nchild && !fail; k++)
        fail = push_frame(st, f.cell, (int64_t)src[TFMM_LET_CHILD + k]);
    else if (c->child_count > 0)
      for (int k = 0; k < c->child_count && !fail; k++)
        fail = push_frame(st, c->child_begin + k, f.source);
    else
      fail = push(out, f.cell, 1, f.source);
    if (fail)
      return -1;
  }
  return 0;
}

static int by_cell(const void *a, const void *b) {
  const pair *x = a, *y = b;
  if (x->cell != y->cell)
    return (x->cell > y->cell) - (x->cell < y->cell);
  return (x->source > y->source) - (x->source < y->source);
}

/* Every pair of every received cell, sorted by tree cell then source. */
static tfmm_status collect(const tfmm_octree *t, const double *cells,
                           size_t ncells, const tfmm_let_params *lp,
                           pair_list *all, tfmm_error *err) {
  const int width = tfmm_let_cell_width(lp->order);
  const int threads = omp_get_max_threads();
  pair_list *part = calloc((size_t)threads, sizeof *part);
  int failed = part == NULL;
  if (!failed) {
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
      pair_list *mine = &part[omp_get_thread_num()];
      stack frames = {0};
#pragma omp for schedule(dynamic, 4)
      for (ptrdiff_t j = 0; j < (ptrdiff_t)ncells; j++)
        if (cells[(size_t)j * width + TFMM_LET_ROOT] != 0.0 &&
            descend(t, cells, width, j, lp, &frames, mine) != 0)
          failed = 1;
      free(frames.v);
    }
  }
  size_t total = 0;
  for (int k = 0; part != NULL && k < threads; k++)
    total += part[k].count;
  all->v = failed ? NULL : malloc((total > 0 ? total : 1) * sizeof *all->v);
  if (all->v != NULL)
    for (int k = 0; k < threads; k++) {
      memcpy(all->v + all->count, part[k].v, part[k].count * sizeof *all->v);
      all->count += part[k].count;
    }
  for (int k = 0; part != NULL && k < threads; k++)
    free(part[k].v);
  free(part);
  if (all->v == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the pairs of %zu received multipoles",
                          ncells);
  qsort(all->v, all->count, sizeof *all->v, by_cell);
  return TFMM_OK;
}

tfmm_status tfmm_remote_field(const tfmm_octree *t, const double *cells,
                              size_t ncells, const tfmm_let_params *lp,
                              double *phi, double *grad, tfmm_error *err) {
  const int p = lp->order;
  const int width = tfmm_let_cell_width(p);
  const size_t esize = tfmm_expansion_size(p);
  pair_list pairs = {0};
  tfmm_status st = collect(t, cells, ncells, lp, &pairs, err);
  if (st != TFMM_OK)
    return st;
  /* Where each tree cell's pairs begin. */
  int64_t *begin = malloc(((size_t)t->ncells + 1) * sizeof *begin);
  double *L = calloc((size_t)t->ncells * esize, sizeof *L);
  if (begin == NULL || L == NULL) {
    free(begin), free(L), free(pairs.v);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the local expansions of %lld cells",
                          (long long)t->ncells);
  }
  size_t k = 0;
  for (int64_t c = 0; c <= t->ncells; c++) {
    while (k < pairs.count && pairs.v[k].cell < c)
      k++;
    begin[c] = (int64_t)k;
  }
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t c = 0; c < t->ncells; c++)
    for (int64_t q = begin[c]; q < begin[c + 1]; q++)
      if (!pairs.v[q].m2p) {
        const double *src = cells + (size_t)pairs.v[q].source * width;
        tfmm_m2l(p, src + TFMM_LET_HEADER, src, t->cells[c].center,
                 L + (size_t)c * esize);
      }
  tfmm_downward_pass(t, p, L, phi, grad);
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t c = 0; c < t->ncells; c++) {
    const tfmm_cell *cell = &t->cells[c];
    for (int64_t q = begin[c]; q < begin[c + 1]; q++)
      if (pairs.v[q].m2p) {
        const double *src = cells + (size_t)pairs.v[q].source * width;
        tfmm_m2p(p, src + TFMM_LET_HEADER, src,
                 (size_t)(cell->body_end - cell->body_begin),
                 t->pos + 3 * cell->body_begin, phi + cell->body_begin,
                 grad + 3 * cell->body_begin);
      }
  }
  free(begin);
  free(L);
  free(pairs.v);
  return TFMM_OK;
}
