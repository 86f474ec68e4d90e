/* One resolver of settings (plan.h): the device from the configuration
 * and the probe, the leaf size, the stages for n bodies, and theta, order,
 * precision and the criterion's epsilon from the accuracy target. */
#include "plan.h"

#include "accuracy.h"
#include "config.h"
#include "gpu_probe.h"
#include "leaf_auto.h"
#include "planner.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Whether CUDA device `id` can run the kernels; if not, the reason in err
 * (the probe's explanation: which GPU, why, how to fix it). */
static int gpu_usable(int id, tfmm_error *err) {
  tfmm_gpu_probe probe;
  tfmm_gpu_probe_run(&probe);
  char why[TFMM_MESSAGE_SIZE];
  tfmm_gpu_probe_explain(&probe, why, sizeof why);
  if (id < probe.ndevices && probe.device[id].fault == TFMM_GPU_FAULT_NONE)
    return 1;
  if (why[0] == '\0')
    snprintf(why, sizeof why, "%s", tfmm_gpu_probe_none(&probe));
  if (id < probe.ndevices || probe.ndevices == 0)
    tfmm_error_set(err, TFMM_ERR_NO_DEVICE, "device gpu: CUDA device %d: %s",
                   id, why);
  else
    tfmm_error_set(err, TFMM_ERR_NO_DEVICE,
                   "device gpu: no CUDA device %d (%d found)", id,
                   probe.ndevices);
  return 0;
}

tfmm_status tfmm_plan_device(const tfmm_config *c, tfmm_device *out,
                             tfmm_error *err) {
  /* Direct runs whole on the GPU; the tree methods put their near field
   * there. auto takes the GPU when device gpu_id can run the kernels. */
  tfmm_error why;
  const int want_gpu =
      c->method != TFMM_METHOD_REFERENCE &&
      (c->device == TFMM_DEVICE_GPU ||
       (c->device == TFMM_DEVICE_AUTO && gpu_usable(c->gpu_id, &why)));
  *out = want_gpu ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
  if (!want_gpu &&
      (c->tree_device == TFMM_DEVICE_GPU || c->far_device == TFMM_DEVICE_GPU ||
       c->schedule == TFMM_SCHEDULE_GPU) &&
      tfmm_method_is_tree(c->method))
    return tfmm_error_set(err, TFMM_ERR_NO_DEVICE,
                          "%s gpu: no GPU is in use (none found)",
                          c->schedule == TFMM_SCHEDULE_GPU    ? "schedule"
                          : c->tree_device == TFMM_DEVICE_GPU ? "tree_device"
                                                              : "far_device");
  if (!want_gpu)
    return TFMM_OK;
  if (!tfmm_has_cuda())
    return tfmm_error_set(err, TFMM_ERR_NO_DEVICE,
                          "device gpu: this tilefmm was built without CUDA");
  if (c->device == TFMM_DEVICE_GPU && !gpu_usable(c->gpu_id, err))
    return TFMM_ERR_NO_DEVICE;
  return TFMM_OK;
}

int tfmm_plan_leaf(const tfmm_config *c, tfmm_device device) {
  return c->leaf_size != TFMM_LEAF_AUTO ? c->leaf_size
         : device == TFMM_DEVICE_GPU    ? TFMM_LEAF_AUTO_GPU
                                        : TFMM_LEAF_AUTO_CPU;
}

/* Whether the tree and its multipoles are built on the GPU
 * (tfmm_config.tree_device; a far field on the GPU needs them there). */
static int tree_on_gpu(const tfmm_config *cfg, int near_gpu, size_t n) {
  if (!near_gpu || cfg->tree_device == TFMM_DEVICE_CPU)
    return 0;
  return cfg->tree_device == TFMM_DEVICE_GPU ||
         cfg->far_device == TFMM_DEVICE_GPU || n >= TFMM_TREE_GPU_MIN_BODIES;
}

/* Whether this evaluation runs the gpu schedule (tfmm_config.schedule). */
static int gpu_schedule(const tfmm_config *cfg, int near_gpu, size_t n) {
  if (!near_gpu || cfg->schedule == TFMM_SCHEDULE_HYBRID)
    return 0;
  if (cfg->schedule == TFMM_SCHEDULE_GPU)
    return 1;
  return cfg->tree_device != TFMM_DEVICE_CPU &&
         cfg->far_device != TFMM_DEVICE_CPU && n >= TFMM_TREE_GPU_MIN_BODIES;
}

void tfmm_plan_stages(const tfmm_config *cfg, int near_gpu, size_t n,
                      tfmm_schedule_kind *schedule, tfmm_device *tree_device,
                      tfmm_device *far_device) {
  if (gpu_schedule(cfg, near_gpu, n)) {
    *schedule = TFMM_SCHEDULE_GPU;
    *tree_device = *far_device = TFMM_DEVICE_GPU;
    return;
  }
  *schedule = TFMM_SCHEDULE_HYBRID;
  /* The softened far field runs on the GPU in the gpu schedule only; in
   * the hybrid one it and its multipoles are the CPU's (the configuration
   * refuses schedule hybrid with either asked on the GPU). */
  if (cfg->far_kernel == TFMM_FAR_KERNEL_SOFTENED &&
      tfmm_method_is_tree(cfg->method)) {
    *tree_device = *far_device = TFMM_DEVICE_CPU;
    return;
  }
  const int tree_gpu = tree_on_gpu(cfg, near_gpu, n);
  *tree_device = tree_gpu ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
  *far_device = tree_gpu && cfg->far_device != TFMM_DEVICE_CPU
                    ? TFMM_DEVICE_GPU
                    : TFMM_DEVICE_CPU;
}

/* Why tfmm_plan_far_kernel chose what it did for cfg, n bodies and the
 * near field on the GPU or not (*kernel: the choice), in a few words (the
 * plan string is short). auto takes newton where the hybrid schedule
 * runs the far field on the GPU (Newton's there), for bh and the other
 * criteria (not measured),
 * and where the planner does not measure (the softened rows are the
 * worst of three inputs: at 1e-3 they give theta 0.3, p 8, 2-4x the
 * settings a measurement finds on a Plummer sphere); softened at targets
 * >= TFMM_SOFT_AUTO_MIN_TOL from TFMM_SOFT_AUTO_MIN_BODIES bodies
 * (tilefmm.h; bench/results/soft_expansion). */
static const char *far_kernel_reason(const tfmm_config *c, int near_gpu,
                                     size_t n, double eps_rel,
                                     tfmm_far_kernel *kernel) {
  *kernel = TFMM_FAR_KERNEL_NEWTON;
  if (!tfmm_method_is_tree(c->method) ||
      c->softening != TFMM_SOFTENING_PLUMMER || !(c->eps > 0))
    return "no Plummer softening";
  if (c->far_kernel != TFMM_FAR_KERNEL_AUTO) {
    *kernel = c->far_kernel;
    return "as given";
  }
  tfmm_schedule_kind schedule;
  tfmm_device tree, far;
  tfmm_plan_stages(c, near_gpu, n, &schedule, &tree, &far);
  if (schedule != TFMM_SCHEDULE_GPU &&
      (tree == TFMM_DEVICE_GPU || far == TFMM_DEVICE_GPU))
    return "auto: hybrid, far field on the GPU";
  if (c->method != TFMM_METHOD_FMM || c->mac != TFMM_MAC_GEOMETRIC)
    return "auto: not fmm, geometric";
  if (!tfmm_planner_active(c))
    return "auto: theta and order not measured";
  /* The target's rounding: 1e-3 given as 0.001 is 1e-3. */
  if (c->accuracy < TFMM_SOFT_AUTO_MIN_TOL * (1 - 1e-9))
    return "auto: target < 1e-3";
  if (n < TFMM_SOFT_AUTO_MIN_BODIES)
    return "auto: < 200,000 bodies";
  if (eps_rel < TFMM_SOFT_AUTO_MIN_EPS)
    return "auto: eps < 1e-4 of the bodies' cube";
  *kernel = TFMM_FAR_KERNEL_SOFTENED;
  return "auto: >= 200,000 bodies, eps >= 1e-4 of their cube";
}

tfmm_far_kernel tfmm_plan_far_kernel(const tfmm_config *cfg, int near_gpu,
                                     size_t n, double eps_rel) {
  tfmm_far_kernel kernel;
  far_kernel_reason(cfg, near_gpu, n, eps_rel, &kernel);
  return kernel;
}

double tfmm_plan_eps_rel(const tfmm_config *cfg) {
  if (!(cfg->box_size > 0))
    return cfg->eps;
  int e = 0;
  frexp(cfg->box_size, &e); /* as units.c scales lengths */
  return ldexp(cfg->eps, -e);
}

void tfmm_plan_far_kernel_note(const tfmm_config *cfg, int near_gpu, size_t n,
                               double eps_rel, char *out, size_t size) {
  tfmm_far_kernel kernel;
  const char *why = far_kernel_reason(cfg, near_gpu, n, eps_rel, &kernel);
  const size_t used = strlen(out);
  if (used < size && tfmm_method_is_tree(cfg->method) &&
      cfg->softening == TFMM_SOFTENING_PLUMMER && cfg->eps > 0)
    snprintf(out + used, size - used, "; far field %s (%s)",
             tfmm_far_kernel_name(kernel), why);
}

/* The plan of a checked cfg on device, for n bodies. */
static void fill(const tfmm_config *c, tfmm_device device, size_t n,
                 tfmm_plan *p) {
  memset(p, 0, sizeof *p);
  p->method = c->method;
  p->device = device;
  p->mac = c->mac;
  if (!tfmm_method_is_tree(c->method)) {
    /* All pairs: double for the reference; the direct method has no
     * accuracy target, so auto is single. */
    p->precision = c->method == TFMM_METHOD_REFERENCE ||
                           c->precision == TFMM_PRECISION_DOUBLE
                       ? TFMM_PRECISION_DOUBLE
                       : TFMM_PRECISION_SINGLE;
    p->schedule = TFMM_SCHEDULE_AUTO;
    p->tree_device = p->far_device = device;
    p->far_kernel = TFMM_FAR_KERNEL_NEWTON;
    return;
  }
  const int near_gpu = device == TFMM_DEVICE_GPU;
  p->leaf_size = tfmm_plan_leaf(c, device);
  tfmm_plan_stages(c, near_gpu, n, &p->schedule, &p->tree_device,
                   &p->far_device);
  tfmm_resolved r;
  tfmm_config guessed = *c;
  const tfmm_far_kernel kernel =
      tfmm_plan_far_kernel(c, near_gpu, n, tfmm_plan_eps_rel(c));
  tfmm_planner_first_guess(c, kernel, p->leaf_size, near_gpu, &guessed.theta,
                           &guessed.order, &guessed.mac_epsilon);
  tfmm_accuracy_resolve(&guessed, kernel, p->leaf_size, near_gpu, &r);
  p->far_kernel = r.far_kernel;
  p->theta = r.theta;
  p->order = r.order;
  p->precision = r.precision;
  p->mac_epsilon = r.mac_epsilon;
  p->separation = r.separation;
}

/* The message of err into msg (size bytes), if msg is not NULL. */
static void tell(const tfmm_error *err, char *msg, size_t size) {
  if (msg != NULL && size > 0)
    snprintf(msg, size, "%s", err->message);
}

tfmm_status tfmm_plan_resolve(const tfmm_config *cfg, size_t n, tfmm_plan *plan,
                              char *msg, size_t size) {
  tfmm_error err = {{0}};
  tfmm_status st =
      plan == NULL
          ? tfmm_error_set(&err, TFMM_ERR_INVALID_ARGUMENT, "plan is NULL")
          : tfmm_config_check(cfg, &err);
  if (st == TFMM_OK) {
    tfmm_device device;
    st = tfmm_plan_device(cfg, &device, &err);
    fill(cfg, device, n, plan);
  }
  tell(&err, msg, size);
  return st;
}

tfmm_status tfmm_config_resolve(const tfmm_config *cfg, double *theta,
                                int *order, double *separation, char *msg,
                                size_t size) {
  tfmm_error err = {{0}};
  tfmm_status st = tfmm_config_check(cfg, &err);
  if (st == TFMM_OK) {
    /* Only the configuration's own rules: a GPU asked for and missing is
     * the solver's error; theta and order are those it would use. */
    tfmm_error none;
    tfmm_device device;
    tfmm_plan_device(cfg, &device, &none);
    const int tree = tfmm_method_is_tree(cfg->method);
    tfmm_resolved r;
    const int leaf = tree ? tfmm_plan_leaf(cfg, device) : cfg->leaf_size;
    const int near_gpu = tree && device == TFMM_DEVICE_GPU;
    tfmm_config guessed = *cfg;
    /* n unknown: the kernel of small N. */
    const tfmm_far_kernel kernel =
        tfmm_plan_far_kernel(cfg, near_gpu, 0, tfmm_plan_eps_rel(cfg));
    if (tree)
      tfmm_planner_first_guess(cfg, kernel, leaf, near_gpu, &guessed.theta,
                               &guessed.order, &guessed.mac_epsilon);
    tfmm_accuracy_resolve(&guessed, kernel, leaf, near_gpu, &r);
    if (theta != NULL)
      *theta = r.theta;
    if (order != NULL)
      *order = r.order;
    if (separation != NULL)
      *separation = r.separation;
  }
  tell(&err, msg, size);
  return st;
}
