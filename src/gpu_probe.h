/* Which CUDA devices this build can use, and for each one it cannot, why
 * and how to fix it. The facts are gathered by tfmm_gpu_probe_run (CUDA:
 * kernels/context/gpu_context.cu; without CUDA: kernels/none/gpu_none.c); the
 * decisions and the words are made by tfmm_gpu_probe_explain, a pure function
 * that the tests feed with invented devices and error codes. Plain C. */
#ifndef TFMM_GPU_PROBE_H
#define TFMM_GPU_PROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { TFMM_GPU_PROBE_DEVICES = 16 };

/* What stopped the runtime from listing the devices, or one device from
 * running our kernels. */
typedef enum tfmm_gpu_fault {
  TFMM_GPU_FAULT_NONE = 0,  /* listed / usable */
  TFMM_GPU_FAULT_NO_DEVICE, /* no CUDA device, or no NVIDIA driver at all */
  TFMM_GPU_FAULT_DRIVER,    /* the driver is older than the runtime
                               (cudaErrorInsufficientDriver with a driver) */
  TFMM_GPU_FAULT_NO_IMAGE,  /* neither SASS for the device nor PTX it can
                               compile (cudaErrorNoKernelImageForDevice) */
  TFMM_GPU_FAULT_PTX,       /* the PTX is newer than the driver's compiler
                               (cudaErrorUnsupportedPtxVersion) */
  TFMM_GPU_FAULT_OTHER      /* anything else: see error */
} tfmm_gpu_fault;

typedef struct tfmm_gpu_probe_device {
  char name[96];    /* "NVIDIA A100-SXM4-80GB"; "" when unknown */
  int major, minor; /* compute capability; 0.0 when unknown */
  tfmm_gpu_fault fault;
  char error[128]; /* the CUDA call and its message, for FAULT_OTHER */
} tfmm_gpu_probe_device;

typedef struct tfmm_gpu_probe {
  int cuda_built;            /* whether this build has the CUDA backend */
  int gpu_node;              /* without CUDA: whether the machine shows an
                                NVIDIA GPU (/dev/nvidia0) */
  const char *archs;         /* CMAKE_CUDA_ARCHITECTURES of the build */
  int runtime_version;       /* 1000 major + 10 minor (13000: 13.0) */
  int driver_version;        /* the same for the driver; 0: no driver */
  tfmm_gpu_fault list_fault; /* of cudaGetDeviceCount */
  char list_error[128];      /* for FAULT_OTHER */
  int ndevices;              /* listed (at most TFMM_GPU_PROBE_DEVICES) */
  tfmm_gpu_probe_device device[TFMM_GPU_PROBE_DEVICES];
} tfmm_gpu_probe;

/* Gathers the facts of this machine and this build. */
void tfmm_gpu_probe_run(tfmm_gpu_probe *probe);

/* Returns the number of usable devices and writes to msg (size bytes,
 * NUL-terminated; msg may be NULL when size is 0) one line for each GPU
 * that is present but cannot be used, saying which GPU, why, and how to
 * fix it, lines separated by '\n', no final newline. msg is "" when no GPU
 * is present (no device, no driver) or every one is usable: nothing to
 * fix. */
int tfmm_gpu_probe_explain(const tfmm_gpu_probe *probe, char *msg, size_t size);

/* Why there is no usable device at all, in a few words for an error
 * message ("no CUDA device found", "this tilefmm was built without
 * CUDA"), when tfmm_gpu_probe_explain has nothing to say. */
const char *tfmm_gpu_probe_none(const tfmm_gpu_probe *probe);

#ifdef __cplusplus
}
#endif

#endif
