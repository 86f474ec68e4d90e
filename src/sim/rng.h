/* A small deterministic random number generator: xoshiro256** seeded by
 * splitmix64 (Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators", 2018). All state lives in the caller's tfmm_rng, so streams
 * are reproducible and thread-safe. Only integer operations and exact
 * conversions are used. */
#ifndef TFMM_RNG_H
#define TFMM_RNG_H

#include <stdint.h>

typedef struct tfmm_rng {
  uint64_t s[4];
} tfmm_rng;

/* splitmix64: spreads a 64-bit seed over the state, so that nearby seeds
 * (0, 1, 2, ...) give unrelated streams and the state is never all zero. */
static inline uint64_t tfmm_rng_splitmix64(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static inline void tfmm_rng_seed(tfmm_rng *rng, uint64_t seed) {
  for (int i = 0; i < 4; i++)
    rng->s[i] = tfmm_rng_splitmix64(&seed);
}

static inline uint64_t tfmm_rng_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: the next 64 random bits. */
static inline uint64_t tfmm_rng_next(tfmm_rng *rng) {
  uint64_t *s = rng->s;
  const uint64_t result = tfmm_rng_rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = tfmm_rng_rotl(s[3], 45);
  return result;
}

/* Uniform in the open interval (0, 1) on a grid of step 2^-26: the top 26
 * bits, offset by half a step, so that neither 0 nor 1 occurs (both are
 * singular for the Plummer inversion). The value and its square are exact
 * in double, so a compiler that fuses x * x + c into an FMA cannot change
 * any later result: a seed gives the same bits on every machine. */
static inline double tfmm_rng_uniform26(tfmm_rng *rng) {
  const double step = 1.0 / 67108864.0; /* 2^-26 */
  return ((double)(tfmm_rng_next(rng) >> 38) + 0.5) * step;
}

#endif
