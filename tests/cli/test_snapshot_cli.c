/* Snapshots and checkpoints as the tool reads them (run --ic, run
 * --restart): damage and values the readers used to let through or crash
 * on, each refused with a message naming the file and what is wrong, and
 * the files they must still read (issue 11). The tool runs as a child;
 * its files are read back with apps/snapshot*.c. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TestSuite(snapshot_cli, .init = scratch_make, .fini = scratch_remove);

static snapshot read_snap(const char *path) {
  snapshot s;
  cr_assert_eq(snapshot_read(path, &s), 1, "%s", errors());
  return s;
}

/* Asserts that a and b hold the same bodies, bit for bit. */
static void assert_same_bodies(const snapshot *a, const snapshot *b) {
  cr_assert_eq(a->n, b->n);
  cr_assert(memcmp(&a->time, &b->time, sizeof a->time) == 0, "time");
  cr_assert(memcmp(a->pos, b->pos, 3 * a->n * sizeof(double)) == 0, "pos");
  cr_assert(memcmp(a->vel, b->vel, 3 * a->n * sizeof(double)) == 0, "vel");
  cr_assert(memcmp(a->mass, b->mass, a->n * sizeof(double)) == 0, "mass");
  cr_assert(memcmp(a->ids, b->ids, a->n * sizeof(uint64_t)) == 0, "IDs");
}

/* Asserts that b holds a's bodies, as a snapshot of a's bodies holds
 * them: bit for bit but the coordinates, which a snapshot stores shifted
 * into its box, and which come back to an ulp of the box. */
static void assert_same_bodies_shifted(const snapshot *a, const snapshot *b) {
  cr_assert_eq(a->n, b->n);
  double extent = 0;
  for (size_t i = 0; i < 3 * a->n; i++)
    extent = fmax(extent, fabs(a->pos[i]));
  for (size_t i = 0; i < 3 * a->n; i++)
    cr_assert(fabs(a->pos[i] - b->pos[i]) <= 0x1p-50 * extent,
              "pos %zu: %.17g, not %.17g", i, b->pos[i], a->pos[i]);
  snapshot unshifted = *b;
  unshifted.pos = a->pos;
  assert_same_bodies(a, &unshifted);
}

/* run --ic FILE, no step: its snapshot 0000 must hold the file's bodies. */
static void expect_initial_conditions(const char *file, const snapshot *want) {
  remove_dir(sp("o"));
  const int code =
      RUN("run", "--ic", file, "--method", "direct", "--steps", "0",
          "--threads", "1", "--progress", "off", "--out", sp("o"));
  char *said = read_text("stderr.txt");
  cr_assert_eq(code, 0, "run --ic %s failed:\n%s", file, said);
  free(said);
  snapshot got = read_snap(sp("o/snapshot_0000.hdf5"));
  assert_same_bodies_shifted(want, &got);
  snapshot_free(&got);
}

/* The checkpoint of a small run, edited by change, at cp/checkpoint.hdf5
 * beside the run's statistics: a restart in place. */
static void edited_checkpoint(void (*change)(snapshot *)) {
  small_run("a");
  snapshot cp = read_snap(sp("a/checkpoint.hdf5"));
  change(&cp);
  remove_dir(sp("cp"));
  cr_assert_eq(mkdir(sp("cp"), 0755), 0);
  cr_assert_eq(snapshot_write(sp("cp/checkpoint.hdf5"), &cp), 1, "%s",
               errors());
  snapshot_free(&cp);
  size_t len;
  unsigned char *rows = read_bytes(sp("a/statistics.csv"), &len);
  write_bytes(sp("cp/statistics.csv"), rows, len);
  free(rows);
}

static int restart(void) {
  return RUN("run", "--restart", sp("cp/checkpoint.hdf5"), "--steps", "3",
             "--threads", "1", "--progress", "off", "--out", sp("cp"));
}

/* The tool's message, on one line, naming the file; and none of HDF5's
 * own error printing. */
static void expect_message(const char *needle, const char *file) {
  char *said = read_text("stderr.txt");
  cr_assert_not_null(said);
  cr_assert_not_null(strstr(said, needle), "stderr lacks '%s':\n%s", needle,
                     said);
  char line[1200];
  snprintf(line, sizeof line, "tilefmm: %s: ", file);
  cr_assert_not_null(strstr(said, line), "stderr lacks '%s':\n%s", line, said);
  cr_assert_null(strstr(said, "HDF5-DIAG"), "HDF5 printed:\n%s", said);
  free(said);
}

static void nan_acceleration(snapshot *cp) { cp->acc[3 * 4 + 1] = NAN; }
static void inf_potential(snapshot *cp) { cp->pot[7] = -INFINITY; }

/* Forces are read as they are; before, a non-finite one was reported a
 * step later as a bad position. */
Test(snapshot_cli, non_finite_forces_in_a_checkpoint) {
  edited_checkpoint(nan_acceleration);
  snapshot cp = read_snap(sp("cp/checkpoint.hdf5"));
  char body[128];
  snprintf(body, sizeof body,
           "body 4 (ParticleID %llu) has a non-finite acceleration",
           (unsigned long long)cp.ids[4]);
  cr_assert_eq(restart(), 1);
  expect_message(body, sp("cp/checkpoint.hdf5"));
  snapshot_free(&cp);

  edited_checkpoint(inf_potential);
  cr_assert_eq(restart(), 1);
  expect_message("body 7 (ParticleID 8) has a non-finite potential",
                 sp("cp/checkpoint.hdf5"));
}

static void set_count(snapshot *cp, const char *value) {
  for (size_t k = 0; k < cp->nparams; k++)
    if (strcmp(cp->params[k].name, "InitialConditions:n") == 0) {
      free(cp->params[k].value);
      cp->params[k].value = strdup(value);
      return;
    }
  cr_assert_fail("the checkpoint has no InitialConditions:n");
}
static void count_7(snapshot *cp) { set_count(cp, "7"); }
static void count_33(snapshot *cp) { set_count(cp, "33"); }

Test(snapshot_cli, checkpoint_count_disagrees_with_its_bodies) {
  edited_checkpoint(count_7);
  cr_assert_eq(restart(), 1);
  expect_message("/Parameters InitialConditions:n is '7', but the checkpoint "
                 "holds 32 bodies",
                 sp("cp/checkpoint.hdf5"));
  edited_checkpoint(count_33);
  cr_assert_eq(restart(), 1);
  expect_message("InitialConditions:n is '33'", sp("cp/checkpoint.hdf5"));
}

/* Settings given again at a restart are compared with the checkpoint's
 * by value: a number spelled otherwise there ("1.0e0" for "1") is the
 * same setting and the run continues; another value is refused, the
 * message naming both. */
static void set_param(snapshot *cp, const char *name, const char *value) {
  for (size_t k = 0; k < cp->nparams; k++)
    if (strcmp(cp->params[k].name, name) == 0) {
      free(cp->params[k].value);
      cp->params[k].value = strdup(value);
      return;
    }
  cr_assert_fail("the checkpoint has no %s", name);
}
static void g_respelled(snapshot *cp) { set_param(cp, "Gravity:G", "1.0e0"); }
static void g_changed(snapshot *cp) { set_param(cp, "Gravity:G", "2"); }

static int restart_with_g1(void) {
  return RUN("run", "--restart", sp("cp/checkpoint.hdf5"), "--steps", "3",
             "--threads", "1", "--progress", "off", "--out", sp("cp"), "--G",
             "1");
}

Test(snapshot_cli, settings_compare_by_value) {
  edited_checkpoint(g_respelled);
  const int code = restart_with_g1();
  char *said = read_text("stderr.txt");
  cr_assert_eq(code, 0, "%s", said);
  free(said);
  edited_checkpoint(g_changed);
  const int refused = restart_with_g1();
  said = read_text("stderr.txt");
  cr_assert_eq(refused, 2, "exit %d: %s", refused, said);
  free(said);
  expect_message("written with Gravity:G = 2, not 1 (--G)",
                 sp("cp/checkpoint.hdf5"));
}

/* A checkpoint whose /Parameters and /RunState hold variable-length
 * strings (tilefmm's before fixed-length strings, or one edited with
 * h5py) is refused before a string is read: their text lives in the
 * global heap, which has no checksum, and a damaged one crashed libhdf5
 * or looped it (issue 29). */
static void unchanged(snapshot *cp) { (void)cp; }

Test(snapshot_cli, checkpoint_with_variable_length_strings_is_refused) {
  edited_checkpoint(unchanged);
  const hid_t file = h5_open(sp("cp/checkpoint.hdf5"));
  h5_strings_to_variable_length(file, "Parameters");
  h5_strings_to_variable_length(file, "RunState");
  h5_close(file);
  size_t len;
  unsigned char *bytes = read_bytes(sp("cp/checkpoint.hdf5"), &len);
  cr_assert_geq(find_bytes(bytes, len, "GCOL", 4), 0,
                "the strings were not made variable-length");
  free(bytes);
  cr_assert_eq(restart(), 1);
  assert_stderr_has("is a variable-length string: refused unread");
  assert_stderr_has(sp("cp/checkpoint.hdf5"));
}

/* Initial conditions need neither /Parameters nor /RunState: a damaged
 * global heap (the variable-length strings of older files) crashed
 * libhdf5 inside run --ic; it is not read now. */
Test(snapshot_cli, initial_conditions_skip_a_damaged_global_heap) {
  small_run("a");
  snapshot want = read_snap(sp("a/checkpoint.hdf5"));
  const hid_t file = h5_open(sp("a/checkpoint.hdf5"));
  h5_strings_to_variable_length(file, "Parameters");
  h5_strings_to_variable_length(file, "RunState");
  h5_close(file);
  size_t len;
  unsigned char *bytes = read_bytes(sp("a/checkpoint.hdf5"), &len);
  const long heap = find_bytes(bytes, len, "GCOL", 4);
  cr_assert_geq(heap, 0, "no global heap");
  memset(bytes + heap + 24, 0x7f, 8); /* the first object's size: huge */
  write_bytes(sp("ic.hdf5"), bytes, len);
  free(bytes);
  expect_initial_conditions(sp("ic.hdf5"), &want);
  snapshot_free(&want);
}

/* One changed bit in the bodies: the checksum catches it, through the
 * tool too, in one line of its own and none of HDF5's. */
Test(snapshot_cli, damaged_bodies_are_refused) {
  small_run("a");
  snapshot s = read_snap(sp("a/snapshot_0000.hdf5"));
  size_t len;
  unsigned char *bytes = read_bytes(sp("a/snapshot_0000.hdf5"), &len);
  const long at = find_bytes(bytes, len, s.vel + 3 * 5, 3 * sizeof(double));
  cr_assert_geq(at, 0);
  bytes[at + 9] ^= 0x01;
  write_bytes(sp("bad.hdf5"), bytes, len);
  free(bytes);
  cr_assert_eq(
      RUN("run", "--ic", sp("bad.hdf5"), "--steps", "0", "--out", sp("o")), 1);
  expect_message("PartType1/Velocities: checksum mismatch", sp("bad.hdf5"));
  snapshot_free(&s);
}

/* A snapshot after a user block of text is HDF5, not a body file. */
Test(snapshot_cli, initial_conditions_after_a_user_block) {
  small_run("a");
  snapshot want = read_snap(sp("a/snapshot_0000.hdf5"));
  h5_copy_with_user_block(sp("a/snapshot_0000.hdf5"), sp("ub.hdf5"), 1024);
  expect_initial_conditions(sp("ub.hdf5"), &want);
  snapshot_free(&want);
}
