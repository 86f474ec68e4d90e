/* tilefmm: the command-line front end of the library. Dispatches to one
 * command per file (cmd_*.c); only apps/ talks to the terminal. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "mpi_cli.h"

#include "tilefmm.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  if (tfmm_has_mpi())
    fprintf(fp, "Under mpirun, 'forces' and 'run' compute over the ranks "
                "(docs/mpi.md).\n");
}

/* The GPUs present that this build cannot use are named on stderr, with
 * the fix, so that "usable GPUs: 0" never goes unexplained. */
static void print_version(void) {
  char msg[4096];
  const int usable = tfmm_gpu_check(msg, sizeof msg);
  /* The ranks only when MPI is built in: they are the ranks of this
   * launch (1 without mpirun). */
  char mpi[64] = "";
  if (tfmm_has_mpi())
    snprintf(mpi, sizeof mpi, ", ranks: %d", mpi_cli_ranks());
  printf("tilefmm %s (CUDA backend: %s, usable GPUs: %d, MPI: %s%s)\n",
         tfmm_version(), tfmm_has_cuda() ? "yes" : "no", usable,
         tfmm_has_mpi() ? "yes" : "no", mpi);
  fflush(stdout);
  cli_warn_lines(msg);
}

/* OpenMP's waiting policy, chosen on purpose: threads that wait at the
 * end of a parallel region sleep (passive) instead of spinning, unless
 * the user sets OMP_WAIT_POLICY. On a machine whose cores are busy with
 * other work, spinning threads take the cores from the threads with work
 * left: a 5,000-body, 20-step run took 9-16 s with two spinning threads
 * against 1.1-1.7 s passive. libgomp reads the variable when it is loaded,
 * before main, so the tool runs itself again once with it set; without
 * /proc/self/exe it goes on with OpenMP's default. OMP_WAIT_POLICY=active
 * spins (a dedicated node and many small steps may gain a little). */
static void choose_wait_policy(char **argv) {
  if (getenv("OMP_WAIT_POLICY") != NULL ||
      setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  unsetenv("OMP_WAIT_POLICY"); /* not in force: do not say it is */
}

/* CUDA loads each kernel at its first launch unless told otherwise
 * (lazy loading, its default). A command is one process and, for
 * `forces`, one evaluation: every stage's first launch paid its loading
 * inside it. At 10^6 bodies on an H200 the one-shot solver total was 45 ms
 * on average lazily against 33 ms eagerly (4 runs each, alternated; the
 * tree 3.8 against 1.3 ms, the near field 4.2 against 2.2, the lists 9.5
 * against 6.4; bench/results/host_transfer). The user's
 * CUDA_MODULE_LOADING wins. */
static void choose_module_loading(void) {
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

/* The commands that compute over the ranks under mpirun; the others run
 * on rank 0 alone (files in, files out: their ranks wait), or, measuring
 * one process, refuse several ranks. */
static int dispatch(int argc, char **argv) {
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
  if ((strcmp(cmd, "validate") == 0 || strcmp(cmd, "tune") == 0) &&
      mpi_cli_ranks() > 1) {
    cli_error("%s measures one process: run it without mpirun, or with "
              "mpirun -np 1 ('forces' and 'run' compute over several)",
              cmd);
    return CLI_USAGE_ERROR;
  }
  if (strcmp(cmd, "validate") == 0)
    return cmd_validate(argc - 1, argv + 1);
  if (strcmp(cmd, "tune") == 0)
    return cmd_tune(argc - 1, argv + 1);
  if (mpi_cli_rank() > 0 &&
      (strcmp(cmd, "ic") == 0 || strcmp(cmd, "render") == 0))
    return CLI_OK; /* rank 0's code is every rank's (mpi_cli_finalize) */
  if (strcmp(cmd, "ic") == 0)
    return cmd_ic(argc - 1, argv + 1);
  if (strcmp(cmd, "render") == 0)
    return cmd_render(argc - 1, argv + 1);
  cli_error("unknown command '%s' (try 'tilefmm --help')", cmd);
  return CLI_USAGE_ERROR;
}

int main(int argc, char **argv) {
  choose_module_loading();
  choose_wait_policy(argv);
  /* A file-size limit (ulimit -f) must make the write fail with EFBIG, which
   * is reported and cleaned up, not kill the program with no message and a
   * temporary left behind. */
  signal(SIGXFSZ, SIG_IGN);
  if (!mpi_cli_init(&argc, &argv))
    return CLI_USAGE_ERROR;
  return mpi_cli_finalize(dispatch(argc, argv));
}
