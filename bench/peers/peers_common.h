/* Shared by our peer drivers (ecl_driver.cu, ryoanji_driver.cu): the
 * sampled bodies for the accuracy check, the dump that ref_accuracy.py
 * reads, and the median of the timed evaluations.  Our code, no peer code. */
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace peers {

/* splitmix64: the sample of bodies is the same for a given (N, seed). */
static inline uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* k distinct body indices in [0, n), drawn with seed 1, sorted. */
static inline std::vector<int64_t> sample_indices(int64_t n, int64_t k,
                                                  uint64_t seed = 1) {
  if (k > n)
    k = n;
  std::vector<int64_t> idx;
  std::vector<char> taken(n, 0);
  uint64_t s = seed;
  while ((int64_t)idx.size() < k) {
    int64_t i = (int64_t)(splitmix64(&s) % (uint64_t)n);
    if (!taken[i]) {
      taken[i] = 1;
      idx.push_back(i);
    }
  }
  std::sort(idx.begin(), idx.end());
  return idx;
}

/* The dump ref_accuracy.py reads (little-endian):
 *   int64 n, int64 k,
 *   float32 x[n], y[n], z[n], m[n]      the sources, exactly as the code used
 * them int64 idx[k]                        sampled targets (indices into the
 * arrays above) float32 ax[k], ay[k], az[k]         the code's accelerations at
 * those targets  */
static inline int write_dump(const char *path, int64_t n, const float *x,
                             const float *y, const float *z, const float *m,
                             const std::vector<int64_t> &idx, const float *ax,
                             const float *ay, const float *az) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    return -1;
  }
  int64_t k = (int64_t)idx.size();
  std::vector<float> sx(k), sy(k), sz(k);
  for (int64_t j = 0; j < k; j++) {
    sx[j] = ax[idx[j]];
    sy[j] = ay[idx[j]];
    sz[j] = az[idx[j]];
  }
  bool ok =
      fwrite(&n, 8, 1, f) == 1 && fwrite(&k, 8, 1, f) == 1 &&
      fwrite(x, 4, n, f) == (size_t)n && fwrite(y, 4, n, f) == (size_t)n &&
      fwrite(z, 4, n, f) == (size_t)n && fwrite(m, 4, n, f) == (size_t)n &&
      fwrite(idx.data(), 8, k, f) == (size_t)k &&
      fwrite(sx.data(), 4, k, f) == (size_t)k &&
      fwrite(sy.data(), 4, k, f) == (size_t)k &&
      fwrite(sz.data(), 4, k, f) == (size_t)k;
  if (fclose(f) != 0)
    ok = false;
  if (!ok) {
    fprintf(stderr, "short write to %s\n", path);
    return -1;
  }
  return 0;
}

static inline double median(std::vector<double> v) {
  if (v.empty())
    return 0.0;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

/* One line the harness parses:
 * PEER_RESULT code n median_ms min_ms max_ms reps */
static inline void print_result(const char *code, int64_t n,
                                const std::vector<double> &ms) {
  double lo = *std::min_element(ms.begin(), ms.end());
  double hi = *std::max_element(ms.begin(), ms.end());
  printf("PEER_RESULT %s %lld %.4f %.4f %.4f %zu\n", code, (long long)n,
         median(ms), lo, hi, ms.size());
  fflush(stdout);
}

} // namespace peers
