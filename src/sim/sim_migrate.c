/* Bodies moving between ranks with their whole state (a sim over several
 * processes, tilefmm.h): at a synchronisation point each body goes to the
 * rank whose key range holds it under the split of the last evaluation,
 * so that the next evaluation finds its bodies at home and sends only
 * those that crossed a boundary since. */
#include "sim/sim.h"

#include "domain/domain.h"

#include <stdlib.h>
#include <string.h>

/* One body's record: pos (3), vel (3), mass, acc (3), pot, id, bin. The id
 * travels as the bits of a double. */
enum { WIDTH = 13 };

static void pack(const tfmm_sim *s, size_t i, double *r) {
  memcpy(r, s->pos + 3 * i, 3 * sizeof *r);
  memcpy(r + 3, s->vel + 3 * i, 3 * sizeof *r);
  r[6] = s->mass[i];
  memcpy(r + 7, s->acc + 3 * i, 3 * sizeof *r);
  r[10] = s->pot[i];
  memcpy(r + 11, &s->ids[i], sizeof s->ids[i]);
  r[12] = s->bin[i];
}

static void unpack(tfmm_sim *s, size_t i, const double *r) {
  memcpy(s->pos + 3 * i, r, 3 * sizeof *r);
  memcpy(s->vel + 3 * i, r + 3, 3 * sizeof *r);
  s->mass[i] = r[6];
  memcpy(s->acc + 3 * i, r + 7, 3 * sizeof *r);
  s->pot[i] = r[10];
  memcpy(&s->ids[i], r + 11, sizeof s->ids[i]);
  s->bin[i] = (signed char)r[12];
}

/* The arrays for n bodies, replacing the old ones. */
static int reallocate(tfmm_sim *s, size_t n) {
  const size_t m = n > 0 ? n : 1;
  double *pos = malloc(3 * m * sizeof *pos), *vel = malloc(3 * m * sizeof *vel);
  double *mass = malloc(m * sizeof *mass), *acc = malloc(3 * m * sizeof *acc);
  double *pot = malloc(m * sizeof *pot);
  uint64_t *ids = malloc(m * sizeof *ids);
  signed char *bin = malloc(m * sizeof *bin);
  unsigned char *active = malloc(m * sizeof *active);
  if (pos == NULL || vel == NULL || mass == NULL || acc == NULL ||
      pot == NULL || ids == NULL || bin == NULL || active == NULL) {
    free(pos), free(vel), free(mass), free(acc), free(pot), free(ids);
    free(bin), free(active);
    return -1;
  }
  free(s->pos), free(s->vel), free(s->mass), free(s->acc), free(s->pot);
  free(s->ids), free(s->bin), free(s->active);
  s->pos = pos, s->vel = vel, s->mass = mass, s->acc = acc, s->pot = pot;
  s->ids = ids, s->bin = bin, s->active = active;
  s->n = n;
  return 0;
}

tfmm_status tfmm_sim_migrate(tfmm_sim *s) {
  tfmm_domain *d = s->domain;
  /* A snapshot begun but not ended still views mass and ids. */
  int skip = d == NULL || s->snap_pending;
  tfmm_status st = TFMM_OK;
  if (d != NULL) {
    int64_t pending = s->snap_pending;
    st = tfmm_domain_sum_i64(d, &pending, 1, &s->err);
    skip = st != TFMM_OK || pending > 0;
  }
  if (skip)
    return st;
  const size_t n = s->n;
  int *owner = malloc((n > 0 ? n : 1) * sizeof *owner);
  double *records = malloc((n > 0 ? n : 1) * WIDTH * sizeof *records);
  if (owner == NULL || records == NULL)
    st = tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                        "no memory to move %zu bodies", n);
  if (st == TFMM_OK)
    st = tfmm_domain_owners(d, n, s->pos, owner, &s->err);
  for (size_t i = 0; st == TFMM_OK && i < n; i++)
    pack(s, i, records + WIDTH * i);
  st = tfmm_domain_agree(d, st, &s->err);
  double *in = NULL;
  size_t nin = 0;
  if (st == TFMM_OK)
    st = tfmm_domain_migrate_records(d, n, WIDTH, records, owner, &in, &nin,
                                     &s->err);
  free(owner);
  free(records);
  if (st == TFMM_OK && reallocate(s, nin) != 0)
    st = tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY, "no memory for %zu bodies",
                        nin);
  for (size_t i = 0; st == TFMM_OK && i < nin; i++)
    unpack(s, i, in + WIDTH * i);
  free(in);
  return tfmm_domain_agree(d, st, &s->err);
}
