#include "bodies.h"

#include "team.h"

#include <math.h>
#include <stdlib.h>

tfmm_status tfmm_bodies_check(size_t n, const double *pos, const double *mass,
                              tfmm_error *err) {
  for (size_t i = 0; i < n; i++) {
    const double *x = pos + 3 * i;
    if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                            "body %zu: position (%g, %g, %g) is not finite", i,
                            x[0], x[1], x[2]);
    if (!isfinite(mass[i]) || !(mass[i] > 0))
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                            "body %zu: mass %g is not finite and positive", i,
                            mass[i]);
  }
  return TFMM_OK;
}

void tfmm_bodies_center(size_t n, const double *pos, double center[3]) {
  for (int k = 0; k < 3; k++) {
    double lo = pos[k], hi = pos[k];
    for (size_t i = 1; i < n; i++) {
      double v = pos[3 * i + k];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    center[k] = 0.5 * (lo + hi);
  }
}

void tfmm_bodies_pack_f32(size_t n, const double *pos, const double *mass,
                          const double center[3], float *xyzm) {
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (size_t i = 0; i < n; i++) {
    xyzm[4 * i + 0] = (float)(pos[3 * i + 0] - center[0]);
    xyzm[4 * i + 1] = (float)(pos[3 * i + 1] - center[1]);
    xyzm[4 * i + 2] = (float)(pos[3 * i + 2] - center[2]);
    xyzm[4 * i + 3] = (float)mass[i];
  }
}

void tfmm_bodies_pack_f64(size_t n, const double *pos, const double *mass,
                          const double center[3], double *xyzm) {
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (size_t i = 0; i < n; i++) {
    xyzm[4 * i + 0] = pos[3 * i + 0] - center[0];
    xyzm[4 * i + 1] = pos[3 * i + 1] - center[1];
    xyzm[4 * i + 2] = pos[3 * i + 2] - center[2];
    xyzm[4 * i + 3] = mass[i];
  }
}

int tfmm_point_key_compare(const void *pa, const void *pb) {
  const tfmm_point_key *a = pa, *b = pb;
  if (a->x != b->x)
    return a->x < b->x ? -1 : 1;
  if (a->y != b->y)
    return a->y < b->y ? -1 : 1;
  if (a->z != b->z)
    return a->z < b->z ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

int tfmm_bodies_find_coincident(size_t n, const double *xyz, size_t stride,
                                size_t *i, size_t *j) {
  if (n < 2)
    return 0;
  tfmm_point_key *keys = malloc(n * sizeof *keys);
  if (keys == NULL)
    return -1;
  for (size_t k = 0; k < n; k++)
    keys[k] = (tfmm_point_key){xyz[stride * k], xyz[stride * k + 1],
                               xyz[stride * k + 2], (int64_t)k};
  qsort(keys, n, sizeof *keys, tfmm_point_key_compare);
  int found = 0;
  for (size_t k = 1; k < n; k++) {
    const tfmm_point_key *a = &keys[k - 1], *b = &keys[k];
    if (a->x == b->x && a->y == b->y && a->z == b->z) {
      /* Keep the pair with the smallest first index over all groups. */
      if (!found || (size_t)a->index < *i ||
          ((size_t)a->index == *i && (size_t)b->index < *j)) {
        *i = (size_t)a->index;
        *j = (size_t)b->index;
      }
      found = 1;
    }
  }
  free(keys);
  return found;
}

size_t tfmm_bodies_count_active(size_t n, const unsigned char *active) {
  size_t k = 0;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) reduction(+ : k) num_threads(team)
  for (size_t i = 0; i < n; i++)
    k += active[i] != 0;
  return k;
}

size_t tfmm_bodies_first_nonfinite(size_t n, const unsigned char *active,
                                   const double *acc, const double *pot) {
  size_t bad = n;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) reduction(min : bad) num_threads(team)
  for (size_t i = 0; i < n; i++)
    if ((active == NULL || active[i]) &&
        (!isfinite(acc[3 * i]) || !isfinite(acc[3 * i + 1]) ||
         !isfinite(acc[3 * i + 2]) || (pot != NULL && !isfinite(pot[i]))))
      bad = i < bad ? i : bad;
  return bad;
}
