/* The GPU check's decisions and words (src/gpu_probe.c), fed with invented
 * machines: which devices count as usable, and that every GPU present but
 * unusable is named with its reason and its fix, while a machine without
 * a GPU or a driver gets no message at all.
 *
 * Truth: the CUDA runtime's own classification (which error means what),
 * written out by hand per case; the fixes the docs give (docs/building.md). */
#include "gpu_probe.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <tilefmm.h>

enum { MSG = 1024 };

static tfmm_gpu_probe machine(int ndevices) {
  tfmm_gpu_probe p;
  memset(&p, 0xA5, sizeof p); /* poisoned: every field read is set below */
  p.cuda_built = 1;
  p.gpu_node = 0;
  p.archs = "90";
  p.runtime_version = 13000;
  p.driver_version = 13000;
  p.list_fault = TFMM_GPU_FAULT_NONE;
  p.list_error[0] = '\0';
  p.ndevices = ndevices;
  for (int k = 0; k < TFMM_GPU_PROBE_DEVICES; k++) {
    tfmm_gpu_probe_device *d = &p.device[k];
    snprintf(d->name, sizeof d->name, "NVIDIA H100 80GB HBM3");
    d->major = 9;
    d->minor = 0;
    d->fault = TFMM_GPU_FAULT_NONE;
    d->error[0] = '\0';
  }
  return p;
}

static int lines(const char *s) {
  if (s[0] == '\0')
    return 0;
  int n = 1;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

static void expect_has(const char *msg, const char *what) {
  cr_expect(strstr(msg, what) != NULL, "'%s' not in: %s", what, msg);
}

static void expect_lacks(const char *msg, const char *what) {
  cr_expect(strstr(msg, what) == NULL, "'%s' in: %s", what, msg);
}

Test(gpu_probe, every_device_usable_says_nothing) {
  tfmm_gpu_probe p = machine(3);
  char msg[MSG];
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 3);
  cr_expect_str_empty(msg);
}

Test(gpu_probe, no_device_and_no_driver_say_nothing) {
  tfmm_gpu_probe p = machine(0);
  char msg[MSG];
  p.list_fault = TFMM_GPU_FAULT_NO_DEVICE;
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  cr_expect_str_empty(msg);
  cr_expect_str_eq(tfmm_gpu_probe_none(&p), "no CUDA device found");
  /* No libcuda at all: the runtime reports an insufficient driver, and the
   * driver version is 0. Not a GPU to fix. */
  p.list_fault = TFMM_GPU_FAULT_DRIVER;
  p.driver_version = 0;
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  cr_expect_str_empty(msg);
  cr_expect_str_eq(tfmm_gpu_probe_none(&p), "no NVIDIA driver is installed");
}

Test(gpu_probe, old_driver_names_both_versions_and_the_fix) {
  tfmm_gpu_probe p = machine(0);
  p.list_fault = TFMM_GPU_FAULT_DRIVER;
  p.driver_version = 12040;
  char msg[MSG];
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  cr_expect_eq(lines(msg), 1, "%s", msg);
  expect_has(msg, "supports CUDA up to 12.4");
  expect_has(msg, "CUDA 13.0 runtime");
  expect_has(msg, "update the NVIDIA driver (CUDA 13 needs driver 580");
  expect_has(msg, "toolkit no newer than 12.4");
}

Test(gpu_probe, missing_architecture_names_the_gpu_and_the_flag) {
  tfmm_gpu_probe p = machine(2);
  snprintf(p.device[1].name, sizeof p.device[1].name,
           "NVIDIA GeForce RTX 3090");
  p.device[1].major = 8;
  p.device[1].minor = 6;
  p.device[1].fault = TFMM_GPU_FAULT_NO_IMAGE;
  char msg[MSG];
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 1);
  cr_expect_eq(lines(msg), 1, "%s", msg);
  expect_has(msg, "GPU 1 (NVIDIA GeForce RTX 3090, compute capability 8.6)");
  expect_has(msg, "built for CUDA architectures 90");
  expect_has(msg, "-DCMAKE_CUDA_ARCHITECTURES=86");
  expect_has(msg, "native");
  expect_lacks(msg, "GPU 0");
}

Test(gpu_probe, too_old_a_gpu_is_not_told_to_rebuild) {
  tfmm_gpu_probe p = machine(1);
  p.device[0].major = 7;
  p.device[0].minor = 5;
  p.device[0].fault = TFMM_GPU_FAULT_NO_IMAGE;
  char msg[MSG];
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  expect_has(msg, "compute capability 7.5");
  expect_has(msg, "need compute capability 8.0 or newer");
  expect_lacks(msg, "CMAKE_CUDA_ARCHITECTURES");
}

Test(gpu_probe, ptx_newer_than_the_driver) {
  tfmm_gpu_probe p = machine(1);
  p.driver_version = 12080;
  p.archs = "80;90-real";
  p.device[0].major = 12;
  p.device[0].minor = 0;
  p.device[0].fault = TFMM_GPU_FAULT_PTX;
  char msg[MSG];
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  expect_has(msg, "GPU 0");
  expect_has(msg, "driver (CUDA 12.8)");
  expect_has(msg, "update the NVIDIA driver");
  expect_has(msg, "-DCMAKE_CUDA_ARCHITECTURES=120-real");
}

Test(gpu_probe, other_errors_are_passed_on_per_device_and_in_order) {
  tfmm_gpu_probe p = machine(4);
  p.device[0].fault = TFMM_GPU_FAULT_OTHER;
  snprintf(p.device[0].error, sizeof p.device[0].error,
           "cudaSetDevice: busy (CUDA error 46)");
  p.device[2].fault = TFMM_GPU_FAULT_NO_IMAGE;
  p.device[2].major = 10;
  p.device[2].minor = 3;
  char msg[MSG];
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 2);
  cr_expect_eq(lines(msg), 2, "%s", msg);
  const char *a = strstr(msg, "GPU 0"), *b = strstr(msg, "GPU 2");
  cr_assert(a != NULL && b != NULL && a < b, "%s", msg);
  expect_has(msg, "cudaSetDevice: busy (CUDA error 46)");
  expect_has(msg, "=103");
}

Test(gpu_probe, listing_failure_and_a_build_without_cuda) {
  tfmm_gpu_probe p = machine(0);
  p.list_fault = TFMM_GPU_FAULT_OTHER;
  snprintf(p.list_error, sizeof p.list_error, "driver mismatch (803)");
  char msg[MSG];
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  expect_has(msg, "CUDA cannot list the GPUs: driver mismatch (803)");
  p = machine(0);
  p.cuda_built = 0;
  p.gpu_node = 1;
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  expect_has(msg, "built without CUDA");
  expect_has(msg, "-DTILEFMM_CUDA=ON");
  p.gpu_node = 0;
  cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, sizeof msg), 0);
  cr_expect_str_empty(msg);
  cr_expect_str_eq(tfmm_gpu_probe_none(&p),
                   "this tilefmm was built without CUDA");
}

Test(gpu_probe, small_buffers_are_cut_and_terminated) {
  tfmm_gpu_probe p = machine(3);
  for (int k = 0; k < 3; k++)
    p.device[k].fault = TFMM_GPU_FAULT_NO_IMAGE;
  char msg[48];
  for (size_t size = 1; size <= sizeof msg; size++) {
    memset(msg, 'x', sizeof msg);
    cr_expect_eq(tfmm_gpu_probe_explain(&p, msg, size), 0);
    cr_expect_lt(strlen(msg), size);
    cr_expect(size == sizeof msg || msg[size] == 'x', "wrote past %zu", size);
  }
  cr_expect_eq(tfmm_gpu_probe_explain(&p, NULL, 0), 0);
}

/* The library's entry point agrees with tfmm_gpu_count on this machine
 * and always terminates its message. */
Test(gpu_probe, public_check_matches_the_count) {
  char msg[MSG];
  memset(msg, 'x', sizeof msg);
  const int usable = tfmm_gpu_check(msg, sizeof msg);
  cr_expect_eq(usable, tfmm_gpu_count());
  cr_expect_lt(strlen(msg), sizeof msg);
  cr_expect_eq(tfmm_gpu_check(NULL, 0), usable);
}
