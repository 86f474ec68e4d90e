/* tilefmm run and its directory: one run at a time (a lock), no fresh run
 * over another run's files unless --force, statistics ordered with the
 * checkpoint (a torn row dropped, a missing one refused), SIGHUP stops
 * with a checkpoint, stale temporaries swept, a restart from anywhere
 * continues in the checkpoint's directory, a fresh run that fails at
 * step 0 leaves nothing, and no leak (valgrind, where installed). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot.h"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(run_dir, .init = scratch_make, .fini = scratch_remove);

/* A finished run of 600 bodies in dir, to step steps, with extra flags. */
#define SMALL_RUN(dir, steps, ...)                                             \
  cr_assert_eq(RUN("run", "--n", "600", "--steps", steps, "--out", sp(dir),    \
                   "--progress", "off", ##__VA_ARGS__),                        \
               0, "run into %s failed", dir)

typedef struct bytes {
  char *b;
  size_t len;
} bytes;

/* The bytes of the scratch directory's file name. */
static bytes file_bytes(const char *name) {
  bytes r;
  r.b = (char *)read_bytes(sp(name), &r.len);
  return r;
}

static void assert_unchanged(const char *name, bytes was) {
  bytes now = file_bytes(name);
  cr_assert(now.len == was.len && memcmp(now.b, was.b, was.len) == 0,
            "%s was changed", name);
  free(now.b);
  free(was.b);
}

/* The step of a checkpoint's /RunState. */
static long checkpoint_step(const char *name) {
  snapshot s;
  cr_assert(snapshot_read(sp(name), &s), "cannot read %s", name);
  const char *step = snapshot_attr_find(s.state, s.nstate, "step");
  cr_assert_not_null(step, "%s is no checkpoint", name);
  const long k = strtol(step, NULL, 10);
  snapshot_free(&s);
  return k;
}

/* The steps of the rows of a statistics file; every row whole (30 fields:
 * 23, then theta, order, the measured error's three and the worst
 * group's two; and a newline). */
static int csv_steps(const char *name, long *steps, int max) {
  char *text = read_text(name);
  cr_assert_not_null(text, "%s missing", name);
  cr_assert(strncmp(text, "step,time [", 11) == 0, "header of %s", name);
  int count = 0;
  for (char *line = strchr(text, '\n'); line[1] != '\0';
       line = strchr(line + 1, '\n')) {
    cr_assert_not_null(strchr(line + 1, '\n'), "a torn row in %s", name);
    cr_assert_lt(count, max);
    int commas = 0;
    for (const char *c = line + 1; *c != '\n'; c++)
      commas += *c == ',';
    cr_assert_eq(commas, 29, "row %d of %s", count, name);
    steps[count++] = strtol(line + 1, NULL, 10);
  }
  free(text);
  return count;
}

static void assert_steps(const char *name, const long *want, int n) {
  long got[64];
  const int count = csv_steps(name, got, 64);
  cr_assert_eq(count, n, "%s: %d rows, want %d", name, count, n);
  for (int k = 0; k < n; k++)
    cr_expect_eq(got[k], want[k], "%s: row %d is step %ld, want %ld", name, k,
                 got[k], want[k]);
}

/* A run holding DIR's lock (here the test, with a pid in the file):
 * another run, fresh or a restart, is refused, naming the directory and
 * the holder, and writes nothing there. */
Test(run_dir, a_locked_directory_is_refused) {
  SMALL_RUN("a", "2");
  bytes check = file_bytes("a/checkpoint.hdf5");
  bytes stats = file_bytes("a/statistics.csv");
  const int fd = open(sp("a/.tilefmm-run.lock"), O_RDWR | O_CREAT, 0666);
  cr_assert(fd >= 0);
  cr_assert_eq(ftruncate(fd, 0), 0);
  cr_assert_eq(write(fd, "4242\n", 5), 5);
  cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--steps", "4",
                   "--progress", "off"),
               1);
  assert_stderr_has(sp("a"));
  assert_stderr_has("another tilefmm run (process 4242) is writing");
  cr_expect_eq(RUN("run", "--n", "600", "--steps", "1", "--out", sp("a"),
                   "--force", "--progress", "off"),
               1);
  assert_stderr_has("another tilefmm run (process 4242) is writing");
  close(fd);
  assert_unchanged("a/checkpoint.hdf5", check);
  assert_unchanged("a/statistics.csv", stats);
  /* The lock released, the restart goes on. */
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--steps", "4",
                   "--progress", "off"),
               0);
  cr_expect_eq(checkpoint_step("a/checkpoint.hdf5"), 4);
}

/* A fresh run into a directory holding a run is refused, naming it and
 * the way on, with every file as it was; --force removes that run's files
 * (its snapshot 0002 too, which the new run does not write) and starts
 * afresh; other files stay. */
Test(run_dir, fresh_run_over_a_run_needs_force) {
  SMALL_RUN("a", "2", "--snapshot-every", "1");
  write_text("a/notes.txt", "mine\n");
  bytes check = file_bytes("a/checkpoint.hdf5");
  bytes snap = file_bytes("a/snapshot_0002.hdf5");
  cr_expect_eq(RUN("run", "--n", "600", "--steps", "1", "--out", sp("a"),
                   "--progress", "off"),
               1);
  assert_stderr_has("holds a run");
  assert_stderr_has(sp("a/checkpoint.hdf5"));
  assert_stderr_has("--force");
  assert_unchanged("a/checkpoint.hdf5", check);
  assert_unchanged("a/snapshot_0002.hdf5", snap);
  cr_expect_eq(RUN("run", "--n", "600", "--steps", "1", "--out", sp("a"),
                   "--progress", "off", "--force"),
               0);
  cr_expect(!exists("a/snapshot_0002.hdf5"), "the old run's snapshot is left");
  cr_expect(exists("a/snapshot_0000.hdf5"));
  cr_expect(exists("a/notes.txt"), "--force removed a file of no run");
  cr_expect_eq(checkpoint_step("a/checkpoint.hdf5"), 1);
  assert_steps("a/statistics.csv", (const long[]){0, 1}, 2);
  cr_expect_eq(RUN("run", "--force=yes", "--out", sp("a")), 2);
  assert_stderr_has("--force: takes no value");
  /* A restart continues its run, --force or not. */
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--steps", "2",
                   "--force", "--progress", "off"),
               0);
  assert_steps("a/statistics.csv", (const long[]){0, 1, 2}, 3);
}

/* --force never removes what the run reads: the parameter file or the
 * initial conditions taken from that directory; nothing is removed. */
Test(run_dir, force_keeps_the_inputs) {
  SMALL_RUN("a", "1");
  bytes params = file_bytes("a/used_parameters.yml");
  bytes snap = file_bytes("a/snapshot_0000.hdf5");
  bytes check = file_bytes("a/checkpoint.hdf5");
  cr_expect_eq(RUN("run", "--params", sp("a/used_parameters.yml"), "--out",
                   sp("a"), "--force"),
               1);
  assert_stderr_has("used_parameters.yml: is an input of this run");
  cr_expect_eq(RUN("run", "--ic", sp("a/snapshot_0000.hdf5"), "--steps", "1",
                   "--out", sp("a"), "--force", "--progress", "off"),
               1);
  assert_stderr_has("snapshot_0000.hdf5: is an input of this run");
  assert_unchanged("a/used_parameters.yml", params);
  assert_unchanged("a/snapshot_0000.hdf5", snap);
  assert_unchanged("a/checkpoint.hdf5", check);
}

/* SIGHUP (a dropped ssh session) stops the run as SIGTERM does: after the
 * step under way, with a checkpoint and status 128 + 1. Rows come every
 * 1000 steps here, so the checkpoint's row is written for it (before
 * it); the restart's statistics continue from that row. */
Test(run_dir, hangup_writes_a_checkpoint_and_its_row) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "%s run --n 600 --steps 1000000 --out %s --progress off "
           "--checkpoint-every 0 --snapshot-every 1 --stats-every 1000 >%s "
           "2>%s & pid=$!; i=0; "
           "while [ $i -lt 600 ] && [ ! -e %s ]; do sleep 0.05; "
           "i=$((i + 1)); done; kill -HUP $pid; wait $pid",
           cli_path(), sp("h"), sp("stdout.txt"), sp("stderr.txt"),
           sp("h/snapshot_0003.hdf5"));
  const int status = system(cmd);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGHUP,
            "status %d: %s", status, read_text("stderr.txt"));
  assert_stderr_has("stopped by signal 1");
  char *err = read_text("stderr.txt");
  const char *at = strstr(err, "at step ");
  cr_assert_not_null(at);
  const long k = strtol(at + 8, NULL, 10);
  free(err);
  cr_assert_geq(k, 3);
  cr_assert_eq(checkpoint_step("h/checkpoint.hdf5"), k);
  assert_steps("h/statistics.csv", (const long[]){0, k}, 2);
  char end[32];
  snprintf(end, sizeof end, "%ld", k + 2);
  cr_assert_eq(RUN("run", "--restart", sp("h/checkpoint.hdf5"), "--steps", end,
                   "--progress", "off"),
               0);
  assert_steps("h/statistics.csv", (const long[]){0, k, k + 2}, 3);
}

/* Every checkpoint has its row, even off the statistics' cadence: rows
 * 0 and 3 (every 3), 4 (the checkpoint), 6 (the end's checkpoint). */
Test(run_dir, every_checkpoint_has_its_row) {
  SMALL_RUN("c", "6", "--stats-every", "3", "--checkpoint-every", "4");
  assert_steps("c/statistics.csv", (const long[]){0, 3, 4, 6}, 4);
}

/* A row torn by a crash (a last line with no newline) is dropped on
 * restart; the rows then continue from the checkpoint. */
Test(run_dir, torn_last_row_is_dropped) {
  SMALL_RUN("t", "4");
  FILE *fp = fopen(sp("t/statistics.csv"), "a");
  cr_assert_not_null(fp);
  fputs("5", fp); /* the start of step 5's row */
  fclose(fp);
  cr_assert_eq(RUN("run", "--restart", sp("t/checkpoint.hdf5"), "--steps", "6",
                   "--progress", "off"),
               0, "%s", read_text("stderr.txt"));
  assert_steps("t/statistics.csv", (const long[]){0, 1, 2, 3, 4, 5, 6}, 7);
}

/* Rows that end before the checkpoint's step are refused (they would
 * leave a hole), naming the file and both steps; nothing changes. */
Test(run_dir, rows_short_of_the_checkpoint_are_refused) {
  SMALL_RUN("m", "4");
  char *text = read_text("m/statistics.csv");
  char *last = strrchr(text, '\n');
  *last = '\0';
  *(strrchr(text, '\n') + 1) = '\0'; /* step 4's row gone */
  write_text("m/statistics.csv", text);
  free(text);
  bytes stats = file_bytes("m/statistics.csv");
  bytes check = file_bytes("m/checkpoint.hdf5");
  cr_expect_eq(RUN("run", "--restart", sp("m/checkpoint.hdf5"), "--steps", "6",
                   "--progress", "off"),
               1);
  assert_stderr_has("statistics.csv: its rows end at step 3, not at the "
                    "checkpoint's step 4");
  assert_unchanged("m/statistics.csv", stats);
  assert_unchanged("m/checkpoint.hdf5", check);
}

/* Temporaries of the run's own files, left by a killed run, are swept at
 * the restart; anything else that looks like one stays. */
Test(run_dir, stale_temporaries_are_swept) {
  SMALL_RUN("a", "1");
  const char *stale[] = {"a/.checkpoint.hdf5.tmp-Ab12Cd",
                         "a/.snapshot_0007.hdf5.tmp-xY9zQ1",
                         "a/.statistics.csv.tmp-000000"};
  const char *kept[] = {"a/.notes.txt.tmp-abcdef", "a/.checkpoint.hdf5.tmp-abc",
                        "a/checkpoint.hdf5.tmp-Ab12Cd",
                        "a/.snapshot_x.hdf5.tmp-Ab12Cd"};
  for (size_t k = 0; k < 3; k++)
    write_text(stale[k], "partial");
  for (size_t k = 0; k < 4; k++)
    write_text(kept[k], "user's");
  cr_assert_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--steps", "2",
                   "--progress", "off"),
               0);
  for (size_t k = 0; k < 3; k++)
    cr_expect(!exists(stale[k]), "%s was not swept", stale[k]);
  for (size_t k = 0; k < 4; k++)
    cr_expect(exists(kept[k]), "%s was removed", kept[k]);
  assert_stderr_has("removed");
}

/* A run started with a relative --out, restarted from another working
 * directory: it continues in the checkpoint's directory, not in a new one
 * of the same relative name. */
Test(run_dir, restart_from_another_working_directory) {
  cr_assert_eq(mkdir(sp("elsewhere"), 0777), 0);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cd %s && %s run --n 600 --steps 2 --out rel --progress off "
           ">/dev/null 2>&1",
           sp(""), cli_path());
  cr_assert_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd,
           "cd %s && %s run --restart ../rel/checkpoint.hdf5 --steps 4 "
           "--progress off >/dev/null 2>%s",
           sp("elsewhere"), cli_path(), sp("stderr.txt"));
  cr_assert_eq(system(cmd), 0, "%s", read_text("stderr.txt"));
  cr_expect(!exists("elsewhere/rel"), "the restart made a new directory");
  cr_expect_eq(checkpoint_step("rel/checkpoint.hdf5"), 4);
  assert_steps("rel/statistics.csv", (const long[]){0, 1, 2, 3, 4}, 5);
}

/* A fresh run that fails at step 0 (its first snapshot exceeds a
 * file-size limit) leaves no run behind: the directories it made are gone;
 * in a directory that was there, only the user's file is left, and the
 * same run then starts there without --force. */
Test(run_dir, failed_start_leaves_nothing) {
  cr_assert_eq(mkdir(sp("e"), 0777), 0);
  write_text("e/keep.txt", "mine\n");
  file_limit limit;
  file_limit_begin(&limit, 40000);
  const int made = RUN("run", "--n", "3000", "--steps", "2", "--out",
                       sp("new/sub"), "--progress", "off");
  const int there = RUN("run", "--n", "3000", "--steps", "2", "--out", sp("e"),
                        "--progress", "off");
  file_limit_end(&limit);
  cr_expect_eq(made, 1);
  cr_expect_eq(there, 1);
  assert_stderr_has("snapshot_0000.hdf5");
  assert_stderr_has("File too large");
  cr_expect(!exists("new"), "the directories the run made are left");
  const char *gone[] = {"e/used_parameters.yml", "e/statistics.csv",
                        "e/snapshot_0000.hdf5", "e/.tilefmm-run.lock"};
  for (size_t k = 0; k < 4; k++)
    cr_expect(!exists(gone[k]), "%s is left", gone[k]);
  cr_expect(exists("e/keep.txt"));
  cr_expect_eq(RUN("run", "--n", "3000", "--steps", "2", "--out", sp("e"),
                   "--progress", "off"),
               0, "%s", read_text("stderr.txt"));
}

/* No leak: a run with a parameter file (its strings copied), then a
 * restart (the checkpoint's strings copied) under valgrind, which exits
 * 99 on a definite leak. Skipped where valgrind is not installed. */
Test(run_dir, no_leak_under_valgrind, .timeout = 600) {
#ifdef __SANITIZE_ADDRESS__
  cr_skip_test("ASan build: LeakSanitizer checks these runs");
#endif
  if (system("valgrind --version >/dev/null 2>&1") != 0)
    cr_skip_test("no valgrind: the leak check is not run");
  write_text("p.yml", "InitialConditions:\n  type: plummer\n  n: 200\n"
                      "Output:\n  progress: 'off'\n");
  /* OMP_WAIT_POLICY set: else the tool runs itself again to set it
   * (apps/main.c), and valgrind would not follow it there. */
  const char *vg = "OMP_WAIT_POLICY=passive valgrind -q --leak-check=full "
                   "--errors-for-leak-kinds=definite --error-exitcode=99";
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "%s %s run --params %s --steps 1 --threads 1 --out %s >/dev/null "
           "2>%s",
           vg, cli_path(), sp("p.yml"), sp("v"), sp("stderr.txt"));
  int status = system(cmd);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run: status %d\n%s",
            status, read_text("stderr.txt"));
  snprintf(cmd, sizeof cmd,
           "%s %s run --restart %s --steps 2 --threads 1 >/dev/null 2>%s", vg,
           cli_path(), sp("v/checkpoint.hdf5"), sp("stderr.txt"));
  status = system(cmd);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "restart: status %d\n%s", status, read_text("stderr.txt"));
}
