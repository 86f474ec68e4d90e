/* What passes between the ranks of a domain: failures agreed on,
 * reductions, arrays of doubles all-to-all by counts, gathers, and
 * records moved to their owners. Counts travel as 64-bit integers; one message
 * carries at most INT_MAX doubles (MPI's int counts), which a rank's share
 * never nears in practice and which is refused with a message otherwise. */
#include "domain/exchange.h"

#include "domain/domain.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

tfmm_status tfmm_domain_check(int rc, const char *what, tfmm_error *err) {
  if (rc == MPI_SUCCESS)
    return TFMM_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    text[0] = '\0';
  return tfmm_error_set(err, TFMM_ERR_MPI, "%s failed: %s", what, text);
}

int tfmm_domain_size(const tfmm_domain *d) { return d != NULL ? d->size : 1; }
int tfmm_domain_rank(const tfmm_domain *d) { return d != NULL ? d->rank : 0; }

tfmm_status tfmm_domain_agree(tfmm_domain *d, tfmm_status st, tfmm_error *err) {
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

static tfmm_status reduce(tfmm_domain *d, void *v, int count, MPI_Datatype type,
                          MPI_Op op, tfmm_error *err) {
  if (d == NULL)
    return TFMM_OK;
  return tfmm_domain_check(
      MPI_Allreduce(MPI_IN_PLACE, v, count, type, op, d->comm), "MPI_Allreduce",
      err);
}

/* Summed on rank 0 and broadcast: MPI lets an Allreduce give the ranks
 * sums that differ in their last bits (its order of additions may differ
 * from rank to rank), and what every rank judges from these sums (the
 * measured error, and from it the planner's choice: measure_ranks.c) must
 * be the same on every rank, or the ranks would choose apart and their
 * collectives no longer match. */
tfmm_status tfmm_domain_sum(tfmm_domain *d, double *v, int count,
                            tfmm_error *err) {
  if (d == NULL)
    return TFMM_OK;
  const int root = d->rank == 0;
  TFMM_MPI_TRY(MPI_Reduce(root ? MPI_IN_PLACE : v, root ? v : NULL, count,
                          MPI_DOUBLE, MPI_SUM, 0, d->comm),
               "MPI_Reduce (sums)", err);
  return tfmm_domain_check(MPI_Bcast(v, count, MPI_DOUBLE, 0, d->comm),
                           "MPI_Bcast (sums)", err);
}

tfmm_status tfmm_domain_sum_i64(tfmm_domain *d, int64_t *v, int count,
                                tfmm_error *err) {
  return reduce(d, v, count, MPI_INT64_T, MPI_SUM, err);
}

tfmm_status tfmm_domain_max(tfmm_domain *d, double *v, int count,
                            tfmm_error *err) {
  return reduce(d, v, count, MPI_DOUBLE, MPI_MAX, err);
}

/* counts and displacements in doubles as MPI's ints. */
static tfmm_status int_counts(int P, const size_t *count, int width, int *c,
                              int *displ, tfmm_error *err) {
  size_t at = 0;
  for (int r = 0; r < P; r++) {
    const size_t v = count[r] * (size_t)width;
    if (v > INT_MAX || at > INT_MAX)
      return tfmm_error_set(err, TFMM_ERR_MPI,
                            "%zu records for one rank: more than one MPI "
                            "message holds",
                            count[r]);
    c[r] = (int)v;
    displ[r] = (int)at;
    at += v;
  }
  return TFMM_OK;
}

tfmm_status tfmm_domain_alltoall(tfmm_domain *d, const double *send,
                                 const size_t *count, int width, double **recv,
                                 size_t *recv_count, size_t *nrecv,
                                 tfmm_error *err) {
  const int P = d->size;
  *recv = NULL;
  int64_t *sc = calloc((size_t)P * 2, sizeof *sc);
  int *ic = malloc((size_t)P * 4 * sizeof *ic);
  if (sc == NULL || ic == NULL) {
    free(sc), free(ic);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for counts");
  }
  int64_t *rc = sc + P;
  for (int r = 0; r < P; r++)
    sc[r] = (int64_t)count[r];
  tfmm_status st = tfmm_domain_check(
      MPI_Alltoall(sc, 1, MPI_INT64_T, rc, 1, MPI_INT64_T, d->comm),
      "MPI_Alltoall (counts)", err);
  size_t total = 0;
  for (int r = 0; st == TFMM_OK && r < P; r++) {
    recv_count[r] = (size_t)rc[r];
    total += recv_count[r];
  }
  int *scount = ic, *sdispl = ic + P, *rcount = ic + 2 * P,
      *rdispl = ic + 3 * P;
  if (st == TFMM_OK)
    st = int_counts(P, count, width, scount, sdispl, err);
  if (st == TFMM_OK)
    st = int_counts(P, recv_count, width, rcount, rdispl, err);
  if (st == TFMM_OK) {
    *recv = malloc((total > 0 ? total : 1) * (size_t)width * sizeof **recv);
    if (*recv == NULL)
      st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu records received", total);
  }
  if (st == TFMM_OK)
    st =
        tfmm_domain_check(MPI_Alltoallv(send, scount, sdispl, MPI_DOUBLE, *recv,
                                        rcount, rdispl, MPI_DOUBLE, d->comm),
                          "MPI_Alltoallv", err);
  free(sc);
  free(ic);
  if (st != TFMM_OK) {
    free(*recv);
    *recv = NULL;
    return st;
  }
  *nrecv = total;
  return TFMM_OK;
}

tfmm_status tfmm_domain_allgather(tfmm_domain *d, const double *mine,
                                  size_t count, double **all, size_t *offset,
                                  tfmm_error *err) {
  const int P = d->size;
  *all = NULL;
  int64_t c = (int64_t)count;
  int64_t *counts = malloc((size_t)P * sizeof *counts);
  int *ic = malloc((size_t)P * 2 * sizeof *ic);
  if (counts == NULL || ic == NULL) {
    free(counts), free(ic);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for counts");
  }
  tfmm_status st = tfmm_domain_check(
      MPI_Allgather(&c, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, d->comm),
      "MPI_Allgather (counts)", err);
  /* Each rank's count in offset[r + 1], as MPI's ints (checked), then the
   * counts summed into offsets: offset[r] = those of the ranks before r. */
  for (int r = 0; st == TFMM_OK && r < P; r++)
    offset[r + 1] = (size_t)counts[r];
  if (st == TFMM_OK)
    st = int_counts(P, offset + 1, 1, ic, ic + P, err);
  offset[0] = 0;
  for (int r = 0; st == TFMM_OK && r < P; r++)
    offset[r + 1] += offset[r];
  if (st == TFMM_OK) {
    *all = malloc((offset[P] > 0 ? offset[P] : 1) * sizeof **all);
    if (*all == NULL)
      st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory to gather");
  }
  if (st == TFMM_OK)
    st = tfmm_domain_check(MPI_Allgatherv(mine, (int)count, MPI_DOUBLE, *all,
                                          ic, ic + P, MPI_DOUBLE, d->comm),
                           "MPI_Allgatherv", err);
  free(counts);
  free(ic);
  if (st != TFMM_OK) {
    free(*all);
    *all = NULL;
  }
  return st;
}

tfmm_status tfmm_domain_migrate_records(tfmm_domain *d, size_t n, int width,
                                        const double *records, const int *owner,
                                        double **out, size_t *nout,
                                        tfmm_error *err) {
  const int P = d->size;
  size_t *count = calloc((size_t)P * 3, sizeof *count);
  double *send = malloc((n > 0 ? n : 1) * (size_t)width * sizeof *send);
  if (count == NULL || send == NULL) {
    free(count), free(send);
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for %zu bodies",
                          n);
  }
  size_t *at = count + P, *recv_count = count + 2 * P;
  for (size_t i = 0; i < n; i++)
    count[owner[i]]++;
  for (int r = 1; r < P; r++)
    at[r] = at[r - 1] + count[r - 1];
  for (size_t i = 0; i < n; i++) {
    double *to = send + at[owner[i]]++ * (size_t)width;
    for (int k = 0; k < width; k++)
      to[k] = records[i * (size_t)width + k];
  }
  tfmm_status st =
      tfmm_domain_alltoall(d, send, count, width, out, recv_count, nout, err);
  free(count);
  free(send);
  return st;
}
