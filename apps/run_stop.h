/* The signals that stop tilefmm run: SIGINT, SIGTERM or SIGHUP (a dropped
 * ssh session) ask the run to stop at the next point where its state can
 * be written as a checkpoint to restart from (after the step under way,
 * or with individual steps after the sub-step under way); a second one
 * ends it at once (the handler gives the signal back its default). */
#ifndef TFMM_RUN_STOP_H
#define TFMM_RUN_STOP_H

/* Catches SIGINT, SIGTERM and SIGHUP, unless they are ignored (nohup,
 * &). */
void run_stop_catch(void);

/* The number of the signal that asked the run to stop, or 0. */
int run_stop_signal(void);

#endif
