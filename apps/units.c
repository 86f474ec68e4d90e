/* Physical units (see units.h). */
#include "units.h"

#include <math.h>
#include <stdio.h>

int units_physical(const units *u) { return u->mass > 0; }

double units_time(const units *u) {
  return units_physical(u) ? u->length / u->velocity : 0;
}

double units_G(const units *u) {
  if (!units_physical(u))
    return 1;
  const double t = units_time(u);
  return UNITS_G_CGS * u->mass * t * t / (u->length * u->length * u->length);
}

static int close_to(double a, double b) {
  return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

int units_same(const units *a, const units *b) {
  if (units_physical(a) != units_physical(b))
    return 0;
  return !units_physical(a) ||
         (close_to(a->mass, b->mass) && close_to(a->length, b->length) &&
          close_to(a->velocity, b->velocity));
}

const char *units_describe(const units *u, char *buf, unsigned long size) {
  if (!units_physical(u))
    snprintf(buf, size, "N-body units (G = 1)");
  else
    snprintf(buf, size, "mass %.6g g, length %.6g cm, velocity %.6g cm/s",
             u->mass, u->length, u->velocity);
  return buf;
}
