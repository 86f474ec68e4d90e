/* Host memory for the solver's arrays (tfmm_host_alloc): pinned through
 * the device layer (kernels/context/host_copy.h) when it can be, else
 * malloc's. Which one a pointer is, the driver tells (pinned memory is
 * registered with it), so that nothing is kept on the side. */
#include "host_copy.h"

#include "tilefmm.h"

#include <stdlib.h>

void *tfmm_host_alloc(size_t bytes) {
  void *p = tfmm_gpu_host_alloc(bytes);
  return p != NULL ? p : malloc(bytes > 0 ? bytes : 1);
}

void tfmm_host_free(void *p) {
  if (tfmm_gpu_host_pinned(p))
    tfmm_gpu_host_free(p);
  else
    free(p);
}

int tfmm_host_pinned(const void *p) { return tfmm_gpu_host_pinned(p); }
