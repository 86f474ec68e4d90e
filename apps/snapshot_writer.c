/* Snapshots written while the simulation steps on (snapshot_writer.h). */
#include "snapshot_writer.h"

#include "cli.h"
#include "mpi_cli.h"
#include "run_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One write's thread: its slot and number, the thread of the write
 * before it, which it joins before its own files take their names, and
 * its result. */
typedef struct write_job {
  snapshot_writer *w;
  writer_slot *slot;
  int64_t number;
  int has_before;
  pthread_t before;
  int ok;
} write_job;

/* The thread before job's, joined once: its result and all before it. */
static int join_before(write_job *job) {
  if (!job->has_before)
    return 1;
  job->has_before = 0;
  void *ret = NULL;
  pthread_join(job->before, &ret);
  write_job *b = ret;
  const int ok = b != NULL && b->ok;
  free(b);
  return ok;
}

/* Adds a file's bytes (its temporary's size) and the seconds its data
 * took, or the seconds of a sync and rename (bytes 0, files 0), to the
 * writer's totals. */
static void count(snapshot_writer *w, const atomic_file *af, int files,
                  double write, double sync) {
  struct stat st;
  const double bytes =
      files > 0 && af->tmp_path != NULL && stat(af->tmp_path, &st) == 0
          ? (double)st.st_size
          : 0.0;
  pthread_mutex_lock(&w->lock);
  w->totals.files += files;
  w->totals.bytes += bytes;
  w->totals.write += write;
  w->totals.sync += sync;
  pthread_mutex_unlock(&w->lock);
}

/* Says that path was not written (a write before it failed). */
static void not_written(const char *path) {
  cli_error("%s: not written: a file before it failed", path);
}

/* A file written, synced and renamed in order (after every file before
 * it); ok: no file before it in this job failed. After a failure (this
 * job's or one before it) the file is discarded instead, its temporary
 * removed: no later file takes its name, so the files in place stay in
 * sequence and the checkpoint in place is older than the file missing (a
 * restart from it writes that file again). Failures noted on the writer
 * at once. */
static int commit(write_job *job, atomic_file *af, int written, int ok) {
  ok = join_before(job) && ok;
  if (!written)
    return ok;
  if (!ok) {
    not_written(af->path);
    atomic_file_discard(af);
    return 0;
  }
  const double t0 = cli_seconds();
  ok = atomic_file_commit(af);
  count(job->w, af, 0, 0.0, cli_seconds() - t0);
  return ok;
}

/* One file's data to its temporary (run_state_write_saved), counted. */
static int write_file(snapshot_writer *w, const tfmm_sim_state *s, int clock,
                      const char *path, const snapshot_attr *params,
                      size_t nparams, int checkpoint, atomic_file *af) {
  const double t0 = cli_seconds();
  const int ok =
      run_state_write_saved(s, clock, w->ro, path, params, nparams, checkpoint,
                            checkpoint ? w->device : NULL, af);
  if (ok)
    count(w, af, 1, cli_seconds() - t0, 0.0);
  return ok;
}

/* Waits until the writes numbered up to number have written their data
 * (their syncs may go on). */
static void wait_written(snapshot_writer *w, int64_t number) {
  if (!w->synced)
    return;
  pthread_mutex_lock(&w->lock);
  while (w->written_jobs < number)
    pthread_cond_wait(&w->written, &w->lock);
  pthread_mutex_unlock(&w->lock);
}

/* Whether a write has failed (under lock: the threads set it). */
static int any_failed(snapshot_writer *w) {
  pthread_mutex_lock(&w->lock);
  const int failed = w->failed;
  pthread_mutex_unlock(&w->lock);
  return failed;
}

/* The snapshot, then the checkpoint, after the write numbered before it
 * has written its data (one HDF5 writer at a time, in the order the
 * states were taken). Once a write has failed nothing more is written
 * (printed by the write that failed): the run stops at its next step. A
 * checkpoint is written only after its step's snapshot has its name, so
 * a snapshot that failed leaves the checkpoint before it in place. The
 * data are written to temporaries; then the main thread may take a state
 * into this slot again, while this thread syncs and renames them, after
 * the write before: the sync, the disk's share, overlaps the next steps
 * and the next writes. After its data are written the thread touches
 * only w->lock, w->failed and w->totals. */
static void *write_thread(void *arg) {
  write_job *job = arg;
  snapshot_writer *w = job->w;
  writer_slot *s = job->slot;
  wait_written(w, job->number - 1);
  atomic_file snap = {0}, cp = {0};
  int snap_written = 0, cp_written = 0;
  int ok = !any_failed(w);
  if (s->path != NULL) {
    if (ok)
      snap_written =
          write_file(w, &s->state, 0, s->path, s->all, s->nall, 0, &snap);
    else
      not_written(s->path);
    ok = snap_written;
  }
  if (s->checkpoint != NULL) {
    ok = commit(job, &snap, snap_written, ok);
    snap_written = 0;
    if (ok)
      cp_written = write_file(w, &s->taken, s->clock, s->checkpoint, w->params,
                              w->nparams, 1, &cp);
    else
      not_written(s->checkpoint);
    ok = cp_written;
  }
  pthread_mutex_lock(&w->lock);
  w->written_jobs = job->number;
  w->failed |= !ok;
  pthread_cond_broadcast(&w->written);
  pthread_mutex_unlock(&w->lock);
  ok = commit(job, &snap, snap_written, ok);
  ok = commit(job, &cp, cp_written, ok);
  pthread_mutex_lock(&w->lock);
  w->failed |= !ok;
  pthread_mutex_unlock(&w->lock);
  job->ok = ok;
  return job;
}

/* What a slot holds, freed (its data written, or never handed). */
static void free_slot(writer_slot *s) {
  free(s->path);
  free(s->checkpoint);
  free(s->all);
  free(s->pos_at);
  free(s->vel_at);
  run_ranks_free(&s->ranks);
  *s = (writer_slot){0};
}

void snapshot_writer_note(snapshot_writer *w, const tfmm_stats *s,
                          int64_t step) {
  if (s->n == 0 ||
      (s->method != TFMM_METHOD_FMM && s->method != TFMM_METHOD_BH))
    return;
  w->tree = 1;
  w->theta = s->theta;
  w->order = s->order;
  if (s->error.measured) {
    w->measured = 1;
    w->p99 = s->error.p99;
    w->max = s->error.max;
    w->samples = s->error.samples;
    w->measured_step = step;
    w->group = s->error.group_measured > 0;
    w->group_p99 = s->error.group_p99;
    w->group_max = s->error.group_max;
  }
}

/* The run's parameters and, for a tree method, Measured:theta and order
 * (the latest evaluation's) and the last error measured (its p99, max,
 * sample and step, and its worst group's p99 and max when measured), in
 * slot s: a reader of the snapshot sees what the forces met. */
static int gather_params(const snapshot_writer *w, writer_slot *s) {
  free(s->all);
  s->all = malloc((w->nparams + 8) * sizeof *s->all);
  if (s->all == NULL) {
    cli_error("out of memory");
    return 0;
  }
  for (size_t k = 0; k < w->nparams; k++)
    s->all[k] = w->params[k];
  s->nall = w->nparams;
  if (!w->tree)
    return 1;
  char(*t)[32] = s->measured_text;
  snprintf(t[0], 32, "%.17g", w->theta);
  snprintf(t[1], 32, "%d", w->order);
  s->all[s->nall++] = (snapshot_attr){"Measured:theta", t[0]};
  s->all[s->nall++] = (snapshot_attr){"Measured:order", t[1]};
  if (!w->measured)
    return 1;
  snprintf(t[2], 32, "%.17g", w->p99);
  snprintf(t[3], 32, "%.17g", w->max);
  snprintf(t[4], 32, "%zu", w->samples);
  snprintf(t[5], 32, "%" PRId64, w->measured_step);
  s->all[s->nall++] = (snapshot_attr){"Measured:error_p99", t[2]};
  s->all[s->nall++] = (snapshot_attr){"Measured:error_max", t[3]};
  s->all[s->nall++] = (snapshot_attr){"Measured:error_samples", t[4]};
  s->all[s->nall++] = (snapshot_attr){"Measured:error_step", t[5]};
  if (!w->group)
    return 1;
  snprintf(t[6], 32, "%.17g", w->group_p99);
  snprintf(t[7], 32, "%.17g", w->group_max);
  s->all[s->nall++] = (snapshot_attr){"Measured:error_group_p99", t[6]};
  s->all[s->nall++] = (snapshot_attr){"Measured:error_group_max", t[7]};
  return 1;
}

/* Slot s's state carried to s->at (snapshot_writer_begin_at) in
 * s->pos_at and s->vel_at: its arrays are the sim's, not to be written.
 * Its time is time_initial + ticks * tick (run_state_write_saved), so at
 * with no ticks; a snapshot holds no clock, only a checkpoint does. */
static int predict(writer_slot *s) {
  tfmm_sim_state *st = &s->state;
  const double tau = s->at - (st->time_initial + (double)st->ticks * st->tick);
  s->pos_at = malloc(3 * st->n * sizeof *s->pos_at);
  s->vel_at = malloc(3 * st->n * sizeof *s->vel_at);
  if (s->pos_at == NULL || s->vel_at == NULL) {
    cli_error("%s: out of memory", s->path);
    return 0;
  }
  for (size_t k = 0; k < 3 * st->n; k++) {
    s->pos_at[k] = st->pos[k] + tau * (st->vel[k] + 0.5 * tau * st->acc[k]);
    s->vel_at[k] = st->vel[k] + tau * st->acc[k];
  }
  st->pos = s->pos_at;
  st->vel = s->vel_at;
  st->time_initial = s->at;
  st->ticks = 0;
  return 1;
}

/* Waits for every write, its sync and rename included. */
static int join(snapshot_writer *w) {
  wait_written(w, w->jobs);
  if (w->jobs == 0 || !w->synced)
    return 1;
  write_job last = {.has_before = 1, .before = w->thread};
  const int ok = join_before(&last);
  w->jobs = w->written_jobs = 0;
  for (int k = 0; k < 2; k++)
    free_slot(&w->slot[k]);
  return ok;
}

/* No write has failed so far. */
static int none_failed(snapshot_writer *w) {
  return !w->synced || !any_failed(w);
}

int snapshot_writer_hand_off(snapshot_writer *w) {
  if (!w->begun)
    return 1;
  w->begun = 0;
  writer_slot *s = &w->slot[w->cur];
  w->cur = 1 - w->cur;
  const char *name = s->path != NULL ? s->path : s->checkpoint;
  tfmm_sim_state mine;
  if (tfmm_sim_save_end(w->sim, &mine) != TFMM_OK) {
    cli_error("%s: %s", name, tfmm_sim_message(w->sim));
    free_slot(s);
    return 0;
  }
  /* Every rank's bodies to rank 0, which alone writes; with one process,
   * mine as it is. */
  if (!run_ranks_gather(&mine, &s->ranks)) {
    free_slot(s); /* the gather's failure is every rank's */
    return 0;
  }
  if (mpi_cli_rank() != 0) {
    free_slot(s);
    return mpi_cli_agree(1);
  }
  s->state = s->taken = s->ranks.state;
  if (s->at_given && s->path != NULL && !predict(s)) {
    free_slot(s);
    return mpi_cli_agree(0);
  }
  if (!w->synced) {
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->written, NULL);
    w->synced = 1;
  }
  write_job *job = malloc(sizeof *job);
  if (job == NULL) {
    cli_error("%s: out of memory", name);
    free_slot(s);
    return mpi_cli_agree(0);
  }
  *job = (write_job){.w = w,
                     .slot = s,
                     .number = w->jobs + 1,
                     .has_before = w->jobs > 0,
                     .before = w->thread};
  s->job = job->number;
  w->jobs++;
  int ok = 1;
  if (pthread_create(&w->thread, NULL, write_thread, job) != 0) {
    /* No thread: written here, the one before joined. */
    write_thread(job);
    ok = job->ok;
    free(job);
    w->jobs = w->written_jobs = 0; /* every write before is joined */
    free_slot(&w->slot[0]);
    free_slot(&w->slot[1]);
  }
  return mpi_cli_agree(ok);
}

int snapshot_writer_finish(snapshot_writer *w) {
  const int handed = snapshot_writer_hand_off(w);
  /* Rank 0's write is every rank's result. */
  const int ok = mpi_cli_agree(join(w) && none_failed(w) && handed);
  free_slot(&w->slot[0]);
  free_slot(&w->slot[1]);
  if (w->synced) {
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->written);
    w->synced = 0;
    w->failed = 0;
  }
  return ok;
}

/* Before a state is taken into the current slot: the one taken before
 * handed off, and the write that last held this slot (the state taken two
 * before, whose buffer the sim now reuses) has written its data; the time
 * waited counted. The syncs and renames of the files before go on: they
 * take their names in order, so a run killed at any point finds the
 * checkpoints and snapshots that have names whole and in sequence.
 * Returns 0 when a write has failed. */
static int settle(snapshot_writer *w) {
  const double t0 = cli_seconds();
  const int handed = snapshot_writer_hand_off(w);
  writer_slot *s = &w->slot[w->cur];
  wait_written(w, s->job);
  free_slot(s);
  w->totals.waited += cli_seconds() - t0;
  return mpi_cli_agree(none_failed(w) && handed);
}

int snapshot_writer_begin_at(snapshot_writer *w, char *path, double at) {
  const int ok = snapshot_writer_begin(w, path);
  w->slot[w->cur].at_given = 1;
  w->slot[w->cur].at = at;
  return ok;
}

/* Takes the state now, once a slot is free: for a snapshot to path
 * (for_snapshot), else for a checkpoint alone (path NULL). */
static int take(snapshot_writer *w, char *path, int for_snapshot) {
  /* After a failed write no state is taken: nothing more is written. */
  const int before = settle(w);
  writer_slot *s = &w->slot[w->cur];
  if (!before ||
      !mpi_cli_agree((path != NULL || !for_snapshot) && gather_params(w, s))) {
    free(path);
    return 0;
  }
  if (tfmm_sim_save_begin(w->sim) != TFMM_OK) {
    cli_error("%s: %s", path != NULL ? path : "checkpoint",
              tfmm_sim_message(w->sim));
    free(path);
    return 0;
  }
  s->path = path;
  w->begun = 1;
  return 1;
}

int snapshot_writer_begin(snapshot_writer *w, char *path) {
  return take(w, path, 1);
}

int snapshot_writer_checkpoint(snapshot_writer *w, char *path, int clock) {
  if (!mpi_cli_agree(path != NULL)) {
    free(path);
    return 0;
  }
  /* No snapshot taken at this step: a state of its own. */
  if (!w->begun && !take(w, NULL, 0)) {
    free(path);
    return 0;
  }
  writer_slot *s = &w->slot[w->cur];
  free(s->checkpoint);
  s->checkpoint = path;
  s->clock = clock;
  return 1;
}
