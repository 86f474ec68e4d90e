/* How many OpenMP threads a parallel region gets: enough for its work and
 * no more. A region of little work runs on one thread, so it wakes no
 * team and waits at no barrier: on a busy machine, where a team's threads
 * are descheduled while others spin or sleep at the barrier, small
 * evaluations (1,000 bodies) took 400 times longer with two threads than
 * with one. Large work gets every thread OpenMP allows
 * (omp_get_max_threads, i.e. tfmm_config.num_threads or OMP_NUM_THREADS).
 * Results never depend on the number of threads (each region's tests say
 * how), so sizing teams to the work changes times only. */
#ifndef TFMM_TEAM_H
#define TFMM_TEAM_H

#include <omp.h>
#include <stddef.h>

/* The least work for each thread, per kind of unit: */
#define TFMM_GRAIN_BODIES 16384.0 /* O(1) work per body (copies, checks) */
#define TFMM_GRAIN_CELLS 1024.0   /* O(1) work per cell */
#define TFMM_GRAIN_EXPANSIONS                                                  \
  32.0                            /* cells or leaves each doing an O(p^4)      \
                                    translation or O(n p^2) evaluation */
#define TFMM_GRAIN_LEAVES 256.0   /* leaves each walking a list or tree */
#define TFMM_GRAIN_PAIRS 262144.0 /* body-body interactions */

/* Threads for work units of which each thread should have at least grain:
 * 1 to omp_get_max_threads(). */
static inline int tfmm_team(double work, double grain) {
  const int most = omp_get_max_threads();
  const double t = work / grain;
  return t >= most ? most : t < 1 ? 1 : (int)t;
}

/* The bytes of each slice when `team` threads split a range of `bytes`:
 * thread t takes [t s, min((t + 1) s, bytes)), s a whole number of 64-byte
 * cache lines, and the team's slices cover the range. (Rounding bytes /
 * team down before rounding up to 64 left the last bytes % team bytes of
 * a staged copy unwritten whenever bytes / team was a multiple of 64.) */
static inline size_t tfmm_team_slice(size_t bytes, int team) {
  const size_t t = team > 1 ? (size_t)team : 1;
  return ((bytes + t - 1) / t + 63) / 64 * 64;
}

#endif
