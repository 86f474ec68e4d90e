/* Internal units: every evaluation runs on positions and masses scaled by
 * powers of two so that the system's size and its heaviest body are near
 * 1, whatever units the caller uses (SI, cgs, parsecs and solar masses).
 * Then the single-precision paths and the expansions never see a length,
 * mass or force outside their range: positions of 1e16 or masses of 1e-40
 * give the same relative accuracy as N-body units.
 *
 * Powers of two scale exactly (in the normal range), so the results are
 * those of the unscaled computation wherever that did not over- or
 * underflow: bit for bit. G, eps and the outputs follow: with lengths
 * scaled by 2^-k and masses by 2^-j, eps' = eps 2^-k, and
 * a = G 2^(j - 2k) a', phi = G 2^(j - k) phi'. */
#ifndef TFMM_UNITS_H
#define TFMM_UNITS_H

#include <stddef.h>

typedef struct tfmm_units {
  int length_exp; /* k: lengths are divided by 2^k */
  int mass_exp;   /* j: masses are divided by 2^j */
} tfmm_units;

/* k from the bounding box's largest side (or the largest |coordinate|
 * when every body is at one point), or from box_size when it is > 0 (a
 * cube the caller gives: solvers sharing it then share the scaling too);
 * j from the largest mass. pos and mass finite, masses > 0 (checked by
 * the caller). */
tfmm_units tfmm_units_choose(size_t n, const double *pos, const double *mass,
                             double box_size);

/* The same from the bodies' lowest and highest corners and largest mass
 * (reduced elsewhere: on the GPU for bodies that live there). */
tfmm_units tfmm_units_from_bounds(const double lo[3], const double hi[3],
                                  double heaviest, double box_size);

/* pos_out = pos 2^-k, mass_out = mass 2^-j. */
void tfmm_units_scale(const tfmm_units *u, size_t n, const double *pos,
                      const double *mass, double *pos_out, double *mass_out);

/* Back to the caller's units, times G: acc (3n) and pot (n, or NULL). */
void tfmm_units_unscale(const tfmm_units *u, double G, size_t n, double *acc,
                        double *pot);

#endif
