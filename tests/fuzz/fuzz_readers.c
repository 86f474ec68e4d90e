/* The readers' fuzz harness (issue 29): seed files damaged at
 * pseudo-random places (a bit flipped, a byte changed, bytes zeroed, the
 * file cut short), each given to a reading command of the tool, whose
 * end is classified:
 *   crash    killed by a signal (SIGSEGV, SIGABRT, ...);
 *   hang     still running after --timeout seconds (then killed);
 *   refused  exit status 1 or 2, a "tilefmm" message naming the file and
 *            no HDF5 error stack printed;
 *   same     a result (exit 0; validate also 3) equal to the undamaged
 *            seed's, and checked as read is;
 *   read     another result than the seed's, which agrees with an
 *            independent reading of the damaged file (independent.c; the
 *            damage changed a number that no checksum covers: the file
 *            says so);
 *   differs  a result the independent reader could not check (it cannot
 *            tell what the file holds), or a result where the undamaged
 *            seed is refused;
 *   wrong    a result that disagrees with the independent reading, or of
 *            a file that the independent reader finds breaking the rules
 *            of docs/formats.md;
 *   odd      anything else (another exit status, a refusal without a
 *            message, HDF5's own printing).
 * The checks, by kind:
 *   forces   forces --in FILE --method reference: the forces of the
 *            independently read bodies, summed pair by pair in double;
 *   validate validate --in FILE: its report (timings aside) equal to that
 *            of validate on the independently read bodies as text;
 *   render   render FILE: the picture (tEXt chunks aside) equal to that
 *            of the independently read bodies as text;
 *   ic       run --ic FILE --steps 0: the snapshot it wrote, read
 *            independently, holds the independently read bodies and time;
 *   restart  run --restart FILE, 3 more steps: the statistics (wall times
 *            aside) equal to the undamaged checkpoint's, every value a
 *            restart trusts being under a checksum;
 *   params   run --ic BODIES --params FILE --steps 0: the parameters it
 *            used (used_parameters.yml) equal to those of the run given
 *            the file's keys, read independently, as -P Section:key:value;
 *   python   Python's tilefmm.read (python_read.py run by --python): the
 *            bodies it returns, time and IDs too, equal to the independent
 *            reading (the library reads in Python's process: a crash of
 *            libhdf5 is Python's crash).
 * Crashes, hangs, wrong results and odd ends fail the run (exit status
 * 1); the damaged files behind them are kept in --keep for a replay.
 *
 * Usage: fuzz_readers --tool TILEFMM --work DIR [--cases N] [--seed S]
 *          [--timeout SECONDS] [--keep DIR] [--log FILE] [--bodies FILE]
 *          [--python PYTHON --python-script python_read.py] KIND:FILE...
 * A FILE named BASE.0 whose BASE.1 exists is a GADGET-2 snapshot in
 * several files: one of its parts is damaged at a time. --bodies: the
 * bodies of params (an undamaged file). Cases go round the KIND:FILE
 * pairs in turn. */
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

enum { MAX_TARGETS = 40, MAX_PARTS = 4, MAX_WORDS = 64 };

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
  int parts;                       /* 1, or the files BASE.0, BASE.1 ... */
  unsigned char *bytes[MAX_PARTS]; /* the seed's */
  size_t len[MAX_PARTS];
  unsigned char *want; /* the undamaged seed's output (filtered) */
  size_t want_len;
  int want_code;
  int counts[CLASSES];
} target;

static const char *tool, *work, *keep, *bodies_path, *python, *python_script;
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

static int is_kind(const target *t, const char *kind) {
  return strcmp(t->kind, kind) == 0;
}

/* The command line of kind on file (with the -P words of params), and the
 * output it writes (compared): argv's strings live in static storage. */
static int command(const char *kind, const char *file, char words[][512],
                   int nwords, const char **argv, char *out) {
  static char outdir[4096];
  int n = 0;
  argv[n++] = tool;
  snprintf(outdir, sizeof outdir, "%s/out", work);
  if (strcmp(kind, "python") == 0) {
    if (python == NULL || python_script == NULL)
      return 0;
    wp(out, "bodies.txt");
    argv[0] = python;
    argv[n++] = python_script;
    argv[n++] = file;
    argv[n++] = out;
  } else if (strcmp(kind, "forces") == 0) {
    wp(out, "forces.txt");
    const char *a[] = {"forces",    "--in",  file, "--method",
                       "reference", "--out", out,  NULL};
    for (int k = 0; a[k]; k++)
      argv[n++] = a[k];
  } else if (strcmp(kind, "validate") == 0) {
    wp(out, "stdout.txt");
    const char *a[] = {"validate", "--in", file, NULL};
    for (int k = 0; a[k]; k++)
      argv[n++] = a[k];
  } else if (strcmp(kind, "render") == 0) {
    wp(out, "picture.png");
    const char *a[] = {"render", file, "--out", out, "--style", "bare", NULL};
    for (int k = 0; a[k]; k++)
      argv[n++] = a[k];
  } else if (strcmp(kind, "ic") == 0 || strcmp(kind, "restart") == 0 ||
             strcmp(kind, "params") == 0) {
    const int ic = strcmp(kind, "ic") == 0, rs = strcmp(kind, "restart") == 0;
    snprintf(out, 4096, "%s/out/%s", work,
             ic   ? "snapshot_0000.hdf5"
             : rs ? "statistics.csv"
                  : "used_parameters.yml");
    argv[n++] = "run";
    argv[n++] = rs ? "--restart" : "--ic";
    if (strcmp(kind, "params") == 0) {
      if (bodies_path == NULL)
        return 0;
      argv[n++] = bodies_path;
      if (file != NULL) {
        argv[n++] = "--params";
        argv[n++] = file;
      }
      for (int w = 0; w < nwords; w++) {
        argv[n++] = "-P";
        argv[n++] = words[w];
      }
    } else {
      argv[n++] = file;
    }
    const char *a[] = {"--steps", rs ? "3" : "0", "--plots",
                       "off",     "--progress",   "off",
                       "--out",   outdir,         NULL};
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
                         "stderr.txt", "bodies.txt"};
  for (size_t k = 0; k < 5; k++)
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

/* ---- a result as compared ------------------------------------------------ */

/* The lines of text but for those holding any of drop (NULL-ended), and
 * the first when skip_first. */
static size_t keep_lines(unsigned char *text, size_t len, int skip_first,
                         const char *const *drop) {
  size_t w = 0;
  for (size_t at = 0, line = 0; at < len; line++) {
    const unsigned char *nl = memchr(text + at, '\n', len - at);
    const size_t end = nl != NULL ? (size_t)(nl - text) + 1 : len;
    int keep_it = !(skip_first && line == 0);
    char *l = strndup((const char *)text + at, end - at);
    for (int k = 0; keep_it && l != NULL && drop[k] != NULL; k++)
      keep_it = strstr(l, drop[k]) == NULL;
    free(l);
    if (keep_it) {
      memmove(text + w, text + at, end - at);
      w += end - at;
    }
    at = end;
  }
  return w;
}

/* statistics.csv without its wall_* columns (times measured). */
static size_t drop_wall_columns(unsigned char *text, size_t len) {
  int wall[64] = {0};
  size_t w = 0;
  for (size_t at = 0, line = 0; at < len; line++) {
    const unsigned char *nl = memchr(text + at, '\n', len - at);
    const size_t end = nl != NULL ? (size_t)(nl - text) + 1 : len;
    int col = 0;
    for (size_t k = at; k < end; col++) {
      const unsigned char *c = memchr(text + k, ',', end - k);
      const size_t e = c != NULL ? (size_t)(c - text) + 1 : end;
      if (line == 0 && col < 64)
        wall[col] = e - k >= 5 && memcmp(text + k, "wall_", 5) == 0;
      if (col >= 64 || !wall[col]) {
        memmove(text + w, text + k, e - k);
        w += e - k;
      }
      k = e;
    }
    at = end;
  }
  return w;
}

/* A PNG without its tEXt chunks (they name the file read). */
static size_t drop_text_chunks(unsigned char *png, size_t len) {
  if (len < 8)
    return len;
  size_t w = 8;
  for (size_t at = 8; at + 12 <= len;) {
    const size_t l = (size_t)png[at] << 24 | (size_t)png[at + 1] << 16 |
                     (size_t)png[at + 2] << 8 | png[at + 3];
    const size_t end = l > len - at - 12 ? len : at + 12 + l;
    if (memcmp(png + at + 4, "tEXt", 4) != 0) {
      memmove(png + w, png + at, end - at);
      w += end - at;
    }
    at = end;
  }
  return w;
}

/* The output of kind at path (validate: its stdout) as compared; NULL
 * when there is none. */
static unsigned char *result(const char *kind, const char *path, size_t *len) {
  unsigned char *b = slurp(path, len);
  if (b == NULL)
    return NULL;
  static const char *const timings[] = {" time:", NULL};
  if (strcmp(kind, "validate") == 0)
    *len = keep_lines(b, *len, 1, timings);
  else if (strcmp(kind, "render") == 0)
    *len = drop_text_chunks(b, *len);
  else if (strcmp(kind, "restart") == 0)
    *len = drop_wall_columns(b, *len);
  return b;
}

static int same_bytes(const unsigned char *a, size_t al, const unsigned char *b,
                      size_t bl) {
  return a != NULL && b != NULL && al == bl && memcmp(a, b, al) == 0;
}

/* Runs kind again on the oracle's input (the independent reading as text,
 * or the independently read -P words): whether its exit status and
 * output are code and got. */
static int oracle_agrees(const char *kind, const char *input, char words[][512],
                         int nwords, int code, const unsigned char *got,
                         size_t got_len) {
  const char *args[200];
  char out[4096];
  remove_outputs();
  if (!command(kind, input, words, nwords, args, out))
    return 0;
  int hung;
  const int status = run_tool(args, &hung);
  if (hung || !WIFEXITED(status) || WEXITSTATUS(status) != code)
    return 0;
  size_t len = 0;
  unsigned char *again = result(kind, out, &len);
  const int same = same_bytes(got, got_len, again, len);
  free(again);
  return same;
}

/* The bodies python_read.py wrote to path into b; 1, or 0 when they do
 * not parse. */
static int python_bodies(const char *path, indep_bodies *b) {
  FILE *fp = fopen(path, "r");
  if (fp == NULL)
    return 0;
  int ok = fscanf(fp, "%zu %lf", &b->n, &b->time) == 2 && b->n <= INDEP_MAX;
  for (size_t i = 0; ok && i < b->n; i++) {
    double *x = b->x + 3 * i, *v = b->v + 3 * i;
    unsigned long long id = 0;
    ok = fscanf(fp, "%lf %lf %lf %lf %lf %lf %lf %llu", x, x + 1, x + 2,
                b->m + i, v, v + 1, v + 2, &id) == 8;
    b->id[i] = id;
  }
  fclose(fp);
  return ok;
}

/* A result (exit 0, or validate's 3) of t on file, checked. */
static outcome check_result(target *t, int code, const char *out,
                            const char *file) {
  size_t len = 0;
  unsigned char *got = result(t->kind, out, &len);
  const int as_seed = t->want != NULL && code == t->want_code &&
                      same_bytes(got, len, t->want, t->want_len);
  outcome c = DIFFERS;
  if (t->want == NULL) {
    c = DIFFERS; /* the undamaged seed is refused: nothing to hold it to */
  } else if (is_kind(t, "restart")) {
    c = as_seed ? SAME : WRONG;
  } else if (is_kind(t, "params")) {
    static char words[MAX_WORDS][512];
    int n = 0;
    const int r = independent_read_params(file, words, MAX_WORDS, &n);
    if (r == 1 && got != NULL)
      c = oracle_agrees("params", NULL, words, n, code, got, len) ? READ
                                                                  : WRONG;
    else
      c = DIFFERS;
  } else {
    static indep_bodies in, snap;
    const int r = independent_read(file, &in);
    char oracle[4096];
    if (r == 0)
      c = WRONG;
    else if (r < 0)
      c = DIFFERS;
    else if (is_kind(t, "forces"))
      c = independent_forces_agree(&in, out) ? READ : WRONG;
    else if (is_kind(t, "python"))
      c = in.have_vel && in.have_ids && python_bodies(out, &snap) &&
                  independent_bodies_agree(&in, &snap)
              ? READ
              : WRONG;
    else if (is_kind(t, "ic"))
      c = in.have_vel && in.have_ids && independent_read(out, &snap) == 1 &&
                  independent_bodies_agree(&in, &snap)
              ? READ
              : WRONG;
    else
      c = independent_write_text(&in, wp(oracle, "oracle.txt")) &&
                  oracle_agrees(t->kind, oracle, NULL, 0, code, got, len)
              ? READ
              : WRONG;
  }
  if (c == READ && as_seed)
    c = SAME;
  free(got);
  return c;
}

static outcome classify(target *t, int status, int hung, const char *out,
                        const char *file, const char *base) {
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
                strstr(text, base) != NULL
            ? REFUSED
            : ODD;
  else if (code == 0 || (code == 3 && is_kind(t, "validate")))
    c = check_result(t, code, out, file);
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

/* Damages a copy of part p of t's seed; describes how in what. */
static unsigned char *mutate(const target *t, int p, size_t *len, char *what,
                             size_t size) {
  const size_t n = t->len[p];
  unsigned char *b = malloc(n);
  memcpy(b, t->bytes[p], n);
  *len = n;
  const unsigned kind = (unsigned)(rng() % 100);
  const size_t at = (size_t)(rng() % n);
  int w = t->parts > 1 ? snprintf(what, size, "part %d: ", p) : 0;
  what += w;
  size -= (size_t)w;
  if (kind < 40) {
    const int bit = (int)(rng() % 8);
    b[at] ^= (unsigned char)(1u << bit);
    snprintf(what, size, "bit %d of byte %zu flipped", bit, at);
  } else if (kind < 65) {
    const unsigned char v = (unsigned char)rng();
    snprintf(what, size, "byte %zu 0x%02x -> 0x%02x", at, b[at], v);
    b[at] = v;
  } else if (kind < 85) {
    size_t k = 1 + (size_t)(rng() % 16);
    if (at + k > n)
      k = n - at;
    memset(b + at, 0, k);
    snprintf(what, size, "%zu bytes zeroed at %zu", k, at);
  } else {
    *len = at;
    snprintf(what, size, "cut to %zu bytes", at);
  }
  return b;
}

/* Writes target i's files to the work directory, part p as bytes (p < 0:
 * all undamaged); file: the path to name, base: its name without ".0". */
static int spill_target(const target *t, int i, int p,
                        const unsigned char *bytes, size_t len, char *file,
                        char *base) {
  snprintf(base, 4096, "%s/input-%d", work, i);
  int ok = 1;
  for (int k = 0; k < t->parts; k++) {
    char part[4200];
    if (t->parts > 1)
      snprintf(part, sizeof part, "%s.%d", base, k);
    else
      snprintf(part, sizeof part, "%s", base);
    ok = ok && (k == p ? spill(part, bytes, len)
                       : spill(part, t->bytes[k], t->len[k]));
  }
  snprintf(file, 4096, "%s%s", base, t->parts > 1 ? ".0" : "");
  return ok;
}

static void usage(void) {
  fprintf(stderr, "usage: fuzz_readers --tool TILEFMM --work DIR [--cases N] "
                  "[--seed S] [--timeout SECONDS] [--keep DIR] [--log FILE] "
                  "[--bodies FILE] [--python PYTHON --python-script PY] "
                  "KIND:FILE...\n");
  exit(2);
}

/* Reads t's seed (its parts BASE.0, BASE.1, ... when it names BASE.0). */
static int load_seed(target *t) {
  const size_t l = strlen(t->seed);
  const int multi = l > 2 && strcmp(t->seed + l - 2, ".0") == 0;
  t->parts = 0;
  for (int k = 0; k < MAX_PARTS; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%.*s.%d", (int)(l - 2), t->seed, k);
    const char *name = multi ? path : t->seed;
    if (k > 0 && (!multi || access(name, R_OK) != 0))
      break;
    t->bytes[k] = slurp(name, &t->len[k]);
    if (t->bytes[k] == NULL || t->len[k] == 0)
      return 0;
    t->parts++;
  }
  return 1;
}

int main(int argc, char **argv) {
  static target targets[MAX_TARGETS];
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
    else if (strcmp(a, "--bodies") == 0 && more)
      bodies_path = argv[++k];
    else if (strcmp(a, "--python") == 0 && more)
      python = argv[++k];
    else if (strcmp(a, "--python-script") == 0 && more)
      python_script = argv[++k];
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
  char file[4096], base[4096], out[4096];
  const char *args[200];
  /* The undamaged seeds: each must be read, and its output is kept. */
  for (int i = 0; i < ntargets; i++) {
    target *t = &targets[i];
    if (!load_seed(t)) {
      fprintf(stderr, "fuzz_readers: cannot read %s\n", t->seed);
      return 2;
    }
    remove_outputs();
    int hung;
    if (!spill_target(t, i, -1, NULL, 0, file, base) ||
        !command(t->kind, file, NULL, 0, args, out)) {
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
    t->want_code = code;
    t->want = code == 0 ? result(t->kind, out, &t->want_len) : NULL;
    if (code != 0)
      printf("fuzz_readers: the undamaged %s is refused by %s\n", t->seed,
             t->kind);
    else if (check_result(t, code, out, file) != SAME) {
      fprintf(stderr,
              "fuzz_readers: the undamaged %s read by %s disagrees with "
              "the independent reading\n",
              t->seed, t->kind);
      return 2;
    }
  }
  int total[CLASSES] = {0};
  const double start = now();
  for (long c = 0; c < cases; c++) {
    const int i = (int)(c % ntargets);
    target *t = &targets[i];
    char what[160];
    size_t len;
    const int p = t->parts > 1 ? (int)(rng() % (uint64_t)t->parts) : 0;
    unsigned char *bytes = mutate(t, p, &len, what, sizeof what);
    remove_outputs();
    spill_target(t, i, p, bytes, len, file, base);
    command(t->kind, file, NULL, 0, args, out);
    int hung;
    const int status = run_tool(args, &hung);
    const outcome o = classify(t, status, hung, out, file, base);
    t->counts[o]++;
    total[o]++;
    if (log != NULL)
      fprintf(log, "%ld %s %s %s: %s (status 0x%x)%s%s\n", c, t->kind, t->seed,
              what, class_name[o], (unsigned)status, o == REFUSED ? ": " : "",
              o == REFUSED ? first_line() : "");
    const int failed = o == CRASH || o == HANG || o == WRONG || o == ODD;
    if (failed) {
      fprintf(stderr, "case %ld: %s %s, %s: %s", c, t->kind, t->seed, what,
              class_name[o]);
      if (o == CRASH)
        fprintf(stderr, " (signal %d)", WTERMSIG(status));
      fprintf(stderr, "\n");
    }
    /* The results left unchecked are kept too, to be looked at. */
    if ((failed || o == DIFFERS) && keep != NULL) {
      char kept[4096];
      snprintf(kept, sizeof kept, "%s/case-%ld-%s-%s%s", keep, c, t->kind,
               class_name[o], t->parts > 1 ? ".part" : "");
      if (t->parts > 1) {
        char pk[4200];
        snprintf(pk, sizeof pk, "%s%d", kept, p);
        spill(pk, bytes, len);
      } else
        spill(kept, bytes, len);
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
