/* What the MPI tests share: a failure count that every rank agrees on,
 * fresh seeds broadcast from rank 0, and the relative error percentiles
 * gathered over the ranks. Plain C (Criterion forks, which MPI forbids). */
#ifndef TFMM_MPI_CHECK_H
#define TFMM_MPI_CHECK_H

#include <mpi.h>

#include "tilefmm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int mpi_failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      int r_;                                                                  \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                      \
      fprintf(stderr, "rank %d: FAIL %s:%d: ", r_, __FILE__, __LINE__);        \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      mpi_failures++;                                                          \
    }                                                                          \
  } while (0)

/* A seed from the clock, the same on every rank (printed by rank 0 so a
 * failure can be run again with TFMM_TEST_SEED). */
static inline uint64_t mpi_fresh_seed(void) {
  uint64_t seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
  const char *env = getenv("TFMM_TEST_SEED");
  if (env != NULL)
    seed = strtoull(env, NULL, 10);
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

static inline int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Every rank's k values, gathered on all ranks and sorted ascending (NaN
 * as the worst); their count in *total. Free the result. */
static inline double *mpi_gather_sorted(const double *v, int k, int *total) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *counts = malloc(size * sizeof *counts),
      *displ = malloc(size * sizeof *displ);
  MPI_Allgather(&k, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
  int t = 0;
  for (int r = 0; r < size; r++) {
    displ[r] = t;
    t += counts[r];
  }
  double *all = malloc((t > 0 ? t : 1) * sizeof *all);
  MPI_Allgatherv(v, k, MPI_DOUBLE, all, counts, displ, MPI_DOUBLE,
                 MPI_COMM_WORLD);
  for (int i = 0; i < t; i++)
    if (isnan(all[i]))
      all[i] = INFINITY;
  qsort(all, t, sizeof *all, cmp_double);
  free(counts), free(displ);
  *total = t;
  return all;
}

/* The q-quantile (nearest rank) of every rank's k values; all ranks get
 * it. NaN counts as the worst. */
static inline double mpi_quantile(const double *v, int k, double q) {
  int total;
  double *all = mpi_gather_sorted(v, k, &total);
  int at = (int)ceil(q * total) - 1;
  double out = total > 0 ? all[at < 0 ? 0 : at] : NAN;
  free(all);
  return out;
}

/* |a - b| / |b| for 3-vectors. */
static inline double rel3(const double *a, const double *b) {
  double d = 0, n = 0;
  for (int k = 0; k < 3; k++) {
    d += (a[k] - b[k]) * (a[k] - b[k]);
    n += b[k] * b[k];
  }
  return sqrt(d / n);
}

/* MPI started; this rank, the ranks, and a fresh seed said by rank 0. */
static inline uint64_t mpi_start(int *argc, char ***argv, int *rank,
                                 int *size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  const uint64_t seed = mpi_fresh_seed();
  if (*rank == 0)
    printf("seed %llu (TFMM_TEST_SEED), %d ranks\n", (unsigned long long)seed,
           *size);
  return seed;
}

/* The rank of `size` given body i: a hash of i, not a spatial block. */
static inline int mpi_share(size_t i, int size) {
  return (int)(((uint64_t)i * 0x9E3779B97F4A7C15ull >> 33) % (uint64_t)size);
}

/* Every rank's failures summed: the exit status of the test. */
static inline int mpi_finish(const char *name) {
  int total = mpi_failures, rank;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("%s: %s (%d failed checks)\n", name, total ? "FAILED" : "passed",
           total);
  MPI_Finalize();
  return total ? 1 : 0;
}

/* An input of the MPI tests: a model by name and its softening. */
typedef struct input {
  const char *name;
  size_t n;
  double eps;
} input;

/* The bodies of one input: positions and masses of all n. */
static inline void mpi_make(const input *in, uint64_t seed, double *pos,
                            double *mass) {
  double *vel = malloc(3 * in->n * sizeof *vel);
  if (strcmp(in->name, "merger") == 0)
    tfmm_ic_merger(in->n, seed, pos, vel, mass);
  else if (strcmp(in->name, "hernquist") == 0)
    tfmm_ic_hernquist(in->n, seed, pos, vel, mass);
  else if (strcmp(in->name, "plane") == 0) {
    /* degenerate: a Plummer sphere flattened onto z = 0, a tenth of it in
     * one tight clump */
    tfmm_ic_plummer(in->n, seed, pos, vel, mass);
    for (size_t i = 0; i < in->n; i++) {
      pos[3 * i + 2] = 0.0;
      if (i % 10 == 0)
        for (int k = 0; k < 2; k++)
          pos[3 * i + k] = 0.5 + 1e-4 * pos[3 * i + k];
    }
  } else
    tfmm_ic_plummer(in->n, seed, pos, vel, mass);
  free(vel);
}

/* One input over the ranks, made alike on every rank: body idx[k] of the
 * n is this rank's k-th of m (positions mp, masses mm); with `reference`,
 * the double-precision reference at each of them (aref; every body over
 * the ranks: no sample), else aref NULL. */
typedef struct share {
  size_t n, m, *idx;
  double *pos, *mass, *mp, *mm, *aref;
} share;

static inline share mpi_share_make(const input *in, uint64_t seed, int rank,
                                   int size, int reference) {
  share sh = {.n = in->n};
  const size_t n = in->n;
  sh.pos = malloc(3 * n * sizeof *sh.pos);
  sh.mass = malloc(n * sizeof *sh.mass);
  mpi_make(in, seed, sh.pos, sh.mass);
  sh.idx = malloc(n * sizeof *sh.idx);
  for (size_t i = 0; i < n; i++)
    if (mpi_share(i, size) == rank)
      sh.idx[sh.m++] = i;
  sh.mp = malloc((3 * sh.m + 1) * sizeof *sh.mp);
  sh.mm = malloc((sh.m + 1) * sizeof *sh.mm);
  for (size_t k = 0; k < sh.m; k++) {
    memcpy(sh.mp + 3 * k, sh.pos + 3 * sh.idx[k], 3 * sizeof *sh.mp);
    sh.mm[k] = sh.mass[sh.idx[k]];
  }
  if (!reference)
    return sh;
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.eps = in->eps;
  tfmm_solver *one = NULL;
  tfmm_status st = tfmm_solver_create(&one, &cfg);
  CHECK(st == TFMM_OK, "create: %s", tfmm_solver_message(one));
  sh.aref = malloc((3 * sh.m + 1) * sizeof *sh.aref);
  st = tfmm_solver_reference_at(one, n, sh.pos, sh.mass, sh.m, sh.idx, sh.aref,
                                NULL);
  CHECK(st == TFMM_OK, "reference: %s", tfmm_solver_message(one));
  tfmm_solver_destroy(one);
  return sh;
}

static inline void mpi_share_free(share *sh) {
  free(sh->pos), free(sh->mass), free(sh->idx), free(sh->mp), free(sh->mm);
  free(sh->aref);
}

#endif
