/* A surface-density picture of a set of bodies written as a PNG, with a
 * tEXt 'Description' that records how it was made: what 'tilefmm render'
 * draws from a snapshot and 'tilefmm run' from its last step. */
#ifndef TFMM_RENDER_PNG_H
#define TFMM_RENDER_PNG_H

#include "raster.h"

#include <stddef.h>

/* The share of the mass the automatic view holds (see raster.h). */
#define RENDER_AUTO_FRACTION 0.99

typedef struct render_spec {
  int axis;             /* projection axis: 0, 1 or 2 */
  const double *centre; /* 3: the view's centre; NULL: the centre of mass */
  double extent;        /* full width; 0: automatic */
  int size;             /* pixels per side */
  double decades;       /* log10 range of the colour map */
} render_spec;

/* What a picture records about how it was made. */
typedef struct render_result {
  raster_view view;
  size_t in_view;
  double mass_in_view, mass_total, sigma_max;
} render_result;

/* Deposits the n bodies (pos 3n, mass n) seen as spec says, colours them
 * and writes the picture to out atomically. source names the bodies in the
 * description ("snapshot_0010.hdf5"), software the program ("tilefmm 0.1.0
 * render"). A picture with no body in view is written black, with a
 * warning. Returns 1 and fills *r on success; else prints and returns 0. */
int render_png_write(const char *out, const char *source, const char *software,
                     size_t n, const double *pos, const double *mass,
                     double time, const render_spec *spec, render_result *r);

/* The deposit of render_png_write: fills *r and returns the surface
 * density (spec->size^2 pixels, row 0 the top, as raster_deposit; free
 * it), or NULL (printed) when out of memory. */
double *render_png_density(const char *source, size_t n, const double *pos,
                           const double *mass, const render_spec *spec,
                           render_result *r);

/* The tEXt 'Description' of a picture of r (free it; NULL when out of
 * memory). */
char *render_png_describe(const char *source, size_t n, double time,
                          double decades, const render_result *r);

#endif
