/* The pictures a run ends with: see run_plots.h. */
#define _POSIX_C_SOURCE 200809L
#include "run_plots.h"
#include "cli.h"
#include "gnuplot.h"
#include "mpi_cli.h"
#include "render_figure.h"
#include "run_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PICTURE_SIZE 600
#define PICTURE_DECADES 4.0

static char *join(const char *dir, const char *name) {
  const size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (p == NULL)
    cli_error("out of memory");
  else
    snprintf(p, len, "%s/%s", dir, name);
  return p;
}

typedef struct energy_plot {
  const char *csv, *title;
  char xlabel[160];
} energy_plot;

#define ENERGY_YLABEL "(E - E_0) / |E_0| (relative energy error)"

/* (E - E0) / |E0| (column 6 of statistics.csv) against time (column 2). */
static void energy_script(FILE *gp, const char *png_path, void *ctx) {
  const energy_plot *e = ctx;
  gnuplot_png_terminal(gp, 900, 500, png_path);
  fputs("set datafile separator ','\nset title ", gp);
  gnuplot_string(gp, e->title);
  fputs("\nset xlabel ", gp);
  gnuplot_string(gp, e->xlabel);
  fputs("\nset ylabel ", gp);
  gnuplot_string(gp, ENERGY_YLABEL);
  fputs("\nset grid\nset key off\nset format y '%.1e'\nplot ", gp);
  gnuplot_string(gp, e->csv);
  fputs(" every ::1 using 2:6 with linespoints pt 7 ps 0.5 lw 2 "
        "lc rgb '#b5367a'\n",
        gp);
}

/* Draws both from the bodies of s (every body: rank 0's under mpirun). */
static int draw(const char *dir, tfmm_sim *sim, const tfmm_sim_state *sp,
                const char *title, const units *u) {
  const tfmm_sim_state s = *sp;
  char *picture = join(dir, RUN_PICTURE), *energy = join(dir, RUN_ENERGY_PLOT);
  char *csv = join(dir, "statistics.csv");
  int ok = picture != NULL && energy != NULL && csv != NULL;
  char source[64], software[64];
  snprintf(source, sizeof source, "step %lld", (long long)tfmm_sim_syncs(sim));
  snprintf(software, sizeof software, "tilefmm %s run", tfmm_version());
  const render_spec spec = {.axis = 2,
                            .centre = NULL,
                            .extent = 0.0,
                            .size = PICTURE_SIZE,
                            .decades = PICTURE_DECADES};
  const render_figure_info info = {.source = source,
                                   .software = software,
                                   .title = title,
                                   .units = u,
                                   .time = tfmm_sim_time(sim)};
  render_result r;
  ok = ok &&
       render_figure_write(picture, &info, s.n, s.pos, s.mass, &spec, &r, NULL);
  if (ok && gnuplot_on_path()) {
    energy_plot e = {csv, title, ""};
    units_labels l;
    units_labels_make(u, &l);
    snprintf(e.xlabel, sizeof e.xlabel, "time [%s]", l.time);
    char labels[256];
    snprintf(labels, sizeof labels, "x axis: %s; y axis: %s", e.xlabel,
             ENERGY_YLABEL);
    const png_write_text text[] = {{"Software", software}, {"Labels", labels}};
    ok = gnuplot_draw_text(energy, csv, energy_script, &e, text, 2);
    if (ok)
      fprintf(stderr,
              "tilefmm run: pictures: %s (the bodies at t = %g, "
              "along z), %s (the energy error)\n",
              picture, tfmm_sim_time(sim), energy);
  } else if (ok) {
    unlink(energy); /* not a plot of an earlier run's energy */
    fprintf(stderr,
            "tilefmm run: picture: %s (the bodies at t = %g, along z); no "
            "energy plot: gnuplot is not installed (Debian: apt-get install "
            "gnuplot-nox), or plot columns 2 and 6 of %s yourself\n",
            picture, tfmm_sim_time(sim), csv);
  }
  free(picture);
  free(energy);
  free(csv);
  return ok;
}

int run_plots_write(const char *dir, tfmm_sim *sim, const char *title,
                    const units *u) {
  tfmm_sim_state s;
  if (tfmm_sim_save(sim, &s) != TFMM_OK) {
    cli_error("%s: cannot read the bodies for the picture: %s", dir,
              tfmm_sim_message(sim));
    return 0;
  }
  run_ranks_state all;
  if (!run_ranks_gather(&s, &all))
    return 0;
  const int ok = mpi_cli_rank() != 0 || draw(dir, sim, &all.state, title, u);
  run_ranks_free(&all);
  return mpi_cli_agree(ok);
}
