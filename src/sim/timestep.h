/* Individual time steps: the power-of-two bins of GADGET-4 (Springel et al.
 * 2021, MNRAS 506, 2871, sec. 3.4) and SWIFT (Schaller et al. 2024, MNRAS
 * 530, 2378, sec. 4.2), written once for the CPU (src/sim) and the GPU
 * (kernels/sim/sim_gpu.cu).
 *
 * Time is counted in integer ticks from time_initial; a body in bin b takes
 * steps of 2^b ticks that begin on multiples of 2^b, so every step of a
 * larger bin ends on a step end of every smaller one. A body's bin changes
 * only at the end of its own step, and may grow only to a bin whose steps
 * begin there (b <= the number of trailing zero bits of the tick count):
 * the hierarchy then never needs a step cut short.
 *
 * The criterion is the acceleration one of both codes,
 *   dt_i = sqrt(2 eta eps / |a_i|)           (GADGET-4 eq. 39),
 * eps the softening length, |a_i| including G. The bin is the largest b in
 * [0, max_bin] with 2^b tick <= dt_i (bin 0 when even that is too long: the
 * caller counts those bodies, which asked for less than dt_min).
 *
 * |a|^2 is formed with fma() in a fixed order so that the CPU and the GPU
 * give the same bits (a compiler may not contract it differently), and the
 * power of two is taken with ilogb, exact for the correctly rounded sqrt
 * and division of both. */
#ifndef TFMM_TIMESTEP_H
#define TFMM_TIMESTEP_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define TFMM_TIMESTEP_FN static inline __host__ __device__
#else
#define TFMM_TIMESTEP_FN static inline
#endif

/* The largest bin a simulation may have: dt_max / dt_min <= 2^40, which
 * leaves room for 2^22 steps of dt_max in the int64 tick count. */
#define TFMM_TIMESTEP_MAX_BIN 40

/* Steps of bin b: 2^b ticks. */
TFMM_TIMESTEP_FN int64_t tfmm_timestep_ticks(int bin) {
  return (int64_t)1 << bin;
}

/* The half step of a kick of a body in bin b: 0.5 * (2^b tick), which is
 * 0.5 * dt, bit for bit, with one global step (b = 0, tick = dt). */
TFMM_TIMESTEP_FN double tfmm_timestep_half(int bin, double tick) {
  return 0.5 * ((double)tfmm_timestep_ticks(bin) * tick);
}

/* The largest bin whose steps begin at tick t: the trailing zero bits of t
 * (every bin, capped at max_bin, for t = 0). */
TFMM_TIMESTEP_FN int tfmm_timestep_aligned_bin(int64_t t, int max_bin) {
  int b = 0;
  while (b < max_bin && (t & ((int64_t)1 << b)) == 0)
    b++;
  return b;
}

/* The bin the criterion gives a body with acceleration (ax, ay, az):
 * two_eta_eps = 2 eta eps, tick the length of one tick, at most limit
 * (min(max_bin, the aligned bin of the current tick)). *short_step is set
 * to 1 when the criterion asked for less than one tick (dt_min), else left
 * alone. */
TFMM_TIMESTEP_FN int tfmm_timestep_bin(double ax, double ay, double az,
                                       double two_eta_eps, double tick,
                                       int limit, int *short_step) {
  const double a2 = fma(ax, ax, fma(ay, ay, az * az));
  if (!(a2 > 0.0))
    return limit; /* no force: the longest step allowed */
  const double steps = sqrt(two_eta_eps / sqrt(a2)) / tick;
  if (!(steps >= 1.0)) {
    *short_step = 1;
    return 0;
  }
  if (!(steps < 9.0e15)) /* beyond any bin, and out of ilogb's int */
    return limit;
  const int b = ilogb(steps);
  return b < limit ? b : limit;
}

#endif
