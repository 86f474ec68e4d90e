/* Reading and writing body and force text files (see bodyio.h). Millions of
 * lines must read fast: large blocks cut into lines in place, strtod on
 * words cut in place, and arrays that grow geometrically. */
#define _POSIX_C_SOURCE 200809L
#include "bodyio.h"

#include "atomic_file.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLUMNS 7

/* A text body file holds no NUL or control byte; a file that does is
 * binary. */
#define BINARY_MESSAGE                                                         \
  "a binary file, neither text nor a snapshot tilefmm reads (HDF5 in the "     \
  "GADGET/SWIFT layout, Tipsy, GADGET-2 binary format 1 or 2)"
#define NUL_MESSAGE "contains a NUL byte: " BINARY_MESSAGE
/* A snapshot is read by seeking in it, which a pipe does not allow. */
#define STREAM_BINARY_MESSAGE                                                  \
  "a binary file through a pipe or a device, where only a text body file "     \
  "can be read: a snapshot (HDF5, Tipsy, GADGET-2) is read by seeking in "     \
  "it, which a pipe does not allow; save it to a file and name that file"

/* A line is at most BODYIO_MAX_LINE bytes; the buffer holds several, so
 * that most reads bring many lines. */
#define BLOCK (4 * BODYIO_MAX_LINE)

static const char *const column_names[MAX_COLUMNS] = {"x",  "y",  "z", "m",
                                                      "vx", "vy", "vz"};

/* Where a file is being read, for messages; stream: through a pipe or a
 * device (bodyio_read_stream). */
typedef struct reader {
  const char *path;
  size_t line;
  int stream;
} reader;

static void line_error(const reader *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void line_error(const reader *r, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  cli_error("%s:%zu: %s", r->path, r->line, what);
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
         c == '\f';
}

/* Parses one word; it must be a number to its last character and finite
 * (strtod takes "nan" and "inf", and turns 1e999 into inf). */
static int parse_word(const reader *r, const char *word, int column,
                      double *out) {
  char *end;
  const double v = strtod(word, &end);
  if (end == word || *end != '\0') {
    line_error(r, "'%s' in column %d (%s) is not a number", word, column,
               column_names[column - 1]);
    return 0;
  }
  if (!isfinite(v)) {
    line_error(r, "'%s' in column %d (%s) is not a finite number", word, column,
               column_names[column - 1]);
    return 0;
  }
  *out = v;
  return 1;
}

/* Splits line (comment already cut) into at most MAX_COLUMNS numbers.
 * Returns the number of words, or -1 after reporting a bad one. Words past
 * MAX_COLUMNS are counted, not parsed. */
static int parse_columns(const reader *r, char *line,
                         double values[MAX_COLUMNS]) {
  int count = 0;
  char *p = line;
  for (;;) {
    while (is_space(*p))
      p++;
    if (*p == '\0')
      return count;
    char *word = p;
    while (*p != '\0' && !is_space(*p))
      p++;
    const int at_end = (*p == '\0');
    *p = '\0';
    if (count < MAX_COLUMNS && !parse_word(r, word, count + 1, &values[count]))
      return -1;
    count++;
    if (at_end)
      return count;
    p++;
  }
}

static int grow(bodyio_bodies *b) {
  const size_t cap = b->cap == 0 ? 4096 : 2 * b->cap;
  if (cap > SIZE_MAX / (3 * sizeof(double)))
    return 0;
  double *pos = realloc(b->pos, cap * 3 * sizeof(double));
  if (pos != NULL)
    b->pos = pos;
  double *vel = realloc(b->vel, cap * 3 * sizeof(double));
  if (vel != NULL)
    b->vel = vel;
  double *mass = realloc(b->mass, cap * sizeof(double));
  if (mass != NULL)
    b->mass = mass;
  if (pos == NULL || vel == NULL || mass == NULL)
    return 0;
  b->cap = cap;
  return 1;
}

/* Handles one line of len bytes: a body, or nothing for a blank line or a
 * comment. */
static int read_line(const reader *r, char *line, size_t len,
                     bodyio_bodies *b) {
  if (strlen(line) != len) {
    line_error(r, "%s", NUL_MESSAGE);
    return 0;
  }
  char *hash = strchr(line, '#');
  if (hash != NULL)
    *hash = '\0';
  double v[MAX_COLUMNS];
  const int count = parse_columns(r, line, v);
  if (count <= 0)
    return count == 0;
  if (count != 4 && count != MAX_COLUMNS) {
    line_error(r,
               "expected 4 columns (x y z m) or 7 (x y z m vx vy vz), "
               "found %d",
               count);
    return 0;
  }
  if (!(v[3] > 0)) {
    line_error(r, "mass (column 4) must be > 0, found %.17g", v[3]);
    return 0;
  }
  if (b->n == b->cap && !grow(b)) {
    line_error(r, "out of memory");
    return 0;
  }
  memcpy(b->pos + 3 * b->n, v, 3 * sizeof(double));
  for (int d = 0; d < 3; d++)
    b->vel[3 * b->n + d] = count == MAX_COLUMNS ? v[4 + d] : 0.0;
  b->mass[b->n++] = v[3];
  return 1;
}

/* Whether c never occurs in text: NUL and the control characters but
 * whitespace (bytes >= 0x80 may be UTF-8 in a comment). */
static int is_binary_byte(unsigned char c) {
  return (c < 0x20 && !is_space((char)c)) || c == 0x7f;
}

/* Refuses a binary file from the first len bytes that were read, before
 * they are parsed as text: one with a NUL or control byte is named a
 * binary file, at that byte's line (random bytes hold one within a few
 * dozen bytes). Snapshots tilefmm reads were told apart before
 * (body_input_kind_of). */
static int refuse_binary(const reader *r, const char *buf, size_t len) {
  size_t at = 0, line = 1;
  while (at < len && !is_binary_byte((unsigned char)buf[at]))
    line += buf[at++] == '\n';
  if (at == len)
    return 0;
  /* A stream is told from the bytes read: they cannot be read again. */
  const char *what = r->stream ? STREAM_BINARY_MESSAGE : BINARY_MESSAGE;
  if (buf[at] == '\0')
    line_error(&(reader){r->path, line, 0}, "contains a NUL byte: %s", what);
  else
    line_error(&(reader){r->path, line, 0},
               "contains the control byte 0x%02x: %s",
               (unsigned)(unsigned char)buf[at], what);
  return 1;
}

static void read_failed(const reader *r) {
  cli_error("%s:%zu: cannot read: %s", r->path, r->line + 1,
            errno != 0 ? strerror(errno) : "I/O error");
}

/* Cuts the file into lines in buf: a line that ends at the end of the file
 * without '\n' counts; one longer than BODYIO_MAX_LINE is an error, so
 * that a file with no newline (/dev/zero, a binary) is refused at once
 * instead of being read whole into memory. */
static int read_stream(FILE *fp, reader *r, bodyio_bodies *b) {
  char *buf = malloc(BLOCK + 1);
  if (buf == NULL) {
    cli_error("%s: out of memory", r->path);
    return 0;
  }
  size_t start = 0, end = 0;
  int ok = 1, eof = 0;
  errno = 0;
  while (ok) {
    char *nl = memchr(buf + start, '\n', end - start);
    if (nl == NULL && end - start > BODYIO_MAX_LINE) {
      line_error(&(reader){r->path, r->line + 1, r->stream},
                 "a line longer than %d bytes: not a text body file",
                 BODYIO_MAX_LINE);
      ok = 0;
    } else if (nl == NULL && eof) {
      if (end > start) { /* the last line, with no '\n' */
        buf[end] = '\0';
        r->line++;
        ok = read_line(r, buf + start, end - start, b);
      }
      break;
    } else if (nl == NULL) {
      memmove(buf, buf + start, end - start);
      end -= start;
      start = 0;
      const size_t got = fread(buf + end, 1, BLOCK - end, fp);
      const int first = r->line == 0 && end == 0;
      end += got;
      if (got == 0 && ferror(fp)) {
        read_failed(r);
        ok = 0;
      } else if (first && refuse_binary(r, buf, end))
        ok = 0;
      eof = got == 0;
    } else {
      *nl = '\0';
      r->line++;
      ok = read_line(r, buf + start, (size_t)(nl - (buf + start)), b);
      start = (size_t)(nl + 1 - buf);
    }
  }
  free(buf);
  return ok;
}

/* The bodies of the open stream fp, named name; no bodies is an error. */
static int read_all(FILE *fp, const char *name, int stream,
                    bodyio_bodies *out) {
  reader r = {name, 0, stream};
  int ok = read_stream(fp, &r, out);
  if (ok && out->n == 0) {
    cli_error("%s: no bodies (the file is empty or holds only blank lines "
              "and comments)",
              name);
    ok = 0;
  }
  return ok;
}

int bodyio_read(const char *path, bodyio_bodies *out) {
  memset(out, 0, sizeof *out);
  FILE *fp = fopen(path, "r");
  if (fp == NULL) {
    cli_error("%s: cannot open: %s", path, strerror(errno));
    return 0;
  }
  atomic_file_protect(path); /* no output of this command may replace it */
  const int ok = read_all(fp, path, 0, out);
  fclose(fp);
  return ok;
}

int bodyio_read_stream(FILE *fp, const char *name, bodyio_bodies *out) {
  memset(out, 0, sizeof *out);
  return read_all(fp, name, 1, out);
}

void bodyio_free(bodyio_bodies *b) {
  free(b->pos);
  free(b->vel);
  free(b->mass);
  memset(b, 0, sizeof *b);
}

int bodyio_write_forces(FILE *fp, size_t n, const double *acc,
                        const double *pot) {
  for (size_t i = 0; i < n; i++)
    if (fprintf(fp, "%.17g %.17g %.17g %.17g\n", acc[3 * i], acc[3 * i + 1],
                acc[3 * i + 2], pot[i]) < 0)
      return 0;
  return !ferror(fp);
}

int bodyio_write_bodies(FILE *fp, size_t n, const double *pos,
                        const double *vel, const double *mass) {
  for (size_t i = 0; i < n; i++) {
    const double *x = pos + 3 * i, *v = vel + 3 * i;
    if (fprintf(fp, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", x[0], x[1],
                x[2], mass[i], v[0], v[1], v[2]) < 0)
      return 0;
  }
  return !ferror(fp);
}
