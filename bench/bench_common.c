/* bench_common.h: the pieces bench_direct and bench_tree share. */
#include "bench_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int bench_parse_ll(const char *s, long long lo, long long hi, long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

int bench_parse_double(const char *s, double lo, double hi, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
    return -1;
  *out = v;
  return 0;
}

int bench_split_list(const char *prog, const char *flag, const char *s,
                     char *buf, size_t cap, char **tok, int max) {
  if (strlen(s) >= cap) {
    fprintf(stderr, "%s: %s: list too long\n", prog, flag);
    return -1;
  }
  strcpy(buf, s);
  int n = 0;
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
    if (n == max) {
      fprintf(stderr, "%s: %s: more than %d values\n", prog, flag, max);
      return -1;
    }
    tok[n++] = t;
  }
  if (n == 0)
    fprintf(stderr, "%s: %s: empty list\n", prog, flag);
  return n > 0 ? n : -1;
}

int bench_parse_dlist(const char *prog, const char *flag, const char *s,
                      double lo, double hi, int max, double *v, int *n) {
  char buf[1024], *tok[BENCH_LIST_CAP];
  int k = bench_split_list(prog, flag, s, buf, sizeof buf, tok,
                           max < BENCH_LIST_CAP ? max : BENCH_LIST_CAP);
  if (k < 0)
    return -1;
  for (int j = 0; j < k; j++)
    if (bench_parse_double(tok[j], lo, hi, &v[j]) != 0) {
      fprintf(stderr, "%s: %s: '%s' is not a number in [%g, %g]\n", prog, flag,
              tok[j], lo, hi);
      return -1;
    }
  *n = k;
  return 0;
}

int bench_parse_ilist(const char *prog, const char *flag, const char *s,
                      long long lo, long long hi, int max, long long *v,
                      int *n) {
  char buf[1024], *tok[BENCH_LIST_CAP];
  int k = bench_split_list(prog, flag, s, buf, sizeof buf, tok,
                           max < BENCH_LIST_CAP ? max : BENCH_LIST_CAP);
  if (k < 0)
    return -1;
  for (int t = 0; t < k; ++t)
    if (bench_parse_ll(tok[t], lo, hi, &v[t]) != 0) {
      fprintf(stderr, "%s: %s: '%s' is not an integer in [%lld, %lld]\n", prog,
              flag, tok[t], lo, hi);
      return -1;
    }
  *n = k;
  return 0;
}

int bench_option_read(const char *prog, int argc, char **argv, int *i,
                      const char *const *known, size_t nknown, char *name,
                      size_t cap, const char **val) {
  const char *arg = argv[*i];
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  int found = 0;
  if (len < cap) {
    memcpy(name, arg, len);
    name[len] = '\0';
    for (size_t k = 0; k < nknown && !found; ++k)
      found = strcmp(name, known[k]) == 0;
  }
  if (!found) {
    fprintf(stderr, "%s: unknown argument '%s' (see --help)\n", prog, arg);
    return -1;
  }
  if (eq) {
    *val = eq + 1;
  } else if (*i + 1 < argc) {
    *val = argv[++*i];
  } else {
    fprintf(stderr, "%s: %s needs a value\n", prog, name);
    return -1;
  }
  return 0;
}

size_t bench_max_n(const long long *v, int n) {
  size_t nmax = 0;
  for (int i = 0; i < n; ++i)
    if ((size_t)v[i] > nmax)
      nmax = (size_t)v[i];
  return nmax;
}

void bench_run_stamp(int argc, char **argv, char *date, size_t date_cap,
                     char *cmdline, size_t cmdline_cap) {
  size_t used = 0;
  cmdline[0] = '\0';
  for (int i = 0; i < argc && used + 1 < cmdline_cap; ++i) {
    const char *a = argv[i];
    int quote = a[0] == '\0' || strpbrk(a, " \t\"'$`\\*?;&|<>()#") != NULL;
    int w = snprintf(cmdline + used, cmdline_cap - used,
                     quote ? "%s'%s'" : "%s%s", i ? " " : "", a);
    if (w < 0)
      break;
    used += (size_t)w;
  }
  time_t now = time(NULL);
  strftime(date, date_cap, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

/* 1 when path exists with header, 0 when it does not exist or has no
 * header yet, -1 when its header is another. */
static int csv_check_existing(const char *path, const char *header) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  char line[4096];
  int result = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n')
      continue;
    line[strcspn(line, "\r\n")] = '\0';
    result = strcmp(line, header) == 0 ? 1 : -1;
    break;
  }
  fclose(f);
  return result;
}

FILE *bench_csv_open(const char *prog, const char *path, const char *header,
                     int *existing) {
  *existing = csv_check_existing(path, header);
  if (*existing < 0) {
    fprintf(stderr, "%s: %s exists with another header; not appending\n", prog,
            path);
    return NULL;
  }
  FILE *csv = fopen(path, "a");
  if (!csv)
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
  return csv;
}

void bench_csv_write_stamp(FILE *csv, const char *date, const char *cmdline) {
  fprintf(csv, "# date_utc: %s\n# command: %s\n", date, cmdline);
}

void bench_csv_end_comments(FILE *csv, const char *header, int existing) {
  if (!existing)
    fprintf(csv, "%s\n", header);
  fflush(csv);
}

int bench_bodies_alloc(bench_bodies *b, size_t nmax) {
  b->pos = malloc(3 * nmax * sizeof *b->pos);
  b->vel = malloc(3 * nmax * sizeof *b->vel);
  b->mass = malloc(nmax * sizeof *b->mass);
  b->acc = malloc(3 * nmax * sizeof *b->acc);
  b->pot = malloc(nmax * sizeof *b->pot);
  return b->pos && b->vel && b->mass && b->acc && b->pot ? 0 : -1;
}

void bench_bodies_free(bench_bodies *b) {
  free(b->pos);
  free(b->vel);
  free(b->mass);
  free(b->acc);
  free(b->pot);
}

int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_fail_msg(char *msg, size_t cap, const char *what, tfmm_status st,
                    const tfmm_solver *s) {
  snprintf(msg, cap, "%s failed: %s: %s", what, tfmm_status_name(st),
           s ? tfmm_solver_message(s) : "(no solver)");
}

/* The first "model name" of /proc/cpuinfo (x86; other machines name it
 * otherwise, and then it reads "unknown"). */
void bench_cpu_model(char *out, size_t cap) {
  snprintf(out, cap, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0)
      continue;
    const char *v = strchr(line, ':');
    if (v) {
      v += strspn(v + 1, " \t") + 1;
      snprintf(out, cap, "%.*s", (int)strcspn(v, "\r\n"), v);
    }
    break;
  }
  fclose(f);
}
