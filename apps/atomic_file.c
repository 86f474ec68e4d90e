/* Write-to-temporary-then-rename output files (see atomic_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporaries being written, for the signal handler: an interrupted
 * run must not leave them behind either. A run's writer thread may write
 * one while the file before it is synced and renamed (snapshot_writer.c):
 * a few at a time, registered under the lock; the handler only reads the
 * slots. The signals are watched while any is registered. */
enum { PENDING_MAX = 8 };
static char *volatile pending_tmp[PENDING_MAX];
static int watchers;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

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
  for (int k = 0; k < PENDING_MAX; k++) {
    char *tmp = pending_tmp[k];
    if (tmp != NULL)
      unlink(tmp); /* async-signal-safe */
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Removes tmp if a signal ends the program. A signal the caller ignores
 * (nohup ignores SIGHUP) stays ignored. The slot taken, 1-based (0: all
 * taken, the temporary then not removed on a signal; a later run sweeps
 * it, atomic_file_temporary_base). */
static int watch_signals(char *tmp) {
  pthread_mutex_lock(&pending_lock);
  int slot = 0;
  for (int k = 0; k < PENDING_MAX && slot == 0; k++)
    if (pending_tmp[k] == NULL) {
      pending_tmp[k] = tmp;
      slot = k + 1;
    }
  if (slot != 0 && watchers++ == 0)
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
  pthread_mutex_unlock(&pending_lock);
  return slot;
}

/* Frees the slot; the last gives the signals back their dispositions
 * from before the first watch_signals. */
static void unwatch_signals(int slot) {
  if (slot == 0)
    return;
  pthread_mutex_lock(&pending_lock);
  pending_tmp[slot - 1] = NULL;
  if (--watchers == 0)
    for (size_t k = 0; k < WATCHED; k++)
      sigaction(watched[k], &saved[k], NULL);
  pthread_mutex_unlock(&pending_lock);
}

/* "<dir>/.<name>.tmp-XXXXXX" next to path, so that rename stays within one
 * file system and is atomic. */
#define TMP_TAG ".tmp-"
#define TMP_SUFFIX TMP_TAG "XXXXXX"

static char *temporary_name(const char *path) {
  const char *slash = strrchr(path, '/');
  const size_t dir_len = slash != NULL ? (size_t)(slash - path) + 1 : 0;
  const char *base = path + dir_len;
  const size_t size = strlen(path) + sizeof("." TMP_SUFFIX);
  char *tmp = malloc(size);
  if (tmp != NULL)
    snprintf(tmp, size, "%.*s.%s" TMP_SUFFIX, (int)dir_len, path, base);
  return tmp;
}

size_t atomic_file_temporary_base(const char *name) {
  const size_t len = strlen(name), tail = sizeof(TMP_SUFFIX) - 1;
  if (name[0] != '.' || len < 2 + tail)
    return 0;
  const char *t = name + len - tail;
  if (strncmp(t, TMP_TAG, sizeof(TMP_TAG) - 1) != 0)
    return 0;
  for (const char *c = t + sizeof(TMP_TAG) - 1; *c != '\0'; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
          (*c >= '0' && *c <= '9')))
      return 0;
  return len - tail - 1;
}

/* mkstemp creates the file with mode 0600; an output file should get the
 * usual 0666 less the umask, as fopen would give it. */
static void set_default_mode(int fd) {
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
}

/* The inputs of the command (atomic_file_protect): as many as it reads
 * (a GADGET-2 snapshot may be in hundreds of parts), their paths copied.
 * They live as long as the process. */
typedef struct input_file {
  char *path;
  dev_t dev;
  ino_t ino;
} input_file;
static input_file *inputs;
static size_t ninputs, inputs_cap;

void atomic_file_protect(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return;
  if (ninputs == inputs_cap) {
    const size_t cap = inputs_cap == 0 ? 8 : 2 * inputs_cap;
    input_file *grown = realloc(inputs, cap * sizeof *grown);
    if (grown == NULL)
      return;
    inputs = grown;
    inputs_cap = cap;
  }
  char *copy = strdup(path);
  if (copy != NULL)
    inputs[ninputs++] = (input_file){copy, st.st_dev, st.st_ino};
}

/* The input that st is, or NULL. */
static const char *input_of(const struct stat *st) {
  for (size_t k = 0; k < ninputs; k++)
    if (inputs[k].dev == st->st_dev && inputs[k].ino == st->st_ino)
      return inputs[k].path;
  return NULL;
}

int atomic_file_is_protected(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && input_of(&st) != NULL;
}

/* The file path finally names: path itself unless it is a symbolic link,
 * else the link's target, followed to the end of a chain of links (a
 * relative target is relative to its link's directory). NULL with errno
 * set on failure (ELOOP past 40 links). */
static char *follow_links(const char *path) {
  char *cur = strdup(path);
  for (int hops = 0; cur != NULL; hops++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
      return cur; /* not there (yet), or no link */
    if (hops == 40) {
      free(cur);
      errno = ELOOP;
      return NULL;
    }
    char target[4096];
    const ssize_t n = readlink(cur, target, sizeof target - 1);
    if (n < 0) {
      free(cur);
      return NULL;
    }
    target[n] = '\0';
    const char *slash = strrchr(cur, '/');
    const int dir_len =
        target[0] == '/' || slash == NULL ? 0 : (int)(slash - cur) + 1;
    const size_t size = (size_t)dir_len + (size_t)n + 1;
    char *next = malloc(size);
    if (next != NULL)
      snprintf(next, size, "%.*s%s", dir_len, cur, target);
    free(cur);
    cur = next;
  }
  errno = ENOMEM;
  return NULL;
}

/* Opens a character device or a FIFO to write through it. */
static int open_direct(atomic_file *af) {
  const int fd = open(af->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    cli_error("%s: cannot open: %s", af->path, strerror(errno));
    atomic_file_discard(af);
    return 0;
  }
  af->direct = 1;
  af->tmp_path = strdup(af->path);
  af->fp = fdopen(fd, "w");
  if (af->tmp_path == NULL || af->fp == NULL) {
    cli_error("%s: cannot open: %s", af->path, strerror(errno));
    if (af->fp == NULL)
      close(fd);
    atomic_file_discard(af);
    return 0;
  }
  return 1;
}

/* What the destination is decides how it is written (atomic_file.h): st
 * is what path names, NULL for nothing yet. Returns 1 to write through
 * it, 0 for a temporary, -1 after an error. */
static int classify(const char *flag, const char *path, const struct stat *st) {
  if (st == NULL)
    return 0; /* a new file */
  const char *input = input_of(st);
  const char *sep = flag != NULL ? " " : "";
  flag = flag != NULL ? flag : "";
  if (input != NULL) {
    cli_error("%s%s%s: is the same file as the input %s: not replaced", flag,
              sep, path, input);
    return -1;
  }
  if (S_ISREG(st->st_mode))
    return 0;
  if (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode))
    return 1;
  cli_error("%s%s%s: cannot write: %s", flag, sep, path,
            S_ISDIR(st->st_mode)   ? strerror(EISDIR)
            : S_ISBLK(st->st_mode) ? "a block device (not written)"
                                   : "not a regular file, character device "
                                     "or FIFO");
  return -1;
}

int atomic_file_open(atomic_file *af, const char *path) {
  memset(af, 0, sizeof *af);
  if (*path == '\0') {
    cli_error("%s: cannot write: empty file name", path);
    return 0;
  }
  if (strcmp(path, "-") == 0) { /* the commands' name of standard output */
    cli_error("-: cannot write: '-' is standard output, which this file "
              "does not go to; name a file");
    return 0;
  }
  /* stat follows every link, /proc's too (/dev/stdout: a pipe has no
   * path): a special file is written through the name given; a regular
   * file, or none yet, is replaced at the end of the chain of links. */
  struct stat st;
  const int exists = stat(path, &st) == 0;
  af->path = exists && !S_ISREG(st.st_mode) ? strdup(path) : follow_links(path);
  if (af->path == NULL) {
    cli_error("%s: cannot follow the symbolic link: %s", path, strerror(errno));
    return 0;
  }
  const int kind = classify(NULL, path, exists ? &st : NULL);
  if (kind != 0) {
    if (kind > 0)
      return open_direct(af);
    atomic_file_discard(af);
    return 0;
  }
  char *tmp = temporary_name(af->path);
  if (tmp == NULL) {
    cli_error("%s: out of memory", path);
    atomic_file_discard(af);
    return 0;
  }
  const int fd = mkstemp(tmp);
  if (fd < 0) {
    cli_error("%s: cannot create a temporary file next to it: %s", af->path,
              strerror(errno));
    free(tmp);
    atomic_file_discard(af);
    return 0;
  }
  /* From here on tmp exists, and discard removes it. */
  af->tmp_path = tmp;
  set_default_mode(fd);
  af->watch = watch_signals(tmp);
  af->fp = fdopen(fd, "w");
  if (af->fp == NULL) {
    cli_error("%s: cannot open: %s", tmp, strerror(errno));
    close(fd);
    atomic_file_discard(af);
    return 0;
  }
  return 1;
}

int atomic_file_check(const char *flag, const char *path) {
  if (*path == '\0') {
    cli_error("%s '': cannot write: empty file name", flag);
    return 0;
  }
  if (strcmp(path, "-") == 0) {
    cli_error("%s -: cannot write: '-' is standard output, which this file "
              "does not go to; name a file",
              flag);
    return 0;
  }
  struct stat st;
  const int exists = stat(path, &st) == 0;
  const int kind = classify(flag, path, exists ? &st : NULL);
  if (kind < 0)
    return 0;
  if (kind > 0) { /* a device or a FIFO: opened only when written */
    if (access(path, W_OK) == 0)
      return 1;
    cli_error("%s %s: cannot write: %s", flag, path, strerror(errno));
    return 0;
  }
  /* A temporary made and removed where the file will be made: its
   * directory exists, is one, and takes a new file. */
  char *target = follow_links(path);
  char *tmp = target != NULL ? temporary_name(target) : NULL;
  const int fd = tmp != NULL ? mkstemp(tmp) : -1;
  const int err = errno;
  if (fd >= 0) {
    close(fd);
    unlink(tmp);
  } else if (target == NULL || tmp == NULL) {
    cli_error("%s %s: cannot follow the symbolic link: %s", flag, path,
              strerror(err));
  } else {
    cli_error("%s %s: cannot write: cannot create a file in its directory: "
              "%s",
              flag, path, strerror(err));
  }
  free(tmp);
  free(target);
  return fd >= 0;
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
  /* A device or a pipe written through may have nothing to sync. */
  if (ok && fsync(fileno(af->fp)) != 0 &&
      !(af->direct && (errno == EINVAL || errno == EROFS))) {
    ok = 0;
    err = errno;
  }
  /* Synced, its pages clean: dropped from the page cache. An output is
   * read later, if at all, by another program; a run writing 1.6 GB
   * snapshots every second would otherwise fill the memory with them
   * (and each new file then takes pages never used before). Advice: its
   * failure changes nothing. */
  if (ok && !af->direct)
    (void)posix_fadvise(fileno(af->fp), 0, 0, POSIX_FADV_DONTNEED);
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
  if (af->direct) {
    atomic_file_discard(af);
    return 1;
  }
  if (rename(af->tmp_path, af->path) != 0) {
    cli_error("%s: cannot replace: %s", af->path, strerror(errno));
    atomic_file_discard(af);
    return 0;
  }
  unwatch_signals(af->watch);
  af->watch = 0;
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
  if (af->tmp_path != NULL && !af->direct) {
    unlink(af->tmp_path);
    unwatch_signals(af->watch);
    af->watch = 0;
  }
  free(af->tmp_path);
  af->tmp_path = NULL;
  free(af->path);
  af->path = NULL;
  af->direct = 0;
}
