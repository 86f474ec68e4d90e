/* From the accuracy the user asks for to the settings that meet it: the
 * opening angle and order (from the calibration in accuracy_table.h) and
 * the softening's separation of far-field cells (mac.h). */
#ifndef TFMM_ACCURACY_H
#define TFMM_ACCURACY_H

#include "internal.h"

/* What one tree evaluation uses. */
typedef struct tfmm_resolved {
  double theta;               /* opening angle */
  int order;                  /* expansion order */
  double separation;          /* closest approach of far-field bodies (mac.h) */
  double mac_epsilon;         /* the error criterion's epsilon (0: not used) */
  tfmm_precision precision;   /* of the near field: single or double */
  tfmm_far_kernel far_kernel; /* the far field's: newton or softened */
} tfmm_resolved;

/* Fills *out for cfg (a checked configuration) evaluated with the far
 * field's kernel `kernel` (newton or softened, as the plan resolved it:
 * tfmm_plan_far_kernel), leaves of leaf_size bodies and the near field on
 * the GPU (near_gpu) or the CPU. The rows chosen from are the kernel's
 * (tfmm_accuracy_rows) calibrated on that device at a leaf size at most
 * leaf_size (errors fall as leaves grow), else the CPU's. With the
 * softened kernel the separation is 0. Tree methods only. */
void tfmm_accuracy_resolve(const tfmm_config *cfg, tfmm_far_kernel kernel,
                           int leaf_size, int near_gpu, tfmm_resolved *out);

struct tfmm_accuracy_row;

/* The calibration rows of a far-field kernel: accuracy_table.h's for
 * newton, accuracy_table_soft.h's for softened; *count of them. */
const struct tfmm_accuracy_row *tfmm_accuracy_rows(tfmm_far_kernel kernel,
                                                   size_t *count);

/* The tightest target the error criterion's calibration reaches with its
 * margin (its most accurate row: p99 1.9e-6); tighter ones are refused
 * under TFMM_MAC_ERROR unless theta, order and mac_epsilon are all given. */
#define TFMM_ERROR_MAC_MIN_TOL 1e-5

/* Targets below this run the near field in double under
 * TFMM_PRECISION_AUTO: the single-precision floor measured on the
 * calibration and test inputs reaches 2.3e-4 (docs/accuracy.md). */
#define TFMM_SINGLE_FLOOR 3e-4

/* The distance beyond which Plummer's force m r / (r^2 + eps^2)^(3/2)
 * differs from Newton's m / r^2 by at most the fraction delta:
 * eps / sqrt((1 - delta)^(-2/3) - 1). */
double tfmm_plummer_separation(double eps, double delta);

#endif
