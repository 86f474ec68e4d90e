/* Surface-density pictures (see raster.h). */
#include "raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void raster_plane_axes(int axis, int *right, int *up) {
  *right = (axis + 1) % 3;
  *up = (axis + 2) % 3;
}

/* The two pixels along one image axis that the cloud of a body at p (in
 * pixels from the low edge, 0 <= p < size) overlaps, and the share of
 * each. Pixel i spans [i, i + 1), so its centre is at i + 1/2; a cloud
 * reaching beyond the first or last pixel puts that part on it. */
static void cic_weights(double p, int size, int idx[2], double w[2]) {
  const double t = p - 0.5;
  const double lo = floor(t);
  const double f = t - lo;
  const int i0 = (int)lo;
  idx[0] = i0 < 0 ? 0 : i0;
  idx[1] = i0 + 1 > size - 1 ? size - 1 : i0 + 1;
  w[0] = 1.0 - f;
  w[1] = f;
}

size_t raster_deposit(const raster_view *v, size_t n, const double *pos,
                      const double *mass, double *sigma, double *mass_in_view) {
  const int size = v->size;
  const size_t pixels = (size_t)size * (size_t)size;
  memset(sigma, 0, pixels * sizeof *sigma);
  int right, up;
  raster_plane_axes(v->axis, &right, &up);
  const double h = v->extent / size;
  const double lo_r = v->centre[right] - 0.5 * v->extent;
  const double lo_u = v->centre[up] - 0.5 * v->extent;
  size_t in_view = 0;
  double m_in = 0.0;
  for (size_t k = 0; k < n; k++) {
    const double p = (pos[3 * k + right] - lo_r) / h;
    const double q = (pos[3 * k + up] - lo_u) / h;
    /* The test is on p and q themselves, so that a body the rounding puts
     * on the far edge counts as outside. */
    if (!(p >= 0.0 && p < size && q >= 0.0 && q < size))
      continue;
    int ip[2], iq[2];
    double wp[2], wq[2];
    cic_weights(p, size, ip, wp);
    cic_weights(q, size, iq, wq);
    for (int b = 0; b < 2; b++) {
      /* q counts up from the bottom; rows count down from the top. */
      double *row = sigma + (size_t)(size - 1 - iq[b]) * (size_t)size;
      for (int a = 0; a < 2; a++)
        row[ip[a]] += mass[k] * wp[a] * wq[b];
    }
    in_view++;
    m_in += mass[k];
  }
  const double inv_area = 1.0 / (h * h);
  for (size_t i = 0; i < pixels; i++)
    sigma[i] *= inv_area;
  if (mass_in_view != NULL)
    *mass_in_view = m_in;
  return in_view;
}

void raster_centre_of_mass(size_t n, const double *pos, const double *mass,
                           double centre[3]) {
  double m = 0.0, s[3] = {0.0, 0.0, 0.0};
  for (size_t k = 0; k < n; k++) {
    m += mass[k];
    for (int d = 0; d < 3; d++)
      s[d] += mass[k] * pos[3 * k + d];
  }
  for (int d = 0; d < 3; d++)
    centre[d] = m > 0.0 ? s[d] / m : 0.0;
}

typedef struct radius_mass {
  double r2, m;
} radius_mass;

static int by_radius(const void *a, const void *b) {
  const double x = ((const radius_mass *)a)->r2;
  const double y = ((const radius_mass *)b)->r2;
  return (x > y) - (x < y);
}

int raster_auto_extent(int axis, const double centre[3], size_t n,
                       const double *pos, const double *mass, double fraction,
                       double *extent) {
  *extent = 1.0;
  if (n == 0)
    return 1;
  radius_mass *rm = malloc(n * sizeof *rm);
  if (rm == NULL)
    return 0;
  int right, up;
  raster_plane_axes(axis, &right, &up);
  double total = 0.0;
  for (size_t k = 0; k < n; k++) {
    const double dx = pos[3 * k + right] - centre[right];
    const double dy = pos[3 * k + up] - centre[up];
    rm[k].r2 = dx * dx + dy * dy;
    rm[k].m = mass[k];
    total += mass[k];
  }
  qsort(rm, n, sizeof *rm, by_radius);
  /* The smallest radius whose disc holds the fraction: the first body at
   * which the running sum reaches it (the last one, whatever the
   * rounding). */
  size_t k = 0;
  double sum = rm[0].m;
  while (k + 1 < n && sum < fraction * total)
    sum += rm[++k].m;
  double r = sqrt(rm[k].r2);
  if (r <= 0.0)
    r = sqrt(rm[n - 1].r2);
  if (r > 0.0)
    *extent = 2.0 * r;
  free(rm);
  return 1;
}

double raster_max(const double *sigma, size_t count) {
  double max = 0.0;
  for (size_t i = 0; i < count; i++)
    if (sigma[i] > max)
      max = sigma[i];
  return max;
}

double raster_log_level(double sigma, double sigma_max, double decades) {
  if (!(sigma > 0.0) || !(sigma_max > 0.0))
    return -1.0;
  const double level = log10(sigma / sigma_max) / decades + 1.0;
  return level < 0.0 ? 0.0 : level > 1.0 ? 1.0 : level;
}

/* matplotlib's 'inferno' (256 entries) sampled at 17 equally spaced
 * levels and rounded to 8 bits; linear interpolation between them stays
 * within a few units of the full table and keeps its lightness
 * monotonic. */
#define INFERNO_NODES 17
static const unsigned char inferno[INFERNO_NODES][3] = {
    {0, 0, 4},      {11, 7, 36},    {33, 12, 74},   {61, 9, 101},
    {87, 16, 110},  {113, 25, 110}, {138, 34, 106}, {163, 44, 97},
    {188, 55, 84},  {208, 69, 69},  {227, 89, 51},  {241, 113, 31},
    {249, 140, 10}, {252, 170, 15}, {249, 201, 50}, {242, 232, 101},
    {252, 255, 164}};

void raster_colour(double level, unsigned char rgb[3]) {
  if (!(level >= 0.0)) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  const double x = (level > 1.0 ? 1.0 : level) * (INFERNO_NODES - 1);
  int k = (int)x;
  if (k > INFERNO_NODES - 2)
    k = INFERNO_NODES - 2;
  const double f = x - k;
  for (int c = 0; c < 3; c++) {
    const double v = (1.0 - f) * inferno[k][c] + f * inferno[k + 1][c];
    rgb[c] = (unsigned char)lround(v);
  }
}

double raster_to_rgb(const double *sigma, int size, double decades,
                     unsigned char *rgb) {
  const size_t pixels = (size_t)size * (size_t)size;
  const double max = raster_max(sigma, pixels);
  for (size_t i = 0; i < pixels; i++)
    raster_colour(raster_log_level(sigma[i], max, decades), rgb + 3 * i);
  return max;
}
