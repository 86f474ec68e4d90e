/* tilefmm run: a simulation from initial conditions (or a checkpoint) to
 * the end step, diagnostics, snapshots and checkpoints. The simulation is
 * the library's (tfmm_sim: the bodies, the kick-drift-kick steps, the
 * state a restart needs); this file is its face: the run directory, the
 * cadence of the outputs, the terminal and the signals. */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"
#include "body_input.h"
#include "cli.h"
#include "dist_report.h"
#include "mpi_cli.h"
#include "output_list.h"
#include "run_describe.h"
#include "run_dir.h"
#include "run_limits.h"
#include "run_options.h"
#include "run_plots.h"
#include "run_ranks.h"
#include "run_report.h"
#include "run_state.h"
#include "run_stop.h"
#include "snapshot.h"
#include "snapshot_writer.h"
#include "solver_cli.h"

#include "tilefmm.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything one run holds, released by run_free. Under mpirun every rank
 * holds one and takes the same steps in the same order (mpi_cli.h): what
 * only rank 0 does (files, the terminal) is agreed on before anything
 * depends on it. */
typedef struct run {
  run_options ro;
  run_state st; /* what the run starts from, until sim holds it */
  tfmm_sim *sim;
  snapshot_attr *attrs;
  size_t nattrs;
  run_report report;
  int report_open;
  run_times last_times; /* of the latest step, for a row written late */
  int64_t end;
  double time_initial; /* of the initial conditions (st's, kept) */
  const char *device;  /* "cpu" or "gpu": where the forces run */
  char where[64];      /* the device, and the ranks under mpirun */
  size_t bodies;       /* of every rank */
  run_dir dir;
  int started;            /* step 0 is done (or this is a restart) */
  snapshot_writer writer; /* the snapshot written while the steps go on */
  /* Individual steps: the force evaluations, body updates and bodies
   * that asked for less than dt_min, over this run's steps. */
  int64_t evaluations, updates, short_steps;
  int64_t first_sync; /* the step this run started from */
  int plan_told;      /* the planner's first choice here is printed */
  /* With individual steps, the diagnostics of the last synchronisation
   * point when its row was not written: a stop mid-way through the next
   * block writes it before its checkpoint (a restart continues the rows
   * from the checkpoint's step). */
  struct {
    int64_t step; /* -1: none kept */
    double time, error;
    tfmm_diagnostics d;
  } sync;
  int mid_way;      /* stopped mid-way through a block of individual steps */
  output_list list; /* --output-times: the snapshots' times, or n 0 */
} run;

static void run_free(run *r) {
  snapshot_writer_finish(&r->writer);
  if (r->report_open)
    run_report_abort(&r->report);
  tfmm_sim_destroy(r->sim);
  run_options_free_attrs(r->attrs, r->nattrs);
  output_list_free(&r->list);
  run_state_free(&r->st);
  run_dir_release(&r->dir);
  run_options_free(&r->ro);
}

/* A step of the run: the fixed step, or with individual steps the longest
 * (a synchronisation point at its end). */
static double run_step_length(const run_options *o) {
  return o->eta > 0 && o->dt_max > 0 ? o->dt_max : o->dt;
}

/* The multiples of every (> 0) from the start that time t has reached: an
 * output by time is due at the first step whose count exceeds the
 * previous step's. A time within 1e-9 of a multiple counts as on it. */
static int64_t multiples_reached(const run *r, double t, double every) {
  return (int64_t)floor((t - r->time_initial) / every + 1e-9);
}

/* Whether an output by time (every > 0) is due at the current step, and
 * its number. */
static int due_by_time(const run *r, double every, int64_t *k) {
  const double t = tfmm_sim_time(r->sim);
  *k = multiples_reached(r, t, every);
  return tfmm_sim_syncs(r->sim) == 0 ||
         *k > multiples_reached(r, t - run_step_length(&r->ro), every);
}

static char *out_path(const run *r, const char *fmt, int64_t k) {
  char name[64];
  snprintf(name, sizeof name, fmt, k);
  const size_t len = strlen(r->ro.out) + strlen(name) + 2;
  char *p = malloc(len);
  if (p == NULL)
    cli_error("out of memory");
  else
    snprintf(p, len, "%s/%s", r->ro.out, name);
  return p;
}

static int write_used_parameters(const run *r) {
  char *path = out_path(r, "used_parameters.yml", 0);
  char note[256] = "";
  const tfmm_config *c = &r->ro.sc.cfg;
  if ((c->method == TFMM_METHOD_FMM || c->method == TFMM_METHOD_BH) &&
      (c->theta == TFMM_FROM_ACCURACY || c->order == TFMM_FROM_ACCURACY)) {
    double theta;
    int order;
    char tol[32];
    solver_cli_resolve(c, &theta, &order);
    if (solver_cli_planned(c))
      snprintf(note, sizeof note,
               "theta and order 'auto': chosen by measuring the error against "
               "the accuracy %s, first guess theta %g, order %d (each step's "
               "in statistics.csv)",
               solver_cli_tol(c->accuracy, tol), theta, order);
    else
      snprintf(note, sizeof note,
               "theta and order 'auto': chosen from the accuracy %s, here "
               "theta %g, order %d",
               solver_cli_tol(c->accuracy, tol), theta, order);
  }
  atomic_file af;
  int ok = path != NULL && atomic_file_open(&af, path);
  if (ok) {
    ok = run_options_write_yaml(af.fp, r->attrs, r->nattrs,
                                note[0] != '\0' ? note : NULL);
    if (!ok) {
      cli_error("%s: cannot write: %s", path, strerror(errno));
      atomic_file_discard(&af);
    } else {
      ok = atomic_file_commit(&af);
    }
  }
  free(path);
  /* Beside it, as SWIFT does: what was given and not used. */
  path = ok ? out_path(r, "unused_parameters.yml", 0) : NULL;
  ok = ok && path != NULL && atomic_file_open(&af, path);
  if (ok) {
    ok = run_options_write_unused(af.fp, &r->ro);
    if (!ok) {
      cli_error("%s: cannot write: %s", path, strerror(errno));
      atomic_file_discard(&af);
    } else {
      ok = atomic_file_commit(&af);
    }
  }
  free(path);
  return ok;
}

static const tfmm_stats *solver_stats(const run *r) {
  return tfmm_solver_stats(tfmm_sim_solver(r->sim));
}

/* The step's force evaluations' phases (summed over the sub-steps of
 * individual steps), and the kicks' and drifts' time. */
static void step_times(const run *r, run_times *t) {
  const tfmm_step_stats *x = tfmm_sim_stats(r->sim);
  t->tree = x->time_tree + x->time_lists;
  t->near = x->time_near;
  t->far = x->time_far;
  t->integrate = x->time_integrate;
}

/* The diagnostics of the current step, their line and CSV row. Their time
 * counts toward integrate, and t->step ends here, unless step_started is
 * 0 (a row written late, with the latest step's times). */
static int record_row(run *r, run_times *t, double step_started) {
  const int64_t step = tfmm_sim_syncs(r->sim);
  const double t0 = cli_seconds();
  tfmm_diagnostics d;
  double error;
  if (tfmm_sim_diagnostics(r->sim, &d, &error) != TFMM_OK) {
    cli_error("%s", tfmm_sim_message(r->sim));
    return 0;
  }
  if (!isfinite(d.total)) {
    cli_error("step %" PRId64 ": the total energy is not finite", step);
    return 0;
  }
  if (step_started > 0) {
    t->integrate += cli_seconds() - t0;
    t->step = cli_seconds() - step_started;
  }
  const double time = tfmm_sim_time(r->sim);
  return mpi_cli_agree(
      run_report_step(&r->report, step, time, error, &d, t, solver_stats(r)) &&
      run_report_energy(&r->report, step, time, error, r->ro.max_energy_error));
}

/* The checkpoint of the current step, after its row: the row is written
 * (late, with the latest step's times, when the cadence did not call for
 * it) and synced first, so that a checkpoint is never ahead of the
 * statistics a restart continues. */
static int write_checkpoint(run *r) {
  run_times late = r->last_times;
  const int64_t step = tfmm_sim_syncs(r->sim);
  if (r->report.last_row != step && !r->mid_way && !record_row(r, &late, 0))
    return 0;
  /* Mid-way through a block: the row of the point it started from. */
  if (r->report.last_row != step && r->mid_way &&
      (r->sync.step != step ||
       !mpi_cli_agree(run_report_step(&r->report, step, r->sync.time,
                                      r->sync.error, &r->sync.d, &late,
                                      solver_stats(r))))) {
    if (r->sync.step != step)
      cli_error("step %" PRId64 ": no diagnostics kept for the checkpoint's "
                "row",
                step);
    return 0;
  }
  /* Written by the writer's thread, after the snapshot of this step when
   * there is one, while the run steps on. */
  return mpi_cli_agree(run_report_sync(&r->report)) &&
         snapshot_writer_checkpoint(&r->writer,
                                    out_path(r, "checkpoint.hdf5", 0),
                                    tfmm_sim_bins(r->sim, NULL, 0) > 0);
}

/* The snapshots of step: with an output list, each listed time within
 * the step after it (or on it) as number K, K its rank in the list, the
 * state carried to that time. Else snapshot K is step K * snapshot_every,
 * or the first step at or after time K * snapshot_dt; 0000, the initial
 * state, is written even when snapshot_every is 0; and the end step has
 * one, numbered after the last, when the cadence missed it (SWIFT and
 * GADGET-4 end with one). */
static int begin_snapshots(run *r, int64_t step) {
  const run_options *o = &r->ro;
  int ok = 1;
  size_t j;
  double at;
  if (o->output_times != NULL) {
    while (ok && output_list_due(&r->list, step, r->end, &j, &at))
      ok = snapshot_writer_begin_at(
          &r->writer, out_path(r, "snapshot_%04" PRId64 ".hdf5", (int64_t)j),
          at);
    return ok;
  }
  int64_t k = 0;
  int due;
  if (o->snapshot_dt > 0) {
    due = due_by_time(r, o->snapshot_dt, &k);
  } else {
    due = step == 0 || (o->snapshot_every > 0 && step % o->snapshot_every == 0);
    k = o->snapshot_every > 0 ? step / o->snapshot_every : 0;
  }
  /* k is then the last written: the end's is the next. */
  if (!due && step == r->end && (o->snapshot_dt > 0 || o->snapshot_every > 0)) {
    k++;
    due = 1;
  }
  if (due)
    ok = snapshot_writer_begin(&r->writer,
                               out_path(r, "snapshot_%04" PRId64 ".hdf5", k));
  return ok;
}

/* Snapshot, diagnostics (line and CSV row) and checkpoint, each when
 * due. */
static int after_step(run *r, run_times *t, double step_started) {
  const int64_t step = tfmm_sim_syncs(r->sim);
  const run_options *o = &r->ro;
  double t0 = cli_seconds();
  /* The snapshot taken at the step before goes to its writing thread. */
  int ok = snapshot_writer_hand_off(&r->writer);
  snapshot_writer_note(&r->writer, solver_stats(r), step);
  ok = ok && begin_snapshots(r, step);
  t->io = cli_seconds() - t0;
  if (!ok)
    return 0;
  /* Step 0's checkpoint too: a run stopped early (a second signal ends
   * it at once) can be restarted. */
  const int checkpoint =
      step == r->end || step == 0 ||
      (o->checkpoint_every > 0 && step > 0 && step % o->checkpoint_every == 0);
  int64_t rows;
  const int stats_due = o->stats_dt > 0 ? due_by_time(r, o->stats_dt, &rows)
                                        : step % o->stats_every == 0;
  if ((stats_due || checkpoint) && !record_row(r, t, step_started))
    return 0;
  /* What the planner chose, once its first evaluation here has measured
   * (after the header's first guess). */
  const tfmm_stats *s = solver_stats(r);
  if (!r->plan_told && s->n > 0 && solver_cli_planned(&o->sc.cfg)) {
    fprintf(stderr, "tilefmm run: step %" PRId64 ": %s\n", step, s->plan);
    r->plan_told = 1;
  }
  t->step = cli_seconds() - step_started;
  r->last_times = *t;
  t0 = cli_seconds();
  if (checkpoint && !write_checkpoint(r))
    return 0;
  t->io += cli_seconds() - t0;
  t->step = cli_seconds() - step_started;
  return 1;
}

/* With one global step and a softening length: a warning when the step
 * is longer than the criterion of individual steps at eta 0.025 (GADGET-4's
 * and SWIFT's usual value) for some bodies, which then take steps too long
 * for their accelerations. */
static void check_fixed_step(run *r) {
  const run_options *o = &r->ro;
  if (o->eta > 0 || !(o->sc.cfg.eps > 0))
    return;
  double shortest;
  size_t longer;
  if (tfmm_sim_step_criterion(r->sim, 0.025, &shortest, &longer) != TFMM_OK ||
      longer == 0)
    return;
  fprintf(stderr,
          "tilefmm run: warning: the step dt %g is longer than sqrt(2 eta "
          "eps / |a|) with eta 0.025 for %zu of %zu bodies (the shortest is "
          "%.3g): a smaller --dt, or individual steps (--eta 0.025), keeps "
          "them accurate\n",
          o->dt, longer, r->bodies, shortest);
}

/* With individual steps, the diagnostics of the synchronisation point
 * reached when its row was not written (run.sync). */
static int keep_sync(run *r) {
  const int64_t step = tfmm_sim_syncs(r->sim);
  if (r->ro.eta == 0 || r->report.last_row == step)
    return 1;
  if (tfmm_sim_diagnostics(r->sim, &r->sync.d, &r->sync.error) != TFMM_OK) {
    cli_error("%s", tfmm_sim_message(r->sim));
    return 0;
  }
  r->sync.step = step;
  r->sync.time = tfmm_sim_time(r->sim);
  return 1;
}

/* What the last call of the sim did, added to the run's counts and to
 * *t's times. */
static void add_stats(run *r, run_times *t) {
  const tfmm_step_stats *x = tfmm_sim_stats(r->sim);
  r->evaluations += x->evaluations;
  r->updates += x->updates;
  r->short_steps += x->short_steps;
  run_times one = {0};
  step_times(r, &one);
  t->tree += one.tree;
  t->near += one.near;
  t->far += one.far;
  t->integrate += one.integrate;
}

/* Step 0: forces, the initial energy, snapshot 0000. */
static int start(run *r) {
  run_times t = {0};
  const double t0 = cli_seconds();
  if (tfmm_sim_start(r->sim) != TFMM_OK) {
    cli_error("%s", tfmm_sim_message(r->sim));
    return 0;
  }
  check_fixed_step(r);
  step_times(r, &t);
  /* Snapshot 0000 is written before the steps: a run whose first
   * snapshot cannot be written has not started. */
  return after_step(r, &t, t0) && snapshot_writer_finish(&r->writer) &&
         keep_sync(r);
}

/* One kick-drift-kick step; with individual steps, the sub-steps of
 * every body to the next synchronisation point, one call each, so that
 * a stop signal is heeded between them (a block holds up to 2^40): the
 * state after any of them is a checkpoint to restart from. Stopped
 * mid-way, the block is left for run_steps to checkpoint. */
static int step(run *r) {
  run_times t = {0};
  const double t0 = cli_seconds();
  const int64_t from = tfmm_sim_syncs(r->sim);
  do {
    if (tfmm_sim_step(r->sim, 1) != TFMM_OK) {
      cli_error("%s", tfmm_sim_message(r->sim));
      return 0;
    }
    add_stats(r, &t);
    r->mid_way = tfmm_sim_syncs(r->sim) == from;
  } while (r->mid_way && mpi_cli_max_int(run_stop_signal()) == 0);
  if (r->mid_way)
    return 1;
  if (!after_step(r, &t, t0) || !keep_sync(r))
    return 0;
  run_report_tick(&r->report, tfmm_sim_syncs(r->sim), tfmm_sim_time(r->sim),
                  &t);
  return 1;
}

/* With individual steps, what they did: sub-steps, body updates against
 * the fixed step dt_min would have needed, the bins now, and the bodies
 * that asked for less than dt_min. */
static void report_time_steps(const run *r) {
  if (r->ro.eta == 0 || r->evaluations == 0)
    return;
  int64_t counts[64] = {0};
  const int k = tfmm_sim_bins(r->sim, counts, 64);
  int lo = 0;
  while (lo < k && counts[lo] == 0)
    lo++;
  const double n = (double)r->bodies;
  const double steps = (double)(tfmm_sim_syncs(r->sim) - r->first_sync);
  printf("  individual steps: %" PRId64 " force evaluations, %.2f updates "
         "per body per step (%d with every body at the shortest step in use "
         "now); bodies per bin, dt_max first:",
         r->evaluations, (double)r->updates / n / steps, 1 << (k - lo));
  for (int b = k; b >= lo; b--)
    printf(" %" PRId64, counts[b]);
  printf("\n");
  if (r->short_steps > 0)
    fprintf(stderr,
            "tilefmm run: warning: %" PRId64 " times a body asked for a "
            "step shorter than dt_min and took dt_min: lower --dt-min\n",
            r->short_steps);
}

/* The step at which the run ends. Refuses, naming the option and its
 * value, the settings that would drop outputs silently: an end at or
 * before the start, a clock that does not move, output intervals past
 * counting. */
static int resolve_end(run *r) {
  run_options *o = &r->ro;
  const double dt = run_step_length(o), t0 = r->st.time_initial;
  if (o->t_end > 0) {
    const double k = ceil((o->t_end - t0) / dt - 1e-9);
    if (!(k < 1e15)) {
      cli_error("--t-end %g with a step of %g: too many steps", o->t_end, dt);
      return 0;
    }
    if (k < 1) {
      cli_error("--t-end %g is not after the start time %.17g (the initial "
                "conditions' time): the run would take no step",
                o->t_end, t0);
      return 0;
    }
    r->end = (int64_t)k;
    o->steps = (int)fmin(r->end, 2147483647.0);
  } else {
    r->end = o->steps;
  }
  const double span = (double)r->end * dt;
  return run_limits_clock(o, run_step_length(o), t0, t0 + span) &&
         run_limits_interval(span, "--snapshot-dt", o->snapshot_dt,
                             "--snapshot-every") &&
         run_limits_interval(span, "--stats-dt", o->stats_dt, "--stats-every");
}

/* The restart's settings and state from its checkpoint. Returns a CLI
 * exit code; *device gets the checkpoint's device (free it). Under
 * mpirun rank 0 reads the checkpoint, every rank takes its settings, and
 * rank 0 alone holds the bodies (run_ranks_scatter hands them out). */
static int from_checkpoint(run *r, char **device) {
  run_options *o = &r->ro;
  const int root = mpi_cli_rank() == 0;
  snapshot cp = {0};
  int code = CLI_OK;
  /* A checkpoint (one with a /RunState) of an older tilefmm lacks the
   * newer physics settings: it gets the values it ran with. */
  if (!mpi_cli_agree(!root || snapshot_read(o->restart_path, &cp)) ||
      !run_ranks_share_attrs(&cp.params, &cp.nparams) ||
      !run_ranks_share_attrs(&cp.state, &cp.nstate) ||
      !mpi_cli_agree((cp.nstate == 0 || cp.nparams == 0 ||
                      run_options_upgrade_checkpoint(
                          o->restart_path, &cp.params, &cp.nparams)) &&
                     run_options_merge_checkpoint(o, o->restart_path, cp.params,
                                                  cp.nparams)))
    code = CLI_RUNTIME_ERROR;
  else if (!mpi_cli_agree(
               run_options_finish(o) &&
               run_options_compare(o, o->restart_path, cp.params, cp.nparams)))
    code = CLI_USAGE_ERROR;
  else if (!mpi_cli_agree(!root || run_state_from_checkpoint(&r->st, &cp,
                                                             o->restart_path)))
    code = CLI_RUNTIME_ERROR;
  const char *d = snapshot_attr_find(cp.state, cp.nstate, "device");
  *device = d != NULL ? strdup(d) : NULL;
  snapshot_free(&cp);
  return code;
}

/* Under mpirun, what rank 0's initial conditions told it
 * (run_state_from_ic): the count of bodies, and the units a file gave a
 * run that had none. */
static int share_ic(run_options *o) {
  if (!mpi_cli_on())
    return 1;
  struct {
    uint64_t n;
    units u;
  } k = {o->n, o->units};
  mpi_cli_bcast(&k, sizeof k);
  o->n = k.n;
  int ok = 1;
  if (memcmp(&k.u, &o->units, sizeof k.u) != 0)
    ok = run_options_adopt_units(o, &k.u);
  return mpi_cli_agree(ok);
}

/* The run's directory and the parameters it used, by rank 0. */
static int claim_dir(run *r) {
  const run_options *o = &r->ro;
  r->dir.path = o->out;
  return mpi_cli_agree(
      mpi_cli_rank() != 0 ||
      (run_dir_claim(&r->dir, o->restart_path == NULL, o->force) &&
       write_used_parameters(r)));
}

/* The output list, from the run's start; a restart continues with the
 * times after its step (those up to it were written before its
 * checkpoint). Says how many lie past the end. */
static int read_output_list(run *r) {
  const run_options *o = &r->ro;
  if (!mpi_cli_agree(output_list_read(o->output_times, r->time_initial,
                                      run_step_length(o), &r->list)))
    return 0;
  if (o->restart_path != NULL)
    output_list_skip_to(&r->list, tfmm_sim_syncs(r->sim));
  const size_t after = output_list_after(&r->list, r->end);
  if (after > 0)
    fprintf(stderr,
            "tilefmm run: note: %zu of the %zu times of %s are after the "
            "end (t = %.17g): no snapshot for them\n",
            after, r->list.n, o->output_times,
            r->time_initial + (double)r->end * run_step_length(o));
  return 1;
}

/* Settings, state and solver; for a restart, from the checkpoint. Returns
 * a CLI exit code. */
static int set_up(run *r) {
  run_options *o = &r->ro;
  char *was = NULL;
  int code = CLI_OK;
  if (o->restart_path != NULL) {
    code = from_checkpoint(r, &was);
  } else if (!mpi_cli_agree(run_options_finish(o) &&
                            run_options_types_fit_ic(o))) {
    code = CLI_USAGE_ERROR;
  } else {
    /* A file's, kept from every output ("-" is /dev/stdin when a file). */
    atomic_file_protect(body_input_path(o->ic));
    if (!mpi_cli_agree(mpi_cli_rank() != 0 || run_state_from_ic(&r->st, o)) ||
        !share_ic(o))
      code = CLI_RUNTIME_ERROR;
  }
  /* Under mpirun, rank 0's bodies in blocks to every rank. */
  if (code == CLI_OK && !run_ranks_scatter(&r->st))
    code = CLI_RUNTIME_ERROR;
  /* SWIFT's time_begin: tilefmm starts at the initial conditions' time
   * (0 for a model, a snapshot's Header Time, a checkpoint's start), so
   * the key may only restate it. */
  if (code == CLI_OK && o->time_begin_given &&
      o->time_begin != r->st.time_initial) {
    cli_error("TimeIntegration:time_begin %g: a run starts at its initial "
              "conditions' time, here %.17g (0 for a model, the Header Time "
              "of a snapshot); tilefmm cannot set another: drop the key or "
              "give that time",
              o->time_begin, r->st.time_initial);
    code = CLI_USAGE_ERROR;
  }
  if (code == CLI_OK && !resolve_end(r))
    code = CLI_USAGE_ERROR;
  r->time_initial = r->st.time_initial;
  if (code == CLI_OK)
    code = run_state_make_sim(&r->st, o, &r->sim);
  if (code == CLI_OK && r->end < tfmm_sim_syncs(r->sim)) {
    cli_error("the run is at step %" PRId64
              " already, past the end (step %" PRId64 ")",
              tfmm_sim_syncs(r->sim), r->end);
    code = CLI_USAGE_ERROR;
  }
  if (code == CLI_OK && o->output_times != NULL && !read_output_list(r))
    code = CLI_USAGE_ERROR;
  if (code == CLI_OK) {
    r->device = tfmm_device_name(tfmm_solver_device(tfmm_sim_solver(r->sim)));
    if (was != NULL && strcmp(was, r->device) != 0)
      fprintf(stderr,
              "tilefmm run: note: the checkpoint's forces were computed on "
              "the %s, these on the %s: the continuation is not bit for bit "
              "the run straight through\n",
              was, r->device);
    if (o->restart_path != NULL && o->sc.cfg.leaf_size == TFMM_LEAF_AUTO)
      fprintf(stderr, "tilefmm run: note: with --leaf auto the leaf size "
                      "follows measured times, so the continuation is not bit "
                      "for bit the run straight through\n");
    r->attrs = run_options_attrs(o, &r->nattrs);
    r->writer = (snapshot_writer){.sim = r->sim,
                                  .ro = o,
                                  .params = r->attrs,
                                  .nparams = r->nattrs,
                                  .device = r->device};
    if (r->attrs == NULL)
      cli_error("out of memory");
    if (!mpi_cli_agree(r->attrs != NULL))
      code = CLI_RUNTIME_ERROR;
    r->bodies = run_ranks_count(r->sim);
    snprintf(r->where, sizeof r->where, "%s", r->device);
    if (mpi_cli_on())
      snprintf(r->where, sizeof r->where, "%s over %d ranks (MPI)", r->device,
               mpi_cli_ranks());
  }
  free(was);
  if (code == CLI_OK && !claim_dir(r))
    code = CLI_RUNTIME_ERROR;
  return code;
}

static int use_progress(const char *word) {
  if (strcmp(word, "on") == 0)
    return 1;
  if (strcmp(word, "off") == 0)
    return 0;
  return isatty(STDERR_FILENO);
}

/* The steps to the end, or to a stop signal: then the checkpoint of the
 * step reached, unless it was just written. Sets *stopped to the signal
 * that stopped the run before its end, or 0. Returns 0 on a failure
 * (printed). */
static int run_steps(run *r, int *stopped) {
  const run_options *o = &r->ro;
  int ok = 1;
  r->first_sync = tfmm_sim_syncs(r->sim);
  run_stop_catch();
  /* Under mpirun a signal that reached one rank stops them all. */
  while (ok && tfmm_sim_syncs(r->sim) < r->end &&
         mpi_cli_max_int(run_stop_signal()) == 0)
    ok = step(r);
  const double t0 = cli_seconds();
  if (!snapshot_writer_finish(&r->writer))
    ok = 0;
  r->report.last_writes = cli_seconds() - t0;
  const int64_t reached = tfmm_sim_syncs(r->sim);
  const int mid_way = r->mid_way;
  *stopped = reached < r->end ? mpi_cli_max_int(run_stop_signal()) : 0;
  if (ok && *stopped != 0) {
    if (o->checkpoint_every == 0 || reached % o->checkpoint_every != 0 ||
        reached == 0 || mid_way)
      ok = write_checkpoint(r) && snapshot_writer_finish(&r->writer);
    if (ok)
      fprintf(stderr,
              "\ntilefmm run: stopped by signal %d at step %" PRId64
              "%s; continue with --restart %s/checkpoint.hdf5\n",
              *stopped, reached,
              mid_way ? " (mid-way through the individual steps to the next)"
                      : "",
              o->out);
  }
  return ok;
}

int cmd_run(int argc, char **argv) {
  run r;
  memset(&r, 0, sizeof r);
  r.sync.step = -1;
  run_options_init(&r.ro);
  int code = run_options_parse(&r.ro, argc - 1, argv + 1);
  /* Every rank reads the parameter file: one that could not goes no
   * further than the others. */
  if (!mpi_cli_agree(code == CLI_OK)) {
    run_options_free(&r.ro);
    return code < 0 ? CLI_OK : code != CLI_OK ? code : CLI_USAGE_ERROR;
  }
  code = set_up(&r);
  if (code == CLI_OK) {
    const run_options *o = &r.ro;
    char solver[512];
    run_describe_solver(&r.ro, NULL, solver, sizeof solver);
    char steps[160];
    int64_t bins[1];
    const int k = tfmm_sim_bins(r.sim, bins, 1);
    if (o->eta > 0)
      snprintf(steps, sizeof steps,
               "individual steps (eta %g) from %g to %g in %d bins", o->eta,
               ldexp(run_step_length(o), -k), run_step_length(o), k + 1);
    else
      snprintf(steps, sizeof steps, "dt %g", o->dt);
    fprintf(stderr,
            "tilefmm run: %zu bodies (%s), %s on %s, leaf %s, %s, steps "
            "%" PRId64 " to %" PRId64 ", out %s\n"
            "tilefmm run: %s\n",
            r.bodies, o->ic, o->sc.method, r.where, o->sc.leaf, steps,
            tfmm_sim_syncs(r.sim), r.end, o->out, solver);
    if (units_physical(&o->units)) {
      char text[160];
      fprintf(stderr, "tilefmm run: units: %s, time %.6g s; G = %.9g%s\n",
              units_describe(&o->units, text, sizeof text),
              units_time(&o->units), o->sc.cfg.G,
              run_options_explicit(o, "--G") ? " (as given)"
                                             : " (from the units)");
    }
    /* Rank 0 writes statistics.csv; the others keep the same steps. */
    r.report_open = mpi_cli_agree(
        run_report_open(&r.report, mpi_cli_rank() == 0 ? o->out : NULL,
                        &o->units, tfmm_sim_syncs(r.sim), r.end,
                        o->restart_path != NULL, use_progress(o->progress)));
    int ok = r.report_open;
    if (ok && o->restart_path == NULL)
      ok = start(&r);
    r.started = ok || o->restart_path != NULL;
    int stopped = 0;
    if (ok)
      ok = run_steps(&r, &stopped);
    if (ok) {
      r.report_open = 0;
      r.report.last = tfmm_sim_syncs(r.sim); /* the step reached */
      r.report.output = r.writer.totals;
      r.report.output.snapshot_every =
          o->output_times == NULL && o->snapshot_dt <= 0 ? o->snapshot_every
                                                         : 0;
      run_describe_solver(&r.ro, solver_stats(&r), solver, sizeof solver);
      ok =
          mpi_cli_agree(run_report_close(&r.report, r.bodies, r.where, solver));
      char ranks[256];
      if (dist_report_line(tfmm_sim_solver(r.sim), ranks, sizeof ranks)[0])
        printf("  ranks: %s\n", ranks);
      report_time_steps(&r);
    }
    if (ok && strcmp(o->plots, "on") == 0) {
      char title[256];
      snprintf(title, sizeof title, "tilefmm run: %zu bodies (%s), %s on %s",
               r.bodies, o->ic, o->sc.method, r.where);
      ok = run_plots_write(o->out, r.sim, title, &o->units);
    }
    code = !ok ? CLI_RUNTIME_ERROR : stopped != 0 ? 128 + stopped : CLI_OK;
  }
  /* A fresh run that never got through step 0 is no run: nothing of it
   * may make its directory look like one. */
  if (code != CLI_OK && !r.started && r.ro.restart_path == NULL &&
      r.dir.claimed)
    run_dir_abandon(&r.dir);
  run_free(&r);
  return code;
}
