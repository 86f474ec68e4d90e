/* Test harness for the tilefmm tool (see harness.h). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_ARGS 32

/* Criterion runs each test in its own process: one directory each. */
static char scratch[512];

void scratch_make(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(scratch, sizeof scratch, "%s/tfmm-cli-XXXXXX",
           tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
  cr_assert_not_null(mkdtemp(scratch), "mkdtemp failed");
}

void scratch_remove(void) {
  DIR *dir = opendir(scratch);
  if (dir == NULL)
    return;
  struct dirent *e;
  char path[1024];
  while ((e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", scratch, e->d_name);
    remove(path); /* files, and the empty directories tests make */
  }
  closedir(dir);
  rmdir(scratch);
}

/* Internal calls use their own buffers, so that they never overwrite a
 * path the caller got from sp. */
typedef struct path_buf {
  char s[1024];
} path_buf;

static const char *path_in(path_buf *buf, const char *name) {
  snprintf(buf->s, sizeof buf->s, "%s/%s", scratch, name);
  return buf->s;
}

const char *sp(const char *name) {
  static path_buf ring[8];
  static int next;
  return path_in(&ring[next++ % 8], name);
}

void write_file(const char *name, const char *bytes, size_t len) {
  path_buf buf;
  FILE *fp = fopen(path_in(&buf, name), "wb");
  cr_assert_not_null(fp, "cannot create %s", name);
  cr_assert_eq(fwrite(bytes, 1, len, fp), len);
  cr_assert_eq(fclose(fp), 0);
}

void write_text(const char *name, const char *text) {
  write_file(name, text, strlen(text));
}

char *read_text(const char *name) {
  path_buf path;
  FILE *fp = fopen(path_in(&path, name), "rb");
  if (fp == NULL)
    return NULL;
  size_t cap = 4096, len = 0, got;
  char *buf = malloc(cap);
  while ((got = fread(buf + len, 1, cap - len - 1, fp)) > 0) {
    len += got;
    if (len + 1 == cap)
      buf = realloc(buf, cap *= 2);
  }
  fclose(fp);
  buf[len] = '\0';
  return buf;
}

unsigned char *read_bytes(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp, "cannot read %s", path);
  cr_assert_eq(fseek(fp, 0, SEEK_END), 0);
  const long size = ftell(fp);
  cr_assert_geq(size, 0);
  rewind(fp);
  unsigned char *bytes = malloc((size_t)size + 1);
  cr_assert_not_null(bytes);
  cr_assert_eq(fread(bytes, 1, (size_t)size, fp), (size_t)size);
  fclose(fp);
  *len = (size_t)size;
  return bytes;
}

void assert_same_text(const char *got_name, const char *want_name) {
  char *got = read_text(got_name), *want = read_text(want_name);
  cr_assert_not_null(got, "%s missing", got_name);
  cr_assert_not_null(want, "%s missing", want_name);
  cr_assert_gt(strlen(want), 0);
  cr_assert(strcmp(got, want) == 0, "%s differs from %s", got_name, want_name);
  free(got);
  free(want);
}

int exists(const char *name) {
  struct stat st;
  path_buf buf;
  return lstat(path_in(&buf, name), &st) == 0;
}

void assert_no_temporaries(void) {
  DIR *dir = opendir(scratch);
  cr_assert_not_null(dir);
  struct dirent *e;
  while ((e = readdir(dir)) != NULL)
    cr_assert(e->d_name[0] != '.' || strcmp(e->d_name, ".") == 0 ||
                  strcmp(e->d_name, "..") == 0,
              "temporary left behind: %s", e->d_name);
  closedir(dir);
}

const char *cli_path(void) {
  const char *moved = getenv("TFMM_CLI");
  return moved != NULL && moved[0] != '\0' ? moved : TFMM_CLI_PATH;
}

const char *preload_prefix(void) {
#ifdef __SANITIZE_ADDRESS__
  return "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}"
         "verify_asan_link_order=0\" ";
#else
  return "";
#endif
}

/* argv for the tool: its path, then args (NULL-ended), then NULL. */
static void cli_argv(const char *const *args, char *argv[MAX_ARGS + 2]) {
  int argc = 0;
  argv[argc++] = (char *)cli_path();
  for (; args[argc - 1] != NULL; argc++) {
    cr_assert(argc <= MAX_ARGS);
    argv[argc] = (char *)args[argc - 1];
  }
  argv[argc] = NULL;
}

int run_argv(const char *const *args) {
  char *argv[MAX_ARGS + 2];
  cli_argv(args, argv);
  const char *cli = argv[0];

  path_buf out, err_path;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, path_in(&out, "stdout.txt"),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, path_in(&err_path, "stderr.txt"),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  const int err = posix_spawn(&pid, cli, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  cr_assert_eq(err, 0, "cannot run %s: %s", cli, strerror(err));
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/* Feeds the file in_name of the scratch directory (NULL: nothing) into
 * fd, then closes it. A tool that stops reading early ends the write
 * (EPIPE, SIGPIPE ignored here). */
static void feed(int fd, const char *in_name) {
  path_buf path;
  FILE *fp = in_name != NULL ? fopen(path_in(&path, in_name), "rb") : NULL;
  cr_assert(in_name == NULL || fp != NULL, "cannot open %s", in_name);
  struct sigaction ignore = {.sa_handler = SIG_IGN}, saved;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &saved);
  char buf[8192];
  size_t got;
  int open_end = 1;
  while (fp != NULL && open_end && (got = fread(buf, 1, sizeof buf, fp)) > 0)
    for (size_t at = 0; open_end && at < got;) {
      const ssize_t put = write(fd, buf + at, got - at);
      open_end = put > 0;
      at += put > 0 ? (size_t)put : 0;
    }
  if (fp != NULL)
    fclose(fp);
  close(fd);
  sigaction(SIGPIPE, &saved, NULL);
}

/* run_argv in the scratch directory, standard input a pipe fed with
 * in_name (piped) or the file in_name itself. */
static int run_with_stdin(const char *in_name, int piped,
                          const char *const *args) {
  char *argv[MAX_ARGS + 2];
  cli_argv(args, argv);
  const char *cli = argv[0];
  path_buf out, err_path, in;
  path_in(&out, "stdout.txt");
  path_in(&err_path, "stderr.txt");
  path_in(&in, in_name != NULL ? in_name : "");
  int fds[2] = {-1, -1};
  if (piped)
    cr_assert_eq(pipe(fds), 0);
  else
    cr_assert_not_null(in_name);
  const pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) { /* the child: only async-signal-safe calls until exec */
    const int i = piped ? fds[0] : open(in.s, O_RDONLY),
              o = open(out.s, O_WRONLY | O_CREAT | O_TRUNC, 0644),
              e = open(err_path.s, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (i < 0 || o < 0 || e < 0 || chdir(scratch) != 0 || dup2(i, 0) < 0 ||
        dup2(o, 1) < 0 || dup2(e, 2) < 0)
      _exit(127);
    if (piped)
      close(fds[1]);
    execve(cli, argv, environ);
    _exit(127);
  }
  if (piped) {
    close(fds[0]);
    feed(fds[1], in_name);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

int run_piped_argv(const char *in_name, const char *const *args) {
  return run_with_stdin(in_name, 1, args);
}

int run_redirected_argv(const char *in_name, const char *const *args) {
  return run_with_stdin(in_name, 0, args);
}

static void assert_file_has(const char *name, const char *text) {
  char *all = read_text(name);
  cr_assert_not_null(all);
  cr_assert_not_null(strstr(all, text), "%s lacks '%s':\n%s", name, text, all);
  free(all);
}

void assert_stderr_has(const char *text) {
  assert_file_has("stderr.txt", text);
}
void assert_stdout_has(const char *text) {
  assert_file_has("stdout.txt", text);
}

void expect_failure(const char *const *args, int code, const char *needle,
                    const char *needle2) {
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1)
      write_text("out.txt", PRECIOUS);
    const int rc = run_argv(args);
    cr_assert_eq(rc, code, "exit code %d, want %d", rc, code);
    assert_stderr_has(needle);
    if (needle2 != NULL)
      assert_stderr_has(needle2);
    char *out = read_text("out.txt");
    if (pass == 0)
      cr_assert_null(out, "out.txt was created");
    else
      cr_assert_str_eq(out, PRECIOUS, "out.txt was changed");
    free(out);
    assert_no_temporaries();
  }
}

table *read_table(const char *name, int cols) {
  char *text = read_text(name);
  cr_assert_not_null(text, "%s was not written", name);
  table *t = calloc(1, sizeof *t);
  for (char *line = strtok(text, "\n"); line != NULL;
       line = strtok(NULL, "\n")) {
    if (line[0] == '#')
      continue;
    cr_assert_lt(t->rows, TABLE_ROWS);
    char *p = line, *end;
    for (int c = 0; c < cols; c++, p = end) {
      t->v[t->rows][c] = strtod(p, &end);
      cr_assert_neq(p, end, "%s: bad line '%s'", name, line);
    }
    cr_assert_eq(strspn(p, " \t"), strlen(p), "%s: extra words in '%s'", name,
                 line);
    t->rows++;
  }
  free(text);
  return t;
}

void assert_close(double got, double want, double rel, const char *what) {
  cr_assert(fabs(got - want) <= rel * fmax(fabs(want), 1e-300),
            "%s: got %.17g, want %.17g", what, got, want);
}

void file_limit_begin(file_limit *f, long long bytes) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  f->saved = malloc(sizeof(struct sigaction));
  cr_assert_not_null(f->saved);
  sigaction(SIGXFSZ, &dfl, f->saved);
  struct rlimit was, lim;
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
  f->soft = (long long)was.rlim_cur;
  lim = (struct rlimit){(rlim_t)bytes, was.rlim_max};
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
}

void file_limit_end(file_limit *f) {
  struct rlimit lim;
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &lim), 0);
  lim.rlim_cur = (rlim_t)f->soft;
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
  sigaction(SIGXFSZ, f->saved, NULL);
  free(f->saved);
  f->saved = NULL;
}

/* A gnuplot that exits 0 after writing body (printf's format) to the
 * script's output, as one does after a write that failed on a full disk
 * (issue 29). */
void fake_gnuplot_writing(const char *body) {
  char script[512];
  snprintf(script, sizeof script,
           "#!/bin/sh\nout=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\")\n"
           "printf '%s' > \"$out\"\nexit 0\n",
           body);
  write_text("gnuplot", script);
  cr_assert_eq(chmod(sp("gnuplot"), 0755), 0);
  char path[2048];
  snprintf(path, sizeof path, "%s:/usr/bin:/bin", sp(""));
  cr_assert_eq(setenv("PATH", path, 1), 0);
}

double galactic_G(void) {
  const double kpc = 3.0856775814913673e21, msun10 = 1.98841e43, kms = 1e5;
  const double t = kpc / kms;
  return 6.67430e-8 * msun10 * t * t / (kpc * kpc * kpc);
}
