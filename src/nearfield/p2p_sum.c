#include "nearfield/p2p_sum.h"

/* Sources per partial sum, as in a GPU tile. */
enum { BLOCK = 256 };

/* One block; the self pair is never in the range, so the interaction's self
 * select is the constant 0. */
static tfmm_acc_f32 sum_block(const tfmm_sources_f32 *s, size_t begin,
                              size_t end, float xi, float yi, float zi,
                              float eps2) {
  const float *restrict x = s->x, *restrict y = s->y, *restrict z = s->z,
                        *restrict m = s->m;
  float ax = 0, ay = 0, az = 0, phi = 0;
#pragma omp simd reduction(+ : ax, ay, az, phi)
  for (size_t j = begin; j < end; j++) {
    tfmm_acc_f32 a =
        tfmm_interaction_f32(xi, yi, zi, x[j], y[j], z[j], m[j], eps2, 0);
    ax += a.x;
    ay += a.y;
    az += a.z;
    phi += a.w;
  }
  return (tfmm_acc_f32){ax, ay, az, phi};
}

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

TFMM_CPU_CLONES
static void sum_range(const tfmm_sources_f32 *s, size_t begin, size_t end,
                      float xi, float yi, float zi, float eps2,
                      tfmm_acc_f32 *total) {
  for (size_t b = begin; b < end; b += BLOCK) {
    size_t e = end - b < BLOCK ? end : b + BLOCK;
    tfmm_acc_add(total, sum_block(s, b, e, xi, yi, zi, eps2));
  }
}

void tfmm_p2p_sum_f32(const tfmm_sources_f32 *s, size_t begin, size_t end,
                      float xi, float yi, float zi, float eps2,
                      tfmm_acc_f32 *total) {
  sum_range(s, begin, end, xi, yi, zi, eps2, total);
}
