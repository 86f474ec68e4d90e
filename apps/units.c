/* Physical units (see units.h). */
#include "units.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* A named unit within 1e-6 of value (cgs), or NULL. */
typedef struct named_unit {
  const char *name;
  double cgs;
} named_unit;

static const char *unit_name(const named_unit *names, size_t n, double cgs) {
  for (size_t k = 0; k < n; k++)
    if (fabs(cgs - names[k].cgs) <= 1e-6 * names[k].cgs)
      return names[k].name;
  return NULL;
}

/* SWIFT's const_parsec_cgs and const_astronomical_unit_cgs. */
static const named_unit lengths[] = {
    {"cm", 1.0},
    {"m", 1e2},
    {"km", 1e5},
    {"AU", 1.495978707e13},
    {"pc", 3.0856775814913673e18},
    {"kpc", 3.0856775814913673e21},
    {"Mpc", 3.0856775814913673e24},
};
static const named_unit velocities[] = {
    {"cm/s", 1.0}, {"m/s", 1e2}, {"km/s", 1e5}};
#define SOLAR_MASS_CGS 1.98841e33 /* SWIFT's const_solar_mass */
#define YEAR_S 3.15576e7          /* a Julian year */

/* "1e10 Msun", "Msun", "g", "kg" or "%.6g g". */
static void mass_name(double cgs, char *buf, size_t size) {
  static const named_unit grams[] = {{"g", 1.0}, {"kg", 1e3}};
  const char *g = unit_name(grams, 2, cgs);
  const double k = round(log10(cgs / SOLAR_MASS_CGS));
  if (g != NULL)
    snprintf(buf, size, "%s", g);
  else if (fabs(cgs - SOLAR_MASS_CGS * pow(10.0, k)) <=
           1e-6 * SOLAR_MASS_CGS * pow(10.0, k))
    snprintf(buf, size, k == 0 ? "Msun" : "1e%.0f Msun", k);
  else
    snprintf(buf, size, "%.6g g", cgs);
}

void units_labels_make(const units *u, units_labels *l) {
  if (!units_physical(u)) {
    snprintf(l->length, sizeof l->length, "N-body length");
    snprintf(l->mass, sizeof l->mass, "N-body mass");
    snprintf(l->velocity, sizeof l->velocity, "N-body velocity");
    snprintf(l->time, sizeof l->time, "N-body time");
    snprintf(l->energy, sizeof l->energy, "N-body energy");
    snprintf(l->momentum, sizeof l->momentum, "N-body momentum");
    snprintf(l->angular_momentum, sizeof l->angular_momentum,
             "N-body angular momentum");
    snprintf(l->surface_density, sizeof l->surface_density,
             "N-body mass / length^2");
    return;
  }
  const size_t nl = sizeof lengths / sizeof lengths[0];
  const char *ln = unit_name(lengths, nl, u->length);
  const char *vn = unit_name(velocities, 3, u->velocity);
  if (ln != NULL)
    snprintf(l->length, sizeof l->length, "%s", ln);
  else
    snprintf(l->length, sizeof l->length, "%.6g cm", u->length);
  if (vn != NULL)
    snprintf(l->velocity, sizeof l->velocity, "%s", vn);
  else
    snprintf(l->velocity, sizeof l->velocity, "%.6g cm/s", u->velocity);
  mass_name(u->mass, l->mass, sizeof l->mass);
  if (ln != NULL && vn != NULL)
    snprintf(l->time, sizeof l->time, "%s/(%s)", ln, vn);
  else
    snprintf(l->time, sizeof l->time, "%.6g s", units_time(u));
  /* A product of units with a number in it is bracketed. */
  const int vb = strchr(l->velocity, ' ') != NULL || strchr(l->velocity, '/');
  char v[64];
  snprintf(v, sizeof v, vb ? "(%s)" : "%s", l->velocity);
  snprintf(l->energy, sizeof l->energy, "%s %s^2", l->mass, v);
  snprintf(l->momentum, sizeof l->momentum, "%s %s", l->mass, l->velocity);
  snprintf(l->angular_momentum, sizeof l->angular_momentum, "%s %s %s", l->mass,
           l->length, l->velocity);
  snprintf(l->surface_density, sizeof l->surface_density,
           strchr(l->length, ' ') != NULL ? "%s / (%s)^2" : "%s / %s^2",
           l->mass, l->length);
}

const char *units_time_text(const units *u, double t, char *buf,
                            unsigned long size) {
  units_labels l;
  units_labels_make(u, &l);
  if (!units_physical(u)) {
    snprintf(buf, size, "%.6g N-body time units", t);
    return buf;
  }
  const double years = t * units_time(u) / YEAR_S;
  const double a = fabs(years);
  const double scale = a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1;
  snprintf(buf, size, "%.6g %s (%.4g %s)", t, l.time, years / scale,
           scale == 1e9   ? "Gyr"
           : scale == 1e6 ? "Myr"
           : scale == 1e3 ? "kyr"
                          : "yr");
  return buf;
}

int units_settle_G(const char *command, const char *file, const units *u,
                   int G_given, double *G, int say, const char *tail) {
  if (!units_physical(u))
    return CLI_OK; /* N-body units or none: --G as given */
  char text[160];
  units_describe(u, text, sizeof text);
  const double G_units = units_G(u);
  if (G_given && fabs(*G - G_units) > UNITS_G_TOLERANCE * G_units) {
    cli_error("--G %.9g contradicts the units of %s (%s), in which G = "
              "%.9g: drop --G to compute in the file's units",
              *G, file, text, G_units);
    return CLI_USAGE_ERROR;
  }
  if (!G_given)
    *G = G_units;
  if (say)
    fprintf(stderr, "tilefmm %s: units of %s: %s; G = %.9g (%s)%s\n", command,
            file, text, *G, G_given ? "--G" : "from the units", tail);
  return CLI_OK;
}
