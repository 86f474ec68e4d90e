/* tilefmm tune's command line: its options, their defaults, the help,
 * and the rules that join several flags (cmd_tune.c runs the command). */
#ifndef TFMM_TUNE_OPTIONS_H
#define TFMM_TUNE_OPTIONS_H

#include "args.h"
#include "solver_cli.h"

#include "tilefmm.h"

#include <stdint.h>

#define TUNE_DEFAULT_LEAF_MIN 16
#define TUNE_DEFAULT_LEAF_MAX 4096
#define TUNE_DEFAULT_REPEAT 3
#define TUNE_DEFAULT_SAMPLE 1000
#define TUNE_DEFAULT_SEED 1
#define TUNE_DEFAULT_CSV "tune.csv"
#define TUNE_DEFAULT_PNG "tune.png"
/* The exit status when no leaf size met --max-error (as validate's when
 * the accuracy target is missed). */
#define TUNE_NOT_MET 3

typedef struct tune_options {
  const char *in, *ic, *csv, *png;
  const char *types; /* --types: a snapshot's types to read */
  uint64_t n, seed, sample;
  int leaf_min, leaf_max, repeat;
  int G_given;      /* --G was given (a file's units must agree with it) */
  double max_error; /* the largest p99 error a chosen L may have */
  solver_cli solver;
  int argc; /* the command line, for the CSV's header */
  char **argv;
} tune_options;

/* The help, with the defaults of d (the solver's). */
void tune_options_help(const tfmm_config *d);

/* Parses tune's command line (argv[0] is "tune") into o. Prints what is
 * wrong and returns ARGS_ERROR on a usage error. */
args_result tune_options_parse(int argc, char **argv, tune_options *o);

/* Checks, before any measurement, that the outputs can be written
 * (--csv: a file or "-", standard output; --png: a file, not the CSV's)
 * and that neither is the input (marked for atomic_file_open to refuse).
 * Prints what is wrong, naming the option and the path, and returns 0. */
int tune_options_check_outputs(const tune_options *o);

#endif
