/* Writing snapshots in the GADGET/SWIFT HDF5 layout (see
 * tfmm_snapshot_write in tilefmm.h), and what the writer and the reader
 * (hdf5_read.c) share: the signature, HDF5 quieted, HDF5's reasons. */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5.h"
#include "io/hdf5_chunks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTYPES 6 /* GADGET's particle types: 0 gas, 1 dark matter, ... */
#define BODY_TYPE 1

int tfmm_has_hdf5(void) { return 1; }

void tfmm_hdf5_quiet_begin(tfmm_hdf5_quiet *q) {
  /* HDF5 before 1.14.1 frees a file whose H5Fclose failed (its last flush
   * did not fit on the disk, say) but keeps its ID, and the handler it
   * installs with atexit then closes that ID again and crashes
   * (HDFFV-11052, HDFGroup/hdf5#2496). Every file is closed here, so the
   * handler has nothing to do: it is not installed. This works when it
   * precedes the process's first HDF5 call; later calls fail harmlessly. */
  H5dont_atexit();
  if (H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) < 0) {
    q->func = NULL;
    q->data = NULL;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported here */
}

void tfmm_hdf5_quiet_end(const tfmm_hdf5_quiet *q) {
  H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* HDF5's reason for its latest failure: the innermost entry of the error
 * stack, which for a failed system call quotes strerror's text. */
herr_t tfmm_hdf5_first_entry(unsigned n, const H5E_error2_t *e, void *data) {
  char *buf = data;
  if (n == 0 && e->desc != NULL) {
    const char *quoted = strstr(e->desc, "error message = '");
    if (quoted != NULL) {
      quoted += strlen("error message = '");
      const char *end = strchr(quoted, '\'');
      const int len = end != NULL ? (int)(end - quoted) : (int)strlen(quoted);
      snprintf(buf, TFMM_HDF5_REASON_SIZE, "%.*s", len, quoted);
    } else {
      snprintf(buf, TFMM_HDF5_REASON_SIZE, "%s", e->desc);
    }
  }
  return 0;
}

const char *tfmm_hdf5_reason(char buf[TFMM_HDF5_REASON_SIZE]) {
  snprintf(buf, TFMM_HDF5_REASON_SIZE, "HDF5 error");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, tfmm_hdf5_first_entry, buf);
  return buf;
}

/* ---- Writing ---------------------------------------------------------- */

static int put_int(hid_t loc, const char *name, int32_t value) {
  return tfmm_hdf5_put_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 0,
                            &value);
}

static int put_double(hid_t loc, const char *name, double value) {
  return tfmm_hdf5_put_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0,
                            &value);
}

/* Non-periodic bodies have no box: BoxSize is the edge of the smallest
 * origin-centred cube that holds them all, 2 max |coordinate| (extent,
 * found while the bodies were checked), made a little larger (2^-20) so
 * that the bodies shifted by half of it lie inside [0, BoxSize), where yt
 * looks for them; 1 for bodies all at the origin. */
static double box_size(double extent) {
  return extent > 0 ? 2 * extent * (1 + 0x1p-20) : 1;
}

/* What is added to the coordinates written: half the box for a snapshot,
 * nothing for a checkpoint (exact). */
static double shift_of(const tfmm_snapshot_output *o, double box) {
  return o != NULL ? box / 2 : 0;
}

static int put_header(hid_t file, const tfmm_snapshot *s,
                      const tfmm_snapshot_output *o, double box) {
  const hid_t header = tfmm_hdf5_create_group(file, "Header", 0);
  if (header < 0)
    return 0;
  uint32_t count[NTYPES] = {0}, high[NTYPES] = {0};
  count[BODY_TYPE] = (uint32_t)s->n; /* n <= UINT32_MAX: checked */
  high[BODY_TYPE] = (uint32_t)((uint64_t)s->n >> 32);
  int32_t can_have[NTYPES] = {0};
  can_have[BODY_TYPE] = 1;
  const double mass_table[NTYPES] = {0}; /* zeros: Masses are written */
  const double edges[3] = {box, box, box};
  const double shift = shift_of(o, box), shifts[3] = {shift, shift, shift};
  static const char *const flags[] = {"Flag_Sfr",      "Flag_Cooling",
                                      "Flag_Feedback", "Flag_StellarAge",
                                      "Flag_Metals",   "Flag_Entropy_ICs"};
  /* SWIFT's shapes: Time, Redshift, Scale-factor, Dimension and
   * NumFilesPerSnapshot as arrays of one, BoxSize and Shift of three
   * (swiftsimio reads Time[0]); GADGET's flags and cosmology as
   * scalars. */
  int ok = tfmm_hdf5_put_attr(header, "NumPart_ThisFile", H5T_STD_U32LE,
                              H5T_NATIVE_UINT32, NTYPES, count) &&
           tfmm_hdf5_put_attr(header, "NumPart_Total", H5T_STD_U32LE,
                              H5T_NATIVE_UINT32, NTYPES, count) &&
           tfmm_hdf5_put_attr(header, "NumPart_Total_HighWord", H5T_STD_U32LE,
                              H5T_NATIVE_UINT32, NTYPES, high) &&
           tfmm_hdf5_put_attr(header, "MassTable", H5T_IEEE_F64LE,
                              H5T_NATIVE_DOUBLE, NTYPES, mass_table) &&
           tfmm_hdf5_put_attr(header, "CanHaveTypes", H5T_STD_I32LE,
                              H5T_NATIVE_INT32, NTYPES, can_have) &&
           tfmm_hdf5_put_double1(header, "Time", s->time) &&
           tfmm_hdf5_put_double1(header, "Redshift", 0) &&
           tfmm_hdf5_put_double1(header, "Scale-factor", 1) &&
           tfmm_hdf5_put_attr(header, "BoxSize", H5T_IEEE_F64LE,
                              H5T_NATIVE_DOUBLE, 3, edges) &&
           tfmm_hdf5_put_attr(header, "Shift", H5T_IEEE_F64LE,
                              H5T_NATIVE_DOUBLE, 3, shifts) &&
           tfmm_hdf5_put_int1(header, "NumFilesPerSnapshot", 1) &&
           tfmm_hdf5_put_int1(header, "Dimension", 3) &&
           tfmm_hdf5_put_string(header, "Code", "SWIFT") &&
           tfmm_hdf5_put_string(header, "OutputType", "FullVolume") &&
           tfmm_hdf5_put_header_units(header, s) &&
           put_int(header, "Flag_DoublePrecision", o == NULL || !o->single) &&
           put_double(header, "Omega0", 0) &&
           put_double(header, "OmegaLambda", 0) &&
           put_double(header, "HubbleParam", 1);
  for (size_t k = 0; ok && k < sizeof flags / sizeof flags[0]; k++)
    ok = put_int(header, flags[k], 0);
  if (H5Gclose(header) < 0)
    ok = 0;
  return ok;
}

/* Chunks of about 1 MiB: each carries a Fletcher-32 checksum (which
 * needs chunked storage), and a chunk must stay under HDF5's 4 GiB. */
#define CHUNK_BYTES ((size_t)1 << 20)

/* Every dataset is written whole, so no fill value is ever written
 * (IFSET: only a user-defined one would be); a snapshot's has a defined
 * fill value all the same, which pynbody's fast reader requires (it reads
 * through h5py, slowly, from files whose fill time is NEVER). */
static H5D_fill_time_t fill_time(const tfmm_snapshot_output *o) {
  return o != NULL ? H5D_FILL_TIME_IFSET : H5D_FILL_TIME_NEVER;
}

/* count values of data through HDF5's filters and its conversion to the
 * file's type, each double plus *shift first when shift is not NULL. */
static int write_filtered(hid_t set, hid_t mem_type, size_t count,
                          const void *data, const double *shift) {
  if (shift == NULL)
    return H5Dwrite(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
  double *shifted = malloc(count * sizeof *shifted);
  if (shifted == NULL)
    return 0;
  const double *x = data;
  for (size_t i = 0; i < count; i++)
    shifted[i] = x[i] + *shift;
  const int ok =
      H5Dwrite(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, shifted) >= 0;
  free(shifted);
  return ok;
}

/* One dataset of PartType1: rows x cols (cols 0: a vector of rows), in
 * one write, with SWIFT's unit attributes; gzip and shuffle at the
 * output's level, float32 when it asks for single precision (floats
 * only); doubles plus *shift when shift is not NULL. */
static int put_dataset(hid_t group, const tfmm_snapshot *s,
                       const tfmm_snapshot_output *o, const char *name,
                       hid_t file_type, hid_t mem_type, size_t rows, int cols,
                       const void *data, const double *shift) {

  if (o != NULL && o->single && H5Tequal(file_type, H5T_IEEE_F64LE) > 0)
    file_type = H5T_IEEE_F32LE;
  const int level = o != NULL ? o->compression : 0;
  const hsize_t dims[2] = {rows, (hsize_t)cols};
  const size_t row_bytes = H5Tget_size(file_type) * (cols > 0 ? cols : 1);
  const size_t chunk_rows = CHUNK_BYTES / row_bytes;
  const hsize_t chunk[2] = {rows < chunk_rows ? rows : chunk_rows,
                            (hsize_t)cols};
  const hid_t space = H5Screate_simple(cols > 0 ? 2 : 1, dims, NULL);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  /* SWIFT's order: shuffle, deflate, then the checksum of what is
   * stored. */
  if (space < 0 || dcpl < 0 ||
      H5Pset_chunk(dcpl, cols > 0 ? 2 : 1, chunk) < 0 ||
      (level > 0 && (H5Pset_shuffle(dcpl) < 0 ||
                     H5Pset_deflate(dcpl, (unsigned)level) < 0)) ||
      H5Pset_fletcher32(dcpl) < 0 || H5Pset_fill_time(dcpl, fill_time(o)) < 0 ||
      !tfmm_hdf5_compact_attrs(dcpl)) {
    if (space >= 0)
      H5Sclose(space);
    if (dcpl >= 0)
      H5Pclose(dcpl);
    return 0;
  }
  const hid_t set =
      H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  const tfmm_hdf5_dimension d = tfmm_hdf5_dimension_of(name);
  /* Uncompressed, in memory as in the file: the chunks and their
   * checksums directly (hdf5_chunks.h); else through HDF5's filters. */
  const int direct = level == 0 && H5Tequal(file_type, mem_type) > 0;
  const size_t count = rows * (size_t)(cols > 0 ? cols : 1);
  int ok = set >= 0 &&
           (direct ? tfmm_hdf5_write_chunks(set, rows, row_bytes,
                                            (size_t)chunk[0], data, shift)
                   : write_filtered(set, mem_type, count, data, shift)) &&
           tfmm_hdf5_put_unit_attrs(set, s, &d, level > 0);
  if (set >= 0 && H5Dclose(set) < 0)
    ok = 0;
  H5Pclose(dcpl);
  H5Sclose(space);
  return ok;
}

/* The coordinates as written: shifted into the box for a snapshot (the
 * shift added as the chunks are filled), as they are for a checkpoint. */
static int put_coordinates(hid_t group, const tfmm_snapshot *s,
                           const tfmm_snapshot_output *o, double box) {
  const double shift = shift_of(o, box);
  return put_dataset(group, s, o, "Coordinates", H5T_IEEE_F64LE,
                     H5T_NATIVE_DOUBLE, s->n, 3, s->pos,
                     shift != 0 ? &shift : NULL);
}

/* Whether the optional dataset field is written. */
static int wanted(const tfmm_snapshot_output *o, unsigned field) {
  return o == NULL || (o->fields & field) != 0;
}

static int put_bodies(hid_t file, const tfmm_snapshot *s,
                      const tfmm_snapshot_output *o, double box) {
  const hid_t group =
      H5Gcreate2(file, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (group < 0)
    return 0;
  const hid_t f64 = H5T_IEEE_F64LE, d = H5T_NATIVE_DOUBLE;
  int ok =
      put_coordinates(group, s, o, box) &&
      (!wanted(o, TFMM_SNAPSHOT_VELOCITIES) ||
       put_dataset(group, s, o, "Velocities", f64, d, s->n, 3, s->vel, NULL)) &&
      put_dataset(group, s, o, "Masses", f64, d, s->n, 0, s->mass, NULL) &&
      put_dataset(group, s, o, "ParticleIDs", H5T_STD_U64LE, H5T_NATIVE_UINT64,
                  s->n, 0, s->ids, NULL) &&
      (s->acc == NULL || !wanted(o, TFMM_SNAPSHOT_ACCELERATIONS) ||
       put_dataset(group, s, o, "Accelerations", f64, d, s->n, 3, s->acc,
                   NULL)) &&
      (s->pot == NULL || !wanted(o, TFMM_SNAPSHOT_POTENTIALS) ||
       put_dataset(group, s, o, "Potentials", f64, d, s->n, 0, s->pot, NULL)) &&
      (s->bins == NULL ||
       put_dataset(group, s, o, "TimeBins", H5T_STD_I8LE, H5T_NATIVE_SCHAR,
                   s->n, 0, s->bins, NULL));
  if (H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

/* A group of string attributes, in order; with sum (not NULL) last, as
 * TFMM_HDF5_CHECKSUM (an entry of that name is the writer's own). */
static int put_strings(hid_t file, const char *name, const tfmm_attr *attrs,
                       size_t count, const char *sum) {
  const hid_t group = tfmm_hdf5_create_group(file, name, 1);
  int ok = group >= 0;
  for (size_t k = 0; ok && k < count; k++)
    if (strcmp(attrs[k].name, TFMM_HDF5_CHECKSUM) != 0)
      ok = tfmm_hdf5_put_string(group, attrs[k].name, attrs[k].value);
  if (ok && sum != NULL)
    ok = tfmm_hdf5_put_string(group, TFMM_HDF5_CHECKSUM, sum);
  if (group >= 0 && H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

/* HDF5's reason for the first failure while writing, kept by this error
 * handler in data (a buffer of TFMM_HDF5_REASON_SIZE): the calls that
 * close what was open after a failure would clear the error stack before
 * it could be read. */
static herr_t keep_first_reason(hid_t stack, void *data) {
  char *first = data;
  if (first[0] == '\0')
    H5Ewalk2(stack, H5E_WALK_UPWARD, tfmm_hdf5_first_entry, first);
  return 0;
}

static const char *reason(const char *first) {
  return first[0] != '\0' ? first : "HDF5 error";
}

static int write_parts(hid_t file, const tfmm_snapshot *s,
                       const tfmm_snapshot_output *o, double extent,
                       const char **part) {
  const double box = box_size(extent);
  *part = "/Header";
  if (!put_header(file, s, o, box))
    return 0;
  *part = "/PartType1";
  if (!put_bodies(file, s, o, box))
    return 0;
  *part = "the units and SWIFT's groups";
  if (!tfmm_hdf5_put_meta(file, s, box))
    return 0;
  *part = "/Parameters";
  if (!put_strings(file, "Parameters", s->params, s->nparams, NULL))
    return 0;
  /* A checkpoint's parameters and state are what a restart trusts: their
   * checksum goes with them (verified by tfmm_hdf5_read_run_groups). */
  char sum[32];
  tfmm_hdf5_checksum_text(
      tfmm_hdf5_run_checksum(s->params, s->nparams, s->state, s->nstate), sum);
  *part = "/RunState";
  if (s->nstate > 0 && !put_strings(file, "RunState", s->state, s->nstate, sum))
    return 0;
  *part = "the file";
  return H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0;
}

/* The HDF5 1.8 file format, neither older nor newer: its superblock and
 * object headers carry checksums (the 1.6 format, HDF5's default, has
 * none), so that damaged metadata fails a call instead of being believed;
 * HDF5 1.8 and every later version read it. */
static hid_t file_access(void) {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 &&
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0) {
    H5Pclose(fapl);
    return -1;
  }
  return fapl;
}

int tfmm_hdf5_write(tfmm_io_report *r, const char *path, const char *file,
                    const tfmm_snapshot *s, const tfmm_snapshot_output *o,
                    double extent) {
  tfmm_hdf5_quiet quiet;
  tfmm_hdf5_quiet_begin(&quiet);
  char first[TFMM_HDF5_REASON_SIZE] = "";
  H5Eset_auto2(H5E_DEFAULT, keep_first_reason, first); /* prints nothing */
  int ok = 0;
  const hid_t fapl = file_access();
  const hid_t f =
      fapl >= 0 ? H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : -1;
  if (fapl >= 0)
    H5Pclose(fapl);
  if (f < 0) {
    tfmm_io_fail(r, "%s: cannot create %s: %s", path, file, reason(first));
  } else {
    const char *part;
    ok = write_parts(f, s, o, extent, &part);
    if (!ok)
      tfmm_io_fail(r, "%s: cannot write %s: %s", path, part, reason(first));
    if (H5Fclose(f) < 0 && ok) {
      tfmm_io_fail(r, "%s: cannot write: %s", path, reason(first));
      ok = 0;
    }
  }
  tfmm_hdf5_quiet_end(&quiet);
  return ok;
}
