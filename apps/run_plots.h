/* The pictures a run ends with, beside its snapshots: DIR/picture.png, the
 * surface density of the last step seen along z (the automatic view of
 * 'tilefmm render'; a figure with axes, time and colour bar in the run's
 * units, render_figure.h), and DIR/energy.png, the relative energy error
 * against time from DIR/statistics.csv, drawn by gnuplot when it is installed
 * (without it, a note says how to draw it). */
#ifndef TFMM_RUN_PLOTS_H
#define TFMM_RUN_PLOTS_H

#include "tilefmm.h"
#include "units.h"

#define RUN_PICTURE "picture.png"
#define RUN_ENERGY_PLOT "energy.png"

/* Writes both files into dir from sim's current state and dir's
 * statistics.csv (complete: the report closed or synced); title heads
 * both, u labels their axes. Prints what it wrote. Returns 0 on a failure
 * (printed), else 1 (also when gnuplot is missing). Under mpirun, collective:
 * rank 0 draws every rank's bodies. */
int run_plots_write(const char *dir, tfmm_sim *sim, const char *title,
                    const units *u);

#endif
