/* What every command of the tool shares (cli.h): errors and warnings on
 * stderr, the GPU notice of device auto, the clock. Apart from main.c so
 * that the commands' files call down into it, not back into main. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "mpi_cli.h"

#include "tilefmm.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  /* Under mpirun a rank other than 0 prints to /dev/null: its message is
   * kept for rank 0 to print if the failure is that rank's alone. */
  if (mpi_cli_rank() > 0) {
    char msg[1024];
    va_list copy;
    va_copy(copy, ap);
    vsnprintf(msg, sizeof msg, fmt, copy);
    va_end(copy);
    mpi_cli_local_keep(msg);
  }
  fputs("tilefmm: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

double cli_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_warn_lines(const char *msg) {
  while (*msg != '\0') {
    const char *end = strchr(msg, '\n');
    const int len = end != NULL ? (int)(end - msg) : (int)strlen(msg);
    fprintf(stderr, "tilefmm: warning: %.*s\n", len, msg);
    msg += len + (end != NULL);
  }
}

void cli_gpu_warn(int device_auto) {
  static int said;
  if (!device_auto || said)
    return;
  said = 1;
  char msg[4096];
  const int usable = tfmm_gpu_check(msg, sizeof msg);
  cli_warn_lines(msg);
  if (msg[0] != '\0' && usable == 0)
    fputs("tilefmm: warning: --device auto: no usable GPU, running on the "
          "CPU\n",
          stderr);
}
