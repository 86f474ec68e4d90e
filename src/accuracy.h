/* From the accuracy the user asks for to the settings that meet it: the
 * opening angle and order (from the calibration in accuracy_table.h) and
 * the softening's separation of far-field cells (mac.h). */
#ifndef TFMM_ACCURACY_H
#define TFMM_ACCURACY_H

#include "internal.h"

/* What one tree evaluation uses. */
typedef struct tfmm_resolved {
  double theta;      /* opening angle */
  int order;         /* expansion order */
  double separation; /* closest approach of far-field bodies (mac.h) */
} tfmm_resolved;

/* Fills *out for cfg (a checked configuration). Tree methods only. */
void tfmm_accuracy_resolve(const tfmm_config *cfg, tfmm_resolved *out);

/* The distance beyond which Plummer's force m r / (r^2 + eps^2)^(3/2)
 * differs from Newton's m / r^2 by at most the fraction delta:
 * eps / sqrt((1 - delta)^(-2/3) - 1). */
double tfmm_plummer_separation(double eps, double delta);

#endif
