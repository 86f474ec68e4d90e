/* tilefmm forces: accelerations and potentials of the bodies in a file. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "body_input.h"
#include "bodyio.h"
#include "cli.h"
#include "dist_report.h"
#include "mpi_cli.h"
#include "output.h"
#include "snapshot.h"
#include "solver_cli.h"
#include "units.h"

#include "tilefmm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct forces_options {
  const char *in, *out, *types;
  const char *format; /* --format: text, hdf5, or NULL (from --out) */
  int hdf5;           /* write an HDF5 snapshot */
  int G_given;        /* --G was given */
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
         "input order; or, as HDF5, a snapshot of the bodies with their\n"
         "Accelerations and Potentials (docs/formats.md). A snapshot with\n"
         "physical units is computed in them: G is its units' (--G, if\n"
         "given, must agree to 1%%), and the output is in the same units.\n"
         "Timings, and the tree of the tree methods, go to stderr.\n"
         "\n"
         "Options:\n"
         "  --in FILE         bodies to read (required; -: standard input;\n"
         "                    a pipe carries a text body file only)\n"
         "  --types LIST      the particle types of a snapshot to read, as\n"
         "                    gravitating bodies: 0,1,4 or all (default: the\n"
         "                    file's one type; gas or several types need it)\n"
         "  --out FILE        where to write, replaced atomically\n"
         "                    (default, or -: standard output)\n"
         "  --format F        text, or hdf5: a snapshot in the GADGET/SWIFT\n"
         "                    layout with PartType1/Accelerations and\n"
         "                    Potentials (default: hdf5 when FILE ends in\n"
         "                    .hdf5, .h5 or .hdf, else text)\n");
  solver_cli_help(stdout, d, 1);
  printf("  -h, --help        show this help\n"
         "\n"
         "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
         "error.\n");
}

static int format_ok(const void *v) {
  const char *f = *(const char *const *)v;
  return strcmp(f, "text") == 0 || strcmp(f, "hdf5") == 0;
}

static args_result parse_options(int argc, char **argv, forces_options *o) {
  memset(o, 0, sizeof *o);
  args_option opts[SOLVER_CLI_FLAGS + 4] = {
      {.name = "--in", .kind = ARGS_STRING, .value = &o->in, .required = 1},
      {.name = "--out", .kind = ARGS_STRING, .value = &o->out},
      {.name = BODY_INPUT_TYPES_FLAG,
       .kind = ARGS_STRING,
       .value = &o->types,
       .valid = body_input_types_ok,
       .expect = BODY_INPUT_TYPES_EXPECT},
      {.name = "--format",
       .kind = ARGS_STRING,
       .value = &o->format,
       .valid = format_ok,
       .expect = "text or hdf5"},
  };
  solver_cli_init(&o->solver, opts + 4);
  const args_result r =
      args_parse(argc, argv, opts, sizeof opts / sizeof opts[0]);
  if (r != ARGS_OK)
    return r;
  solver_cli_finish(&o->solver);
  for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++)
    if (strcmp(opts[k].name, "--G") == 0)
      o->G_given = opts[k].seen;
  o->hdf5 = o->format != NULL ? strcmp(o->format, "hdf5") == 0
                              : output_hdf5_name(o->out);
  if (o->hdf5 && output_refuse_stdout("--out", o->out, "an HDF5 file"))
    return ARGS_ERROR;
  if (o->hdf5 && o->out == NULL) {
    cli_error("--format hdf5: an HDF5 file cannot go to standard output; "
              "give --out FILE");
    return ARGS_ERROR;
  }
  return r;
}

/* The G of the file's units u (physical), into the configuration: the
 * forces are then in the file's units. A --G given that contradicts it is
 * refused, naming both. Returns a CLI exit code. */
static int take_units(forces_options *o, const units *u) {
  return units_settle_G("forces", o->in, u, o->G_given, &o->solver.cfg.G,
                        mpi_cli_rank() == 0, ": the forces are in these units");
}

static void print_stats(const tfmm_stats *s, const tfmm_config *cfg,
                        double t_read, double t_setup, double t_write) {
  fprintf(stderr, "tilefmm forces: %zu bodies, method %s, device %s (%s)\n",
          s->n, tfmm_method_name(s->method), tfmm_device_name(s->device),
          s->device_name);
  solver_cli_print_time(stderr, "read", t_read);
  /* Apart from the solver's total, and said so: a cost moved, not gone. */
  fprintf(stderr,
          "  %-14s %12.6f s  (tfmm_solver_reserve: memory for the bodies, "
          "before the evaluation; not in its total)\n",
          "setup", t_setup);
  solver_cli_print_times(stderr, s);
  solver_cli_print_time(stderr, "write", t_write);
  solver_cli_print_counts(stderr, s, cfg);
  solver_cli_print_measured(stderr, s);
}

/* The same over the ranks: the bodies of all, rank 0's solver (its
 * phases and counts are its own block's), the moves of the bodies and
 * forces between rank 0 and the others, and what the evaluation did over
 * the ranks. Collective (dist_report_print); rank 0's lines are seen. */
static void print_stats_ranks(const tfmm_solver *solver, const tfmm_config *cfg,
                              size_t n, const double t[4]) {
  const tfmm_stats *s = tfmm_solver_stats(solver);
  fprintf(stderr,
          "tilefmm forces: %zu bodies over %d ranks (MPI), method %s, device "
          "%s (%s)\n",
          n, mpi_cli_ranks(), tfmm_method_name(cfg->method),
          tfmm_device_name(tfmm_solver_device(solver)),
          s->n > 0 ? s->device_name : "rank 0's block is empty");
  /* A rank whose block is empty (fewer bodies than ranks) evaluates
   * nothing: its statistics are zeros. */
  if (s->n > 0)
    fprintf(stderr, "  rank 0's own evaluation (%zu bodies):\n", s->n);
  solver_cli_print_time(stderr, "read", t[0]);
  solver_cli_print_time(stderr, "scatter", t[1]);
  if (s->n > 0)
    solver_cli_print_times(stderr, s);
  solver_cli_print_time(stderr, "gather", t[2]);
  solver_cli_print_time(stderr, "write", t[3]);
  if (s->n > 0)
    solver_cli_print_counts(stderr, s, cfg);
  /* Measured over every rank's bodies (measure always, verify): the same
   * figures on every rank. */
  solver_cli_print_measured(stderr, s);
  dist_report_print(stderr, solver);
}

/* The bodies and their forces as an HDF5 snapshot (snapshot_write): the
 * input's positions, velocities and masses, IDs 1..n in input order,
 * PartType1/Accelerations and Potentials, the units and G they are in,
 * and the solver's settings in /Parameters. */
static int write_hdf5(const forces_options *o, const bodyio_bodies *b,
                      const units *u, double *acc, double *pot) {
  const tfmm_config *cfg = &o->solver.cfg;
  uint64_t *ids = malloc((b->n > 0 ? b->n : 1) * sizeof *ids);
  if (ids == NULL) {
    cli_error("out of memory for %zu bodies", b->n);
    return 0;
  }
  for (size_t i = 0; i < b->n; i++)
    ids[i] = (uint64_t)i + 1;
  char G[32], eps[32];
  snprintf(G, sizeof G, "%.17g", cfg->G);
  snprintf(eps, sizeof eps, "%.17g", cfg->eps);
  snapshot_attr params[] = {
      {"Forces:input", (char *)o->in},
      {"Gravity:method", (char *)tfmm_method_name(cfg->method)},
      {"Gravity:G", G},
      {"Gravity:eps", eps},
      {"Gravity:softening", (char *)tfmm_softening_name(cfg->softening)}};
  const snapshot s = {.n = b->n,
                      .pos = b->pos,
                      .vel = b->vel,
                      .mass = b->mass,
                      .acc = acc,
                      .pot = pot,
                      .ids = ids,
                      .params = params,
                      .nparams = sizeof params / sizeof params[0],
                      .units = *u,
                      .G = cfg->G};
  const int ok = snapshot_write(o->out, &s);
  free(ids);
  return ok;
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

/* Computes and writes the forces of bodies b; returns 1 on success. The
 * arrays are malloc's: on the GPU the library stages them through its
 * pinned chunks, whereas pinning them here (tfmm_host_alloc) would cost
 * more than it saves for one evaluation (bench/results/host_transfer: at
 * 1M bodies on an H100, 30-43 ms to pin and fill 64 MB against 13-15 ms
 * saved). */
static int compute_and_write(tfmm_solver *solver, const forces_options *o,
                             const bodyio_bodies *b, const units *u,
                             output *out, double t_read) {
  double *acc = malloc(3 * b->n * sizeof(double));
  double *pot = malloc(b->n * sizeof(double));
  int ok = acc != NULL && pot != NULL;
  if (!ok)
    cli_error("out of memory for %zu bodies", b->n);
  /* The solver's set-up for these bodies before the evaluation (on the
   * GPU: its device and pinned memory), timed and shown on its own. */
  const double t_setup0 = cli_seconds();
  if (ok && tfmm_solver_reserve(solver, b->n) != TFMM_OK) {
    cli_error("%s", tfmm_solver_message(solver));
    ok = 0;
  }
  const double t_setup = cli_seconds() - t_setup0;
  const tfmm_status st =
      ok ? tfmm_solver_compute(solver, b->n, b->pos, b->mass, acc, pot)
         : TFMM_OK;
  /* --verify's miss: the forces are computed, and written, and the
   * measurement shown; then the failure. */
  if (ok && st != TFMM_OK && st != TFMM_ERR_ACCURACY) {
    cli_error("%s", tfmm_solver_message(solver));
    ok = 0;
  }
  if (ok) {
    const double t0 = cli_seconds();
    ok = o->hdf5 ? write_hdf5(o, b, u, acc, pot)
                 : write_forces(out, &o->solver.cfg, b->n, acc, pot);
    if (ok)
      print_stats(tfmm_solver_stats(solver), &o->solver.cfg, t_read, t_setup,
                  cli_seconds() - t0);
  }
  if (ok && st == TFMM_ERR_ACCURACY) {
    cli_error("%s", tfmm_solver_message(solver));
    ok = 0;
  }
  free(acc);
  free(pot);
  return ok;
}

/* After the file's units changed G (take_units): the solver made again
 * with it, on every rank. Returns a CLI exit code. */
static int renew_solver(tfmm_solver **solver, const forces_options *o,
                        double G_before) {
  if (o->solver.cfg.G == G_before)
    return CLI_OK;
  tfmm_solver_destroy(*solver);
  *solver = NULL;
  return solver_cli_create_ranks(&o->solver.cfg, solver);
}

/* Reads, computes and writes with a ready solver (made again in the
 * file's units); returns an exit code. */
static int evaluate(tfmm_solver **solver, forces_options *o) {
  const double t0 = cli_seconds(), G_before = o->solver.cfg.G;
  bodyio_bodies b;
  units u;
  if (!body_input_read_units(o->in, o->types, &b, &u)) {
    bodyio_free(&b);
    return CLI_RUNTIME_ERROR;
  }
  const double t_read = cli_seconds() - t0;
  int rc = take_units(o, &u);
  if (rc == CLI_OK)
    rc = renew_solver(solver, o, G_before);
  output out;
  if (rc == CLI_OK && !o->hdf5 && !output_open(&out, o->out))
    rc = CLI_RUNTIME_ERROR;
  if (rc == CLI_OK) {
    if (!compute_and_write(*solver, o, &b, &u, o->hdf5 ? NULL : &out, t_read))
      rc = CLI_RUNTIME_ERROR;
    if (!o->hdf5)
      output_discard(&out);
  }
  bodyio_free(&b);
  return rc;
}

/* Rank 0's bodies in blocks to every rank (pos and mass), or 0 (agreed). */
static int scatter_bodies(const bodyio_bodies *b, size_t *n, double **pos,
                          double **mass) {
  uint64_t total = b->n;
  mpi_cli_bcast(&total, sizeof total);
  void *p = NULL, *m = NULL;
  size_t count = 0;
  const int ok =
      mpi_cli_scatter(b->pos, (size_t)total, 3 * sizeof(double), &p, &count) &&
      mpi_cli_scatter(b->mass, (size_t)total, sizeof(double), &m, &count);
  *n = count;
  *pos = p;
  *mass = m;
  return ok;
}

/* Every rank's forces back on rank 0 in input order (the blocks are in
 * rank order), or 0 (agreed). */
static int gather_forces(size_t n, const double *acc, const double *pot,
                         double **all_acc, double **all_pot) {
  void *a = NULL, *p = NULL;
  size_t total;
  const int ok = mpi_cli_gather(acc, n, 3 * sizeof(double), &a, &total) &&
                 mpi_cli_gather(pot, n, sizeof(double), &p, &total);
  *all_acc = a;
  *all_pot = p;
  return ok;
}

/* evaluate under mpirun: rank 0 reads and opens the output, hands every
 * rank a block, every rank computes its block's forces from all bodies,
 * and rank 0 gathers them and writes the file a single process writes.
 * Every rank returns the same code. */
static int evaluate_ranks(tfmm_solver **solver_p, forces_options *o) {
  const int root = mpi_cli_rank() == 0;
  const double G_before = o->solver.cfg.G;
  double t[4] = {0}; /* read, scatter, gather, write */
  double t0 = cli_seconds();
  bodyio_bodies b = {0};
  units u = {0};
  output out;
  int opened = 0, ok = 1;
  if (root) {
    ok = body_input_read_units(o->in, o->types, &b, &u);
    t[0] = cli_seconds() - t0;
    if (ok && !o->hdf5)
      ok = opened = output_open(&out, o->out);
  }
  ok = mpi_cli_agree(ok);
  /* Rank 0's file's units, and so its G, on every rank. */
  mpi_cli_bcast(&u, sizeof u);
  int rc = ok ? take_units(o, &u) : CLI_RUNTIME_ERROR;
  if (rc == CLI_OK)
    rc = renew_solver(solver_p, o, G_before);
  if (rc != CLI_OK) {
    if (opened)
      output_discard(&out);
    bodyio_free(&b);
    return rc;
  }
  tfmm_solver *solver = *solver_p;
  size_t n = 0;
  double *pos = NULL, *mass = NULL, *acc = NULL, *pot = NULL;
  double *all_acc = NULL, *all_pot = NULL;
  t0 = cli_seconds();
  ok = ok && scatter_bodies(&b, &n, &pos, &mass);
  t[1] = cli_seconds() - t0;
  if (ok) {
    acc = malloc(n > 0 ? 3 * n * sizeof(double) : 1);
    pot = malloc(n > 0 ? n * sizeof(double) : 1);
    if (acc == NULL || pot == NULL)
      cli_error("out of memory for %zu bodies", n);
    ok = mpi_cli_agree(acc != NULL && pot != NULL);
  }
  /* Every rank's status alike (the library agrees on it). --verify's
   * miss: the forces are gathered, written and the measurement shown,
   * then the failure, as one process does. */
  const tfmm_status st =
      ok ? tfmm_solver_compute(solver, n, pos, mass, acc, pot) : TFMM_OK;
  if (ok && st != TFMM_OK && st != TFMM_ERR_ACCURACY) {
    cli_error("%s", tfmm_solver_message(solver));
    ok = 0;
  }
  t0 = cli_seconds();
  ok = ok && gather_forces(n, acc, pot, &all_acc, &all_pot);
  t[2] = cli_seconds() - t0;
  if (ok && root) {
    t0 = cli_seconds();
    ok = o->hdf5 ? write_hdf5(o, &b, &u, all_acc, all_pot)
                 : write_forces(&out, &o->solver.cfg, b.n, all_acc, all_pot);
    t[3] = cli_seconds() - t0;
  }
  ok = mpi_cli_agree(ok);
  if (ok)
    print_stats_ranks(solver, &o->solver.cfg, b.n, t);
  if (ok && st == TFMM_ERR_ACCURACY) {
    cli_error("%s", tfmm_solver_message(solver));
    ok = 0;
  }
  if (opened)
    output_discard(&out);
  free(pos);
  free(mass);
  free(acc);
  free(pot);
  free(all_acc);
  free(all_pot);
  bodyio_free(&b);
  return ok ? CLI_OK : CLI_RUNTIME_ERROR;
}

int cmd_forces(int argc, char **argv) {
  forces_options o;
  const args_result parsed = parse_options(argc - 1, argv + 1, &o);
  /* Under mpirun a rank given other words (mpirun's A : B) stops every
   * rank, not only itself. */
  const int agreed = mpi_cli_agree(parsed == ARGS_OK);
  switch (parsed) {
  case ARGS_HELP:
    print_help(&o.solver.cfg);
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm forces --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    break;
  }
  if (!agreed)
    return CLI_USAGE_ERROR;
  /* The solver first: a configuration it refuses is reported before a
   * large file is read. */
  tfmm_solver *solver = NULL;
  int rc = solver_cli_create_ranks(&o.solver.cfg, &solver);
  if (rc != CLI_OK)
    return rc;
  rc = mpi_cli_on() ? evaluate_ranks(&solver, &o) : evaluate(&solver, &o);
  tfmm_solver_destroy(solver);
  return rc;
}
