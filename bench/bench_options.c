/* bench_options.h: parsing bench_direct's command line. */
#include "bench_options.h"
#include "bench_common.h"

#include <string.h>

void bench_options_usage(FILE *f) {
  static const char *const lines[] = {
      "usage: bench_direct [options]",
      "  --n LIST               bodies (default 1024,2048,...,1048576)",
      "  --p LIST               GPU tile p (default 0: auto)",
      "  --q LIST               GPU threads per body q (default 0: auto)",
      "  --unroll LIST          GPU inner-loop unroll (default 16)",
      "  --r LIST               GPU bodies per thread r (default 0: auto)",
      "  --reps K               timed runs per point (default: enough for",
      "                         --target-seconds, at least 3, at most 1000)",
      "  --target-seconds S     time per point for automatic reps (0.2)",
      "  --warmup W             untimed runs first (default 2)",
      "  --seed S               Plummer sphere seed (default 42)",
      "  --csv FILE             append rows to FILE (a header if new)",
      "  --potential 0|1        also compute the potential (default 0)",
      "  --eps E                softening length (default 0.01)",
      "  --device-time-limit S  skip a point predicted to take longer than",
      "                         S seconds; stop timing one once past S (60)",
      "  --device gpu|cpu|auto  where to run (default gpu; cpu for reference)",
      "  --method direct|reference  (default direct)",
      "  --threads T            OpenMP threads on the CPU (0: OpenMP's)",
      "  --gpu-id I             CUDA device ordinal (default 0)",
      "LIST: comma-separated integers. Every combination of the GPU lists runs",
      "at every N; they are ignored on the CPU.",
  };
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i)
    fprintf(f, "%s\n", lines[i]);
}

static int parse_list(const char *flag, const char *s, long long lo,
                      long long hi, bench_list *out) {
  return bench_parse_ilist("bench_direct", flag, s, lo, hi, BENCH_MAX_LIST,
                           out->v, &out->n);
}

static void list_one(bench_list *l, long long v) {
  l->n = 1;
  l->v[0] = v;
}

static void options_defaults(bench_options *o) {
  memset(o, 0, sizeof *o);
  o->n.n = 0;
  for (long long v = 1024; v <= 1048576; v *= 2)
    o->n.v[o->n.n++] = v;
  list_one(&o->p, 0);
  list_one(&o->q, 0);
  list_one(&o->unroll, 16);
  list_one(&o->r, 0);
  o->reps = 0;
  o->warmup = 2;
  o->seed = 42;
  o->csv = NULL;
  o->potential = 0;
  o->eps = 0.01;
  o->time_limit = 60.0;
  o->target_s = 0.2;
  o->method = TFMM_METHOD_DIRECT;
  o->device = TFMM_DEVICE_GPU;
  o->threads = 0;
  o->gpu_id = 0;
}

static const char *const OPTION_NAMES[] = {"--n",
                                           "--p",
                                           "--q",
                                           "--unroll",
                                           "--r",
                                           "--reps",
                                           "--warmup",
                                           "--seed",
                                           "--csv",
                                           "--potential",
                                           "--eps",
                                           "--device-time-limit",
                                           "--target-seconds",
                                           "--device",
                                           "--method",
                                           "--threads",
                                           "--gpu-id"};

/* Sets one option from its text; non-zero when the value is bad. */
static int apply_option(bench_options *o, const char *name, const char *val,
                        int *device_given) {
  long long ll = 0;
  int bad = 0;
  if (strcmp(name, "--n") == 0) {
    bad = parse_list(name, val, 1, 1LL << 30, &o->n);
  } else if (strcmp(name, "--p") == 0) {
    bad = parse_list(name, val, 0, 1 << 20, &o->p);
  } else if (strcmp(name, "--q") == 0) {
    bad = parse_list(name, val, 0, 1 << 20, &o->q);
  } else if (strcmp(name, "--unroll") == 0) {
    bad = parse_list(name, val, 1, 1 << 20, &o->unroll);
  } else if (strcmp(name, "--r") == 0) {
    bad = parse_list(name, val, 0, 1 << 20, &o->r);
  } else if (strcmp(name, "--reps") == 0) {
    bad = bench_parse_ll(val, 1, 1000000, &ll);
    o->reps = (int)ll;
  } else if (strcmp(name, "--warmup") == 0) {
    bad = bench_parse_ll(val, 0, 1000000, &ll);
    o->warmup = (int)ll;
  } else if (strcmp(name, "--seed") == 0) {
    bad = bench_parse_ll(val, 0, INT64_MAX, &ll);
    o->seed = (uint64_t)ll;
  } else if (strcmp(name, "--csv") == 0) {
    o->csv = val;
  } else if (strcmp(name, "--potential") == 0) {
    bad = bench_parse_ll(val, 0, 1, &ll);
    o->potential = (int)ll;
  } else if (strcmp(name, "--eps") == 0) {
    bad = bench_parse_double(val, 0.0, 1e300, &o->eps);
  } else if (strcmp(name, "--device-time-limit") == 0) {
    bad = bench_parse_double(val, 0.0, 1e9, &o->time_limit);
  } else if (strcmp(name, "--target-seconds") == 0) {
    bad = bench_parse_double(val, 0.0, 1e6, &o->target_s);
  } else if (strcmp(name, "--device") == 0) {
    bad = tfmm_device_parse(val, &o->device) != TFMM_OK;
    *device_given = 1;
  } else if (strcmp(name, "--method") == 0) {
    bad = tfmm_method_parse(val, &o->method) != TFMM_OK;
  } else if (strcmp(name, "--threads") == 0) {
    bad = bench_parse_ll(val, 0, 1 << 20, &ll);
    o->threads = (int)ll;
  } else { /* --gpu-id */
    bad = bench_parse_ll(val, 0, 1 << 20, &ll);
    o->gpu_id = (int)ll;
  }
  return bad;
}

int bench_options_parse(int argc, char **argv, bench_options *o) {
  int device_given = 0;
  options_defaults(o);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      bench_options_usage(stdout);
      return 1;
    }
    char name[64];
    const char *val = NULL;
    if (bench_option_read("bench_direct", argc, argv, &i, OPTION_NAMES,
                          sizeof OPTION_NAMES / sizeof OPTION_NAMES[0], name,
                          sizeof name, &val) != 0)
      return -1;
    if (apply_option(o, name, val, &device_given) != 0) {
      fprintf(stderr, "bench_direct: bad value '%s' for %s\n", val, name);
      return -1;
    }
  }
  /* The reference method runs on the CPU only. */
  if (o->method == TFMM_METHOD_REFERENCE && !device_given)
    o->device = TFMM_DEVICE_CPU;
  if (o->device == TFMM_DEVICE_AUTO)
    o->device = tfmm_gpu_count() > 0 ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
  return 0;
}
