/* Reading the bodies of --in, from a snapshot or a text file (see
 * body_input.h). */
#define _POSIX_C_SOURCE 200809L
#include "body_input.h"

#include "atomic_file.h"
#include "cli.h"
#include "snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The snapshot's bodies moved into out. */
static int from_snapshot(const char *path, uint64_t types, bodyio_bodies *out) {
  snapshot s;
  const int ok = snapshot_read_types(path, types, BODY_INPUT_TYPES_FLAG, &s);
  if (ok && units_physical(&s.units)) {
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

int body_input_read(const char *path, const char *types, bodyio_bodies *out) {
  memset(out, 0, sizeof *out);
  uint64_t mask = SNAPSHOT_TYPES_DEFAULT;
  if (types != NULL && !body_input_parse_types(types, &mask)) {
    cli_error("%s: invalid value '%s': expected %s", BODY_INPUT_TYPES_FLAG,
              types, BODY_INPUT_TYPES_EXPECT);
    return 0;
  }
  if (!snapshot_is_hdf5(path)) {
    if (types != NULL) {
      cli_error("%s: %s is given, but the file is not an HDF5 snapshot: a "
                "text body file has no particle types",
                path, BODY_INPUT_TYPES_FLAG);
      return 0;
    }
    return bodyio_read(path, out);
  }
  atomic_file_protect(path); /* no output of this command may replace it */
  return from_snapshot(path, mask, out);
}
