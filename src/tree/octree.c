/* The octree, built in five timed stages: Morton keys in a bounding cube,
 * a radix sort of the keys, the bodies permuted into key order, the cells
 * level by level from the sorted keys, and the cells' moments. Every stage
 * is a parallel loop over the bodies or over the cells of one level; the
 * cells are found by binary search in the keys, never by a scan of the
 * bodies. */
#include "octree.h"

#include "team.h"
#include "tree/keys.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Positions on the cube's upper faces must map below 2^21: the side is the
 * largest extent widened by this relative margin. */
#define BOX_MARGIN 1e-12

/* The bound that prunes the farthest-body search is widened by this much,
 * far above its rounding error (a few ulps), so that rounding never prunes
 * the child that holds the farthest body. */
#define PRUNE_SLACK 1e-12

/* Levels of fewer cells are built by one thread: at the top of the tree a
 * team would cost more than the few binary searches it shares. */
enum { LEVEL_PARALLEL_MIN = 256 };

/* ---- Stage 1: the bounding cube and the keys ---------------------------- */

static tfmm_status bounding_cube(tfmm_octree *t, const double *pos,
                                 tfmm_error *err) {
  size_t n = t->n;
  double x0 = pos[0], y0 = pos[1], z0 = pos[2];
  double x1 = x0, y1 = y0, z1 = z0;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for reduction(min                                         \
                                   : x0, y0, z0) reduction(max                 \
                                                           : x1, y1, z1)       \
    num_threads(team)
  for (size_t i = 0; i < n; i++) {
    /* Comparisons, not fmin/fmax: those handle NaN (excluded here) and
     * are ten times slower. */
    double x = pos[3 * i], y = pos[3 * i + 1], z = pos[3 * i + 2];
    x0 = x < x0 ? x : x0;
    y0 = y < y0 ? y : y0;
    z0 = z < z0 ? z : z0;
    x1 = x > x1 ? x : x1;
    y1 = y > y1 ? y : y1;
    z1 = z > z1 ? z : z1;
  }
  double extent = fmax(x1 - x0, fmax(y1 - y0, z1 - z0));
  if (!isfinite(extent))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "octree: the bodies span %g, beyond the range of "
                          "double",
                          extent);
  t->box_min[0] = x0;
  t->box_min[1] = y0;
  t->box_min[2] = z0;
  /* Coincident bodies still need a cube of positive size. */
  t->box_size = extent > 0 ? extent * (1 + BOX_MARGIN) : 1.0;
  return TFMM_OK;
}

/* The caller's cube (lowest corner, side): every body must lie in it. */
static tfmm_status given_cube(tfmm_octree *t, const double *pos,
                              const double box[4], tfmm_error *err) {
  if (!(box[3] > 0) || !isfinite(box[3]) || !isfinite(box[0]) ||
      !isfinite(box[1]) || !isfinite(box[2]))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "octree: the given cube (%g, %g, %g) side %g is not "
                          "finite with a positive side",
                          box[0], box[1], box[2], box[3]);
  for (size_t i = 0; i < t->n; i++)
    for (int d = 0; d < 3; d++) {
      const double x = pos[3 * i + d];
      if (!(x >= box[d] && x <= box[d] + box[3]))
        return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                              "body %zu: position (%g, %g, %g) is outside the "
                              "given cube [%g, %g] x [%g, %g] x [%g, %g]",
                              i, pos[3 * i], pos[3 * i + 1], pos[3 * i + 2],
                              box[0], box[0] + box[3], box[1], box[1] + box[3],
                              box[2], box[2] + box[3]);
    }
  for (int d = 0; d < 3; d++)
    t->box_min[d] = box[d];
  t->box_size = box[3];
  return TFMM_OK;
}

static void make_keys(tfmm_octree *t, const double *pos) {
  int64_t n = (int64_t)t->n;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for num_threads(team)
  for (int64_t i = 0; i < n; i++) {
    t->keys[i] = tfmm_morton_encode(pos + 3 * i, t->box_min, t->box_size);
    t->order[i] = i;
  }
}

/* ---- Stages 2 and 3: sort the keys, permute the bodies ------------------ */

static tfmm_status sort_keys(tfmm_octree *t, tfmm_error *err) {
  uint64_t *key_scratch = malloc(t->n * sizeof *key_scratch);
  int64_t *idx_scratch = malloc(t->n * sizeof *idx_scratch);
  if (key_scratch == NULL || idx_scratch == NULL) {
    free(key_scratch);
    free(idx_scratch);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "octree: out of memory for the sort of %zu keys",
                          t->n);
  }
  tfmm_radix_sort(t->n, t->keys, t->order, key_scratch, idx_scratch);
  free(key_scratch);
  free(idx_scratch);
  return TFMM_OK;
}

static tfmm_status permute(tfmm_octree *t, const double *pos,
                           const double *mass, tfmm_error *err) {
  t->pos = malloc(3 * t->n * sizeof *t->pos);
  t->mass = malloc(t->n * sizeof *t->mass);
  if (t->pos == NULL || t->mass == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "octree: out of memory for %zu sorted bodies", t->n);
  int64_t n = (int64_t)t->n;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for num_threads(team)
  for (int64_t k = 0; k < n; k++) {
    int64_t i = t->order[k];
    t->pos[3 * k] = pos[3 * i];
    t->pos[3 * k + 1] = pos[3 * i + 1];
    t->pos[3 * k + 2] = pos[3 * i + 2];
    t->mass[k] = mass[i];
  }
  return TFMM_OK;
}

/* ---- Stage 4: the cells, level by level --------------------------------- */

/* Children of cell c, 0 when it stays a leaf: it does when it holds few
 * enough bodies, is at the deepest level allowed, or all its bodies share
 * one key (no level could separate them). */
static int32_t count_children(const tfmm_octree *t, const tfmm_cell *c) {
  if (c->body_end - c->body_begin <= t->leaf_size || c->level >= t->max_depth ||
      t->keys[c->body_begin] == t->keys[c->body_end - 1])
    return 0;
  int64_t b[9];
  tfmm_key_octants(t->keys, c->body_begin, c->body_end, c->level, b);
  int32_t count = 0;
  for (int o = 0; o < 8; o++)
    count += b[o] < b[o + 1];
  return count;
}

static void add_children(tfmm_octree *t, int32_t parent) {
  const tfmm_cell *p = &t->cells[parent];
  int64_t b[9];
  tfmm_key_octants(t->keys, p->body_begin, p->body_end, p->level, b);
  tfmm_cell *child = &t->cells[p->child_begin];
  for (int o = 0; o < 8; o++) {
    if (b[o] == b[o + 1])
      continue;
    memset(child, 0, sizeof *child);
    child->level = p->level + 1;
    child->parent = parent;
    child->child_begin = -1;
    child->body_begin = b[o];
    child->body_end = b[o + 1];
    child++;
  }
}

/* Makes room for `needed` cells, doubling so that the copies add up to
 * O(final size). On failure t->cells is unchanged (and freed later). */
static int reserve_cells(tfmm_octree *t, int64_t *capacity, int64_t needed) {
  if (needed <= *capacity)
    return 1;
  int64_t grown = *capacity;
  while (grown < needed)
    grown *= 2;
  tfmm_cell *cells = realloc(t->cells, (size_t)grown * sizeof *cells);
  if (cells == NULL)
    return 0;
  t->cells = cells;
  *capacity = grown;
  return 1;
}

static tfmm_status build_cells(tfmm_octree *t, tfmm_error *err) {
  /* A first guess that holds a uniform tree; reserve_cells grows it. */
  int64_t capacity = 2 * (int64_t)(t->n / (size_t)t->leaf_size) + 64;
  t->cells = malloc((size_t)capacity * sizeof *t->cells);
  t->level_begin = malloc((size_t)(t->max_depth + 2) * sizeof(int64_t));
  if (t->cells == NULL || t->level_begin == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "octree: out of memory for the cells");
  tfmm_cell *root = &t->cells[0];
  memset(root, 0, sizeof *root);
  root->parent = -1;
  root->child_begin = -1;
  root->body_end = (int64_t)t->n;
  t->ncells = 1;
  t->level_begin[0] = 0;
  t->level_begin[1] = 1;

  for (int level = 0;; level++) {
    int64_t begin = t->level_begin[level], end = t->level_begin[level + 1];
    int wide = end - begin >= LEVEL_PARALLEL_MIN;
#pragma omp parallel for schedule(dynamic, 64) if (wide)
    for (int64_t c = begin; c < end; c++)
      t->cells[c].child_count = count_children(t, &t->cells[c]);
    /* Children of a level follow it, each cell's in one run: the exclusive
     * prefix sum of the counts places them. */
    int64_t next = end;
    for (int64_t c = begin; c < end; c++) {
      tfmm_cell *cell = &t->cells[c];
      cell->child_begin = cell->child_count > 0 ? (int32_t)next : -1;
      next += cell->child_count;
      if (next > INT32_MAX)
        return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                              "octree: more than %d cells", INT32_MAX);
    }
    if (next == end) {
      t->depth = level;
      break;
    }
    if (!reserve_cells(t, &capacity, next))
      return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                            "octree: out of memory for %lld cells",
                            (long long)next);
#pragma omp parallel for schedule(dynamic, 64) if (wide)
    for (int64_t c = begin; c < end; c++)
      if (t->cells[c].child_count > 0)
        add_children(t, (int32_t)c);
    t->ncells = next;
    t->level_begin[level + 2] = next;
  }
  /* Give back the slack of the doubling; keeping it is harmless. */
  tfmm_cell *fit = realloc(t->cells, (size_t)t->ncells * sizeof *fit);
  if (fit != NULL)
    t->cells = fit;
  return TFMM_OK;
}

/* The leaves in key order, which is depth-first order with children in
 * octant order. Two passes over the levels, each parallel within a level:
 * count the leaves under every cell bottom up, then hand each child its
 * first slot top down (its parent's slot plus its elder siblings' leaves),
 * reusing the counts' array for the slots. */
static tfmm_status collect_leaves(tfmm_octree *t, tfmm_error *err) {
  int32_t *slot = malloc((size_t)t->ncells * sizeof *slot);
  if (slot == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "octree: out of memory for the leaves");
  const tfmm_cell *cells = t->cells;
  for (int level = t->depth; level >= 0; level--) {
    int64_t begin = t->level_begin[level], end = t->level_begin[level + 1];
#pragma omp parallel for if (end - begin >= LEVEL_PARALLEL_MIN)
    for (int64_t c = begin; c < end; c++) {
      int32_t below = cells[c].child_count == 0;
      for (int32_t k = 0; k < cells[c].child_count; k++)
        below += slot[cells[c].child_begin + k];
      slot[c] = below;
    }
  }
  t->nleaves = slot[0];
  t->leaves = malloc((size_t)t->nleaves * sizeof *t->leaves);
  if (t->leaves == NULL) {
    free(slot);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "octree: out of memory for %lld leaves",
                          (long long)t->nleaves);
  }
  slot[0] = 0;
  for (int level = 0; level <= t->depth; level++) {
    int64_t begin = t->level_begin[level], end = t->level_begin[level + 1];
#pragma omp parallel for if (end - begin >= LEVEL_PARALLEL_MIN)
    for (int64_t c = begin; c < end; c++) {
      int32_t at = slot[c];
      if (cells[c].child_count == 0)
        t->leaves[at] = (int32_t)c;
      for (int32_t k = 0; k < cells[c].child_count; k++) {
        int32_t child = cells[c].child_begin + k, leaves = slot[child];
        slot[child] = at;
        at += leaves;
      }
    }
  }
  free(slot);
  return TFMM_OK;
}

/* ---- Stage 5: moments --------------------------------------------------- */

/* The cube of a cell of level l is named by the top 3l bits of its keys. */
static void cell_box(const tfmm_octree *t, tfmm_cell *c) {
  tfmm_key_cell_cube(t->keys[c->body_begin], c->level, t->box_min, t->box_size,
                     c->box_center, &c->size);
}

static double distance(const double a[3], const double b[3]) {
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The centre of mass is accumulated relative to the cell's cube, whose
 * centre is near it: the sums then keep the digits that distinguish the
 * bodies even far from the origin. A massless cell takes its cube's
 * centre. */
static void set_center(tfmm_cell *c, const double moment[3]) {
  for (int k = 0; k < 3; k++)
    c->center[k] = c->box_center[k] + (c->mass > 0 ? moment[k] / c->mass : 0.0);
}

static void leaf_moments(const tfmm_octree *t, tfmm_cell *c) {
  double mass = 0, moment[3] = {0, 0, 0};
  for (int64_t i = c->body_begin; i < c->body_end; i++) {
    mass += t->mass[i];
    for (int k = 0; k < 3; k++)
      moment[k] += t->mass[i] * (t->pos[3 * i + k] - c->box_center[k]);
  }
  c->mass = mass;
  set_center(c, moment);
  /* A lone body is its own centre, exactly: its cell then has radius 0,
   * not a rounding error, and its expansion is exact at any order. */
  if (c->body_end - c->body_begin == 1)
    memcpy(c->center, t->pos + 3 * c->body_begin, sizeof c->center);
  double radius = 0;
  for (int64_t i = c->body_begin; i < c->body_end; i++)
    radius = fmax(radius, distance(c->center, t->pos + 3 * i));
  c->radius = radius;
}

/* The largest distance from p to a body of cell c, or best if none is
 * farther. Branch and bound: the bodies of a child lie within its radius
 * of its centre, so none is farther from p than |centre - p| + radius.
 * Children are visited from the largest bound down and the rest dropped
 * once the bound cannot beat best. The result is the exact maximum over
 * the bodies, as a scan of all of them would give, but it reads only the
 * few leaves near the farthest one. */
static double farthest(const tfmm_octree *t, const double p[3], int32_t c,
                       double best) {
  const tfmm_cell *cell = &t->cells[c];
  if (cell->child_count == 0) {
    for (int64_t i = cell->body_begin; i < cell->body_end; i++)
      best = fmax(best, distance(p, t->pos + 3 * i));
    return best;
  }
  double bound[8];
  int32_t child[8];
  for (int32_t k = 0; k < cell->child_count; k++) {
    int32_t ch = cell->child_begin + k;
    const tfmm_cell *cc = &t->cells[ch];
    double b = (distance(p, cc->center) + cc->radius) * (1 + PRUNE_SLACK);
    int32_t j = k;
    for (; j > 0 && bound[j - 1] < b; j--) {
      bound[j] = bound[j - 1];
      child[j] = child[j - 1];
    }
    bound[j] = b;
    child[j] = ch;
  }
  for (int32_t k = 0; k < cell->child_count && bound[k] > best; k++)
    best = farthest(t, p, child[k], best);
  return best;
}

static void parent_moments(const tfmm_octree *t, int32_t c) {
  tfmm_cell *cell = &t->cells[c];
  double mass = 0, moment[3] = {0, 0, 0};
  for (int32_t k = 0; k < cell->child_count; k++) {
    const tfmm_cell *ch = &t->cells[cell->child_begin + k];
    mass += ch->mass;
    for (int j = 0; j < 3; j++)
      moment[j] += ch->mass * (ch->center[j] - cell->box_center[j]);
  }
  cell->mass = mass;
  set_center(cell, moment);
  /* An only child's centre is its parent's, exactly (as for a lone body). */
  if (cell->child_count == 1)
    memcpy(cell->center, t->cells[cell->child_begin].center,
           sizeof cell->center);
  cell->radius = farthest(t, cell->center, c, 0.0);
}

/* Leaves from their bodies, then every level from the bottom up: a
 * parent's mass and centre from its children's, its radius exact over its
 * bodies (the opening criterion relies on it enclosing them all). */
static void compute_moments(tfmm_octree *t) {
  const int cell_team = tfmm_team(t->ncells, TFMM_GRAIN_CELLS);
#pragma omp parallel for num_threads(cell_team)
  for (int64_t c = 0; c < t->ncells; c++)
    cell_box(t, &t->cells[c]);
  const int leaf_team = tfmm_team(t->nleaves, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 64) num_threads(leaf_team)
  for (int64_t k = 0; k < t->nleaves; k++)
    leaf_moments(t, &t->cells[t->leaves[k]]);
  for (int level = t->depth - 1; level >= 0; level--) {
    int64_t begin = t->level_begin[level], end = t->level_begin[level + 1];
    const int team = tfmm_team(end - begin, TFMM_GRAIN_EXPANSIONS);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
    for (int64_t c = begin; c < end; c++)
      if (t->cells[c].child_count > 0)
        parent_moments(t, (int32_t)c);
  }
}

/* ---- The public functions ----------------------------------------------- */

static tfmm_status check_arguments(size_t n, const double *pos,
                                   const double *mass, int leaf_size,
                                   int max_depth, tfmm_error *err) {
  if (n == 0)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "n = 0: the octree needs at least one body");
  if (pos == NULL || mass == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT, "%s is NULL",
                          pos == NULL ? "pos" : "mass");
  if (leaf_size < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "leaf_size = %d: must be >= 1", leaf_size);
  if (max_depth < 0 || max_depth > TFMM_MAX_DEPTH)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "max_depth = %d: must be in [0, %d]", max_depth,
                          TFMM_MAX_DEPTH);
  if (n > SIZE_MAX / (3 * sizeof(double)) || n > (size_t)INT64_MAX / 3)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "octree: %zu bodies do not fit in memory", n);
  return TFMM_OK;
}

tfmm_status tfmm_octree_build(tfmm_octree *t, size_t n, const double *pos,
                              const double *mass, int leaf_size, int max_depth,
                              tfmm_error *err) {
  return tfmm_octree_build_in(t, n, pos, mass, leaf_size, max_depth, NULL, err);
}

tfmm_status tfmm_octree_build_in(tfmm_octree *t, size_t n, const double *pos,
                                 const double *mass, int leaf_size,
                                 int max_depth, const double box[4],
                                 tfmm_error *err) {
  if (t == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT, "the octree is NULL");
  memset(t, 0, sizeof *t);
  tfmm_status st = check_arguments(n, pos, mass, leaf_size, max_depth, err);
  if (st != TFMM_OK)
    return st;
  t->n = n;
  t->leaf_size = leaf_size;
  t->max_depth = max_depth;

  double t0 = tfmm_wtime();
  t->keys = malloc(n * sizeof *t->keys);
  t->order = malloc(n * sizeof *t->order);
  if (t->keys == NULL || t->order == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "octree: out of memory for %zu keys", n);
  if ((st = box != NULL ? given_cube(t, pos, box, err)
                        : bounding_cube(t, pos, err)) != TFMM_OK)
    return st;
  make_keys(t, pos);
  double t1 = tfmm_wtime();
  t->times.keys = t1 - t0;

  if ((st = sort_keys(t, err)) != TFMM_OK)
    return st;
  double t2 = tfmm_wtime();
  t->times.sort = t2 - t1;

  if ((st = permute(t, pos, mass, err)) != TFMM_OK)
    return st;
  double t3 = tfmm_wtime();
  t->times.permute = t3 - t2;

  if ((st = build_cells(t, err)) != TFMM_OK ||
      (st = collect_leaves(t, err)) != TFMM_OK)
    return st;
  double t4 = tfmm_wtime();
  t->times.build = t4 - t3;

  compute_moments(t);
  t->times.moments = tfmm_wtime() - t4;
  return TFMM_OK;
}

void tfmm_octree_free(tfmm_octree *t) {
  if (t == NULL)
    return;
  free(t->pos);
  free(t->mass);
  free(t->order);
  free(t->keys);
  free(t->cells);
  free(t->leaves);
  free(t->level_begin);
  memset(t, 0, sizeof *t);
}

void tfmm_octree_occupancy(const tfmm_octree *t, int64_t *min, double *mean,
                           int64_t *max) {
  int64_t lo = INT64_MAX, hi = 0;
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_BODIES);
#pragma omp parallel for reduction(min                                         \
                                   : lo) reduction(max                         \
                                                   : hi) num_threads(team)
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *c = &t->cells[t->leaves[k]];
    int64_t count = c->body_end - c->body_begin;
    lo = count < lo ? count : lo;
    hi = count > hi ? count : hi;
  }
  if (t->nleaves == 0)
    lo = 0;
  *min = lo;
  *mean = t->nleaves > 0 ? (double)t->n / (double)t->nleaves : 0.0;
  *max = hi;
}
