/* A command's output: an atomically replaced file (atomic_file.h), or
 * standard output when no path or "-" is given. */
#ifndef TFMM_OUTPUT_H
#define TFMM_OUTPUT_H

#include "atomic_file.h"

#include <stdio.h>

typedef struct output {
  FILE *fp;         /* write here */
  const char *name; /* for messages: the path or "standard output" */
  atomic_file af;
} output;

/* The name of standard output as an output path (--out -), as "-" is
 * standard input's as an input (body_input.h). */
#define OUTPUT_STDOUT "-"

/* Whether path is standard output: NULL or "-". */
int output_is_stdout(const char *path);

/* A binary file (what: "an HDF5 snapshot", "a PNG picture") is not
 * written to standard output: when path, given to flag, is "-", prints
 * why and returns 1; else 0. */
int output_refuse_stdout(const char *flag, const char *path, const char *what);

/* Checks, before the work that leads to it, that path, flag's value,
 * can be opened by output_open: standard output always can; a file is
 * checked by atomic_file_check. Prints what is wrong, naming flag and
 * path, and returns 0. */
int output_check(const char *flag, const char *path);

/* Whether path names an HDF5 file by its extension (.hdf5, .h5, .hdf):
 * the default format of an --out that may be text or HDF5. */
int output_hdf5_name(const char *path);

/* Opens path, or standard output when path is NULL or "-". Prints what is
 * wrong and returns 0 on failure. */
int output_open(output *out, const char *path);

/* Reports a failed write (errno still set by it) and discards the file. */
void output_fail(output *out);

/* Removes the file without a message; harmless after output_close. */
void output_discard(output *out);

/* Commits the file or flushes standard output. Prints what is wrong and
 * returns 0 on failure; the file is then gone. */
int output_close(output *out);

#endif
