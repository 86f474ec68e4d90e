/* What the files of 'tilefmm run''s settings share, and no other file:
 * run_options.c (the option table, the defaults, --help),
 * run_options_params.c (parameter files and -P, the keys they hold),
 * run_options_units.c (unit systems and the checks joining settings after
 * parsing) and run_options_saved.c (the settings as a checkpoint and the
 * YAML files hold them, and a restart's comparison with them). */
#ifndef TFMM_RUN_OPTIONS_INTERNAL_H
#define TFMM_RUN_OPTIONS_INTERNAL_H

#include "run_options.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define DEFAULT_N 262144
#define DEFAULT_STEPS 20
#define DEFAULT_DT 0.0078125 /* 1/128: t = step * dt exactly */
#define DEFAULT_EPS 0.01
/* Above this many bodies a model's default softening shrinks with the
 * mean distance between bodies, DEFAULT_EPS (EPS_BODIES / N)^(1/3), so
 * that a softening sphere holds as many bodies as at 2^20 (cosmological
 * runs tie eps to the mean spacing the same way). Kept at 0.01, a 16M
 * Plummer sphere puts 16 times the bodies inside each softening length:
 * the near field (pairs closer than 2.8 eps) grows with N, 158 against 97
 * ms a step with eps 0.004 on an H200 (bench/results/run_io). */
#define EPS_BODIES 1048576

/* A model's default softening for n bodies, in its N-body units (above). */
static inline double run_default_eps(uint64_t n) {
  return n > EPS_BODIES ? DEFAULT_EPS * cbrt((double)EPS_BODIES / (double)n)
                        : DEFAULT_EPS;
}
/* --max-energy-error: |dE/E| of 100 % is no longer the system that was
 * started (a model in the wrong units reached +770 %: issue 30). */
#define DEFAULT_MAX_ENERGY_ERROR 1.0
#define DEFAULT_OUT "tilefmm_run"
/* Leaf sizes measured fastest for the main job on the H100 (262,144
 * Plummer bodies, accuracy 1e-3: bench/results/gpu_schedule/README.md,
 * "Main job"; the per-step figures are from its logs, not committed): the
 * gpu schedule 30.5 ms a step at 64, the library's default (34.7 at 128,
 * 38.0 at 256, 66.9 at 1024; in session 8, before the faster tree, M2M and
 * L2L, 128 was ahead); hybrid, whose lists and far field are the CPU's, at
 * 1024. */
#define LEAF_HYBRID 1024

/* A parameter-file key, the flag it stands for, and whether a restart may
 * change it (free) or must keep it (the run's physics and solver). */
typedef struct run_key {
  const char *section, *key, *flag;
  int free;
} run_key;

/* tilefmm's keys (run_options_params.c), in the order the YAML files
 * list them. */
extern const run_key run_keys[];
extern const size_t run_nkeys;

/* --units: named unit systems (mass, length, velocity in cgs). */
typedef struct run_preset {
  const char *name;
  double mass, length, velocity;
} run_preset;
extern const run_preset run_presets[];
extern const size_t run_npresets;

/* Takes s (allocated, or NULL when out of memory) into ro->owned, so that
 * run_options_free releases it. Returns s, or NULL (s released) when out
 * of memory. */
char *run_options_keep(run_options *ro, char *s);

/* The option of flag in ro's table (flag must be one). */
args_option *run_options_find(run_options *ro, const char *flag);

#endif
