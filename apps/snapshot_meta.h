/* What snapshot.c writes beside the bodies: the HDF5 attribute helpers
 * it shares, SWIFT's unit attributes of each dataset, and the groups that
 * swiftsimio, yt and pynbody look for (/Units, /InternalCodeUnits,
 * /Cosmology, /Policy, /Code, /Cells, ...). Internal to snapshot*.c. */
#ifndef TFMM_SNAPSHOT_META_H
#define TFMM_SNAPSHOT_META_H

#include "snapshot.h"

#include <hdf5.h>

/* An attribute of count elements (count 0: a scalar), in loc's object
 * header. Returns 0 on failure. */
int snapshot_put_attr(hid_t loc, const char *name, hid_t file_type,
                      hid_t mem_type, size_t count, const void *data);

/* One double or int32, as SWIFT writes them: an array of one element. */
int snapshot_put_double1(hid_t loc, const char *name, double value);
int snapshot_put_int1(hid_t loc, const char *name, int32_t value);

/* A fixed-length, null-terminated UTF-8 string attribute. */
int snapshot_put_string(hid_t loc, const char *name, const char *value);

/* A group whose attributes all stay in its object header (which carries a
 * checksum), in creation order when ordered. */
hid_t snapshot_create_group(hid_t loc, const char *name, int ordered);

/* The creation properties of a dataset whose attributes stay in its
 * object header. */
int snapshot_compact_attrs(hid_t dcpl);

/* The physical dimension of a dataset of PartType1: its exponents of
 * SWIFT's five base units, and its description. */
typedef struct snapshot_dimension {
  float mass, length, time, current, temperature;
  const char *description;
} snapshot_dimension;

/* The dimension of PartType1/name (zeros and "" for names it lacks). */
snapshot_dimension snapshot_dimension_of(const char *name);

/* SWIFT's unit attributes of a dataset of dimension d, in s's units. */
int snapshot_put_unit_attrs(hid_t set, const snapshot *s,
                            const snapshot_dimension *d, int compressed);

/* The groups beside /Header and /PartType1, for a box of edge box. */
int snapshot_put_meta(hid_t file, const snapshot *s, double box);

/* The Header's unit keys: SWIFT's UnitSystem word and GADGET-4's. */
int snapshot_put_header_units(hid_t header, const snapshot *s);

/* Reads the units of the open file into out->units and
 * out->units_source. Prints what is wrong and returns 0. */
int snapshot_read_units(const char *path, hid_t file, snapshot *out);

#endif
