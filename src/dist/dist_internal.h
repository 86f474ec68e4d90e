/* The insides of a solver over several processes, shared by the files of
 * src/dist/ (built with MPI only): dist.c (the handle, the reductions and
 * the evaluation's stages in order), decompose.c (the key split),
 * exchange.c (moving arrays between ranks), let.c (the locally essential
 * trees sent) and remote.c (the multipoles received, evaluated). */
#ifndef TFMM_DIST_INTERNAL_H
#define TFMM_DIST_INTERNAL_H

#include <mpi.h>

#include "dist/dist.h"
#include "farfield/expansion.h"
#include "tree/octree.h"
#include "units.h"

struct tfmm_dist {
  MPI_Comm comm; /* the caller's, duplicated */
  int rank, size;
  tfmm_solver *local; /* this rank's solver: its bodies and those received */
  /* The split of the last evaluation: rank r owns the keys in
   * [split[r], split[r + 1]) of the cube (lowest corner, side); split has
   * size + 1 entries, split[0] = 0 and split[size] = UINT64_MAX. */
  uint64_t *split;
  double cube[4];
  int have_split;
  /* Each rank's measured cost per body in the last evaluation (seconds of
   * its local and remote stages over the bodies it owned): the weights of
   * the next split. */
  double *cost;
  tfmm_dist_stats stats;
};

/* One MPI call checked: an error code becomes TFMM_ERR_MPI naming it. */
tfmm_status tfmm_dist_check(int rc, const char *what, tfmm_error *err);
#define TFMM_MPI_TRY(call, what, err)                                          \
  do {                                                                         \
    tfmm_status mpi_st_ = tfmm_dist_check((call), (what), (err));              \
    if (mpi_st_ != TFMM_OK)                                                    \
      return mpi_st_;                                                          \
  } while (0)

/* ---- decompose.c ---- */

/* The common cube of every rank's bodies (lowest corner, side) and the
 * internal units of the multipoles sent between ranks (units.h), from
 * bounds reduced over the ranks; *total: the bodies of all ranks. */
tfmm_status tfmm_dist_bounds(tfmm_dist *d, size_t n, const double *pos,
                             const double *mass, double box_size,
                             double cube[4], tfmm_units *units, size_t *total,
                             tfmm_error *err);

/* d->split for the keys of this rank's n bodies: contiguous key ranges of
 * equal cost, each body weighing its last owner's cost per body (1 for
 * all before the first measurement). */
tfmm_status tfmm_dist_split(tfmm_dist *d, size_t n, const uint64_t *keys,
                            tfmm_error *err);

/* The owner of a key under d->split. */
int tfmm_dist_owner_of(const tfmm_dist *d, uint64_t key);

/* ---- exchange.c ---- */

/* Sends count[r] records of width doubles to each rank r (send: grouped
 * by destination in rank order) and receives what each rank sends here:
 * *recv (malloc'd) holds them grouped by source in rank order, recv_count
 * (size entries) how many from each, *nrecv the total. */
tfmm_status tfmm_dist_alltoall(tfmm_dist *d, const double *send,
                               const size_t *count, int width, double **recv,
                               size_t *recv_count, size_t *nrecv,
                               tfmm_error *err);

/* Every rank's count doubles gathered: *all (malloc'd) holds them in rank
 * order, offset (size + 1 entries) where each rank's begin. */
tfmm_status tfmm_dist_allgather(tfmm_dist *d, const double *mine, size_t count,
                                double **all, size_t *offset, tfmm_error *err);

/* ---- let.c ---- */

/* What the locally essential trees need of the evaluation. */
typedef struct tfmm_let_params {
  double theta;      /* the evaluation's opening angle, for the receiver's
                        M2L: r_A + r_B < theta d */
  double send_theta; /* a cell goes as a multipole when its radius is under
                        send_theta times its distance to every body of the
                        destination; theta / 2, leaving the receiver's cells
                        the other half of theta d, so that a multipole
                        reaches a few cells of the receiver by M2L rather
                        than many leaves by M2P */
  double separation; /* and when no body of the destination comes closer
                        than its radius plus this (the softening's reach);
                        internal units */
  int order;         /* p of the multipoles */
  int multipoles;    /* 0: every body goes as a body (direct, reference) */
} tfmm_let_params;

/* A rank's bodies as boxes (lowest and highest corner: 6 doubles each,
 * internal units): the tight boxes of the bodies of the cells of t cut at
 * about t->n / pieces bodies each. *out (malloc'd), *count boxes. */
enum { TFMM_LET_BOX_WIDTH = 6 };
tfmm_status tfmm_let_domain(const tfmm_octree *t, size_t pieces, double **out,
                            size_t *count, tfmm_error *err);

/* A multipole sent: centre (3), radius, whether it is a root of the trees
 * sent, its children (count, then 8 record indices, -1 past the count:
 * among the records its rank sent here), then the expansion. A cell
 * without children was far from all of the destination's bodies. */
enum {
  TFMM_LET_RADIUS = 3,
  TFMM_LET_ROOT = 4,
  TFMM_LET_NCHILD = 5,
  TFMM_LET_CHILD = 6,
  TFMM_LET_HEADER = 14
};
static inline int tfmm_let_cell_width(int order);

/* Body records sent: x, y, z, m in the caller's units. */
enum { TFMM_LET_BODY_WIDTH = 4 };

/* The locally essential tree of t (multipoles M of order p, internal
 * units) for one destination described by its boxes: cells into *cells
 * (tfmm_let_cell_width doubles each), bodies (from the caller's pos and
 * mass in the tree's sorted order: pos_sorted, mass_sorted) into *bodies.
 * Both are growable arrays the caller frees. */
typedef struct tfmm_let_buffer {
  double *v;
  size_t count, capacity; /* records */
} tfmm_let_buffer;
tfmm_status tfmm_let_build(const tfmm_octree *t, const double *M,
                           const tfmm_let_params *lp, const double *boxes,
                           size_t nboxes, const double *pos_sorted,
                           const double *mass_sorted, tfmm_let_buffer *cells,
                           tfmm_let_buffer *bodies, tfmm_error *err);

/* ---- remote.c ---- */

/* The field of ncells received multipoles (tfmm_let_cell_width doubles
 * each, their child links as indices among all ncells) at the bodies of t
 * (internal units, sorted order): through M2L into the cells they are far
 * from, and M2P at the leaves they are not; then L2L and L2P. phi and grad
 * (t->n and 3 t->n, sorted order) are overwritten: Phi and grad Phi of
 * expansion.h. */
tfmm_status tfmm_remote_field(const tfmm_octree *t, const double *cells,
                              size_t ncells, const tfmm_let_params *lp,
                              double *phi, double *grad, tfmm_error *err);

static inline int tfmm_let_cell_width(int order) {
  return TFMM_LET_HEADER + (int)tfmm_expansion_size(order);
}

#endif
