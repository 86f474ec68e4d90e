/* Text files of bodies and forces. A body file has one body a line,
 * whitespace-separated "x y z m" or "x y z m vx vy vz"; '#' starts a
 * comment (whole-line or trailing) and blank lines are skipped; a line
 * holds at most BODYIO_MAX_LINE bytes. Output
 * numbers are printed with %.17g, so they read back to the same double. */
#ifndef TFMM_BODYIO_H
#define TFMM_BODYIO_H

#include <stddef.h>
#include <stdio.h>

#define BODYIO_MAX_LINE 65536

typedef struct bodyio_bodies {
  size_t n;
  double *pos;  /* 3n: x0 y0 z0 x1 ... */
  double *vel;  /* 3n: the velocity columns, zeros where a line has none */
  double *mass; /* n, each > 0 */
  size_t cap;   /* allocated bodies */
} bodyio_bodies;

/* Reads every body of path into out (zeroed first; release with
 * bodyio_free, also after a failure). Velocity columns are kept (zeros
 * for lines of 4 columns). On failure prints "tilefmm: FILE:LINE: what is
 * wrong" and returns 0. A binary file (a NUL or control byte in its
 * first block) is refused before its lines are parsed, named a binary
 * file: snapshots are told apart and read before (body_input.h).
 * path is marked as an input (atomic_file_protect): no output of the
 * command may replace it. */
int bodyio_read(const char *path, bodyio_bodies *out);

/* bodyio_read of the open stream fp (a pipe, a device, standard input),
 * named name in messages, read once from where it stands: a binary file
 * is refused from its first bytes, saying that a snapshot cannot come
 * through a pipe. fp is left open. */
int bodyio_read_stream(FILE *fp, const char *name, bodyio_bodies *out);

void bodyio_free(bodyio_bodies *b);

/* Write "ax ay az phi" and "x y z m vx vy vz" lines. They return 0 when
 * the stream reports an error (see ferror/errno), else 1. */
int bodyio_write_forces(FILE *fp, size_t n, const double *acc,
                        const double *pot);
int bodyio_write_bodies(FILE *fp, size_t n, const double *pos,
                        const double *vel, const double *mass);

#endif
