/* SWIFT's metadata in tilefmm's snapshots (see hdf5.h): what
 * swiftsimio (SWIFTUnits, SWIFTMetadata), yt (its SWIFT frontend) and
 * pynbody (SwiftSnap) read, in SWIFT's names and shapes (SWIFT's
 * common_io.c and single_io.c: numbers as arrays of one element). */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int tfmm_hdf5_put_attr(hid_t loc, const char *name, hid_t file_type,
                       hid_t mem_type, size_t count, const void *data) {
  const hsize_t dims = count;
  const hid_t space =
      count == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dims, NULL);
  if (space < 0)
    return 0;
  const hid_t attr =
      H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  int ok = attr >= 0 && H5Awrite(attr, mem_type, data) >= 0;
  if (attr >= 0 && H5Aclose(attr) < 0)
    ok = 0;
  H5Sclose(space);
  return ok;
}

int tfmm_hdf5_put_double1(hid_t loc, const char *name, double value) {
  return tfmm_hdf5_put_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1,
                            &value);
}

int tfmm_hdf5_put_int1(hid_t loc, const char *name, int32_t value) {
  return tfmm_hdf5_put_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 1,
                            &value);
}

static int put_float1(hid_t loc, const char *name, float value) {
  return tfmm_hdf5_put_attr(loc, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1,
                            &value);
}

/* Stored in the object header, not in the global heap as a
 * variable-length string is (a damaged global heap crashes libhdf5's
 * reader). */
int tfmm_hdf5_put_string(hid_t loc, const char *name, const char *value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  const int ok = type >= 0 && H5Tset_size(type, strlen(value) + 1) >= 0 &&
                 H5Tset_strpad(type, H5T_STR_NULLTERM) >= 0 &&
                 H5Tset_cset(type, H5T_CSET_UTF8) >= 0 &&
                 tfmm_hdf5_put_attr(loc, name, type, type, 0, value);
  if (type >= 0)
    H5Tclose(type);
  return ok;
}

/* Past 8 attributes HDF5 would move them to "dense storage", a fractal
 * heap whose blocks have no checksum: they are kept compact. */
hid_t tfmm_hdf5_create_group(hid_t loc, const char *name, int ordered) {
  const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  const int ok =
      gcpl >= 0 && H5Pset_attr_phase_change(gcpl, UINT16_MAX, 0) >= 0 &&
      (!ordered ||
       H5Pset_attr_creation_order(gcpl, H5P_CRT_ORDER_TRACKED |
                                            H5P_CRT_ORDER_INDEXED) >= 0);
  const hid_t group =
      ok ? H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT) : -1;
  if (gcpl >= 0)
    H5Pclose(gcpl);
  return group;
}

int tfmm_hdf5_compact_attrs(hid_t dcpl) {
  return H5Pset_attr_phase_change(dcpl, UINT16_MAX, 0) >= 0;
}

/* ---- the units of each dataset ----------------------------------------- */

static const struct {
  const char *name;
  tfmm_hdf5_dimension d;
} dimensions[] = {
    {"Coordinates", {0, 1, 0, 0, 0, "Co-moving positions of the particles"}},
    {"Velocities", {0, 1, -1, 0, 0, "Peculiar velocities of the particles"}},
    {"Masses", {1, 0, 0, 0, 0, "Masses of the particles"}},
    {"ParticleIDs", {0, 0, 0, 0, 0, "Unique IDs of the particles"}},
    {"Accelerations",
     {0, 1, -2, 0, 0, "Gravitational accelerations of the particles"}},
    {"Potentials",
     {0, 2, -2, 0, 0,
      "Gravitational potentials of the particles (per unit mass)"}},
    {"TimeBins", {0, 0, 0, 0, 0, "Time bins of the particles' steps"}},
};

tfmm_hdf5_dimension tfmm_hdf5_dimension_of(const char *name) {
  for (size_t k = 0; k < sizeof dimensions / sizeof dimensions[0]; k++)
    if (strcmp(dimensions[k].name, name) == 0)
      return dimensions[k].d;
  return (tfmm_hdf5_dimension){0, 0, 0, 0, 0, ""};
}

/* Whether the snapshot's units are physical (not N-body units). */
static int physical_units(const tfmm_snapshot *s) { return s->units.mass > 0; }

/* The unit system as written: N-body units as 1 g, 1 cm, 1 s. */
static void base_units(const tfmm_snapshot *s, double base[5]) {
  const int physical = physical_units(s);
  base[0] = physical ? s->units.mass : 1;
  base[1] = physical ? s->units.length : 1;
  base[2] = physical ? s->units.length / s->units.velocity : 1;
  base[3] = physical ? s->units.current : 1;
  base[4] = physical ? s->units.temperature : 1;
}

/* SWIFT's "U_L U_t^-1  [ cm s^-1 ]" (units_general_cgs_conversion_string;
 * "[ - ] " for a dimensionless one). */
static void expression(const float e[5], char *buf, size_t size) {
  static const char *const internal[5] = {"U_M", "U_L", "U_t", "U_I", "U_T"};
  static const char *const cgs[5] = {"g", "cm", "s", "A", "K"};
  int any = 0;
  for (int i = 0; i < 5; i++)
    any |= e[i] != 0;
  if (!any) {
    snprintf(buf, size, "[ - ] ");
    return;
  }
  size_t used = 0;
  buf[0] = '\0';
  for (int pass = 0; pass < 2; pass++) {
    const char *const *symbol = pass == 0 ? internal : cgs;
    if (pass == 1 && used < size)
      used += (size_t)snprintf(buf + used, size - used, " [ ");
    for (int i = 0; i < 5 && used < size; i++) {
      if (e[i] == 0)
        continue;
      if (e[i] == 1)
        used += (size_t)snprintf(buf + used, size - used, "%s ", symbol[i]);
      else
        used += (size_t)snprintf(buf + used, size - used, "%s^%d ", symbol[i],
                                 (int)e[i]);
    }
  }
  if (used < size)
    snprintf(buf + used, size - used, "]");
}

int tfmm_hdf5_put_unit_attrs(hid_t set, const tfmm_snapshot *s,
                             const tfmm_hdf5_dimension *d, int compressed) {
  const float e[5] = {d->mass, d->length, d->time, d->current, d->temperature};
  static const char *const names[5] = {"U_M exponent", "U_L exponent",
                                       "U_t exponent", "U_I exponent",
                                       "U_T exponent"};
  double base[5], factor = 1;
  base_units(s, base);
  for (int i = 0; i < 5; i++)
    if (e[i] != 0)
      factor *= pow(base[i], e[i]);
  char text[128];
  expression(e, text, sizeof text);
  int ok = 1;
  for (int i = 0; ok && i < 5; i++)
    ok = put_float1(set, names[i], e[i]);
  return ok && put_float1(set, "h-scale exponent", 0) &&
         put_float1(set, "a-scale exponent", 0) &&
         tfmm_hdf5_put_string(set, "Expression for physical CGS units", text) &&
         tfmm_hdf5_put_string(set, "Lossy compression filter", "None") &&
         tfmm_hdf5_put_int1(set, "Is Compressed", compressed) &&
         tfmm_hdf5_put_int1(set, "Value stored as physical", 1) &&
         tfmm_hdf5_put_int1(set, "Property can be converted to comoving", 1) &&
         tfmm_hdf5_put_double1(
             set,
             "Conversion factor to CGS (not including cosmological "
             "corrections)",
             factor) &&
         tfmm_hdf5_put_double1(set,
                               "Conversion factor to physical CGS (including "
                               "cosmological corrections)",
                               factor) &&
         tfmm_hdf5_put_string(set, "Description", d->description);
}

/* ---- the groups -------------------------------------------------------- */

/* A group of int32[1] attributes, names[k] = values[k]. */
static int put_int_group(hid_t file, const char *name, const char *const *names,
                         const int32_t *values, size_t count) {
  const hid_t group = tfmm_hdf5_create_group(file, name, 0);
  int ok = group >= 0;
  for (size_t k = 0; ok && k < count; k++)
    ok = tfmm_hdf5_put_int1(group, names[k], values[k]);
  if (group >= 0 && H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

/* SWIFT's io_write_unit_system. */
static int put_unit_system(hid_t file, const char *name,
                           const tfmm_snapshot *s) {
  static const char *const names[5] = {
      "Unit mass in cgs (U_M)", "Unit length in cgs (U_L)",
      "Unit time in cgs (U_t)", "Unit current in cgs (U_I)",
      "Unit temperature in cgs (U_T)"};
  double base[5];
  base_units(s, base);
  const hid_t group = tfmm_hdf5_create_group(file, name, 0);
  int ok = group >= 0;
  for (int k = 0; ok && k < 5; k++)
    ok = tfmm_hdf5_put_double1(group, names[k], base[k]);
  if (group >= 0 && H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

/* One small dataset (no filter: a few bytes, in the checksummed metadata's
 * company). */
static int put_small(hid_t loc, const char *name, hid_t file_type,
                     hid_t mem_type, int rank, const hsize_t *dims,
                     const void *data) {
  const hid_t space = H5Screate_simple(rank, dims, NULL);
  const hid_t set = space >= 0
                        ? H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT)
                        : -1;
  int ok = set >= 0 &&
           H5Dwrite(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
  if (set >= 0 && H5Dclose(set) < 0)
    ok = 0;
  if (space >= 0)
    H5Sclose(space);
  return ok;
}

/* SWIFT's cell structure, of one cell holding every body: pynbody's
 * SwiftSnap finds the particle groups through Cells/Counts, and
 * swiftsimio's masks read the rest. */
static int put_cells(hid_t file, const tfmm_snapshot *s, double box) {
  const hid_t cells = tfmm_hdf5_create_group(file, "Cells", 0);
  if (cells < 0)
    return 0;
  const hid_t meta = tfmm_hdf5_create_group(cells, "Meta-data", 0);
  const int32_t dimension[3] = {1, 1, 1};
  const double size[3] = {box, box, box},
               centre[3] = {box / 2, box / 2, box / 2};
  int ok = meta >= 0 &&
           tfmm_hdf5_put_attr(meta, "dimension", H5T_STD_I32LE,
                              H5T_NATIVE_INT32, 3, dimension) &&
           tfmm_hdf5_put_attr(meta, "size", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                              3, size) &&
           tfmm_hdf5_put_int1(meta, "nr_cells", 1);
  if (meta >= 0 && H5Gclose(meta) < 0)
    ok = 0;
  const hsize_t one = 1, row[2] = {1, 3};
  ok = ok && put_small(cells, "Centres", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2,
                       row, centre);
  static const char *const groups[] = {"Counts", "OffsetsInFile", "Files"};
  const int64_t values[] = {(int64_t)s->n, 0, 0};
  for (size_t k = 0; ok && k < 3; k++) {
    const hid_t g = tfmm_hdf5_create_group(cells, groups[k], 0);
    ok = g >= 0 && put_small(g, "PartType1", H5T_STD_I64LE, H5T_NATIVE_INT64, 1,
                             &one, &values[k]);
    if (g >= 0 && H5Gclose(g) < 0)
      ok = 0;
  }
  if (H5Gclose(cells) < 0)
    ok = 0;
  return ok;
}

/* /PhysicalConstants/InternalUnits newton_G and /CGS newton_G. */
static int put_constants(hid_t file, const tfmm_snapshot *s) {
  if (!(s->G > 0))
    return 1;
  const hid_t group = tfmm_hdf5_create_group(file, "PhysicalConstants", 0);
  if (group < 0)
    return 0;
  const hid_t internal = tfmm_hdf5_create_group(group, "InternalUnits", 0);
  const hid_t cgs = tfmm_hdf5_create_group(group, "CGS", 0);
  int ok = internal >= 0 && cgs >= 0 &&
           tfmm_hdf5_put_double1(internal, "newton_G", s->G) &&
           tfmm_hdf5_put_double1(cgs, "newton_G", TFMM_HDF5_G_CGS);
  if (internal >= 0 && H5Gclose(internal) < 0)
    ok = 0;
  if (cgs >= 0 && H5Gclose(cgs) < 0)
    ok = 0;
  if (H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

static int put_code(hid_t file) {
  const hid_t group = tfmm_hdf5_create_group(file, "Code", 0);
  int ok = group >= 0 && tfmm_hdf5_put_string(group, "Code", "tilefmm") &&
           tfmm_hdf5_put_string(group, "Git Branch", "") &&
           tfmm_hdf5_put_string(group, "Git Revision", "") &&
           tfmm_hdf5_put_string(group, "Git Date", "");
  if (group >= 0 && H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

/* Empty groups yt's SWIFT frontend opens (it reads their attributes). */
static int put_empty(hid_t file, const char *name) {
  const hid_t group = tfmm_hdf5_create_group(file, name, 0);
  return group >= 0 && H5Gclose(group) >= 0;
}

int tfmm_hdf5_put_meta(hid_t file, const tfmm_snapshot *s, double box) {
  /* SWIFT's engine policies that describe this run: gravity alone, not
   * cosmological (yt reads "cosmological integration"). */
  static const char *const policies[] = {"self gravity",
                                         "cosmological integration", "hydro",
                                         "external gravity", "stars"};
  static const int32_t policy_on[] = {1, 0, 0, 0, 0};
  static const char *const cosmology[] = {"Cosmological run"};
  static const int32_t not_cosmological[] = {0};
  static const char *const runtime[] = {"PeriodicBoundariesOn"};
  static const int32_t not_periodic[] = {0};
  return put_unit_system(file, "Units", s) &&
         put_unit_system(file, "InternalCodeUnits", s) &&
         put_int_group(file, "Cosmology", cosmology, not_cosmological, 1) &&
         put_int_group(file, "Policy", policies, policy_on,
                       sizeof policies / sizeof policies[0]) &&
         put_int_group(file, "RuntimePars", runtime, not_periodic, 1) &&
         put_code(file) && put_empty(file, "HydroScheme") &&
         put_empty(file, "SubgridScheme") && put_empty(file, "GravityScheme") &&
         put_constants(file, s) && put_cells(file, s, box);
}

int tfmm_hdf5_put_header_units(hid_t header, const tfmm_snapshot *s) {
  double base[5];
  base_units(s, base);
  const double velocity = base[1] / base[2];
  return tfmm_hdf5_put_string(header, "UnitSystem",
                              physical_units(s)
                                  ? "InternalUnitSystem"
                                  : "N-body (G = 1; /Units holds 1 g, 1 cm, "
                                    "1 s: read them as N-body units)") &&
         tfmm_hdf5_put_double1(header, "UnitLength_in_cm", base[1]) &&
         tfmm_hdf5_put_double1(header, "UnitMass_in_g", base[0]) &&
         tfmm_hdf5_put_double1(header, "UnitVelocity_in_cm_per_s", velocity);
}
