/* What tilefmm tune reports: the table on the terminal, the CSV with its
 * '#' comment lines, and the plot of it drawn by gnuplot. The rows are
 * measured by cmd_tune.c. */
#ifndef TFMM_TUNE_REPORT_H
#define TFMM_TUNE_REPORT_H

#include "tune_options.h"

#include "tilefmm.h"

#include <stddef.h>
#include <stdio.h>

/* Doubling from 1 passes INT_MAX after 31 sizes; leaf-max may add one. */
#define TUNE_MAX_LEAVES 32
/* Schedules compared: gpu and hybrid. */
#define TUNE_MAX_SCHEDULES 2
#define TUNE_MAX_ROWS (TUNE_MAX_LEAVES * TUNE_MAX_SCHEDULES)

typedef struct tune_row {
  tfmm_schedule_kind schedule; /* the schedule asked for */
  int leaf;                    /* the L asked for */
  tfmm_stats best;             /* the fastest timed evaluation */
  double err_p99;
} tune_row;

typedef struct tune_table {
  int rows;
  int schedules; /* rows are leaf sizes of one schedule, then the next */
  tune_row row[TUNE_MAX_ROWS];
  int fastest; /* the row of least total time */
  int chosen;  /* the fastest row with err_p99 <= max_error, or -1 */
  size_t n;    /* the bodies measured */
  size_t k;    /* the bodies whose error was measured */
} tune_table;

/* The table, for a person, to fp. */
void tune_report_print(FILE *fp, const tune_options *o, const tune_table *tab);

/* The CSV to fp: '#' comment lines (the command line, the date, the
 * device, the run, the choice), the header, a line per row. */
void tune_report_csv(FILE *fp, const tune_options *o, const tune_table *tab);

/* The plot to o->png, or a warning when there is no gnuplot: the CSV is
 * the result, the plot a convenience. Prints why and returns 0 when
 * gnuplot fails. */
int tune_report_plot(const tune_options *o, const tune_table *tab);

#endif
