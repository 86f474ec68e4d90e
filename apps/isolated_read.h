/* Reading a snapshot in a child process (issue 29): libhdf5 trusts the
 * metadata of the files it reads, and a file in HDF5's earliest format
 * (h5py's default, GADGET-4's and SWIFT's files) carries no checksum on
 * it: one damaged byte can crash libhdf5 (SIGSEGV in H5Aexists, H5HG_read)
 * or send it round a loop for ever. The library cannot catch either, so
 * the command line reads HDF5 files in a forked child that sends what it
 * read back through a pipe; a child killed by a signal, or past its bound
 * of CPU time, becomes a message and a refusal, never the end of the
 * tool. The other formats are read by tilefmm's own code, in process. */
#ifndef TFMM_ISOLATED_READ_H
#define TFMM_ISOLATED_READ_H

#include "tilefmm.h"

#include <stddef.h>

/* The environment variables that tune it: TILEFMM_READ_ISOLATION=off
 * reads in process (a debugger, or a snapshot too large to hold twice for
 * a moment); TILEFMM_READ_CPU_LIMIT=S bounds the child's CPU time to S
 * seconds (default 60 s plus 1 s per 4 MiB of the file). */
#define ISOLATED_READ_ENV_OFF "TILEFMM_READ_ISOLATION"
#define ISOLATED_READ_ENV_CPU "TILEFMM_READ_CPU_LIMIT"

/* tfmm_snapshot_read, HDF5 files in a child process. The same contract:
 * out is zeroed, filled on success, and released with tfmm_snapshot_free
 * either way; message gets why not. A child that dies (a signal, its CPU
 * bound) gives TFMM_ERR_FILE and "PATH: damaged HDF5 file: ...". When no
 * child can be made (fork fails), the file is read in process. */
tfmm_status isolated_read(const char *path, const tfmm_read_options *o,
                          tfmm_snapshot *out, char *message, size_t size);

#endif
