/* Settings of 'tilefmm run' as files hold them: a checkpoint's parameters
 * merged into a restart's settings, upgraded from older checkpoints and
 * compared with the settings given; the attributes a snapshot carries;
 * used_parameters.yml and unused_parameters.yml. */
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

int run_options_merge_checkpoint(run_options *ro, const char *path,
                                 const snapshot_attr *given, size_t count) {
  const int end_given =
      ro->explicit_[run_options_find(ro, "--steps") - ro->opts] ||
      ro->explicit_[run_options_find(ro, "--t-end") - ro->opts];
  for (size_t a = 0; a < count; a++) {
    /* What a snapshot's forces measured (snapshot_writer.c), not a
     * setting. */
    if (strncmp(given[a].name, "Measured:", 9) == 0)
      continue;
    const char *colon = strchr(given[a].name, ':');
    const run_key *k = NULL;
    for (size_t j = 0; colon != NULL && j < run_nkeys; j++)
      if (strncmp(given[a].name, run_keys[j].section,
                  (size_t)(colon - given[a].name)) == 0 &&
          strlen(run_keys[j].section) == (size_t)(colon - given[a].name) &&
          strcmp(colon + 1, run_keys[j].key) == 0)
        k = &run_keys[j];
    if (k == NULL) {
      cli_error("%s: unknown parameter '%s' in /Parameters: not a checkpoint "
                "of this version of tilefmm run",
                path, given[a].name);
      return 0;
    }
    args_option *o = run_options_find(ro, k->flag);
    const size_t i = (size_t)(o - ro->opts);
    if (strcmp(k->flag, "--t-end") == 0 || strcmp(k->flag, "--restart") == 0 ||
        strcmp(k->flag, "--out") == 0)
      continue; /* the end is --steps; the restart is this one; the
                 * directory is the checkpoint's (below) */
    if (strcmp(k->flag, "--steps") == 0 && end_given)
      continue;
    if (ro->explicit_[i])
      continue; /* compared once every setting is final */
    if (strcmp(k->flag, "--G") == 0)
      ro->G_kept = 1; /* not derived again from the units */
    /* A string setting points at its word: copy the checkpoint's, which
     * is released before the run ends. */
    char where[512];
    snprintf(where, sizeof where, "%s: /Parameters %s", path, given[a].name);
    const char *word = o->kind == ARGS_STRING
                           ? run_options_keep(ro, strdup(given[a].value))
                           : given[a].value;
    if (word == NULL)
      cli_error("out of memory");
    if (word == NULL || !args_set(o, word, where))
      return 0;
  }
  if (!ro->explicit_[run_options_find(ro, "--out") - ro->opts]) {
    const char *slash = strrchr(path, '/');
    ro->out = run_options_keep(ro, slash == NULL ? strdup(".")
                                   : slash == path
                                       ? strdup("/")
                                       : strndup(path, (size_t)(slash - path)));
    if (ro->out == NULL) {
      cli_error("out of memory");
      return 0;
    }
  }
  return 1;
}

/* The settings an older checkpoint lacks, each with the value its run
 * had, by the feature that added them. Only the first group's is noted:
 * the others were the only behaviour of their time. */
static const struct {
  const char *name, *value;
  int noted; /* printed when added */
} missing_before[] = {
    /* the softening kernels and the accuracy target */
    {"Gravity:softening", "plummer", 1},
    {"Gravity:precision", "single", 1},
    {"Gravity:accuracy", "0.001", 1},
    {"Gravity:mac", "geometric", 1},
    /* individual time steps: it ran with one global step */
    {"Gravity:eta", "0", 0},
    {"TimeIntegration:dt_max", "0", 0},
    {"TimeIntegration:dt_min", "0", 0},
    /* measured accuracy: the defaults, so that its restart chooses theta
     * and order afresh by measurement (its /RunState has no planner
     * state: run_state.c says so) */
    {"Gravity:measure", "auto", 0},
    {"Gravity:error_sample", "0", 0},
    {"Gravity:verify", "false", 0},
    /* the softened far field: its far field carried Newton's kernel */
    {"Gravity:far_kernel", "newton", 0},
    /* models in physical units: its model was made in N-body units */
    {"InitialConditions:model_mass", "1", 0},
    {"InitialConditions:model_radius", "1", 0},
};
#define NMISSING (sizeof missing_before / sizeof missing_before[0])

/* Adds name = value to *attrs unless it is there. Returns 1 when added,
 * 0 when there, -1 when out of memory (printed). */
static int add_missing(snapshot_attr **attrs, size_t *count, const char *name,
                       const char *value) {
  if (snapshot_attr_find(*attrs, *count, name) != NULL)
    return 0;
  snapshot_attr *a = realloc(*attrs, (*count + 1) * sizeof *a);
  if (a == NULL) {
    cli_error("out of memory");
    return -1;
  }
  *attrs = a;
  a[*count].name = strdup(name);
  a[*count].value = strdup(value);
  (*count)++;
  if (a[*count - 1].name == NULL || a[*count - 1].value == NULL) {
    cli_error("out of memory");
    return -1;
  }
  return 1;
}

int run_options_upgrade_checkpoint(const char *path, snapshot_attr **attrs,
                                   size_t *count) {
  int noted = 0;
  for (size_t k = 0; k < NMISSING; k++) {
    const int added = add_missing(attrs, count, missing_before[k].name,
                                  missing_before[k].value);
    if (added < 0)
      return 0;
    noted += added && missing_before[k].noted;
  }
  if (noted > 0)
    fprintf(stderr,
            "tilefmm run: note: %s predates the softening kernels and the "
            "accuracy target: it continues with softening plummer, precision "
            "single, accuracy 1e-3, mac geometric and its own theta and "
            "order\n",
            path);
  return 1;
}

static char *format_value(const args_option *o) {
  char buf[64];
  switch (o->kind) {
  case ARGS_DOUBLE:
    snprintf(buf, sizeof buf, "%.17g", *(const double *)o->value);
    break;
  case ARGS_INT:
    snprintf(buf, sizeof buf, "%d", *(const int *)o->value);
    break;
  case ARGS_U64:
    snprintf(buf, sizeof buf, "%" PRIu64, *(const uint64_t *)o->value);
    break;
  case ARGS_STRING: {
    const char *s = *(const char *const *)o->value;
    return strdup(s != NULL ? s : "");
  }
  case ARGS_FLAG:
    snprintf(buf, sizeof buf, "%s", *(const int *)o->value ? "true" : "false");
    break;
  }
  return strdup(buf);
}

snapshot_attr *run_options_attrs(const run_options *ro, size_t *count) {
  snapshot_attr *a = calloc(run_nkeys, sizeof *a);
  size_t m = 0;
  for (size_t k = 0; a != NULL && k < run_nkeys; k++) {
    const args_option *o = NULL;
    for (size_t j = 0; j < RUN_FLAGS; j++)
      if (strcmp(ro->opts[j].name, run_keys[k].flag) == 0)
        o = &ro->opts[j];
    /* Unset: no end time, no restart file, no output list. */
    if ((strcmp(run_keys[k].flag, "--t-end") == 0 && ro->t_end < 0) ||
        (strcmp(run_keys[k].flag, "--restart") == 0 &&
         ro->restart_path == NULL) ||
        (strcmp(run_keys[k].flag, "--types") == 0 && ro->types == NULL) ||
        (strcmp(run_keys[k].flag, "--output-times") == 0 &&
         ro->output_times == NULL) ||
        (strncmp(run_keys[k].flag, "--unit-", 7) == 0 &&
         !units_physical(&ro->units)))
      continue;
    const size_t len =
        strlen(run_keys[k].section) + strlen(run_keys[k].key) + 2;
    a[m].name = malloc(len);
    a[m].value = format_value(o);
    if (a[m].name == NULL || a[m].value == NULL) {
      run_options_free_attrs(a, m + 1);
      return NULL;
    }
    snprintf(a[m].name, len, "%s:%s", run_keys[k].section, run_keys[k].key);
    m++;
  }
  *count = m;
  return a;
}

void run_options_free_attrs(snapshot_attr *a, size_t count) {
  for (size_t k = 0; a != NULL && k < count; k++) {
    free(a[k].name);
    free(a[k].value);
  }
  free(a);
}

/* Why the run did not use a given parameter, or NULL when it did (or
 * when a -P or a flag overrode it: those are listed apart). */
static const char *unused_reason(const run_options *ro, const run_given *g) {
  if (g->overridden_by != NULL || g->opt == NULL)
    return NULL; /* written as comments; time_begin: checked */
  const tfmm_config *c = &ro->sc.cfg;
  const char *f = g->opt;
  /* A file's n is checked against its bodies: used. */
  if ((strcmp(f, "--seed") == 0 || strncmp(f, "--model-", 8) == 0) &&
      !run_state_is_model(ro->ic))
    return "the initial conditions are a file, not a model";
  if (strcmp(f, "--types") == 0 && run_state_is_model(ro->ic))
    return "the initial conditions are a model, not a snapshot";
  if (c->method != TFMM_METHOD_FMM && c->method != TFMM_METHOD_BH &&
      (strcmp(f, "--theta") == 0 || strcmp(f, "--order") == 0 ||
       strcmp(f, "--mac") == 0 || strcmp(f, "--accuracy") == 0 ||
       strcmp(f, "--far-kernel") == 0 || strcmp(f, "--leaf") == 0 ||
       strcmp(f, "--max-depth") == 0))
    return "the method has no tree";
  if (c->device == TFMM_DEVICE_CPU && strncmp(f, "--gpu-", 6) == 0)
    return "the forces run on the CPU";
  return NULL;
}

/* Whether word reads back from YAML, unquoted, as itself. */
static int plain_word(const char *word) {
  if (*word == '\0')
    return 0;
  for (const char *s = word; *s != '\0'; s++)
    if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
               "0123456789._+-/",
               *s) == NULL)
      return 0;
  return 1;
}

int run_options_write_unused(FILE *fp, const run_options *ro) {
  fprintf(fp, "# The parameters given to this run (its parameter file and "
              "-P) that it did not use,\n# each with the reason.\n");
  /* Values a -P or a flag replaced: comments, since the key may be given
   * again below (and a key twice is no YAML mapping). */
  for (size_t i = 0; i < ro->ngiven; i++) {
    const run_given *g = &ro->given[i];
    if (g->overridden_by != NULL)
      fprintf(fp, "# %s:%s: %s, overridden by %s (%s)\n", g->section, g->key,
              g->value, g->overridden_by, g->where);
  }
  size_t written = 0;
  /* Section by section, in the order each first appears. */
  for (size_t i = 0; i < ro->ngiven; i++) {
    const run_given *first = &ro->given[i];
    int earlier = 0;
    for (size_t j = 0; j < i && !earlier; j++)
      earlier = strcmp(ro->given[j].section, first->section) == 0;
    if (earlier)
      continue;
    int heading = 0;
    for (size_t j = i; j < ro->ngiven; j++) {
      const run_given *g = &ro->given[j];
      const char *why = unused_reason(ro, g);
      if (why == NULL || strcmp(g->section, first->section) != 0)
        continue;
      if (!heading)
        fprintf(fp, "%s:\n", g->section);
      heading = 1;
      fprintf(fp, "  %s: ", g->key);
      if (plain_word(g->value)) {
        fputs(g->value, fp);
      } else {
        fputc('"', fp);
        for (const char *s = g->value; *s != '\0'; s++)
          fprintf(fp, (*s == '"' || *s == '\\') ? "\\%c" : "%c", *s);
        fputc('"', fp);
      }
      fprintf(fp, "  # %s (%s)\n", why, g->where);
      written++;
    }
  }
  if (written == 0)
    fprintf(fp, "{}\n");
  return !ferror(fp);
}

/* A string is quoted so that YAML reads it back as that string. */
int run_options_write_yaml(FILE *fp, const snapshot_attr *a, size_t count,
                           const char *note) {
  fprintf(fp, "# The parameters of this run, as 'tilefmm run --params' "
              "reads them.\n");
  if (note != NULL)
    fprintf(fp, "# %s\n", note);
  const char *section = "";
  size_t section_len = 0;
  for (size_t k = 0; k < count; k++) {
    const char *colon = strchr(a[k].name, ':');
    const size_t len = (size_t)(colon - a[k].name);
    if (len != section_len || strncmp(a[k].name, section, len) != 0) {
      fprintf(fp, "%.*s:\n", (int)len, a[k].name);
      section = a[k].name;
      section_len = len;
    }
    const run_key *rk = NULL;
    for (size_t j = 0; j < run_nkeys; j++)
      if (strcmp(run_keys[j].key, colon + 1) == 0 &&
          strncmp(run_keys[j].section, a[k].name, len) == 0)
        rk = &run_keys[j];
    /* Paths may hold anything: quote them. */
    const int quote = rk != NULL && (strcmp(rk->flag, "--ic") == 0 ||
                                     strcmp(rk->flag, "--out") == 0 ||
                                     strcmp(rk->flag, "--restart") == 0);
    if (quote) {
      fprintf(fp, "  %s: \"", colon + 1);
      for (const char *s = a[k].value; *s != '\0'; s++)
        fprintf(fp, (*s == '"' || *s == '\\') ? "\\%c" : "%c", *s);
      fprintf(fp, "\"\n");
    } else {
      fprintf(fp, "  %s: %s\n", colon + 1, a[k].value);
    }
  }
  return !ferror(fp);
}

/* Whether two written values of key are one setting: numbers by value
 * ("0.50" is 0.5), words and paths by their text. */
static int same_setting(const run_key *key, const char *a, const char *b) {
  if (strcmp(a, b) == 0)
    return 1;
  if (strcmp(key->flag, "--ic") == 0)
    return 0;
  char *end_a = NULL, *end_b = NULL;
  double x = strtod(a, &end_a), y = strtod(b, &end_b);
  return end_a != a && *end_a == '\0' && end_b != b && *end_b == '\0' && x == y;
}

int run_options_compare(const run_options *ro, const char *path,
                        const snapshot_attr *given, size_t count) {
  size_t m = 0;
  snapshot_attr *now = run_options_attrs(ro, &m);
  if (now == NULL) {
    cli_error("out of memory");
    return 0;
  }
  int ok = 1;
  for (size_t k = 0; ok && k < run_nkeys; k++) {
    if (run_keys[k].free)
      continue;
    char name[96];
    snprintf(name, sizeof name, "%s:%s", run_keys[k].section, run_keys[k].key);
    const char *was = snapshot_attr_find(given, count, name);
    const char *is = snapshot_attr_find(now, m, name);
    if (was == NULL && is == NULL)
      continue; /* unset in both (InitialConditions:types) */
    if (was == NULL || is == NULL || !same_setting(&run_keys[k], was, is)) {
      cli_error("%s: this checkpoint was written with %s = %s, not %s (%s): "
                "a restart continues the same run; drop the setting or start "
                "a new run",
                path, name, was != NULL ? was : "(unset)",
                is != NULL ? is : "(unset)", run_keys[k].flag);
      ok = 0;
    }
  }
  run_options_free_attrs(now, m);
  return ok;
}
