/* Running the tilefmm tool in the tests: a scratch directory per test, the
 * tool spawned as a child with its standard output and error captured in
 * files there, and readers for what it writes. */
#ifndef TFMM_CLI_HARNESS_H
#define TFMM_CLI_HARNESS_H

#include <stddef.h>

/* What a failing command must leave unchanged in an existing out.txt. */
#define PRECIOUS "precious contents\n"

/* Suite .init and .fini: make and remove the test's scratch directory. */
void scratch_make(void);
void scratch_remove(void);

/* The path of name in the scratch directory. The result lives until eight
 * more calls of sp; the other functions here do not call it. */
const char *sp(const char *name);

void write_file(const char *name, const char *bytes, size_t len);
void write_text(const char *name, const char *text);
/* The whole file as a string, or NULL when it does not exist; free it. */
char *read_text(const char *name);
/* The bytes of the file at path (a path, not a scratch name), which must
 * exist, *len of them; free it. */
unsigned char *read_bytes(const char *path, size_t *len);
/* Asserts that got_name exists and holds exactly want_name's text, which
 * is not empty. */
void assert_same_text(const char *got_name, const char *want_name);
int exists(const char *name);

/* Asserts that no temporary of an atomic write survives: they are the
 * only names the tool makes that start with '.'. */
void assert_no_temporaries(void);

/* The program under test: the build's, or TFMM_CLI where the build tree
 * was moved (the GPU machine runs a copy of it at another path). */
const char *cli_path(void);

/* What a shell line that preloads a stand-in library (LD_PRELOAD) into
 * the tool puts before it: under AddressSanitizer (scripts/sanitize) the
 * preload comes before ASan's runtime, which ASan refuses unless told;
 * elsewhere "". */
const char *preload_prefix(void);

/* Runs the tool with the NULL-terminated args, its standard output and
 * error in stdout.txt and stderr.txt. Returns the exit status, or 128 +
 * the signal that killed it. */
int run_argv(const char *const *args);
#define RUN(...) run_argv((const char *const[]){__VA_ARGS__, NULL})

/* run_argv with standard input a pipe that carries the file in_name of
 * the scratch directory (NULL: nothing), and the scratch directory as the
 * working directory (a file the tool names "-" or "x" lands there). */
int run_piped_argv(const char *in_name, const char *const *args);
#define RUN_PIPED(in, ...)                                                     \
  run_piped_argv(in, (const char *const[]){__VA_ARGS__, NULL})

/* run_piped_argv with standard input the file in_name itself, as a
 * shell's '< FILE' opens it: a regular file, not a pipe. */
int run_redirected_argv(const char *in_name, const char *const *args);
#define RUN_REDIRECTED(in, ...)                                                \
  run_redirected_argv(in, (const char *const[]){__VA_ARGS__, NULL})

void assert_stderr_has(const char *text);
void assert_stdout_has(const char *text);

/* Runs args twice, first with no out.txt, then with out.txt holding
 * PRECIOUS: each run must exit with code, print needle and needle2 (when
 * not NULL) on standard error, leave out.txt absent or unchanged, and
 * leave no temporary. */
void expect_failure(const char *const *args, int code, const char *needle,
                    const char *needle2);

/* The numbers of a file written by the tool, comment lines skipped. */
#define TABLE_ROWS 2048
typedef struct table {
  size_t rows;
  double v[TABLE_ROWS][7];
} table;

/* Reads name, whose every other line must hold cols numbers; free it. */
table *read_table(const char *name, int cols);

void assert_close(double got, double want, double rel, const char *what);

/* A file-size limit for the tool's children, as `ulimit -f` sets it in a
 * shell: the soft limit only (so that it can be raised back), with
 * SIGXFSZ at its default. file_limit_end restores both. */
typedef struct file_limit {
  long long soft; /* the soft limit before */
  void *saved;    /* the SIGXFSZ action before (struct sigaction) */
} file_limit;
void file_limit_begin(file_limit *f, long long bytes);
void file_limit_end(file_limit *f);

/* A fake gnuplot first on PATH (the scratch directory, then /usr/bin and
 * /bin) that writes body, a printf format, to the script's output and
 * exits 0, as gnuplot does after a write that failed on a full disk. */
void fake_gnuplot_writing(const char *body);

/* G in kpc, 1e10 Msun and km/s (--units galactic) from CODATA's G and
 * the IAU's units, computed here independently of the tool's units.c. */
double galactic_G(void);

#endif
