/* Reading a binary file of either byte order at explicit offsets, with
 * every read checked against the file's size: a truncated file is
 * reported with the file, the part being read and the byte offset, never
 * read past or taken for zeros. Shared by the Tipsy and GADGET-2 readers. */
#ifndef TFMM_BINFILE_H
#define TFMM_BINFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct binfile {
  const char *path;
  FILE *fp;
  uint64_t size; /* bytes */
  int little;    /* the file's numbers are little-endian (else big) */
} binfile;

/* Opens path for reading (little set to 1); prints why not and returns 0. */
int binfile_open(binfile *f, const char *path);
void binfile_close(binfile *f);

/* Reads len bytes at offset into buf. what names the part read ("the
 * header", "block POS"). Prints "PATH: truncated: WHAT needs LEN bytes at
 * byte offset OFFSET, but the file ends at byte SIZE" (or the system's
 * reason) and returns 0 on failure. */
int binfile_read(const binfile *f, uint64_t offset, void *buf, size_t len,
                 const char *what);

/* Numbers at p, in the file's byte order. */
uint32_t binfile_u32(const binfile *f, const unsigned char *p);
uint64_t binfile_u64(const binfile *f, const unsigned char *p);
double binfile_f64(const binfile *f, const unsigned char *p);
double binfile_f32(const binfile *f, const unsigned char *p);

/* Reads count reals of width bytes (4: float, 8: double) at offset into
 * out, a block at a time (see binfile_read for what and failures). */
int binfile_reals(const binfile *f, uint64_t offset, size_t count, int width,
                  double *out, const char *what);

/* Reads count unsigned integers of width bytes (4 or 8) at offset into
 * out (see binfile_read for what and failures). */
int binfile_uints(const binfile *f, uint64_t offset, size_t count, int width,
                  uint64_t *out, const char *what);

/* 32-bit integers in either byte order, for probing a file's first bytes. */
uint32_t binfile_u32_order(const unsigned char *p, int little);

#endif
