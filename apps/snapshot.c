/* The command line's calls on the library's snapshot files (see
 * snapshot.h). */
#define _POSIX_C_SOURCE 200809L
#include "snapshot.h"

#include "atomic_file.h"
#include "cli.h"
#include "isolated_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library's messages: one a line, each printed as "tilefmm: ...". */
#define MESSAGE_SIZE 8192

static void print_message(const char *message) {
  for (const char *p = message; *p != '\0';) {
    const char *end = strchr(p, '\n');
    const int len = end != NULL ? (int)(end - p) : (int)strlen(p);
    cli_error("%.*s", len, p);
    if (end == NULL)
      break;
    p = end + 1;
  }
}

const char *snapshot_attr_find(const snapshot_attr *attrs, size_t count,
                               const char *name) {
  for (size_t k = 0; k < count; k++)
    if (strcmp(attrs[k].name, name) == 0)
      return attrs[k].value;
  return NULL;
}

static void free_attrs(snapshot_attr *attrs, size_t count) {
  for (size_t k = 0; k < count; k++) {
    free(attrs[k].name);
    free(attrs[k].value);
  }
  free(attrs);
}

int snapshot_parse_fields(const char *text, unsigned *fields) {
  if (strcmp(text, "all") == 0) {
    *fields = SNAPSHOT_FIELDS_ALL;
    return 1;
  }
  static const struct {
    const char *name;
    unsigned bit;
  } names[] = {{"Coordinates", 0},
               {"Masses", 0},
               {"ParticleIDs", 0},
               {"Velocities", SNAPSHOT_FIELD_VELOCITIES},
               {"Accelerations", SNAPSHOT_FIELD_ACCELERATIONS},
               {"Potentials", SNAPSHOT_FIELD_POTENTIALS}};
  unsigned m = 0;
  for (const char *p = text;;) {
    const char *end = strchr(p, ',');
    const size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
    int found = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !found; k++)
      if (strlen(names[k].name) == len && strncmp(names[k].name, p, len) == 0) {
        m |= names[k].bit;
        found = 1;
      }
    if (!found)
      return 0;
    if (end == NULL)
      break;
    p = end + 1;
  }
  *fields = m;
  return 1;
}

void snapshot_free(snapshot *s) {
  free(s->pos);
  free(s->vel);
  free(s->mass);
  free(s->acc);
  free(s->pot);
  free(s->ids);
  free(s->bins);
  free_attrs(s->params, s->nparams);
  free_attrs(s->state, s->nstate);
  memset(s, 0, sizeof *s);
}

int snapshot_is_hdf5(const char *path) {
  return tfmm_snapshot_probe(path) == TFMM_FORMAT_HDF5;
}

/* The library's view of s: the same arrays. */
static tfmm_snapshot to_library(const snapshot *s) {
  return (tfmm_snapshot){.n = s->n,
                         .time = s->time,
                         .pos = s->pos,
                         .vel = s->vel,
                         .mass = s->mass,
                         .acc = s->acc,
                         .pot = s->pot,
                         .ids = s->ids,
                         .bins = s->bins,
                         .params = s->params,
                         .nparams = s->nparams,
                         .state = s->state,
                         .nstate = s->nstate,
                         .units = {s->units.mass, s->units.length,
                                   s->units.velocity, s->units.current,
                                   s->units.temperature},
                         .G = s->G};
}

/* Moves what the library read into out, and releases the rest. */
static void from_library(tfmm_snapshot *t, snapshot *out) {
  *out = (snapshot){.n = t->n,
                    .time = t->time,
                    .pos = t->pos,
                    .vel = t->vel,
                    .mass = t->mass,
                    .acc = t->acc,
                    .pot = t->pot,
                    .ids = t->ids,
                    .bins = t->bins,
                    .params = t->params,
                    .nparams = t->nparams,
                    .state = t->state,
                    .nstate = t->nstate,
                    .units = {t->units.mass, t->units.length, t->units.velocity,
                              t->units.current, t->units.temperature},
                    .units_source = (snapshot_units_source)t->units_source};
  t->pos = t->vel = t->mass = t->acc = t->pot = NULL;
  t->ids = NULL;
  t->bins = NULL;
  t->params = t->state = NULL;
  t->nparams = t->nstate = 0;
  tfmm_snapshot_free(t);
}

int snapshot_write_uncommitted(const char *path, const snapshot *s,
                               atomic_file *af) {
  const tfmm_snapshot t = to_library(s);
  char message[MESSAGE_SIZE];
  memset(af, 0, sizeof *af);
  /* atomic_file makes the temporary (removed on a signal too) and, once
   * the library has written and closed it, atomic_file_commit syncs it
   * through its own descriptor (the same inode), renames it and syncs the
   * directory. The library checks the bodies before it writes a byte (the
   * message tfmm_snapshot_check would give), so they are not checked here
   * first: a second pass over 56 bytes a body on the run's writer thread
   * (3 ms at 1M bodies on 2 cores); a refused snapshot's temporary is
   * removed. */
  if (!atomic_file_open(af, path))
    return 0;
  if (tfmm_snapshot_write_file(path, af->tmp_path, &t, s->output, message,
                               sizeof message) != TFMM_OK) {
    print_message(message);
    atomic_file_discard(af);
    return 0;
  }
  return 1;
}

int snapshot_write(const char *path, const snapshot *s) {
  atomic_file af;
  return snapshot_write_uncommitted(path, s, &af) && atomic_file_commit(&af);
}

/* Reads path with the library, an HDF5 file in a child process
 * (isolated_read.h); the note naming the types read is printed when the
 * command has a flag choosing them. */
static int read_snapshot(const char *path, const tfmm_read_options *o,
                         snapshot *out) {
  tfmm_snapshot t;
  char message[MESSAGE_SIZE];
  const tfmm_status st = isolated_read(path, o, &t, message, sizeof message);
  if (t.note != NULL && o->flag != NULL)
    fprintf(stderr, "tilefmm: %s\n", t.note);
  if (st != TFMM_OK)
    print_message(message);
  /* The parts of a GADGET-2 snapshot in several files, every one: no
   * output of the command may replace one. */
  for (size_t k = 0;
       st == TFMM_OK && t.format == TFMM_FORMAT_GADGET2 && k < t.nfiles; k++)
    atomic_file_protect(t.files[k]);
  from_library(&t, out);
  return st == TFMM_OK;
}

int snapshot_read(const char *path, snapshot *out) {
  const tfmm_read_options o = {
      .format = TFMM_FORMAT_HDF5, .types = SNAPSHOT_TYPES_ALL, .attributes = 1};
  return read_snapshot(path, &o, out);
}

int snapshot_read_bodies(const char *path, snapshot *out) {
  const tfmm_read_options o = {.format = TFMM_FORMAT_HDF5,
                               .types = SNAPSHOT_TYPES_DEFAULT};
  return read_snapshot(path, &o, out);
}

int snapshot_read_types(const char *path, uint64_t types, const char *flag,
                        snapshot *out) {
  return snapshot_read_format(path, TFMM_FORMAT_HDF5, types, flag, out);
}

int snapshot_read_format(const char *path, tfmm_format format, uint64_t types,
                         const char *flag, snapshot *out) {
  const tfmm_read_options o = {.format = format, .types = types, .flag = flag};
  return read_snapshot(path, &o, out);
}
