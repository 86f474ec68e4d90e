/* tilefmm tune's command line (tune_options.h): the help, the flags and
 * their checks, one at a time and then together. */
#define _POSIX_C_SOURCE 200809L
#include "tune_options.h"

#include "atomic_file.h"
#include "body_input.h"
#include "cli.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void tune_options_help(const tfmm_config *d) {
  char tol[32];
  printf(
      "Usage: tilefmm tune (--in FILE | --ic plummer --n N [--seed S])\n"
      "                    [--leaf-min A] [--leaf-max B] [--repeat K]\n"
      "                    [--sample S] [--max-error E] [--csv FILE]\n"
      "                    [--png FILE]\n"
      "                    [solver options]\n"
      "\n"
      "Measures a tree method (fmm or bh) at the leaf sizes A, 2A, 4A, ...\n"
      "up to B (B itself included), one solver each: a warm-up evaluation\n"
      "(four with theta or order auto, in which the solver measures its\n"
      "error and settles on the cheapest theta and order that meet\n"
      "--accuracy at that leaf size: each point then meets the target),\n"
      "then K timed ones of which the fastest (by total time) is kept. For\n"
      "each it reports the tree's depth and leaves, the near-field\n"
      "interactions, the M2L (fmm) or M2P (bh) count, the near-field time\n"
      "(on the GPU: from the first upload to the last download, during the\n"
      "far field), the far-field time (CPU), the total time, and the 99th\n"
      "percentile (nearest rank) of the relative acceleration error\n"
      "|a - a_ref| / |a_ref| over S bodies, a_ref from the double-precision\n"
      "reference computed once. Then the fastest leaf size overall, and\n"
      "the one chosen: the fastest whose p99 error is at most E. Each\n"
      "evaluation computes potentials too, as 'tilefmm forces' does.\n"
      "\n"
      "The table goes to stdout and, with the command line, the date and\n"
      "the device in '#' comment lines, to a CSV file; a plot of the near,\n"
      "far and total times against L, with the p99 error and E on a second\n"
      "axis, goes to a PNG file, drawn by gnuplot.\n"
      "Without gnuplot the CSV is still written, with a warning. Progress,\n"
      "one line per leaf size, goes to stderr. Both files are replaced\n"
      "atomically: a failed run leaves existing ones untouched. Both are\n"
      "checked before the measurements start: a destination that cannot\n"
      "be written (no such directory, a directory, the input) is refused\n"
      "at once, naming its option. With --csv -, the CSV goes to stdout\n"
      "and the table to stderr.\n"
      "\n"
      "Options:\n"
      "  --in FILE         bodies to read, as 'tilefmm forces' reads them;\n"
      "                    a file in physical units is said with their G,\n"
      "                    and a --G that contradicts them is refused\n"
      "  --types LIST      the particle types of a snapshot to read\n"
      "                    (0,1,4 or all), as 'tilefmm forces --types'\n"
      "  --ic plummer      or a Plummer sphere made here (instead of --in)\n"
      "  --n N             its bodies, >= 1 (required with --ic)\n"
      "  --seed S          its random seed, an integer in [0, 2^64)\n"
      "                    (default: %d)\n"
      "  --leaf-min A      smallest leaf size, >= 1 (default: %d)\n"
      "  --leaf-max B      largest leaf size, >= A (default: %d)\n"
      "  --repeat K        timed evaluations per leaf size, >= 1\n"
      "                    (default: %d)\n"
      "  --sample S        bodies compared with the reference, 0 for all\n"
      "                    (O(N^2)); the same sample for every leaf size\n"
      "                    (default: %d)\n"
      "  --max-error E     the largest 99th percentile error a chosen leaf\n"
      "                    size may have, > 0 (default: the accuracy\n"
      "                    target, --accuracy, %s)\n"
      "  --csv FILE        the table, or - for stdout (default: %s)\n"
      "  --png FILE        the plot (default: %s)\n"
      "Solver options (as for 'tilefmm forces'; --leaf is what tune\n"
      "varies, so it is not accepted; the method must be fmm or bh):\n",
      TUNE_DEFAULT_SEED, TUNE_DEFAULT_LEAF_MIN, TUNE_DEFAULT_LEAF_MAX,
      TUNE_DEFAULT_REPEAT, TUNE_DEFAULT_SAMPLE,
      solver_cli_tol(d->accuracy, tol), TUNE_DEFAULT_CSV, TUNE_DEFAULT_PNG);
  solver_cli_help(stdout, d, 0);
  printf("  -h, --help        show this help\n"
         "\n"
         "Exit status: 0 on success (also without gnuplot), %d when no leaf\n"
         "size met --max-error (the table, CSV and plot are written all the\n"
         "same), 1 on a runtime error (gnuplot failing is one), 2 on a\n"
         "usage error.\n",
         TUNE_NOT_MET);
}

static int positive_int(const void *v) { return *(const int *)v >= 1; }
static int positive(const void *v) { return *(const double *)v > 0; }
static int count_ok(const void *v) {
  const uint64_t n = *(const uint64_t *)v;
  return n >= 1 && n <= SIZE_MAX / (3 * sizeof(double));
}
static int model_ok(const void *v) {
  return strcmp(*(const char *const *)v, "plummer") == 0;
}

/* The command's own flags, before the solver's. */
enum {
  OPT_IN,
  OPT_TYPES,
  OPT_IC,
  OPT_N,
  OPT_SEED,
  OPT_LEAF_MIN,
  OPT_LEAF_MAX,
  OPT_REPEAT,
  OPT_SAMPLE,
  OPT_MAX_ERROR,
  OPT_CSV,
  OPT_PNG,
  OPT_OWN
};

/* The rules that join several flags, each message naming them. */
static int check_combination(const tune_options *o, const args_option *opts) {
  const args_option *in = &opts[OPT_IN], *ic = &opts[OPT_IC], *n = &opts[OPT_N],
                    *seed = &opts[OPT_SEED];
  if (in->seen && ic->seen)
    cli_error("--in and --ic: give one of them, not both");
  else if (!in->seen && !ic->seen)
    cli_error("missing input: give --in FILE or --ic plummer --n N");
  else if (ic->seen && !n->seen)
    cli_error("--ic plummer: missing required flag --n");
  else if (ic->seen && opts[OPT_TYPES].seen)
    cli_error("--types: only with --in");
  else if (!ic->seen && (n->seen || seed->seen))
    cli_error("%s: only with --ic", n->seen ? "--n" : "--seed");
  else if (o->leaf_min > o->leaf_max)
    cli_error("--leaf-min %d is greater than --leaf-max %d", o->leaf_min,
              o->leaf_max);
  else if (o->solver.leaf != NULL)
    cli_error("--leaf: tune varies the leaf size itself; give --leaf-min "
              "and --leaf-max instead");
  else if (o->solver.cfg.method != TFMM_METHOD_FMM &&
           o->solver.cfg.method != TFMM_METHOD_BH)
    cli_error("--method %s: tune needs a tree method, fmm or bh",
              tfmm_method_name(o->solver.cfg.method));
  else
    return 1;
  return 0;
}

args_result tune_options_parse(int argc, char **argv, tune_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = TUNE_DEFAULT_SEED;
  o->sample = TUNE_DEFAULT_SAMPLE;
  o->leaf_min = TUNE_DEFAULT_LEAF_MIN;
  o->leaf_max = TUNE_DEFAULT_LEAF_MAX;
  o->repeat = TUNE_DEFAULT_REPEAT;
  o->csv = TUNE_DEFAULT_CSV;
  o->png = TUNE_DEFAULT_PNG;
  o->argc = argc;
  o->argv = argv;
  args_option opts[OPT_OWN + SOLVER_CLI_FLAGS] = {
      [OPT_IN] = {.name = "--in", .kind = ARGS_STRING, .value = &o->in},
      [OPT_TYPES] = {.name = BODY_INPUT_TYPES_FLAG,
                     .kind = ARGS_STRING,
                     .value = &o->types,
                     .valid = body_input_types_ok,
                     .expect = BODY_INPUT_TYPES_EXPECT},
      [OPT_IC] = {.name = "--ic",
                  .kind = ARGS_STRING,
                  .value = &o->ic,
                  .valid = model_ok,
                  .expect = "plummer"},
      [OPT_N] = {.name = "--n",
                 .kind = ARGS_U64,
                 .value = &o->n,
                 .valid = count_ok,
                 .expect = "an integer >= 1"},
      [OPT_SEED] = {.name = "--seed",
                    .kind = ARGS_U64,
                    .value = &o->seed,
                    .expect = "an integer in [0, 2^64)"},
      [OPT_LEAF_MIN] = {.name = "--leaf-min",
                        .kind = ARGS_INT,
                        .value = &o->leaf_min,
                        .valid = positive_int,
                        .expect = "an integer >= 1"},
      [OPT_LEAF_MAX] = {.name = "--leaf-max",
                        .kind = ARGS_INT,
                        .value = &o->leaf_max,
                        .valid = positive_int,
                        .expect = "an integer >= 1"},
      [OPT_REPEAT] = {.name = "--repeat",
                      .kind = ARGS_INT,
                      .value = &o->repeat,
                      .valid = positive_int,
                      .expect = "an integer >= 1"},
      [OPT_SAMPLE] = {.name = "--sample",
                      .kind = ARGS_U64,
                      .value = &o->sample,
                      .expect = "an integer >= 0 (0: all bodies)"},
      [OPT_MAX_ERROR] = {.name = "--max-error",
                         .kind = ARGS_DOUBLE,
                         .value = &o->max_error,
                         .valid = positive,
                         .expect = "a number > 0"},
      [OPT_CSV] = {.name = "--csv", .kind = ARGS_STRING, .value = &o->csv},
      [OPT_PNG] = {.name = "--png", .kind = ARGS_STRING, .value = &o->png},
  };
  solver_cli_init(&o->solver, opts + OPT_OWN);
  const args_result r =
      args_parse(argc - 1, argv + 1, opts, sizeof opts / sizeof opts[0]);
  if (r != ARGS_OK)
    return r;
  solver_cli_finish(&o->solver);
  for (size_t k = OPT_OWN; k < sizeof opts / sizeof opts[0]; k++)
    if (opts[k].name != NULL && strcmp(opts[k].name, "--G") == 0)
      o->G_given = opts[k].seen;
  if (!opts[OPT_MAX_ERROR].seen)
    o->max_error = o->solver.cfg.accuracy;
  if (output_refuse_stdout("--png", o->png, "a PNG picture"))
    return ARGS_ERROR;
  return check_combination(o, opts) ? ARGS_OK : ARGS_ERROR;
}

/* Whether a and b name one file: the same name, or the same inode. */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return strcmp(a, b) == 0 ||
         (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
          sa.st_ino == sb.st_ino);
}

int tune_options_check_outputs(const tune_options *o) {
  if (o->in != NULL) /* no output may replace it */
    atomic_file_protect(body_input_path(o->in));
  if (!output_check("--csv", o->csv) || !atomic_file_check("--png", o->png))
    return 0;
  if (!output_is_stdout(o->csv) && same_file(o->csv, o->png)) {
    cli_error("--csv %s and --png %s: one file for both; give each its own",
              o->csv, o->png);
    return 0;
  }
  return 1;
}