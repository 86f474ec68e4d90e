/* Settings of 'tilefmm run': the parameter file (--params) and -P
 * overrides, the keys they may hold (tilefmm's, SWIFT's aliases, SWIFT's
 * keys refused with a reason), and the flags, -P and file joined. */
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

const run_key run_keys[] = {
    {"InitialConditions", "type", "--ic", 0},
    {"InitialConditions", "n", "--n", 0},
    {"InitialConditions", "seed", "--seed", 0},
    {"InitialConditions", "model_mass", "--model-mass", 0},
    {"InitialConditions", "model_radius", "--model-radius", 0},
    {"InitialConditions", "types", "--types", 0},
    {"TimeIntegration", "dt", "--dt", 0},
    {"TimeIntegration", "dt_max", "--dt-max", 0},
    {"TimeIntegration", "dt_min", "--dt-min", 0},
    {"TimeIntegration", "steps", "--steps", 1},
    {"TimeIntegration", "t_end", "--t-end", 1},
    {"Gravity", "G", "--G", 0},
    {"Gravity", "eps", "--eps", 0},
    {"Gravity", "eta", "--eta", 0},
    {"Gravity", "softening", "--softening", 0},
    {"Gravity", "method", "--method", 0},
    {"Gravity", "precision", "--precision", 0},
    {"Gravity", "accuracy", "--accuracy", 0},
    {"Gravity", "measure", "--measure", 0},
    {"Gravity", "error_sample", "--error-sample", 0},
    {"Gravity", "verify", "--verify", 0},
    {"Gravity", "theta", "--theta", 0},
    {"Gravity", "order", "--order", 0},
    {"Gravity", "mac", "--mac", 0},
    {"Gravity", "far_kernel", "--far-kernel", 0},
    {"Gravity", "leaf_size", "--leaf", 0},
    {"Gravity", "max_depth", "--max-depth", 0},
    {"Gravity", "device", "--device", 1},
    {"Gravity", "schedule", "--schedule", 1},
    {"Gravity", "tree_device", "--tree-device", 1},
    {"Gravity", "far_device", "--far-device", 1},
    {"GPU", "tile", "--gpu-tile", 0},
    {"GPU", "threads_per_body", "--gpu-threads-per-body", 0},
    {"GPU", "unroll", "--gpu-unroll", 0},
    {"GPU", "bodies_per_thread", "--gpu-bodies-per-thread", 0},
    {"Scheduler", "threads", "--threads", 1},
    {"Output", "directory", "--out", 1},
    {"Output", "snapshot_every", "--snapshot-every", 1},
    {"Output", "checkpoint_every", "--checkpoint-every", 1},
    {"Output", "statistics_every", "--stats-every", 1},
    {"Output", "progress", "--progress", 1},
    {"Output", "plots", "--plots", 1},
    {"Snapshots", "delta_time", "--snapshot-dt", 1},
    {"Snapshots", "output_list", "--output-times", 1},
    {"Snapshots", "fields", "--snapshot-fields", 1},
    {"Snapshots", "precision", "--snapshot-precision", 1},
    {"Snapshots", "compression", "--snapshot-compression", 1},
    {"InternalUnitSystem", "UnitMass_in_cgs", "--unit-mass", 0},
    {"InternalUnitSystem", "UnitLength_in_cgs", "--unit-length", 0},
    {"InternalUnitSystem", "UnitVelocity_in_cgs", "--unit-velocity", 0},
    {"InternalUnitSystem", "UnitCurrent_in_cgs", "--unit-current", 0},
    {"InternalUnitSystem", "UnitTemp_in_cgs", "--unit-temp", 0},
    {"Statistics", "delta_time", "--stats-dt", 1},
    {"Statistics", "max_energy_error", "--max-energy-error", 1},
    {"Restart", "file", "--restart", 1},
};
const size_t run_nkeys = sizeof run_keys / sizeof run_keys[0];
#define NKEYS (sizeof run_keys / sizeof run_keys[0])

/* SWIFT's names (its parameter_example.yml) for settings tilefmm has, read
 * as the tilefmm key of the same flag; the canonical lists keep tilefmm's
 * names. TimeIntegration:time_begin has no flag: the run starts at its
 * initial conditions' time, which time_begin must equal (checked once the
 * initial conditions are read). */
static const run_key aliases[] = {
    {"InitialConditions", "file_name", "--ic", 0},
    {"TimeIntegration", "time_end", "--t-end", 1},
    {"TimeIntegration", "time_begin", NULL, 1},
    {"Snapshots", "output_list_on", NULL, 1},
    {"Gravity", "comoving_DM_softening", "--eps", 0},
    {"Gravity", "max_physical_DM_softening", "--eps", 0},
    {"Gravity", "theta_cr", "--theta", 0},
    {"PhysicalConstants", "G", "--G", 0},
};
#define NALIASES (sizeof aliases / sizeof aliases[0])

/* SWIFT's keys that tilefmm has no setting for, and what to do instead:
 * an error quoting the reason, rather than "unknown key". */
static const struct {
  const char *section, *key, *why;
} swift_only[] = {
    {"Snapshots", "basename",
     "SWIFT's key: tilefmm names its snapshots DIR/snapshot_NNNN.hdf5 (set DIR "
     "with Output:directory)"},
    {"Snapshots", "select_output",
     "SWIFT's key: tilefmm chooses a snapshot's datasets with "
     "Snapshots:fields (a list of names), not an output-list file"},
    {"Snapshots", "UnitMass_in_cgs",
     "SWIFT's key: tilefmm writes snapshots in its internal units "
     "(InternalUnitSystem), which every reader converts"},
    {"Snapshots", "UnitLength_in_cgs",
     "SWIFT's key: tilefmm writes snapshots in its internal units "
     "(InternalUnitSystem), which every reader converts"},
    {"Snapshots", "UnitVelocity_in_cgs",
     "SWIFT's key: tilefmm writes snapshots in its internal units "
     "(InternalUnitSystem), which every reader converts"},
    {"Snapshots", "subdir",
     "SWIFT's key: set the output directory with Output:directory"},
    {"Snapshots", "time_first",
     "SWIFT's key: tilefmm's snapshots fall at multiples of delta_time from "
     "the start"},
    {"Statistics", "time_first",
     "SWIFT's key: tilefmm's statistics fall at multiples of delta_time from "
     "the start"},
    {"Gravity", "epsilon_fmm",
     "SWIFT's key: tilefmm's force error target is Gravity:accuracy (a "
     "relative error, not SWIFT's adaptive criterion)"},
    {"Gravity", "mesh_side_length",
     "SWIFT's key: tilefmm's runs are not periodic and have no mesh"},
    {"Restarts", "enable",
     "SWIFT's key: tilefmm always writes DIR/checkpoint.hdf5 (every "
     "Output:checkpoint_every steps, at the end and on a signal)"},
    {"Restarts", "delta_hours",
     "SWIFT's key: checkpoints are every Output:checkpoint_every steps"},
};
#define NSWIFT_ONLY (sizeof swift_only / sizeof swift_only[0])
#define NTABLE (NKEYS + NALIASES + NSWIFT_ONLY)

/* The table of every key the file and -P may hold: tilefmm's, SWIFT's
 * aliases, then SWIFT's keys refused with a reason. */
static void key_table(params_key *pk) {
  for (size_t k = 0; k < NKEYS; k++)
    pk[k] = (params_key){run_keys[k].section, run_keys[k].key, run_keys[k].flag,
                         NULL};
  for (size_t k = 0; k < NALIASES; k++)
    pk[NKEYS + k] =
        (params_key){aliases[k].section, aliases[k].key,
                     aliases[k].flag != NULL ? aliases[k].flag : "", NULL};
  for (size_t k = 0; k < NSWIFT_ONLY; k++)
    pk[NKEYS + NALIASES + k] = (params_key){
        swift_only[k].section, swift_only[k].key, "", swift_only[k].why};
}

static const params_key *key_of(const params_key *pk, const char *section,
                                const char *key) {
  for (size_t k = 0; k < NTABLE; k++)
    if (strcmp(pk[k].section, section) == 0 && strcmp(pk[k].key, key) == 0 &&
        pk[k].refused == NULL)
      return &pk[k];
  return NULL;
}

/* Appends a given parameter (copies of its words). */
static int add_given(run_options *ro, const char *section, const char *key,
                     const char *value, const char *where, const char *opt) {
  run_given *g = realloc(ro->given, (ro->ngiven + 1) * sizeof *g);
  if (g == NULL)
    return 0;
  ro->given = g;
  g = &ro->given[ro->ngiven++];
  *g = (run_given){strdup(section),
                   strdup(key),
                   strdup(value),
                   strdup(where),
                   opt[0] != '\0' ? opt : NULL,
                   NULL};
  return g->section != NULL && g->key != NULL && g->value != NULL &&
         g->where != NULL;
}

/* Takes "-P S:k:v", "--param S:k:v" and "--param=S:k:v" out of argv into
 * ro->given, the rest into kept (*nkept words). Returns the number of
 * errors printed. */
static int take_overrides(run_options *ro, const params_key *pk, int argc,
                          char **argv, char **kept, int *nkept) {
  int errors = 0;
  *nkept = 0;
  for (int i = 0; i < argc; i++) {
    const char *word = NULL;
    if (strcmp(argv[i], "-P") == 0 || strcmp(argv[i], "--param") == 0) {
      if (i + 1 >= argc) {
        cli_error("%s: missing value (Section:key:value)", argv[i]);
        errors++;
        continue;
      }
      word = argv[++i];
    } else if (strncmp(argv[i], "--param=", 8) == 0) {
      word = argv[i] + 8;
    } else {
      kept[(*nkept)++] = argv[i];
      continue;
    }
    /* The value is everything after the second colon: a path may hold
     * colons. */
    const char *c1 = strchr(word, ':');
    const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL || c1 == word || c2 == c1 + 1 || c2[1] == '\0') {
      cli_error("-P '%s': expected Section:key:value (say "
                "TimeIntegration:dt_max:0.01)",
                word);
      errors++;
      continue;
    }
    char section[256], key[256];
    snprintf(section, sizeof section, "%.*s", (int)(c1 - word), word);
    snprintf(key, sizeof key, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    const params_key *k = key_of(pk, section, key);
    if (k == NULL) {
      params_report_unknown("-P", section, key, pk, NTABLE);
      errors++;
    } else if (!add_given(ro, section, key, c2 + 1, "-P", k->flag)) {
      cli_error("out of memory");
      errors++;
    }
  }
  return errors;
}

static int same_source(const run_given *a, const run_given *b) {
  return (strcmp(a->where, "-P") == 0) == (strcmp(b->where, "-P") == 0);
}

/* Two parameters of one source (the file, or -P) that set one flag: an
 * alias and its tilefmm key, two aliases, or one -P twice. Returns the
 * number of errors printed. */
static int report_clashes(const run_options *ro) {
  int errors = 0;
  for (size_t i = 0; i < ro->ngiven; i++) {
    const run_given *a = &ro->given[i];
    for (size_t j = i + 1; j < ro->ngiven; j++) {
      const run_given *b = &ro->given[j];
      const int same_key =
          strcmp(a->section, b->section) == 0 && strcmp(a->key, b->key) == 0;
      if (!same_source(a, b) ||
          (a->opt == NULL ? !same_key
                          : b->opt == NULL || strcmp(a->opt, b->opt) != 0))
        continue;
      if (same_key)
        cli_error("%s: %s:%s given more than once", b->where, b->section,
                  b->key);
      else
        cli_error("%s: %s:%s and %s: %s:%s both set %s: give one", a->where,
                  a->section, a->key, b->where, b->section, b->key, a->opt);
      errors++;
    }
  }
  return errors;
}

/* Whether a -P sets flag (which then overrides the file). */
static int set_by_override(const run_options *ro, const char *flag) {
  for (size_t k = 0; k < ro->ngiven; k++)
    if (strcmp(ro->given[k].where, "-P") == 0 && ro->given[k].opt != NULL &&
        strcmp(ro->given[k].opt, flag) == 0)
      return 1;
  return 0;
}

static int zero_or_one(const void *v) {
  const int k = *(const int *)v;
  return k == 0 || k == 1;
}

/* Sets every given parameter that neither a flag nor a -P overrides.
 * Returns the number of errors printed. */
static int apply_given(run_options *ro) {
  int errors = 0;
  for (size_t k = 0; k < ro->ngiven; k++) {
    run_given *g = &ro->given[k];
    char where[600];
    snprintf(where, sizeof where, "%s: %s:%s", g->where, g->section, g->key);
    if (g->opt == NULL && strcmp(g->key, "output_list_on") == 0) {
      args_option o = {.name = "output_list_on",
                       .kind = ARGS_INT,
                       .value = &ro->output_list_on,
                       .valid = zero_or_one,
                       .expect = "0 or 1"};
      errors += !args_set(&o, g->value, where);
      continue;
    }
    if (g->opt == NULL) { /* time_begin */
      args_option o = {.name = "time_begin",
                       .kind = ARGS_DOUBLE,
                       .value = &ro->time_begin,
                       .expect = "a number"};
      if (args_set(&o, g->value, where))
        ro->time_begin_given = 1;
      else
        errors++;
      continue;
    }
    args_option *o = run_options_find(ro, g->opt);
    if (o->seen) {
      g->overridden_by = o->name;
      continue;
    }
    if (strcmp(g->where, "-P") != 0 && set_by_override(ro, g->opt)) {
      g->overridden_by = "-P";
      continue;
    }
    /* A string setting points at the word, which ro keeps. */
    if (!args_set(o, g->value, where))
      errors++;
    ro->explicit_[o - ro->opts] = 1;
  }
  return errors;
}

int run_options_parse(run_options *ro, int argc, char **argv) {
  params_key pk[NTABLE];
  key_table(pk);
  char **kept = malloc((size_t)(argc + 1) * sizeof *kept);
  if (kept == NULL) {
    cli_error("out of memory");
    return CLI_RUNTIME_ERROR;
  }
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      free(kept);
      run_options d;
      run_options_init(&d);
      run_options_help(stdout, &d);
      return -1;
    }
  int nkept = 0;
  /* The overrides are read first, kept apart, and placed after the file's
   * parameters below. */
  run_options over;
  memset(&over, 0, sizeof over);
  int errors = take_overrides(&over, pk, argc, argv, kept, &nkept);
  const args_result parsed = args_parse(nkept, kept, ro->opts, RUN_FLAGS);
  free(kept);
  /* After a bad -P the file is still read, its errors reported too. */
  if (parsed == ARGS_ERROR) {
    run_options_free(&over);
    fprintf(stderr, "Try 'tilefmm run --help'.\n");
    return CLI_USAGE_ERROR;
  }
  for (size_t k = 0; k < RUN_FLAGS; k++)
    ro->explicit_[k] = ro->opts[k].seen;
  if (ro->params_path != NULL) {
    params p;
    atomic_file_protect(ro->params_path);
    errors += !params_read(ro->params_path, pk, NTABLE, &p);
    for (size_t e = 0; p.complete && e < p.count; e++) {
      char where[512];
      snprintf(where, sizeof where, "%s:%d", p.path, p.entries[e].line);
      const params_entry *pe = &p.entries[e];
      if (!add_given(ro, pe->section, pe->key, pe->value, where,
                     key_of(pk, pe->section, pe->key)->flag)) {
        cli_error("out of memory");
        errors++;
      }
    }
    const int complete = p.complete;
    params_free(&p);
    if (!complete) {
      run_options_free(&over);
      return CLI_USAGE_ERROR;
    }
  }
  for (size_t k = 0; k < over.ngiven; k++) {
    const run_given *g = &over.given[k];
    if (!add_given(ro, g->section, g->key, g->value, g->where,
                   g->opt != NULL ? g->opt : "")) {
      cli_error("out of memory");
      errors++;
    }
  }
  run_options_free(&over);
  errors += report_clashes(ro);
  errors += apply_given(ro);
  return errors == 0 ? CLI_OK : CLI_USAGE_ERROR;
}
