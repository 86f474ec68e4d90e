#include "nearfield/near_frame.h"

#include "team.h"

#include <math.h>

/* The squared smallest separation of n bodies at pos (3n), +inf for one. */
static double spacing2(const double *pos, int64_t n) {
  double least = INFINITY;
  for (int64_t i = 0; i < n; i++) {
    const double *a = pos + 3 * i;
    for (int64_t j = i + 1; j < n; j++) {
      const double *b = pos + 3 * j;
      const double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
      const double d2 = dx * dx + dy * dy + dz * dz;
      least = d2 < least ? d2 : least;
    }
  }
  return least;
}

/* The frame of leaf c; its scale only with spacing set (the second pass). */
static void frame_of(const tfmm_octree *t, const tfmm_cell *c, double eps,
                     int spacing, tfmm_near_frame *f) {
  const double *pos = t->pos + 3 * c->body_begin;
  const int64_t n = c->body_end - c->body_begin;
  f->reach = 0;
  for (int d = 0; d < 3; d++) {
    double lo = pos[d], hi = pos[d];
    for (int64_t k = 1; k < n; k++) {
      lo = fmin(lo, pos[3 * k + d]);
      hi = fmax(hi, pos[3 * k + d]);
    }
    f->origin[d] = tfmm_near_frame_origin(lo, hi);
    f->reach = fmax(f->reach, tfmm_near_frame_reach(lo, hi, f->origin[d]));
  }
  f->scale = spacing && tfmm_near_frame_needs_spacing(f->reach, eps)
                 ? tfmm_near_frame_scale(eps, spacing2(pos, n))
                 : eps;
}

int64_t tfmm_near_frames(const tfmm_octree *t, const tfmm_csr *near, double eps,
                         tfmm_near_frame *frame, unsigned char *exact) {
  int64_t count = 0;
  const int team = tfmm_team(t->nleaves, TFMM_GRAIN_LEAVES);
#pragma omp parallel num_threads(team)
  {
#pragma omp for schedule(dynamic, 64)
    for (int64_t k = 0; k < t->nleaves; k++)
      frame_of(t, &t->cells[t->leaves[k]], eps, exact != NULL,
               &frame[t->leaves[k]]);
#pragma omp for schedule(dynamic, 64) reduction(+ : count)
    for (int64_t k = 0; k < (exact != NULL ? t->nleaves : 0); k++) {
      const tfmm_near_frame *f = &frame[t->leaves[k]];
      double demand = 0; /* its list's exact leaves' (itself included) */
      for (int64_t e = near->offset[k]; e < near->offset[k + 1]; e++) {
        const tfmm_near_frame *g = &frame[near->index[e]];
        if (tfmm_near_frame_exact(g->scale, g->reach))
          demand = fmax(demand, tfmm_near_frame_demand(f->origin, f->reach,
                                                       g->origin, g->reach));
      }
      exact[k] = (unsigned char)(tfmm_near_frame_exact(f->scale, f->reach) ||
                                 tfmm_near_frame_exact(f->scale, demand));
      count += exact[k];
    }
  }
  return count;
}
