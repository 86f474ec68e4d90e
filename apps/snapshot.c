/* Writing snapshots in the GADGET/SWIFT HDF5 layout, and what the writer
 * and the reader (snapshot_read.c) share. See snapshot.h. */
#define _POSIX_C_SOURCE 200809L
#include "snapshot.h"

#include "atomic_file.h"
#include "cli.h"
#include "snapshot_meta.h"

#include <hdf5.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTYPES 6 /* GADGET's particle types: 0 gas, 1 dark matter, ... */
#define BODY_TYPE 1

const char *snapshot_attr_find(const snapshot_attr *attrs, size_t count,
                               const char *name) {
  for (size_t k = 0; k < count; k++)
    if (strcmp(attrs[k].name, name) == 0)
      return attrs[k].value;
  return NULL;
}

static void free_attrs(snapshot_attr *attrs, size_t count) {
  for (size_t k = 0; k < count; k++) {
    free(attrs[k].name);
    free(attrs[k].value);
  }
  free(attrs);
}

int snapshot_parse_fields(const char *text, unsigned *fields) {
  if (strcmp(text, "all") == 0) {
    *fields = SNAPSHOT_FIELDS_ALL;
    return 1;
  }
  static const struct {
    const char *name;
    unsigned bit;
  } names[] = {{"Coordinates", 0},
               {"Masses", 0},
               {"ParticleIDs", 0},
               {"Velocities", SNAPSHOT_FIELD_VELOCITIES},
               {"Accelerations", SNAPSHOT_FIELD_ACCELERATIONS},
               {"Potentials", SNAPSHOT_FIELD_POTENTIALS}};
  unsigned m = 0;
  for (const char *p = text;;) {
    const char *end = strchr(p, ',');
    const size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
    int found = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !found; k++)
      if (strlen(names[k].name) == len && strncmp(names[k].name, p, len) == 0) {
        m |= names[k].bit;
        found = 1;
      }
    if (!found)
      return 0;
    if (end == NULL)
      break;
    p = end + 1;
  }
  *fields = m;
  return 1;
}

void snapshot_free(snapshot *s) {
  free(s->pos);
  free(s->vel);
  free(s->mass);
  free(s->acc);
  free(s->pot);
  free(s->ids);
  free(s->bins);
  free_attrs(s->params, s->nparams);
  free_attrs(s->state, s->nstate);
  memset(s, 0, sizeof *s);
}

int snapshot_is_hdf5(const char *path) {
  static const unsigned char signature[8] = {0x89, 'H',  'D',  'F',
                                             '\r', '\n', 0x1a, '\n'};
  FILE *fp = fopen(path, "rb");
  if (fp == NULL)
    return 0;
  /* The superblock follows a user block of 0, 512, 1024, 2048, ... bytes
   * (HDF5 File Format Specification, section II.A): where HDF5 looks. */
  int found = 0;
  for (long offset = 0; !found && offset <= LONG_MAX / 2;
       offset = offset == 0 ? 512 : 2 * offset) {
    unsigned char head[8];
    if (fseek(fp, offset, SEEK_SET) != 0 ||
        fread(head, 1, sizeof head, fp) != sizeof head)
      break; /* past the end */
    found = memcmp(head, signature, sizeof head) == 0;
  }
  fclose(fp);
  return found;
}

int snapshot_check(const char *path, const snapshot *s) {
  for (size_t i = 0; i < s->n; i++) {
    const double *x = s->pos + 3 * i, *v = s->vel + 3 * i;
    const char *what = NULL;
    if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
      what = "a non-finite coordinate";
    else if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
      what = "a non-finite velocity";
    else if (!isfinite(s->mass[i]))
      what = "a non-finite mass";
    else if (!(s->mass[i] > 0))
      what = "a mass <= 0";
    if (what != NULL) {
      cli_error("%s: body %zu (ParticleID %llu) has %s", path, i,
                (unsigned long long)s->ids[i], what);
      return 0;
    }
  }
  return 1;
}

void snapshot_hdf5_init(void) {
  /* HDF5 before 1.14.1 frees a file whose H5Fclose failed (its last flush
   * did not fit on the disk, say) but keeps its ID, and the handler it
   * installs with atexit then closes that ID again and crashes
   * (HDFFV-11052, HDFGroup/hdf5#2496). Every file is closed here, so the
   * handler has nothing to do: it is not installed. This works when it
   * precedes the process's first HDF5 call; later calls fail harmlessly. */
  H5dont_atexit();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported here */
}

/* HDF5's reason for its latest failure: the innermost entry of the error
 * stack, which for a failed system call quotes strerror's text. */
static herr_t first_entry(unsigned n, const H5E_error2_t *e, void *data) {
  char *buf = data;
  if (n == 0 && e->desc != NULL) {
    const char *quoted = strstr(e->desc, "error message = '");
    if (quoted != NULL) {
      quoted += strlen("error message = '");
      const char *end = strchr(quoted, '\'');
      const int len = end != NULL ? (int)(end - quoted) : (int)strlen(quoted);
      snprintf(buf, SNAPSHOT_REASON_SIZE, "%.*s", len, quoted);
    } else {
      snprintf(buf, SNAPSHOT_REASON_SIZE, "%s", e->desc);
    }
  }
  return 0;
}

const char *snapshot_hdf5_reason(char buf[SNAPSHOT_REASON_SIZE]) {
  snprintf(buf, SNAPSHOT_REASON_SIZE, "HDF5 error");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_entry, buf);
  return buf;
}

/* ---- Writing ---------------------------------------------------------- */

static int put_int(hid_t loc, const char *name, int32_t value) {
  return snapshot_put_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 0,
                           &value);
}

static int put_double(hid_t loc, const char *name, double value) {
  return snapshot_put_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0,
                           &value);
}

/* Non-periodic bodies have no box: BoxSize is the edge of the smallest
 * origin-centred cube that holds them all, 2 max |coordinate|, made a
 * little larger (2^-20) so that the bodies shifted by half of it lie
 * inside [0, BoxSize), where yt looks for them; 1 for bodies all at the
 * origin. */
static double box_size(const snapshot *s) {
  double extent = 0;
  for (size_t i = 0; i < 3 * s->n; i++)
    extent = fmax(extent, fabs(s->pos[i]));
  return extent > 0 ? 2 * extent * (1 + 0x1p-20) : 1;
}

/* What is added to the coordinates written: half the box for a snapshot,
 * nothing for a checkpoint (exact). */
static double shift_of(const snapshot *s, double box) {
  return s->output != NULL ? box / 2 : 0;
}

static int put_header(hid_t file, const snapshot *s, double box) {
  const hid_t header = snapshot_create_group(file, "Header", 0);
  if (header < 0)
    return 0;
  uint32_t count[NTYPES] = {0}, high[NTYPES] = {0};
  count[BODY_TYPE] = (uint32_t)s->n; /* n <= UINT32_MAX: checked */
  high[BODY_TYPE] = (uint32_t)((uint64_t)s->n >> 32);
  int32_t can_have[NTYPES] = {0};
  can_have[BODY_TYPE] = 1;
  const double mass_table[NTYPES] = {0}; /* zeros: Masses are written */
  const double edges[3] = {box, box, box};
  const double shift = shift_of(s, box), shifts[3] = {shift, shift, shift};
  static const char *const flags[] = {"Flag_Sfr",      "Flag_Cooling",
                                      "Flag_Feedback", "Flag_StellarAge",
                                      "Flag_Metals",   "Flag_Entropy_ICs"};
  /* SWIFT's shapes: Time, Redshift, Scale-factor, Dimension and
   * NumFilesPerSnapshot as arrays of one, BoxSize and Shift of three
   * (swiftsimio reads Time[0]); GADGET's flags and cosmology as
   * scalars. */
  int ok = snapshot_put_attr(header, "NumPart_ThisFile", H5T_STD_U32LE,
                             H5T_NATIVE_UINT32, NTYPES, count) &&
           snapshot_put_attr(header, "NumPart_Total", H5T_STD_U32LE,
                             H5T_NATIVE_UINT32, NTYPES, count) &&
           snapshot_put_attr(header, "NumPart_Total_HighWord", H5T_STD_U32LE,
                             H5T_NATIVE_UINT32, NTYPES, high) &&
           snapshot_put_attr(header, "MassTable", H5T_IEEE_F64LE,
                             H5T_NATIVE_DOUBLE, NTYPES, mass_table) &&
           snapshot_put_attr(header, "CanHaveTypes", H5T_STD_I32LE,
                             H5T_NATIVE_INT32, NTYPES, can_have) &&
           snapshot_put_double1(header, "Time", s->time) &&
           snapshot_put_double1(header, "Redshift", 0) &&
           snapshot_put_double1(header, "Scale-factor", 1) &&
           snapshot_put_attr(header, "BoxSize", H5T_IEEE_F64LE,
                             H5T_NATIVE_DOUBLE, 3, edges) &&
           snapshot_put_attr(header, "Shift", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                             3, shifts) &&
           snapshot_put_int1(header, "NumFilesPerSnapshot", 1) &&
           snapshot_put_int1(header, "Dimension", 3) &&
           snapshot_put_string(header, "Code", "SWIFT") &&
           snapshot_put_string(header, "OutputType", "FullVolume") &&
           snapshot_put_header_units(header, s) &&
           put_int(header, "Flag_DoublePrecision",
                   s->output == NULL || !s->output->single) &&
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
static H5D_fill_time_t fill_time(const snapshot *s) {
  return s->output != NULL ? H5D_FILL_TIME_IFSET : H5D_FILL_TIME_NEVER;
}

/* One dataset of PartType1: rows x cols (cols 0: a vector of rows), in
 * one write, with SWIFT's unit attributes; gzip and shuffle at the
 * output's level, float32 when it asks for single precision (floats
 * only). */
static int put_dataset(hid_t group, const snapshot *s, const char *name,
                       hid_t file_type, hid_t mem_type, size_t rows, int cols,
                       const void *data) {
  const snapshot_output *o = s->output;
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
      H5Pset_fletcher32(dcpl) < 0 || H5Pset_fill_time(dcpl, fill_time(s)) < 0 ||
      !snapshot_compact_attrs(dcpl)) {
    if (space >= 0)
      H5Sclose(space);
    if (dcpl >= 0)
      H5Pclose(dcpl);
    return 0;
  }
  const hid_t set =
      H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  const snapshot_dimension d = snapshot_dimension_of(name);
  int ok = set >= 0 &&
           H5Dwrite(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0 &&
           snapshot_put_unit_attrs(set, s, &d, level > 0);
  if (set >= 0 && H5Dclose(set) < 0)
    ok = 0;
  H5Pclose(dcpl);
  H5Sclose(space);
  return ok;
}

/* The coordinates as written: shifted into the box for a snapshot. */
static int put_coordinates(hid_t group, const snapshot *s, double box) {
  const double shift = shift_of(s, box);
  if (shift == 0)
    return put_dataset(group, s, "Coordinates", H5T_IEEE_F64LE,
                       H5T_NATIVE_DOUBLE, s->n, 3, s->pos);
  double *shifted = malloc(3 * s->n * sizeof *shifted);
  if (shifted == NULL)
    return 0;
  for (size_t i = 0; i < 3 * s->n; i++)
    shifted[i] = s->pos[i] + shift;
  const int ok = put_dataset(group, s, "Coordinates", H5T_IEEE_F64LE,
                             H5T_NATIVE_DOUBLE, s->n, 3, shifted);
  free(shifted);
  return ok;
}

/* Whether the optional dataset field is written. */
static int wanted(const snapshot *s, unsigned field) {
  return s->output == NULL || (s->output->fields & field) != 0;
}

static int put_bodies(hid_t file, const snapshot *s, double box) {
  const hid_t group =
      H5Gcreate2(file, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (group < 0)
    return 0;
  const hid_t f64 = H5T_IEEE_F64LE, d = H5T_NATIVE_DOUBLE;
  int ok = put_coordinates(group, s, box) &&
           (!wanted(s, SNAPSHOT_FIELD_VELOCITIES) ||
            put_dataset(group, s, "Velocities", f64, d, s->n, 3, s->vel)) &&
           put_dataset(group, s, "Masses", f64, d, s->n, 0, s->mass) &&
           put_dataset(group, s, "ParticleIDs", H5T_STD_U64LE,
                       H5T_NATIVE_UINT64, s->n, 0, s->ids) &&
           (s->acc == NULL || !wanted(s, SNAPSHOT_FIELD_ACCELERATIONS) ||
            put_dataset(group, s, "Accelerations", f64, d, s->n, 3, s->acc)) &&
           (s->pot == NULL || !wanted(s, SNAPSHOT_FIELD_POTENTIALS) ||
            put_dataset(group, s, "Potentials", f64, d, s->n, 0, s->pot)) &&
           (s->bins == NULL || put_dataset(group, s, "TimeBins", H5T_STD_I8LE,
                                           H5T_NATIVE_SCHAR, s->n, 0, s->bins));
  if (H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

/* A group of string attributes, in order. */
static int put_strings(hid_t file, const char *name, const snapshot_attr *attrs,
                       size_t count) {
  const hid_t group = snapshot_create_group(file, name, 1);
  int ok = group >= 0;
  for (size_t k = 0; ok && k < count; k++)
    ok = snapshot_put_string(group, attrs[k].name, attrs[k].value);
  if (group >= 0 && H5Gclose(group) < 0)
    ok = 0;
  return ok;
}

/* What the reader would refuse, the writer refuses too. */
static int check_attrs(const char *path, const char *group,
                       const snapshot_attr *attrs, size_t count) {
  for (size_t k = 0; k < count; k++) {
    if (attrs[k].name == NULL || attrs[k].name[0] == '\0' ||
        attrs[k].value == NULL) {
      cli_error("%s: /%s entry %zu has no name or no value", path, group, k);
      return 0;
    }
    for (size_t j = 0; j < k; j++)
      if (strcmp(attrs[j].name, attrs[k].name) == 0) {
        cli_error("%s: /%s holds '%s' twice", path, group, attrs[k].name);
        return 0;
      }
  }
  return 1;
}

static int check_for_writing(const char *path, const snapshot *s) {
  if (s->n == 0 || s->n > UINT32_MAX) {
    /* NumPart_ThisFile is uint32 in the GADGET layout. */
    cli_error("%s: cannot write %zu bodies: a snapshot holds 1 to %lu", path,
              s->n, (unsigned long)UINT32_MAX);
    return 0;
  }
  if (s->pos == NULL || s->vel == NULL || s->mass == NULL || s->ids == NULL) {
    cli_error("%s: cannot write: coordinates, velocities, masses and IDs "
              "are required",
              path);
    return 0;
  }
  return snapshot_check(path, s) &&
         check_attrs(path, "Parameters", s->params, s->nparams) &&
         check_attrs(path, "RunState", s->state, s->nstate);
}

/* HDF5's reason for the first failure while writing, kept by the error
 * handler below: the calls that close what was open after a failure
 * would clear the error stack before it could be read. */
static char first_reason[SNAPSHOT_REASON_SIZE];

static herr_t keep_first_reason(hid_t stack, void *data) {
  (void)data;
  if (first_reason[0] == '\0')
    H5Ewalk2(stack, H5E_WALK_UPWARD, first_entry, first_reason);
  return 0;
}

static const char *reason(void) {
  return first_reason[0] != '\0' ? first_reason : "HDF5 error";
}

static int write_parts(hid_t file, const snapshot *s, const char **part) {
  const double box = box_size(s);
  *part = "/Header";
  if (!put_header(file, s, box))
    return 0;
  *part = "/PartType1";
  if (!put_bodies(file, s, box))
    return 0;
  *part = "the units and SWIFT's groups";
  if (!snapshot_put_meta(file, s, box))
    return 0;
  *part = "/Parameters";
  if (!put_strings(file, "Parameters", s->params, s->nparams))
    return 0;
  *part = "/RunState";
  if (s->nstate > 0 && !put_strings(file, "RunState", s->state, s->nstate))
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

/* Writes the whole file at tmp; the first failure names its part. */
static int write_hdf5(const char *path, const char *tmp, const snapshot *s) {
  first_reason[0] = '\0';
  H5Eset_auto2(H5E_DEFAULT, keep_first_reason, NULL); /* prints nothing */
  int ok = 0;
  const hid_t fapl = file_access();
  const hid_t file =
      fapl >= 0 ? H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : -1;
  if (fapl >= 0)
    H5Pclose(fapl);
  if (file < 0) {
    cli_error("%s: cannot create %s: %s", path, tmp, reason());
  } else {
    const char *part;
    ok = write_parts(file, s, &part);
    if (!ok)
      cli_error("%s: cannot write %s: %s", path, part, reason());
    if (H5Fclose(file) < 0 && ok) {
      cli_error("%s: cannot write: %s", path, reason());
      ok = 0;
    }
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return ok;
}

int snapshot_write(const char *path, const snapshot *s) {
  snapshot_hdf5_init();
  if (!check_for_writing(path, s))
    return 0;
  /* atomic_file makes the temporary (removed on a signal too) and, once
   * HDF5 has written and closed it, syncs it through its own descriptor
   * (the same inode), renames it and syncs the directory. */
  atomic_file af;
  if (!atomic_file_open(&af, path))
    return 0;
  if (!write_hdf5(path, af.tmp_path, s)) {
    atomic_file_discard(&af);
    return 0;
  }
  return atomic_file_commit(&af);
}
