/* Command-line options of bench_tree: which tree configurations to sweep,
 * how often to time them and how many bodies to check. */
#ifndef TREE_OPTIONS_H
#define TREE_OPTIONS_H

#include "tilefmm.h"

#include <stdint.h>
#include <stdio.h>

enum { TREE_MAX_LIST = 32 };

typedef struct tree_ilist {
  long long v[TREE_MAX_LIST];
  int n;
} tree_ilist;

typedef struct tree_dlist {
  double v[TREE_MAX_LIST];
  int n;
} tree_dlist;

typedef struct tree_mlist {
  tfmm_method v[TREE_MAX_LIST];
  int n;
} tree_mlist;

typedef struct tree_options {
  tree_ilist n, leaf, order;
  tree_mlist method;
  tree_dlist theta;
  tree_dlist accuracy;         /* targets; with --accuracy and no --theta or
                                  --order, both are chosen from each */
  tfmm_softening softening;    /* default plummer */
  tfmm_far_kernel far_kernel;  /* default auto */
  tfmm_precision precision;    /* of the near field; default single */
  tfmm_mac_kind mac;           /* opening criterion; default geometric */
  double mac_epsilon;          /* the error criterion's; default chosen */
  tfmm_device device;          /* where the near field runs (default cpu) */
  tfmm_schedule_kind schedule; /* gpu or hybrid (default auto) */
  tfmm_device tree_device;     /* where the tree is built (default auto) */
  tfmm_device far_device;      /* where the far field runs (default auto) */
  int threads;                 /* OpenMP threads; 0: OpenMP's own choice */
  int reps;                    /* timed runs per point; medians reported */
  int warmup;                  /* untimed runs first */
  size_t sample; /* bodies checked against tfmm_solver_reference_at */
  uint64_t seed; /* Plummer sphere; the sample uses a seed derived from it */
  double eps;    /* softening length */
  int max_depth; /* tfmm_config.max_depth */
  int tree_only; /* no error sample (pair with --order 0) */
  int resident;  /* bodies on the GPU: tfmm_solver_compute_device */
  double time_limit; /* seconds: skip points predicted to take longer */
  const char *csv;   /* NULL: no CSV */
} tree_options;

/* Prints the options and their defaults. */
void tree_options_usage(FILE *f);

/* Fills *o from the command line. Returns 0 to go on, 1 after --help, -1 on
 * a usage error (reported on stderr). */
int tree_options_parse(int argc, char **argv, tree_options *o);

#endif /* TREE_OPTIONS_H */
