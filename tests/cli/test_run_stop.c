/* A stop signal during individual (block) time steps (issue 29): the run
 * stopped only at the next synchronisation point, up to 2^40 sub-steps
 * away, and a second signal (which ends it at once) left no checkpoint
 * before the first step's end. Now it stops after the sub-step under
 * way, with a checkpoint from which a restart reaches the bits of the run
 * straight through; and step 0 has its checkpoint. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

TestSuite(run_stop, .init = scratch_make, .fini = scratch_remove);

static const char *cli(void) {
  const char *moved = getenv("TFMM_CLI");
  return moved != NULL && moved[0] != '\0' ? moved : TFMM_CLI_PATH;
}

/* One block of individual steps holding hundreds of sub-steps (dt_max 1,
 * dt_min 1e-6: bins down to 2^-9 here), to step 1. */
#define BLOCK_RUN                                                              \
  "run --n 1000 --eta 0.025 --eps 0.001 --dt-max 1 --dt-min 1e-6 "             \
  "--progress off --plots off --snapshot-every 0"

/* The file's lines cut to their first k comma-separated fields (the
 * rows' physics, not their timings); free it. */
static char *first_fields(const char *name, int k) {
  char *text = read_text(name);
  cr_assert_not_null(text, "%s missing", name);
  char *out = malloc(strlen(text) + 1), *o = out;
  cr_assert_not_null(out);
  int field = 0;
  for (const char *c = text; *c != '\0'; c++) {
    if (*c == '\n')
      field = 0;
    else if (*c == ',')
      field++;
    if (field < k || *c == '\n')
      *o++ = *c;
  }
  *o = '\0';
  free(text);
  return out;
}

static snapshot read_snap(const char *name) {
  snapshot s;
  cr_assert(snapshot_read(sp(name), &s), "cannot read %s", name);
  return s;
}

/* SIGTERM half a second into the block (of seconds): exit 128 + 15 at
 * once, "mid-way", a checkpoint and statistics that a restart continues
 * to the same bits and rows as the run straight through. */
Test(run_stop, a_signal_stops_a_block_mid_way, .timeout = 300) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s " BLOCK_RUN " --steps 1 --out %s >%s 2>%s & pid=$!; i=0; "
           "while [ $i -lt 600 ] && [ ! -e %s ]; do sleep 0.05; "
           "i=$((i + 1)); done; sleep 0.5; kill -TERM $pid; wait $pid",
           cli(), sp("s"), sp("stdout.txt"), sp("stderr.txt"),
           sp("s/checkpoint.hdf5"));
  const int status = system(cmd);
  char *err = read_text("stderr.txt");
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 128 + 15,
            "status %d:\n%s", status, err);
  free(err);
  assert_stderr_has("stopped by signal 15 at step 0 (mid-way");
  assert_no_temporaries();
  char restart[2048];
  snprintf(restart, sizeof restart,
           "%s run --restart %s --steps 1 "
           "--progress off --plots off >%s 2>&1",
           cli(), sp("s/checkpoint.hdf5"), sp("restart.txt"));
  const int rc = system(restart);
  char *log = read_text("restart.txt");
  cr_assert_eq(rc, 0, "restart: status %d:\n%s", rc, log);
  free(log);
  snprintf(cmd, sizeof cmd,
           "%s " BLOCK_RUN " --steps 1 --out %s >/dev/null "
           "2>&1",
           cli(), sp("t"));
  cr_assert_eq(system(cmd), 0);
  snapshot a = read_snap("s/checkpoint.hdf5"),
           b = read_snap("t/checkpoint.hdf5");
  cr_assert_eq(a.n, b.n);
  cr_assert_eq(a.time, b.time, "times %.17g and %.17g", a.time, b.time);
  cr_assert(memcmp(a.pos, b.pos, 3 * a.n * sizeof(double)) == 0, "positions");
  cr_assert(memcmp(a.vel, b.vel, 3 * a.n * sizeof(double)) == 0, "velocities");
  snapshot_free(&a);
  snapshot_free(&b);
  /* step, time, kinetic, potential, total and the energy error */
  char *rows = first_fields("s/statistics.csv", 6);
  char *want = first_fields("t/statistics.csv", 6);
  cr_assert_str_eq(rows, want, "the restarted run's rows differ");
  free(rows);
  free(want);
}

/* Step 0 writes its checkpoint: a run killed before its first step ends
 * (a second signal ends it so) can be restarted. */
Test(run_stop, step_0_has_a_checkpoint, .timeout = 300) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s " BLOCK_RUN " --steps 1000 --out %s >%s 2>%s & pid=$!; i=0; "
           "while [ $i -lt 200 ] && [ ! -e %s ]; do sleep 0.05; "
           "i=$((i + 1)); done; kill -KILL $pid; wait $pid",
           cli(), sp("s"), sp("stdout.txt"), sp("stderr.txt"),
           sp("s/checkpoint.hdf5"));
  (void)system(cmd);
  cr_assert(exists("s/checkpoint.hdf5"), "no checkpoint at step 0");
  snprintf(cmd, sizeof cmd,
           "%s run --restart %s --steps 1 --progress off "
           "--plots off >%s 2>&1",
           cli(), sp("s/checkpoint.hdf5"), sp("restart.txt"));
  const int rc = system(cmd);
  char *log = read_text("restart.txt");
  cr_assert_eq(rc, 0, "restart: status %d:\n%s", rc, log);
  free(log);
}
