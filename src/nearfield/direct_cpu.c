#include "nearfield/direct_cpu.h"

#include "nearfield/interaction.h"

#include <stdlib.h>

/* Sources in structure-of-arrays form so that the j loop vectorises. */
typedef struct soa {
  float *x, *y, *z, *m;
} soa;

/* Sources per partial sum: the same two-level summation as the GPU tiles,
 * so that one large term (a close neighbour) early in the sum does not
 * swallow the rounding of thousands of small ones. */
enum { BLOCK = 256 };

/* Sums sources [begin, end) on one target; the self pair is never in the
 * range, so the interaction's self select is the constant 0. */
static tfmm_acc_f32 sum_block(const soa *s, size_t begin, size_t end, float xi,
                              float yi, float zi, float eps2) {
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
 * 16 and 8 lanes instead of 4. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TFMM_CPU_CLONES                                                        \
  __attribute__((                                                              \
      target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#else
#define TFMM_CPU_CLONES
#endif

TFMM_CPU_CLONES
static void sum_range(const soa *s, size_t begin, size_t end, float xi,
                      float yi, float zi, float eps2, tfmm_acc_f32 *total) {
  for (size_t b = begin; b < end; b += BLOCK) {
    size_t e = end - b < BLOCK ? end : b + BLOCK;
    tfmm_acc_f32 part = sum_block(s, b, e, xi, yi, zi, eps2);
    total->x += part.x;
    total->y += part.y;
    total->z += part.z;
    total->w += part.w;
  }
}

int tfmm_direct_cpu_compute(size_t n, const float *xyzm, float eps2,
                            float *out) {
  float *buf = malloc(4 * n * sizeof *buf);
  if (buf == NULL)
    return -1;
  soa s = {buf, buf + n, buf + 2 * n, buf + 3 * n};
  for (size_t i = 0; i < n; i++) {
    s.x[i] = xyzm[4 * i];
    s.y[i] = xyzm[4 * i + 1];
    s.z[i] = xyzm[4 * i + 2];
    s.m[i] = xyzm[4 * i + 3];
  }
#pragma omp parallel for schedule(dynamic, 64)
  for (size_t i = 0; i < n; i++) {
    float xi = s.x[i], yi = s.y[i], zi = s.z[i];
    tfmm_acc_f32 total = {0, 0, 0, 0};
    sum_range(&s, 0, i, xi, yi, zi, eps2, &total);
    sum_range(&s, i + 1, n, xi, yi, zi, eps2, &total);
    out[4 * i + 0] = total.x;
    out[4 * i + 1] = total.y;
    out[4 * i + 2] = total.z;
    out[4 * i + 3] = total.w;
  }
  free(buf);
  return 0;
}
