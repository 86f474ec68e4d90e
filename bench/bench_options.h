/* Command-line options of bench_direct: what to sweep and how to time it. */
#ifndef BENCH_OPTIONS_H
#define BENCH_OPTIONS_H

#include "tilefmm.h"

#include <stdint.h>
#include <stdio.h>

enum { BENCH_MAX_LIST = 64, BENCH_MAX_AUTO_REPS = 1000 };

typedef struct bench_list {
  long long v[BENCH_MAX_LIST];
  int n;
} bench_list;

typedef struct bench_options {
  bench_list n, p, q, unroll, r;
  int reps; /* 0: automatic */
  int warmup;
  uint64_t seed;
  const char *csv; /* NULL: no CSV */
  int potential;
  double eps;
  double time_limit; /* seconds per point */
  double target_s;   /* automatic reps aim at this much time per point */
  tfmm_method method;
  tfmm_device device;
  int threads;
  int gpu_id;
} bench_options;

/* Prints the options and their defaults. */
void bench_options_usage(FILE *f);

/* Fills *o from the command line. Returns 0 to go on, 1 after --help, -1 on
 * a usage error (reported on stderr). */
int bench_options_parse(int argc, char **argv, bench_options *o);

#endif /* BENCH_OPTIONS_H */
