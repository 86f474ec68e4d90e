/* LSD radix sort of 64-bit keys with an index payload, 8 bits a pass.
 *
 * Each pass: every thread counts the digits of its contiguous chunk, the
 * counts are turned into per-(digit, thread) output offsets, and each
 * thread scatters its chunk in order. Offsets ordered by digit, then by
 * thread, then by position within the chunk make every pass stable, which
 * is what makes LSD radix sort correct. Passes whose digit is the same in
 * every key are skipped: they would leave the order unchanged. */
#include "octree.h"

#include <omp.h>
#include <string.h>

enum {
  DIGIT_BITS = 8,
  DIGITS = 1 << DIGIT_BITS,
  /* Below this many keys a team costs more than it saves. */
  PARALLEL_MIN = 1 << 14
};

/* The bit offsets of the digits that differ between some keys: a digit
 * whose bits are all set in the AND of the keys or all clear in their OR
 * is constant. Returns how many there are. */
static int varying_digits(size_t n, const uint64_t *keys, int shift[]) {
  uint64_t any = 0, all = ~(uint64_t)0;
#pragma omp parallel for reduction(| : any) reduction(& : all)                 \
    if (n >= PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) {
    any |= keys[i];
    all &= keys[i];
  }
  uint64_t varying = any ^ all;
  int count = 0;
  for (int s = 0; s < 64; s += DIGIT_BITS)
    if ((varying >> s) & (DIGITS - 1))
      shift[count++] = s;
  return count;
}

/* The first of the keys that thread t of nt takes: equal chunks, the
 * remainder spread over them, with no overflow for any n. */
static size_t chunk_start(size_t n, int nt, int t) {
  return n / (size_t)nt * (size_t)t + n % (size_t)nt * (size_t)t / (size_t)nt;
}

void tfmm_radix_sort(size_t n, uint64_t *keys, int64_t *idx,
                     uint64_t *key_scratch, int64_t *idx_scratch) {
  if (n < 2)
    return;
  int shift[64 / DIGIT_BITS];
  int passes = varying_digits(n, keys, shift);
  if (passes == 0)
    return;
  /* Shared between the team: running totals per digit while the threads
   * take their offsets in turn, then each digit's first output slot. */
  size_t running[DIGITS], base[DIGITS];
  memset(running, 0, sizeof running);

#pragma omp parallel if (n >= PARALLEL_MIN)
  {
    int nt = omp_get_num_threads(), me = omp_get_thread_num();
    size_t lo = chunk_start(n, nt, me), hi = chunk_start(n, nt, me + 1);
    uint64_t *src_k = keys, *dst_k = key_scratch;
    int64_t *src_i = idx, *dst_i = idx_scratch;
    size_t offset[DIGITS];

    for (int p = 0; p < passes; p++) {
      int s = shift[p];
      memset(offset, 0, sizeof offset);
      for (size_t i = lo; i < hi; i++)
        offset[(src_k[i] >> s) & (DIGITS - 1)]++;

        /* Thread r runs iteration r (static schedule, chunk 1), and ordered
         * runs them in turn: thread r's offset for a digit is the count of
         * that digit in the chunks before its own. */
#pragma omp for ordered schedule(static, 1)
      for (int r = 0; r < nt; r++) {
#pragma omp ordered
        for (int d = 0; d < DIGITS; d++) {
          size_t c = offset[d];
          offset[d] = running[d];
          running[d] += c;
        }
      }
#pragma omp single
      {
        size_t sum = 0;
        for (int d = 0; d < DIGITS; d++) {
          base[d] = sum;
          sum += running[d];
          running[d] = 0;
        }
      }
      for (int d = 0; d < DIGITS; d++)
        offset[d] += base[d];

      for (size_t i = lo; i < hi; i++) {
        uint64_t k = src_k[i];
        size_t at = offset[(k >> s) & (DIGITS - 1)]++;
        dst_k[at] = k;
        dst_i[at] = src_i[i];
      }
      /* The next pass reads what the other threads wrote. */
#pragma omp barrier
      uint64_t *tk = src_k;
      src_k = dst_k;
      dst_k = tk;
      int64_t *ti = src_i;
      src_i = dst_i;
      dst_i = ti;
    }

    if (passes % 2 == 1) {
      memcpy(keys + lo, key_scratch + lo, (hi - lo) * sizeof *keys);
      memcpy(idx + lo, idx_scratch + lo, (hi - lo) * sizeof *idx);
    }
  }
}
