/* The snapshot writer's direct chunks (src/io/hdf5_chunks.h) against
 * HDF5's own Fletcher-32 filter: the same data written both ways, by
 * H5Dwrite through the filter and by tfmm_hdf5_write_chunks, must give
 * the same stored chunks, checksums included, byte for byte
 * (H5Dread_chunk), and read back (with HDF5 checking every checksum) as
 * the data written; a changed byte is refused on read. Rows of 1, 3 and
 * 24 bytes, chunks of 7 and 9 bytes (odd lengths: the checksum's
 * last-byte rule) and of 1,000 and 43,690 rows, a last chunk full or
 * partial, 1-D and 2-D. */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5_chunks.h"

#include "testutil.h"

#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A chunked dataset of rows x cols (cols 0: 1-D) of type `type`, whose
 * only filter is Fletcher-32, in file. */
static hid_t make_set(hid_t file, const char *name, hid_t type, size_t rows,
                      int cols, size_t chunk_rows) {
  const hsize_t dims[2] = {rows, (hsize_t)cols},
                chunk[2] = {chunk_rows, (hsize_t)cols};
  const int rank = cols > 0 ? 2 : 1;
  const hid_t space = H5Screate_simple(rank, dims, NULL);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  cr_assert(space >= 0 && dcpl >= 0);
  cr_assert(H5Pset_chunk(dcpl, rank, chunk) >= 0);
  cr_assert(H5Pset_fletcher32(dcpl) >= 0);
  const hid_t set =
      H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  cr_assert(set >= 0, "%s", name);
  H5Pclose(dcpl);
  H5Sclose(space);
  return set;
}

/* The stored bytes of chunk c (its checksum included) into out (size
 * bytes at most); their count. */
static size_t stored(hid_t set, size_t c, size_t chunk_rows, void *out,
                     size_t size) {
  const hsize_t offset[2] = {c * chunk_rows, 0};
  hsize_t bytes = 0;
  uint32_t mask = 0;
  cr_assert(H5Dget_chunk_storage_size(set, offset, &bytes) >= 0);
  cr_assert_leq(bytes, size);
  cr_assert(H5Dread_chunk(set, H5P_DEFAULT, offset, &mask, out) >= 0);
  cr_assert_eq(mask, 0u);
  return (size_t)bytes;
}

static void same_both_ways(hid_t type, size_t elem, size_t rows, int cols,
                           size_t chunk_rows, uint64_t seed) {
  char path[] = "/tmp/tfmm-hdf5-chunks-XXXXXX";
  const int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  const size_t row_bytes = elem * (size_t)(cols > 0 ? cols : 1);
  unsigned char *data = malloc(rows * row_bytes),
                *back = malloc(rows * row_bytes);
  cr_assert(data && back);
  test_rng r = {seed};
  for (size_t i = 0; i < rows * row_bytes; i++)
    data[i] = (unsigned char)(test_uniform(&r) * 256);
  const hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(file >= 0);
  const hid_t filtered =
                  make_set(file, "filtered", type, rows, cols, chunk_rows),
              direct = make_set(file, "direct", type, rows, cols, chunk_rows);
  cr_assert(H5Dwrite(filtered, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  cr_assert_eq(
      tfmm_hdf5_write_chunks(direct, rows, row_bytes, chunk_rows, data, NULL),
      1);
  const size_t most = chunk_rows * row_bytes + 4,
               chunks = (rows + chunk_rows - 1) / chunk_rows;
  unsigned char *a = malloc(most), *b = malloc(most);
  cr_assert(a && b);
  for (size_t c = 0; c < chunks; c++) {
    const size_t na = stored(filtered, c, chunk_rows, a, most),
                 nb = stored(direct, c, chunk_rows, b, most);
    cr_assert_eq(na, nb, "rows %zu x %zu bytes, chunk %zu", rows, row_bytes, c);
    /* The padding of a partial last chunk is the filter's fill, which
     * need not be zero: the rows and the checksum are compared there
     * only when the chunk is full. */
    const size_t have =
        (rows - c * chunk_rows < chunk_rows ? rows - c * chunk_rows
                                            : chunk_rows) *
        row_bytes;
    cr_assert_eq(memcmp(a, b, have), 0, "chunk %zu's rows", c);
    if (have == chunk_rows * row_bytes)
      cr_assert_eq(memcmp(a, b, na), 0, "chunk %zu's checksum", c);
  }
  cr_assert(H5Dread(direct, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
  cr_assert_eq(memcmp(back, data, rows * row_bytes), 0);
  H5Dclose(filtered);
  H5Dclose(direct);
  H5Fclose(file);
  free(a), free(b), free(data), free(back);
  unlink(path);
}

Test(hdf5_chunks, as_hdf5s_filter_writes_them) {
  const uint64_t seed = test_fresh_seed();
  same_both_ways(H5T_NATIVE_UCHAR, 1, 1000, 0, 7, seed);  /* 7-byte chunks */
  same_both_ways(H5T_NATIVE_UCHAR, 1, 3, 3, 3, seed + 1); /* one of 9 */
  same_both_ways(H5T_NATIVE_DOUBLE, 8, 3000, 3, 1000, seed + 2); /* full */
  same_both_ways(H5T_NATIVE_DOUBLE, 8, 3001, 3, 1000, seed + 3);
  same_both_ways(H5T_NATIVE_UINT64, 8, 70000, 0, 43690, seed + 4);
}

/* A checksum HDF5 checks: a byte changed in a stored chunk is refused. */
Test(hdf5_chunks, a_changed_byte_is_refused) {
  char path[] = "/tmp/tfmm-hdf5-chunks-XXXXXX";
  const int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  double data[300], back[300];
  for (int i = 0; i < 300; i++)
    data[i] = i * 0.5;
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t set = make_set(file, "x", H5T_NATIVE_DOUBLE, 300, 0, 100);
  cr_assert_eq(tfmm_hdf5_write_chunks(set, 300, 8, 100, data, NULL), 1);
  const hsize_t offset[1] = {100};
  haddr_t addr = 0;
  cr_assert(H5Dget_chunk_info_by_coord(set, offset, NULL, &addr, NULL) >= 0);
  H5Dclose(set);
  H5Fclose(file);
  FILE *f = fopen(path, "r+b");
  cr_assert_not_null(f);
  cr_assert_eq(fseek(f, (long)addr + 17, SEEK_SET), 0);
  const int byte = fgetc(f);
  cr_assert_eq(fseek(f, (long)addr + 17, SEEK_SET), 0);
  fputc(byte ^ 0x10, f);
  fclose(f);
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  set = H5Dopen2(file, "x", H5P_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  cr_expect(
      H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0,
      "a changed byte was read");
  H5Dclose(set);
  H5Fclose(file);
  unlink(path);
}
