/* Output files that appear whole or not at all: the data go to a temporary
 * in the destination's directory, which is flushed, synced and renamed over
 * the destination only when everything succeeded. On any failure the
 * temporary is removed and an existing destination is left untouched.
 *
 * What the destination is decides how it is written:
 * - a regular file, or none yet: the temporary and the rename;
 * - a symbolic link: followed, link after link (a dangling one too), and
 *   its final target replaced as above; the link itself stays;
 * - a character device or a FIFO (/dev/null, a pipe): written through,
 *   directly, with no temporary and no rename, so that it stays what it
 *   is; such a write cannot be atomic;
 * - a directory, a block device or a socket: refused;
 * - "-", the commands' name of standard output (output.h): refused, for
 *   the outputs that come here cannot go there;
 * - a file the command reads (atomic_file_protect), whatever the path that
 *   names it: refused, so that an output never replaces an input. */
#ifndef TFMM_ATOMIC_FILE_H
#define TFMM_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct atomic_file {
  FILE *fp;   /* write here between open and commit */
  char *path; /* the destination (a link's target), for messages too */
  /* Where a writer that opens files by name (HDF5, gnuplot) writes: the
   * temporary while it exists, or the destination itself when it is
   * written through; NULL after commit or discard. */
  char *tmp_path;
  int direct; /* written through: no temporary, no rename */
  int watch;  /* its slot among the temporaries removed on a signal */
} atomic_file;

/* Creates the temporary (or opens a special file for writing). Prints
 * what is wrong and returns 0 on failure. */
int atomic_file_open(atomic_file *af, const char *path);

/* Checks, before the work that leads to it, that path, the value of the
 * option flag, could be opened by atomic_file_open: not "-", not a
 * directory or a file the command reads, and a new file can be made
 * beside it (one is made and removed; a device or a FIFO is not opened,
 * only checked for write access). Prints what is wrong, naming flag and
 * path, and returns 0; the open at the end checks again. */
int atomic_file_check(const char *flag, const char *path);

/* Flushes, syncs and renames the temporary over the destination. Prints
 * what is wrong, removes the temporary and returns 0 on failure. A thread
 * other than the one that opened a file may commit or discard it, and
 * several may be open at a time (a run's snapshot is synced while the
 * next one is written). */
int atomic_file_commit(atomic_file *af);

/* Closes and removes the temporary; harmless after commit or on a zeroed
 * atomic_file. A file written through is closed, not removed. */
void atomic_file_discard(atomic_file *af);

/* Marks path, a file the command reads, as one no output may replace: a
 * later atomic_file_open of the same file (same device and inode, through
 * any name, link or hard link) fails, naming both. Only regular files are
 * kept (path is copied), as many as the command reads. */
void atomic_file_protect(const char *path);

/* 1 when path is a file marked by atomic_file_protect. */
int atomic_file_is_protected(const char *path);

/* When name (a file name without its directory) is one of the
 * temporaries atomic_file_open makes, ".BASE.tmp-XXXXXX" with six letters
 * or digits, returns the length of BASE (which starts at name + 1); else
 * 0. A run sweeps its own stale temporaries with it. */
size_t atomic_file_temporary_base(const char *name);

#endif
