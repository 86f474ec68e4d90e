/* Snapshots refused, each with a message naming the file and the cause,
 * and writes that fail (a full disk, emulated with RLIMIT_FSIZE) leaving
 * an existing destination byte-identical and no temporary behind. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(snapshot_bad, .init = scratch_make, .fini = scratch_remove);

enum { N = 5 };

/* A good snapshot of N bodies at snap.h5, opened for one change. */
static hid_t good_file(snapshot *s) {
  *s = random_snapshot(N, 21, 1);
  cr_assert_eq(snapshot_write(sp("snap.h5"), s), 1, "%s", errors());
  return h5_open(sp("snap.h5"));
}

/* Applies no change, or the caller's, then expects the read to fail. */
#define EXPECT_BROKEN(change, needle, needle2)                                 \
  do {                                                                         \
    snapshot s_;                                                               \
    const hid_t file = good_file(&s_);                                         \
    change;                                                                    \
    h5_close(file);                                                            \
    expect_read_failure(sp("snap.h5"), needle, needle2);                       \
    snapshot_free(&s_);                                                        \
  } while (0)

Test(snapshot_bad, missing_file) {
  expect_read_failure(sp("missing.h5"), "No such file", NULL);
}

Test(snapshot_bad, a_directory) {
  expect_read_failure(sp(""), "Is a directory", NULL);
}

Test(snapshot_bad, not_hdf5) {
  write_text("text.h5", "0 0 0 1\n");
  expect_read_failure(sp("text.h5"), "not an HDF5 file", NULL);
}

Test(snapshot_bad, truncated_hdf5) {
  snapshot s = random_snapshot(N, 22, 0);
  cr_assert_eq(snapshot_write(sp("snap.h5"), &s), 1, "%s", errors());
  cr_assert_eq(truncate(sp("snap.h5"), 200), 0);
  expect_read_failure(sp("snap.h5"), "truncated or damaged", NULL);
  snapshot_free(&s);
}

Test(snapshot_bad, missing_header) {
  EXPECT_BROKEN(cr_assert_geq(H5Ldelete(file, "Header", H5P_DEFAULT), 0),
                "no /Header", NULL);
}

Test(snapshot_bad, missing_header_attributes) {
  EXPECT_BROKEN(
      cr_assert_geq(
          H5Adelete_by_name(file, "Header", "NumPart_ThisFile", H5P_DEFAULT),
          0),
      "/Header has no attribute NumPart_ThisFile", NULL);
  EXPECT_BROKEN(
      cr_assert_geq(H5Adelete_by_name(file, "Header", "Time", H5P_DEFAULT), 0),
      "/Header has no attribute Time", NULL);
}

Test(snapshot_bad, header_arrays_of_another_length) {
  const double five[5] = {0};
  const hid_t d = H5T_NATIVE_DOUBLE;
  EXPECT_BROKEN(h5_set_attr(file, "Header", "MassTable", d, d, 5, five),
                "MassTable has 5 values, expected 6", NULL);
}

Test(snapshot_bad, negative_count) {
  const int count[6] = {0, -5, 0, 0, 0, 0};
  const hid_t i = H5T_NATIVE_INT;
  EXPECT_BROKEN(h5_set_attr(file, "Header", "NumPart_ThisFile", i, i, 6, count),
                "NumPart_ThisFile[1] = -5 is negative", NULL);
}

Test(snapshot_bad, no_particles) {
  const unsigned zeros[6] = {0};
  const hid_t u = H5T_NATIVE_UINT;
  EXPECT_BROKEN(
      (h5_set_attr(file, "Header", "NumPart_ThisFile", u, u, 6, zeros),
       h5_set_attr(file, "Header", "NumPart_Total", u, u, 6, zeros)),
      "holds no particles", NULL);
}

Test(snapshot_bad, missing_group_and_datasets) {
  EXPECT_BROKEN(cr_assert_geq(H5Ldelete(file, "PartType1", H5P_DEFAULT), 0),
                "no group /PartType1, but NumPart_ThisFile[1] = 5", NULL);
  EXPECT_BROKEN(
      cr_assert_geq(H5Ldelete(file, "PartType1/Coordinates", H5P_DEFAULT), 0),
      "PartType1 has no dataset Coordinates", NULL);
  EXPECT_BROKEN(
      cr_assert_geq(H5Ldelete(file, "PartType1/Masses", H5P_DEFAULT), 0),
      "PartType1 has no dataset Masses, and MassTable[1] is not > 0", NULL);
}

Test(snapshot_bad, shapes_that_disagree_with_the_header) {
  const double x[3 * N] = {0};
  const size_t short_vec[1] = {N - 1}, two_cols[2] = {N, 2};
  const hid_t d = H5T_NATIVE_DOUBLE;
  EXPECT_BROKEN(h5_dataset(file, "PartType1/Masses", d, d, 1, short_vec, x),
                "PartType1/Masses has shape (4), but NumPart_ThisFile[1] = 5 "
                "needs (5)",
                NULL);
  EXPECT_BROKEN(h5_dataset(file, "PartType1/Velocities", d, d, 2, two_cols, x),
                "PartType1/Velocities has shape (5, 2)", "needs (5, 3)");
  EXPECT_BROKEN(
      h5_dataset(file, "PartType1/Coordinates", d, d, 1, short_vec, x),
      "PartType1/Coordinates has shape (4)", "needs (5, 3)");
}

Test(snapshot_bad, ids_that_are_not_integers) {
  const double x[N] = {1, 2, 3, 4, 5};
  const size_t dims[1] = {N};
  const hid_t d = H5T_NATIVE_DOUBLE;
  EXPECT_BROKEN(h5_dataset(file, "PartType1/ParticleIDs", d, d, 1, dims, x),
                "PartType1/ParticleIDs does not hold integers", NULL);
}

Test(snapshot_bad, multi_file_snapshots) {
  const int files = 4;
  const unsigned more[6] = {0, 10, 0, 0, 0, 0}, high[6] = {0, 1, 0, 0, 0, 0};
  const hid_t u = H5T_NATIVE_UINT, i = H5T_NATIVE_INT;
  EXPECT_BROKEN(
      h5_set_attr(file, "Header", "NumFilesPerSnapshot", i, i, 0, &files),
      "multi-file snapshot (NumFilesPerSnapshot = 4)", NULL);
  EXPECT_BROKEN(h5_set_attr(file, "Header", "NumPart_Total", u, u, 6, more),
                "NumPart_Total[1] = 10", "multi-file");
  /* The high word counts: 5 + 2^32 bodies in all. */
  EXPECT_BROKEN(
      h5_set_attr(file, "Header", "NumPart_Total_HighWord", u, u, 6, high),
      "NumPart_Total[1] = 4294967301", "multi-file");
}

static void expect_bad_body(const char *dataset, size_t index, double value,
                            const char *what) {
  snapshot s;
  const hid_t file = good_file(&s);
  char name[64], body[128];
  snprintf(name, sizeof name, "PartType1/%s", dataset);
  h5_poke(file, name, index, value);
  h5_close(file);
  snprintf(body, sizeof body, "body %zu (ParticleID %llu) has %s", index,
           (unsigned long long)s.ids[index], what);
  expect_read_failure(sp("snap.h5"), body, NULL);
  snapshot_free(&s);
}

Test(snapshot_bad, non_finite_values) {
  expect_bad_body("Coordinates", 3, NAN, "a non-finite coordinate");
  expect_bad_body("Coordinates", 0, -INFINITY, "a non-finite coordinate");
  expect_bad_body("Velocities", 4, INFINITY, "a non-finite velocity");
  expect_bad_body("Masses", 2, NAN, "a non-finite mass");
}

Test(snapshot_bad, masses_not_positive) {
  expect_bad_body("Masses", 1, 0.0, "a mass <= 0");
  expect_bad_body("Masses", 4, -1.0, "a mass <= 0");
}

/* Variable-length strings are refused unread (their text is in the
 * global heap, which has no checksum: issue 29); a fixed-length pair is
 * no single value. */
Test(snapshot_bad, parameters_that_are_not_text) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  const char *two[2] = {"a", "b"};
  EXPECT_BROKEN(h5_set_attr(file, "Parameters", "Pair", type, type, 2, two),
                "/Parameters attribute 'Pair' is a variable-length string: "
                "refused unread",
                NULL);
  H5Tclose(type);
  const hid_t fixed = H5Tcopy(H5T_C_S1);
  H5Tset_size(fixed, 2);
  EXPECT_BROKEN(h5_set_attr(file, "RunState", "Pair", fixed, fixed, 2, "abcd"),
                "/RunState attribute 'Pair' is not one string", NULL);
  const unsigned char bits = 5;
  EXPECT_BROKEN(h5_set_attr(file, "Parameters", "Bits", H5T_STD_B8LE,
                            H5T_NATIVE_B8, 1, &bits),
                "/Parameters attribute 'Bits' is neither one string nor "
                "numbers",
                NULL);
  H5Tclose(fixed);
}

/* The write of s to out.h5 must fail naming needle, leaving an existing
 * out.h5 byte-identical and no temporary. */
static void expect_write_failure(const snapshot *s, const char *needle) {
  write_text("out.h5", PRECIOUS);
  errors_clear();
  cr_assert_eq(snapshot_write(sp("out.h5"), s), 0, "write did not fail");
  assert_errors_have(needle, sp("out.h5"));
  char *kept = read_text("out.h5");
  cr_assert_str_eq(kept, PRECIOUS, "out.h5 was changed");
  free(kept);
  assert_no_temporaries();
}

Test(snapshot_bad, writer_refuses_what_the_reader_would) {
  snapshot s = random_snapshot(N, 23, 1);
  const double mass = s.mass[2];
  s.mass[2] = NAN;
  char body[128];
  snprintf(body, sizeof body, "body 2 (ParticleID %llu) has a non-finite mass",
           (unsigned long long)s.ids[2]);
  expect_write_failure(&s, body);
  s.mass[2] = -mass;
  expect_write_failure(&s, "has a mass <= 0");
  s.mass[2] = mass;
  s.pos[7] = INFINITY;
  expect_write_failure(&s, "body 2");
  s.pos[7] = 0;

  double *vel = s.vel;
  s.vel = NULL;
  expect_write_failure(&s, "are required");
  s.vel = vel;
  s.n = 0;
  expect_write_failure(&s, "cannot write 0 bodies");
  s.n = N;

  char *name = s.params[1].name;
  s.params[1].name = s.params[0].name;
  expect_write_failure(&s, "/Parameters holds 'Gravity:key12' twice");
  s.params[1].name = "";
  expect_write_failure(&s, "/Parameters entry 1 has no name");
  s.params[1].name = name;
  snapshot_free(&s);
}

Test(snapshot_bad, destinations_that_cannot_be_written) {
  snapshot s = random_snapshot(N, 24, 0);
  cr_assert_eq(snapshot_write(sp(""), &s), 0);
  assert_errors_have("Is a directory", NULL);
  errors_clear();
  cr_assert_eq(snapshot_write(sp("no/such/dir.h5"), &s), 0);
  assert_errors_have("cannot create a temporary file", "No such file");
  snapshot_free(&s);
}

/* Writes s to out.h5 in a child whose files may not grow past limit bytes
 * (a full disk, as far as the writer can tell; SIGXFSZ ignored so that
 * write fails with EFBIG). Returns the write's result; the messages are
 * copied into msg. */
static int write_limited(const snapshot *s, rlim_t limit, char *msg,
                         size_t size) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  const pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    const struct rlimit rl = {limit, limit};
    signal(SIGXFSZ, SIG_IGN);
    int ok = setrlimit(RLIMIT_FSIZE, &rl) == 0;
    errors_clear();
    ok = ok && snapshot_write(sp("out.h5"), s);
    const ssize_t wrote = write(fds[1], errors(), strlen(errors()));
    /* exit, not _exit: HDF5 cleans up at exit, and must not crash. */
    exit(wrote < 0 ? 3 : ok ? 0 : 1);
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < size && (r = read(fds[0], msg + got, size - 1 - got)) > 0)
    got += (size_t)r;
  msg[got] = '\0';
  close(fds[0]);
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) <= 1,
            "the writing child crashed or failed: status %d", status);
  return WEXITSTATUS(status) == 0;
}

Test(snapshot_bad, full_disk_leaves_the_destination_untouched) {
  snapshot s = random_snapshot(200000, 25, 1);
  cr_assert_eq(snapshot_write(sp("whole.h5"), &s), 1, "%s", errors());
  struct stat st;
  cr_assert_eq(stat(sp("whole.h5"), &st), 0);
  const rlim_t size = (rlim_t)st.st_size;
  cr_assert_eq(remove(sp("whole.h5")), 0);
  /* Failing in the first bytes, amid the data, and in the last bytes,
   * where HDF5 writes its metadata on flush and close. */
  const rlim_t limits[] = {100, 1 << 20, size / 2, size - 1000, size - 1};
  for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
    write_text("out.h5", PRECIOUS);
    char msg[4096];
    cr_assert_eq(write_limited(&s, limits[k], msg, sizeof msg), 0,
                 "a write limited to %llu of %llu bytes succeeded",
                 (unsigned long long)limits[k], (unsigned long long)size);
    cr_assert_not_null(strstr(msg, sp("out.h5")), "message: %s", msg);
    cr_assert_not_null(strstr(msg, "File too large"), "message: %s", msg);
    char *kept = read_text("out.h5");
    cr_assert_str_eq(kept, PRECIOUS, "out.h5 changed (limit %llu)",
                     (unsigned long long)limits[k]);
    free(kept);
    assert_no_temporaries();
  }
  /* A little more lets the same write through (HDF5 makes the file
   * somewhat longer than its final size while flushing). */
  char msg[4096];
  cr_assert_eq(write_limited(&s, size + (1 << 16), msg, sizeof msg), 1, "%s",
               msg);
  snapshot back;
  cr_assert_eq(snapshot_read(sp("out.h5"), &back), 1, "%s", errors());
  assert_same_snapshot(&s, &back);
  snapshot_free(&back);
  snapshot_free(&s);
}

Test(snapshot_bad, unwritable_directory) {
  if (geteuid() == 0)
    cr_skip_test("running as root, which may write anywhere: the full-disk "
                 "test covers failed writes");
  snapshot s = random_snapshot(N, 26, 0);
  write_text("out.h5", PRECIOUS);
  cr_assert_eq(chmod(sp(""), 0500), 0);
  errors_clear();
  const int ok = snapshot_write(sp("out.h5"), &s);
  chmod(sp(""), 0700);
  cr_assert_eq(ok, 0);
  assert_errors_have("cannot create a temporary file", "Permission denied");
  char *kept = read_text("out.h5");
  cr_assert_str_eq(kept, PRECIOUS);
  free(kept);
  assert_no_temporaries();
  snapshot_free(&s);
}

/* ---- Damage and values the reader used to let through (issue 11) ------ */

Test(snapshot_bad, non_finite_time) {
  const double times[3] = {NAN, INFINITY, -INFINITY};
  const char *said[3] = {"Time is nan,", "Time is inf,", "Time is -inf,"};
  const hid_t d = H5T_NATIVE_DOUBLE;
  for (int k = 0; k < 3; k++)
    EXPECT_BROKEN(h5_set_attr(file, "Header", "Time", d, d, 0, &times[k]),
                  said[k], "not a finite number");
}

/* HDF5 turns a negative ID into 0 when it converts it to uint64; the
 * reader refuses it, naming the body. */
Test(snapshot_bad, negative_particle_ids) {
  const int64_t ids[N] = {1, 2, 3, -7, 5};
  const size_t dims[1] = {N};
  const hid_t i64 = H5T_NATIVE_INT64;
  EXPECT_BROKEN(h5_dataset(file, "PartType1/ParticleIDs", H5T_STD_I64LE, i64, 1,
                           dims, ids),
                "body 3 has a negative ParticleID (-7)", NULL);
  const int32_t ids32[N] = {-1, 2, 3, 4, 5};
  EXPECT_BROKEN(h5_dataset(file, "PartType1/ParticleIDs", H5T_STD_I32LE,
                           H5T_NATIVE_INT32, 1, dims, ids32),
                "body 0 has a negative ParticleID (-1)", NULL);
}

Test(snapshot_bad, signed_particle_ids_read_as_written) {
  snapshot s, back;
  const hid_t file = good_file(&s);
  const int64_t ids[N] = {0, 9, INT64_MAX, 4, 5};
  const size_t dims[1] = {N};
  h5_dataset(file, "PartType1/ParticleIDs", H5T_STD_I64LE, H5T_NATIVE_INT64, 1,
             dims, ids);
  h5_close(file);
  cr_assert_eq(snapshot_read(sp("snap.h5"), &back), 1, "%s", errors());
  for (int i = 0; i < N; i++)
    cr_assert_eq(back.ids[i], (uint64_t)ids[i], "body %d", i);
  snapshot_free(&back);
  snapshot_free(&s);
}

/* The bytes of snap.h5 with one byte at the first occurrence of needle
 * changed; returns its offset. */
static long damage_at(const void *needle, size_t len, size_t skip) {
  size_t size;
  unsigned char *bytes = read_bytes(sp("snap.h5"), &size);
  const long at = find_bytes(bytes, size, needle, len);
  cr_assert_geq(at, 0, "needle not found in the file");
  bytes[at + (long)skip] ^= 0x10;
  write_bytes(sp("snap.h5"), bytes, size);
  free(bytes);
  return at;
}

/* Each chunk carries a Fletcher-32 checksum: one changed bit of body 2's
 * coordinates is a clear error, not a run from a moved body. */
Test(snapshot_bad, damaged_data_fails_its_checksum) {
  snapshot s;
  h5_close(good_file(&s));
  damage_at(s.pos + 6, 3 * sizeof(double), 5);
  expect_read_failure(sp("snap.h5"),
                      "PartType1/Coordinates: checksum "
                      "mismatch",
                      NULL);
  snapshot_free(&s);
  h5_close(good_file(&s));
  damage_at(s.ids + 4, sizeof s.ids[4], 0);
  expect_read_failure(sp("snap.h5"),
                      "PartType1/ParticleIDs: checksum "
                      "mismatch",
                      NULL);
  snapshot_free(&s);
}

/* The HDF5 1.8 format checksums metadata too: a changed letter in the
 * name of a Header attribute is caught. */
Test(snapshot_bad, damaged_metadata_fails_its_checksum) {
  snapshot s;
  h5_close(good_file(&s));
  damage_at("NumPart_ThisFile", 16, 3);
  expect_read_failure(sp("snap.h5"), "checksum mismatch", NULL);
  snapshot_free(&s);
}

/* A damaged global heap (where variable-length strings live, as tilefmm
 * wrote /Parameters before) crashes libhdf5's reader: reading the bodies
 * alone never touches it. */
Test(snapshot_bad, bodies_read_without_the_parameters) {
  snapshot s, back;
  const hid_t file = good_file(&s);
  h5_strings_to_variable_length(file, "Parameters");
  h5_close(file);
  size_t size;
  unsigned char *bytes = read_bytes(sp("snap.h5"), &size);
  const long heap = find_bytes(bytes, size, "GCOL", 4);
  cr_assert_geq(heap, 0, "no global heap: the strings are not variable-length");
  /* The first object's size (after signature, version, reserved, the
   * collection's size, the object's index, count and reserved): huge. */
  memset(bytes + heap + 24, 0x7f, 8);
  write_bytes(sp("snap.h5"), bytes, size);
  free(bytes);
  cr_assert_eq(snapshot_read_bodies(sp("snap.h5"), &back), 1, "%s", errors());
  cr_assert_eq(back.nparams, 0);
  cr_assert_eq(back.nstate, 0);
  snapshot bodies = s; /* all but the strings */
  bodies.params = bodies.state = NULL;
  bodies.nparams = bodies.nstate = 0;
  assert_same_snapshot(&bodies, &back);
  snapshot_free(&back);
  snapshot_free(&s);
}
