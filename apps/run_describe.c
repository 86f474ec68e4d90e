/* The line that says what forces a run computes: see run_describe.h. */
#include "run_describe.h"

#include <stdio.h>
#include <string.h>

/* "softening spline (the default of run), eps 0.01, fmm: theta 0.3
 * (auto), order 8 (auto) for accuracy 1e-3": the physics and the tree
 * parameters used (theta and order as resolved before the first
 * evaluation, or as the last one used when stats is not NULL). */
void run_describe_solver(const run_options *ro, const tfmm_stats *stats,
                         char *buf, size_t size) {
  const tfmm_config *c = &ro->sc.cfg;
  double theta;
  int order;
  if (stats != NULL && stats->n > 0) {
    theta = stats->theta;
    order = stats->order;
  } else {
    solver_cli_resolve(c, &theta, &order);
  }
  char tree[160], tol[32];
  solver_cli_theta_order(c, theta, order, tree, sizeof tree);
  /* Before the first evaluation the planner's setting is a guess: the
   * run measures, and may move from it (said after step 0). */
  if ((stats == NULL || stats->n == 0) && solver_cli_planned(c))
    snprintf(tree, sizeof tree,
             "theta %g, order %d (auto: the first guess; chosen by measuring "
             "the error)",
             theta, order);
  const int tree_method =
      c->method == TFMM_METHOD_FMM || c->method == TFMM_METHOD_BH;
  snprintf(
      buf, size, "softening %s%s, eps %g, precision %s, %s%s%s%s%s%s%s",
      tfmm_softening_name(c->softening),
      run_options_explicit(ro, "--softening") ? "" : " (the default of run)",
      c->eps, tfmm_precision_name(c->precision), tfmm_method_name(c->method),
      tree_method ? ": " : "", tree, tree_method ? " for accuracy " : "",
      tree_method ? solver_cli_tol(c->accuracy, tol) : "",
      tree_method && c->mac != TFMM_MAC_GEOMETRIC ? ", mac " : "",
      tree_method && c->mac != TFMM_MAC_GEOMETRIC ? tfmm_mac_name(c->mac) : "");
  /* Where the last evaluation's stages ran. */
  const size_t used = strlen(buf);
  if (tree_method && stats != NULL && stats->n > 0 && used < size)
    snprintf(buf + used, size - used,
             "; schedule %s: tree on the %s, lists on the %s, far field on "
             "the %s, near field on the %s",
             tfmm_schedule_name(stats->schedule),
             tfmm_device_name(stats->tree_device),
             tfmm_device_name(stats->lists_device),
             tfmm_device_name(stats->far_device),
             tfmm_device_name(stats->near_device));
}
