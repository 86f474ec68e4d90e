/* Plots through gnuplot: see gnuplot.h. */
#define _POSIX_C_SOURCE 200809L
#include "gnuplot.h"
#include "atomic_file.h"
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int gnuplot_on_path(void) {
  const char *p = getenv("PATH");
  if (p == NULL)
    return 0;
  for (;;) {
    const size_t len = strcspn(p, ":");
    char file[4096];
    /* An empty entry is the current directory. */
    snprintf(file, sizeof file, "%.*s/gnuplot", (int)(len > 0 ? len : 1),
             len > 0 ? p : ".");
    if (access(file, X_OK) == 0)
      return 1;
    if (p[len] == '\0')
      return 0;
    p += len + 1;
  }
}

void gnuplot_string(FILE *gp, const char *s) {
  fputc('\'', gp);
  for (; *s != '\0'; s++) {
    if (*s == '\'')
      fputc('\'', gp);
    fputc((unsigned char)*s < ' ' ? '?' : *s, gp);
  }
  fputc('\'', gp);
}

void gnuplot_png_terminal(FILE *gp, int width, int height,
                          const char *png_path) {
  fprintf(gp,
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  set terminal pngcairo size %d,%d noenhanced\n"
          "} else {\n"
          "  set terminal png size %d,%d noenhanced\n"
          "}\nset output ",
          width, height, width, height);
  gnuplot_string(gp, png_path);
  fputc('\n', gp);
}

/* Whether the file at path is a whole PNG: its signature, then chunks
 * (a 4-byte big-endian length, a 4-byte type, the data and a 4-byte CRC)
 * each inside the file, the last an IEND that ends it (PNG specification,
 * section 5). gnuplot exits 0 after a write that failed on a full disk,
 * leaving a file cut short or empty (issue 29). */
static int png_complete(const char *path) {
  static const unsigned char signature[8] = {0x89, 'P',  'N',  'G',
                                             '\r', '\n', 0x1a, '\n'};
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return 0;
  struct stat st;
  unsigned char head[8];
  int ok = fstat(fileno(f), &st) == 0 && fread(head, 1, 8, f) == 8 &&
           memcmp(head, signature, 8) == 0;
  const uint64_t size = ok ? (uint64_t)st.st_size : 0;
  uint64_t at = 8;
  while (ok) {
    ok = at + 12 <= size && fseeko(f, (off_t)at, SEEK_SET) == 0 &&
         fread(head, 1, 8, f) == 8;
    if (!ok)
      break;
    const uint64_t len = (uint64_t)head[0] << 24 | (uint64_t)head[1] << 16 |
                         (uint64_t)head[2] << 8 | head[3];
    at += 12 + len;
    ok = at <= size;
    if (ok && memcmp(head + 4, "IEND", 4) == 0)
      break;
  }
  fclose(f);
  return ok && at == size;
}

int gnuplot_draw(const char *png, const char *table,
                 void (*script)(FILE *gp, const char *tmp_path, void *ctx),
                 void *ctx) {
  return gnuplot_draw_text(png, table, script, ctx, NULL, 0);
}

int gnuplot_draw_text(const char *png, const char *table,
                      void (*script)(FILE *gp, const char *tmp_path, void *ctx),
                      void *ctx, const png_write_text *text, size_t ntext) {
  atomic_file af;
  if (!atomic_file_open(&af, png))
    return 0;
  /* A gnuplot that quits early must not end us with SIGPIPE. */
  struct sigaction ignore, saved;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &saved);
  fflush(NULL);
  FILE *gp = popen("gnuplot", "w");
  int status = -1;
  if (gp != NULL) {
    script(gp, af.tmp_path, ctx);
    status = pclose(gp);
  }
  sigaction(SIGPIPE, &saved, NULL);
  if (gp == NULL || status == -1) {
    cli_error("%s: cannot run gnuplot: %s", png, strerror(errno));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    cli_error("%s: gnuplot failed (%s %d), see its message above; the data "
              "is in %s",
              png, WIFEXITED(status) ? "exit status" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
              table);
  } else if (!png_complete(af.tmp_path)) {
    cli_error("%s: gnuplot exited 0 but wrote no whole PNG (a full disk?); "
              "the data is in %s",
              png, table);
  } else if (ntext == 0 || png_write_add_text(af.tmp_path, text, ntext)) {
    return atomic_file_commit(&af);
  }
  atomic_file_discard(&af);
  return 0;
}
