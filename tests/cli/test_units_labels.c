/* The names of a unit system's units (apps/units.c) that label the
 * pictures and statistics.csv's columns: named units where the cgs numbers
 * are theirs, cgs numbers otherwise, N-body units said as such; a time as
 * text in the run's unit and in years (1 kpc/(km/s) = 3.0857e16 s =
 * 977.8 Myr, with the Julian year of 3.15576e7 s). */
#include "units.h"

#include <criterion/criterion.h>

#include <string.h>

TestSuite(units_labels);

static const units galactic = {1.98841e43, 3.0856775814913673e21, 1e5, 1, 1};

Test(units_labels, galactic_units_are_named) {
  units_labels l;
  units_labels_make(&galactic, &l);
  cr_expect_str_eq(l.length, "kpc");
  cr_expect_str_eq(l.mass, "1e10 Msun");
  cr_expect_str_eq(l.velocity, "km/s");
  cr_expect_str_eq(l.time, "kpc/(km/s)");
  cr_expect_str_eq(l.energy, "1e10 Msun (km/s)^2");
  cr_expect_str_eq(l.momentum, "1e10 Msun km/s");
  cr_expect_str_eq(l.angular_momentum, "1e10 Msun kpc km/s");
  cr_expect_str_eq(l.surface_density, "1e10 Msun / kpc^2");
}

Test(units_labels, cgs_numbers_when_no_unit_is_named) {
  const units u = {1.98841e33, 2e21, 3e5, 1, 1};
  units_labels l;
  units_labels_make(&u, &l);
  cr_expect_str_eq(l.length, "2e+21 cm");
  cr_expect_str_eq(l.mass, "Msun");
  cr_expect_str_eq(l.velocity, "300000 cm/s");
  cr_expect_str_eq(l.time, "6.66667e+15 s");
  cr_expect_str_eq(l.energy, "Msun (300000 cm/s)^2");
  cr_expect_str_eq(l.surface_density, "Msun / (2e+21 cm)^2");
  /* No comma in any: they go into CSV column names. */
  const char *all[] = {
      l.length, l.mass,     l.velocity,         l.time,
      l.energy, l.momentum, l.angular_momentum, l.surface_density};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    cr_expect_null(strchr(all[k], ','), "'%s'", all[k]);
}

Test(units_labels, nbody_units_say_so) {
  const units nbody = {0, 0, 0, 1, 1};
  units_labels l;
  units_labels_make(&nbody, &l);
  cr_expect_str_eq(l.length, "N-body length");
  cr_expect_str_eq(l.time, "N-body time");
  cr_expect_str_eq(l.energy, "N-body energy");
  char buf[128];
  cr_expect_str_eq(units_time_text(&nbody, 0.25, buf, sizeof buf),
                   "0.25 N-body time units");
}

Test(units_labels, time_in_the_runs_unit_and_in_years) {
  char buf[128];
  cr_expect_str_eq(units_time_text(&galactic, 1, buf, sizeof buf),
                   "1 kpc/(km/s) (977.8 Myr)");
  cr_expect_str_eq(units_time_text(&galactic, 2, buf, sizeof buf),
                   "2 kpc/(km/s) (1.956 Gyr)");
  cr_expect_str_eq(units_time_text(&galactic, 1e-4, buf, sizeof buf),
                   "0.0001 kpc/(km/s) (97.78 kyr)");
  cr_expect_str_eq(units_time_text(&galactic, 1e-7, buf, sizeof buf),
                   "1e-07 kpc/(km/s) (97.78 yr)");
}
