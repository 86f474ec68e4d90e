/* A command's output: an atomically replaced file (atomic_file.h), or
 * standard output when no path is given. */
#ifndef TFMM_OUTPUT_H
#define TFMM_OUTPUT_H

#include "atomic_file.h"

#include <stdio.h>

typedef struct output {
  FILE *fp;         /* write here */
  const char *name; /* for messages: the path or "standard output" */
  atomic_file af;
} output;

/* Opens path, or standard output when path is NULL. Prints what is wrong
 * and returns 0 on failure. */
int output_open(output *out, const char *path);

/* Reports a failed write (errno still set by it) and discards the file. */
void output_fail(output *out);

/* Removes the file without a message; harmless after output_close. */
void output_discard(output *out);

/* Commits the file or flushes standard output. Prints what is wrong and
 * returns 0 on failure; the file is then gone. */
int output_close(output *out);

#endif
