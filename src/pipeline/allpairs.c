/* The all-pairs methods (allpairs.h): direct, on the GPU or the CPU in
 * either precision, and the reference in double with compensated sums. */
#include "pipeline/allpairs.h"

#include "bodies.h"
#include "nearfield/direct_cpu.h"
#include "nearfield/interaction.h"
#include "nearfield/reference.h"
#include "team.h"

#include <math.h>
#include <stdlib.h>

/* With eps = 0 a pair at one point has an infinite force: refuse it. The
 * single-precision methods check the points they will really use. */
static tfmm_status check_distinct(const tfmm_allpairs *a, size_t n,
                                  const double *xyz, size_t stride,
                                  const char *what) {
  size_t i = 0, j = 0;
  int found = tfmm_bodies_find_coincident(n, xyz, stride, &i, &j);
  if (found < 0)
    return tfmm_error_set(a->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the coincidence check of %zu bodies",
                          n);
  if (found)
    return tfmm_error_set(a->err, TFMM_ERR_COINCIDENT,
                          "bodies %zu and %zu are at one point%s and eps = 0: "
                          "their force is infinite (set eps > 0)",
                          i, j, what);
  return TFMM_OK;
}

static tfmm_pair_params pair_params(const tfmm_config *c) {
  /* The direct method has no accuracy target: auto is single. */
  tfmm_pair_params p = {c->softening, c->eps,
                        c->precision == TFMM_PRECISION_DOUBLE
                            ? TFMM_PRECISION_DOUBLE
                            : TFMM_PRECISION_SINGLE};
  return p;
}

tfmm_status tfmm_allpairs_reference(const tfmm_allpairs *a, size_t n,
                                    const double *pos, const double *mass,
                                    double *acc, double *pot) {
  double t0 = tfmm_wtime();
  if (tfmm_eps_vanishes(a->run->eps, 0)) {
    tfmm_status st = check_distinct(a, n, pos, 3, "");
    if (st != TFMM_OK)
      return st;
  }
  double t1 = tfmm_wtime();
  tfmm_reference_compute_active(n, pos, mass, a->run->G, a->run->eps,
                                a->run->softening == TFMM_SOFTENING_SPLINE,
                                a->active, acc, pot);
  a->stats->time[TFMM_PHASE_PREPARE] = t1 - t0;
  a->stats->time[TFMM_PHASE_NEAR] = tfmm_wtime() - t1;
  size_t bad = tfmm_bodies_first_nonfinite(n, a->active, acc, pot);
  if (bad < n)
    return tfmm_error_set(a->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite (bodies nearly "
                          "coincident for this eps?)",
                          bad);
  return TFMM_OK;
}

static tfmm_status reserve_cpu(const tfmm_allpairs *a, size_t n) {
  if (n <= a->scratch->capacity)
    return TFMM_OK;
  float *in = realloc(a->scratch->in, 4 * n * sizeof *in);
  if (in != NULL)
    a->scratch->in = in;
  float *out = realloc(a->scratch->out, 4 * n * sizeof *out);
  if (out != NULL)
    a->scratch->out = out;
  if (in == NULL || out == NULL)
    return tfmm_error_set(a->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  a->scratch->capacity = n;
  return TFMM_OK;
}

/* Single-precision packed bodies, back in double for the coincidence
 * check: two bodies may differ in double yet meet in float. */
static tfmm_status check_distinct_f32(const tfmm_allpairs *a, size_t n,
                                      const float *xyzm) {
  double *xyz = malloc(4 * n * sizeof *xyz);
  if (xyz == NULL)
    return tfmm_error_set(a->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the coincidence check");
  for (size_t k = 0; k < 4 * n; k++)
    xyz[k] = xyzm[k];
  tfmm_status st = check_distinct(a, n, xyz, 4, " in single precision");
  free(xyz);
  return st;
}

/* Result k of the packed results, in their precision. */
static inline double result_at(const void *res, int f64, size_t k) {
  return f64 ? ((const double *)res)[k] : (double)((const float *)res)[k];
}

/* Scales by G into the caller's arrays and refuses non-finite results, at
 * the active bodies only when the evaluation is at a subset. res: 4n
 * values, doubles when f64, else floats. */
static tfmm_status finish_direct(const tfmm_allpairs *a, size_t n,
                                 const void *res, int f64, double *acc,
                                 double *pot) {
  const double G = a->run->G;
  const unsigned char *active = a->active;
  size_t bad = n;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) reduction(min : bad) num_threads(team)
  for (size_t i = 0; i < n; i++) {
    if (active != NULL && !active[i])
      continue;
    double v[4];
    for (int k = 0; k < 4; k++)
      v[k] = result_at(res, f64, 4 * i + k);
    for (int k = 0; k < 3; k++)
      acc[3 * i + k] = G * v[k];
    if (pot != NULL)
      pot[i] = G * v[3];
    if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) ||
        !isfinite(v[3]))
      bad = i < bad ? i : bad;
  }
  if (bad < n)
    return tfmm_error_set(a->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite in %s precision "
                          "(bodies nearly coincident with eps = 0?)",
                          bad, f64 ? "double" : "single");
  return TFMM_OK;
}

/* All pairs on the CPU in double precision. */
static tfmm_status run_direct_f64(const tfmm_allpairs *a, size_t n,
                                  const double *pos, const double *mass,
                                  double *acc, double *pot) {
  double t0 = tfmm_wtime();
  if (tfmm_eps_vanishes(a->run->eps, 0)) {
    tfmm_status st = check_distinct(a, n, pos, 3, "");
    if (st != TFMM_OK)
      return st;
  }
  /* Differences of the bodies' own coordinates, each rounded once: exact
   * to double's precision whatever the span. Relative to a centre they
   * would also round each coordinate by u |x - c|, which loses a group
   * beside a far body (issue 29). */
  double *out = malloc(4 * n * sizeof *out), center[3] = {0, 0, 0};
  if (out == NULL)
    return tfmm_error_set(a->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  const tfmm_soft_f64 kern = tfmm_soft_make_f64(
      a->run->softening == TFMM_SOFTENING_SPLINE, a->run->eps);
  double t1 = tfmm_wtime();
  a->stats->time[TFMM_PHASE_PREPARE] = t1 - t0;
  int rc =
      tfmm_direct_cpu_compute_f64(n, pos, mass, center, &kern, a->active, out);
  a->stats->time[TFMM_PHASE_NEAR] = tfmm_wtime() - t1;
  if (rc != 0) {
    free(out);
    return tfmm_error_set(a->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  }
  const double G = a->run->G;
  for (size_t i = 0; i < n; i++) {
    if (a->active != NULL && !a->active[i])
      continue;
    for (int k = 0; k < 3; k++)
      acc[3 * i + k] = G * out[4 * i + k];
    if (pot != NULL)
      pot[i] = G * out[4 * i + 3];
  }
  free(out);
  size_t bad = tfmm_bodies_first_nonfinite(n, a->active, acc, pot);
  if (bad < n)
    return tfmm_error_set(a->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite", bad);
  return TFMM_OK;
}

/* Packs the bodies relative to their centre in the precision of the sums
 * (floats or doubles, 4 a body) and, with eps = 0, refuses bodies that
 * meet once packed: two bodies may differ in double yet meet in float. */
static tfmm_status pack_direct(const tfmm_allpairs *a, size_t n,
                               const double *pos, const double *mass, int f64,
                               void *in) {
  double center[3] = {0, 0, 0};
  if (f64) {
    /* As run_direct_f64: the coordinates themselves. */
    tfmm_bodies_pack_f64(n, pos, mass, center, in);
    return tfmm_eps_vanishes(a->run->eps, 0) ? check_distinct(a, n, in, 4, "")
                                             : TFMM_OK;
  }
  tfmm_bodies_center(n, pos, center);
  tfmm_bodies_pack_f32(n, pos, mass, center, in);
  return tfmm_eps_vanishes(a->run->eps, 1) ? check_distinct_f32(a, n, in)
                                           : TFMM_OK;
}

/* All pairs on the GPU over the packed bodies: upload, kernel and download,
 * each a stage enqueued on the device's NEAR stream, then the wait that
 * reads their times. */
static tfmm_status direct_gpu(const tfmm_allpairs *a, size_t n,
                              tfmm_gpu_direct_params *p, tfmm_gpu_times *t) {
  const tfmm_precision prec = p->pair.precision;
  tfmm_status st = tfmm_gpu_direct_upload(a->gpu, n, prec, a->err);
  if (st == TFMM_OK)
    st = tfmm_gpu_direct_run(a->gpu, p, n, a->err);
  if (st == TFMM_OK)
    st = tfmm_gpu_direct_download(a->gpu, n, prec, a->err);
  if (st == TFMM_OK)
    st = tfmm_gpu_direct_wait(a->gpu, t, a->err);
  return st;
}

/* All pairs: on the GPU in either precision (kernels/direct_tiled.cu), on
 * the CPU in single precision here and in double in run_direct_f64. */
tfmm_status tfmm_allpairs_direct(const tfmm_allpairs *a, size_t n,
                                 const double *pos, const double *mass,
                                 double *acc, double *pot) {
  const int f64 = a->run->precision == TFMM_PRECISION_DOUBLE;
  const int gpu = a->gpu != NULL;
  if (f64 && !gpu)
    return run_direct_f64(a, n, pos, mass, acc, pot);
  double t0 = tfmm_wtime();
  void *in = NULL, *out = NULL;
  tfmm_status st = gpu ? tfmm_gpu_reserve(a->gpu, n,
                                          f64 ? TFMM_PRECISION_DOUBLE
                                              : TFMM_PRECISION_SINGLE,
                                          &in, &out, a->err)
                       : reserve_cpu(a, n);
  if (st != TFMM_OK)
    return st;
  if (!gpu) {
    in = a->scratch->in;
    out = a->scratch->out;
  }
  if ((st = pack_direct(a, n, pos, mass, f64, in)) != TFMM_OK)
    return st;
  const tfmm_pair_params pair = pair_params(a->run);
  double t1 = tfmm_wtime();
  a->stats->time[TFMM_PHASE_PREPARE] = t1 - t0;
  if (gpu) {
    tfmm_gpu_direct_params p = {a->run->gpu_tile,
                                a->run->gpu_threads_per_body,
                                a->run->gpu_unroll,
                                a->run->gpu_bodies_per_thread,
                                pair,
                                pot != NULL};
    tfmm_gpu_times t;
    if ((st = direct_gpu(a, n, &p, &t)) != TFMM_OK)
      return st;
    a->stats->time[TFMM_PHASE_UPLOAD] = t.upload;
    a->stats->time[TFMM_PHASE_NEAR] = t.kernel;
    a->stats->time[TFMM_PHASE_DOWNLOAD] = t.download;
    a->stats->gpu_tile = p.tile;
    a->stats->gpu_threads_per_body = p.threads_per_body;
    a->stats->gpu_unroll = p.unroll;
    a->stats->gpu_bodies_per_thread = p.bodies_per_thread;
  } else {
    const tfmm_soft_f32 kern =
        tfmm_soft_make_f32(pair.softening == TFMM_SOFTENING_SPLINE, pair.eps);
    if (tfmm_direct_cpu_compute(n, in, &kern, a->active, out) != 0)
      return tfmm_error_set(a->err, TFMM_ERR_NO_MEMORY,
                            "no memory for %zu bodies", n);
    a->stats->time[TFMM_PHASE_NEAR] = tfmm_wtime() - t1;
  }
  double t2 = tfmm_wtime();
  st = finish_direct(a, n, out, f64, acc, pot);
  a->stats->time[TFMM_PHASE_FINISH] = tfmm_wtime() - t2;
  return st;
}

tfmm_status tfmm_allpairs_reference_at(const tfmm_config *run, size_t n,
                                       const double *pos, const double *mass,
                                       size_t k, const size_t *targets,
                                       double *acc, double *pot,
                                       tfmm_error *err) {
  if (tfmm_eps_vanishes(run->eps, 0))
    for (size_t t = 0; t < k; t++) {
      const double *x = pos + 3 * targets[t];
      for (size_t j = 0; j < n; j++)
        if (j != targets[t] && pos[3 * j] == x[0] && pos[3 * j + 1] == x[1] &&
            pos[3 * j + 2] == x[2])
          return tfmm_error_set(err, TFMM_ERR_COINCIDENT,
                                "bodies %zu and %zu are at one point and eps "
                                "= 0: their force is infinite (set eps > 0)",
                                targets[t] < j ? targets[t] : j,
                                targets[t] < j ? j : targets[t]);
    }
  tfmm_reference_at(n, pos, mass, run->G, run->eps,
                    run->softening == TFMM_SOFTENING_SPLINE, k, targets, acc,
                    pot);
  size_t bad = tfmm_bodies_first_nonfinite(k, NULL, acc, pot);
  if (bad < k)
    return tfmm_error_set(err, TFMM_ERR_NONFINITE,
                          "target %zu (body %zu): force is not finite "
                          "(bodies nearly coincident for this eps?)",
                          bad, targets[bad]);
  return TFMM_OK;
}

void tfmm_allpairs_scratch_release(tfmm_allpairs_scratch *s) {
  free(s->in);
  free(s->out);
  *s = (tfmm_allpairs_scratch){0};
}
