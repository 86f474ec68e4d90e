/* Kepler's equation for the tests' two-body orbits (kepler.h). */
#include "kepler.h"

#include <math.h>

#define PI 3.14159265358979323846

void kepler_relative(double e, double t, double r[3], double v[3]) {
  const double m = fmod(t, 2 * PI);
  double E = m + e * sin(m);
  for (int k = 0; k < 50; k++)
    E -= (E - e * sin(E) - m) / (1 - e * cos(E));
  const double dE = 1 / (1 - e * cos(E)), b = sqrt(1 - e * e);
  r[0] = cos(E) - e;
  r[1] = b * sin(E);
  r[2] = 0;
  v[0] = -sin(E) * dE;
  v[1] = b * cos(E) * dE;
  v[2] = 0;
}

void kepler_bodies(double e, double m0, double t, double pos[6],
                   double vel[6]) {
  double r[3], v[3];
  kepler_relative(e, t, r, v);
  for (int d = 0; d < 3; d++) {
    pos[d] = -(1 - m0) * r[d];
    vel[d] = -(1 - m0) * v[d];
    pos[3 + d] = m0 * r[d];
    vel[3 + d] = m0 * v[d];
  }
}
