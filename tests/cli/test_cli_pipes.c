/* Inputs read from a pipe and outputs to standard output (issue 29): a
 * piped text body file is read whole, once (the format is told from the
 * bytes read, never by opening the path again), whether named /dev/stdin
 * or '-'; a piped snapshot, which its readers must seek in, is refused
 * saying so; '--out -' is standard output for text, refused for a binary
 * file. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

TestSuite(pipes, .init = scratch_make, .fini = scratch_remove);

/* b.txt: n Plummer bodies of a fresh seed (logged), more than the 4096
 * bytes a stdio buffer reads at once; want.txt: their forces. */
static void bodies_and_forces(const char *n) {
  char seed[32];
  snprintf(seed, sizeof seed, "%llu",
           (unsigned long long)time(NULL) * 1000003ull ^
               (unsigned long long)getpid());
  cr_log_info("seed %s", seed);
  cr_assert_eq(
      RUN("ic", "plummer", "--n", n, "--seed", seed, "--out", sp("b.txt")), 0);
  cr_assert_eq(RUN("forces", "--in", sp("b.txt"), "--out", sp("want.txt"),
                   "--method", "direct", "--device", "cpu"),
               0);
}

/* The first 4096 bytes of a pipe were lost: 469 bodies of 500 read. */
Test(pipes, piped_text_is_read_whole) {
  bodies_and_forces("500");
  const char *names[] = {"/dev/stdin", "-"};
  for (size_t k = 0; k < 2; k++) {
    unlink(sp("got.txt"));
    const int rc =
        RUN_PIPED("b.txt", "forces", "--in", names[k], "--out", sp("got.txt"),
                  "--method", "direct", "--device", "cpu");
    char *err = read_text("stderr.txt");
    cr_assert_eq(rc, 0, "--in %s: exit %d:\n%s", names[k], rc, err);
    free(err);
    assert_stderr_has("tilefmm forces: 500 bodies");
    assert_same_text("got.txt", "want.txt");
  }
}

/* run --ic /dev/stdin, and '-', start from every body. */
Test(pipes, run_reads_piped_initial_conditions_whole) {
  bodies_and_forces("500");
  const char *names[] = {"/dev/stdin", "-"};
  for (size_t k = 0; k < 2; k++) {
    char dir[16];
    snprintf(dir, sizeof dir, "r%zu", k);
    const int rc = RUN_PIPED("b.txt", "run", "--ic", names[k], "--steps", "1",
                             "--out", sp(dir), "--progress", "off");
    char *err = read_text("stderr.txt");
    cr_assert_eq(rc, 0, "--ic %s: exit %d:\n%s", names[k], rc, err);
    free(err);
    assert_stdout_has("run: 500 bodies on "); /* cpu or gpu */
  }
}

/* The bytes of a GADGET-2 format 1 header record (256 bytes framed by
 * its markers) and of a Tipsy header (time, n, ndim 3, nsph, ndark,
 * nstar, pad), little-endian: a piped snapshot's first bytes. */
static void write_binary_heads(void) {
  unsigned char g[264] = {0};
  g[0] = g[260] = 0; /* 256 = 0x100, little-endian */
  g[1] = g[261] = 1;
  g[4 + 4] = 2; /* npart[1] = 2 */
  write_file("g.dat", (const char *)g, sizeof g);
  unsigned char t[32] = {0};
  t[8] = 2;  /* n */
  t[12] = 3; /* ndim */
  t[20] = 2; /* ndark */
  write_file("t.bin", (const char *)t, sizeof t);
}

/* A snapshot read by seeking cannot come through a pipe: refused, saying
 * why, out.txt left as it was. */
Test(pipes, piped_snapshot_is_refused_saying_why) {
  cr_assert_eq(RUN("ic", "plummer", "--n", "100", "--out", sp("s.hdf5")), 0);
  write_binary_heads();
  const char *files[] = {"s.hdf5", "g.dat", "t.bin"};
  for (size_t k = 0; k < 3; k++)
    for (int pass = 0; pass < 2; pass++) {
      if (pass == 0)
        unlink(sp("out.txt"));
      else
        write_text("out.txt", PRECIOUS);
      const int rc = RUN_PIPED(files[k], "forces", "--in", "/dev/stdin",
                               "--out", sp("out.txt"));
      cr_assert_eq(rc, 1, "%s through a pipe: exit %d", files[k], rc);
      assert_stderr_has(": a binary file through a pipe");
      assert_stderr_has("save it to a file");
      char *out = read_text("out.txt");
      if (pass == 0)
        cr_assert_null(out, "out.txt was created");
      else
        cr_assert_str_eq(out, PRECIOUS, "out.txt was changed");
      free(out);
      assert_no_temporaries();
    }
  /* run --ic and render likewise. */
  cr_assert_eq(RUN_PIPED("s.hdf5", "run", "--ic", "/dev/stdin", "--steps", "1",
                         "--out", sp("r"), "--progress", "off"),
               1);
  assert_stderr_has(": a binary file through a pipe");
  cr_assert(!exists("r"), "a refused run made its directory");
  cr_assert_eq(
      RUN_PIPED("s.hdf5", "render", "/dev/stdin", "--out", sp("s.png")), 1);
  /* render reads text bodies too, a pipe as forces does (once, as text) */
  assert_stderr_has("/dev/stdin:2: contains the control byte");
  assert_stderr_has(": a binary file through a pipe");
  assert_stderr_has("save it to a file");
  cr_assert(!exists("s.png"), "a picture was drawn");
  cr_assert_eq(RUN_PIPED("s.hdf5", "render", "-", "--out", sp("s.png")), 1);
  assert_stderr_has("-: standard input cannot carry a snapshot");
  cr_assert(!exists("s.png"), "a picture was drawn");
}

/* Standard input that is a regular file ('< FILE') is not a pipe: '-'
 * reads a snapshot there as /dev/stdin does, and text too. */
Test(pipes, redirected_standard_input_reads_a_snapshot) {
  bodies_and_forces("300");
  cr_assert_eq(RUN("ic", "plummer", "--n", "100", "--out", sp("s.hdf5")), 0);
  cr_assert_eq(RUN("forces", "--in", sp("s.hdf5"), "--out", sp("sw.txt"),
                   "--method", "direct", "--device", "cpu"),
               0);
  const char *ins[] = {"s.hdf5", "b.txt"}, *wants[] = {"sw.txt", "want.txt"};
  for (size_t k = 0; k < 2; k++) {
    unlink(sp("got.txt"));
    const int rc =
        RUN_REDIRECTED(ins[k], "forces", "--in", "-", "--out", sp("got.txt"),
                       "--method", "direct", "--device", "cpu");
    char *err = read_text("stderr.txt");
    cr_assert_eq(rc, 0, "--in - < %s: exit %d:\n%s", ins[k], rc, err);
    free(err);
    assert_same_text("got.txt", wants[k]);
  }
  cr_assert_eq(RUN_REDIRECTED("s.hdf5", "run", "--ic", "-", "--steps", "1",
                              "--out", sp("r"), "--progress", "off"),
               0);
  assert_stdout_has("run: 100 bodies on "); /* cpu or gpu */
  cr_assert_eq(RUN_REDIRECTED("s.hdf5", "render", "-", "--out", sp("s.png")),
               0);
  cr_assert(exists("s.png"));
}

/* '--out -' is standard output, as '--in -' is standard input: no file
 * named '-' appears. */
Test(pipes, out_dash_is_standard_output) {
  bodies_and_forces("300");
  cr_assert_eq(RUN_PIPED(NULL, "forces", "--in", sp("b.txt"), "--out", "-",
                         "--method", "direct", "--device", "cpu"),
               0);
  cr_assert(!exists("-"), "a file named '-' was written");
  assert_same_text("stdout.txt", "want.txt");
  cr_assert_eq(RUN_PIPED(NULL, "ic", "plummer", "--n", "10", "--out", "-"), 0);
  cr_assert(!exists("-"), "a file named '-' was written");
  assert_stdout_has("# x y z m vx vy vz\n");
}

/* A binary file is not written to standard output: refused, naming it. */
Test(pipes, binary_out_dash_is_refused) {
  cr_assert_eq(RUN("ic", "plummer", "--n", "100", "--out", sp("s.hdf5")), 0);
  cr_assert_eq(RUN_PIPED(NULL, "ic", "plummer", "--n", "10", "--format", "hdf5",
                         "--out", "-"),
               2);
  assert_stderr_has("standard output");
  cr_assert_eq(RUN_PIPED(NULL, "render", sp("s.hdf5"), "--out", "-"), 2);
  assert_stderr_has("--out -: ");
  assert_stderr_has("standard output");
  cr_assert(!exists("-"), "a file named '-' was written");
  assert_no_temporaries();
}
