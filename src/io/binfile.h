/* Reading a binary file of either byte order at explicit offsets, with
 * every read checked against the file's size: a truncated file is
 * reported with the file, the part being read and the byte offset, never
 * read past or taken for zeros. Shared by the Tipsy and GADGET-2 readers
 * (src/io/). */
#ifndef TFMM_IO_BINFILE_H
#define TFMM_IO_BINFILE_H

#include "io/io.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tfmm_binfile {
  tfmm_io_report *report; /* where failures are reported */
  const char *path;
  FILE *fp;
  uint64_t size; /* bytes */
  int little;    /* the file's numbers are little-endian (else big) */
} tfmm_binfile;

/* Opens path for reading (little set to 1), reporting to r; reports why
 * not and returns 0. */
int tfmm_binfile_open(tfmm_binfile *f, tfmm_io_report *r, const char *path);
void tfmm_binfile_close(tfmm_binfile *f);

/* Reads len bytes at offset into buf. what names the part read ("the
 * header", "block POS"). Prints "PATH: truncated: WHAT needs LEN bytes at
 * byte offset OFFSET, but the file ends at byte SIZE" (or the system's
 * reason) and returns 0 on failure. */
int tfmm_binfile_read(const tfmm_binfile *f, uint64_t offset, void *buf,
                      size_t len, const char *what);

/* Numbers at p, in the file's byte order. */
uint32_t tfmm_binfile_u32(const tfmm_binfile *f, const unsigned char *p);
uint64_t tfmm_binfile_u64(const tfmm_binfile *f, const unsigned char *p);
double tfmm_binfile_f64(const tfmm_binfile *f, const unsigned char *p);
double tfmm_binfile_f32(const tfmm_binfile *f, const unsigned char *p);

/* Reads count reals of width bytes (4: float, 8: double) at offset into
 * out, a block at a time (see tfmm_binfile_read for what and failures). */
int tfmm_binfile_reals(const tfmm_binfile *f, uint64_t offset, size_t count,
                       int width, double *out, const char *what);

/* Reads count unsigned integers of width bytes (4 or 8) at offset into
 * out (see tfmm_binfile_read for what and failures). */
int tfmm_binfile_uints(const tfmm_binfile *f, uint64_t offset, size_t count,
                       int width, uint64_t *out, const char *what);

/* 32-bit integers in either byte order, for probing a file's first bytes. */
uint32_t tfmm_binfile_u32_order(const unsigned char *p, int little);

#endif
