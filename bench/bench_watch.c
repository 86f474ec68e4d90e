/* bench_watch: does the measured error see the worst body (issue 28,
 * "measure, don't predict")? For each draw of a Plummer sphere
 * (tfmm_ic_plummer), one evaluation at a fixed theta and order measuring
 * itself (measure always: tfmm_stats.error), then the truth at every body
 * (the library's reference, double sums, on the CPU): the measured max
 * against the true max, and where the worst body is (its radius, and how
 * many bodies have a smaller computed |a|: the watch's third part takes
 * the leaves of least |a|, src/pipeline/measure.h). One CSV row a draw on
 * stdout (bench/results/measured_error/watch.csv).
 *
 *   bench_watch [--n 20000] [--seed 1] [--draws 5] [--theta 0.8]
 *               [--order 12] [--device cpu|gpu]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

typedef struct options {
  size_t n;
  uint64_t seed;
  int draws, order, gpu;
  double theta;
} options;

static int parse(int argc, char **argv, options *o) {
  *o = (options){20000, 1, 5, 12, 0, 0.8};
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL)
      return 1;
    if (strcmp(k, "--n") == 0)
      o->n = (size_t)strtoull(v, NULL, 10);
    else if (strcmp(k, "--seed") == 0)
      o->seed = strtoull(v, NULL, 10);
    else if (strcmp(k, "--draws") == 0)
      o->draws = atoi(v);
    else if (strcmp(k, "--theta") == 0)
      o->theta = atof(v);
    else if (strcmp(k, "--order") == 0)
      o->order = atoi(v);
    else if (strcmp(k, "--device") == 0 && strcmp(v, "cpu") == 0)
      o->gpu = 0;
    else if (strcmp(k, "--device") == 0 && strcmp(v, "gpu") == 0)
      o->gpu = 1;
    else
      return 1;
    i++;
  }
  return o->n < 2 || o->draws < 1 || o->order < 0 || !(o->theta > 0);
}

static double norm(const double *a) {
  return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

/* One draw: its row, or 1 on a failure (the message on stderr). */
static int draw(const options *o, uint64_t seed, double *pos, double *vel,
                double *mass, double *acc, double *ref) {
  const size_t n = o->n;
  if (tfmm_ic_plummer(n, seed, pos, vel, mass) != TFMM_OK)
    return 1;
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = o->gpu ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
  c.theta = o->theta;
  c.order = o->order;
  c.measure = TFMM_MEASURE_ALWAYS;
  tfmm_solver *s = NULL, *r = NULL;
  tfmm_status st = tfmm_solver_create(&s, &c);
  if (st == TFMM_OK)
    st = tfmm_solver_compute(s, n, pos, mass, acc, NULL);
  if (st != TFMM_OK) {
    fprintf(stderr, "bench_watch: %s\n", tfmm_solver_message(s));
    tfmm_solver_destroy(s);
    return 1;
  }
  const tfmm_stats *got = tfmm_solver_stats(s);
  c.method = TFMM_METHOD_REFERENCE;
  c.device = TFMM_DEVICE_CPU;
  c.measure = TFMM_MEASURE_OFF;
  st = tfmm_solver_create(&r, &c);
  if (st == TFMM_OK)
    st = tfmm_solver_compute(r, n, pos, mass, ref, NULL);
  if (st != TFMM_OK) {
    fprintf(stderr, "bench_watch: reference: %s\n", tfmm_solver_message(r));
    tfmm_solver_destroy(s);
    tfmm_solver_destroy(r);
    return 1;
  }
  size_t worst = 0, above = 0;
  double top = 0;
  for (size_t i = 0; i < n; i++) {
    double d[3];
    for (int k = 0; k < 3; k++)
      d[k] = acc[3 * i + k] - ref[3 * i + k];
    const double e = norm(d) / norm(ref + 3 * i);
    if (e > top) {
      top = e;
      worst = i;
    }
  }
  size_t smaller = 0; /* bodies of smaller computed |a| than the worst */
  const double aw = norm(acc + 3 * worst);
  for (size_t i = 0; i < n; i++) {
    smaller += norm(acc + 3 * i) < aw;
    double d[3];
    for (int k = 0; k < 3; k++)
      d[k] = acc[3 * i + k] - ref[3 * i + k];
    above += norm(d) / norm(ref + 3 * i) > (1 + 1e-9) * got->error.max;
  }
  printf("%s,%zu,%llu,%g,%d,%zu,%.4g,%.4g,%.3f,%zu,%.3g,%zu,%d,%.4g\n",
         o->gpu ? "gpu" : "cpu", n, (unsigned long long)seed, o->theta,
         o->order, got->error.samples, got->error.max, top,
         got->error.max / top, above, norm(pos + 3 * worst), smaller,
         got->error.worst_body == (int64_t)worst, got->error.p99);
  tfmm_solver_destroy(s);
  tfmm_solver_destroy(r);
  return 0;
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o)) {
    fprintf(stderr, "usage: bench_watch [--n 20000] [--seed 1] [--draws 5] "
                    "[--theta 0.8] [--order 12] [--device cpu|gpu]\n");
    return 2;
  }
  const size_t n = o.n;
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass), *acc = malloc(3 * n * sizeof *acc);
  double *ref = malloc(3 * n * sizeof *ref);
  if (!pos || !vel || !mass || !acc || !ref) {
    fprintf(stderr, "bench_watch: no memory for %zu bodies\n", n);
    return 1;
  }
  printf("device,n,seed,theta,order,samples,measured_max,true_max,"
         "measured_over_true,bodies_above_measured,worst_radius,"
         "worst_smaller_a,worst_named,measured_p99\n");
  int bad = 0;
  for (int d = 0; d < o.draws && !bad; d++)
    bad = draw(&o, o.seed + (uint64_t)d, pos, vel, mass, acc, ref);
  free(pos);
  free(vel);
  free(mass);
  free(acc);
  free(ref);
  return bad;
}
