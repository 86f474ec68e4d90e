/* The leaf size chosen by the solver (tfmm_config.leaf_size =
 * TFMM_LEAF_AUTO): a controller that moves L towards the balance of the
 * near-field and far-field times after every evaluation. */
#ifndef TFMM_LEAF_AUTO_H
#define TFMM_LEAF_AUTO_H

enum {
  TFMM_LEAF_AUTO_MIN = 8, /* the range auto keeps to */
  TFMM_LEAF_AUTO_MAX = 8192,
  TFMM_LEAF_AUTO_CPU = 64, /* first L with the near field on the CPU */
  TFMM_LEAF_AUTO_GPU = 512 /* ... and on the GPU */
};

/* The next L after an evaluation at L that took `near` and `far` seconds.
 * Near-field work grows about as L (interactions per body) and far-field
 * work falls about as 1 / L (cells per body), so near / far grows as L^2
 * and the balance is at L sqrt(far / near): that L minimises near + far
 * (CPU) and max(near, far) (GPU beside the CPU) alike. The step is kept
 * within a factor of 4, L within [TFMM_LEAF_AUTO_MIN, _MAX], and L is left
 * alone within 15 % of the balance, so that timing noise does not make it
 * wander. Zero or non-finite times leave L as it is. */
int tfmm_leaf_auto_next(int leaf, double near, double far);

#endif
