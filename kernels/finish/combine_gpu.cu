/* Far plus near, times G, in the input order (combine_gpu.h). */
#include "combine_gpu.h"

#define CUDA_TRY_WHO "combine"
#include "cuda_try.cuh"

#include <cuda_runtime.h>

namespace {

constexpr int THREADS = 256;

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

/* The lowest input index whose sums are not finite goes to bad[0]; with
 * to_caller, the one whose results in the caller's units are not (the
 * sums were) to bad[1]. */
template <class T>
__global__ void
combine(int64_t n, const int32_t *order, const unsigned char *active, double G,
        const double *far_phi, const double *far_g, const T *near, double *acc,
        double *pot, tfmm_combine_gpu_units out, unsigned long long *bad) {
  int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  const int64_t i = order[k];
  if (active != nullptr && !active[i])
    return; /* not a target: its entries are the caller's */
  int finite = 1, beyond = 0;
  for (int d = 0; d < 3; d++) {
    double a = G * (far_g[3 * k + d] + (double)near[4 * k + d]);
    finite &= isfinite(a);
    if (out.to_caller) {
      a = out.caller_G * ldexp(a, out.acc_exp);
      beyond |= !isfinite(a);
    }
    acc[3 * i + d] = a;
  }
  if (pot != nullptr) {
    double p = G * ((double)near[4 * k + 3] - far_phi[k]);
    finite &= isfinite(p);
    if (out.to_caller) {
      p = out.caller_G * ldexp(p, out.pot_exp);
      beyond |= !isfinite(p);
    }
    pot[i] = p;
  }
  if (!finite)
    atomicMin(&bad[0], (unsigned long long)i);
  else if (beyond)
    atomicMin(&bad[1], (unsigned long long)i);
}

} // namespace

extern "C" tfmm_status
tfmm_combine_gpu(size_t n, const int32_t *order, const unsigned char *active,
                 const double *far_phi, const double *far_g, const void *near,
                 tfmm_precision precision, const tfmm_combine_gpu_units *units,
                 double *acc, double *pot, unsigned long long *bad,
                 void *stream, tfmm_error *err) {
  cudaStream_t st = (cudaStream_t)stream;
  const int64_t m = (int64_t)n;
  TRY(cudaMemsetAsync(bad, 0xff, 2 * sizeof *bad, st));
  if (precision == TFMM_PRECISION_DOUBLE)
    combine<double><<<blocks(m), THREADS, 0, st>>>(
        m, order, active, units->G, far_phi, far_g, (const double *)near, acc,
        pot, *units, bad);
  else
    combine<float><<<blocks(m), THREADS, 0, st>>>(
        m, order, active, units->G, far_phi, far_g, (const float *)near, acc,
        pot, *units, bad);
  TRY(cudaGetLastError());
  return TFMM_OK;
}
