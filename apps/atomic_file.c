/* Write-to-temporary-then-rename output files (see atomic_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary being written, for the signal handler: an interrupted run
 * must not leave it behind either. One output file at a time. */
static char *volatile pending_tmp;

static const int watched[] = {SIGINT, SIGTERM, SIGHUP};
#define WATCHED (sizeof watched / sizeof watched[0])
static struct sigaction saved[WATCHED];

static void on_signal(int sig);

/* A signal the program handles itself (tilefmm run stops after its step):
 * its handler runs and the write goes on. Whatever disposition the handler
 * leaves (say SIG_DFL, so that a second signal ends the program) becomes
 * the one restored after the write and obeyed here meanwhile. Returns 0
 * when the program has no handler of its own for sig. */
static int pass_on(int sig) {
  for (size_t k = 0; k < WATCHED; k++) {
    if (watched[k] != sig || saved[k].sa_handler == SIG_DFL ||
        saved[k].sa_handler == SIG_IGN)
      continue;
    saved[k].sa_handler(sig);
    struct sigaction left;
    sigaction(sig, NULL, &left); /* async-signal-safe, as is the next */
    if (left.sa_handler != on_signal) {
      saved[k] = left;
      struct sigaction again = left;
      again.sa_handler = on_signal;
      sigaction(sig, &again, NULL);
    }
    return 1;
  }
  return 0;
}

static void on_signal(int sig) {
  if (pass_on(sig))
    return;
  char *tmp = pending_tmp;
  if (tmp != NULL)
    unlink(tmp); /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Removes tmp if a signal ends the program. A signal the caller ignores
 * (nohup ignores SIGHUP) stays ignored. */
static void watch_signals(char *tmp) {
  pending_tmp = tmp;
  for (size_t k = 0; k < WATCHED; k++) {
    sigaction(watched[k], NULL, &saved[k]);
    if (saved[k].sa_handler == SIG_IGN)
      continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(watched[k], &sa, NULL);
  }
}

/* Gives the signals back their dispositions from before watch_signals. */
static void unwatch_signals(void) {
  for (size_t k = 0; k < WATCHED; k++)
    sigaction(watched[k], &saved[k], NULL);
  pending_tmp = NULL;
}

/* "<dir>/.<name>.tmp-XXXXXX" next to path, so that rename stays within one
 * file system and is atomic. */
static char *temporary_name(const char *path) {
  const char *slash = strrchr(path, '/');
  const size_t dir_len = slash != NULL ? (size_t)(slash - path) + 1 : 0;
  const char *base = path + dir_len;
  const size_t size = strlen(path) + sizeof("..tmp-XXXXXX");
  char *tmp = malloc(size);
  if (tmp != NULL)
    snprintf(tmp, size, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, base);
  return tmp;
}

/* mkstemp creates the file with mode 0600; an output file should get the
 * usual 0666 less the umask, as fopen would give it. */
static void set_default_mode(int fd) {
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
}

static int is_directory(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int atomic_file_open(atomic_file *af, const char *path) {
  memset(af, 0, sizeof *af);
  if (*path == '\0' || is_directory(path)) {
    cli_error("%s: cannot write: %s", path,
              *path == '\0' ? "empty file name" : strerror(EISDIR));
    return 0;
  }
  af->path = strdup(path);
  char *tmp = temporary_name(path);
  if (af->path == NULL || tmp == NULL) {
    cli_error("%s: out of memory", path);
    free(tmp);
    atomic_file_discard(af);
    return 0;
  }
  const int fd = mkstemp(tmp);
  if (fd < 0) {
    cli_error("%s: cannot create a temporary file next to it: %s", path,
              strerror(errno));
    free(tmp);
    atomic_file_discard(af);
    return 0;
  }
  /* From here on tmp exists, and discard removes it. */
  af->tmp_path = tmp;
  set_default_mode(fd);
  watch_signals(tmp);
  af->fp = fdopen(fd, "w");
  if (af->fp == NULL) {
    cli_error("%s: cannot open: %s", tmp, strerror(errno));
    close(fd);
    atomic_file_discard(af);
    return 0;
  }
  return 1;
}

/* Makes the rename itself durable; failure here loses nothing already
 * written, so it is not reported. */
static void sync_directory(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir =
      slash != NULL ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
  if (dir == NULL)
    return;
  const int fd = open(dir, O_RDONLY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  free(dir);
}

/* Flush, sync and close: the first error is the one reported. */
static int finish_writing(atomic_file *af) {
  int ok = fflush(af->fp) == 0 && !ferror(af->fp);
  int err = ok ? 0 : errno;
  if (ok && fsync(fileno(af->fp)) != 0) {
    ok = 0;
    err = errno;
  }
  if (fclose(af->fp) != 0 && ok) {
    ok = 0;
    err = errno;
  }
  af->fp = NULL;
  if (!ok)
    cli_error("%s: cannot write: %s", af->path,
              err != 0 ? strerror(err) : "I/O error");
  return ok;
}

int atomic_file_commit(atomic_file *af) {
  if (!finish_writing(af)) {
    atomic_file_discard(af);
    return 0;
  }
  if (rename(af->tmp_path, af->path) != 0) {
    cli_error("%s: cannot replace: %s", af->path, strerror(errno));
    atomic_file_discard(af);
    return 0;
  }
  unwatch_signals();
  free(af->tmp_path);
  af->tmp_path = NULL;
  sync_directory(af->path);
  free(af->path);
  af->path = NULL;
  return 1;
}

void atomic_file_discard(atomic_file *af) {
  if (af->fp != NULL)
    fclose(af->fp);
  af->fp = NULL;
  if (af->tmp_path != NULL) {
    unlink(af->tmp_path);
    unwatch_signals();
  }
  free(af->tmp_path);
  af->tmp_path = NULL;
  free(af->path);
  af->path = NULL;
}
