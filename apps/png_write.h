/* 8-bit RGB pictures as PNG files (libpng), replaced atomically: on any
 * failure an existing file at the destination is left untouched. Named
 * png_write_* after this file; libpng owns no such names. */
#ifndef TFMM_PNG_WRITE_H
#define TFMM_PNG_WRITE_H

#include <stddef.h>

/* A tEXt chunk: key of 1 to 79 Latin-1 characters ("Description"). */
typedef struct png_write_text {
  const char *key;
  const char *value;
} png_write_text;

/* Writes the width x height RGB triples rgb (row 0 the top) to path with
 * the ntext tEXt chunks text. Prints "tilefmm: PATH: what is wrong" and
 * returns 0 on failure, else 1. */
int png_write_rgb(const char *path, int width, int height,
                  const unsigned char *rgb, const png_write_text *text,
                  size_t ntext);

/* Adds the ntext tEXt chunks to the PNG file at path (one another program
 * wrote: gnuplot's), right after its IHDR, rewriting the file in place.
 * Prints "tilefmm: PATH: what is wrong" and returns 0 on failure (not a
 * PNG, a read or write error), else 1. */
int png_write_add_text(const char *path, const png_write_text *text,
                       size_t ntext);

#endif
