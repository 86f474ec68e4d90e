/* Surface-density pictures written as PNG: see render_png.h. */
#define _POSIX_C_SOURCE 200809L
#include "render_png.h"
#include "cli.h"
#include "png_write.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* printf into a string of the right size; NULL when out of memory. */
static char *format(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static char *format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (text != NULL) {
    va_start(ap, fmt);
    vsnprintf(text, (size_t)len + 1, fmt, ap);
    va_end(ap);
  }
  return text;
}

char *render_png_describe(const char *source, size_t n, double time,
                          double decades, const render_result *r) {
  static const char axes[] = "xyz";
  int right, up;
  raster_plane_axes(r->view.axis, &right, &up);
  const double *c = r->view.centre;
  return format(
      "Surface density of %s (%zu bodies, time %.9g) projected along %c "
      "(right %c, up %c); centre (%.9g, %.9g, %.9g), extent %.9g (full "
      "width), %d x %d pixels; %zu bodies of mass %.9g in view (of %.9g); "
      "range: log10 surface density over %g decades, from %.6g (darkest) "
      "to %.6g (brightest); inferno colour map, empty pixels black",
      source, n, time, axes[r->view.axis], axes[right], axes[up], c[0], c[1],
      c[2], r->view.extent, r->view.size, r->view.size, r->in_view,
      r->mass_in_view, r->mass_total, decades,
      r->sigma_max * pow(10.0, -decades), r->sigma_max);
}

/* The view: the given centre or the centre of mass, the given extent or
 * the automatic one. */
static int choose_view(const render_spec *spec, size_t n, const double *pos,
                       const double *mass, raster_view *v) {
  v->axis = spec->axis;
  v->size = spec->size;
  if (spec->centre != NULL)
    memcpy(v->centre, spec->centre, sizeof v->centre);
  else
    raster_centre_of_mass(n, pos, mass, v->centre);
  v->extent = spec->extent;
  if (v->extent > 0.0)
    return 1;
  if (!raster_auto_extent(v->axis, v->centre, n, pos, mass,
                          RENDER_AUTO_FRACTION, &v->extent)) {
    cli_error("render: out of memory for %zu bodies", n);
    return 0;
  }
  return 1;
}

double *render_png_density(const char *source, size_t n, const double *pos,
                           const double *mass, const render_spec *spec,
                           render_result *r) {
  memset(r, 0, sizeof *r);
  if (!choose_view(spec, n, pos, mass, &r->view))
    return NULL;
  const size_t pixels = (size_t)spec->size * (size_t)spec->size;
  double *sigma = malloc(pixels * sizeof *sigma);
  if (sigma == NULL) {
    cli_error("render: out of memory for %d x %d pixels", spec->size,
              spec->size);
    return NULL;
  }
  r->in_view = raster_deposit(&r->view, n, pos, mass, sigma, &r->mass_in_view);
  for (size_t k = 0; k < n; k++)
    r->mass_total += mass[k];
  r->sigma_max = raster_max(sigma, pixels);
  if (r->in_view == 0)
    cli_error("render: warning: no bodies of %s in view; the picture is "
              "black",
              source);
  return sigma;
}

int render_png_write(const char *out, const char *source, const char *software,
                     size_t n, const double *pos, const double *mass,
                     double time, const render_spec *spec, render_result *r) {
  double *sigma = render_png_density(source, n, pos, mass, spec, r);
  if (sigma == NULL)
    return 0;
  const size_t pixels = (size_t)spec->size * (size_t)spec->size;
  unsigned char *rgb = malloc(3 * pixels);
  int ok = rgb != NULL;
  if (!ok)
    cli_error("render: out of memory for %d x %d pixels", spec->size,
              spec->size);
  char *text = NULL;
  if (ok) {
    raster_to_rgb(sigma, spec->size, spec->decades, rgb);
    text = render_png_describe(source, n, time, spec->decades, r);
    ok = text != NULL;
    if (!ok)
      cli_error("render: out of memory");
  }
  if (ok) {
    const png_write_text chunks[] = {{"Description", text},
                                     {"Software", software}};
    ok = png_write_rgb(out, spec->size, spec->size, rgb, chunks, 2);
  }
  free(text);
  free(sigma);
  free(rgb);
  return ok;
}
