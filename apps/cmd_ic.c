/* tilefmm ic MODEL: initial conditions written as a body file. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "bodyio.h"
#include "cli.h"
#include "output.h"

#include "tilefmm.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED 1

static void print_ic_help(void) {
  printf("Usage: tilefmm ic MODEL [options]\n"
         "\n"
         "Writes initial conditions in N-body units (G = M = 1, E = -1/4),\n"
         "one body a line: 'x y z m vx vy vz'.\n"
         "\n"
         "Models:\n"
         "  plummer   Plummer sphere (Aarseth, Henon & Wielen 1974)\n"
         "\n"
         "See 'tilefmm ic MODEL --help' for a model's options.\n");
}

static void print_plummer_help(void) {
  printf("Usage: tilefmm ic plummer --n N [--seed S] [--out FILE]\n"
         "\n"
         "An isotropic Plummer sphere (Aarseth, Henon & Wielen 1974) in\n"
         "N-body units: G = M = 1, E = -1/4, scale length 3 pi / 16, cut at\n"
         "the radius holding 99.9%% of the mass; equal masses 1/N; centre of\n"
         "mass at rest at the origin. The same N and seed give the same\n"
         "file on every machine.\n"
         "\n"
         "Options:\n"
         "  --n N        number of bodies, >= 1 (required)\n"
         "  --seed S     random seed, an integer in [0, 2^64) (default: %d)\n"
         "  --out FILE   where to write, replaced atomically\n"
         "               (default: standard output)\n"
         "  -h, --help   show this help\n"
         "\n"
         "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
         "error.\n",
         DEFAULT_SEED);
}

/* At least one body, and few enough that 3n doubles can be addressed. */
static int count_ok(const void *v) {
  const uint64_t n = *(const uint64_t *)v;
  return n >= 1 && n <= SIZE_MAX / (3 * sizeof(double));
}

/* The bodies of one model. */
typedef struct ic_bodies {
  size_t n;
  double *pos, *vel, *mass;
} ic_bodies;

static int write_bodies(const char *path, const ic_bodies *b,
                        const char *header) {
  output out;
  if (!output_open(&out, path))
    return 0;
  fprintf(out.fp, "%s# x y z m vx vy vz\n", header);
  if (!bodyio_write_bodies(out.fp, b->n, b->pos, b->vel, b->mass)) {
    output_fail(&out);
    return 0;
  }
  return output_close(&out);
}

static int run_plummer(uint64_t n64, uint64_t seed, const char *out) {
  ic_bodies b = {(size_t)n64, malloc(3 * (size_t)n64 * sizeof(double)),
                 malloc(3 * (size_t)n64 * sizeof(double)),
                 malloc((size_t)n64 * sizeof(double))};
  int ok = b.pos != NULL && b.vel != NULL && b.mass != NULL;
  if (!ok)
    cli_error("ic plummer: out of memory for %zu bodies", b.n);
  tfmm_status st = TFMM_OK;
  if (ok &&
      (st = tfmm_ic_plummer(b.n, seed, b.pos, b.vel, b.mass)) != TFMM_OK) {
    cli_error("ic plummer: %s", tfmm_status_name(st));
    ok = 0;
  }
  if (ok) {
    char header[160];
    snprintf(header, sizeof header,
             "# tilefmm ic plummer --n %zu --seed %" PRIu64
             " (N-body units: G = M = 1, E = -1/4)\n",
             b.n, seed);
    ok = write_bodies(out, &b, header);
  }
  free(b.pos);
  free(b.vel);
  free(b.mass);
  return ok ? CLI_OK : CLI_RUNTIME_ERROR;
}

static int cmd_ic_plummer(int argc, char **argv) {
  uint64_t n = 0, seed = DEFAULT_SEED;
  const char *out = NULL;
  args_option opts[] = {
      {.name = "--n",
       .kind = ARGS_U64,
       .value = &n,
       .valid = count_ok,
       .expect = "an integer >= 1",
       .required = 1},
      {.name = "--seed",
       .kind = ARGS_U64,
       .value = &seed,
       .expect = "an integer in [0, 2^64)"},
      {.name = "--out", .kind = ARGS_STRING, .value = &out},
  };

  switch (args_parse(argc, argv, opts, sizeof opts / sizeof opts[0])) {
  case ARGS_HELP:
    print_plummer_help();
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm ic plummer --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    return run_plummer(n, seed, out);
  }
}

int cmd_ic(int argc, char **argv) {
  if (argc < 2) {
    cli_error("ic: missing MODEL (try 'tilefmm ic --help')");
    return CLI_USAGE_ERROR;
  }
  const char *model = argv[1];
  if (strcmp(model, "-h") == 0 || strcmp(model, "--help") == 0) {
    print_ic_help();
    return CLI_OK;
  }
  if (strcmp(model, "plummer") == 0)
    return cmd_ic_plummer(argc - 2, argv + 2);
  cli_error("ic: unknown model '%s' (known: plummer)", model);
  return CLI_USAGE_ERROR;
}
