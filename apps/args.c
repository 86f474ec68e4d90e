/* Strict parsing of command-line flags (see args.h). */
#define _POSIX_C_SOURCE 200809L
#include "args.h"

#include "cli.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* strtod also accepts leading spaces, "nan" and "inf": reject all three,
 * and words with anything after the number ("1.0x"). */
static int parse_double(const char *word, double *out) {
  if (*word == '\0' || strchr(" \t\n\v\f\r", *word) != NULL)
    return 0;
  char *end;
  const double v = strtod(word, &end);
  if (*end != '\0' || !isfinite(v))
    return 0;
  *out = v;
  return 1;
}

/* Decimal digits only: none of strtoull's leading spaces, signs, base
 * prefixes, or silent wrap-around of "-1" to 2^64 - 1. */
static int parse_u64_digits(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (*s == '\0')
    return 0;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9')
      return 0;
    const uint64_t digit = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - digit) / 10)
      return 0;
    v = 10 * v + digit;
  }
  *out = v;
  return 1;
}

/* An optional sign and decimal digits, within the range of int. */
static int parse_int(const char *word, int *out) {
  const int negative = (*word == '-');
  uint64_t mag;
  if (!parse_u64_digits(word + (negative || *word == '+'), &mag))
    return 0;
  if (mag > (uint64_t)INT_MAX + (uint64_t)negative)
    return 0;
  *out = negative ? (int)(-(int64_t)mag) : (int)mag;
  return 1;
}

static const char *kind_expect(args_kind kind) {
  switch (kind) {
  case ARGS_DOUBLE:
    return "a finite number";
  case ARGS_INT:
    return "an integer";
  case ARGS_U64:
    return "a non-negative integer";
  case ARGS_FLAG:
    return "true or false";
  default:
    return "a value";
  }
}

/* Parses word into a scratch of the option's kind, applies its rule, and
 * only then stores it. */
static int set_value(args_option *opt, const char *word, const char *where) {
  union {
    double d;
    int i;
    uint64_t u;
    const char *s;
  } v;
  size_t size = 0;
  int ok = 0;
  switch (opt->kind) {
  case ARGS_DOUBLE:
    ok = parse_double(word, &v.d);
    size = sizeof v.d;
    break;
  case ARGS_INT:
    ok = parse_int(word, &v.i);
    size = sizeof v.i;
    break;
  case ARGS_U64:
    ok = parse_u64_digits(word, &v.u);
    size = sizeof v.u;
    break;
  case ARGS_STRING:
    v.s = word;
    ok = 1;
    size = sizeof v.s;
    break;
  case ARGS_FLAG:
    v.i = strcmp(word, "true") == 0;
    ok = v.i || strcmp(word, "false") == 0;
    size = sizeof v.i;
    break;
  }
  if (!ok || (opt->valid != NULL && !opt->valid(&v))) {
    cli_error("%s: invalid value '%s': expected %s",
              where != NULL ? where : opt->name, word,
              opt->expect != NULL ? opt->expect : kind_expect(opt->kind));
    return 0;
  }
  memcpy(opt->value, &v, size);
  return 1;
}

/* The option named by arg ("--eps" or "--eps=0.1"), or NULL. */
static args_option *find_option(const char *arg, args_option *opts,
                                size_t count) {
  const size_t len = strcspn(arg, "=");
  for (size_t k = 0; k < count; k++)
    if (strlen(opts[k].name) == len && strncmp(opts[k].name, arg, len) == 0)
      return &opts[k];
  return NULL;
}

static int is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* Handles argv[*i] (and its value); advances *i past what it used. */
static int parse_one(int argc, char **argv, int *i, args_option *opts,
                     size_t count) {
  const char *arg = argv[*i];
  if (arg[0] != '-') {
    cli_error("unexpected argument '%s'", arg);
    return 0;
  }
  args_option *opt = find_option(arg, opts, count);
  if (opt == NULL) {
    cli_error("unknown flag '%.*s'", (int)strcspn(arg, "="), arg);
    return 0;
  }
  if (opt->seen) {
    cli_error("%s: given more than once", opt->name);
    return 0;
  }
  const char *eq = strchr(arg, '=');
  const char *word = eq != NULL ? eq + 1 : NULL;
  if (opt->kind == ARGS_FLAG) {
    if (word != NULL) {
      cli_error("%s: takes no value", opt->name);
      return 0;
    }
    opt->seen = 1;
    *(int *)opt->value = 1;
    return 1;
  }
  if (word == NULL) {
    if (*i + 1 >= argc) {
      cli_error("%s: missing value", opt->name);
      return 0;
    }
    word = argv[++*i];
  }
  opt->seen = 1;
  return set_value(opt, word, NULL);
}

int args_set(args_option *opt, const char *word, const char *where) {
  return set_value(opt, word, where);
}

args_result args_parse(int argc, char **argv, args_option *opts, size_t count) {
  for (int i = 0; i < argc; i++)
    if (is_help(argv[i]))
      return ARGS_HELP;
  for (int i = 0; i < argc; i++)
    if (!parse_one(argc, argv, &i, opts, count))
      return ARGS_ERROR;
  for (size_t k = 0; k < count; k++) {
    if (opts[k].required && !opts[k].seen) {
      cli_error("missing required flag %s", opts[k].name);
      return ARGS_ERROR;
    }
  }
  return ARGS_OK;
}
