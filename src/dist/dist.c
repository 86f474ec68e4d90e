/* A solver over the ranks of a communicator (tilefmm.h, "Several
 * processes: MPI"): the handle, the collective agreement on failures, the
 * reductions the simulation needs, and one evaluation as its stages:
 *
 *   bounds     the common cube and units of every rank's bodies
 *   split      Morton keys, contiguous key ranges of equal measured cost
 *   scatter    each body to the rank that owns its key
 *   tree       the octree of the bodies owned, and its multipoles
 *   let        each rank's locally essential tree for every other
 *   local      this rank's solver on its bodies and the bodies received
 *   remote     the multipoles received, at the bodies owned
 *   gather     the forces back to the ranks that gave the bodies
 *
 * Sizes and times of the stages go to tfmm_dist_stats. */
#include "dist/dist_internal.h"

#include "bodies.h"
#include "farfield/passes.h"
#include "solver_handle.h"
#include "tree/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tfmm_has_mpi(void) { return 1; }

int tfmm_dist_size(const tfmm_dist *d) { return d != NULL ? d->size : 1; }
int tfmm_dist_rank(const tfmm_dist *d) { return d != NULL ? d->rank : 0; }

void tfmm_dist_destroy(tfmm_dist *d) {
  if (d == NULL)
    return;
  tfmm_solver_destroy(d->local);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && d->comm != MPI_COMM_NULL)
    MPI_Comm_free(&d->comm);
  free(d->split);
  free(d->cost);
  free(d);
}

tfmm_status tfmm_dist_agree(tfmm_dist *d, tfmm_status st, tfmm_error *err) {
  if (d == NULL)
    return st;
  /* The lowest failing rank, and its status and message. */
  int failing = st != TFMM_OK ? d->rank : d->size;
  if (MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, d->comm) !=
      MPI_SUCCESS)
    return tfmm_error_set(err, TFMM_ERR_MPI,
                          "MPI_Allreduce (agreeing on failures) failed");
  if (failing == d->size)
    return TFMM_OK;
  int code = (int)st;
  char text[TFMM_MESSAGE_SIZE];
  memcpy(text, err->message, sizeof text);
  if (MPI_Bcast(&code, 1, MPI_INT, failing, d->comm) != MPI_SUCCESS ||
      MPI_Bcast(text, (int)sizeof text, MPI_CHAR, failing, d->comm) !=
          MPI_SUCCESS)
    return tfmm_error_set(err, TFMM_ERR_MPI,
                          "MPI_Bcast (a failure's message) failed");
  if (failing == d->rank)
    return st;
  text[sizeof text - 1] = '\0';
  return tfmm_error_set(err, (tfmm_status)code, "rank %d: %s", failing, text);
}

static tfmm_status reduce(tfmm_dist *d, void *v, int count, MPI_Datatype type,
                          MPI_Op op, tfmm_error *err) {
  if (d == NULL)
    return TFMM_OK;
  return tfmm_dist_check(
      MPI_Allreduce(MPI_IN_PLACE, v, count, type, op, d->comm), "MPI_Allreduce",
      err);
}

tfmm_status tfmm_dist_sum(tfmm_dist *d, double *v, int count, tfmm_error *err) {
  return reduce(d, v, count, MPI_DOUBLE, MPI_SUM, err);
}

tfmm_status tfmm_dist_sum_i64(tfmm_dist *d, int64_t *v, int count,
                              tfmm_error *err) {
  return reduce(d, v, count, MPI_INT64_T, MPI_SUM, err);
}

tfmm_status tfmm_dist_max(tfmm_dist *d, double *v, int count, tfmm_error *err) {
  return reduce(d, v, count, MPI_DOUBLE, MPI_MAX, err);
}

tfmm_status tfmm_dist_owners(tfmm_dist *d, size_t n, const double *pos,
                             int *owner, tfmm_error *err) {
  (void)err;
  for (size_t i = 0; i < n; i++)
    owner[i] = d->have_split
                   ? tfmm_dist_owner_of(
                         d, tfmm_key_encode(pos + 3 * i, d->cube, d->cube[3]))
                   : d->rank;
  return TFMM_OK;
}

/* The GPU of this rank: cfg's plus its index among the ranks of its host,
 * modulo the GPUs there. */
static int rank_gpu(MPI_Comm comm, const tfmm_config *cfg) {
  MPI_Comm host;
  int local = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &host) == MPI_SUCCESS) {
    MPI_Comm_rank(host, &local);
    MPI_Comm_free(&host);
  }
  const int count = tfmm_gpu_count();
  return count > 0 ? (cfg->gpu_id + local) % count : cfg->gpu_id;
}

tfmm_status tfmm_solver_create_mpi(tfmm_solver **out, const tfmm_config *cfg,
                                   MPI_Comm comm) {
  if (out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  /* The handle the caller holds checks the calls and keeps the split; the
   * solver of this rank's part (d->local) evaluates. */
  tfmm_solver *s = calloc(1, sizeof *s);
  *out = s;
  if (s == NULL)
    return TFMM_ERR_NO_MEMORY;
  if (cfg == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "configuration is NULL");
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready)
    return tfmm_error_set(&s->err, TFMM_ERR_MPI,
                          "MPI is not initialised (call MPI_Init first)");
  s->cfg = *cfg;
  tfmm_dist *d = calloc(1, sizeof *d);
  if (d == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY, "no memory");
  s->dist = d;
  d->comm = MPI_COMM_NULL;
  tfmm_status st =
      tfmm_dist_check(MPI_Comm_dup(comm, &d->comm), "MPI_Comm_dup", &s->err);
  if (st != TFMM_OK)
    return st;
  MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(d->comm, &d->rank);
  MPI_Comm_size(d->comm, &d->size);
  st = tfmm_config_check(&s->cfg, &s->err);
  d->split = calloc((size_t)d->size + 1, sizeof *d->split);
  d->cost = calloc((size_t)d->size, sizeof *d->cost);
  if (st == TFMM_OK && (d->split == NULL || d->cost == NULL))
    st = tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY, "no memory");
  if (st == TFMM_OK) {
    tfmm_config mine = *cfg;
    mine.gpu_id = rank_gpu(d->comm, cfg);
    st = tfmm_solver_create(&d->local, &mine);
    if (st != TFMM_OK)
      tfmm_error_set(&s->err, st, "%s",
                     d->local != NULL ? tfmm_solver_message(d->local)
                                      : "no memory");
    else
      s->device = tfmm_solver_device(d->local);
  }
  return tfmm_dist_agree(d, st, &s->err);
}
