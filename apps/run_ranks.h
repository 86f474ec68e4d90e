/* The bodies of 'tilefmm run' between the ranks under mpirun (mpi_cli.h):
 * rank 0 reads the initial conditions or the checkpoint and hands every
 * rank a contiguous block of them; at a snapshot, a checkpoint or the
 * picture rank 0 gathers every rank's bodies, sorted by id, so that the
 * files are those of one process. Collective; with MPI off each is the one
 * process's own state, untouched. */
#ifndef TFMM_RUN_RANKS_H
#define TFMM_RUN_RANKS_H

#include "run_state.h"
#include "snapshot.h"

#include "tilefmm.h"

#include <stddef.h>

/* Rank 0's state (s on rank 0; s zeroed elsewhere) becomes every rank's:
 * its scalars, and its bodies in blocks, this rank's block replacing s's
 * arrays. Returns 0 (agreed; printed) when out of memory: s is then
 * released on every rank. */
int run_ranks_scatter(run_state *s);

/* A state gathered on rank 0. */
typedef struct run_ranks_state {
  tfmm_sim_state state; /* on rank 0 every body, by ascending id; n = 0 on
                           the others */
  void *owned;          /* the arrays, when gathered (MPI on) */
} run_ranks_state;

/* Every rank's part (mine: tfmm_sim_save's or _save_end's views) on rank
 * 0; with MPI off, out->state is *mine (views, nothing copied). The
 * scalars are mine's. Returns 0 (agreed; printed) on a failure. */
int run_ranks_gather(const tfmm_sim_state *mine, run_ranks_state *out);

/* tfmm_sim_save of every rank, gathered (collective like the save). */
int run_ranks_save(tfmm_sim *sim, run_ranks_state *out);

void run_ranks_free(run_ranks_state *s);

/* Rank 0's parameters of a checkpoint (*params, *count: on rank 0 read,
 * elsewhere NULL and 0) copied to every rank, allocated as
 * run_options_free_attrs releases. Returns 0 (agreed; printed) when out
 * of memory. */
int run_ranks_share_attrs(snapshot_attr **params, size_t *count);

/* The bodies of every rank: the sum of their tfmm_sim_count. */
size_t run_ranks_count(const tfmm_sim *sim);

#endif
