/* The snapshot writer's datasets (src/io/hdf5_write.c, hdf5_chunks.c),
 * read back by HDF5 itself and compared with what was written, computed
 * here independently: every value bit for bit (the coordinates plus the
 * shift, whose box this test finds from the bodies itself), every stored
 * chunk one chunk plus its 4 checksum bytes, each checksum equal to HDF5's
 * own loop over the chunk as stored (the padding of a partial last chunk
 * zeros), and every dataset read through HDF5's Fletcher-32 filter (which
 * refuses a chunk whose checksum fails). Sizes whose chunks end partial
 * (1, 7, 43,691 and 300,007 bodies: a chunk of 3 doubles a row holds
 * 43,690 rows, of one double 131,072) and enough chunks to go round the
 * writer's ring of buffers; snapshot (shifted) and checkpoint (as they
 * are). Also: the bodies' check, now on several threads, still names the
 * first body at fault. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>
#include <unistd.h>

/* HDF5's Fletcher-32 (H5_checksum_fletcher32 in H5checksum.c), word by
 * word as HDF5 writes it: the truth the writer's vectorised sums must
 * meet. */
static uint32_t hdf5_fletcher32(const unsigned char *data, size_t bytes) {
  size_t len = bytes / 2;
  uint32_t sum1 = 0, sum2 = 0;
  while (len > 0) {
    size_t block = len > 360 ? 360 : len;
    len -= block;
    do {
      sum1 += (uint32_t)data[0] << 8 | data[1];
      data += 2;
      sum2 += sum1;
    } while (--block > 0);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (bytes % 2 != 0) {
    sum1 += (uint32_t)data[0] << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return sum2 << 16 | sum1;
}

/* Bodies of every field, fresh random values of mixed signs and scales
 * (and a -0 coordinate, which a shift of 0 would have turned into +0). */
static tfmm_snapshot make_bodies(size_t n, uint64_t seed) {
  test_rng r = {seed};
  tfmm_snapshot s = {.n = n, .time = 0.5};
  s.pos = malloc(3 * n * sizeof *s.pos);
  s.vel = malloc(3 * n * sizeof *s.vel);
  s.acc = malloc(3 * n * sizeof *s.acc);
  s.mass = malloc(n * sizeof *s.mass);
  s.pot = malloc(n * sizeof *s.pot);
  s.ids = malloc(n * sizeof *s.ids);
  s.bins = malloc(n);
  cr_assert(s.pos && s.vel && s.acc && s.mass && s.pot && s.ids && s.bins);
  for (size_t i = 0; i < 3 * n; i++) {
    s.pos[i] = (test_uniform(&r) - 0.5) * ldexp(1, (int)(i % 7) - 3);
    s.vel[i] = test_uniform(&r) - 0.5;
    s.acc[i] = (test_uniform(&r) - 0.5) * 1e6;
  }
  s.pos[0] = -0.0;
  for (size_t i = 0; i < n; i++) {
    s.mass[i] = (0.5 + test_uniform(&r)) / (double)n;
    s.pot[i] = -test_uniform(&r);
    s.ids[i] = (uint64_t)(test_uniform(&r) * 0x1p53) + i;
    s.bins[i] = (signed char)(test_uniform(&r) * 60);
  }
  return s;
}

/* The box the format defines (tilefmm.h, tfmm_snapshot_write): twice the
 * largest |coordinate|, made larger by 2^-20; 1 for bodies at the origin. */
static double box_of(const tfmm_snapshot *s) {
  double most = 0;
  for (size_t i = 0; i < 3 * s->n; i++)
    most = fabs(s->pos[i]) > most ? fabs(s->pos[i]) : most;
  return most > 0 ? 2 * most * (1 + 0x1p-20) : 1;
}

/* PartType1/name read whole through HDF5 (its Fletcher-32 filter checks
 * every chunk) into a poisoned buffer of bytes bytes, compared with want;
 * then every stored chunk: its size, its padding, its checksum. */
static void expect_dataset(hid_t file, const char *name, hid_t type,
                           const void *want, size_t bytes) {
  char path[64];
  snprintf(path, sizeof path, "PartType1/%s", name);
  const hid_t set = H5Dopen2(file, path, H5P_DEFAULT);
  cr_assert_geq(set, 0, "%s", path);
  unsigned char *got = malloc(bytes);
  cr_assert_not_null(got);
  memset(got, 0xa5, bytes);
  cr_assert_geq(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, got), 0,
                "%s: HDF5 refused to read it (a checksum?)", path);
  cr_expect_eq(memcmp(got, want, bytes), 0, "%s differs", path);
  free(got);

  const hid_t dcpl = H5Dget_create_plist(set), space = H5Dget_space(set);
  hsize_t dims[2] = {0, 1}, chunk[2] = {0, 1};
  const int rank = H5Sget_simple_extent_dims(space, dims, NULL);
  cr_assert_eq(H5Pget_chunk(dcpl, rank, chunk), rank);
  const size_t row_bytes = H5Tget_size(type) * (rank == 2 ? dims[1] : 1);
  const size_t chunk_bytes = (size_t)chunk[0] * row_bytes;
  const size_t chunks = (size_t)((dims[0] + chunk[0] - 1) / chunk[0]);
  unsigned char *raw = malloc(chunk_bytes + 4);
  cr_assert_not_null(raw);
  for (size_t c = 0; c < chunks; c++) {
    const hsize_t offset[2] = {c * chunk[0], 0};
    hsize_t stored = 0;
    uint32_t mask = 1;
    cr_assert_geq(H5Dget_chunk_storage_size(set, offset, &stored), 0);
    cr_assert_eq(stored, chunk_bytes + 4, "%s chunk %zu: %llu bytes", path, c,
                 (unsigned long long)stored);
    cr_assert_geq(H5Dread_chunk(set, H5P_DEFAULT, offset, &mask, raw), 0);
    cr_expect_eq(mask, 0u);
    const size_t first = c * chunk_bytes, have = bytes - first < chunk_bytes
                                                     ? bytes - first
                                                     : chunk_bytes;
    cr_expect_eq(memcmp(raw, (const unsigned char *)want + first, have), 0,
                 "%s chunk %zu's rows", path, c);
    for (size_t k = have; k < chunk_bytes; k++)
      cr_assert_eq(raw[k], 0, "%s chunk %zu: padding byte %zu", path, c, k);
    const uint32_t sum = hdf5_fletcher32(raw, chunk_bytes);
    const uint32_t stored_sum = (uint32_t)raw[chunk_bytes] |
                                (uint32_t)raw[chunk_bytes + 1] << 8 |
                                (uint32_t)raw[chunk_bytes + 2] << 16 |
                                (uint32_t)raw[chunk_bytes + 3] << 24;
    cr_expect_eq(stored_sum, sum, "%s chunk %zu: checksum %08x, HDF5's %08x",
                 path, c, stored_sum, sum);
  }
  free(raw);
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Dclose(set);
}

/* The Header's attribute name, three doubles, each equal to value. */
static void expect_three(hid_t file, const char *name, double value) {
  const hid_t header = H5Gopen2(file, "Header", H5P_DEFAULT);
  const hid_t attr = H5Aopen(header, name, H5P_DEFAULT);
  cr_assert_geq(attr, 0, "Header/%s", name);
  double got[3] = {NAN, NAN, NAN};
  cr_assert_geq(H5Aread(attr, H5T_NATIVE_DOUBLE, got), 0);
  for (int k = 0; k < 3; k++)
    cr_expect_eq(memcmp(&got[k], &value, sizeof value), 0,
                 "Header/%s[%d] %.17g, want %.17g", name, k, got[k], value);
  H5Aclose(attr);
  H5Gclose(header);
}

static void written_as_read(size_t n, int checkpoint, uint64_t seed) {
  tfmm_snapshot s = make_bodies(n, seed);
  char path[] = "/tmp/tfmm-snapshot-write-XXXXXX";
  const int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  const tfmm_snapshot_output all = {TFMM_SNAPSHOT_ALL, 0, 0};
  char msg[512] = "";
  cr_assert_eq(tfmm_snapshot_write_file(
                   path, path, &s, checkpoint ? NULL : &all, msg, sizeof msg),
               TFMM_OK, "%s", msg);

  const double box = box_of(&s), shift = checkpoint ? 0 : box / 2;
  double *coords = malloc(3 * n * sizeof *coords);
  cr_assert_not_null(coords);
  for (size_t i = 0; i < 3 * n; i++)
    coords[i] = checkpoint ? s.pos[i] : s.pos[i] + shift;
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert_geq(file, 0);
  expect_three(file, "BoxSize", box);
  expect_three(file, "Shift", shift);
  const hid_t f64 = H5T_NATIVE_DOUBLE;
  expect_dataset(file, "Coordinates", f64, coords, 3 * n * sizeof(double));
  expect_dataset(file, "Velocities", f64, s.vel, 3 * n * sizeof(double));
  expect_dataset(file, "Accelerations", f64, s.acc, 3 * n * sizeof(double));
  expect_dataset(file, "Masses", f64, s.mass, n * sizeof(double));
  expect_dataset(file, "Potentials", f64, s.pot, n * sizeof(double));
  expect_dataset(file, "ParticleIDs", H5T_NATIVE_UINT64, s.ids,
                 n * sizeof(uint64_t));
  expect_dataset(file, "TimeBins", H5T_NATIVE_SCHAR, s.bins, n);
  H5Fclose(file);
  unlink(path);
  free(coords);
  tfmm_snapshot_free(&s);
}

Test(snapshot_write, datasets_read_back_by_hdf5_as_written) {
  const uint64_t seed = test_fresh_seed();
  const size_t sizes[] = {1, 7, 43691, 300007};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    written_as_read(sizes[k], 0, seed + 2 * k);
    written_as_read(sizes[k], 1, seed + 2 * k + 1);
  }
}

/* The check runs on several threads, a part each: whatever part holds
 * them, the first body at fault is the one named, and nothing is
 * written. */
static void expect_first_named(tfmm_snapshot *s, size_t first,
                               const char *what) {
  char msg[512] = "";
  cr_assert_eq(tfmm_snapshot_check("x.hdf5", s, msg, sizeof msg),
               TFMM_ERR_INVALID_ARGUMENT);
  char want[128];
  snprintf(want, sizeof want, "body %zu (ParticleID %llu) has %s", first,
           (unsigned long long)s->ids[first], what);
  cr_expect_not_null(strstr(msg, want), "%s, want %s", msg, want);
}

Test(snapshot_write, first_body_at_fault_is_named) {
  const size_t n = 1000003;
  tfmm_snapshot s = make_bodies(n, test_fresh_seed());
  char msg[512] = "";
  cr_assert_eq(tfmm_snapshot_check("x.hdf5", &s, msg, sizeof msg), TFMM_OK,
               "%s", msg);
  s.mass[n - 1] = 0;
  expect_first_named(&s, n - 1, "a mass <= 0");
  s.vel[3 * 700001 + 2] = INFINITY;
  expect_first_named(&s, 700001, "a non-finite velocity");
  s.pos[3 * 400000 + 1] = NAN;
  s.mass[400000] = -1; /* the coordinate is named first, as body by body */
  expect_first_named(&s, 400000, "a non-finite coordinate");
  s.mass[4095] = NAN;
  expect_first_named(&s, 4095, "a non-finite mass");
  s.mass[1] = -0.0;
  expect_first_named(&s, 1, "a mass <= 0");
  tfmm_snapshot_free(&s);
}
