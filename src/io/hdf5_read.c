/* Reading HDF5 snapshots written by tilefmm, GADGET, SWIFT and others:
 * the particle types chosen, concatenated in type order. See
 * tfmm_snapshot_read in tilefmm.h. */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_TYPES TFMM_IO_TYPES_MAX

typedef struct reader {
  tfmm_io_report *report; /* where failures are reported */
  const char *path;
  hid_t file;
  int ntypes;                   /* elements of the Header's arrays */
  uint64_t count[MAX_TYPES];    /* NumPart_ThisFile */
  double mass_table[MAX_TYPES]; /* MassTable, zeros when absent */
  int has_mass_table;
  double shift[3];   /* Header Shift, zeros when absent */
  uint64_t types;    /* the types to read (tfmm_read_options.types) */
  const char *flag;  /* the flag that chooses them, for messages */
  hsize_t file_size; /* bytes: what no part of the file may claim more of */
} reader;

/* Prints why reading what (a part of the file) failed, from HDF5's error
 * stack: a checksum that does not match (Fletcher-32 on a chunk of data,
 * or the checksum of metadata) means a damaged file, and says so. Call it
 * straight after the failing call. */
static void report_hdf5(tfmm_io_report *rep, const char *path,
                        const char *what) {
  char reason[TFMM_HDF5_REASON_SIZE];
  tfmm_hdf5_reason(reason);
  if (strstr(reason, "checksum") != NULL ||
      strstr(reason, "Fletcher32") != NULL)
    tfmm_io_fail(rep, "%s: %s: checksum mismatch: the file is damaged", path,
                 what);
  else
    tfmm_io_fail(rep, "%s: cannot read %s: %s", path, what, reason);
}

/* Opens the object name of loc, which exists, when it is of the type
 * wanted; else prints why not (HDF5's reason when the object cannot be
 * read, which a damaged object header is not). what names it. */
static hid_t open_object(tfmm_io_report *rep, const char *path, hid_t loc,
                         const char *name, H5I_type_t wanted,
                         const char *what) {
  const hid_t object = H5Oopen(loc, name, H5P_DEFAULT);
  if (object < 0) {
    report_hdf5(rep, path, what);
  } else if (H5Iget_type(object) != wanted) {
    tfmm_io_fail(rep, "%s: %s is not a %s", path, what,
                 wanted == H5I_GROUP ? "group" : "dataset");
    H5Oclose(object);
    return -1;
  }
  return object;
}

static hid_t open_group(tfmm_io_report *rep, const char *path, hid_t loc,
                        const char *name) {
  char what[64];
  snprintf(what, sizeof what, "/%s", name);
  return open_object(rep, path, loc, name, H5I_GROUP, what);
}

/* Elements of attribute name of loc: -1 when there is no such attribute,
 * -2 when whether there is one cannot be read (damaged attribute storage:
 * taken for absent, an optional Shift or MassTable would be ignored). */
static hssize_t attr_points(hid_t loc, const char *name) {
  const htri_t exists = H5Aexists(loc, name);
  if (exists <= 0)
    return exists < 0 ? -2 : -1;
  const hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : 0;
  if (space >= 0)
    H5Sclose(space);
  if (attr >= 0)
    H5Aclose(attr);
  return points;
}

/* Reads the len numbers of Header attribute name as mem_type. Returns 1,
 * or -1 when it is absent and optional, else prints why and returns 0. */
static int header_numbers(const reader *r, hid_t header, const char *name,
                          hid_t mem_type, void *buf, hssize_t len,
                          int required) {
  const hssize_t points = attr_points(header, name);
  if (points == -2) {
    char what[96];
    snprintf(what, sizeof what, "/Header attribute %s", name);
    report_hdf5(r->report, r->path, what);
    return 0;
  }
  if (points < 0) {
    if (!required)
      return -1;
    tfmm_io_fail(r->report, "%s: /Header has no attribute %s", r->path, name);
    return 0;
  }
  if (points != len) {
    tfmm_io_fail(r->report,
                 "%s: /Header attribute %s has %lld values, expected %lld",
                 r->path, name, (long long)points, (long long)len);
    return 0;
  }
  const hid_t attr = H5Aopen(header, name, H5P_DEFAULT);
  const hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
  const H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  int ok = cls == H5T_INTEGER || cls == H5T_FLOAT;
  if (!ok)
    tfmm_io_fail(r->report, "%s: /Header attribute %s is not a number", r->path,
                 name);
  else if (H5Aread(attr, mem_type, buf) < 0) {
    char what[96];
    snprintf(what, sizeof what, "/Header attribute %s", name);
    report_hdf5(r->report, r->path, what);
    ok = 0;
  }
  if (type >= 0)
    H5Tclose(type);
  if (attr >= 0)
    H5Aclose(attr);
  return ok;
}

/* Multi-file snapshots split each type over files: NumFilesPerSnapshot
 * says so, and so does a total that differs from this file's count. */
static int check_single_file(const reader *r, hid_t header) {
  int64_t files = 1;
  if (!header_numbers(r, header, "NumFilesPerSnapshot", H5T_NATIVE_INT64,
                      &files, 1, 0))
    return 0;
  if (files != 1) {
    tfmm_io_fail(r->report,
                 "%s: part of a multi-file snapshot (NumFilesPerSnapshot = "
                 "%" PRId64 "); only single-file snapshots can be read",
                 r->path, files);
    return 0;
  }
  uint64_t low[MAX_TYPES] = {0}, high[MAX_TYPES] = {0};
  const int got = header_numbers(r, header, "NumPart_Total", H5T_NATIVE_UINT64,
                                 low, r->ntypes, 0);
  if (got == 0 || !header_numbers(r, header, "NumPart_Total_HighWord",
                                  H5T_NATIVE_UINT64, high, r->ntypes, 0))
    return 0;
  for (int k = 0; got > 0 && k < r->ntypes; k++) {
    const uint64_t total = low[k] + (high[k] << 32);
    if (total != r->count[k]) {
      tfmm_io_fail(r->report,
                   "%s: NumPart_Total[%d] = %" PRIu64
                   " (with NumPart_Total_HighWord) but NumPart_ThisFile[%d] = "
                   "%" PRIu64 ": part of a multi-file snapshot?",
                   r->path, k, total, k, r->count[k]);
      return 0;
    }
  }
  return 1;
}

static int read_header_group(reader *r, hid_t header, tfmm_snapshot *out) {
  const hssize_t ntypes = attr_points(header, "NumPart_ThisFile");
  if (ntypes < 0) {
    tfmm_io_fail(r->report, "%s: /Header has no attribute NumPart_ThisFile",
                 r->path);
    return 0;
  }
  if (ntypes < 1 || ntypes > MAX_TYPES) {
    tfmm_io_fail(r->report,
                 "%s: /Header attribute NumPart_ThisFile has %lld values, "
                 "expected 1 to %d",
                 r->path, (long long)ntypes, MAX_TYPES);
    return 0;
  }
  r->ntypes = (int)ntypes;
  int64_t count[MAX_TYPES];
  if (!header_numbers(r, header, "NumPart_ThisFile", H5T_NATIVE_INT64, count,
                      ntypes, 1) ||
      !header_numbers(r, header, "Time", H5T_NATIVE_DOUBLE, &out->time, 1, 1))
    return 0;
  if (!isfinite(out->time)) {
    tfmm_io_fail(r->report,
                 "%s: /Header attribute Time is %g, not a finite number",
                 r->path, out->time);
    return 0;
  }
  for (int k = 0; k < r->ntypes; k++) {
    if (count[k] < 0) {
      tfmm_io_fail(r->report,
                   "%s: NumPart_ThisFile[%d] = %" PRId64 " is negative",
                   r->path, k, count[k]);
      return 0;
    }
    r->count[k] = (uint64_t)count[k];
  }
  const int got = header_numbers(r, header, "MassTable", H5T_NATIVE_DOUBLE,
                                 r->mass_table, ntypes, 0);
  r->has_mass_table = got > 0;
  if (!header_numbers(r, header, "Shift", H5T_NATIVE_DOUBLE, r->shift, 3, 0))
    return 0;
  for (int k = 0; k < 3; k++)
    if (!isfinite(r->shift[k])) {
      tfmm_io_fail(r->report, "%s: /Header attribute Shift is not finite",
                   r->path);
      return 0;
    }
  return got != 0 && check_single_file(r, header);
}

/* ---- particle types ---------------------------------------------------- */

/* Chooses the types to read and zeroes the counts of the others
 * (tfmm_io_types_select: by default one type, not gas). A file of no
 * particles is scan_types' to report. */
static int select_types(reader *r, tfmm_snapshot *out) {
  for (int k = 0; k < r->ntypes; k++)
    if (r->count[k] > 0)
      return tfmm_io_types_select(r->report, r->path, "PartType", r->ntypes,
                                  r->count, r->types, r->flag, &out->note);
  return 1;
}

static int read_header(reader *r, tfmm_snapshot *out) {
  const htri_t exists = H5Lexists(r->file, "Header", H5P_DEFAULT);
  if (exists < 0) {
    report_hdf5(r->report, r->path, "the root group");
    return 0;
  }
  if (exists == 0) {
    tfmm_io_fail(r->report, "%s: no /Header group: not a GADGET/SWIFT snapshot",
                 r->path);
    return 0;
  }
  const hid_t header = open_group(r->report, r->path, r->file, "Header");
  if (header < 0)
    return 0;
  const int ok = read_header_group(r, header, out);
  H5Gclose(header);
  return ok && select_types(r, out);
}

/* "(rows, 3)" or "(rows)". */
static void shape_text(char *buf, size_t size, int rank, const hsize_t *dims) {
  int used = snprintf(buf, size, "(");
  for (int d = 0; d < rank && used > 0 && (size_t)used < size; d++)
    used += snprintf(buf + used, size - (size_t)used, "%s%llu",
                     d > 0 ? ", " : "", (unsigned long long)dims[d]);
  if (used > 0 && (size_t)used < size)
    snprintf(buf + used, size - (size_t)used, ")");
}

/* Whether set holds rows x cols (cols 0: a vector of rows) numbers, of
 * integers only when want_int; prints why not. */
static int check_dataset(const reader *r, hid_t set, int k, const char *name,
                         size_t rows, int cols, int want_int) {
  const hid_t space = H5Dget_space(set), type = H5Dget_type(set);
  const H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  hsize_t dims[H5S_MAX_RANK] = {0}, want[2] = {rows, (hsize_t)cols};
  const int rank =
      space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
  /* A vector may be written as one column, (rows, 1), as numpy users
   * often write masses: the same numbers in the same order. */
  const int column = cols == 0 && rank == 2 && dims[1] == 1;
  const int want_rank = cols > 0 || column ? 2 : 1;
  if (column)
    want[1] = 1;
  int ok = 0;
  if (space < 0 || type < 0 || rank < 0)
    tfmm_io_fail(r->report, "%s: PartType%d/%s cannot be read", r->path, k,
                 name);
  else if (cls != H5T_INTEGER && (want_int || cls != H5T_FLOAT))
    tfmm_io_fail(r->report, "%s: PartType%d/%s does not hold %s", r->path, k,
                 name, want_int ? "integers" : "numbers");
  else if (rank != want_rank || dims[0] != want[0] ||
           (want_rank == 2 && dims[1] != want[1])) {
    char got_text[128], want_text[64];
    shape_text(got_text, sizeof got_text, rank, dims);
    shape_text(want_text, sizeof want_text, want_rank, want);
    tfmm_io_fail(
        r->report,
        "%s: PartType%d/%s has shape %s, but NumPart_ThisFile[%d] = %zu "
        "needs %s%s",
        r->path, k, name, got_text, k, rows, want_text,
        cols == 0 ? " (or one column of as many rows)" : "");
  } else
    ok = 1;
  if (type >= 0)
    H5Tclose(type);
  if (space >= 0)
    H5Sclose(space);
  return ok;
}

/* Whether the storage of set (rows x cols, checked) holds every element:
 * a chunked dataset's index must list exactly the chunks that tile its
 * extent, each inside it. HDF5 reads a chunk its index does not find as
 * the fill value, without an error: a damaged key in the 1.8 format's
 * index (no checksum there) would give zeros for real data. Prints why
 * not. */
static int check_storage(const reader *r, hid_t set, const char *what) {
  const hid_t dcpl = H5Dget_create_plist(set), space = H5Dget_space(set);
  hsize_t dims[H5S_MAX_RANK] = {0}, chunk[H5S_MAX_RANK] = {0};
  const int rank =
      space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
  int ok = dcpl >= 0 && rank >= 0;
  if (ok && H5Pget_layout(dcpl) == H5D_CHUNKED) {
    ok = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk) == rank;
    hsize_t want = 1, have = 0;
    for (int d = 0; ok && d < rank; d++) {
      ok = chunk[d] > 0;
      if (ok)
        want *= (dims[d] + chunk[d] - 1) / chunk[d];
    }
    ok = ok && H5Dget_num_chunks(set, space, &have) >= 0 && have == want;
    for (hsize_t c = 0; ok && c < have; c++) {
      hsize_t offset[H5S_MAX_RANK] = {0}, size = 0;
      haddr_t addr = HADDR_UNDEF;
      unsigned mask = 0;
      ok = H5Dget_chunk_info(set, space, c, offset, &mask, &addr, &size) >= 0 &&
           addr != HADDR_UNDEF && size > 0 && size <= r->file_size &&
           addr <= r->file_size - size;
      for (int d = 0; ok && d < rank; d++)
        ok = offset[d] < dims[d] && offset[d] % chunk[d] == 0;
      /* H5Dread finds a chunk by the whole key of its index node, which
       * in the 1.8 format holds one more offset (the element's, always
       * 0) than H5Dget_chunk_info reports. A damaged one hides the chunk
       * from the read alone, and with fill time "never" (tilefmm's) the
       * read then succeeds, leaving the buffer as it was (fuzz case 5941
       * of seed 29: uninitialised coordinates). The lookup by offset is
       * the read's. */
      hsize_t found = 0;
      ok = ok && H5Dget_chunk_storage_size(set, offset, &found) >= 0 &&
           found == size;
    }
  } else if (ok) {
    H5D_space_status_t status;
    ok = H5Dget_space_status(set, &status) >= 0 &&
         (status == H5D_SPACE_STATUS_ALLOCATED ||
          H5Sget_simple_extent_npoints(space) == 0);
    /* Contiguous data lies whole within the file, at its declared size
     * (a damaged address or size would read past the end, or garbage). */
    const haddr_t addr = H5Dget_offset(set);
    if (ok && addr != HADDR_UNDEF) {
      const hid_t type = H5Dget_type(set);
      const hsize_t want = (hsize_t)H5Sget_simple_extent_npoints(space) *
                           (type >= 0 ? H5Tget_size(type) : 0);
      const hsize_t have = H5Dget_storage_size(set);
      ok = type >= 0 && have == want && have <= r->file_size &&
           addr <= r->file_size - have;
      if (type >= 0)
        H5Tclose(type);
    }
  }
  if (!ok)
    tfmm_io_fail(r->report,
                 "%s: %s is damaged: its storage does not hold every element",
                 r->path, what);
  if (space >= 0)
    H5Sclose(space);
  if (dcpl >= 0)
    H5Pclose(dcpl);
  return ok;
}

/* Dataset name of PartType<k>, rows x cols numbers (see check_dataset),
 * read as mem_type into buf. Returns 1, or -1 when it is absent and
 * optional, else prints why and returns 0. */
static int read_dataset(const reader *r, hid_t group, int k, const char *name,
                        size_t rows, int cols, hid_t mem_type, void *buf,
                        int required) {
  char what[96];
  snprintf(what, sizeof what, "PartType%d/%s", k, name);
  const htri_t exists = H5Lexists(group, name, H5P_DEFAULT);
  if (exists < 0) {
    report_hdf5(r->report, r->path, what);
    return 0;
  }
  if (exists == 0) {
    if (!required)
      return -1;
    tfmm_io_fail(r->report, "%s: PartType%d has no dataset %s", r->path, k,
                 name);
    return 0;
  }
  const hid_t set =
      open_object(r->report, r->path, group, name, H5I_DATASET, what);
  if (set < 0)
    return 0;
  const int want_int = H5Tget_class(mem_type) == H5T_INTEGER;
  int ok = check_dataset(r, set, k, name, rows, cols, want_int) &&
           check_storage(r, set, what);
  if (ok && H5Dread(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    report_hdf5(r->report, r->path, what);
    ok = 0;
  }
  H5Dclose(set);
  return ok;
}

/* Whether dataset name of group holds signed integers: 1 or 0 (0 too
 * when it is absent); -1 when it exists but cannot be opened, which must
 * end the read: libhdf5 1.10 keeps an object header whose checksum failed
 * in its cache, and a second open of it succeeds on the damaged metadata
 * (fuzz cases 137 and 947: read_dataset then read the IDs). Says why. */
static int holds_signed(const reader *r, hid_t group, int k, const char *name) {
  if (H5Lexists(group, name, H5P_DEFAULT) <= 0)
    return 0;
  const hid_t set = H5Dopen2(group, name, H5P_DEFAULT);
  if (set < 0) {
    char what[96];
    snprintf(what, sizeof what, "PartType%d/%s", k, name);
    report_hdf5(r->report, r->path, what);
    return -1;
  }
  const hid_t type = H5Dget_type(set);
  const int is_signed = type >= 0 && H5Tget_class(type) == H5T_INTEGER &&
                        H5Tget_sign(type) == H5T_SGN_2;
  if (type >= 0)
    H5Tclose(type);
  H5Dclose(set);
  return is_signed;
}

/* The c ParticleIDs of type k into ids, body first on; 1..n when absent.
 * HDF5 would turn a negative ID into 0 when converting it to uint64:
 * signed IDs are read as signed, and a negative one is refused. */
static int read_ids(const reader *r, hid_t group, int k, size_t first, size_t c,
                    uint64_t *ids) {
  const int is_signed = holds_signed(r, group, k, "ParticleIDs");
  if (is_signed < 0)
    return 0;
  int64_t *signed_ids = (int64_t *)ids; /* same size: read in place */
  const int got = read_dataset(r, group, k, "ParticleIDs", c, 0,
                               is_signed ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64,
                               is_signed ? (void *)signed_ids : (void *)ids, 0);
  if (got == 0)
    return 0;
  for (size_t i = 0; got < 0 && i < c; i++)
    ids[i] = first + i + 1;
  for (size_t i = 0; got > 0 && is_signed && i < c; i++)
    if (signed_ids[i] < 0) {
      tfmm_io_fail(r->report,
                   "%s: body %zu has a negative ParticleID (%" PRId64 ")",
                   r->path, first + i, signed_ids[i]);
      return 0;
    }
  return 1;
}

static hid_t open_type(const reader *r, int k) {
  char name[32];
  snprintf(name, sizeof name, "PartType%d", k);
  const htri_t exists = H5Lexists(r->file, name, H5P_DEFAULT);
  if (exists < 0)
    report_hdf5(r->report, r->path, "the root group");
  else if (exists == 0)
    tfmm_io_fail(r->report,
                 "%s: no group /%s, but NumPart_ThisFile[%d] = %" PRIu64,
                 r->path, name, k, r->count[k]);
  return exists > 0 ? open_group(r->report, r->path, r->file, name) : -1;
}

/* Counts the bodies, and finds whether every type holds Accelerations
 * and Potentials: only then are they read. */
static int scan_types(const reader *r, size_t *n, int *all_acc, int *all_pot,
                      int *all_bins) {
  *n = 0;
  *all_acc = *all_pot = *all_bins = 1;
  for (int k = 0; k < r->ntypes; k++) {
    if (r->count[k] == 0)
      continue;
    if (r->count[k] > SIZE_MAX / (3 * sizeof(double)) - *n) {
      tfmm_io_fail(r->report, "%s: too many particles for this machine",
                   r->path);
      return 0;
    }
    *n += (size_t)r->count[k];
    /* Every body has 3 coordinates (24 bytes as double, 12 as float),
     * which deflate shrinks 1032 times at most (86 bodies a byte): a
     * count a file this size cannot hold is damage, refused before
     * anything is allocated. */
    if ((double)*n > 128.0 * (double)r->file_size + 128) {
      tfmm_io_fail(r->report,
                   "%s: NumPart_ThisFile claims %zu particles, more than a "
                   "file of %llu bytes can hold (damaged)",
                   r->path, *n, (unsigned long long)r->file_size);
      return 0;
    }
    const hid_t group = open_type(r, k);
    if (group < 0)
      return 0;
    *all_acc &= H5Lexists(group, "Accelerations", H5P_DEFAULT) > 0;
    *all_pot &= H5Lexists(group, "Potentials", H5P_DEFAULT) > 0;
    *all_bins &= H5Lexists(group, "TimeBins", H5P_DEFAULT) > 0;
    H5Gclose(group);
  }
  if (*n == 0) {
    tfmm_io_fail(r->report,
                 "%s: holds no particles (NumPart_ThisFile is all zeros)",
                 r->path);
    return 0;
  }
  return 1;
}

/* Reads type k's count bodies into out from body first on. */
static int read_type(const reader *r, hid_t group, int k, size_t first,
                     tfmm_snapshot *out) {
  const size_t c = (size_t)r->count[k];
  const hid_t d = H5T_NATIVE_DOUBLE;
  if (!read_dataset(r, group, k, "Coordinates", c, 3, d, out->pos + 3 * first,
                    1) ||
      !read_dataset(r, group, k, "Velocities", c, 3, d, out->vel + 3 * first,
                    0))
    return 0;
  const int masses =
      read_dataset(r, group, k, "Masses", c, 0, d, out->mass + first, 0);
  if (masses == 0)
    return 0;
  if (masses < 0) {
    if (!(r->has_mass_table && r->mass_table[k] > 0)) {
      tfmm_io_fail(r->report,
                   "%s: PartType%d has no dataset Masses, and MassTable[%d] "
                   "%s",
                   r->path, k, k,
                   r->has_mass_table ? "is not > 0" : "is absent");
      return 0;
    }
    for (size_t i = 0; i < c; i++)
      out->mass[first + i] = r->mass_table[k];
  }
  return read_ids(r, group, k, first, c, out->ids + first) &&
         (out->acc == NULL || read_dataset(r, group, k, "Accelerations", c, 3,
                                           d, out->acc + 3 * first, 1)) &&
         (out->pot == NULL || read_dataset(r, group, k, "Potentials", c, 0, d,
                                           out->pot + first, 1)) &&
         (out->bins == NULL ||
          read_dataset(r, group, k, "TimeBins", c, 0, H5T_NATIVE_SCHAR,
                       out->bins + first, 1));
}

static int read_bodies(const reader *r, tfmm_snapshot *out) {
  size_t n;
  int all_acc, all_pot, all_bins;
  if (!scan_types(r, &n, &all_acc, &all_pot, &all_bins))
    return 0;
  out->n = n;
  out->pos = malloc(3 * n * sizeof(double));
  out->vel = calloc(3 * n, sizeof(double)); /* zeros when absent */
  out->mass = malloc(n * sizeof(double));
  out->ids = malloc(n * sizeof(uint64_t));
  out->acc = all_acc ? malloc(3 * n * sizeof(double)) : NULL;
  out->pot = all_pot ? malloc(n * sizeof(double)) : NULL;
  out->bins = all_bins ? malloc(n) : NULL;
  if (out->pos == NULL || out->vel == NULL || out->mass == NULL ||
      out->ids == NULL || (all_acc && out->acc == NULL) ||
      (all_pot && out->pot == NULL) || (all_bins && out->bins == NULL)) {
    tfmm_io_fail_status(r->report, TFMM_ERR_NO_MEMORY,
                        "%s: out of memory for %zu particles", r->path, n);
    return 0;
  }
  size_t first = 0;
  for (int k = 0; k < r->ntypes; k++) {
    if (r->count[k] == 0)
      continue;
    const hid_t group = open_type(r, k);
    if (group < 0)
      return 0;
    const int ok = read_type(r, group, k, first, out);
    H5Gclose(group);
    if (!ok)
      return 0;
    first += (size_t)r->count[k];
  }
  /* SWIFT's Shift was added to the coordinates stored (tilefmm's
   * snapshots are shifted into their box): taken off. */
  if (r->shift[0] != 0 || r->shift[1] != 0 || r->shift[2] != 0)
    for (size_t i = 0; i < n; i++)
      for (int c = 0; c < 3; c++)
        out->pos[3 * i + c] -= r->shift[c];
  return tfmm_io_check_bodies(r->report, r->path, out, TFMM_ERR_FILE, NULL);
}

/* Opens path, telling a missing file from one that is not HDF5. */
static hid_t open_file(tfmm_io_report *rep, const char *path) {
  struct stat st;
  const int err = stat(path, &st) != 0  ? errno
                  : S_ISDIR(st.st_mode) ? EISDIR
                                        : 0;
  if (err != 0) {
    tfmm_io_fail(rep, "%s: cannot read: %s", path, strerror(err));
    return -1;
  }
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    char reason[TFMM_HDF5_REASON_SIZE];
    if (!tfmm_snapshot_is_hdf5(path))
      tfmm_io_fail(rep, "%s: not an HDF5 file", path);
    else
      tfmm_io_fail(rep, "%s: cannot open as HDF5 (truncated or damaged?): %s",
                   path, tfmm_hdf5_reason(reason));
  }
  return file;
}

int tfmm_hdf5_read(tfmm_io_report *rep, const char *path,
                   const tfmm_read_options *o, tfmm_snapshot *out) {
  tfmm_hdf5_quiet quiet;
  tfmm_hdf5_quiet_begin(&quiet);
  reader r = {.report = rep,
              .path = path,
              .types = o->types,
              .flag = o->flag,
              .file = open_file(rep, path)};
  struct stat st;
  r.file_size = stat(path, &st) == 0 ? (hsize_t)st.st_size : 0;
  int ok =
      r.file >= 0 && tfmm_io_add_file(rep, out, path) && read_header(&r, out) &&
      read_bodies(&r, out) && tfmm_hdf5_read_units(rep, path, r.file, out) &&
      (!o->attributes || tfmm_hdf5_read_run_groups(rep, path, r.file, out));
  if (r.file >= 0)
    H5Fclose(r.file);
  tfmm_hdf5_quiet_end(&quiet);
  return ok;
}
