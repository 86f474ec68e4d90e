/* A build without MPI: no solver has a domain, so every tfmm_domain is
 * NULL and the calls of domain.h are those of one process. */
#include "domain/domain.h"

#include <stdlib.h>
#include <string.h>

int tfmm_has_mpi(void) { return 0; }

tfmm_domain *tfmm_domain_of(const tfmm_solver *s) { return (void)s, NULL; }

int tfmm_domain_size(const tfmm_domain *d) { return (void)d, 1; }
int tfmm_domain_rank(const tfmm_domain *d) { return (void)d, 0; }

tfmm_status tfmm_domain_agree(tfmm_domain *d, tfmm_status st, tfmm_error *err) {
  (void)d, (void)err;
  return st;
}

tfmm_status tfmm_domain_sum(tfmm_domain *d, double *v, int count,
                            tfmm_error *err) {
  (void)d, (void)v, (void)count, (void)err;
  return TFMM_OK;
}

tfmm_status tfmm_domain_sum_i64(tfmm_domain *d, int64_t *v, int count,
                                tfmm_error *err) {
  (void)d, (void)v, (void)count, (void)err;
  return TFMM_OK;
}

tfmm_status tfmm_domain_max(tfmm_domain *d, double *v, int count,
                            tfmm_error *err) {
  (void)d, (void)v, (void)count, (void)err;
  return TFMM_OK;
}

tfmm_status tfmm_domain_owners(tfmm_domain *d, size_t n, const double *pos,
                               int *owner, tfmm_error *err) {
  (void)d, (void)pos, (void)err;
  memset(owner, 0, n * sizeof *owner);
  return TFMM_OK;
}

tfmm_status tfmm_domain_migrate_records(tfmm_domain *d, size_t n, int width,
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
