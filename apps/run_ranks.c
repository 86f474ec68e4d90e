/* The bodies of a run between the ranks (see run_ranks.h). A body travels
 * as one record, so that one scatter or gather moves them all. */
#define _POSIX_C_SOURCE 200809L
#include "run_ranks.h"

#include "cli.h"
#include "mpi_cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct body_record {
  double pos[3], vel[3], mass, acc[3], pot;
  uint64_t id;
  signed char bin;
} body_record;

/* The scalars of a run_state or a tfmm_sim_state, and which optional
 * arrays it has; the planner's choice over the ranks (a checkpoint's), so
 * that the restored sim goes on at its setting. */
typedef struct state_scalars {
  uint64_t n;
  int64_t step, ticks;
  double time_initial, energy_initial, tick;
  int has_forces, has_bins;
  tfmm_choice choice;
} state_scalars;

static int allocated(const void *p, size_t n) {
  if (p == NULL)
    cli_error("out of memory for %zu bodies", n);
  return p != NULL;
}

int run_ranks_scatter(run_state *s) {
  if (!mpi_cli_on())
    return 1;
  state_scalars k = {.n = s->n,
                     .step = s->step,
                     .ticks = s->ticks,
                     .time_initial = s->time_initial,
                     .energy_initial = s->energy_initial,
                     .tick = s->tick,
                     .has_forces = s->acc != NULL,
                     .has_bins = s->bins != NULL,
                     .choice = s->choice};
  mpi_cli_bcast(&k, sizeof k);
  body_record *all = NULL;
  if (mpi_cli_rank() == 0) {
    all = malloc(s->n > 0 ? s->n * sizeof *all : 1);
    for (size_t i = 0; all != NULL && i < s->n; i++) {
      body_record *b = &all[i];
      memset(b, 0, sizeof *b);
      memcpy(b->pos, s->pos + 3 * i, sizeof b->pos);
      memcpy(b->vel, s->vel + 3 * i, sizeof b->vel);
      b->mass = s->mass[i];
      if (k.has_forces) {
        memcpy(b->acc, s->acc + 3 * i, sizeof b->acc);
        b->pot = s->pot[i];
      }
      b->id = s->ids[i];
      b->bin = k.has_bins ? s->bins[i] : 0;
    }
    allocated(all, s->n);
  }
  int ok = mpi_cli_agree(mpi_cli_rank() != 0 || all != NULL);
  run_state_free(s);
  void *mine = NULL;
  size_t n = 0;
  ok = ok && mpi_cli_scatter(all, (size_t)k.n, sizeof *all, &mine, &n);
  free(all);
  if (ok) {
    s->n = n;
    s->pos = malloc(3 * n * sizeof(double) + 1);
    s->vel = malloc(3 * n * sizeof(double) + 1);
    s->mass = malloc(n * sizeof(double) + 1);
    s->ids = malloc(n * sizeof(uint64_t) + 1);
    if (k.has_forces) {
      s->acc = malloc(3 * n * sizeof(double) + 1);
      s->pot = malloc(n * sizeof(double) + 1);
    }
    if (k.has_bins)
      s->bins = malloc(n + 1);
    ok = allocated(s->pos, n) && allocated(s->vel, n) &&
         allocated(s->mass, n) && allocated(s->ids, n) &&
         (!k.has_forces || (allocated(s->acc, n) && allocated(s->pot, n))) &&
         (!k.has_bins || allocated(s->bins, n));
  }
  ok = mpi_cli_agree(ok);
  const body_record *mine_b = mine;
  for (size_t i = 0; ok && i < n; i++) {
    const body_record *b = &mine_b[i];
    memcpy(s->pos + 3 * i, b->pos, sizeof b->pos);
    memcpy(s->vel + 3 * i, b->vel, sizeof b->vel);
    s->mass[i] = b->mass;
    s->ids[i] = b->id;
    if (k.has_forces) {
      memcpy(s->acc + 3 * i, b->acc, sizeof b->acc);
      s->pot[i] = b->pot;
    }
    if (k.has_bins)
      s->bins[i] = b->bin;
  }
  free(mine);
  if (!ok) {
    run_state_free(s);
    return 0;
  }
  s->step = k.step;
  s->ticks = k.ticks;
  s->time_initial = k.time_initial;
  s->energy_initial = k.energy_initial;
  s->tick = k.tick;
  s->choice = k.choice;
  return 1;
}

static int by_id(const void *a, const void *b) {
  const uint64_t x = ((const body_record *)a)->id,
                 y = ((const body_record *)b)->id;
  return (x > y) - (x < y);
}

/* The gathered records, sorted, as the arrays of one block of memory:
 * pos, vel, acc (3n each), mass, pot (n each), ids (n), bins (n). */
static int unpack(body_record *r, size_t n, int has_bins,
                  run_ranks_state *out) {
  qsort(r, n, sizeof *r, by_id);
  const size_t doubles = 11 * n;
  char *block = malloc(doubles * sizeof(double) + n * sizeof(uint64_t) + n + 1);
  if (!allocated(block, n))
    return 0;
  double *pos = (double *)block, *vel = pos + 3 * n, *acc = vel + 3 * n,
         *mass = acc + 3 * n, *pot = mass + n;
  uint64_t *ids = (uint64_t *)(pot + n);
  signed char *bins = (signed char *)(ids + n);
  for (size_t i = 0; i < n; i++) {
    memcpy(pos + 3 * i, r[i].pos, sizeof r[i].pos);
    memcpy(vel + 3 * i, r[i].vel, sizeof r[i].vel);
    memcpy(acc + 3 * i, r[i].acc, sizeof r[i].acc);
    mass[i] = r[i].mass;
    pot[i] = r[i].pot;
    ids[i] = r[i].id;
    bins[i] = r[i].bin;
  }
  out->owned = block;
  out->state.n = n;
  out->state.pos = pos;
  out->state.vel = vel;
  out->state.acc = acc;
  out->state.mass = mass;
  out->state.pot = pot;
  out->state.ids = ids;
  out->state.bins = has_bins ? bins : NULL;
  return 1;
}

int run_ranks_gather(const tfmm_sim_state *mine, run_ranks_state *out) {
  memset(out, 0, sizeof *out);
  out->state = *mine;
  if (!mpi_cli_on())
    return 1;
  const int has_bins = mpi_cli_max_int(mine->bins != NULL);
  body_record *r = malloc(mine->n > 0 ? mine->n * sizeof *r : 1);
  for (size_t i = 0; r != NULL && i < mine->n; i++) {
    memset(&r[i], 0, sizeof r[i]);
    memcpy(r[i].pos, mine->pos + 3 * i, sizeof r[i].pos);
    memcpy(r[i].vel, mine->vel + 3 * i, sizeof r[i].vel);
    memcpy(r[i].acc, mine->acc + 3 * i, sizeof r[i].acc);
    r[i].mass = mine->mass[i];
    r[i].pot = mine->pot[i];
    r[i].id = mine->ids != NULL ? mine->ids[i] : (uint64_t)i + 1;
    r[i].bin = mine->bins != NULL ? mine->bins[i] : 0;
  }
  int ok = mpi_cli_agree(allocated(r, mine->n));
  void *all = NULL;
  size_t n = 0;
  ok = ok && mpi_cli_gather(r, mine->n, sizeof *r, &all, &n);
  free(r);
  out->state.n = 0;
  if (ok && mpi_cli_rank() == 0)
    ok = unpack(all, n, has_bins, out);
  free(all);
  return mpi_cli_agree(ok);
}

int run_ranks_save(tfmm_sim *sim, run_ranks_state *out) {
  tfmm_sim_state s;
  memset(out, 0, sizeof *out);
  if (tfmm_sim_save(sim, &s) != TFMM_OK) {
    cli_error("%s", tfmm_sim_message(sim));
    return 0; /* every rank's failure */
  }
  return run_ranks_gather(&s, out);
}

void run_ranks_free(run_ranks_state *s) {
  free(s->owned);
  memset(s, 0, sizeof *s);
}

/* name\0value\0 for each attribute, in order. */
static char *pack_attrs(const snapshot_attr *a, size_t count, size_t *len) {
  *len = 0;
  for (size_t k = 0; k < count; k++)
    *len += strlen(a[k].name) + strlen(a[k].value) + 2;
  char *buf = malloc(*len + 1), *p = buf;
  for (size_t k = 0; buf != NULL && k < count; k++) {
    const size_t ln = strlen(a[k].name) + 1, lv = strlen(a[k].value) + 1;
    memcpy(p, a[k].name, ln);
    memcpy(p + ln, a[k].value, lv);
    p += ln + lv;
  }
  return buf;
}

static int unpack_attrs(const char *p, size_t count, snapshot_attr **out) {
  snapshot_attr *a = calloc(count + 1, sizeof *a);
  int ok = a != NULL;
  for (size_t k = 0; ok && k < count; k++) {
    a[k].name = strdup(p);
    p += strlen(p) + 1;
    a[k].value = strdup(p);
    p += strlen(p) + 1;
    ok = a[k].name != NULL && a[k].value != NULL;
  }
  if (!ok) {
    for (size_t k = 0; a != NULL && k < count; k++) {
      free(a[k].name);
      free(a[k].value);
    }
    free(a);
    a = NULL;
  }
  *out = a;
  return ok;
}

int run_ranks_share_attrs(snapshot_attr **params, size_t *count) {
  if (!mpi_cli_on())
    return 1;
  const int root = mpi_cli_rank() == 0;
  uint64_t sizes[2] = {*count, 0}; /* attributes, bytes */
  char *buf = NULL;
  if (root) {
    size_t len;
    buf = pack_attrs(*params, *count, &len);
    sizes[1] = len;
  }
  mpi_cli_bcast(sizes, sizeof sizes);
  if (!root)
    buf = malloc(sizes[1] + 1);
  if (buf == NULL)
    cli_error("out of memory");
  int ok = mpi_cli_agree(buf != NULL);
  if (ok)
    mpi_cli_bcast(buf, sizes[1]);
  if (ok && !root) {
    ok = unpack_attrs(buf, sizes[0], params);
    if (!ok)
      cli_error("out of memory");
    *count = ok ? sizes[0] : 0;
  }
  free(buf);
  return mpi_cli_agree(ok);
}

size_t run_ranks_count(const tfmm_sim *sim) {
  int64_t n = (int64_t)tfmm_sim_count(sim);
  mpi_cli_sum_i64(&n, 1);
  return (size_t)n;
}
