/* File safety of the tool's inputs and outputs: a file with no newline is
 * refused at once, an output never replaces an input, links are followed
 * to the file they name, special files are written through (and stay what
 * they are), and a file-size limit is a reported error, not a kill. */
#define _XOPEN_SOURCE 700 /* mknod */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(files, .init = scratch_make, .fini = scratch_remove);

/* b.txt: n Plummer bodies; want.txt: their forces, written to a plain new
 * file (the truth the other destinations are compared with). */
static void bodies_and_forces(const char *n) {
  cr_assert_eq(RUN("ic", "plummer", "--n", n, "--out", sp("b.txt")), 0);
  cr_assert_eq(RUN("forces", "--in", sp("b.txt"), "--out", sp("want.txt"),
                   "--method", "direct", "--device", "cpu"),
               0);
}

static mode_t file_type(const char *name) {
  struct stat st;
  cr_assert_eq(lstat(sp(name), &st), 0, "%s missing", name);
  return st.st_mode & S_IFMT;
}

/* 300 kB without a newline, and /dev/zero (endless, no newline): refused
 * at line 1, not read whole into memory. */
Test(files, line_without_newline_is_refused, .timeout = 60) {
  char *junk = malloc(300000);
  cr_assert_not_null(junk);
  memset(junk, '7', 300000);
  write_file("in.txt", junk, 300000);
  free(junk);
  const char *args[] = {"forces",      "--in",     sp("in.txt"), "--out",
                        sp("out.txt"), "--method", "direct",     NULL};
  expect_failure(args, 1, "in.txt:1: a line longer than 65536 bytes", NULL);
  unlink(sp("out.txt"));
  const char *zero[] = {"forces",      "--in",     "/dev/zero", "--out",
                        sp("out.txt"), "--method", "direct",    NULL};
  expect_failure(zero, 1, "/dev/zero:1: contains a NUL byte", "binary");
}

/* A binary file that is none of the snapshots tilefmm reads (Tipsy and
 * GADGET-2 files are tested in test_binary_input.c) is named a binary
 * file, not text, at the line of its first control byte. */
Test(files, other_binary_is_named) {
  unsigned char b[512];
  for (size_t k = 0; k < sizeof b; k++)
    b[k] = (unsigned char)(k * 37 + 11); /* no header; control bytes */
  write_file("in.dat", (const char *)b, sizeof b);
  const char *args[] = {"forces",      "--in",     sp("in.dat"), "--out",
                        sp("out.txt"), "--method", "direct",     NULL};
  expect_failure(args, 1, "in.dat:",
                 "a binary file, neither text nor a snapshot tilefmm reads");
  assert_stderr_has("in.dat:1: contains the control byte 0x0e"); /* k = 7 */
}

/* A long comment within the bound reads, across the reader's blocks, and
 * so does a last line with no newline. */
Test(files, long_comment_within_the_bound_reads) {
  const size_t len = 65000;
  char *text = malloc(len + 64);
  cr_assert_not_null(text);
  text[0] = '#';
  memset(text + 1, 'c', len - 2);
  text[len - 1] = '\n';
  strcpy(text + len, "-0.5 0 0 1\n0.5 0 0 1");
  write_file("in.txt", text, strlen(text));
  free(text);
  cr_assert_eq(RUN("forces", "--in", sp("in.txt"), "--out", sp("out.txt"),
                   "--method", "reference"),
               0);
  table *t = read_table("out.txt", 4);
  cr_assert_eq(t->rows, 2);
  /* Two unit masses 1 apart: |a| = 1, phi = -1. */
  assert_close(t->v[0][0], 1.0, 1e-15, "a_x of the first body");
  assert_close(t->v[1][3], -1.0, 1e-15, "phi of the second body");
  free(t);
}

/* --out naming the input, by its name, a hard link or a symbolic link:
 * refused, the input unchanged. */
Test(files, output_never_replaces_the_input) {
  bodies_and_forces("300");
  char *before = read_text("b.txt");
  cr_assert_eq(link(sp("b.txt"), sp("hard.txt")), 0);
  cr_assert_eq(symlink("b.txt", sp("soft.txt")), 0);
  const char *outs[] = {"b.txt", "hard.txt", "soft.txt"};
  for (size_t k = 0; k < 3; k++) {
    cr_expect_eq(RUN("forces", "--in", sp("b.txt"), "--out", sp(outs[k]),
                     "--method", "direct", "--device", "cpu"),
                 1, "--out %s", outs[k]);
    assert_stderr_has("is the same file as the input");
    assert_stderr_has(sp("b.txt"));
    char *after = read_text("b.txt");
    cr_assert_str_eq(after, before, "the input was changed");
    free(after);
  }
  cr_expect_eq(file_type("soft.txt"), S_IFLNK);
  free(before);
  assert_no_temporaries();
}

/* A symbolic link is followed: its target (through a chain of links, or a
 * target yet to be made) gets the output, and the link stays a link. */
Test(files, output_follows_symbolic_links) {
  bodies_and_forces("300");
  write_text("target.txt", PRECIOUS);
  cr_assert_eq(symlink("target.txt", sp("link.txt")), 0);
  cr_assert_eq(symlink("link.txt", sp("chain.txt")), 0);
  cr_assert_eq(symlink("new.txt", sp("dangling.txt")), 0);
  cr_assert_eq(RUN("forces", "--in", sp("b.txt"), "--out", sp("chain.txt"),
                   "--method", "direct", "--device", "cpu"),
               0);
  assert_same_text("target.txt", "want.txt");
  cr_expect_eq(file_type("link.txt"), S_IFLNK);
  cr_expect_eq(file_type("chain.txt"), S_IFLNK);
  cr_assert_eq(RUN("forces", "--in", sp("b.txt"), "--out", sp("dangling.txt"),
                   "--method", "direct", "--device", "cpu"),
               0);
  assert_same_text("new.txt", "want.txt");
  cr_expect_eq(file_type("dangling.txt"), S_IFLNK);
  assert_no_temporaries();
}

/* A FIFO is written through: a reader gets the forces, and the FIFO is
 * still a FIFO (not a regular file renamed over it). */
Test(files, fifo_is_written_through, .timeout = 120) {
  bodies_and_forces("300");
  cr_assert_eq(mkfifo(sp("fifo"), 0600), 0);
  const char *cli = getenv("TFMM_CLI");
  char cmd[4096];
  /* The reader gives up after 60 s, should nothing ever open the FIFO. */
  snprintf(cmd, sizeof cmd,
           "timeout 60 cat %s >%s & r=$!; %s forces --in %s --out %s "
           "--method direct --device cpu 2>%s; s=$?; wait $r; exit $s",
           sp("fifo"), sp("got.txt"), cli != NULL ? cli : TFMM_CLI_PATH,
           sp("b.txt"), sp("fifo"), sp("stderr.txt"));
  const int status = system(cmd);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s",
            status, read_text("stderr.txt"));
  cr_expect_eq(file_type("fifo"), S_IFIFO, "the FIFO was replaced");
  assert_same_text("got.txt", "want.txt");
  assert_no_temporaries();
}

/* A character device is written through and stays a device. As root a
 * private node of the null device is made here (replacing the system's
 * /dev/null is what the bug did); otherwise /dev/null itself is safe. */
Test(files, character_device_is_written_through) {
  bodies_and_forces("300");
  const char *dev = "/dev/null";
  if (geteuid() == 0) {
    if (mknod(sp("null"), S_IFCHR | 0666, makedev(1, 3)) != 0)
      cr_skip_test("cannot make a device node here: %s", strerror(errno));
    const int fd = open(sp("null"), O_WRONLY);
    if (fd < 0)
      cr_skip_test("cannot open a device node here: %s", strerror(errno));
    close(fd);
    dev = sp("null");
  }
  cr_assert_eq(RUN("forces", "--in", sp("b.txt"), "--out", dev, "--method",
                   "direct", "--device", "cpu"),
               0);
  struct stat st;
  cr_assert_eq(lstat(dev, &st), 0);
  cr_expect(S_ISCHR(st.st_mode), "%s is no longer a character device", dev);
  cr_expect_eq(st.st_rdev, makedev(1, 3));
  assert_no_temporaries();
}

/* /dev/stdout, a link through /proc to a pipe that has no path, is
 * written through to the pipe. Here a link of the test's own to
 * /proc/self/fd/1 stands for it, so that a wrong tool replaces that link,
 * not the system's /dev/stdout. */
Test(files, standard_output_by_name) {
  cr_assert_eq(RUN("ic", "plummer", "--n", "50", "--out", sp("want.txt")), 0);
  cr_assert_eq(symlink("/proc/self/fd/1", sp("stdout")), 0);
  const char *cli = getenv("TFMM_CLI");
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s ic plummer --n 50 --out %s 2>%s | cat >%s",
           cli != NULL ? cli : TFMM_CLI_PATH, sp("stdout"), sp("stderr.txt"),
           sp("got.txt"));
  cr_assert_eq(system(cmd), 0);
  char *err = read_text("stderr.txt");
  cr_expect_str_eq(err, "", "stderr: %s", err);
  free(err);
  assert_same_text("got.txt", "want.txt");
  cr_expect_eq(file_type("stdout"), S_IFLNK);
}

/* A directory or a block device is no output. */
Test(files, directory_output_is_refused) {
  bodies_and_forces("100");
  cr_assert_eq(mkdir(sp("d"), 0700), 0);
  const char *args[] = {"forces", "--in",     sp("b.txt"), "--out",
                        sp("d"),  "--method", "direct",    NULL};
  cr_expect_eq(run_argv(args), 1);
  assert_stderr_has("Is a directory");
  assert_no_temporaries();
}

/* A file-size limit (ulimit -f) with SIGXFSZ at its default, as a shell
 * leaves it: the write fails with a message, exit 1, no temporary, and an
 * existing output untouched (it used to kill the tool with no message and
 * leave the temporary). */
Test(files, file_size_limit_is_a_reported_error) {
  bodies_and_forces("3000");
  file_limit limit;
  file_limit_begin(&limit, 40000);
  const char *args[] = {"forces",      "--in",     sp("b.txt"), "--out",
                        sp("out.txt"), "--method", "direct",    NULL};
  expect_failure(args, 1, "out.txt: cannot write: File too large", NULL);
  file_limit_end(&limit);
}
