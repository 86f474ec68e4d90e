/* The kept tree's rule (src/pipeline/tree_life.h), on the CPU: a refit
 * only of a kept tree of the same shape at an evaluation of a subset,
 * within the growth budget and below the growth limit; a build resets
 * it. The refits themselves are tested on the GPU (test_tree_refit_gpu,
 * test_simulation_gpu). */
#include "pipeline/tree_life.h"

#include <criterion/criterion.h>
#include <math.h>

static tfmm_tree_shape shape(void) {
  tfmm_tree_shape s = {.n = 1000,
                       .leaf_size = 64,
                       .max_depth = 21,
                       .acc_exp = -3,
                       .pot_exp = -1,
                       .box = {0, 0, 0, 0}};
  return s;
}

Test(tree_life, nothing_to_refit_before_a_build) {
  const tfmm_tree_life l = {0};
  const tfmm_tree_shape s = shape();
  cr_expect_not(tfmm_tree_life_refits(&l, &s, 1));
}

Test(tree_life, only_a_subset_refits) {
  tfmm_tree_life l = {0};
  const tfmm_tree_shape s = shape();
  tfmm_tree_life_built(&l, &s);
  cr_expect(tfmm_tree_life_refits(&l, &s, 1));
  cr_expect_not(tfmm_tree_life_refits(&l, &s, 0),
                "an evaluation of every body refit");
}

Test(tree_life, another_shape_builds) {
  tfmm_tree_life l = {0};
  const tfmm_tree_shape s = shape();
  tfmm_tree_life_built(&l, &s);
  tfmm_tree_shape t = s;
  t.n = 1001;
  cr_expect_not(tfmm_tree_life_refits(&l, &t, 1), "bodies");
  t = s;
  t.leaf_size = 32;
  cr_expect_not(tfmm_tree_life_refits(&l, &t, 1), "leaf size");
  t = s;
  t.max_depth = 20;
  cr_expect_not(tfmm_tree_life_refits(&l, &t, 1), "depth");
  t = s;
  t.acc_exp = -4;
  cr_expect_not(tfmm_tree_life_refits(&l, &t, 1), "units");
  t = s;
  t.pot_exp = 0;
  cr_expect_not(tfmm_tree_life_refits(&l, &t, 1), "units");
  t = s;
  t.box[3] = 2;
  cr_expect_not(tfmm_tree_life_refits(&l, &t, 1), "cube");
}

/* Growth summed to the budget: refits while the sum of (g - 1) is below
 * TFMM_TREE_REFIT_BUDGET, then a build; shrinking leaves are no credit. */
Test(tree_life, the_growth_spends_the_budget) {
  tfmm_tree_life l = {0};
  const tfmm_tree_shape s = shape();
  tfmm_tree_life_built(&l, &s);
  const double g = 1 + TFMM_TREE_REFIT_BUDGET / 4.5;
  int refits = 0;
  while (tfmm_tree_life_refits(&l, &s, 1) && refits < 100) {
    tfmm_tree_life_refit(&l, g);
    tfmm_tree_life_refit(&l, 0.5); /* shrinking: spends nothing */
    refits++;
  }
  cr_expect_eq(refits, 5, "%d refits of growth %g before a build", refits, g);
  cr_expect_eq(l.refits, 10);
  tfmm_tree_life_built(&l, &s);
  cr_expect(tfmm_tree_life_refits(&l, &s, 1), "a build resets the budget");
  cr_expect_eq(l.refits, 0);
  cr_expect_eq(l.growth, 1.0);
}

Test(tree_life, one_large_growth_builds) {
  tfmm_tree_life l = {0};
  const tfmm_tree_shape s = shape();
  tfmm_tree_life_built(&l, &s);
  tfmm_tree_life_refit(&l, TFMM_TREE_GROWTH_MAX);
  l.spent = 0;
  cr_expect_not(tfmm_tree_life_refits(&l, &s, 1));
  tfmm_tree_life_built(&l, &s);
  tfmm_tree_life_refit(&l, NAN);
  l.spent = 0;
  cr_expect_not(tfmm_tree_life_refits(&l, &s, 1), "a growth not finite");
}
