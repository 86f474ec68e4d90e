/* PNG files through libpng (see png_write.h). */
#define _POSIX_C_SOURCE 200809L
#include "png_write.h"

#include "atomic_file.h"
#include "cli.h"

#include <png.h>
#include <stdlib.h>

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
