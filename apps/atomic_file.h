/* Output files that appear whole or not at all: the data go to a temporary
 * in the destination's directory, which is flushed, synced and renamed over
 * the destination only when everything succeeded. On any failure the
 * temporary is removed and an existing destination is left untouched. */
#ifndef TFMM_ATOMIC_FILE_H
#define TFMM_ATOMIC_FILE_H

#include <stdio.h>

typedef struct atomic_file {
  FILE *fp;       /* write here between open and commit */
  char *path;     /* the destination */
  char *tmp_path; /* the temporary while it exists, else NULL */
} atomic_file;

/* Creates the temporary. Prints what is wrong and returns 0 on failure. */
int atomic_file_open(atomic_file *af, const char *path);

/* Flushes, syncs and renames the temporary over the destination. Prints
 * what is wrong, removes the temporary and returns 0 on failure. */
int atomic_file_commit(atomic_file *af);

/* Closes and removes the temporary; harmless after commit or on a zeroed
 * atomic_file. */
void atomic_file_discard(atomic_file *af);

#endif
