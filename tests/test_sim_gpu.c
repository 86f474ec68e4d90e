/* A simulation's state on the GPU (kernels/sim/sim_gpu.h) against a plain host
 * implementation of the same steps written here: the opening kicks with
 * their new bins, the drift, the active flags and the closing kicks give
 * the host's bits (NaN counted equal to NaN), on fresh random states of
 * 1, 1000 and 2^20 + 7 bodies with bins 0..12 and accelerations from 0 to
 * beyond overflow of |a|^2, subnormal ones included. The diagnostics lie
 * within the bound sim_gpu.h states of long-double compensated sums of the
 * same definitions, and a sum that only a compensated reduction gets right
 * comes out exact. Uploads and downloads round-trip bit for bit, and a
 * snapshot is the state at its _begin while drifts run after it. Skips
 * without a GPU, except the check that creation then fails cleanly; in a
 * build without CUDA the same tests compile against
 * kernels/none/sim_gpu_none.c. */
#include "gpu.h"
#include "sim/timestep.h"
#include "sim_gpu.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

#if TFMM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* A plain copy to (to_device) or from the device's memory, as the solver
 * reads and writes the state's arrays. */
static void device_copy(void *dst, const void *src, size_t bytes,
                        int to_device) {
#if TFMM_HAVE_CUDA
  cr_assert_eq(
      cudaMemcpy(dst, src, bytes,
                 to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
      cudaSuccess);
  /* A copy from pageable memory may return before it lands (CUDA's notes
   * on API synchronisation), and the sim's stream, non-blocking, does not
   * wait for the legacy one: the kernels read the array next. */
  if (to_device)
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
#else
  (void)dst, (void)src, (void)bytes, (void)to_device;
  cr_assert_fail("no CUDA");
#endif
}

#define LARGE_N ((size_t)1 << 20) + 7

typedef struct state {
  size_t n;
  double *pos, *vel, *mass, *acc, *pot; /* 3n, 3n, n, 3n, n */
  signed char *bin;
} state;

static double *alloc_doubles(size_t count) {
  double *p = malloc(count * sizeof *p);
  cr_assert(p != NULL);
  test_poison(p, count);
  return p;
}

static state state_alloc(size_t n) {
  state s = {n,
             alloc_doubles(3 * n),
             alloc_doubles(3 * n),
             alloc_doubles(n),
             alloc_doubles(3 * n),
             alloc_doubles(n),
             malloc(n)};
  cr_assert(s.bin != NULL);
  memset(s.bin, 0x7f, n);
  return s;
}

static void state_free(state *s) {
  free(s->pos), free(s->vel), free(s->mass), free(s->acc), free(s->pot);
  free(s->bin);
}

static double uniform(test_rng *r, double lo, double hi) {
  return lo + (hi - lo) * test_uniform(r);
}

/* sign * 10^U(lo, hi) */
static double scaled(test_rng *r, double lo, double hi) {
  const double x = pow(10.0, uniform(r, lo, hi));
  return test_uniform(r) < 0.5 ? -x : x;
}

/* Accelerations that ask for every bin from below one tick to beyond 12
 * (|a| = two_eta_eps / (s tick)^2 for s = 2^U(-3, 15)), some exactly on a
 * bin's edge, and the extremes: zero vectors, zero components, |a|^2
 * overflowing, underflowing and subnormal. */
static void random_acc(test_rng *r, size_t n, double two_eta_eps, double tick,
                       double *acc) {
  for (size_t i = 0; i < n; i++) {
    double *a = acc + 3 * i;
    const double kind = test_uniform(r);
    if (kind < 0.6) {
      const double s = exp2(uniform(r, -3.0, 15.0)) * tick;
      const double mag = two_eta_eps / (s * s);
      for (int d = 0; d < 3; d++)
        a[d] = mag * uniform(r, -1.0, 1.0);
    } else if (kind < 0.7) { /* on an edge: steps = 2^k up to rounding */
      const double s = ldexp(tick, (int)uniform(r, 0.0, 15.0));
      a[0] = two_eta_eps / (s * s);
      a[1] = a[2] = 0.0;
    } else if (kind < 0.75) {
      a[0] = a[1] = a[2] = 0.0;
    } else if (kind < 0.8) {
      a[0] = scaled(r, -3, 3), a[1] = 0.0, a[2] = -0.0;
    } else if (kind < 0.85) {
      for (int d = 0; d < 3; d++)
        a[d] = scaled(r, 160, 308);
    } else if (kind < 0.9) {
      for (int d = 0; d < 3; d++)
        a[d] = scaled(r, -200, -160);
    } else if (kind < 0.95) {
      for (int d = 0; d < 3; d++)
        a[d] = scaled(r, -323, -308); /* subnormal */
    } else {
      for (int d = 0; d < 3; d++)
        a[d] = scaled(r, -6, 6);
    }
  }
}

/* A state of mixed scales: masses over 8 decades, positions and
 * velocities over 8 with both signs, bins 0..12. */
static state random_state(size_t n, test_rng *r, double two_eta_eps,
                          double tick) {
  state s = state_alloc(n);
  for (size_t i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++) {
      s.pos[3 * i + d] = scaled(r, -4, 4);
      s.vel[3 * i + d] = scaled(r, -4, 4);
    }
    s.mass[i] = pow(10.0, uniform(r, -8, 0));
    s.pot[i] = -pow(10.0, uniform(r, -3, 3));
    s.bin[i] = (signed char)(13 * test_uniform(r));
  }
  random_acc(r, n, two_eta_eps, tick, s.acc);
  return s;
}

static int same(double x, double y) {
  return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y));
}

static void assert_same(const double *gpu, const double *host, size_t count,
                        const char *what, uint64_t seed) {
  for (size_t k = 0; k < count; k++)
    cr_assert(same(gpu[k], host[k]),
              "seed %llu: %s[%zu]: GPU %a, host %a (%.17g, %.17g)",
              (unsigned long long)seed, what, k, gpu[k], host[k], gpu[k],
              host[k]);
}

/* ---- The host implementation the GPU is checked against ---------------- */

static double half_step(int bin, double tick) {
  return 0.5 * (ldexp(1.0, bin) * tick);
}

static void host_open(state *s, int sync_bin, int individual,
                      double two_eta_eps, double tick, int limit, int *min_bin,
                      int64_t *shorts) {
  *min_bin = 127;
  *shorts = 0;
  for (size_t i = 0; i < s->n; i++) {
    int b = s->bin[i];
    if (b <= sync_bin) {
      double *a = s->acc + 3 * i, *v = s->vel + 3 * i;
      if (individual) {
        int short_step = 0;
        b = tfmm_timestep_bin(a[0], a[1], a[2], two_eta_eps, tick, limit,
                              &short_step);
        *shorts += short_step;
        s->bin[i] = (signed char)b;
      }
      const double h = half_step(b, tick);
      for (int d = 0; d < 3; d++)
        v[d] += h * a[d];
    }
    *min_bin = b < *min_bin ? b : *min_bin;
  }
}

static void host_drift(state *s, double h) {
  for (size_t k = 0; k < 3 * s->n; k++)
    s->pos[k] += h * s->vel[k];
}

static size_t host_activate(size_t n, const signed char *bin, int active_bin,
                            unsigned char *active) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    active[i] = bin[i] <= active_bin;
    count += active[i];
  }
  return count;
}

static void host_close(state *s, int active_bin, double tick) {
  for (size_t i = 0; i < s->n; i++)
    if (s->bin[i] <= active_bin)
      for (int d = 0; d < 3; d++)
        s->vel[3 * i + d] += half_step(s->bin[i], tick) * s->acc[3 * i + d];
}

/* A device context on device 0 (gpu.h), which the state's arrays and
 * streams come from. */
static tfmm_gpu *open_context(void) {
  tfmm_error err = {{0}};
  tfmm_gpu *ctx = NULL;
  cr_assert_eq(tfmm_gpu_create(&ctx, 0, &err), TFMM_OK, "%s", err.message);
  return ctx;
}

/* s on the GPU, in a context of its own (*ctx). */
static tfmm_sim_gpu *make(const state *s, uint64_t seed, tfmm_gpu **ctx) {
  tfmm_error err = {{0}};
  tfmm_sim_gpu *g = NULL;
  *ctx = open_context();
  cr_assert_eq(tfmm_sim_gpu_create(&g, *ctx, s->n, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(tfmm_sim_gpu_upload(g, s->pos, s->vel, s->mass, s->acc, s->pot,
                                   s->bin, &err),
               TFMM_OK, "seed %llu: %s", (unsigned long long)seed, err.message);
  return g;
}

/* The state, then the context it lives in. */
static void release(tfmm_sim_gpu *g, tfmm_gpu *ctx) {
  tfmm_sim_gpu_destroy(g);
  tfmm_gpu_destroy(ctx);
}

/* The GPU's state against the host's, bit for bit. */
static void compare_state(tfmm_sim_gpu *g, const state *s, uint64_t seed,
                          const char *when) {
  tfmm_error err = {{0}};
  state d = state_alloc(s->n);
  cr_assert_eq(
      tfmm_sim_gpu_download(g, d.pos, d.vel, d.acc, d.pot, d.bin, &err),
      TFMM_OK, "%s", err.message);
  char what[64];
  snprintf(what, sizeof what, "%s: pos", when);
  assert_same(d.pos, s->pos, 3 * s->n, what, seed);
  snprintf(what, sizeof what, "%s: vel", when);
  assert_same(d.vel, s->vel, 3 * s->n, what, seed);
  for (size_t i = 0; i < s->n; i++)
    cr_assert_eq(d.bin[i], s->bin[i], "seed %llu: %s: bin[%zu]: GPU %d host %d",
                 (unsigned long long)seed, when, i, d.bin[i], s->bin[i]);
  state_free(&d);
}

/* Cycles of open, drift, activate, close with fresh parameters, fresh
 * accelerations written into the device array as the solver would. */
static void check_steps(size_t n) {
  const uint64_t seed = test_fresh_seed();
  test_rng r = {seed};
  double tick = ldexp(1.0 + test_uniform(&r), -(int)uniform(&r, 5, 25));
  double two_eta_eps = 2 * 0.025 * pow(10.0, uniform(&r, -4, -1));
  state s = random_state(n, &r, two_eta_eps, tick);
  tfmm_gpu *ctx = NULL;
  tfmm_sim_gpu *g = make(&s, seed, &ctx);
  unsigned char *active = malloc(n), *d_active = malloc(n);
  tfmm_error err = {{0}};
  for (int cycle = 0; cycle < 6; cycle++) {
    const int sync_bin = (int)uniform(&r, -1, 14);
    const int individual = cycle % 3 != 2;
    const int limit = (int)uniform(&r, 0, 13);
    int min_bin = -1, min_ref;
    int64_t shorts = -1, shorts_ref;
    host_open(&s, sync_bin, individual, two_eta_eps, tick, limit, &min_ref,
              &shorts_ref);
    cr_assert_eq(tfmm_sim_gpu_open(g, sync_bin, individual, two_eta_eps, tick,
                                   limit, &min_bin, &shorts, &err),
                 TFMM_OK, "%s", err.message);
    cr_assert_eq(min_bin, min_ref, "seed %llu cycle %d: min bin %d, host %d",
                 (unsigned long long)seed, cycle, min_bin, min_ref);
    cr_assert_eq(shorts, shorts_ref, "seed %llu cycle %d: shorts %lld, %lld",
                 (unsigned long long)seed, cycle, (long long)shorts,
                 (long long)shorts_ref);
    compare_state(g, &s, seed, "open");
    const double h = scaled(&r, -6, 0);
    host_drift(&s, h);
    cr_assert_eq(tfmm_sim_gpu_drift(g, h, &err), TFMM_OK, "%s", err.message);
    const int active_bin = (int)uniform(&r, -1, 14);
    const size_t count_ref = host_activate(n, s.bin, active_bin, active);
    size_t count = (size_t)-1;
    cr_assert_eq(tfmm_sim_gpu_activate(g, active_bin, &count, &err), TFMM_OK,
                 "%s", err.message);
    cr_assert_eq(count, count_ref, "seed %llu: %zu active, host %zu",
                 (unsigned long long)seed, count, count_ref);
    device_copy(d_active, tfmm_sim_gpu_active(g), n, 0);
    cr_assert(memcmp(d_active, active, n) == 0, "seed %llu: active flags",
              (unsigned long long)seed);
    random_acc(&r, n, two_eta_eps, tick, s.acc); /* the "forces" */
    device_copy(tfmm_sim_gpu_acc(g), s.acc, 3 * n * sizeof(double), 1);
    host_close(&s, active_bin, tick);
    cr_assert_eq(tfmm_sim_gpu_close(g, active_bin, tick, &err), TFMM_OK, "%s",
                 err.message);
    compare_state(g, &s, seed, "close");
  }
  free(active);
  free(d_active);
  release(g, ctx);
  state_free(&s);
}

Test(sim_gpu, steps_small) {
  test_require_gpu();
  check_steps(1);
  check_steps(7);
  check_steps(1000);
}

Test(sim_gpu, steps_large) {
  test_require_gpu();
  check_steps(LARGE_N);
}

Test(sim_gpu, roundtrip) {
  test_require_gpu();
  const size_t sizes[] = {1, 1000, LARGE_N};
  for (int k = 0; k < 3; k++) {
    const uint64_t seed = test_fresh_seed();
    test_rng r = {seed};
    const size_t n = sizes[k];
    state s = random_state(n, &r, 1e-3, 1e-4);
    tfmm_gpu *ctx = NULL;
    tfmm_sim_gpu *g = make(&s, seed, &ctx);
    cr_assert_eq(tfmm_sim_gpu_count(g), n);
    compare_state(g, &s, seed, "upload");
    state d = state_alloc(n);
    tfmm_error err = {{0}};
    cr_assert_eq(tfmm_sim_gpu_download(g, NULL, NULL, d.acc, d.pot, NULL, &err),
                 TFMM_OK, "%s", err.message);
    cr_assert(memcmp(d.acc, s.acc, 3 * n * sizeof(double)) == 0);
    cr_assert(memcmp(d.pot, s.pot, n * sizeof(double)) == 0);
    /* Without forces and bins: NaN forces, bins 0, nothing active. */
    cr_assert_eq(
        tfmm_sim_gpu_upload(g, s.pos, s.vel, s.mass, NULL, NULL, NULL, &err),
        TFMM_OK, "%s", err.message);
    memset(d.bin, 0x55, n);
    cr_assert_eq(
        tfmm_sim_gpu_download(g, d.pos, NULL, d.acc, d.pot, d.bin, &err),
        TFMM_OK, "%s", err.message);
    cr_assert(memcmp(d.pos, s.pos, 3 * n * sizeof(double)) == 0);
    for (size_t i = 0; i < n; i++) {
      cr_assert(isnan(d.acc[3 * i]) && isnan(d.acc[3 * i + 2]) &&
                isnan(d.pot[i]));
      cr_assert_eq(d.bin[i], 0);
    }
    double *m = alloc_doubles(n);
    device_copy(m, tfmm_sim_gpu_mass(g), n * sizeof(double), 0);
    cr_assert(memcmp(m, s.mass, n * sizeof(double)) == 0);
    size_t count = 1;
    cr_assert_eq(tfmm_sim_gpu_activate(g, -1, &count, &err), TFMM_OK);
    cr_assert_eq(count, 0);
    free(m);
    state_free(&d);
    state_free(&s);
    release(g, ctx);
  }
}

/* Snapshots: the state at _begin, while drifts are queued right after it
 * on the same stream; a second _begin before the first is waited for. */
Test(sim_gpu, snapshot) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  test_rng r = {seed};
  const size_t n = LARGE_N;
  state s = random_state(n, &r, 1e-3, 1e-4);
  for (size_t k = 0; k < 3 * n; k++) /* finite all through */
    s.acc[k] = scaled(&r, -3, 3);
  tfmm_gpu *ctx = NULL;
  tfmm_sim_gpu *g = make(&s, seed, &ctx);
  tfmm_error err = {{0}};
  const double *pos, *vel, *acc, *pot;
  const signed char *bin;
  cr_assert_eq(
      tfmm_sim_gpu_snapshot_wait(g, &pos, &vel, &acc, &pot, &bin, &err),
      TFMM_ERR_INVALID_ARGUMENT);
  for (int round = 0; round < 2; round++) {
    cr_assert_eq(tfmm_sim_gpu_snapshot_begin(g, &err), TFMM_OK, "%s",
                 err.message);
    state before = state_alloc(n);
    memcpy(before.pos, s.pos, 3 * n * sizeof(double));
    memcpy(before.vel, s.vel, 3 * n * sizeof(double));
    for (int k = 0; k < 20; k++) {
      cr_assert_eq(tfmm_sim_gpu_drift(g, 0.25, &err), TFMM_OK);
      cr_assert_eq(tfmm_sim_gpu_close(g, 12, 1e-3, &err), TFMM_OK);
      host_drift(&s, 0.25);
      host_close(&s, 12, 1e-3);
      if (round == 1 && k == 9) /* a second snapshot, the first unwaited */
        cr_assert_eq(tfmm_sim_gpu_snapshot_begin(g, &err), TFMM_OK);
      if (round == 1 && k == 9) {
        memcpy(before.pos, s.pos, 3 * n * sizeof(double));
        memcpy(before.vel, s.vel, 3 * n * sizeof(double));
      }
    }
    cr_assert_eq(
        tfmm_sim_gpu_snapshot_wait(g, &pos, &vel, &acc, &pot, &bin, &err),
        TFMM_OK, "%s", err.message);
    assert_same(pos, before.pos, 3 * n, "snapshot pos", seed);
    assert_same(vel, before.vel, 3 * n, "snapshot vel", seed);
    cr_assert(memcmp(acc, s.acc, 3 * n * sizeof(double)) == 0);
    cr_assert(memcmp(pot, s.pot, n * sizeof(double)) == 0);
    cr_assert(memcmp(bin, s.bin, n) == 0);
    compare_state(g, &s, seed, "after the snapshot");
    state_free(&before);
  }
  release(g, ctx);
  state_free(&s);
}

/* ---- Diagnostics ---------------------------------------------------------
 * The truth: each body's terms in long double (64-bit significand: each
 * product and sum 2^-64 relative, 2048 times finer than double), summed
 * with Neumaier's compensation, so that its own error is negligible next
 * to the bound. The bound (sim_gpu.h): |S_gpu - S| <= TERM u sum_i |t_i|
 * + SUM u |S|, u = 2^-53, where |t_i| is the term's magnitude: |m| for the
 * mass, |t_i| for the kinetic energy (whose t_i carries at most 4
 * roundings: 3 in v.v of non-negative products, 1 times m; 0.5 m is
 * exact), the potential, the momentum and m x (1 rounding each), and
 * |m| (|x_1 v_2| + |x_2 v_1|) for a component of m x cross v (3
 * roundings: both products, their difference, times m). So the terms
 * contribute at most 4 u sum |t_i|; TwoSum adds nothing to s, the final
 * s + c one rounding (u |S|), and the sums of the c's O(n u^2 sum |t_i|):
 * TERM = 6 and SUM = 2 leave a margin of u sum |t_i| + u |S| over them. */

typedef struct ld_sum {
  long double sum, comp;
} ld_sum;

static void ld_add(ld_sum *k, long double x) {
  const long double t = k->sum + x;
  if (fabsl(k->sum) >= fabsl(x))
    k->comp += (k->sum - t) + x;
  else
    k->comp += (x - t) + k->sum;
  k->sum = t;
}

enum { Q_MASS, Q_KIN, Q_POT, Q_P = 3, Q_L = 6, Q_X = 9, Q_COUNT = 12 };

typedef struct truth {
  long double value[Q_COUNT], bound[Q_COUNT];
} truth;

static truth true_sums(const state *s) {
  ld_sum sum[Q_COUNT] = {{0}};
  long double mag[Q_COUNT] = {0};
  for (size_t i = 0; i < s->n; i++) {
    const long double m = s->mass[i], phi = s->pot[i];
    long double x[3], v[3], t[Q_COUNT], a[Q_COUNT];
    for (int d = 0; d < 3; d++) {
      x[d] = s->pos[3 * i + d];
      v[d] = s->vel[3 * i + d];
    }
    t[Q_MASS] = m;
    t[Q_KIN] = 0.5L * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    t[Q_POT] = 0.5L * m * phi;
    for (int d = 0; d < 3; d++) {
      const int e = (d + 1) % 3, f = (d + 2) % 3;
      t[Q_P + d] = m * v[d];
      t[Q_X + d] = m * x[d];
      t[Q_L + d] = m * (x[e] * v[f] - x[f] * v[e]);
      a[Q_L + d] = fabsl(m) * (fabsl(x[e] * v[f]) + fabsl(x[f] * v[e]));
    }
    for (int q = 0; q < Q_COUNT; q++) {
      ld_add(&sum[q], t[q]);
      mag[q] += q >= Q_L && q < Q_X ? a[q] : fabsl(t[q]);
    }
  }
  truth r;
  const long double u = DBL_EPSILON / 2;
  for (int q = 0; q < Q_COUNT; q++) {
    r.value[q] = sum[q].sum + sum[q].comp;
    r.bound[q] = TFMM_SIM_GPU_DIAG_TERM * u * mag[q] +
                 TFMM_SIM_GPU_DIAG_SUM * u * fabsl(r.value[q]);
  }
  return r;
}

/* How far into its bound a value is (> 1: out of it). */
static double used(double gpu, long double exact, long double bound) {
  const long double dev = fabsl((long double)gpu - exact);
  return dev == 0 ? 0.0 : (double)(bound > 0 ? dev / bound : INFINITY);
}

static void check_diagnostics(size_t n) {
  const uint64_t seed = test_fresh_seed();
  test_rng r = {seed};
  state s = random_state(n, &r, 1e-3, 1e-4);
  tfmm_gpu *ctx = NULL;
  tfmm_sim_gpu *g = make(&s, seed, &ctx);
  tfmm_diagnostics d, again;
  tfmm_error err = {{0}};
  test_poison((double *)&d, sizeof d / sizeof(double));
  cr_assert_eq(tfmm_sim_gpu_diagnostics(g, &d, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(tfmm_sim_gpu_diagnostics(g, &again, &err), TFMM_OK);
  cr_assert(memcmp(&d, &again, sizeof d) == 0, "seed %llu: not reproducible",
            (unsigned long long)seed);
  const truth t = true_sums(&s);
  const long double u = DBL_EPSILON / 2;
  double worst = 0;
  const struct {
    const char *name;
    double gpu;
    int q;
  } sums[] = {{"mass", d.mass, Q_MASS},
              {"kinetic", d.kinetic, Q_KIN},
              {"potential", d.potential, Q_POT},
              {"P_x", d.momentum[0], Q_P},
              {"P_y", d.momentum[1], Q_P + 1},
              {"P_z", d.momentum[2], Q_P + 2},
              {"L_x", d.angular_momentum[0], Q_L},
              {"L_y", d.angular_momentum[1], Q_L + 1},
              {"L_z", d.angular_momentum[2], Q_L + 2}};
  for (size_t k = 0; k < sizeof sums / sizeof sums[0]; k++) {
    const double f = used(sums[k].gpu, t.value[sums[k].q], t.bound[sums[k].q]);
    worst = f > worst ? f : worst;
    cr_assert(f <= 1.0, "seed %llu n %zu: %s %.17g, true %.20Lg, bound %Lg",
              (unsigned long long)seed, n, sums[k].name, sums[k].gpu,
              t.value[sums[k].q], t.bound[sums[k].q]);
  }
  /* What follows from the sums: E = K + W (one more rounding), 2K/|W| and
   * X/M (to first order in the sums' bounds, one more rounding each). */
  const long double K = t.value[Q_KIN], W = t.value[Q_POT];
  const long double M = t.value[Q_MASS];
  const long double E = K + W, ratio = 2 * K / fabsl(W);
  double f = used(d.total, E, t.bound[Q_KIN] + t.bound[Q_POT] + u * fabsl(E));
  cr_assert(f <= 1.0, "seed %llu: total %.17g true %.20Lg",
            (unsigned long long)seed, d.total, E);
  worst = f > worst ? f : worst;
  f = used(d.virial_ratio, ratio,
           (2 * t.bound[Q_KIN] + ratio * t.bound[Q_POT]) / fabsl(W) +
               2 * u * ratio);
  cr_assert(f <= 1.0, "seed %llu: virial ratio %.17g true %.20Lg",
            (unsigned long long)seed, d.virial_ratio, ratio);
  worst = f > worst ? f : worst;
  for (int k = 0; k < 3; k++) {
    const long double com = t.value[Q_X + k] / M;
    f = used(d.centre_of_mass[k], com,
             (t.bound[Q_X + k] + fabsl(com) * t.bound[Q_MASS]) / M +
                 u * fabsl(com));
    cr_assert(f <= 1.0, "seed %llu: centre of mass %d: %.17g true %.20Lg",
              (unsigned long long)seed, k, d.centre_of_mass[k], com);
    worst = f > worst ? f : worst;
  }
  fprintf(stderr,
          "sim_gpu diagnostics, n = %zu: largest error %.3g of the bound\n", n,
          worst);
  release(g, ctx);
  state_free(&s);
}

Test(sim_gpu, diagnostics_bound) {
  test_require_gpu();
  check_diagnostics(1);
  check_diagnostics(1000);
  check_diagnostics(LARGE_N);
}

/* Terms +-2^60 that cancel, and 2^17 small integers between them in a
 * random order: every term and every partial sum's rounding error is an
 * integer, so the compensated sum is exact, and an uncompensated one loses
 * the small terms added onto 2^60 (whose ulp is 256). */
Test(sim_gpu, diagnostics_compensated) {
  test_require_gpu();
  const uint64_t seed = test_fresh_seed();
  test_rng r = {seed};
  const size_t n = ((size_t)1 << 17) + 3;
  state s = state_alloc(n);
  double exact_p = 0, exact_x = 0; /* integers below 2^53: exact */
  for (size_t i = 0; i < n; i++) {
    s.mass[i] = 1.0;
    s.pot[i] = -1.0;
    s.bin[i] = 0;
    for (int d = 0; d < 3; d++) {
      s.vel[3 * i + d] = (double)(int)uniform(&r, -50, 51);
      s.pos[3 * i + d] = (double)(int)uniform(&r, -50, 51);
      s.acc[3 * i + d] = 0.0;
    }
    exact_p += s.vel[3 * i];
    exact_x += s.pos[3 * i];
  }
  /* Four bodies, a quarter of the bodies apart from a random one, get
   * +2^60, -2^60, +2^61, -2^61. */
  const size_t first = (size_t)((double)n * test_uniform(&r));
  for (int k = 0; k < 4; k++) {
    const size_t i = (first + (size_t)k * (n / 4 + 1)) % n;
    exact_p -= s.vel[3 * i];
    exact_x -= s.pos[3 * i];
    s.vel[3 * i] = (k % 2 ? -1.0 : 1.0) * ldexp(1.0, 60 + k / 2);
    s.pos[3 * i] = -s.vel[3 * i];
  }
  tfmm_gpu *ctx = NULL;
  tfmm_sim_gpu *g = make(&s, seed, &ctx);
  tfmm_diagnostics d;
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_sim_gpu_diagnostics(g, &d, &err), TFMM_OK, "%s",
               err.message);
  cr_assert_eq(d.mass, (double)n);
  cr_assert_eq(d.momentum[0], exact_p, "seed %llu: P_x %.17g, exact %.17g",
               (unsigned long long)seed, d.momentum[0], exact_p);
  cr_assert_eq(d.centre_of_mass[0], exact_x / (double)n,
               "seed %llu: X %.17g, exact %.17g", (unsigned long long)seed,
               d.centre_of_mass[0] * (double)n, exact_x);
  release(g, ctx);
  state_free(&s);
}

/* Arguments refused with TFMM_ERR_INVALID_ARGUMENT and a message, the
 * object left usable. */
Test(sim_gpu, refuses) {
  test_require_gpu();
  const tfmm_status bad = TFMM_ERR_INVALID_ARGUMENT;
  tfmm_error err = {{0}};
  tfmm_sim_gpu *g = (tfmm_sim_gpu *)&err, *second = (tfmm_sim_gpu *)&err;
  cr_assert_eq(tfmm_sim_gpu_create(&g, NULL, 5, &err), bad);
  cr_assert_null(g);
  cr_assert_eq(tfmm_sim_gpu_drift(NULL, 1.0, &err), bad);
  test_rng r = {test_fresh_seed()};
  state s = random_state(5, &r, 1e-3, 1e-4);
  tfmm_gpu *ctx = NULL;
  g = make(&s, 0, &ctx);
  /* No bodies, and a second state in the context that holds g. */
  cr_assert_eq(tfmm_sim_gpu_create(&second, ctx, 0, &err), bad);
  cr_assert_null(second);
  err.message[0] = '\0';
  cr_assert_eq(tfmm_sim_gpu_create(&second, ctx, 5, &err), bad);
  cr_assert_null(second);
  cr_assert(strstr(err.message, "already") != NULL, "%s", err.message);
  const signed char bin3 = s.bin[3];
  s.bin[3] = TFMM_TIMESTEP_MAX_BIN + 1;
  err.message[0] = '\0';
  cr_assert_eq(
      tfmm_sim_gpu_upload(g, s.pos, s.vel, s.mass, NULL, NULL, s.bin, &err),
      bad);
  cr_assert(strstr(err.message, "body 3") != NULL, "%s", err.message);
  s.bin[3] = -1;
  cr_assert_eq(
      tfmm_sim_gpu_upload(g, s.pos, s.vel, s.mass, NULL, NULL, s.bin, &err),
      bad);
  cr_assert_eq(
      tfmm_sim_gpu_upload(g, NULL, s.vel, s.mass, NULL, NULL, NULL, &err), bad);
  int mb;
  int64_t sh;
  cr_assert_eq(tfmm_sim_gpu_open(g, 0, 1, 1e-3, 0.0, 3, &mb, &sh, &err), bad);
  cr_assert_eq(tfmm_sim_gpu_open(g, 0, 1, 1e-3, NAN, 3, &mb, &sh, &err), bad);
  cr_assert_eq(tfmm_sim_gpu_open(g, 0, 1, 1e-3, 1e-3, 41, &mb, &sh, &err), bad);
  cr_assert_eq(tfmm_sim_gpu_open(g, 0, 1, -1.0, 1e-3, 3, &mb, &sh, &err), bad);
  cr_assert_eq(tfmm_sim_gpu_close(g, 0, INFINITY, &err), bad);
  cr_assert_eq(tfmm_sim_gpu_drift(g, NAN, &err), bad);
  cr_assert_eq(tfmm_sim_gpu_diagnostics(g, NULL, &err), bad);
  cr_assert_eq(
      tfmm_sim_gpu_snapshot_wait(g, NULL, NULL, NULL, NULL, NULL, &err), bad);
  cr_assert(strlen(err.message) > 0);
  /* Nothing was copied: the state is the one uploaded first. */
  s.bin[3] = bin3;
  compare_state(g, &s, 0, "after the refusals");
  release(g, ctx);
  state_free(&s);
}
