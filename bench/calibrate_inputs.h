/* The five inputs calibrate_accuracy measures the tree methods on:
 * Plummer, Hernquist, a uniform sphere, two tight clusters on a sparse
 * background, and a line of bodies plus a pile of coincident ones (spread
 * a little when softened), from fixed seeds so that the table can be redone
 * bit for bit; tests/test_accuracy.c draws fresh ones. */
#ifndef CALIBRATE_INPUTS_H
#define CALIBRATE_INPUTS_H

#include <stddef.h>
#include <stdint.h>

enum { CAL_INPUTS = 5 };

/* The inputs' seeds: CAL_SEED + the input's number. */
#define CAL_SEED 0xCA11B4A7E5EEDULL

extern const char *const CAL_INPUT_NAMES[CAL_INPUTS];

typedef struct input {
  const char *name;
  size_t n;
  double *pos, *mass;
  double *radius; /* distance from the centre of mass, per body */
} input;

/* SplitMix64: the next 64 random bits of *state. */
uint64_t cal_splitmix64(uint64_t *state);

/* Input w (CAL_INPUT_NAMES order) of n bodies; softened spreads the pile.
 * 0, or -1 when out of memory. Release with input_free. */
int input_make(input *in, int w, size_t n, int softened);
void input_free(input *in);

#endif
