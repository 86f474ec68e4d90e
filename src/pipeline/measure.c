#include "pipeline/measure.h"

#include "base/clock.h"
#include "pipeline/allpairs.h"
#include "pipeline/measure_pick.h"
#include "pipeline_gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t watch_each(size_t k) {
  return k / 8 < TFMM_MEASURE_WATCH_MAX ? k / 8 : TFMM_MEASURE_WATCH_MAX;
}

size_t tfmm_measure_sample_size(size_t n, int requested, int planning,
                                int gpu) {
  size_t k = (size_t)requested;
  if (requested <= 0 && planning && n <= TFMM_MEASURE_EVERY_BODY)
    return n;
  if (requested <= 0) {
    /* Whole tiles of the reference (estimate and watch together). */
    double tiles = gpu ? floor(2.2e8 / (TFMM_MEASURE_TILE * (double)n)) : 1;
    tiles = tiles < 1 ? 1 : tiles > 16 ? 16 : tiles;
    double times = planning ? 4 : 1;
    if (planning >= 2 && gpu) { /* a second look */
      const double most = floor(TFMM_MEASURE_LOOK_PAIRS /
                                (tiles * TFMM_MEASURE_TILE * (double)n));
      times = most > TFMM_MEASURE_LOOK_TILES ? TFMM_MEASURE_LOOK_TILES
              : most > 4                     ? most
                                             : 4;
    }
    const size_t total = (size_t)(tiles * times) * TFMM_MEASURE_TILE;
    /* The most the tiles hold beside the watch's parts. */
    for (k = total;
         k > 1 && k + TFMM_MEASURE_WATCH_PARTS * watch_each(k) > total;)
      k--;
  }
  return k < n ? k : n;
}

void tfmm_measure_pick(size_t n, size_t k, uint64_t seed, int64_t *sorted) {
  for (size_t j = 0; j < k; j++)
    sorted[j] = tfmm_measure_stratum(n, k, seed, j);
}

/* The leaves at the low or high end of the counts: their threshold from a
 * histogram (counts past CAP share its last bin), then the leaves in key
 * order up to `each`. */
enum { CAP = TFMM_MEASURE_CAP };

static size_t pick_end(int64_t nleaves, const int64_t *begin,
                       const int32_t *count, size_t each, int high,
                       uint64_t seed, int64_t *sorted, const size_t *hist,
                       int64_t *watched) {
  /* The count at which the end holds at least `each` leaves. */
  size_t seen = 0;
  int cut = high ? CAP : 1;
  for (int c = high ? CAP : 1; c >= 1 && c <= CAP; c += high ? -1 : 1) {
    seen += hist[c];
    cut = c;
    if (seen >= each)
      break;
  }
  size_t w = 0;
  for (int64_t l = 0; l < nleaves && w < each; l++) {
    const int c = count[l] > CAP ? CAP : count[l];
    if (c < 1 || (high ? c < cut : c > cut))
      continue;
    sorted[w] = tfmm_measure_in_leaf(begin[l], count[l], seed, l);
    watched[l] = sorted[w++];
  }
  return w;
}

/* A leaf's least |a|^2 and the leaf. */
typedef struct least {
  double a2;
  int64_t leaf, body;
} least;

static int by_least(const void *a, const void *b) {
  const least *x = a, *y = b;
  if (x->a2 != y->a2)
    return (x->a2 > y->a2) - (x->a2 < y->a2);
  return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

/* The third part: the argmin body (the first on ties) of each of the
 * `each` leaves whose least a2 is smallest and finite (ties: the lower
 * leaf), in that order, but for a body the ends watch already (watched[l]:
 * the body they took of leaf l, the high end's if both, else -1). */
static size_t pick_least(int64_t nleaves, const int64_t *begin,
                         const int32_t *count, size_t each, const double *a2,
                         const int64_t *watched, int64_t *sorted) {
  least *cand = malloc((size_t)nleaves * sizeof *cand);
  if (cand == NULL)
    return 0; /* the watch is extra */
  size_t m = 0;
  for (int64_t l = 0; l < nleaves; l++) {
    if (count[l] < 1)
      continue;
    int64_t at = begin[l];
    for (int64_t i = begin[l] + 1; i < begin[l] + count[l]; i++)
      if (a2[i] < a2[at])
        at = i;
    if (a2[at] < INFINITY && watched[l] != at)
      cand[m++] = (least){a2[at], l, at};
  }
  qsort(cand, m, sizeof *cand, by_least);
  const size_t w = m < each ? m : each;
  for (size_t j = 0; j < w; j++)
    sorted[j] = cand[j].body;
  free(cand);
  return w;
}

size_t tfmm_measure_watch(int64_t nleaves, const int64_t *begin,
                          const int32_t *count, size_t each, uint64_t seed,
                          const double *a2, int64_t *sorted) {
  if (nleaves <= 0 || each == 0)
    return 0;
  size_t *hist = calloc(CAP + 1, sizeof *hist);
  int64_t *watched = malloc((size_t)nleaves * sizeof *watched);
  size_t w = 0;
  if (hist != NULL && watched != NULL) {
    for (int64_t l = 0; l < nleaves; l++)
      watched[l] = -1;
    for (int64_t l = 0; l < nleaves; l++)
      hist[count[l] < 1 ? 0 : count[l] > CAP ? CAP : count[l]]++;
    w = pick_end(nleaves, begin, count, each, 0, seed, sorted, hist, watched);
    w += pick_end(nleaves, begin, count, each, 1, ~seed, sorted + w, hist,
                  watched);
    if (a2 != NULL)
      w += pick_least(nleaves, begin, count, each, a2, watched, sorted + w);
  } /* else the watch is extra: without memory, the estimate alone */
  free(hist);
  free(watched);
  return w;
}

size_t tfmm_measure_bound_rank(size_t k, double confidence, double *achieved) {
  /* P(X <= x) summed from x = 0 up, each term from the one before in
   * logarithms (no underflow at large k): O(c), where summing each tail
   * afresh took O(c k) and 10 ms at 36,864 bodies. */
  const double p = 0.01, lp = log(p), lq = log1p(-p);
  double lterm = (double)k * lq, below = exp(lterm);
  double conf = 1 - below;
  size_t c = 0;
  while (c + 1 < k) {
    lterm += log((double)(k - c)) - log((double)(c + 1)) + lp - lq;
    const double next = below + exp(lterm);
    if (1 - next < confidence)
      break;
    below = next;
    conf = 1 - below;
    c++;
  }
  if (achieved != NULL)
    *achieved = conf;
  return c + 1;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void tfmm_measure_judge(size_t k, size_t w, size_t n, double confidence,
                        double *err, const int64_t *index, tfmm_stats *stats) {
  stats->error.measured = 1;
  stats->error.samples = k + w;
  size_t worst = 0;
  for (size_t j = 1; j < k + w; j++)
    if (!(err[j] <= err[worst]))
      worst = j;
  stats->error.max = err[worst];
  stats->error.worst_body = index[worst];
  qsort(err, k, sizeof *err, by_value);
  const size_t rank = (size_t)ceil(0.99 * (double)k); /* nearest rank */
  stats->error.p99 = err[(rank < 1 ? 1 : rank) - 1];
  stats->error.median = err[(k - 1) / 2];
  const double gamma = confidence > 0 ? confidence : TFMM_MEASURE_CONFIDENCE;
  double conf = 0;
  const size_t top = tfmm_measure_bound_rank(k, gamma, &conf);
  stats->error.p99_bound = err[k - top];
  stats->error.confidence = conf < gamma ? conf : gamma;
  if (k >= n) { /* the population: nothing to bound */
    stats->error.p99_bound = stats->error.p99;
    stats->error.confidence = 1;
  }
}

void tfmm_measure_group_judge(size_t m, size_t bodies, double *err,
                              tfmm_stats *stats) {
  stats->error.group_bodies = bodies;
  stats->error.group_measured = m;
  if (m == 0)
    return;
  qsort(err, m, sizeof *err, by_value);
  const size_t rank = (size_t)ceil(0.99 * (double)m); /* nearest rank */
  stats->error.group_p99 = err[(rank < 1 ? 1 : rank) - 1];
  stats->error.group_median = err[(m - 1) / 2];
  stats->error.group_max = err[m - 1];
}

/* |a - b| / |b| of 3-vectors; 0 when both are 0. */
double tfmm_measure_relative(const double *a, const double *b) {
  return tfmm_measure_relative_scaled(a, b, 1.0);
}

/* The scratch of one measurement: k + w entries. */
typedef struct sample {
  size_t k, w;
  int64_t *sorted, *input;
  double *exact, *got, *err;
} sample;

static void sample_free(sample *s) {
  free(s->sorted);
  free(s->input);
  free(s->exact);
  free(s->got);
  free(s->err);
}

static tfmm_status sample_alloc(sample *s, size_t k, size_t each,
                                tfmm_error *err) {
  memset(s, 0, sizeof *s);
  s->k = k;
  const size_t m = k + TFMM_MEASURE_WATCH_PARTS * each;
  s->sorted = malloc(m * sizeof *s->sorted);
  s->input = malloc(m * sizeof *s->input);
  s->exact = malloc(3 * m * sizeof *s->exact);
  s->got = malloc(3 * m * sizeof *s->got);
  s->err = malloc(m * sizeof *s->err);
  if (s->sorted == NULL || s->input == NULL || s->exact == NULL ||
      s->got == NULL || s->err == NULL) {
    sample_free(s);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory to measure the error at %zu bodies", m);
  }
  return TFMM_OK;
}

/* Whether e measures: asked to, at every body. */
static int measures(const tfmm_eval *e) {
  return e->measure_k > 0 && e->active == NULL && !e->cfg->near_only;
}

/* The errors, judged; returns the position in the sample of the largest
 * (the first of equals, as tfmm_measure_judge takes it). */
static size_t finish(tfmm_eval *e, sample *s, double t0) {
  size_t worst = 0;
  for (size_t j = 0; j < s->k + s->w; j++) {
    s->err[j] = tfmm_measure_relative(s->got + 3 * j, s->exact + 3 * j);
    if (!(s->err[j] <= s->err[worst]))
      worst = j;
  }
  tfmm_measure_judge(s->k, s->w, e->n, e->measure_confidence, s->err, s->input,
                     e->stats);
  e->stats->error.time = tfmm_wtime() - t0;
  return worst;
}

/* The leaf position of t holding sorted body i: the last whose first body
 * is at or before it (the leaves hold the bodies in key order). */
static int64_t leaf_of(const tfmm_octree *t, int64_t i) {
  int64_t lo = 0, hi = t->nleaves - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (t->cells[t->leaves[mid]].body_begin <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* The worst group (tfmm_stats.error.group_*): the bodies of the leaf of
 * sorted body worst, each up to TFMM_MEASURE_GROUP_MAX, else that many
 * stratified along the leaf with worst in place of its stratum's. */
static tfmm_status measure_group(tfmm_eval *e, int64_t worst, double t0) {
  const tfmm_octree *t = &e->w->tree;
  const tfmm_cell *c = &t->cells[t->leaves[leaf_of(t, worst)]];
  const size_t count = (size_t)(c->body_end - c->body_begin);
  const size_t m =
      count < TFMM_MEASURE_GROUP_MAX ? count : TFMM_MEASURE_GROUP_MAX;
  int64_t *pick = malloc(m * sizeof *pick);
  size_t *targets = malloc(m * sizeof *targets);
  double *exact = malloc(3 * m * sizeof *exact);
  double *err = malloc(m * sizeof *err);
  tfmm_status st = TFMM_OK;
  if (pick == NULL || targets == NULL || exact == NULL || err == NULL) {
    st = tfmm_error_set(e->err, TFMM_ERR_NO_MEMORY,
                        "no memory to measure the error at %zu bodies", m);
  } else {
    tfmm_measure_pick(count, m, ~e->measure_seed ^ 0x9e3779b97f4a7c15ull, pick);
    const int64_t mine = worst - c->body_begin;
    for (size_t j = 0; j < m; j++)
      if ((int64_t)(j * count / m) <= mine &&
          mine < (int64_t)((j + 1) * count / m))
        pick[j] = mine;
    for (size_t j = 0; j < m; j++)
      targets[j] = (size_t)t->order[c->body_begin + pick[j]];
    st = tfmm_allpairs_reference_at(e->cfg, e->n, e->pos, e->mass, m, targets,
                                    exact, NULL, e->err);
  }
  if (st == TFMM_OK) {
    for (size_t j = 0; j < m; j++)
      err[j] = tfmm_measure_relative(e->acc + 3 * targets[j], exact + 3 * j);
    tfmm_measure_group_judge(m, count, err, e->stats);
    e->stats->error.time = tfmm_wtime() - t0;
  }
  free(pick);
  free(targets);
  free(exact);
  free(err);
  return st;
}

/* The scratch of e's measurement, the estimate's sorted indices drawn. */
static tfmm_status sample_begin(const tfmm_eval *e, sample *s) {
  const size_t n = e->n, k = e->measure_k < n ? e->measure_k : n;
  tfmm_status st = sample_alloc(s, k, watch_each(k), e->err);
  if (st == TFMM_OK)
    tfmm_measure_pick(n, k, e->measure_seed, s->sorted);
  return st;
}

/* The watch's bodies after the estimate's, from the leaves' spans and
 * the keys of the sorted bodies (a2, NULL: no third part). */
static void sample_watch(const tfmm_eval *e, sample *s, int64_t nleaves,
                         const int64_t *begin, const int32_t *count,
                         const double *a2) {
  s->w = tfmm_measure_watch(nleaves, begin, count, watch_each(s->k),
                            ~e->measure_seed, a2, s->sorted + s->k);
}

tfmm_status tfmm_stage_measure(tfmm_eval *e) {
  if (!measures(e))
    return TFMM_OK;
  const double t0 = tfmm_wtime();
  const tfmm_octree *t = &e->w->tree;
  sample s;
  tfmm_status st = sample_begin(e, &s);
  if (st != TFMM_OK)
    return st;
  const size_t n = e->n, k = s.k;
  int64_t *begin = malloc((size_t)t->nleaves * sizeof *begin);
  int32_t *count = malloc((size_t)t->nleaves * sizeof *count);
  double *a2 = malloc(n * sizeof *a2); /* the sorted bodies' |a|^2 */
  if (begin != NULL && count != NULL) {
    for (int64_t l = 0; l < t->nleaves; l++) {
      const tfmm_cell *c = &t->cells[t->leaves[l]];
      begin[l] = c->body_begin;
      count[l] = (int32_t)(c->body_end - c->body_begin);
    }
    if (a2 != NULL)
      for (size_t i = 0; i < n; i++)
        a2[i] = tfmm_measure_a2(e->acc + 3 * (size_t)t->order[i]);
    sample_watch(e, &s, t->nleaves, begin, count, a2);
  }
  free(begin);
  free(count);
  free(a2);
  size_t *targets = (size_t *)s.input; /* same size, reused */
  for (size_t j = 0; j < k + s.w; j++)
    targets[j] = (size_t)t->order[s.sorted[j]];
  st = tfmm_allpairs_reference_at(e->cfg, n, e->pos, e->mass, k + s.w, targets,
                                  s.exact, NULL, e->err);
  for (size_t j = 0; j < k + s.w; j++) {
    s.input[j] = (int64_t)targets[j];
    memcpy(s.got + 3 * j, e->acc + 3 * targets[j], 3 * sizeof(double));
  }
  if (st == TFMM_OK)
    st = measure_group(e, s.sorted[finish(e, &s, t0)], t0);
  sample_free(&s);
  return st;
}

/* The worst group's figures from its device block h (7 G + 2 words:
 * pipeline_gpu.h); f takes the exact sums to the results' units; err
 * holds G errors. */
static void group_judged(tfmm_eval *e, int64_t *h, int on_device, double f,
                         double t0, double *err) {
  enum { G = TFMM_MEASURE_GROUP_MAX };
  const int64_t *input = h;
  double *exact = (double *)(h + G), *got = (double *)(h + 4 * G);
  const size_t m = (size_t)h[7 * G], bodies = (size_t)h[7 * G + 1];
  for (size_t j = 0; j < m; j++) {
    for (int d = 0; d < 3; d++) {
      exact[3 * j + d] *= f;
      if (!on_device)
        got[3 * j + d] = e->acc[3 * input[j] + d];
    }
    err[j] = tfmm_measure_relative(got + 3 * j, exact + 3 * j);
  }
  tfmm_measure_group_judge(m, bodies, err, e->stats);
  e->stats->error.time = tfmm_wtime() - t0;
}

/* The worst group on the device (tfmm_pipeline_gpu_measure_group) after
 * the sample whose slot worst held the largest error; f takes the exact
 * sums to the results' units. */
static tfmm_status gpu_group(tfmm_eval *e, const tfmm_pair_params *pair,
                             int fast, size_t worst, int on_device, double f,
                             double t0) {
  enum { G = TFMM_MEASURE_GROUP_MAX };
  int64_t *block = malloc((7 * G + 2) * sizeof *block);
  double *err = malloc(G * sizeof *err);
  tfmm_status st = TFMM_OK;
  if (block == NULL || err == NULL)
    st = tfmm_error_set(e->err, TFMM_ERR_NO_MEMORY,
                        "no memory to measure the error at %d bodies", G);
  else
    st = tfmm_pipeline_gpu_measure_group(
        &e->w->gpu, pair, fast, worst, ~e->measure_seed ^ 0x9e3779b97f4a7c15ull,
        on_device ? e->acc : NULL, block, e->err);
  if (st == TFMM_OK)
    group_judged(e, block, on_device, f, t0, err);
  free(block);
  free(err);
  return st;
}

tfmm_status tfmm_stage_gpu_measure(tfmm_eval *e) {
  if (!measures(e))
    return TFMM_OK;
  enum { G = TFMM_MEASURE_GROUP_MAX };
  const double t0 = tfmm_wtime();
  tfmm_pipeline_gpu *g = &e->w->gpu;
  const size_t n = e->n, k = e->measure_k < n ? e->measure_k : n;
  const size_t each = watch_each(k), m = k + TFMM_MEASURE_WATCH_PARTS * each;
  /* The device's blocks (pipeline_gpu.h): input, exact, got, w; the
   * group's. */
  int64_t *block = malloc((7 * m + 1) * sizeof *block);
  int64_t *group = malloc((7 * G + 2) * sizeof *group);
  double *errs = malloc((m > G ? m : G) * sizeof *errs);
  if (block == NULL || group == NULL || errs == NULL) {
    free(block);
    free(group);
    free(errs);
    return tfmm_error_set(e->err, TFMM_ERR_NO_MEMORY,
                          "no memory to measure the error at %zu bodies", m);
  }
  const tfmm_pair_params pair = {e->cfg->softening, e->cfg->eps,
                                 TFMM_PRECISION_DOUBLE};
  /* The results are on the device (the caller's device arrays) or on
   * the host (downloaded: in the tree's units on the host path, in the
   * caller's when a device evaluation gives host results). */
  const int on_device = e->on_device && !e->host_results;
  /* FP64 sums when every body is measured (planning at small N): the p99
   * is then the population's, with no bound to absorb the fast sums'
   * error (a line + pile at 1e-4 measured 9.5e-5 against a true 1.0e-4). */
  const int fast = e->cfg->accuracy >= TFMM_MEASURE_FAST_ACCURACY && k < n;
  /* The exact sums are G = 1 in the tree's units; the results are G
   * times the sums, taken to the caller's units by the device path. */
  double f = e->cfg->G;
  if (e->on_device)
    f *= e->caller_G * ldexp(1.0, e->acc_exp);
  const uint64_t group_seed = ~e->measure_seed ^ 0x9e3779b97f4a7c15ull;
  /* With the results on the device, the sample and its group in one go
   * (one wait); where a float 1/r^3 overflowed there, the two calls,
   * whose FP64 sums take over. */
  int both = 0;
  size_t device_worst = 0;
  tfmm_status st = TFMM_OK;
  if (on_device && m <= TFMM_PIPELINE_GPU_BOTH_SLOTS) {
    st = tfmm_pipeline_gpu_measure_both(g, &pair, fast, k, each,
                                        e->measure_seed, group_seed, f, e->acc,
                                        block, group, &device_worst, e->err);
    both = st == TFMM_OK;
    if (st == TFMM_ERR_NONFINITE)
      st = TFMM_OK;
  }
  if (st == TFMM_OK && !both)
    st = tfmm_pipeline_gpu_measure(g, &pair, fast, k, each, e->measure_seed,
                                   on_device ? e->acc : NULL, block, e->err);
  if (st == TFMM_OK) {
    sample s = {k,     (size_t)block[7 * m],  NULL,
                block, (double *)(block + m), (double *)(block + 4 * m),
                errs};
    for (size_t j = 0; j < k + s.w; j++)
      for (int d = 0; d < 3; d++) {
        s.exact[3 * j + d] *= f;
        if (!on_device)
          s.got[3 * j + d] = e->acc[3 * s.input[j] + d];
      }
    const size_t worst = finish(e, &s, t0);
    /* The device's worst slot is the host's (both round the errors
     * alike); were it not, the group of the host's. */
    if (both && worst == device_worst)
      group_judged(e, group, on_device, f, t0, errs);
    else
      st = gpu_group(e, &pair, fast, worst, on_device, f, t0);
  }
  free(block);
  free(group);
  free(errs);
  return st;
}
