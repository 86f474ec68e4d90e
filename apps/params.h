/* Parameter files: YAML in SWIFT's style, one level of sections holding
 * scalar keys:
 *
 *   Gravity:
 *     theta: 0.5
 *     order: 4
 *   TimeIntegration:
 *     dt: 0.01
 *
 * read with libyaml. Anything else (a list, a deeper mapping, a key
 * outside a section, a repeated key, a malformed document, a key the
 * caller's table lacks) is an error naming the file and line, reported as
 * soon as the reader reaches it. What the keys mean is the caller's: it
 * maps each "Section:key" to a command-line flag (params_apply). */
#ifndef TFMM_PARAMS_H
#define TFMM_PARAMS_H

#include "args.h"

#include <stddef.h>

typedef struct params_entry {
  char *section, *key, *value; /* "Gravity", "theta", "0.5" */
  int line;                    /* 1-based line of the key in the file */
} params_entry;

typedef struct params {
  char *path;
  params_entry *entries; /* in file order */
  size_t count;
} params;

/* A parameter of the file and the flag it stands for. */
typedef struct params_key {
  const char *section, *key; /* "Gravity", "theta" */
  const char *flag;          /* "--theta": an entry of the args_option
                                array given to params_apply */
} params_key;

/* Reads path into out (zeroed first; release with params_free, also after
 * a failure). With a table of keys[0 .. nkeys), a section or key it lacks
 * stops the reading at once, naming its line and listing what the section
 * (or the file) may hold; keys NULL allows any. Prints "tilefmm: FILE:LINE:
 * what is wrong" and returns 0 on failure, else 1. Time and memory are
 * linear in the file's size. */
int params_read(const char *path, const params_key *keys, size_t nkeys,
                params *out);

void params_free(params *p);

/* Applies every entry of p to the option its key names, unless the flag
 * was given on the command line (opts[i].seen: flags override the file).
 * Values are checked with the option's own kind and rule (args_set); an
 * unknown "Section:key" or a bad value is an error naming FILE:LINE and
 * the key. An ARGS_STRING option is left pointing into p's value: keep p
 * until the option is no longer used. Returns 1 on success, 0 after
 * printing the error. */
int params_apply(const params *p, const params_key *keys, size_t nkeys,
                 args_option *opts, size_t nopts);

#endif
