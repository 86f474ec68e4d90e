/* Shared by the snapshot tests: cli_error's messages captured, random
 * snapshots, and small HDF5 editors to build foreign or broken files. */
#ifndef TFMM_SNAPSHOT_UTIL_H
#define TFMM_SNAPSHOT_UTIL_H

#include "harness.h"
#include "snapshot.h"

#include <hdf5.h>

#include <stddef.h>
#include <stdint.h>

/* Everything cli_error printed since the last errors_clear, one message a
 * line without the "tilefmm: " prefix. */
const char *errors(void);
void errors_clear(void);
/* Asserts that the messages hold every non-NULL needle. */
void assert_errors_have(const char *needle, const char *needle2);

/* n bodies of random finite values (positive masses, random bit patterns
 * over many decades) with IDs, acc and pot too when extras, a few
 * parameters and, when extras, run state; release with snapshot_free. */
snapshot random_snapshot(size_t n, uint64_t seed, int extras);

/* Asserts that b holds the same bits as a. */
void assert_same_snapshot(const snapshot *a, const snapshot *b);

/* Reads path, asserting that the read fails and names every needle. */
void expect_read_failure(const char *path, const char *needle,
                         const char *needle2);

/* HDF5 editors, each on a file opened read-write for one change. */
hid_t h5_open(const char *path);
void h5_close(hid_t file);
/* An attribute of count values (count 0: a scalar). */
void h5_attr(hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
             size_t count, const void *data);
/* h5_attr on the group of file at group, opened and closed around it. */
void h5_set_attr(hid_t file, const char *group, const char *name,
                 hid_t file_type, hid_t mem_type, size_t count,
                 const void *data);
/* A dataset of rank dims[0] x dims[1] (rank 1: dims[0]). */
void h5_dataset(hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
                int rank, const size_t *dims, const void *data);
/* Sets element index of the double dataset name to value. */
void h5_poke(hid_t file, const char *name, size_t index, double value);
/* Rewrites the attributes of group (creation order kept) as
 * variable-length strings, as tilefmm wrote them before fixed-length
 * ones: they then live in the file's global heap. */
void h5_strings_to_variable_length(hid_t file, const char *group);
/* A copy of the snapshot src at dst, after a user block of userblock
 * bytes (512, 1024, 2048, ...) that holds text. */
void h5_copy_with_user_block(const char *src, const char *dst,
                             size_t userblock);

/* Whole files, by path (read_bytes: harness.h). */
void write_bytes(const char *path, const void *bytes, size_t len);
/* Where needle first occurs in bytes[0 .. len), or -1. */
long find_bytes(const unsigned char *bytes, size_t len, const void *needle,
                size_t needle_len);
/* Removes a directory of files. */
void remove_dir(const char *path);

/* A short run of the tool into the scratch directory dir (removed first,
 * with what it held): 32 Plummer
 * bodies, direct summation, one step on one thread: dir/snapshot_0000.hdf5,
 * dir/checkpoint.hdf5 (step 1) and dir/statistics.csv. */
void small_run(const char *dir);

#endif
