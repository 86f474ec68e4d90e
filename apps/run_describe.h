/* The line of 'tilefmm run' that says what forces it computes. */
#ifndef TFMM_RUN_DESCRIBE_H
#define TFMM_RUN_DESCRIBE_H

#include "run_options.h"

#include "tilefmm.h"

#include <stddef.h>

/* "softening spline (the default of run), eps 0.01, fmm: theta 0.3
 * (auto), order 8 (auto) for accuracy 1e-3": the physics and the tree
 * parameters used (theta and order as resolved before the first
 * evaluation, or as the last one used when stats is not NULL). */
void run_describe_solver(const run_options *ro, const tfmm_stats *stats,
                         char *buf, size_t size);

#endif
