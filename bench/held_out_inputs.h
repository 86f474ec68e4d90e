/* Inputs the accuracy planner was never tuned on (issue 28's families,
 * drawn from the seed the caller gives, fresh by default): a Plummer
 * sphere, two tight clusters on a sparse background, a thin exponential
 * disk with a bulge, a hierarchically clustered (Soneira-Peebles) set,
 * and a line (half the bodies) with a coincident pile (2 %: one leaf
 * that cannot be split, its pairs all near) on a Plummer background
 * (softened: the pile needs eps > 0). Equal masses, total 1. */
#ifndef TFMM_HELD_OUT_INPUTS_H
#define TFMM_HELD_OUT_INPUTS_H

#include <stddef.h>
#include <stdint.h>

enum { HELD_OUT_INPUTS = 5 };

extern const char *const HELD_OUT_NAMES[HELD_OUT_INPUTS];

/* The softening each input is used with (Plummer): 0, or the pile's. */
extern const double HELD_OUT_EPS[HELD_OUT_INPUTS];

/* Input w of n bodies from seed into pos (3n) and mass (n). */
void held_out_make(int w, size_t n, uint64_t seed, double *pos, double *mass);

#endif
