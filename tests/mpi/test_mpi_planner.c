/* The planner and the worst group over several processes (issue 28;
 * src/domain/evaluate.c, measure_ranks.c), against the truth summed here
 * in long double at every body, on fresh seeds and bodies of several
 * families: clustered (unsoftened), a thin disk with a bulge (softened a
 * little), a line with a coincident pile (Plummer-softened).
 *
 * - The planner over the ranks: theta and order chosen from the error
 *   measured over every rank's bodies, the p99 over all bodies within the
 *   target at every call, measured or keeping the setting (below
 *   TFMM_MEASURE_EVERY_BODY bodies the planner measures every one: its
 *   p99 is the population's), and every
 *   rank holding the same choice, the same statistics and the same plan
 *   line after every call.
 * - The worst group over the ranks: the leaf, in the octree of every
 *   body in the common cube, that holds the worst body; found here from
 *   the bodies' grid cells level by level (not from Morton keys), its
 *   bodies' errors against the truth judged here, equal to what the ranks
 *   report.
 *
 * Run under mpirun -np 1, 2, 4 (tests/mpi/CMakeLists.txt). */
#include "mpi_check.h"

#include <stdint.h>

static const double PI = 3.14159265358979323846;

/* Below TFMM_MEASURE_EVERY_BODY (4096): the planner's sample is every
 * body. */
enum { N = 3600, LEAF = 32, GROUP_MAX = 256 };

/* UNIFORM (the unit cube), with leaves of 512: every leaf holds about 450
 * bodies, more than GROUP_MAX. */
typedef enum family { CLUSTERS, DISK, LINE_PILE, UNIFORM } family;
static const char *family_name[] = {"clusters", "disk", "line+pile", "uniform"};

static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double uniform(uint64_t *s) { return (next(s) >> 11) * 0x1p-53; }
static double normal(uint64_t *s) {
  const double u = uniform(s) + 0x1p-54, v = uniform(s);
  return sqrt(-2 * log(u)) * cos(2 * PI * v);
}

/* n bodies of family f from seed, masses 1/n; the softening it takes. */
static double make(family f, size_t n, uint64_t seed, double *pos,
                   double *mass) {
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++)
    mass[i] = 1.0 / n;
  if (f == CLUSTERS) {
    /* 12 Gaussian clusters of widths 0.003 to 0.05 at random centres in
     * the unit cube, of unequal numbers of bodies. */
    double c[12][4];
    for (int k = 0; k < 12; k++) {
      for (int d = 0; d < 3; d++)
        c[k][d] = uniform(&s);
      c[k][3] = 0.003 * pow(16.0, uniform(&s));
    }
    for (size_t i = 0; i < n; i++) {
      const int k = (int)(12 * pow(uniform(&s), 2));
      for (int d = 0; d < 3; d++)
        pos[3 * i + d] = c[k][d] + c[k][3] * normal(&s);
    }
    return 0.0;
  }
  if (f == UNIFORM) {
    for (size_t i = 0; i < 3 * n; i++)
      pos[i] = uniform(&s);
    return 0.0;
  }
  if (f == DISK) {
    /* 80 %: an exponential disk of scale 0.3 and thickness 0.01; 20 %: a
     * Gaussian bulge of width 0.05. */
    for (size_t i = 0; i < n; i++) {
      double *p = pos + 3 * i;
      if (uniform(&s) < 0.8) {
        const double r =
            -0.3 * log((uniform(&s) + 0x1p-54) * (uniform(&s) + 0x1p-54));
        const double a = 2 * PI * uniform(&s);
        p[0] = r * cos(a), p[1] = r * sin(a), p[2] = 0.01 * normal(&s);
      } else {
        for (int d = 0; d < 3; d++)
          p[d] = 0.05 * normal(&s);
      }
    }
    return 0.002;
  }
  /* 90 % on the x axis in [-1, 1], 10 % at one point, coincident. */
  for (size_t i = 0; i < n; i++) {
    double *p = pos + 3 * i;
    if (i % 10 == 3) {
      p[0] = 0.25, p[1] = 0.1, p[2] = 0.0;
    } else {
      p[0] = 2 * uniform(&s) - 1, p[1] = p[2] = 0.0;
    }
  }
  return 0.01;
}

/* Newton's or Plummer's pulls of all n bodies on body i, in long
 * double. */
static void truth_at(size_t n, const double *pos, const double *mass,
                     double eps, size_t i, double *out) {
  long double a[3] = {0, 0, 0};
  for (size_t j = 0; j < n; j++) {
    if (j == i)
      continue;
    long double d[3], r2 = (long double)eps * eps;
    for (int k = 0; k < 3; k++) {
      d[k] = (long double)pos[3 * j + k] - pos[3 * i + k];
      r2 += d[k] * d[k];
    }
    if (r2 == 0)
      continue;
    const long double f = mass[j] / (r2 * sqrtl(r2));
    for (int k = 0; k < 3; k++)
      a[k] += f * d[k];
  }
  for (int k = 0; k < 3; k++)
    out[k] = (double)a[k];
}

/* The bodies of one case over the ranks: every rank makes all n; body i
 * is rank mpi_share(i)'s, in order. Each rank's truth at its own; the
 * index in rank order (the ranks' bodies one after another) of each. */
typedef struct bodies {
  size_t n, m;
  double eps, *pos, *mass, *mp, *mm, *truth;
  size_t *idx;     /* this rank's k-th body is body idx[k] */
  size_t *ordered; /* body i's index in rank order */
} bodies;

static bodies bodies_make(family f, uint64_t seed, int rank, int size) {
  bodies b = {.n = N};
  b.pos = malloc(3 * N * sizeof *b.pos);
  b.mass = malloc(N * sizeof *b.mass);
  b.eps = make(f, N, seed, b.pos, b.mass);
  b.idx = malloc(N * sizeof *b.idx);
  b.ordered = malloc(N * sizeof *b.ordered);
  size_t at = 0;
  for (int r = 0; r < size; r++)
    for (size_t i = 0; i < N; i++)
      if (mpi_share(i, size) == r) {
        b.ordered[i] = at++;
        if (r == rank)
          b.idx[b.m++] = i;
      }
  b.mp = malloc((3 * b.m + 1) * sizeof *b.mp);
  b.mm = malloc((b.m + 1) * sizeof *b.mm);
  b.truth = malloc((3 * b.m + 1) * sizeof *b.truth);
  for (size_t k = 0; k < b.m; k++) {
    memcpy(b.mp + 3 * k, b.pos + 3 * b.idx[k], 3 * sizeof *b.mp);
    b.mm[k] = b.mass[b.idx[k]];
    truth_at(N, b.pos, b.mass, b.eps, b.idx[k], b.truth + 3 * k);
  }
  return b;
}

static void bodies_free(bodies *b) {
  free(b->pos), free(b->mass), free(b->mp), free(b->mm), free(b->truth);
  free(b->idx), free(b->ordered);
}

/* Whether every rank holds rank 0's copy of `bytes` bytes at v. */
static int same_everywhere(const void *v, int bytes) {
  char *zero = malloc((size_t)bytes);
  memcpy(zero, v, (size_t)bytes);
  MPI_Bcast(zero, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
  int same = memcmp(zero, v, (size_t)bytes) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  free(zero);
  return same;
}

/* The choice and the statistics every rank judged from: the same bits on
 * every rank (field by field: a struct's padding is no one's). */
static int same_choice(const tfmm_solver *s) {
  tfmm_choice c;
  tfmm_solver_choice(s, &c);
  const tfmm_stats *st = tfmm_solver_stats(s);
  const double v[] = {c.chosen,
                      c.theta,
                      c.order,
                      c.factor,
                      c.since,
                      (double)c.evaluations,
                      (double)c.n,
                      c.accuracy,
                      c.leaf,
                      c.near_gpu,
                      c.precision,
                      c.failed_cost,
                      c.epsilon,
                      st->theta,
                      st->order,
                      st->error.measured,
                      st->error.p99,
                      st->error.p99_bound,
                      st->error.median,
                      st->error.max,
                      (double)st->error.worst_body,
                      (double)st->error.samples,
                      (double)st->error.group_bodies,
                      (double)st->error.group_measured,
                      st->error.group_median,
                      st->error.group_p99,
                      st->error.group_max};
  return same_everywhere(v, (int)sizeof v) &&
         same_everywhere(st->plan, (int)sizeof st->plan);
}

/* Each body's error against the truth, this rank's. */
static void errors(const bodies *b, const double *acc, double *e) {
  for (size_t k = 0; k < b->m; k++)
    e[k] = rel3(acc + 3 * k, b->truth + 3 * k);
}

/* The device of every rank's solver: the CPU, or with
 * TFMM_TEST_DEVICE=gpu one GPU per rank (the device run: the measured
 * error's exact sums then run on it, measure_ranks.c). */
static tfmm_device test_device(void) {
  const char *dev = getenv("TFMM_TEST_DEVICE");
  return dev != NULL && strcmp(dev, "gpu") == 0 ? TFMM_DEVICE_GPU
                                                : TFMM_DEVICE_CPU;
}

/* Three calls of the planner over the ranks at target tol: each within
 * it at every body, every rank alike. */
static void planner_meets(family f, double tol, uint64_t seed, int rank,
                          int size) {
  bodies b = bodies_make(f, seed, rank, size);
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.device = test_device();
  cfg.eps = b.eps;
  cfg.accuracy = tol;
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create_mpi(&s, &cfg, MPI_COMM_WORLD);
  CHECK(st == TFMM_OK, "create_mpi: %s", tfmm_solver_message(s));
  double *acc = malloc((3 * b.m + 1) * sizeof *acc);
  double *e = malloc((b.m + 1) * sizeof *e);
  for (int call = 0; call < 3; call++) {
    for (size_t k = 0; k < 3 * b.m; k++)
      acc[k] = NAN; /* poisoned */
    st = tfmm_solver_compute(s, b.m, b.mp, b.mm, acc, NULL);
    CHECK(st == TFMM_OK, "%s call %d: %s", family_name[f], call,
          tfmm_solver_message(s));
    errors(&b, acc, e);
    const double p99 = mpi_quantile(e, (int)b.m, 0.99);
    const tfmm_stats *x = tfmm_solver_stats(s);
    tfmm_choice c;
    tfmm_solver_choice(s, &c);
    if (rank == 0)
      printf("%-9s eps %-5g tol %.0e, %d ranks, call %d: p99 %.3e (measured "
             "%.3e); %s\n",
             family_name[f], b.eps, tol, size, call, p99, x->error.p99,
             x->plan);
    CHECK(c.chosen && x->theta == c.theta && x->order == c.order,
          "%s call %d: chose nothing or another setting: chosen %d theta %g "
          "order %d, evaluated at theta %g order %d",
          family_name[f], call, c.chosen, c.theta, c.order, x->theta, x->order);
    /* Every call within the target, the kept ones unmeasured too: the
     * planner over two or more ranks aims at the target over
     * TFMM_SPLIT_MARGIN (tilefmm.h), since a kept setting is evaluated
     * over another split than the one it was measured on. */
    CHECK(p99 <= tol, "%s call %d over %d ranks: p99 %.4e > %.0e (%s)",
          family_name[f], call, size, p99, tol, x->plan);
    CHECK(same_choice(s), "%s call %d: the ranks hold different choices",
          family_name[f], call);
    /* The first call measured every body: the p99 the planner judged is
     * the population's, within the sums' rounding of the truth's: 1e-6 of
     * it, and 1e-13 besides, the double-precision reference's own error
     * relative to |a| (reference_gpu.h; the CPU's compensated sums do
     * better), which is all there is where the planner fell back to its
     * most accurate setting and every pair is summed (errors ~1e-14). */
    if (call == 0)
      CHECK(x->error.measured && x->error.samples == N &&
                fabs(x->error.p99 - p99) <= 1e-6 * p99 + 1e-13,
            "%s: measured p99 %.9e of %zu bodies, truth %.9e", family_name[f],
            x->error.p99, x->error.samples, p99);
  }
  tfmm_solver_destroy(s);
  free(acc), free(e);
  bodies_free(&b);
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The grid cell along each axis at the deepest level (2^21 a side) of the
 * cube (lo, side), as the domain's cube is cut (decompose.c's bounds: the
 * bodies' extent, a 2^-20 larger). */
static void cell_of(const double *p, const double lo[3], double side,
                    uint32_t out[3]) {
  const double scale = (double)(1u << 21) / side;
  for (int d = 0; d < 3; d++) {
    double u = (p[d] - lo[d]) * scale;
    u = u > 0 ? u : 0;
    u = u < (1u << 21) - 1 ? u : (1u << 21) - 1;
    out[d] = (uint32_t)u;
  }
}

/* The worst group over the ranks (every body sampled: the worst body is
 * the worst of all) against the leaf found here and its bodies' errors
 * against the truth. */
static void worst_group(family f, int leaf, uint64_t seed, int rank, int size) {
  bodies b = bodies_make(f, seed, rank, size);
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.device = test_device();
  cfg.eps = b.eps;
  cfg.theta = 0.7;
  cfg.order = 3; /* errors far above the sums' rounding */
  cfg.leaf_size = leaf;
  cfg.measure = TFMM_MEASURE_ALWAYS;
  cfg.error_sample = N;
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create_mpi(&s, &cfg, MPI_COMM_WORLD);
  CHECK(st == TFMM_OK, "create_mpi: %s", tfmm_solver_message(s));
  double *acc = malloc((3 * b.m + 1) * sizeof *acc);
  for (size_t k = 0; k < 3 * b.m; k++)
    acc[k] = NAN;
  st = tfmm_solver_compute(s, b.m, b.mp, b.mm, acc, NULL);
  CHECK(st == TFMM_OK, "%s: %s", family_name[f], tfmm_solver_message(s));
  const tfmm_stats x = *tfmm_solver_stats(s);
  CHECK(same_choice(s), "%s: the ranks report different groups",
        family_name[f]);
  /* Every body's error, by body, on every rank. */
  double *mine = calloc(N, sizeof *mine), *err = malloc(N * sizeof *err);
  double *e = malloc((b.m + 1) * sizeof *e);
  errors(&b, acc, e);
  for (size_t k = 0; k < b.m; k++)
    mine[b.idx[k]] = e[k];
  MPI_Allreduce(mine, err, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  size_t worst = N;
  for (size_t i = 0; i < N; i++)
    if ((int64_t)b.ordered[i] == x.error.worst_body)
      worst = i;
  CHECK(worst < N, "%s: worst body %lld is no body", family_name[f],
        (long long)x.error.worst_body);
  if (worst == N)
    worst = 0;
  /* The leaf: the first cell on the worst body's path holding at most
   * leaf bodies, or bodies all in its deepest cell. */
  double lo[3] = {INFINITY, INFINITY, INFINITY},
         hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < N; i++)
    for (int d = 0; d < 3; d++) {
      lo[d] = fmin(lo[d], b.pos[3 * i + d]);
      hi[d] = fmax(hi[d], b.pos[3 * i + d]);
    }
  double side = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
  side *= 1.0 + 0x1p-20;
  uint32_t *cell = malloc(3 * N * sizeof *cell);
  for (size_t i = 0; i < N; i++)
    cell_of(b.pos + 3 * i, lo, side, cell + 3 * i);
  size_t count[22] = {0};
  for (int level = 0; level <= 21; level++)
    for (size_t i = 0; i < N; i++) {
      int in = 1;
      for (int d = 0; d < 3; d++)
        in &= cell[3 * i + d] >> (21 - level) ==
              cell[3 * worst + d] >> (21 - level);
      count[level] += in;
    }
  int level = 0;
  while (count[level] > (size_t)leaf && count[level] != count[21])
    level++;
  double *group = malloc(N * sizeof *group);
  size_t g = 0;
  for (size_t i = 0; i < N; i++) {
    int in = 1;
    for (int d = 0; d < 3; d++)
      in &= cell[3 * i + d] >> (21 - level) ==
            cell[3 * worst + d] >> (21 - level);
    if (in)
      group[g++] = err[i];
  }
  qsort(group, g, sizeof *group, by_value);
  if (rank == 0)
    printf("%-9s eps %-5g leaf %d, %d ranks: worst body %lld (error %.3e, "
           "measured "
           "max %.3e); its leaf: level %d, %zu bodies (reported %zu, %zu "
           "measured): median %.4e p99 %.4e max %.4e (reported %.4e %.4e "
           "%.4e)\n",
           family_name[f], b.eps, leaf, size, (long long)x.error.worst_body,
           err[worst], x.error.max, level, g, x.error.group_bodies,
           x.error.group_measured, group[(g - 1) / 2],
           group[(size_t)ceil(0.99 * g) - 1], group[g - 1],
           x.error.group_median, x.error.group_p99, x.error.group_max);
  CHECK(fabs(err[worst] - x.error.max) <= 1e-6 * x.error.max,
        "%s: the worst body's error %.9e, measured max %.9e", family_name[f],
        err[worst], x.error.max);
  CHECK(x.error.group_bodies == g, "%s: group of %zu bodies, here %zu",
        family_name[f], x.error.group_bodies, g);
#define NEAR(a, b) (fabs((a) - (b)) <= 1e-6 * fabs(b) + 1e-15)
  if (g <= GROUP_MAX) {
    /* Every body of the group measured: its figures are the leaf's. */
    CHECK(x.error.group_measured == g &&
              NEAR(x.error.group_median, group[(g - 1) / 2]) &&
              NEAR(x.error.group_p99, group[(size_t)ceil(0.99 * g) - 1]) &&
              NEAR(x.error.group_max, group[g - 1]),
          "%s: group of %zu: measured %zu, median %.9e p99 %.9e max %.9e; "
          "here %.9e %.9e %.9e",
          family_name[f], g, x.error.group_measured, x.error.group_median,
          x.error.group_p99, x.error.group_max, group[(g - 1) / 2],
          group[(size_t)ceil(0.99 * g) - 1], group[g - 1]);
  } else {
    /* GROUP_MAX of them stratified along it, the worst among them: its
     * largest the worst body's, the p99 within the leaf's errors, and the
     * median of more than half the leaf between its 10th and 90th
     * percentiles. */
    const double q10 = group[(size_t)ceil(0.1 * g) - 1],
                 q90 = group[(size_t)ceil(0.9 * g) - 1];
    CHECK(x.error.group_measured == GROUP_MAX &&
              NEAR(x.error.group_max, err[worst]) &&
              x.error.group_median >= q10 * (1 - 1e-6) &&
              x.error.group_median <= q90 * (1 + 1e-6) &&
              x.error.group_p99 >= group[0] * (1 - 1e-6) &&
              x.error.group_p99 <= group[g - 1] * (1 + 1e-6),
          "%s: group of %zu: measured %zu, median %.9e p99 %.9e max %.9e; "
          "leaf's 10th and 90th percentiles %.9e %.9e, least %.9e, worst "
          "%.9e",
          family_name[f], g, x.error.group_measured, x.error.group_median,
          x.error.group_p99, x.error.group_max, q10, q90, group[0], err[worst]);
  }
  tfmm_solver_destroy(s);
  free(acc), free(mine), free(err), free(e), free(cell), free(group);
  bodies_free(&b);
}

int main(int argc, char **argv) {
  int rank, size;
  const uint64_t seed = mpi_start(&argc, &argv, &rank, &size);
  for (family f = CLUSTERS; f < UNIFORM; f++) {
    planner_meets(f, 1e-3, seed + 10 * f, rank, size);
    planner_meets(f, 1e-4, seed + 10 * f + 1, rank, size);
    worst_group(f, LEAF, seed + 10 * f + 2, rank, size);
  }
  /* A group larger than GROUP_MAX. */
  worst_group(UNIFORM, 512, seed + 40, rank, size);
  return mpi_finish("test_mpi_planner");
}
