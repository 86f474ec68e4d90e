/* What bench_direct and bench_tree share: reading numbers and lists off the
 * command line, stamping a run, appending to a CSV whose header must match,
 * the host arrays of a sweep and a few small statistics. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include "tilefmm.h"

#include <stddef.h>
#include <stdio.h>

/* The most values one comma-separated list may hold. */
enum { BENCH_LIST_CAP = 64 };

/* Parses s whole as an integer (a real) in [lo, hi] into *out. Returns 0,
 * or -1 leaving *out alone. */
int bench_parse_ll(const char *s, long long lo, long long hi, long long *out);
int bench_parse_double(const char *s, double lo, double hi, double *out);

/* Splits a copy of s (in buf, of cap bytes) at commas into tok, which holds
 * max (at most BENCH_LIST_CAP) entries. Returns the number of tokens, or -1
 * when there are none or too many (reported as "prog: flag: ..."). */
int bench_split_list(const char *prog, const char *flag, const char *s,
                     char *buf, size_t cap, char **tok, int max);

/* Parses s as a comma-separated list of at most max integers in [lo, hi]
 * into v[0..*n). Returns 0, or -1 after a message on stderr. */
int bench_parse_ilist(const char *prog, const char *flag, const char *s,
                      long long lo, long long hi, int max, long long *v,
                      int *n);

/* The same for reals in [lo, hi]. */
int bench_parse_dlist(const char *prog, const char *flag, const char *s,
                      double lo, double hi, int max, double *v, int *n);

/* Reads argv[*i], "--flag=value" or "--flag value", whose flag must be one
 * of known[0..nknown): copies the flag into name (cap bytes) and points *val
 * at its value, moving *i past a value given apart. Returns 0, or -1 after
 * a message on stderr. */
int bench_option_read(const char *prog, int argc, char **argv, int *i,
                      const char *const *known, size_t nknown, char *name,
                      size_t cap, const char **val);

/* The largest of v[0..n), as a size; 0 when n is 0. */
size_t bench_max_n(const long long *v, int n);

/* The date and time now, UTC, as "YYYY-MM-DDTHH:MM:SSZ", and the command
 * line, each argument quoted when the shell would need it. */
void bench_run_stamp(int argc, char **argv, char *date, size_t date_cap,
                     char *cmdline, size_t cmdline_cap);

/* Opens path for appending after checking that its header, if it has one,
 * is header; *existing is 1 when it has, 0 when the file is new or has no
 * header yet. NULL on an error (reported as "prog: ..."). The caller writes
 * its "#" comments, then bench_csv_end_comments. */
FILE *bench_csv_open(const char *prog, const char *path, const char *header,
                     int *existing);

/* The "#" lines both programs write: when and how the run was started. */
void bench_csv_write_stamp(FILE *csv, const char *date, const char *cmdline);

/* Writes header when the file had none, and flushes. */
void bench_csv_end_comments(FILE *csv, const char *header, int existing);

/* Host arrays for the largest N of a sweep. */
typedef struct bench_bodies {
  double *pos, *vel, *mass, *acc, *pot;
} bench_bodies;

/* Allocates every array for nmax bodies. Returns 0, or -1 when out of
 * memory (bench_bodies_free still releases what was had). */
int bench_bodies_alloc(bench_bodies *b, size_t nmax);
void bench_bodies_free(bench_bodies *b);

/* qsort's comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);

/* Sorts v[0..n) and returns its median. */
double bench_median(double *v, int n);

/* "what failed: STATUS: the solver's message" into msg. */
void bench_fail_msg(char *msg, size_t cap, const char *what, tfmm_status st,
                    const tfmm_solver *s);

/* The processor's model name, or "unknown". */
void bench_cpu_model(char *out, size_t cap);

#endif /* BENCH_COMMON_H */
