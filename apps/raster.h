/* Surface-density pictures of a set of bodies: cloud-in-cell deposition on
 * a square grid seen along one coordinate axis, the automatic field of
 * view, and a logarithmic colour map. Pure functions of their inputs; the
 * command that uses them is apps/cmd_render.c. */
#ifndef TFMM_RASTER_H
#define TFMM_RASTER_H

#include <stddef.h>

/* A square field of view seen along a coordinate axis. The image axes are
 * the other two in right-handed order: along z, x is right and y up; along
 * x, y right and z up; along y, z right and x up. */
typedef struct raster_view {
  int axis;         /* projection axis: 0 (x), 1 (y) or 2 (z) */
  double centre[3]; /* centre of the view; its coordinate along axis is
                       ignored */
  double extent;    /* full width of the view, > 0, in length units */
  int size;         /* pixels per side, >= 1 */
} raster_view;

/* The coordinates shown right and up when looking along axis. */
void raster_plane_axes(int axis, int *right, int *up);

/* Deposits the n bodies on v->size^2 pixels of sigma (overwritten) by
 * cloud-in-cell (Hockney & Eastwood 1988, sec. 5-2-2): each body is a
 * square of one pixel's width whose mass is shared among the pixels it
 * overlaps, in proportion to the area of overlap. sigma holds mass per
 * unit area, row-major with row 0 the top of the picture.
 *
 * A body belongs to the view when its projected position lies in the half
 * open square [c - E/2, c + E/2) on both image axes; such a body deposits
 * all its mass (the part of its cloud beyond the edge goes to the edge
 * pixel), a body outside deposits nothing. So sum(sigma) * pixel area is
 * exactly the mass in view. Returns the number of bodies in view and,
 * when mass_in_view is not NULL, their mass. */
size_t raster_deposit(const raster_view *v, size_t n, const double *pos,
                      const double *mass, double *sigma, double *mass_in_view);

/* The centre of mass of the n bodies (masses > 0). */
void raster_centre_of_mass(size_t n, const double *pos, const double *mass,
                           double centre[3]);

/* The automatic extent: twice the projected distance from centre (in the
 * plane of the picture) within which a fraction (0 < fraction <= 1) of the
 * mass lies, so that the circle inscribed in the view holds that fraction
 * and a few distant bodies (escapers) do not shrink the rest to a dot.
 * When that distance is 0 (the mass projects onto the centre), the largest
 * distance is used instead, and when that is 0 too, 1. Returns 0 when out
 * of memory, else 1. */
int raster_auto_extent(int axis, const double centre[3], size_t n,
                       const double *pos, const double *mass, double fraction,
                       double *extent);

/* The largest value of sigma[0 .. count), 0 when none is positive. */
double raster_max(const double *sigma, size_t count);

/* The position of sigma on a logarithmic scale spanning the decades below
 * sigma_max: 0 at sigma_max 10^-decades and below, 1 at sigma_max and
 * above, log10(sigma / sigma_max) / decades + 1 between; -1 for an empty
 * pixel (sigma <= 0) or when sigma_max <= 0. */
double raster_log_level(double sigma, double sigma_max, double decades);

/* The colour of level on the 'inferno' colour map (van der Walt & Smith,
 * matplotlib), whose lightness rises monotonically from black to pale
 * yellow; black for level < 0. Levels above 1 count as 1. */
void raster_colour(double level, unsigned char rgb[3]);

/* The picture of sigma (size^2 pixels, as from raster_deposit) as 8-bit
 * RGB triples, row 0 the top: raster_colour of raster_log_level with the
 * largest pixel as sigma_max. Returns that largest value. */
double raster_to_rgb(const double *sigma, int size, double decades,
                     unsigned char *rgb);

#endif
