/* bench_mpi: forces over several processes (tfmm_solver_create_mpi) for N
 * Plummer bodies, each rank given a block of the bodies in their random
 * order (so the first evaluation moves nearly all of them). Prints, on
 * rank 0, one line per evaluation and a summary of the timed ones: each
 * stage's time (the slowest rank's), bodies owned, received and sent,
 * multipoles received, the imbalance, and bodies per second (per rank).
 *   mpirun -np P bench_mpi [--n N] [--reps R] [--device cpu|gpu|auto]
 *                          [--accuracy A] [--seed S]
 * Collective over MPI_COMM_WORLD. */
#include <mpi.h>

#include "tilefmm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double max_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

static double sum_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t n = 1000000;
  int reps = 3;
  uint64_t seed = 42;
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--n") == 0)
      n = strtoull(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--reps") == 0)
      reps = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--seed") == 0)
      seed = strtoull(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--accuracy") == 0)
      cfg.accuracy = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--device") == 0 &&
             tfmm_device_parse(argv[i + 1], &cfg.device) == TFMM_OK)
      ;
    else {
      if (rank == 0)
        fprintf(stderr, "bench_mpi: unknown option %s\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  /* This rank's block of the bodies, made from the common seed. */
  double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
  double *mass = malloc(n * sizeof *mass);
  if (pos == NULL || vel == NULL || mass == NULL ||
      tfmm_ic_plummer(n, seed, pos, vel, mass) != TFMM_OK) {
    fprintf(stderr, "bench_mpi: rank %d: no memory for %zu bodies\n", rank, n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(vel);
  const size_t lo = n * (size_t)rank / (size_t)size,
               hi = n * (size_t)(rank + 1) / (size_t)size, m = hi - lo;
  double *acc = malloc((3 * m + 1) * sizeof *acc),
         *pot = malloc((m + 1) * sizeof *pot);
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create_mpi(&s, &cfg, MPI_COMM_WORLD);
  if (st != TFMM_OK) {
    if (rank == 0)
      fprintf(stderr, "bench_mpi: %s\n", tfmm_solver_message(s));
    tfmm_solver_destroy(s);
    MPI_Finalize();
    return 1;
  }
  if (rank == 0)
    printf("# bench_mpi: %zu Plummer bodies, %d ranks, accuracy %g, rank 0 "
           "on %s\n"
           "# eval total_s decompose_s let_s local_s remote_s exchange_s "
           "owned_max ghosts_max let_cells_max sent_bodies_sum imbalance "
           "bodies_per_s_per_rank\n",
           n, size, cfg.accuracy,
           tfmm_solver_device(s) == TFMM_DEVICE_GPU ? "the GPU" : "the CPU");
  double sum_total = 0;
  for (int r = 0; r <= reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    st = tfmm_solver_compute(s, m, pos + 3 * lo, mass + lo, acc, pot);
    const double wall = max_over_ranks(MPI_Wtime() - t0);
    if (st != TFMM_OK) {
      if (rank == 0)
        fprintf(stderr, "bench_mpi: %s\n", tfmm_solver_message(s));
      break;
    }
    const tfmm_dist_stats *x = tfmm_solver_dist_stats(s);
    const double dec = max_over_ranks(x->time_decompose),
                 let = max_over_ranks(x->time_let),
                 loc = max_over_ranks(x->time_local),
                 rem = max_over_ranks(x->time_remote),
                 exch = max_over_ranks(x->time_exchange),
                 owned = max_over_ranks((double)x->owned),
                 ghosts = max_over_ranks((double)x->ghosts),
                 cells = max_over_ranks((double)x->let_cells),
                 sent = sum_over_ranks((double)x->sent_bodies);
    if (rank == 0)
      printf("%s %.4f %.4f %.4f %.4f %.4f %.4f %.0f %.0f %.0f %.0f %.3f %.4g\n",
             r == 0 ? "warm" : "timed", wall, dec, let, loc, rem, exch, owned,
             ghosts, cells, sent, x->imbalance, (double)n / wall / size);
    if (r > 0)
      sum_total += wall;
  }
  if (rank == 0 && st == TFMM_OK && reps > 0)
    printf("summary n %zu ranks %d mean_s %.4f bodies_per_s %.4g "
           "bodies_per_s_per_rank %.4g\n",
           n, size, sum_total / reps, n / (sum_total / reps),
           n / (sum_total / reps) / size);
  tfmm_solver_destroy(s);
  free(pos), free(mass), free(acc), free(pot);
  MPI_Finalize();
  return st == TFMM_OK ? 0 : 1;
}
