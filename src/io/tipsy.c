/* Tipsy binary files (Tipsy, PKDGRAV, ChaNGa, pynbody): a header
 *   double time; int nbodies, ndim, nsph, ndark, nstar, pad;
 * then nsph gas particles of 12 floats (mass, pos[3], vel[3], rho, temp,
 * hsmooth, metals, phi), ndark dark particles of 9 (mass, pos[3], vel[3],
 * eps, phi) and nstar star particles of 11 (mass, pos[3], vel[3], metals,
 * tform, eps, phi). "Standard" files are big-endian (XDR), native ones
 * little-endian; the byte order is the one whose header is consistent
 * (ndim 3, the counts summing to nbodies) and whose particles fill the file
 * exactly, after a header of 32 bytes (or 28, without pad). See
 * docs/formats.md; tfmm_snapshot_read in tilefmm.h. */
#include "io/binfile.h"
#include "io/io.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEADER 32 /* 28 bytes and the pad that aligns the particles */
#define NKINDS 3

/* Gas, dark and star particles: their floats, their GADGET type, and
 * their names in messages. Mass, pos[3] and vel[3] open each. */
static const struct {
  int floats, type;
  const char *name;
} kinds[NKINDS] = {{12, 0, "gas"}, {9, 1, "dark"}, {11, 4, "star"}};

typedef struct header {
  double time;
  uint32_t n, ndim, count[NKINDS];
} header;

static void decode(const tfmm_binfile *f, const unsigned char *b, header *h) {
  h->time = tfmm_binfile_f64(f, b);
  h->n = tfmm_binfile_u32(f, b + 8);
  h->ndim = tfmm_binfile_u32(f, b + 12);
  for (int k = 0; k < NKINDS; k++)
    h->count[k] = tfmm_binfile_u32(f, b + 16 + 4 * k);
}

static int consistent(const header *h) {
  uint64_t sum = 0;
  for (int k = 0; k < NKINDS; k++)
    sum += h->count[k];
  return h->ndim == 3 && h->n > 0 && h->n <= INT32_MAX && sum == h->n;
}

/* Bytes of the particles the header promises. */
static uint64_t body_bytes(const header *h) {
  uint64_t bytes = 0;
  for (int k = 0; k < NKINDS; k++)
    bytes += (uint64_t)h->count[k] * 4 * (uint64_t)kinds[k].floats;
  return bytes;
}

int tfmm_tipsy_probe(const unsigned char *head, size_t len) {
  if (len < 28)
    return 0;
  for (int little = 0; little <= 1; little++) {
    tfmm_binfile f = {.little = little};
    header h;
    decode(&f, head, &h);
    if (consistent(&h))
      return 1;
  }
  return 0;
}

/* Where the particles promised end past the end of the file: the kind and
 * the first particle that does not fit, with its byte offset. */
static void report_truncated(const tfmm_binfile *f, const header *h,
                             uint64_t start) {
  uint64_t at = start;
  for (int k = 0; k < NKINDS; k++) {
    const uint64_t size = 4 * (uint64_t)kinds[k].floats;
    if (at + h->count[k] * size > f->size) {
      const uint64_t i = f->size > at ? (f->size - at) / size : 0;
      tfmm_io_fail(
          f->report,
          "%s: truncated: the header promises %" PRIu32 " %s particles "
          "(%" PRIu32 " in all), but %s particle %" PRIu64
          " (at byte offset %" PRIu64 ") ends past the end of the file "
          "at byte %" PRIu64,
          f->path, h->count[k], kinds[k].name, h->n, kinds[k].name, i,
          at + i * size, f->size);
      return;
    }
    at += h->count[k] * size;
  }
}

/* Finds the byte order and the header's length: the header must be
 * consistent and the particles fill the file. */
static int read_header(tfmm_binfile *f, header *h, uint64_t *start) {
  unsigned char b[HEADER];
  if (!tfmm_binfile_read(f, 0, b, 28, "the Tipsy header"))
    return 0;
  int found = 0;
  for (int little = 0; little <= 1 && !found; little++) {
    f->little = little;
    decode(f, b, h);
    found = consistent(h);
  }
  if (!found) {
    tfmm_io_fail(f->report,
                 "%s: not a Tipsy file: the header at byte offset 0 has no "
                 "consistent counts (ndim 3, gas + dark + star = nbodies) in "
                 "either byte order",
                 f->path);
    return 0;
  }
  const char *order = f->little ? "little-endian" : "big-endian";
  if (!isfinite(h->time)) {
    tfmm_io_fail(f->report,
                 "%s: the Tipsy header's time (byte offset 0) is %g, not a "
                 "finite number",
                 f->path, h->time);
    return 0;
  }
  const uint64_t bytes = body_bytes(h);
  *start = f->size == 28 + bytes ? 28 : HEADER;
  if (f->size == *start + bytes)
    return 1;
  if (f->size < *start + bytes)
    report_truncated(f, h, *start);
  else
    tfmm_io_fail(f->report,
                 "%s: %" PRIu64 " bytes follow the last particle (byte offset "
                 "%" PRIu64 "): the %s Tipsy header promises %" PRIu32 " gas, "
                 "%" PRIu32 " dark and %" PRIu32 " star particles of single-"
                 "precision floats, %" PRIu64 " bytes after the header; a file "
                 "with double-precision positions or extra data is not read",
                 f->path, f->size - *start - bytes, *start + bytes, order,
                 h->count[0], h->count[1], h->count[2], bytes);
  return 0;
}

#define BATCH 1024 /* particles read at a time */

/* Reads count particles of kind k at offset into out from body first on;
 * ids are the places in the file, from id0 + 1. */
static int read_kind(const tfmm_binfile *f, int k, uint64_t offset,
                     size_t count, size_t first, uint64_t id0,
                     tfmm_snapshot *out) {
  const int nf = kinds[k].floats;
  double *buf = malloc(BATCH * 12 * sizeof(double));
  if (buf == NULL) {
    tfmm_io_fail_status(f->report, TFMM_ERR_NO_MEMORY, "%s: out of memory",
                        f->path);
    return 0;
  }
  char what[64];
  snprintf(what, sizeof what, "the %s particles", kinds[k].name);
  int ok = 1;
  for (size_t done = 0; ok && done < count; done += BATCH) {
    const size_t c = count - done < BATCH ? count - done : BATCH;
    const uint64_t at = offset + (uint64_t)done * 4 * (uint64_t)nf;
    ok = tfmm_binfile_reals(f, at, c * (size_t)nf, 4, buf, what);
    for (size_t i = 0; ok && i < c; i++) {
      const double *p = buf + i * (size_t)nf;
      const size_t b = first + done + i;
      memcpy(out->pos + 3 * b, p + 1, 3 * sizeof(double));
      memcpy(out->vel + 3 * b, p + 4, 3 * sizeof(double));
      out->mass[b] = p[0];
      out->ids[b] = id0 + done + i + 1;
      const char *fault = tfmm_io_body_fault(p + 1, p + 4, p[0]);
      if (fault != NULL) {
        tfmm_io_fail(
            f->report, "%s: %s particle %zu (byte offset %" PRIu64 ") has %s",
            f->path, kinds[k].name, done + i, at + i * 4 * (uint64_t)nf, fault);
        ok = 0;
      }
    }
  }
  free(buf);
  return ok;
}

static int read_file(tfmm_binfile *f, const tfmm_read_options *o,
                     tfmm_snapshot *out) {
  header h;
  uint64_t start;
  if (!read_header(f, &h, &start))
    return 0;
  uint64_t count[6] = {0};
  for (int k = 0; k < NKINDS; k++)
    count[kinds[k].type] = h.count[k];
  if (!tfmm_io_types_select(f->report, f->path, "type ", 6, count, o->types,
                            o->flag, &out->note))
    return 0;
  size_t n = 0;
  for (int k = 0; k < NKINDS; k++)
    n += (size_t)count[kinds[k].type];
  out->n = n;
  out->time = h.time;
  out->pos = malloc(3 * n * sizeof(double));
  out->vel = malloc(3 * n * sizeof(double));
  out->mass = malloc(n * sizeof(double));
  out->ids = malloc(n * sizeof(uint64_t));
  if (out->pos == NULL || out->vel == NULL || out->mass == NULL ||
      out->ids == NULL) {
    tfmm_io_fail_status(f->report, TFMM_ERR_NO_MEMORY,
                        "%s: out of memory for %zu particles", f->path, n);
    return 0;
  }
  uint64_t offset = start, id0 = 0;
  size_t first = 0;
  for (int k = 0; k < NKINDS; k++) {
    const size_t c = (size_t)count[kinds[k].type];
    if (c > 0 && !read_kind(f, k, offset, c, first, id0, out))
      return 0;
    first += c;
    offset += (uint64_t)h.count[k] * 4 * (uint64_t)kinds[k].floats;
    id0 += h.count[k];
  }
  return 1;
}

int tfmm_tipsy_read(tfmm_io_report *r, const char *path,
                    const tfmm_read_options *o, tfmm_snapshot *out) {
  tfmm_binfile f;
  if (!tfmm_binfile_open(&f, r, path))
    return 0;
  const int ok = tfmm_io_add_file(r, out, path) && read_file(&f, o, out);
  tfmm_binfile_close(&f);
  return ok;
}
