/* The softened body-body interaction, written once for the CPU and the GPU.
 *
 * A source of mass m_j at x_j pulls a target at x_i with
 *   a   +=  m_j r / (r^2 + eps^2)^(3/2),   phi += -m_j / (r^2 + eps^2)^(1/2),
 * r = x_j - x_i (G is applied once, at the end, in double precision).
 *
 * Cost: 3 FADD (r), 3 FFMA (r^2 + eps^2), 1 reciprocal square root, 3 FMUL
 * (1/r^2, m/r, m/r^3), 3 FFMA (a) and 1 FADD (phi): 13 FP32 instructions and
 * one MUFU.RSQ on the GPU, 12 when the potential is not kept. GPU Gems 3
 * ch. 31 counts the same interaction as 20 flops.
 */
#ifndef TFMM_INTERACTION_H
#define TFMM_INTERACTION_H

#include <math.h>

#if defined(__CUDACC__)
#define TFMM_INTERACTION_FN static __host__ __device__ __forceinline__
#elif defined(__GNUC__)
/* Forced, so that it inlines into the CPU loop's per-ISA clones too. */
#define TFMM_INTERACTION_FN static inline __attribute__((always_inline))
#else
#define TFMM_INTERACTION_FN static inline
#endif

/* Accumulated acceleration (x, y, z) and potential (w) of one target. */
typedef struct tfmm_acc_f32 {
  float x, y, z, w;
} tfmm_acc_f32;

TFMM_INTERACTION_FN float tfmm_rsqrt_f32(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x); /* MUFU.RSQ; with --ftz=true a single instruction */
#else
  return 1.0f / sqrtf(x); /* vectorises as sqrtps + divps */
#endif
}

/* The pull of source (xj, yj, zj, mj) on the target at (xi, yi, zi):
 * acceleration in x, y, z and potential in w. Callers add it to their sums
 * (the compilers fuse the multiply and the add into one FFMA). When self is
 * true the pair is the target with itself and contributes nothing, even
 * with eps = 0 (where r^2 = 0 would give 0 * inf). Callers pass a constant
 * 0 on paths that never meet the self pair, and the select compiles away. */
TFMM_INTERACTION_FN tfmm_acc_f32 tfmm_interaction_f32(float xi, float yi,
                                                      float zi, float xj,
                                                      float yj, float zj,
                                                      float mj, float eps2,
                                                      int self) {
  float dx = xj - xi;
  float dy = yj - yi;
  float dz = zj - zi;
  float r2 = dx * dx + (dy * dy + (dz * dz + eps2));
  float rinv = self ? 0.0f : tfmm_rsqrt_f32(r2);
  float rinv2 = rinv * rinv;
  float mr = mj * rinv;
  float mr3 = mr * rinv2;
  tfmm_acc_f32 c = {dx * mr3, dy * mr3, dz * mr3, -mr};
  return c;
}

/* ---- The softening kernel -------------------------------------------------
 *
 * A unit mass at distance r has the potential phi(r) and pulls with
 * a = r_vec g(r), g = -phi'(r) / r. Two kernels (tilefmm.h, tfmm_softening):
 *
 * Plummer: phi = -(r^2 + eps^2)^(-1/2), g = (r^2 + eps^2)^(-3/2): the
 * tfmm_interaction_f32 above.
 *
 * Cubic spline (Springel 2005, MNRAS 364, 1105, eq. 4; Monaghan & Lattanzio
 * 1985): the density 8 / (pi h^3) (1 - 6u^2 + 6u^3) for u = r / h < 1/2,
 * 16 / (pi h^3) (1 - u)^3 for 1/2 <= u < 1, 0 beyond. Integrating the mass
 * inside r gives, with q = 1/h:
 *   u < 1/2:       g = q^3 (32/3 + u^2 (32 u - 192/5))
 *                  phi = q (-14/5 + u^2 (16/3 + u^2 (32/5 u - 48/5)))
 *   1/2 <= u < 1:  g = q^3 (64/3 - 48 u + 192/5 u^2 - 32/3 u^3
 *                          - 1/(15 u^3))
 *                  phi = q (-16/5 + 1/(15 u) + u^2 (32/3 + u (-16
 *                          + u (48/5 - 32/15 u))))
 *   u >= 1:        g = 1/r^3, phi = -1/r (Newton).
 * h = 2.8 eps makes phi(0) = -1/eps, Plummer's depth (GADGET's
 * "Plummer-equivalent" softening). tests/test_softening.c checks g against
 * the enclosed mass by quadrature, phi' = -r g, continuity at u = 1/2 and 1.
 *
 * Cost beyond Newton's (outside the support nothing more): one sqrt and
 * about 12 FMA inside it; warps diverge only where some lanes' pairs fall
 * inside h. */

/* h / eps for the Plummer-equivalent spline. */
#define TFMM_SPLINE_SUPPORT 2.8

/* The kernel's parameters, in the precision of the sums. */
#define TFMM_SOFTENING_TYPES(T, SUFFIX)                                        \
  typedef struct tfmm_soft_##SUFFIX {                                          \
    int spline; /* 0: Plummer, 1: cubic spline */                              \
    T eps2;     /* Plummer: eps^2 */                                           \
    T h2, hinv; /* spline: h^2 and 1/h (h = 2.8 eps); 0 and 0 for eps = 0 */   \
  } tfmm_soft_##SUFFIX;

TFMM_SOFTENING_TYPES(float, f32)
TFMM_SOFTENING_TYPES(double, f64)

/* Accumulated acceleration (x, y, z) and potential (w), in double. */
typedef struct tfmm_acc_f64 {
  double x, y, z, w;
} tfmm_acc_f64;

/* Spline factors g (returned) and phi (in *phi) for r2 < h^2, at the
 * kernel's precision T: the formula above, written once. */
#define TFMM_SPLINE_INSIDE(T, SUFFIX, SQRT)                                    \
  TFMM_INTERACTION_FN T tfmm_spline_inside_##SUFFIX(T r2, T hinv, T *phi) {    \
    const T u = SQRT(r2) * hinv, u2 = u * u, q3 = hinv * hinv * hinv;          \
    if (u < (T)0.5) {                                                          \
      *phi =                                                                   \
          hinv *                                                               \
          ((T)(-14.0 / 5) +                                                    \
           u2 * ((T)(16.0 / 3) + u2 * ((T)(32.0 / 5) * u - (T)(48.0 / 5))));   \
      return q3 * ((T)(32.0 / 3) + u2 * ((T)32 * u - (T)(192.0 / 5)));         \
    }                                                                          \
    const T inv15u = (T)1 / ((T)15 * u);                                       \
    *phi = hinv *                                                              \
           ((T)(-16.0 / 5) + inv15u +                                          \
            u2 * ((T)(32.0 / 3) +                                              \
                  u * ((T)(-16) + u * ((T)(48.0 / 5) - (T)(32.0 / 15) * u)))); \
    return q3 * ((T)(64.0 / 3) +                                               \
                 u * ((T)(-48) + u * ((T)(192.0 / 5) - (T)(32.0 / 3) * u)) -   \
                 inv15u / u2);                                                 \
  }

TFMM_SPLINE_INSIDE(float, f32, sqrtf)
TFMM_SPLINE_INSIDE(double, f64, sqrt)

TFMM_INTERACTION_FN double tfmm_rsqrt_f64(double x) {
#if defined(__CUDA_ARCH__)
  return rsqrt(x); /* 1 ulp (CUDA C guide), without the IEEE divide */
#else
  return 1.0 / sqrt(x);
#endif
}

/* The pull of source (xj, yj, zj, mj) on the target at (xi, yi, zi) under
 * kernel k: acceleration in x, y, z and potential in w. self: as in
 * tfmm_interaction_f32 (the pair contributes nothing). The branch on
 * k->spline is uniform (one kernel per call); callers that want it out of
 * their loop test it outside. */
#define TFMM_SOFT_PAIR(T, SUFFIX)                                              \
  TFMM_INTERACTION_FN tfmm_acc_##SUFFIX tfmm_soft_pair_##SUFFIX(               \
      const tfmm_soft_##SUFFIX *k, T xi, T yi, T zi, T xj, T yj, T zj, T mj,   \
      int self) {                                                              \
    const T dx = xj - xi, dy = yj - yi, dz = zj - zi;                          \
    const T d2 = dx * dx + (dy * dy + dz * dz);                                \
    const T r2 = k->spline ? d2 : d2 + k->eps2;                                \
    const T rinv = self ? (T)0 : tfmm_rsqrt_##SUFFIX(r2);                      \
    const T m = self ? (T)0 : mj;                                              \
    T g = rinv * rinv * rinv, phi = -rinv;                                     \
    if (k->spline && r2 < k->h2)                                               \
      g = tfmm_spline_inside_##SUFFIX(r2, k->hinv, &phi);                      \
    tfmm_acc_##SUFFIX c = {dx * (m * g), dy * (m * g), dz * (m * g), m * phi}; \
    return c;                                                                  \
  }

TFMM_SOFT_PAIR(float, f32)
TFMM_SOFT_PAIR(double, f64)

/* The kernel's parameters from the solver's (double) settings. */
#define TFMM_SOFT_MAKE(T, SUFFIX)                                              \
  TFMM_INTERACTION_FN tfmm_soft_##SUFFIX tfmm_soft_make_##SUFFIX(int spline,   \
                                                                 double eps) { \
    const double h = TFMM_SPLINE_SUPPORT * eps;                                \
    tfmm_soft_##SUFFIX k = {spline, (T)(eps * eps), spline ? (T)(h * h) : 0,   \
                            spline && h > 0 ? (T)(1 / h) : 0};                 \
    return k;                                                                  \
  }

TFMM_SOFT_MAKE(float, f32)
TFMM_SOFT_MAKE(double, f64)

/* acc += c */
TFMM_INTERACTION_FN void tfmm_acc_add(tfmm_acc_f32 *acc, tfmm_acc_f32 c) {
  acc->x += c.x;
  acc->y += c.y;
  acc->z += c.z;
  acc->w += c.w;
}

TFMM_INTERACTION_FN void tfmm_acc_add_f64(tfmm_acc_f64 *acc, tfmm_acc_f64 c) {
  acc->x += c.x;
  acc->y += c.y;
  acc->z += c.z;
  acc->w += c.w;
}

#endif
