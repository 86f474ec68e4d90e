/* The directory a run writes to. One run at a time writes to a
 * directory: it holds a lock (flock) on DIR/.tilefmm-run.lock while it
 * runs. A fresh run refuses a directory that holds another run's files
 * unless --force (which removes them); a restart continues the run there.
 * Temporaries of a run killed while writing are swept; a fresh run that
 * fails before its step 0 is done leaves no trace. */
#ifndef TFMM_RUN_DIR_H
#define TFMM_RUN_DIR_H

typedef struct run_dir {
  const char *path; /* --out */
  int locked;       /* lock_fd holds the lock */
  int lock_fd;
  int claimed; /* locked and holding no other run's files */
  char *made;  /* the topmost directory this run created, or NULL */
} run_dir;

/* Makes (mkdir -p), locks and cleans d->path for a run: a fresh one
 * (fresh nonzero) refuses a directory holding a run, or clears it with
 * force (never removing an input of this run). Prints what is wrong and
 * returns 0. */
int run_dir_claim(run_dir *d, int fresh, int force);

/* After a fresh run failed before its step 0 was done: its files (the
 * only run files there, as it claimed the directory), its lock and the
 * directories it made go. */
void run_dir_abandon(run_dir *d);

/* Gives the lock back (the directory and its files stay). */
void run_dir_release(run_dir *d);

#endif
