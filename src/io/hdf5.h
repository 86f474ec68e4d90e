/* What the HDF5 snapshot files share (src/io/hdf5_*.c): quieting HDF5
 * and reading its reasons, the attribute helpers, SWIFT's unit attributes
 * of each dataset, the groups that swiftsimio, yt and pynbody look for
 * (/Units, /InternalCodeUnits, /Cosmology, /Policy, /Code, /Cells, ...),
 * and the units of a file read. Internal to the library, built with HDF5
 * only (src/io/hdf5_none.c stands in without). */
#ifndef TFMM_IO_HDF5_H
#define TFMM_IO_HDF5_H

#include "io/io.h"

#include <hdf5.h>

/* Newton's constant in cgs, CODATA 2018 (SWIFT's const_newton_G_cgs),
 * written in /PhysicalConstants/CGS. */
#define TFMM_HDF5_G_CGS 6.67430e-8

/* HDF5's automatic error printing, as it was before a call. */
typedef struct tfmm_hdf5_quiet {
  H5E_auto2_t func;
  void *data;
} tfmm_hdf5_quiet;

/* Called first by every entry point: keeps HDF5 from installing its exit
 * handler (which crashes after a failed close: see hdf5_write.c) and from
 * printing errors (they are reported), saving what printed them. */
void tfmm_hdf5_quiet_begin(tfmm_hdf5_quiet *q);

/* Puts back what printed HDF5's errors before tfmm_hdf5_quiet_begin. */
void tfmm_hdf5_quiet_end(const tfmm_hdf5_quiet *q);

/* HDF5's reason for the failure of the latest HDF5 call, in buf
 * (strerror's text when a system call failed). Call it straight after
 * the failing call: the next HDF5 call clears HDF5's error stack. */
#define TFMM_HDF5_REASON_SIZE 256
const char *tfmm_hdf5_reason(char buf[TFMM_HDF5_REASON_SIZE]);

/* The error-stack walker behind tfmm_hdf5_reason: the innermost entry's
 * text into data (a buffer of TFMM_HDF5_REASON_SIZE). */
herr_t tfmm_hdf5_first_entry(unsigned n, const H5E_error2_t *e, void *data);

/* An attribute of count elements (count 0: a scalar), in loc's object
 * header. Returns 0 on failure. */
int tfmm_hdf5_put_attr(hid_t loc, const char *name, hid_t file_type,
                       hid_t mem_type, size_t count, const void *data);

/* One double or int32, as SWIFT writes them: an array of one element. */
int tfmm_hdf5_put_double1(hid_t loc, const char *name, double value);
int tfmm_hdf5_put_int1(hid_t loc, const char *name, int32_t value);

/* A fixed-length, null-terminated UTF-8 string attribute. */
int tfmm_hdf5_put_string(hid_t loc, const char *name, const char *value);

/* A group whose attributes all stay in its object header (which carries a
 * checksum), in creation order when ordered. */
hid_t tfmm_hdf5_create_group(hid_t loc, const char *name, int ordered);

/* The creation properties of a dataset whose attributes stay in its
 * object header. */
int tfmm_hdf5_compact_attrs(hid_t dcpl);

/* The physical dimension of a dataset of PartType1: its exponents of
 * SWIFT's five base units, and its description. */
typedef struct tfmm_hdf5_dimension {
  float mass, length, time, current, temperature;
  const char *description;
} tfmm_hdf5_dimension;

/* The dimension of PartType1/name (zeros and "" for names it lacks). */
tfmm_hdf5_dimension tfmm_hdf5_dimension_of(const char *name);

/* SWIFT's unit attributes of a dataset of dimension d, in s's units. */
int tfmm_hdf5_put_unit_attrs(hid_t set, const tfmm_snapshot *s,
                             const tfmm_hdf5_dimension *d, int compressed);

/* The groups beside /Header and /PartType1, for a box of edge box. */
int tfmm_hdf5_put_meta(hid_t file, const tfmm_snapshot *s, double box);

/* The Header's unit keys: SWIFT's UnitSystem word and GADGET-4's. */
int tfmm_hdf5_put_header_units(hid_t header, const tfmm_snapshot *s);

/* Reads the units of the open file into out->units and
 * out->units_source. Reports what is wrong and returns 0. */
int tfmm_hdf5_read_units(tfmm_io_report *r, const char *path, hid_t file,
                         tfmm_snapshot *out);

/* The attribute of a checkpoint's /RunState that holds the checksum of
 * its /Parameters and /RunState (hdf5_attrs.c): "fnv1a64:" and 16 hex
 * digits. */
#define TFMM_HDF5_CHECKSUM "ParametersChecksum"

/* FNV-1a (64 bits) over the names and values of params and state (each
 * name and value followed by its NUL; a 0x1e byte between the groups;
 * an entry named TFMM_HDF5_CHECKSUM skipped). */
uint64_t tfmm_hdf5_run_checksum(const tfmm_attr *params, size_t nparams,
                                const tfmm_attr *state, size_t nstate);

/* The checksum as written: "fnv1a64:0123456789abcdef". */
void tfmm_hdf5_checksum_text(uint64_t sum, char buf[32]);

/* Reads /Parameters and /RunState of the open file into out (none when a
 * group is absent): every attribute checked by its declared type and
 * size first (a variable-length string refused unread), then read; a
 * checkpoint's ParametersChecksum verified. Reports and returns 0. */
int tfmm_hdf5_read_run_groups(tfmm_io_report *r, const char *path, hid_t file,
                              tfmm_snapshot *out);

#endif
