/* Names, parsing and the version: small, table-driven. */
#include "internal.h"

#include <string.h>

static const char *const status_names[] = {"ok",
                                           "invalid argument",
                                           "out of memory",
                                           "no GPU",
                                           "CUDA error",
                                           "coincident bodies",
                                           "non-finite value",
                                           "unsupported in this build",
                                           "MPI error",
                                           "file error",
                                           "accuracy missed"};

static const char *const method_names[] = {"reference", "direct", "fmm", "bh"};
static const char *const device_names[] = {"auto", "cpu", "gpu"};
static const char *const softening_names[] = {"plummer", "spline"};
static const char *const precision_names[] = {"single", "double", "auto"};
static const char *const mac_names[] = {"geometric", "mass", "error"};
static const char *const schedule_names[] = {"auto", "gpu", "hybrid"};
static const char *const far_kernel_names[] = {"auto", "newton", "softened"};
static const char *const phase_names[] = {
    "prepare", "upload", "near",  "download", "finish",
    "tree",    "upward", "lists", "far",      "downward"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const char *const *names, size_t count, int index) {
  if (index < 0 || (size_t)index >= count)
    return "unknown";
  return names[index];
}

static int find(const char *const *names, size_t count, const char *name) {
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < count; i++)
    if (strcmp(names[i], name) == 0)
      return (int)i;
  return -1;
}

const char *tfmm_status_name(tfmm_status status) {
  return lookup(status_names, COUNT(status_names), (int)status);
}

const char *tfmm_method_name(tfmm_method method) {
  return lookup(method_names, COUNT(method_names), (int)method);
}

const char *tfmm_device_name(tfmm_device device) {
  return lookup(device_names, COUNT(device_names), (int)device);
}

const char *tfmm_softening_name(tfmm_softening softening) {
  return lookup(softening_names, COUNT(softening_names), (int)softening);
}

const char *tfmm_precision_name(tfmm_precision precision) {
  return lookup(precision_names, COUNT(precision_names), (int)precision);
}

const char *tfmm_mac_name(tfmm_mac_kind mac) {
  return lookup(mac_names, COUNT(mac_names), (int)mac);
}

const char *tfmm_schedule_name(tfmm_schedule_kind schedule) {
  return lookup(schedule_names, COUNT(schedule_names), (int)schedule);
}

const char *tfmm_far_kernel_name(tfmm_far_kernel kernel) {
  return lookup(far_kernel_names, COUNT(far_kernel_names), (int)kernel);
}

const char *tfmm_phase_name(tfmm_phase phase) {
  return lookup(phase_names, COUNT(phase_names), (int)phase);
}

tfmm_status tfmm_method_parse(const char *name, tfmm_method *out) {
  int i = find(method_names, COUNT(method_names), name);
  if (i < 0)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = (tfmm_method)i;
  return TFMM_OK;
}

tfmm_status tfmm_device_parse(const char *name, tfmm_device *out) {
  int i = find(device_names, COUNT(device_names), name);
  if (i < 0)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = (tfmm_device)i;
  return TFMM_OK;
}

tfmm_status tfmm_softening_parse(const char *name, tfmm_softening *out) {
  int i = find(softening_names, COUNT(softening_names), name);
  if (i < 0)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = (tfmm_softening)i;
  return TFMM_OK;
}

tfmm_status tfmm_precision_parse(const char *name, tfmm_precision *out) {
  int i = find(precision_names, COUNT(precision_names), name);
  if (i < 0)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = (tfmm_precision)i;
  return TFMM_OK;
}

tfmm_status tfmm_mac_parse(const char *name, tfmm_mac_kind *out) {
  int i = find(mac_names, COUNT(mac_names), name);
  if (i < 0)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = (tfmm_mac_kind)i;
  return TFMM_OK;
}

tfmm_status tfmm_schedule_parse(const char *name, tfmm_schedule_kind *out) {
  int i = find(schedule_names, COUNT(schedule_names), name);
  if (i < 0)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = (tfmm_schedule_kind)i;
  return TFMM_OK;
}

tfmm_status tfmm_far_kernel_parse(const char *name, tfmm_far_kernel *out) {
  int i = find(far_kernel_names, COUNT(far_kernel_names), name);
  if (i < 0)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = (tfmm_far_kernel)i;
  return TFMM_OK;
}

const char *tfmm_version(void) { return TFMM_VERSION_STRING; }
