#include "nearfield/direct_cpu.h"

#include "team.h"

#include "nearfield/p2p_sum.h"

#include <stdlib.h>

/* Every body (every active one, active not NULL) against all others from
 * structure-of-arrays sources s of n bodies, in the precision T: (ax, ay,
 * az, phi) per body into out. */
#define ALL_PAIRS(T, SUFFIX)                                                   \
  static void all_pairs_##SUFFIX(size_t n, const tfmm_sources_##SUFFIX *s,     \
                                 const tfmm_soft_##SUFFIX *kern,               \
                                 const unsigned char *active, T *out) {        \
    const int team = tfmm_team((double)n * (double)n, TFMM_GRAIN_PAIRS);       \
    _Pragma("omp parallel for schedule(dynamic, 64) num_threads(team)") for (  \
        size_t i = 0; i < n; i++) {                                            \
      if (active != NULL && !active[i])                                        \
        continue;                                                              \
      T xi = s->x[i], yi = s->y[i], zi = s->z[i];                              \
      tfmm_acc_##SUFFIX total = {0, 0, 0, 0};                                  \
      tfmm_p2p_sum_##SUFFIX(s, 0, i, xi, yi, zi, kern, &total);                \
      tfmm_p2p_sum_##SUFFIX(s, i + 1, n, xi, yi, zi, kern, &total);            \
      out[4 * i + 0] = total.x;                                                \
      out[4 * i + 1] = total.y;                                                \
      out[4 * i + 2] = total.z;                                                \
      out[4 * i + 3] = total.w;                                                \
    }                                                                          \
  }

ALL_PAIRS(float, f32)
ALL_PAIRS(double, f64)

int tfmm_direct_cpu_compute(size_t n, const float *xyzm,
                            const tfmm_soft_f32 *kern,
                            const unsigned char *active, float *out) {
  float *buf = malloc(4 * n * sizeof *buf);
  if (buf == NULL)
    return -1;
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 4; k++)
      buf[k * n + i] = xyzm[4 * i + k];
  tfmm_sources_f32 s = {buf, buf + n, buf + 2 * n, buf + 3 * n};
  all_pairs_f32(n, &s, kern, active, out);
  free(buf);
  return 0;
}

int tfmm_direct_cpu_compute_f64(size_t n, const double *pos, const double *mass,
                                const double center[3],
                                const tfmm_soft_f64 *kern,
                                const unsigned char *active, double *out) {
  double *buf = malloc(4 * n * sizeof *buf);
  if (buf == NULL)
    return -1;
  for (size_t i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++)
      buf[k * n + i] = pos[3 * i + k] - center[k];
    buf[3 * n + i] = mass[i];
  }
  tfmm_sources_f64 s = {buf, buf + n, buf + 2 * n, buf + 3 * n};
  all_pairs_f64(n, &s, kern, active, out);
  free(buf);
  return 0;
}
