/* tree_report.h: bench_tree's provenance, table and CSV. */
#define _POSIX_C_SOURCE 200809L /* uname, sysconf */

#include "tree_report.h"
#include "bench_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void tree_run_describe(int argc, char **argv, tree_run_info *ri) {
  memset(ri, 0, sizeof *ri);
  bench_run_stamp(argc, argv, ri->date, sizeof ri->date, ri->cmdline,
                  sizeof ri->cmdline);
  struct utsname u;
  if (uname(&u) == 0)
    snprintf(ri->host, sizeof ri->host, "%s %s %s %s %s", u.sysname, u.nodename,
             u.release, u.version, u.machine);
  else
    snprintf(ri->host, sizeof ri->host, "unknown");
  ri->nproc = sysconf(_SC_NPROCESSORS_ONLN);
  bench_cpu_model(ri->cpu, sizeof ri->cpu);
  snprintf(ri->version, sizeof ri->version, "%s", tfmm_version());
}

/* The header, with one t_<phase> column per phase in tfmm_phase order. */
static const char *csv_header(void) {
  static char h[2048];
  if (h[0])
    return h;
  size_t u = (size_t)snprintf(h, sizeof h,
                              "method,device,n,leaf,order,theta,eps,max_depth,"
                              "threads,seed,warmup,reps,sample");
  for (int p = 0; p < TFMM_PHASE_COUNT; ++p)
    u += (size_t)snprintf(h + u, sizeof h - u, ",t_%s",
                          tfmm_phase_name((tfmm_phase)p));
  snprintf(h + u, sizeof h - u,
           ",t_total,t_total_min,t_total_max,tree_keys,tree_sort,"
           "tree_permute,tree_build,tree_moments,depth,cells,leaves,leaf_min,"
           "leaf_mean,leaf_max,near_interactions,m2l,m2p,err_median,err_p99,"
           "err_max,pot_err_p99,leaf_used,near_device,near_time,"
           "near_kernel_time,far_time,overlap,near_rate,accuracy,softening,"
           "precision,mac,separation,mac_epsilon,tree_device,far_device,"
           "schedule,lists_device,device_bytes");
  return h;
}

FILE *tree_csv_open(const tree_options *o, const tree_run_info *ri) {
  int existing = 0;
  FILE *csv = bench_csv_open("bench_tree", o->csv, csv_header(), &existing);
  if (!csv)
    return NULL;
  fprintf(csv, "# bench_tree%s\n", o->tree_only ? " (tree only)" : "");
  bench_csv_write_stamp(csv, ri->date, ri->cmdline);
  fprintf(csv, "# host: %s\n# nproc: %ld\n# cpu: %s\n# versions: tilefmm %s\n",
          ri->host, ri->nproc, ri->cpu, ri->version);
  if (!o->tree_only && o->sample > 0)
    fprintf(csv,
            "# errors: per-body |a - a_ref| / |a_ref| and |phi - phi_ref| / "
            "|phi_ref| over %zu bodies (tfmm_solver_reference_at)\n",
            o->sample);
  bench_csv_end_comments(csv, csv_header(), existing);
  return csv;
}

void tree_print_header(const tree_options *o, const tree_run_info *ri) {
  printf("# bench_tree%s: tilefmm %s\n# date: %s\n# command: %s\n",
         o->tree_only ? " (tree only)" : "", ri->version, ri->date,
         ri->cmdline);
  printf("# host: %s\n# cpu: %s, %ld processors online\n", ri->host, ri->cpu,
         ri->nproc);
  printf("# times in ms (medians over reps); other = prepare + upload + "
         "download + finish;\n# near_span, far_cpu, overlap, near/s: the "
         "last run's near field (GPU: upload to download), CPU far field, "
         "their overlap, near-field interactions per kernel second\n");
  if (o->tree_only)
    printf("%9s %4s %5s %2s %5s %3s %4s %9s %9s %9s %9s %9s %9s %5s %9s %9s "
           "%5s %7s %6s %9s\n",
           "N", "meth", "L", "p", "theta", "thr", "reps", "tree", "keys",
           "sort", "permute", "build", "moments", "depth", "cells", "leaves",
           "Lmin", "Lmean", "Lmax", "total");
  else
    printf("%9s %4s %5s %2s %5s %3s %4s %9s %9s %9s %9s %9s %9s %8s %9s %5s "
           "%8s %6s %7s %9s %9s %8s %8s %8s %8s %9s %9s %9s %8s %6s\n",
           "N", "meth", "L", "p", "theta", "thr", "reps", "tree", "lists",
           "upward", "far", "downward", "near", "other", "total", "depth",
           "leaves", "Lmean", "near/N", "m2l", "m2p", "err_med", "err_p99",
           "err_max", "pot_p99", "near_span", "far_cpu", "overlap", "near/s",
           "B/body");
  fflush(stdout);
}

static double other_time(const tree_result *r) {
  return r->time[TFMM_PHASE_PREPARE] + r->time[TFMM_PHASE_UPLOAD] +
         r->time[TFMM_PHASE_DOWNLOAD] + r->time[TFMM_PHASE_FINISH];
}

static void print_row(const tree_options *o, size_t n, const tree_config *c,
                      const tree_result *r, int bad) {
  const tfmm_stats *s = &r->last;
  if (o->tree_only) {
    printf("%9zu %4s %5d %2d %5.2f %3d %4d %9.2f %9.2f %9.2f %9.2f %9.2f "
           "%9.2f %5d %9lld %9lld %5lld %7.1f %6lld %9.2f\n",
           n, tfmm_method_name(c->method), c->leaf, c->order, c->theta,
           r->threads, r->reps, r->time[TFMM_PHASE_TREE] * 1e3, r->keys * 1e3,
           r->sort * 1e3, r->permute * 1e3, r->build * 1e3, r->moments * 1e3,
           s->tree_depth, (long long)s->tree_cells, (long long)s->tree_leaves,
           (long long)s->leaf_min, s->leaf_mean, (long long)s->leaf_max,
           r->total * 1e3);
    return;
  }
  char err[64] = "       -        -        -        -";
  if (r->err.have)
    snprintf(err, sizeof err, "%8.1e %8.1e %8.1e %8.1e", r->err.median,
             r->err.p99, r->err.max, r->err.pot_p99);
  printf("%9zu %4s %5d %2d %5.2f %3d %4d %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f "
         "%8.2f %9.2f %5d %8lld %6.1f %7.0f %9.3g %9.3g %s %9.2f %9.2f "
         "%9.2f %8.2e %6.0f%s\n",
         n, tfmm_method_name(c->method), c->leaf, c->order, c->theta,
         r->threads, r->reps, r->time[TFMM_PHASE_TREE] * 1e3,
         r->time[TFMM_PHASE_LISTS] * 1e3, r->time[TFMM_PHASE_UPWARD] * 1e3,
         r->time[TFMM_PHASE_FAR] * 1e3, r->time[TFMM_PHASE_DOWNWARD] * 1e3,
         r->time[TFMM_PHASE_NEAR] * 1e3, other_time(r) * 1e3, r->total * 1e3,
         s->tree_depth, (long long)s->tree_leaves, s->leaf_mean,
         s->interactions / (double)n, s->m2l, s->m2p, err, s->near_time * 1e3,
         s->far_time * 1e3, s->overlap * 1e3, s->near_rate,
         (double)s->device_bytes / (double)n, bad ? " FAILED" : "");
}

/* Empty when the error was not measured. */
static void csv_error(FILE *csv, int have, double v) {
  if (have)
    fprintf(csv, ",%.6g", v);
  else
    fputc(',', csv);
}

static void csv_row(FILE *csv, const tree_options *o, size_t n,
                    const tree_config *c, const tree_result *r) {
  const tfmm_stats *s = &r->last;
  fprintf(csv, "%s,%s,%zu,%d,%d,%.9g,%.9g,%d,%d,%llu,%d,%d,%zu",
          tfmm_method_name(c->method), tfmm_device_name(s->device), n, c->leaf,
          c->order, c->theta, o->eps, o->max_depth, r->threads,
          (unsigned long long)o->seed, o->warmup, r->reps,
          r->err.have ? r->err.k : (size_t)0);
  for (int p = 0; p < TFMM_PHASE_COUNT; ++p)
    fprintf(csv, ",%.9g", r->time[p]);
  fprintf(csv,
          ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%lld,%lld,%lld,%.6g,"
          "%lld,%.17g,%.17g,%.17g",
          r->total, r->total_min, r->total_max, r->keys, r->sort, r->permute,
          r->build, r->moments, s->tree_depth, (long long)s->tree_cells,
          (long long)s->tree_leaves, (long long)s->leaf_min, s->leaf_mean,
          (long long)s->leaf_max, s->interactions, s->m2l, s->m2p);
  csv_error(csv, r->err.have, r->err.median);
  csv_error(csv, r->err.have, r->err.p99);
  csv_error(csv, r->err.have, r->err.max);
  csv_error(csv, r->err.have, r->err.pot_p99);
  fprintf(csv, ",%d,%s,%.9g,%.9g,%.9g,%.9g,%.6g", s->leaf_size,
          tfmm_device_name(s->near_device), s->near_time, s->near_kernel_time,
          s->far_time, s->overlap, s->near_rate);
  fprintf(csv, ",%.3g,%s,%s,%s,%.9g,%.3g,%s,%s", c->accuracy,
          tfmm_softening_name(o->softening), tfmm_precision_name(s->precision),
          tfmm_mac_name(o->mac), s->softening_separation, s->mac_epsilon,
          tfmm_device_name(s->tree_device), tfmm_device_name(s->far_device));
  fprintf(csv, ",%s,%s,%zu", tfmm_schedule_name(s->schedule),
          tfmm_device_name(s->lists_device), s->device_bytes);
  fputc('\n', csv);
  fflush(csv);
}

void tree_report_point(FILE *csv, const tree_options *o, size_t n,
                       const tree_config *c, const tree_result *r, int bad) {
  print_row(o, n, c, r, bad);
  fflush(stdout);
  if (csv)
    csv_row(csv, o, n, c, r);
}

void tree_report_note(FILE *csv, size_t n, const tree_config *c,
                      const char *what, const char *note) {
  printf("%9zu %4s %5d %2d %5.2f  %s: %s\n", n, tfmm_method_name(c->method),
         c->leaf, c->order, c->theta, what, note);
  fflush(stdout);
  if (csv) {
    fprintf(csv, "# %s n=%zu method=%s leaf=%d order=%d theta=%g: %s\n", what,
            n, tfmm_method_name(c->method), c->leaf, c->order, c->theta, note);
    fflush(csv);
  }
}
