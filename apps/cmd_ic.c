/* tilefmm ic MODEL: initial conditions written as a text body file or an
 * HDF5 snapshot. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "bodyio.h"
#include "cli.h"
#include "output.h"
#include "snapshot.h"

#include "tilefmm.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED 1

/* One model the command can write. */
typedef struct ic_model {
  const char *name;
  tfmm_status (*generate)(size_t n, uint64_t seed, double *pos, double *vel,
                          double *mass);
  unsigned min_n;    /* fewest bodies the model accepts */
  const char *title; /* one line, for 'tilefmm ic --help' */
  const char *about; /* the model's paragraph, for 'tilefmm ic NAME --help' */
} ic_model;

static const ic_model models[] = {
    {"plummer", tfmm_ic_plummer, 1,
     "Plummer sphere (Aarseth, Henon & Wielen 1974)",
     "An isotropic Plummer sphere (Aarseth, Henon & Wielen 1974) in\n"
     "N-body units: G = M = 1, E = -1/4, scale length 3 pi / 16, cut at\n"
     "the radius holding 99.9% of the mass; equal masses 1/N; centre of\n"
     "mass at rest at the origin."},
    {"hernquist", tfmm_ic_hernquist, 1,
     "Hernquist sphere, isotropic (Hernquist 1990)",
     "A Hernquist (1990) sphere, density ~ 1 / (r (r + a)^3), in N-body\n"
     "units: G = M = 1, scale length a = 1/3 so that E = -1/4, cut at the\n"
     "radius holding 99.9% of the mass (r = 666), velocities drawn from\n"
     "the isotropic distribution function (Hernquist eq. 17); equal\n"
     "masses 1/N; centre of mass at rest at the origin. The cut sample's\n"
     "E is -0.2507 on average, its 2K/|W| 0.999."},
    {"uniform", tfmm_ic_uniform, 1, "homogeneous sphere in virial equilibrium",
     "In N-body units (G = M = 1): a homogeneous sphere of radius 6/5\n"
     "(W = -3/(5R) = -1/2) with isotropic Gaussian velocities (each\n"
     "component the sum of 12 uniform deviates minus 6) scaled so that\n"
     "K = 1/4 exactly: virial equilibrium, E = -1/4; equal masses 1/N;\n"
     "centre of mass at rest at the origin. Not a stationary model: it\n"
     "relaxes within a few crossing times."},
    {"cold", tfmm_ic_cold, 1, "cold collapse: a homogeneous sphere at rest",
     "In N-body units (G = M = 1): the cold collapse, a homogeneous\n"
     "sphere of radius 12/5 at rest (E = W = -3/(5R) = -1/4), which falls\n"
     "to its centre in the free-fall time pi/2 sqrt(R^3/2) = 4.13; equal\n"
     "masses 1/N; centre of mass at the origin."},
    {"merger", tfmm_ic_merger, 2, "two Plummer spheres on a bound orbit",
     "In N-body units (G = M = 1): two Plummer spheres, each as 'tilefmm\n"
     "ic plummer' with half the mass and N/2 bodies (the first holds the\n"
     "odd one), velocities scaled by sqrt(1/2), whose centres follow the\n"
     "Kepler orbit of two point masses 1/2 with apocentre 4 and\n"
     "pericentre 1/2, starting at apocentre on the x axis and moving\n"
     "along y (orbit in the x-y plane); first pericentre at t = 10.6.\n"
     "Equal masses 1/N; centre of mass at rest at the origin; total\n"
     "E = -0.18. N >= 2."},
};
#define MODEL_COUNT (sizeof models / sizeof models[0])

static void print_ic_help(void) {
  printf("Usage: tilefmm ic MODEL [options]\n"
         "\n"
         "Writes initial conditions in N-body units (G = M = 1, E = -1/4),\n"
         "one body a line: 'x y z m vx vy vz', or as an HDF5 snapshot\n"
         "(--out FILE.hdf5) that 'tilefmm run --ic FILE' and h5py read.\n"
         "\n"
         "Models:\n");
  for (size_t k = 0; k < MODEL_COUNT; k++)
    printf("  %-10s %s\n", models[k].name, models[k].title);
  printf("\n"
         "See 'tilefmm ic MODEL --help' for a model's options.\n");
}

static void print_model_help(const ic_model *m) {
  printf("Usage: tilefmm ic %s --n N [--seed S] [--out FILE] "
         "[--format F]\n"
         "\n"
         "%s\n"
         "The same N and seed give the same file on every machine.\n"
         "\n"
         "Options:\n"
         "  --n N        number of bodies, >= %u (required)\n"
         "  --seed S     random seed, an integer in [0, 2^64) (default: %d)\n"
         "  --out FILE   where to write, replaced atomically\n"
         "               (default, or -: standard output)\n"
         "  --format F   text, or hdf5: a snapshot in the GADGET/SWIFT\n"
         "               layout 'tilefmm run' writes, bodies of PartType1\n"
         "               (default: hdf5 when FILE ends in .hdf5, .h5 or\n"
         "               .hdf, else text)\n"
         "  -h, --help   show this help\n"
         "\n"
         "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
         "error.\n",
         m->name, m->about, m->min_n, DEFAULT_SEED);
}

/* Few enough bodies that 3n doubles can be addressed, and at least one
 * (two for the merger). */
static int count_fits(uint64_t n) {
  return n <= SIZE_MAX / (3 * sizeof(double));
}
static int count_ok(const void *v) {
  const uint64_t n = *(const uint64_t *)v;
  return n >= 1 && count_fits(n);
}
static int count_two_ok(const void *v) {
  const uint64_t n = *(const uint64_t *)v;
  return n >= 2 && count_fits(n);
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

/* The bodies as a snapshot at time 0, IDs 1..n, the model and its
 * arguments in /Parameters. */
static int write_snapshot(const char *path, const ic_bodies *b,
                          const ic_model *m, uint64_t seed) {
  uint64_t *ids = malloc(b->n * sizeof *ids);
  if (ids == NULL) {
    cli_error("ic %s: out of memory for %zu bodies", m->name, b->n);
    return 0;
  }
  for (size_t i = 0; i < b->n; i++)
    ids[i] = (uint64_t)i + 1;
  char n_text[32], seed_text[32];
  snprintf(n_text, sizeof n_text, "%zu", b->n);
  snprintf(seed_text, sizeof seed_text, "%" PRIu64, seed);
  snapshot_attr params[] = {{"InitialConditions:model", (char *)m->name},
                            {"InitialConditions:n", n_text},
                            {"InitialConditions:seed", seed_text}};
  const snapshot s = {.n = b->n,
                      .pos = b->pos,
                      .vel = b->vel,
                      .mass = b->mass,
                      .ids = ids,
                      .params = params,
                      .nparams = sizeof params / sizeof params[0]};
  const int ok = snapshot_write(path, &s);
  free(ids);
  return ok;
}

static int run_model(const ic_model *m, uint64_t n64, uint64_t seed,
                     const char *out, int hdf5) {
  ic_bodies b = {(size_t)n64, malloc(3 * (size_t)n64 * sizeof(double)),
                 malloc(3 * (size_t)n64 * sizeof(double)),
                 malloc((size_t)n64 * sizeof(double))};
  int ok = b.pos != NULL && b.vel != NULL && b.mass != NULL;
  if (!ok)
    cli_error("ic %s: out of memory for %zu bodies", m->name, b.n);
  tfmm_status st = TFMM_OK;
  if (ok && (st = m->generate(b.n, seed, b.pos, b.vel, b.mass)) != TFMM_OK) {
    cli_error("ic %s: %s", m->name, tfmm_status_name(st));
    ok = 0;
  }
  if (ok) {
    char header[160];
    snprintf(header, sizeof header,
             "# tilefmm ic %s --n %zu --seed %" PRIu64
             " (N-body units: G = M = 1)\n",
             m->name, b.n, seed);
    ok =
        hdf5 ? write_snapshot(out, &b, m, seed) : write_bodies(out, &b, header);
  }
  free(b.pos);
  free(b.vel);
  free(b.mass);
  return ok ? CLI_OK : CLI_RUNTIME_ERROR;
}

static int format_ok(const void *v) {
  const char *f = *(const char *const *)v;
  return strcmp(f, "text") == 0 || strcmp(f, "hdf5") == 0;
}

static int cmd_ic_model(const ic_model *m, int argc, char **argv) {
  uint64_t n = 0, seed = DEFAULT_SEED;
  const char *out = NULL, *format = NULL;
  args_option opts[] = {
      {.name = "--n",
       .kind = ARGS_U64,
       .value = &n,
       .valid = m->min_n > 1 ? count_two_ok : count_ok,
       .expect = m->min_n > 1 ? "an integer >= 2" : "an integer >= 1",
       .required = 1},
      {.name = "--seed",
       .kind = ARGS_U64,
       .value = &seed,
       .expect = "an integer in [0, 2^64)"},
      {.name = "--out", .kind = ARGS_STRING, .value = &out},
      {.name = "--format",
       .kind = ARGS_STRING,
       .value = &format,
       .valid = format_ok,
       .expect = "text or hdf5"},
  };

  switch (args_parse(argc, argv, opts, sizeof opts / sizeof opts[0])) {
  case ARGS_HELP:
    print_model_help(m);
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm ic %s --help'.\n", m->name);
    return CLI_USAGE_ERROR;
  default:
    break;
  }
  const int hdf5 = format != NULL ? strcmp(format, "hdf5") == 0
                                  : out != NULL && output_hdf5_name(out);
  if (hdf5 && out != NULL && output_refuse_stdout("--out", out, "an HDF5 file"))
    return CLI_USAGE_ERROR;
  if (hdf5 && out == NULL) {
    cli_error("--format hdf5: an HDF5 file cannot go to standard output; "
              "give --out FILE");
    return CLI_USAGE_ERROR;
  }
  return run_model(m, n, seed, out, hdf5);
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
  for (size_t k = 0; k < MODEL_COUNT; k++)
    if (strcmp(model, models[k].name) == 0)
      return cmd_ic_model(&models[k], argc - 2, argv + 2);
  cli_error("ic: unknown model '%s' (known: plummer, hernquist, uniform, "
            "cold, merger)",
            model);
  return CLI_USAGE_ERROR;
}
