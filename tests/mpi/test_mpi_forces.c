/* Forces over several processes (tfmm_solver_create_mpi) against one
 * process and against the double-precision reference, on clustered and
 * degenerate inputs with fresh seeds and softening from 0 to the size of
 * the structures. Run under mpirun -np 1, 2, 4 (tests/CMakeLists.txt).
 *
 * Each rank makes the whole input from the common seed and is given an
 * arbitrary share of it (body i to rank hash(i) mod P, not a spatial
 * block), so that the split and the moves to the owners are exercised. */
#include "mpi_check.h"
#include "sample_quantile.h"

/* Bodies compared with the reference, at most: 4000 of 20000 judge a p99
 * by the 74th largest error (sample_quantile.h), and cost a fifth of the
 * reference at all of them. */
#define SAMPLE_BODIES 4000

/* k of the n bodies drawn at random without replacement (a partial
 * Fisher-Yates shuffle driven by splitmix64 from seed), marked 1; all of
 * them when k >= n. The same on every rank. Free the result. */
static unsigned char *sample_bodies(size_t n, size_t k, uint64_t seed) {
  unsigned char *chosen = calloc(n + 1, 1);
  if (k >= n) {
    memset(chosen, 1, n);
    return chosen;
  }
  size_t *perm = malloc(n * sizeof *perm);
  for (size_t i = 0; i < n; i++)
    perm[i] = i;
  uint64_t x = seed ^ 0x53414D504C45ull; /* "SAMPLE" */
  for (size_t i = 0; i < k; i++) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const size_t j = i + (size_t)(z % (uint64_t)(n - i));
    const size_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    chosen[perm[i]] = 1;
  }
  free(perm);
  return chosen;
}

static void run(const input *in, tfmm_method method, uint64_t seed, int rank,
                int size) {
  share sh = mpi_share_make(in, seed, rank, size, 0);
  const size_t n = sh.n, m = sh.m;
  const double *pos = sh.pos, *mass = sh.mass, *mp = sh.mp, *mm = sh.mm;
  const size_t *idx = sh.idx;
  double *acc = malloc((3 * m + 1) * sizeof *acc),
         *pot = malloc((m + 1) * sizeof *pot);
  for (size_t k = 0; k < m; k++)
    acc[3 * k] = pot[k] = NAN; /* poisoned */
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.eps = in->eps;
  cfg.method = method;
  /* TFMM_TEST_DEVICE=gpu: one GPU per rank (the device run). */
  const char *dev = getenv("TFMM_TEST_DEVICE");
  cfg.device = dev != NULL && strcmp(dev, "gpu") == 0 ? TFMM_DEVICE_GPU
                                                      : TFMM_DEVICE_CPU;
  if (method == TFMM_METHOD_DIRECT)
    cfg.precision = TFMM_PRECISION_DOUBLE;
  tfmm_solver *dist = NULL, *one = NULL;
  tfmm_status st = tfmm_solver_create_mpi(&dist, &cfg, MPI_COMM_WORLD);
  CHECK(st == TFMM_OK, "create_mpi: %s", tfmm_solver_message(dist));
  st = tfmm_solver_compute(dist, m, mp, mm, acc, pot);
  CHECK(st == TFMM_OK, "%s: %s", in->name, tfmm_solver_message(dist));
  CHECK(tfmm_solver_ranks(dist) == size, "ranks %d", tfmm_solver_ranks(dist));
  const tfmm_dist_stats *ds = tfmm_solver_dist_stats(dist);
  /* One process on all bodies, at this rank's share, at the setting the
   * ranks evaluated at (their planner's choice, the same on every rank), so
   * that the difference is the decomposition's. With its own planner the
   * one process could take another setting of p99 just under the target
   * (a 95 % bound): a plane of 12,000 bodies differed by 1.1e-3 while the
   * ranks were 3.7e-5 from the truth (seed 4766965472497236687). */
  tfmm_config one_cfg = cfg;
  one_cfg.measure = TFMM_MEASURE_OFF;
  if (method != TFMM_METHOD_DIRECT) {
    one_cfg.theta = tfmm_solver_stats(dist)->theta;
    one_cfg.order = tfmm_solver_stats(dist)->order;
  }
  tfmm_solver_create(&one, &one_cfg);
  double *a1 = malloc(3 * n * sizeof *a1), *p1 = malloc(n * sizeof *p1);
  st = tfmm_solver_compute(one, n, pos, mass, a1, p1);
  CHECK(st == TFMM_OK, "one process: %s", tfmm_solver_message(one));
  double *vs_one = malloc((m + 1) * sizeof *vs_one);
  double *pot_one = malloc((m + 1) * sizeof *pot_one);
  for (size_t k = 0; k < m; k++) {
    vs_one[k] = rel3(acc + 3 * k, a1 + 3 * idx[k]);
    pot_one[k] = fabs(pot[k] - p1[idx[k]]) / fabs(p1[idx[k]]);
  }
  /* The reference at a random sample of the bodies, the same draw on every
   * rank (each computes its own share of it): every body when n <=
   * SAMPLE_BODIES. */
  unsigned char *chosen = sample_bodies(n, SAMPLE_BODIES, seed);
  size_t k_ref = 0;
  size_t *at = malloc((m + 1) * sizeof *at),
         *targets = malloc((m + 1) * sizeof *targets);
  for (size_t k = 0; k < m; k++)
    if (chosen[idx[k]]) {
      at[k_ref] = k;
      targets[k_ref++] = idx[k];
    }
  double *aref = malloc((3 * k_ref + 1) * sizeof *aref);
  double *pref = malloc((k_ref + 1) * sizeof *pref);
  st = tfmm_solver_reference_at(one, n, pos, mass, k_ref, targets, aref, pref);
  CHECK(st == TFMM_OK, "reference: %s", tfmm_solver_message(one));
  double *vs_ref = malloc((k_ref + 1) * sizeof *vs_ref);
  for (size_t k = 0; k < k_ref; k++)
    vs_ref[k] = rel3(acc + 3 * at[k], aref + 3 * k);
  /* The promise is a 99th percentile over all n bodies: judged from the
   * sample with a false-failure chance of at most SAMPLE_FALSE_FAILURE
   * (sample_quantile.h), not by the sample's own 99th percentile. */
  int sampled;
  double *ref_sorted = mpi_gather_sorted(vs_ref, (int)k_ref, &sampled);
  const size_t allowed =
      sample_allowed_above(n, (size_t)sampled, 0.99, SAMPLE_FALSE_FAILURE);
  const double ref_judged =
      sample_judged(ref_sorted, n, (size_t)sampled, 0.99, SAMPLE_FALSE_FAILURE);
  const double ref_max = sampled > 0 ? ref_sorted[sampled - 1] : NAN;
  const double one_p99 = mpi_quantile(vs_one, (int)m, 0.99);
  const double one_max = mpi_quantile(vs_one, (int)m, 1.0);
  const double pot_max = mpi_quantile(pot_one, (int)m, 1.0);
  if (rank == 0)
    printf("%-9s n %zu eps %-5g %-6s ranks %d: vs one process p99 %.2e max "
           "%.2e (pot %.2e); vs reference at %d bodies: no. %zu from the top "
           "%.2e, "
           "max %.2e; rank 0 owned %zu, ghosts %zu, multipoles %zu, "
           "imbalance %.2f\n",
           in->name, n, in->eps, tfmm_method_name(method), size, one_p99,
           one_max, pot_max, sampled, allowed + 1, ref_judged, ref_max,
           ds->owned, ds->ghosts, ds->let_cells, ds->imbalance);
  if (method == TFMM_METHOD_DIRECT) {
    /* Every body reaches every rank: the same sums to rounding. */
    CHECK(one_max < 1e-12, "%s direct: max %.3e vs one process", in->name,
          one_max);
    CHECK(pot_max < 1e-12, "%s direct: pot max %.3e", in->name, pot_max);
  } else {
    /* Within the accuracy asked for (the default, 1e-3 at p99) of the
     * truth; of one process at the same setting, within twice it: the
     * planner takes settings whose p99 is near the target, and the two
     * trees' errors differ (the ranks' plummer at 20,000 bodies: 4.7e-4
     * from one process at the ranks' setting, 1.9e-4 from the truth). */
    CHECK(one_p99 <= 2 * cfg.accuracy, "%s: p99 %.3e vs one process > %.1e",
          in->name, one_p99, 2 * cfg.accuracy);
    CHECK(allowed < (size_t)sampled, "%s: %d bodies cannot judge a p99",
          in->name, sampled);
    CHECK(ref_judged <= cfg.accuracy,
          "%s: vs reference, more than %zu of %d sampled bodies above %.1e "
          "(no. %zu from the top %.3e)",
          in->name, allowed, sampled, cfg.accuracy, allowed + 1, ref_judged);
  }
  tfmm_solver_destroy(dist);
  tfmm_solver_destroy(one);
  mpi_share_free(&sh);
  free(acc), free(pot);
  free(a1), free(p1), free(vs_one), free(pot_one), free(targets), free(aref);
  free(pref), free(vs_ref), free(chosen), free(at), free(ref_sorted);
}

/* The locally essential trees carry Newton's multipoles: the softened far
 * field is refused over ranks, by name (every rank agreeing), and auto
 * runs Newton's there. */
static void softened_refused(void) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.device = TFMM_DEVICE_CPU;
  cfg.eps = 0.01;
  cfg.far_kernel = TFMM_FAR_KERNEL_SOFTENED;
  tfmm_solver *s = NULL;
  const tfmm_status st = tfmm_solver_create_mpi(&s, &cfg, MPI_COMM_WORLD);
  CHECK(st == TFMM_ERR_INVALID_ARGUMENT, "softened over ranks: status %d",
        (int)st);
  CHECK(s != NULL && strstr(tfmm_solver_message(s), "far_kernel softened") &&
            strstr(tfmm_solver_message(s), "MPI"),
        "softened over ranks: message '%s'",
        s != NULL ? tfmm_solver_message(s) : "(none)");
  tfmm_solver_destroy(s);
}

/* The error measured over the ranks (measure always, verify:
 * src/domain/measure_ranks.c) against the truth summed here in double:
 * with every body sampled, the population's p99, median and max (the
 * worst body its index in rank order), the same on every rank; with the
 * default sample, a p99 between the population's 90th percentile and its
 * max; verify failing at a target the setting misses, by name, and
 * passing at one a tighter setting meets (theta 0.3, p 8 at 1e-2). A loose
 * setting (theta 0.8, p 4) on a Hernquist cusp, so that the errors are far from
 * rounding. */
static void measured_over_ranks(uint64_t seed, int rank, int size) {
  const input in = {"hernquist", 6000, 0.0};
  share sh = mpi_share_make(&in, seed, rank, size, 1);
  const size_t n = sh.n, m = sh.m;
  const double *mp = sh.mp, *mm = sh.mm;
  const double *truth = sh.aref;
  double *acc = malloc((3 * m + 1) * sizeof *acc),
         *e = malloc((m + 1) * sizeof *e);
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.device = TFMM_DEVICE_CPU;
  /* Where this rank's bodies start in rank order. */
  long long mine = (long long)m, first = 0;
  MPI_Exscan(&mine, &first, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    first = 0;
  cfg.theta = 0.8;
  cfg.order = 4;
  cfg.measure = TFMM_MEASURE_ALWAYS;
  for (int every = 1; every >= 0; every--) {
    cfg.error_sample = every ? (int)n : 0;
    tfmm_solver *dist = NULL;
    tfmm_status st = tfmm_solver_create_mpi(&dist, &cfg, MPI_COMM_WORLD);
    CHECK(st == TFMM_OK, "measured: create_mpi: %s", tfmm_solver_message(dist));
    st = tfmm_solver_compute(dist, m, mp, mm, acc, NULL);
    CHECK(st == TFMM_OK, "measured: %s", tfmm_solver_message(dist));
    const tfmm_stats *s = tfmm_solver_stats(dist);
    double worst_here = -1;
    for (size_t k = 0; k < m; k++) {
      e[k] = rel3(acc + 3 * k, truth + 3 * k);
      if (s->error.worst_body == first + (long long)k)
        worst_here = e[k];
    }
    const double p90 = mpi_quantile(e, (int)m, 0.90),
                 p50 = mpi_quantile(e, (int)m, 0.50),
                 p99 = mpi_quantile(e, (int)m, 0.99),
                 max = mpi_quantile(e, (int)m, 1.0);
    double worst = worst_here, got[2] = {s->error.p99, -s->error.p99};
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, got, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
      printf("measured over %d ranks, %s: p99 %.4e (truth %.4e), median "
             "%.4e (%.4e), max %.4e (%.4e; the worst body's %.4e), %zu "
             "sampled, confidence %.2f\n",
             size, every ? "every body" : "the default sample", s->error.p99,
             p99, s->error.median, p50, s->error.max, max, worst,
             s->error.samples, s->error.confidence);
    CHECK(s->error.measured, "not measured over %d ranks", size);
    CHECK(got[0] == -got[1], "ranks measured different p99s (%.6e, %.6e)",
          got[0], -got[1]);
    /* The measured worst body is in rank order, its error the max. */
    CHECK(fabs(worst - s->error.max) <= 1e-9 * s->error.max,
          "worst body %lld: error %.6e, measured max %.6e",
          (long long)s->error.worst_body, worst, s->error.max);
    if (every) {
      CHECK(s->error.samples == n && s->error.confidence == 1,
            "every body: %zu sampled, confidence %g", s->error.samples,
            s->error.confidence);
      CHECK(fabs(s->error.p99 - p99) <= 1e-9 * p99 &&
                fabs(s->error.median - p50) <= 1e-9 * p50 &&
                fabs(s->error.max - max) <= 1e-9 * max,
            "every body: measured p99 %.9e median %.9e max %.9e, truth "
            "%.9e %.9e %.9e",
            s->error.p99, s->error.median, s->error.max, p99, p50, max);
    } else {
      CHECK(s->error.samples > 0 && s->error.samples < n &&
                s->error.p99 >= p90 && s->error.p99 <= max,
            "sampled: p99 %.4e of %zu, truth p90 %.4e max %.4e", s->error.p99,
            s->error.samples, p90, max);
    }
    tfmm_solver_destroy(dist);
  }
  /* verify: fails (every rank, by name) where the setting misses the
   * target, passes where it meets it. */
  cfg.measure = TFMM_MEASURE_AUTO;
  cfg.error_sample = 0;
  cfg.verify = 1;
  for (int pass = 0; pass < 2; pass++) {
    cfg.accuracy = pass ? 1e-2 : 1e-6;
    cfg.theta = pass ? 0.3 : 0.8;
    cfg.order = pass ? 8 : 4;
    tfmm_solver *dist = NULL;
    tfmm_status st = tfmm_solver_create_mpi(&dist, &cfg, MPI_COMM_WORLD);
    CHECK(st == TFMM_OK, "verify: create_mpi: %s", tfmm_solver_message(dist));
    st = tfmm_solver_compute(dist, m, mp, mm, acc, NULL);
    if (pass)
      CHECK(st == TFMM_OK, "verify at 1e-2 (theta 0.3, order 8): %s",
            tfmm_solver_message(dist));
    else
      CHECK(st == TFMM_ERR_ACCURACY &&
                strstr(tfmm_solver_message(dist), "verify") &&
                strstr(tfmm_solver_message(dist), "theta 0.8, order 4"),
            "verify at 1e-6: status %d, '%s'", (int)st,
            tfmm_solver_message(dist));
    tfmm_solver_destroy(dist);
  }
  mpi_share_free(&sh);
  free(acc), free(e);
}

int main(int argc, char **argv) {
  int rank, size;
  const uint64_t seed = mpi_start(&argc, &argv, &rank, &size);
  softened_refused();
  measured_over_ranks(seed + 11, rank, size);
  const input inputs[] = {
      {"plummer", 20000, 0.0},   {"merger", 20000, 0.01},
      {"hernquist", 20000, 0.0}, {"plummer", 20000, 0.3},
      {"plane", 12000, 0.001},
  };
  for (size_t k = 0; k < sizeof inputs / sizeof *inputs; k++)
    run(&inputs[k], TFMM_METHOD_FMM, seed + k, rank, size);
  const input small = {"merger", 3000, 0.01};
  run(&small, TFMM_METHOD_DIRECT, seed, rank, size);
  run(&small, TFMM_METHOD_BH, seed + 7, rank, size);
  return mpi_finish("test_mpi_forces");
}
