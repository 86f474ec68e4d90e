/* Shared by the snapshot tests: cli_error's messages captured, random
 * snapshots, and small HDF5 editors to build foreign or broken files. */
#ifndef TFMM_SNAPSHOT_UTIL_H
#define TFMM_SNAPSHOT_UTIL_H

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

#endif
