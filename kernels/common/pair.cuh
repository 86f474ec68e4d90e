/* The softened pair of nearfield/interaction.h as the kernels take it: the
 * softening's kind a template parameter, so that every kernel holds one
 * kind and its test compiles away, and the types of each precision. */
#ifndef TFMM_PAIR_CUH
#define TFMM_PAIR_CUH

#include "nearfield/interaction.h"

#include <cuda_runtime.h>

/* Four doubles: a body (x, y, z, mass) or a result (acceleration,
 * potential) in double precision, moved as two 16-byte words (CUDA 13
 * deprecates double4). */
struct __align__(32) tfmm_vec4_f64 {
  double x, y, z, w;
};

/* The types of one precision: a body or result, the kernel's parameters
 * (and how to make them on the host), a pair's contribution. */
template <typename T> struct tfmm_prec;
template <> struct tfmm_prec<float> {
  typedef float4 vec;
  typedef tfmm_soft_f32 soft;
  typedef tfmm_acc_f32 acc;
  static soft make(int spline, double eps) {
    return tfmm_soft_make_f32(spline, eps);
  }
};
template <> struct tfmm_prec<double> {
  typedef tfmm_vec4_f64 vec;
  typedef tfmm_soft_f64 soft;
  typedef tfmm_acc_f64 acc;
  static soft make(int spline, double eps) {
    return tfmm_soft_make_f64(spline, eps);
  }
};

/* Source s (x, y, z, mass) on the target at (xi, yi, zi) under kernel k of
 * kind SPLINE; self as in tfmm_interaction_f32. Plummer in single
 * precision is tfmm_interaction_f32 itself (13 instructions with the
 * potential); the others are tfmm_soft_pair with the kind fixed. */
template <bool SPLINE>
__device__ __forceinline__ tfmm_acc_f32 tfmm_pair(const tfmm_soft_f32 &k,
                                                  float xi, float yi, float zi,
                                                  float4 s, int self) {
  if (!SPLINE)
    return tfmm_interaction_f32(xi, yi, zi, s.x, s.y, s.z, s.w, k.eps2, self);
  tfmm_soft_f32 c = k;
  c.spline = 1;
  return tfmm_soft_pair_f32(&c, xi, yi, zi, s.x, s.y, s.z, s.w, self);
}

template <bool SPLINE>
__device__ __forceinline__ tfmm_acc_f64 tfmm_pair(const tfmm_soft_f64 &k,
                                                  double xi, double yi,
                                                  double zi, tfmm_vec4_f64 s,
                                                  int self) {
  tfmm_soft_f64 c = k;
  c.spline = SPLINE;
  return tfmm_soft_pair_f64(&c, xi, yi, zi, s.x, s.y, s.z, s.w, self);
}

/* a += c, for either precision's sums. */
template <typename A, typename C>
__device__ __forceinline__ void tfmm_add(A &a, const C &c) {
  a.x += c.x;
  a.y += c.y;
  a.z += c.z;
  a.w += c.w;
}

#endif
