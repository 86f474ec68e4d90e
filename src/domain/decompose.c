/* The split of the bodies over the ranks along the Morton curve of their
 * common cube: one contiguous key range per rank, of equal measured cost
 * (the static spatial split of multi-GPU codes, weighted by what the last
 * evaluation cost, as in Warren and Salmon's hashed oct-tree, 1993). The
 * split is found by sampling: each rank offers keys at equal steps of its
 * bodies' cumulative weight, and every rank picks the same splitters from
 * the sorted samples of all. */
#include "domain/decompose.h"

#include "domain/domain.h"
#include "domain/exchange.h"

#include "tree/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Samples each rank offers per rank of the communicator: the split lands
 * within about 1 / SAMPLES of the ideal share. */
enum { SAMPLES = 64 };
/* Bodies per rank of the communicator whose keys a rank sorts to offer
 * its samples. */
enum { SUBSET = 1024 };

tfmm_status tfmm_domain_bounds(tfmm_domain *d, size_t n, const double *pos,
                               const double *mass, double box_size,
                               double cube[4], tfmm_units *units, size_t *total,
                               tfmm_error *err) {
  /* lo (negated, so that one MAX reduces all), hi, heaviest, count. */
  double v[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                 -INFINITY, -INFINITY, 0.0,       (double)n};
  for (size_t i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      const double x = pos[3 * i + k];
      v[k] = fmax(v[k], -x);
      v[3 + k] = fmax(v[3 + k], x);
    }
    v[6] = fmax(v[6], mass[i]);
  }
  double count = v[7];
  TFMM_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, 7, MPI_DOUBLE, MPI_MAX, d->comm),
               "MPI_Allreduce (bounds)", err);
  TFMM_MPI_TRY(
      MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_DOUBLE, MPI_SUM, d->comm),
      "MPI_Allreduce (count)", err);
  *total = (size_t)count;
  if (*total == 0)
    return TFMM_OK;
  const double lo[3] = {-v[0], -v[1], -v[2]}, hi[3] = {v[3], v[4], v[5]};
  *units = tfmm_units_from_bounds(lo, hi, v[6], box_size);
  double side = 0.0;
  for (int k = 0; k < 3; k++)
    side = fmax(side, hi[k] - lo[k]);
  if (!(side > 0))
    side = fmax(1.0, fabs(lo[0]));
  /* A little room, so that the highest body is inside the cube. */
  side *= 1.0 + 0x1p-20;
  for (int k = 0; k < 3; k++)
    cube[k] = lo[k];
  cube[3] = side;
  return TFMM_OK;
}

int tfmm_domain_owner_of(const tfmm_domain *d, uint64_t key) {
  /* The last r with split[r] <= key. */
  int lo = 0, hi = d->size - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (d->split[mid] <= key)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* A sample of all ranks': its key and the weight it stands for. */
typedef struct sample {
  uint64_t key;
  double weight;
} sample;

static int by_key(const void *a, const void *b) {
  const uint64_t x = ((const sample *)a)->key, y = ((const sample *)b)->key;
  return (x > y) - (x < y);
}

/* Keys are 63 bits; a double holds 53. The samples travel as two halves
 * packed into doubles exactly. */
static void put_key(double *slot, uint64_t key) {
  slot[0] = (double)(key >> 32);
  slot[1] = (double)(key & 0xffffffffu);
}
static uint64_t get_key(const double *slot) {
  return (uint64_t)slot[0] << 32 | (uint64_t)slot[1];
}

tfmm_status tfmm_domain_split(tfmm_domain *d, size_t n, const uint64_t *keys,
                              tfmm_error *err) {
  const int P = d->size;
  /* The keys of at most SUBSET bodies taken at equal strides stand for
   * all of them (sorting a few thousand keys, not millions). */
  const size_t m = n < (size_t)SUBSET * P ? n : (size_t)SUBSET * P;
  sample *sub = malloc((m > 0 ? m : 1) * sizeof *sub);
  const size_t ns = n > 0 ? (size_t)SAMPLES * P : 0;
  double *mine = malloc((ns > 0 ? ns : 1) * 3 * sizeof *mine);
  if (sub == NULL || mine == NULL) {
    free(sub), free(mine);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the keys of %zu bodies", n);
  }
  for (size_t k = 0; k < m; k++) {
    const uint64_t key = keys[k * n / m];
    double w = d->have_split ? d->cost[tfmm_domain_owner_of(d, key)] : 1.0;
    sub[k] = (sample){key, w > 0 ? w * ((double)n / (double)m) : 1.0};
  }
  qsort(sub, m, sizeof *sub, by_key);
  double wsum = 0.0;
  for (size_t k = 0; k < m; k++)
    wsum += sub[k].weight;
  /* Sample j is the key where the cumulative weight passes (j + 1/2) /
   * ns of this rank's; it stands for wsum / ns of weight. */
  size_t i = 0;
  double run = 0.0;
  for (size_t j = 0; j < ns; j++) {
    const double at = ((double)j + 0.5) / (double)ns * wsum;
    while (i + 1 < m && run + sub[i].weight < at)
      run += sub[i++].weight;
    put_key(mine + 3 * j, sub[i].key);
    mine[3 * j + 2] = wsum / (double)ns;
  }
  free(sub);
  double *all = NULL;
  size_t *offset = malloc((size_t)(P + 1) * sizeof *offset);
  tfmm_status st =
      offset == NULL
          ? tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for samples")
          : tfmm_domain_allgather(d, mine, 3 * ns, &all, offset, err);
  free(mine);
  if (st != TFMM_OK) {
    free(offset);
    return st;
  }
  const size_t total = offset[P] / 3;
  free(offset);
  sample *s = malloc((total > 0 ? total : 1) * sizeof *s);
  if (s == NULL) {
    free(all);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for samples");
  }
  double W = 0.0;
  for (size_t k = 0; k < total; k++) {
    s[k].key = get_key(all + 3 * k);
    s[k].weight = all[3 * k + 2];
    W += s[k].weight;
  }
  free(all);
  /* Every rank sorts the same samples the same way: the same split. */
  qsort(s, total, sizeof *s, by_key);
  d->split[0] = 0;
  d->split[P] = UINT64_MAX;
  double run_all = 0.0;
  size_t k = 0;
  for (int r = 1; r < P; r++) {
    const double target = W * r / P;
    while (k < total && run_all + s[k].weight <= target)
      run_all += s[k++].weight;
    /* Rank r begins at the first sample past its share; with no samples
     * left the ranks above hold nothing. */
    uint64_t at = k < total ? s[k].key : UINT64_MAX;
    if (at < d->split[r - 1])
      at = d->split[r - 1];
    d->split[r] = at;
  }
  free(s);
  return TFMM_OK;
}

tfmm_status tfmm_domain_owners(tfmm_domain *d, size_t n, const double *pos,
                               int *owner, tfmm_error *err) {
  (void)err;
  for (size_t i = 0; i < n; i++)
    owner[i] = d->have_split
                   ? tfmm_domain_owner_of(
                         d, tfmm_key_encode(pos + 3 * i, d->cube, d->cube[3]))
                   : d->rank;
  return TFMM_OK;
}
