/* All pairs on the CPU: the fallback without a GPU. */
#ifndef TFMM_DIRECT_CPU_H
#define TFMM_DIRECT_CPU_H

#include "nearfield/interaction.h"

#include <stddef.h>

/* xyzm: 4n packed floats (tfmm_bodies_pack_f32). out: 4n floats written,
 * (ax, ay, az, phi) per body, without G, under softening kernel kern; with
 * active not NULL, only at the bodies whose byte is nonzero (targets; the
 * sources are all n), the others' entries left as they are.
 * O(n^2) over OpenMP threads, the inner loop vectorised. Returns 0, or -1
 * when scratch allocation fails. */
int tfmm_direct_cpu_compute(size_t n, const float *xyzm,
                            const tfmm_soft_f32 *kern,
                            const unsigned char *active, float *out);

/* The same in double precision, positions taken relative to center:
 * out is 4n doubles. */
int tfmm_direct_cpu_compute_f64(size_t n, const double *pos, const double *mass,
                                const double center[3],
                                const tfmm_soft_f64 *kern,
                                const unsigned char *active, double *out);

#endif
