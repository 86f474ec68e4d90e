/* Parameter files (apps/params.c): what a good file reads as, that every
 * malformed one is refused with its file and line, and that params_apply
 * checks values with the options' own rules and leaves flags alone. */
#define _POSIX_C_SOURCE 200809L
#include "params.h"
#include "run_options_internal.h"

#include "cli.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The code under test reports through cli_error: keep its last message,
 * poisoned before each test, every message one a line (all), and count
 * the calls. */
static char message[2048];
static char all[16384];
static int messages;

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = snprintf(message, sizeof message, "tilefmm: ");
  vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
  va_end(ap);
  const size_t used = strlen(all);
  snprintf(all + used, sizeof all - used, "%s\n", message);
  messages++;
}

static char path[512];

static void setup(void) {
  strcpy(message, "(no message)");
  all[0] = '\0';
  messages = 0;
  path[0] = '\0';
}

static void teardown(void) {
  if (path[0] != '\0')
    unlink(path);
}

TestSuite(params, .init = setup, .fini = teardown);

/* Writes text to a fresh temporary file, whose name is left in path. */
static const char *yaml(const char *text) {
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/tfmm-params-XXXXXX",
           tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
  const int fd = mkstemp(path);
  cr_assert(fd >= 0, "mkstemp failed");
  const size_t len = strlen(text);
  cr_assert_eq(write(fd, text, len), (ssize_t)len);
  cr_assert_eq(close(fd), 0);
  return path;
}

/* Asserts that the message holds "PATH:LINE: " and needle. */
static void assert_message(int line, const char *needle) {
  char where[600];
  snprintf(where, sizeof where, "tilefmm: %s:%d: ", path, line);
  cr_assert_eq(messages, 1, "%d messages, the last: %s", messages, message);
  cr_assert(strncmp(message, where, strlen(where)) == 0,
            "message '%s' does not start with '%s'", message, where);
  cr_assert(strstr(message, needle) != NULL, "message '%s' lacks '%s'", message,
            needle);
}

/* Reading text must fail at line with needle in the message. */
static void expect_reject(const char *text, int line, const char *needle) {
  params p;
  cr_assert_eq(params_read(yaml(text), NULL, 0, &p), 0, "accepted:\n%s", text);
  assert_message(line, needle);
  params_free(&p);
}

static void assert_entry(const params *p, size_t i, const char *section,
                         const char *key, const char *value, int line) {
  cr_assert(i < p->count, "entry %zu missing", i);
  const params_entry *e = &p->entries[i];
  cr_assert_str_eq(e->section, section);
  cr_assert_str_eq(e->key, key);
  cr_assert_str_eq(e->value, value);
  cr_assert_eq(e->line, line, "%s:%s at line %d, expected %d", section, key,
               e->line, line);
}

Test(params, good_file) {
  params p;
  cr_assert_eq(params_read(yaml("# a run\n"
                                "---\n"
                                "Gravity:\n"
                                "  theta: 0.5   # opening angle\n"
                                "\n"
                                "  order: 4\n"
                                "TimeIntegration:\n"
                                "  # the step\n"
                                "  dt: '0.01'\n"
                                "  name: \"a: b # not a comment\"\n"
                                "Empty: {}\n"
                                "Flow: {seed: 42}\n"),
                           NULL, 0, &p),
               1, "%s", message);
  cr_assert_eq(messages, 0);
  cr_assert_str_eq(p.path, path);
  cr_assert_eq(p.count, 5);
  assert_entry(&p, 0, "Gravity", "theta", "0.5", 4);
  assert_entry(&p, 1, "Gravity", "order", "4", 6);
  assert_entry(&p, 2, "TimeIntegration", "dt", "0.01", 9);
  assert_entry(&p, 3, "TimeIntegration", "name", "a: b # not a comment", 10);
  assert_entry(&p, 4, "Flow", "seed", "42", 12);
  params_free(&p);
  cr_assert_eq(p.count, 0);
  cr_assert_null(p.entries);
}

static void expect_empty(const char *text) {
  params p;
  cr_assert_eq(params_read(yaml(text), NULL, 0, &p), 1, "%s", message);
  cr_assert_eq(p.count, 0);
  cr_assert_eq(messages, 0);
  params_free(&p);
}

Test(params, empty_file) { expect_empty(""); }
Test(params, only_comments) { expect_empty("# nothing\n\n# here\n"); }
Test(params, only_marker) { expect_empty("---\n"); }
Test(params, marker_and_end) { expect_empty("---\n...\n"); }

Test(params, missing_file) {
  params p;
  const char *missing = "/nonexistent-tfmm-dir/run.yml";
  cr_assert_eq(params_read(missing, NULL, 0, &p), 0);
  cr_assert_eq(messages, 1);
  cr_assert(strstr(message, missing) != NULL, "%s", message);
  cr_assert(strstr(message, "No such file or directory") != NULL, "%s",
            message);
  params_free(&p);
}

Test(params, directory) {
  params p;
  const char *tmp = getenv("TMPDIR");
  const char *dir = tmp != NULL && *tmp != '\0' ? tmp : "/tmp";
  cr_assert_eq(params_read(dir, NULL, 0, &p), 0);
  cr_assert_eq(messages, 1);
  cr_assert(strstr(message, dir) != NULL, "%s", message);
  cr_assert(strstr(message, "Is a directory") != NULL, "%s", message);
  params_free(&p);
}

Test(params, malformed_indentation) {
  expect_reject("Gravity:\n  theta: 0.5\n   order: 4\n", 3, "malformed YAML");
}
Test(params, malformed_unclosed_quote) {
  expect_reject("Gravity:\n  theta: 0.5\n  name: 'abc\n", 4,
                "while scanning a quoted scalar (from line 3)");
}
Test(params, malformed_tab) {
  expect_reject("Gravity:\n\ttheta: 0.5\n", 2, "malformed YAML");
}
Test(params, malformed_utf8) {
  expect_reject("Gravity:\n  name: \xff\xfe\n", 2, "malformed YAML");
}
Test(params, document_is_list) {
  expect_reject("- Gravity\n- theta\n", 1, "the document is a list");
}
Test(params, document_is_scalar) {
  expect_reject("# x\ntheta\n", 2, "the document is a scalar");
}
Test(params, key_outside_section) {
  expect_reject("Gravity:\n  theta: 0.5\norder: 4\n", 3,
                "'order' is a key outside any section");
}
Test(params, section_without_keys) {
  expect_reject("Gravity:\ntheta: 0.5\n", 1, "'Gravity' holds no keys");
}
Test(params, section_is_list) {
  expect_reject("Gravity:\n  - 0.5\n", 1, "'Gravity' holds a list");
}
Test(params, value_is_list) {
  expect_reject("Gravity:\n  theta: 0.5\n  order: [4, 5]\n", 3,
                "Gravity:order: expected a value, found a list");
}
Test(params, value_is_block_list) {
  expect_reject("Gravity:\n  order:\n    - 4\n", 3,
                "Gravity:order: expected a value, found a list");
}
Test(params, value_is_mapping) {
  expect_reject("Gravity:\n  opening:\n    theta: 0.5\n", 3,
                "Gravity:opening: expected a value, found a mapping");
}
Test(params, section_key_not_scalar) {
  expect_reject("? [a, b]\n: {c: 1}\n", 1, "expected a section name");
}
Test(params, repeated_section) {
  expect_reject("Gravity:\n  theta: 0.5\nTime:\n  dt: 1\nGravity:\n"
                "  order: 4\n",
                5, "section 'Gravity' repeated (first at line 1)");
}
Test(params, repeated_key) {
  expect_reject("Gravity:\n  theta: 0.5\n  order: 4\n  theta: 0.6\n", 4,
                "Gravity:theta: repeated key (first at line 2)");
}
Test(params, same_key_in_two_sections) {
  params p;
  cr_assert_eq(params_read(yaml("A:\n  x: 1\nB:\n  x: 2\n"), NULL, 0, &p), 1,
               "%s", message);
  assert_entry(&p, 0, "A", "x", "1", 2);
  assert_entry(&p, 1, "B", "x", "2", 4);
  params_free(&p);
}
Test(params, empty_value) {
  expect_reject("Gravity:\n  order: 4\n  theta:\n", 3,
                "Gravity:theta: no value");
}
Test(params, null_value) {
  expect_reject("Gravity:\n  theta: ~\n", 2, "Gravity:theta: no value");
}
Test(params, empty_key) {
  expect_reject("Gravity:\n  '': 1\n", 2, "empty key");
}
Test(params, multiple_documents) {
  expect_reject("Gravity:\n  theta: 0.5\n---\nGravity:\n  theta: 0.6\n", 3,
                "more than one YAML document");
}
Test(params, anchor) {
  expect_reject("Gravity:\n  theta: &t 0.5\n", 2, "anchors (&t)");
}
Test(params, alias) { expect_reject("A:\n  x: 1\nB: *a\n", 3, "aliases"); }
Test(params, anchored_section) {
  expect_reject("A: &a\n  x: 1\nB: *a\n", 1, "anchors (&a)");
}

/* params_apply: a table and options of every kind. */
static double theta;
static int order;
static uint64_t seed;
static const char *name;

static int positive(const void *v) { return *(const double *)v > 0; }

static args_option opts[] = {
    {"--theta", ARGS_DOUBLE, &theta, positive, "a number > 0", 0, 0},
    {"--order", ARGS_INT, &order, NULL, NULL, 0, 0},
    {"--seed", ARGS_U64, &seed, NULL, NULL, 0, 0},
    {"--name", ARGS_STRING, &name, NULL, NULL, 0, 0},
};
#define NOPTS (sizeof opts / sizeof opts[0])

static const params_key keys[] = {
    {"Gravity", "theta", "--theta", NULL},
    {"Gravity", "order", "--order", NULL},
    {"Run", "seed", "--seed", NULL},
    {"Run", "name", "--name", NULL},
    {"Gravity", "mesh", "", "no mesh here"}, /* refused, with its reason */
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* Reads text (which must succeed) and applies it; options poisoned. */
static int apply(const char *text, params *p) {
  theta = -1;
  order = -1;
  seed = 7;
  name = "unset";
  cr_assert_eq(params_read(yaml(text), NULL, 0, p), 1, "%s", message);
  return params_apply(p, keys, NKEYS, opts, NOPTS);
}

Test(params, apply_all_kinds) {
  params p;
  cr_assert_eq(apply("Gravity:\n  theta: 0.25\n  order: -3\nRun:\n"
                     "  seed: 18446744073709551615\n  name: 'plummer 1k'\n",
                     &p),
               1, "%s", message);
  cr_assert_eq(messages, 0);
  cr_assert_eq(theta, 0.25);
  cr_assert_eq(order, -3);
  cr_assert_eq(seed, UINT64_MAX);
  cr_assert_str_eq(name, "plummer 1k");
  cr_assert_eq(opts[0].seen + opts[1].seen + opts[2].seen + opts[3].seen, 0);
  params_free(&p);
}

Test(params, apply_flag_wins) {
  params p;
  opts[0].seen = 1; /* --theta given on the command line */
  const int ok = apply("Gravity:\n  theta: 0.25\n  order: 6\n", &p);
  opts[0].seen = 0;
  cr_assert_eq(ok, 1, "%s", message);
  cr_assert_eq(theta, -1, "the file overwrote a flag");
  cr_assert_eq(order, 6);
  params_free(&p);
}

/* Applying text must fail at line, naming the key and with needle. */
static void expect_apply_fails(const char *text, int line, const char *key,
                               const char *needle) {
  params p;
  cr_assert_eq(apply(text, &p), 0, "applied:\n%s", text);
  assert_message(line, key);
  assert_message(line, needle);
  params_free(&p);
}

Test(params, apply_not_a_number) {
  expect_apply_fails("Gravity:\n  order: 4\n  theta: abc\n", 3, "Gravity:theta",
                     "invalid value 'abc'");
  cr_assert_eq(theta, -1, "an invalid value was stored");
}
Test(params, apply_out_of_rule) {
  expect_apply_fails("Gravity:\n  theta: -0.5\n", 2, "Gravity:theta",
                     "expected a number > 0");
  cr_assert_eq(theta, -1);
}
Test(params, apply_int_not_int) {
  expect_apply_fails("Gravity:\n  order: 4.5\n", 2, "Gravity:order",
                     "invalid value '4.5'");
}
Test(params, apply_u64_negative) {
  expect_apply_fails("Run:\n  seed: -1\n", 2, "Run:seed", "invalid value '-1'");
  cr_assert_eq(seed, 7);
}
Test(params, apply_unknown_key) {
  expect_apply_fails("Gravity:\n  theta: 0.5\n  thetta: 0.6\n", 3,
                     "unknown key 'Gravity:thetta'",
                     "(Gravity holds: theta, order)");
}
Test(params, apply_unknown_section) {
  expect_apply_fails("Run:\n  seed: 1\nGravitty:\n  theta: 0.5\n", 4,
                     "unknown section 'Gravitty'", "(sections: Gravity, Run)");
}

/* Asserts that all holds "PATH:LINE: " followed by needle. */
static void assert_among(int line, const char *needle) {
  char want[1200];
  snprintf(want, sizeof want, "tilefmm: %s:%d: %s", path, line, needle);
  cr_assert(strstr(all, want) != NULL, "no '%s' among:\n%s", want, all);
}

/* Every unknown key and section, and every repeat, is reported in one
 * reading, each at its line; the keys the table allows are still read. */
Test(params, table_reports_every_error_at_once) {
  params p;
  cr_assert_eq(params_read(yaml("Gravity:\n  theta: 0.5\n  thetta: 0.6\n"
                                "Gravitty:\n  theta: 0.5\n  order: 1\n"
                                "Run:\n  seed: 1\n  seed: 2\n  sed: 3\n"
                                "Gravity:\n  order: 3\n"),
                           keys, NKEYS, &p),
               0);
  cr_assert_eq(messages, 5, "%s", all);
  assert_among(3, "unknown key 'Gravity:thetta' (Gravity holds: theta, "
                  "order)");
  assert_among(4, "unknown section 'Gravitty' (sections: Gravity, Run)");
  assert_among(9, "Run:seed: repeated key (first at line 8)");
  assert_among(10, "unknown key 'Run:sed'");
  assert_among(11, "section 'Gravity' repeated (first at line 1)");
  cr_assert_eq(p.complete, 1);
  cr_assert_eq(p.count, 3, "the good keys are kept, the repeat dropped");
  assert_entry(&p, 0, "Gravity", "theta", "0.5", 2);
  assert_entry(&p, 1, "Run", "seed", "1", 8);
  assert_entry(&p, 2, "Gravity", "order", "3", 12);
  params_free(&p);
}

/* A key the table refuses is an error quoting its reason, not "unknown",
 * and is left out of the lists of what a section holds. */
Test(params, table_refuses_with_a_reason) {
  params p;
  cr_assert_eq(params_read(yaml("Gravity:\n  mesh: 3\n  order: 2\n"
                                "  ordr: 1\n"),
                           keys, NKEYS, &p),
               0);
  cr_assert_eq(messages, 2, "%s", all);
  assert_among(2, "Gravity:mesh: no mesh here");
  assert_among(4, "unknown key 'Gravity:ordr' (Gravity holds: theta, order)");
  cr_assert_eq(p.count, 1);
  assert_entry(&p, 0, "Gravity", "order", "2", 3);
  params_free(&p);
}

/* A value that is no scalar (or malformed YAML) still stops the reading,
 * after reporting what came before it. */
Test(params, table_errors_then_malformed) {
  params p;
  cr_assert_eq(params_read(yaml("Gravity:\n  theta: 0.5\n  thetta: 0.6\n"
                                "  order: [unclosed\n"),
                           keys, NKEYS, &p),
               0);
  cr_assert_eq(messages, 2, "%s", all);
  assert_among(3, "unknown key 'Gravity:thetta'");
  assert_among(4, "Gravity:order: expected a value, found a list");
  cr_assert_eq(p.complete, 0);
  params_free(&p);
}

/* params_apply reports every bad value, not only the first. */
Test(params, apply_reports_every_bad_value) {
  params p;
  cr_assert_eq(apply("Gravity:\n  theta: abc\n  order: 4.5\nRun:\n"
                     "  seed: 3\n",
                     &p),
               0);
  cr_assert_eq(messages, 2, "%s", all);
  assert_among(2, "Gravity:theta: invalid value 'abc'");
  assert_among(3, "Gravity:order: invalid value '4.5'");
  cr_assert_eq(seed, 3, "a good value after the bad ones is applied");
  params_free(&p);
}

/* The keys the table holds read as without it. */
Test(params, table_accepts_its_keys) {
  params p;
  cr_assert_eq(params_read(yaml("Run:\n  name: x\nGravity:\n  order: 3\n"),
                           keys, NKEYS, &p),
               1, "%s", message);
  cr_assert_eq(messages, 0);
  assert_entry(&p, 0, "Run", "name", "x", 2);
  assert_entry(&p, 1, "Gravity", "order", "3", 4);
  params_free(&p);
}

/* Writes a file of one section holding count distinct keys k0 .. k(n-1),
 * then tail. */
static void many_keys(size_t count, const char *section, const char *tail) {
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/tfmm-params-XXXXXX",
           tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
  const int fd = mkstemp(path);
  cr_assert(fd >= 0, "mkstemp failed");
  FILE *fp = fdopen(fd, "w");
  cr_assert_not_null(fp);
  fprintf(fp, "%s:\n", section);
  for (size_t k = 0; k < count; k++)
    fprintf(fp, "  k%zu: %zu\n", k, k);
  fputs(tail, fp);
  cr_assert_eq(fclose(fp), 0);
}

/* 200,000 unknown keys with the table: the first 20 are printed, then
 * their count, in linear time (quadratic checking took minutes here). */
Test(params, table_counts_a_huge_file_of_errors, .timeout = 600) {
  many_keys(200000, "Gravity", "");
  params p;
  cr_assert_eq(params_read(path, keys, NKEYS, &p), 0);
  cr_assert_eq(messages, 21, "%d messages", messages);
  assert_among(2, "unknown key 'Gravity:k0'");
  assert_among(21, "unknown key 'Gravity:k19'");
  cr_assert(strstr(message, "199980 more errors not shown (200000 in all)") !=
                NULL,
            "%s", message);
  params_free(&p);
}

/* Without a table, 200,000 distinct keys all read (each checked for a
 * repeat in constant time), and a repeat of one of the first keys at the
 * end is found and named with its first line. */
Test(params, repeats_found_among_many_keys, .timeout = 600) {
  many_keys(200000, "S", "  k7: again\n");
  params p;
  cr_assert_eq(params_read(path, NULL, 0, &p), 0);
  assert_message(200002, "S:k7: repeated key (first at line 9)");
  cr_assert_eq(p.count, 200000, "every key was read, the repeat dropped");
  assert_entry(&p, 199999, "S", "k199999", "199999", 200001);
  params_free(&p);
}

/* A model's default softening: 0.01 up to 2^20 bodies, then shrinking
 * with the mean distance between bodies, (2^20 / N)^(1/3): 8 times the
 * bodies halve it, 16 times the bodies take it to 0.01 / 16^(1/3). */
Test(params, default_eps_follows_the_mean_spacing_above_a_million) {
  cr_expect_eq(run_default_eps(1), 0.01);
  cr_expect_eq(run_default_eps(262144), 0.01);
  cr_expect_eq(run_default_eps(1048576), 0.01);
  cr_expect_eq(run_default_eps(8 * 1048576), 0.005);
  const double e16 = run_default_eps(16 * 1048576);
  cr_expect(fabs(e16 - 0.01 / 2.5198420997897464) < 1e-17, "%.17g", e16);
  cr_expect(run_default_eps(1048577) < 0.01);
  cr_expect(run_default_eps(1048577) > 0.0099999);
}
