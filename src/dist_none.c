/* A build without MPI: no solver has a communicator, so every tfmm_dist is
 * NULL and the calls of dist/dist.h are those of one process. */
#include "dist/dist.h"

#include <stdlib.h>
#include <string.h>

int tfmm_has_mpi(void) { return 0; }

void tfmm_dist_destroy(tfmm_dist *d) { (void)d; }

tfmm_status tfmm_dist_compute(tfmm_solver *s, size_t n, const double *pos,
                              const double *mass, const unsigned char *active,
                              double *acc, double *pot) {
  (void)s, (void)n, (void)pos, (void)mass, (void)active, (void)acc, (void)pot;
  return TFMM_ERR_UNSUPPORTED;
}

int tfmm_dist_size(const tfmm_dist *d) { return (void)d, 1; }
int tfmm_dist_rank(const tfmm_dist *d) { return (void)d, 0; }

tfmm_status tfmm_dist_agree(tfmm_dist *d, tfmm_status st, tfmm_error *err) {
  (void)d, (void)err;
  return st;
}

tfmm_status tfmm_dist_sum(tfmm_dist *d, double *v, int count, tfmm_error *err) {
  (void)d, (void)v, (void)count, (void)err;
  return TFMM_OK;
}

tfmm_status tfmm_dist_sum_i64(tfmm_dist *d, int64_t *v, int count,
                              tfmm_error *err) {
  (void)d, (void)v, (void)count, (void)err;
  return TFMM_OK;
}

tfmm_status tfmm_dist_max(tfmm_dist *d, double *v, int count, tfmm_error *err) {
  (void)d, (void)v, (void)count, (void)err;
  return TFMM_OK;
}

tfmm_status tfmm_dist_owners(tfmm_dist *d, size_t n, const double *pos,
                             int *owner, tfmm_error *err) {
  (void)d, (void)pos, (void)err;
  memset(owner, 0, n * sizeof *owner);
  return TFMM_OK;
}

tfmm_status tfmm_dist_migrate_records(tfmm_dist *d, size_t n, int width,
                                      const double *records, const int *owner,
                                      double **out, size_t *nout,
                                      tfmm_error *err) {
  (void)d, (void)owner;
  *out = malloc((n > 0 ? n : 1) * (size_t)width * sizeof **out);
  if (*out == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for %zu bodies",
                          n);
  memcpy(*out, records, n * (size_t)width * sizeof **out);
  *nout = n;
  return TFMM_OK;
}
