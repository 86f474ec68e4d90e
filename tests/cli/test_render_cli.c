/* tilefmm render run as a child: a snapshot written here with
 * snapshot_write, the picture read back with libpng and checked for its
 * size, its bright and dark places and its tEXt chunks; each bad input
 * refused with its exit code and a message naming the cause, leaving an
 * existing output file untouched. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot.h"

#include <criterion/criterion.h>

#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(render, .init = scratch_make, .fini = scratch_remove);

/* A clump: n/2 bodies in the cube of side 0.1 around (0.5, 0.5, 0.5); the
 * other n/2 spread over [0.02, 0.98)^3. Seen along any axis, a view
 * centred on the origin with extent 2 has mass only in its top right
 * quarter, and most of it around (0.5, 0.5). */
static void write_snapshot_in(const char *name, size_t n,
                              const units *units_of) {
  snapshot s;
  memset(&s, 0, sizeof s);
  s.n = n;
  s.time = 0.25;
  if (units_of != NULL)
    s.units = *units_of;
  s.pos = malloc(3 * n * sizeof *s.pos);
  s.vel = calloc(3 * n, sizeof *s.vel);
  s.mass = malloc(n * sizeof *s.mass);
  s.ids = malloc(n * sizeof *s.ids);
  cr_assert(s.pos && s.vel && s.mass && s.ids);
  uint64_t state = 12345;
  for (size_t k = 0; k < n; k++) {
    for (int d = 0; d < 3; d++) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      const double u = (double)(state >> 11) * 0x1p-53;
      s.pos[3 * k + d] = k % 2 == 0 ? 0.45 + 0.1 * u : 0.02 + 0.96 * u;
    }
    s.mass[k] = 1.0 / (double)n;
    s.ids[k] = k + 1;
  }
  cr_assert(snapshot_write(sp(name), &s), "cannot write %s", name);
  free(s.pos);
  free(s.vel);
  free(s.mass);
  free(s.ids);
}

static void write_snapshot(const char *name, size_t n) {
  write_snapshot_in(name, n, NULL);
}

/* A PNG read back: RGB rows and its tEXt chunks. */
typedef struct picture {
  unsigned width, height;
  int depth, colour;
  unsigned char *rgb; /* width * height * 3 */
  char description[4096], software[256], labels[1024];
} picture;

static picture *read_png(const char *name) {
  FILE *fp = fopen(sp(name), "rb");
  cr_assert_not_null(fp, "%s was not written", name);
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct(png);
  cr_assert(png && info);
  if (setjmp(png_jmpbuf(png)))
    cr_assert_fail("%s is not a valid PNG", name);
  png_init_io(png, fp);
  png_read_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
  picture *p = calloc(1, sizeof *p);
  p->width = png_get_image_width(png, info);
  p->height = png_get_image_height(png, info);
  p->depth = png_get_bit_depth(png, info);
  p->colour = png_get_color_type(png, info);
  cr_assert_eq(p->depth, 8);
  cr_assert_eq(p->colour, PNG_COLOR_TYPE_RGB);
  p->rgb = malloc((size_t)p->width * p->height * 3);
  png_bytepp rows = png_get_rows(png, info);
  for (unsigned y = 0; y < p->height; y++)
    memcpy(p->rgb + (size_t)y * p->width * 3, rows[y], (size_t)p->width * 3);
  png_textp text;
  int ntext = 0;
  png_get_text(png, info, &text, &ntext);
  for (int k = 0; k < ntext; k++) {
    if (strcmp(text[k].key, "Description") == 0)
      snprintf(p->description, sizeof p->description, "%s", text[k].text);
    if (strcmp(text[k].key, "Software") == 0)
      snprintf(p->software, sizeof p->software, "%s", text[k].text);
    if (strcmp(text[k].key, "Labels") == 0)
      snprintf(p->labels, sizeof p->labels, "%s", text[k].text);
  }
  png_destroy_read_struct(&png, &info, NULL);
  fclose(fp);
  return p;
}

static void picture_free(picture *p) {
  free(p->rgb);
  free(p);
}

/* The summed brightness of the pixels in [x0, x1) x [y0, y1). */
static long brightness(const picture *p, unsigned x0, unsigned x1, unsigned y0,
                       unsigned y1) {
  long sum = 0;
  for (unsigned y = y0; y < y1; y++)
    for (unsigned x = x0; x < x1; x++)
      for (int c = 0; c < 3; c++)
        sum += p->rgb[((size_t)y * p->width + x) * 3 + c];
  return sum;
}

static void assert_has(const char *text, const char *needle) {
  cr_assert_not_null(strstr(text, needle), "'%s' lacks '%s'", text, needle);
}

static int have_gnuplot(void) {
  return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

Test(render, listed_in_the_usage) {
  cr_assert_eq(RUN("--help"), 0);
  assert_stdout_has("render");
}

Test(render, help_documents_every_flag) {
  cr_assert_eq(RUN("render", "--help"), 0);
  const char *flags[] = {"SNAPSHOT", "--out",  "--axis",    "--extent",
                         "--centre", "--size", "--decades", "--style"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    assert_stdout_has(flags[k]);
  assert_stdout_has("default: 512");
  assert_stdout_has("default: 4");
  assert_stdout_has("default: the centre of");
}

/* Along each axis the clump is at the top right, and the bottom left
 * quarter, where there is no mass, is black. */
Test(render, dense_region_is_bright) {
  write_snapshot("snap.h5", 4000);
  const char *axes[] = {"x", "y", "z"};
  for (int a = 0; a < 3; a++) {
    cr_assert_eq(RUN("render", sp("snap.h5"), "--out", sp("pic.png"), "--axis",
                     axes[a], "--extent", "2", "--centre", "0,0,0", "--size",
                     "64", "--style", "bare"),
                 0, "axis %s", axes[a]);
    picture *p = read_png("pic.png");
    cr_assert(p->width == 64 && p->height == 64);
    cr_assert_eq(brightness(p, 0, 32, 32, 64), 0, "bottom left not black");
    cr_assert_eq(brightness(p, 0, 32, 0, 32), 0, "top left not black");
    const long clump = brightness(p, 46, 50, 14, 18);
    const long spread = brightness(p, 36, 40, 24, 28);
    cr_assert_gt(clump, spread, "axis %s: clump %ld, spread %ld", axes[a],
                 clump, spread);
    cr_assert_gt(spread, 0);
    /* The densest pixel is inferno's top colour. */
    int top = 0;
    for (size_t i = 0; i < 64 * 64; i++)
      top |= p->rgb[3 * i] == 252 && p->rgb[3 * i + 1] == 255 &&
             p->rgb[3 * i + 2] == 164;
    cr_assert(top, "axis %s: no pixel at the top of the colour map", axes[a]);
    char want[64];
    snprintf(want, sizeof want, "projected along %s", axes[a]);
    assert_has(p->description, want);
    picture_free(p);
  }
  assert_no_temporaries();
}

Test(render, text_chunk_describes_the_picture) {
  write_snapshot("snap.h5", 1000);
  cr_assert_eq(RUN("render", sp("snap.h5"), "--out", sp("pic.png"), "--axis",
                   "y", "--extent=1.5", "--centre=0.5,0.5,0.5", "--decades",
                   "3", "--size", "40", "--style=bare"),
               0);
  picture *p = read_png("pic.png");
  cr_assert(p->width == 40 && p->height == 40);
  assert_has(p->description, sp("snap.h5"));
  assert_has(p->description, "1000 bodies");
  assert_has(p->description, "time 0.25");
  assert_has(p->description, "projected along y (right z, up x)");
  assert_has(p->description, "centre (0.5, 0.5, 0.5)");
  assert_has(p->description, "extent 1.5");
  assert_has(p->description, "40 x 40 pixels");
  assert_has(p->description, "1000 bodies of mass 1 in view");
  assert_has(p->description, "over 3 decades");
  assert_has(p->software, "tilefmm");
  picture_free(p);
  assert_stderr_has("1000 of 1000 bodies in view");
}

/* Defaults: the automatic view around the centre of mass, 512 pixels. */
Test(render, defaults) {
  write_snapshot("snap.h5", 500);
  cr_assert_eq(
      RUN("render", "--out", sp("pic.png"), sp("snap.h5"), "--style", "bare"),
      0);
  picture *p = read_png("pic.png");
  cr_assert(p->width == 512 && p->height == 512);
  assert_has(p->description, "projected along z");
  assert_has(p->description, "over 4 decades");
  cr_assert_gt(brightness(p, 0, 512, 0, 512), 0);
  picture_free(p);
}

Test(render, nothing_in_view_writes_black_and_warns) {
  write_snapshot("snap.h5", 100);
  write_text("pic.png", PRECIOUS);
  cr_assert_eq(RUN("render", sp("snap.h5"), "--out", sp("pic.png"), "--centre",
                   "100,100,100", "--extent", "1", "--size", "16", "--style",
                   "bare"),
               0);
  assert_stderr_has("warning");
  assert_stderr_has("no bodies");
  picture *p = read_png("pic.png");
  cr_assert(p->width == 16 && p->height == 16);
  cr_assert_eq(brightness(p, 0, 16, 0, 16), 0);
  picture_free(p);
}

/* render with the flags in extra, writing out.txt, must fail. */
static void expect_bad(const char *snap, const char *const extra[], int code,
                       const char *needle, const char *needle2) {
  remove(sp("out.txt")); /* left by the previous case */
  const char *args[16] = {"render"};
  int n = 1;
  if (snap != NULL)
    args[n++] = sp(snap);
  args[n++] = "--out";
  args[n++] = sp("out.txt");
  for (int k = 0; extra[k] != NULL; k++)
    args[n++] = extra[k];
  args[n] = NULL;
  expect_failure(args, code, needle, needle2);
}

#define BAD(snap, code, needle, needle2, ...)                                  \
  expect_bad(snap, (const char *const[]){__VA_ARGS__, NULL}, code, needle,     \
             needle2)

Test(render, bad_flags_are_usage_errors) {
  write_snapshot("snap.h5", 100);
  BAD("snap.h5", 2, "--axis", "'w'", "--axis", "w");
  BAD("snap.h5", 2, "--axis", "x, y or z", "--axis", "X");
  BAD("snap.h5", 2, "--extent", "'0'", "--extent", "0");
  BAD("snap.h5", 2, "--extent", "> 0", "--extent", "-1");
  BAD("snap.h5", 2, "--extent", "'nan'", "--extent", "nan");
  BAD("snap.h5", 2, "--extent", "'autox'", "--extent", "autox");
  BAD("snap.h5", 2, "--size", "'15'", "--size", "15");
  BAD("snap.h5", 2, "--size", "[16, 8192]", "--size", "8193");
  BAD("snap.h5", 2, "--decades", "'0'", "--decades", "0");
  BAD("snap.h5", 2, "--decades", "(0, 20]", "--decades", "20.5");
  BAD("snap.h5", 2, "--centre", "'1,2'", "--centre", "1,2");
  BAD("snap.h5", 2, "--centre", "X,Y,Z", "--centre", "1,2,3,4");
  BAD("snap.h5", 2, "--centre", "'1, 2,3'", "--centre", "1, 2,3");
  BAD("snap.h5", 2, "--style", "figure or bare", "--style", "pretty");
  BAD("snap.h5", 2, "unknown flag '--zoom'", NULL, "--zoom", "2");
  BAD("snap.h5", 2, "unexpected argument", "second.h5", "second.h5");
}

Test(render, missing_arguments) {
  write_snapshot("snap.h5", 100);
  BAD(NULL, 2, "missing SNAPSHOT", NULL, "--size", "32");
  cr_assert_eq(RUN("render", sp("snap.h5")), 2);
  assert_stderr_has("--out");
  cr_assert_eq(RUN("render"), 2);
}

Test(render, bad_snapshots_are_runtime_errors) {
  BAD("absent.h5", 1, "absent.h5", "No such file", "--size", "32");
  write_text("text.h5", "0 0 0 one\n");
  BAD("text.h5", 1, "text.h5:1", "'one' in column 4", "--size", "32");
  write_file("empty.h5", "", 0);
  BAD("empty.h5", 1, "empty.h5", "no bodies", "--size", "32");
  write_text("typed.txt", "0 0 0 1\n");
  BAD("typed.txt", 1, "typed.txt", "no particle types", "--types", "1");
}

/* A text body file is drawn as the same bodies in a snapshot are (every
 * command reads every format, docs/formats.md; the fuzz harness checks
 * render against an independent reading written as text): the same
 * pixels, the tEXt chunk naming each file. */
Test(render, text_bodies_draw_as_the_snapshot_does) {
  write_snapshot("snap.h5", 300);
  snapshot s;
  cr_assert(snapshot_read(sp("snap.h5"), &s));
  FILE *fp = fopen(sp("bodies.txt"), "w");
  cr_assert_not_null(fp);
  for (size_t k = 0; k < s.n; k++)
    fprintf(fp, "%.17g %.17g %.17g %.17g\n", s.pos[3 * k], s.pos[3 * k + 1],
            s.pos[3 * k + 2], s.mass[k]);
  cr_assert_eq(fclose(fp), 0);
  snapshot_free(&s);
  cr_assert_eq(RUN("render", sp("snap.h5"), "--out", sp("a.png"), "--size",
                   "48", "--axis", "x", "--style", "bare"),
               0);
  cr_assert_eq(RUN("render", sp("bodies.txt"), "--out", sp("b.png"), "--size",
                   "48", "--axis", "x", "--style", "bare"),
               0);
  assert_stderr_has("300 of 300 bodies in view");
  picture *a = read_png("a.png"), *b = read_png("b.png");
  cr_assert(a->width == 48 && b->width == 48 && b->height == 48);
  cr_assert_eq(memcmp(a->rgb, b->rgb, 48 * 48 * 3), 0,
               "the text file's picture differs from the snapshot's");
  cr_assert_gt(brightness(b, 0, 48, 0, 48), 0);
  assert_has(b->description, sp("bodies.txt"));
  assert_has(b->description, "300 bodies");
  picture_free(a);
  picture_free(b);
}

Test(render, unwritable_output) {
  write_snapshot("snap.h5", 100);
  cr_assert_eq(RUN("render", sp("snap.h5"), "--out", sp("no/such/dir.png")), 1);
  assert_stderr_has("no/such/dir.png");
  assert_no_temporaries();
}

/* The whole of a file in the scratch directory; *len its size. */
static unsigned char *whole_file(const char *name, size_t *len) {
  FILE *f = fopen(sp(name), "rb");
  cr_assert_not_null(f, "%s missing", name);
  unsigned char *b = NULL;
  size_t cap = 0;
  *len = 0;
  for (;;) {
    if (*len == cap) {
      cap = cap ? 2 * cap : 65536;
      b = realloc(b, cap);
      cr_assert_not_null(b);
    }
    size_t got = fread(b + *len, 1, cap - *len, f);
    *len += got;
    if (got == 0)
      break;
  }
  fclose(f);
  return b;
}

/* The picture never replaces the snapshot it is drawn from (--out naming
 * it, or a link to it): refused, the snapshot unchanged byte for byte. */
Test(render, output_never_replaces_the_snapshot) {
  write_snapshot("snap.h5", 2000);
  size_t n0, n1;
  unsigned char *before = whole_file("snap.h5", &n0);
  cr_assert_eq(symlink("snap.h5", sp("link.h5")), 0);
  const char *outs[] = {"snap.h5", "link.h5"};
  for (size_t k = 0; k < 2; k++) {
    cr_expect_eq(RUN("render", sp("snap.h5"), "--out", sp(outs[k])), 1,
                 "--out %s", outs[k]);
    assert_stderr_has("is the same file as the input");
  }
  unsigned char *after = whole_file("snap.h5", &n1);
  cr_assert(n0 == n1 && memcmp(before, after, n0) == 0,
            "the snapshot was changed (%zu bytes, then %zu)", n0, n1);
  free(before);
  free(after);
}

/* tilefmm run ends with its pictures: the bodies of its last step along z
 * and, where gnuplot is installed, the energy error against time, each
 * labelled in the run's units (the labels drawn are in the tEXt chunk
 * 'Labels'). Without gnuplot, the bare map (a Plummer sphere at the
 * origin: a bright centre, dark corners). */
Test(render, run_ends_with_its_picture_and_energy_plot) {
  cr_assert_eq(RUN("run", "--n", "3000", "--steps", "4", "--out", sp("out"),
                   "--progress", "off"),
               0);
  picture *p = read_png("out/picture.png");
  assert_has(p->description, "3000 bodies");
  assert_has(p->description, "projected along z");
  assert_has(p->software, "run");
  if (have_gnuplot()) {
    cr_expect_gt(p->width, 600);
    assert_has(p->labels, "x axis: x [N-body length]; y axis: y [N-body "
                          "length]");
    assert_has(p->labels, "t = 0.03125 N-body time units");
    picture *e = read_png("out/energy.png");
    cr_expect_eq(e->width, 900);
    cr_expect_eq(e->height, 500);
    assert_has(e->labels, "x axis: time [N-body time]");
    assert_has(e->labels, "(E - E_0) / |E_0|");
    picture_free(e);
    assert_stderr_has("energy.png");
  } else {
    cr_assert_eq(p->width, 600);
    cr_assert_eq(p->height, 600);
    const long centre = brightness(p, 270, 330, 270, 330);
    const long corner = brightness(p, 0, 60, 0, 60);
    cr_expect_gt(centre, 20 * (corner + 1), "centre %ld, corner %ld", centre,
                 corner);
    cr_expect(!exists("out/energy.png"));
    assert_stderr_has("no energy plot: gnuplot is not installed");
  }
  picture_free(p);
}

/* A run in galactic units labels its pictures in kpc and kpc/(km/s), and
 * the columns of its statistics.csv with their units. */
Test(render, run_pictures_in_the_runs_units) {
  cr_assert_eq(RUN("run", "--n", "300", "--steps", "2", "--out", sp("out"),
                   "--progress", "off", "--units", "galactic"),
               0);
  char *csv = read_text("out/statistics.csv");
  cr_assert_not_null(csv);
  cr_expect(strncmp(csv,
                    "step,time [kpc/(km/s)],kinetic [1e10 Msun (km/s)^2],"
                    "potential [1e10 Msun (km/s)^2],total [1e10 Msun "
                    "(km/s)^2],rel_energy_error,px [1e10 Msun km/s],",
                    147) == 0,
            "%.300s", csv);
  assert_has(csv, ",lx [1e10 Msun kpc km/s],");
  assert_has(csv, ",virial_ratio,com_x [kpc],com_y [kpc],com_z [kpc],"
                  "leaf_size,wall_tree [s],");
  free(csv);
  if (!have_gnuplot())
    cr_skip_test("gnuplot is not installed: the pictures are bare maps");
  picture *p = read_png("out/picture.png");
  assert_has(p->labels, "x axis: x [kpc]; y axis: y [kpc]");
  assert_has(p->labels, "surface density [1e10 Msun / kpc^2]");
  assert_has(p->labels, "kpc/(km/s) (");
  picture *e = read_png("out/energy.png");
  assert_has(e->labels, "x axis: time [kpc/(km/s)]");
  picture_free(p);
  picture_free(e);
}

/* A gnuplot that exits 0 having written a picture cut short (its
 * signature and half an IHDR), as after a full disk: the run fails (exit
 * 1) naming it, and no picture is left. It was kept, and the run exited 0
 * (issue 29). The picture of the bodies is the first gnuplot draws. */
Test(render, run_refuses_a_picture_cut_short) {
  fake_gnuplot_writing("\\211PNG\\r\\n\\032\\n\\000\\000\\000\\015IHDR");
  const int rc = RUN("run", "--n", "300", "--steps", "2", "--out", sp("out"),
                     "--progress", "off");
  cr_assert_eq(rc, 1, "exit %d", rc);
  assert_stderr_has("picture.png");
  assert_stderr_has("no whole PNG");
  cr_expect(!exists("out/picture.png"));
  cr_expect(!exists("out/energy.png"));
  assert_no_temporaries();
}

Test(render, run_plots_off_writes_no_picture) {
  cr_assert_eq(RUN("run", "--n", "500", "--steps", "1", "--out", sp("out"),
                   "--progress", "off", "--plots", "off"),
               0);
  cr_expect(exists("out/checkpoint.hdf5"));
  cr_expect(!exists("out/picture.png"));
  cr_expect(!exists("out/energy.png"));
  cr_assert_eq(RUN("run", "--n", "500", "--steps", "1", "--out", sp("out2"),
                   "--plots", "maybe"),
               2);
  assert_stderr_has("--plots");
}

/* ---- the figure: axes, time and colour bar ------------------------------ */

/* The figure (gnuplot's) is larger than its map, to hold the axes and the
 * colour bar, and its tEXt chunk 'Labels' carries the labels it drew: in
 * N-body units. */
Test(render, figure_labels_in_nbody_units) {
  if (!have_gnuplot())
    cr_skip_test("gnuplot is not installed (the bare map is tested below)");
  write_snapshot("snap.h5", 500);
  cr_assert_eq(RUN("render", sp("snap.h5"), "--out", sp("pic.png"), "--size",
                   "64", "--axis", "y"),
               0);
  picture *p = read_png("pic.png");
  cr_assert_gt(p->width, 64u);
  cr_assert_gt(p->height, 64u);
  assert_has(p->labels, "x axis: z [N-body length]");
  assert_has(p->labels, "y axis: x [N-body length]");
  assert_has(p->labels, "colour bar: surface density [N-body mass / length^2]");
  assert_has(p->labels, "t = 0.25 N-body time units");
  assert_has(p->description, "projected along y (right z, up x)");
  assert_has(p->software, "tilefmm");
  picture_free(p);
  assert_no_temporaries();
}

/* In a unit system: the length unit on the axes, the time in its unit and
 * in years, the surface density's unit on the colour bar. */
Test(render, figure_labels_in_galactic_units) {
  if (!have_gnuplot())
    cr_skip_test("gnuplot is not installed (the bare map is tested below)");
  const units galactic = {1.98841e43, 3.0856775814913673e21, 1e5, 1, 1};
  write_snapshot_in("snap.h5", 500, &galactic);
  cr_assert_eq(RUN("render", sp("snap.h5"), "--out", sp("pic.png")), 0);
  picture *p = read_png("pic.png");
  cr_assert_gt(p->width, 512u);
  assert_has(p->labels, "x axis: x [kpc]; y axis: y [kpc]");
  assert_has(p->labels, "surface density [1e10 Msun / kpc^2]");
  /* 0.25 kpc/(km/s) = 0.25 x 3.0857e16 s = 244.5 Myr. */
  assert_has(p->labels, "t = 0.25 kpc/(km/s) (244.4 Myr)");
  picture_free(p);
}

/* Without gnuplot: the bare map of --size pixels, and a note that says
 * so. */
Test(render, without_gnuplot_the_bare_map_and_a_note) {
  write_snapshot("snap.h5", 500);
  cr_assert_eq(setenv("PATH", sp("no-such-dir"), 1), 0);
  cr_assert_eq(
      RUN("render", sp("snap.h5"), "--out", sp("pic.png"), "--size", "32"), 0);
  assert_stderr_has("gnuplot is not installed");
  assert_stderr_has("without axes, time or colour bar");
  picture *p = read_png("pic.png");
  cr_assert(p->width == 32 && p->height == 32);
  assert_has(p->description, "32 x 32 pixels");
  picture_free(p);
}
