/* SWIFT-style YAML parameter files (see params.h), read with libyaml's
 * event API: the grammar is one mapping of sections, each a mapping of
 * scalars, so a small state machine over the events checks it as it goes
 * and every error can name the line of the event at fault. Each key is
 * checked as it comes: an unknown key or a repeat is reported and the
 * reading goes on, so that one run names every such error of the file;
 * repeats are found in a hash set, so that a file of a million keys costs
 * no more than reading it. Only malformed YAML stops the reading (the
 * parser cannot resynchronise). */
#define _POSIX_C_SOURCE 200809L
#include "params.h"

#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* A set of (section, key) pairs with the line of each, to find a repeat
 * in constant time: open addressing, at most half full. The strings
 * belong to the caller. A section itself is the pair (name, NULL). */
typedef struct pair_slot {
  const char *section, *key; /* section NULL: an empty slot */
  int line;
} pair_slot;

typedef struct pair_set {
  pair_slot *slots;
  size_t cap, count; /* cap: a power of two, or 0 */
} pair_set;

typedef struct reader {
  const char *path;
  FILE *fp;
  yaml_parser_t parser;
  yaml_event_t ev; /* the current event, valid while has_ev */
  int has_ev;
  params *out;
  size_t cap;
  const params_key *keys; /* the keys allowed, or NULL for any */
  size_t nkeys;
  char **sections; /* names seen so far (owned) */
  size_t nsections, sections_cap;
  pair_set seen; /* the sections and keys seen so far */
  size_t errors; /* key errors reported (the reading went on) */
} reader;

/* Key errors printed before the rest are only counted: a file of a
 * million misspelt keys must not print a million lines. */
#define MAX_REPORTED 20

/* Prints "tilefmm: FILE:LINE: message". Returns 0 for "return fail(...)". */
static int fail(const reader *r, size_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(const reader *r, size_t line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cli_error("%s:%zu: %s", r->path, line, msg);
  return 0;
}

static size_t ev_line(const reader *r) { return r->ev.start_mark.line + 1; }

/* Counts a key error; whether to print it (the first MAX_REPORTED). */
static int report(reader *r) { return ++r->errors <= MAX_REPORTED; }

/* FNV-1a over the section, a separator no string holds, and the key. */
static size_t pair_hash(const char *section, const char *key) {
  uint64_t h = 14695981039346656037u;
  for (const char *s = section; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  h = (h ^ 0x100u) * 1099511628211u; /* not a byte: no string makes it */
  for (const char *s = key; s != NULL && *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return (size_t)h;
}

static int same_pair(const pair_slot *s, const char *section, const char *key) {
  return strcmp(s->section, section) == 0 &&
         (s->key == NULL ? key == NULL
                         : key != NULL && strcmp(s->key, key) == 0);
}

/* The slot holding (section, key), or the empty one where it belongs. */
static pair_slot *pair_slot_of(const pair_set *set, const char *section,
                               const char *key) {
  size_t i = pair_hash(section, key) & (set->cap - 1);
  while (set->slots[i].section != NULL &&
         !same_pair(&set->slots[i], section, key))
    i = (i + 1) & (set->cap - 1);
  return &set->slots[i];
}

static int pair_set_grow(pair_set *set) {
  const size_t cap = set->cap != 0 ? 2 * set->cap : 64;
  pair_slot *slots = calloc(cap, sizeof *slots);
  if (slots == NULL)
    return 0;
  pair_set bigger = {slots, cap, set->count};
  for (size_t i = 0; i < set->cap; i++)
    if (set->slots[i].section != NULL)
      *pair_slot_of(&bigger, set->slots[i].section, set->slots[i].key) =
          set->slots[i];
  free(set->slots);
  *set = bigger;
  return 1;
}

/* Adds (section, key) at line. Returns 0 when added, the line of the pair
 * already there, or -1 when out of memory. */
static int pair_set_add(pair_set *set, const char *section, const char *key,
                        int line) {
  if (2 * (set->count + 1) > set->cap && !pair_set_grow(set))
    return -1;
  pair_slot *s = pair_slot_of(set, section, key);
  if (s->section != NULL)
    return s->line;
  *s = (pair_slot){section, key, line};
  set->count++;
  return 0;
}

/* libyaml decodes ahead of its scanner, so a reader error (bad UTF-8)
 * carries only a byte offset: count the lines up to it. */
static size_t line_of_byte(FILE *fp, size_t offset) {
  size_t line = 1;
  rewind(fp);
  for (size_t i = 0; i < offset; i++) {
    const int c = getc(fp);
    if (c == EOF)
      break;
    line += (c == '\n');
  }
  return line;
}

static int syntax_error(const reader *r) {
  const yaml_parser_t *p = &r->parser;
  if (p->error == YAML_READER_ERROR) {
    if (ferror(r->fp)) { /* no line to name: a directory, say */
      cli_error("%s: cannot read: %s", r->path, strerror(errno));
      return 0;
    }
    return fail(r, line_of_byte(r->fp, p->problem_offset),
                "malformed YAML: %s (byte %zu)",
                p->problem != NULL ? p->problem : "unreadable input",
                p->problem_offset);
  }
  if (p->error == YAML_MEMORY_ERROR)
    return fail(r, p->mark.line + 1, "out of memory");
  const char *what = p->problem != NULL ? p->problem : "syntax error";
  /* "found unexpected end of stream" "while scanning a quoted scalar"
   * that began on an earlier line: name that line too. */
  if (p->context != NULL && p->context_mark.line != p->problem_mark.line)
    return fail(r, p->problem_mark.line + 1,
                "malformed YAML: %s %s (from line %zu)", what, p->context,
                p->context_mark.line + 1);
  if (p->context != NULL)
    return fail(r, p->problem_mark.line + 1, "malformed YAML: %s %s", what,
                p->context);
  return fail(r, p->problem_mark.line + 1, "malformed YAML: %s", what);
}

static const yaml_char_t *ev_anchor(const yaml_event_t *e) {
  switch (e->type) {
  case YAML_SCALAR_EVENT:
    return e->data.scalar.anchor;
  case YAML_MAPPING_START_EVENT:
    return e->data.mapping_start.anchor;
  case YAML_SEQUENCE_START_EVENT:
    return e->data.sequence_start.anchor;
  default:
    return NULL;
  }
}

/* Moves to the next event. Anchors and aliases are refused here, once for
 * every state: a parameter file has no use for them, and resolving them
 * would make "the line of a key" ambiguous. */
static int next(reader *r) {
  if (r->has_ev)
    yaml_event_delete(&r->ev);
  r->has_ev = 0;
  if (!yaml_parser_parse(&r->parser, &r->ev))
    return syntax_error(r);
  r->has_ev = 1;
  if (r->ev.type == YAML_ALIAS_EVENT)
    return fail(r, ev_line(r), "aliases (*%s) are not supported",
                (const char *)r->ev.data.alias.anchor);
  const yaml_char_t *anchor = ev_anchor(&r->ev);
  if (anchor != NULL)
    return fail(r, ev_line(r), "anchors (&%s) are not supported",
                (const char *)anchor);
  return 1;
}

static const char *scalar(const reader *r) {
  return (const char *)r->ev.data.scalar.value;
}

/* YAML's null: nothing at all, "~" or "null", unquoted. */
static int is_null(const reader *r) {
  if (r->ev.type != YAML_SCALAR_EVENT ||
      r->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return 0;
  const char *s = scalar(r);
  return *s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
         strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

static const char *kind_name(yaml_event_type_t type) {
  switch (type) {
  case YAML_SEQUENCE_START_EVENT:
    return "a list";
  case YAML_MAPPING_START_EVENT:
    return "a mapping";
  default:
    return "a scalar";
  }
}

static int add_entry(reader *r, const char *section, const char *key,
                     size_t line) {
  params *p = r->out;
  if (p->count == r->cap) {
    const size_t cap = r->cap != 0 ? 2 * r->cap : 16;
    params_entry *grown = realloc(p->entries, cap * sizeof *grown);
    if (grown == NULL)
      return fail(r, line, "out of memory");
    p->entries = grown;
    r->cap = cap;
  }
  params_entry *e = &p->entries[p->count];
  e->section = strdup(section);
  e->key = strdup(key);
  e->value = strdup(scalar(r));
  e->line = (int)line;
  p->count++; /* counted even when partial, so that params_free frees it */
  if (e->section == NULL || e->key == NULL || e->value == NULL)
    return fail(r, line, "out of memory");
  return 1;
}

/* Appends ", word" (or "word" first) to buf unless it is there already. */
static void list_add(char *buf, size_t size, const char *word) {
  const size_t len = strlen(buf), n = strlen(word);
  for (const char *s = buf; (s = strstr(s, word)) != NULL; s += n)
    if ((s == buf || s[-1] == ' ') && (s[n] == ',' || s[n] == '\0'))
      return;
  snprintf(buf + len, size - len, "%s%s", len > 0 ? ", " : "", word);
}

/* Reports a section and key (key NULL: the section alone) that name
 * nothing of the table, listing what they could have named: the section's
 * keys, or the sections. */
void params_report_unknown(const char *where, const char *section,
                           const char *key, const params_key *keys,
                           size_t nkeys) {
  char keys_of[1024] = "", sections[1024] = "";
  int known = 0; /* the section holds keys, taken or refused */
  for (size_t k = 0; k < nkeys; k++) {
    const int here = strcmp(keys[k].section, section) == 0;
    if (here && key != NULL && keys[k].refused != NULL &&
        strcmp(keys[k].key, key) == 0) {
      cli_error("%s: %s:%s: %s", where, section, key, keys[k].refused);
      return;
    }
    known |= here;
    if (keys[k].refused != NULL)
      continue;
    list_add(sections, sizeof sections, keys[k].section);
    if (here)
      list_add(keys_of, sizeof keys_of, keys[k].key);
  }
  if (known && key != NULL)
    cli_error("%s: unknown key '%s:%s' (%s holds: %s)", where, section, key,
              section, keys_of[0] != '\0' ? keys_of : "nothing tilefmm reads");
  else
    cli_error("%s: unknown section '%s' (sections: %s)", where, section,
              sections[0] != '\0' ? sections : "none");
}

static void unknown_key(const char *path, int line, const char *section,
                        const char *key, const params_key *keys, size_t nkeys) {
  char where[512];
  snprintf(where, sizeof where, "%s:%d", path, line);
  params_report_unknown(where, section, key, keys, nkeys);
}

/* Whether the table allows section and key (key NULL: the section); an
 * unknown one is reported (and counted). */
static int allowed(reader *r, const char *section, const char *key) {
  if (r->keys == NULL)
    return 1;
  for (size_t k = 0; k < r->nkeys; k++)
    if (strcmp(r->keys[k].section, section) == 0 &&
        (key == NULL ||
         (strcmp(r->keys[k].key, key) == 0 && r->keys[k].refused == NULL)))
      return 1;
  if (report(r))
    unknown_key(r->path, (int)ev_line(r), section, key, r->keys, r->nkeys);
  return 0;
}

/* The current event is the key's scalar; reads its value. With keep 0
 * (a section already reported unknown) the key is read and dropped. */
static int read_key(reader *r, const char *section, int keep) {
  const size_t line = ev_line(r);
  if (*scalar(r) == '\0')
    return fail(r, line, "%s: empty key", section);
  if (!keep || !allowed(r, section, scalar(r))) {
    if (!next(r))
      return 0;
    if (r->ev.type != YAML_SCALAR_EVENT)
      return fail(r, ev_line(r), "%s: expected a value, found %s", section,
                  kind_name(r->ev.type));
    return 1;
  }
  char *key = strdup(scalar(r));
  if (key == NULL)
    return fail(r, line, "out of memory");
  int ok = 0;
  if (!next(r))
    goto done;
  if (r->ev.type != YAML_SCALAR_EVENT)
    fail(r, ev_line(r), "%s:%s: expected a value, found %s", section, key,
         kind_name(r->ev.type));
  else if (is_null(r))
    fail(r, line, "%s:%s: no value", section, key);
  else if (add_entry(r, section, key, line)) {
    /* The entry's own copies live as long as the set. */
    const params_entry *e = &r->out->entries[r->out->count - 1];
    const int first = pair_set_add(&r->seen, e->section, e->key, (int)line);
    if (first < 0) {
      fail(r, line, "out of memory");
    } else if (first > 0) { /* reported, dropped, and the reading goes on */
      if (report(r))
        cli_error("%s:%zu: %s:%s: repeated key (first at line %d)", r->path,
                  line, section, key, first);
      params_entry *dup = &r->out->entries[--r->out->count];
      free(dup->section);
      free(dup->key);
      free(dup->value);
      ok = 1;
    } else {
      ok = 1;
    }
  }
done:
  free(key);
  return ok;
}

/* The current event opens the section's mapping; reads up to its end
 * (keep: read_key). */
static int read_section(reader *r, const char *section, int keep) {
  for (;;) {
    if (!next(r))
      return 0;
    if (r->ev.type == YAML_MAPPING_END_EVENT)
      return 1;
    if (r->ev.type != YAML_SCALAR_EVENT)
      return fail(r, ev_line(r), "%s: expected a key, found %s", section,
                  kind_name(r->ev.type));
    if (!read_key(r, section, keep))
      return 0;
  }
}

static int remember_section(reader *r, const char *name, size_t line) {
  if (r->nsections == r->sections_cap) {
    const size_t cap = r->sections_cap != 0 ? 2 * r->sections_cap : 16;
    char **names = realloc(r->sections, cap * sizeof *names);
    if (names == NULL)
      return fail(r, line, "out of memory");
    r->sections = names;
    r->sections_cap = cap;
  }
  char *copy = strdup(name);
  if (copy == NULL)
    return fail(r, line, "out of memory");
  r->sections[r->nsections++] = copy;
  const int first = pair_set_add(&r->seen, copy, NULL, (int)line);
  if (first < 0)
    return fail(r, line, "out of memory");
  if (first > 0 && report(r)) /* its keys are read, checked for repeats */
    cli_error("%s:%zu: section '%s' repeated (first at line %d)", r->path, line,
              name, first);
  return 1;
}

/* The current event is a top-level key: a section's name. */
static int read_top_key(reader *r) {
  const size_t line = ev_line(r);
  if (r->ev.type != YAML_SCALAR_EVENT)
    return fail(r, line, "expected a section name, found %s",
                kind_name(r->ev.type));
  if (*scalar(r) == '\0')
    return fail(r, line, "empty section name");
  const int keep = allowed(r, scalar(r), NULL);
  if (!remember_section(r, scalar(r), line))
    return 0;
  const char *name = r->sections[r->nsections - 1];
  if (!next(r))
    return 0;
  if (r->ev.type == YAML_MAPPING_START_EVENT)
    return read_section(r, name, keep);
  if (is_null(r)) /* "Gravity:" with its keys not indented below it */
    return fail(r, line, "section '%s' holds no keys", name);
  if (r->ev.type == YAML_SCALAR_EVENT)
    return fail(r, line,
                "'%s' is a key outside any section (expected "
                "'Section:' with '%s' indented below it)",
                name, name);
  return fail(r, line, "section '%s' holds %s, expected a mapping of keys",
              name, kind_name(r->ev.type));
}

/* The current event starts a document; reads up to its end. */
static int read_document(reader *r) {
  if (!next(r))
    return 0;
  if (is_null(r)) /* "---" and nothing else */
    return next(r);
  if (r->ev.type != YAML_MAPPING_START_EVENT)
    return fail(r, ev_line(r),
                "the document is %s, expected a mapping of sections",
                kind_name(r->ev.type));
  for (;;) {
    if (!next(r))
      return 0;
    if (r->ev.type == YAML_MAPPING_END_EVENT)
      return next(r); /* the document's end */
    if (!read_top_key(r))
      return 0;
  }
}

static int read_stream(reader *r) {
  int documents = 0;
  if (!next(r)) /* the stream's start */
    return 0;
  for (;;) {
    if (!next(r))
      return 0;
    if (r->ev.type == YAML_STREAM_END_EVENT)
      return 1;
    if (documents++ > 0)
      return fail(r, ev_line(r), "more than one YAML document");
    if (!read_document(r))
      return 0;
  }
}

int params_read(const char *path, const params_key *keys, size_t nkeys,
                params *out) {
  memset(out, 0, sizeof *out);
  out->path = strdup(path);
  if (out->path == NULL) {
    cli_error("%s: out of memory", path);
    return 0;
  }
  reader r = {.path = path, .out = out, .keys = keys, .nkeys = nkeys};
  r.fp = fopen(path, "rb");
  if (r.fp == NULL) {
    cli_error("%s: cannot open: %s", path, strerror(errno));
    return 0;
  }
  if (!yaml_parser_initialize(&r.parser)) {
    fclose(r.fp);
    cli_error("%s: out of memory", path);
    return 0;
  }
  yaml_parser_set_input_file(&r.parser, r.fp);
  const int read = read_stream(&r);
  out->complete = read;
  if (r.errors > MAX_REPORTED)
    cli_error("%s: %zu more errors not shown (%zu in all)", path,
              r.errors - MAX_REPORTED, r.errors);
  const int ok = read && r.errors == 0;
  if (r.has_ev)
    yaml_event_delete(&r.ev);
  yaml_parser_delete(&r.parser);
  fclose(r.fp);
  for (size_t i = 0; i < r.nsections; i++)
    free(r.sections[i]);
  free(r.sections);
  free(r.seen.slots);
  return ok;
}

void params_free(params *p) {
  for (size_t i = 0; i < p->count; i++) {
    free(p->entries[i].section);
    free(p->entries[i].key);
    free(p->entries[i].value);
  }
  free(p->entries);
  free(p->path);
  memset(p, 0, sizeof *p);
}

static const params_key *find_key(const params_entry *e, const params_key *keys,
                                  size_t nkeys) {
  for (size_t k = 0; k < nkeys; k++)
    if (strcmp(keys[k].section, e->section) == 0 &&
        strcmp(keys[k].key, e->key) == 0 && keys[k].refused == NULL)
      return &keys[k];
  return NULL;
}

int params_apply(const params *p, const params_key *keys, size_t nkeys,
                 args_option *opts, size_t nopts) {
  int ok = 1;
  for (size_t i = 0; i < p->count; i++) {
    const params_entry *e = &p->entries[i];
    const params_key *key = find_key(e, keys, nkeys);
    if (key == NULL) {
      unknown_key(p->path, e->line, e->section, e->key, keys, nkeys);
      ok = 0;
      continue;
    }
    args_option *opt = NULL;
    for (size_t k = 0; k < nopts && opt == NULL; k++)
      if (strcmp(opts[k].name, key->flag) == 0)
        opt = &opts[k];
    if (opt == NULL) { /* the caller's table is wrong, not the file */
      cli_error("%s:%d: %s:%s: no option %s", p->path, e->line, e->section,
                e->key, key->flag);
      ok = 0;
      continue;
    }
    if (opt->seen)
      continue;
    char where[512];
    snprintf(where, sizeof where, "%s:%d: %s:%s", p->path, e->line, e->section,
             e->key);
    if (!args_set(opt, e->value, where))
      ok = 0;
  }
  return ok;
}
