/* Bodies held in GPU memory for the benchmarks that time
 * tfmm_solver_compute_device (bench_tree --resident): allocation and
 * copies, from device_bodies_cuda.c, or device_bodies_none.c in a build
 * without CUDA (every call fails). Each returns 0, or -1 with a message in
 * msg. */
#ifndef TFMM_BENCH_DEVICE_BODIES_H
#define TFMM_BENCH_DEVICE_BODIES_H

#include <stddef.h>

int bench_device_alloc(void **d, size_t bytes, char *msg, size_t cap);
int bench_device_copy(void *dst, const void *src, size_t bytes, int to_device,
                      char *msg, size_t cap);
void bench_device_free(void *d);

#endif
