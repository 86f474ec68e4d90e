#include "tree/coincident.h"

#include "team.h"

#include "bodies.h"

#include <stdlib.h>

/* Keeps (a, b), a < b, if it precedes the best pair so far. */
static void keep(int64_t a, int64_t b, int64_t *bi, int64_t *bj) {
  if (a > b) {
    int64_t s = a;
    a = b;
    b = s;
  }
  if (a < *bi || (a == *bi && b < *bj)) {
    *bi = a;
    *bj = b;
  }
}

/* Bodies [begin, end) share a key: sort them by position, compare
 * neighbours. Returns -1 when out of memory. */
static int search_run(const tfmm_octree *t, int64_t begin, int64_t end,
                      int64_t *bi, int64_t *bj) {
  const int64_t m = end - begin;
  tfmm_point_key *e = malloc((size_t)m * sizeof *e);
  if (e == NULL)
    return -1;
  for (int64_t k = 0; k < m; k++) {
    const double *x = t->pos + 3 * (begin + k);
    e[k] = (tfmm_point_key){x[0], x[1], x[2], t->order[begin + k]};
  }
  qsort(e, (size_t)m, sizeof *e, tfmm_point_key_compare);
  for (int64_t k = 1; k < m; k++)
    if (e[k].x == e[k - 1].x && e[k].y == e[k - 1].y && e[k].z == e[k - 1].z)
      keep(e[k - 1].index, e[k].index, bi, bj);
  free(e);
  return 0;
}

int tfmm_octree_find_coincident(const tfmm_octree *t, int64_t *i, int64_t *j) {
  const int64_t n = (int64_t)t->n;
  int64_t bi = INT64_MAX, bj = INT64_MAX;
  int bad = 0;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel num_threads(team)
  {
    int64_t li = INT64_MAX, lj = INT64_MAX;
    /* A run is handled by the thread that owns its first body. */
#pragma omp for schedule(static) reduction(| : bad)
    for (int64_t k = 0; k < n; k++) {
      if (k > 0 && t->keys[k] == t->keys[k - 1])
        continue;
      int64_t end = k + 1;
      while (end < n && t->keys[end] == t->keys[k])
        end++;
      if (end - k > 1 && search_run(t, k, end, &li, &lj) != 0)
        bad = 1;
    }
#pragma omp critical
    if (li != INT64_MAX)
      keep(li, lj, &bi, &bj);
  }
  if (bad)
    return -1;
  if (bi == INT64_MAX)
    return 0;
  *i = bi;
  *j = bj;
  return 1;
}
