#include "leaf_auto.h"

#include <math.h>

int tfmm_leaf_auto_next(int leaf, double near, double far) {
  if (!(near > 0) || !(far > 0) || !isfinite(near) || !isfinite(far))
    return leaf;
  double ratio = far / near;
  if (ratio > 1 / 1.15 && ratio < 1.15)
    return leaf;
  double step = sqrt(ratio);
  step = step < 0.25 ? 0.25 : step > 4 ? 4 : step;
  double next = round(leaf * step);
  if (next < TFMM_LEAF_AUTO_MIN)
    next = TFMM_LEAF_AUTO_MIN;
  if (next > TFMM_LEAF_AUTO_MAX)
    next = TFMM_LEAF_AUTO_MAX;
  return (int)next;
}
