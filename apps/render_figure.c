/* Labelled surface-density figures through gnuplot: see render_figure.h. */
#define _POSIX_C_SOURCE 200809L
#include "render_figure.h"
#include "atomic_file.h"
#include "cli.h"
#include "gnuplot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The labels a figure carries, as drawn. */
typedef struct figure_labels {
  char right[96], up[96], colour[160], time[160], title[512], view[192];
} figure_labels;

/* What the gnuplot script needs. */
typedef struct figure {
  const render_spec *spec;
  const render_result *r;
  const figure_labels *l;
  const char *grid; /* the density map, binary doubles, bottom row first */
} figure;

static void make_labels(const render_figure_info *info, int axis,
                        figure_labels *l) {
  static const char names[] = "xyz";
  int right, up;
  raster_plane_axes(axis, &right, &up);
  units_labels u;
  units_labels_make(info->units, &u);
  snprintf(l->right, sizeof l->right, "%c [%s]", names[right], u.length);
  snprintf(l->up, sizeof l->up, "%c [%s]", names[up], u.length);
  snprintf(l->colour, sizeof l->colour, "surface density [%s]",
           u.surface_density);
  char t[128];
  snprintf(l->time, sizeof l->time, "t = %s",
           units_time_text(info->units, info->time, t, sizeof t));
  snprintf(l->title, sizeof l->title, "%s",
           info->title != NULL ? info->title : info->source);
  snprintf(l->view, sizeof l->view, "%s, projected along %c", l->time,
           names[axis]);
}

/* matplotlib's 'inferno' (van der Walt & Smith) at eleven stops, as
 * raster_colour draws it. */
static const char inferno[] =
    "set palette defined (0 '#000004', 0.1 '#160b39', 0.2 '#420a68', "
    "0.3 '#6a176e', 0.4 '#932667', 0.5 '#bc3754', 0.6 '#dd513a', "
    "0.7 '#f37819', 0.8 '#fca50a', 0.9 '#f6d746', 1 '#fcffa4')\n";

static void figure_script(FILE *gp, const char *png_path, void *ctx) {
  const figure *f = ctx;
  const raster_view *v = &f->r->view;
  int right, up;
  raster_plane_axes(v->axis, &right, &up);
  const int size = f->spec->size;
  const int width = size + 300 > 640 ? size + 300 : 640;
  const int height = size + 130 > 520 ? size + 130 : 520;
  gnuplot_png_terminal(gp, width, height, png_path);
  /* Two lines: what the bodies are, then their time and the view. */
  fputs("set title ", gp);
  gnuplot_string(gp, f->l->title);
  fputs(" . \"\\n\" . ", gp);
  gnuplot_string(gp, f->l->view);
  fputs("\nset xlabel ", gp);
  gnuplot_string(gp, f->l->right);
  fputs("\nset ylabel ", gp);
  gnuplot_string(gp, f->l->up);
  fputs("\nset cblabel ", gp);
  gnuplot_string(gp, f->l->colour);
  const double half = v->extent / 2, pixel = v->extent / size;
  const double x0 = v->centre[right] - half, y0 = v->centre[up] - half;
  /* Empty pixels are NaN, not drawn: the black of the plot's background,
   * as the bare map has them. */
  const double top = f->r->sigma_max > 0 ? f->r->sigma_max : 1.0;
  fprintf(gp,
          "\nset size ratio -1\nset xrange [%.17g:%.17g]\n"
          "set yrange [%.17g:%.17g]\nset logscale cb\n"
          "set cbrange [%.17g:%.17g]\nset format cb '%%.0e'\n%s"
          "set object 1 rectangle from graph 0,0 to graph 1,1 behind "
          "fillcolor rgb 'black' fillstyle solid 1.0 noborder\n"
          "set tics out\nunset key\nplot ",
          x0, x0 + v->extent, y0, y0 + v->extent,
          top * pow(10.0, -f->spec->decades), top, inferno);
  gnuplot_string(gp, f->grid);
  fprintf(gp,
          " binary array=(%d,%d) format='%%float64' dx=%.17g dy=%.17g "
          "origin=(%.17g,%.17g) with image\n",
          size, size, pixel, pixel, x0 + pixel / 2, y0 + pixel / 2);
}

/* The map as gnuplot reads it: rows bottom first, empty pixels NaN. */
static int write_grid(FILE *fp, const double *sigma, int size) {
  double *row = malloc((size_t)size * sizeof *row);
  if (row == NULL)
    return 0;
  int ok = 1;
  for (int y = size - 1; y >= 0 && ok; y--) {
    for (int x = 0; x < size; x++) {
      const double s = sigma[(size_t)y * (size_t)size + (size_t)x];
      row[x] = s > 0 ? s : NAN;
    }
    ok = fwrite(row, sizeof *row, (size_t)size, fp) == (size_t)size;
  }
  free(row);
  return ok && fflush(fp) == 0;
}

static int draw(const char *out, const render_figure_info *info, size_t n,
                const render_spec *spec, const double *sigma,
                const render_result *r) {
  figure_labels l;
  make_labels(info, spec->axis, &l);
  char *description =
      render_png_describe(info->source, n, info->time, spec->decades, r);
  char labels[1024];
  snprintf(labels, sizeof labels, "x axis: %s; y axis: %s; colour bar: %s; %s",
           l.right, l.up, l.colour, l.time);
  size_t len = strlen(out) + 8;
  char *grid_name = malloc(len);
  if (description == NULL || grid_name == NULL) {
    cli_error("render: out of memory");
    free(description);
    free(grid_name);
    return 0;
  }
  snprintf(grid_name, len, "%s.grid", out);
  /* The map beside the picture, in a temporary its run directory sweeps
   * if we are killed (atomic_file.h), removed when drawn. */
  atomic_file grid;
  memset(&grid, 0, sizeof grid);
  int ok = atomic_file_open(&grid, grid_name);
  if (ok && !write_grid(grid.fp, sigma, spec->size)) {
    cli_error("%s: cannot write the density map for gnuplot", grid.tmp_path);
    ok = 0;
  }
  if (ok) {
    const figure f = {spec, r, &l, grid.tmp_path};
    const png_write_text text[] = {{"Description", description},
                                   {"Software", info->software},
                                   {"Labels", labels}};
    ok = gnuplot_draw_text(out, grid.tmp_path, figure_script, (void *)&f, text,
                           3);
  }
  atomic_file_discard(&grid);
  free(grid_name);
  free(description);
  return ok;
}

int render_figure_write(const char *out, const render_figure_info *info,
                        size_t n, const double *pos, const double *mass,
                        const render_spec *spec, render_result *r,
                        int *used_gnuplot) {
  const int labelled = !info->bare && gnuplot_on_path();
  if (used_gnuplot != NULL)
    *used_gnuplot = labelled;
  if (!labelled) {
    if (!info->bare)
      fprintf(stderr,
              "tilefmm: note: gnuplot is not installed (Debian: apt-get "
              "install gnuplot-nox): %s is the bare density map, without "
              "axes, time or colour bar (its tEXt 'Description' gives the "
              "view and the range)\n",
              out);
    return render_png_write(out, info->source, info->software, n, pos, mass,
                            info->time, spec, r);
  }
  double *sigma = render_png_density(info->source, n, pos, mass, spec, r);
  if (sigma == NULL)
    return 0;
  const int ok = draw(out, info, n, spec, sigma, r);
  free(sigma);
  return ok;
}
