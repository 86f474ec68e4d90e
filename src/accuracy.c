#include "accuracy.h"

#include "accuracy_table.h"
#include "nearfield/interaction.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A row is taken for a target TOL when its measured error is at most
 * TOL / MARGIN: the calibration inputs are not the user's. */
static const double MARGIN = 1.25;

double tfmm_plummer_separation(double eps, double delta) {
  if (eps <= 0)
    return 0;
  if (!(delta > 0) || delta >= 1)
    return delta >= 1 ? 0 : INFINITY;
  /* (1 - delta)^(-2/3) - 1, without cancellation for small delta. */
  double x = expm1(-2.0 / 3.0 * log1p(-delta));
  return eps / sqrt(x);
}

static int row_matches(const tfmm_accuracy_row *r, const tfmm_config *c) {
  return r->method == c->method && r->mac == c->mac;
}

/* The cheapest row meeting tol among those allowed by a given theta
 * (rows at the smallest calibrated theta >= it) or order (rows of the
 * largest calibrated order <= it); else the most accurate of them. */
static const tfmm_accuracy_row *choose(const tfmm_config *c, double tol) {
  const tfmm_accuracy_row *best = NULL, *closest = NULL;
  double theta_row = INFINITY;
  int order_row = -1;
  for (size_t k = 0; k < COUNT(TFMM_ACCURACY_TABLE); k++) {
    const tfmm_accuracy_row *r = &TFMM_ACCURACY_TABLE[k];
    if (!row_matches(r, c))
      continue;
    if (c->theta >= 0 && r->theta >= c->theta - 1e-12 && r->theta < theta_row)
      theta_row = r->theta;
    if (c->order >= 0 && r->order <= c->order && r->order > order_row)
      order_row = r->order;
  }
  for (size_t k = 0; k < COUNT(TFMM_ACCURACY_TABLE); k++) {
    const tfmm_accuracy_row *r = &TFMM_ACCURACY_TABLE[k];
    if (!row_matches(r, c))
      continue;
    if (c->theta >= 0 && r->theta != theta_row)
      continue;
    if (c->order >= 0 && r->order != order_row)
      continue;
    if (closest == NULL || r->error < closest->error)
      closest = r;
    if (r->error * MARGIN <= tol && (best == NULL || r->cost < best->cost))
      best = r;
  }
  return best != NULL ? best : closest;
}

void tfmm_accuracy_resolve(const tfmm_config *c, tfmm_resolved *out) {
  out->theta = c->theta;
  out->order = c->order;
  if (c->theta < 0 || c->order < 0) {
    const tfmm_accuracy_row *r = choose(c, c->accuracy);
    /* A theta or order outside the table: the most accurate end. */
    if (out->theta < 0)
      out->theta = r != NULL ? r->theta : 0.3;
    if (out->order < 0)
      out->order = r != NULL ? r->order : (c->order >= 0 ? c->order : 12);
    /* theta 0 accepts no pair: no expansion is ever formed. */
    if (c->order < 0 && out->theta == 0)
      out->order = 1;
  }
  /* The far field's softening: none, the spline's support, or the distance
   * where Plummer's force is within delta of Newton's. delta is the
   * target; when the user fixes both theta and order, it is the smaller of
   * the target and the expansion's own error estimate theta^(p+1) / (p+1)
   * (within a factor 3 of the measured p99 of Plummer spheres at theta 0.5,
   * p = 4..12), so that the error still falls with the order. */
  out->separation = 0;
  if (c->eps > 0 && c->softening == TFMM_SOFTENING_SPLINE)
    out->separation = TFMM_SPLINE_SUPPORT * c->eps;
  else if (c->eps > 0) {
    double delta = c->accuracy;
    if (c->theta >= 0 && c->order >= 0) {
      double series = pow(out->theta, out->order + 1) / (out->order + 1);
      delta = series < delta ? series : delta;
    }
    out->separation = tfmm_plummer_separation(c->eps, delta);
  }
}

tfmm_status tfmm_config_resolve(const tfmm_config *cfg, double *theta,
                                int *order, double *separation, char *msg,
                                size_t size) {
  tfmm_error err = {{0}};
  tfmm_status st = tfmm_config_check(cfg, &err);
  if (st == TFMM_OK) {
    tfmm_resolved r;
    tfmm_accuracy_resolve(cfg, &r);
    if (theta != NULL)
      *theta = r.theta;
    if (order != NULL)
      *order = r.order;
    if (separation != NULL)
      *separation = r.separation;
  }
  if (msg != NULL && size > 0)
    snprintf(msg, size, "%s", err.message);
  return st;
}
