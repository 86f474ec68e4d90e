#include "pipeline/tree_life.h"

#include <math.h>

static int same_shape(const tfmm_tree_shape *a, const tfmm_tree_shape *b) {
  if (a->n != b->n || a->leaf_size != b->leaf_size ||
      a->max_depth != b->max_depth || a->acc_exp != b->acc_exp ||
      a->pot_exp != b->pot_exp)
    return 0;
  for (int k = 0; k < 4; k++)
    if (a->box[k] != b->box[k])
      return 0;
  return 1;
}

int tfmm_tree_life_refits(const tfmm_tree_life *l, const tfmm_tree_shape *s,
                          int subset) {
  return l->kept && subset && same_shape(&l->shape, s) &&
         l->spent < TFMM_TREE_REFIT_BUDGET && isfinite(l->growth) &&
         l->growth < TFMM_TREE_GROWTH_MAX;
}

void tfmm_tree_life_built(tfmm_tree_life *l, const tfmm_tree_shape *s) {
  l->kept = 1;
  l->shape = *s;
  l->refits = 0;
  l->spent = 0;
  l->growth = 1;
}

void tfmm_tree_life_refit(tfmm_tree_life *l, double growth) {
  l->refits++;
  l->growth = growth;
  /* A leaf may shrink as its bodies gather (g < 1): that is no credit. */
  l->spent += growth > 1 ? growth - 1 : 0;
}
