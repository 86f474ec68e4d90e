/* The flags that configure a solver, shared by the commands that compute
 * forces (forces, validate, tune, run): method, device, physics (softening,
 * precision, accuracy target), tree and GPU kernel parameters, with the
 * library's defaults (tfmm_config_defaults). Each
 * flag's own rule is checked while parsing, so that the message names the
 * flag; rules joining several fields are the library's. Also the solver's
 * creation and the report of its statistics. */
#ifndef TFMM_SOLVER_CLI_H
#define TFMM_SOLVER_CLI_H

#include "args.h"

#include "tilefmm.h"

#include <stdio.h>

/* The number of entries solver_cli_init writes. */
#define SOLVER_CLI_FLAGS 24

typedef struct solver_cli {
  /* The words given, or NULL. theta and order: "auto" (TFMM_FROM_ACCURACY)
   * or a number. */
  const char *method, *device, *schedule, *tree_device, *far_device, *leaf,
      *theta, *order;
  const char *softening, *precision, *mac, *measure, *far_kernel;
  tfmm_config cfg;
} solver_cli;

/* Sets sc to the library's defaults and opts[0 .. SOLVER_CLI_FLAGS) to the
 * flags that write into sc; sc must outlive the parsing. */
void solver_cli_init(solver_cli *sc, args_option *opts);

/* After args_parse succeeded: the words into sc->cfg ("auto" for --leaf
 * is TFMM_LEAF_AUTO, for --theta and --order TFMM_FROM_ACCURACY). */
void solver_cli_finish(solver_cli *sc);

/* The flags' help, each with its default taken from d; --leaf only with
 * with_leaf (tune varies the leaf size itself and refuses it). */
void solver_cli_help(FILE *fp, const tfmm_config *d, int with_leaf);

/* An accuracy target as people write it: "1e-3", "5e-4", "2.5e-4" (a
 * short mantissa and the exponent), else %g. Returns buf. */
const char *solver_cli_tol(double tol, char buf[32]);

/* "theta 0.3 (auto), order 8 (auto)" for a tree method: the values used
 * (theta, order) and whether cfg left them to the accuracy target; "" for
 * the all-pairs methods. Returns buf. */
const char *solver_cli_theta_order(const tfmm_config *cfg, double theta,
                                   int order, char *buf, size_t size);

/* What tfmm_config_resolve says cfg will use (the planner's first guess
 * when solver_cli_planned, alone or over the ranks of mpirun); on a
 * configuration it refuses, cfg's own theta and order. */
void solver_cli_resolve(const tfmm_config *cfg, double *theta, int *order);

/* Creates a solver for cfg. A configuration the library refuses as an
 * invalid argument came from the flags: a usage error; anything else (no
 * GPU, a method the device cannot run) is a runtime error. Prints why and
 * returns the exit code; *solver is NULL unless CLI_OK. */
int solver_cli_create(const tfmm_config *cfg, tfmm_solver **solver);

/* solver_cli_create over the ranks of mpirun (mpi_cli_solver_create):
 * collective, and the same as solver_cli_create without MPI. */
int solver_cli_create_ranks(const tfmm_config *cfg, tfmm_solver **solver);

/* One "  name   seconds s" line of a timing report. */
void solver_cli_print_time(FILE *fp, const char *name, double seconds);

/* The phases that took time (zero ones, and Barnes-Hut's empty downward
 * pass, are left out; the tree phase is followed by its stages for tree
 * methods); for the tree methods the near field (on the GPU: its span from
 * the first upload to the last download, and the kernel alone), the far
 * field (CPU) and the seconds they overlapped; then the total. */
void solver_cli_print_times(FILE *fp, const tfmm_stats *s);

/* What the evaluation of a solver made from cfg did: interactions and
 * their rate; the softening; for the tree methods the opening angle and
 * order used ("(auto)" when cfg left them to the accuracy target), the
 * leaf size used ("(auto)" when cfg left it to the solver), the tree (depth,
 * cells, leaves, bodies per leaf), the near field (interactions, where they
 * ran, interactions per second of kernel time) and the far field (M2L or
 * M2P count); for the all-pairs kernel on the GPU its launch shape. */
void solver_cli_print_counts(FILE *fp, const tfmm_stats *s,
                             const tfmm_config *cfg);

/* The error the evaluation measured (tfmm_stats.error: median, p99, the
 * bound at its confidence, max and its body, the sample, the time), and
 * the planner's line (what was chosen and why); nothing for an
 * evaluation that did not measure and has no plan. */
void solver_cli_print_measured(FILE *fp, const tfmm_stats *s);

/* Whether the solver of cfg chooses theta and order by measuring its
 * error (the planner: a tree method, theta or order auto, measure not
 * off, the geometric or mass criterion; one process or the ranks of
 * mpirun, whose planner measures over every rank's bodies); then
 * solver_cli_resolve gives its first guess, and tfmm_stats what each
 * evaluation used. */
int solver_cli_planned(const tfmm_config *cfg);

/* "auto", "always" or "off": the word of --measure for m. */
const char *solver_cli_measure_name(tfmm_measure m);

#endif
