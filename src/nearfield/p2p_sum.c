#include "nearfield/p2p_sum.h"

/* Sources per partial sum, as in a GPU tile. */
enum { BLOCK = 256 };

/* One block; the self pair is never in the range, so the interaction's
 * self select is the constant 0. The kernel's kind is a constant in each
 * caller below, so that each loop holds one kernel and vectorises. */
#define SUM_BLOCK(T, SUFFIX)                                                   \
  static inline tfmm_acc_##SUFFIX sum_block_##SUFFIX(                          \
      const tfmm_sources_##SUFFIX *s, size_t begin, size_t end, T xi, T yi,    \
      T zi, tfmm_soft_##SUFFIX k) {                                            \
    const T *restrict x = s->x, *restrict y = s->y, *restrict z = s->z,        \
                      *restrict m = s->m;                                      \
    T ax = 0, ay = 0, az = 0, phi = 0;                                         \
    _Pragma("omp simd reduction(+ : ax, ay, az, phi)") for (size_t j = begin;  \
                                                            j < end; j++) {    \
      tfmm_acc_##SUFFIX a =                                                    \
          tfmm_soft_pair_##SUFFIX(&k, xi, yi, zi, x[j], y[j], z[j], m[j], 0);  \
      ax += a.x;                                                               \
      ay += a.y;                                                               \
      az += a.z;                                                               \
      phi += a.w;                                                              \
    }                                                                          \
    return (tfmm_acc_##SUFFIX){ax, ay, az, phi};                               \
  }

SUM_BLOCK(float, f32)
SUM_BLOCK(double, f64)

/* The same source built for AVX-512 and AVX2 with FMA as well as the
 * baseline, chosen at run time by the loader (GCC function multiversioning):
 * 16 and 8 lanes instead of 4. Static, because the dispatcher of an extern
 * clone is exported whatever the visibility. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TFMM_CPU_CLONES                                                        \
  __attribute__((                                                              \
      target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#else
#define TFMM_CPU_CLONES
#endif

/* Blocks of the range under kernel k, whose kind is fixed by the caller:
 * k.spline is a constant after inlining. */
#define SUM_RANGE(T, SUFFIX, NAME, SPLINE)                                     \
  TFMM_CPU_CLONES                                                              \
  static void NAME(const tfmm_sources_##SUFFIX *s, size_t begin, size_t end,   \
                   T xi, T yi, T zi, const tfmm_soft_##SUFFIX *kp,             \
                   tfmm_acc_##SUFFIX *total) {                                 \
    tfmm_soft_##SUFFIX k = *kp;                                                \
    k.spline = SPLINE;                                                         \
    for (size_t b = begin; b < end; b += BLOCK) {                              \
      size_t e = end - b < BLOCK ? end : b + BLOCK;                            \
      tfmm_acc_##SUFFIX part = sum_block_##SUFFIX(s, b, e, xi, yi, zi, k);     \
      total->x += part.x;                                                      \
      total->y += part.y;                                                      \
      total->z += part.z;                                                      \
      total->w += part.w;                                                      \
    }                                                                          \
  }

SUM_RANGE(float, f32, range_plummer_f32, 0)
SUM_RANGE(float, f32, range_spline_f32, 1)
SUM_RANGE(double, f64, range_plummer_f64, 0)
SUM_RANGE(double, f64, range_spline_f64, 1)

void tfmm_p2p_sum_f32(const tfmm_sources_f32 *s, size_t begin, size_t end,
                      float xi, float yi, float zi, const tfmm_soft_f32 *k,
                      tfmm_acc_f32 *total) {
  if (k->spline)
    range_spline_f32(s, begin, end, xi, yi, zi, k, total);
  else
    range_plummer_f32(s, begin, end, xi, yi, zi, k, total);
}

void tfmm_p2p_sum_f64(const tfmm_sources_f64 *s, size_t begin, size_t end,
                      double xi, double yi, double zi, const tfmm_soft_f64 *k,
                      tfmm_acc_f64 *total) {
  if (k->spline)
    range_spline_f64(s, begin, end, xi, yi, zi, k, total);
  else
    range_plummer_f64(s, begin, end, xi, yi, zi, k, total);
}
