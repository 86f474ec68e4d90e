/* tilefmm render: the surface density of a snapshot as a PNG picture. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "atomic_file.h"
#include "body_input.h"
#include "bodyio.h"
#include "cli.h"
#include "output.h"
#include "render_figure.h"
#include "snapshot.h"

#include "tilefmm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SIZE 512
#define DEFAULT_DECADES 4.0
#define MIN_SIZE 16
#define MAX_SIZE 8192
#define MAX_DECADES 20.0

typedef struct render_options {
  const char *snapshot, *out, *axis_word, *extent_word, *centre_word;
  const char *types; /* --types: the particle types drawn, or NULL */
  const char *style; /* --style: figure or bare */
  int size;
  double decades;
  int axis;         /* 0, 1, 2 */
  double extent;    /* 0: automatic */
  double centre[3]; /* when centre_word */
} render_options;

static void print_help(void) {
  printf("Usage: tilefmm render SNAPSHOT --out FILE.png [options]\n"
         "\n"
         "Draws the surface density of the bodies in SNAPSHOT (HDF5 in\n"
         "the GADGET/SWIFT layout, Tipsy, GADGET-2 binary format 1 or\n"
         "2, or a text body file: docs/formats.md) seen along a\n"
         "coordinate axis: masses are shared among\n"
         "the pixels by cloud-in-cell, so that the picture holds exactly\n"
         "the mass in view, and divided by the pixel area. Brightness is\n"
         "logarithmic over the top decades below the densest pixel, on the\n"
         "'inferno' colour map; pixels with no mass are black. The other\n"
         "two axes are drawn right and up in right-handed order: along z,\n"
         "x right and y up; along x, y right and z up; along y, z right\n"
         "and x up. The picture is a figure drawn by gnuplot: axes in\n"
         "the snapshot's length unit (\"x [kpc]\", or \"x [N-body\n"
         "length]\"), its time in the title, and a colour bar of the\n"
         "surface density in its units; without gnuplot, or with\n"
         "--style bare, the bare map of one pixel per cell. A tEXt chunk\n"
         "'Description' records the snapshot, the view and the range of\n"
         "densities ('Labels' the figure's labels).\n"
         "\n"
         "Options:\n"
         "  --out FILE.png     where to write, replaced atomically "
         "(required)\n"
         "  --axis x|y|z       axis to look along (default: z)\n"
         "  --extent E|auto    full width of the square view, > 0, in\n"
         "                     length units; auto: twice the projected\n"
         "                     radius around the centre holding %g%% of the\n"
         "                     mass, so that escapers do not shrink the\n"
         "                     picture (default: auto)\n"
         "  --centre X,Y,Z     centre of the view (default: the centre of\n"
         "                     mass of all bodies)\n"
         "  --size PX          pixels per side, in [%d, %d] (default: %d)\n"
         "  --decades D        decades of density shown, in (0, %g]\n"
         "                     (default: %g)\n"
         "  --style S          figure (axes, time, colour bar; needs\n"
         "                     gnuplot) or bare (the map alone, --size\n"
         "                     pixels square) (default: figure)\n"
         "  --types LIST       the particle types drawn: 0,1,4 or all\n"
         "                     (default: the file's one type; gas or\n"
         "                     several types need it)\n"
         "  -h, --help         show this help\n"
         "\n"
         "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
         "error.\n",
         100.0 * RENDER_AUTO_FRACTION, MIN_SIZE, MAX_SIZE, DEFAULT_SIZE,
         MAX_DECADES, DEFAULT_DECADES);
}

/* ---- flags ------------------------------------------------------------- */

static int axis_index(const char *word) {
  static const char *const names[] = {"x", "y", "z"};
  for (int a = 0; a < 3; a++)
    if (strcmp(word, names[a]) == 0)
      return a;
  return -1;
}

static int style_ok(const void *v) {
  const char *s = *(const char *const *)v;
  return strcmp(s, "figure") == 0 || strcmp(s, "bare") == 0;
}

static int axis_ok(const void *v) {
  return axis_index(*(const char *const *)v) >= 0;
}

/* A finite number filling [word, end), as args.c wants it: no leading
 * space, no "nan" or "inf". Returns where it stopped, or NULL. */
static const char *parse_number(const char *word, double *out) {
  if (*word == '\0' || strchr(" \t\n\v\f\r,", *word) != NULL)
    return NULL;
  char *end;
  *out = strtod(word, &end);
  return end != word && isfinite(*out) ? end : NULL;
}

static int parse_extent(const char *word, double *extent) {
  if (strcmp(word, "auto") == 0) {
    *extent = 0.0;
    return 1;
  }
  const char *end = parse_number(word, extent);
  return end != NULL && *end == '\0' && *extent > 0.0;
}

static int extent_ok(const void *v) {
  double e;
  return parse_extent(*(const char *const *)v, &e);
}

/* "X,Y,Z": three finite numbers and two commas, nothing else. */
static int parse_centre(const char *word, double c[3]) {
  const char *p = word;
  for (int d = 0; d < 3; d++) {
    p = parse_number(p, &c[d]);
    if (p == NULL || *p != (d < 2 ? ',' : '\0'))
      return 0;
    p += d < 2;
  }
  return 1;
}

static int centre_ok(const void *v) {
  double c[3];
  return parse_centre(*(const char *const *)v, c);
}

static int size_ok(const void *v) {
  const int s = *(const int *)v;
  return s >= MIN_SIZE && s <= MAX_SIZE;
}

static int decades_ok(const void *v) {
  const double d = *(const double *)v;
  return d > 0.0 && d <= MAX_DECADES;
}

/* 1 when arg is a flag that takes the next word as its value. */
static int takes_next(const char *arg, const args_option *opts, size_t n) {
  if (arg[0] != '-' || strchr(arg, '=') != NULL)
    return 0;
  for (size_t k = 0; k < n; k++)
    if (strcmp(arg, opts[k].name) == 0)
      return 1;
  return 0;
}

/* Takes SNAPSHOT out of argv: the first word that is neither a flag nor a
 * flag's value ("-", standard input, is such a word). The rest go to flags,
 * where args_parse refuses a second such word. */
static const char *take_positional(int argc, char **argv,
                                   const args_option *opts, size_t n,
                                   char **flags, int *nflags) {
  const char *positional = NULL;
  *nflags = 0;
  for (int i = 0; i < argc; i++) {
    if (positional == NULL &&
        (argv[i][0] != '-' || strcmp(argv[i], BODY_INPUT_STDIN) == 0)) {
      positional = argv[i];
      continue;
    }
    flags[(*nflags)++] = argv[i];
    if (takes_next(argv[i], opts, n) && i + 1 < argc)
      flags[(*nflags)++] = argv[++i];
  }
  return positional;
}

static args_result parse_options(int argc, char **argv, render_options *o) {
  memset(o, 0, sizeof *o);
  o->axis_word = "z";
  o->style = "figure";
  o->extent_word = "auto";
  o->size = DEFAULT_SIZE;
  o->decades = DEFAULT_DECADES;
  args_option opts[] = {
      {.name = "--out", .kind = ARGS_STRING, .value = &o->out, .required = 1},
      {.name = "--axis",
       .kind = ARGS_STRING,
       .value = &o->axis_word,
       .valid = axis_ok,
       .expect = "x, y or z"},
      {.name = "--extent",
       .kind = ARGS_STRING,
       .value = &o->extent_word,
       .valid = extent_ok,
       .expect = "a number > 0 or 'auto'"},
      {.name = "--centre",
       .kind = ARGS_STRING,
       .value = &o->centre_word,
       .valid = centre_ok,
       .expect = "three finite numbers X,Y,Z"},
      {.name = "--size",
       .kind = ARGS_INT,
       .value = &o->size,
       .valid = size_ok,
       .expect = "an integer in [16, 8192]"},
      {.name = "--decades",
       .kind = ARGS_DOUBLE,
       .value = &o->decades,
       .valid = decades_ok,
       .expect = "a number in (0, 20]"},
      {.name = "--style",
       .kind = ARGS_STRING,
       .value = &o->style,
       .valid = style_ok,
       .expect = "figure or bare"},
      {.name = BODY_INPUT_TYPES_FLAG,
       .kind = ARGS_STRING,
       .value = &o->types,
       .valid = body_input_types_ok,
       .expect = BODY_INPUT_TYPES_EXPECT},
  };
  const size_t n = sizeof opts / sizeof opts[0];
  char **flags = malloc(((size_t)argc + 1) * sizeof *flags);
  if (flags == NULL) {
    cli_error("render: out of memory");
    return ARGS_ERROR;
  }
  int nflags;
  o->snapshot = take_positional(argc, argv, opts, n, flags, &nflags);
  args_result r = args_parse(nflags, flags, opts, n);
  free(flags);
  if (r == ARGS_OK && o->snapshot == NULL) {
    cli_error("render: missing SNAPSHOT");
    r = ARGS_ERROR;
  }
  if (r == ARGS_OK && output_refuse_stdout("--out", o->out, "a PNG picture"))
    r = ARGS_ERROR;
  if (r == ARGS_OK) {
    o->axis = axis_index(o->axis_word);
    parse_extent(o->extent_word, &o->extent);
    if (o->centre_word != NULL)
      parse_centre(o->centre_word, o->centre);
  }
  return r;
}

/* ---- the picture ------------------------------------------------------- */

/* A text body file, read as forces and run --ic read it, as a snapshot of
 * bodies alone (time 0, no units): every command that reads bodies reads
 * every format (docs/formats.md). */
static int read_text(const char *path, const char *types, snapshot *s) {
  memset(s, 0, sizeof *s);
  bodyio_bodies b;
  if (!body_input_read(path, types, &b)) {
    bodyio_free(&b);
    return 0;
  }
  s->n = b.n;
  s->pos = b.pos;
  s->vel = b.vel;
  s->mass = b.mass;
  return 1;
}

/* Draws s as o says, and says what it drew. */
static int draw(const render_options *o, const snapshot *s) {
  const render_spec spec = {.axis = o->axis,
                            .centre = o->centre_word != NULL ? o->centre : NULL,
                            .extent = o->extent,
                            .size = o->size,
                            .decades = o->decades};
  char software[64];
  snprintf(software, sizeof software, "tilefmm %s render", tfmm_version());
  const render_figure_info info = {.source = o->snapshot,
                                   .software = software,
                                   .units = &s->units,
                                   .time = s->time,
                                   .bare = strcmp(o->style, "bare") == 0};
  render_result r;
  if (!render_figure_write(o->out, &info, s->n, s->pos, s->mass, &spec, &r,
                           NULL))
    return 0;
  fprintf(stderr,
          "tilefmm render: %zu of %zu bodies in view, extent %.6g, "
          "densities %.4g to %.4g -> %s\n",
          r.in_view, s->n, r.view.extent, r.sigma_max * pow(10.0, -o->decades),
          r.sigma_max, o->out);
  return 1;
}

int cmd_render(int argc, char **argv) {
  render_options o;
  switch (parse_options(argc - 1, argv + 1, &o)) {
  case ARGS_HELP:
    print_help();
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm render --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    break;
  }
  o.snapshot = body_input_path(o.snapshot); /* '< FILE': /dev/stdin */
  if (strcmp(o.snapshot, BODY_INPUT_STDIN) == 0) {
    /* The library refuses any other pipe by its path (tfmm_snapshot_read). */
    cli_error("-: standard input cannot carry a snapshot, which is read by "
              "seeking in it; save it to a file and name that file");
    return CLI_RUNTIME_ERROR;
  }
  snapshot s;
  atomic_file_protect(o.snapshot);         /* --out must not replace it */
  uint64_t types = SNAPSHOT_TYPES_DEFAULT; /* --types was checked */
  if (o.types != NULL)
    body_input_parse_types(o.types, &types);
  const body_input_kind kind = body_input_kind_of(o.snapshot);
  int ok = kind == BODY_INPUT_TEXT
               ? read_text(o.snapshot, o.types, &s)
               : body_input_read_snapshot(o.snapshot, kind, types,
                                          BODY_INPUT_TYPES_FLAG, &s);
  ok = ok && draw(&o, &s);
  snapshot_free(&s);
  return ok ? CLI_OK : CLI_RUNTIME_ERROR;
}
