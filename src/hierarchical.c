#include "hierarchical.h"

#include "accuracy.h"
#include "pipeline/schedule.h"
#include "plan.h"

/* What the lists hold, for tfmm_stats. */
static void count_work(const tfmm_eval *e) {
  if (e->counted)
    return;
  const tfmm_octree *t = &e->w->tree;
  const tfmm_lists *l = &e->w->lists;
  tfmm_stats *s = e->stats;
  s->interactions = l->near_interactions;
  if (s->near_kernel_time > 0)
    s->near_rate = s->interactions / s->near_kernel_time;
  if (e->cfg->near_only)
    return;
  s->m2l = e->cfg->method == TFMM_METHOD_FMM
               ? (double)l->m2l.offset[l->m2l.ntargets]
               : 0;
  for (int64_t c = 0; c < t->ncells; c++) {
    const tfmm_cell *cell = &t->cells[c];
    s->m2p += (double)(cell->body_end - cell->body_begin) *
              (double)(l->m2p.offset[c + 1] - l->m2p.offset[c]);
  }
}

/* Whether this evaluation runs the gpu schedule (tfmm_config.schedule). */
int tfmm_hierarchical_gpu_schedule(const tfmm_config *cfg, const tfmm_gpu *gpu,
                                   size_t n) {
  tfmm_schedule_kind schedule;
  tfmm_device tree, far;
  tfmm_plan_stages(cfg, gpu != NULL, n, &schedule, &tree, &far);
  return schedule == TFMM_SCHEDULE_GPU;
}

/* The stages of this evaluation, as the plan lays them out: gpu, or
 * hybrid with the tree, and the far field, on the GPU or the CPU. */
static const tfmm_schedule *schedule_for(const tfmm_config *cfg,
                                         const tfmm_gpu *gpu, size_t n) {
  tfmm_schedule_kind schedule;
  tfmm_device tree, far;
  tfmm_plan_stages(cfg, gpu != NULL, n, &schedule, &tree, &far);
  if (schedule == TFMM_SCHEDULE_GPU)
    return &TFMM_STAGES_GPU;
  if (tree == TFMM_DEVICE_CPU)
    return &TFMM_STAGES_HYBRID;
  return far == TFMM_DEVICE_CPU ? &TFMM_STAGES_HYBRID_GPU_TREE
                                : &TFMM_STAGES_HYBRID_GPU_FAR;
}

static tfmm_status run(tfmm_eval *e, const tfmm_schedule *schedule) {
  const tfmm_config *cfg = e->cfg;
  tfmm_stats *stats = e->stats;
  const int near_gpu = e->gpu != NULL;
  /* cfg is the run's (internal units: its eps is relative to the
   * bodies), its kernel resolved by the planner. */
  tfmm_accuracy_resolve(cfg,
                        tfmm_plan_far_kernel(cfg, near_gpu, e->n, cfg->eps),
                        e->leaf_size, near_gpu, &e->set);
  stats->far_kernel = e->set.far_kernel;
  stats->theta = e->set.theta;
  stats->order = e->set.order;
  stats->precision = e->set.precision;
  stats->softening_separation = e->set.separation;
  stats->mac_epsilon = e->set.mac_epsilon;
  stats->schedule = TFMM_SCHEDULE_HYBRID; /* the gpu stages say otherwise */
  stats->lists_device = TFMM_DEVICE_CPU;
  tfmm_status st = tfmm_schedule_run(schedule, e);
  if (st == TFMM_OK)
    count_work(e);
  /* The tree and lists are rebuilt next time: release them now. */
  tfmm_workspace_clear(e->w);
  return st;
}

/* An evaluation of these inputs (host arrays unless the caller says). */
static tfmm_eval eval_of(const tfmm_config *cfg, int leaf_size, tfmm_gpu *gpu,
                         tfmm_workspace *w, size_t n, const double *pos,
                         const double *mass, const unsigned char *active,
                         double *acc, double *pot, tfmm_stats *stats,
                         tfmm_error *err) {
  const tfmm_eval e = {.cfg = cfg,
                       .leaf_size = leaf_size,
                       .gpu = gpu,
                       .n = n,
                       .pos = pos,
                       .mass = mass,
                       .active = active,
                       .acc = acc,
                       .pot = pot,
                       .w = w,
                       .stats = stats,
                       .err = err,
                       .measure_k = w->measure_k,
                       .measure_seed = w->measure_seed,
                       .measure_confidence = w->measure_confidence};
  return e;
}

tfmm_status tfmm_hierarchical_compute_device(
    const tfmm_config *cfg, int leaf_size, tfmm_gpu *gpu, tfmm_workspace *w,
    size_t n, const double *d_pos, const double *d_mass,
    const unsigned char *d_active, double *d_acc, double *d_pot,
    const tfmm_hierarchical_device_out *out, tfmm_stats *stats,
    tfmm_error *err) {
  if (!tfmm_hierarchical_gpu_schedule(cfg, gpu, n))
    return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                          "device-resident bodies: only the gpu schedule "
                          "keeps them on the device");
  tfmm_eval e = eval_of(cfg, leaf_size, gpu, w, n, d_pos, d_mass, d_active,
                        d_acc, d_pot, stats, err);
  e.on_device = 1;
  e.host_results = out->host_results;
  e.stream = out->stream;
  e.caller_G = out->caller_G;
  e.acc_exp = out->acc_exp;
  e.pot_exp = out->pot_exp;
  return run(&e, &TFMM_STAGES_GPU);
}

tfmm_status tfmm_hierarchical_compute(const tfmm_config *cfg, int leaf_size,
                                      tfmm_gpu *gpu, tfmm_workspace *w,
                                      size_t n, const double *pos,
                                      const double *mass,
                                      const unsigned char *active, double *acc,
                                      double *pot, tfmm_stats *stats,
                                      tfmm_error *err) {
  return tfmm_hierarchical_compute_with(schedule_for(cfg, gpu, n), cfg,
                                        leaf_size, gpu, w, n, pos, mass, active,
                                        acc, pot, stats, err);
}

tfmm_status tfmm_hierarchical_compute_with(
    const tfmm_schedule *schedule, const tfmm_config *cfg, int leaf_size,
    tfmm_gpu *gpu, tfmm_workspace *w, size_t n, const double *pos,
    const double *mass, const unsigned char *active, double *acc, double *pot,
    tfmm_stats *stats, tfmm_error *err) {
  tfmm_eval e = eval_of(cfg, leaf_size, gpu, w, n, pos, mass, active, acc, pot,
                        stats, err);
  return run(&e, schedule);
}
