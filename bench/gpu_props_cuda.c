/* gpu_props.h through the CUDA runtime API (plain C; links cudart). */
#include "gpu_props.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

static int fail(cudaError_t e, const char *what, char *err, int errlen) {
  snprintf(err, (size_t)errlen, "%s: %s (%s)", what, cudaGetErrorString(e),
           cudaGetErrorName(e));
  return 1;
}

int bench_gpu_props_query(int ordinal, bench_gpu_props *out, char *err,
                          int errlen) {
  memset(out, 0, sizeof *out);
  cudaError_t e = cudaDriverGetVersion(&out->driver_version);
  if (e != cudaSuccess)
    return fail(e, "cudaDriverGetVersion", err, errlen);
  e = cudaRuntimeGetVersion(&out->runtime_version);
  if (e != cudaSuccess)
    return fail(e, "cudaRuntimeGetVersion", err, errlen);
  struct {
    enum cudaDeviceAttr attr;
    int *dst;
    const char *what;
  } q[] = {
      {cudaDevAttrMultiProcessorCount, &out->sm_count, "multiprocessor count"},
      {cudaDevAttrClockRate, &out->clock_khz, "clock rate"},
      {cudaDevAttrComputeCapabilityMajor, &out->cc_major, "cc major"},
      {cudaDevAttrComputeCapabilityMinor, &out->cc_minor, "cc minor"},
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; ++i) {
    e = cudaDeviceGetAttribute(q[i].dst, q[i].attr, ordinal);
    if (e != cudaSuccess)
      return fail(e, q[i].what, err, errlen);
  }
  struct cudaDeviceProp prop;
  e = cudaGetDeviceProperties(&prop, ordinal);
  if (e != cudaSuccess)
    return fail(e, "cudaGetDeviceProperties", err, errlen);
  snprintf(out->name, sizeof out->name, "%s", prop.name);
  return 0;
}

int bench_gpu_fp32_lanes_per_sm(int cc_major, int cc_minor) {
  switch (cc_major) {
  case 6:
    return cc_minor == 0 ? 64 : 128; /* GP100 64; GP10x 128 */
  case 7:
    return 64; /* Volta, Turing */
  case 8:
    return cc_minor == 0 ? 64 : 128; /* A100 64; GA10x, AD10x 128 */
  case 9:                            /* H100, H200 */
  case 10:                           /* B200 */
  case 12:
    return 128; /* GB20x */
  default:
    return 0;
  }
}
