/* Checked reads of binary files (see binfile.h). Numbers are decoded from
 * bytes in the file's order, whatever this machine's. */
#define _POSIX_C_SOURCE 200809L
#include "io/binfile.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

int tfmm_binfile_open(tfmm_binfile *f, tfmm_io_report *r, const char *path) {
  memset(f, 0, sizeof *f);
  f->report = r;
  f->path = path;
  f->little = 1;
  f->fp = fopen(path, "rb");
  struct stat st;
  if (f->fp == NULL || fstat(fileno(f->fp), &st) != 0) {
    tfmm_io_fail(f->report, "%s: cannot open: %s", path, strerror(errno));
    tfmm_binfile_close(f);
    return 0;
  }
  if (!S_ISREG(st.st_mode)) {
    tfmm_io_fail(f->report,
                 "%s: not a regular file: a binary snapshot is read at "
                 "offsets",
                 path);
    tfmm_binfile_close(f);
    return 0;
  }
  f->size = (uint64_t)st.st_size;
  return 1;
}

void tfmm_binfile_close(tfmm_binfile *f) {
  if (f->fp != NULL)
    fclose(f->fp);
  f->fp = NULL;
}

int tfmm_binfile_read(const tfmm_binfile *f, uint64_t offset, void *buf,
                      size_t len, const char *what) {
  if (offset > f->size || len > f->size - offset) {
    tfmm_io_fail(f->report,
                 "%s: truncated: %s needs %zu bytes at byte offset %" PRIu64
                 ", but the file ends at byte %" PRIu64,
                 f->path, what, len, offset, f->size);
    return 0;
  }
  errno = 0;
  if (fseeko(f->fp, (off_t)offset, SEEK_SET) != 0 ||
      fread(buf, 1, len, f->fp) != len) {
    tfmm_io_fail(f->report, "%s: cannot read %s at byte offset %" PRIu64 ": %s",
                 f->path, what, offset,
                 errno != 0 ? strerror(errno) : "I/O error");
    return 0;
  }
  return 1;
}

uint32_t tfmm_binfile_u32_order(const unsigned char *p, int little) {
  uint32_t v = 0;
  for (int k = 0; k < 4; k++)
    v |= (uint32_t)p[little ? k : 3 - k] << (8 * k);
  return v;
}

uint32_t tfmm_binfile_u32(const tfmm_binfile *f, const unsigned char *p) {
  return tfmm_binfile_u32_order(p, f->little);
}

uint64_t tfmm_binfile_u64(const tfmm_binfile *f, const unsigned char *p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++)
    v |= (uint64_t)p[f->little ? k : 7 - k] << (8 * k);
  return v;
}

double tfmm_binfile_f64(const tfmm_binfile *f, const unsigned char *p) {
  const uint64_t bits = tfmm_binfile_u64(f, p);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

double tfmm_binfile_f32(const tfmm_binfile *f, const unsigned char *p) {
  const uint32_t bits = tfmm_binfile_u32(f, p);
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

#define CHUNK 16384 /* reals read at a time */

/* Decodes c values of the given width from buf into out[done..]. */
typedef void decode_fn(const tfmm_binfile *f, const unsigned char *buf,
                       size_t c, int width, void *out, size_t done);

static void decode_reals(const tfmm_binfile *f, const unsigned char *buf,
                         size_t c, int width, void *out, size_t done) {
  double *o = (double *)out + done;
  for (size_t i = 0; i < c; i++)
    o[i] = width == 8 ? tfmm_binfile_f64(f, buf + 8 * i)
                      : tfmm_binfile_f32(f, buf + 4 * i);
}

static void decode_uints(const tfmm_binfile *f, const unsigned char *buf,
                         size_t c, int width, void *out, size_t done) {
  uint64_t *o = (uint64_t *)out + done;
  for (size_t i = 0; i < c; i++)
    o[i] = width == 8 ? tfmm_binfile_u64(f, buf + 8 * i)
                      : tfmm_binfile_u32(f, buf + 4 * i);
}

/* count values of width bytes from offset, CHUNK at a time. */
static int read_values(const tfmm_binfile *f, uint64_t offset, size_t count,
                       int width, void *out, const char *what,
                       decode_fn *decode) {
  unsigned char buf[CHUNK * 8];
  for (size_t done = 0; done < count;) {
    const size_t c = count - done < CHUNK ? count - done : CHUNK;
    if (!tfmm_binfile_read(f, offset + (uint64_t)done * (uint64_t)width, buf,
                           c * (size_t)width, what))
      return 0;
    decode(f, buf, c, width, out, done);
    done += c;
  }
  return 1;
}

int tfmm_binfile_reals(const tfmm_binfile *f, uint64_t offset, size_t count,
                       int width, double *out, const char *what) {
  return read_values(f, offset, count, width, out, what, decode_reals);
}

int tfmm_binfile_uints(const tfmm_binfile *f, uint64_t offset, size_t count,
                       int width, uint64_t *out, const char *what) {
  return read_values(f, offset, count, width, out, what, decode_uints);
}
