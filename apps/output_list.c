/* Output lists: see output_list.h. */
#define _POSIX_C_SOURCE 200809L
#include "output_list.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 4096

/* The line's time, or 0 for a blank or comment line; -1 (printed) when
 * the line holds something that is not one number. */
static int parse_line(const char *path, long lineno, char *line, double *t) {
  char *hash = strchr(line, '#');
  if (hash != NULL)
    *hash = '\0';
  char *p = line + strspn(line, " \t\r\n");
  if (*p == '\0')
    return 0;
  char *end;
  errno = 0;
  *t = strtod(p, &end);
  char *rest = end + strspn(end, " \t\r\n");
  if (end == p || *rest != '\0') {
    p[strcspn(p, "\r\n")] = '\0';
    cli_error("%s:%ld: '%s' is not a time (one number a line, '#' for "
              "comments)",
              path, lineno, p);
    return -1;
  }
  if (!isfinite(*t)) {
    cli_error("%s:%ld: the time %g is not finite", path, lineno, *t);
    return -1;
  }
  return 1;
}

/* SWIFT's output lists start with a header naming what they list. */
static int cosmological_header(const char *line) {
  return strncmp(line, "# Redshift", 10) == 0 ||
         strncmp(line, "# Scale Factor", 14) == 0;
}

static int add(output_list *l, size_t *cap, double t) {
  if (l->n == *cap) {
    *cap = *cap > 0 ? 2 * *cap : 64;
    double *grown = realloc(l->times, *cap * sizeof *grown);
    if (grown == NULL) {
      cli_error("out of memory");
      return 0;
    }
    l->times = grown;
  }
  l->times[l->n++] = t;
  return 1;
}

int output_list_read(const char *path, double start, double step,
                     output_list *l) {
  memset(l, 0, sizeof *l);
  l->start = start;
  l->step = step;
  FILE *fp = fopen(path, "r");
  if (fp == NULL) {
    cli_error("%s: cannot read the output list: %s", path, strerror(errno));
    return 0;
  }
  char line[MAX_LINE];
  size_t cap = 0;
  long lineno = 0;
  int ok = 1;
  while (ok && fgets(line, sizeof line, fp) != NULL) {
    lineno++;
    if (strchr(line, '\n') == NULL && !feof(fp)) {
      cli_error("%s:%ld: line longer than %d characters", path, lineno,
                MAX_LINE - 1);
      ok = 0;
      break;
    }
    if (cosmological_header(line)) {
      line[strcspn(line, "\r\n")] = '\0';
      cli_error("%s:%ld: '%s': tilefmm has no cosmology; list times in the "
                "run's time unit (SWIFT's '# Time' list)",
                path, lineno, line);
      ok = 0;
      break;
    }
    double t;
    const int got = parse_line(path, lineno, line, &t);
    if (got < 0) {
      ok = 0;
    } else if (got > 0 && t < start) {
      cli_error("%s:%ld: the time %.17g is before the start of the run "
                "(%.17g)",
                path, lineno, t, start);
      ok = 0;
    } else if (got > 0 && l->n > 0 && !(t > l->times[l->n - 1])) {
      cli_error("%s:%ld: the time %.17g is not after the time before it "
                "(%.17g): the list must increase",
                path, lineno, t, l->times[l->n - 1]);
      ok = 0;
    } else if (got > 0) {
      ok = add(l, &cap, t);
    }
  }
  if (ok && ferror(fp)) {
    cli_error("%s: cannot read: %s", path, strerror(errno));
    ok = 0;
  }
  fclose(fp);
  if (ok && l->n == 0) {
    cli_error("%s: the output list holds no time", path);
    ok = 0;
  }
  if (!ok)
    output_list_free(l);
  return ok;
}

void output_list_free(output_list *l) {
  free(l->times);
  l->times = NULL;
  l->n = l->next = 0;
}

int64_t output_list_point(const output_list *l, size_t k) {
  return (int64_t)floor((l->times[k] - l->start) / l->step + 1e-9);
}

void output_list_skip_to(output_list *l, int64_t step) {
  while (l->next < l->n && output_list_point(l, l->next) <= step)
    l->next++;
}

/* Whether time k lies after the point last (the run's end). */
static int beyond(const output_list *l, size_t k, int64_t last) {
  const int64_t point = output_list_point(l, k);
  return point > last ||
         (point == last &&
          l->times[k] - (l->start + (double)last * l->step) > 1e-9 * l->step);
}

int output_list_due(output_list *l, int64_t step, int64_t last_step,
                    size_t *index, double *at) {
  if (l->next >= l->n || output_list_point(l, l->next) > step ||
      beyond(l, l->next, last_step))
    return 0;
  *index = l->next;
  *at = l->times[l->next];
  l->next++;
  return 1;
}

size_t output_list_after(const output_list *l, int64_t last_step) {
  size_t k = l->n;
  while (k > 0 && beyond(l, k - 1, last_step))
    k--;
  return l->n - k;
}
