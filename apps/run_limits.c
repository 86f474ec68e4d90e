/* The limits of tilefmm run's clock and output intervals (run_limits.h). */
#include "run_limits.h"

#include "cli.h"

#include <math.h>

/* The most intervals of --snapshot-dt or --stats-dt a run may hold: their
 * count is an int64 (multiples_reached), and 1e15 outputs are past any
 * disk. */
#define MAX_INTERVALS 1e15

/* Refuses an output interval (flag, every > 0; 0: none) of which the run's
 * span holds more than MAX_INTERVALS: the count would overflow, and the
 * outputs due be dropped. */
int run_limits_interval(double span, const char *flag, double every,
                        const char *per_step) {
  if (every <= 0 || span / every < MAX_INTERVALS)
    return 1;
  cli_error("%s %g: the run's %g time units hold %.3g such intervals, more "
            "than can be counted (%g); for an output at every step give %s 1",
            flag, every, span, span / every, MAX_INTERVALS, per_step);
  return 0;
}

/* Whether a clock at time t moves by step: t + step must not round to t,
 * nor be more than 1e-3 of step off (the steps' times would drift by as
 * much). */
static int clock_moves(double t, double step) {
  return fabs(((t + step) - t) - step) <= 1e-3 * step;
}

/* Refuses a run whose clock cannot advance from its start time t0 to its
 * end t1 by the shortest step it may take (--dt, or --dt-min with
 * individual steps: the library's default dt_max / 2^16 when not given):
 * its steps would not move time, silently. */
int run_limits_clock(const run_options *o, double longest, double t0,
                     double t1) {
  const int individual = o->eta > 0;
  const double step = !individual     ? o->dt
                      : o->dt_min > 0 ? o->dt_min
                                      : longest / 65536.0;
  const char *flag = individual ? "--dt-min" : "--dt";
  const int start_moves = clock_moves(t0, step);
  if (start_moves && clock_moves(t1, step))
    return 1;
  cli_error("the %s time %g and %s %g: the clock cannot advance (t + dt "
            "rounds to t, or off by more than 1e-3 of dt, in double "
            "precision); give initial conditions at an earlier time or a "
            "longer step",
            start_moves ? "end" : "start", start_moves ? t1 : t0, flag, step);
  return 0;
}
