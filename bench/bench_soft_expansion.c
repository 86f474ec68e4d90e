#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* bench_soft_expansion: softening inside the far field (issue 28). Three ways
 * to meet an accuracy target under Plummer softening, on the same held-out
 * inputs and against the same truth:
 *
 *   lib-*  the library as it is (tfmm_solver_compute, fmm on the CPU): its
 *          expansions carry Newton's 1/r, so it opens every cell pair
 *          closer than the softening separation (src/accuracy.c). lib-auto:
 *          theta and order from the target, measured (TFMM_MEASURE_AUTO);
 *          lib-off: from the calibration alone (TFMM_MEASURE_OFF);
 *          lib-fixed: theta 0.6, order 6.
 *          With eps = 0 (not for line+pile) the lib rows give the cost of
 *          the same target without softening: no separation, what a
 *          softened far field of the library's kind could reach at best.
 *   bh     Barnes-Hut over the library's octree (src/tree/octree.h) with
 *          the softened kernel in the expansions (src/farfield/
 *          soft_taylor.h): a cell is accepted when r_cell < theta d, with
 *          no softening separation; the bodies of a leaf that is not are
 *          summed directly, in double. bh-grid rows are every theta and
 *          order tried (per order, theta descending until the p99 meets
 *          the tightest target: a smaller theta only costs more); the bh
 *          row of a target is the cheapest of them whose p99 meets it,
 *          re-timed.
 *   fmm-soft  the library's FMM schedule (src/farfield/soft_passes.h) with
 *          the softened kernel in the expansions: the library's octree and
 *          dual-tree lists (src/tree/lists.h) of the plain criterion
 *          r_A + r_B < theta d with no softening separation, soft P2M/M2M,
 *          M2L, L2L/L2P and M2P (targets of one body), the near field by
 *          the library's P2P (src/nearfield/p2p_cpu.h). theta and order
 *          from a grid chosen as bh's (fmm-soft-grid rows, near field in
 *          double); the fmm-soft row of a target re-times the cheapest with
 *          the near field in the precision the library would take
 *          (single at TOL >= TFMM_SINGLE_FLOOR, unless the p99 then misses
 *          TOL: double).
 *
 * The truth: the acceleration at `truth` random bodies summed directly in
 * double here, with the same kernel and eps. The p99 is the nearest-rank
 * 99th percentile of |a - a_true| / |a_true| over them. Times are the
 * seconds of one evaluation (tree, moments, far and near field) on
 * `threads` OpenMP threads, as the process's CPU time (cpu_*: robust to
 * other jobs on a shared machine; with one thread it is the evaluation's
 * time alone) and as wall-clock time (wall_eval). lib cpu_first is its
 * first call (which chooses and measures under auto), cpu_eval the least
 * of the later ones and wall_eval that call's wall time; for bh, cpu_first
 * and cpu_eval are the least of its timings. One CSV row each on stdout
 * (bench/results/soft_expansion).
 *
 *   bench_soft_expansion [--family plummer,clusters,line+pile] [--n 20000]
 *       [--eps 0.001,0.01] [--tol 1e-3,1e-4] [--seed S (default: fresh)]
 *       [--truth 1000] [--threads 1] [--leaf 48] [--calls 3]
 *       [--theta 0.3,0.4,0.5,0.6,0.7] [--order 2,3,4,5,6,8] [--lib 1]
 *       [--modes auto,off,fixed,fmm-soft] [--far-kernel auto]
 *       [--soft-theta 0.3,0.4,0.5,0.6,0.7,0.8] [--soft-order 3,4,5,6,8,10]
 *       [--bh 1] [--ops 0]
 *
 * --far-kernel: the library's tfmm_config.far_kernel (default auto); a
 * library row whose kernel is not auto's newton is named with it
 * (lib-auto:softened, lib-off:newton).
 *
 * --ops 1: instead, the CPU microseconds of one M2L and one L2L of each
 * order in --soft-order, softened (soft_taylor.h) and Newton's
 * (expansion.h), as CSV (op,order,soft_us,newton_us). */
#include "accuracy.h"
#include "bench_common.h"
#include "farfield/expansion.h"
#include "farfield/soft_passes.h"
#include "farfield/soft_taylor.h"
#include "held_out_inputs.h"
#include "nearfield/p2p_cpu.h"
#include "tree/lists.h"
#include "tree/octree.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>
#include <time.h>

/* Seconds of CPU time of the whole process (every thread). */
static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { MAX_LIST = 16 };

typedef struct list {
  int count;
  double v[MAX_LIST];
} list;

/* The families measured and their held-out input (held_out_inputs.h). */
static const char *const FAMILY[] = {"plummer", "clusters", "line+pile"};
static const int FAMILY_INPUT[] = {0, 1, 4};

typedef struct options {
  list n, eps, tol, theta, order, soft_theta, soft_order;
  int nfamily, family[3], threads, leaf, calls, lib, bh, ops;
  int modes[4]; /* the library's modes run: auto, off, fixed; fmm-soft */
  tfmm_far_kernel far_kernel; /* the library's far field (--far-kernel) */
  size_t truth;
  uint64_t seed;
} options;

static int parse_list(const char *s, list *out) {
  return bench_parse_dlist("bench_soft_expansion", "list", s, -1e300, 1e300,
                           MAX_LIST, out->v, &out->count) != 0;
}

static int parse_families(const char *s, options *o) {
  o->nfamily = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
    int k = 0;
    while (k < 3 && strcmp(t, FAMILY[k]) != 0)
      k++;
    if (k == 3 || o->nfamily == 3)
      return 1;
    o->family[o->nfamily++] = k;
  }
  return o->nfamily == 0;
}

static const char *const MODE[] = {"auto", "off", "fixed", "fmm-soft"};

static int parse_modes(const char *s, options *o) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", s);
  o->modes[0] = o->modes[1] = o->modes[2] = o->modes[3] = 0;
  for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
    int k = 0;
    while (k < 4 && strcmp(t, MODE[k]) != 0)
      k++;
    if (k == 4)
      return 1;
    o->modes[k] = 1;
  }
  return 0;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.threads = 1,
                 .leaf = 48,
                 .calls = 3,
                 .lib = 1,
                 .bh = 1,
                 .truth = 1000,
                 .seed = (uint64_t)time(NULL) ^ 0x5EED5EEDull};
  parse_families("plummer,clusters,line+pile", o);
  parse_list("20000", &o->n);
  parse_list("0.001,0.01", &o->eps);
  parse_list("1e-3,1e-4", &o->tol);
  parse_list("0.3,0.4,0.5,0.6,0.7", &o->theta);
  parse_list("2,3,4,5,6,8", &o->order);
  parse_list("0.3,0.4,0.5,0.6,0.7,0.8", &o->soft_theta);
  parse_list("3,4,5,6,8,10", &o->soft_order);
  parse_modes("auto,off,fixed,fmm-soft", o);
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL)
      return 1;
    int bad = 0;
    if (!strcmp(a, "--family"))
      bad = parse_families(v, o);
    else if (!strcmp(a, "--n"))
      bad = parse_list(v, &o->n);
    else if (!strcmp(a, "--eps"))
      bad = parse_list(v, &o->eps);
    else if (!strcmp(a, "--tol"))
      bad = parse_list(v, &o->tol);
    else if (!strcmp(a, "--theta"))
      bad = parse_list(v, &o->theta);
    else if (!strcmp(a, "--order"))
      bad = parse_list(v, &o->order);
    else if (!strcmp(a, "--soft-theta"))
      bad = parse_list(v, &o->soft_theta);
    else if (!strcmp(a, "--soft-order"))
      bad = parse_list(v, &o->soft_order);
    else if (!strcmp(a, "--seed"))
      o->seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--truth"))
      o->truth = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--threads"))
      o->threads = atoi(v);
    else if (!strcmp(a, "--leaf"))
      o->leaf = atoi(v);
    else if (!strcmp(a, "--calls"))
      o->calls = atoi(v);
    else if (!strcmp(a, "--lib"))
      o->lib = atoi(v);
    else if (!strcmp(a, "--bh"))
      o->bh = atoi(v);
    else if (!strcmp(a, "--ops"))
      o->ops = atoi(v);
    else if (!strcmp(a, "--modes"))
      bad = parse_modes(v, o);
    else if (!strcmp(a, "--far-kernel"))
      bad = tfmm_far_kernel_parse(v, &o->far_kernel) != TFMM_OK;
    else
      bad = 1;
    if (bad)
      return 1;
  }
  for (int q = 0; q < o->order.count; q++)
    if (o->order.v[q] < 0 || o->order.v[q] > TFMM_SOFT_TAYLOR_ORDER_MAX)
      return 1;
  for (int q = 0; q < o->soft_order.count; q++)
    if (o->soft_order.v[q] < 1 ||
        o->soft_order.v[q] > TFMM_SOFT_TAYLOR_ORDER_MAX)
      return 1;
  for (int e = 0; e < o->eps.count; e++) /* the line's pile needs eps > 0 */
    for (int f = 0; f < o->nfamily; f++)
      if (!(o->eps.v[e] > 0 || (o->eps.v[e] == 0 && o->family[f] != 2)))
        return 1;
  return o->truth < 1 || o->threads < 1 || o->leaf < 1 || o->calls < 2;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* What one case shares: the bodies, the sample, its truth. */
typedef struct bench_case {
  const char *family;
  size_t n, k;
  double eps;
  uint64_t seed;
  double *pos, *mass, *acc, *truth, *err;
  size_t *idx;
} bench_case;

/* The truth at the sample: sum_j m_j (x_j - x_i) (r^2 + eps^2)^(-3/2). */
static void direct_truth(bench_case *b) {
  const double e2 = b->eps * b->eps;
#pragma omp parallel for schedule(dynamic, 4)
  for (size_t s = 0; s < b->k; s++) {
    const size_t i = b->idx[s];
    const double *x = b->pos + 3 * i;
    double a[3] = {0, 0, 0};
    for (size_t j = 0; j < b->n; j++) {
      if (j == i)
        continue;
      const double dx = b->pos[3 * j] - x[0], dy = b->pos[3 * j + 1] - x[1],
                   dz = b->pos[3 * j + 2] - x[2];
      const double inv = 1 / sqrt(dx * dx + dy * dy + dz * dz + e2);
      const double w = b->mass[j] * inv * inv * inv;
      a[0] += w * dx, a[1] += w * dy, a[2] += w * dz;
    }
    for (int d = 0; d < 3; d++)
      b->truth[3 * s + d] = a[d];
  }
}

/* The p99 of |a - a_true| / |a_true| over the sample (acc in input order). */
static double p99_of(bench_case *b, const double *acc) {
  for (size_t s = 0; s < b->k; s++) {
    double num = 0, den = 0;
    for (int d = 0; d < 3; d++) {
      const double e = acc[3 * b->idx[s] + d] - b->truth[3 * s + d];
      num += e * e;
      den += b->truth[3 * s + d] * b->truth[3 * s + d];
    }
    b->err[s] = isfinite(num) && den > 0 ? sqrt(num / den) : INFINITY;
  }
  qsort(b->err, b->k, sizeof *b->err, cmp_double);
  return b->err[(size_t)ceil(0.99 * (double)b->k) - 1];
}

static void print_row(const bench_case *b, const char *method, double tol,
                      double theta, int order, double separation,
                      double t_first, double t_eval, double wall, double near,
                      double far, double p99) {
  printf("%s,%s,%zu,%g,%g,%llu,%.2f,%d,%.4g,%.4f,%.4f,%.4f,%.4e,%.4e,%.3e,"
         "%d\n",
         method, b->family, b->n, b->eps, tol, (unsigned long long)b->seed,
         theta, order, separation, t_first, t_eval, wall, near, far, p99,
         tol > 0 ? p99 <= tol : -1);
  fflush(stdout);
}

/* The library at one target in one mode: 0 auto, 1 off, 2 fixed. */
static int run_lib(const options *o, bench_case *b, double tol, int mode) {
  static const char *const NAME[] = {"lib-auto", "lib-off", "lib-fixed"};
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_FMM;
  c.device = TFMM_DEVICE_CPU;
  c.eps = b->eps;
  c.softening = TFMM_SOFTENING_PLUMMER;
  c.accuracy = tol;
  c.num_threads = o->threads;
  c.measure = mode == 1 ? TFMM_MEASURE_OFF : TFMM_MEASURE_AUTO;
  c.far_kernel = o->far_kernel;
  if (mode == 2)
    c.theta = 0.6, c.order = 6;
  tfmm_solver *sv = NULL;
  double first = 0, best = INFINITY, wall = 0;
  int rc = tfmm_solver_create(&sv, &c) != TFMM_OK;
  for (int call = 0; rc == 0 && call < o->calls; call++) {
    const double t0 = cpu_seconds();
    rc =
        tfmm_solver_compute(sv, b->n, b->pos, b->mass, b->acc, NULL) != TFMM_OK;
    const double t = cpu_seconds() - t0;
    if (call == 0)
      first = t;
    else if (t < best)
      best = t, wall = rc ? 0 : tfmm_solver_stats(sv)->time_total;
  }
  if (rc) {
    fprintf(stderr, "bench_soft_expansion: %s\n", tfmm_solver_message(sv));
    tfmm_solver_destroy(sv);
    return 1;
  }
  const tfmm_stats st = *tfmm_solver_stats(sv);
  tfmm_solver_destroy(sv);
  /* With --far-kernel other than auto, or auto choosing softened: the
   * kernel in the name (lib-auto:softened). */
  char name[64];
  snprintf(name, sizeof name, "%s%s%s", NAME[mode],
           o->far_kernel == TFMM_FAR_KERNEL_AUTO &&
                   st.far_kernel == TFMM_FAR_KERNEL_NEWTON
               ? ""
               : ":",
           o->far_kernel == TFMM_FAR_KERNEL_AUTO &&
                   st.far_kernel == TFMM_FAR_KERNEL_NEWTON
               ? ""
               : tfmm_far_kernel_name(st.far_kernel));
  print_row(b, name, tol, st.theta, st.order, st.softening_separation, first,
            best, wall, st.interactions, st.m2l + st.m2p, p99_of(b, b->acc));
  return 0;
}

/* Barnes-Hut with the softened expansions: the octree, the moments of one
 * order, and the walk. */
typedef struct bh {
  tfmm_octree tree;
  int p;
  double *M;                      /* tfmm_soft_taylor_size(p) per cell */
  double t_tree, t_moments;       /* CPU seconds */
  double wall_tree, wall_moments; /* wall-clock seconds */
} bh;

/* P2M at the leaves and M2M upward, level by level from the deepest. */
static int bh_moments(bh *h, int p) {
  const tfmm_octree *t = &h->tree;
  const size_t size = tfmm_soft_taylor_size(p);
  const double t0 = cpu_seconds(), w0 = omp_get_wtime();
  free(h->M);
  h->M = calloc((size_t)t->ncells * size, sizeof *h->M);
  if (h->M == NULL)
    return 1;
  h->p = p;
  for (int level = t->depth; level >= 0; level--) {
    const int64_t lo = t->level_begin[level], hi = t->level_begin[level + 1];
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t c = lo; c < hi; c++) {
      const tfmm_cell *cell = &t->cells[c];
      double *M = h->M + (size_t)c * size;
      if (cell->child_count == 0)
        tfmm_soft_taylor_p2m(
            p, cell->center, (size_t)(cell->body_end - cell->body_begin),
            t->pos + 3 * cell->body_begin, t->mass + cell->body_begin, M);
      else
        for (int k = 0; k < cell->child_count; k++) {
          const int32_t ch = cell->child_begin + k;
          tfmm_soft_taylor_m2m(p, h->M + (size_t)ch * size, t->cells[ch].center,
                               cell->center, M);
        }
    }
  }
  h->t_moments = cpu_seconds() - t0;
  h->wall_moments = omp_get_wtime() - w0;
  return 0;
}

/* Every body walks the tree from the root: a cell with r_cell < theta d
 * (d from the body to the cell's centre of mass) is one M2P; a leaf that
 * is not, its bodies summed directly in double. acc in input order. */
static void bh_walk(const bh *h, double eps, double theta, double *acc,
                    double *near, double *far) {
  const tfmm_octree *t = &h->tree;
  const size_t size = tfmm_soft_taylor_size(h->p);
  const double th2 = theta * theta, e2 = eps * eps;
  double pairs = 0, m2p = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : pairs, m2p)
  for (size_t i = 0; i < t->n; i++) {
    const double *x = t->pos + 3 * i;
    double g[3] = {0, 0, 0};
    int32_t stack[8 * (TFMM_MAX_DEPTH + 2)];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const int32_t c = stack[--top];
      const tfmm_cell *cell = &t->cells[c];
      const double dx = x[0] - cell->center[0], dy = x[1] - cell->center[1],
                   dz = x[2] - cell->center[2];
      if (cell->radius * cell->radius < th2 * (dx * dx + dy * dy + dz * dz)) {
        tfmm_soft_taylor_m2p(h->p, eps, h->M + (size_t)c * size, cell->center,
                             1, x, NULL, g);
        m2p += 1;
      } else if (cell->child_count == 0) {
        for (int64_t j = cell->body_begin; j < cell->body_end; j++) {
          if ((size_t)j == i)
            continue;
          const double rx = t->pos[3 * j] - x[0], ry = t->pos[3 * j + 1] - x[1],
                       rz = t->pos[3 * j + 2] - x[2];
          const double inv = 1 / sqrt(rx * rx + ry * ry + rz * rz + e2);
          const double w = t->mass[j] * inv * inv * inv;
          g[0] += w * rx, g[1] += w * ry, g[2] += w * rz;
          pairs += 1;
        }
      } else
        for (int k = cell->child_count - 1; k >= 0; k--)
          stack[top++] = cell->child_begin + k;
    }
    const int64_t in = t->order[i];
    for (int d = 0; d < 3; d++)
      acc[3 * in + d] = g[d];
  }
  *near = pairs, *far = m2p;
}

typedef struct bh_result {
  double theta, time, wall, near, far, p99;
  int order;
} bh_result;

/* One walk at theta with the moments in h, timed with the tree and the
 * moments. */
static bh_result bh_eval(const bh *h, bench_case *b, double theta) {
  bh_result r = {.theta = theta, .order = h->p};
  const double t0 = cpu_seconds(), w0 = omp_get_wtime();
  bh_walk(h, b->eps, theta, b->acc, &r.near, &r.far);
  r.time = h->t_tree + h->t_moments + (cpu_seconds() - t0);
  r.wall = h->wall_tree + h->wall_moments + (omp_get_wtime() - w0);
  r.p99 = p99_of(b, b->acc);
  return r;
}

static int bh_build(const options *o, bench_case *b, bh *h) {
  tfmm_error err;
  const double t0 = cpu_seconds(), w0 = omp_get_wtime();
  if (tfmm_octree_build(&h->tree, b->n, b->pos, b->mass, o->leaf,
                        TFMM_MAX_DEPTH, &err) != TFMM_OK) {
    fprintf(stderr, "bench_soft_expansion: tree: %s\n", err.message);
    return 1;
  }
  h->t_tree = cpu_seconds() - t0;
  h->wall_tree = omp_get_wtime() - w0;
  return 0;
}

/* The grid of theta and order (theta descending per order, stopped once
 * the p99 meets the tightest target), then per target the cheapest that
 * meets it, timed again (the least of calls). */
static int run_bh(const options *o, bench_case *b) {
  bh h = {0};
  bh_result grid[MAX_LIST * MAX_LIST];
  int ng = 0, rc = bh_build(o, b, &h);
  double tightest = INFINITY;
  for (int q = 0; q < o->tol.count; q++)
    tightest = o->tol.v[q] < tightest ? o->tol.v[q] : tightest;
  double theta[MAX_LIST];
  memcpy(theta, o->theta.v, sizeof theta);
  qsort(theta, (size_t)o->theta.count, sizeof *theta, cmp_double);
  for (int q = 0; rc == 0 && q < o->order.count; q++) {
    rc = bh_moments(&h, (int)o->order.v[q]);
    for (int k = o->theta.count - 1; rc == 0 && k >= 0; k--) {
      grid[ng] = bh_eval(&h, b, theta[k]);
      const bh_result *r = &grid[ng++];
      print_row(b, "bh-grid", 0, r->theta, r->order, 0, r->time, r->time,
                r->wall, r->near, r->far, r->p99);
      if (r->p99 <= tightest)
        break;
    }
  }
  for (int q = 0; rc == 0 && q < o->tol.count; q++) {
    int best = -1;
    for (int g = 0; g < ng; g++)
      if (grid[g].p99 <= o->tol.v[q] &&
          (best < 0 || grid[g].time < grid[best].time))
        best = g;
    if (best < 0) {
      print_row(b, "bh", o->tol.v[q], 0, -1, 0, NAN, NAN, NAN, NAN, NAN, NAN);
      continue;
    }
    bh_result r = grid[best];
    rc = bh_moments(&h, r.order);
    for (int call = 1; rc == 0 && call < o->calls; call++) {
      const bh_result again = bh_eval(&h, b, r.theta);
      if (again.time < r.time)
        r.time = again.time, r.wall = again.wall;
    }
    print_row(b, "bh", o->tol.v[q], r.theta, r.order, 0, r.time, r.time, r.wall,
              r.near, r.far, r.p99);
  }
  free(h.M);
  tfmm_octree_free(&h.tree);
  return rc;
}

/* ---- fmm-soft: the softened FMM over the library's octree and lists ---- */

typedef struct soft_fmm {
  tfmm_octree tree;
  tfmm_lists lists;
  int p;
  double *M, *L, *phi, *grad, *near, *npot;
  double t_tree, t_moments, w_tree, w_moments; /* CPU and wall seconds */
} soft_fmm;

typedef struct soft_result {
  double theta, time, wall, near, far, p99;
  int order;
} soft_result;

static void soft_free(soft_fmm *f) {
  tfmm_lists_free(&f->lists);
  tfmm_octree_free(&f->tree);
  free(f->M), free(f->L), free(f->phi), free(f->grad), free(f->near);
  free(f->npot);
}

/* The octree (timed) and the body buffers. */
static int soft_build(const options *o, bench_case *b, soft_fmm *f) {
  tfmm_error err;
  const double t0 = cpu_seconds(), w0 = omp_get_wtime();
  if (tfmm_octree_build(&f->tree, b->n, b->pos, b->mass, o->leaf,
                        TFMM_MAX_DEPTH, &err) != TFMM_OK) {
    fprintf(stderr, "bench_soft_expansion: tree: %s\n", err.message);
    return 1;
  }
  f->t_tree = cpu_seconds() - t0, f->w_tree = omp_get_wtime() - w0;
  f->phi = malloc(b->n * sizeof *f->phi);
  f->grad = malloc(3 * b->n * sizeof *f->grad);
  f->near = malloc(3 * b->n * sizeof *f->near);
  f->npot = malloc(b->n * sizeof *f->npot);
  return f->phi && f->grad && f->near && f->npot ? 0 : 1;
}

/* The multipoles of order p (soft P2M and M2M), timed. */
static int soft_moments(soft_fmm *f, int p) {
  const size_t size = tfmm_soft_taylor_size(p);
  const size_t cells = (size_t)f->tree.ncells;
  free(f->M), free(f->L);
  f->M = malloc(cells * size * sizeof *f->M);
  f->L = malloc(cells * size * sizeof *f->L);
  if (f->M == NULL || f->L == NULL)
    return 1;
  f->p = p;
  const double t0 = cpu_seconds(), w0 = omp_get_wtime();
  tfmm_soft_upward_pass(&f->tree, p, f->M);
  f->t_moments = cpu_seconds() - t0, f->w_moments = omp_get_wtime() - w0;
  return 0;
}

/* The lists at theta, M2L, L2L/L2P, M2P and the near field in precision
 * prec: acc in input order; timed with the tree and the moments. */
static int soft_eval(soft_fmm *f, bench_case *b, double theta,
                     tfmm_precision prec, soft_result *r) {
  const tfmm_octree *t = &f->tree;
  tfmm_error err;
  *r = (soft_result){.theta = theta, .order = f->p};
  const double t0 = cpu_seconds(), w0 = omp_get_wtime();
  tfmm_lists_free(&f->lists);
  const tfmm_mac mac = {.theta = theta, .order = f->p};
  if (tfmm_lists_build_fmm(t, &mac, 1, &f->lists, &err) != TFMM_OK) {
    fprintf(stderr, "bench_soft_expansion: lists: %s\n", err.message);
    return 1;
  }
  tfmm_soft_m2l_pass(t, &f->lists.m2l, f->p, b->eps, f->M, f->L);
  tfmm_soft_downward_pass(t, f->p, f->L, f->phi, f->grad);
  tfmm_soft_m2p_pass(t, &f->lists.m2p, f->p, b->eps, f->M, f->phi, f->grad);
  const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, b->eps, prec};
  if (tfmm_p2p_cpu(t, &f->lists.near, &pair, f->near, f->npot, &err) !=
      TFMM_OK) {
    fprintf(stderr, "bench_soft_expansion: near: %s\n", err.message);
    return 1;
  }
  for (size_t k = 0; k < t->n; k++)
    for (int d = 0; d < 3; d++)
      b->acc[3 * t->order[k] + d] = f->grad[3 * k + d] + f->near[3 * k + d];
  r->time = f->t_tree + f->t_moments + (cpu_seconds() - t0);
  r->wall = f->w_tree + f->w_moments + (omp_get_wtime() - w0);
  r->near = f->lists.near_interactions;
  r->far = (double)(f->lists.m2l.offset[f->lists.m2l.ntargets] +
                    f->lists.m2p.offset[f->lists.m2p.ntargets]);
  r->p99 = p99_of(b, b->acc);
  return 0;
}

/* The setting g timed again, the least of calls (each with its moments),
 * the near field in precision prec. */
static int soft_time(const options *o, soft_fmm *f, bench_case *b,
                     const soft_result *g, tfmm_precision prec,
                     soft_result *r) {
  int rc = 0;
  *r = *g; /* (what a failed call leaves) */
  r->time = INFINITY;
  for (int call = 0; rc == 0 && call < o->calls; call++) {
    soft_result again;
    rc = soft_moments(f, g->order);
    if (rc == 0)
      rc = soft_eval(f, b, g->theta, prec, &again);
    if (rc == 0 && again.time < r->time)
      *r = again;
  }
  return rc;
}

/* The grid (per order, theta descending until the p99 meets the tightest
 * target; near field in double), then per target the cheapest that meets
 * it, re-timed (the least of calls) in the library's precision for it. */
static int run_soft_fmm(const options *o, bench_case *b) {
  soft_fmm f = {0};
  soft_result grid[MAX_LIST * MAX_LIST];
  int ng = 0, rc = soft_build(o, b, &f);
  double tightest = INFINITY, theta[MAX_LIST];
  for (int q = 0; q < o->tol.count; q++)
    tightest = o->tol.v[q] < tightest ? o->tol.v[q] : tightest;
  memcpy(theta, o->soft_theta.v, sizeof theta);
  qsort(theta, (size_t)o->soft_theta.count, sizeof *theta, cmp_double);
  for (int q = 0; rc == 0 && q < o->soft_order.count; q++) {
    rc = soft_moments(&f, (int)o->soft_order.v[q]);
    for (int k = o->soft_theta.count - 1; rc == 0 && k >= 0; k--) {
      soft_result *r = &grid[ng];
      rc = soft_eval(&f, b, theta[k], TFMM_PRECISION_DOUBLE, r);
      if (rc)
        break;
      ng++;
      print_row(b, "fmm-soft-grid", 0, r->theta, r->order, 0, r->time, r->time,
                r->wall, r->near, r->far, r->p99);
      if (r->p99 <= tightest)
        break;
    }
  }
  for (int q = 0; rc == 0 && q < o->tol.count; q++) {
    const double tol = o->tol.v[q];
    int best = -1;
    for (int g = 0; g < ng; g++)
      if (grid[g].p99 <= tol && (best < 0 || grid[g].time < grid[best].time))
        best = g;
    if (best < 0) {
      print_row(b, "fmm-soft", tol, 0, -1, 0, NAN, NAN, NAN, NAN, NAN, NAN);
      continue;
    }
    tfmm_precision prec = tol >= TFMM_SINGLE_FLOOR ? TFMM_PRECISION_SINGLE
                                                   : TFMM_PRECISION_DOUBLE;
    soft_result r = grid[best];
    rc = soft_time(o, &f, b, &grid[best], prec, &r);
    if (rc == 0 && r.p99 > tol && prec == TFMM_PRECISION_SINGLE) {
      fprintf(stderr,
              "bench_soft_expansion: %s eps %g TOL %g: near field "
              "in double (p99 %.3g in single)\n",
              b->family, b->eps, tol, r.p99);
      prec = TFMM_PRECISION_DOUBLE;
      rc = soft_time(o, &f, b, &grid[best], prec, &r);
    }
    if (rc == 0)
      print_row(b, "fmm-soft", tol, r.theta, r.order, 0, r.time, r.time, r.wall,
                r.near, r.far, r.p99);
  }
  soft_free(&f);
  return rc;
}

static int run_case(const options *o, bench_case *b, int family) {
  b->family = FAMILY[family];
  held_out_make(FAMILY_INPUT[family], b->n, b->seed, b->pos, b->mass);
  uint64_t s = b->seed ^ 0x7A11ull;
  for (size_t i = 0; i < b->n; i++) /* a partial shuffle: k distinct */
    b->idx[i] = i;
  for (size_t i = 0; i < b->k; i++) {
    const size_t j = i + (size_t)(splitmix(&s) % (b->n - i));
    const size_t tmp = b->idx[i];
    b->idx[i] = b->idx[j], b->idx[j] = tmp;
  }
  direct_truth(b);
  int rc = 0;
  for (int q = 0; o->lib && rc == 0 && q < o->tol.count; q++)
    for (int mode = 0; rc == 0 && mode < 3; mode++)
      if (o->modes[mode])
        rc = run_lib(o, b, o->tol.v[q], mode);
  if (o->bh && rc == 0)
    rc = run_bh(o, b);
  if (o->modes[3] && rc == 0)
    rc = run_soft_fmm(o, b);
  return rc;
}

/* --ops: each operator many times on fixed coefficients, the centre
 * moved a little each time (so no call is hoisted); the CPU time per call. */
static void time_ops(const options *o) {
  static double M[2 * 1000], L[2 * 1000];
  for (int i = 0; i < 2 * 1000; i++)
    M[i] = 1.0 / (i + 1);
  printf("op,order,soft_us,newton_us\n");
  for (int q = 0; q < o->soft_order.count; q++) {
    const int p = (int)o->soft_order.v[q], reps = 20000;
    double cs[3] = {0, 0, 0}, ct[3] = {3, 1, 2}, us[2][2];
    for (int op = 0; op < 2; op++)
      for (int soft = 0; soft < 2; soft++) {
        const double t0 = cpu_seconds();
        for (int r = 0; r < reps; r++) {
          ct[0] += 1e-9;
          if (op == 0 && soft)
            tfmm_soft_taylor_m2l(p, 0.01, M, cs, ct, L);
          else if (op == 0)
            tfmm_m2l(p, M, cs, ct, L);
          else if (soft)
            tfmm_soft_taylor_l2l(p, M, cs, ct, L);
          else
            tfmm_l2l(p, M, cs, ct, L);
        }
        us[op][soft] = 1e6 * (cpu_seconds() - t0) / reps;
      }
    printf("m2l,%d,%.3f,%.3f\nl2l,%d,%.3f,%.3f\n", p, us[0][1], us[0][0], p,
           us[1][1], us[1][0]);
  }
  fprintf(stderr, "(%g)\n", L[0]); /* the results are used */
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o)) {
    fprintf(
        stderr,
        "usage: bench_soft_expansion [--family plummer,clusters,"
        "line+pile] [--n LIST] [--eps LIST (>= 0; > 0 with line+pile)] "
        "[--tol LIST] [--seed S] "
        "[--truth K] [--threads T] [--leaf L] [--calls C >= 2] "
        "[--theta LIST] [--order LIST (<= %d)] [--lib 0|1] [--bh 0|1] "
        "[--modes auto,off,fixed,fmm-soft] [--far-kernel auto|newton|softened] "
        "[--soft-theta LIST] "
        "[--soft-order LIST (1..%d)] [--ops 0|1]\n",
        TFMM_SOFT_TAYLOR_ORDER_MAX, TFMM_SOFT_TAYLOR_ORDER_MAX);
    return 2;
  }
  omp_set_num_threads(o.threads);
  if (o.ops) {
    time_ops(&o);
    return 0;
  }
  printf("method,family,n,eps,tol,seed,theta,order,separation,cpu_first,"
         "cpu_eval,wall_eval,near_pairs,far_ops,p99,meets\n");
  int rc = 0;
  for (int q = 0; rc == 0 && q < o.n.count; q++) {
    bench_case b = {.n = (size_t)o.n.v[q]};
    b.k = o.truth < b.n ? o.truth : b.n;
    b.pos = malloc(3 * b.n * sizeof *b.pos);
    b.mass = malloc(b.n * sizeof *b.mass);
    b.acc = malloc(3 * b.n * sizeof *b.acc);
    b.truth = malloc(3 * b.k * sizeof *b.truth);
    b.err = malloc(b.k * sizeof *b.err);
    b.idx = malloc(b.n * sizeof *b.idx);
    rc = b.pos && b.mass && b.acc && b.truth && b.err && b.idx ? 0 : 1;
    for (int f = 0; rc == 0 && f < o.nfamily; f++)
      for (int e = 0; rc == 0 && e < o.eps.count; e++) {
        b.eps = o.eps.v[e];
        b.seed = o.seed + (uint64_t)(1000 * q + 10 * f + e);
        rc = run_case(&o, &b, o.family[f]);
      }
    free(b.pos), free(b.mass), free(b.acc), free(b.truth), free(b.err);
    free(b.idx);
  }
  return rc;
}
