/* tree_options.h: parsing bench_tree's command line. */
#include "tree_options.h"
#include "bench_common.h"

#include <string.h>

void tree_options_usage(FILE *f) {
  static const char *const lines[] = {
      "usage: bench_tree [options]",
      "  --n LIST          bodies (default 262144,1048576,4194304)",
      "  --method LIST     fmm, bh or both: fmm,bh (default fmm)",
      "  --leaf LIST       leaf sizes L, 0 for auto (default 16,32,64,128,256)",
      "  --order LIST      expansion orders p (default 2,4,6,8; 1 with",
      "                    --tree-only, the least the FMM accepts)",
      "  --theta LIST      opening angles, comma-separated reals (default 0.5;",
      "                    1 with --tree-only)",
      "  --accuracy LIST   accuracy targets (p99 relative acceleration error);",
      "                    without --theta and --order both are chosen from",
      "                    each target (default: 1e-3 with the given theta",
      "                    and order)",
      "  --softening K     plummer or spline (default plummer)",
      "  --far-kernel K    auto, newton or softened: the far field's kernel",
      "                    under Plummer softening (default auto)",
      "  --precision P     single, double or auto near field (default auto:",
      "                    single for targets >= 3e-4, else double)",
      "  --mac M           opening criterion: geometric, mass or error",
      "                    (default geometric)",
      "  --mac-epsilon E   the error criterion's epsilon (default: chosen",
      "                    from the accuracy target)",
      "  --device D        cpu, gpu or auto: where the near field runs; the",
      "                    far field is always the CPU's (default cpu)",
      "  --schedule S      auto, gpu or hybrid (default auto: gpu with a gpu",
      "                    from 4096 bodies, else hybrid)",
      "  --tree-device D   cpu, gpu or auto: where the tree and its",
      "                    multipoles are built (default auto)",
      "  --far-device D    cpu, gpu or auto: where the far field runs",
      "                    (default auto)",
      "  --threads T       OpenMP threads (default 0: OpenMP's choice)",
      "  --reps K          timed runs per point; times are medians (default 1)",
      "  --warmup W        untimed runs first (default 0)",
      "  --sample S        bodies checked against the double-precision sum",
      "                    (tfmm_solver_reference_at), drawn with a fixed",
      "                    seed; 0: no check (default 1000)",
      "  --seed S          Plummer sphere seed (default 42)",
      "  --eps E           softening length (default 0: the expansions and",
      "                    the reference then share one potential)",
      "  --max-depth D     deepest tree level, 1..21 (default 21)",
      "  --resident        bodies and results in GPU memory, uploaded once:",
      "                    times tfmm_solver_compute_device (the gpu schedule",
      "                    keeps them there; no copies in the time)",
      "  --tree-only       time the tree: no error sample, and --order and",
      "                    --theta default to 0 and 1, which leave the tree",
      "                    as it is and make the rest of the call cheapest",
      "  --time-limit S    skip a point predicted to take longer than S",
      "                    seconds, stop repeating one once past S (600)",
      "  --csv FILE        append rows to FILE (a header if new)",
      "LIST: comma-separated values. Every combination runs at every N,",
      "smallest N first; a point's cost is predicted from the same",
      "configuration at a smaller N, scaled by N log N.",
  };
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i)
    fprintf(f, "%s\n", lines[i]);
}

static int split_list(const char *flag, const char *s, char *buf, size_t cap,
                      char **tok) {
  return bench_split_list("bench_tree", flag, s, buf, cap, tok, TREE_MAX_LIST);
}

static int parse_ilist(const char *flag, const char *s, long long lo,
                       long long hi, tree_ilist *out) {
  return bench_parse_ilist("bench_tree", flag, s, lo, hi, TREE_MAX_LIST, out->v,
                           &out->n);
}

static int parse_dlist(const char *flag, const char *s, double lo, double hi,
                       tree_dlist *out) {
  char buf[1024], *tok[TREE_MAX_LIST];
  int n = split_list(flag, s, buf, sizeof buf, tok);
  if (n < 0)
    return -1;
  for (int k = 0; k < n; ++k)
    if (bench_parse_double(tok[k], lo, hi, &out->v[k]) != 0) {
      fprintf(stderr, "bench_tree: %s: '%s' is not a number in [%g, %g]\n",
              flag, tok[k], lo, hi);
      return -1;
    }
  out->n = n;
  return 0;
}

/* Tree methods only: the all-pairs ones have bench_direct. */
static int parse_mlist(const char *flag, const char *s, tree_mlist *out) {
  char buf[1024], *tok[TREE_MAX_LIST];
  int n = split_list(flag, s, buf, sizeof buf, tok);
  if (n < 0)
    return -1;
  for (int k = 0; k < n; ++k) {
    tfmm_method m = TFMM_METHOD_FMM;
    if (tfmm_method_parse(tok[k], &m) != TFMM_OK ||
        (m != TFMM_METHOD_FMM && m != TFMM_METHOD_BH)) {
      fprintf(stderr, "bench_tree: %s: '%s' is not a tree method (fmm or bh)\n",
              flag, tok[k]);
      return -1;
    }
    out->v[k] = m;
  }
  out->n = n;
  return 0;
}

static void options_defaults(tree_options *o) {
  memset(o, 0, sizeof *o);
  static const long long ns[] = {262144, 1048576, 4194304};
  static const long long leaves[] = {16, 32, 64, 128, 256};
  static const long long orders[] = {2, 4, 6, 8};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; ++k)
    o->n.v[o->n.n++] = ns[k];
  for (size_t k = 0; k < sizeof leaves / sizeof leaves[0]; ++k)
    o->leaf.v[o->leaf.n++] = leaves[k];
  for (size_t k = 0; k < sizeof orders / sizeof orders[0]; ++k)
    o->order.v[o->order.n++] = orders[k];
  o->method.v[o->method.n++] = TFMM_METHOD_FMM;
  o->theta.v[o->theta.n++] = 0.5;
  o->accuracy.v[o->accuracy.n++] = 1e-3;
  o->softening = TFMM_SOFTENING_PLUMMER;
  o->far_kernel = TFMM_FAR_KERNEL_AUTO;
  o->precision = TFMM_PRECISION_AUTO;
  o->mac = TFMM_MAC_GEOMETRIC;
  o->mac_epsilon = TFMM_FROM_ACCURACY;
  o->device = TFMM_DEVICE_CPU;
  o->schedule = TFMM_SCHEDULE_AUTO;
  o->tree_device = TFMM_DEVICE_AUTO;
  o->far_device = TFMM_DEVICE_AUTO;
  o->threads = 0;
  o->reps = 1;
  o->warmup = 0;
  o->sample = 1000;
  o->seed = 42;
  o->eps = 0.0;
  o->max_depth = 21;
  o->tree_only = 0;
  o->resident = 0;
  o->time_limit = 600.0;
  o->csv = NULL;
}

/* The options that take a value; --tree-only and --help take none. */
static const char *const VALUE_OPTIONS[] = {
    "--n",           "--method",     "--leaf",     "--order",
    "--theta",       "--threads",    "--device",   "--reps",
    "--warmup",      "--sample",     "--seed",     "--eps",
    "--max-depth",   "--time-limit", "--csv",      "--accuracy",
    "--softening",   "--precision",  "--mac",      "--mac-epsilon",
    "--tree-device", "--far-device", "--schedule", "--far-kernel"};

/* Sets one option from its text; non-zero when the value is bad (the list
 * parsers say why themselves). */
static int apply_option(tree_options *o, const char *name, const char *val,
                        int *order_given, int *theta_given,
                        int *accuracy_given) {
  long long ll = 0;
  int bad = 0;
  if (strcmp(name, "--n") == 0) {
    bad = parse_ilist(name, val, 1, 1LL << 31, &o->n);
  } else if (strcmp(name, "--method") == 0) {
    bad = parse_mlist(name, val, &o->method);
  } else if (strcmp(name, "--leaf") == 0) {
    bad = parse_ilist(name, val, 0, 1 << 24, &o->leaf);
  } else if (strcmp(name, "--order") == 0) {
    bad = parse_ilist(name, val, 0, 64, &o->order);
    *order_given = 1;
  } else if (strcmp(name, "--theta") == 0) {
    bad = parse_dlist(name, val, 0.0, 1.0, &o->theta);
    *theta_given = 1;
  } else if (strcmp(name, "--accuracy") == 0) {
    bad = parse_dlist(name, val, 1e-16, 0.1, &o->accuracy);
    *accuracy_given = 1;
  } else if (strcmp(name, "--softening") == 0) {
    bad = tfmm_softening_parse(val, &o->softening) != TFMM_OK;
  } else if (strcmp(name, "--far-kernel") == 0) {
    bad = tfmm_far_kernel_parse(val, &o->far_kernel) != TFMM_OK;
  } else if (strcmp(name, "--precision") == 0) {
    bad = tfmm_precision_parse(val, &o->precision) != TFMM_OK;
  } else if (strcmp(name, "--mac") == 0) {
    bad = tfmm_mac_parse(val, &o->mac) != TFMM_OK;
  } else if (strcmp(name, "--mac-epsilon") == 0) {
    bad = bench_parse_double(val, 1e-16, 1.0, &o->mac_epsilon);
  } else if (strcmp(name, "--device") == 0) {
    bad = tfmm_device_parse(val, &o->device) != TFMM_OK;
  } else if (strcmp(name, "--schedule") == 0) {
    bad = tfmm_schedule_parse(val, &o->schedule) != TFMM_OK;
  } else if (strcmp(name, "--tree-device") == 0) {
    bad = tfmm_device_parse(val, &o->tree_device) != TFMM_OK;
  } else if (strcmp(name, "--far-device") == 0) {
    bad = tfmm_device_parse(val, &o->far_device) != TFMM_OK;
  } else if (strcmp(name, "--threads") == 0) {
    bad = bench_parse_ll(val, 0, 1 << 20, &ll);
    o->threads = (int)ll;
  } else if (strcmp(name, "--reps") == 0) {
    bad = bench_parse_ll(val, 1, 100000, &ll);
    o->reps = (int)ll;
  } else if (strcmp(name, "--warmup") == 0) {
    bad = bench_parse_ll(val, 0, 100000, &ll);
    o->warmup = (int)ll;
  } else if (strcmp(name, "--sample") == 0) {
    bad = bench_parse_ll(val, 0, 1LL << 31, &ll);
    o->sample = (size_t)ll;
  } else if (strcmp(name, "--seed") == 0) {
    bad = bench_parse_ll(val, 0, INT64_MAX, &ll);
    o->seed = (uint64_t)ll;
  } else if (strcmp(name, "--eps") == 0) {
    bad = bench_parse_double(val, 0.0, 1e300, &o->eps);
  } else if (strcmp(name, "--max-depth") == 0) {
    bad = bench_parse_ll(val, 1, 21, &ll);
    o->max_depth = (int)ll;
  } else if (strcmp(name, "--time-limit") == 0) {
    bad = bench_parse_double(val, 0.0, 1e9, &o->time_limit);
  } else { /* --csv */
    o->csv = val;
  }
  return bad;
}

int tree_options_parse(int argc, char **argv, tree_options *o) {
  int order_given = 0, theta_given = 0, accuracy_given = 0;
  options_defaults(o);
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      tree_options_usage(stdout);
      return 1;
    }
    if (strcmp(arg, "--tree-only") == 0) {
      o->tree_only = 1;
      continue;
    }
    if (strcmp(arg, "--resident") == 0) {
      o->resident = 1;
      continue;
    }
    char name[64];
    const char *val = NULL;
    if (bench_option_read("bench_tree", argc, argv, &i, VALUE_OPTIONS,
                          sizeof VALUE_OPTIONS / sizeof VALUE_OPTIONS[0], name,
                          sizeof name, &val) != 0)
      return -1;
    if (apply_option(o, name, val, &order_given, &theta_given,
                     &accuracy_given) != 0) {
      fprintf(stderr, "bench_tree: bad value '%s' for %s\n", val, name);
      return -1;
    }
  }
  if (accuracy_given && !theta_given && !o->tree_only) {
    o->theta.n = 1;
    o->theta.v[0] = TFMM_FROM_ACCURACY;
  }
  if (accuracy_given && !order_given && !o->tree_only) {
    o->order.n = 1;
    o->order.v[0] = TFMM_FROM_ACCURACY;
  }
  for (int k = 0; k < o->theta.n; ++k)
    if (!(o->theta.v[k] > 0.0) && o->theta.v[k] != TFMM_FROM_ACCURACY) {
      fprintf(stderr, "bench_tree: --theta: %g is not in (0, 1]\n",
              o->theta.v[k]);
      return -1;
    }
  if (o->tree_only) {
    o->sample = 0;
    if (!order_given) {
      o->order.n = 1;
      o->order.v[0] = 1;
    }
    if (!theta_given)
      o->theta.v[0] = 1.0;
  }
  return 0;
}
