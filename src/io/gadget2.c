/* GADGET-2 binary snapshots (SnapFormat 1 and 2; GADGET-2 user guide,
 * section 6.1): Fortran records, each framed by its length in a 4-byte
 * marker before and after it. The first is the 256-byte header
 *   int32 npart[6]; double massarr[6], time, redshift; int32 flag_sfr,
 *   flag_feedback; uint32 npartTotal[6]; int32 flag_cooling, num_files;
 *   double BoxSize, Omega0, OmegaLambda, HubbleParam; int32
 *   flag_stellarage, flag_metals; uint32 npartTotalHighWord[6]; ...
 * then the blocks POS (3 floats a particle, or doubles: the record's
 * length tells), VEL, ID (uint32 or uint64) and MASS (the particles of the
 * types whose massarr is 0), in type order; gas blocks (U, RHO, ...)
 * follow and are not read. Format 2 puts before each block a record of 8
 * bytes, its name ("HEAD", "POS ", "VEL ", "ID  ", "MASS") and the next
 * record's length. Either byte order, told by the first marker (256, or 8
 * in format 2). A snapshot in several files (num_files > 1, named
 * BASE.0, BASE.1, ...) is read whole from any of its parts, or from
 * BASE. See docs/formats.md.
 *
 * A snapshot is read in two passes: every part's records are found and
 * checked against its header (scan), then the particles of the chosen
 * types are read from each part into their places, type by type. */
#define _POSIX_C_SOURCE 200809L
#include "io/binfile.h"
#include "io/io.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NTYPES 6
#define HEADER_BYTES 256
#define MAX_FILES 100000

/* A block's data: where it starts, its bytes, and the width of its numbers
 * (4 or 8); present 0 when the file has no such block. */
typedef struct span {
  uint64_t offset, bytes;
  int width, present;
} span;

/* One file of a snapshot. */
typedef struct part {
  char *path;
  int little, format;
  uint32_t npart[NTYPES];
  double massarr[NTYPES], time, redshift;
  uint64_t total[NTYPES]; /* npartTotal with npartTotalHighWord */
  int32_t num_files;
  tfmm_io_report *report; /* where failures are reported */
  span head, pos, vel, id, mass;
  uint64_t n, nmass; /* particles; those whose mass is in block MASS */
} part;

int tfmm_gadget2_probe(const unsigned char *head, size_t len) {
  int found = 0;
  for (int little = 0; little <= 1; little++) {
    const uint32_t first = len >= 4 ? tfmm_binfile_u32_order(head, little) : 0;
    if ((first == 8 && len >= 8 && memcmp(head + 4, "HEAD", 4) == 0) ||
        (first == HEADER_BYTES && len >= HEADER_BYTES + 8 &&
         tfmm_binfile_u32_order(head + HEADER_BYTES + 4, little) ==
             HEADER_BYTES))
      return 2;
    if (first == HEADER_BYTES)
      found = 1;
  }
  return found;
}

/* The record whose opening marker is at byte at: its data's offset and
 * length, with the closing marker checked. what names the record ("block
 * POS's record"). */
static int record(const tfmm_binfile *f, uint64_t at, const char *what,
                  uint64_t *data, uint64_t *len) {
  unsigned char m[4];
  char where[128];
  snprintf(where, sizeof where, "the marker opening %s", what);
  if (!tfmm_binfile_read(f, at, m, 4, where))
    return 0;
  *len = tfmm_binfile_u32(f, m);
  *data = at + 4;
  if (*len > f->size || *data + *len + 4 > f->size) {
    tfmm_io_fail(f->report,
                 "%s: truncated: %s (marker at byte offset %" PRIu64
                 ") says %" PRIu64 " bytes, but the file ends at byte %" PRIu64,
                 f->path, what, at, *len, f->size);
    return 0;
  }
  snprintf(where, sizeof where, "the marker closing %s", what);
  if (!tfmm_binfile_read(f, *data + *len, m, 4, where))
    return 0;
  if (tfmm_binfile_u32(f, m) != *len) {
    tfmm_io_fail(f->report,
                 "%s: the marker closing %s at byte offset %" PRIu64
                 " reads %" PRIu32 ", but the one opening it (byte offset "
                 "%" PRIu64 ") reads %" PRIu64 ": a damaged file, or not a "
                 "GADGET-2 snapshot",
                 f->path, what, *data + *len, tfmm_binfile_u32(f, m), at, *len);
    return 0;
  }
  return 1;
}

/* record() of block name's record. */
static int block_record(const tfmm_binfile *f, uint64_t at, const char *name,
                        uint64_t *data, uint64_t *len) {
  char what[64];
  snprintf(what, sizeof what, "block %s's record", name);
  return record(f, at, what, data, len);
}

/* The header's fields, checked. */
static int decode_header(const tfmm_binfile *f, part *p) {
  unsigned char b[HEADER_BYTES];
  if (p->head.bytes != HEADER_BYTES) {
    tfmm_io_fail(f->report,
                 "%s: block HEAD (byte offset %" PRIu64 ") holds %" PRIu64
                 " bytes, expected %d",
                 f->path, p->head.offset, p->head.bytes, HEADER_BYTES);
    return 0;
  }
  if (!tfmm_binfile_read(f, p->head.offset, b, HEADER_BYTES, "block HEAD"))
    return 0;
  const uint64_t o = p->head.offset;
  for (int k = 0; k < NTYPES; k++) {
    p->npart[k] = tfmm_binfile_u32(f, b + 4 * k);
    p->massarr[k] = tfmm_binfile_f64(f, b + 24 + 8 * k);
    p->total[k] = tfmm_binfile_u32(f, b + 96 + 4 * k) |
                  (uint64_t)tfmm_binfile_u32(f, b + 168 + 4 * k) << 32;
    if (p->npart[k] > INT32_MAX) {
      tfmm_io_fail(f->report,
                   "%s: header: npart[%d] (byte offset %" PRIu64 ") is %" PRId32
                   ", not a count",
                   f->path, k, o + 4 * k, (int32_t)p->npart[k]);
      return 0;
    }
    if (!(p->massarr[k] >= 0) || !isfinite(p->massarr[k])) {
      tfmm_io_fail(f->report,
                   "%s: header: massarr[%d] (byte offset %" PRIu64 ") is %g, "
                   "neither 0 (masses in block MASS) nor a mass > 0",
                   f->path, k, o + 24 + 8 * k, p->massarr[k]);
      return 0;
    }
    p->n += p->npart[k];
    p->nmass += p->massarr[k] == 0 ? p->npart[k] : 0;
  }
  p->time = tfmm_binfile_f64(f, b + 72);
  p->redshift = tfmm_binfile_f64(f, b + 80);
  p->num_files = (int32_t)tfmm_binfile_u32(f, b + 124);
  if (!isfinite(p->time) || !isfinite(p->redshift)) {
    tfmm_io_fail(f->report,
                 "%s: header: time (byte offset %" PRIu64
                 ") is %g and redshift "
                 "%g: not finite numbers",
                 f->path, o + 72, p->time, p->redshift);
    return 0;
  }
  return 1;
}

/* Stores a block's record, found by its name, in the part. */
static void keep(part *p, const char *name, uint64_t data, uint64_t len) {
  span *s = strcmp(name, "POS") == 0    ? &p->pos
            : strcmp(name, "VEL") == 0  ? &p->vel
            : strcmp(name, "ID") == 0   ? &p->id
            : strcmp(name, "MASS") == 0 ? &p->mass
            : strcmp(name, "HEAD") == 0 ? &p->head
                                        : NULL;
  if (s != NULL && !s->present)
    *s = (span){data, len, 0, 1};
}

/* Format 1: the blocks come in a fixed order, unnamed. */
static int scan_format1(const tfmm_binfile *f, part *p) {
  static const char *const names[] = {"HEAD", "POS", "VEL", "ID", "MASS"};
  uint64_t at = 0;
  for (int b = 0; b < 5; b++) {
    if (b == 4 && p->nmass == 0)
      break; /* MASS is written only for types without a massarr */
    if (at == f->size) {
      tfmm_io_fail(f->report,
                   "%s: block %s is missing: the file ends after block %s, at "
                   "byte %" PRIu64,
                   f->path, names[b], names[b - 1], at);
      return 0;
    }
    uint64_t data, len;
    if (!block_record(f, at, names[b], &data, &len))
      return 0;
    keep(p, names[b], data, len);
    if (b == 0 && !decode_header(f, p))
      return 0;
    at = data + len + 4;
  }
  return 1;
}

/* The name of a format 2 block, spaces cut and odd bytes shown as '?'. */
static void block_name(const unsigned char *raw, char name[5]) {
  for (int k = 0; k < 4; k++)
    name[k] = isprint(raw[k]) ? (char)raw[k] : '?';
  name[4] = '\0';
  for (int k = 3; k >= 0 && name[k] == ' '; k--)
    name[k] = '\0';
}

/* Format 2: each block is preceded by a record of 8 bytes naming it. */
static int scan_format2(const tfmm_binfile *f, part *p) {
  uint64_t at = 0;
  char previous[5] = "";
  while (at < f->size) {
    uint64_t data, len;
    char what[64];
    snprintf(what, sizeof what, "the record naming the block after %s",
             previous);
    if (!record(f, at, previous[0] ? what : "the record naming block HEAD",
                &data, &len))
      return 0;
    unsigned char raw[8];
    if (len != 8) {
      tfmm_io_fail(f->report,
                   "%s: the record at byte offset %" PRIu64 " holds %" PRIu64
                   " bytes where format 2 names a block in 8 (after block %s)",
                   f->path, at, len, previous[0] ? previous : "none");
      return 0;
    }
    if (!tfmm_binfile_read(f, data, raw, 8, "a block's name"))
      return 0;
    char name[5];
    block_name(raw, name);
    if (previous[0] == '\0' && strcmp(name, "HEAD") != 0) {
      tfmm_io_fail(f->report, "%s: the first block is named '%s', not HEAD",
                   f->path, name);
      return 0;
    }
    if (!block_record(f, data + 8 + 4, name, &data, &len))
      return 0;
    keep(p, name, data, len);
    if (previous[0] == '\0' && !decode_header(f, p))
      return 0;
    memcpy(previous, name, sizeof previous);
    at = data + len + 4;
  }
  return 1;
}

/* The width of a block's numbers, from its length: count numbers of 4 or
 * of 8 bytes (kinds names them: "float or double"). */
static int check_span(const part *p, span *s, const char *name, uint64_t count,
                      int per, const char *kinds) {
  const uint64_t want = count * (uint64_t)per;
  if (s->bytes == 4 * want || s->bytes == 8 * want) {
    s->width = s->bytes == 8 * want && want > 0 ? 8 : 4;
    return 1;
  }
  tfmm_io_fail(p->report,
               "%s: block %s (byte offset %" PRIu64 ") holds %" PRIu64
               " bytes, "
               "but the header's %" PRIu64 " particles%s need %" PRIu64
               " or %" PRIu64 " (%s)",
               p->path, name, s->offset, s->bytes, count,
               strcmp(name, "MASS") == 0 ? " of massarr 0" : "", 4 * want,
               8 * want, kinds);
  return 0;
}

static int check_blocks(part *p) {
  if (!p->pos.present ||
      (p->format == 1 && (!p->vel.present || !p->id.present))) {
    tfmm_io_fail(p->report, "%s: no block %s", p->path,
                 !p->pos.present   ? "POS"
                 : !p->vel.present ? "VEL"
                                   : "ID");
    return 0;
  }
  if (p->nmass > 0 && !p->mass.present) {
    tfmm_io_fail(p->report,
                 "%s: no block MASS, but the header's massarr is 0 for %" PRIu64
                 " particles",
                 p->path, p->nmass);
    return 0;
  }
  const char *reals = "float or double";
  return check_span(p, &p->pos, "POS", p->n, 3, reals) &&
         (!p->vel.present || check_span(p, &p->vel, "VEL", p->n, 3, reals)) &&
         (!p->id.present ||
          check_span(p, &p->id, "ID", p->n, 1, "uint32 or uint64")) &&
         (p->nmass == 0 || check_span(p, &p->mass, "MASS", p->nmass, 1, reals));
}

/* Finds the byte order and format from the first marker, then the blocks. */
static int scan(part *p) {
  tfmm_binfile f;
  if (!tfmm_binfile_open(&f, p->report, p->path))
    return 0;
  unsigned char m[8];
  int ok = tfmm_binfile_read(&f, 0, m, 8, "the first record marker");
  for (int little = 1; ok && little >= 0 && p->format == 0; little--) {
    const uint32_t first = tfmm_binfile_u32_order(m, little);
    p->little = f.little = little;
    p->format = first == HEADER_BYTES ? 1 : first == 8 ? 2 : 0;
  }
  if (ok && p->format == 0) {
    tfmm_io_fail(p->report,
                 "%s: not a GADGET-2 snapshot: the first record marker is "
                 "neither 256 (format 1) nor 8 (format 2)",
                 p->path);
    ok = 0;
  }
  ok = ok && (p->format == 1 ? scan_format1(&f, p) : scan_format2(&f, p)) &&
       check_blocks(p);
  tfmm_binfile_close(&f);
  return ok;
}

/* ---- the snapshot: its parts ------------------------------------------ */

typedef struct snap {
  part *parts;
  int nparts;
} snap;

static void free_snap(snap *s) {
  for (int i = 0; i < s->nparts; i++)
    free(s->parts[i].path);
  free(s->parts);
}

/* BASE of "BASE.N" (N digits), or NULL when path is not so named. */
static char *base_of(const char *path) {
  const char *dot = strrchr(path, '.');
  if (dot == NULL || dot[1] == '\0' || strchr(dot, '/') != NULL)
    return NULL;
  for (const char *c = dot + 1; *c != '\0'; c++)
    if (!isdigit((unsigned char)*c))
      return NULL;
  const size_t len = (size_t)(dot - path);
  char *base = malloc(len + 1);
  if (base != NULL) {
    memcpy(base, path, len);
    base[len] = '\0';
  }
  return base;
}

/* Whether part i agrees with part 0 on what every part's header repeats;
 * the redshift too: a part whose redshift is not 0 would make the
 * snapshot cosmological, and only the part named is checked for that. */
static int same_snapshot(const part *first, const part *p) {
  const char *what = p->num_files != first->num_files ? "num_files"
                     : p->time != first->time         ? "time"
                     : p->redshift != first->redshift ? "redshift"
                                                      : NULL;
  for (int k = 0; what == NULL && k < NTYPES; k++)
    if (p->total[k] != first->total[k])
      what = "npartTotal";
    else if (p->massarr[k] != first->massarr[k])
      what = "massarr";
  if (what != NULL)
    tfmm_io_fail(
        p->report,
        "%s: its header's %s differs from that of %s: not parts of one "
        "snapshot",
        p->path, what, first->path);
  return what == NULL;
}

/* The parts of a snapshot in num_files files, BASE.0 to BASE.(num_files-1),
 * from the first one read (given as path). */
static int scan_parts(snap *s, part *given) {
  const int32_t nf = given->num_files;
  char *base = base_of(given->path);
  if (base == NULL || nf > MAX_FILES) {
    tfmm_io_fail(given->report,
                 "%s: part of a snapshot in %" PRId32 " files (num_files), but "
                 "%s: name one of its parts, BASE.0 to BASE.%" PRId32,
                 given->path, nf,
                 base == NULL ? "its name does not end in .N" : "too many",
                 nf - 1);
    free(base);
    return 0;
  }
  s->parts = calloc((size_t)nf, sizeof *s->parts);
  int ok = s->parts != NULL;
  for (int32_t i = 0; ok && i < nf; i++) {
    part *p = &s->parts[s->nparts++];
    p->report = given->report;
    const size_t size = strlen(base) + 16;
    p->path = malloc(size);
    ok = p->path != NULL;
    if (ok)
      snprintf(p->path, size, "%s.%" PRId32, base, i);
    ok = ok && scan(p) && same_snapshot(&s->parts[0], p);
  }
  free(base);
  uint64_t sum[NTYPES] = {0};
  for (int i = 0; ok && i < s->nparts; i++)
    for (int k = 0; k < NTYPES; k++)
      sum[k] += s->parts[i].npart[k];
  for (int k = 0; ok && k < NTYPES; k++)
    if (sum[k] != given->total[k]) {
      tfmm_io_fail(
          given->report,
          "%s: the %" PRId32 " parts hold %" PRIu64 " particles of type "
          "%d, but npartTotal[%d] (with npartTotalHighWord) is %" PRIu64,
          given->path, nf, sum[k], k, k, given->total[k]);
      ok = 0;
    }
  return ok;
}

char *tfmm_gadget2_first_part(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 || errno != ENOENT)
    return NULL;
  const size_t size = strlen(path) + 3;
  char *first = malloc(size);
  if (first != NULL)
    snprintf(first, size, "%s.0", path);
  if (first != NULL && stat(first, &st) == 0)
    return first;
  free(first);
  return NULL;
}

/* Every part of the snapshot path belongs to, scanned; a cosmological one
 * is refused. */
static int scan_snapshot(tfmm_io_report *r, const char *path, snap *s) {
  part given = {0};
  given.report = r;
  given.path = tfmm_gadget2_first_part(path);
  if (given.path == NULL)
    given.path = strdup(path);
  if (given.path == NULL || !scan(&given)) {
    free(given.path);
    return 0;
  }
  if (given.redshift != 0) {
    tfmm_io_fail(given.report,
                 "%s: a cosmological snapshot (redshift %g, time %g: the scale "
                 "factor): its positions are comoving and its velocities "
                 "sqrt(a) dx/dt; tilefmm computes the Newtonian gravity of "
                 "isolated bodies and does not convert them: convert the file "
                 "to physical coordinates and velocities first",
                 path, given.redshift, given.time);
    free(given.path);
    return 0;
  }
  if (given.num_files > 1) {
    const int ok = scan_parts(s, &given);
    free(given.path);
    return ok;
  }
  for (int k = 0; k < NTYPES; k++)
    if (given.total[k] != given.npart[k]) {
      tfmm_io_fail(given.report,
                   "%s: npartTotal[%d] = %" PRIu64 " (with npartTotalHighWord) "
                   "but npart[%d] = %" PRIu32 ", and num_files is %" PRId32
                   ": part of a multi-file snapshot?",
                   path, k, given.total[k], k, given.npart[k], given.num_files);
      free(given.path);
      return 0;
    }
  s->parts = malloc(sizeof *s->parts);
  if (s->parts == NULL) {
    free(given.path);
    return 0;
  }
  s->parts[0] = given;
  s->nparts = 1;
  return 1;
}

/* ---- reading the particles --------------------------------------------- */

/* Names the first particle of type k (c from body b on, from index i of
 * the part's blocks, from m in block MASS) that is not finite or has a
 * mass <= 0, with the block and byte offset of the number at fault (a
 * massarr was checked with the header). */
static int check_particles(const part *p, int k, size_t c, size_t b, uint64_t i,
                           uint64_t m, const tfmm_snapshot *out) {
  for (size_t j = 0; j < c; j++) {
    const double *x = out->pos + 3 * (b + j), *v = out->vel + 3 * (b + j);
    const char *fault = tfmm_io_body_fault(x, v, out->mass[b + j]);
    if (fault == NULL)
      continue;
    const int in_pos = strstr(fault, "coordinate") != NULL,
              in_vel = strstr(fault, "velocity") != NULL;
    const span *s = in_pos ? &p->pos : in_vel ? &p->vel : &p->mass;
    const uint64_t index = in_pos || in_vel ? 3 * (i + j) : m + j;
    tfmm_io_fail(p->report,
                 "%s: type %d particle %" PRIu64 " (ParticleID %" PRIu64
                 ") has %s: block %s, byte offset %" PRIu64,
                 p->path, k, i + j, out->ids[b + j], fault,
                 in_pos   ? "POS"
                 : in_vel ? "VEL"
                          : "MASS",
                 s->offset + (uint64_t)s->width * index);
    return 0;
  }
  return 1;
}

/* Reads type k's particles of part p into out from body b on; without
 * block ID, their IDs are their places in the snapshot, from id0 + 1. */
static int read_type(const tfmm_binfile *f, const part *p, int k, size_t b,
                     uint64_t id0, tfmm_snapshot *out) {
  const size_t c = p->npart[k];
  uint64_t i = 0, m = 0; /* the type's first index in the blocks, in MASS */
  for (int j = 0; j < k; j++) {
    i += p->npart[j];
    m += p->massarr[j] == 0 ? p->npart[j] : 0;
  }
  int ok =
      tfmm_binfile_reals(f, p->pos.offset + i * 3 * (uint64_t)p->pos.width,
                         3 * c, p->pos.width, out->pos + 3 * b, "block POS");
  if (ok && p->vel.present)
    ok = tfmm_binfile_reals(f, p->vel.offset + i * 3 * (uint64_t)p->vel.width,
                            3 * c, p->vel.width, out->vel + 3 * b, "block VEL");
  if (ok && p->id.present)
    ok = tfmm_binfile_uints(f, p->id.offset + i * (uint64_t)p->id.width, c,
                            p->id.width, out->ids + b, "block ID");
  else
    for (size_t j = 0; j < c; j++)
      out->ids[b + j] = id0 + j + 1;
  if (ok && p->massarr[k] == 0)
    ok = tfmm_binfile_reals(f, p->mass.offset + m * (uint64_t)p->mass.width, c,
                            p->mass.width, out->mass + b, "block MASS");
  else
    for (size_t j = 0; j < c; j++)
      out->mass[b + j] = p->massarr[k];
  return ok && check_particles(p, k, c, b, i, m, out);
}

static int read_parts(const snap *s, const uint64_t *count,
                      tfmm_snapshot *out) {
  size_t next[NTYPES], n = 0;            /* where each type's next body goes */
  uint64_t place[NTYPES] = {0}, all = 0; /* the next one's in the file */
  for (int k = 0; k < NTYPES; k++) {
    next[k] = n;
    n += (size_t)count[k];
    place[k] = all;
    for (int i = 0; i < s->nparts; i++)
      all += s->parts[i].npart[k];
  }
  out->n = n;
  out->pos = malloc(3 * n * sizeof(double));
  out->vel = calloc(3 * n, sizeof(double)); /* zeros without VEL */
  out->mass = malloc(n * sizeof(double));
  out->ids = malloc(n * sizeof(uint64_t));
  if (out->pos == NULL || out->vel == NULL || out->mass == NULL ||
      out->ids == NULL) {
    tfmm_io_fail_status(s->parts[0].report, TFMM_ERR_NO_MEMORY,
                        "%s: out of memory for %zu particles", s->parts[0].path,
                        n);
    return 0;
  }
  for (int i = 0; i < s->nparts; i++) {
    const part *p = &s->parts[i];
    tfmm_binfile f;
    if (!tfmm_binfile_open(&f, p->report, p->path))
      return 0;
    f.little = p->little;
    int ok = 1;
    for (int k = 0; ok && k < NTYPES; k++) {
      if (count[k] > 0 && p->npart[k] > 0) {
        ok = read_type(&f, p, k, next[k], place[k], out);
        next[k] += p->npart[k];
      }
      place[k] += p->npart[k];
    }
    tfmm_binfile_close(&f);
    if (!ok)
      return 0;
  }
  return 1;
}

/* Keeps every part of the snapshot among the files read. */
static int keep_parts(const snap *s, tfmm_snapshot *out) {
  for (int i = 0; i < s->nparts; i++)
    if (!tfmm_io_add_file(s->parts[i].report, out, s->parts[i].path))
      return 0;
  return 1;
}

int tfmm_gadget2_read(tfmm_io_report *r, const char *path,
                      const tfmm_read_options *o, tfmm_snapshot *out) {
  snap s = {0};
  int ok = scan_snapshot(r, path, &s) && keep_parts(&s, out);
  uint64_t count[NTYPES] = {0};
  for (int k = 0; ok && k < NTYPES; k++)
    count[k] = s.parts[0].total[k];
  if (ok && s.nparts == 1) /* total == npart was checked */
    for (int k = 0; k < NTYPES; k++)
      count[k] = s.parts[0].npart[k];
  ok = ok &&
       tfmm_io_types_select(r, path, "type ", NTYPES, count, o->types, o->flag,
                            &out->note) &&
       read_parts(&s, count, out);
  if (ok)
    out->time = s.parts[0].time;
  free_snap(&s);
  return ok;
}
