/* bench_direct: sweeps the all-pairs force evaluation (tfmm_solver_compute
 * with TFMM_METHOD_DIRECT) over N and the GPU kernel's tunables, and reports
 * the median kernel time, the interaction rate, GFLOP/s at GPU Gems 3's 20
 * flops per interaction, and the fraction of the FP32-pipe limit.
 *
 * Usage: bench_direct --help. bench/sweep_direct.sh runs the sweeps behind
 * the plots of bench/plot_direct.sh (GPU Gems 3, ch. 31, figs. 31-5..31-8).
 *
 * Every point is also checked: a sample of bodies is recomputed here in
 * double precision, so that a fast but wrong kernel cannot post a result. */
#include "bench_common.h"
#include "bench_options.h"
#include "gpu_props.h"
#include "tilefmm.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHECK_SAMPLES = 16 };

/* GPU Gems 3, ch. 31, Listing 31-1 and sec. 31.4: 20 flops per body-body
 * interaction: 3 for r, 6 for r.r + eps^2, 4 for its -3/2 power (2 mul, 1
 * sqrt, 1 inverse, though one rsqrt does it), 1 for m and 6 for a += s r. */
static const double FLOPS_PER_INTERACTION = 20.0;

/* FP32-pipe instructions per interaction of the tiled kernel: 3 FADD (r),
 * 3 FFMA (r.r + eps^2), 2 FMUL (cube of 1/r), 1 FMUL (m / r^3), 3 FFMA
 * (a += s r); the rsqrt issues on the MUFU pipe. At one instruction per
 * FP32 lane per clock the limit is SMs * lanes * clock / 12 interactions
 * per second. The potential, when asked for, adds work not counted here. */
static const double FP32_INSTR_PER_INTERACTION = 12.0;

/* A check error above this means a broken kernel, not rounding: see
 * check_sample for the normalisation. */
static const double CHECK_FAIL = 1e-2;

static const char CSV_HEADER[] =
    "method,device,n,p,p_used,q,q_used,unroll,unroll_used,r,r_used,"
    "potential,eps,seed,warmup,reps,median_s,min_s,max_s,"
    "interactions_per_s,gflops,limit_gflops,fraction_of_limit,"
    "check_max_err";

/* One kernel configuration of the sweep; zeros on the CPU. */
typedef struct kconfig {
  int p, q, unroll, r;
} kconfig;

typedef struct point_result {
  double median, min, max; /* kernel seconds (TFMM_PHASE_NEAR) */
  double wall_median;      /* seconds per whole call */
  int reps;
  int p_used, q_used, unroll_used, r_used;
  double check_err;
  char device_name[128];
} point_result;

/* The measurement of one configuration at the largest N so far, from which
 * the cost of the next N is predicted. */
typedef struct reference {
  size_t n;     /* 0: none yet */
  double near;  /* kernel seconds per call, O(N^2) */
  double other; /* rest of the call, O(N) */
} reference;

/* The worst error over a sample of bodies, against a double-precision sum
 * here: |a - a_ref| / sum_j |term_j|, which stays meaningful where the
 * terms cancel (a body near the centre), and |phi - phi_ref| / |phi_ref|.
 * Infinite when an output is not finite. */
static double check_sample(size_t n, const double *pos, const double *mass,
                           double eps, const double *acc, const double *pot) {
  size_t samples = n < CHECK_SAMPLES ? n : CHECK_SAMPLES;
  double worst = 0.0, eps2 = eps * eps;
  for (size_t s = 0; s < samples; ++s) {
    size_t i =
        samples == 1
            ? 0
            : (size_t)((double)s * (double)(n - 1) / (double)(samples - 1));
    double a[3] = {0, 0, 0}, scale = 0.0, phi = 0.0;
    for (size_t j = 0; j < n; ++j) {
      if (j == i)
        continue;
      double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1],
             dz = pos[3 * j + 2] - pos[3 * i + 2];
      double d2 = dx * dx + dy * dy + dz * dz;
      double inv = 1.0 / sqrt(d2 + eps2);
      double t = mass[j] * inv * inv * inv;
      a[0] += t * dx;
      a[1] += t * dy;
      a[2] += t * dz;
      scale += t * sqrt(d2);
      phi -= mass[j] * inv;
    }
    double e[3] = {acc[3 * i] - a[0], acc[3 * i + 1] - a[1],
                   acc[3 * i + 2] - a[2]};
    double err = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    err = scale > 0.0 ? err / scale : err;
    if (!isfinite(err))
      return INFINITY;
    if (err > worst)
      worst = err;
    if (pot) {
      double ep = fabs(pot[i] - phi) / (phi != 0.0 ? fabs(phi) : 1.0);
      if (!isfinite(ep))
        return INFINITY;
      if (ep > worst)
        worst = ep;
    }
  }
  return worst;
}

static int auto_reps(const bench_options *o, double per_call) {
  if (o->reps > 0)
    return o->reps;
  double k =
      per_call > 0.0 ? ceil(o->target_s / per_call) : BENCH_MAX_AUTO_REPS;
  if (k < 3)
    k = 3;
  if (k > BENCH_MAX_AUTO_REPS)
    k = BENCH_MAX_AUTO_REPS;
  return (int)k;
}

/* Seconds one point is expected to take, from this configuration's last
 * measurement (or the costliest other one): the kernel scales as N^2, the
 * rest of the call as N. Zero when nothing is known yet. */
static double predict_point(const bench_options *o, size_t n,
                            const reference *refs, int nref, int k) {
  double per_call = 0.0;
  for (int j = 0; j < nref; ++j) {
    if (refs[j].n == 0 || (j != k && refs[k].n != 0))
      continue;
    double x = (double)n / (double)refs[j].n;
    double t = refs[j].near * x * x + refs[j].other * x;
    if (t > per_call)
      per_call = t;
  }
  if (per_call <= 0.0)
    return 0.0;
  return per_call * (o->warmup + auto_reps(o, per_call));
}

/* Measures one point. Returns TFMM_OK or the failing status, with a message
 * in msg. */
static tfmm_status run_point(const bench_options *o, const kconfig *kc,
                             size_t n, const double *pos, const double *mass,
                             double *acc, double *pot, point_result *res,
                             char *msg, size_t msgcap) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.eps = o->eps;
  cfg.method = o->method;
  cfg.device = o->device;
  cfg.num_threads = o->threads;
  cfg.gpu_id = o->gpu_id;
  if (o->device == TFMM_DEVICE_GPU) {
    cfg.gpu_tile = kc->p;
    cfg.gpu_threads_per_body = kc->q;
    cfg.gpu_unroll = kc->unroll;
    cfg.gpu_bodies_per_thread = kc->r;
  }
  memset(res, 0, sizeof *res);

  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, &cfg);
  if (st != TFMM_OK) {
    bench_fail_msg(msg, msgcap, "tfmm_solver_create", st, s);
    tfmm_solver_destroy(s);
    return st;
  }
  double *pot_arg = o->potential ? pot : NULL;
  double elapsed = 0.0, per_call = 0.0;
  for (int w = 0; w < o->warmup && elapsed <= o->time_limit; ++w) {
    st = tfmm_solver_compute(s, n, pos, mass, acc, pot_arg);
    if (st != TFMM_OK) {
      bench_fail_msg(msg, msgcap, "tfmm_solver_compute (warm-up)", st, s);
      tfmm_solver_destroy(s);
      return st;
    }
    per_call = tfmm_solver_stats(s)->time_total;
    elapsed += per_call;
  }
  int reps = o->warmup > 0 ? auto_reps(o, per_call) : auto_reps(o, 0.0);
  int cap = o->reps > 0 ? o->reps : BENCH_MAX_AUTO_REPS;
  double *near = malloc((size_t)cap * sizeof *near);
  double *wall = malloc((size_t)cap * sizeof *wall);
  if (!near || !wall) {
    free(near);
    free(wall);
    tfmm_solver_destroy(s);
    snprintf(msg, msgcap, "out of host memory for %d timings", cap);
    return TFMM_ERR_NO_MEMORY;
  }
  elapsed = 0.0;
  int done = 0;
  while (done < reps) {
    /* Poison the outputs, so the check below sees only this run's values. */
    memset(acc, 0xff, 3 * n * sizeof *acc);
    if (pot_arg)
      memset(pot_arg, 0xff, n * sizeof *pot_arg);
    st = tfmm_solver_compute(s, n, pos, mass, acc, pot_arg);
    if (st != TFMM_OK) {
      bench_fail_msg(msg, msgcap, "tfmm_solver_compute", st, s);
      break;
    }
    const tfmm_stats *ts = tfmm_solver_stats(s);
    near[done] = ts->time[TFMM_PHASE_NEAR];
    wall[done] = ts->time_total;
    elapsed += ts->time_total;
    ++done;
    if (done == 1 && o->warmup == 0 && o->reps == 0)
      reps = auto_reps(o, ts->time_total);
    if (elapsed > o->time_limit)
      break; /* cap by time */
  }
  if (st == TFMM_OK) {
    const tfmm_stats *ts = tfmm_solver_stats(s);
    res->reps = done;
    res->p_used = ts->gpu_tile;
    res->q_used = ts->gpu_threads_per_body;
    res->unroll_used = ts->gpu_unroll;
    res->r_used = ts->gpu_bodies_per_thread;
    snprintf(res->device_name, sizeof res->device_name, "%s", ts->device_name);
    res->wall_median = bench_median(wall, done);
    res->median = bench_median(near, done); /* sorts near */
    res->min = near[0];
    res->max = near[done - 1];
    res->check_err = check_sample(n, pos, mass, o->eps, acc, pot_arg);
  }
  free(near);
  free(wall);
  tfmm_solver_destroy(s);
  return st;
}

/* What a run records about itself, atop the table and each CSV block. */
typedef struct run_info {
  char date[64];
  char cmdline[4096];
  char device[512]; /* the device, and what sets its limit */
  char versions[256];
  char limit[512];     /* how the limit was computed; "" on the CPU */
  double limit_gflops; /* FP32-pipe limit in GFLOP/s; NaN when unknown */
} run_info;

static void format_version(int v, char *out, size_t cap) {
  snprintf(out, cap, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* The GPU's name, versions and FP32-pipe limit. */
static void describe_gpu(const bench_options *o, const bench_gpu_props *gp,
                         run_info *ri) {
  int lanes = bench_gpu_fp32_lanes_per_sm(gp->cc_major, gp->cc_minor);
  double hz = gp->clock_khz * 1e3;
  snprintf(ri->device, sizeof ri->device,
           "%s (GPU %d, cc %d.%d, %d SMs, %d FP32 lanes/SM, %.0f MHz peak "
           "SM clock)",
           gp->name, o->gpu_id, gp->cc_major, gp->cc_minor, gp->sm_count, lanes,
           hz / 1e6);
  char drv[32], rt[32];
  format_version(gp->driver_version, drv, sizeof drv);
  format_version(gp->runtime_version, rt, sizeof rt);
  snprintf(ri->versions, sizeof ri->versions,
           "tilefmm %s, CUDA driver %s, CUDA runtime %s", tfmm_version(), drv,
           rt);
  if (lanes == 0) {
    snprintf(ri->limit, sizeof ri->limit,
             "FP32-pipe limit unknown: no FP32 lane count for cc %d.%d",
             gp->cc_major, gp->cc_minor);
    return;
  }
  double rate = gp->sm_count * lanes * hz / FP32_INSTR_PER_INTERACTION;
  ri->limit_gflops = rate * FLOPS_PER_INTERACTION * 1e-9;
  snprintf(ri->limit, sizeof ri->limit,
           "FP32-pipe limit = SMs * lanes * clock / %.0f = %.4g "
           "interactions/s = %.5g GFLOP/s at %.0f flops/interaction",
           FP32_INSTR_PER_INTERACTION, rate, ri->limit_gflops,
           FLOPS_PER_INTERACTION);
}

/* Fills *ri. Returns 0, 1 when there is no GPU to run on (the caller skips),
 * or -1 on an error (reported). */
static int describe_run(const bench_options *o, int argc, char **argv,
                        run_info *ri) {
  memset(ri, 0, sizeof *ri);
  ri->limit_gflops = NAN;
  bench_run_stamp(argc, argv, ri->date, sizeof ri->date, ri->cmdline,
                  sizeof ri->cmdline);
  snprintf(ri->versions, sizeof ri->versions, "tilefmm %s", tfmm_version());
  if (o->device != TFMM_DEVICE_GPU) {
    if (o->threads > 0)
      snprintf(ri->device, sizeof ri->device, "CPU (%d OpenMP threads)",
               o->threads);
    else
      snprintf(ri->device, sizeof ri->device,
               "CPU (OpenMP default thread count)");
    return 0;
  }
  if (tfmm_gpu_count() == 0)
    return 1;
  bench_gpu_props gp;
  char err[512];
  if (bench_gpu_props_query(o->gpu_id, &gp, err, (int)sizeof err) != 0) {
    fprintf(stderr, "bench_direct: cannot query GPU %d: %s\n", o->gpu_id, err);
    return -1;
  }
  describe_gpu(o, &gp, ri);
  return 0;
}

/* Opens o->csv for appending and writes this run's comments, then the
 * header if the file is new. NULL on an error (reported). */
static FILE *csv_open(const bench_options *o, const run_info *ri) {
  int existing = 0;
  FILE *csv = bench_csv_open("bench_direct", o->csv, CSV_HEADER, &existing);
  if (!csv)
    return NULL;
  fprintf(csv, "# bench_direct: %s %s\n# device: %s\n# versions: %s\n",
          tfmm_method_name(o->method), tfmm_device_name(o->device), ri->device,
          ri->versions);
  bench_csv_write_stamp(csv, ri->date, ri->cmdline);
  if (ri->limit[0])
    fprintf(csv, "# %s\n", ri->limit);
  if (o->potential)
    fprintf(csv, "# potential=1: the potential's work is not in the "
                 "20-flop count or the limit\n");
  bench_csv_end_comments(csv, CSV_HEADER, existing);
  return csv;
}

static void print_header(const bench_options *o, const run_info *ri) {
  printf("# bench_direct: %s %s on %s\n", tfmm_method_name(o->method),
         tfmm_device_name(o->device), ri->device);
  printf("# %s\n# date: %s\n# command: %s\n", ri->versions, ri->date,
         ri->cmdline);
  if (ri->limit[0])
    printf("# %s\n", ri->limit);
  printf("%9s %5s %3s %3s %3s %2s %5s %12s %12s %12s %10s %10s %7s %8s\n", "N",
         "p", "q", "q*", "unr", "r", "reps", "median_ms", "min_ms", "max_ms",
         "Ginter/s", "GFLOP/s", "%limit", "check");
  fflush(stdout);
}

static void report_skip(FILE *csv, size_t n, const kconfig *kc,
                        const char *note) {
  printf("%9zu %5d %3d %3s %3d %2d  skipped: %s\n", n, kc->p, kc->q, "-",
         kc->unroll, kc->r, note);
  if (csv)
    fprintf(csv, "# skipped n=%zu p=%d q=%d unroll=%d r=%d: %s\n", n, kc->p,
            kc->q, kc->unroll, kc->r, note);
}

/* Prints one measured point and appends its CSV row. Returns 1 when its
 * check failed, else 0. */
static int report_point(FILE *csv, const bench_options *o, const run_info *ri,
                        size_t n, const kconfig *kc, const point_result *res) {
  double inter = (double)n * (double)(n - 1);
  double rate = res->median > 0.0 ? inter / res->median : NAN;
  double gflops = rate * FLOPS_PER_INTERACTION * 1e-9;
  double frac = gflops / ri->limit_gflops; /* NaN on the CPU */
  int bad_check = !(res->check_err <= CHECK_FAIL);
  if (bad_check)
    fprintf(stderr,
            "bench_direct: N=%zu p=%d q=%d unroll=%d r=%d: check failed: "
            "error %.3g > %.0e against double precision\n",
            n, kc->p, kc->q, kc->unroll, kc->r, res->check_err, CHECK_FAIL);
  char pct[16] = "      -";
  if (isfinite(frac))
    snprintf(pct, sizeof pct, "%7.2f", frac * 100.0);
  printf("%9zu %5d %3d %3d %3d %2d %5d %12.5f %12.5f %12.5f %10.2f "
         "%10.1f %s %8.1e%s\n",
         n, res->p_used, kc->q, res->q_used, res->unroll_used, res->r_used,
         res->reps, res->median * 1e3, res->min * 1e3, res->max * 1e3,
         rate * 1e-9, gflops, pct, res->check_err, bad_check ? " FAILED" : "");
  fflush(stdout);
  if (csv) {
    fprintf(csv,
            "%s,%s,%zu,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.9g,%llu,%d,%d,"
            "%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%.6g,%.3g\n",
            tfmm_method_name(o->method), tfmm_device_name(o->device), n, kc->p,
            res->p_used, kc->q, res->q_used, kc->unroll, res->unroll_used,
            kc->r, res->r_used, o->potential, o->eps,
            (unsigned long long)o->seed, o->warmup, res->reps, res->median,
            res->min, res->max, rate, gflops, ri->limit_gflops, frac,
            res->check_err);
    fflush(csv);
  }
  return bad_check;
}

/* The kernel configurations: every combination of the lists on the GPU,
 * one (all zeros) on the CPU, where the tunables mean nothing. Returns
 * their number, or 0 when out of memory. */
static int make_configs(const bench_options *o, kconfig **out) {
  int nk =
      o->device == TFMM_DEVICE_GPU ? o->p.n * o->q.n * o->unroll.n * o->r.n : 1;
  kconfig *kcs = calloc((size_t)nk, sizeof *kcs);
  *out = kcs;
  if (!kcs)
    return 0;
  if (o->device != TFMM_DEVICE_GPU)
    return 1;
  int k = 0;
  for (int a = 0; a < o->p.n; ++a)
    for (int b = 0; b < o->q.n; ++b)
      for (int c = 0; c < o->unroll.n; ++c)
        for (int d = 0; d < o->r.n; ++d)
          kcs[k++] = (kconfig){(int)o->p.v[a], (int)o->q.v[b],
                               (int)o->unroll.v[c], (int)o->r.v[d]};
  return nk;
}

/* Why configuration k is not run at n ("" to run it). Shapes the library
 * refuses are skipped when it says so, with its message. */
static void skip_reason(const bench_options *o, size_t n, const reference *refs,
                        int nk, int k, char *note, size_t cap) {
  note[0] = '\0';
  double pred = predict_point(o, n, refs, nk, k);
  if (pred > o->time_limit)
    snprintf(note, cap, "predicted %.3g s > --device-time-limit %.3g s", pred,
             o->time_limit);
}

/* Runs every (N, configuration) point. Returns the number of failures. */
static int run_sweep(const bench_options *o, const run_info *ri, FILE *csv,
                     const kconfig *kcs, int nk, reference *refs,
                     bench_bodies *b) {
  int failures = 0, named = 0;
  for (int in = 0; in < o->n.n; ++in) {
    size_t n = (size_t)o->n.v[in];
    tfmm_status st = tfmm_ic_plummer(n, o->seed, b->pos, b->vel, b->mass);
    if (st != TFMM_OK) {
      fprintf(stderr, "bench_direct: tfmm_ic_plummer(N = %zu) failed: %s\n", n,
              tfmm_status_name(st));
      return failures + 1;
    }
    for (int k = 0; k < nk; ++k) {
      const kconfig *kc = &kcs[k];
      char note[256];
      skip_reason(o, n, refs, nk, k, note, sizeof note);
      if (note[0]) {
        report_skip(csv, n, kc, note);
        continue;
      }
      point_result res;
      char msg[1024];
      st = run_point(o, kc, n, b->pos, b->mass, b->acc, b->pot, &res, msg,
                     sizeof msg);
      if (st == TFMM_ERR_INVALID_ARGUMENT) {
        /* A shape the library refuses (its message says why): skipped. */
        report_skip(csv, n, kc, msg);
        continue;
      }
      if (st != TFMM_OK) {
        fprintf(stderr, "bench_direct: N=%zu p=%d q=%d unroll=%d r=%d: %s\n", n,
                kc->p, kc->q, kc->unroll, kc->r, msg);
        if (csv)
          fprintf(csv, "# failed n=%zu p=%d q=%d unroll=%d r=%d: %s\n", n,
                  kc->p, kc->q, kc->unroll, kc->r, tfmm_status_name(st));
        ++failures;
        /* A bad configuration spoils one point; anything else (a CUDA
         * error, no memory, no device) spoils the rest too. */
        if (st != TFMM_ERR_INVALID_ARGUMENT && st != TFMM_ERR_UNSUPPORTED)
          return failures;
        continue;
      }
      if (csv && !named) { /* the solver's own name for its device */
        fprintf(csv, "# solver_device: %s\n", res.device_name);
        named = 1;
      }
      refs[k].n = n;
      refs[k].near = res.median;
      refs[k].other =
          res.wall_median > res.median ? res.wall_median - res.median : 0.0;
      failures += report_point(csv, o, ri, n, kc, &res);
    }
  }
  return failures;
}

int main(int argc, char **argv) {
  bench_options o;
  int pr = bench_options_parse(argc, argv, &o);
  if (pr != 0)
    return pr > 0 ? 0 : 2;
  run_info ri;
  int dr = describe_run(&o, argc, argv, &ri);
  if (dr > 0) {
    printf("bench_direct: no usable CUDA device (tfmm_gpu_count() == 0%s)\n"
           "skipped: no GPU\n",
           tfmm_has_cuda() ? "" : "; this build has no CUDA backend");
    return 0;
  }
  if (dr < 0)
    return 1;

  size_t nmax = bench_max_n(o.n.v, o.n.n);
  kconfig *kcs = NULL;
  int nk = make_configs(&o, &kcs);
  reference *refs = calloc(nk > 0 ? (size_t)nk : 1, sizeof *refs);
  bench_bodies b = {0};
  if (nk == 0 || !refs || bench_bodies_alloc(&b, nmax) != 0) {
    fprintf(stderr, "bench_direct: out of host memory for N = %zu\n", nmax);
    return 1;
  }
  FILE *csv = NULL;
  if (o.csv && !(csv = csv_open(&o, &ri)))
    return 1;

  print_header(&o, &ri);
  int failures = run_sweep(&o, &ri, csv, kcs, nk, refs, &b);
  if (csv && fclose(csv) != 0) {
    fprintf(stderr, "bench_direct: writing %s failed\n", o.csv);
    ++failures;
  }
  free(kcs);
  free(refs);
  bench_bodies_free(&b);
  if (failures) {
    fprintf(stderr, "bench_direct: %d failure%s\n", failures,
            failures == 1 ? "" : "s");
    return 1;
  }
  return 0;
}
