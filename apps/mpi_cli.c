/* The tool under mpirun (see mpi_cli.h). Everything that names MPI is in
 * this file: without TFMM_CLI_MPI there is one rank and the calls reduce
 * to identities. */
#define _POSIX_C_SOURCE 200809L
#ifdef TFMM_CLI_MPI
#include <mpi.h> /* before tilefmm.h: it declares the _mpi calls then */
#endif
#include "mpi_cli.h"

#include "cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on;        /* MPI_Init was called */
static int rank;      /* of MPI_COMM_WORLD */
static int ranks = 1; /* its size */

/* A rank's reason for its failure, for rank 0 to print (mpi_cli_agree). */
#define KEPT_SIZE 1024
static char kept[KEPT_SIZE];

int mpi_cli_on(void) { return on; }
int mpi_cli_rank(void) { return rank; }
int mpi_cli_ranks(void) { return ranks; }

void mpi_cli_local_keep(const char *msg) {
  if (kept[0] == '\0')
    snprintf(kept, sizeof kept, "%s", msg);
}

size_t mpi_cli_block_start(size_t n, int r) {
  /* n < 2^31 (mpi_cli_scatter checks) and r <= ranks < 2^31: no overflow
   * in 64 bits. */
  return (size_t)((uint64_t)n * (uint64_t)r / (uint64_t)ranks);
}

char *mpi_cli_bcast_string(const char *s, int *ok) {
  int64_t len = s != NULL ? (int64_t)strlen(s) : -1;
  mpi_cli_bcast(&len, sizeof len);
  if (len < 0)
    return NULL;
  char *copy = malloc((size_t)len + 1);
  if (copy == NULL)
    cli_error("out of memory");
  if (!mpi_cli_agree(copy != NULL)) {
    free(copy);
    *ok = 0;
    return NULL;
  }
  if (rank == 0)
    memcpy(copy, s, (size_t)len + 1);
  mpi_cli_bcast(copy, (size_t)len + 1);
  return copy;
}

#ifdef TFMM_CLI_MPI

/* Whether mpirun (Open MPI, MPICH's hydra) or srun started this process:
 * then MPI_Init joins the others; started by hand, the tool does not
 * start MPI at all (no singleton MPI job for a plain 'tilefmm'). */
static int launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") != NULL ||
         getenv("PMIX_RANK") != NULL || getenv("PMI_SIZE") != NULL;
}

int mpi_cli_init(int *argc, char ***argv) {
  if (!launched())
    return 1;
  int provided;
  /* Only the main thread calls MPI (the snapshot writer's thread and
   * OpenMP's make no MPI call). */
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    cli_error("MPI_Init failed");
    return 0;
  }
  on = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  /* Rank 0 speaks for all: the others run the same command in step with
   * it, and would print every line again. (Should /dev/null not open,
   * freopen leaves the stream closed: its writes fail, unseen.) */
  if (rank > 0) {
    FILE *out = freopen("/dev/null", "w", stdout);
    FILE *err = freopen("/dev/null", "w", stderr);
    (void)out, (void)err;
  }
  return 1;
}

int mpi_cli_finalize(int code) {
  if (!on)
    return code;
  int all = code;
  MPI_Allreduce(&code, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  on = 0;
  return all;
}

int mpi_cli_agree(int ok) {
  if (!on)
    return ok;
  int mine = ok ? INT_MAX : rank, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first != INT_MAX && first != 0) {
    /* Rank 0 is well: it has said nothing, so it says the failing rank's
     * reason. */
    char msg[KEPT_SIZE];
    snprintf(msg, sizeof msg, "%s",
             kept[0] != '\0' ? kept : "failed (it kept no message)");
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
    if (rank == 0)
      cli_error("rank %d: %s", first, msg);
  }
  kept[0] = '\0';
  return first == INT_MAX;
}

static void reduce(void *v, int count, MPI_Datatype type, MPI_Op op) {
  if (on)
    MPI_Allreduce(MPI_IN_PLACE, v, count, type, op, MPI_COMM_WORLD);
}

void mpi_cli_sum_i64(int64_t *v, int count) {
  reduce(v, count, MPI_INT64_T, MPI_SUM);
}
void mpi_cli_min_f64(double *v, int count) {
  reduce(v, count, MPI_DOUBLE, MPI_MIN);
}
void mpi_cli_max_f64(double *v, int count) {
  reduce(v, count, MPI_DOUBLE, MPI_MAX);
}
void mpi_cli_sum_f64(double *v, int count) {
  reduce(v, count, MPI_DOUBLE, MPI_SUM);
}
int mpi_cli_max_int(int x) {
  reduce(&x, 1, MPI_INT, MPI_MAX);
  return x;
}

void mpi_cli_bcast(void *buf, size_t bytes) {
  if (on)
    MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* A body of `size` bytes as one MPI element, so that counts are bodies. */
static MPI_Datatype body_type(size_t size) {
  MPI_Datatype t;
  MPI_Type_contiguous((int)size, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

/* Every rank's block counts and first bodies (rank 0's business only, but
 * computed alike everywhere); NULL when out of memory. */
static int *block_counts(size_t n, int **displs) {
  int *counts = malloc(2 * (size_t)ranks * sizeof *counts);
  if (counts == NULL)
    return NULL;
  *displs = counts + ranks;
  for (int r = 0; r < ranks; r++) {
    (*displs)[r] = (int)mpi_cli_block_start(n, r);
    counts[r] = (int)(mpi_cli_block_start(n, r + 1) - (size_t)(*displs)[r]);
  }
  return counts;
}

int mpi_cli_scatter(const void *all, size_t n, size_t size, void **mine,
                    size_t *count) {
  *mine = NULL;
  *count = 0;
  if (n > INT_MAX) {
    if (rank == 0)
      cli_error("%zu bodies: over MPI the tool hands out at most %d", n,
                INT_MAX);
    return 0; /* n is every rank's: no need to agree */
  }
  const size_t lo = mpi_cli_block_start(n, rank),
               hi = mpi_cli_block_start(n, rank + 1);
  *count = hi - lo;
  *mine = malloc(*count > 0 ? *count * size : 1);
  int *displs = NULL, *counts = rank == 0 ? block_counts(n, &displs) : NULL;
  if (*mine == NULL || (rank == 0 && counts == NULL))
    cli_error("out of memory for %zu bodies", *count);
  if (!mpi_cli_agree(*mine != NULL && (rank != 0 || counts != NULL))) {
    free(counts);
    free(*mine);
    *mine = NULL;
    *count = 0;
    return 0;
  }
  if (!on) {
    memcpy(*mine, all, n * size);
    free(counts);
    return 1;
  }
  MPI_Datatype t = body_type(size);
  MPI_Scatterv(all, counts, displs, t, *mine, (int)*count, t, 0,
               MPI_COMM_WORLD);
  MPI_Type_free(&t);
  free(counts);
  return 1;
}

int mpi_cli_gather(const void *mine, size_t count, size_t size, void **all,
                   size_t *n) {
  *all = NULL;
  *n = 0;
  int64_t total = (int64_t)count;
  mpi_cli_sum_i64(&total, 1);
  if (total > INT_MAX) {
    if (rank == 0)
      cli_error("%lld bodies: over MPI the tool gathers at most %d",
                (long long)total, INT_MAX);
    return 0; /* total is every rank's */
  }
  int *counts = NULL, *displs = NULL;
  if (rank == 0) {
    *all = malloc(total > 0 ? (size_t)total * size : 1);
    counts = malloc(2 * (size_t)ranks * sizeof *counts);
    if (*all == NULL || counts == NULL)
      cli_error("out of memory for %lld bodies", (long long)total);
    displs = counts != NULL ? counts + ranks : NULL;
  }
  if (!mpi_cli_agree(rank != 0 || (*all != NULL && counts != NULL))) {
    free(*all);
    free(counts);
    *all = NULL;
    return 0;
  }
  *n = (size_t)total;
  if (!on) {
    memcpy(*all, mine, count * size);
    free(counts);
    return 1;
  }
  const int c = (int)count;
  MPI_Gather(&c, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int at = 0;
    for (int r = 0; r < ranks; r++) {
      displs[r] = at;
      at += counts[r];
    }
  }
  MPI_Datatype t = body_type(size);
  MPI_Gatherv(mine, c, t, *all, counts, displs, t, 0, MPI_COMM_WORLD);
  MPI_Type_free(&t);
  free(counts);
  if (rank != 0)
    *n = 0;
  return 1;
}

tfmm_status mpi_cli_solver_create(tfmm_solver **out, const tfmm_config *cfg) {
  return on ? tfmm_solver_create_mpi(out, cfg, MPI_COMM_WORLD)
            : tfmm_solver_create(out, cfg);
}

tfmm_status mpi_cli_sim_create(tfmm_sim **out, const tfmm_sim_config *cfg,
                               size_t n, const double *pos, const double *vel,
                               const double *mass, const uint64_t *ids) {
  return on ? tfmm_sim_create_mpi(out, cfg, MPI_COMM_WORLD, n, pos, vel, mass,
                                  ids)
            : tfmm_sim_create(out, cfg, n, pos, vel, mass, ids);
}

tfmm_status mpi_cli_sim_restore(tfmm_sim **out, const tfmm_sim_config *cfg,
                                const tfmm_sim_state *state) {
  return on ? tfmm_sim_restore_mpi(out, cfg, MPI_COMM_WORLD, state)
            : tfmm_sim_restore(out, cfg, state);
}

#else /* one process */

/* A launcher's count of processes, from its environment (Open MPI's or
 * PMI's), or 0 when it gives none. */
static long launched_size(void) {
  const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    const char *v = getenv(names[k]);
    if (v != NULL)
      return strtol(v, NULL, 10);
  }
  return 0;
}

int mpi_cli_init(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const long size = launched_size();
  if (size <= 1)
    return 1;
  /* Every process would run the whole command alone, over the same files:
   * the first one (rank 0 by its launcher) says why none does. */
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (r == NULL)
    r = getenv("PMI_RANK");
  if (r == NULL || strcmp(r, "0") == 0)
    cli_error("started as %ld processes (mpirun or srun), but this tilefmm "
              "was built without MPI (tilefmm --version): each would run the "
              "whole command alone over the same files. Build it with MPI "
              "(libopenmpi-dev; cmake -DTILEFMM_MPI=ON, docs/mpi.md) or run "
              "one process",
              size);
  return 0;
}

int mpi_cli_finalize(int code) { return code; }
int mpi_cli_agree(int ok) { return ok; }
void mpi_cli_sum_i64(int64_t *v, int count) { (void)v, (void)count; }
void mpi_cli_min_f64(double *v, int count) { (void)v, (void)count; }
void mpi_cli_max_f64(double *v, int count) { (void)v, (void)count; }
void mpi_cli_sum_f64(double *v, int count) { (void)v, (void)count; }
int mpi_cli_max_int(int x) { return x; }
void mpi_cli_bcast(void *buf, size_t bytes) { (void)buf, (void)bytes; }

int mpi_cli_scatter(const void *all, size_t n, size_t size, void **mine,
                    size_t *count) {
  *count = n;
  *mine = malloc(n > 0 ? n * size : 1);
  if (*mine == NULL) {
    cli_error("out of memory for %zu bodies", n);
    return 0;
  }
  memcpy(*mine, all, n * size);
  return 1;
}

int mpi_cli_gather(const void *mine, size_t count, size_t size, void **all,
                   size_t *n) {
  return mpi_cli_scatter(mine, count, size, all, n);
}

tfmm_status mpi_cli_solver_create(tfmm_solver **out, const tfmm_config *cfg) {
  return tfmm_solver_create(out, cfg);
}

tfmm_status mpi_cli_sim_create(tfmm_sim **out, const tfmm_sim_config *cfg,
                               size_t n, const double *pos, const double *vel,
                               const double *mass, const uint64_t *ids) {
  return tfmm_sim_create(out, cfg, n, pos, vel, mass, ids);
}

tfmm_status mpi_cli_sim_restore(tfmm_sim **out, const tfmm_sim_config *cfg,
                                const tfmm_sim_state *state) {
  return tfmm_sim_restore(out, cfg, state);
}

#endif
