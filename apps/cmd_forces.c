/* tilefmm forces: accelerations and potentials of the bodies in a file. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "body_input.h"
#include "bodyio.h"
#include "cli.h"
#include "output.h"
#include "solver_cli.h"

#include "tilefmm.h"

#include <stdlib.h>
#include <string.h>

typedef struct forces_options {
  const char *in, *out, *types;
  solver_cli solver;
} forces_options;

static void print_help(const tfmm_config *d) {
  printf("Usage: tilefmm forces --in FILE [options]\n"
         "\n"
         "Computes the acceleration and potential of every body in FILE,\n"
         "with Plummer softening (the default, GPU Gems 3 chapter 31):\n"
         "  a_i   =  G sum_j m_j r_ij / (|r_ij|^2 + eps^2)^(3/2)\n"
         "  phi_i = -G sum_j m_j / (|r_ij|^2 + eps^2)^(1/2),  j != i\n"
         "or with GADGET-2's cubic spline (--softening spline), Newtonian\n"
         "beyond 2.8 eps. The tree methods meet --accuracy (default 1e-3)\n"
         "on the 99th percentile of the relative acceleration error.\n"
         "FILE is a snapshot: HDF5 (GADGET/SWIFT layout, as 'tilefmm run'\n"
         "writes and reads), Tipsy, or GADGET-2 binary (format 1 or 2),\n"
         "told by its first bytes; or text: one body a line, 'x y z m' or\n"
         "'x y z m vx vy vz' (velocities are ignored); '#' starts a\n"
         "comment. The output has one line 'ax ay az phi' per body, in\n"
         "input order. Timings, and the tree of the tree methods, go to\n"
         "stderr.\n"
         "\n"
         "Options:\n"
         "  --in FILE         bodies to read (required)\n"
         "  --types LIST      the particle types of a snapshot to read, as\n"
         "                    gravitating bodies: 0,1,4 or all (default: the\n"
         "                    file's one type; gas or several types need it)\n"
         "  --out FILE        where to write, replaced atomically\n"
         "                    (default: standard output)\n");
  solver_cli_help(stdout, d);
  printf("  -h, --help        show this help\n"
         "\n"
         "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
         "error.\n");
}

static args_result parse_options(int argc, char **argv, forces_options *o) {
  memset(o, 0, sizeof *o);
  args_option opts[SOLVER_CLI_FLAGS + 3] = {
      {.name = "--in", .kind = ARGS_STRING, .value = &o->in, .required = 1},
      {.name = "--out", .kind = ARGS_STRING, .value = &o->out},
      {.name = BODY_INPUT_TYPES_FLAG,
       .kind = ARGS_STRING,
       .value = &o->types,
       .valid = body_input_types_ok,
       .expect = BODY_INPUT_TYPES_EXPECT},
  };
  solver_cli_init(&o->solver, opts + 3);
  const args_result r =
      args_parse(argc, argv, opts, sizeof opts / sizeof opts[0]);
  if (r == ARGS_OK)
    solver_cli_finish(&o->solver);
  return r;
}

static void print_stats(const tfmm_stats *s, double t_read, double t_write) {
  fprintf(stderr, "tilefmm forces: %zu bodies, method %s, device %s (%s)\n",
          s->n, tfmm_method_name(s->method), tfmm_device_name(s->device),
          s->device_name);
  solver_cli_print_time(stderr, "read", t_read);
  solver_cli_print_times(stderr, s);
  solver_cli_print_time(stderr, "write", t_write);
  solver_cli_print_counts(stderr, s);
}

/* Writes the header and one line per body, then commits. */
static int write_forces(output *out, const tfmm_config *cfg, size_t n,
                        const double *acc, const double *pot) {
  fprintf(out->fp,
          "# tilefmm forces: ax ay az phi (method %s, G = %.17g, eps = "
          "%.17g, softening %s)\n",
          tfmm_method_name(cfg->method), cfg->G, cfg->eps,
          tfmm_softening_name(cfg->softening));
  if (!bodyio_write_forces(out->fp, n, acc, pot)) {
    output_fail(out);
    return 0;
  }
  return output_close(out);
}

/* Computes and writes the forces of bodies b; returns 1 on success. */
static int compute_and_write(tfmm_solver *solver, const forces_options *o,
                             const bodyio_bodies *b, output *out,
                             double t_read) {
  double *acc = malloc(3 * b->n * sizeof(double));
  double *pot = malloc(b->n * sizeof(double));
  int ok = acc != NULL && pot != NULL;
  if (!ok)
    cli_error("out of memory for %zu bodies", b->n);
  if (ok &&
      tfmm_solver_compute(solver, b->n, b->pos, b->mass, acc, pot) != TFMM_OK) {
    cli_error("%s", tfmm_solver_message(solver));
    ok = 0;
  }
  if (ok) {
    const double t0 = cli_seconds();
    ok = write_forces(out, &o->solver.cfg, b->n, acc, pot);
    if (ok)
      print_stats(tfmm_solver_stats(solver), t_read, cli_seconds() - t0);
  }
  free(acc);
  free(pot);
  return ok;
}

/* Reads, computes and writes with a ready solver; returns an exit code. */
static int evaluate(tfmm_solver *solver, const forces_options *o) {
  const double t0 = cli_seconds();
  bodyio_bodies b;
  int ok = body_input_read(o->in, o->types, &b);
  const double t_read = cli_seconds() - t0;
  output out;
  ok = ok && output_open(&out, o->out);
  if (ok) {
    ok = compute_and_write(solver, o, &b, &out, t_read);
    output_discard(&out);
  }
  bodyio_free(&b);
  return ok ? CLI_OK : CLI_RUNTIME_ERROR;
}

int cmd_forces(int argc, char **argv) {
  forces_options o;
  switch (parse_options(argc - 1, argv + 1, &o)) {
  case ARGS_HELP:
    print_help(&o.solver.cfg);
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm forces --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    break;
  }
  /* The solver first: a configuration it refuses is reported before a
   * large file is read. */
  tfmm_solver *solver = NULL;
  int rc = solver_cli_create(&o.solver.cfg, &solver);
  if (rc != CLI_OK)
    return rc;
  rc = evaluate(solver, &o);
  tfmm_solver_destroy(solver);
  return rc;
}
