/* Settings of tilefmm run that would drop its outputs without a word,
 * refused before anything is written (issue 29): a clock that its
 * shortest step does not move, and output intervals past counting. */
#ifndef TFMM_RUN_LIMITS_H
#define TFMM_RUN_LIMITS_H

#include "run_options.h"

/* Refuses (printing, returning 0) an output interval (flag, every > 0;
 * 0: none) of which the run's span holds more than can be counted;
 * per_step names the option that writes at every step instead. */
int run_limits_interval(double span, const char *flag, double every,
                        const char *per_step);

/* Refuses (printing, returning 0) a run whose clock cannot advance from
 * its start time t0 to its end t1 by the shortest step it may take (--dt,
 * or --dt-min with individual steps: longest / 2^16 when not given). */
int run_limits_clock(const run_options *o, double longest, double t0,
                     double t1);

#endif
