#include "hierarchical.h"

#include "team.h"

#include "accuracy.h"

#include "farfield/expansion.h"
#include "farfield/passes.h"
#include "nearfield/p2p_cpu.h"
#include "nearfield/p2p_gpu.h"
#include "tree/accel_estimate.h"
#include "tree/coincident.h"
#include "tree/lists.h"
#include "tree/octree.h"

#include <stdlib.h>
#include <string.h>

/* Everything one evaluation allocates, released together. */
typedef struct workspace {
  tfmm_resolved set; /* theta, order and separation of this evaluation */
  double *theta_src; /* per-cell theta of the mass criterion, or NULL */
  double *accel;     /* per-cell |a| of the error criterion, or NULL */
  tfmm_octree tree;
  tfmm_lists lists;
  double *M, *L;           /* expansions, ncells * size */
  double *far_phi, *far_g; /* Phi and grad Phi, sorted order */
  double *near_a, *near_p; /* near-field acceleration and potential */
} workspace;

static void workspace_free(workspace *w) {
  tfmm_octree_free(&w->tree);
  tfmm_lists_free(&w->lists);
  free(w->theta_src);
  free(w->accel);
  free(w->M);
  free(w->L);
  free(w->far_phi);
  free(w->far_g);
  free(w->near_a);
  free(w->near_p);
}

static void tree_stats(const tfmm_octree *t, tfmm_stats *s) {
  s->tree_depth = t->depth;
  s->tree_cells = t->ncells;
  s->tree_leaves = t->nleaves;
  tfmm_octree_occupancy(t, &s->leaf_min, &s->leaf_mean, &s->leaf_max);
  s->tree_time.keys = t->times.keys;
  s->tree_time.sort = t->times.sort;
  s->tree_time.permute = t->times.permute;
  s->tree_time.build = t->times.build;
  s->tree_time.moments = t->times.moments;
}

static int allocate(workspace *w, size_t n, int p, int fmm, int far,
                    int cpu_near) {
  size_t cells = (size_t)w->tree.ncells, size = tfmm_expansion_size(p);
  w->M = far ? malloc(cells * size * sizeof *w->M) : NULL;
  w->L = far && fmm ? malloc(cells * size * sizeof *w->L) : NULL;
  w->far_phi = calloc(n, sizeof *w->far_phi);
  w->far_g = calloc(3 * n, sizeof *w->far_g);
  w->near_a = cpu_near ? malloc(3 * n * sizeof *w->near_a) : NULL;
  w->near_p = cpu_near ? malloc(n * sizeof *w->near_p) : NULL;
  return (w->M || !far) && (w->L || !far || !fmm) && w->far_phi && w->far_g &&
         (!cpu_near || (w->near_a && w->near_p));
}

/* a = G (grad Phi_far + a_near), phi = G (phi_near - Phi_far), back in the
 * input order. The near field is in w->near_a and near_p (CPU) or in
 * gpu_out, 4 values per body, doubles if gpu_double else floats (GPU). */
static void combine(const workspace *w, const void *gpu_out, int gpu_double,
                    double G, double *acc, double *pot) {
  const tfmm_octree *t = &w->tree;
  const float *g32 = gpu_double ? NULL : gpu_out;
  const double *g64 = gpu_double ? gpu_out : NULL;
  const int team = tfmm_team(t->n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t k = 0; k < (int64_t)t->n; k++) {
    int64_t i = t->order[k];
    double a[4];
    for (int d = 0; d < 4; d++)
      a[d] = g32 != NULL   ? g32[4 * k + d]
             : g64 != NULL ? g64[4 * k + d]
             : d < 3       ? w->near_a[3 * k + d]
                           : w->near_p[k];
    for (int d = 0; d < 3; d++)
      acc[3 * i + d] = G * (w->far_g[3 * k + d] + a[d]);
    if (pot != NULL)
      pot[i] = G * (a[3] - w->far_phi[k]);
  }
}

/* Targets of at most this many bodies take accepted sources by M2P rather
 * than M2L. Measured on these operators (one core): M2L 0.4 us at p = 4 and
 * 2.1 us at p = 8, M2P 0.28-0.30 us per body, L2P 0.05-0.4 us per body, so
 * M2P is cheaper only for a single body, where it is also more accurate.
 * (Taking every target of up to (p + 1)^2 bodies by M2P cut the 99th
 * percentile error of a Plummer sphere by 2-30x but cost 5-20x the time.) */
static int64_t m2p_bodies(int p) {
  (void)p;
  return 1;
}

/* The far field on the CPU: upward pass, M2L, downward pass, M2P. */
static void far_field(const tfmm_config *cfg, workspace *w, tfmm_stats *s) {
  const int fmm = cfg->method == TFMM_METHOD_FMM, p = w->set.order;
  const tfmm_octree *t = &w->tree;
  double t0 = tfmm_wtime();
  tfmm_upward_pass(t, p, w->M);
  double t1 = tfmm_wtime();
  if (fmm)
    tfmm_m2l_pass(t, &w->lists.m2l, p, w->M, w->L);
  double t2 = tfmm_wtime();
  if (fmm)
    tfmm_downward_pass(t, p, w->L, w->far_phi, w->far_g);
  double t3 = tfmm_wtime();
  tfmm_m2p_pass(t, &w->lists.m2p, p, w->M, w->far_phi, w->far_g);
  double t4 = tfmm_wtime();
  s->time[TFMM_PHASE_UPWARD] = t1 - t0;
  s->time[TFMM_PHASE_FAR] = (t2 - t1) + (t4 - t3); /* M2P counts as far */
  s->time[TFMM_PHASE_DOWNWARD] = t3 - t2;
}

/* Seconds during which [a0, a1] and [b0, b1] overlap. */
static double overlap(double a0, double a1, double b0, double b1) {
  double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
  return hi > lo ? hi - lo : 0;
}

/* The near field: launched on the GPU before the far field and waited for
 * after it, or on the CPU after it. */
static tfmm_status near_and_far(const tfmm_config *cfg, tfmm_gpu *gpu,
                                workspace *w, const void **gpu_out,
                                int potential, tfmm_stats *s, tfmm_error *err) {
  const tfmm_octree *t = &w->tree;
  tfmm_p2p_gpu_run run;
  tfmm_status st = TFMM_OK;
  const tfmm_pair_params pair = {cfg->softening, cfg->eps, w->set.precision};
  double t0 = tfmm_wtime();
  if (gpu != NULL) {
    st = tfmm_p2p_gpu_launch(gpu, t, &w->lists.near, w->lists.near_interactions,
                             &pair, potential, &run, err);
    if (st != TFMM_OK)
      return st;
    s->time[TFMM_PHASE_PREPARE] = run.launched - t0;
  }
  double f0 = tfmm_wtime();
  if (!cfg->near_only)
    far_field(cfg, w, s);
  double f1 = tfmm_wtime();
  s->far_time = f1 - f0;
  if (gpu != NULL) {
    tfmm_gpu_times g;
    st = tfmm_p2p_gpu_wait(gpu, &run, &g, err);
    if (st != TFMM_OK)
      return st;
    *gpu_out = run.host.out;
    s->time[TFMM_PHASE_UPLOAD] = g.upload;
    s->time[TFMM_PHASE_NEAR] = g.kernel;
    s->time[TFMM_PHASE_DOWNLOAD] = g.download;
    s->near_time = g.upload + g.kernel + g.download;
    s->near_kernel_time = g.kernel;
    s->overlap = overlap(f0, f1, run.launched, run.launched + s->near_time);
  } else {
    double n0 = tfmm_wtime();
    st = tfmm_p2p_cpu(t, &w->lists.near, &pair, w->near_a, w->near_p, err);
    s->time[TFMM_PHASE_NEAR] = s->near_time = s->near_kernel_time =
        tfmm_wtime() - n0;
  }
  return st;
}

static tfmm_status evaluate(const tfmm_config *cfg, tfmm_gpu *gpu, workspace *w,
                            const void **gpu_out, int potential, tfmm_stats *s,
                            tfmm_error *err) {
  const int fmm = cfg->method == TFMM_METHOD_FMM, p = w->set.order;
  const tfmm_octree *t = &w->tree;
  double t0 = tfmm_wtime();
  if (cfg->mac == TFMM_MAC_MASS &&
      (w->theta_src = tfmm_mac_mass_thetas(t, w->set.theta, p)) == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the opening criterion");
  if (cfg->mac == TFMM_MAC_ERROR &&
      (w->accel = tfmm_accel_estimate(t, cfg->eps)) == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the opening criterion");
  const double soft_term =
      cfg->mac == TFMM_MAC_ERROR && cfg->softening == TFMM_SOFTENING_PLUMMER
          ? 1.5 * cfg->eps * cfg->eps
          : 0;
  const tfmm_mac mac = {w->set.theta, w->set.separation,  w->theta_src,
                        w->accel,     w->set.mac_epsilon, p,
                        soft_term};
  tfmm_status st =
      fmm ? tfmm_lists_build_fmm(t, &mac, m2p_bodies(p), &w->lists, err)
          : tfmm_lists_build_bh(t, &mac, &w->lists, err);
  if (st != TFMM_OK)
    return st;
  if (!allocate(w, t->n, p, fmm, !cfg->near_only, gpu == NULL))
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the expansions of %lld cells",
                          (long long)t->ncells);
  s->time[TFMM_PHASE_LISTS] = tfmm_wtime() - t0;
  st = near_and_far(cfg, gpu, w, gpu_out, potential, s, err);
  s->interactions = w->lists.near_interactions;
  if (s->near_kernel_time > 0)
    s->near_rate = s->interactions / s->near_kernel_time;
  if (!cfg->near_only) {
    s->m2l = fmm ? (double)w->lists.m2l.offset[w->lists.m2l.ntargets] : 0;
    for (int64_t c = 0; c < t->ncells; c++) {
      const tfmm_cell *cell = &t->cells[c];
      s->m2p += (double)(cell->body_end - cell->body_begin) *
                (double)(w->lists.m2p.offset[c + 1] - w->lists.m2p.offset[c]);
    }
  }
  return st;
}

/* With eps = 0 a pair at one point has an infinite force: refuse it,
 * naming both bodies (found from the tree's sorted keys). */
static tfmm_status refuse_coincident(const tfmm_octree *t, tfmm_error *err) {
  int64_t i = 0, j = 0;
  int found = tfmm_octree_find_coincident(t, &i, &j);
  if (found < 0)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the coincidence check");
  if (found)
    return tfmm_error_set(err, TFMM_ERR_COINCIDENT,
                          "bodies %lld and %lld are at one point and eps = 0: "
                          "their force is infinite (set eps > 0)",
                          (long long)i, (long long)j);
  return TFMM_OK;
}

tfmm_status tfmm_hierarchical_compute(const tfmm_config *cfg, int leaf_size,
                                      tfmm_gpu *gpu, size_t n,
                                      const double *pos, const double *mass,
                                      double *acc, double *pot,
                                      tfmm_stats *stats, tfmm_error *err) {
  workspace w;
  memset(&w, 0, sizeof w);
  const void *gpu_out = NULL;
  tfmm_accuracy_resolve(cfg, leaf_size, gpu != NULL, &w.set);
  stats->theta = w.set.theta;
  stats->order = w.set.order;
  stats->precision = w.set.precision;
  stats->softening_separation = w.set.separation;
  stats->mac_epsilon = w.set.mac_epsilon;
  double t0 = tfmm_wtime();
  tfmm_status st =
      tfmm_octree_build(&w.tree, n, pos, mass, leaf_size, cfg->max_depth, err);
  stats->leaf_size = leaf_size;
  stats->near_device = gpu != NULL ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
  stats->time[TFMM_PHASE_TREE] = tfmm_wtime() - t0;
  if (st == TFMM_OK &&
      tfmm_eps_vanishes(cfg->eps, w.set.precision == TFMM_PRECISION_SINGLE))
    st = refuse_coincident(&w.tree, err);
  if (st == TFMM_OK) {
    tree_stats(&w.tree, stats);
    st = evaluate(cfg, gpu, &w, &gpu_out, pot != NULL, stats, err);
  }
  if (st == TFMM_OK) {
    double t1 = tfmm_wtime();
    combine(&w, gpu_out, w.set.precision == TFMM_PRECISION_DOUBLE, cfg->G, acc,
            pot);
    stats->time[TFMM_PHASE_FINISH] = tfmm_wtime() - t1;
  }
  workspace_free(&w);
  return st;
}
