/* tilefmm forces: accelerations and potentials of the bodies in a file. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "bodyio.h"
#include "cli.h"
#include "output.h"

#include "tilefmm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct forces_options {
  const char *in, *out, *method, *device;
  tfmm_config cfg;
} forces_options;

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_help(const tfmm_config *d) {
  printf(
      "Usage: tilefmm forces --in FILE [options]\n"
      "\n"
      "Computes the acceleration and potential of every body in FILE:\n"
      "  a_i   =  G sum_j m_j r_ij / (|r_ij|^2 + eps^2)^(3/2)\n"
      "  phi_i = -G sum_j m_j / (|r_ij|^2 + eps^2)^(1/2),  j != i\n"
      "FILE holds one body a line, 'x y z m' or 'x y z m vx vy vz'\n"
      "(velocities are ignored); '#' starts a comment. The output has one\n"
      "line 'ax ay az phi' per body, in input order. Timings go to stderr.\n"
      "\n"
      "Options:\n"
      "  --in FILE         bodies to read (required)\n"
      "  --out FILE        where to write, replaced atomically\n"
      "                    (default: standard output)\n"
      "  --method M        reference (double, compensated sums) or direct\n"
      "                    (single precision, tiled) (default: %s)\n"
      "  --device D        auto, cpu or gpu (default: %s)\n"
      "  --eps E           Plummer softening length, >= 0 (default: %g)\n"
      "  --G G             gravitational constant, > 0 (default: %g)\n"
      "  --threads N       OpenMP threads for CPU work, 0 for OpenMP's\n"
      "                    choice (default: %d)\n"
      "GPU kernel tunables (GPU Gems 3, section 31.4):\n"
      "  --gpu-tile P      bodies per shared-memory tile: 0 to choose from\n"
      "                    N, or a multiple of 32 in [32, 256] (default: %d)\n"
      "  --gpu-threads-per-body Q\n"
      "                    threads sharing one body: 0 to choose from N, or\n"
      "                    a power of two with P*Q <= 1024 (512 when R = 4)\n"
      "                    and P*P*Q <= 232448 (default: %d)\n"
      "  --gpu-unroll U    inner-loop unroll: 1, 2, 4, 8, 16 or 32\n"
      "                    (default: %d)\n"
      "  --gpu-bodies-per-thread R\n"
      "                    bodies per thread: 0 to choose from N, or 1, 2\n"
      "                    or 4 (default: %d)\n"
      "  -h, --help        show this help\n"
      "\n"
      "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
      "error.\n",
      tfmm_method_name(d->method), tfmm_device_name(d->device), d->eps, d->G,
      d->num_threads, d->gpu_tile, d->gpu_threads_per_body, d->gpu_unroll,
      d->gpu_bodies_per_thread);
}

/* Rules of the flags: the library checks the same, but here the message
 * can name the flag. */
static int non_negative(const void *v) { return *(const double *)v >= 0; }
static int positive(const void *v) { return *(const double *)v > 0; }
static int count_or_zero(const void *v) { return *(const int *)v >= 0; }
static int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
static int tile_ok(const void *v) {
  const int p = *(const int *)v;
  return p == 0 || (p >= 32 && p <= 256 && p % 32 == 0);
}
static int threads_per_body_ok(const void *v) {
  const int q = *(const int *)v;
  return q == 0 || (is_pow2(q) && q <= 1024);
}
static int unroll_ok(const void *v) {
  const int u = *(const int *)v;
  return is_pow2(u) && u <= 32;
}
static int bodies_per_thread_ok(const void *v) {
  const int r = *(const int *)v;
  return r == 0 || r == 1 || r == 2 || r == 4;
}
static int method_ok(const void *v) {
  tfmm_method m;
  return tfmm_method_parse(*(const char *const *)v, &m) == TFMM_OK;
}
static int device_ok(const void *v) {
  tfmm_device d;
  return tfmm_device_parse(*(const char *const *)v, &d) == TFMM_OK;
}

static args_result parse_options(int argc, char **argv, forces_options *o) {
  memset(o, 0, sizeof *o);
  tfmm_config *c = &o->cfg;
  tfmm_config_defaults(c);
  args_option opts[] = {
      {.name = "--in", .kind = ARGS_STRING, .value = &o->in, .required = 1},
      {.name = "--out", .kind = ARGS_STRING, .value = &o->out},
      {.name = "--method",
       .kind = ARGS_STRING,
       .value = &o->method,
       .valid = method_ok,
       .expect = "reference or direct"},
      {.name = "--device",
       .kind = ARGS_STRING,
       .value = &o->device,
       .valid = device_ok,
       .expect = "auto, cpu or gpu"},
      {.name = "--eps",
       .kind = ARGS_DOUBLE,
       .value = &c->eps,
       .valid = non_negative,
       .expect = "a number >= 0"},
      {.name = "--G",
       .kind = ARGS_DOUBLE,
       .value = &c->G,
       .valid = positive,
       .expect = "a number > 0"},
      {.name = "--threads",
       .kind = ARGS_INT,
       .value = &c->num_threads,
       .valid = count_or_zero,
       .expect = "an integer >= 0"},
      {.name = "--gpu-tile",
       .kind = ARGS_INT,
       .value = &c->gpu_tile,
       .valid = tile_ok,
       .expect = "0 or a multiple of 32 in [32, 256]"},
      {.name = "--gpu-threads-per-body",
       .kind = ARGS_INT,
       .value = &c->gpu_threads_per_body,
       .valid = threads_per_body_ok,
       .expect = "0 or a power of two <= 1024"},
      {.name = "--gpu-unroll",
       .kind = ARGS_INT,
       .value = &c->gpu_unroll,
       .valid = unroll_ok,
       .expect = "1, 2, 4, 8, 16 or 32"},
      {.name = "--gpu-bodies-per-thread",
       .kind = ARGS_INT,
       .value = &c->gpu_bodies_per_thread,
       .valid = bodies_per_thread_ok,
       .expect = "0, 1, 2 or 4"},
  };

  const args_result r =
      args_parse(argc, argv, opts, sizeof opts / sizeof opts[0]);
  if (r != ARGS_OK)
    return r;
  /* Rules that join several tunables (p * q per block, which depends on
   * r) are the library's: tfmm_solver_create names the fields. */
  /* Both words were checked by method_ok and device_ok. */
  if (o->method != NULL)
    tfmm_method_parse(o->method, &c->method);
  if (o->device != NULL)
    tfmm_device_parse(o->device, &c->device);
  return ARGS_OK;
}

static void print_stats(const tfmm_stats *s, double t_read, double t_write) {
  fprintf(stderr, "tilefmm forces: %zu bodies, method %s, device %s (%s)\n",
          s->n, tfmm_method_name(s->method), tfmm_device_name(s->device),
          s->device_name);
  fprintf(stderr, "  %-14s %12.6f s\n", "read", t_read);
  for (int p = 0; p < TFMM_PHASE_COUNT; p++)
    fprintf(stderr, "  %-14s %12.6f s\n", tfmm_phase_name((tfmm_phase)p),
            s->time[p]);
  fprintf(stderr, "  %-14s %12.6f s\n", "total", s->time_total);
  fprintf(stderr, "  %-14s %12.6f s\n", "write", t_write);
  const double rate = s->time_total > 0 ? s->interactions / s->time_total : 0;
  fprintf(stderr, "  %.6g interactions, %.6g interactions/s\n", s->interactions,
          rate);
  if (s->device == TFMM_DEVICE_GPU)
    fprintf(stderr,
            "  gpu kernel: tile %d, threads/body %d, unroll %d, "
            "bodies/thread %d\n",
            s->gpu_tile, s->gpu_threads_per_body, s->gpu_unroll,
            s->gpu_bodies_per_thread);
}

/* Creates the solver first, so that a configuration it refuses is
 * reported before a large file is read. A refused configuration came from
 * the flags: a usage error. Returns an exit code. */
static int create_solver(const tfmm_config *cfg, tfmm_solver **solver) {
  const tfmm_status st = tfmm_solver_create(solver, cfg);
  if (st == TFMM_OK)
    return CLI_OK;
  cli_error("%s", *solver != NULL ? tfmm_solver_message(*solver)
                                  : tfmm_status_name(st));
  tfmm_solver_destroy(*solver);
  *solver = NULL;
  return st == TFMM_ERR_INVALID_ARGUMENT ? CLI_USAGE_ERROR : CLI_RUNTIME_ERROR;
}

/* Writes the header and one line per body, then commits. */
static int write_forces(output *out, const tfmm_config *cfg, size_t n,
                        const double *acc, const double *pot) {
  fprintf(out->fp, "# tilefmm forces: ax ay az phi (G = %.17g, eps = %.17g)\n",
          cfg->G, cfg->eps);
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
    const double t0 = wall_seconds();
    ok = write_forces(out, &o->cfg, b->n, acc, pot);
    if (ok)
      print_stats(tfmm_solver_stats(solver), t_read, wall_seconds() - t0);
  }
  free(acc);
  free(pot);
  return ok;
}

/* Reads, computes and writes with a ready solver; returns an exit code. */
static int evaluate(tfmm_solver *solver, const forces_options *o) {
  const double t0 = wall_seconds();
  bodyio_bodies b;
  int ok = bodyio_read(o->in, &b);
  const double t_read = wall_seconds() - t0;
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
    print_help(&o.cfg);
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm forces --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    break;
  }
  tfmm_solver *solver = NULL;
  int rc = create_solver(&o.cfg, &solver);
  if (rc != CLI_OK)
    return rc;
  rc = evaluate(solver, &o);
  tfmm_solver_destroy(solver);
  return rc;
}
