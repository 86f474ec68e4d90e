/* The ground floor, with base/error.h: the one clock every stage's time
 * is read from. */
#ifndef TFMM_CLOCK_H
#define TFMM_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on a monotonic clock (OpenMP's wall clock). */
double tfmm_wtime(void);

#ifdef __cplusplus
}
#endif

#endif
