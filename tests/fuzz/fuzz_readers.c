/* The readers' fuzz harness (issue 29): seed files damaged at
 * pseudo-random places (a bit flipped, a byte changed, bytes zeroed, the
 * file cut short), each given to a reading command of the tool, whose
 * end is classified:
 *   crash    killed by a signal (SIGSEGV, SIGABRT, ...);
 *   hang     still running after --timeout seconds (then killed);
 *   refused  exit status 1 or 2, a "tilefmm:" message naming the file and
 *            no HDF5 error stack printed;
 *   same     exit 0 with the output of the undamaged seed (the damage hit
 *            bytes the reader does not use; for run, its statistics'
 *            length only);
 *   read     forces exit 0 with another output than the seed's, which
 *            agrees with an independent reading of the damaged file
 *            (independent.c: a number changed in a dataset without
 *            checksum: the file says so);
 *   differs  exit 0 with another output, not checked (render, run; or
 *            the independent reader cannot read the file), or exit 0
 *            where the undamaged seed is refused;
 *   wrong    forces exit 0 with forces that disagree with the
 *            independent reading;
 *   odd      anything else (another exit status, a refusal without a
 *            message, HDF5's own printing).
 * Crashes, hangs, wrong results and odd ends fail the run (exit status 1); the
 * damaged files behind them are kept in --keep for a replay.
 *
 * Usage: fuzz_readers --tool TILEFMM --work DIR [--cases N] [--seed S]
 *          [--timeout SECONDS] [--keep DIR] [--log FILE] KIND:FILE...
 * KIND: forces (forces --in FILE --method reference), ic (run --ic FILE --steps
 * 0), render (render FILE), restart (run --restart FILE, one more step). Cases
 * go round the KIND:FILE pairs in turn. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "independent.h"

enum { MAX_TARGETS = 16 };

typedef enum {
  CRASH,
  HANG,
  REFUSED,
  SAME,
  READ,
  DIFFERS,
  WRONG,
  ODD,
  CLASSES
} outcome;
static const char *const class_name[CLASSES] = {
    "crash", "hang", "refused", "same", "read", "differs", "wrong", "odd"};

typedef struct target {
  char kind[16];
  const char *seed;
  unsigned char *bytes; /* the seed's */
  size_t len;
  unsigned char *want; /* the undamaged seed's output */
  size_t want_len;
  int counts[CLASSES];
} target;

static const char *tool, *work, *keep;
static double timeout_s = 10;

static uint64_t rng_state;
static uint64_t rng(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (fp == NULL)
    return NULL;
  unsigned char *buf = NULL;
  size_t cap = 0, used = 0, got;
  do {
    if (used == cap) {
      cap = cap > 0 ? 2 * cap : 65536;
      unsigned char *b = realloc(buf, cap);
      if (b == NULL) {
        free(buf);
        fclose(fp);
        return NULL;
      }
      buf = b;
    }
    got = fread(buf + used, 1, cap - used, fp);
    used += got;
  } while (got > 0);
  fclose(fp);
  *len = used;
  return buf;
}

static int spill(const char *path, const unsigned char *bytes, size_t len) {
  FILE *fp = fopen(path, "wb");
  if (fp == NULL)
    return 0;
  const int ok = fwrite(bytes, 1, len, fp) == len;
  return fclose(fp) == 0 && ok;
}

static const char *wp(char *buf, const char *name) {
  snprintf(buf, 4096, "%s/%s", work, name);
  return buf;
}

/* The command line of kind on file, and the output it writes (compared). */
static int command(const char *kind, const char *file, const char **argv,
                   char *out) {
  int n = 0;
  argv[n++] = tool;
  if (strcmp(kind, "forces") == 0) {
    wp(out, "forces.txt");
    const char *a[] = {"forces",    "--in",  file, "--method",
                       "reference", "--out", out,  NULL};
    for (int k = 0; a[k]; k++)
      argv[n++] = a[k];
  } else if (strcmp(kind, "render") == 0) {
    wp(out, "picture.png");
    const char *a[] = {"render", file, "--out", out, NULL};
    for (int k = 0; a[k]; k++)
      argv[n++] = a[k];
  } else if (strcmp(kind, "ic") == 0 || strcmp(kind, "restart") == 0) {
    static char outdir[4096];
    snprintf(outdir, sizeof outdir, "%s/out", work);
    snprintf(out, 4096, "%s/out/statistics.csv", work);
    const int ic = strcmp(kind, "ic") == 0;
    const char *a[] = {"run",          ic ? "--ic" : "--restart",
                       file,           "--steps",
                       ic ? "0" : "3", "--plots",
                       "off",          "--progress",
                       "off",          "--out",
                       outdir,         NULL};
    for (int k = 0; a[k]; k++)
      argv[n++] = a[k];
  } else {
    return 0;
  }
  argv[n] = NULL;
  return 1;
}

static void remove_outputs(void) {
  char buf[4096];
  const char *names[] = {"forces.txt", "picture.png", "stdout.txt",
                         "stderr.txt"};
  for (size_t k = 0; k < 4; k++)
    unlink(wp(buf, names[k]));
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "rm -rf '%s/out'", work);
  if (system(cmd) != 0)
    fprintf(stderr, "fuzz_readers: cannot clean %s/out\n", work);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs argv with stdout and stderr in the work directory; its own
 * process group, all of it killed past the timeout. Returns the wait
 * status, *hung set when it was killed for time. */
static int run_tool(const char *const *argv, int *hung) {
  char out[4096], err[4096];
  wp(out, "stdout.txt");
  wp(err, "stderr.txt");
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0)
      _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  setpgid(pid, pid);
  int status = 0;
  *hung = 0;
  const double end = now() + timeout_s;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR)
      return -1;
    if (now() > end) {
      *hung = 1;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  kill(-pid, SIGKILL); /* a reader it left behind */
  return status;
}

static outcome classify(target *t, int status, int hung, const char *out,
                        const char *file) {
  if (hung)
    return HANG;
  if (WIFSIGNALED(status))
    return CRASH;
  const int code = WEXITSTATUS(status);
  char buf[4096];
  size_t elen = 0;
  unsigned char *err = slurp(wp(buf, "stderr.txt"), &elen);
  char *text = err != NULL ? realloc(err, elen + 1) : NULL;
  if (text != NULL)
    text[elen] = '\0';
  outcome c = ODD;
  if (text != NULL && strstr(text, "HDF5-DIAG") != NULL)
    c = ODD;
  else if (code == 1 || code == 2)
    c = text != NULL && strstr(text, "tilefmm") != NULL &&
                strstr(text, file) != NULL
            ? REFUSED
            : ODD;
  else if (code == 0) {
    size_t len = 0;
    unsigned char *got = slurp(out, &len);
    c = got != NULL && t->want != NULL && len == t->want_len &&
                (strcmp(t->kind, "ic") == 0 ||
                 strcmp(t->kind, "restart") == 0 ||
                 memcmp(got, t->want, len) == 0)
            ? SAME
            : DIFFERS;
    free(got);
    if (c == DIFFERS && strcmp(t->kind, "forces") == 0) {
      const int agree = independent_forces_agree(file, out);
      c = agree > 0 ? READ : agree == 0 ? WRONG : DIFFERS;
    }
  }
  free(text);
  return c;
}

/* The first line of the tool's standard error (for the log). */
static const char *first_line(void) {
  static char line[256];
  char buf[4096];
  line[0] = '\0';
  FILE *fp = fopen(wp(buf, "stderr.txt"), "r");
  if (fp != NULL) {
    if (fgets(line, sizeof line, fp) == NULL)
      line[0] = '\0';
    fclose(fp);
  }
  line[strcspn(line, "\n")] = '\0';
  return line;
}

/* Damages a copy of t's seed; describes how in what. */
static unsigned char *mutate(const target *t, size_t *len, char *what,
                             size_t size) {
  unsigned char *b = malloc(t->len);
  memcpy(b, t->bytes, t->len);
  *len = t->len;
  const unsigned kind = (unsigned)(rng() % 100);
  const size_t at = (size_t)(rng() % t->len);
  if (kind < 40) {
    const int bit = (int)(rng() % 8);
    b[at] ^= (unsigned char)(1u << bit);
    snprintf(what, size, "bit %d of byte %zu flipped", bit, at);
  } else if (kind < 65) {
    const unsigned char v = (unsigned char)rng();
    snprintf(what, size, "byte %zu 0x%02x -> 0x%02x", at, b[at], v);
    b[at] = v;
  } else if (kind < 85) {
    size_t n = 1 + (size_t)(rng() % 16);
    if (at + n > t->len)
      n = t->len - at;
    memset(b + at, 0, n);
    snprintf(what, size, "%zu bytes zeroed at %zu", n, at);
  } else {
    *len = at;
    snprintf(what, size, "cut to %zu bytes", at);
  }
  return b;
}

static void usage(void) {
  fprintf(stderr, "usage: fuzz_readers --tool TILEFMM --work DIR [--cases N] "
                  "[--seed S] [--timeout SECONDS] [--keep DIR] [--log FILE] "
                  "KIND:FILE...\n");
  exit(2);
}

int main(int argc, char **argv) {
  target targets[MAX_TARGETS];
  int ntargets = 0;
  long cases = 1000;
  uint64_t seed = 1;
  const char *log_path = NULL;
  for (int k = 1; k < argc; k++) {
    const char *a = argv[k];
    const int more = k + 1 < argc;
    if (strcmp(a, "--tool") == 0 && more)
      tool = argv[++k];
    else if (strcmp(a, "--work") == 0 && more)
      work = argv[++k];
    else if (strcmp(a, "--keep") == 0 && more)
      keep = argv[++k];
    else if (strcmp(a, "--log") == 0 && more)
      log_path = argv[++k];
    else if (strcmp(a, "--cases") == 0 && more)
      cases = strtol(argv[++k], NULL, 10);
    else if (strcmp(a, "--seed") == 0 && more)
      seed = strtoull(argv[++k], NULL, 10);
    else if (strcmp(a, "--timeout") == 0 && more)
      timeout_s = strtod(argv[++k], NULL);
    else if (a[0] != '-' && strchr(a, ':') != NULL && ntargets < MAX_TARGETS) {
      target *t = &targets[ntargets++];
      memset(t, 0, sizeof *t);
      const size_t kl = (size_t)(strchr(a, ':') - a);
      snprintf(t->kind, sizeof t->kind, "%.*s", (int)kl, a);
      t->seed = a + kl + 1;
    } else
      usage();
  }
  if (tool == NULL || work == NULL || ntargets == 0 || cases < 0)
    usage();
  rng_state = seed;
  mkdir(work, 0755);
  if (keep != NULL)
    mkdir(keep, 0755);
  FILE *log = log_path != NULL ? fopen(log_path, "w") : NULL;
  char file[4096], out[4096];
  const char *args[32];
  /* The undamaged seeds: each must be read, and its output is kept. */
  for (int i = 0; i < ntargets; i++) {
    target *t = &targets[i];
    t->bytes = slurp(t->seed, &t->len);
    if (t->bytes == NULL || t->len == 0) {
      fprintf(stderr, "fuzz_readers: cannot read %s\n", t->seed);
      return 2;
    }
    snprintf(file, sizeof file, "%s/input-%d.hdf5", work, i);
    remove_outputs();
    int hung;
    if (!spill(file, t->bytes, t->len) || !command(t->kind, file, args, out)) {
      fprintf(stderr, "fuzz_readers: bad target %s:%s\n", t->kind, t->seed);
      return 2;
    }
    const int status = run_tool(args, &hung);
    /* A seed may be refused whole (a checkpoint of variable-length
     * strings): its damaged copies must be too, or read to some result. */
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (hung || (code != 0 && code != 1)) {
      fprintf(stderr, "fuzz_readers: the undamaged %s fails %s\n", t->seed,
              t->kind);
      return 2;
    }
    t->want = code == 0 ? slurp(out, &t->want_len) : NULL;
    if (code != 0)
      printf("fuzz_readers: the undamaged %s is refused by %s\n", t->seed,
             t->kind);
  }
  int total[CLASSES] = {0};
  const double start = now();
  for (long c = 0; c < cases; c++) {
    target *t = &targets[c % ntargets];
    char what[128];
    size_t len;
    unsigned char *bytes = mutate(t, &len, what, sizeof what);
    snprintf(file, sizeof file, "%s/input-%d.hdf5", work, (int)(c % ntargets));
    remove_outputs();
    spill(file, bytes, len);
    command(t->kind, file, args, out);
    int hung;
    const int status = run_tool(args, &hung);
    const outcome o = classify(t, status, hung, out, file);
    t->counts[o]++;
    total[o]++;
    if (log != NULL)
      fprintf(log, "%ld %s %s %s: %s (status 0x%x)%s%s\n", c, t->kind, t->seed,
              what, class_name[o], (unsigned)status, o == REFUSED ? ": " : "",
              o == REFUSED ? first_line() : "");
    if (o == CRASH || o == HANG || o == WRONG || o == ODD) {
      fprintf(stderr, "case %ld: %s %s, %s: %s", c, t->kind, t->seed, what,
              class_name[o]);
      if (o == CRASH)
        fprintf(stderr, " (signal %d)", WTERMSIG(status));
      fprintf(stderr, "\n");
      if (keep != NULL) {
        char kept[4096];
        snprintf(kept, sizeof kept, "%s/case-%ld-%s-%s.hdf5", keep, c, t->kind,
                 class_name[o]);
        spill(kept, bytes, len);
      }
    }
    free(bytes);
  }
  if (log != NULL)
    fclose(log);
  printf("fuzz_readers: %ld cases in %.1f s (seed %llu)\n", cases,
         now() - start, (unsigned long long)seed);
  for (int i = 0; i < ntargets; i++) {
    printf("  %-8s %-40s", targets[i].kind, targets[i].seed);
    for (int o = 0; o < CLASSES; o++)
      printf(" %s %d", class_name[o], targets[i].counts[o]);
    printf("\n");
  }
  printf("  total   ");
  for (int o = 0; o < CLASSES; o++)
    printf(" %s %d", class_name[o], total[o]);
  printf("\n");
  return total[CRASH] + total[HANG] + total[WRONG] + total[ODD] > 0;
}
