/* /Parameters and /RunState of an HDF5 snapshot (tfmm_read_options
 * .attributes): what a restart trusts, so read warily (issue 29). Before
 * a value is read, every attribute of both groups is checked by its
 * declared type and size alone: a fixed-length string of one element, or
 * a few numbers, each within the file. A variable-length string is
 * refused unread: its text lives in HDF5's global heap, which carries no
 * checksum, and a damaged one crashes libhdf5 (H5HG_read) or loops it.
 * tilefmm writes fixed-length strings only (tfmm_hdf5_put_string).
 *
 * A checkpoint's /RunState carries ParametersChecksum, FNV-1a (64 bits)
 * over the names and values of /Parameters and /RunState as written: a
 * parameter edited since (a theta changed through the HDF5 API) is
 * refused on read. */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Bounds of what a group may hold: far above what tilefmm or GADGET-4
 * write, far below what would strain memory. */
#define MAX_ATTRS 4096
#define MAX_POINTS 4096
#define MAX_STRING 65536

/* ---- the checksum ------------------------------------------------------ */

static uint64_t fnv1a(uint64_t h, const char *s, size_t len) {
  for (size_t k = 0; k < len; k++) {
    h ^= (unsigned char)s[k];
    h *= 0x100000001b3ULL; /* the 64-bit FNV prime */
  }
  return h;
}

static uint64_t hash_attrs(uint64_t h, const tfmm_attr *a, size_t count) {
  for (size_t k = 0; k < count; k++) {
    if (strcmp(a[k].name, TFMM_HDF5_CHECKSUM) == 0)
      continue;
    h = fnv1a(h, a[k].name, strlen(a[k].name) + 1); /* the NUL separates */
    h = fnv1a(h, a[k].value, strlen(a[k].value) + 1);
  }
  return h;
}

uint64_t tfmm_hdf5_run_checksum(const tfmm_attr *params, size_t nparams,
                                const tfmm_attr *state, size_t nstate) {
  uint64_t h = 0xcbf29ce484222325ULL; /* the 64-bit FNV offset basis */
  h = hash_attrs(h, params, nparams);
  h = fnv1a(h, "\x1e", 1); /* a group separator */
  return hash_attrs(h, state, nstate);
}

void tfmm_hdf5_checksum_text(uint64_t sum, char buf[32]) {
  snprintf(buf, 32, "fnv1a64:%016" PRIx64, sum);
}

/* ---- the groups' shapes, checked before a value is read ---------------- */

typedef struct scan {
  tfmm_io_report *report;
  const char *path, *group;
  hsize_t file_size;
  size_t count;
} scan;

static herr_t check_one(hid_t loc, const char *name, const H5A_info_t *info,
                        void *data) {
  scan *s = data;
  if (++s->count > MAX_ATTRS) {
    tfmm_io_fail(s->report, "%s: /%s holds more than %d attributes", s->path,
                 s->group, MAX_ATTRS);
    return -1;
  }
  const hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
  const hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
  const H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  const char *fault = NULL;
  if (attr < 0 || type < 0 || space < 0 || points < 0 || size == 0)
    fault = "cannot be read (damaged?)";
  else if (cls == H5T_STRING && H5Tis_variable_str(type) != 0)
    fault = "is a variable-length string: refused unread (its text would be "
            "read from HDF5's global heap, which has no checksum; tilefmm "
            "writes fixed-length strings)";
  else if (cls == H5T_STRING && (points != 1 || size > MAX_STRING))
    fault = "is not one string of a sane length";
  else if (cls != H5T_STRING && cls != H5T_INTEGER && cls != H5T_FLOAT)
    fault = "is neither one string nor numbers";
  else if (cls != H5T_STRING && (points > MAX_POINTS || size > 16))
    fault = "holds too many numbers, or numbers too wide";
  else if ((hsize_t)points * size > s->file_size ||
           info->data_size > s->file_size)
    fault = "claims more bytes than the file holds (damaged)";
  if (fault != NULL)
    tfmm_io_fail(s->report, "%s: /%s attribute '%s' %s", s->path, s->group,
                 name, fault);
  if (space >= 0)
    H5Sclose(space);
  if (type >= 0)
    H5Tclose(type);
  if (attr >= 0)
    H5Aclose(attr);
  return fault != NULL ? -1 : 0;
}

/* ---- reading the values ------------------------------------------------ */

/* A fixed-length string attribute's single value (NULL on failure). */
static char *string_text(hid_t attr, hid_t type) {
  const size_t size = H5Tget_size(type);
  char *text = calloc(size + 1, 1);
  const hid_t mem = H5Tcopy(type);
  if (text == NULL || mem < 0 || H5Aread(attr, mem, text) < 0) {
    free(text);
    text = NULL;
  }
  if (mem >= 0)
    H5Tclose(mem);
  size_t len = text != NULL ? strlen(text) : 0;
  while (len > 0 && H5Tget_strpad(type) == H5T_STR_SPACEPAD &&
         text[len - 1] == ' ')
    text[--len] = '\0';
  return text;
}

/* Numbers (GADGET-4 writes its parameters so) as text: integers exactly,
 * floats with %.17g, several separated by spaces (NULL on failure). */
static char *number_text(hid_t attr, hid_t type, size_t points) {
  const int is_float = H5Tget_class(type) == H5T_FLOAT;
  const int is_signed = H5Tget_sign(type) == H5T_SGN_2;
  const hid_t mem = is_float    ? H5T_NATIVE_DOUBLE
                    : is_signed ? H5T_NATIVE_INT64
                                : H5T_NATIVE_UINT64;
  union {
    double d;
    int64_t i;
    uint64_t u;
  } *v = malloc((points > 0 ? points : 1) * sizeof *v);
  char *text = malloc(points * 32 + 1);
  if (v == NULL || text == NULL || H5Aread(attr, mem, v) < 0) {
    free(v);
    free(text);
    return NULL;
  }
  size_t used = 0;
  text[0] = '\0';
  for (size_t k = 0; k < points; k++) {
    const char *sep = k > 0 ? " " : "";
    used +=
        (size_t)(is_float    ? sprintf(text + used, "%s%.17g", sep, v[k].d)
                 : is_signed ? sprintf(text + used, "%s%" PRId64, sep, v[k].i)
                             : sprintf(text + used, "%s%" PRIu64, sep, v[k].u));
  }
  free(v);
  return text;
}

typedef struct attr_list {
  tfmm_attr **items;
  size_t *count, cap;
  char *checksum; /* /RunState's ParametersChecksum, kept apart */
} attr_list;

static herr_t collect(hid_t loc, const char *name, const H5A_info_t *info,
                      void *data) {
  (void)info;
  attr_list *list = data;
  if (*list->count == list->cap) {
    const size_t cap = list->cap > 0 ? 2 * list->cap : 16;
    tfmm_attr *items = realloc(*list->items, cap * sizeof *items);
    if (items == NULL)
      return -1;
    *list->items = items;
    list->cap = cap;
  }
  const hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
  const hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  char *text = NULL;
  if (type >= 0 && points >= 0)
    text = H5Tget_class(type) == H5T_STRING
               ? string_text(attr, type)
               : number_text(attr, type, (size_t)points);
  if (space >= 0)
    H5Sclose(space);
  if (type >= 0)
    H5Tclose(type);
  if (attr >= 0)
    H5Aclose(attr);
  if (text != NULL && strcmp(name, TFMM_HDF5_CHECKSUM) == 0 &&
      list->checksum == NULL) {
    list->checksum = text;
    return 0;
  }
  char *copy = strdup(name);
  if (text == NULL || copy == NULL) {
    free(text);
    free(copy);
    return -1;
  }
  (*list->items)[(*list->count)++] = (tfmm_attr){copy, text};
  return 0;
}

/* Group name of file, or -1 (reported) when it is no group or cannot be
 * read; 0 in *exists when there is none. */
static hid_t open_run_group(tfmm_io_report *r, const char *path, hid_t file,
                            const char *name, int *exists) {
  char reason[TFMM_HDF5_REASON_SIZE];
  const htri_t there = H5Lexists(file, name, H5P_DEFAULT);
  *exists = there > 0;
  if (there < 0)
    tfmm_io_fail(r, "%s: cannot read the root group: %s", path,
                 tfmm_hdf5_reason(reason));
  if (there <= 0)
    return -1;
  const hid_t group = H5Oopen(file, name, H5P_DEFAULT);
  if (group < 0)
    tfmm_io_fail(r, "%s: cannot read /%s: %s", path, name,
                 tfmm_hdf5_reason(reason));
  else if (H5Iget_type(group) != H5I_GROUP) {
    tfmm_io_fail(r, "%s: /%s is not a group", path, name);
    H5Oclose(group);
    return -1;
  }
  return group;
}

/* The order the attributes were written in, when it was kept (as
 * tilefmm does), else by name. */
static H5_index_t attr_order(hid_t group) {
  const hid_t gcpl = H5Gget_create_plist(group);
  unsigned order = 0;
  if (gcpl >= 0) {
    H5Pget_attr_creation_order(gcpl, &order);
    H5Pclose(gcpl);
  }
  return order & H5P_CRT_ORDER_TRACKED ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
}

/* Checks, then reads, the attributes of group name into items; none when
 * there is no such group. *checksum gets ParametersChecksum's text. */
static int read_group(tfmm_io_report *r, const char *path, hid_t file,
                      hsize_t file_size, const char *name, tfmm_attr **items,
                      size_t *count, char **checksum) {
  int exists;
  const hid_t group = open_run_group(r, path, file, name, &exists);
  if (group < 0)
    return !exists && r->status == TFMM_OK;
  const H5_index_t order = attr_order(group);
  scan s = {r, path, name, file_size, 0};
  hsize_t next = 0;
  int ok = H5Aiterate2(group, order, H5_ITER_INC, &next, check_one, &s) >= 0;
  char reason[TFMM_HDF5_REASON_SIZE];
  if (!ok && r->status == TFMM_OK)
    tfmm_io_fail(r, "%s: cannot read the attributes of /%s: %s", path, name,
                 tfmm_hdf5_reason(reason));
  attr_list list = {items, count, 0, NULL};
  next = 0;
  if (ok && H5Aiterate2(group, order, H5_ITER_INC, &next, collect, &list) < 0) {
    tfmm_io_fail(r, "%s: cannot read the attributes of /%s: %s", path, name,
                 tfmm_hdf5_reason(reason));
    ok = 0;
  }
  *checksum = list.checksum;
  H5Oclose(group);
  return ok;
}

int tfmm_hdf5_read_run_groups(tfmm_io_report *r, const char *path, hid_t file,
                              tfmm_snapshot *out) {
  struct stat st;
  const hsize_t file_size = stat(path, &st) == 0 ? (hsize_t)st.st_size : 0;
  char *params_sum = NULL, *sum = NULL;
  int ok = read_group(r, path, file, file_size, "Parameters", &out->params,
                      &out->nparams, &params_sum) &&
           read_group(r, path, file, file_size, "RunState", &out->state,
                      &out->nstate, &sum);
  if (ok && sum != NULL) {
    char want[32];
    tfmm_hdf5_checksum_text(tfmm_hdf5_run_checksum(out->params, out->nparams,
                                                   out->state, out->nstate),
                            want);
    if (strcmp(sum, want) != 0) {
      tfmm_io_fail(r,
                   "%s: checkpoint parameters changed since it was written: "
                   "/RunState %s is %s, but /Parameters and /RunState now sum "
                   "to %s (edited, or damaged)",
                   path, TFMM_HDF5_CHECKSUM, sum, want);
      ok = 0;
    }
  }
  free(params_sum);
  free(sum);
  return ok;
}
