/* Reading a snapshot in a child process (see isolated_read.h).
 *
 * Why here and not in the library: a library that forks surprises its
 * host (Python, an MPI rank, a program with threads: only the calling
 * thread lives on in the child), and must not change signal dispositions
 * or resource limits; the tool is a process of its own, reads its inputs
 * before its threads do any work, and may do both in the child.
 *
 * The child reads with tfmm_snapshot_read, writes the result to a pipe
 * (a header, the message, the arrays, the attributes; each array freed
 * once sent, so that the two copies overlap by one array at most) and
 * leaves with _exit: no atexit handler, no HDF5 close of anything the
 * parent had open. */
#define _DEFAULT_SOURCE /* wait4 */
#define _POSIX_C_SOURCE 200809L
#include "isolated_read.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define WIRE_MAGIC 0x74666d6dU /* "tfmm" */

/* What precedes the arrays on the pipe. */
typedef struct wire {
  uint32_t magic;
  int32_t status;
  uint64_t n;
  double time;
  tfmm_unit_system units;
  int32_t units_source, format;
  double G;
  uint8_t has_acc, has_pot, has_bins, has_note;
  uint8_t pad[4]; /* no padding the compiler adds: every byte sent is set */
  uint64_t nparams, nstate, nfiles;
  uint64_t message_len; /* bytes of the message, its NUL included */
} wire;

/* ---- the child --------------------------------------------------------- */

static int put(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    const ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return 0;
    p += w;
    len -= (size_t)w;
  }
  return 1;
}

static int put_text(int fd, const char *s) {
  const uint64_t len = strlen(s);
  return put(fd, &len, sizeof len) && put(fd, s, len);
}

/* Sends an array and frees it. */
static int put_array(int fd, void *data, size_t len) {
  const int ok = data == NULL || put(fd, data, len);
  free(data);
  return ok;
}

static int put_attrs(int fd, const tfmm_attr *a, size_t count) {
  int ok = 1;
  for (size_t k = 0; ok && k < count; k++)
    ok = put_text(fd, a[k].name) && put_text(fd, a[k].value);
  return ok;
}

static int send_snapshot(int fd, tfmm_snapshot *t, tfmm_status st,
                         const char *message) {
  const wire w = {.magic = WIRE_MAGIC,
                  .status = (int32_t)st,
                  .n = t->n,
                  .time = t->time,
                  .units = t->units,
                  .units_source = (int32_t)t->units_source,
                  .format = (int32_t)t->format,
                  .G = t->G,
                  .has_acc = t->acc != NULL,
                  .has_pot = t->pot != NULL,
                  .has_bins = t->bins != NULL,
                  .has_note = t->note != NULL,
                  .nparams = t->nparams,
                  .nstate = t->nstate,
                  .nfiles = t->nfiles,
                  .message_len = strlen(message) + 1};
  const size_t n = t->n, d = sizeof(double);
  int ok = put(fd, &w, sizeof w) && put(fd, message, w.message_len) &&
           (t->note == NULL || put_text(fd, t->note));
  /* A failed read holds no bodies: only what was read is sent. */
  if (ok && st == TFMM_OK) {
    ok = put_array(fd, t->pos, 3 * n * d) && put_array(fd, t->vel, 3 * n * d) &&
         put_array(fd, t->mass, n * d) && put_array(fd, t->acc, 3 * n * d) &&
         put_array(fd, t->pot, n * d) &&
         put_array(fd, t->ids, n * sizeof(uint64_t)) &&
         put_array(fd, t->bins, n);
    t->pos = t->vel = t->mass = t->acc = t->pot = NULL;
    t->ids = NULL;
    t->bins = NULL;
    ok = ok && put_attrs(fd, t->params, t->nparams) &&
         put_attrs(fd, t->state, t->nstate);
    for (size_t k = 0; ok && k < t->nfiles; k++)
      ok = put_text(fd, t->files[k]);
  }
  return ok;
}

/* The child's CPU bound, in seconds: TILEFMM_READ_CPU_LIMIT, else 60 s
 * plus 1 s per 4 MiB of the file (reading, gunzipping and converting
 * run at hundreds of MB/s: a reader past that is in a loop). */
static rlim_t cpu_bound(const char *path) {
  const char *env = getenv(ISOLATED_READ_ENV_CPU);
  if (env != NULL && env[0] != '\0') {
    char *end;
    const double s = strtod(env, &end);
    if (*end == '\0' && s >= 1 && s < 1e9)
      return (rlim_t)s;
  }
  struct stat st;
  const double bytes = stat(path, &st) == 0 ? (double)st.st_size : 0;
  return (rlim_t)(60 + bytes / (4 << 20));
}

static void child(int fd, const char *path, const tfmm_read_options *o,
                  rlim_t cpu) {
  /* The tool's handlers (atomic_file's removes the parent's temporary,
   * run's stops its steps) are not the child's business; a damaged
   * file's crash leaves no core file behind; past its CPU time the
   * kernel kills it (SIGXCPU at the soft bound, SIGKILL a second on). */
  static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,
                             SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ};
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
    signal(sigs[k], SIG_DFL);
  const struct rlimit core = {0, 0}, time = {cpu, cpu + 1};
  setrlimit(RLIMIT_CORE, &core);
  setrlimit(RLIMIT_CPU, &time);
  static char message[8192];
  tfmm_snapshot t;
  const tfmm_status st =
      tfmm_snapshot_read(path, o, &t, message, sizeof message);
  const int ok = send_snapshot(fd, &t, st, message);
  tfmm_snapshot_free(&t); /* what is left of it: a leak checker watches */
  _exit(ok ? 0 : 3);
}

/* ---- the parent -------------------------------------------------------- */

static int get(int fd, void *data, size_t len) {
  char *p = data;
  while (len > 0) {
    const ssize_t r = read(fd, p, len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return 0;
    p += r;
    len -= (size_t)r;
  }
  return 1;
}

/* A string sent by put_text (NULL when the pipe ends or memory does). */
static char *get_text(int fd) {
  uint64_t len;
  if (!get(fd, &len, sizeof len) || len > ((uint64_t)1 << 32))
    return NULL;
  char *s = malloc((size_t)len + 1);
  if (s == NULL || !get(fd, s, (size_t)len)) {
    free(s);
    return NULL;
  }
  s[len] = '\0';
  return s;
}

static void *get_array(int fd, int present, size_t len, int *ok) {
  if (!*ok || !present)
    return NULL;
  void *data = malloc(len > 0 ? len : 1);
  *ok = data != NULL && get(fd, data, len);
  return data;
}

static tfmm_attr *get_attrs(int fd, uint64_t count, int *ok) {
  if (!*ok || count == 0)
    return NULL;
  tfmm_attr *a = count < SIZE_MAX / sizeof *a ? calloc(count, sizeof *a) : NULL;
  *ok = a != NULL;
  for (uint64_t k = 0; *ok && k < count; k++) {
    a[k].name = get_text(fd);
    a[k].value = get_text(fd);
    *ok = a[k].name != NULL && a[k].value != NULL;
  }
  return a;
}

/* What the child sent, into out; *st and message its result. Returns 0
 * when the pipe ended early (the child died). */
static int receive(int fd, tfmm_snapshot *out, tfmm_status *st, char *message,
                   size_t size) {
  wire w;
  if (!get(fd, &w, sizeof w) || w.magic != WIRE_MAGIC || w.message_len == 0 ||
      w.message_len > (1u << 20))
    return 0;
  char *text = malloc(w.message_len);
  int ok = text != NULL && get(fd, text, w.message_len);
  if (ok && message != NULL && size > 0)
    snprintf(message, size, "%s", text);
  free(text);
  out->note = ok && w.has_note ? get_text(fd) : NULL;
  ok = ok && (!w.has_note || out->note != NULL);
  *st = (tfmm_status)w.status;
  out->format = (tfmm_format)w.format;
  if (!ok || *st != TFMM_OK)
    return ok;
  const size_t n = (size_t)w.n, d = sizeof(double);
  ok = w.n <= SIZE_MAX / (3 * d);
  out->n = n;
  out->time = w.time;
  out->units = w.units;
  out->units_source = (tfmm_units_source)w.units_source;
  out->G = w.G;
  out->pos = get_array(fd, 1, 3 * n * d, &ok);
  out->vel = get_array(fd, 1, 3 * n * d, &ok);
  out->mass = get_array(fd, 1, n * d, &ok);
  out->acc = get_array(fd, w.has_acc, 3 * n * d, &ok);
  out->pot = get_array(fd, w.has_pot, n * d, &ok);
  out->ids = get_array(fd, 1, n * sizeof(uint64_t), &ok);
  out->bins = get_array(fd, w.has_bins, n, &ok);
  out->params = get_attrs(fd, w.nparams, &ok);
  out->nparams = out->params != NULL ? (size_t)w.nparams : 0;
  out->state = get_attrs(fd, w.nstate, &ok);
  out->nstate = out->state != NULL ? (size_t)w.nstate : 0;
  if (ok && w.nfiles > 0) {
    out->files = calloc((size_t)w.nfiles, sizeof *out->files);
    ok = out->files != NULL;
    for (uint64_t k = 0; ok && k < w.nfiles; k++) {
      out->files[k] = get_text(fd);
      ok = out->files[k] != NULL;
      out->nfiles += ok;
    }
  }
  return ok;
}

/* Why the child did not finish, into message: a signal sent to the
 * whole process group (Ctrl-C) interrupted it; the kernel's at its CPU
 * bound (used: its CPU seconds) means a loop; any other signal, a crash
 * on the file. */
static void child_fate(const char *path, int status, rlim_t cpu, double used,
                       char *message, size_t size) {
  if (message == NULL || size == 0)
    return;
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
    snprintf(message, size, "%s: reading was interrupted (signal %d, %s)", path,
             sig, strsignal(sig));
  else if (sig == SIGXCPU || (sig == SIGKILL && used >= (double)cpu))
    snprintf(message, size,
             "%s: damaged HDF5 file: the reader ran past its bound of %llu s "
             "of CPU time (a loop on damaged metadata?; %s=S raises it)",
             path, (unsigned long long)cpu, ISOLATED_READ_ENV_CPU);
  else if (sig != 0)
    snprintf(message, size,
             "%s: damaged HDF5 file: the reader crashed (signal %d, %s)", path,
             sig, strsignal(sig));
  else if (WIFEXITED(status))
    snprintf(message, size,
             "%s: damaged HDF5 file: the reader ended with status %d", path,
             WEXITSTATUS(status));
  else
    snprintf(message, size, "%s: damaged HDF5 file: the reader was lost", path);
}

/* Whether path is read by libhdf5 (else by tilefmm's own readers). */
static int is_hdf5(const char *path, const tfmm_read_options *o) {
  const tfmm_format f = o != NULL && o->format != TFMM_FORMAT_UNKNOWN
                            ? o->format
                            : tfmm_snapshot_probe(path);
  return f == TFMM_FORMAT_HDF5;
}

static int isolation_off(void) {
  const char *env = getenv(ISOLATED_READ_ENV_OFF);
  return env != NULL && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0);
}

tfmm_status isolated_read(const char *path, const tfmm_read_options *o,
                          tfmm_snapshot *out, char *message, size_t size) {
  int fds[2];
  if (path == NULL || out == NULL || !is_hdf5(path, o) || isolation_off() ||
      pipe(fds) != 0)
    return tfmm_snapshot_read(path, o, out, message, size);
  const rlim_t cpu = cpu_bound(path);
  fflush(NULL); /* nothing buffered is written twice */
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return tfmm_snapshot_read(path, o, out, message, size);
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], path, o, cpu);
  }
  close(fds[1]);
  memset(out, 0, sizeof *out);
  tfmm_status st = TFMM_ERR_FILE;
  const int got = receive(fds[0], out, &st, message, size);
  close(fds[0]);
  int status = 0;
  struct rusage usage;
  memset(&usage, 0, sizeof usage);
  pid_t w;
  while ((w = wait4(pid, &status, 0, &usage)) < 0 && errno == EINTR)
    ;
  if (got && w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return st;
  /* The child died before it had sent everything: what did come is not
   * used. */
  tfmm_snapshot_free(out);
  out->format = TFMM_FORMAT_HDF5;
  const double used =
      (double)usage.ru_utime.tv_sec + (double)usage.ru_stime.tv_sec +
      1e-6 * (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  child_fate(path, w == pid ? status : 0, cpu, used, message, size);
  return TFMM_ERR_FILE;
}
