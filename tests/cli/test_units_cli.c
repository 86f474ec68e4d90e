/* Physical units in tilefmm run (docs/units.md): the unit system of the
 * parameters and G derived from it, the units of initial conditions
 * (converted, adopted or noted), what a snapshot says of its units, and
 * the snapshots' field, precision and compression choices against the
 * checkpoints' full, exact datasets. Small runs (200 bodies). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(units, .init = scratch_make, .fini = scratch_remove);

#define SMALL                                                                  \
  "--n", "200", "--steps", "1", "--progress", "off", "--threads", "1"
/* kpc, 1e10 Msun, km/s */
#define KPC 3.0856775814913673e21
#define MSUN10 1.98841e43
#define KMS 1e5
#define GALACTIC                                                               \
  "-P", "InternalUnitSystem:UnitMass_in_cgs:1.98841e43", "-P",                 \
      "InternalUnitSystem:UnitLength_in_cgs:3.0856775814913673e21", "-P",      \
      "InternalUnitSystem:UnitVelocity_in_cgs:1e5"

/* The first number of attribute name (BoxSize and Shift hold 3: read
 * whole, into room for all of them). */
static double file_double(const char *path, const char *group,
                          const char *name) {
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert_geq(file, 0, "%s", path);
  const hid_t g = H5Oopen(file, group, H5P_DEFAULT);
  cr_assert_geq(g, 0, "%s: no %s", path, group);
  double v[16] = {NAN};
  const hid_t a = H5Aopen(g, name, H5P_DEFAULT);
  cr_assert_geq(a, 0, "%s: %s has no %s", path, group, name);
  const hid_t space = H5Aget_space(a);
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  H5Sclose(space);
  cr_assert(count >= 1 && count <= 16, "%s: %s %s holds %lld numbers", path,
            group, name, (long long)count);
  H5Aread(a, H5T_NATIVE_DOUBLE, v);
  H5Aclose(a);
  H5Oclose(g);
  H5Fclose(file);
  return v[0];
}

static char *stderr_text(void) { return read_text("stderr.txt"); }

Test(units, G_derives_from_the_unit_system) {
  cr_assert_eq(RUN("run", GALACTIC, "--out", sp("a"), SMALL), 0, "%s",
               stderr_text());
  const double G = galactic_G();
  char want[64];
  snprintf(want, sizeof want, "  G: %.17g\n", G);
  char *used = read_text("a/used_parameters.yml");
  cr_expect(strstr(used, want) != NULL, "lacks '%s':\n%s", want, used);
  cr_expect(strstr(used, "InternalUnitSystem:\n  UnitMass_in_cgs: "
                         "1.98841e+43\n") != NULL,
            "%s", used);
  free(used);
  assert_stderr_has("tilefmm run: units: mass 1.98841e+43 g, length "
                    "3.08568e+21 cm, velocity 100000 cm/s, time 3.08568e+16 "
                    "s; G = 43009.1755 (from the units)");
  const char *snap = sp("a/snapshot_0000.hdf5");
  cr_expect_eq(file_double(snap, "PhysicalConstants/InternalUnits", "newton_G"),
               G);
  cr_expect_eq(file_double(snap, "Units", "Unit mass in cgs (U_M)"), MSUN10);
  cr_expect_eq(file_double(snap, "Units", "Unit length in cgs (U_L)"), KPC);
  cr_expect_eq(file_double(snap, "InternalCodeUnits", "Unit time in cgs (U_t)"),
               KPC / KMS);
  cr_expect_eq(file_double(snap, "Header", "UnitVelocity_in_cm_per_s"), KMS);
  cr_expect_eq(file_double(snap, "PartType1/Velocities",
                           "Conversion factor to CGS (not including "
                           "cosmological corrections)"),
               KMS);
  /* Read back: the units and the source. */
  snapshot s;
  cr_assert_eq(snapshot_read(snap, &s), 1, "%s", errors());
  cr_expect_eq(s.units_source, SNAPSHOT_UNITS_SWIFT);
  cr_expect_eq(s.units.mass, MSUN10);
  cr_expect(fabs(s.units.velocity / KMS - 1) < 1e-15);
  snapshot_free(&s);
  /* N-body units by default: G 1, the file says so. */
  cr_assert_eq(RUN("run", "--out", sp("n"), SMALL), 0);
  cr_assert_eq(snapshot_read(sp("n/snapshot_0000.hdf5"), &s), 1, "%s",
               errors());
  cr_expect_eq(s.units_source, SNAPSHOT_UNITS_NBODY);
  cr_expect_eq(s.units.mass, 0);
  snapshot_free(&s);
  cr_expect_eq(file_double(sp("n/snapshot_0000.hdf5"),
                           "PhysicalConstants/InternalUnits", "newton_G"),
               1);
}

Test(units, G_given_and_units) {
  /* GADGET's 43007.1 (G = 6.672e-8) agrees to 1%: kept as given. */
  cr_assert_eq(RUN("run", GALACTIC, "--G", "43007.1", "--out", sp("a"), SMALL),
               0, "%s", stderr_text());
  char *used = read_text("a/used_parameters.yml");
  cr_expect(strstr(used, "  G: 43007.099999999999\n") != NULL, "%s", used);
  free(used);
  /* SWIFT's PhysicalConstants:G too. */
  cr_assert_eq(RUN("run", GALACTIC, "-P", "PhysicalConstants:G:43007.1",
                   "--out", sp("b"), SMALL),
               0, "%s", stderr_text());
  /* G = 1 with kpc units: a contradiction, both named. */
  cr_assert_eq(RUN("run", GALACTIC, "--G", "1", "--out", sp("c"), SMALL), 2);
  assert_stderr_has("Gravity:G (--G) 1 contradicts the unit system");
  assert_stderr_has("in which G = 43009.17");
  cr_expect(!exists("c/snapshot_0000.hdf5"));
}

Test(units, incomplete_unit_systems_are_refused) {
  cr_assert_eq(RUN("run", "-P", "InternalUnitSystem:UnitMass_in_cgs:1e43",
                   "--out", sp("a"), SMALL),
               2);
  assert_stderr_has("missing --unit-length, --unit-velocity");
  cr_assert_eq(RUN("run", "--unit-temp", "1", "--out", sp("b"), SMALL), 2);
  assert_stderr_has("need the mass, length and velocity units too");
  cr_assert_eq(RUN("run", "--unit-mass", "-1", "--out", sp("c"), SMALL), 2);
  assert_stderr_has("--unit-mass");
}

/* Initial conditions of kpc, 1e10 Msun, km/s written with snapshot_write
 * (n bodies, known values), time 2. */
static snapshot write_ic(const char *name, int physical) {
  snapshot s = random_snapshot(50, 3, 0);
  for (size_t i = 0; i < 3 * s.n; i++) {
    s.pos[i] = 0.25 * (double)(i % 17) - 2;
    s.vel[i] = 0.5 * (double)(i % 5) - 1;
  }
  for (size_t i = 0; i < s.n; i++)
    s.mass[i] = 0.125;
  s.time = 2;
  if (physical)
    s.units = (units){MSUN10, KPC, KMS, 1, 1};
  cr_assert_eq(snapshot_write(sp(name), &s), 1, "%s", errors());
  return s;
}

Test(units, initial_conditions_converted_to_the_run_units) {
  snapshot ic = write_ic("ic.h5", 1);
  /* The run in pc, 1e10 Msun, km/s: lengths x 1000, time x 1000. */
  cr_assert_eq(RUN("run", "--ic", sp("ic.h5"), "--unit-mass", "1.98841e43",
                   "--unit-length", "3.0856775814913673e18", "--unit-velocity",
                   "1e5", "--method", "direct", "--steps", "0", "--progress",
                   "off", "--out", sp("o")),
               0, "%s", stderr_text());
  assert_stderr_has("its bodies and time are converted to the run's");
  snapshot got;
  cr_assert_eq(snapshot_read(sp("o/snapshot_0000.hdf5"), &got), 1, "%s",
               errors());
  for (size_t i = 0; i < 3 * ic.n; i++) {
    cr_expect(fabs(got.pos[i] - 1000 * ic.pos[i]) <= 1e-9 * 2000, "pos %zu", i);
    cr_expect_eq(got.vel[i], ic.vel[i]);
  }
  cr_expect(fabs(got.time - 2000) < 1e-9, "time %g", got.time);
  cr_expect(fabs(got.units.length - 3.0856775814913673e18) < 1e3);
  snapshot_free(&got);
  snapshot_free(&ic);
}

Test(units, initial_conditions_units_adopted) {
  snapshot ic = write_ic("ic.h5", 1);
  cr_assert_eq(RUN("run", "--ic", sp("ic.h5"), "--method", "direct", "--steps",
                   "0", "--progress", "off", "--out", sp("o")),
               0, "%s", stderr_text());
  assert_stderr_has("the run takes the units of");
  char want[64];
  snprintf(want, sizeof want, "  G: %.17g\n", galactic_G());
  char *used = read_text("o/used_parameters.yml");
  cr_expect(strstr(used, want) != NULL, "lacks '%s':\n%s", want, used);
  cr_expect(strstr(used, "UnitLength_in_cgs: 3.0856775814913673e+21") != NULL,
            "%s", used);
  free(used);
  /* A G that contradicts them: refused. */
  cr_assert_eq(RUN("run", "--ic", sp("ic.h5"), "--G", "1", "--method", "direct",
                   "--steps", "0", "--progress", "off", "--out", sp("p")),
               1);
  assert_stderr_has("contradicts the unit system");
  snapshot_free(&ic);
}

Test(units, initial_conditions_without_units) {
  snapshot ic = write_ic("ic.h5", 0);
  /* N-body units into a run of kpc: the numbers taken as kpc, said. */
  cr_assert_eq(RUN("run", "--ic", sp("ic.h5"), GALACTIC, "--method", "direct",
                   "--steps", "0", "--progress", "off", "--out", sp("o")),
               0, "%s", stderr_text());
  assert_stderr_has("is in N-body units: its numbers are taken in the run's");
  /* A file with no units at all (an older tilefmm's): a note. */
  const hid_t f = h5_open(sp("ic.h5"));
  cr_assert_geq(H5Ldelete(f, "Units", H5P_DEFAULT), 0);
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  cr_assert_geq(H5Adelete(h, "UnitLength_in_cm"), 0);
  cr_assert_geq(H5Adelete(h, "UnitMass_in_g"), 0);
  cr_assert_geq(H5Adelete(h, "UnitVelocity_in_cm_per_s"), 0);
  H5Gclose(h);
  h5_close(f);
  cr_assert_eq(RUN("run", "--ic", sp("ic.h5"), "--method", "direct", "--steps",
                   "0", "--progress", "off", "--out", sp("p")),
               0, "%s", stderr_text());
  assert_stderr_has("carries no units: its numbers are taken in the run's "
                    "N-body units");
  snapshot s;
  cr_assert_eq(snapshot_read(sp("ic.h5"), &s), 1, "%s", errors());
  cr_expect_eq(s.units_source, SNAPSHOT_UNITS_NONE);
  snapshot_free(&s);
  snapshot_free(&ic);
}

Test(units, gadget4_unit_keys_are_read) {
  snapshot ic = write_ic("ic.h5", 0);
  const hid_t f = h5_open(sp("ic.h5"));
  cr_assert_geq(H5Ldelete(f, "Units", H5P_DEFAULT), 0);
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  H5Adelete(h, "UnitLength_in_cm");
  H5Adelete(h, "UnitMass_in_g");
  H5Adelete(h, "UnitVelocity_in_cm_per_s");
  H5Gclose(h);
  /* GADGET-4 keeps them in /Parameters, as numbers. */
  const double l = KPC, m = MSUN10, v = KMS;
  h5_set_attr(f, "Parameters", "UnitLength_in_cm", H5T_IEEE_F64LE,
              H5T_NATIVE_DOUBLE, 0, &l);
  h5_set_attr(f, "Parameters", "UnitMass_in_g", H5T_IEEE_F64LE,
              H5T_NATIVE_DOUBLE, 0, &m);
  h5_set_attr(f, "Parameters", "UnitVelocity_in_cm_per_s", H5T_IEEE_F64LE,
              H5T_NATIVE_DOUBLE, 0, &v);
  h5_close(f);
  snapshot s;
  cr_assert_eq(snapshot_read_bodies(sp("ic.h5"), &s), 1, "%s", errors());
  cr_expect_eq(s.units_source, SNAPSHOT_UNITS_GADGET4);
  cr_expect_eq(s.units.length, KPC);
  cr_expect_eq(s.units.mass, MSUN10);
  cr_expect_eq(s.units.velocity, KMS);
  snapshot_free(&s);
  snapshot_free(&ic);
}

/* A snapshot is shifted into its box; a checkpoint is not. */
Test(units, snapshots_shifted_into_the_box) {
  /* Step 0 only: the checkpoint (at the end) holds snapshot 0000's
   * state. */
  cr_assert_eq(RUN("run", "--out", sp("a"), "--n", "200", "--steps", "0",
                   "--progress", "off", "--threads", "1"),
               0);
  const char *snap = sp("a/snapshot_0000.hdf5");
  const double box = file_double(snap, "Header", "BoxSize");
  cr_expect_eq(file_double(snap, "Header", "Shift"), box / 2);
  cr_expect_eq(file_double(sp("a/checkpoint.hdf5"), "Header", "Shift"), 0);
  const hid_t file = H5Fopen(snap, H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t set = H5Dopen2(file, "PartType1/Coordinates", H5P_DEFAULT);
  double *raw = malloc(3 * 200 * sizeof *raw);
  H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw);
  H5Dclose(set);
  H5Fclose(file);
  snapshot s, cp;
  cr_assert_eq(snapshot_read(snap, &s), 1, "%s", errors());
  cr_assert_eq(snapshot_read(sp("a/checkpoint.hdf5"), &cp), 1, "%s", errors());
  for (size_t i = 0; i < 3 * s.n; i++) {
    cr_expect(raw[i] > 0 && raw[i] < box, "stored %g outside (0, %g)", raw[i],
              box);
    cr_expect(fabs(s.pos[i] - cp.pos[i]) <= 0x1p-52 * box, "%zu", i);
  }
  free(raw);
  snapshot_free(&s);
  snapshot_free(&cp);
}

static int dataset_info(const char *path, const char *name, size_t *bytes,
                        int *deflate) {
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
    H5Fclose(file);
    return 0;
  }
  const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
  const hid_t type = H5Dget_type(set), dcpl = H5Dget_create_plist(set);
  *bytes = H5Tget_size(type);
  *deflate = 0;
  for (int k = 0; k < H5Pget_nfilters(dcpl); k++) {
    unsigned flags;
    size_t n = 0;
    char nm[32];
    unsigned conf;
    if (H5Pget_filter2(dcpl, (unsigned)k, &flags, &n, NULL, sizeof nm, nm,
                       &conf) == H5Z_FILTER_DEFLATE)
      *deflate = 1;
  }
  H5Pclose(dcpl);
  H5Tclose(type);
  H5Dclose(set);
  H5Fclose(file);
  return 1;
}

Test(units, snapshot_fields_precision_and_compression) {
  cr_assert_eq(RUN("run", "--snapshot-fields", "Velocities",
                   "--snapshot-precision", "single", "--snapshot-compression",
                   "4", "--out", sp("a"), SMALL),
               0, "%s", stderr_text());
  const char *snap = sp("a/snapshot_0000.hdf5"), *cp = sp("a/checkpoint.hdf5");
  size_t bytes;
  int deflate;
  cr_assert(dataset_info(snap, "PartType1/Coordinates", &bytes, &deflate));
  cr_expect_eq(bytes, 4u, "single precision");
  cr_expect(deflate, "gzip");
  cr_assert(dataset_info(snap, "PartType1/Velocities", &bytes, &deflate));
  cr_assert(dataset_info(snap, "PartType1/ParticleIDs", &bytes, &deflate));
  cr_expect_eq(bytes, 8u, "IDs stay 64-bit");
  cr_expect(!dataset_info(snap, "PartType1/Accelerations", &bytes, &deflate));
  cr_expect(!dataset_info(snap, "PartType1/Potentials", &bytes, &deflate));
  /* The checkpoint: everything, double, uncompressed. */
  cr_assert(dataset_info(cp, "PartType1/Coordinates", &bytes, &deflate));
  cr_expect_eq(bytes, 8u);
  cr_expect(!deflate);
  cr_expect(dataset_info(cp, "PartType1/Accelerations", &bytes, &deflate));
  /* The snapshot reads back, to float precision. */
  snapshot s, c;
  cr_assert_eq(snapshot_read(snap, &s), 1, "%s", errors());
  cr_assert_eq(snapshot_read(cp, &c), 1, "%s", errors());
  cr_expect_null(s.acc);
  /* A restart is still bit for bit: the checkpoint is exact. */
  cr_assert_eq(RUN("run", "--restart", cp, "--steps", "2", "--progress", "off",
                   "--threads", "1"),
               0, "%s", stderr_text());
  snapshot_free(&s);
  snapshot_free(&c);
  /* Bad choices name the flag. */
  cr_assert_eq(RUN("run", "--snapshot-fields", "Coordinates,Spin", "--out",
                   sp("b"), SMALL),
               2);
  assert_stderr_has("--snapshot-fields");
  cr_assert_eq(
      RUN("run", "-P", "Snapshots:compression:12", "--out", sp("c"), SMALL), 2);
  assert_stderr_has("Snapshots:compression");
}

/* A restart keeps the units and their G, bit for bit the run straight
 * through; other units on a restart are refused. */
Test(units, restart_keeps_the_units) {
  cr_assert_eq(RUN("run", GALACTIC, "--n", "200", "--steps", "2",
                   "--checkpoint-every", "1", "--progress", "off", "--threads",
                   "1", "--out", sp("a")),
               0, "%s", stderr_text());
  cr_assert_eq(RUN("run", GALACTIC, "--n", "200", "--steps", "1", "--progress",
                   "off", "--threads", "1", "--out", sp("b")),
               0, "%s", stderr_text());
  cr_assert_eq(RUN("run", "--restart", sp("b/checkpoint.hdf5"), "--steps", "2",
                   "--progress", "off", "--threads", "1"),
               0, "%s", stderr_text());
  snapshot a, b;
  cr_assert_eq(snapshot_read(sp("a/checkpoint.hdf5"), &a), 1, "%s", errors());
  cr_assert_eq(snapshot_read(sp("b/checkpoint.hdf5"), &b), 1, "%s", errors());
  cr_assert(memcmp(a.pos, b.pos, 3 * a.n * sizeof(double)) == 0,
            "the restart is not the run straight through");
  cr_expect_eq(b.units.mass, MSUN10);
  snapshot_free(&a);
  snapshot_free(&b);
  cr_assert_eq(RUN("run", "--restart", sp("b/checkpoint.hdf5"), "--steps", "3",
                   "--unit-mass", "1.98841e33", "--unit-length", "3.0857e18",
                   "--unit-velocity", "1e5", "--progress", "off"),
               2);
  /* The checkpoint's G does not belong to them: refused, before the
   * comparison of every setting would refuse them too. */
  assert_stderr_has("contradicts the unit system");
}

/* forces reads a file of physical units in its numbers with --G as
 * given: said, with the G of those units. */
Test(units, forces_says_the_file_units) {
  snapshot ic = write_ic("ic.h5", 1);
  cr_assert_eq(RUN("forces", "--in", sp("ic.h5"), "--method", "direct", "--eps",
                   "0.01", "--device", "cpu", "--out", sp("f.txt")),
               0, "%s", stderr_text());
  /* In the file's units, with their G (issue 30; the numbers:
   * test_forces_units.c). */
  assert_stderr_has("G = 43009.1755 (from the units): the forces are in "
                    "these units");
  char *out = read_text("f.txt");
  cr_expect(strstr(out, "G = 43009.17") != NULL, "%s", out);
  free(out);
  snapshot_free(&ic);
}

/* validate reads a file's units as forces does: said with their G; a
 * --G that contradicts them refused naming both (exit 2); the relative
 * errors are those of the same bodies in N-body numbers (G scales every
 * force alike). */
Test(units, validate_says_the_file_units) {
  snapshot ic = write_ic("ic.h5", 1);
  cr_assert_eq(RUN("validate", "--in", sp("ic.h5"), "--method", "bh", "--theta",
                   "0.5", "--order", "1", "--eps", "0.01", "--device", "cpu"),
               0, "%s", stderr_text());
  assert_stderr_has("tilefmm validate: units of ");
  assert_stderr_has("G = 43009.1755 (from the units): the errors are "
                    "relative");
  char *physical = read_text("stdout.txt");
  cr_assert_eq(RUN("validate", "--in", sp("ic.h5"), "--method", "bh", "--theta",
                   "0.5", "--order", "1", "--eps", "0.01", "--device", "cpu",
                   "--G", "1"),
               2, "%s", stderr_text());
  assert_stderr_has("--G 1 contradicts the units of");
  assert_stderr_has("in which G = 43009.1755");
  /* The same numbers without units: the same errors, line for line. */
  snapshot plain = write_ic("plain.h5", 0);
  cr_assert_eq(RUN("validate", "--in", sp("plain.h5"), "--method", "bh",
                   "--theta", "0.5", "--order", "1", "--eps", "0.01",
                   "--device", "cpu"),
               0, "%s", stderr_text());
  char *nbody = read_text("stdout.txt");
  const char *keys[] = {"acceleration", "potential"};
  for (int k = 0; k < 2; k++) {
    const char *a = strstr(physical, keys[k]), *b = strstr(nbody, keys[k]);
    cr_assert(a != NULL && b != NULL, "%s\n---\n%s", physical, nbody);
    const size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
    cr_expect(la == lb && strncmp(a, b, la) == 0, "%.*s\nagainst\n%.*s",
              (int)la, a, (int)lb, b);
  }
  free(physical);
  free(nbody);
  snapshot_free(&plain);
  snapshot_free(&ic);
}

/* The p99 errors of tune's table on stdout (the next to last column of
 * each row of a leaf size), in order; at most max. */
static int tune_errors(const char *text, double *out, int max) {
  int k = 0;
  for (const char *line = text; *line != '\0' && k < max;) {
    const size_t len = strcspn(line, "\n");
    char row[512];
    snprintf(row, sizeof row, "%.*s", (int)len, line);
    char schedule[32], verdict[16];
    int leaf;
    double cols[6], p99;
    if (sscanf(row, "%31s %d %lf %lf %lf %lf %lf %lf %lf %lf %15s", schedule,
               &leaf, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4],
               &cols[5], &cols[5], &p99, verdict) == 11)
      out[k++] = p99;
    line += len + (line[len] == '\n');
  }
  return k;
}

/* tune, as validate: a file's units and G said, a contradicting --G
 * refused naming both (exit 2), and the errors those of the same bodies in
 * N-body numbers. */
Test(units, tune_says_the_file_units) {
  snapshot ic = write_ic("ic.h5", 1);
#define TUNE_ARGS(file, ...)                                                   \
  RUN("tune", "--in", sp(file), "--method", "bh", "--theta", "0.5", "--order", \
      "1", "--eps", "0.01", "--device", "cpu", "--leaf-min", "16",             \
      "--leaf-max", "32", "--repeat", "1", "--csv", sp("t.csv"), "--png",      \
      sp("t.png"), "--max-error", "100", ##__VA_ARGS__)
  cr_assert_eq(TUNE_ARGS("ic.h5"), 0, "%s", stderr_text());
  assert_stderr_has("tilefmm tune: units of ");
  assert_stderr_has("G = 43009.1755 (from the units): the errors are "
                    "relative");
  char *physical = read_text("stdout.txt");
  cr_assert_eq(TUNE_ARGS("ic.h5", "--G", "1"), 2, "%s", stderr_text());
  assert_stderr_has("--G 1 contradicts the units of");
  assert_stderr_has("in which G = 43009.1755");
  snapshot plain = write_ic("plain.h5", 0);
  cr_assert_eq(TUNE_ARGS("plain.h5"), 0, "%s", stderr_text());
  char *nbody = read_text("stdout.txt");
#undef TUNE_ARGS
  double a[8], b[8];
  const int na = tune_errors(physical, a, 8), nb = tune_errors(nbody, b, 8);
  cr_assert(na >= 2 && na == nb, "%d and %d errors:\n%s\n---\n%s", na, nb,
            physical, nbody);
  for (int k = 0; k < na; k++)
    cr_expect_eq(a[k], b[k], "row %d: %.4g against %.4g", k, a[k], b[k]);
  free(physical);
  free(nbody);
  snapshot_free(&plain);
  snapshot_free(&ic);
}

/* SWIFT's snapshot keys that tilefmm does not take: refused with what to
 * do instead. */
Test(units, swift_snapshot_unit_keys_refused) {
  cr_assert_eq(RUN("run", "-P", "Snapshots:UnitLength_in_cgs:1", "--out",
                   sp("a"), SMALL),
               2);
  assert_stderr_has("writes snapshots in its internal units");
  cr_assert_eq(RUN("run", "-P", "Snapshots:select_output:out.yml", "--out",
                   sp("b"), SMALL),
               2);
  assert_stderr_has("Snapshots:fields");
}

/* --units: named systems, the same run as their three flags. */
Test(units, presets) {
  cr_assert_eq(RUN("run", "--units", "galactic", "--out", sp("a"), SMALL), 0,
               "%s", stderr_text());
  cr_assert_eq(RUN("run", GALACTIC, "--out", sp("b"), SMALL), 0, "%s",
               stderr_text());
  char *a = read_text("a/used_parameters.yml"),
       *b = read_text("b/used_parameters.yml");
  /* The same units and G (the directories differ). */
  const char *units_b = strstr(b, "InternalUnitSystem:");
  char G[64];
  snprintf(G, sizeof G, "  G: %.17g\n", galactic_G());
  cr_assert_not_null(units_b, "%s", b);
  cr_expect(strstr(a, units_b) != NULL, "%s\nlacks\n%s", a, units_b);
  cr_expect(strstr(a, G) != NULL, "%s lacks %s", a, G);
  free(a);
  free(b);
  cr_expect_eq(file_double(sp("a/snapshot_0000.hdf5"), "Units",
                           "Unit length in cgs (U_L)"),
               KPC);
  cr_assert_eq(RUN("run", "--units", "cosmological", "--out", sp("c"), SMALL),
               0);
  cr_expect_eq(file_double(sp("c/snapshot_0000.hdf5"), "Units",
                           "Unit length in cgs (U_L)"),
               1000 * KPC);
  cr_assert_eq(RUN("run", "--units", "galactic", "--unit-mass", "1e43", "--out",
                   sp("d"), SMALL),
               2);
  assert_stderr_has("--units galactic and --unit-mass both given");
  cr_assert_eq(RUN("run", "--units", "furlongs", "--out", sp("e"), SMALL), 2);
  assert_stderr_has("--units");
  /* nbody: the numbers of a file with units taken as they are, said. */
  snapshot ic = write_ic("ic.h5", 1);
  cr_assert_eq(RUN("run", "--ic", sp("ic.h5"), "--units", "nbody", "--method",
                   "direct", "--steps", "0", "--progress", "off", "--out",
                   sp("f")),
               0, "%s", stderr_text());
  assert_stderr_has("its numbers are taken as N-body units (--units nbody)");
  snapshot_free(&ic);
}
