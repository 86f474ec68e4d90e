/* The library's snapshot files (tilefmm.h, "Snapshot files"): HDF5
 * written and read back bit for bit with its units and attributes; Tipsy
 * and GADGET-2 files written here byte by byte from their documented
 * layouts (not by the library) and read back field by field; and damaged
 * input (a truncated file, a wrong magic, a NaN coordinate) refused with a
 * message naming the file and the body or the byte offset, never a crash.
 * Inputs are fresh random numbers (test_fresh_seed, replayed with
 * TFMM_TEST_SEED). */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tilefmm.h>
#include <unistd.h>

#define MSG 8192

/* A file path in a fresh directory of its own. */
static char dir[256];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/tfmm_io_XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static const char *in_dir(const char *name) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

/* Random bodies: n of them, with every optional array. */
typedef struct bodies {
  size_t n;
  double *pos, *vel, *mass, *acc, *pot;
  uint64_t *ids;
  signed char *bins;
} bodies;

static bodies random_bodies(size_t n, uint64_t seed) {
  test_rng rng = {seed};
  bodies b = {n,
              malloc(3 * n * sizeof(double)),
              malloc(3 * n * sizeof(double)),
              malloc(n * sizeof(double)),
              malloc(3 * n * sizeof(double)),
              malloc(n * sizeof(double)),
              malloc(n * sizeof(uint64_t)),
              malloc(n)};
  for (size_t i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++) {
      b.pos[3 * i + c] = 20 * test_uniform(&rng) - 10;
      b.vel[3 * i + c] = test_uniform(&rng) - 0.5;
      b.acc[3 * i + c] = test_uniform(&rng) - 0.5;
    }
    b.mass[i] = 0.5 + test_uniform(&rng);
    b.pot[i] = -test_uniform(&rng);
    b.ids[i] = (uint64_t)(test_uniform(&rng) * 1e15) + 1;
    b.bins[i] = (signed char)(test_uniform(&rng) * 20);
  }
  return b;
}

static void free_bodies(bodies *b) {
  free(b->pos);
  free(b->vel);
  free(b->mass);
  free(b->acc);
  free(b->pot);
  free(b->ids);
  free(b->bins);
}

static tfmm_snapshot view(const bodies *b) {
  return (tfmm_snapshot){.n = b->n,
                         .time = 0.125,
                         .pos = b->pos,
                         .vel = b->vel,
                         .mass = b->mass,
                         .acc = b->acc,
                         .pot = b->pot,
                         .ids = b->ids,
                         .bins = b->bins};
}

static void require_hdf5(void) {
  if (!tfmm_has_hdf5())
    cr_skip_test("this library was built without HDF5");
}

Test(snapshot_io, hdf5_round_trip_is_bit_for_bit) {
  require_hdf5();
  make_dir();
  const uint64_t seed = test_fresh_seed();
  bodies b = random_bodies(257, seed);
  tfmm_attr params[] = {{"Gravity:theta", "0.5"}, {"Run:note", "é x"}};
  tfmm_attr state[] = {{"format", "tilefmm-run-checkpoint-1"}, {"step", "12"}};
  tfmm_snapshot s = view(&b);
  s.params = params;
  s.nparams = 2;
  s.state = state;
  s.nstate = 2;
  /* kpc, 1e10 Msun, km/s */
  s.units = (tfmm_unit_system){1.98841e43, 3.0856775814913673e21, 1e5, 1, 1};
  s.G = 43007.1;
  char msg[MSG] = "";
  const char *path = in_dir("c.hdf5");
  cr_assert_eq(tfmm_snapshot_write(path, &s, NULL, msg, sizeof msg), TFMM_OK,
               "%s (seed %llu)", msg, (unsigned long long)seed);
  cr_assert_eq(tfmm_snapshot_probe(path), TFMM_FORMAT_HDF5);
  tfmm_snapshot r;
  const tfmm_read_options o = {.types = TFMM_TYPES_ALL, .attributes = 1};
  cr_assert_eq(tfmm_snapshot_read(path, &o, &r, msg, sizeof msg), TFMM_OK, "%s",
               msg);
  cr_assert_eq(r.n, b.n);
  cr_expect_eq(r.format, TFMM_FORMAT_HDF5);
  cr_expect_eq(r.time, 0.125);
  cr_expect_eq(memcmp(r.pos, b.pos, 3 * b.n * sizeof(double)), 0);
  cr_expect_eq(memcmp(r.vel, b.vel, 3 * b.n * sizeof(double)), 0);
  cr_expect_eq(memcmp(r.mass, b.mass, b.n * sizeof(double)), 0);
  cr_assert_not_null(r.acc);
  cr_assert_not_null(r.pot);
  cr_assert_not_null(r.bins);
  cr_expect_eq(memcmp(r.acc, b.acc, 3 * b.n * sizeof(double)), 0);
  cr_expect_eq(memcmp(r.pot, b.pot, b.n * sizeof(double)), 0);
  cr_expect_eq(memcmp(r.ids, b.ids, b.n * sizeof(uint64_t)), 0);
  cr_expect_eq(memcmp(r.bins, b.bins, b.n), 0);
  cr_expect_eq(r.units_source, TFMM_UNITS_SWIFT);
  cr_expect_eq(r.units.mass, s.units.mass);
  cr_expect_eq(r.units.length, s.units.length);
  cr_expect(fabs(r.units.velocity / 1e5 - 1) < 1e-15, "%.17g",
            r.units.velocity);
  cr_assert_eq(r.nparams, 2);
  cr_expect_str_eq(r.params[1].name, "Run:note");
  cr_expect_str_eq(r.params[1].value, "é x");
  cr_assert_eq(r.nstate, 2);
  cr_expect_str_eq(r.state[1].value, "12");
  /* types chosen (all): the note names them */
  cr_assert_not_null(r.note);
  cr_expect_not_null(strstr(r.note, "PartType1 (dark matter): 257"), "%s",
                     r.note);
  cr_assert_eq(r.nfiles, 1);
  cr_expect_str_eq(r.files[0], path);
  tfmm_snapshot_free(&r);
  cr_expect_eq(r.pos, NULL);
  free_bodies(&b);
}

Test(snapshot_io, hdf5_for_readers_is_shifted_and_in_nbody_units) {
  require_hdf5();
  make_dir();
  const uint64_t seed = test_fresh_seed();
  bodies b = random_bodies(100, seed);
  tfmm_snapshot s = view(&b);
  s.bins = NULL;
  const tfmm_snapshot_output out = {TFMM_SNAPSHOT_VELOCITIES, 0, 4};
  char msg[MSG] = "";
  const char *path = in_dir("s.hdf5");
  const mode_t mask = umask(027);
  cr_assert_eq(tfmm_snapshot_write(path, &s, &out, msg, sizeof msg), TFMM_OK,
               "%s", msg);
  umask(mask);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0640, "mode %o: 0666 less the umask",
               (unsigned)(st.st_mode & 0777));
  tfmm_snapshot r;
  cr_assert_eq(tfmm_snapshot_read(path, NULL, &r, msg, sizeof msg), TFMM_OK,
               "%s", msg);
  cr_expect_eq(r.units_source, TFMM_UNITS_NBODY);
  cr_expect_eq(r.units.mass, 0);
  cr_expect_null(r.acc, "Accelerations were not asked for");
  cr_expect_null(r.pot);
  /* Shifted by half the box and back: to an ulp of the box (< 2 * 2 * 10). */
  for (size_t i = 0; i < 3 * b.n; i++)
    cr_assert(fabs(r.pos[i] - b.pos[i]) <= 0x1p-52 * 40, "coordinate %zu", i);
  cr_expect_eq(memcmp(r.vel, b.vel, 3 * b.n * sizeof(double)), 0);
  tfmm_snapshot_free(&r);
  free_bodies(&b);
}

/* ---- Tipsy and GADGET-2, written here from their documented layouts --- */

static void put32(FILE *fp, uint32_t v, int big) {
  unsigned char b[4];
  for (int k = 0; k < 4; k++)
    b[big ? 3 - k : k] = (unsigned char)(v >> (8 * k));
  fwrite(b, 1, 4, fp);
}

static void put64(FILE *fp, uint64_t v, int big) {
  unsigned char b[8];
  for (int k = 0; k < 8; k++)
    b[big ? 7 - k : k] = (unsigned char)(v >> (8 * k));
  fwrite(b, 1, 8, fp);
}

static void putf(FILE *fp, float x, int big) {
  uint32_t v;
  memcpy(&v, &x, 4);
  put32(fp, v, big);
}

static void putd(FILE *fp, double x, int big) {
  uint64_t v;
  memcpy(&v, &x, 8);
  put64(fp, v, big);
}

/* A big-endian (standard) Tipsy file of n dark particles: mass, pos[3],
 * vel[3], eps, phi, all float (Tipsy's struct dark_particle). */
static void write_tipsy(const char *path, double time, size_t n,
                        const float *pos, const float *vel, const float *mass) {
  FILE *fp = fopen(path, "wb");
  cr_assert_not_null(fp);
  putd(fp, time, 1);
  put32(fp, (uint32_t)n, 1); /* nbodies */
  put32(fp, 3, 1);           /* ndim */
  put32(fp, 0, 1);           /* nsph */
  put32(fp, (uint32_t)n, 1); /* ndark */
  put32(fp, 0, 1);           /* nstar */
  put32(fp, 0, 1);           /* pad */
  for (size_t i = 0; i < n; i++) {
    putf(fp, mass[i], 1);
    for (int c = 0; c < 3; c++)
      putf(fp, pos[3 * i + c], 1);
    for (int c = 0; c < 3; c++)
      putf(fp, vel[3 * i + c], 1);
    putf(fp, 0.01f, 1); /* eps */
    putf(fp, -1.0f, 1); /* phi */
  }
  cr_assert_eq(fclose(fp), 0);
}

typedef struct fbodies {
  size_t n;
  float *pos, *vel, *mass;
  uint64_t *ids;
} fbodies;

static fbodies random_fbodies(size_t n, uint64_t seed) {
  test_rng rng = {seed};
  fbodies b = {n, malloc(3 * n * sizeof(float)), malloc(3 * n * sizeof(float)),
               malloc(n * sizeof(float)), malloc(n * sizeof(uint64_t))};
  for (size_t i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++) {
      b.pos[3 * i + c] = (float)(2 * test_uniform(&rng) - 1);
      b.vel[3 * i + c] = (float)(test_uniform(&rng) - 0.5);
    }
    b.mass[i] = (float)(0.5 + test_uniform(&rng));
    b.ids[i] = 1000 + 7 * (uint64_t)i;
  }
  return b;
}

static void free_fbodies(fbodies *b) {
  free(b->pos);
  free(b->vel);
  free(b->mass);
  free(b->ids);
}

/* Every field read equals what was written (floats widened exactly). */
static void expect_read(const tfmm_snapshot *r, const fbodies *b, int ids) {
  cr_assert_eq(r->n, b->n);
  for (size_t i = 0; i < b->n; i++) {
    for (int c = 0; c < 3; c++) {
      cr_assert_eq(r->pos[3 * i + c], (double)b->pos[3 * i + c], "body %zu", i);
      cr_assert_eq(r->vel[3 * i + c], (double)b->vel[3 * i + c], "body %zu", i);
    }
    cr_assert_eq(r->mass[i], (double)b->mass[i], "body %zu", i);
    cr_assert_eq(r->ids[i], ids ? b->ids[i] : i + 1, "body %zu", i);
  }
  cr_expect_eq(r->units_source, TFMM_UNITS_NONE);
  cr_expect_null(r->acc);
}

Test(snapshot_io, tipsy_is_read_field_by_field) {
  make_dir();
  fbodies b = random_fbodies(37, test_fresh_seed());
  const char *path = in_dir("t.bin");
  write_tipsy(path, 0.75, b.n, b.pos, b.vel, b.mass);
  cr_assert_eq(tfmm_snapshot_probe(path), TFMM_FORMAT_TIPSY);
  tfmm_snapshot r;
  char msg[MSG] = "";
  cr_assert_eq(tfmm_snapshot_read(path, NULL, &r, msg, sizeof msg), TFMM_OK,
               "%s", msg);
  cr_expect_eq(r.format, TFMM_FORMAT_TIPSY);
  cr_expect_eq(r.time, 0.75);
  expect_read(&r, &b, 0);
  tfmm_snapshot_free(&r);
  free_fbodies(&b);
}

/* One Fortran record: its length before and after. */
static void record(FILE *fp, const void *data, uint32_t len) {
  put32(fp, len, 0);
  fwrite(data, 1, len, fp);
  put32(fp, len, 0);
}

/* A little-endian GADGET-2 SnapFormat 1 file of n type-1 particles:
 * HEAD (256 bytes), POS, VEL (float), ID (uint32), MASS (float, massarr
 * 0), as the GADGET-2 user guide's section 6.1 lays them out. */
static void write_gadget2(const char *path, double time, const fbodies *b) {
  unsigned char head[256] = {0};
  const uint32_t n = (uint32_t)b->n;
  memcpy(head + 4 * 1, &n, 4);      /* npart[1] */
  memcpy(head + 72, &time, 8);      /* time */
  memcpy(head + 96 + 4 * 1, &n, 4); /* npartTotal[1] */
  const int32_t files = 1;
  memcpy(head + 124, &files, 4); /* num_files */
  FILE *fp = fopen(path, "wb");
  cr_assert_not_null(fp);
  record(fp, head, 256);
  record(fp, b->pos, n * 12);
  record(fp, b->vel, n * 12);
  uint32_t *ids = malloc(n * 4);
  for (uint32_t i = 0; i < n; i++)
    ids[i] = (uint32_t)b->ids[i];
  record(fp, ids, n * 4);
  free(ids);
  record(fp, b->mass, n * 4);
  cr_assert_eq(fclose(fp), 0);
}

Test(snapshot_io, gadget2_is_read_field_by_field) {
  make_dir();
  fbodies b = random_fbodies(53, test_fresh_seed());
  const char *path = in_dir("g.dat");
  write_gadget2(path, 0.5, &b);
  cr_assert_eq(tfmm_snapshot_probe(path), TFMM_FORMAT_GADGET2);
  tfmm_snapshot r;
  char msg[MSG] = "";
  cr_assert_eq(tfmm_snapshot_read(path, NULL, &r, msg, sizeof msg), TFMM_OK,
               "%s", msg);
  cr_expect_eq(r.format, TFMM_FORMAT_GADGET2);
  cr_expect_eq(r.time, 0.5);
  expect_read(&r, &b, 1);
  tfmm_snapshot_free(&r);
  free_fbodies(&b);
}

/* ---- damaged input ----------------------------------------------------- */

/* The read fails with TFMM_ERR_FILE, and the message names path and
 * holds each of the words. */
static void expect_refused(const char *path, const tfmm_read_options *o,
                           const char *word1, const char *word2) {
  tfmm_snapshot r;
  char msg[MSG] = "";
  cr_assert_eq(tfmm_snapshot_read(path, o, &r, msg, sizeof msg), TFMM_ERR_FILE,
               "%s", msg);
  cr_expect_not_null(strstr(msg, path), "%s", msg);
  cr_expect_not_null(strstr(msg, word1), "'%s' not in: %s", word1, msg);
  if (word2 != NULL)
    cr_expect_not_null(strstr(msg, word2), "'%s' not in: %s", word2, msg);
  tfmm_snapshot_free(&r);
}

Test(snapshot_io, a_truncated_tipsy_file_names_the_particle) {
  make_dir();
  fbodies b = random_fbodies(10, test_fresh_seed());
  const char *path = in_dir("t.bin");
  write_tipsy(path, 0, b.n, b.pos, b.vel, b.mass);
  cr_assert_eq(truncate(path, 32 + 36 * 7 + 5), 0);
  expect_refused(path, NULL, "truncated", "dark particle 7");
  free_fbodies(&b);
}

Test(snapshot_io, a_nan_coordinate_names_the_body) {
  make_dir();
  fbodies b = random_fbodies(10, test_fresh_seed());
  b.pos[3 * 4 + 1] = NAN;
  const char *path = in_dir("t.bin");
  write_tipsy(path, 0, b.n, b.pos, b.vel, b.mass);
  expect_refused(path, NULL, "dark particle 4", "non-finite coordinate");
  const char *g = in_dir("g.dat");
  write_gadget2(g, 0, &b);
  expect_refused(g, NULL, "particle 4 (ParticleID 1028)",
                 "non-finite coordinate");
  free_fbodies(&b);
}

Test(snapshot_io, a_wrong_magic_is_refused) {
  make_dir();
  fbodies b = random_fbodies(8, test_fresh_seed());
  const char *path = in_dir("g.dat");
  write_gadget2(path, 0, &b);
  FILE *fp = fopen(path, "r+b");
  put32(fp, 255, 0); /* the first marker: not 256 */
  fclose(fp);
  cr_expect_eq(tfmm_snapshot_probe(path), TFMM_FORMAT_UNKNOWN);
  expect_refused(path, NULL, "not a snapshot", NULL);
  const tfmm_read_options g2 = {.format = TFMM_FORMAT_GADGET2};
  expect_refused(path, &g2, "not a GADGET-2 snapshot", NULL);
  if (tfmm_has_hdf5()) {
    const tfmm_read_options h5 = {.format = TFMM_FORMAT_HDF5};
    expect_refused(path, &h5, "not an HDF5 file", NULL);
  }
  expect_refused(in_dir("none"), NULL, "cannot read", NULL);
  free_fbodies(&b);
}

Test(snapshot_io, a_truncated_hdf5_file_is_refused) {
  require_hdf5();
  make_dir();
  bodies b = random_bodies(2000, test_fresh_seed());
  tfmm_snapshot s = view(&b);
  char msg[MSG] = "";
  const char *path = in_dir("c.hdf5");
  cr_assert_eq(tfmm_snapshot_write(path, &s, NULL, msg, sizeof msg), TFMM_OK,
               "%s", msg);
  cr_assert_eq(truncate(path, 40000), 0);
  expect_refused(path, NULL, "HDF5", NULL);
  free_bodies(&b);
}

Test(snapshot_io, bodies_that_cannot_be_written_are_named) {
  make_dir();
  bodies b = random_bodies(10, test_fresh_seed());
  b.mass[3] = -1;
  tfmm_snapshot s = view(&b);
  char msg[MSG] = "";
  const char *path = in_dir("w.hdf5");
  cr_assert_eq(tfmm_snapshot_write(path, &s, NULL, msg, sizeof msg),
               tfmm_has_hdf5() ? TFMM_ERR_INVALID_ARGUMENT
                               : TFMM_ERR_UNSUPPORTED,
               "%s", msg);
  if (tfmm_has_hdf5()) {
    char want[128];
    snprintf(want, sizeof want, "body 3 (ParticleID %llu) has a mass <= 0",
             (unsigned long long)b.ids[3]);
    cr_expect_not_null(strstr(msg, want), "%s", msg);
  }
  cr_expect_eq(access(path, F_OK), -1, "nothing written");
  cr_expect_eq(tfmm_snapshot_check(path, &s, msg, sizeof msg),
               TFMM_ERR_INVALID_ARGUMENT);
  free_bodies(&b);
}

/* A snapshot through a pipe (issue 29): a reader seeks and opens the path
 * more than once, so that a pipe would lose the bytes a first look read.
 * Neither probe nor read takes a byte of it: the probe tells nothing, the
 * read is refused saying why, and the pipe still holds the whole file. */
Test(snapshot_io, a_pipe_is_refused_and_left_unread, .timeout = 20) {
  make_dir();
  fbodies b = random_fbodies(8, test_fresh_seed());
  const char *file = in_dir("g.dat");
  write_gadget2(file, 0, &b);
  FILE *fp = fopen(file, "rb");
  cr_assert_not_null(fp);
  unsigned char bytes[4096];
  const size_t len = fread(bytes, 1, sizeof bytes, fp);
  fclose(fp);
  cr_assert(len > 264 && len < sizeof bytes);
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  cr_assert_eq(write(fds[1], bytes, len), (ssize_t)len);
  char path[64];
  snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
  cr_assert_eq(tfmm_snapshot_probe(path), TFMM_FORMAT_UNKNOWN);
  const tfmm_read_options g2 = {.format = TFMM_FORMAT_GADGET2};
  expect_refused(path, NULL, "not a regular file (a pipe or a device)",
                 "save it to a file");
  expect_refused(path, &g2, "not a regular file", NULL);
  close(fds[1]);
  size_t left = 0;
  ssize_t got;
  while ((got = read(fds[0], bytes, sizeof bytes)) > 0)
    left += (size_t)got;
  close(fds[0]);
  cr_expect_eq(left, len, "the pipe lost %zu bytes", len - left);
  free_fbodies(&b);
}
