/* The last step of an evaluation on the device: the far field's and the
 * near field's sums of the sorted bodies added, times G, written in the
 * input order (at the targets only, when a mask says which), optionally
 * taken to the caller's units, and checked. Enqueued on the caller's
 * stream (a cudaStream_t of the current device; NULL: the legacy default
 * stream) over device arrays, without allocating or waiting. Built with
 * --fmad=false: the sums round as the hybrid schedule's combine does on
 * the CPU. Cost: 8 flops and 72 to 104 bytes a body. */
#ifndef TFMM_COMBINE_GPU_H
#define TFMM_COMBINE_GPU_H

#include "base/error.h"
#include "base/pair.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The factors: the sums times G; then, with to_caller, as
 * tfmm_units_unscale does, acc times caller_G 2^acc_exp and pot times
 * caller_G 2^pot_exp. */
typedef struct tfmm_combine_gpu_units {
  double G;
  int to_caller;
  double caller_G;
  int acc_exp, pot_exp;
} tfmm_combine_gpu_units;

/* acc[3 i..] = G (far_g + a_near) and pot[i] = G (phi_near - far_phi) for
 * sorted body k, i = order[k] (pot NULL: none), skipping the bodies whose
 * active[i] is 0 (active NULL: none skipped). near holds 4 values a body
 * in precision. The lowest input index whose sums are not finite goes to
 * bad[0]; with to_caller, the one whose results in the caller's units are
 * not (the sums were) to bad[1] (~0: none). */
tfmm_status tfmm_combine_gpu(size_t n, const int32_t *order,
                             const unsigned char *active, const double *far_phi,
                             const double *far_g, const void *near,
                             tfmm_precision precision,
                             const tfmm_combine_gpu_units *units, double *acc,
                             double *pot, unsigned long long *bad, void *stream,
                             tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
