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

/* acc += c */
TFMM_INTERACTION_FN void tfmm_acc_add(tfmm_acc_f32 *acc, tfmm_acc_f32 c) {
  acc->x += c.x;
  acc->y += c.y;
  acc->z += c.z;
  acc->w += c.w;
}

#endif
