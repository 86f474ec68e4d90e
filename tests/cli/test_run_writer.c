/* The writer's queue of tilefmm run (apps/snapshot_writer.c, issue 31):
 * snapshots and checkpoints written by one thread, in the order their
 * states were taken, each taking its name after the files before it; a
 * checkpoint due at a snapshot's step from the same state, after it. A
 * file that fails is named, the run exits 1, the files already in place
 * are untouched, and no later file takes its name: the checkpoint in
 * place is then older than the file missing, so a restart from it writes
 * that file again and reaches the bits of the run straight through.
 *
 * The faults are hdf5_stall.c's, preloaded into the tool: rename logged
 * (TFMM_RENAME_LOG), the sync of a named file failing with EIO
 * (TFMM_FSYNC_FAIL, as a disk's write-back error reaches fsync), dataset
 * writes of a named file slowed (TFMM_HDF5_SLOW). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "read_snap.h"
#include "snapshot.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(run_writer, .init = scratch_make, .fini = scratch_remove);

#define WRITER_RUN                                                             \
  "--n", "2000", "--progress", "off", "--plots", "off", "--snapshot-every"

/* The preloaded stand-ins for the tool's children from now on (this
 * test's process only: Criterion runs each test in a process of its own),
 * with name=value set; skips where the library was not built. */
static void preload(const char *name, const char *value) {
  if (access(TFMM_HDF5_STALL, R_OK) != 0)
    cr_skip_test("no %s", TFMM_HDF5_STALL);
  cr_assert_eq(setenv("LD_PRELOAD", TFMM_HDF5_STALL, 1), 0);
#ifdef __SANITIZE_ADDRESS__
  const char *asan = getenv("ASAN_OPTIONS");
  char opts[1024];
  snprintf(opts, sizeof opts, "%s%sverify_asan_link_order=0",
           asan != NULL ? asan : "", asan != NULL && *asan ? ":" : "");
  cr_assert_eq(setenv("ASAN_OPTIONS", opts, 1), 0);
#endif
  cr_assert_eq(setenv(name, value, 1), 0);
}

static void no_preload(const char *name) {
  unsetenv("LD_PRELOAD");
  unsetenv(name);
}

/* A file kept as it was: its name and bytes. */
typedef struct kept {
  const char *name;
  char *bytes;
  size_t len;
} kept;

static kept keep(const char *name) {
  kept k = {.name = name};
  k.bytes = (char *)read_bytes(sp(name), &k.len);
  return k;
}

static void assert_unchanged(kept *k) {
  size_t len;
  char *now = (char *)read_bytes(sp(k->name), &len);
  cr_assert(len == k->len && memcmp(now, k->bytes, len) == 0, "%s was changed",
            k->name);
  free(now);
  free(k->bytes);
  k->bytes = NULL;
}

static long checkpoint_step(const char *name) {
  snapshot s = read_snap(name);
  const char *step = snapshot_attr_find(s.state, s.nstate, "step");
  cr_assert_not_null(step, "%s is no checkpoint", name);
  const long k = strtol(step, NULL, 10);
  snapshot_free(&s);
  return k;
}

/* A first run to step 10 in s: snapshots 0000 and 0001 and the
 * checkpoint of step 10. */
static void first_run(void) {
  cr_assert_eq(RUN("run", WRITER_RUN, "10", "--checkpoint-every", "10",
                   "--steps", "10", "--out", sp("s")),
               0, "%s", read_text("stderr.txt"));
  cr_assert_eq(checkpoint_step("s/checkpoint.hdf5"), 10);
}

/* The run restarted from s/checkpoint.hdf5 to step 30 equals the run
 * straight there (in t): the same bodies, bit for bit, and the same
 * snapshot 0002. */
static void assert_restart_is_straight(void) {
  cr_assert_eq(RUN("run", "--restart", sp("s/checkpoint.hdf5"), "--steps", "30",
                   "--progress", "off", "--plots", "off"),
               0, "restart: %s", read_text("stderr.txt"));
  cr_assert_eq(RUN("run", WRITER_RUN, "10", "--checkpoint-every", "10",
                   "--steps", "30", "--out", sp("t")),
               0, "%s", read_text("stderr.txt"));
  const char *names[][2] = {{"s/checkpoint.hdf5", "t/checkpoint.hdf5"},
                            {"s/snapshot_0002.hdf5", "t/snapshot_0002.hdf5"}};
  for (int k = 0; k < 2; k++) {
    snapshot a = read_snap(names[k][0]), b = read_snap(names[k][1]);
    cr_assert_eq(a.n, b.n);
    cr_assert_eq(a.time, b.time, "%s: time %.17g, straight %.17g", names[k][0],
                 a.time, b.time);
    cr_assert(memcmp(a.pos, b.pos, 3 * a.n * sizeof(double)) == 0,
              "%s: positions", names[k][0]);
    cr_assert(memcmp(a.vel, b.vel, 3 * a.n * sizeof(double)) == 0,
              "%s: velocities", names[k][0]);
    snapshot_free(&a);
    snapshot_free(&b);
  }
}

/* The snapshots' and checkpoints' names in the order they were taken
 * (renames.txt), each followed by a space. */
static void renamed(char *got, size_t size) {
  char *log = read_text("renames.txt");
  cr_assert_not_null(log, "no rename logged: the preload did not take");
  got[0] = '\0';
  for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n"))
    if (strncmp(line, "snapshot_", 9) == 0 ||
        strcmp(line, "checkpoint.hdf5") == 0)
      snprintf(got + strlen(got), size - strlen(got), "%s ", line);
  free(log);
}

/* Files take their names in the order their states were taken, a
 * checkpoint after its step's snapshot, with the snapshots' writes slowed
 * (0.1 s a dataset) so that writes wait in the queue while the fast
 * checkpoints behind them could overtake; the checkpoint of step 20 and
 * snapshot 0004 are the same state (their velocities and accelerations
 * the same bits). */
Test(run_writer, files_take_their_names_in_order, .timeout = 300) {
  preload("TFMM_RENAME_LOG", sp("renames.txt"));
  cr_assert_eq(setenv("TFMM_HDF5_SLOW", "snapshot_", 1), 0);
  const int rc = RUN("run", WRITER_RUN, "5", "--checkpoint-every", "10",
                     "--steps", "20", "--out", sp("s"));
  no_preload("TFMM_RENAME_LOG");
  cr_assert_eq(rc, 0, "%s", read_text("stderr.txt"));
  char got[1024];
  renamed(got, sizeof got);
  cr_assert_str_eq(got, "snapshot_0000.hdf5 checkpoint.hdf5 snapshot_0001.hdf5 "
                        "snapshot_0002.hdf5 checkpoint.hdf5 snapshot_0003.hdf5 "
                        "snapshot_0004.hdf5 checkpoint.hdf5 ");
  assert_no_temporaries();
  cr_assert_eq(checkpoint_step("s/checkpoint.hdf5"), 20);
  snapshot c = read_snap("s/checkpoint.hdf5"),
           s = read_snap("s/snapshot_0004.hdf5");
  cr_assert_eq(c.n, s.n);
  cr_assert_eq(c.time, s.time);
  cr_assert(memcmp(c.vel, s.vel, 3 * c.n * sizeof(double)) == 0);
  cr_assert(c.acc != NULL && s.acc != NULL &&
            memcmp(c.acc, s.acc, 3 * c.n * sizeof(double)) == 0);
  snapshot_free(&c);
  snapshot_free(&s);
}

/* The checkpoint of step 20 fails (its sync, EIO): the run exits 1 naming
 * it; snapshot 0002, written before it, is whole; the checkpoint of step
 * 10 and the snapshots before are untouched; nothing after it takes its
 * name; no temporary is left; a restart from the checkpoint in place
 * reaches the bits of the run straight through. */
Test(run_writer, a_failed_checkpoint_is_named_and_the_one_before_kept,
     .timeout = 300) {
  first_run();
  kept files[] = {keep("s/checkpoint.hdf5"), keep("s/snapshot_0000.hdf5"),
                  keep("s/snapshot_0001.hdf5")};
  preload("TFMM_FSYNC_FAIL", "checkpoint");
  const int rc = RUN("run", "--restart", sp("s/checkpoint.hdf5"), "--steps",
                     "30", "--progress", "off", "--plots", "off");
  no_preload("TFMM_FSYNC_FAIL");
  cr_assert_eq(rc, 1, "exit %d: %s", rc, read_text("stderr.txt"));
  assert_stderr_has("checkpoint.hdf5: cannot write: Input/output error");
  for (size_t k = 0; k < 3; k++)
    assert_unchanged(&files[k]);
  snapshot two = read_snap("s/snapshot_0002.hdf5");
  cr_assert_eq(two.n, 2000);
  snapshot_free(&two);
  cr_assert(!exists("s/snapshot_0003.hdf5"),
            "a snapshot took its name after the failed checkpoint");
  assert_no_temporaries();
  assert_restart_is_straight();
}

/* Snapshot 0002 fails (its sync, EIO): the checkpoint of its step, due
 * with it, does not take its name, so the checkpoint in place is step
 * 10's, older than the snapshot missing, and a restart from it writes
 * snapshot 0002 (a checkpoint of step 20 would have left it missing for
 * good). */
Test(run_writer, a_failed_snapshot_leaves_the_checkpoint_before_it,
     .timeout = 300) {
  first_run();
  kept files[] = {keep("s/checkpoint.hdf5"), keep("s/snapshot_0001.hdf5")};
  preload("TFMM_FSYNC_FAIL", "snapshot_0002");
  const int rc = RUN("run", "--restart", sp("s/checkpoint.hdf5"), "--steps",
                     "30", "--progress", "off", "--plots", "off");
  no_preload("TFMM_FSYNC_FAIL");
  cr_assert_eq(rc, 1, "exit %d: %s", rc, read_text("stderr.txt"));
  for (size_t k = 0; k < 2; k++)
    assert_unchanged(&files[k]);
  assert_stderr_has("snapshot_0002.hdf5: cannot write: Input/output error");
  assert_stderr_has("checkpoint.hdf5: not written: a file before it failed");
  cr_assert(!exists("s/snapshot_0002.hdf5"));
  cr_assert(!exists("s/snapshot_0003.hdf5"));
  assert_no_temporaries();
  assert_restart_is_straight();
}

/* A failure stops the files queued behind it: snapshot 0001 fails while
 * the states of later steps may already be taken; none of them takes its
 * name, and the checkpoint in place is step 0's. */
Test(run_writer, a_failure_stops_the_files_behind_it, .timeout = 300) {
  preload("TFMM_FSYNC_FAIL", "snapshot_0001");
  const int rc = RUN("run", WRITER_RUN, "5", "--checkpoint-every", "10",
                     "--steps", "20", "--out", sp("s"));
  no_preload("TFMM_FSYNC_FAIL");
  cr_assert_eq(rc, 1, "exit %d: %s", rc, read_text("stderr.txt"));
  assert_stderr_has("snapshot_0001.hdf5: cannot write: Input/output error");
  const char *never[] = {"s/snapshot_0001.hdf5", "s/snapshot_0002.hdf5",
                         "s/snapshot_0003.hdf5", "s/snapshot_0004.hdf5"};
  for (size_t k = 0; k < 4; k++)
    cr_assert(!exists(never[k]), "%s took its name after the failure",
              never[k]);
  cr_assert_eq(checkpoint_step("s/checkpoint.hdf5"), 0);
  snapshot s0 = read_snap("s/snapshot_0000.hdf5");
  cr_assert_eq(s0.n, 2000);
  snapshot_free(&s0);
  assert_no_temporaries();
}

/* A stop signal while the writer is behind (the snapshots' writes slowed
 * to 0.1 s a dataset, a snapshot every 2 steps: states wait in the queue):
 * the run still writes every snapshot taken, in order, then the
 * checkpoint of the step reached, and exits 128 + 15 with no temporary
 * left. */
Test(run_writer, a_stop_waits_for_the_writes_queued, .timeout = 300) {
  preload("TFMM_RENAME_LOG", sp("renames.txt"));
  cr_assert_eq(setenv("TFMM_HDF5_SLOW", "snapshot_", 1), 0);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "%s run --n 2000 --steps 1000000 --snapshot-every 2 "
           "--checkpoint-every 0 --progress off --plots off --out %s >%s "
           "2>%s & pid=$!; i=0; while [ $i -lt 1200 ] && "
           "[ \"$( (wc -l <%s) 2>/dev/null || echo 0)\" -lt 8 ]; do "
           "sleep 0.05; i=$((i + 1)); done; kill -TERM $pid; wait $pid",
           cli_path(), sp("s"), sp("stdout.txt"), sp("stderr.txt"),
           sp("s/statistics.csv"));
  const int status = system(cmd);
  no_preload("TFMM_RENAME_LOG");
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 128 + 15,
            "status %d: %s", status, read_text("stderr.txt"));
  char *err = read_text("stderr.txt");
  const char *at = strstr(err, "stopped by signal 15 at step ");
  cr_assert_not_null(at, "%s", err);
  const long k = strtol(at + strlen("stopped by signal 15 at step "), NULL, 10);
  free(err);
  cr_assert_geq(k, 6, "stopped at step %ld", k);
  char want[1024] = "snapshot_0000.hdf5 checkpoint.hdf5 ";
  for (long j = 1; 2 * j <= k; j++)
    snprintf(want + strlen(want), sizeof want - strlen(want),
             "snapshot_%04ld.hdf5 ", j);
  snprintf(want + strlen(want), sizeof want - strlen(want), "checkpoint.hdf5 ");
  char got[1024];
  renamed(got, sizeof got);
  cr_assert_str_eq(got, want);
  cr_assert_eq(checkpoint_step("s/checkpoint.hdf5"), k);
  char last[64];
  snprintf(last, sizeof last, "s/snapshot_%04ld.hdf5", k / 2);
  snapshot s = read_snap(last);
  cr_assert_eq(s.n, 2000);
  snapshot_free(&s);
  assert_no_temporaries();
}
