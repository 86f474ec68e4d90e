/* The tool under mpirun (docs/mpi.md, "Command line"). In a build with MPI
 * (TFMM_CLI_MPI) launched by mpirun or srun, every process (rank) runs the
 * same command: rank 0 reads the inputs and hands each rank a contiguous
 * block of the bodies, the library computes over MPI_COMM_WORLD, and rank
 * 0 gathers the results back, prints and writes every file. The other
 * ranks' standard output and error go to /dev/null; a message a rank
 * other than 0 gives with cli_error is kept, and rank 0 prints it (naming
 * the rank) when that rank's failure is agreed on (mpi_cli_agree).
 *
 * Started any other way, and in a build without MPI, there is one rank
 * (0): every call below is then a no-op or an identity, and the tool is
 * the one process it always was.
 *
 * Every call here that takes no "local" in its name is collective: every
 * rank makes it, in the same order. The commands keep the ranks in step
 * by letting a rank-0-only action (a file read or written) decide nothing
 * before its result is agreed on. */
#ifndef TFMM_MPI_CLI_H
#define TFMM_MPI_CLI_H

#include "tilefmm.h"

#include <stddef.h>
#include <stdint.h>

/* Starts MPI when the tool was launched by mpirun or srun (the launcher's
 * environment: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE) and built
 * with MPI; then ranks other than 0 write to /dev/null. A build without
 * MPI launched as several processes is refused: each would run alone and
 * write the same files. Returns 0 (printed) when the tool must stop. */
int mpi_cli_init(int *argc, char ***argv);

/* The exit code every rank returns: the largest of the ranks' codes. Ends
 * MPI when mpi_cli_init started it. Call once, last. */
int mpi_cli_finalize(int code);

/* Whether MPI was started (also with one rank), this rank, the ranks. */
int mpi_cli_on(void);
int mpi_cli_rank(void);
int mpi_cli_ranks(void);

/* Keeps msg (the first since the last agreement) as this rank's reason
 * for a failure (cli_error does, on ranks other than 0). Local. */
void mpi_cli_local_keep(const char *msg);

/* Whether ok is nonzero on every rank. When it is not, and rank 0's is,
 * rank 0 prints the message the lowest failing rank kept. */
int mpi_cli_agree(int ok);

/* In-place reductions over the ranks. */
void mpi_cli_sum_i64(int64_t *v, int count);
void mpi_cli_min_f64(double *v, int count);
void mpi_cli_max_f64(double *v, int count);
void mpi_cli_sum_f64(double *v, int count);
/* The largest of the ranks' x. */
int mpi_cli_max_int(int x);

/* Rank 0's bytes to every rank. */
void mpi_cli_bcast(void *buf, size_t bytes);

/* Rank 0's string (NULL allowed) to every rank as a malloc'd copy (NULL
 * for NULL). Out of memory on some rank: NULL and *ok 0 on every rank. */
char *mpi_cli_bcast_string(const char *s, int *ok);

/* The first body of rank r's block when n bodies are split into
 * contiguous blocks, one a rank, in rank order (r = ranks: n). Local. */
size_t mpi_cli_block_start(size_t n, int r);

/* Rank 0's n bodies (n given on every rank: mpi_cli_bcast it first) of
 * `size` bytes each at all, split into blocks: *mine gets this rank's
 * block (malloc'd, at least one byte; *count bodies). With one rank,
 * *mine is a copy too. Returns 0 when out of memory on some rank (agreed;
 * *mine NULL). */
int mpi_cli_scatter(const void *all, size_t n, size_t size, void **mine,
                    size_t *count);

/* The inverse: every rank's count bodies of `size` bytes at mine, in rank
 * order, into *all on rank 0 (malloc'd there; NULL elsewhere), *n of
 * them. Returns 0 when out of memory or past 2^31 - 1 bodies (agreed). */
int mpi_cli_gather(const void *mine, size_t count, size_t size, void **all,
                   size_t *n);

/* The library's objects over MPI_COMM_WORLD when MPI is on (the _mpi
 * calls of tilefmm.h), else those of one process. */
tfmm_status mpi_cli_solver_create(tfmm_solver **out, const tfmm_config *cfg);
tfmm_status mpi_cli_sim_create(tfmm_sim **out, const tfmm_sim_config *cfg,
                               size_t n, const double *pos, const double *vel,
                               const double *mass, const uint64_t *ids);
tfmm_status mpi_cli_sim_restore(tfmm_sim **out, const tfmm_sim_config *cfg,
                                const tfmm_sim_state *state);

#endif
