/* The directory a run writes to (see run_dir.h). */
#define _POSIX_C_SOURCE 200809L
#include "run_dir.h"

#include "atomic_file.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_NAME ".tilefmm-run.lock"

/* Whether name[0 .. len) is a file a run writes: checkpoint.hdf5,
 * statistics.csv, used_parameters.yml, unused_parameters.yml,
 * picture.png, energy.png or snapshot_NNNN.hdf5. */
static int is_run_file(const char *name, size_t len) {
  static const char *const fixed[] = {
      "checkpoint.hdf5",       "statistics.csv", "used_parameters.yml",
      "unused_parameters.yml", "picture.png",    "energy.png"};
  for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
    if (len == strlen(fixed[k]) && strncmp(name, fixed[k], len) == 0)
      return 1;
  const size_t pre = strlen("snapshot_"), post = strlen(".hdf5");
  if (len < pre + 4 + post || strncmp(name, "snapshot_", pre) != 0 ||
      strncmp(name + len - post, ".hdf5", post) != 0)
    return 0;
  for (size_t i = pre; i < len - post; i++)
    if (name[i] < '0' || name[i] > '9')
      return 0;
  return 1;
}

static char *join(const char *dir, const char *name) {
  const size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (p == NULL)
    cli_error("out of memory");
  else
    snprintf(p, len, "%s/%s", dir, name);
  return p;
}

/* mkdir -p: every missing directory of d->path, the topmost one created
 * kept in d->made. */
static int make_dirs(run_dir *d) {
  char *p = strdup(d->path);
  if (p == NULL) {
    cli_error("out of memory");
    return 0;
  }
  int ok = 1;
  for (char *s = p + 1; ok; s++) {
    const int last = (*s == '\0');
    if (*s == '/' || last) {
      *s = '\0';
      if (mkdir(p, 0777) == 0) {
        if (d->made == NULL)
          d->made = strdup(p);
      } else if (errno != EEXIST) {
        cli_error("--out %s: cannot create %s: %s", d->path, p,
                  strerror(errno));
        ok = 0;
      }
      if (last)
        break;
      *s = '/';
    }
  }
  struct stat sb;
  if (ok && (stat(d->path, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
    cli_error("--out %s: not a directory", d->path);
    ok = 0;
  }
  free(p);
  return ok;
}

/* Takes the directory's lock, or names the process that holds it. */
static int lock_dir(run_dir *d) {
  char *path = join(d->path, LOCK_NAME);
  if (path == NULL)
    return 0;
  const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    cli_error("%s: cannot create the run's lock: %s", path, strerror(errno));
    free(path);
    return 0;
  }
  free(path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = "";
    const ssize_t n = read(fd, pid, sizeof pid - 1);
    pid[n > 0 ? n : 0] = '\0';
    pid[strcspn(pid, "\n")] = '\0';
    if (err == EWOULDBLOCK)
      cli_error("--out %s: another tilefmm run%s%s%s is writing to this "
                "directory",
                d->path, pid[0] != '\0' ? " (process " : "", pid,
                pid[0] != '\0' ? ")" : "");
    else
      cli_error("--out %s: cannot lock: %s", d->path, strerror(err));
    close(fd);
    return 0;
  }
  char pid[32];
  const int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || write(fd, pid, (size_t)len) != len) {
    /* the pid is a courtesy for the message above */
  }
  d->locked = 1;
  d->lock_fd = fd;
  return 1;
}

/* Calls visit on every entry of the directory; stops at the first that
 * returns 0 (and returns 0 then). */
static int each_entry(const run_dir *d,
                      int (*visit)(const run_dir *d, const char *name)) {
  DIR *dir = opendir(d->path);
  if (dir == NULL) {
    cli_error("--out %s: cannot read: %s", d->path, strerror(errno));
    return 0;
  }
  int ok = 1;
  const struct dirent *e;
  while (ok && (e = readdir(dir)) != NULL)
    ok = visit(d, e->d_name);
  closedir(dir);
  return ok;
}

/* Removes a temporary of one of the run's files: a run killed while
 * writing it left it behind, and the lock says no run is writing now. */
static int sweep_temporary(const run_dir *d, const char *name) {
  const size_t base = atomic_file_temporary_base(name);
  if (base > 0 && is_run_file(name + 1, base)) {
    char *path = join(d->path, name);
    if (path == NULL)
      return 0;
    if (unlink(path) == 0)
      fprintf(stderr,
              "tilefmm run: note: removed %s, left by a run that "
              "was killed\n",
              path);
    free(path);
  }
  return 1;
}

/* Refuses a fresh run where a run's file is. */
static int refuse_run_file(const run_dir *d, const char *name) {
  if (!is_run_file(name, strlen(name)))
    return 1;
  char *checkpoint = join(d->path, "checkpoint.hdf5");
  struct stat st;
  const int has_checkpoint = checkpoint != NULL && stat(checkpoint, &st) == 0;
  cli_error("--out %s holds a run (%s): continue it with --restart %s, or "
            "start afresh there with --force (which removes it)",
            d->path, name,
            has_checkpoint ? checkpoint : "CHECKPOINT (it has none)");
  free(checkpoint);
  return 0;
}

/* Refuses --force where a run's file is an input of this run. */
static int refuse_input(const run_dir *d, const char *name) {
  if (!is_run_file(name, strlen(name)))
    return 1;
  char *path = join(d->path, name);
  const int input = path == NULL || atomic_file_is_protected(path);
  if (path != NULL && input)
    cli_error("%s: is an input of this run: --force does not remove it (copy "
              "it elsewhere first)",
              path);
  free(path);
  return !input;
}

/* Removes one of the run's files. */
static int remove_run_file(const run_dir *d, const char *name) {
  if (!is_run_file(name, strlen(name)))
    return 1;
  char *path = join(d->path, name);
  int ok = path != NULL;
  if (ok && unlink(path) != 0 && errno != ENOENT) {
    cli_error("%s: cannot remove: %s", path, strerror(errno));
    ok = 0;
  }
  free(path);
  return ok;
}

int run_dir_claim(run_dir *d, int fresh, int force) {
  if (!make_dirs(d) || !lock_dir(d) || !each_entry(d, sweep_temporary))
    return 0;
  if (fresh && !force && !each_entry(d, refuse_run_file))
    return 0;
  if (fresh && force &&
      (!each_entry(d, refuse_input) || !each_entry(d, remove_run_file)))
    return 0;
  d->claimed = 1;
  return 1;
}

void run_dir_abandon(run_dir *d) {
  each_entry(d, remove_run_file);
  char *lock = join(d->path, LOCK_NAME);
  if (lock != NULL)
    unlink(lock);
  free(lock);
  if (d->made == NULL)
    return;
  char *p = strdup(d->path);
  while (p != NULL && rmdir(p) == 0 && strcmp(p, d->made) != 0) {
    char *slash = strrchr(p, '/');
    if (slash == NULL || slash == p)
      break;
    *slash = '\0';
  }
  free(p);
}

void run_dir_release(run_dir *d) {
  if (d->locked)
    close(d->lock_fd); /* and the lock with it */
  d->locked = 0;
  free(d->made);
  d->made = NULL;
}
