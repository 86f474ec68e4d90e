/* gpu_props.h for builds without the CUDA backend: no device to describe. */
#include "gpu_props.h"

#include <stdio.h>
#include <string.h>

int bench_gpu_props_query(int ordinal, bench_gpu_props *out, char *err,
                          int errlen) {
  (void)ordinal;
  memset(out, 0, sizeof *out);
  snprintf(err, (size_t)errlen, "this build has no CUDA backend");
  return 1;
}

int bench_gpu_fp32_lanes_per_sm(int cc_major, int cc_minor) {
  (void)cc_major;
  (void)cc_minor;
  return 0;
}
