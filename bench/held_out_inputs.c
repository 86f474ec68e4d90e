#include "held_out_inputs.h"

#include "tilefmm.h"

#include <math.h>
#include <stdlib.h>

static const double PI = 3.14159265358979323846;

const char *const HELD_OUT_NAMES[HELD_OUT_INPUTS] = {
    "plummer", "clusters", "disk+bulge", "fractal", "line+pile(eps)"};

const double HELD_OUT_EPS[HELD_OUT_INPUTS] = {0, 0, 0, 0, 0.01};

static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; }

/* A point in the unit ball. */
static void ball(uint64_t *s, double *x) {
  do
    for (int d = 0; d < 3; d++)
      x[d] = 2 * uniform(s) - 1;
  while (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] > 1);
}

/* A Plummer sphere of scale a at c (radius from the cumulative mass). */
static void plummer(uint64_t *s, double a, const double *c, double *x) {
  double u;
  do
    u = uniform(s);
  while (u < 1e-10 || u > 0.999);
  const double r = a / sqrt(pow(u, -2.0 / 3.0) - 1);
  double d[3];
  ball(s, d);
  const double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-300;
  for (int k = 0; k < 3; k++)
    x[k] = c[k] + r * d[k] / len;
}

static void clusters(uint64_t *s, size_t i, size_t n, double *x) {
  static const double A[3] = {0.5, 0, 0}, B[3] = {-0.5, 0.2, 0};
  if (i < 2 * n / 5)
    plummer(s, 0.01, A, x);
  else if (i < 4 * n / 5)
    plummer(s, 0.005, B, x);
  else
    for (int d = 0; d < 3; d++)
      x[d] = 4 * uniform(s) - 2;
}

static void disk(uint64_t *s, size_t i, size_t n, double *x) {
  if (i < n / 5) { /* Hernquist bulge, a = 0.2, cut at 50 a */
    double u;
    do
      u = uniform(s);
    while (u < 1e-12 || sqrt(u) > 50.0 / 51.0);
    const double r = 0.2 * sqrt(u) / (1 - sqrt(u));
    double d[3];
    ball(s, d);
    const double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-300;
    for (int k = 0; k < 3; k++)
      x[k] = r * d[k] / len;
    return;
  }
  /* Exponential disk of scale length 1 (R the sum of two exponentials),
   * sech^2 in z with scale height 0.02. */
  const double R = -log((1 - uniform(s)) * (1 - uniform(s)));
  const double phi = 2 * PI * uniform(s);
  const double z =
      0.02 * atanh(fmin(fmax(2 * uniform(s) - 1, -0.999999), 0.999999));
  x[0] = R * cos(phi);
  x[1] = R * sin(phi);
  x[2] = z;
}

/* Soneira-Peebles: 9 levels of 4 children at 1/2.6 of their parent's
 * radius, each body descending along random children; the children's
 * places are a function of their path, so that bodies share them. */
static void fractal(uint64_t *s, uint64_t seed, double *x) {
  double c[3] = {0, 0, 0}, r = 1;
  uint64_t path = seed ^ 0xF4AC7A1ull;
  for (int level = 0; level < 9; level++) {
    path = path * 4 + (next(s) & 3) + 1;
    uint64_t h = path;
    double d[3];
    ball(&h, d);
    for (int k = 0; k < 3; k++)
      c[k] += r * d[k];
    r /= 2.6;
  }
  double d[3];
  ball(s, d);
  for (int k = 0; k < 3; k++)
    x[k] = c[k] + r * d[k];
}

static void line_pile(uint64_t *s, size_t i, size_t n, double *x) {
  static const double O[3] = {0, 0, 0};
  if (i < n / 2) {
    x[0] = 2 * uniform(s) - 1;
    x[1] = x[2] = 0;
  } else if (i < n / 2 + n / 50) {
    x[0] = 0;
    x[1] = 0.1;
    x[2] = 0;
  } else {
    plummer(s, 0.3, O, x);
  }
}

void held_out_make(int w, size_t n, uint64_t seed, double *pos, double *mass) {
  if (w == 0) {
    double *vel = malloc(3 * n * sizeof *vel);
    if (vel != NULL && tfmm_ic_plummer(n, seed, pos, vel, mass) == TFMM_OK) {
      free(vel);
      return;
    }
    free(vel);
  }
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + (uint64_t)w;
  for (size_t i = 0; i < n; i++) {
    double *x = pos + 3 * i;
    switch (w) {
    case 1:
      clusters(&s, i, n, x);
      break;
    case 2:
      disk(&s, i, n, x);
      break;
    case 3:
      fractal(&s, seed, x);
      break;
    case 4:
      line_pile(&s, i, n, x);
      break;
    default: {
      static const double O[3] = {0, 0, 0};
      plummer(&s, 3 * PI / 16, O, x);
    }
    }
    mass[i] = 1.0 / (double)n;
  }
}
