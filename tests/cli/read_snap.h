/* The snapshots a test's runs wrote into its scratch directory, read back
 * with apps/snapshot.c (for the suites of test_run). */
#ifndef TFMM_TEST_READ_SNAP_H
#define TFMM_TEST_READ_SNAP_H

#include "snapshot.h"

/* The snapshot name of the scratch directory, whole (snapshot_read); a
 * file that cannot be read fails the test. Release with snapshot_free. */
snapshot read_snap(const char *name);

#endif
