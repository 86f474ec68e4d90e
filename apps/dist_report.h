/* What an evaluation over several ranks did (tfmm_solver_dist_stats of
 * each rank), as 'tilefmm forces' and 'run' report it under mpirun. */
#ifndef TFMM_DIST_REPORT_H
#define TFMM_DIST_REPORT_H

#include "tilefmm.h"

#include <stdio.h>

/* The solver's last evaluation over the ranks: the ranks, the smallest
 * and largest count over them of the bodies owned, the bodies and
 * multipoles received and sent, the imbalance, and each part's time on
 * the slowest rank. Collective (MPI on); nothing with MPI off. Only rank
 * 0's lines are seen. */
void dist_report_print(FILE *fp, const tfmm_solver *solver);

/* One line for a run's summary: the ranks, the bodies owned (smallest and
 * largest) and the imbalance of the last evaluation. Collective; buf
 * gets "" with MPI off. Returns buf. */
const char *dist_report_line(const tfmm_solver *solver, char *buf, size_t size);

#endif
