/* tilefmm: the command-line front end of the library. Dispatches to one
 * command per file (cmd_*.c); only apps/ talks to the terminal. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include "tilefmm.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
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

static void print_usage(FILE *fp) {
  fprintf(fp, "Usage: tilefmm COMMAND [options]\n"
              "\n"
              "Gravitational N-body forces on the CPU and the GPU.\n"
              "\n"
              "Commands:\n"
              "  run          a simulation: initial conditions, leapfrog, "
              "snapshots\n"
              "  forces       accelerations and potentials of the bodies in a "
              "file\n"
              "  validate     a method's errors against the double-precision "
              "reference\n"
              "  tune         a tree method's time and accuracy against the "
              "leaf size\n"
              "  ic MODEL     initial conditions: plummer, hernquist, uniform, "
              "cold, merger\n"
              "  render       a snapshot's surface density as a PNG picture\n"
              "\n"
              "Options:\n"
              "  -h, --help   show this help\n"
              "  --version    show the version and the backends of this build\n"
              "\n"
              "See 'tilefmm COMMAND --help' for a command's options.\n");
}

static void print_version(void) {
  printf("tilefmm %s (CUDA backend: %s, usable GPUs: %d)\n", tfmm_version(),
         tfmm_has_cuda() ? "yes" : "no", tfmm_gpu_count());
}

int main(int argc, char **argv) {
  /* A file-size limit (ulimit -f) must make the write fail with EFBIG, which
   * is reported and cleaned up, not kill the program with no message and a
   * temporary left behind. */
  signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    print_usage(stderr);
    return CLI_USAGE_ERROR;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
    print_usage(stdout);
    return CLI_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    print_version();
    return CLI_OK;
  }
  if (strcmp(cmd, "run") == 0)
    return cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "forces") == 0)
    return cmd_forces(argc - 1, argv + 1);
  if (strcmp(cmd, "validate") == 0)
    return cmd_validate(argc - 1, argv + 1);
  if (strcmp(cmd, "tune") == 0)
    return cmd_tune(argc - 1, argv + 1);
  if (strcmp(cmd, "ic") == 0)
    return cmd_ic(argc - 1, argv + 1);
  if (strcmp(cmd, "render") == 0)
    return cmd_render(argc - 1, argv + 1);
  cli_error("unknown command '%s' (try 'tilefmm --help')", cmd);
  return CLI_USAGE_ERROR;
}
