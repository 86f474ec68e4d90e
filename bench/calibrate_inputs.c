/* The calibration inputs of calibrate_accuracy (calibrate_inputs.h). */
#include "calibrate_inputs.h"

#include "tilefmm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const CAL_INPUT_NAMES[CAL_INPUTS] = {
    "plummer", "hernquist", "uniform", "clusters", "line_pile"};

uint64_t cal_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) {
  return (double)(cal_splitmix64(s) >> 11) * 0x1.0p-53;
}

static double gaussian(uint64_t *s) {
  double u = uniform01(s), v = uniform01(s);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* Two clusters of 0.4 n bodies each, Gaussian of scale 0.01 at x = -0.5
 * and x = +0.5, on a background of 0.2 n bodies uniform in a cube of side
 * 10: densities 1e10 apart. Equal masses. */
static void make_clusters(size_t n, uint64_t seed, double *pos, double *mass) {
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) {
    mass[i] = 1.0 / (double)n;
    double u = uniform01(&s);
    for (int k = 0; k < 3; k++)
      pos[3 * i + k] =
          u < 0.2 ? 10 * (uniform01(&s) - 0.5)
                  : (k == 0 ? (u < 0.6 ? -0.5 : 0.5) : 0) + 0.01 * gaussian(&s);
  }
}

/* A line of 0.9 n bodies at random x in [-1, 1] on the x axis, and a pile
 * of 0.1 n bodies at (0.25, 0.1, 0): coincident when softened (spread = 0),
 * else within spread of that point. Equal masses. */
static void make_line_pile(size_t n, uint64_t seed, double spread, double *pos,
                           double *mass) {
  uint64_t s = seed;
  size_t line = n - n / 10;
  for (size_t i = 0; i < n; i++) {
    mass[i] = 1.0 / (double)n;
    if (i < line) {
      pos[3 * i] = 2 * uniform01(&s) - 1;
      pos[3 * i + 1] = pos[3 * i + 2] = 0;
    } else {
      pos[3 * i] = 0.25 + spread * gaussian(&s);
      pos[3 * i + 1] = 0.1 + spread * gaussian(&s);
      pos[3 * i + 2] = spread * gaussian(&s);
    }
  }
}

/* Input w (CAL_INPUT_NAMES order); softened selects the pile's coincidence. */
int input_make(input *in, int w, size_t n, int softened) {
  memset(in, 0, sizeof *in);
  in->name = CAL_INPUT_NAMES[w];
  in->n = n;
  in->pos = malloc(3 * n * sizeof *in->pos);
  in->mass = malloc(n * sizeof *in->mass);
  in->radius = malloc(n * sizeof *in->radius);
  double *vel = malloc(3 * n * sizeof *vel);
  if (!in->pos || !in->mass || !in->radius || !vel) {
    free(vel);
    return -1;
  }
  uint64_t seed = CAL_SEED + (uint64_t)w;
  tfmm_status st = TFMM_OK;
  if (w == 0)
    st = tfmm_ic_plummer(n, seed, in->pos, vel, in->mass);
  else if (w == 1)
    st = tfmm_ic_hernquist(n, seed, in->pos, vel, in->mass);
  else if (w == 2)
    st = tfmm_ic_uniform(n, seed, in->pos, vel, in->mass);
  else if (w == 3)
    make_clusters(n, seed, in->pos, in->mass);
  else
    make_line_pile(n, seed, softened ? 0 : 1e-6, in->pos, in->mass);
  free(vel);
  double c[3] = {0, 0, 0}, m = 0;
  for (size_t i = 0; i < n; i++) {
    m += in->mass[i];
    for (int k = 0; k < 3; k++)
      c[k] += in->mass[i] * in->pos[3 * i + k];
  }
  for (size_t i = 0; i < n; i++) {
    double r2 = 0;
    for (int k = 0; k < 3; k++) {
      double d = in->pos[3 * i + k] - c[k] / m;
      r2 += d * d;
    }
    in->radius[i] = sqrt(r2);
  }
  return st == TFMM_OK ? 0 : -1;
}

void input_free(input *in) {
  free(in->pos);
  free(in->mass);
  free(in->radius);
}
