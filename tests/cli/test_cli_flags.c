/* The tool on bad command lines: each must exit with code 2, name the flag
 * (or the word) at fault, create no output file and leave an existing one
 * untouched. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <string.h>

TestSuite(flags, .init = scratch_make, .fini = scratch_remove);

#define INVALID "invalid value"

/* forces with a valid input and --out, one bad flag and its value, and
 * --device cpu unless that is the flag: the message must name the flag and
 * give the reason. */
static void expect_forces_usage(const char *flag, const char *value,
                                const char *reason) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const int is_device = strcmp(flag, "--device") == 0;
  const char *args[] = {
      "forces",      "--in", sp("in.txt"), "--out",
      sp("out.txt"), flag,   value,        is_device ? NULL : "--device",
      "cpu",         NULL};
  expect_failure(args, 2, flag, reason);
}

Test(flags, eps_negative) { expect_forces_usage("--eps", "-1", INVALID); }
Test(flags, eps_word) { expect_forces_usage("--eps", "abc", INVALID); }
Test(flags, eps_trailing_junk) { expect_forces_usage("--eps", "1x", INVALID); }
Test(flags, eps_nan) { expect_forces_usage("--eps", "nan", INVALID); }
Test(flags, eps_inf) { expect_forces_usage("--eps", "inf", INVALID); }
Test(flags, eps_empty) { expect_forces_usage("--eps", "", INVALID); }
Test(flags, eps_leading_space) { expect_forces_usage("--eps", " 1", INVALID); }
Test(flags, G_zero) { expect_forces_usage("--G", "0", INVALID); }
Test(flags, G_word) { expect_forces_usage("--G", "one", INVALID); }
Test(flags, threads_negative) {
  expect_forces_usage("--threads", "-1", INVALID);
}
Test(flags, threads_fraction) {
  expect_forces_usage("--threads", "1.5", INVALID);
}
Test(flags, threads_overflow) {
  expect_forces_usage("--threads", "99999999999", INVALID);
}
/* libgomp crashed on these before they were capped (issue 11). */
Test(flags, threads_too_many) {
  expect_forces_usage("--threads", "100000", "[0, 1024]");
}
Test(flags, threads_int_max) {
  expect_forces_usage("--threads", "2147483647", INVALID);
}
Test(flags, method_unknown) {
  expect_forces_usage("--method", "fmm2", INVALID);
}
Test(flags, device_unknown) { expect_forces_usage("--device", "tpu", INVALID); }
Test(flags, method_list_in_message) {
  expect_forces_usage("--method", "pm", "reference, direct, fmm or bh");
}
Test(flags, theta_below_zero) {
  expect_forces_usage("--theta", "-0.001", INVALID);
}
Test(flags, theta_negative) { expect_forces_usage("--theta", "-0.5", INVALID); }
Test(flags, theta_above_one) { expect_forces_usage("--theta", "1.5", INVALID); }
Test(flags, theta_word) { expect_forces_usage("--theta", "wide", INVALID); }
Test(flags, order_negative) { expect_forces_usage("--order", "-1", INVALID); }
Test(flags, order_21) { expect_forces_usage("--order", "21", INVALID); }
Test(flags, order_fraction) { expect_forces_usage("--order", "4.5", INVALID); }
Test(flags, theta_auto_misspelt) {
  expect_forces_usage("--theta", "Auto", "auto or a number in [0, 1]");
}
Test(flags, order_word) {
  expect_forces_usage("--order", "automatic", "auto or an integer in [0, 20]");
}
Test(flags, softening_unknown) {
  expect_forces_usage("--softening", "gaussian", "plummer or spline");
}
Test(flags, softening_empty) {
  expect_forces_usage("--softening", "", "plummer or spline");
}
Test(flags, accuracy_zero) {
  expect_forces_usage("--accuracy", "0", "a number in (0, 0.1]");
}
Test(flags, accuracy_negative) {
  expect_forces_usage("--accuracy", "-1e-3", "a number in (0, 0.1]");
}
Test(flags, accuracy_above_limit) {
  expect_forces_usage("--accuracy", "0.2", "a number in (0, 0.1]");
}
Test(flags, accuracy_word) {
  expect_forces_usage("--accuracy", "tight", INVALID);
}
Test(flags, precision_unknown) {
  expect_forces_usage("--precision", "half", "single or double");
}
Test(flags, mac_unknown) {
  expect_forces_usage("--mac", "opening", "geometric, mass or error");
}
Test(flags, leaf_zero) { expect_forces_usage("--leaf", "0", INVALID); }
Test(flags, leaf_negative) { expect_forces_usage("--leaf", "-64", INVALID); }
Test(flags, max_depth_zero) {
  expect_forces_usage("--max-depth", "0", INVALID);
}
Test(flags, max_depth_22) { expect_forces_usage("--max-depth", "22", INVALID); }
Test(flags, flag_given_twice) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"forces", "--in", sp("in.txt"), "--out", sp("out.txt"),
                        "--eps",  "0.1",  "--eps",      "0.2",   NULL};
  expect_failure(args, 2, "--eps", "more than once");
}
Test(flags, gpu_tile_not_multiple_of_32) {
  expect_forces_usage("--gpu-tile", "33", INVALID);
}
Test(flags, gpu_tile_too_large) {
  expect_forces_usage("--gpu-tile", "512", INVALID);
}
Test(flags, gpu_threads_per_body_not_power_of_two) {
  expect_forces_usage("--gpu-threads-per-body", "3", INVALID);
}
Test(flags, gpu_unroll_bad) {
  expect_forces_usage("--gpu-unroll", "3", INVALID);
}
Test(flags, gpu_bodies_per_thread_bad) {
  expect_forces_usage("--gpu-bodies-per-thread", "3", INVALID);
}
Test(flags, unknown_flag) {
  expect_forces_usage("--bogus", "1", "unknown flag");
}

Test(flags, gpu_block_too_large) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {
      "forces",      "--in",       sp("in.txt"), "--out",
      sp("out.txt"), "--gpu-tile", "256",        "--gpu-threads-per-body",
      "8",           NULL};
  expect_failure(args, 2, "gpu_threads_per_body = 8", "<= 1024 threads");
}

Test(flags, missing_value) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"forces",      "--in",  sp("in.txt"), "--out",
                        sp("out.txt"), "--eps", NULL};
  expect_failure(args, 2, "--eps", "missing value");
}

Test(flags, missing_input_flag) {
  const char *args[] = {"forces", "--device",    "cpu",
                        "--out",  sp("out.txt"), NULL};
  expect_failure(args, 2, "--in", "missing required flag");
}

Test(flags, unexpected_argument) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"forces",      "--in",  sp("in.txt"), "--out",
                        sp("out.txt"), "stray", NULL};
  expect_failure(args, 2, "stray", "unexpected argument");
}

/* ic plummer with --out and one bad flag and its value, plus --n 10
 * unless that is the flag. */
static void expect_ic_usage(const char *flag, const char *value,
                            const char *reason) {
  const int is_n = strcmp(flag, "--n") == 0;
  const char *args[] = {
      "ic",  "plummer",           "--out", sp("out.txt"), flag,
      value, is_n ? NULL : "--n", "10",    NULL};
  expect_failure(args, 2, flag, reason);
}

Test(flags, ic_n_zero) { expect_ic_usage("--n", "0", INVALID); }
Test(flags, ic_n_negative) { expect_ic_usage("--n", "-5", INVALID); }
Test(flags, ic_n_word) { expect_ic_usage("--n", "many", INVALID); }
Test(flags, ic_n_exponent) { expect_ic_usage("--n", "1e3", INVALID); }
Test(flags, ic_n_fraction) { expect_ic_usage("--n", "10.5", INVALID); }
Test(flags, ic_seed_negative) { expect_ic_usage("--seed", "-1", INVALID); }
Test(flags, ic_seed_overflow) {
  expect_ic_usage("--seed", "18446744073709551616", INVALID);
}
Test(flags, ic_unknown_flag) {
  expect_ic_usage("--radius", "2", "unknown flag");
}

Test(flags, ic_missing_n) {
  const char *args[] = {"ic", "plummer", "--out", sp("out.txt"), NULL};
  expect_failure(args, 2, "--n", "missing required flag");
}

Test(flags, ic_unknown_model) {
  const char *args[] = {"ic",    "king",        "--n", "10",
                        "--out", sp("out.txt"), NULL};
  expect_failure(args, 2, "king", "unknown model");
}

Test(flags, ic_missing_model) {
  cr_assert_eq(RUN("ic"), 2);
  assert_stderr_has("MODEL");
}

Test(flags, no_command) {
  cr_assert_eq(run_argv((const char *const[]){NULL}), 2);
  assert_stderr_has("Usage");
}

Test(flags, unknown_command) {
  cr_assert_eq(RUN("frobnicate"), 2);
  assert_stderr_has("frobnicate");
}
