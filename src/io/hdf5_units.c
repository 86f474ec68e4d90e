/* The units of a snapshot read (see tfmm_snapshot_read in tilefmm.h): SWIFT's
 * /Units, or else GADGET-4's unit keys in /Header or /Parameters; tilefmm's
 * N-body units told by /Header UnitSystem. */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A number attribute of loc (string attributes holding a number too, as
 * some writers keep parameters): 1 when read, -1 when absent, 0 when it
 * is there but no number (printed). */
static int unit_number(tfmm_io_report *r, const char *path, hid_t loc,
                       const char *group, const char *name, double *value) {
  if (H5Aexists(loc, name) <= 0)
    return -1;
  const hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
  const hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
  const H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  int ok = 0;
  if (space >= 0 && H5Sget_simple_extent_npoints(space) == 1) {
    if (cls == H5T_FLOAT || cls == H5T_INTEGER) {
      ok = H5Aread(attr, H5T_NATIVE_DOUBLE, value) >= 0;
    } else if (cls == H5T_STRING && H5Tis_variable_str(type) <= 0) {
      char text[64] = "";
      const size_t size = H5Tget_size(type);
      if (size < sizeof text && H5Aread(attr, type, text) >= 0) {
        char *end = NULL;
        *value = strtod(text, &end);
        ok = end != text;
      }
    }
  }
  if (space >= 0)
    H5Sclose(space);
  if (type >= 0)
    H5Tclose(type);
  if (attr >= 0)
    H5Aclose(attr);
  if (ok && !(isfinite(*value) && *value > 0)) {
    tfmm_io_fail(r, "%s: /%s attribute '%s' is %g, not a unit > 0", path, group,
                 name, *value);
    return 0;
  }
  if (!ok)
    tfmm_io_fail(r, "%s: /%s attribute '%s' is not one number", path, group,
                 name);
  return ok;
}

/* Whether /Header UnitSystem says N-body units (tilefmm's). */
static int nbody_marked(hid_t file) {
  const hid_t header = H5Gopen2(file, "Header", H5P_DEFAULT);
  int nbody = 0;
  if (header >= 0 && H5Aexists(header, "UnitSystem") > 0) {
    const hid_t attr = H5Aopen(header, "UnitSystem", H5P_DEFAULT);
    const hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    if (type >= 0 && H5Tget_class(type) == H5T_STRING &&
        H5Tis_variable_str(type) <= 0 && H5Tget_size(type) < 256) {
      char text[256] = "";
      nbody = H5Aread(attr, type, text) >= 0 && strncmp(text, "N-body", 6) == 0;
    }
    if (type >= 0)
      H5Tclose(type);
    if (attr >= 0)
      H5Aclose(attr);
  }
  if (header >= 0)
    H5Gclose(header);
  return nbody;
}

/* SWIFT's /Units: mass, length and time required, current and
 * temperature 1 when absent. */
static int read_swift_units(tfmm_io_report *r, const char *path, hid_t file,
                            tfmm_snapshot *out) {
  static const char *const names[5] = {
      "Unit mass in cgs (U_M)", "Unit length in cgs (U_L)",
      "Unit time in cgs (U_t)", "Unit current in cgs (U_I)",
      "Unit temperature in cgs (U_T)"};
  double v[5] = {0, 0, 0, 1, 1};
  const hid_t group = H5Gopen2(file, "Units", H5P_DEFAULT);
  if (group < 0) {
    tfmm_io_fail(r, "%s: cannot read /Units: not a group, or damaged", path);
    return 0;
  }
  int ok = 1;
  for (int k = 0; ok && k < 5; k++) {
    const int got = unit_number(r, path, group, "Units", names[k], &v[k]);
    if (got < 0 && k < 3) {
      tfmm_io_fail(r, "%s: /Units has no attribute '%s'", path, names[k]);
      ok = 0;
    }
    ok = ok && got != 0;
  }
  H5Gclose(group);
  if (!ok)
    return 0;
  if (nbody_marked(file)) {
    out->units_source = TFMM_UNITS_NBODY;
    return 1;
  }
  out->units = (tfmm_unit_system){v[0], v[1], v[1] / v[2], v[3], v[4]};
  out->units_source = TFMM_UNITS_SWIFT;
  return 1;
}

/* GADGET-4's unit keys in /Header, or else /Parameters: all three or
 * none. */
static int read_gadget_units(tfmm_io_report *r, const char *path, hid_t file,
                             tfmm_snapshot *out) {
  static const char *const names[3] = {"UnitMass_in_g", "UnitLength_in_cm",
                                       "UnitVelocity_in_cm_per_s"};
  static const char *const groups[2] = {"Header", "Parameters"};
  for (int g = 0; g < 2; g++) {
    if (H5Lexists(file, groups[g], H5P_DEFAULT) <= 0)
      continue;
    const hid_t group = H5Gopen2(file, groups[g], H5P_DEFAULT);
    if (group < 0) {
      tfmm_io_fail(r, "%s: cannot read /%s: not a group, or damaged", path,
                   groups[g]);
      return 0;
    }
    double v[3] = {0, 0, 0};
    int found = 0, ok = 1;
    for (int k = 0; ok && k < 3; k++) {
      const int got = unit_number(r, path, group, groups[g], names[k], &v[k]);
      ok = got != 0;
      found += got > 0;
    }
    H5Gclose(group);
    if (!ok)
      return 0;
    if (found > 0 && found < 3) {
      tfmm_io_fail(r,
                   "%s: /%s holds some of UnitMass_in_g, UnitLength_in_cm and "
                   "UnitVelocity_in_cm_per_s but not all three",
                   path, groups[g]);
      return 0;
    }
    if (found == 3) {
      out->units = (tfmm_unit_system){v[0], v[1], v[2], 1, 1};
      out->units_source = TFMM_UNITS_GADGET4;
      return 1;
    }
  }
  return 1;
}

int tfmm_hdf5_read_units(tfmm_io_report *r, const char *path, hid_t file,
                         tfmm_snapshot *out) {
  const htri_t swift = H5Lexists(file, "Units", H5P_DEFAULT);
  if (swift < 0) {
    tfmm_io_fail(r, "%s: cannot read the root group", path);
    return 0;
  }
  return swift > 0 ? read_swift_units(r, path, file, out)
                   : read_gadget_units(r, path, file, out);
}
