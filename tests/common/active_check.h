/* Checks of tfmm_solver_compute_active (forces at a subset of the bodies):
 * target sets of every shape, and the comparison of one call with the
 * whole evaluation, with the double-precision reference and with the
 * sentinel the inactive entries must keep. */
#ifndef TFMM_ACTIVE_CHECK_H
#define TFMM_ACTIVE_CHECK_H

#include "testutil.h"

#include <stddef.h>
#include <stdint.h>

typedef enum active_kind {
  ACTIVE_RANDOM,    /* each body with probability `fraction` */
  ACTIVE_INNERMOST, /* the round(fraction n) bodies nearest the centre of
                       mass (at least one): a block step's smallest bins */
  ACTIVE_SINGLE,    /* one body, drawn */
  ACTIVE_NONE,      /* no body */
  ACTIVE_ALL        /* every body */
} active_kind;

/* n bytes (malloc'd), nonzero for a target; *count their number. */
/* A named subset: its kind and fraction (the suites' tables). */
typedef struct active_subset {
  active_kind kind;
  double fraction;
  const char *name;
} active_subset;

/* The positions and masses of tfmm_ic_plummer(n, seed). */
test_bodies active_plummer(size_t n, uint64_t seed);

unsigned char *active_mask(const test_bodies *b, active_kind kind,
                           double fraction, uint64_t seed, size_t *count);

/* The bit pattern the inactive outputs are filled with before a call
 * (a NaN with a payload no arithmetic makes). */
double active_sentinel(void);

/* Outputs of one call: acc 3n, pot n. */
typedef struct active_result {
  double *acc, *pot;
  tfmm_stats stats;
} active_result;

/* How to compare the targets' results with the whole evaluation's: bit for
 * bit (tol 0), or |x - y| <= tol |y| per component (plus tol times the
 * largest magnitude, for components near zero). */
typedef struct active_expect {
  double tol;
  double ref_p99; /* a bound on the 99th percentile over the bodies of
                     |a - a_ref| / |a_ref|, judged from the (sampled)
                     targets as sample_quantile.h says */
  size_t sample;  /* targets compared with the reference at most */
  /* With tol 0: a whole evaluation past either size below is compared to
   * within rounding_tol instead (the GPU sizes its near-field work items
   * and M2L lanes by the work at hand: tilefmm.h); 0: no limit. */
  double bitwise_pairs;  /* near-field body pairs */
  int64_t bitwise_cells; /* tree cells */
  double rounding_tol;
} active_expect;

/* tfmm_solver_compute_active(c, b, active) on poisoned outputs against
 * tfmm_solver_compute(c, b) and the reference, each check asserted (the
 * label and seed in every message); the call's results are returned
 * (free with active_result_free). device: the bodies, targets and outputs
 * in GPU memory (tfmm_solver_compute_active_device; GPU builds only). */
active_result active_check(const tfmm_config *c, const test_bodies *b,
                           const unsigned char *active,
                           const active_expect *expect, int device,
                           const char *label);

void active_result_free(active_result *r);

#endif
