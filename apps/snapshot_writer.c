/* Snapshots written while the simulation steps on (snapshot_writer.h). */
#include "snapshot_writer.h"

#include "cli.h"
#include "mpi_cli.h"
#include "run_state.h"

#include <stdlib.h>
#include <string.h>

static void *write_thread(void *arg) {
  snapshot_writer *w = arg;
  w->ok = run_state_write_saved(&w->state, 0, w->ro, w->path, w->params,
                                w->nparams, 0, NULL);
  return NULL;
}

/* Waits for the thread, if one writes. */
static int join(snapshot_writer *w) {
  if (!w->running)
    return 1;
  pthread_join(w->thread, NULL);
  w->running = 0;
  free(w->path);
  w->path = NULL;
  run_ranks_free(&w->ranks);
  return w->ok;
}

int snapshot_writer_hand_off(snapshot_writer *w) {
  if (!w->begun)
    return 1;
  w->begun = 0;
  tfmm_sim_state mine;
  if (tfmm_sim_save_end(w->sim, &mine) != TFMM_OK) {
    cli_error("%s: %s", w->path, tfmm_sim_message(w->sim));
    free(w->path);
    w->path = NULL;
    return 0;
  }
  /* Every rank's bodies to rank 0, which alone writes; with one process,
   * mine as it is. */
  if (!run_ranks_gather(&mine, &w->ranks)) {
    free(w->path); /* the gather's failure is every rank's */
    w->path = NULL;
    return 0;
  }
  int ok = 1;
  if (mpi_cli_rank() != 0) {
    free(w->path);
    w->path = NULL;
  } else {
    w->state = w->ranks.state;
    w->running = 1;
    if (pthread_create(&w->thread, NULL, write_thread, w) != 0) {
      w->running = 0; /* no thread: write it here */
      write_thread(w);
      free(w->path);
      w->path = NULL;
      run_ranks_free(&w->ranks);
      ok = w->ok;
    }
  }
  return mpi_cli_agree(ok);
}

int snapshot_writer_finish(snapshot_writer *w) {
  const int handed = snapshot_writer_hand_off(w);
  /* Rank 0's write is every rank's result. */
  return mpi_cli_agree(join(w) && handed);
}

int snapshot_writer_begin(snapshot_writer *w, char *path) {
  const int before = snapshot_writer_finish(w);
  if (!mpi_cli_agree(path != NULL)) {
    free(path);
    return 0;
  }
  if (tfmm_sim_save_begin(w->sim) != TFMM_OK) {
    cli_error("%s: %s", path, tfmm_sim_message(w->sim));
    free(path);
    return 0;
  }
  w->path = path;
  w->begun = 1;
  return before;
}
