/* Helpers of the snapshot tests (see snapshot_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "snapshot_util.h"

#include "cli.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Criterion runs each test in its own process: one buffer each. */
static char captured[8192];

void cli_error(const char *fmt, ...) {
  const size_t used = strlen(captured);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(captured + used, sizeof captured - used, fmt, ap);
  va_end(ap);
  const size_t end = strlen(captured);
  if (end + 1 < sizeof captured)
    strcpy(captured + end, "\n");
}

const char *errors(void) { return captured; }

void errors_clear(void) { captured[0] = '\0'; }

void assert_errors_have(const char *needle, const char *needle2) {
  cr_assert(captured[0] != '\0', "no message was printed");
  cr_assert_not_null(strstr(captured, needle), "message lacks '%s':\n%s",
                     needle, captured);
  if (needle2 != NULL)
    cr_assert_not_null(strstr(captured, needle2), "message lacks '%s':\n%s",
                       needle2, captured);
}

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Any finite double, its exponent within about 2^-60 .. 2^60: every bit
 * of the mantissa matters for a bit-exact round trip. */
static double random_double(uint64_t *state) {
  const uint64_t bits = splitmix(state);
  const uint64_t exponent = 1023 - 60 + (bits >> 52) % 121;
  const uint64_t word =
      (bits & 0x800fffffffffffffu) | (exponent << 52); /* sign, mantissa */
  double x;
  memcpy(&x, &word, sizeof x);
  return x;
}

static double *random_doubles(size_t count, uint64_t *state) {
  double *x = malloc(count * sizeof *x);
  cr_assert_not_null(x);
  for (size_t i = 0; i < count; i++)
    x[i] = random_double(state);
  return x;
}

static snapshot_attr *attrs(size_t count, const char *prefix, uint64_t *state) {
  snapshot_attr *a = malloc(count * sizeof *a);
  cr_assert_not_null(a);
  for (size_t k = 0; k < count; k++) {
    char name[64], value[64];
    /* Names out of alphabetical order: the order written must survive. */
    snprintf(name, sizeof name, "%s:key%zu", prefix, count - k);
    snprintf(value, sizeof value, "%.17g", random_double(state));
    a[k].name = strdup(name);
    a[k].value = strdup(value);
  }
  return a;
}

snapshot random_snapshot(size_t n, uint64_t seed, int extras) {
  uint64_t state = seed;
  snapshot s = {.n = n, .time = random_double(&state)};
  s.pos = random_doubles(3 * n, &state);
  s.vel = random_doubles(3 * n, &state);
  s.mass = random_doubles(n, &state);
  s.ids = malloc(n * sizeof *s.ids);
  cr_assert_not_null(s.ids);
  for (size_t i = 0; i < n; i++) {
    s.mass[i] = fabs(s.mass[i]);
    s.ids[i] = splitmix(&state);
  }
  if (extras) {
    s.acc = random_doubles(3 * n, &state);
    s.pot = random_doubles(n, &state);
    s.state = attrs(3, "Run", &state);
    s.nstate = 3;
  }
  /* More than HDF5's default limit of attributes kept in the header. */
  s.params = attrs(12, "Gravity", &state);
  s.nparams = 12;
  free(s.params[0].value);
  s.params[0].value = strdup("text with spaces, and UTF-8: \xc3\xa9");
  return s;
}

static void assert_same_doubles(const double *a, const double *b, size_t n,
                                const char *what) {
  if (a == NULL || b == NULL) {
    cr_assert(a == NULL && b == NULL, "%s: one of them is NULL", what);
    return;
  }
  cr_assert(memcmp(a, b, n * sizeof *a) == 0, "%s differ", what);
}

static void assert_same_attrs(const snapshot_attr *a, size_t na,
                              const snapshot_attr *b, size_t nb) {
  cr_assert_eq(na, nb);
  for (size_t k = 0; k < na; k++) {
    cr_assert_str_eq(a[k].name, b[k].name);
    cr_assert_str_eq(a[k].value, b[k].value);
  }
}

void assert_same_snapshot(const snapshot *a, const snapshot *b) {
  cr_assert_eq(a->n, b->n);
  cr_assert(memcmp(&a->time, &b->time, sizeof a->time) == 0, "time");
  assert_same_doubles(a->pos, b->pos, 3 * a->n, "coordinates");
  assert_same_doubles(a->vel, b->vel, 3 * a->n, "velocities");
  assert_same_doubles(a->mass, b->mass, a->n, "masses");
  assert_same_doubles(a->acc, b->acc, 3 * a->n, "accelerations");
  assert_same_doubles(a->pot, b->pot, a->n, "potentials");
  cr_assert(memcmp(a->ids, b->ids, a->n * sizeof *a->ids) == 0, "IDs");
  assert_same_attrs(a->params, a->nparams, b->params, b->nparams);
  assert_same_attrs(a->state, a->nstate, b->state, b->nstate);
}

void expect_read_failure(const char *path, const char *needle,
                         const char *needle2) {
  snapshot s;
  errors_clear();
  cr_assert_eq(snapshot_read(path, &s), 0, "read did not fail");
  snapshot_free(&s);
  assert_errors_have(needle, needle2);
  assert_errors_have(path, NULL);
}

hid_t h5_open(const char *path) {
  const hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(file, 0, "cannot open %s", path);
  return file;
}

void h5_close(hid_t file) { cr_assert_geq(H5Fclose(file), 0); }

void h5_attr(hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
             size_t count, const void *data) {
  const hsize_t dims = count;
  const hid_t space =
      count == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dims, NULL);
  if (H5Aexists(loc, name) > 0)
    cr_assert_geq(H5Adelete(loc, name), 0);
  const hid_t attr =
      H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(attr, 0, "cannot create attribute %s", name);
  cr_assert_geq(H5Awrite(attr, mem_type, data), 0);
  H5Aclose(attr);
  H5Sclose(space);
}

void h5_set_attr(hid_t file, const char *group, const char *name,
                 hid_t file_type, hid_t mem_type, size_t count,
                 const void *data) {
  const hid_t loc = H5Gopen2(file, group, H5P_DEFAULT);
  cr_assert_geq(loc, 0, "no group %s", group);
  h5_attr(loc, name, file_type, mem_type, count, data);
  H5Gclose(loc);
}

void h5_dataset(hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
                int rank, const size_t *dims, const void *data) {
  const hsize_t d[2] = {dims[0], rank > 1 ? dims[1] : 1};
  if (H5Lexists(loc, name, H5P_DEFAULT) > 0)
    cr_assert_geq(H5Ldelete(loc, name, H5P_DEFAULT), 0);
  const hid_t space = H5Screate_simple(rank, d, NULL);
  const hid_t set = H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(set, 0, "cannot create dataset %s", name);
  cr_assert_geq(H5Dwrite(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                0);
  H5Dclose(set);
  H5Sclose(space);
}

void h5_poke(hid_t file, const char *name, size_t index, double value) {
  const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
  cr_assert_geq(set, 0, "no dataset %s", name);
  const hid_t space = H5Dget_space(set);
  const hsize_t at[2] = {index, 0}; /* rank 2: row index, first column */
  const hsize_t one[2] = {1, 1};
  cr_assert_geq(H5Sselect_hyperslab(space, H5S_SELECT_SET, at, NULL, one, NULL),
                0);
  const hid_t mem = H5Screate(H5S_SCALAR);
  cr_assert_geq(
      H5Dwrite(set, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, &value), 0);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(set);
}

/* The attributes of a group, each a name and its text. */
typedef struct texts {
  size_t count;
  char names[64][64];
  char *values[64];
} texts;

static herr_t keep_text(hid_t loc, const char *name, const H5A_info_t *info,
                        void *data) {
  (void)info;
  texts *t = data;
  cr_assert_lt(t->count, 64);
  const hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t type = H5Aget_type(attr);
  cr_assert_eq(H5Tget_class(type), H5T_STRING, "%s is not a string", name);
  cr_assert_eq(H5Tis_variable_str(type), 0, "%s is variable-length", name);
  const size_t size = H5Tget_size(type);
  char *value = calloc(size + 1, 1);
  cr_assert_not_null(value);
  cr_assert_geq(H5Aread(attr, type, value), 0);
  H5Tclose(type);
  H5Aclose(attr);
  snprintf(t->names[t->count], sizeof t->names[0], "%s", name);
  t->values[t->count++] = value;
  return 0;
}

void h5_strings_to_variable_length(hid_t file, const char *group) {
  static texts t; /* large: not on the stack */
  t.count = 0;
  hid_t g = H5Gopen2(file, group, H5P_DEFAULT);
  cr_assert_geq(g, 0, "no group %s", group);
  hsize_t next = 0;
  cr_assert_geq(
      H5Aiterate2(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &next, keep_text, &t), 0);
  H5Gclose(g);
  cr_assert_geq(H5Ldelete(file, group, H5P_DEFAULT), 0);
  const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_attr_creation_order(gcpl,
                             H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  g = H5Gcreate2(file, group, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  cr_assert_geq(g, 0);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  for (size_t k = 0; k < t.count; k++) {
    h5_attr(g, t.names[k], type, type, 0, &t.values[k]);
    free(t.values[k]);
  }
  H5Tclose(type);
  H5Pclose(gcpl);
  H5Gclose(g);
}

void h5_copy_with_user_block(const char *src, const char *dst,
                             size_t userblock) {
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  cr_assert_geq(H5Pset_userblock(fcpl, userblock), 0);
  const hid_t to = H5Fcreate(dst, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  cr_assert_geq(to, 0);
  const hid_t from = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert_geq(from, 0);
  static const char *const groups[] = {"Header", "PartType1", "Parameters"};
  for (size_t k = 0; k < 3; k++)
    cr_assert_geq(
        H5Ocopy(from, groups[k], to, groups[k], H5P_DEFAULT, H5P_DEFAULT), 0,
        "cannot copy %s", groups[k]);
  H5Fclose(from);
  h5_close(to);
  H5Pclose(fcpl);
  /* Text in the user block: a body file's lines, which a reader that
   * looks at the first bytes only takes for a body file. */
  size_t len;
  unsigned char *bytes = read_bytes(dst, &len);
  for (size_t i = 0; i + 8 <= userblock; i += 8)
    memcpy(bytes + i, "0 0 0 1\n", 8);
  write_bytes(dst, bytes, len);
  free(bytes);
}

void write_bytes(const char *path, const void *bytes, size_t len) {
  FILE *fp = fopen(path, "wb");
  cr_assert_not_null(fp, "cannot create %s", path);
  cr_assert_eq(fwrite(bytes, 1, len, fp), len);
  cr_assert_eq(fclose(fp), 0);
}

long find_bytes(const unsigned char *bytes, size_t len, const void *needle,
                size_t needle_len) {
  for (size_t i = 0; i + needle_len <= len; i++)
    if (memcmp(bytes + i, needle, needle_len) == 0)
      return (long)i;
  return -1;
}

void remove_dir(const char *path) {
  DIR *dir = opendir(path);
  if (dir == NULL)
    return;
  struct dirent *e;
  char name[1024];
  while ((e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(name, sizeof name, "%s/%s", path, e->d_name);
    cr_assert_eq(remove(name), 0, "cannot remove %s", name);
  }
  closedir(dir);
  cr_assert_eq(rmdir(path), 0, "cannot remove %s", path);
}

void small_run(const char *dir) {
  remove_dir(sp(dir));
  const int code = RUN("run", "--ic", "plummer", "--n", "32", "--method",
                       "direct", "--steps", "1", "--threads", "1", "--progress",
                       "off", "--out", sp(dir));
  char *said = read_text("stderr.txt");
  cr_assert_eq(code, 0, "the run failed:\n%s", said != NULL ? said : "");
  free(said);
}
