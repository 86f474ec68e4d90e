/* The gpu schedule's tree kept between evaluations (issue 31): when the
 * next evaluation's bodies are the last one's moved (a simulation says so,
 * tfmm_solver_keep_tree), its tree may be refit to them (tree_gpu.h,
 * tfmm_tree_gpu_refit: the cells and the bodies' order kept, every cell's
 * mass, centre and radius taken anew) instead of built. GADGET-4 and SWIFT
 * drift their trees between rebuilds the same way.
 *
 * What a refit costs is work, not accuracy: the opening criterion reads
 * the refit centres and radii, so the forces keep the accuracy asked, but
 * bodies that strayed widen their leaves and more pairs of cells are
 * opened. Measured on the H200 (bench/results/run, "A tree kept between
 * steps"): at an evaluation of every body the wider leaves cost more than
 * the build saves (1M: 129 against 131 steps/s; 16M: 227 against 188 ms a
 * step), while at the sub-steps of individual time steps, whose near and
 * far fields are those of the active bodies only, the build is the larger
 * share: there the kept tree made the tree phase 30-42 % shorter and the
 * block runs 2-5 % faster (bench/results/run, "The tree kept at the
 * sub-steps"). So the rule (tfmm_tree_life_refits):
 *   - build at an evaluation of every body, at the first, after a save
 *     (tfmm_solver_rebuild_tree), and when the tree's shape (bodies, leaf
 *     size, depth, cube, units) changed;
 *   - refit at an evaluation at a subset of the bodies, while the leaves'
 *     growth summed over the refits since the build, sum of (g - 1) with g
 *     the mean over the leaves of (r / r0)^3, is below
 *     TFMM_TREE_REFIT_BUDGET, and the last growth below
 *     TFMM_TREE_GROWTH_MAX.
 * Every input of the rule is a function of the bodies, never of a clock,
 * so a run repeats its own builds and refits bit for bit. */
#ifndef TFMM_TREE_LIFE_H
#define TFMM_TREE_LIFE_H

#include <stddef.h>
#include <stdint.h>

/* The near and far fields' extra work a refit may add, summed over the
 * refits since the build, in units of their work with a built tree: about
 * a build's share of an evaluation of every body (tree 0.8 ms of the
 * near and far fields' 4 ms at 1M on the H200). */
#define TFMM_TREE_REFIT_BUDGET 0.2
/* The growth at which the next evaluation builds whatever the budget:
 * leaves reaching half again their volume. */
#define TFMM_TREE_GROWTH_MAX 1.5

/* What a tree is built for: a refit needs the same. */
typedef struct tfmm_tree_shape {
  size_t n;
  int leaf_size, max_depth;
  int acc_exp, pot_exp; /* the internal units (powers of two) */
  double box[4];        /* the cube asked for (box_size 0: the bodies') */
} tfmm_tree_shape;

typedef struct tfmm_tree_life {
  int kept;              /* a tree is there to refit */
  tfmm_tree_shape shape; /* what it was built for */
  int64_t refits;        /* since its build */
  double spent;          /* sum of (growth - 1) over those refits */
  double growth;         /* the last: 1 after a build */
} tfmm_tree_life;

/* Whether the next evaluation refits the kept tree: subset nonzero for an
 * evaluation at a subset of the bodies. */
int tfmm_tree_life_refits(const tfmm_tree_life *l, const tfmm_tree_shape *s,
                          int subset);

/* After a build for shape s. */
void tfmm_tree_life_built(tfmm_tree_life *l, const tfmm_tree_shape *s);

/* After a refit whose leaves' growth since the build is growth. */
void tfmm_tree_life_refit(tfmm_tree_life *l, double growth);

#endif
