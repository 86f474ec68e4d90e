/* Tipsy and GADGET-2 binary files (format 1 and 2) as the bodies of every
 * command that reads them (issue 15): the same bodies as the text they
 * stand for, in both byte orders, float and double, uint32 and uint64
 * IDs, masses from massarr and from block MASS, a snapshot in two files;
 * particle types chosen with --types as for HDF5. The files are made by
 * the tests' own writer (binary_writer.c); the tool runs as a child. */
#define _POSIX_C_SOURCE 200809L
#include "binary_writer.h"
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <criterion/logging.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

TestSuite(binary_input, .init = scratch_make, .fini = scratch_remove);

/* Fresh bodies each run; the seed is logged to replay a failure. */
static uint64_t fresh_seed(void) {
  const uint64_t seed =
      (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() * 7919u;
  cr_log_info("seed %llu", (unsigned long long)seed);
  return seed;
}

/* forces --in IN --method reference [--types TYPES] > OUT, which must
 * succeed. */
static void forces(const char *in, const char *out, const char *types) {
  const int code = types != NULL
                       ? RUN("forces", "--in", sp(in), "--out", sp(out),
                             "--method", "reference", "--types", types)
                       : RUN("forces", "--in", sp(in), "--out", sp(out),
                             "--method", "reference");
  char *said = read_text("stderr.txt");
  cr_assert_eq(code, 0, "forces --in %s failed:\n%s", in, said);
  free(said);
}

/* in must give the forces of the text file text (the same bodies). */
static void expect_same_forces(const char *in, const char *types,
                               const char *text) {
  forces(text, "want.txt", NULL);
  forces(in, "got.txt", types);
  assert_same_text("got.txt", "want.txt");
}

/* run --ic IN --steps 0 writes the bodies it read in its first snapshot:
 * they must be those of m, of the types in mask, in type order, with the
 * IDs given (ids NULL: m's) and the time. */
static void expect_run_reads(const char *in, const char *types, const model *m,
                             unsigned mask, const uint64_t *ids, double time) {
  remove_dir(sp("o"));
  const int code =
      types != NULL
          ? RUN("run", "--ic", sp(in), "--types", types, "--steps", "0",
                "--method", "direct", "--progress", "off", "--out", sp("o"))
          : RUN("run", "--ic", sp(in), "--steps", "0", "--method", "direct",
                "--progress", "off", "--out", sp("o"));
  char *said = read_text("stderr.txt");
  cr_assert_eq(code, 0, "run --ic %s failed:\n%s", in, said);
  free(said);
  snapshot s;
  cr_assert(snapshot_read(sp("o/snapshot_0000.hdf5"), &s) == 1, "%s", errors());
  cr_expect_eq(s.time, time);
  /* The snapshot stores the coordinates shifted into its box (as yt
   * needs): they come back to an ulp of it. */
  double extent = 0;
  for (size_t i = 0; i < 3 * s.n; i++)
    extent = fmax(extent, fabs(s.pos[i]));
  size_t j = 0;
  for (int k = 0; k < NTYPES; k++)
    for (size_t i = 0; (mask >> k & 1) && i < m->n[k]; i++, j++) {
      cr_assert_lt(j, s.n);
      const body *b = &m->b[k][i];
      for (int d = 0; d < 3; d++) {
        cr_assert_leq(fabs(s.pos[3 * j + d] - b->x[d]), 0x1p-50 * extent,
                      "body %zu x[%d]: %.17g, written %.17g", j, d,
                      s.pos[3 * j + d], b->x[d]);
        cr_assert_eq(s.vel[3 * j + d], b->v[d], "body %zu v[%d]", j, d);
      }
      cr_assert_eq(s.mass[j], b->m, "body %zu mass", j);
      cr_assert_eq(s.ids[j], ids != NULL ? ids[j] : b->id, "body %zu id", j);
    }
  cr_assert_eq(j, s.n);
  snapshot_free(&s);
}

#define TYPES_014 (1u | 2u | 16u)

/* Tipsy, big-endian (XDR, "standard") and little-endian (native), with
 * the 4-byte pad after the header and without: gas, dark and star are
 * types 0, 1 and 4; several are refused unless --types chooses. */
Test(binary_input, tipsy_both_byte_orders) {
  const size_t count[NTYPES] = {5, 7, 0, 0, 3, 0};
  model m = model_random(count, fresh_seed(), 1);
  tipsy_write(&m, 0.25, 0, 1, sp("t.std"));
  tipsy_write(&m, 0.25, 1, 1, sp("t.bin"));
  tipsy_write(&m, 0.25, 0, 0, sp("t28.std"));
  tipsy_write(&m, 0.25, 1, 0, sp("t28.bin"));
  model_write_text(&m, TYPES_014, sp("all.txt"));
  model_write_text(&m, 2, sp("dark.txt"));
  model_write_text(&m, 16, sp("star.txt"));
  expect_same_forces("t.std", "all", "all.txt");
  expect_same_forces("t.bin", "0,1,4", "all.txt");
  expect_same_forces("t28.std", "all", "all.txt");
  expect_same_forces("t28.bin", "all", "all.txt");
  assert_stderr_has("read type 0 (gas): 5, type 1 (dark matter): 7, type 4 "
                    "(stars): 3 as gravitating bodies, in type order");
  expect_same_forces("t.std", "1", "dark.txt");
  expect_same_forces("t.bin", "4", "star.txt");

  const char *args[] = {"forces",      "--in",     sp("t.std"), "--out",
                        sp("out.txt"), "--method", "direct",    NULL};
  expect_failure(args, 1,
                 "t.std: holds type 0 (gas): 5, type 1 (dark matter): 7, "
                 "type 4 (stars): 3",
                 "choose the types to read with --types");
  unlink(sp("out.txt"));
  const char *absent[] = {"forces",      "--in",    sp("t.std"), "--out",
                          sp("out.txt"), "--types", "1,2",       NULL};
  expect_failure(absent, 1, "--types names type 2, which the file does not",
                 NULL);
  /* IDs: Tipsy has none; a body's is its place in the file, from 1. */
  uint64_t ids[15];
  for (size_t i = 0; i < 15; i++)
    ids[i] = i + 1;
  expect_run_reads("t.std", "all", &m, TYPES_014, ids, 0.25);
  expect_run_reads("t.bin", "4", &m, 16, ids + 12, 0.25);
  /* A time whose first 4 bytes, little-endian, read 256, GADGET-2's
   * first marker: still Tipsy (no header record framed at 260). */
  const uint64_t bits = 0x3ff0000000000100ull;
  double odd;
  memcpy(&odd, &bits, sizeof odd);
  tipsy_write(&m, odd, 1, 1, sp("odd.bin"));
  expect_same_forces("odd.bin", "all", "all.txt");
  expect_run_reads("odd.bin", "all", &m, TYPES_014, ids, odd);
  model_free(&m);
}

/* One type, not gas, reads unasked, in every command that reads bodies. */
Test(binary_input, every_command_reads_them) {
  const size_t count[NTYPES] = {0, 40, 0, 0, 0, 0};
  model m = model_random(count, fresh_seed(), 1);
  tipsy_write(&m, 0, 0, 1, sp("dark.std"));
  gadget_options g = gadget_defaults();
  gadget_write(&m, &g, sp("dark.g1"), NULL);
  model_write_text(&m, 2, sp("dark.txt"));
  const char *files[] = {"dark.std", "dark.g1"};
  uint64_t ids[40]; /* Tipsy's: the places in the file */
  for (size_t i = 0; i < 40; i++)
    ids[i] = i + 1;
  for (int f = 0; f < 2; f++) {
    expect_same_forces(files[f], NULL, "dark.txt");
    cr_assert_eq(RUN("validate", "--in", sp(files[f]), "--device", "cpu"), 0);
    assert_stdout_has("40");
    cr_assert_eq(RUN("tune", "--in", sp(files[f]), "--leaf-min", "16",
                     "--leaf-max", "32", "--repeat", "1", "--device", "cpu",
                     "--csv", sp("t.csv"), "--png", sp("t.png")),
                 0);
    cr_assert(exists("t.csv"));
    unlink(sp("t.csv"));
    cr_assert_eq(RUN("render", sp(files[f]), "--out", sp("d.png")), 0);
    cr_assert(exists("d.png"));
    unlink(sp("d.png"));
    expect_run_reads(files[f], NULL, &m, 2, f == 0 ? ids : NULL, 0);
  }
  model_free(&m);
}

/* Format 1, little-endian, floats and uint32 IDs: type 1's mass in the
 * header's massarr, type 4's in block MASS; gas (type 0, with its block
 * U after MASS) chosen or left. */
Test(binary_input, gadget_format_1_massarr_and_mass_block) {
  const size_t count[NTYPES] = {6, 9, 0, 0, 4, 0};
  model m = model_random(count, fresh_seed(), 1);
  model_same_mass(&m, 1, 0.75);
  gadget_options g = gadget_defaults();
  g.massarr[1] = 0.75;
  g.time = 2.5;
  gadget_write(&m, &g, sp("g.dat"), NULL);
  model_write_text(&m, TYPES_014, sp("all.txt"));
  model_write_text(&m, 2 | 16, sp("dm_stars.txt"));
  expect_same_forces("g.dat", "all", "all.txt");
  expect_same_forces("g.dat", "1,4", "dm_stars.txt");
  assert_stderr_has("read type 1 (dark matter): 9, type 4 (stars): 4 as");
  const char *args[] = {"forces",      "--in",     sp("g.dat"), "--out",
                        sp("out.txt"), "--method", "direct",    NULL};
  expect_failure(args, 1, "g.dat: holds type 0 (gas): 6, type 1", "--types");
  expect_run_reads("g.dat", "1,4", &m, 2 | 16, NULL, 2.5);
  /* Big-endian, as a SPARC or a POWER machine wrote it. */
  g.little = 0;
  gadget_write(&m, &g, sp("big.dat"), NULL);
  expect_same_forces("big.dat", "all", "all.txt");
  model_free(&m);
}

/* Format 2 (named blocks), big-endian, doubles and 64-bit IDs; and
 * little-endian floats with no VEL or ID block: velocities zero, IDs the
 * places in the file. */
Test(binary_input, gadget_format_2_doubles_and_64_bit_ids) {
  const size_t count[NTYPES] = {0, 11, 0, 0, 0, 0};
  model m = model_random(count, fresh_seed(), 0);
  for (size_t i = 0; i < m.n[1]; i++)
    m.b[1][i].id += (uint64_t)1 << 40;
  gadget_options g = gadget_defaults();
  g.format = 2;
  g.little = 0;
  g.real_width = g.id_width = 8;
  g.time = 0.125;
  gadget_write(&m, &g, sp("g2.dat"), NULL);
  model_write_text(&m, 2, sp("dm.txt"));
  expect_same_forces("g2.dat", NULL, "dm.txt");
  expect_run_reads("g2.dat", NULL, &m, 2, NULL, 0.125);
  /* Format 1 with doubles and uint64 IDs too. */
  g.format = 1;
  gadget_write(&m, &g, sp("g1.dat"), NULL);
  expect_run_reads("g1.dat", NULL, &m, 2, NULL, 0.125);

  model f = model_random(count, fresh_seed() + 1, 1);
  g = gadget_defaults();
  g.format = 2;
  g.no_vel = g.no_id = 1;
  gadget_write(&f, &g, sp("bare.dat"), NULL);
  uint64_t ids[11];
  for (size_t i = 0; i < f.n[1]; i++) {
    ids[i] = i + 1;
    memset(f.b[1][i].v, 0, sizeof f.b[1][i].v);
  }
  expect_run_reads("bare.dat", NULL, &f, 2, ids, 0);
  model_free(&f);
  model_free(&m);
}

/* A snapshot in two files, snap.0 and snap.1 (num_files 2), read whole
 * from either part or from its BASE, snap: each type's bodies from file
 * 0, then file 1. */
Test(binary_input, gadget_two_files) {
  const size_t c0[NTYPES] = {0, 4, 0, 0, 2, 0}, c1[NTYPES] = {0, 3, 0, 0, 5, 0};
  const uint64_t seed = fresh_seed();
  model a = model_random(c0, seed, 1), b = model_random(c1, seed + 1, 1);
  for (int k = 0; k < NTYPES; k++)
    for (size_t i = 0; i < b.n[k]; i++)
      b.b[k][i].id += 100; /* distinct from a's */
  gadget_options g = gadget_defaults();
  g.num_files = 2;
  g.total[1] = 7;
  g.total[4] = 7;
  gadget_write(&a, &g, sp("snap.0"), NULL);
  g.format = 2; /* parts need not share a format */
  gadget_write(&b, &g, sp("snap.1"), NULL);
  /* The whole snapshot, as one model: type 1 of a then b, type 4 too. */
  const size_t call[NTYPES] = {0, 7, 0, 0, 7, 0};
  model all = model_random(call, 0, 1);
  for (int k = 1; k <= 4; k += 3) {
    memcpy(all.b[k], a.b[k], a.n[k] * sizeof(body));
    memcpy(all.b[k] + a.n[k], b.b[k], b.n[k] * sizeof(body));
  }
  model_write_text(&all, 2 | 16, sp("all.txt"));
  expect_same_forces("snap.0", "all", "all.txt");
  expect_same_forces("snap.1", "1,4", "all.txt");
  assert_stderr_has("read type 1 (dark matter): 7, type 4 (stars): 7");
  expect_run_reads("snap.1", "1,4", &all, 2 | 16, NULL, 0);
  /* Named by its BASE, as GADGET's SnapshotFileBase names it. */
  expect_same_forces("snap", "all", "all.txt");
  expect_run_reads("snap", "all", &all, 2 | 16, NULL, 0);
  cr_assert_eq(
      RUN("render", sp("snap"), "--out", sp("s.png"), "--types", "all"), 0);
  /* No output replaces a part, whichever was named. */
  char *part = read_text("snap.1");
  cr_assert_eq(RUN("forces", "--in", sp("snap"), "--types", "all", "--out",
                   sp("snap.1")),
               1);
  assert_stderr_has("snap.1: is the same file as the input");
  char *after = read_text("snap.1");
  cr_assert(memcmp(part, after, 256) == 0, "snap.1 was replaced");
  free(part);
  free(after);
  cr_assert_eq(RUN("forces", "--in", sp("snp")), 1);
  assert_stderr_has("snp: cannot open: No such file");
  model_free(&all);
  model_free(&a);
  model_free(&b);
}

/* A snapshot in ten files: every part is an input, parts 8 and 9 as much
 * as 0 to 7, so that no output replaces one (the parts were kept up to
 * the eighth alone, issue 29). */
Test(binary_input, gadget_parts_past_eight_are_never_replaced) {
  enum { PARTS = 10 };
  const size_t one[NTYPES] = {0, 1, 0, 0, 0, 0};
  gadget_options g = gadget_defaults();
  g.num_files = PARTS;
  g.total[1] = PARTS;
  char name[32];
  for (int k = 0; k < PARTS; k++) {
    model m = model_random(one, fresh_seed() + (uint64_t)k, 1);
    m.b[1][0].id += (uint64_t)k;
    snprintf(name, sizeof name, "snap.%d", k);
    gadget_write(&m, &g, sp(name), NULL);
    model_free(&m);
  }
  for (int k = PARTS - 3; k < PARTS; k++) {
    snprintf(name, sizeof name, "snap.%d", k);
    char *part = read_text(name);
    cr_assert_eq(RUN("forces", "--in", sp("snap"), "--out", sp(name),
                     "--method", "direct"),
                 1, "an output replaced %s", name);
    assert_stderr_has(": is the same file as the input");
    char *after = read_text(name);
    cr_assert(memcmp(part, after, 256) == 0, "%s was replaced", name);
    free(part);
    free(after);
  }
  /* Read whole: the ten bodies. */
  cr_assert_eq(RUN("forces", "--in", sp("snap.3"), "--out", sp("f.txt"),
                   "--method", "direct"),
               0);
  table *t = read_table("f.txt", 4);
  cr_assert_eq(t->rows, PARTS);
  free(t);
}

/* Gas alone is refused unasked, as in HDF5 (tilefmm computes gravity
 * alone); stars alone read with no note. */
Test(binary_input, gas_alone_is_refused_stars_alone_read) {
  const size_t gas[NTYPES] = {4, 0, 0, 0, 0, 0},
               stars[NTYPES] = {0, 0, 0, 0, 6, 0};
  model g = model_random(gas, fresh_seed(), 1), s = model_random(stars, 5, 1);
  tipsy_write(&g, 0, 1, 1, sp("gas.bin"));
  gadget_options o = gadget_defaults();
  gadget_write(&g, &o, sp("gas.g1"), NULL);
  cr_assert_eq(RUN("forces", "--in", sp("gas.bin"), "--method", "direct"), 1);
  assert_stderr_has("gas.bin: holds type 0 (gas): 4;");
  cr_assert_eq(RUN("forces", "--in", sp("gas.g1"), "--method", "direct"), 1);
  assert_stderr_has("gas.g1: holds type 0 (gas): 4;");
  model_write_text(&g, 1, sp("gas.txt"));
  expect_same_forces("gas.bin", "0", "gas.txt");
  expect_same_forces("gas.g1", "0", "gas.txt");
  tipsy_write(&s, 0, 0, 1, sp("stars.std"));
  model_write_text(&s, 16, sp("stars.txt"));
  expect_same_forces("stars.std", NULL, "stars.txt");
  char *said = read_text("stderr.txt");
  cr_assert_null(strstr(said, "gravitating"), "no note without --types");
  free(said);
  model_free(&g);
  model_free(&s);
}
