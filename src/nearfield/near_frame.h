/* The frame of a leaf in the single-precision near field (issue 28): the
 * origin its bodies are written relative to before they are rounded to
 * float, and the rule that sends a leaf to double precision where no one
 * origin keeps its pairs' separations. Written once for the CPU
 * (p2p_cpu.c), the hybrid schedule's packing (p2p_gpu.c) and the gpu
 * schedule's (near_inputs_gpu.cu).
 *
 * Origin: the centre of the tight box of the leaf's own bodies, not the
 * cell's centre: a group of size 1 alone in a cell of side 1e6 keeps its
 * separations. Reach R: the largest |x_k - o_k| over the leaf's bodies
 * and axes (half the box's longest side). Scale l: max(eps, the smallest
 * separation of the leaf's bodies), +inf for a leaf of one body.
 *
 * Rounding (u = 2^-24, the float unit roundoff; the offsets are taken in
 * double, whose rounding is negligible here). A target i of leaf T and a
 * source j of S at separation r = x_j - x_i, per axis:
 *  - CPU: x_i - o_T rounds by at most u R_T, x_j - o_T by u (R_T + |r|),
 *    their float difference by u |r|: |dr| <= u (2 R_T + 2 |r|).
 *  - GPU: x_j - o_S rounds by u R_S, o_S - o_T (|.| <= R_S + R_T + |r|)
 *    by u of that, their float sum by u (R_T + |r|), x_i - o_T by u R_T,
 *    the difference by u |r|: |dr| <= u (2 R_S + 3 R_T + 3 |r|).
 * Over three axes |dr| <= sqrt(3) u (5 R + 3 |r|), R = max(R_S, R_T). The
 * pull m r / rho^3 (rho^2 = r^2 + eps^2) moves by at most 4 m |dr| / rho^3
 * (its gradient: 1 + 3 r^2 / rho^2 <= 4), that is by 4 |dr| / rho of the
 * pull m / rho^2 at that distance. For the leaf's own pairs rho >= l, so
 * with R <= K l the error is at most 4 sqrt(3) u (5 K + 3) of the pair's
 * pull on the GPU and 4 sqrt(3) u (2 K + 2) on the CPU, every rounding
 * aligned the worst way (independent roundings add in quadrature and
 * rarely align). K = 1024: 2.1e-3 and 8.5e-4 at worst, the ratios that
 * ordinary leaves reach and that single precision's measured floor
 * (accuracy.h) already holds, while any reach a million times a group's
 * spacing runs in double. K is set by cost: a Plummer sphere of 1M bodies (eps
 * 0, theta 0.4 to 0.5, seed 42) has no leaf past it for leaves of 64 to 1,024
 * bodies, and 1 of 1,004 leaves of 4,096 (0.4 % of the pairs); K = 128 sent 6 %
 * of the leaves of 1,024 (19 % of their pairs) to double. The spline kernel's
 * gradient is smaller than Plummer's inside its support and the same outside.
 * A leaf whose reach exceeds K l runs in double: the group beside a far
 * body (R about the distance, l about the group's spacing), two groups far
 * apart. Its bodies also reach the GPU rounded by u R_S, which its
 * neighbours' pairs must not meet close up: for pairs with another leaf S
 * rho is at least the gap g between the two boxes, so a leaf T whose list
 * holds such an exact S with max(R_S, R_T) above K max(l_T, g) runs in
 * double too. Ordinary leaves do not pull their neighbours in: a halo leaf
 * of reach 10 beside core leaves of spacing 1e-2 would send a third of a
 * Plummer sphere's leaves of 512 to double, for the ratio of reaches that
 * the cells' centres of mass had before. Pairs of adjacent leaves closer
 * than the target's scale are not covered by the rule (it would take their
 * pairs to find them); they keep the errors of the leaves' reaches, as
 * before, now from the bodies' boxes.
 *
 * Cost on ordinary inputs: per leaf one pass over its bodies (the box),
 * the smallest separation of its bodies (n^2 / 2 distances, against the
 * at least 27 n^2 pairs of its list) only when its reach exceeds K eps,
 * and one read of the reach and scale of each list entry (its origin too
 * for the rare exact one); per pair nothing. An exact leaf costs its pairs
 * again in FP64 (the float ones are not skipped: there are none on
 * ordinary inputs). */
#ifndef TFMM_NEAR_FRAME_H
#define TFMM_NEAR_FRAME_H

#include "nearfield/interaction.h"

/* K: a leaf runs in double when a reach exceeds K times its scale. */
#define TFMM_NEAR_FRAME_RATIO 1024.0

/* The origin of a leaf on one axis from its bodies' least and greatest
 * coordinates, and its reach on that axis. */
TFMM_INTERACTION_FN double tfmm_near_frame_origin(double lo, double hi) {
  return lo + 0.5 * (hi - lo);
}

TFMM_INTERACTION_FN double tfmm_near_frame_reach(double lo, double hi,
                                                 double origin) {
  const double a = origin - lo, b = hi - origin;
  return a > b ? a : b;
}

/* What an exact list entry S (origin os, reach rs) asks of the scale of
 * target leaf T (ot, rt): the larger reach when it exceeds K times the gap
 * between their boxes (the largest per-axis gap, a lower bound on their
 * bodies' separations), else nothing (0). */
TFMM_INTERACTION_FN double tfmm_near_frame_demand(const double ot[3], double rt,
                                                  const double os[3],
                                                  double rs) {
  double gap = 0;
  for (int d = 0; d < 3; d++) {
    const double g = fabs(os[d] - ot[d]) - rt - rs;
    gap = g > gap ? g : gap;
  }
  const double r = rs > rt ? rs : rt;
  return r > TFMM_NEAR_FRAME_RATIO * gap ? r : 0;
}

/* Whether the leaf's smallest separation is needed for its scale: with
 * its reach <= K eps, eps alone keeps its own pairs in float. */
TFMM_INTERACTION_FN int tfmm_near_frame_needs_spacing(double reach,
                                                      double eps) {
  return reach > TFMM_NEAR_FRAME_RATIO * eps;
}

/* Its scale from eps and the smallest separation of its bodies (squared;
 * +inf for one body). */
TFMM_INTERACTION_FN double tfmm_near_frame_scale(double eps, double spacing2) {
  const double s = sqrt(spacing2);
  return s > eps ? s : eps;
}

/* Whether a leaf of scale l runs in double for reach (its own) or demand
 * (the largest of its list's exact leaves, tfmm_near_frame_demand). */
TFMM_INTERACTION_FN int tfmm_near_frame_exact(double scale, double demand) {
  return demand > TFMM_NEAR_FRAME_RATIO * scale;
}

#ifndef __CUDACC__
#include "internal.h"
#include "tree/lists.h"

/* A leaf's frame. */
typedef struct tfmm_near_frame {
  double origin[3];
  double reach; /* R */
  double scale; /* l */
} tfmm_near_frame;

/* The frames of every leaf of t, by cell (frame: ncells, only the leaves'
 * written; the scale is eps where the reach is within K eps), and for each
 * leaf position k whether it runs in double (exact: nleaves;
 * near->ntargets == t->nleaves). Returns the count of those. With exact
 * NULL, only the origins and reaches (near unread), and 0. OpenMP over
 * leaves. */
int64_t tfmm_near_frames(const tfmm_octree *t, const tfmm_csr *near, double eps,
                         tfmm_near_frame *frame, unsigned char *exact);
#endif

#endif
