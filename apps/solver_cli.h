/* The flags that configure a solver, shared by the commands that compute
 * forces (forces, validate): method, device, physics, tree and GPU kernel
 * parameters, with the library's defaults (tfmm_config_defaults). Each
 * flag's own rule is checked while parsing, so that the message names the
 * flag; rules joining several fields are the library's. Also the solver's
 * creation and the report of its statistics. */
#ifndef TFMM_SOLVER_CLI_H
#define TFMM_SOLVER_CLI_H

#include "args.h"

#include "tilefmm.h"

#include <stdio.h>

/* The number of entries solver_cli_init writes. */
#define SOLVER_CLI_FLAGS 13

typedef struct solver_cli {
  const char *method, *device; /* the words given, or NULL */
  tfmm_config cfg;
} solver_cli;

/* Sets sc to the library's defaults and opts[0 .. SOLVER_CLI_FLAGS) to the
 * flags that write into sc; sc must outlive the parsing. */
void solver_cli_init(solver_cli *sc, args_option *opts);

/* After args_parse succeeded: the method and device words into sc->cfg. */
void solver_cli_finish(solver_cli *sc);

/* The flags' help, each with its default taken from d. */
void solver_cli_help(FILE *fp, const tfmm_config *d);

/* Creates a solver for cfg. A configuration the library refuses as an
 * invalid argument came from the flags: a usage error; anything else (no
 * GPU, a method the device cannot run) is a runtime error. Prints why and
 * returns the exit code; *solver is NULL unless CLI_OK. */
int solver_cli_create(const tfmm_config *cfg, tfmm_solver **solver);

/* One "  name   seconds s" line of a timing report. */
void solver_cli_print_time(FILE *fp, const char *name, double seconds);

/* The phases that took time (zero ones, and Barnes-Hut's empty downward
 * pass, are left out; the tree phase is followed by its stages for tree
 * methods), then the total. */
void solver_cli_print_times(FILE *fp, const tfmm_stats *s);

/* What the evaluation did: near-field interactions and their rate, and for
 * the tree methods the tree (depth, cells, leaves, bodies per leaf) and the
 * far field (M2L or M2P count); for the GPU the kernel's launch shape. */
void solver_cli_print_counts(FILE *fp, const tfmm_stats *s);

#endif
