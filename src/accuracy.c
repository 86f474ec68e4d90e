#include "accuracy.h"

#include "accuracy_table.h"
#include "accuracy_table_soft.h"
#include "farfield/soft_taylor.h"
#include "nearfield/interaction.h"

#include <math.h>
#include <stddef.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A row is taken for a target TOL when its measured error is at most
 * TOL / MARGIN: the calibration inputs are not the user's (fresh seeds of
 * the same families came out up to 2.7 times the calibrated error: two
 * clusters at theta 0.25, p 12, 1.14e-8 against 4.2e-9). */
static const double MARGIN = 3.0;

/* Rows of larger theta stay in the table but are not chosen: their error
 * varies between seeds far more than MARGIN covers (fmm at theta 0.8,
 * p = 15: 5.8e-4 calibrated, 1.2e-3 on a fresh Hernquist sphere). */
static const double THETA_CHOICE_MAX = 0.6;

/* With theta and order fixed, Plummer's delta is this share of the series'
 * error estimate theta^(p+1) / (p+1) (0.1-0.8 of it is the measured p99 of
 * Plummer spheres with the spline, exact beyond its support, at theta 0.4
 * and 0.6, p = 4..12), so that the softening's error falls with the order
 * as the expansion's does (issue 28). Not 1: the softening's error is one-
 * signed (Newton's pull always exceeds Plummer's) and every accepted pair
 * near the separation attains it, while the series' bound is attained only
 * at its worst placements; at 1 (and at 1/4) the softening set the p99 at
 * p = 4, theta 0.6 (clusters, line + pile: 2.5-11x the p99 at 1/20). 1/20
 * gives at theta 0.6, p = 4 about the delta (7.8e-4) that the default
 * target (1e-3) gave before: the low orders keep their accuracy and cost,
 * the higher ones fall with the series (docs/accuracy.md). */
static const double PLUMMER_SERIES_SHARE = 1.0 / 20;

double tfmm_plummer_separation(double eps, double delta) {
  if (eps <= 0)
    return 0;
  if (!(delta > 0) || delta >= 1)
    return delta >= 1 ? 0 : INFINITY;
  /* (1 - delta)^(-2/3) - 1, without cancellation for small delta. */
  double x = expm1(-2.0 / 3.0 * log1p(-delta));
  return eps / sqrt(x);
}

const tfmm_accuracy_row *tfmm_accuracy_rows(tfmm_far_kernel kernel,
                                            size_t *count) {
  if (kernel == TFMM_FAR_KERNEL_SOFTENED) {
    *count = COUNT(TFMM_ACCURACY_TABLE_SOFT);
    return TFMM_ACCURACY_TABLE_SOFT;
  }
  *count = COUNT(TFMM_ACCURACY_TABLE);
  return TFMM_ACCURACY_TABLE;
}

/* Which rows apply: the kernel's, the method's and criterion's (the
 * softened kernel's rows are the geometric criterion's; the mass
 * criterion, as accurate at the root's theta, takes them too), calibrated
 * with the near field where it runs and at a leaf size no larger than the
 * one used. */
typedef struct row_filter {
  const tfmm_config *c;
  const tfmm_accuracy_row *rows;
  size_t count;
  int leaf, near_gpu;
} row_filter;

static int row_matches(const tfmm_accuracy_row *r, const row_filter *f) {
  const int mac_ok =
      r->mac == f->c->mac ||
      (f->rows == TFMM_ACCURACY_TABLE_SOFT && f->c->mac == TFMM_MAC_MASS);
  return r->method == f->c->method && mac_ok && r->near_gpu == f->near_gpu &&
         r->leaf <= f->leaf;
}

static int any_row(const row_filter *f) {
  for (size_t k = 0; k < f->count; k++)
    if (row_matches(&f->rows[k], f))
      return 1;
  return 0;
}

/* The cheapest row meeting tol among those allowed by a given theta
 * (rows at the smallest calibrated theta >= it), order (rows of the
 * largest calibrated order <= it) or mac_epsilon (rows of the largest
 * calibrated epsilon <= it); else NULL, with the most accurate of
 * them in *closest_out. */
static const tfmm_accuracy_row *choose(const row_filter *f, double tol,
                                       const tfmm_accuracy_row **closest_out) {
  const tfmm_config *c = f->c;
  const tfmm_accuracy_row *best = NULL, *closest = NULL;
  double theta_row = INFINITY, eps_row = -1;
  int order_row = -1;
  for (size_t k = 0; k < f->count; k++) {
    const tfmm_accuracy_row *r = &f->rows[k];
    if (!row_matches(r, f))
      continue;
    if (c->theta >= 0 && r->theta >= c->theta - 1e-12 && r->theta < theta_row)
      theta_row = r->theta;
    if (c->order >= 0 && r->order <= c->order && r->order > order_row)
      order_row = r->order;
    if (c->mac_epsilon > 0 && r->epsilon <= c->mac_epsilon * (1 + 1e-12) &&
        r->epsilon > eps_row)
      eps_row = r->epsilon;
  }
  for (size_t k = 0; k < f->count; k++) {
    const tfmm_accuracy_row *r = &f->rows[k];
    if (!row_matches(r, f))
      continue;
    if (c->theta >= 0 && r->theta != theta_row)
      continue;
    /* (Under the error criterion theta is only a cap: its rows' error is
     * mac_epsilon's.) */
    if (c->theta < 0 && r->theta > THETA_CHOICE_MAX && r->mac != TFMM_MAC_ERROR)
      continue;
    if (c->order >= 0 && r->order != order_row)
      continue;
    if (c->mac_epsilon > 0 && r->epsilon != eps_row)
      continue;
    if (closest == NULL || r->error < closest->error)
      closest = r;
    if (r->error * MARGIN <= tol && (best == NULL || r->cost < best->cost))
      best = r;
  }
  *closest_out = closest;
  return best;
}

void tfmm_accuracy_resolve(const tfmm_config *c, tfmm_far_kernel kernel,
                           int leaf_size, int near_gpu, tfmm_resolved *out) {
  const int soft = kernel == TFMM_FAR_KERNEL_SOFTENED;
  out->far_kernel = soft ? TFMM_FAR_KERNEL_SOFTENED : TFMM_FAR_KERNEL_NEWTON;
  out->theta = c->theta;
  out->order = c->order;
  out->precision = c->precision != TFMM_PRECISION_AUTO ? c->precision
                   : c->accuracy < TFMM_SINGLE_FLOOR   ? TFMM_PRECISION_DOUBLE
                                                       : TFMM_PRECISION_SINGLE;
  out->mac_epsilon = c->mac == TFMM_MAC_ERROR ? c->mac_epsilon : 0;
  const int error_mac = c->mac == TFMM_MAC_ERROR;
  if (c->theta < 0 || c->order < 0 || (error_mac && c->mac_epsilon < 0)) {
    /* Leaf auto (0) may pick small leaves: the smallest calibrated. */
    row_filter f = {c, NULL, 0, leaf_size > 0 ? leaf_size : 64, near_gpu};
    f.rows = tfmm_accuracy_rows(out->far_kernel, &f.count);
    if (!any_row(&f))
      f.near_gpu = 0;
    if (!any_row(&f))
      f.leaf = 1 << 30;
    const tfmm_accuracy_row *closest = NULL;
    const tfmm_accuracy_row *r = choose(&f, c->accuracy, &closest);
    /* The GPU rows span fewer orders: past them, the CPU's (calibrated at
     * leaves of 64, so valid for larger ones too). */
    if (r == NULL && f.near_gpu) {
      const tfmm_accuracy_row *cpu_closest = NULL;
      f.near_gpu = 0;
      r = choose(&f, c->accuracy, &cpu_closest);
      if (cpu_closest != NULL &&
          (closest == NULL || cpu_closest->error < closest->error))
        closest = cpu_closest;
    }
    const int missed = r == NULL;
    if (r == NULL)
      r = closest;
    /* A theta or order outside the table: the most accurate end. */
    if (out->theta < 0)
      out->theta = r != NULL ? r->theta : 0.3;
    if (out->order < 0)
      out->order = r != NULL ? r->order : (c->order >= 0 ? c->order : 12);
    /* The softened rows reach about 2e-7 (theta 0.3, p 12, the
     * operators' highest order): past them, that order. */
    if (soft && missed && c->order < 0)
      out->order = TFMM_SOFT_TAYLOR_ORDER_MAX;
    /* Uncalibrated: the target itself per interaction. */
    if (error_mac && out->mac_epsilon < 0)
      out->mac_epsilon = r != NULL && r->epsilon > 0 ? r->epsilon : c->accuracy;
    /* theta 0 accepts no pair: no expansion is ever formed. */
    if (c->order < 0 && out->theta == 0)
      out->order = 1;
  }
  /* The far field's softening: none, the spline's support, or the distance
   * where Plummer's force is within delta of Newton's. delta is the
   * target (the row chosen for it leaves the softening two thirds of it:
   * MARGIN); when the user fixes both theta and order, it is the smaller of
   * the target and PLUMMER_SERIES_SHARE of the expansion's own error
   * estimate theta^(p+1) / (p+1), so that the error still falls with the
   * order. The softened kernel carries the softening itself: no
   * separation. */
  out->separation = 0;
  if (soft)
    return;
  if (c->eps > 0 && c->softening == TFMM_SOFTENING_SPLINE)
    out->separation = TFMM_SPLINE_SUPPORT * c->eps;
  else if (c->eps > 0 && !error_mac) { /* the error criterion weighs it */
    double delta = c->accuracy;
    if (c->theta >= 0 && c->order >= 0) {
      double series = PLUMMER_SERIES_SHARE * pow(out->theta, out->order + 1) /
                      (out->order + 1);
      delta = series < delta ? series : delta;
    }
    out->separation = tfmm_plummer_separation(c->eps, delta);
  }
}
