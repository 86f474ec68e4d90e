/* The configuration: its defaults (each written once, here) and its
 * rules, a table checked top to bottom; the first rule broken names its
 * field in the message. */
#include "config.h"

#include "accuracy.h"
#include "farfield/operators.h"
#include "farfield/soft_taylor.h"
#include "gpu.h"
#include "tree/keys.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(TFMM_MAX_ORDER == TFMM_ORDER_MAX,
               "the public order limit is the operators'");
_Static_assert(TFMM_MAX_TREE_DEPTH == TFMM_KEY_LEVELS,
               "the public depth limit is the keys'");

void tfmm_config_defaults(tfmm_config *cfg) {
  *cfg = (tfmm_config){
      .G = 1.0,
      .eps = 0.0,
      .softening = TFMM_SOFTENING_PLUMMER,
      .precision = TFMM_PRECISION_AUTO,
      .method = TFMM_METHOD_FMM,
      .device = TFMM_DEVICE_AUTO,
      .accuracy = 1e-3,
      .theta = TFMM_FROM_ACCURACY,
      .order = TFMM_FROM_ACCURACY,
      .mac = TFMM_MAC_GEOMETRIC,
      .mac_epsilon = TFMM_FROM_ACCURACY,
      .leaf_size = 64,
      .max_depth = TFMM_KEY_LEVELS,
      .num_threads = 0,
      .gpu_id = 0,
      .schedule = TFMM_SCHEDULE_AUTO,
      .tree_device = TFMM_DEVICE_AUTO,
      .far_device = TFMM_DEVICE_AUTO,
      .near_only = 0,
      .gpu_tile = 0,
      .gpu_threads_per_body = 0,
      .gpu_unroll = 16,
      .gpu_bodies_per_thread = 0,
      .measure = TFMM_MEASURE_AUTO,
      .error_sample = 0,
      .verify = 0,
      .far_kernel = TFMM_FAR_KERNEL_AUTO,
  };
}

int tfmm_method_is_tree(tfmm_method m) {
  return m == TFMM_METHOD_FMM || m == TFMM_METHOD_BH;
}

static int is_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* Whether theta, order and mac_epsilon are all given (none left to the
 * accuracy target). */
static int all_given(const tfmm_config *c) {
  return c->theta >= 0 && c->order >= 0 && c->mac_epsilon >= 0;
}

/* The message of a broken rule; returns 1 (broken). */
static int say(char *msg, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, size, fmt, ap);
  va_end(ap);
  return 1;
}

/* The rules that are more than a range: each returns 0 when c keeps it,
 * else 1 with the message in msg. */
typedef int (*rule_fn)(const tfmm_config *c, char *msg, size_t size);

static int bad_G(const tfmm_config *c, char *msg, size_t size) {
  return !(isfinite(c->G) && c->G > 0) &&
         say(msg, size, "G = %g: must be finite and > 0", c->G);
}
static int bad_eps(const tfmm_config *c, char *msg, size_t size) {
  return !(isfinite(c->eps) && c->eps >= 0) &&
         say(msg, size, "eps = %g: must be finite and >= 0", c->eps);
}
static int bad_error_mac_bh(const tfmm_config *c, char *msg, size_t size) {
  return c->mac == TFMM_MAC_ERROR && c->method == TFMM_METHOD_BH &&
         !all_given(c) &&
         say(msg, size,
             "the error criterion is calibrated for fmm only: with bh, give "
             "theta, order and mac_epsilon");
}
static int bad_error_mac_tol(const tfmm_config *c, char *msg, size_t size) {
  return c->mac == TFMM_MAC_ERROR && c->accuracy < TFMM_ERROR_MAC_MIN_TOL &&
         !all_given(c) &&
         say(msg, size,
             "accuracy = %g with the error criterion: it is calibrated down "
             "to %g; use mac geometric for tighter targets",
             c->accuracy, TFMM_ERROR_MAC_MIN_TOL);
}
static int bad_mac_epsilon(const tfmm_config *c, char *msg, size_t size) {
  return !(isfinite(c->mac_epsilon) && c->mac_epsilon > 0) &&
         c->mac_epsilon != TFMM_FROM_ACCURACY &&
         say(msg, size,
             "mac_epsilon = %g: must be finite and > 0, or "
             "TFMM_FROM_ACCURACY (-1)",
             c->mac_epsilon);
}
static int bad_accuracy(const tfmm_config *c, char *msg, size_t size) {
  return !(c->accuracy > 0 && c->accuracy <= 0.1) &&
         say(msg, size, "accuracy = %g: must be in (0, 0.1]", c->accuracy);
}
static int bad_theta(const tfmm_config *c, char *msg, size_t size) {
  return !(c->theta >= 0 && c->theta <= 1) && c->theta != TFMM_FROM_ACCURACY &&
         say(msg, size,
             "theta = %g: must be in [0, 1], or TFMM_FROM_ACCURACY (-1)",
             c->theta);
}
static int bad_order(const tfmm_config *c, char *msg, size_t size) {
  return (c->order < 0 || c->order > TFMM_ORDER_MAX) &&
         c->order != TFMM_FROM_ACCURACY &&
         say(msg, size,
             "order = %d: must be in [0, %d], or TFMM_FROM_ACCURACY (-1)",
             c->order, TFMM_ORDER_MAX);
}
static int bad_fmm_order(const tfmm_config *c, char *msg, size_t size) {
  return c->method == TFMM_METHOD_FMM && c->order >= 0 && c->order < 1 &&
         say(msg, size,
             "order = 0 with method fmm: a local expansion of degree 0 is a "
             "constant and exerts no force; use order >= 1 (bh accepts 0, "
             "the monopole)");
}
static int bad_box(const tfmm_config *c, char *msg, size_t size) {
  return (!isfinite(c->box_size) || c->box_size < 0 ||
          !isfinite(c->box_min[0]) || !isfinite(c->box_min[1]) ||
          !isfinite(c->box_min[2])) &&
         say(msg, size,
             "box_min = (%g, %g, %g), box_size = %g: must be finite, the "
             "size >= 0 (0: the bodies' own cube)",
             c->box_min[0], c->box_min[1], c->box_min[2], c->box_size);
}
static int bad_leaf(const tfmm_config *c, char *msg, size_t size) {
  return c->leaf_size < 0 &&
         say(msg, size, "leaf_size = %d: must be >= 1, or TFMM_LEAF_AUTO (0)",
             c->leaf_size);
}
static int bad_reference_gpu(const tfmm_config *c, char *msg, size_t size) {
  return c->method == TFMM_METHOD_REFERENCE && c->device == TFMM_DEVICE_GPU &&
         say(msg, size, "the reference method runs on the CPU only");
}
static int bad_tree_gpu(const tfmm_config *c, char *msg, size_t size) {
  return c->tree_device == TFMM_DEVICE_GPU && tfmm_method_is_tree(c->method) &&
         c->device == TFMM_DEVICE_CPU &&
         say(msg, size,
             "tree_device gpu needs the solver on the GPU (device gpu or "
             "auto)");
}
static int bad_far_gpu(const tfmm_config *c, char *msg, size_t size) {
  return c->far_device == TFMM_DEVICE_GPU && tfmm_method_is_tree(c->method) &&
         (c->device == TFMM_DEVICE_CPU || c->tree_device == TFMM_DEVICE_CPU) &&
         say(msg, size,
             "far_device gpu needs the solver and the tree on the GPU "
             "(device and tree_device gpu or auto)");
}
static int bad_schedule_device(const tfmm_config *c, char *msg, size_t size) {
  return c->schedule == TFMM_SCHEDULE_GPU && tfmm_method_is_tree(c->method) &&
         c->device == TFMM_DEVICE_CPU &&
         say(msg, size,
             "schedule gpu needs the solver on the GPU (device gpu or auto)");
}
static int bad_schedule_stages(const tfmm_config *c, char *msg, size_t size) {
  return c->schedule == TFMM_SCHEDULE_GPU && tfmm_method_is_tree(c->method) &&
         (c->tree_device == TFMM_DEVICE_CPU ||
          c->far_device == TFMM_DEVICE_CPU) &&
         say(msg, size,
             "schedule gpu runs the tree and the far field on the GPU: "
             "tree_device and far_device cpu belong to schedule hybrid");
}
static int bad_gpu_id(const tfmm_config *c, char *msg, size_t size) {
  return c->gpu_id < 0 &&
         say(msg, size, "gpu_id = %d: must be >= 0", c->gpu_id);
}
static int bad_gpu_tile(const tfmm_config *c, char *msg, size_t size) {
  const int p = c->gpu_tile;
  return p != 0 && (p < 32 || p > TFMM_DIRECT_MAX_TILE || p % 32 != 0) &&
         say(msg, size,
             "gpu_tile = %d: must be 0 or a multiple of 32 in [32, %d]", p,
             TFMM_DIRECT_MAX_TILE);
}
static int bad_bodies_per_thread(const tfmm_config *c, char *msg, size_t size) {
  const int r = c->gpu_bodies_per_thread;
  return r != 0 && r != 1 && r != 2 && r != 4 &&
         say(msg, size, "gpu_bodies_per_thread = %d: must be 0, 1, 2 or 4", r);
}
static int bad_threads_per_body(const tfmm_config *c, char *msg, size_t size) {
  const int q = c->gpu_threads_per_body;
  return q != 0 && (!is_power_of_two(q) || q > 1024) &&
         say(msg, size,
             "gpu_threads_per_body = %d: must be 0 or a power of two", q);
}
/* With p and q both given, the block must fit: p * q threads (512 at most
 * when r = 4) and p * p * q bytes of shared memory. */
static int bad_gpu_shape(const tfmm_config *c, char *msg, size_t size) {
  const int p = c->gpu_tile, q = c->gpu_threads_per_body,
            r = c->gpu_bodies_per_thread == 0 ? 1 : c->gpu_bodies_per_thread;
  return p != 0 && q != 0 && !tfmm_direct_shape_ok(p, q, r) &&
         say(msg, size,
             "gpu_threads_per_body = %d with gpu_tile = %d "
             "(gpu_bodies_per_thread = %d): needs gpu_tile * q <= %d "
             "threads and gpu_tile^2 * q <= %d bytes of shared memory",
             q, p, c->gpu_bodies_per_thread, tfmm_direct_max_threads(r),
             TFMM_DIRECT_MAX_SHARED);
}
static int bad_gpu_unroll(const tfmm_config *c, char *msg, size_t size) {
  return (!is_power_of_two(c->gpu_unroll) || c->gpu_unroll > 32) &&
         say(msg, size, "gpu_unroll = %d: must be 1, 2, 4, 8, 16 or 32",
             c->gpu_unroll);
}

static int bad_verify(const tfmm_config *c, char *msg, size_t size) {
  return c->verify && c->measure == TFMM_MEASURE_OFF &&
         say(msg, size, "verify = 1 with measure off: verifying measures");
}

/* The softened far field (tfmm_far_kernel): Plummer's kernel, eps > 0,
 * the Taylor operators' orders, a criterion calibrated for it, and on
 * the GPU the gpu schedule. */
static int softened(const tfmm_config *c) {
  return c->far_kernel == TFMM_FAR_KERNEL_SOFTENED;
}
static int bad_soft_plummer(const tfmm_config *c, char *msg, size_t size) {
  return softened(c) && c->softening != TFMM_SOFTENING_PLUMMER &&
         say(msg, size,
             "far_kernel softened carries Plummer's kernel, not softening "
             "spline's (Newtonian beyond 2.8 eps already): use far_kernel "
             "newton or auto");
}
static int bad_soft_eps(const tfmm_config *c, char *msg, size_t size) {
  return softened(c) && !(c->eps > 0) &&
         say(msg, size,
             "far_kernel softened needs eps > 0 (eps = %g: the kernel is "
             "Newton's); use far_kernel newton or auto",
             c->eps);
}
static int bad_soft_order(const tfmm_config *c, char *msg, size_t size) {
  return softened(c) && c->order > TFMM_SOFT_TAYLOR_ORDER_MAX &&
         say(msg, size,
             "order = %d with far_kernel softened: its Taylor operators go "
             "to order %d",
             c->order, TFMM_SOFT_TAYLOR_ORDER_MAX);
}
static int bad_soft_mac(const tfmm_config *c, char *msg, size_t size) {
  return softened(c) && c->mac == TFMM_MAC_ERROR &&
         say(msg, size,
             "far_kernel softened with the error criterion: its error "
             "estimate is the Newtonian expansions'; use mac geometric or "
             "mass");
}
static int bad_soft_gpu(const tfmm_config *c, char *msg, size_t size) {
  return softened(c) && tfmm_method_is_tree(c->method) &&
         c->schedule == TFMM_SCHEDULE_HYBRID &&
         (c->tree_device == TFMM_DEVICE_GPU ||
          c->far_device == TFMM_DEVICE_GPU) &&
         say(msg, size,
             "far_kernel softened on the GPU runs in the gpu schedule only: "
             "the hybrid schedule's GPU far field and multipoles carry "
             "Newton's kernel; use schedule gpu or auto, tree_device and "
             "far_device cpu, or far_kernel newton");
}

/* One row of the table: an int field (an enum or a count) held to
 * [lo, hi], or a rule of its own (own != NULL). */
typedef struct field_rule {
  const char *name; /* the field, as the message names it */
  size_t offset;    /* of the int field, for a range */
  int lo, hi;
  rule_fn own;
  int is_enum; /* a range: "NAME %d is unknown", else "must be in" */
} field_rule;

#define ENUM(label, field, lo, hi)                                             \
  { label, offsetof(tfmm_config, field), lo, hi, NULL, 1 }
#define RANGE(field, lo, hi)                                                   \
  { #field, offsetof(tfmm_config, field), lo, hi, NULL, 0 }
#define OWN(field, fn)                                                         \
  { #field, 0, 0, 0, fn, 0 }

/* In the order they are checked: a configuration that breaks several
 * rules is told of the first. */
static const field_rule RULES[] = {
    OWN(G, bad_G),
    OWN(eps, bad_eps),
    ENUM("method", method, TFMM_METHOD_REFERENCE, TFMM_METHOD_BH),
    ENUM("softening", softening, TFMM_SOFTENING_PLUMMER, TFMM_SOFTENING_SPLINE),
    ENUM("precision", precision, TFMM_PRECISION_SINGLE, TFMM_PRECISION_AUTO),
    ENUM("opening criterion", mac, TFMM_MAC_GEOMETRIC, TFMM_MAC_ERROR),
    OWN(mac, bad_error_mac_bh),
    OWN(accuracy, bad_error_mac_tol),
    OWN(mac_epsilon, bad_mac_epsilon),
    OWN(accuracy, bad_accuracy),
    OWN(theta, bad_theta),
    OWN(order, bad_order),
    OWN(order, bad_fmm_order),
    OWN(box_size, bad_box),
    OWN(leaf_size, bad_leaf),
    RANGE(max_depth, 1, TFMM_KEY_LEVELS),
    ENUM("device", device, TFMM_DEVICE_AUTO, TFMM_DEVICE_GPU),
    OWN(device, bad_reference_gpu),
    ENUM("tree_device", tree_device, TFMM_DEVICE_AUTO, TFMM_DEVICE_GPU),
    OWN(tree_device, bad_tree_gpu),
    ENUM("far_device", far_device, TFMM_DEVICE_AUTO, TFMM_DEVICE_GPU),
    OWN(far_device, bad_far_gpu),
    ENUM("schedule", schedule, TFMM_SCHEDULE_AUTO, TFMM_SCHEDULE_HYBRID),
    OWN(schedule, bad_schedule_device),
    OWN(schedule, bad_schedule_stages),
    {"near_only", offsetof(tfmm_config, near_only), 0, 1, NULL, 0},
    RANGE(num_threads, 0, TFMM_MAX_THREADS),
    OWN(gpu_id, bad_gpu_id),
    OWN(gpu_tile, bad_gpu_tile),
    OWN(gpu_bodies_per_thread, bad_bodies_per_thread),
    OWN(gpu_threads_per_body, bad_threads_per_body),
    OWN(gpu_threads_per_body, bad_gpu_shape),
    OWN(gpu_unroll, bad_gpu_unroll),
    ENUM("measure", measure, TFMM_MEASURE_AUTO, TFMM_MEASURE_OFF),
    RANGE(error_sample, 0, 1 << 24),
    {"verify", offsetof(tfmm_config, verify), 0, 1, NULL, 0},
    OWN(verify, bad_verify),
    ENUM("far_kernel", far_kernel, TFMM_FAR_KERNEL_AUTO,
         TFMM_FAR_KERNEL_SOFTENED),
    OWN(far_kernel, bad_soft_plummer),
    OWN(far_kernel, bad_soft_eps),
    OWN(far_kernel, bad_soft_order),
    OWN(far_kernel, bad_soft_mac),
    OWN(far_kernel, bad_soft_gpu),
};

/* Whether c breaks rule r; if so its message in msg. */
static int rule_broken(const field_rule *r, const tfmm_config *c, char *msg,
                       size_t size) {
  if (r->own != NULL)
    return r->own(c, msg, size);
  int v;
  memcpy(&v, (const char *)c + r->offset, sizeof v);
  if (v >= r->lo && v <= r->hi)
    return 0;
  if (r->is_enum)
    return say(msg, size, "%s %d is unknown", r->name, v);
  if (r->lo == 0 && r->hi == 1)
    return say(msg, size, "%s = %d: must be 0 or 1", r->name, v);
  return say(msg, size, "%s = %d: must be in [%d, %d]", r->name, v, r->lo,
             r->hi);
}

tfmm_status tfmm_config_check(const tfmm_config *c, tfmm_error *err) {
  if (c == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "configuration is NULL");
  char msg[TFMM_MESSAGE_SIZE];
  for (size_t k = 0; k < sizeof RULES / sizeof RULES[0]; k++)
    if (rule_broken(&RULES[k], c, msg, sizeof msg))
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT, "%s", msg);
  return TFMM_OK;
}
