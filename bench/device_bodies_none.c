#include "device_bodies.h"

#include <stdio.h>

int bench_device_alloc(void **d, size_t bytes, char *msg, size_t cap) {
  (void)bytes;
  *d = NULL;
  snprintf(msg, cap, "--resident: this build has no CUDA");
  return -1;
}

int bench_device_copy(void *dst, const void *src, size_t bytes, int to_device,
                      char *msg, size_t cap) {
  (void)dst, (void)src, (void)bytes, (void)to_device;
  snprintf(msg, cap, "--resident: this build has no CUDA");
  return -1;
}

void bench_device_free(void *d) { (void)d; }
