/* A surface-density picture labelled as a paper's figure: the density
 * map drawn by gnuplot with axes in the run's length unit, the time in its
 * time unit and a colour bar of the surface density (log scale) in its
 * units; the bare map of render_png.h when gnuplot is not installed (said
 * on stderr) or when asked for. What 'tilefmm render' draws from a
 * snapshot and 'tilefmm run' from its last step. */
#ifndef TFMM_RENDER_FIGURE_H
#define TFMM_RENDER_FIGURE_H

#include "render_png.h"
#include "units.h"

#include <stddef.h>

/* What the figure says besides the bodies. */
typedef struct render_figure_info {
  const char *source;   /* names the bodies ("snapshot_0010.hdf5") */
  const char *software; /* the program ("tilefmm 0.1.0 render") */
  const char *title;    /* the figure's title, or NULL: source */
  const units *units;   /* the bodies' units (mass 0: N-body units) */
  double time;          /* the bodies' time, in units' time unit */
  int bare;             /* 1: the bare map (render_png_write), no gnuplot */
} render_figure_info;

/* Draws the n bodies (pos 3n, mass n) seen as spec says to out,
 * atomically: with gnuplot a figure of spec->size pixels for the map and
 * room for the axes, title and colour bar around it; its tEXt chunks are
 * the bare map's 'Description' and 'Software', and 'Labels': the axis,
 * time and colour-bar labels as drawn. Returns 1 and fills *r, else prints
 * and returns 0. *used_gnuplot (when not NULL) tells which was drawn. */
int render_figure_write(const char *out, const render_figure_info *info,
                        size_t n, const double *pos, const double *mass,
                        const render_spec *spec, render_result *r,
                        int *used_gnuplot);

#endif
