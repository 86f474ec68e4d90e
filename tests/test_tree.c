/* The octree stages against independent truths: Morton keys against a
 * bit-by-bit interleaving and the geometry of the cubes, the radix sort
 * against qsort, and the built tree against its invariants checked body by
 * body (ranges, cubes, masses, centres, radii, leaves). */
#include "team.h"
#include "testutil.h"
#include "tree/accel_estimate.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Morton keys -------------------------------------------------------- */

/* Interleaves the grid indices one bit at a time, x highest in a triple. */
static uint64_t naive_interleave(const uint64_t index[3]) {
  uint64_t key = 0;
  for (int bit = TFMM_MORTON_BITS - 1; bit >= 0; bit--)
    for (int k = 0; k < 3; k++)
      key = key << 1 | ((index[k] >> bit) & 1);
  return key;
}

/* The l-bit grid index along axis k named by the top 3l bits of key. */
static uint64_t prefix_index(uint64_t key, int level, int k) {
  uint64_t index = 0;
  for (int j = 0; j < level; j++) {
    int bit = 3 * (TFMM_MAX_DEPTH - 1 - j) + (2 - k);
    index = index << 1 | ((key >> bit) & 1);
  }
  return index;
}

Test(morton, matches_bitwise_interleaving_at_cell_centres) {
  test_rng rng = {test_fresh_seed()};
  uint64_t seed = rng.state;
  const double lo[3] = {-3.0, 0.5, 1024.0}, size = 8.0;
  for (int trial = 0; trial < 20000; trial++) {
    uint64_t index[3];
    double x[3];
    for (int k = 0; k < 3; k++) {
      index[k] = (uint64_t)(test_uniform(&rng) * (1 << TFMM_MORTON_BITS));
      /* The centre of a grid cell: exact in double, far from its faces. */
      x[k] = lo[k] + ((double)index[k] + 0.5) * size / (1 << TFMM_MORTON_BITS);
    }
    cr_assert_eq(tfmm_morton_encode(x, lo, size), naive_interleave(index),
                 "seed %llu index %llu %llu %llu", (unsigned long long)seed,
                 (unsigned long long)index[0], (unsigned long long)index[1],
                 (unsigned long long)index[2]);
  }
}

Test(morton, corners_and_clamping) {
  const double lo[3] = {0, 0, 0};
  const double origin[3] = {0, 0, 0}, below[3] = {-1, -5, -0.25};
  const double top[3] = {1, 1, 1}, above[3] = {7, 2, 1e300};
  const uint64_t all = (UINT64_C(1) << 63) - 1;
  cr_assert_eq(tfmm_morton_encode(origin, lo, 1.0), 0);
  cr_assert_eq(tfmm_morton_encode(below, lo, 1.0), 0);
  cr_assert_eq(tfmm_morton_encode(top, lo, 1.0), all);
  cr_assert_eq(tfmm_morton_encode(above, lo, 1.0), all);
  /* One axis alone: x owns the highest bit of each triple. */
  const double x_only[3] = {0.75, 0, 0};
  uint64_t index[3] = {3u << (TFMM_MORTON_BITS - 2), 0, 0};
  cr_assert_eq(tfmm_morton_encode(x_only, lo, 1.0), naive_interleave(index));
  cr_assert_eq(tfmm_morton_encode(x_only, lo, 1.0) >> 60, 4);
}

/* The cell of level l that holds a body is named by its key's prefix: the
 * octant found by halving the cube l times along each axis. */
Test(morton, prefix_names_the_octant_at_every_level) {
  uint64_t seed = test_fresh_seed();
  /* On the 2^-22 grid, so that scaling by 2^l is exact. */
  test_bodies b = test_bodies_make(5000, TEST_UNIFORM, seed);
  const double lo[3] = {0, 0, 0};
  for (size_t i = 0; i < b.n; i++) {
    const double *x = b.pos + 3 * i;
    uint64_t key = tfmm_morton_encode(x, lo, 1.0);
    for (int level = 0; level <= TFMM_MAX_DEPTH; level++)
      for (int k = 0; k < 3; k++) {
        /* The clamp: a body on the upper face belongs to the last cell. */
        uint64_t want =
            (uint64_t)fmin(floor(ldexp(x[k], level)), ldexp(1.0, level) - 1);
        cr_assert_eq(prefix_index(key, level, k), want,
                     "seed %llu body %zu level %d axis %d",
                     (unsigned long long)seed, i, level, k);
      }
  }
  test_bodies_free(&b);
}

Test(morton, order_follows_the_cubes) {
  /* Two points in different octants of level 1 order by octant number,
   * whatever they do at deeper levels. */
  const double lo[3] = {0, 0, 0};
  const double a[3] = {0.49, 0.99, 0.99}, b[3] = {0.51, 0.01, 0.01};
  const double c[3] = {0.01, 0.01, 0.51}, d[3] = {0.01, 0.49, 0.49};
  cr_assert_lt(tfmm_morton_encode(a, lo, 1.0), tfmm_morton_encode(b, lo, 1.0));
  cr_assert_lt(tfmm_morton_encode(d, lo, 1.0), tfmm_morton_encode(c, lo, 1.0));
}

/* ---- Radix sort --------------------------------------------------------- */

typedef struct pair {
  uint64_t key;
  int64_t idx;
} pair;

static int pair_compare(const void *pa, const void *pb) {
  const pair *a = pa, *b = pb;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

static uint64_t random_bits(test_rng *rng) {
  return (uint64_t)(test_uniform(rng) * 0x1p32) << 32 |
         (uint64_t)(test_uniform(rng) * 0x1p32);
}

/* Sorts keys with idx = 0..n-1 and compares with qsort by (key, index):
 * equal keys keeping their input order is exactly stability. */
static void check_sort(const uint64_t *input, size_t n, const char *what) {
  uint64_t *keys = malloc((n + 1) * sizeof *keys);
  int64_t *idx = malloc((n + 1) * sizeof *idx);
  uint64_t *key_scratch = malloc((n + 1) * sizeof *key_scratch);
  int64_t *idx_scratch = malloc((n + 1) * sizeof *idx_scratch);
  pair *ref = malloc((n + 1) * sizeof *ref);
  cr_assert(keys && idx && key_scratch && idx_scratch && ref);
  for (size_t i = 0; i < n; i++) {
    keys[i] = input[i];
    idx[i] = (int64_t)i;
    ref[i] = (pair){input[i], (int64_t)i};
  }
  qsort(ref, n, sizeof *ref, pair_compare);
  tfmm_radix_sort(n, keys, idx, key_scratch, idx_scratch);
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(keys[i], ref[i].key, "%s: n %zu, key %zu", what, n, i);
    cr_assert_eq(idx[i], ref[i].idx, "%s: n %zu, index %zu", what, n, i);
  }
  free(keys);
  free(idx);
  free(key_scratch);
  free(idx_scratch);
  free(ref);
}

/* Keys of n random bits masked by mask; with few distinct values when
 * `distinct` > 0, so that stability is tested on many equal keys. */
static uint64_t *random_keys(size_t n, uint64_t mask, int distinct,
                             test_rng *rng) {
  uint64_t *keys = malloc((n + 1) * sizeof *keys);
  uint64_t pool[16];
  for (int d = 0; d < 16; d++)
    pool[d] = random_bits(rng) & mask;
  for (size_t i = 0; i < n; i++)
    keys[i] = distinct > 0 ? pool[(size_t)(test_uniform(rng) * distinct)]
                           : random_bits(rng) & mask;
  return keys;
}

static const size_t sort_sizes[] = {0,    1,     2,     3,     7,     100,
                                    1000, 16383, 16384, 16385, 100003};

static void check_sort_family(uint64_t mask, int distinct, const char *what) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  char label[128];
  snprintf(label, sizeof label, "%s seed %llu", what, (unsigned long long)seed);
  for (size_t s = 0; s < sizeof sort_sizes / sizeof *sort_sizes; s++) {
    uint64_t *keys = random_keys(sort_sizes[s], mask, distinct, &rng);
    check_sort(keys, sort_sizes[s], label);
    free(keys);
  }
}

static const uint64_t key_bits = (UINT64_C(1) << 63) - 1;

Test(radix_sort, random_63_bit_keys) {
  check_sort_family(key_bits, 0, "63 bits");
}
Test(radix_sort, random_64_bit_keys) {
  check_sort_family(~UINT64_C(0), 0, "64 bits");
}
Test(radix_sort, few_distinct_keys_stay_stable) {
  check_sort_family(key_bits, 5, "5 distinct");
  check_sort_family(~UINT64_C(0), 2, "2 distinct");
}
/* One varying digit: an odd number of passes ends in the scratch arrays. */
Test(radix_sort, one_varying_digit) {
  check_sort_family(UINT64_C(0xff) << 24, 0, "one digit");
  check_sort_family(UINT64_C(0xff) << 56, 7, "top digit");
}
Test(radix_sort, two_and_three_varying_digits) {
  check_sort_family(UINT64_C(0x0f00000000000f00), 0, "two digits");
  check_sort_family(UINT64_C(0x00ff0000ff0000ff), 0, "three digits");
}

Test(radix_sort, all_keys_equal) {
  const size_t n = 50000;
  uint64_t *keys = malloc(n * sizeof *keys);
  for (size_t i = 0; i < n; i++)
    keys[i] = UINT64_C(0x1234567890abcdef);
  check_sort(keys, n, "all equal");
  for (size_t i = 0; i < n; i++)
    keys[i] = 0;
  check_sort(keys, n, "all zero");
  free(keys);
}

Test(radix_sort, any_number_of_threads) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  char label[64];
  int saved = omp_get_max_threads();
  const int threads[] = {1, 3, 5, 16};
  for (int k = 0; k < 4; k++) {
    omp_set_num_threads(threads[k]);
    snprintf(label, sizeof label, "%d threads seed %llu", threads[k],
             (unsigned long long)seed);
    uint64_t *keys = random_keys(70001, key_bits, 0, &rng);
    check_sort(keys, 70001, label);
    free(keys);
    keys = random_keys(70001, key_bits, 3, &rng);
    check_sort(keys, 70001, label);
    free(keys);
  }
  omp_set_num_threads(saved);
}

/* ---- The tree: invariants ----------------------------------------------- */

typedef struct tree_case {
  const char *name;
  uint64_t seed;
  int leaf_size, max_depth;
} tree_case;

#define CASE_FMT "%s seed %llu n %zu L %d depth %d"
#define CASE_ARGS(c, n)                                                        \
  (c)->name, (unsigned long long)(c)->seed, (size_t)(n), (c)->leaf_size,       \
      (c)->max_depth

/* The rounding allowed in a coordinate compared with a cube's face: the
 * key maps x to the grid with one multiplication, the cube is rebuilt by
 * another; both err by a few ulps of the coordinates. */
static double slack(double size, double x, double y) {
  return 1e-9 * size + 8 * 0x1p-52 * (fabs(x) + fabs(y));
}

static void check_bodies(const tfmm_octree *t, const test_bodies *b,
                         const tree_case *c) {
  size_t n = b->n;
  cr_assert_eq(t->n, n, CASE_FMT, CASE_ARGS(c, n));
  char *seen = calloc(n, 1);
  for (size_t k = 0; k < n; k++) {
    int64_t i = t->order[k];
    cr_assert(i >= 0 && (size_t)i < n && !seen[i],
              CASE_FMT ": order is not a permutation at %zu", CASE_ARGS(c, n),
              k);
    seen[i] = 1;
    for (int d = 0; d < 3; d++)
      cr_assert_eq(t->pos[3 * k + d], b->pos[3 * i + d], CASE_FMT,
                   CASE_ARGS(c, n));
    cr_assert_eq(t->mass[k], b->mass[i], CASE_FMT, CASE_ARGS(c, n));
    cr_assert_eq(t->keys[k],
                 tfmm_morton_encode(t->pos + 3 * k, t->box_min, t->box_size),
                 CASE_FMT ": key %zu", CASE_ARGS(c, n), k);
    cr_assert(k == 0 || t->keys[k - 1] <= t->keys[k],
              CASE_FMT ": keys not sorted at %zu", CASE_ARGS(c, n), k);
    for (int d = 0; d < 3; d++) {
      double x = t->pos[3 * k + d];
      cr_assert(x >= t->box_min[d] && x <= t->box_min[d] + t->box_size,
                CASE_FMT ": body %zu outside the bounding cube",
                CASE_ARGS(c, n), k);
    }
  }
  free(seen);
  cr_assert(t->box_size > 0 && isfinite(t->box_size));
}

/* Levels contiguous, root first, depth within bounds. */
static void check_levels(const tfmm_octree *t, const tree_case *c) {
  cr_assert(t->depth >= 0 && t->depth <= c->max_depth, CASE_FMT,
            CASE_ARGS(c, t->n));
  cr_assert_eq(t->level_begin[0], 0);
  cr_assert_eq(t->level_begin[1], 1);
  cr_assert_eq(t->level_begin[t->depth + 1], t->ncells, CASE_FMT,
               CASE_ARGS(c, t->n));
  const tfmm_cell *root = &t->cells[0];
  cr_assert(root->level == 0 && root->parent == -1 && root->body_begin == 0 &&
            root->body_end == (int64_t)t->n);
  for (int level = 0; level <= t->depth; level++) {
    cr_assert_lt(t->level_begin[level], t->level_begin[level + 1],
                 CASE_FMT ": level %d empty", CASE_ARGS(c, t->n), level);
    for (int64_t k = t->level_begin[level]; k < t->level_begin[level + 1]; k++)
      cr_assert_eq(t->cells[k].level, level, CASE_FMT ": cell %lld",
                   CASE_ARGS(c, t->n), (long long)k);
  }
}

/* A cell splits exactly when it must: more than L bodies, above the
 * deepest level, and bodies with two different keys. */
static void check_split_rule(const tfmm_octree *t, const tfmm_cell *cell,
                             const tree_case *c, int64_t k) {
  int64_t count = cell->body_end - cell->body_begin;
  int splittable = count > c->leaf_size && cell->level < c->max_depth &&
                   t->keys[cell->body_begin] != t->keys[cell->body_end - 1];
  cr_assert_eq(cell->child_count > 0, splittable,
               CASE_FMT ": cell %lld with %lld bodies at level %d",
               CASE_ARGS(c, t->n), (long long)k, (long long)count, cell->level);
}

static void check_children(const tfmm_octree *t, const tfmm_cell *cell,
                           const tree_case *c, int64_t k) {
  if (cell->child_count == 0) {
    cr_assert_eq(cell->child_begin, -1);
    return;
  }
  cr_assert(cell->child_count >= 1 && cell->child_count <= 8);
  cr_assert(cell->child_begin > k &&
            cell->child_begin + cell->child_count <= t->ncells);
  int64_t at = cell->body_begin;
  int last_octant = -1;
  for (int32_t j = 0; j < cell->child_count; j++) {
    const tfmm_cell *ch = &t->cells[cell->child_begin + j];
    cr_assert(ch->parent == k && ch->level == cell->level + 1,
              CASE_FMT ": child %d of cell %lld", CASE_ARGS(c, t->n), j,
              (long long)k);
    /* The children's ranges partition the parent's, in order. */
    cr_assert(ch->body_begin == at && ch->body_end > ch->body_begin,
              CASE_FMT ": child %d of cell %lld", CASE_ARGS(c, t->n), j,
              (long long)k);
    at = ch->body_end;
    /* A child is one octant of its parent's cube, in octant order. */
    cr_assert_eq(ch->size, cell->size / 2);
    int octant = 0;
    for (int d = 0; d < 3; d++) {
      double off = ch->box_center[d] - cell->box_center[d];
      cr_assert(fabs(fabs(off) - cell->size / 4) <=
                    slack(cell->size, ch->box_center[d], cell->box_center[d]),
                CASE_FMT ": child %d of cell %lld not an octant",
                CASE_ARGS(c, t->n), j, (long long)k);
      octant = 2 * octant + (off > 0);
    }
    cr_assert_gt(octant, last_octant, CASE_FMT ": cell %lld octant order",
                 CASE_ARGS(c, t->n), (long long)k);
    last_octant = octant;
  }
  cr_assert_eq(at, cell->body_end, CASE_FMT ": cell %lld", CASE_ARGS(c, t->n),
               (long long)k);
}

/* Mass, centre of mass, cube and radius of a cell against its bodies. */
static void check_moments(const tfmm_octree *t, const tfmm_cell *cell,
                          const tree_case *c, int64_t k) {
  cr_assert_eq(cell->size, ldexp(t->box_size, -cell->level));
  double mass = 0, moment[3] = {0, 0, 0};
  for (int64_t i = cell->body_begin; i < cell->body_end; i++) {
    mass += t->mass[i];
    for (int d = 0; d < 3; d++) {
      double x = t->pos[3 * i + d];
      moment[d] += t->mass[i] * x;
      cr_assert(fabs(x - cell->box_center[d]) <=
                    cell->size / 2 + slack(cell->size, x, cell->box_center[d]),
                CASE_FMT ": body %lld outside cell %lld", CASE_ARGS(c, t->n),
                (long long)i, (long long)k);
    }
  }
  cr_assert(fabs(cell->mass - mass) <= 1e-12 * mass, CASE_FMT ": cell %lld",
            CASE_ARGS(c, t->n), (long long)k);
  for (int d = 0; d < 3; d++)
    cr_assert(fabs(cell->center[d] - moment[d] / mass) <=
                  1e-12 * cell->size + 1e-14 * fabs(cell->center[d]),
              CASE_FMT ": centre of cell %lld", CASE_ARGS(c, t->n),
              (long long)k);
  double farthest = 0;
  for (int64_t i = cell->body_begin; i < cell->body_end; i++) {
    const double *x = t->pos + 3 * i;
    double dx = x[0] - cell->center[0], dy = x[1] - cell->center[1],
           dz = x[2] - cell->center[2];
    farthest = fmax(farthest, sqrt(dx * dx + dy * dy + dz * dz));
  }
  /* A lone body is its cell's centre, exactly, and the radius is 0. */
  if (cell->body_end - cell->body_begin == 1) {
    const double *x = t->pos + 3 * cell->body_begin;
    cr_assert(cell->center[0] == x[0] && cell->center[1] == x[1] &&
                  cell->center[2] == x[2] && cell->radius == 0,
              CASE_FMT ": cell %lld of one body", CASE_ARGS(c, t->n),
              (long long)k);
  }
  /* Encloses every body, and is attained by one. */
  cr_assert(cell->radius >= farthest && cell->radius <= farthest * (1 + 1e-14),
            CASE_FMT ": cell %lld radius %.17g, farthest body %.17g",
            CASE_ARGS(c, t->n), (long long)k, cell->radius, farthest);
}

/* The leaves, in key order, tile the bodies: each body in exactly one. */
static void check_leaves(const tfmm_octree *t, const tree_case *c) {
  int64_t leaf_cells = 0, lo = INT64_MAX, hi = 0;
  for (int64_t k = 0; k < t->ncells; k++)
    leaf_cells += t->cells[k].child_count == 0;
  cr_assert_eq(t->nleaves, leaf_cells, CASE_FMT, CASE_ARGS(c, t->n));
  int64_t at = 0;
  for (int64_t k = 0; k < t->nleaves; k++) {
    const tfmm_cell *leaf = &t->cells[t->leaves[k]];
    cr_assert(leaf->child_count == 0 && leaf->body_begin == at,
              CASE_FMT ": leaf %lld", CASE_ARGS(c, t->n), (long long)k);
    at = leaf->body_end;
    int64_t count = leaf->body_end - leaf->body_begin;
    lo = count < lo ? count : lo;
    hi = count > hi ? count : hi;
  }
  cr_assert_eq(at, (int64_t)t->n, CASE_FMT, CASE_ARGS(c, t->n));
  int64_t min = -1, max = -1;
  double mean = -1;
  tfmm_octree_occupancy(t, &min, &mean, &max);
  cr_assert(min == lo && max == hi &&
                fabs(mean - (double)t->n / (double)t->nleaves) <= 1e-12 * mean,
            CASE_FMT, CASE_ARGS(c, t->n));
}

static void check_tree(const tfmm_octree *t, const test_bodies *b,
                       const tree_case *c) {
  cr_assert_eq(t->leaf_size, c->leaf_size);
  cr_assert_eq(t->max_depth, c->max_depth);
  check_bodies(t, b, c);
  check_levels(t, c);
  for (int64_t k = 0; k < t->ncells; k++) {
    const tfmm_cell *cell = &t->cells[k];
    check_split_rule(t, cell, c, k);
    check_children(t, cell, c, k);
    check_moments(t, cell, c, k);
  }
  check_leaves(t, c);
  const tfmm_tree_times *tm = &t->times;
  cr_assert(tm->keys >= 0 && tm->sort >= 0 && tm->permute >= 0 &&
            tm->build >= 0 && tm->moments >= 0);
}

/* Builds over a poisoned struct (the build must clear it), checks, frees. */
static void build_and_check(const test_bodies *b, const tree_case *c) {
  tfmm_octree t;
  memset(&t, 0xa5, sizeof t);
  tfmm_error err = {{0}};
  tfmm_status st = tfmm_octree_build(&t, b->n, b->pos, b->mass, c->leaf_size,
                                     c->max_depth, &err);
  cr_assert_eq(st, TFMM_OK, CASE_FMT ": %s", CASE_ARGS(c, b->n), err.message);
  check_tree(&t, b, c);
  tfmm_octree_free(&t);
  cr_assert_null(t.cells);
}

static void check_layout(test_layout layout, const char *name) {
  static const size_t sizes[] = {1, 2, 5, 17, 300, 5000, 30000};
  static const int leaf_sizes[] = {1, 3, 16, 64};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int l = 0; l < 4; l++) {
      tree_case c = {name, test_fresh_seed(), leaf_sizes[l], TFMM_MAX_DEPTH};
      test_bodies b = test_bodies_make(sizes[s], layout, c.seed);
      build_and_check(&b, &c);
      test_bodies_free(&b);
    }
}

Test(octree, uniform) { check_layout(TEST_UNIFORM, "uniform"); }
Test(octree, clustered) { check_layout(TEST_CLUSTERED, "clustered"); }

/* Unsnapped positions: keys then fall anywhere, not on the grid. */
Test(octree, raw_positions) {
  tree_case c = {"raw", test_fresh_seed(), 8, TFMM_MAX_DEPTH};
  test_bodies b = test_bodies_make_raw(20000, TEST_CLUSTERED, c.seed);
  build_and_check(&b, &c);
  test_bodies_free(&b);
}

/* Far from the origin the cubes are rebuilt from large coordinates. */
Test(octree, far_from_the_origin) {
  tree_case c = {"shifted", test_fresh_seed(), 4, TFMM_MAX_DEPTH};
  test_bodies b = test_bodies_make_raw(5000, TEST_CLUSTERED, c.seed);
  for (size_t i = 0; i < 3 * b.n; i++)
    b.pos[i] = 1e6 + 1e-3 * b.pos[i];
  build_and_check(&b, &c);
  test_bodies_free(&b);
}

Test(octree, limited_depth) {
  static const int depths[] = {0, 1, 2, 5};
  for (int k = 0; k < 4; k++) {
    tree_case c = {"depth-limited", test_fresh_seed(), 2, depths[k]};
    test_bodies b = test_bodies_make(3000, TEST_CLUSTERED, c.seed);
    build_and_check(&b, &c);
    test_bodies_free(&b);
  }
}

Test(octree, one_to_ten_bodies_leaf_size_one) {
  for (size_t n = 1; n <= 10; n++)
    for (int layout = 0; layout < 2; layout++) {
      tree_case c = {layout ? "clustered" : "uniform", test_fresh_seed(), 1,
                     TFMM_MAX_DEPTH};
      test_bodies b = test_bodies_make(n, (test_layout)layout, c.seed);
      build_and_check(&b, &c);
      test_bodies_free(&b);
    }
}

/* Same input, any number of threads: the same tree, bit for bit. */
Test(octree, independent_of_thread_count) {
  uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(40000, TEST_CLUSTERED, seed);
  int saved = omp_get_max_threads();
  tfmm_octree t[2];
  tfmm_error err;
  const int threads[2] = {1, 5};
  for (int k = 0; k < 2; k++) {
    omp_set_num_threads(threads[k]);
    cr_assert_eq(
        tfmm_octree_build(&t[k], b.n, b.pos, b.mass, 8, TFMM_MAX_DEPTH, &err),
        TFMM_OK, "%s", err.message);
  }
  omp_set_num_threads(saved);
  cr_assert_eq(t[0].ncells, t[1].ncells, "seed %llu", (unsigned long long)seed);
  cr_assert_eq(t[0].nleaves, t[1].nleaves);
  cr_assert(memcmp(t[0].cells, t[1].cells,
                   (size_t)t[0].ncells * sizeof *t[0].cells) == 0,
            "seed %llu", (unsigned long long)seed);
  cr_assert(memcmp(t[0].leaves, t[1].leaves,
                   (size_t)t[0].nleaves * sizeof *t[0].leaves) == 0);
  cr_assert(memcmp(t[0].order, t[1].order, b.n * sizeof *t[0].order) == 0);
  tfmm_octree_free(&t[0]);
  tfmm_octree_free(&t[1]);
  test_bodies_free(&b);
}

/* ---- Degenerate inputs -------------------------------------------------- */

static test_bodies bodies_alloc(size_t n) {
  test_bodies b = {n, malloc(3 * n * sizeof(double)),
                   malloc(n * sizeof(double))};
  for (size_t i = 0; i < n; i++)
    b.mass[i] = 1.0 + (double)(i % 7);
  return b;
}

Test(octree, all_bodies_at_one_point) {
  tree_case c = {"one point", 0, 4, TFMM_MAX_DEPTH};
  test_bodies b = bodies_alloc(1000);
  for (size_t i = 0; i < 3 * b.n; i++)
    b.pos[i] = 0.375;
  build_and_check(&b, &c);
  tfmm_octree t;
  tfmm_error err;
  cr_assert_eq(
      tfmm_octree_build(&t, b.n, b.pos, b.mass, 4, TFMM_MAX_DEPTH, &err),
      TFMM_OK);
  /* One leaf past L: no level can separate coincident bodies. */
  cr_assert(t.ncells == 1 && t.nleaves == 1 && t.depth == 0);
  cr_assert_eq(t.cells[0].radius, 0);
  cr_assert_eq(t.box_size, 1.0);
  tfmm_octree_free(&t);
  test_bodies_free(&b);
}

Test(octree, one_body) {
  tree_case c = {"one body", 0, 1, TFMM_MAX_DEPTH};
  test_bodies b = bodies_alloc(1);
  b.pos[0] = -2.5;
  b.pos[1] = 1e9;
  b.pos[2] = 3;
  build_and_check(&b, &c);
  test_bodies_free(&b);
}

/* Closer than the key resolution: one leaf of two bodies with L = 1. */
Test(octree, bodies_closer_than_the_grid) {
  tree_case c = {"close pair", 0, 1, TFMM_MAX_DEPTH};
  test_bodies b = bodies_alloc(3);
  const double x[9] = {0, 0, 0, 1, 1, 1, 1 + 1e-9, 1, 1};
  memcpy(b.pos, x, sizeof x);
  build_and_check(&b, &c);
  test_bodies_free(&b);
}

Test(octree, two_distant_clusters) {
  uint64_t seed = test_fresh_seed();
  tree_case c = {"two clusters", seed, 8, TFMM_MAX_DEPTH};
  test_bodies b = test_bodies_make_raw(4000, TEST_UNIFORM, seed);
  for (size_t i = 0; i < b.n; i++)
    for (int d = 0; d < 3; d++) {
      double *x = &b.pos[3 * i + d];
      *x = (i % 2 ? 1e6 : -1e6) + 1e-4 * *x;
    }
  build_and_check(&b, &c);
  /* A point cluster beside a single far body. */
  for (size_t i = 0; i < 3 * b.n; i++)
    b.pos[i] = 1e-3;
  b.pos[0] = b.pos[1] = b.pos[2] = 1e3;
  build_and_check(&b, &c);
  test_bodies_free(&b);
}

Test(octree, bodies_on_a_line) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  tree_case c = {"line", seed, 5, TFMM_MAX_DEPTH};
  test_bodies b = bodies_alloc(3000);
  for (size_t i = 0; i < b.n; i++) {
    b.pos[3 * i] = test_uniform(&rng);
    b.pos[3 * i + 1] = 0.25;
    b.pos[3 * i + 2] = -7;
  }
  build_and_check(&b, &c);
  /* Evenly spaced along a diagonal, as a grid of initial conditions. */
  for (size_t i = 0; i < b.n; i++)
    for (int d = 0; d < 3; d++)
      b.pos[3 * i + d] = (double)i / (double)b.n;
  build_and_check(&b, &c);
  test_bodies_free(&b);
}

/* ---- Arguments ---------------------------------------------------------- */

static void expect_invalid(size_t n, const double *pos, const double *mass,
                           int leaf_size, int max_depth, const char *name) {
  tfmm_octree t;
  memset(&t, 0xa5, sizeof t);
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_octree_build(&t, n, pos, mass, leaf_size, max_depth, &err),
               TFMM_ERR_INVALID_ARGUMENT, "%s", name);
  cr_assert_not_null(strstr(err.message, name), "'%s' lacks '%s'", err.message,
                     name);
  tfmm_octree_free(&t);
}

Test(octree, invalid_arguments) {
  double pos[3] = {0, 0, 0}, mass[1] = {1};
  expect_invalid(0, pos, mass, 4, 10, "n = 0");
  expect_invalid(1, NULL, mass, 4, 10, "pos");
  expect_invalid(1, pos, NULL, 4, 10, "mass");
  expect_invalid(1, pos, mass, 0, 10, "leaf_size");
  expect_invalid(1, pos, mass, -3, 10, "leaf_size");
  expect_invalid(1, pos, mass, 4, -1, "max_depth");
  expect_invalid(1, pos, mass, 4, TFMM_MAX_DEPTH + 1, "max_depth");
  double wide[6] = {-1e308, 0, 0, 1e308, 0, 0}, two[2] = {1, 1};
  expect_invalid(2, wide, two, 4, 10, "span");
}

/* Keys for 2^44 bodies need the whole 47-bit address space: the build
 * fails before it reads a body, and the partial tree can still be freed. */
Test(octree, out_of_memory_is_an_error) {
  double pos[3] = {0, 0, 0}, mass[1] = {1};
  tfmm_octree t;
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_octree_build(&t, (size_t)1 << 44, pos, mass, 4, 10, &err),
               TFMM_ERR_NO_MEMORY);
  cr_assert_not_null(strstr(err.message, "memory"), "%s", err.message);
  tfmm_octree_free(&t);
  cr_assert_null(t.keys);
}

/* ---- The error criterion's accelerations (tree/accel_estimate.h) ------- */

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Each leaf's estimate against the field at its centre of mass from every
 * body outside it, summed directly in double; each inner cell holds the
 * least of its children. */
static void check_accel_estimate(test_layout layout, size_t n, int leaf) {
  uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(n, layout, seed);
  tfmm_octree t;
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_octree_build(&t, b.n, b.pos, b.mass, leaf, 21, &err),
               TFMM_OK, "%s", err.message);
  double *a = tfmm_accel_estimate(&t, 0);
  cr_assert_not_null(a);
  double *rel = malloc((size_t)t.nleaves * sizeof *rel);
  for (int64_t k = 0; k < t.nleaves; k++) {
    const tfmm_cell *L = &t.cells[t.leaves[k]];
    double g[3] = {0, 0, 0};
    for (int64_t j = 0; j < (int64_t)t.n; j++) {
      if (j >= L->body_begin && j < L->body_end)
        continue;
      double d[3], r2 = 0;
      for (int c = 0; c < 3; c++) {
        d[c] = t.pos[3 * j + c] - L->center[c];
        r2 += d[c] * d[c];
      }
      for (int c = 0; c < 3; c++)
        g[c] += t.mass[j] * d[c] / (r2 * sqrt(r2));
    }
    double truth = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    rel[k] = fabs(a[t.leaves[k]] - truth) / truth;
  }
  for (int64_t c = 0; c < t.ncells; c++) {
    const tfmm_cell *C = &t.cells[c];
    double least = INFINITY;
    for (int32_t j = 0; j < C->child_count; j++)
      least = fmin(least, a[C->child_begin + j]);
    if (C->child_count > 0)
      cr_assert_eq(a[c], least,
                   "seed %llu: cell %lld is not the least of "
                   "its children",
                   (unsigned long long)seed, (long long)c);
  }
  qsort(rel, (size_t)t.nleaves, sizeof *rel, cmp_dbl);
  double med = rel[t.nleaves / 2], p95 = rel[(t.nleaves * 95) / 100];
  cr_log_info("seed %llu n %zu leaf %d: estimate's relative error median "
              "%.3g, p95 %.3g, max %.3g over %lld leaves",
              (unsigned long long)seed, n, leaf, med, p95, rel[t.nleaves - 1],
              (long long)t.nleaves);
  cr_expect_lt(med, 0.02, "seed %llu: median %.3g", (unsigned long long)seed,
               med);
  cr_expect_lt(p95, 0.1, "seed %llu: p95 %.3g", (unsigned long long)seed, p95);
  free(rel);
  free(a);
  tfmm_octree_free(&t);
  test_bodies_free(&b);
}

Test(accel_estimate, uniform) { check_accel_estimate(TEST_UNIFORM, 20000, 32); }
Test(accel_estimate, clustered) {
  check_accel_estimate(TEST_CLUSTERED, 20000, 16);
}

/* Teams sized to the work (src/team.h): one thread below a grain, one
 * more per grain, never more than OpenMP allows. */
Test(team, sized_to_the_work) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(4);
  cr_expect_eq(tfmm_team(0, 100), 1);
  cr_expect_eq(tfmm_team(99, 100), 1);
  cr_expect_eq(tfmm_team(250, 100), 2);
  cr_expect_eq(tfmm_team(300, 100), 3);
  cr_expect_eq(tfmm_team(1e12, 100), 4);
  omp_set_num_threads(saved);
}

/* A cube given by the caller: the tree's keys are taken in it exactly
 * (two body sets in one cube share one key space); a body outside it is
 * refused, named. */
Test(octree, given_cube) {
  const double box[4] = {-3, -2, -1, 8};
  for (int k = 0; k < 2; k++) {
    test_bodies b = test_bodies_make(500, TEST_CLUSTERED, test_fresh_seed());
    tfmm_octree t;
    tfmm_error err = {{0}};
    cr_assert_eq(tfmm_octree_build_in(&t, b.n, b.pos, b.mass, 8, 21, box, &err),
                 TFMM_OK, "%s", err.message);
    for (int d = 0; d < 3; d++)
      cr_assert_eq(t.box_min[d], box[d]);
    cr_assert_eq(t.box_size, box[3]);
    for (size_t s = 0; s < t.n; s++)
      cr_assert_eq(t.keys[s], tfmm_morton_encode(t.pos + 3 * s, box, box[3]));
    tfmm_octree_free(&t);
    b.pos[3 * 42 + 2] = 7.5; /* z beyond -1 + 8 */
    cr_assert_eq(tfmm_octree_build_in(&t, b.n, b.pos, b.mass, 8, 21, box, &err),
                 TFMM_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(err.message, "body 42") != NULL, "%s", err.message);
    tfmm_octree_free(&t);
    test_bodies_free(&b);
  }
}
