/* The domain layer: a solver over the ranks of a communicator (tilefmm.h,
 * "Several processes: MPI"), above the solver. tfmm_solver_create_mpi
 * gives the caller a solver handle over a tfmm_domain (solver_over.h): the
 * handle's entry points come here, and the domain evaluates with a plain
 * solver of its own on each rank (d->local) through the public entry
 * points. Here: the handle's calls, the collective agreement on failures,
 * the reductions the simulation needs; and one evaluation as its stages
 * (evaluate.c):
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
 * Sizes and times of the stages go to tfmm_dist_stats. theta and order
 * are the planner's (planner.h) over the ranks, run by evaluate.c with
 * these stages as its evaluation, the error measured over every rank's
 * bodies (measure_ranks.c). */
/* mpi.h before tilefmm.h: it declares (and exports) the calls with
 * MPI_Comm only then. */
#include <mpi.h>

#include "domain/domain.h"

#include "config.h"
#include "domain/evaluate.h"
#include "domain/exchange.h"
#include "domain/state.h"
#include "plan.h"
#include "solver_over.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tfmm_has_mpi(void) { return 1; }

/* The handle's calls (solver_over.h); ctx is the tfmm_domain. */
static void domain_destroy(void *ctx) {
  tfmm_domain *d = ctx;
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

static int domain_ranks(const void *ctx) {
  return tfmm_domain_size((const tfmm_domain *)ctx);
}

static int domain_rank(const void *ctx) {
  return tfmm_domain_rank((const tfmm_domain *)ctx);
}

/* NULL (the handle's own, unused) when the domain was never made. */
static tfmm_choice *domain_choice(void *ctx) {
  tfmm_domain *d = ctx;
  return d != NULL ? &d->plan : NULL;
}

static tfmm_status domain_open(void *ctx, const tfmm_config *cfg,
                               tfmm_device *device, tfmm_error *err);

static tfmm_status domain_compute(void *ctx, size_t n, const double *pos,
                                  const double *mass,
                                  const unsigned char *active, double *acc,
                                  double *pot, tfmm_stats *stats,
                                  tfmm_dist_stats *dist, tfmm_error *err) {
  tfmm_domain *d = ctx;
  const tfmm_status st =
      tfmm_domain_compute(d, n, pos, mass, active, acc, pot, stats, err);
  *dist = d->stats;
  return st;
}

static const tfmm_solver_over DOMAIN_CALLS = {
    .open = domain_open,
    .compute = domain_compute,
    .choice = domain_choice,
    .ranks = domain_ranks,
    .rank = domain_rank,
    .destroy = domain_destroy,
};

tfmm_domain *tfmm_domain_of(const tfmm_solver *s) {
  return tfmm_solver_over_of(s, &DOMAIN_CALLS);
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

/* Collective: what the planner over the ranks goes by, alike on every
 * rank: the near field on the GPU when every rank's solver runs it there
 * (the planner's first tier of rows is the GPU's: planner.c), and the
 * leaf size the configuration gives or, automatic, the first one it
 * gives on that device (tfmm_plan_leaf). */
static tfmm_status agree_device(tfmm_domain *d, tfmm_error *err) {
  int gpu = tfmm_method_is_tree(d->cfg.method) &&
            tfmm_solver_device(d->local) == TFMM_DEVICE_GPU;
  TFMM_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &gpu, 1, MPI_INT, MPI_MIN, d->comm),
               "MPI_Allreduce (devices)", err);
  d->near_gpu = gpu;
  d->leaf = tfmm_plan_leaf(&d->cfg, gpu ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU);
  return TFMM_OK;
}

/* Collective: the communicator duplicated, cfg checked and this rank's
 * solver made, every rank agreeing on the outcome. */
static tfmm_status domain_open(void *ctx, const tfmm_config *cfg,
                               tfmm_device *device, tfmm_error *err) {
  tfmm_domain *d = ctx;
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready)
    return tfmm_error_set(err, TFMM_ERR_MPI,
                          "MPI is not initialised (call MPI_Init first)");
  if (d == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory");
  d->cfg = *cfg;
  tfmm_status st =
      tfmm_domain_check(MPI_Comm_dup(d->caller, &d->comm), "MPI_Comm_dup", err);
  if (st != TFMM_OK)
    return st;
  MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(d->comm, &d->rank);
  MPI_Comm_size(d->comm, &d->size);
  st = tfmm_config_check(cfg, err);
  /* measure always and verify: measured over the ranks by the domain
   * (measure_ranks.c), not by this rank's solver on its part. */
  /* The locally essential trees ship Newton's multipoles (let.c,
   * remote.c): the softened far field is one process's. */
  if (st == TFMM_OK && cfg->far_kernel == TFMM_FAR_KERNEL_SOFTENED &&
      tfmm_method_is_tree(cfg->method))
    st = tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "far_kernel softened over MPI ranks: the locally "
                        "essential trees carry Newton's multipoles; use "
                        "far_kernel newton or auto (newton over ranks)");
  d->split = calloc((size_t)d->size + 1, sizeof *d->split);
  d->cost = calloc((size_t)d->size, sizeof *d->cost);
  if (st == TFMM_OK && (d->split == NULL || d->cost == NULL))
    st = tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory");
  if (st == TFMM_OK) {
    tfmm_config mine = *cfg;
    mine.gpu_id = rank_gpu(d->comm, cfg);
    d->gpu_id = mine.gpu_id;
    /* No planner of its own: a planner on one rank's part would measure
     * against that part alone. Each evaluation takes the setting the
     * domain's planner chose over the ranks (tfmm_solver_set_setting,
     * evaluate.c), as the locally essential trees are cut. */
    mine.measure = TFMM_MEASURE_OFF;
    mine.verify = 0; /* measured and judged over the ranks */
    mine.far_kernel = TFMM_FAR_KERNEL_NEWTON;
    st = tfmm_solver_create(&d->local, &mine);
    if (st != TFMM_OK)
      tfmm_error_set(err, st, "%s",
                     d->local != NULL ? tfmm_solver_message(d->local)
                                      : "no memory");
    else
      *device = tfmm_solver_device(d->local);
  }
  st = tfmm_domain_agree(d, st, err);
  /* auto is Newton's over ranks (above): the planner's rows are its. */
  if (tfmm_method_is_tree(d->cfg.method))
    d->cfg.far_kernel = TFMM_FAR_KERNEL_NEWTON;
  return st == TFMM_OK ? agree_device(d, err) : st;
}

tfmm_status tfmm_solver_create_mpi(tfmm_solver **out, const tfmm_config *cfg,
                                   MPI_Comm comm) {
  if (out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  /* The handle the caller holds checks the calls and hands them here; the
   * solver of this rank's part (d->local) evaluates. */
  tfmm_domain *d = calloc(1, sizeof *d);
  if (d != NULL) {
    d->caller = comm;
    d->comm = MPI_COMM_NULL;
  }
  return tfmm_solver_create_over(out, cfg, &DOMAIN_CALLS, d);
}
