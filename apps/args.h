/* Strict command-line flags: "--name value" or "--name=value". A number
 * must be the whole word, finite and within its option's rule; every
 * message names the flag. */
#ifndef TFMM_ARGS_H
#define TFMM_ARGS_H

#include <stddef.h>

typedef enum args_kind {
  ARGS_DOUBLE, /* value: double *; decimal or hex, finite */
  ARGS_INT,    /* value: int *; optional sign and decimal digits */
  ARGS_U64,    /* value: uint64_t *; decimal digits only */
  ARGS_STRING, /* value: const char **; points into argv */
  ARGS_FLAG    /* value: int *; set to 1 by the flag alone, which takes no
                  value; "true" or "false" through args_set */
} args_kind;

typedef struct args_option {
  const char *name; /* with its dashes: "--eps" */
  args_kind kind;
  void *value; /* written only when the word is valid */
  /* Extra rule on the parsed value (NULL: any value of the kind) and what
   * it expects, for the message: "a number >= 0". */
  int (*valid)(const void *value);
  const char *expect;
  int required;
  int seen; /* set by args_parse */
} args_option;

typedef enum args_result { ARGS_OK, ARGS_HELP, ARGS_ERROR } args_result;

/* Parses argv[0 .. argc) against opts. ARGS_HELP when -h or --help is among
 * them (nothing else is checked then); ARGS_ERROR after printing what is
 * wrong. Flags may come in any order, each at most once. */
args_result args_parse(int argc, char **argv, args_option *opts, size_t count);

/* Parses word as opt's value, with its kind and rule, as if it had been
 * given on the command line, without marking opt seen (a parameter file's
 * value, which a flag then overrides). A failure is reported as
 * "tilefmm: WHERE: invalid value 'word': expected ..." where WHERE is
 * where (say "run.yml:12: Gravity:theta"), or the flag's name when where is
 * NULL; returns 1 on success, 0 on failure. */
int args_set(args_option *opt, const char *word, const char *where);

#endif
