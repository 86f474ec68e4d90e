/* Interaction lists by traversal: dual tree for the FMM, per leaf for
 * Barnes-Hut. Work is split into items (cell pairs, or target leaves); each
 * item's output is recorded where it lies in its thread's buffer and the
 * pieces are gathered in item order, so the lists never depend on the
 * number of threads or on scheduling. */
#include "tree/lists.h"

#include "team.h"

#include "tree/mac.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* A growable list of (target, source) pairs. */
typedef struct pair_buf {
  int32_t *target, *source;
  size_t n, cap;
} pair_buf;

/* Makes room for cap pairs (both arrays, or neither grows). */
static int pair_reserve(pair_buf *b, size_t cap) {
  if (cap <= b->cap)
    return 0;
  int32_t *t = realloc(b->target, cap * sizeof *t);
  if (t != NULL)
    b->target = t;
  int32_t *s = realloc(b->source, cap * sizeof *s);
  if (s != NULL)
    b->source = s;
  if (t == NULL || s == NULL)
    return -1;
  b->cap = cap;
  return 0;
}

static int pair_push(pair_buf *b, int32_t target, int32_t source) {
  if (b->n == b->cap && pair_reserve(b, b->cap ? 2 * b->cap : 1024) != 0)
    return -1;
  b->target[b->n] = target;
  b->source[b->n] = source;
  b->n++;
  return 0;
}

static void pair_free(pair_buf *b) {
  free(b->target);
  free(b->source);
  memset(b, 0, sizeof *b);
}

/* Where one item's output lies: thread buffer, first pair, count. */
typedef struct piece {
  int thread;
  size_t start, count;
} piece;

/* Pieces of several outputs, one buffer per thread and output. */
typedef struct gatherer {
  int nthreads, noutputs;
  int64_t nitems;
  pair_buf *bufs; /* [thread * noutputs + output] */
  piece *pieces;  /* [item * noutputs + output] */
} gatherer;

static int gatherer_init(gatherer *g, int noutputs, int64_t nitems) {
  g->nthreads = omp_get_max_threads();
  g->noutputs = noutputs;
  g->nitems = nitems;
  g->bufs = calloc((size_t)g->nthreads * noutputs, sizeof *g->bufs);
  g->pieces =
      calloc((size_t)(nitems > 0 ? nitems : 1) * noutputs, sizeof *g->pieces);
  return g->bufs != NULL && g->pieces != NULL ? 0 : -1;
}

static void gatherer_free(gatherer *g) {
  if (g->bufs != NULL)
    for (int k = 0; k < g->nthreads * g->noutputs; k++)
      pair_free(&g->bufs[k]);
  free(g->bufs);
  free(g->pieces);
  memset(g, 0, sizeof *g);
}

/* Concatenates output `o` of every item in item order into one pair list
 * (appended to `out`, which may already hold pairs from before the items).
 * Each item's place is known from a prefix sum, so the copies run in
 * parallel. */
static int gatherer_collect(const gatherer *g, int o, pair_buf *out) {
  size_t *at = malloc(((size_t)g->nitems + 1) * sizeof *at);
  if (at == NULL)
    return -1;
  at[0] = out->n;
  for (int64_t i = 0; i < g->nitems; i++)
    at[i + 1] = at[i] + g->pieces[i * g->noutputs + o].count;
  size_t total = at[g->nitems];
  if (pair_reserve(out, total) != 0) {
    free(at);
    return -1;
  }
  const int team = tfmm_team(g->nitems, TFMM_GRAIN_CELLS);
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
  for (int64_t i = 0; i < g->nitems; i++) {
    const piece *p = &g->pieces[i * g->noutputs + o];
    const pair_buf *b = &g->bufs[p->thread * g->noutputs + o];
    if (p->count == 0)
      continue; /* b's arrays may be NULL: memcpy must not see them */
    memcpy(out->target + at[i], b->target + p->start,
           p->count * sizeof(int32_t));
    memcpy(out->source + at[i], b->source + p->start,
           p->count * sizeof(int32_t));
  }
  out->n = total;
  free(at);
  return 0;
}

/* CSR by target from pairs: a stable counting sort (each target's sources
 * keep their order), in parallel. The pairs are cut into one chunk per
 * thread; chunk c's entries of target t go after those of chunks < c, so
 * the result is the serial sort's, whatever the number of threads. */
static int csr_from_pairs(const pair_buf *p, int64_t ntargets, tfmm_csr *c) {
  c->ntargets = ntargets;
  c->offset = calloc((size_t)ntargets + 1, sizeof *c->offset);
  c->index = malloc((p->n > 0 ? p->n : 1) * sizeof *c->index);
  /* Chunks of at least 2^16 pairs: the counts are nchunks * ntargets. */
  const int nchunks = tfmm_team((double)p->n, 65536);
  int64_t *next = calloc((size_t)nchunks * (size_t)ntargets, sizeof *next);
  if (c->offset == NULL || c->index == NULL || next == NULL) {
    free(next);
    return -1;
  }
  const size_t n = p->n;
#pragma omp parallel num_threads(nchunks)
  {
    const int me = omp_get_thread_num(), nt = omp_get_num_threads();
    const size_t lo = n * (size_t)me / (size_t)nt;
    const size_t hi = n * ((size_t)me + 1) / (size_t)nt;
    int64_t *mine = next + (size_t)me * (size_t)ntargets;
    for (size_t k = lo; k < hi; k++)
      mine[p->target[k]]++;
#pragma omp barrier
      /* Per target: the chunks' counts become their starting places. */
#pragma omp for schedule(static)
    for (int64_t t = 0; t < ntargets; t++) {
      int64_t sum = 0;
      for (int ch = 0; ch < nt; ch++) {
        int64_t count = next[(size_t)ch * (size_t)ntargets + (size_t)t];
        next[(size_t)ch * (size_t)ntargets + (size_t)t] = sum;
        sum += count;
      }
      c->offset[t + 1] = sum;
    }
#pragma omp single
    for (int64_t t = 0; t < ntargets; t++)
      c->offset[t + 1] += c->offset[t];
    /* (implicit barrier) */
    for (size_t k = lo; k < hi; k++) {
      int32_t t = p->target[k];
      c->index[c->offset[t] + mine[t]++] = p->source[k];
    }
  }
  free(next);
  return 0;
}

static void csr_free(tfmm_csr *c) {
  free(c->offset);
  free(c->index);
  memset(c, 0, sizeof *c);
}

void tfmm_lists_free(tfmm_lists *l) {
  if (l == NULL)
    return;
  csr_free(&l->m2l);
  csr_free(&l->near);
  csr_free(&l->m2p);
}

static int is_leaf(const tfmm_cell *c) { return c->child_count == 0; }

static double pair_count(const tfmm_octree *t, int32_t a, int32_t b) {
  double na = (double)(t->cells[a].body_end - t->cells[a].body_begin);
  double nb = (double)(t->cells[b].body_end - t->cells[b].body_begin);
  return a == b ? na * (nb - 1) : na * nb;
}

/* ---- FMM: dual-tree traversal ------------------------------------------ */

enum { FMM_M2L = 0, FMM_NEAR = 1, FMM_M2P = 2, FMM_OUTPUTS = 3 };

/* What the dual-tree rule needs besides the pair. */
typedef struct dual_rule {
  const tfmm_octree *t;
  const tfmm_mac *mac;
  int64_t m2p_bodies;
  const int32_t *targets; /* per cell, or NULL: every body is a target */
  int widen; /* 1: pairs whose target holds no target are still opened (the
                breadth-first start, so that the frontier handed to the
                threads is the whole traversal's), but emit nothing */
} dual_rule;

static int has_targets(const dual_rule *rule, int32_t a) {
  return rule->targets == NULL || rule->targets[a] > 0;
}

/* One step of the dual-tree rule on (a, b): emits an M2L or near pair, or
 * pushes the pairs to look at instead. A target cell without targets
 * emits nothing, and is not opened unless rule->widen: the pairs it drops
 * are the whole traversal's whose target holds no target, so that every
 * other target's entries are the whole traversal's in the same order. */
static int dual_step(const dual_rule *rule, int32_t a, int32_t b, pair_buf *out,
                     pair_buf *next) {
  const tfmm_octree *t = rule->t;
  const tfmm_cell *A = &t->cells[a], *B = &t->cells[b];
  const int emits = has_targets(rule, a);
  if (!emits && !rule->widen)
    return 0;
  if (a == b) {
    if (is_leaf(A))
      return emits ? pair_push(&out[FMM_NEAR], a, b) : 0;
    for (int32_t i = 0; i < A->child_count; i++)
      for (int32_t j = 0; j < A->child_count; j++)
        if (pair_push(next, A->child_begin + i, A->child_begin + j) != 0)
          return -1;
    return 0;
  }
  if (tfmm_mac_accept(rule->mac, A, a, B, b))
    return !emits
               ? 0
               : pair_push(&out[A->body_end - A->body_begin <= rule->m2p_bodies
                                    ? FMM_M2P
                                    : FMM_M2L],
                           a, b);
  if (is_leaf(A) && is_leaf(B))
    return emits ? pair_push(&out[FMM_NEAR], a, b) : 0;
  /* Split the larger; a leaf cannot be split. */
  if (is_leaf(B) || (!is_leaf(A) && A->radius >= B->radius)) {
    for (int32_t i = 0; i < A->child_count; i++)
      if (pair_push(next, A->child_begin + i, b) != 0)
        return -1;
  } else {
    for (int32_t j = 0; j < B->child_count; j++)
      if (pair_push(next, a, B->child_begin + j) != 0)
        return -1;
  }
  return 0;
}

/* The whole subtraversal below one pair, depth first. */
static int dual_item(const dual_rule *rule, int32_t a, int32_t b, pair_buf *out,
                     pair_buf *stack) {
  stack->n = 0;
  if (pair_push(stack, a, b) != 0)
    return -1;
  while (stack->n > 0) {
    stack->n--;
    int32_t x = stack->target[stack->n], y = stack->source[stack->n];
    if (dual_step(rule, x, y, out, stack) != 0)
      return -1;
  }
  return 0;
}

/* Pairs handed to threads: enough to balance, a constant so that the lists
 * do not depend on the number of threads. */
enum { FRONTIER_PAIRS = 4096 };

static tfmm_status fmm_traverse(const dual_rule *rule,
                                pair_buf serial[FMM_OUTPUTS],
                                pair_buf *frontier, gatherer *g,
                                tfmm_error *err) {
  pair_buf next = {0};
  int failed = pair_push(frontier, 0, 0);
  /* Breadth first until the frontier is wide enough or finished: the
   * frontier of the whole traversal, whatever the targets. */
  dual_rule wide = *rule;
  wide.widen = 1;
  while (!failed && frontier->n > 0 && frontier->n < FRONTIER_PAIRS) {
    next.n = 0;
    for (size_t k = 0; k < frontier->n && !failed; k++)
      failed = dual_step(&wide, frontier->target[k], frontier->source[k],
                         serial, &next);
    pair_buf swap = *frontier;
    *frontier = next;
    next = swap;
  }
  pair_free(&next);
  if (failed || gatherer_init(g, FMM_OUTPUTS, (int64_t)frontier->n) != 0)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the interaction lists");
  int bad = 0;
  const int team = tfmm_team(g->nitems, 64);
#pragma omp parallel reduction(| : bad) num_threads(team)
  {
    int me = omp_get_thread_num();
    pair_buf stack = {0};
    pair_buf *out = &g->bufs[me * FMM_OUTPUTS];
#pragma omp for schedule(dynamic, 8)
    for (int64_t i = 0; i < g->nitems; i++) {
      size_t start[FMM_OUTPUTS];
      for (int o = 0; o < FMM_OUTPUTS; o++)
        start[o] = out[o].n;
      bad |= dual_item(rule, frontier->target[i], frontier->source[i], out,
                       &stack) != 0;
      for (int o = 0; o < FMM_OUTPUTS; o++)
        g->pieces[i * FMM_OUTPUTS + o] =
            (piece){me, start[o], out[o].n - start[o]};
    }
    pair_free(&stack);
  }
  if (bad)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the interaction lists");
  return TFMM_OK;
}

/* Near pairs are keyed by leaf position; cells by cell index. */
static int32_t *leaf_positions(const tfmm_octree *t) {
  int32_t *pos = malloc((size_t)t->ncells * sizeof *pos);
  if (pos == NULL)
    return NULL;
  for (int64_t c = 0; c < t->ncells; c++)
    pos[c] = -1;
  for (int64_t k = 0; k < t->nleaves; k++)
    pos[t->leaves[k]] = (int32_t)k;
  return pos;
}

static double count_near(const tfmm_octree *t, const pair_buf *near) {
  double sum = 0;
  for (size_t k = 0; k < near->n; k++)
    sum += pair_count(t, near->target[k], near->source[k]);
  return sum;
}

tfmm_status tfmm_lists_build_fmm(const tfmm_octree *t, const tfmm_mac *mac,
                                 int64_t m2p_bodies, tfmm_lists *l,
                                 tfmm_error *err) {
  return tfmm_lists_build_fmm_at(t, mac, m2p_bodies, NULL, l, err);
}

tfmm_status tfmm_lists_build_fmm_at(const tfmm_octree *t, const tfmm_mac *mac,
                                    int64_t m2p_bodies, const int32_t *targets,
                                    tfmm_lists *l, tfmm_error *err) {
  memset(l, 0, sizeof *l);
  pair_buf serial[FMM_OUTPUTS] = {{0}, {0}, {0}}, frontier = {0};
  gatherer g = {0};
  int32_t *leaf_pos = NULL;
  const dual_rule rule = {t, mac, m2p_bodies, targets, 0};
  tfmm_status st = fmm_traverse(&rule, serial, &frontier, &g, err);
  if (st == TFMM_OK) {
    st = TFMM_ERR_NO_MEMORY;
    leaf_pos = leaf_positions(t);
    int ok = leaf_pos != NULL;
    for (int o = 0; o < FMM_OUTPUTS && ok; o++)
      ok = gatherer_collect(&g, o, &serial[o]) == 0;
    if (ok) {
      l->near_interactions = count_near(t, &serial[FMM_NEAR]);
      /* Near targets and sources by cell; the CSR is by leaf position. */
      for (size_t k = 0; k < serial[FMM_NEAR].n; k++)
        serial[FMM_NEAR].target[k] = leaf_pos[serial[FMM_NEAR].target[k]];
      if (csr_from_pairs(&serial[FMM_M2L], t->ncells, &l->m2l) == 0 &&
          csr_from_pairs(&serial[FMM_NEAR], t->nleaves, &l->near) == 0 &&
          csr_from_pairs(&serial[FMM_M2P], t->ncells, &l->m2p) == 0)
        st = TFMM_OK;
    }
    if (st != TFMM_OK)
      tfmm_error_set(err, st, "no memory for the interaction lists");
  }
  free(leaf_pos);
  gatherer_free(&g);
  for (int o = 0; o < FMM_OUTPUTS; o++)
    pair_free(&serial[o]);
  pair_free(&frontier);
  if (st != TFMM_OK)
    tfmm_lists_free(l);
  return st;
}

/* ---- Barnes-Hut: one target leaf at a time ------------------------------ */

enum { BH_M2P = 0, BH_NEAR = 1 };

static int bh_leaf(const tfmm_octree *t, const tfmm_mac *mac, int32_t leaf,
                   pair_buf *out, pair_buf *stack) {
  const tfmm_cell *A = &t->cells[leaf];
  stack->n = 0;
  if (pair_push(stack, leaf, 0) != 0)
    return -1;
  while (stack->n > 0) {
    int32_t b = stack->source[--stack->n];
    const tfmm_cell *B = &t->cells[b];
    int rc;
    if (b != leaf && tfmm_mac_accept(mac, A, leaf, B, b))
      rc = pair_push(&out[BH_M2P], leaf, b);
    else if (is_leaf(B))
      rc = pair_push(&out[BH_NEAR], leaf, b);
    else {
      rc = 0;
      /* Pushed last to first so that children are met in octant order. */
      for (int32_t j = B->child_count - 1; j >= 0 && rc == 0; j--)
        rc = pair_push(stack, leaf, B->child_begin + j);
    }
    if (rc != 0)
      return -1;
  }
  return 0;
}

tfmm_status tfmm_lists_build_bh(const tfmm_octree *t, const tfmm_mac *mac,
                                tfmm_lists *l, tfmm_error *err) {
  return tfmm_lists_build_bh_at(t, mac, NULL, l, err);
}

tfmm_status tfmm_lists_build_bh_at(const tfmm_octree *t, const tfmm_mac *mac,
                                   const int32_t *targets, tfmm_lists *l,
                                   tfmm_error *err) {
  memset(l, 0, sizeof *l);
  gatherer g = {0};
  pair_buf m2p = {0}, near = {0};
  int bad = gatherer_init(&g, 2, t->nleaves) != 0;
  if (!bad) {
    const int team = tfmm_team(t->nleaves, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel reduction(| : bad) num_threads(team)
    {
      int me = omp_get_thread_num();
      pair_buf stack = {0};
      pair_buf *out = &g.bufs[me * 2];
#pragma omp for schedule(dynamic, 16)
      for (int64_t i = 0; i < t->nleaves; i++) {
        size_t start[2] = {out[0].n, out[1].n};
        if (targets == NULL || targets[t->leaves[i]] > 0)
          bad |= bh_leaf(t, mac, t->leaves[i], out, &stack) != 0;
        for (int o = 0; o < 2; o++)
          g.pieces[i * 2 + o] = (piece){me, start[o], out[o].n - start[o]};
      }
      pair_free(&stack);
    }
  }
  tfmm_status st = TFMM_OK;
  if (bad || gatherer_collect(&g, BH_M2P, &m2p) != 0 ||
      gatherer_collect(&g, BH_NEAR, &near) != 0)
    st = TFMM_ERR_NO_MEMORY;
  if (st == TFMM_OK) {
    l->near_interactions = count_near(t, &near);
    /* Near targets by leaf position; M2P targets stay cells. */
    int32_t *leaf_pos = leaf_positions(t);
    if (leaf_pos == NULL)
      st = TFMM_ERR_NO_MEMORY;
    else {
      for (size_t k = 0; k < near.n; k++)
        near.target[k] = leaf_pos[near.target[k]];
      if (csr_from_pairs(&m2p, t->ncells, &l->m2p) != 0 ||
          csr_from_pairs(&near, t->nleaves, &l->near) != 0)
        st = TFMM_ERR_NO_MEMORY;
      free(leaf_pos);
    }
  }
  if (st != TFMM_OK) {
    tfmm_error_set(err, st, "no memory for the interaction lists");
    tfmm_lists_free(l);
  }
  gatherer_free(&g);
  pair_free(&m2p);
  pair_free(&near);
  return st;
}
