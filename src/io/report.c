/* The report of a failed read or write, the choice of particle types and
 * the checks of a body, shared by every format (see io.h). */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"
#include "io/io_threads.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vfail(tfmm_io_report *r, tfmm_status status, const char *fmt,
                  va_list ap) {
  if (r->status == TFMM_OK)
    r->status = status;
  if (r->used > 0 && r->used + 1 < sizeof r->text)
    r->text[r->used++] = '\n';
  if (r->used + 1 >= sizeof r->text)
    return;
  const int w = vsnprintf(r->text + r->used, sizeof r->text - r->used, fmt, ap);
  if (w > 0)
    r->used += (size_t)w < sizeof r->text - r->used
                   ? (size_t)w
                   : sizeof r->text - 1 - r->used;
}

void tfmm_io_fail(tfmm_io_report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(r, TFMM_ERR_FILE, fmt, ap);
  va_end(ap);
}

void tfmm_io_fail_status(tfmm_io_report *r, tfmm_status status, const char *fmt,
                         ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(r, status, fmt, ap);
  va_end(ap);
}

tfmm_status tfmm_io_report_finish(const tfmm_io_report *r, char *message,
                                  size_t size) {
  if (message != NULL && size > 0)
    snprintf(message, size, "%.*s", (int)r->used, r->text);
  if (r->status == TFMM_OK && r->used > 0)
    return TFMM_ERR_FILE;
  return r->status;
}

/* The name GADGET-4 and SWIFT give type k, after a space. */
static const char *type_name(int k) {
  switch (k) {
  case 0:
    return " (gas)";
  case 1:
    return " (dark matter)";
  case 4:
    return " (stars)";
  case 5:
    return " (black holes)";
  default:
    return "";
  }
}

/* "type 0 (gas): 10, type 1 (dark matter): 20" (label "type ") for the
 * types of mask that hold particles. */
static void describe(const char *label, int ntypes, const uint64_t *count,
                     uint64_t mask, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < ntypes && used < size; k++)
    if ((mask >> k & 1) && count[k] > 0) {
      const int w =
          snprintf(buf + used, size - used, "%s%s%d%s: %" PRIu64,
                   used > 0 ? ", " : "", label, k, type_name(k), count[k]);
      used += w > 0 ? (size_t)w : 0;
    }
}

static int bits(uint64_t mask) {
  int c = 0;
  for (; mask != 0; mask &= mask - 1)
    c++;
  return c;
}

/* "PATH: read TYPES as gravitating bodies" for the types read. */
static char *make_note(const char *path, const char *label, int ntypes,
                       const uint64_t *count, uint64_t chosen,
                       uint64_t present) {
  char read[512];
  describe(label, ntypes, count, chosen, read, sizeof read);
  const char *order = bits(chosen & present) > 1 ? ", in type order" : "";
  const size_t size = strlen(path) + strlen(read) + 64;
  char *note = malloc(size);
  if (note != NULL)
    snprintf(note, size, "%s: read %s as gravitating bodies%s", path, read,
             order);
  return note;
}

int tfmm_io_types_select(tfmm_io_report *r, const char *path, const char *label,
                         int ntypes, uint64_t *count, uint64_t types,
                         const char *flag, char **note) {
  uint64_t present = 0;
  for (int k = 0; k < ntypes; k++)
    if (count[k] > 0)
      present |= (uint64_t)1 << k;
  if (present == 0) {
    tfmm_io_fail(r,
                 "%s: holds no particles (the header's counts are all "
                 "zero)",
                 path);
    return 0;
  }
  char held[512];
  describe(label, ntypes, count, present, held, sizeof held);
  uint64_t chosen = types;
  if (chosen == TFMM_TYPES_DEFAULT && bits(present) == 1 && !(present & 1))
    chosen = present;
  if (chosen == TFMM_TYPES_DEFAULT) {
    if (flag != NULL)
      tfmm_io_fail(r,
                   "%s: holds %s; tilefmm computes gravity alone and does "
                   "not merge particle types (or take gas for collisionless "
                   "bodies) unasked: choose the types to read with %s, a "
                   "list such as %s 1,4 or %s all",
                   path, held, flag, flag, flag);
    else
      tfmm_io_fail(r,
                   "%s: holds %s; this command reads one particle type, not "
                   "gas: keep the types wanted in a file of their own",
                   path, held);
    return 0;
  }
  const uint64_t missing = chosen == TFMM_TYPES_ALL ? 0 : chosen & ~present;
  for (int k = 0; k < TFMM_IO_TYPES_MAX; k++)
    if (missing >> k & 1) {
      tfmm_io_fail(r,
                   "%s: %s names %s%d, which the file does not hold (it "
                   "holds %s)",
                   path, flag != NULL ? flag : "the choice of types", label, k,
                   held);
      return 0;
    }
  for (int k = 0; k < ntypes; k++)
    if (!(chosen >> k & 1))
      count[k] = 0;
  if (types != TFMM_TYPES_DEFAULT) {
    free(*note);
    *note = make_note(path, label, ntypes, count, chosen, present);
    if (*note == NULL) {
      tfmm_io_fail_status(r, TFMM_ERR_NO_MEMORY, "%s: out of memory", path);
      return 0;
    }
  }
  return 1;
}

const char *tfmm_io_body_fault(const double *x, const double *v, double m) {
  if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
    return "a non-finite coordinate";
  if (v != NULL && (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2])))
    return "a non-finite velocity";
  if (!isfinite(m))
    return "a non-finite mass";
  if (!(m > 0))
    return "a mass <= 0";
  return NULL;
}

/* Bodies looked at together: a block's sums are tested once, and a block
 * at fault is looked at again body by body for its first fault. */
enum { SCAN_BLOCK = 4096, LANES = 8 };

/* The sum of x - x over x[0 .. n): 0 when every x is finite, else NaN
 * (x - x is NaN for an infinity or a NaN, and a NaN stays in a sum). LANES
 * sums side by side have no chain from one value to the next. */
static double non_finite(const double *x, size_t n) {
  double bad[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++)
      bad[k] += x[i + k] - x[i + k];
  for (; i < n; i++)
    bad[0] += x[i] - x[i];
  double sum = 0;
  for (int k = 0; k < LANES; k++)
    sum += bad[k];
  return sum;
}

/* The largest |x| over x[0 .. n) and *extent (a non-finite x aside). */
static double largest(const double *x, size_t n, double extent) {
  double big[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++)
      big[k] = fabs(x[i + k]) > big[k] ? fabs(x[i + k]) : big[k];
  for (; i < n; i++)
    big[0] = fabs(x[i]) > big[0] ? fabs(x[i]) : big[0];
  for (int k = 0; k < LANES; k++)
    extent = big[k] > extent ? big[k] : extent;
  return extent;
}

/* The least of x[0 .. n) and 1. */
static double least(const double *x, size_t n) {
  double low[LANES] = {1, 1, 1, 1, 1, 1, 1, 1}, min = 1;
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++)
      low[k] = x[i + k] < low[k] ? x[i + k] : low[k];
  for (; i < n; i++)
    low[0] = x[i] < low[0] ? x[i] : low[0];
  for (int k = 0; k < LANES; k++)
    min = low[k] < min ? low[k] : min;
  return min;
}

/* Whether bodies [lo, hi) of s are all sound (tfmm_io_body_fault finds
 * nothing), raising *extent to their max |coordinate|: a block's sums
 * tested at once, where testing body after body (and fmax, a call) was a
 * fifth of a 1M-body write on one thread. A block is in cache for its
 * second and third pass. */
static int block_sound(const tfmm_snapshot *s, size_t lo, size_t hi,
                       double *extent) {
  const size_t n = hi - lo;
  const double bad = non_finite(s->pos + 3 * lo, 3 * n) +
                     (s->vel != NULL ? non_finite(s->vel + 3 * lo, 3 * n) : 0) +
                     non_finite(s->mass + lo, n);
  if (!(bad == 0 && least(s->mass + lo, n) > 0))
    return 0;
  *extent = largest(s->pos + 3 * lo, 3 * n, *extent);
  return 1;
}

/* A scan of the bodies, a part a thread: each part's first body at fault
 * (its end when none) and max |coordinate|. */
typedef struct scan {
  const tfmm_snapshot *s;
  size_t fault[TFMM_IO_THREADS_MAX];
  double extent[TFMM_IO_THREADS_MAX];
} scan;

static void scan_part(void *arg, size_t part, size_t parts) {
  scan *w = arg;
  const tfmm_snapshot *s = w->s;
  const size_t lo = s->n * part / parts, hi = s->n * (part + 1) / parts;
  w->fault[part] = hi;
  w->extent[part] = 0;
  for (size_t b = lo; b < hi; b += SCAN_BLOCK) {
    const size_t end = hi - b < SCAN_BLOCK ? hi : b + SCAN_BLOCK;
    if (block_sound(s, b, end, &w->extent[part]))
      continue;
    for (size_t i = b; i < end; i++)
      if (tfmm_io_body_fault(s->pos + 3 * i,
                             s->vel != NULL ? s->vel + 3 * i : NULL,
                             s->mass[i]) != NULL) {
        w->fault[part] = i;
        return;
      }
  }
}

int tfmm_io_check_bodies(tfmm_io_report *r, const char *path,
                         const tfmm_snapshot *s, tfmm_status status,
                         double *extent) {
  /* A part of at least 16 blocks (64K bodies, 3.5 MB): fewer bodies are
   * checked before a thread would start. */
  const size_t parts = tfmm_io_threads_for(s->n / (16 * SCAN_BLOCK));
  scan w = {.s = s};
  tfmm_io_threads_run(scan_part, &w, parts);
  double most = 0;
  for (size_t k = 0; k < parts; k++) {
    const size_t end = s->n * (k + 1) / parts, i = w.fault[k];
    if (i < end) { /* the first part at fault holds the first body */
      const char *what = tfmm_io_body_fault(
          s->pos + 3 * i, s->vel != NULL ? s->vel + 3 * i : NULL, s->mass[i]);
      tfmm_io_fail_status(r, status, "%s: body %zu (ParticleID %llu) has %s",
                          path, i, (unsigned long long)s->ids[i], what);
      return 0;
    }
    most = w.extent[k] > most ? w.extent[k] : most;
  }
  if (extent != NULL)
    *extent = most;
  return 1;
}

int tfmm_io_add_file(tfmm_io_report *r, tfmm_snapshot *out, const char *path) {
  char **files = realloc(out->files, (out->nfiles + 1) * sizeof *files);
  char *copy = strdup(path);
  if (files != NULL)
    out->files = files;
  if (files == NULL || copy == NULL) {
    free(copy);
    tfmm_io_fail_status(r, TFMM_ERR_NO_MEMORY, "%s: out of memory", path);
    return 0;
  }
  out->files[out->nfiles++] = copy;
  return 1;
}
