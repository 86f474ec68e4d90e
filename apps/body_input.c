/* Reading the bodies of --in, from a snapshot or a text file (see
 * body_input.h). */
#define _POSIX_C_SOURCE 200809L
#include "body_input.h"

#include "atomic_file.h"
#include "cli.h"
#include "snapshot.h"
#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int body_input_parse_types(const char *text, uint64_t *mask) {
  if (strcmp(text, "all") == 0) {
    *mask = SNAPSHOT_TYPES_ALL;
    return 1;
  }
  uint64_t m = 0;
  const char *p = text;
  for (;;) {
    if (*p < '0' || *p > '9')
      return 0;
    char *end;
    errno = 0;
    const unsigned long k = strtoul(p, &end, 10);
    if (errno != 0 || k > 63)
      return 0;
    m |= (uint64_t)1 << k;
    if (*end == '\0')
      break;
    if (*end != ',')
      return 0;
    p = end + 1;
  }
  *mask = m;
  return 1;
}

int body_input_types_ok(const void *value) {
  uint64_t mask;
  return body_input_parse_types(*(const char *const *)value, &mask);
}

/* Whether standard input is a regular file ('< FILE'). */
static int stdin_is_regular(void) {
  struct stat st;
  return fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
}

const char *body_input_path(const char *path) {
  return strcmp(path, BODY_INPUT_STDIN) == 0 && stdin_is_regular()
             ? "/dev/stdin"
             : path;
}

int body_input_is_stream(const char *path) {
  struct stat st;
  path = body_input_path(path);
  return strcmp(path, BODY_INPUT_STDIN) == 0 ||
         (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

body_input_kind body_input_kind_of(const char *path) {
  path = body_input_path(path);
  if (body_input_is_stream(path))
    return BODY_INPUT_TEXT; /* not read here: what is read is gone */
  switch (tfmm_snapshot_probe(path)) {
  case TFMM_FORMAT_HDF5:
    return BODY_INPUT_HDF5;
  case TFMM_FORMAT_GADGET2:
    return BODY_INPUT_GADGET2;
  case TFMM_FORMAT_TIPSY:
    return BODY_INPUT_TIPSY;
  default:
    return BODY_INPUT_TEXT;
  }
}

int body_input_read_snapshot(const char *path, body_input_kind kind,
                             uint64_t types, const char *flag, snapshot *out) {
  /* Text is read as HDF5, which says what the file is not. */
  const tfmm_format format = kind == BODY_INPUT_GADGET2 ? TFMM_FORMAT_GADGET2
                             : kind == BODY_INPUT_TIPSY ? TFMM_FORMAT_TIPSY
                                                        : TFMM_FORMAT_HDF5;
  return snapshot_read_format(path, format, types, flag, out);
}

/* The snapshot's bodies moved into out. */
static int from_snapshot(const char *path, body_input_kind kind, uint64_t types,
                         bodyio_bodies *out, units *u) {
  snapshot s;
  const int ok =
      body_input_read_snapshot(path, kind, types, BODY_INPUT_TYPES_FLAG, &s);
  if (ok && u != NULL)
    *u = s.units;
  else if (ok && units_physical(&s.units)) {
    /* The forces are in the file's numbers with G as given (--G): said,
     * with the G those units need, rather than ignored silently. */
    char text[160];
    fprintf(stderr,
            "tilefmm: note: %s is in %s; the forces are computed in its "
            "numbers with --G as given (G is %.9g in these units)\n",
            path, units_describe(&s.units, text, sizeof text),
            units_G(&s.units));
  }
  if (ok) {
    out->n = out->cap = s.n;
    out->pos = s.pos;
    out->vel = s.vel;
    out->mass = s.mass;
    s.pos = s.vel = s.mass = NULL;
  }
  snapshot_free(&s);
  return ok;
}

/* A stream read once, as text: its format is told from the bytes read
 * (bodyio_read_stream), never by opening the path again, which would lose
 * them. */
static int read_stream(const char *path, const char *types,
                       bodyio_bodies *out) {
  const int std_in = strcmp(path, BODY_INPUT_STDIN) == 0;
  const char *name = std_in ? "standard input" : path;
  if (types != NULL) {
    cli_error("%s: %s is given, but only a text body file, which has no "
              "particle types, can be read through a pipe",
              name, BODY_INPUT_TYPES_FLAG);
    return 0;
  }
  FILE *fp = std_in ? stdin : fopen(path, "r");
  if (fp == NULL) {
    cli_error("%s: cannot open: %s", path, strerror(errno));
    return 0;
  }
  const int ok = bodyio_read_stream(fp, name, out);
  if (!std_in)
    fclose(fp);
  return ok;
}

int body_input_read(const char *path, const char *types, bodyio_bodies *out) {
  return body_input_read_units(path, types, out, NULL);
}

int body_input_read_units(const char *path, const char *types,
                          bodyio_bodies *out, units *u) {
  memset(out, 0, sizeof *out);
  if (u != NULL)
    memset(u, 0, sizeof *u);
  path = body_input_path(path);
  uint64_t mask = SNAPSHOT_TYPES_DEFAULT;
  if (types != NULL && !body_input_parse_types(types, &mask)) {
    cli_error("%s: invalid value '%s': expected %s", BODY_INPUT_TYPES_FLAG,
              types, BODY_INPUT_TYPES_EXPECT);
    return 0;
  }
  if (body_input_is_stream(path))
    return read_stream(path, types, out);
  const body_input_kind kind = body_input_kind_of(path);
  if (kind == BODY_INPUT_TEXT) {
    if (types != NULL) {
      cli_error("%s: %s is given, but the file is not a snapshot: a text "
                "body file has no particle types",
                path, BODY_INPUT_TYPES_FLAG);
      return 0;
    }
    return bodyio_read(path, out);
  }
  atomic_file_protect(path); /* no output of this command may replace it */
  return from_snapshot(path, kind, mask, out, u);
}

int body_input_read_relative(const char *command, const char *path,
                             const char *types, int G_given, double G,
                             bodyio_bodies *out, int *usage) {
  *usage = 0;
  units u;
  if (!body_input_read_units(path, types, out, &u))
    return 0;
  if (units_settle_G(command, path, &u, G_given, &G, 1,
                     ": the errors are relative, the same in any units") !=
      CLI_OK) {
    *usage = 1;
    return 0;
  }
  return 1;
}
