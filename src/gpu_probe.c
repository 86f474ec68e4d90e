/* The decisions and words of the GPU check: which devices are usable, and
 * for the others why not and what to do (gpu_probe.h). Pure: the facts
 * come in a tfmm_gpu_probe. At the end, the library's entry points over
 * it: tfmm_gpu_count, tfmm_gpu_check, tfmm_has_cuda. */
#include "gpu_probe.h"

#include "gpu.h"
#include "tilefmm.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The oldest compute capability the kernels compile for: they copy to
 * shared memory with cp.async (kernels/common/cp_async.cuh), new in sm_80. */
enum { OLDEST_MAJOR = 8 };

/* Appends a formatted line to msg, truncating at size. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void
add_line(char *msg, size_t size, size_t *used, const char *fmt, ...) {
  if (size == 0 || *used + 1 >= size)
    return;
  if (*used > 0)
    msg[(*used)++] = '\n';
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(msg + *used, size - *used, fmt, ap);
  va_end(ap);
  if (k > 0)
    *used += (size_t)k < size - *used ? (size_t)k : size - *used - 1;
  msg[*used] = '\0';
}

/* The Linux driver branch that first supports a CUDA major version
 * (NVIDIA's CUDA Toolkit release notes, table 3), 0 when not known. */
static int driver_branch_for(int cuda_major) {
  switch (cuda_major) {
  case 11:
    return 450;
  case 12:
    return 525;
  case 13:
    return 580;
  default:
    return 0;
  }
}

static void driver_line(const tfmm_gpu_probe *p, char *msg, size_t size,
                        size_t *used) {
  const int rt = p->runtime_version, dv = p->driver_version;
  char need[64] = "";
  if (driver_branch_for(rt / 1000) > 0)
    snprintf(need, sizeof need, " (CUDA %d needs driver %d or newer)",
             rt / 1000, driver_branch_for(rt / 1000));
  add_line(msg, size, used,
           "no GPU can be used: the NVIDIA driver supports CUDA up to %d.%d, "
           "older than the CUDA %d.%d runtime this tilefmm was built with; "
           "update the NVIDIA driver%s, or rebuild tilefmm with a CUDA "
           "toolkit no newer than %d.%d (docs/building.md)",
           dv / 1000, dv % 1000 / 10, rt / 1000, rt % 1000 / 10, need,
           dv / 1000, dv % 1000 / 10);
}

static void device_line(const tfmm_gpu_probe *p, int k, char *msg, size_t size,
                        size_t *used) {
  const tfmm_gpu_probe_device *d = &p->device[k];
  char who[160];
  if (d->major > 0)
    snprintf(who, sizeof who, "GPU %d (%s, compute capability %d.%d)", k,
             d->name[0] ? d->name : "unnamed", d->major, d->minor);
  else
    snprintf(who, sizeof who, "GPU %d (%s)", k,
             d->name[0] ? d->name : "unnamed");
  const int cc = 10 * d->major + d->minor;
  const char *archs = p->archs != NULL && p->archs[0] ? p->archs : "unknown";
  switch (d->fault) {
  case TFMM_GPU_FAULT_NO_IMAGE:
    if (d->major > 0 && d->major < OLDEST_MAJOR)
      add_line(msg, size, used,
               "%s is not usable: tilefmm's kernels need compute capability "
               "%d.0 or newer; the CPU runs them instead (device cpu)",
               who, OLDEST_MAJOR);
    else
      add_line(msg, size, used,
               "%s is not usable: this tilefmm has no code for it (built for "
               "CUDA architectures %s); rebuild with "
               "-DCMAKE_CUDA_ARCHITECTURES=%d, or =native for the GPUs of "
               "the machine that builds (docs/building.md)",
               who, archs, cc);
    break;
  case TFMM_GPU_FAULT_PTX:
    add_line(msg, size, used,
             "%s is not usable: the NVIDIA driver (CUDA %d.%d) cannot compile "
             "the PTX of this tilefmm (CUDA %d.%d) and the build has no "
             "machine code for it (CUDA architectures %s); update the NVIDIA "
             "driver, or rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d-real "
             "(docs/building.md)",
             who, p->driver_version / 1000, p->driver_version % 1000 / 10,
             p->runtime_version / 1000, p->runtime_version % 1000 / 10, archs,
             cc);
    break;
  case TFMM_GPU_FAULT_DRIVER:
    driver_line(p, msg, size, used);
    break;
  default:
    add_line(msg, size, used, "%s is not usable: %s", who,
             d->error[0] ? d->error : "unknown CUDA error");
  }
}

int tfmm_gpu_probe_explain(const tfmm_gpu_probe *p, char *msg, size_t size) {
  size_t used = 0;
  if (size > 0)
    msg[0] = '\0';
  if (!p->cuda_built) {
    if (p->gpu_node)
      add_line(msg, size, &used,
               "this machine has an NVIDIA GPU (/dev/nvidia0) but this "
               "tilefmm was built without CUDA (no nvcc was found); install "
               "the CUDA toolkit, put nvcc on PATH and rebuild "
               "(-DTILEFMM_CUDA=ON; docs/building.md)");
    return 0;
  }
  switch (p->list_fault) {
  case TFMM_GPU_FAULT_NONE:
    break;
  case TFMM_GPU_FAULT_NO_DEVICE:
    return 0;
  case TFMM_GPU_FAULT_DRIVER:
    /* Without any driver the runtime says the same: no GPU, nothing to
     * fix. */
    if (p->driver_version > 0)
      driver_line(p, msg, size, &used);
    return 0;
  default:
    add_line(msg, size, &used,
             "CUDA cannot list the GPUs: %s; check the driver with nvidia-smi",
             p->list_error[0] ? p->list_error : "unknown CUDA error");
    return 0;
  }
  int usable = 0;
  for (int k = 0; k < p->ndevices && k < TFMM_GPU_PROBE_DEVICES; k++) {
    if (p->device[k].fault == TFMM_GPU_FAULT_NONE)
      usable++;
    else
      device_line(p, k, msg, size, &used);
  }
  return usable;
}

const char *tfmm_gpu_probe_none(const tfmm_gpu_probe *p) {
  if (!p->cuda_built)
    return "this tilefmm was built without CUDA";
  if (p->list_fault == TFMM_GPU_FAULT_DRIVER && p->driver_version == 0)
    return "no NVIDIA driver is installed";
  if (p->list_fault == TFMM_GPU_FAULT_NO_DEVICE || p->ndevices == 0)
    return "no CUDA device found";
  return "no usable CUDA device";
}

/* The library's entry points (tilefmm.h): the probe's count and words. */
int tfmm_gpu_count(void) { return tfmm_gpu_device_count(); }

int tfmm_gpu_check(char *message, size_t size) {
  tfmm_gpu_probe probe;
  tfmm_gpu_probe_run(&probe);
  return tfmm_gpu_probe_explain(&probe, message, message != NULL ? size : 0);
}

int tfmm_has_cuda(void) {
#ifdef TFMM_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}
