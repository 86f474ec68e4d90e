/* With softening and theta fixed, the error falls with the expansion order
 * (issue 28). The expansions carry Newton's 1/r; the far field keeps its
 * cell pairs apart by the softening's separation (src/accuracy.c), beyond
 * which Plummer's force is within delta of Newton's and the spline's is
 * Newton's. With Plummer softening delta must fall with the series' error,
 * else the p99 stops falling where the softening's error takes over (theta
 * 0.6, p = 6 and 8 gave the same p99 on clustered sets when delta was held
 * at the target 1e-3).
 *
 * On fresh seeds, every body checked against the double-precision
 * reference (tfmm_solver_reference_at), the near field in double so that
 * float does not floor it: the p99 must fall at least STEP-fold from each
 * order p to p + 2 (p = 4..12) while it is above FLOOR, for fmm at theta
 * 0.4 and 0.6 on a few tight Plummer clusters and on a line with a pile of
 * coincident bodies (the degenerate set of the calibration), at eps 0.01
 * and 0.001. */
#include "soft_families.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <tilefmm.h>

enum { N = 3000, P_FIRST = 4, P_LAST = 12 };

/* The least fall from p to p + 2, and the p99 below which it is not asked
 * (a factor STEP above 1e-6: the "down to 1e-6"; under it the
 * clusters at eps 0.001 meet Newton's far field from the other clusters,
 * 1.5 eps^2 / d^2 of it, about 3e-7). The series falls 2.8x (theta 0.6) to
 * 6x (0.4) a step; over five fresh seeds the least fall measured was 3.5x
 * (clusters, eps 0.01, theta 0.6, p 4 to 6). */
static const double STEP = 2.0, FLOOR = 2e-6;

/* The p99 (nearest rank over all N bodies) of |a - a_true| / |a_true|. */
static double p99_of(const double *acc, const double *truth) {
  return test_p99_relative(N, acc, truth);
}

static tfmm_config config(tfmm_method m, double eps, tfmm_softening soft) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = m;
  c.device = TFMM_DEVICE_CPU;
  c.eps = eps;
  c.softening = soft;
  c.precision = TFMM_PRECISION_DOUBLE;
  return c;
}

/* Each family at each eps and theta: the p99 from p = P_FIRST to P_LAST
 * falls STEP-fold every two orders while above FLOOR (cr_expect: every
 * case runs and every miss is named). */
static void check_falls(tfmm_softening soft) {
  const uint64_t seed = test_fresh_seed();
  const double epss[] = {0.01, 0.001}, thetas[] = {0.4, 0.6};
  double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
  double *acc = malloc(3 * N * sizeof *acc);
  double *truth = malloc(3 * N * sizeof *truth);
  cr_assert(pos && mass && acc && truth);
  const soft_family fams[] = {SOFT_CLUSTERS, SOFT_LINE_PILE};
  for (int f = 0; f < 2; f++)
    for (int k = 0; k < 2; k++) {
      const uint64_t s = seed + (uint64_t)(2 * f + k);
      soft_family_bodies(fams[f], N, s, pos, mass);
      soft_family_truth(N, pos, mass, epss[k], soft, truth);
      for (int t = 0; t < 2; t++) {
        double last = INFINITY;
        for (int p = P_FIRST; p <= P_LAST; p += 2) {
          tfmm_config c = config(TFMM_METHOD_FMM, epss[k], soft);
          c.theta = thetas[t];
          c.order = p;
          tfmm_solver *solver = NULL;
          cr_assert_eq(tfmm_solver_create(&solver, &c), TFMM_OK);
          test_poison(acc, 3 * N);
          cr_assert_eq(tfmm_solver_compute(solver, N, pos, mass, acc, NULL),
                       TFMM_OK, "%s", tfmm_solver_message(solver));
          const double sep = tfmm_solver_stats(solver)->softening_separation;
          const double near = tfmm_solver_stats(solver)->interactions;
          tfmm_solver_destroy(solver);
          const double e = p99_of(acc, truth);
          cr_log_info("seed %llu %s eps %g %s theta %.1f p %d: separation "
                      "%.3g, near pairs %.2f of N^2, p99 %.3g",
                      (unsigned long long)s, soft_family_name(fams[f]), epss[k],
                      tfmm_softening_name(soft), thetas[t], p, sep,
                      near / ((double)N * N), e);
          if (last > FLOOR)
            cr_expect_leq(e, last / STEP,
                          "seed %llu %s eps %g %s theta %.1f: p99 %.3g at p "
                          "%d after %.3g at p %d (less than %gx)",
                          (unsigned long long)s, soft_family_name(fams[f]),
                          epss[k], tfmm_softening_name(soft), thetas[t], e, p,
                          last, p - 2, STEP);
          last = e;
        }
      }
    }
  free(pos), free(mass), free(acc), free(truth);
}

Test(soft_convergence, plummer_falls_with_order, .timeout = 300) {
  check_falls(TFMM_SOFTENING_PLUMMER);
}

/* The spline is Newton's law beyond its support, the separation: its far
 * field is exact and the error falls with the order already. */
Test(soft_convergence, spline_falls_with_order, .timeout = 300) {
  check_falls(TFMM_SOFTENING_SPLINE);
}
