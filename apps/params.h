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
 * caller's table lacks) is an error naming the file and line. Unknown and
 * repeated keys and sections are all reported in one reading; malformed
 * YAML stops it. What the keys mean is the caller's: it maps each
 * "Section:key" to a command-line flag (params_apply). */
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
  int complete; /* read to its end: entries holds every well-formed key the
                   table allows, even when params_read reported others */
} params;

/* A parameter of the file and the flag it stands for. */
typedef struct params_key {
  const char *section, *key; /* "Gravity", "theta" */
  const char *flag;          /* "--theta": an entry of the args_option
                                array given to params_apply */
  const char *refused;       /* not NULL: a key the caller knows but does not
                                take (another code's, say), and why: its use
                                is an error quoting this */
} params_key;

/* Reads path into out (zeroed first; release with params_free, also after
 * a failure). With a table of keys[0 .. nkeys), each section or key it
 * lacks is reported, naming its line and listing what the section (or the
 * file) may hold, and left out; keys NULL allows any. A repeated key or
 * section is reported and the repeat left out. The reading goes on to the
 * end of the file (out->complete), so that every such error is printed
 * (the first 20, then their count); malformed YAML stops it. Prints
 * "tilefmm: FILE:LINE: what is wrong" for each and returns 0 on any
 * failure, else 1. Time and memory are linear in the file's size. */
int params_read(const char *path, const params_key *keys, size_t nkeys,
                params *out);

void params_free(params *p);

/* Prints "tilefmm: WHERE: unknown key 'S:k' (S holds: ...)", or "unknown
 * section" with the sections, when keys lacks section (key NULL: the
 * section alone); "S:k: REFUSED" for a key the table refuses. */
void params_report_unknown(const char *where, const char *section,
                           const char *key, const params_key *keys,
                           size_t nkeys);

/* Applies every entry of p to the option its key names, unless the flag
 * was given on the command line (opts[i].seen: flags override the file).
 * Values are checked with the option's own kind and rule (args_set); an
 * unknown "Section:key" or a bad value is an error naming FILE:LINE and
 * the key, and every entry is checked, each error printed. An ARGS_STRING
 * option is left pointing into p's value: keep p until the option is no longer
 * used. Returns 1 on success, 0 after printing the error. */
int params_apply(const params *p, const params_key *keys, size_t nkeys,
                 args_option *opts, size_t nopts);

#endif
