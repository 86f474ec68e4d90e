/* What bench_tree measures about one point, and how it is written: the
 * table on stdout and the CSV rows with their "#" provenance comments. */
#ifndef TREE_REPORT_H
#define TREE_REPORT_H

#include "tilefmm.h"
#include "tree_options.h"

#include <stdio.h>

/* One configuration of the sweep. */
typedef struct tree_config {
  tfmm_method method;
  double theta;
  int order;
  int leaf;
  double accuracy; /* tfmm_config.accuracy */
} tree_config;

/* Error of a point over the sample, relative per body:
 * |a - a_ref| / |a_ref| and |phi - phi_ref| / |phi_ref|. */
typedef struct tree_error {
  int have; /* 0: not measured (--tree-only, --sample 0, or skipped) */
  size_t k; /* bodies in the sample */
  double median, p99, max; /* acceleration */
  double pot_p99, pot_max; /* potential (the CSV has the p99 only) */
} tree_error;

/* One measured point: medians over the repetitions. */
typedef struct tree_result {
  int reps;
  int threads;                   /* as the solver reports them */
  double time[TFMM_PHASE_COUNT]; /* median seconds per phase */
  double total, total_min, total_max;
  double keys, sort, permute, build, moments; /* median tree stages */
  tfmm_stats last; /* counts and tree shape, from the last run */
  tree_error err;
} tree_result;

/* Provenance written atop the table and each CSV block. */
typedef struct tree_run_info {
  char date[64];
  char cmdline[4096];
  char host[512]; /* uname: system, node, release, version, machine */
  long nproc;     /* online processors */
  char cpu[256];  /* "model name" of /proc/cpuinfo, or "unknown" */
  char version[64];
} tree_run_info;

void tree_run_describe(int argc, char **argv, tree_run_info *ri);

/* Opens o->csv for appending and writes this run's comments, then the
 * header if the file is new. NULL on an error (reported on stderr). */
FILE *tree_csv_open(const tree_options *o, const tree_run_info *ri);

/* The table's provenance lines and column heads on stdout. */
void tree_print_header(const tree_options *o, const tree_run_info *ri);

/* A line of the table and, when csv is not NULL, a CSV row. bad marks a
 * point whose check failed. */
void tree_report_point(FILE *csv, const tree_options *o, size_t n,
                       const tree_config *c, const tree_result *r, int bad);

/* A skipped or failed point: a table line and a CSV comment. */
void tree_report_note(FILE *csv, size_t n, const tree_config *c,
                      const char *what, const char *note);

#endif /* TREE_REPORT_H */
