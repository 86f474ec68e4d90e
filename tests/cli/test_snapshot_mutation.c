/* A mutation test of the readers of snapshots and checkpoints: files the
 * tool wrote, damaged at deterministic pseudo-random places (a byte
 * changed, a byte zeroed, the file cut short), read by run --ic, render
 * and run --restart. Each read must end in one of two ways: refused with
 * exit status 1 or 2 and a tilefmm message naming the file; or exit 0
 * with exactly the output of the undamaged file (the damage hit bytes no
 * reader looks at). A signal, HDF5's own error printing, a message that
 * names another file or none, or a different result fails. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Some 65 runs of the tool a reader, each about 0.1 s. */
TestSuite(snapshot_mutation, .init = scratch_make, .fini = scratch_remove,
          .timeout = 300);

enum { MUTANTS = 64 };

typedef struct reader {
  const char *source; /* the file of the small run that is damaged */
  const char *file;   /* where the damaged copy is read from */
  void (*prepare)(void);
  int (*run)(void);
  unsigned char *(*result)(size_t *len);
} reader;

/* What a snapshot holds, as bytes to compare. */
static unsigned char *snapshot_bytes(const char *path, size_t *len) {
  snapshot s;
  cr_assert_eq(snapshot_read(path, &s), 1, "%s", errors());
  const size_t n = s.n;
  const size_t size = sizeof s.time + n * (11 * sizeof(double) + 8);
  unsigned char *bytes = malloc(size), *at = bytes;
  cr_assert_not_null(bytes);
  cr_assert_not_null(s.acc);
  cr_assert_not_null(s.pot);
  const struct {
    const void *data;
    size_t size;
  } parts[] = {{&s.time, sizeof s.time},        {s.pos, 3 * n * sizeof(double)},
               {s.vel, 3 * n * sizeof(double)}, {s.mass, n * sizeof(double)},
               {s.acc, 3 * n * sizeof(double)}, {s.pot, n * sizeof(double)},
               {s.ids, n * sizeof(uint64_t)}};
  for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
    memcpy(at, parts[k].data, parts[k].size);
    at += parts[k].size;
  }
  snapshot_free(&s);
  *len = size;
  return bytes;
}

/* run --ic FILE, no step: its snapshot 0000 (bodies and forces). */
static void ic_prepare(void) { remove_dir(sp("o")); }
static int ic_run(void) {
  return RUN("run", "--ic", sp("m.hdf5"), "--method", "direct", "--steps", "0",
             "--threads", "1", "--progress", "off", "--out", sp("o"));
}
static unsigned char *ic_result(size_t *len) {
  return snapshot_bytes(sp("o/snapshot_0000.hdf5"), len);
}

/* render FILE: the picture. */
static void render_prepare(void) { remove(sp("m.png")); }
static int render_run(void) {
  return RUN("render", sp("m.hdf5"), "--out", sp("m.png"), "--style", "bare");
}
static unsigned char *render_result(size_t *len) {
  return read_bytes(sp("m.png"), len);
}

/* run --restart: in place, beside the run's statistics, two steps on; the
 * checkpoint it ends with. */
static void restart_prepare(void) {
  remove_dir(sp("md"));
  cr_assert_eq(mkdir(sp("md"), 0755), 0);
  size_t len;
  unsigned char *rows = read_bytes(sp("a/statistics.csv"), &len);
  write_bytes(sp("md/statistics.csv"), rows, len);
  free(rows);
}
static int restart_run(void) {
  return RUN("run", "--restart", sp("md/checkpoint.hdf5"), "--steps", "3",
             "--threads", "1", "--progress", "off", "--out", sp("md"));
}
static unsigned char *restart_result(size_t *len) {
  return snapshot_bytes(sp("md/checkpoint.hdf5"), len);
}

static uint64_t next_random(uint64_t *state) { /* splitmix64 */
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

enum { CHANGE, ZERO, CUT };
static const char *const kinds[] = {"byte changed", "byte zeroed", "cut"};

/* Runs r on MUTANTS damaged copies of its source and judges each. */
static void mutate_and_read(const reader *r, uint64_t seed) {
  small_run("a");
  size_t len, want_len;
  unsigned char *good = read_bytes(sp(r->source), &len);
  unsigned char *bad = malloc(len);
  cr_assert_not_null(bad);
  r->prepare();
  write_bytes(sp(r->file), good, len);
  cr_assert_eq(r->run(), 0, "the undamaged file is not read");
  unsigned char *want = r->result(&want_len);
  uint64_t state = seed;
  int refused = 0;
  for (int k = 0; k < MUTANTS; k++) {
    const uint64_t draw = next_random(&state);
    const int kind = k % 8 == 7 ? CUT : (int)(draw >> 62) % 2;
    const size_t at = (size_t)(draw % len);
    memcpy(bad, good, len);
    if (kind == CHANGE)
      bad[at] ^= (unsigned char)(1 + (draw >> 32) % 255);
    else if (kind == ZERO)
      bad[at] = 0;
    r->prepare();
    write_bytes(sp(r->file), bad, kind == CUT ? at : len);
    const int code = r->run();
    char *said = read_text("stderr.txt");
    cr_assert_not_null(said);
    char where[1100];
    snprintf(where, sizeof where, "%s, %s at byte %zu of %zu", r->file,
             kinds[kind], at, len);
    cr_assert_lt(code, 128, "%s: killed by signal %d:\n%s", where, code - 128,
                 said);
    cr_assert_null(strstr(said, "HDF5-DIAG"), "%s: HDF5 printed:\n%s", where,
                   said);
    if (code == 0) {
      cr_assert_neq(kind, CUT, "%s: a cut file was read", where);
      size_t got_len;
      unsigned char *got = r->result(&got_len);
      cr_assert(got_len == want_len && memcmp(got, want, got_len) == 0,
                "%s: read with exit 0, but the result differs", where);
      free(got);
    } else {
      char named[1100];
      snprintf(named, sizeof named, "tilefmm: %s: ", sp(r->file));
      cr_assert(code == 1 || code == 2, "%s: exit status %d:\n%s", where, code,
                said);
      cr_assert_not_null(strstr(said, named), "%s: no message naming it:\n%s",
                         where, said);
      refused++;
    }
    free(said);
  }
  /* Most bytes of these small files are metadata and data that every
   * read checks: a reader that caught no damage would not be tested. */
  cr_assert_geq(refused, MUTANTS / 4, "only %d of %d damaged files refused",
                refused, MUTANTS);
  free(want);
  free(bad);
  free(good);
}

Test(snapshot_mutation, initial_conditions) {
  const reader r = {"a/snapshot_0000.hdf5", "m.hdf5", ic_prepare, ic_run,
                    ic_result};
  mutate_and_read(&r, 101);
}

Test(snapshot_mutation, render) {
  const reader r = {"a/snapshot_0000.hdf5", "m.hdf5", render_prepare,
                    render_run, render_result};
  mutate_and_read(&r, 202);
}

Test(snapshot_mutation, restart) {
  const reader r = {"a/checkpoint.hdf5", "md/checkpoint.hdf5", restart_prepare,
                    restart_run, restart_result};
  mutate_and_read(&r, 303);
}
