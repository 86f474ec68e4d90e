/* Plots drawn by gnuplot, an optional program: the commands that plot
 * (tune, run) write their table first and the picture second, so that a
 * machine without gnuplot loses only the picture. */
#ifndef TFMM_GNUPLOT_H
#define TFMM_GNUPLOT_H

#include "png_write.h"

#include <stdio.h>

/* Whether gnuplot is an executable in a directory of PATH. */
int gnuplot_on_path(void);

/* s as a gnuplot single-quoted string: no escapes but '' for a quote;
 * control characters become '?'. */
void gnuplot_string(FILE *gp, const char *s);

/* The preamble every plot shares: the pngcairo terminal (png when gnuplot
 * has no cairo) of width x height pixels, writing to png_path. */
void gnuplot_png_terminal(FILE *gp, int width, int height,
                          const char *png_path);

/* Runs gnuplot on the script that script(gp, tmp_path, ctx) writes; the
 * picture goes to the temporary of an atomic png, synced and renamed over
 * it when gnuplot succeeds and the file is a whole PNG (gnuplot exits 0
 * after a write that failed on a full disk). table names the file that
 * holds the data, for the message when gnuplot fails. gnuplot's own
 * messages reach stderr. Returns 1 on success; else prints and returns 0,
 * png untouched. */
int gnuplot_draw(const char *png, const char *table,
                 void (*script)(FILE *gp, const char *tmp_path, void *ctx),
                 void *ctx);

/* gnuplot_draw, with the ntext tEXt chunks text added to the picture
 * before it replaces png (gnuplot writes none of its own). */
int gnuplot_draw_text(const char *png, const char *table,
                      void (*script)(FILE *gp, const char *tmp_path, void *ctx),
                      void *ctx, const png_write_text *text, size_t ntext);

#endif
