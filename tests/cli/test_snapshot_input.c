/* HDF5 snapshots as the bodies of forces, validate and tune (--in), and
 * as what 'tilefmm ic' writes: the same bodies as the text they stand
 * for; Masses as one column; particle types chosen with --types, never
 * merged unasked (issue 15). The tool runs as a child; the files are made
 * and read back with apps/snapshot*.c. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(snapshot_input, .init = scratch_make, .fini = scratch_remove);

static void forces(const char *in, const char *out, const char *types) {
  const int code =
      types != NULL
          ? RUN("forces", "--in", sp(in), "--out", sp(out), "--method",
                "direct", "--device", "cpu", "--types", types)
          : RUN("forces", "--in", sp(in), "--out", sp(out), "--method",
                "direct", "--device", "cpu");
  char *said = read_text("stderr.txt");
  cr_assert_eq(code, 0, "forces --in %s failed:\n%s", in, said);
  free(said);
}

static size_t rows(const char *name) {
  table *t = read_table(name, 4);
  const size_t r = t->rows;
  free(t);
  return r;
}

/* The same Plummer bodies as text (b.txt) and as HDF5 named without an
 * extension (b.dat): forces must write the same bytes from both, and
 * validate and tune must read the snapshot. */
Test(snapshot_input, hdf5_reads_as_the_same_bodies_as_text) {
  cr_assert_eq(RUN("ic", "plummer", "--n", "64", "--out", sp("b.txt")), 0);
  cr_assert_eq(RUN("ic", "plummer", "--n", "64", "--format", "hdf5", "--out",
                   sp("b.dat")),
               0);
  cr_assert_eq(snapshot_is_hdf5(sp("b.dat")), 1);
  forces("b.txt", "want.txt", NULL);
  forces("b.dat", "got.txt", NULL);
  assert_same_text("got.txt", "want.txt");
  cr_assert_eq(RUN("validate", "--in", sp("b.dat"), "--device", "cpu"), 0);
  assert_stdout_has("64");
  cr_assert_eq(RUN("tune", "--in", sp("b.dat"), "--leaf-min", "32",
                   "--leaf-max", "64", "--repeat", "1", "--device", "cpu",
                   "--csv", sp("t.csv"), "--png", sp("t.png")),
               0);
  cr_assert(exists("t.csv"));
}

/* ic --out FILE.h5 writes the bodies of the text file, IDs 1..n at time
 * 0, which run --ic reads back bit for bit. */
Test(snapshot_input, ic_writes_hdf5_that_run_reads) {
  cr_assert_eq(
      RUN("ic", "hernquist", "--n", "40", "--seed", "3", "--out", sp("ic.txt")),
      0);
  cr_assert_eq(
      RUN("ic", "hernquist", "--n", "40", "--seed", "3", "--out", sp("ic.h5")),
      0);
  snapshot s;
  cr_assert_eq(snapshot_read(sp("ic.h5"), &s), 1, "%s", errors());
  cr_assert_eq(s.n, 40);
  cr_assert_eq(s.time, 0);
  table *t = read_table("ic.txt", 7);
  cr_assert_eq(t->rows, 40);
  for (size_t i = 0; i < s.n; i++) {
    cr_assert_eq(s.ids[i], i + 1);
    cr_assert_eq(s.mass[i], t->v[i][3]);
    for (int d = 0; d < 3; d++) {
      cr_assert_eq(s.pos[3 * i + d], t->v[i][d], "body %zu", i);
      cr_assert_eq(s.vel[3 * i + d], t->v[i][4 + d], "body %zu", i);
    }
  }
  free(t);
  cr_assert_str_eq(
      snapshot_attr_find(s.params, s.nparams, "InitialConditions:model"),
      "hernquist");
  snapshot_free(&s);
  const int code =
      RUN("run", "--ic", sp("ic.h5"), "--method", "direct", "--steps", "0",
          "--threads", "1", "--progress", "off", "--out", sp("o"));
  char *said = read_text("stderr.txt");
  cr_assert_eq(code, 0, "run --ic ic.h5 failed:\n%s", said);
  free(said);
  snapshot a, b;
  cr_assert_eq(snapshot_read(sp("ic.h5"), &a), 1, "%s", errors());
  cr_assert_eq(snapshot_read(sp("o/snapshot_0000.hdf5"), &b), 1, "%s",
               errors());
  cr_assert_eq(a.n, b.n);
  /* The snapshot stores the coordinates shifted into its box: they come
   * back to an ulp of it. */
  double extent = 0;
  for (size_t i = 0; i < 3 * a.n; i++)
    extent = fmax(extent, fabs(a.pos[i]));
  for (size_t i = 0; i < 3 * a.n; i++)
    cr_assert(fabs(a.pos[i] - b.pos[i]) <= 0x1p-50 * extent, "pos %zu", i);
  cr_assert(memcmp(a.vel, b.vel, 3 * a.n * sizeof(double)) == 0);
  cr_assert(memcmp(a.mass, b.mass, a.n * sizeof(double)) == 0);
  snapshot_free(&a);
  snapshot_free(&b);
}

Test(snapshot_input, ic_format_choices) {
  cr_assert_eq(RUN("ic", "plummer", "--n", "5", "--out", sp("a.txt")), 0);
  char *text = read_text("a.txt");
  cr_assert_eq(text[0], '#', "text stays the default for other names");
  free(text);
  cr_assert_eq(RUN("ic", "plummer", "--n", "5", "--format", "text", "--out",
                   sp("a.hdf5")),
               0);
  cr_assert_eq(snapshot_is_hdf5(sp("a.hdf5")), 0, "--format text wins");
  cr_assert_eq(RUN("ic", "plummer", "--n", "5", "--format", "hdf5"), 2);
  assert_stderr_has("--out FILE");
  cr_assert_eq(RUN("ic", "plummer", "--n", "5", "--format", "xml"), 2);
  assert_stderr_has("text or hdf5");
}

Test(snapshot_input, ic_hdf5_opens_in_h5py) {
  if (system("python3 -c 'import h5py' 2>/dev/null") != 0)
    cr_skip_test("python3 with h5py is not installed");
  cr_assert_eq(RUN("ic", "plummer", "--n", "7", "--out", sp("p.hdf5")), 0);
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "python3 -c \"import h5py, numpy as np; "
           "f = h5py.File('%s', 'r'); p = f['PartType1']; "
           "assert p['Coordinates'].shape == (7, 3); "
           "assert abs(np.sum(p['Masses'][:]) - 1) < 1e-12; "
           "assert list(f['Header'].attrs['NumPart_ThisFile']) == "
           "[0, 7, 0, 0, 0, 0]\"",
           sp("p.hdf5"));
  cr_assert_eq(system(cmd), 0, "h5py check failed");
}

/* Masses of shape (n, 1), as numpy users often write them, read as
 * (n); (n, 2) is refused naming the dataset and its shape. */
Test(snapshot_input, masses_as_one_column) {
  cr_assert_eq(RUN("ic", "plummer", "--n", "20", "--out", sp("a.h5")), 0);
  forces("a.h5", "want.txt", NULL);
  snapshot s;
  cr_assert_eq(snapshot_read(sp("a.h5"), &s), 1, "%s", errors());
  hid_t file = h5_open(sp("a.h5"));
  const size_t column[2] = {20, 1};
  h5_dataset(file, "PartType1/Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2,
             column, s.mass);
  h5_close(file);
  forces("a.h5", "got.txt", NULL);
  assert_same_text("got.txt", "want.txt");

  double two[40];
  for (int i = 0; i < 40; i++)
    two[i] = 0.05;
  file = h5_open(sp("a.h5"));
  const size_t pairs[2] = {20, 2};
  h5_dataset(file, "PartType1/Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2,
             pairs, two);
  h5_close(file);
  const char *args[] = {"forces",      "--in",     sp("a.h5"), "--out",
                        sp("out.txt"), "--method", "direct",   NULL};
  expect_failure(args, 1, "PartType1/Masses has shape (20, 2)", "needs (20)");
  snapshot_free(&s);
}

/* A GADGET-style file of 3 gas bodies (PartType0) and 2 of dark matter
 * (PartType1) at path, and the same 5 bodies in type order as text at
 * text (NULL: none). Gas alone when dm is 0; type 4 alone when stars. */
static void typed_file(const char *path, const char *text, int gas, int dm,
                       int stars) {
  const hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(file, 0);
  unsigned count[6] = {0};
  count[0] = (unsigned)gas;
  count[1] = (unsigned)dm;
  count[4] = (unsigned)stars;
  const double mass_table[6] = {0}, time = 0;
  const hid_t u32 = H5T_NATIVE_UINT, d = H5T_NATIVE_DOUBLE;
  const hid_t header =
      H5Gcreate2(file, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  h5_attr(header, "NumPart_ThisFile", u32, u32, 6, count);
  h5_attr(header, "NumPart_Total", u32, u32, 6, count);
  h5_attr(header, "MassTable", d, d, 6, mass_table);
  h5_attr(header, "Time", d, d, 0, &time);
  H5Gclose(header);
  FILE *fp = text != NULL ? fopen(text, "w") : NULL;
  for (int k = 0; k < 6; k++) {
    if (count[k] == 0)
      continue;
    double pos[3 * 8], mass[8];
    for (unsigned i = 0; i < count[k]; i++) {
      pos[3 * i] = 0.3 * i - 0.1 * k;
      pos[3 * i + 1] = 0.25 * k - 0.2;
      pos[3 * i + 2] = 0.05 * i + 0.01 * k;
      mass[i] = 0.5 / (k + 1);
      if (fp != NULL)
        fprintf(fp, "%.17g %.17g %.17g %.17g\n", pos[3 * i], pos[3 * i + 1],
                pos[3 * i + 2], mass[i]);
    }
    char name[16];
    snprintf(name, sizeof name, "PartType%d", k);
    const hid_t g =
        H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const size_t rows3[2] = {count[k], 3}, rows1[1] = {count[k]};
    h5_dataset(g, "Coordinates", d, d, 2, rows3, pos);
    h5_dataset(g, "Masses", d, d, 1, rows1, mass);
    H5Gclose(g);
  }
  if (fp != NULL)
    fclose(fp);
  h5_close(file);
}

Test(snapshot_input, several_types_are_refused_unless_chosen) {
  typed_file(sp("gd.h5"), sp("gd.txt"), 3, 2, 0);
  const char *args[] = {"forces",      "--in",     sp("gd.h5"), "--out",
                        sp("out.txt"), "--method", "direct",    NULL};
  expect_failure(args, 1,
                 "gd.h5: holds PartType0 (gas): 3, PartType1 (dark matter): 2",
                 "--types");
  forces("gd.h5", "all.txt", "0,1");
  assert_stderr_has("read PartType0 (gas): 3, PartType1 (dark matter): 2 as "
                    "gravitating bodies, in type order");
  forces("gd.txt", "want.txt", NULL);
  assert_same_text("all.txt", "want.txt");
  forces("gd.h5", "every.txt", "all");
  assert_same_text("every.txt", "want.txt");
  forces("gd.h5", "dm.txt", "1");
  cr_assert_eq(rows("dm.txt"), 2);
  assert_stderr_has("read PartType1 (dark matter): 2 as gravitating bodies\n");

  unlink(sp("out.txt")); /* expect_failure leaves PRECIOUS there */
  const char *absent[] = {"forces",      "--in",     sp("gd.h5"), "--out",
                          sp("out.txt"), "--method", "direct",    "--types",
                          "1,4",         NULL};
  expect_failure(absent, 1, "--types names PartType4, which the file does not",
                 "PartType0 (gas): 3");
  cr_assert_eq(RUN("forces", "--in", sp("gd.h5"), "--types", "1,x"), 2);
  assert_stderr_has("0,1,4");
  cr_assert_eq(RUN("forces", "--in", sp("gd.txt"), "--types", "1"), 1);
  assert_stderr_has("a text body file has no particle types");
  cr_assert_eq(RUN("validate", "--in", sp("gd.h5"), "--device", "cpu"), 1);
  assert_stderr_has("--types");
  cr_assert_eq(
      RUN("validate", "--in", sp("gd.h5"), "--device", "cpu", "--types", "0,1"),
      0);
  cr_assert_eq(RUN("tune", "--in", sp("gd.h5"), "--device", "cpu"), 1);
  assert_stderr_has("--types");
  cr_assert_eq(RUN("render", sp("gd.h5"), "--out", sp("gd.png")), 1);
  assert_stderr_has("--types");
  cr_assert(!exists("gd.png"));
  cr_assert_eq(
      RUN("render", sp("gd.h5"), "--out", sp("gd.png"), "--types", "all"), 0);
  cr_assert(exists("gd.png"));
  /* run reads one type, not gas, unless --types (InitialConditions:
   * types) chooses: it says so, and a restart keeps the choice. */
  cr_assert_eq(RUN("run", "--ic", sp("gd.h5"), "--steps", "0", "--progress",
                   "off", "--out", sp("o")),
               1);
  assert_stderr_has("PartType0 (gas): 3");
  assert_stderr_has("choose the types to read with --types");
  cr_assert(!exists("o"));
  cr_assert_eq(RUN("run", "--ic", sp("gd.h5"), "--types", "0,1", "--steps", "1",
                   "--method", "direct", "--progress", "off", "--out", sp("o")),
               0);
  assert_stderr_has("read PartType0 (gas): 3, PartType1 (dark matter): 2");
  char *used = read_text("o/used_parameters.yml");
  cr_assert_not_null(used);
  cr_expect(strstr(used, "types: 0,1") != NULL, "%s", used);
  free(used);
  cr_assert_eq(RUN("run", "--ic", sp("gd.txt"), "--types", "1", "--steps", "0",
                   "--progress", "off", "--out", sp("t")),
               1);
  assert_stderr_has("a text body file, which has no particle types");
  cr_assert_eq(RUN("run", "--ic", sp("gd.h5"), "--types", "1", "--steps", "0",
                   "--method", "direct", "--progress", "off", "--out", sp("d")),
               0);
  assert_stderr_has("read PartType1 (dark matter): 2 as gravitating bodies");
}

/* Gas alone is refused too (tilefmm computes gravity alone); one type
 * other than gas reads unasked, with no note. */
Test(snapshot_input, gas_alone_is_refused_one_other_type_reads) {
  typed_file(sp("gas.h5"), NULL, 4, 0, 0);
  cr_assert_eq(RUN("forces", "--in", sp("gas.h5"), "--method", "direct"), 1);
  assert_stderr_has("holds PartType0 (gas): 4;");
  forces("gas.h5", "gas.txt", "0");
  cr_assert_eq(rows("gas.txt"), 4);
  typed_file(sp("stars.h5"), NULL, 0, 0, 5);
  forces("stars.h5", "stars.txt", NULL);
  cr_assert_eq(rows("stars.txt"), 5);
  char *said = read_text("stderr.txt");
  cr_assert_null(strstr(said, "gravitating"), "no note without --types");
  free(said);
}
