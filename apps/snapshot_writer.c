/* Snapshots written while the simulation steps on (snapshot_writer.h). */
#include "snapshot_writer.h"

#include "cli.h"
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
  return w->ok;
}

int snapshot_writer_hand_off(snapshot_writer *w) {
  if (!w->begun)
    return 1;
  w->begun = 0;
  if (tfmm_sim_save_end(w->sim, &w->state) != TFMM_OK) {
    cli_error("%s: %s", w->path, tfmm_sim_message(w->sim));
    free(w->path);
    w->path = NULL;
    return 0;
  }
  w->running = 1;
  if (pthread_create(&w->thread, NULL, write_thread, w) != 0) {
    w->running = 0; /* no thread: write it here */
    write_thread(w);
    free(w->path);
    w->path = NULL;
    return w->ok;
  }
  return 1;
}

int snapshot_writer_finish(snapshot_writer *w) {
  const int handed = snapshot_writer_hand_off(w);
  return join(w) && handed;
}

int snapshot_writer_begin(snapshot_writer *w, char *path) {
  const int before = snapshot_writer_finish(w);
  if (path == NULL)
    return 0;
  if (tfmm_sim_save_begin(w->sim) != TFMM_OK) {
    cli_error("%s: %s", path, tfmm_sim_message(w->sim));
    free(path);
    return 0;
  }
  w->path = path;
  w->begun = 1;
  return before;
}
