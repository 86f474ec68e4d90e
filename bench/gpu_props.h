/* Device facts the benchmark needs and tilefmm.h does not expose: the
 * multiprocessor count and clock that set the FP32-pipe limit, and the
 * versions that identify a measurement. Two implementations, chosen by
 * CMake: gpu_props_cuda.c (CUDA runtime) and gpu_props_none.c. */
#ifndef BENCH_GPU_PROPS_H
#define BENCH_GPU_PROPS_H

typedef struct bench_gpu_props {
  char name[256];         /* e.g. "NVIDIA H100 80GB HBM3" */
  int cc_major, cc_minor; /* compute capability */
  int sm_count;           /* multiprocessors */
  int clock_khz;          /* peak SM clock (cudaDevAttrClockRate), kHz */
  int driver_version;     /* cudaDriverGetVersion, e.g. 13000 */
  int runtime_version;    /* cudaRuntimeGetVersion, e.g. 13000 */
} bench_gpu_props;

/* Fills *out for CUDA device `ordinal`. Returns 0 on success; otherwise a
 * non-zero value with a reason in err (size errlen). */
int bench_gpu_props_query(int ordinal, bench_gpu_props *out, char *err,
                          int errlen);

/* FP32 lanes (CUDA cores) per multiprocessor for a compute capability, from
 * the CUDA C Programming Guide's throughput table; 0 when unknown. */
int bench_gpu_fp32_lanes_per_sm(int cc_major, int cc_minor);

#endif /* BENCH_GPU_PROPS_H */
