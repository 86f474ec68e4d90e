/* Settings of 'tilefmm run': unit systems (--units, the flags,
 * InternalUnitSystem, a snapshot's own) and the checks and defaults that
 * join several settings once all are parsed (run_options_finish). */
#define _POSIX_C_SOURCE 200809L
#include "run_options_internal.h"

#include "atomic_file.h"
#include "body_input.h"
#include "cli.h"
#include "params.h"
#include "run_state.h"

#include "tilefmm.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The snapshot output settings, parsed (checked by their options). */
static void finish_output(run_options *ro) {
  snapshot_parse_fields(ro->snapshot_fields, &ro->output.fields);
  ro->output.single = strcmp(ro->snapshot_precision, "single") == 0;
  ro->output.compression = ro->snapshot_compression;
}

/* --units: the three units of its preset, as if given by their flags
 * (so that the canonical list and a restart hold them); with any of those
 * flags too, refused. */
static int apply_preset(run_options *ro) {
  static const char *const flags[] = {"--unit-mass", "--unit-length",
                                      "--unit-velocity"};
  for (size_t k = 0; k < 3; k++)
    if (run_options_explicit(ro, flags[k])) {
      cli_error("--units %s and %s both given: choose one", ro->units_preset,
                flags[k]);
      return 0;
    }
  for (size_t k = 0; k < run_npresets; k++)
    if (strcmp(run_presets[k].name, ro->units_preset) == 0) {
      ro->units.mass = run_presets[k].mass;
      ro->units.length = run_presets[k].length;
      ro->units.velocity = run_presets[k].velocity;
    }
  for (size_t k = 0; units_physical(&ro->units) && k < 3; k++)
    ro->explicit_[run_options_find(ro, flags[k]) - ro->opts] = 1;
  return 1;
}

int run_options_units(run_options *ro) {
  units *u = &ro->units;
  if (ro->units_preset != NULL && !ro->preset_applied) {
    if (!apply_preset(ro))
      return 0;
    ro->preset_applied = 1;
  }
  static const char *const need[] = {"--unit-mass", "--unit-length",
                                     "--unit-velocity"};
  const double given[] = {u->mass, u->length, u->velocity};
  int count = 0;
  for (int k = 0; k < 3; k++)
    count += given[k] > 0;
  if (count != 0 && count != 3) {
    char missing[128] = "";
    for (int k = 0; k < 3; k++)
      if (!(given[k] > 0))
        snprintf(missing + strlen(missing), sizeof missing - strlen(missing),
                 "%s%s", missing[0] != '\0' ? ", " : "", need[k]);
    cli_error("InternalUnitSystem: UnitMass_in_cgs, UnitLength_in_cgs and "
              "UnitVelocity_in_cgs (--unit-mass, --unit-length, "
              "--unit-velocity) come together: missing %s",
              missing);
    return 0;
  }
  if (count == 0) {
    if (u->current > 0 || u->temperature > 0) {
      cli_error("InternalUnitSystem: UnitCurrent_in_cgs and UnitTemp_in_cgs "
                "need the mass, length and velocity units too");
      return 0;
    }
    return 1; /* N-body units: G as given, 1 by default */
  }
  if (!(u->current > 0))
    u->current = 1;
  if (!(u->temperature > 0))
    u->temperature = 1;
  double *G = &ro->sc.cfg.G;
  const double derived = units_G(u);
  if (!run_options_explicit(ro, "--G") && !ro->G_kept) {
    *G = derived;
    return 1;
  }
  if (fabs(*G - derived) > UNITS_G_TOLERANCE * derived) {
    char text[160];
    cli_error("Gravity:G (--G) %.9g contradicts the unit system (%s), in "
              "which G = %.9g (G = %.5e in cgs): drop Gravity:G to derive it "
              "from the units, or give the units it belongs to",
              *G, units_describe(u, text, sizeof text), derived, UNITS_G_CGS);
    return 0;
  }
  return 1; /* the G given, within UNITS_G_TOLERANCE of the units' */
}

int run_options_adopt_units(run_options *ro, const units *u) {
  ro->units = *u;
  const char *flags[] = {"--unit-mass", "--unit-length", "--unit-velocity",
                         "--unit-current", "--unit-temp"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    ro->explicit_[run_options_find(ro, flags[k]) - ro->opts] = 1;
  return run_options_units(ro);
}

/* A model is the same physical model in every unit system: N-body units
 * mapped to mass M = --model-mass and length R = --model-radius, so its
 * time unit is sqrt(R^3 / (G M)) (Heggie & Mathieu 1986). --dt and --eps,
 * unless given, are DEFAULT_DT and run_default_eps of those units, so that the
 * default run of a model takes the same steps in every unit system. A restart
 * keeps the checkpoint's. */
static void model_defaults(run_options *ro) {
  if (ro->restart_path != NULL || !run_state_is_model(ro->ic))
    return;
  const double R = ro->model_radius, M = ro->model_mass, G = ro->sc.cfg.G;
  if (!run_options_explicit(ro, "--dt"))
    ro->dt = DEFAULT_DT * sqrt(R * R * R / (G * M));
  if (!run_options_explicit(ro, "--eps"))
    ro->sc.cfg.eps = run_default_eps(ro->n) * R;
}

/* Which rule places the snapshots. SWIFT's Snapshots:output_list_on 0
 * turns a list off, 1 needs one. On a restart the checkpoint's rule (a
 * list, or --snapshot-dt) gives way to one given now. */
static int snapshot_rule(run_options *ro) {
  if (ro->output_list_on == 1 && ro->output_times == NULL) {
    cli_error("Snapshots:output_list_on 1 needs Snapshots:output_list (or "
              "--output-times)");
    return 0;
  }
  if (ro->output_list_on == 0 && ro->output_times != NULL) {
    fprintf(stderr,
            "tilefmm run: note: Snapshots:output_list_on is 0: the output "
            "list %s is not used\n",
            ro->output_times);
    ro->output_times = NULL;
  }
  const int list = run_options_explicit(ro, "--output-times");
  const int cadence = run_options_explicit(ro, "--snapshot-every") ||
                      run_options_explicit(ro, "--snapshot-dt");
  if (ro->output_times != NULL && !list && cadence)
    ro->output_times = NULL;
  if (list && !cadence)
    ro->snapshot_dt = 0;
  return 1;
}

int run_options_finish(run_options *ro) {
  solver_cli_finish(&ro->sc);
  finish_output(ro);
  if (!run_options_units(ro))
    return 0;
  model_defaults(ro);
  tfmm_config *c = &ro->sc.cfg;
  if (ro->steps >= 0 && ro->t_end > 0) {
    cli_error("--steps and --t-end both given: choose one end");
    return 0;
  }
  if (ro->steps < 0 && ro->t_end < 0)
    ro->steps = DEFAULT_STEPS;
  if (ro->eta == 0 && (ro->dt_max > 0 || ro->dt_min > 0)) {
    cli_error("--dt-max and --dt-min need individual time steps (--eta)");
    return 0;
  }
  if (ro->snapshot_dt > 0 && run_options_explicit(ro, "--snapshot-every")) {
    cli_error("--snapshot-every and --snapshot-dt both given: choose one");
    return 0;
  }
  if (!snapshot_rule(ro))
    return 0;
  if (ro->output_times != NULL &&
      (ro->snapshot_dt > 0 || run_options_explicit(ro, "--snapshot-every"))) {
    cli_error("--output-times (Snapshots:output_list) and %s both given: "
              "choose one",
              ro->snapshot_dt > 0 ? "--snapshot-dt" : "--snapshot-every");
    return 0;
  }
  if (ro->stats_dt > 0 && run_options_explicit(ro, "--stats-every")) {
    cli_error("--stats-every and --stats-dt both given: choose one");
    return 0;
  }
  if (ro->sc.leaf == NULL) {
    /* The library's default, but LEAF_HYBRID for hybrid beside a GPU: the
     * device is the library's plan's. */
    tfmm_plan plan = {.device = TFMM_DEVICE_CPU};
    tfmm_plan_resolve(c, 0, &plan, NULL, 0);
    tfmm_config d;
    tfmm_config_defaults(&d);
    const int gpu_near =
        (c->method == TFMM_METHOD_FMM || c->method == TFMM_METHOD_BH) &&
        plan.device == TFMM_DEVICE_GPU;
    c->leaf_size = gpu_near && c->schedule == TFMM_SCHEDULE_HYBRID
                       ? LEAF_HYBRID
                       : d.leaf_size;
  }
  /* The words every canonical list holds: names, and numbers that read
   * back to the same bits. */
  ro->sc.method = tfmm_method_name(c->method);
  ro->sc.device = tfmm_device_name(c->device);
  ro->sc.schedule = tfmm_schedule_name(c->schedule);
  ro->sc.tree_device = tfmm_device_name(c->tree_device);
  ro->sc.far_device = tfmm_device_name(c->far_device);
  ro->sc.softening = tfmm_softening_name(c->softening);
  ro->sc.precision = tfmm_precision_name(c->precision);
  ro->sc.mac = tfmm_mac_name(c->mac);
  char *leaf = run_options_keep(ro, malloc(32)),
       *theta = run_options_keep(ro, malloc(32)),
       *order = run_options_keep(ro, malloc(32));
  if (leaf == NULL || theta == NULL || order == NULL) {
    cli_error("out of memory");
    return 0;
  }
  if (c->leaf_size == TFMM_LEAF_AUTO)
    snprintf(leaf, 32, "auto");
  else
    snprintf(leaf, 32, "%d", c->leaf_size);
  if (c->theta == TFMM_FROM_ACCURACY)
    snprintf(theta, 32, "auto");
  else
    snprintf(theta, 32, "%.17g", c->theta);
  if (c->order == TFMM_FROM_ACCURACY)
    snprintf(order, 32, "auto");
  else
    snprintf(order, 32, "%d", c->order);
  ro->sc.leaf = leaf;
  ro->sc.theta = theta;
  ro->sc.order = order;
  return 1;
}

/* Refuses the flag --types with a model, which has no particle types to
 * choose among; from a parameter file or -P it is listed in
 * unused_parameters.yml instead, as a shared file's settings are. */
int run_options_types_fit_ic(const run_options *o) {
  if (o->types == NULL || !run_state_is_model(o->ic) ||
      !run_options_explicit(o, "--types"))
    return 1;
  for (size_t k = 0; k < o->ngiven; k++)
    if (o->given[k].opt != NULL && strcmp(o->given[k].opt, "--types") == 0 &&
        o->given[k].overridden_by == NULL)
      return 1; /* the file's or -P's */
  cli_error("--types %s: --ic %s is a model, which has no particle types "
            "(--types chooses among those of a snapshot file)",
            o->types, o->ic);
  return 0;
}
