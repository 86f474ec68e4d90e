/* All pairs on the CPU in single precision: the fallback without a GPU. */
#ifndef TFMM_DIRECT_CPU_H
#define TFMM_DIRECT_CPU_H

#include <stddef.h>

/* xyzm: 4n packed floats (tfmm_bodies_pack_f32). out: 4n floats written,
 * (ax, ay, az, phi) per body, without G. O(n^2) over OpenMP threads, the
 * inner loop vectorised. Returns 0, or -1 when scratch allocation fails. */
int tfmm_direct_cpu_compute(size_t n, const float *xyzm, float eps2,
                            float *out);

#endif
