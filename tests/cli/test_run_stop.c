/* A stop signal during individual (block) time steps (issue 29): the run
 * stopped only at the next synchronisation point, up to 2^40 sub-steps
 * away, and a second signal (which ends it at once) left no checkpoint
 * before the first step's end. Now it stops after the sub-step under
 * way, with a checkpoint from which a restart reaches the bits of the run
 * straight through; and step 0 has its checkpoint. And a run killed in
 * the middle of a write (run_kill, below). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "read_snap.h"
#include "snapshot.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(run_stop, .init = scratch_make, .fini = scratch_remove);

/* One block of individual steps holding hundreds of sub-steps (dt_max 1,
 * dt_min 1e-6: bins down to 2^-9 here), to step 1. */
/* On the CPU with two threads, as on the CI's machine: a block of
 * seconds wherever it runs (on a GPU its sparse sub-steps, summed
 * directly, end it in a fraction of one, before the signal). */
#define BLOCK_RUN                                                              \
  "run --n 1000 --eta 0.025 --eps 0.001 --dt-max 1 --dt-min 1e-6 "             \
  "--progress off --plots off --snapshot-every 0 --device cpu --threads 2"

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

/* Restarts s/checkpoint.hdf5 to step `steps`, runs `run` (the flags of
 * the run that wrote it) straight to that step in t, and compares the two
 * last checkpoints: the same bodies, bit for bit. */
static void assert_restart_is_straight(const char *run, const char *steps) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s run --restart %s --steps %s --progress off --plots off >%s "
           "2>&1",
           cli_path(), sp("s/checkpoint.hdf5"), steps, sp("restart.txt"));
  const int rc = system(cmd);
  char *log = read_text("restart.txt");
  cr_assert_eq(rc, 0, "restart: status %d:\n%s", rc, log);
  free(log);
  snprintf(cmd, sizeof cmd, "%s %s --steps %s --out %s >/dev/null 2>&1",
           cli_path(), run, steps, sp("t"));
  cr_assert_eq(system(cmd), 0);
  snapshot a = read_snap("s/checkpoint.hdf5"),
           b = read_snap("t/checkpoint.hdf5");
  cr_assert_eq(a.n, b.n);
  cr_assert_eq(a.time, b.time, "times %.17g and %.17g", a.time, b.time);
  cr_assert(memcmp(a.pos, b.pos, 3 * a.n * sizeof(double)) == 0, "positions");
  cr_assert(memcmp(a.vel, b.vel, 3 * a.n * sizeof(double)) == 0, "velocities");
  snapshot_free(&a);
  snapshot_free(&b);
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
           cli_path(), sp("s"), sp("stdout.txt"), sp("stderr.txt"),
           sp("s/checkpoint.hdf5"));
  const int status = system(cmd);
  char *err = read_text("stderr.txt");
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 128 + 15,
            "status %d:\n%s", status, err);
  free(err);
  assert_stderr_has("stopped by signal 15 at step 0 (mid-way");
  assert_no_temporaries();
  assert_restart_is_straight(BLOCK_RUN, "1");
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
           cli_path(), sp("s"), sp("stdout.txt"), sp("stderr.txt"),
           sp("s/checkpoint.hdf5"));
  (void)system(cmd);
  cr_assert(exists("s/checkpoint.hdf5"), "no checkpoint at step 0");
  snprintf(cmd, sizeof cmd,
           "%s run --restart %s --steps 1 --progress off "
           "--plots off >%s 2>&1",
           cli_path(), sp("s/checkpoint.hdf5"), sp("restart.txt"));
  const int rc = system(cmd);
  char *log = read_text("restart.txt");
  cr_assert_eq(rc, 0, "restart: status %d:\n%s", rc, log);
  free(log);
}

/* A run killed in the middle of writing a snapshot or a checkpoint (issue
 * 31): the files written before it stay whole and readable, the last
 * checkpoint is the state of its step (the snapshot of that step holds
 * the same bodies), and a restart from it reaches the bits of the run
 * straight through. The write is held by hdf5_stall.c, preloaded into the
 * tool: it waits for ever inside the named file's first dataset write, and
 * marks that it has begun; the test then sends SIGKILL. */
TestSuite(run_kill, .init = scratch_make, .fini = scratch_remove);

#define KILL_RUN                                                               \
  "run --n 2000 --snapshot-every 10 --checkpoint-every 10 --progress off "     \
  "--plots off"

/* Runs command (a shell line) in the background with the write of the
 * file named by stall held, waits until that write has begun, kills it
 * (SIGKILL: nothing of the tool runs after) and returns. Skips where the
 * preload cannot take: no library (a build tree moved elsewhere), or a
 * run that ended on its own (libhdf5 linked statically). */
static void kill_mid_write_with(const char *env, const char *command,
                                const char *stall) {
  if (access(TFMM_HDF5_STALL, R_OK) != 0)
    cr_skip_test("no %s", TFMM_HDF5_STALL);
  const char *asan = preload_prefix();
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "%s%s TFMM_HDF5_STALL=%s TFMM_HDF5_STALL_MARK=%s LD_PRELOAD=%s %s "
           ">%s 2>%s & pid=$!; i=0; while [ $i -lt 1200 ] && [ ! -e %s ] && "
           "kill -0 $pid 2>/dev/null; do sleep 0.05; i=$((i + 1)); done; "
           "kill -KILL $pid 2>/dev/null; { wait $pid; } 2>/dev/null; "
           "rc=$?; [ -e %s ] && exit 0; [ $rc -eq 137 ] && exit 3; exit 4",
           asan, env, stall, sp("mark"), TFMM_HDF5_STALL, command,
           sp("stdout.txt"), sp("stderr.txt"), sp("mark"), sp("mark"));
  /* 0: the write began; 3: killed before it began (the run waited);
   * 4: the run ended on its own. */
  const int status = system(cmd);
  if (status != 0) {
    char *err = read_text("stderr.txt");
    const int ended = WIFEXITED(status) && WEXITSTATUS(status) == 4 &&
                      err != NULL && strstr(err, "ERROR") == NULL &&
                      strstr(err, "error") == NULL;
    free(err);
    if (ended)
      cr_skip_test("the writes could not be held (libhdf5 linked "
                   "statically?)");
    cr_assert_fail("the write of %s never began (the run %s); see "
                   "stderr.txt",
                   stall,
                   WIFEXITED(status) && WEXITSTATUS(status) == 3
                       ? "was still waiting after 60 s"
                       : "ended");
  }
}

static void kill_mid_write(const char *command, const char *stall) {
  kill_mid_write_with("", command, stall);
}

/* The checkpoint is step 10's: the bodies of snapshot_0001 (step 10),
 * whose velocities and accelerations are the same bits and whose
 * positions are the same shifted into the snapshot's box (one shift for
 * every body, to rounding). */
static void assert_checkpoint_of_step_10(void) {
  snapshot c = read_snap("s/checkpoint.hdf5"),
           s = read_snap("s/snapshot_0001.hdf5");
  cr_assert_eq(c.n, s.n);
  cr_assert_eq(c.time, s.time, "checkpoint at t %.17g, snapshot 1 at %.17g",
               c.time, s.time);
  cr_assert(memcmp(c.vel, s.vel, 3 * c.n * sizeof(double)) == 0,
            "the checkpoint's velocities are not step 10's");
  cr_assert(c.acc != NULL && s.acc != NULL &&
                memcmp(c.acc, s.acc, 3 * c.n * sizeof(double)) == 0,
            "the checkpoint's accelerations are not step 10's");
  const double shift = s.pos[0] - c.pos[0];
  for (size_t i = 0; i < 3 * c.n; i++)
    cr_assert(fabs(s.pos[i] - c.pos[i] - shift) <= 1e-13 * (1 + fabs(shift)),
              "position %zu: checkpoint %.17g, snapshot %.17g (shift %g)", i,
              c.pos[i], s.pos[i], shift);
  snapshot_free(&c);
  snapshot_free(&s);
}

/* Killed while snapshot 2 (step 20) is written: snapshots 0 and 1 and the
 * checkpoint of step 10 are whole (the checkpoint of step 20 follows
 * snapshot 2 on the writer's thread, so it was never begun). */
Test(run_kill, in_a_snapshot_write, .timeout = 300) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s " KILL_RUN " --steps 30 --out %s", cli_path(),
           sp("s"));
  kill_mid_write(cmd, "snapshot_0002");
  cr_assert(!exists("s/snapshot_0002.hdf5"),
            "a snapshot whose write was killed is in place");
  snapshot s0 = read_snap("s/snapshot_0000.hdf5");
  cr_assert_eq(s0.n, 2000);
  snapshot_free(&s0);
  assert_checkpoint_of_step_10();
  assert_restart_is_straight(KILL_RUN, "30");
}

/* Killed while the checkpoint of step 20 is written (a restart from step
 * 10's): the checkpoint in place is still step 10's, whole. */
Test(run_kill, in_a_checkpoint_write, .timeout = 300) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s " KILL_RUN " --steps 10 --out %s >%s 2>&1",
           cli_path(), sp("s"), sp("first.txt"));
  cr_assert_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd,
           "%s run --restart %s --steps 30 --progress off --plots off",
           cli_path(), sp("s/checkpoint.hdf5"));
  kill_mid_write(cmd, "checkpoint");
  cr_assert(exists("s/snapshot_0002.hdf5"),
            "snapshot 2 is written before the checkpoint of its step");
  assert_checkpoint_of_step_10();
  assert_restart_is_straight(KILL_RUN, "30");
}

/* Two states are held at once: with the data of snapshot 1 held for ever
 * in their write, the run still takes snapshot 2's state at step 20 and
 * steps on (its row of step 25 is written; a writer of one state waited
 * at step 20 for snapshot 1 for ever); snapshot 2 waits behind snapshot 1
 * and neither takes its name; snapshot 0 is whole. */
Test(run_kill, a_state_is_taken_while_the_one_before_is_written,
     .timeout = 300) {
  if (access(TFMM_HDF5_STALL, R_OK) != 0)
    cr_skip_test("no %s", TFMM_HDF5_STALL);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "%sTFMM_HDF5_STALL=snapshot_0001 TFMM_HDF5_STALL_MARK=%s "
           "LD_PRELOAD=%s %s run --n 2000 --snapshot-every 10 "
           "--checkpoint-every 100 --progress off --plots off --steps 40 "
           "--out %s >%s 2>%s & pid=$!; i=0; while [ $i -lt 1200 ] && "
           "! grep -q '^25,' %s 2>/dev/null && kill -0 $pid 2>/dev/null; do "
           "sleep 0.05; i=$((i + 1)); done; kill -KILL $pid 2>/dev/null; "
           "{ wait $pid; } 2>/dev/null; grep -q '^25,' %s",
           preload_prefix(), sp("mark"), TFMM_HDF5_STALL, cli_path(), sp("s"),
           sp("stdout.txt"), sp("stderr.txt"), sp("s/statistics.csv"),
           sp("s/statistics.csv"));
  const int status = system(cmd);
  if (!exists("mark")) {
    char *err = read_text("stderr.txt");
    const int clean = err != NULL && strstr(err, "rror") == NULL;
    free(err);
    if (clean)
      cr_skip_test("the writes could not be held (libhdf5 linked "
                   "statically?)");
  }
  cr_assert(exists("mark"), "the write of snapshot 1 never began");
  cr_assert_eq(status, 0,
               "no row of step 25: the run waited at step 20 for snapshot "
               "1's data");
  cr_assert(!exists("s/snapshot_0001.hdf5"));
  cr_assert(!exists("s/snapshot_0002.hdf5"),
            "snapshot 2 took its name before snapshot 1");
  snapshot s0 = read_snap("s/snapshot_0000.hdf5");
  cr_assert_eq(s0.n, 2000);
  snapshot_free(&s0);
}

/* A snapshot's sync overlaps the next snapshot's write: with the sync of
 * snapshot 1 held for ever (a disk that never finishes), the run still
 * steps on and writes snapshot 2 (where it is killed); snapshot 1, never
 * whole on disk, never took its name, and snapshot 0 is whole. With no
 * checkpoint between them (one every 100 steps), nothing waits for
 * snapshot 1's sync before snapshot 2. */
Test(run_kill, a_sync_overlaps_the_next_write, .timeout = 300) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s run --n 2000 --snapshot-every 10 --checkpoint-every 100 "
           "--progress off --plots off --steps 30 --out %s",
           cli_path(), sp("s"));
  kill_mid_write_with("TFMM_FSYNC_STALL=snapshot_0001", cmd, "snapshot_0002");
  cr_assert(!exists("s/snapshot_0001.hdf5"),
            "snapshot 1 took its name before its sync ended");
  cr_assert(!exists("s/snapshot_0002.hdf5"));
  snapshot s0 = read_snap("s/snapshot_0000.hdf5");
  cr_assert_eq(s0.n, 2000);
  snapshot_free(&s0);
}
