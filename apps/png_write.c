/* PNG files through libpng (see png_write.h). */
#define _POSIX_C_SOURCE 200809L
#include "png_write.h"

#include "atomic_file.h"
#include "cli.h"

#include <errno.h>
#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* libpng reports errors through a callback that must not return: it
 * prints them in the tool's manner and jumps back to png_write_rgb. */
static void on_error(png_structp png, png_const_charp msg) {
  const char *path = png_get_error_ptr(png);
  cli_error("%s: cannot write the picture: %s", path, msg);
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) {
  const char *path = png_get_error_ptr(png);
  cli_error("%s: warning: %s", path, msg);
}

/* The libpng calls, with the jump target of on_error. Returns 1 when the
 * whole picture went to fp. */
static int encode(png_structp png, png_infop info, FILE *fp, int width,
                  int height, const unsigned char *rgb,
                  const png_write_text *text, size_t ntext, png_text *chunks) {
  if (setjmp(png_jmpbuf(png)))
    return 0;
  png_init_io(png, fp);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  for (size_t k = 0; k < ntext; k++) {
    chunks[k].compression = PNG_TEXT_COMPRESSION_NONE;
    chunks[k].key = (png_charp)text[k].key;
    chunks[k].text = (png_charp)text[k].value;
  }
  if (ntext > 0)
    png_set_text(png, info, chunks, (int)ntext);
  png_write_info(png, info);
  const size_t stride = 3 * (size_t)width;
  for (int y = 0; y < height; y++)
    png_write_row(png, rgb + (size_t)y * stride);
  png_write_end(png, info);
  return 1;
}

int png_write_rgb(const char *path, int width, int height,
                  const unsigned char *rgb, const png_write_text *text,
                  size_t ntext) {
  png_text *chunks = calloc(ntext > 0 ? ntext : 1, sizeof *chunks);
  if (chunks == NULL) {
    cli_error("%s: out of memory", path);
    return 0;
  }
  atomic_file af;
  if (!atomic_file_open(&af, path)) {
    free(chunks);
    return 0;
  }
  png_structp png = png_create_write_struct(
      PNG_LIBPNG_VER_STRING, (png_voidp)path, on_error, on_warning);
  png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
  int ok = info != NULL;
  if (!ok)
    cli_error("%s: out of memory for libpng", path);
  ok = ok && encode(png, info, af.fp, width, height, rgb, text, ntext, chunks);
  png_destroy_write_struct(&png, &info);
  free(chunks);
  if (ok)
    return atomic_file_commit(&af);
  atomic_file_discard(&af);
  return 0;
}

/* The CRC-32 of PNG chunks (PNG specification, annex D), over the type
 * and data. */
static uint32_t crc32_update(uint32_t c, const unsigned char *p, size_t n) {
  for (size_t k = 0; k < n; k++) {
    c ^= p[k];
    for (int b = 0; b < 8; b++)
      c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c;
}

static void put_u32(FILE *fp, uint32_t v) {
  const unsigned char b[4] = {(unsigned char)(v >> 24),
                              (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                              (unsigned char)v};
  fwrite(b, 1, 4, fp);
}

/* A tEXt chunk: length, type, key NUL value, CRC. */
static void put_text(FILE *fp, const png_write_text *t) {
  const size_t klen = strlen(t->key), vlen = strlen(t->value);
  put_u32(fp, (uint32_t)(klen + 1 + vlen));
  const unsigned char type[4] = {'t', 'E', 'X', 't'}, nul = 0;
  fwrite(type, 1, 4, fp);
  fwrite(t->key, 1, klen, fp);
  fwrite(&nul, 1, 1, fp);
  fwrite(t->value, 1, vlen, fp);
  uint32_t c = crc32_update(0xffffffffu, type, 4);
  c = crc32_update(c, (const unsigned char *)t->key, klen);
  c = crc32_update(c, &nul, 1);
  c = crc32_update(c, (const unsigned char *)t->value, vlen);
  put_u32(fp, c ^ 0xffffffffu);
}

int png_write_add_text(const char *path, const png_write_text *text,
                       size_t ntext) {
  FILE *fp = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t len = 0;
  int ok = fp != NULL;
  if (ok) {
    ok = fseek(fp, 0, SEEK_END) == 0 && ftell(fp) > 0;
    len = ok ? (size_t)ftell(fp) : 0;
    buf = ok ? malloc(len) : NULL;
    ok = buf != NULL && fseek(fp, 0, SEEK_SET) == 0 &&
         fread(buf, 1, len, fp) == len;
    fclose(fp);
  }
  if (!ok) {
    cli_error("%s: cannot read the picture back: %s", path, strerror(errno));
    free(buf);
    return 0;
  }
  /* The signature, then IHDR: 8 + 4 + 4 + 13 + 4 bytes. */
  static const unsigned char signature[8] = {0x89, 'P',  'N',  'G',
                                             '\r', '\n', 0x1a, '\n'};
  const size_t ihdr_end = 8 + 25;
  if (len < ihdr_end || memcmp(buf, signature, 8) != 0 ||
      memcmp(buf + 12, "IHDR", 4) != 0) {
    cli_error("%s: not a PNG with an IHDR first", path);
    free(buf);
    return 0;
  }
  fp = fopen(path, "wb");
  ok = fp != NULL;
  if (ok) {
    fwrite(buf, 1, ihdr_end, fp);
    for (size_t k = 0; k < ntext; k++)
      put_text(fp, &text[k]);
    fwrite(buf + ihdr_end, 1, len - ihdr_end, fp);
    ok = !ferror(fp);
    ok = fclose(fp) == 0 && ok;
  }
  if (!ok)
    cli_error("%s: cannot write: %s", path, strerror(errno));
  free(buf);
  return ok;
}
