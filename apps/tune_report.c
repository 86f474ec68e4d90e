/* What tilefmm tune reports (tune_report.h): the table, the CSV and the
 * plot. */
#define _POSIX_C_SOURCE 200809L
#include "tune_report.h"

#include "gnuplot.h"
#include "output.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>

/* ---- the report -------------------------------------------------------- */

static const char *far_name(tfmm_method m) {
  return m == TFMM_METHOD_FMM ? "M2L" : "M2P";
}
static double far_count(const tfmm_stats *s) {
  return s->method == TFMM_METHOD_FMM ? s->m2l : s->m2p;
}

/* "3000 bodies (plummer, seed 1), method fmm, theta 0.3 (auto), ...":
 * theta and order as the evaluations used them (s). */
static void describe_run(FILE *fp, const tune_options *o, size_t n,
                         const tfmm_stats *s) {
  const tfmm_config *c = &o->solver.cfg;
  if (o->in != NULL)
    fprintf(fp, "%zu bodies (%s)", n, o->in);
  else
    fprintf(fp, "%zu bodies (plummer, seed %" PRIu64 ")", n, o->seed);
  char tree[96], tol[32];
  fprintf(fp,
          ", method %s, %s, accuracy %s, mac %s, softening %s, eps %g, "
          "precision %s, G %g, max depth %d",
          tfmm_method_name(c->method),
          solver_cli_theta_order(c, s->theta, s->order, tree, sizeof tree),
          solver_cli_tol(c->accuracy, tol), tfmm_mac_name(c->mac),
          tfmm_softening_name(c->softening), c->eps,
          tfmm_precision_name(c->precision), c->G, c->max_depth);
}

void tune_report_print(FILE *fp, const tune_options *o, const tune_table *tab) {
  const tfmm_stats *s0 = &tab->row[0].best;
  const char *near = tfmm_device_name(s0->near_device);
  fprintf(fp, "tilefmm tune: ");
  describe_run(fp, o, tab->n, s0);
  fprintf(fp, "\ndevice: %s (%s)\n", tfmm_device_name(s0->device),
          s0->device_name);
  for (int k = 0; k < tab->rows; k += tab->rows / tab->schedules) {
    const tfmm_stats *s = &tab->row[k].best;
    fprintf(fp,
            "schedule %s: tree and upward pass on the %s, lists on the %s, "
            "far field on the %s, near field on the %s\n",
            tfmm_schedule_name(s->schedule), tfmm_device_name(s->tree_device),
            tfmm_device_name(s->lists_device), tfmm_device_name(s->far_device),
            tfmm_device_name(s->near_device));
  }
  fprintf(fp,
          "times: the fastest of %d evaluations after the warm-up, in "
          "seconds\n"
          "error: 99th percentile (nearest rank) of |a - a_ref| / |a_ref|\n"
          "       over %zu bodies, a_ref the double-precision reference\n\n",
          o->repeat, tab->k);
  char near_col[16];
  snprintf(near_col, sizeof near_col, "near (%s)", near);
  char tol[32];
  solver_cli_tol(o->max_error, tol);
  char within[40];
  snprintf(within, sizeof within, "<= %s", tol);
  fprintf(fp, "%8s %6s %5s %9s %12s %12s %11s %11s %11s %10s %9s\n", "schedule",
          "leaf", "depth", "leaves", "interactions", far_name(s0->method),
          near_col, "far", "total", "p99 error", within);
  for (int k = 0; k < tab->rows; k++) {
    const tune_row *r = &tab->row[k];
    const tfmm_stats *s = &r->best;
    fprintf(fp,
            "%8s %6d %5d %9" PRId64
            " %12.6g %12.6g %11.6f %11.6f %11.6f %10.3e %9s\n",
            tfmm_schedule_name(r->schedule), r->leaf, s->tree_depth,
            s->tree_leaves, s->interactions, far_count(s), s->near_time,
            s->far_time, s->time_total, r->err_p99,
            r->err_p99 <= o->max_error ? "yes" : "no");
  }
  const tune_row *best = &tab->row[tab->fastest];
  fprintf(fp,
          "\nfastest: schedule %s, leaf size %d (total %.6f s, p99 error "
          "%.3e)\n",
          tfmm_schedule_name(best->schedule), best->leaf, best->best.time_total,
          best->err_p99);
  if (tab->chosen >= 0) {
    const tune_row *c = &tab->row[tab->chosen];
    fprintf(fp,
            "chosen: schedule %s, leaf size %d (total %.6f s, p99 error %.3e "
            "<= %s: the fastest within --max-error)\n",
            tfmm_schedule_name(c->schedule), c->leaf, c->best.time_total,
            c->err_p99, tol);
  } else {
    int k0 = 0;
    for (int k = 1; k < tab->rows; k++)
      if (tab->row[k].err_p99 < tab->row[k0].err_p99)
        k0 = k;
    fprintf(fp,
            "chosen: none: no leaf size met --max-error %s (the most "
            "accurate, leaf size %d, has p99 error %.3e): lower --theta or "
            "raise --order, or leave them to --accuracy\n",
            tol, tab->row[k0].leaf, tab->row[k0].err_p99);
  }
}

/* A word of the command line, quoted for a POSIX shell when it needs it;
 * control characters become '?' so that the comment stays one line. */
static void write_word(FILE *fp, const char *w) {
  static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
                              "tuvwxyz0123456789_-+=/.,:@%";
  if (*w != '\0' && strspn(w, plain) == strlen(w)) {
    fputs(w, fp);
    return;
  }
  fputc('\'', fp);
  for (; *w != '\0'; w++) {
    if (*w == '\'')
      fputs("'\\''", fp);
    else
      fputc((unsigned char)*w < ' ' ? '?' : *w, fp);
  }
  fputc('\'', fp);
}

static void write_comments(FILE *fp, const tune_options *o,
                           const tune_table *tab) {
  const tfmm_stats *s0 = &tab->row[0].best;
  fputs("# command: tilefmm", fp);
  for (int k = 0; k < o->argc; k++) {
    fputc(' ', fp);
    write_word(fp, o->argv[k]);
  }
  char date[32] = "unknown";
  const time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm) != NULL)
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(fp,
          "\n# date: %s\n# device: %s, %s; tree and upward pass on the "
          "%s, lists on the cpu, far field on the %s, near field on the "
          "%s\n# run: ",
          date, tfmm_device_name(s0->device), s0->device_name,
          tfmm_device_name(s0->tree_device), tfmm_device_name(s0->far_device),
          tfmm_device_name(s0->near_device));
  describe_run(fp, o, tab->n, s0);
  fprintf(fp,
          "\n# times in seconds: the fastest of %d evaluations after a "
          "warm-up\n# acc_err_p99: 99th percentile (nearest rank) of |a - "
          "a_ref| / |a_ref| over %zu bodies\n# fastest leaf size: %d\n"
          "# fastest schedule: %s\n# max error: %.17g\n",
          o->repeat, tab->k, tab->row[tab->fastest].leaf,
          tfmm_schedule_name(tab->row[tab->fastest].schedule), o->max_error);
  if (tab->chosen >= 0)
    fprintf(fp, "# chosen leaf size: %d\n# chosen schedule: %s\n",
            tab->row[tab->chosen].leaf,
            tfmm_schedule_name(tab->row[tab->chosen].schedule));
  else
    fprintf(fp, "# chosen leaf size: none (no p99 error within the max)\n");
}

void tune_report_csv(FILE *fp, const tune_options *o, const tune_table *tab) {
  write_comments(fp, o, tab);
  fprintf(fp,
          "leaf,depth,leaves,near_interactions,%s,near_s,far_s,total_s,"
          "acc_err_p99,schedule\n",
          tab->row[0].best.method == TFMM_METHOD_FMM ? "m2l" : "m2p");
  for (int k = 0; k < tab->rows; k++) {
    const tune_row *r = &tab->row[k];
    const tfmm_stats *s = &r->best;
    fprintf(fp, "%d,%d,%" PRId64 ",%.0f,%.0f,%.9g,%.9g,%.9g,%.6e,%s\n", r->leaf,
            s->tree_depth, s->tree_leaves, s->interactions, far_count(s),
            s->near_time, s->far_time, s->time_total, r->err_p99,
            tfmm_schedule_name(r->schedule));
  }
}

/* ---- the plot ---------------------------------------------------------- */

/* The script: near, far and total time against L, both axes logarithmic;
 * the p99 error on the right-hand axis (logarithmic), with --max-error as
 * a dashed line. The data are the CSV itself, in the script as a
 * datablock (gnuplot 5), so that the plot needs no file of it (--csv -);
 * its header line names the columns (columnhead). */
typedef struct tune_plot {
  const tune_options *o;
  const tune_table *tab;
} tune_plot;

static void write_script(FILE *gp, const char *png_path, void *ctx) {
  const tune_options *o = ((const tune_plot *)ctx)->o;
  const tune_table *tab = ((const tune_plot *)ctx)->tab;
  const tfmm_stats *s0 = &tab->row[0].best;
  gnuplot_png_terminal(gp, 900, 600, png_path);
  fprintf(gp,
          "set datafile separator ','\n"
          "set key autotitle columnhead below horizontal\n"
          "set logscale x 2\nset logscale y\nset grid\n"
          "set xrange [%g:%g]\n"
          "set xlabel 'leaf size L (bodies)'\n"
          "set ylabel 'seconds (fastest of %d)'\n"
          "set y2label 'p99 relative acceleration error'\n"
          "set logscale y2\nset y2tics\nset ytics nomirror\n"
          "set format y2 '%%.0e'\n"
          "set title 'tilefmm tune: %s, N = %zu, theta %g, order %d, %s'\n",
          o->leaf_min / sqrt(2.0), o->leaf_max * sqrt(2.0), o->repeat,
          tfmm_method_name(s0->method), s0->n, s0->theta, s0->order,
          tfmm_device_name(s0->device));
  fputs("set xtics (", gp);
  for (int k = 0; k < tab->rows; k++)
    fprintf(gp, "%s%d", k > 0 ? ", " : "", tab->row[k].leaf);
  /* The chosen L (else the fastest) marked, its label on the side with
   * room. */
  const int mark = tab->chosen >= 0 ? tab->chosen : tab->fastest;
  const int leaf = tab->row[mark].leaf;
  const int left = 2 * mark < tab->rows;
  fprintf(gp,
          ")\nset arrow from %d, graph 0 to %d, graph 1 nohead dashtype 2\n"
          "set label '%s: %s%sL = %d' at %d, graph 0.95 %s offset %d, 0\n",
          leaf, leaf, tab->chosen >= 0 ? "chosen" : "fastest",
          tab->schedules > 1 ? tfmm_schedule_name(tab->row[mark].schedule) : "",
          tab->schedules > 1 ? ", " : "", leaf, leaf, left ? "left" : "right",
          left ? 1 : -1);
  /* The error axis spans the errors and E. */
  double lo = o->max_error, hi = o->max_error;
  for (int k = 0; k < tab->rows; k++) {
    const double e = tab->row[k].err_p99;
    if (e > 0 && isfinite(e)) {
      lo = fmin(lo, e);
      hi = fmax(hi, e);
    }
  }
  char tol[32];
  fprintf(gp, "set y2range [%g:%g]\n", lo / 3, hi * 3);
  fputs("$tune << EOD\n", gp);
  tune_report_csv(gp, o, tab); /* no line of it starts with EOD */
  fputs("EOD\n", gp);
  /* Each schedule's rows (consecutive, nleaf of them) as its own lines. */
  const int nleaf = tab->rows / tab->schedules;
  fputs("plot ", gp);
  for (int q = 0; q < tab->schedules; q++) {
    const tfmm_stats *s = &tab->row[q * nleaf].best;
    const char *name = tfmm_schedule_name(s->schedule);
    if (q > 0)
      fputs(", \\\n  ", gp);
    fprintf(
        gp,
        "$tune every ::%d::%d using 1:6 with linespoints lw 2 title '%s: near "
        "field (%s)', \\\n"
        "  '' every ::%d::%d using 1:7 with linespoints lw 2 title '%s: "
        "far field (%s)', \\\n"
        "  '' every ::%d::%d using 1:8 with linespoints lw 3 title '%s: "
        "total', \\\n"
        "  '' every ::%d::%d using 1:9 axes x1y2 with linespoints lw 2 "
        "dashtype 3 title '%s: p99 error (right axis)'",
        q * nleaf, q * nleaf + nleaf - 1, name,
        tfmm_device_name(s->near_device), q * nleaf, q * nleaf + nleaf - 1,
        name, tfmm_device_name(s->far_device), q * nleaf, q * nleaf + nleaf - 1,
        name, q * nleaf, q * nleaf + nleaf - 1, name);
  }
  fprintf(gp,
          ", \\\n  %.17g axes x1y2 with lines dashtype 2 lc rgb 'red' "
          "title 'max error %s'\n",
          o->max_error, solver_cli_tol(o->max_error, tol));
}

/* See tune_report.h. */
int tune_report_plot(const tune_options *o, const tune_table *tab) {
  const int piped = output_is_stdout(o->csv);
  const char *table = piped ? "standard output" : o->csv;
  if (gnuplot_on_path()) {
    tune_plot ctx = {o, tab};
    return gnuplot_draw(o->png, table, write_script, &ctx);
  }
  fprintf(stderr,
          "tilefmm: warning: gnuplot not found on PATH: no plot written to "
          "%s.\n"
          "  The table is in %s. To plot it, install gnuplot (Debian:\n"
          "  apt-get install gnuplot-nox) and run:\n"
          "  gnuplot -e \"set terminal png; set output '%s'; set datafile "
          "separator ','; set key autotitle columnhead; set logscale xy; "
          "plot '%s' using 1:6 with lp, '' using 1:7 with lp, '' using 1:8 "
          "with lp\"\n"
          "  (columns 1: leaf size; 6, 7, 8: near, far and total seconds;\n"
          "  9: the p99 error)\n",
          o->png, table, o->png, piped ? "FILE.csv" : o->csv);
  return 1;
}
