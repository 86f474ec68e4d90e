/* The bodies a measurement samples (measure.h), written once for the CPU
 * (measure.c) and the GPU (kernels/schedule/measure_targets_gpu.cu), so
 * that both draw the same bodies from the same seed, bit for bit: integer
 * hashing and one double product and quotient, which round alike on
 * both. */
#ifndef TFMM_MEASURE_PICK_H
#define TFMM_MEASURE_PICK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define TFMM_MEASURE_PICK_FN static __host__ __device__ __forceinline__
#else
#define TFMM_MEASURE_PICK_FN static inline
#endif

/* Leaf counts past this share the histogram's last bin (the watch's
 * thresholds). */
#define TFMM_MEASURE_CAP 4096

/* A 64-bit mix (splitmix64's finaliser): independent-looking values from
 * consecutive inputs. */
TFMM_MEASURE_PICK_FN uint64_t tfmm_measure_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The estimate's body of stratum j of k among n sorted bodies: stratum j
 * is [floor(j n / k), floor((j + 1) n / k)), never empty for k <= n. */
TFMM_MEASURE_PICK_FN int64_t tfmm_measure_stratum(size_t n, size_t k,
                                                  uint64_t seed, size_t j) {
  const size_t lo = (size_t)((double)j * (double)n / (double)k);
  size_t hi = (size_t)((double)(j + 1) * (double)n / (double)k);
  hi = hi > n ? n : hi;
  const size_t width = hi > lo ? hi - lo : 1;
  return (int64_t)(lo + tfmm_measure_mix(seed ^ tfmm_measure_mix(j)) % width);
}

/* The watch's body of leaf l (sorted bodies [begin, begin + count),
 * count >= 1). */
TFMM_MEASURE_PICK_FN int64_t tfmm_measure_in_leaf(int64_t begin, int32_t count,
                                                  uint64_t seed, int64_t l) {
  return begin +
         (int64_t)(tfmm_measure_mix(seed ^ tfmm_measure_mix((uint64_t)l)) %
                   (uint64_t)count);
}

/* The watch's key of a body whose acceleration is a (3 doubles): |a|^2,
 * rounded alike on both sides (no fused multiply-add on the device; the
 * host's C11 contracts none), +inf where it is not a number, so that a
 * NaN never wins a minimum (the key's order is |a|'s). */
TFMM_MEASURE_PICK_FN double tfmm_measure_a2(const double *a) {
#if defined(__CUDA_ARCH__)
  const double s =
      __dadd_rn(__dadd_rn(__dmul_rn(a[0], a[0]), __dmul_rn(a[1], a[1])),
                __dmul_rn(a[2], a[2]));
#else
  const double s = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
#endif
  return s == s ? s : INFINITY;
}

/* The relative error |a - f b| / |f b| of a against f b (3 doubles each;
 * f b rounded first, as the host's b *= f; f = 1: b itself): 0 where
 * both are zero, +inf where only f b is. The measurement's
 * (tfmm_measure_relative), rounded alike on both sides (no fused
 * multiply-add on the device; division and square root correctly
 * rounded on both), so that the device finds the host's worst slot. */
TFMM_MEASURE_PICK_FN double
tfmm_measure_relative_scaled(const double *a, const double *b, double f) {
  double d2 = 0, b2 = 0;
  for (int d = 0; d < 3; d++) {
#if defined(__CUDA_ARCH__)
    const double y = __dmul_rn(b[d], f), x = __dsub_rn(a[d], y);
    d2 = __dadd_rn(d2, __dmul_rn(x, x));
    b2 = __dadd_rn(b2, __dmul_rn(y, y));
#else
    const double y = b[d] * f, x = a[d] - y;
    d2 += x * x;
    b2 += y * y;
#endif
  }
  if (b2 == 0)
    return d2 == 0 ? 0 : INFINITY;
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(__ddiv_rn(d2, b2));
#else
  return sqrt(d2 / b2);
#endif
}

#endif
