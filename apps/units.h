/* Physical units of a run, as SWIFT's InternalUnitSystem gives them: the
 * mass, length and velocity units in cgs (grams, centimetres, cm/s), and
 * the current and temperature units, which gravity does not use but
 * SWIFT's files carry. The time unit is length / velocity. A unit system
 * whose mass is 0 is N-body units: G = 1 unless given, no physical
 * meaning, tilefmm's default. */
#ifndef TFMM_UNITS_H
#define TFMM_UNITS_H

/* Newton's constant in cgs, CODATA 2018 (SWIFT's
 * const_newton_G_cgs). */
#define UNITS_G_CGS 6.67430e-8

/* An explicit G and the unit system's may differ by this much (relative):
 * GADGET's 43007.1 for kpc, 1e10 Msun and km/s (from G = 6.672e-8) is
 * 3.4e-4 from CODATA's; more is a contradiction. */
#define UNITS_G_TOLERANCE 1e-2

typedef struct units {
  double mass, length, velocity; /* cgs; mass 0: N-body units */
  double current, temperature;   /* SWIFT's U_I and U_T; 1 when unset */
} units;

/* Whether u is a physical unit system (not N-body units). */
int units_physical(const units *u);

/* The time unit, length / velocity, in seconds (0 for N-body units). */
double units_time(const units *u);

/* G in u: G_cgs U_M U_t^2 / U_L^3 (1 for N-body units). */
double units_G(const units *u);

/* Whether a and b are the same unit system to 1e-9 relative in each
 * unit: files written with one set of numbers read back the same. */
int units_same(const units *a, const units *b);

/* The G a command computes with for a file whose units are u: a
 * physical system's (units_G) unless --G was given (G_given, *G its
 * value), which must agree with it to UNITS_G_TOLERANCE; N-body units or
 * none leave *G as it is. A contradiction is reported on stderr naming
 * the command, the file, both values and the units, and returns 2 (a
 * usage error); else 0, after saying the units and G on stderr, then
 * `tail`, when say is nonzero and the units are physical. */
int units_settle_G(const char *command, const char *file, const units *u,
                   int G_given, double *G, int say, const char *tail);

/* "1 kpc, 1e10 Msun, 1 km/s" style: each unit in cgs, "%.6g g, %.6g cm,
 * %.6g cm/s" or "N-body units (G = 1)". Returns buf. */
const char *units_describe(const units *u, char *buf, unsigned long size);

/* The names of a unit system's units, for axis labels and column names:
 * "kpc", "1e10 Msun", "km/s", "kpc/(km/s)" where the cgs numbers are
 * those of a named unit (within 1e-6), "3.0857e+21 cm" otherwise; in
 * N-body units "N-body length", "N-body mass", ... Each is a whole unit,
 * with no comma (they go into CSV column names). */
typedef struct units_labels {
  char length[48], mass[48], velocity[48], time[112];
  char energy[160], momentum[112], angular_momentum[160];
  char surface_density[112];
} units_labels;

void units_labels_make(const units *u, units_labels *l);

/* The time t (in u's time unit) as text: "1.5 kpc/(km/s) (1.467 Gyr)" for
 * a physical system, "1.5 N-body time units" for N-body units. Returns
 * buf. */
const char *units_time_text(const units *u, double t, char *buf,
                            unsigned long size);

#endif
