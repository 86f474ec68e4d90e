/* Unit tests of the pictures of tilefmm render (apps/raster.c): mass in
 * view conserved, each body in the pixel its coordinates say, the image
 * axes of each projection, the cloud-in-cell shares, the automatic view,
 * and the logarithmic colour map. The command itself is tested in
 * test_render_cli.c. */
#define _POSIX_C_SOURCE 200809L
#include "raster.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The apps sources compiled in here report through cli_error. */
void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tilefmm: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Fresh inputs each run (splitmix64); the seed is in every message. */
static uint64_t rng_state;
static uint64_t seed;

static void rng_init(void) {
  seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  rng_state = seed;
}

static double uniform(double lo, double hi) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) * 0x1p-53;
}

TestSuite(raster, .init = rng_init);

/* A fresh grid poisoned with NaN, so that a pixel left unwritten shows. */
static double *grid(int size) {
  double *g = malloc((size_t)size * (size_t)size * sizeof *g);
  cr_assert_not_null(g);
  for (int i = 0; i < size * size; i++)
    g[i] = NAN;
  return g;
}

static double grid_sum(const double *g, int size) {
  double s = 0.0;
  for (int i = 0; i < size * size; i++)
    s += g[i];
  return s;
}

/* pos of one body: right and up coordinates r and u, along-axis w. */
static void place(int axis, double r, double u, double w, double pos[3]) {
  int right, up;
  raster_plane_axes(axis, &right, &up);
  pos[right] = r;
  pos[up] = u;
  pos[axis] = w;
}

Test(raster, plane_axes_are_right_handed) {
  for (int axis = 0; axis < 3; axis++) {
    int r, u;
    raster_plane_axes(axis, &r, &u);
    /* e_right x e_up = e_axis: (r, u, axis) is a cyclic order. */
    cr_assert_eq(u, (r + 1) % 3, "axis %d", axis);
    cr_assert_eq(axis, (u + 1) % 3, "axis %d", axis);
  }
  int r, u;
  raster_plane_axes(2, &r, &u);
  cr_assert(r == 0 && u == 1, "along z: x right, y up");
  raster_plane_axes(0, &r, &u);
  cr_assert(r == 1 && u == 2, "along x: y right, z up");
  raster_plane_axes(1, &r, &u);
  cr_assert(r == 2 && u == 0, "along y: z right, x up");
}

Test(raster, mass_in_view_is_conserved) {
  enum { N = 20000, SIZE = 97 };
  double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
  double *sigma = grid(SIZE);
  for (int axis = 0; axis < 3; axis++) {
    const raster_view v = {axis, {0.3, -1.7, 2.2}, 2.5, SIZE};
    int right, up;
    raster_plane_axes(axis, &right, &up);
    double want = 0.0;
    size_t want_n = 0;
    /* Bodies over a region larger than the view, so that some are out. */
    for (int k = 0; k < N; k++) {
      for (int d = 0; d < 3; d++)
        pos[3 * k + d] = v.centre[d] + uniform(-2.0, 2.0);
      mass[k] = uniform(0.1, 10.0);
      const double x = pos[3 * k + right] - v.centre[right];
      const double y = pos[3 * k + up] - v.centre[up];
      if (fabs(x) < 0.5 * v.extent && fabs(y) < 0.5 * v.extent) {
        want += mass[k];
        want_n++;
      }
    }
    double got_mass;
    const size_t n = raster_deposit(&v, N, pos, mass, sigma, &got_mass);
    const double h = v.extent / SIZE;
    const double got = grid_sum(sigma, SIZE) * h * h;
    cr_assert_eq(n, want_n, "axis %d, seed %llu", axis,
                 (unsigned long long)seed);
    cr_assert(want_n > N / 5 && want_n < N / 2);
    cr_assert(fabs(got - want) <= 1e-12 * want,
              "axis %d: %.17g in the picture, %.17g in view (seed %llu)", axis,
              got, want, (unsigned long long)seed);
    cr_assert(fabs(got_mass - want) <= 1e-12 * want);
  }
  free(pos);
  free(mass);
  free(sigma);
}

/* A body at the centre of pixel (col, row counted up from the bottom)
 * puts all its mass there, for every axis. */
Test(raster, single_body_lands_in_its_pixel) {
  enum { SIZE = 32 };
  double *sigma = grid(SIZE);
  const int cols[] = {0, 5, 31, 17}, rows[] = {0, 30, 31, 2};
  for (int axis = 0; axis < 3; axis++) {
    for (int t = 0; t < 4; t++) {
      const raster_view v = {axis, {1.0, -2.0, 3.0}, 4.0, SIZE};
      int right, up;
      raster_plane_axes(axis, &right, &up);
      const double h = v.extent / SIZE;
      double pos[3];
      place(axis, v.centre[right] - 2.0 + (cols[t] + 0.5) * h,
            v.centre[up] - 2.0 + (rows[t] + 0.5) * h, uniform(-1e3, 1e3), pos);
      const double m = uniform(0.5, 2.0);
      cr_assert_eq(raster_deposit(&v, 1, pos, &m, sigma, NULL), 1);
      for (int i = 0; i < SIZE * SIZE; i++) {
        const int at = (SIZE - 1 - rows[t]) * SIZE + cols[t];
        const double want = i == at ? m / (h * h) : 0.0;
        cr_assert(fabs(sigma[i] - want) <= 1e-12 * m / (h * h),
                  "axis %d, pixel %d: %g, want %g", axis, i, sigma[i], want);
      }
    }
  }
  free(sigma);
}

/* Right is right and up is up: +right lands in the right half on the
 * middle rows, +up in the top half (rows count from the top). */
Test(raster, orientation_of_each_axis) {
  enum { SIZE = 64 };
  double *sigma = grid(SIZE);
  for (int axis = 0; axis < 3; axis++) {
    const raster_view v = {axis, {0.0, 0.0, 0.0}, 2.0, SIZE};
    for (int dir = 0; dir < 2; dir++) {
      double pos[3] = {0.0, 0.0, 0.0};
      int right, up;
      raster_plane_axes(axis, &right, &up);
      pos[dir == 0 ? right : up] = 0.5; /* a quarter of the view */
      const double m = 1.0;
      raster_deposit(&v, 1, pos, &m, sigma, NULL);
      int best = 0;
      for (int i = 1; i < SIZE * SIZE; i++)
        if (sigma[i] > sigma[best])
          best = i;
      const int row = best / SIZE, col = best % SIZE;
      if (dir == 0)
        cr_assert(col >= 3 * SIZE / 4 - 1 && col <= 3 * SIZE / 4 &&
                      row >= SIZE / 2 - 1 && row <= SIZE / 2,
                  "axis %d, +right at row %d, col %d", axis, row, col);
      else
        cr_assert(row >= SIZE / 4 - 1 && row <= SIZE / 4 &&
                      col >= SIZE / 2 - 1 && col <= SIZE / 2,
                  "axis %d, +up at row %d, col %d", axis, row, col);
    }
  }
  free(sigma);
}

/* The shares of a body at (p, q) pixels from the bottom-left corner. */
static void deposit_at(double p, double q, double *sigma, int size) {
  const raster_view v = {2, {0.0, 0.0, 0.0}, (double)size, size};
  double pos[3];
  place(2, p - 0.5 * size, q - 0.5 * size, 0.0, pos);
  const double m = 1.0;
  cr_assert_eq(raster_deposit(&v, 1, pos, &m, sigma, NULL), 1);
}

/* Pixel (col, row from the bottom) of a size^2 grid with unit pixels. */
static double at(const double *sigma, int size, int col, int row) {
  return sigma[(size - 1 - row) * size + col];
}

static void assert_share(double got, double want, const char *what) {
  cr_assert(fabs(got - want) <= 1e-14, "%s: %.17g, want %.17g", what, got,
            want);
}

Test(raster, cic_splits_between_pixels) {
  enum { SIZE = 16 };
  double *sigma = grid(SIZE);
  /* On the edge between columns 4 and 5, at the centre of row 7. */
  deposit_at(5.0, 7.5, sigma, SIZE);
  assert_share(at(sigma, SIZE, 4, 7), 0.5, "left half");
  assert_share(at(sigma, SIZE, 5, 7), 0.5, "right half");
  /* A quarter pixel right of the centre of (4, 7), a quarter below. */
  deposit_at(4.75, 7.25, sigma, SIZE);
  assert_share(at(sigma, SIZE, 4, 7), 0.75 * 0.75, "own pixel");
  assert_share(at(sigma, SIZE, 5, 7), 0.25 * 0.75, "right neighbour");
  assert_share(at(sigma, SIZE, 4, 6), 0.75 * 0.25, "lower neighbour");
  assert_share(at(sigma, SIZE, 5, 6), 0.25 * 0.25, "diagonal neighbour");
  /* At a corner shared by four pixels. */
  deposit_at(10.0, 3.0, sigma, SIZE);
  for (int c = 9; c <= 10; c++)
    for (int r = 2; r <= 3; r++)
      assert_share(at(sigma, SIZE, c, r), 0.25, "corner");
  cr_assert_eq(grid_sum(sigma, SIZE), 1.0);
  /* In the outer half of a corner pixel: the whole cloud stays in view. */
  deposit_at(0.2, 15.9, sigma, SIZE);
  assert_share(at(sigma, SIZE, 0, 15), 1.0, "corner pixel");
  deposit_at(15.7, 0.5, sigma, SIZE);
  assert_share(at(sigma, SIZE, 15, 0), 1.0, "far corner pixel");
  free(sigma);
}

Test(raster, bodies_out_of_view_deposit_nothing) {
  enum { SIZE = 16 };
  double *sigma = grid(SIZE);
  const raster_view v = {2, {0.0, 0.0, 0.0}, 2.0, SIZE};
  /* Just outside each edge (the top and right edges are open). */
  const double pos[] = {-1.0001, 0, 0, 1.0, 0, 0, 0, -1.0001, 0, 0, 1.0, 0};
  const double mass[] = {1, 1, 1, 1};
  double m_in = -1.0;
  cr_assert_eq(raster_deposit(&v, 4, pos, mass, sigma, &m_in), 0);
  cr_assert_eq(m_in, 0.0);
  cr_assert_eq(grid_sum(sigma, SIZE), 0.0);
  unsigned char rgb[3 * SIZE * SIZE];
  cr_assert_eq(raster_to_rgb(sigma, SIZE, 4.0, rgb), 0.0);
  for (int i = 0; i < 3 * SIZE * SIZE; i++)
    cr_assert_eq(rgb[i], 0, "an empty picture is black");
  free(sigma);
}

Test(raster, centre_of_mass) {
  const double pos[] = {1, 0, 0, -1, 2, 0, 0, 0, 9};
  const double mass[] = {1, 1, 2};
  double c[3];
  raster_centre_of_mass(3, pos, mass, c);
  cr_assert(c[0] == 0.0 && c[1] == 0.5 && c[2] == 4.5);
}

/* 99% of the mass within projected radius 1, 1% far away: the view is
 * the 99% disc, and the distance along the axis does not count. */
Test(raster, auto_extent_ignores_escapers) {
  enum { N = 1000 };
  double pos[3 * N], mass[N];
  const double centre[3] = {0.0, 0.0, 0.0};
  for (int axis = 0; axis < 3; axis++) {
    for (int k = 0; k < N; k++) {
      const double r = k < 990 ? (k + 1) / 990.0 : 1e3;
      const double phi = uniform(0.0, 6.283185307179586);
      place(axis, r * cos(phi), r * sin(phi), uniform(-1e6, 1e6), pos + 3 * k);
      mass[k] = 1.0;
    }
    double e = 0.0;
    cr_assert(raster_auto_extent(axis, centre, N, pos, mass, 0.99, &e));
    cr_assert(fabs(e - 2.0) <= 1e-12, "axis %d: extent %.17g", axis, e);
  }
  /* One body, or all on the centre: a unit view. */
  double e = 0.0;
  cr_assert(raster_auto_extent(2, centre, 1, centre, mass, 0.99, &e));
  cr_assert_eq(e, 1.0);
}

Test(raster, log_level_monotonic_and_clipped) {
  const double max = 3.0e5, decades = 4.0;
  cr_assert_eq(raster_log_level(0.0, max, decades), -1.0);
  cr_assert_eq(raster_log_level(1.0, 0.0, decades), -1.0);
  cr_assert_eq(raster_log_level(max, max, decades), 1.0);
  cr_assert_eq(raster_log_level(10.0 * max, max, decades), 1.0);
  cr_assert_eq(raster_log_level(max * 1e-4, max, decades), 0.0);
  cr_assert_eq(raster_log_level(max * 1e-9, max, decades), 0.0);
  cr_assert(fabs(raster_log_level(max * 1e-2, max, decades) - 0.5) < 1e-14);
  double prev = 0.0;
  for (double s = max * 1e-6; s <= max; s *= 1.01) {
    const double l = raster_log_level(s, max, decades);
    cr_assert(l >= prev && l >= 0.0 && l <= 1.0, "level %g at %g", l, s);
    prev = l;
  }
}

static double lightness(const unsigned char c[3]) {
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}

Test(raster, colour_map_lightness_rises) {
  unsigned char c[3], d[3];
  raster_colour(-1.0, c);
  cr_assert(c[0] == 0 && c[1] == 0 && c[2] == 0, "empty is black");
  raster_colour(1.0, c);
  raster_colour(7.0, d);
  cr_assert(c[0] == 252 && c[1] == 255 && c[2] == 164, "inferno's top");
  cr_assert(d[0] == c[0] && d[1] == c[1] && d[2] == c[2], "clipped above");
  raster_colour(0.0, c);
  double prev = lightness(c);
  for (int k = 1; k <= 1000; k++) {
    raster_colour(k / 1000.0, c);
    /* Rounding to 8 bits moves the lightness by at most 0.5. */
    cr_assert_geq(lightness(c) + 1.0, prev, "lightness falls at %d", k);
    if (lightness(c) > prev)
      prev = lightness(c);
  }
  cr_assert_gt(prev, 200.0);
}
