/* The tool on bad input files: each must fail with exit code 1 and a
 * message "tilefmm: FILE:LINE: what", create no output file and leave an
 * existing one untouched. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(input, .init = scratch_make, .fini = scratch_remove);

/* forces on in.txt holding len bytes of text must fail naming where
 * ("in.txt:3:") and what. */
static void expect_bad_bytes(const char *text, size_t len, const char *where,
                             const char *what) {
  write_file("in.txt", text, len);
  const char *args[] = {"forces",      "--in",     sp("in.txt"), "--out",
                        sp("out.txt"), "--device", "cpu",        "--method",
                        "reference",   NULL};
  expect_failure(args, 1, where, what);
}

static void expect_bad(const char *text, const char *where, const char *what) {
  expect_bad_bytes(text, strlen(text), where, what);
}

Test(input, too_few_columns) { expect_bad("0 0 0\n", "in.txt:1:", "found 3"); }

Test(input, five_columns) {
  expect_bad("0 0 0 1\n1 0 0 1 5\n", "in.txt:2:", "found 5");
}

Test(input, six_columns) {
  expect_bad("0 0 0 1 0 0\n", "in.txt:1:", "found 6");
}

Test(input, eight_columns) {
  expect_bad("0 0 0 1 0 0 0 0\n", "in.txt:1:", "found 8");
}

Test(input, word_instead_of_number) {
  expect_bad("0 0 0 1\n1 abc 0 1\n", "in.txt:2:", "'abc'");
}

Test(input, nan) { expect_bad("0 0 nan 1\n", "in.txt:1:", "'nan'"); }

Test(input, nan_upper_case) {
  expect_bad("1 0 0 1\n0 0 0 NaN\n", "in.txt:2:", "'NaN'");
}

Test(input, inf) { expect_bad("inf 0 0 1\n", "in.txt:1:", "'inf'"); }

Test(input, negative_infinity) {
  expect_bad("0 -Infinity 0 1\n", "in.txt:1:", "'-Infinity'");
}

Test(input, overflow_to_inf) {
  expect_bad("0 0 0 1\n1e999 0 0 1\n", "in.txt:2:", "'1e999'");
}

Test(input, trailing_junk) {
  expect_bad("0 0 0 1\n1.0x 0 0 1\n", "in.txt:2:", "'1.0x'");
}

Test(input, junk_in_velocity) {
  expect_bad("0 0 0 1 0 0 1.5.2\n", "in.txt:1:", "'1.5.2'");
}

Test(input, nan_in_velocity) {
  expect_bad("0 0 0 1 0 nan 0\n", "in.txt:1:", "'nan'");
}

Test(input, zero_mass) {
  expect_bad("0 0 0 1\n1 0 0 0\n", "in.txt:2:", "mass");
}

Test(input, negative_mass) { expect_bad("0 0 0 -1\n", "in.txt:1:", "mass"); }

Test(input, line_numbers_count_comments_and_blanks) {
  expect_bad("# header\n\n0 0 0 1 # fine\n   \n1 0 0 x\n", "in.txt:5:", "'x'");
}

Test(input, nul_byte) {
  expect_bad_bytes("0 0 0 1\n1 0\0 0 1\n", 16, "in.txt:2:", "NUL");
}

Test(input, empty_file) { expect_bad("", "in.txt", "no bodies"); }

Test(input, only_comments) {
  expect_bad("# nothing\n\n   # here\n", "in.txt", "no bodies");
}

/* The library refuses two bodies at one point without softening; its
 * message is printed. */
Test(input, coincident_bodies) {
  expect_bad("0 0 0 1\n1 1 1 1\n0 0 0 2\n", "tilefmm: ", "bod");
}

Test(input, missing_file) {
  const char *args[] = {"forces", "--in",        sp("absent.txt"),
                        "--out",  sp("out.txt"), "--device",
                        "cpu",    NULL};
  expect_failure(args, 1, "absent.txt", "cannot open");
}

/* A directory opens but cannot be read, even by root. */
Test(input, directory) {
  cr_assert_eq(mkdir(sp("dir.txt"), 0700), 0);
  const char *args[] = {"forces",      "--in",     sp("dir.txt"), "--out",
                        sp("out.txt"), "--device", "cpu",         NULL};
  expect_failure(args, 1, "dir.txt:1:", "cannot read");
}

Test(input, no_permission) {
  if (geteuid() == 0) {
    scratch_remove(); /* a skipped test does not reach .fini */
    cr_skip_test("root reads files whatever their mode");
  }
  write_text("in.txt", "0 0 0 1\n");
  cr_assert_eq(chmod(sp("in.txt"), 0), 0);
  const char *args[] = {"forces",      "--in",     sp("in.txt"), "--out",
                        sp("out.txt"), "--device", "cpu",        NULL};
  expect_failure(args, 1, "in.txt", "cannot open");
}

/* ---- bad output paths ---------------------------------------------------- */

Test(input, output_directory_missing) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const int rc = RUN("forces", "--in", sp("in.txt"), "--out",
                     sp("no/such/dir/out.txt"), "--device", "cpu");
  cr_assert_eq(rc, 1);
  assert_stderr_has("no/such/dir/out.txt");
  assert_no_temporaries();
}

Test(input, output_is_a_directory) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  cr_assert_eq(mkdir(sp("outdir"), 0700), 0);
  const int rc = RUN("forces", "--in", sp("in.txt"), "--out", sp("outdir"),
                     "--device", "cpu");
  cr_assert_eq(rc, 1);
  assert_stderr_has("outdir");
  assert_no_temporaries();
}
